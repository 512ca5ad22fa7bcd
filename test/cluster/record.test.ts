/**
 * Install records on a real API server (src/cluster/rukpak/record.ts): a record the store wrote is
 * known to it (the next pass reads nothing), and a record changed behind its back is never acted on
 * silently: the next write conflicts, and the read after it asks the API server.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject } from "../../src/cluster/client.js";
import type { Instance } from "../../src/cluster/rukpak/api.js";
import { RecordStore, recordName, type InstallRecord } from "../../src/cluster/rukpak/record.js";
import { clientAs, clusterKubeconfig } from "./harness.js";

const cluster = clusterKubeconfig();
const NS = "default";

describe("install records (real API server)", { skip: cluster.skip || undefined }, () => {
  let admin: KubeClient;
  /** The controllers' client (its requests are counted); `admin` is someone else. */
  let controller: KubeClient;
  const uid = `rec-${Date.now()}`;
  const inst = { apiVersion: "rukpak.io/v1", kind: "Instance", metadata: { name: "rec", uid } } as unknown as Instance;
  const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name, namespace: NS });
  before(() => {
    if (cluster.skip === false) {
      admin = clientAs(cluster.kubeconfig, "admin");
      controller = clientAs(cluster.kubeconfig, "admin");
    }
  });
  after(async () => {
    await admin?.delete("v1", "ConfigMap", recordName(uid), NS).catch(() => false);
    admin?.close();
    controller?.close();
  });

  test("a written record is read back without a request; a change behind the store's back conflicts", async () => {
    const gets: string[] = [];
    const listen = (method: string, path: string) => {
      if (method === "GET" && path.includes(recordName(uid))) gets.push(path);
    };
    controller.requestListeners.add(listen);
    try {
      const store = new RecordStore(controller, NS);
      const first = await store.read(inst);
      assert.equal(first.record, undefined);
      assert.equal(gets.length, 1);
      const rec: InstallRecord = { instance: "rec", uid, applied: [ref("a")] };
      const v1 = await store.write(inst, rec, undefined);
      const again = await store.read(inst);
      assert.deepEqual(again, { record: rec, version: v1 });
      assert.equal(gets.length, 1, "read from what the store wrote");
      // what the caller does with its copy does not change what the store knows
      again.record!.applied.push(ref("mutated"));
      assert.deepEqual((await store.read(inst)).record, rec);
      // someone else writes the record: the store's next write conflicts, then it reads it live
      const cm = await admin.get<KubeObject & { data: Record<string, string> }>("v1", "ConfigMap", recordName(uid), NS);
      cm.data["record.json"] = JSON.stringify({ ...rec, applied: [ref("b")] });
      await admin.replace(cm);
      await assert.rejects(store.write(inst, { ...rec, applied: [ref("c")] }, v1), /conflict|modified/i);
      const fresh = await store.read(inst);
      assert.deepEqual(fresh.record?.applied, [ref("b")]);
      assert.equal(gets.length, 2);
    } finally {
      controller.requestListeners.delete(listen);
    }
  });
});
