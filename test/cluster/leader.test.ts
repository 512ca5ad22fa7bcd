/**
 * Leader election under a stalled network, on a real API server: the leader reaches the API server
 * through a TCP proxy that the test stalls (connections stay open, no byte moves). Its renewals hang;
 * it must stop leading within its renew deadline, before its lease expires and another candidate may
 * take over, so that two replicas never both act as leader.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, connect, type Server, type Socket } from "node:net";
import { KubeClient } from "../../src/cluster/kube/client.js";
import { loadKubeConfig } from "../../src/cluster/kube/client.js";
import { LeaderElector } from "../../src/cluster/kube/leader.js";
import { clientAs, clusterKubeconfig } from "./harness.js";

const cluster = clusterKubeconfig();
const NS = "default";

/** A TCP proxy to `target` that can be stalled: while stalled, nothing is forwarded either way. */
async function stallableProxy(target: URL): Promise<{ url: string; stall(): void; close(): Promise<void> }> {
  let stalled = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    client.on("data", (d) => {
      if (!stalled) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (!stalled) client.write(d);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    stall: () => {
      stalled = true;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe("leader election on a real API server", { skip: cluster.skip || undefined }, () => {
  let admin: KubeClient;
  before(() => {
    if (cluster.skip === false) admin = clientAs(cluster.kubeconfig, "admin");
  });
  after(async () => {
    await admin?.delete("coordination.k8s.io/v1", "Lease", "stall-test", NS).catch(() => false);
    admin?.close();
  });

  test("a leader whose renewals stall stops leading before its lease can pass to another", async () => {
    if (cluster.skip !== false) return;
    const kc = loadKubeConfig({ kubeconfig: cluster.kubeconfig, context: "admin" });
    const proxy = await stallableProxy(new URL(kc.getCurrentCluster()?.server ?? ""));
    const viaProxy = new KubeClient(
      (() => {
        const c = kc.getCurrentCluster();
        if (!c) throw new Error("no cluster");
        kc.clusters = kc.clusters.map((x) => (x.name === c.name ? { ...x, server: proxy.url } : x));
        return kc;
      })(),
    );
    const events: [string, number][] = [];
    const opts = { namespace: NS, name: "stall-test", leaseDurationSeconds: 4, retryPeriodMs: 200 };
    const first = new LeaderElector(viaProxy, {
      ...opts,
      identity: "first",
      renewDeadlineMs: 2000,
      onStartedLeading: () => events.push(["first leads", Date.now()]),
      onStoppedLeading: () => events.push(["first stops", Date.now()]),
    });
    const second = new LeaderElector(admin, {
      ...opts,
      identity: "second",
      renewDeadlineMs: 2000,
      onStartedLeading: () => events.push(["second leads", Date.now()]),
      onStoppedLeading: () => events.push(["second stops", Date.now()]),
    });
    try {
      first.start();
      while (!first.isLeader) await new Promise((r) => setTimeout(r, 50));
      second.start();
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(second.isLeader, false, "the lease is held and renewed");
      proxy.stall();
      const deadline = Date.now() + 60_000;
      while (!second.isLeader && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(second.isLeader, true, `the second takes over once the lease expired: ${JSON.stringify(events)}`);
      assert.equal(first.isLeader, false);
      const at = (what: string) => events.find(([e]) => e === what)?.[1] ?? Number.NaN;
      assert.ok(at("first stops") < at("second leads"), `never two leaders: ${JSON.stringify(events)}`);
    } finally {
      await second.stop();
      await proxy.close();
      await first.stop();
      viaProxy.close();
    }
  });
});
