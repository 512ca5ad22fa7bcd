/**
 * The API client on a real API server: long-lived watches never hold up requests. Every informer
 * keeps one watch open; a process with many controllers (and the in-cluster webhook answering
 * admissions) keeps dozens open at once, and a request that waited behind them would stall
 * admissions until the API server's webhook deadline (a failure first seen on a real node).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { EventRecorder } from "../../src/cluster/kube/events.js";
import { canI } from "../../src/cluster/rukpak/permissions.js";
import { clientAs, clusterKubeconfig } from "./harness.js";

const cluster = clusterKubeconfig();

describe("KubeClient on a real API server", { skip: cluster.skip || undefined }, () => {
  let admin: KubeClient;
  before(() => {
    if (cluster.skip === false) admin = clientAs(cluster.kubeconfig, "admin");
  });
  after(() => admin?.close());

  const title = "requests are answered while more watches are open than the request pool has connections";
  test(title, { timeout: 180_000 }, async () => {
    const ac = new AbortController();
    const watches: Promise<void>[] = [];
    try {
      // 80 watches (the request pool holds 32 connections), each kept open for up to ten minutes
      for (let i = 0; i < 80; i++)
        watches.push(
          admin
            .watch("/api/v1/namespaces", { timeoutSeconds: 600, allowWatchBookmarks: true }, () => {}, ac.signal)
            .catch(() => {}),
        );
      // each of these would wait for a watch to end (ten minutes) if watches took the request pool
      for (let i = 0; i < 40; i++) {
        const ns = await admin.request("GET", "/api/v1/namespaces/default", { signal: AbortSignal.timeout(60_000) });
        assert.equal(ns.metadata.name, "default");
      }
    } finally {
      ac.abort();
      // a watch still queued for a connection is not waited for: that would be the hang this test catches
      await Promise.race([Promise.all(watches), new Promise((r) => setTimeout(r, 5_000))]);
    }
  });

  test("an Event repeated is one create then one patch each time, no read; a new recorder reads it once", async () => {
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "event-subject", namespace: "default", uid: `uid-${Date.now()}` },
    } as KubeObject;
    const calls: string[] = [];
    const listen = (method: string, path: string) => {
      if (path.includes("/events")) calls.push(method);
    };
    admin.requestListeners.add(listen);
    try {
      const rec = new EventRecorder(admin, "opcat-test");
      for (let i = 0; i < 3; i++) await rec.record(obj, "Normal", "Tested", "the same thing again");
      assert.deepEqual(calls, ["POST", "PATCH", "PATCH"]);
      // a new process (or replica) does not know the count: the create conflicts, the Event is read once
      calls.length = 0;
      await new EventRecorder(admin, "opcat-test").record(obj, "Normal", "Tested", "the same thing again");
      assert.deepEqual(calls, ["POST", "GET", "PATCH"]);
      const { items } = await admin.list<KubeObject & { count?: number; reason?: string }>("v1", "Event", {
        namespace: "default",
      });
      const ev = items.find((e) => e.metadata.name.startsWith("event-subject.") && e.reason === "Tested");
      assert.equal(ev?.count, 4);
    } finally {
      admin.requestListeners.delete(listen);
    }
  });

  test("an allowed access check is reused for the same question; a refusal is asked again", async () => {
    const posts: string[] = [];
    const listen = (method: string, path: string) => {
      if (path.includes("subjectaccessreviews")) posts.push(method);
    };
    admin.requestListeners.add(listen);
    try {
      const check = { verb: "get", group: "", resource: "configmaps", namespace: "default", name: "sar-reuse" };
      assert.equal(await canI(admin, { username: "admin", groups: ["system:masters"] }, check), true);
      assert.equal(await canI(admin, { username: "admin", groups: ["system:masters"] }, check), true);
      assert.equal(posts.length, 1);
      // another question (another user) is asked; a refusal is not remembered
      assert.equal(await canI(admin, { username: "nobody-at-all" }, check), false);
      assert.equal(await canI(admin, { username: "nobody-at-all" }, check), false);
      assert.equal(posts.length, 3);
    } finally {
      admin.requestListeners.delete(listen);
    }
  });
});
