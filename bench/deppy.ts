/**
 * Deppy and the Operator API on a real API server (`npm run bench`, BENCH_ONLY=deppy): starts etcd +
 * kube-apiserver (+ kube-controller-manager) with scripts/kube/cluster.sh and a real docker-registry
 * on 127.0.0.1, runs `opcat cluster run` as a process, and measures
 *  - time from an Operator created to installed for a package with one dependency
 *    (rabbitmq-messaging-topology-operator → rabbitmq-cluster-operator, subscription class; the bench
 *    approves the resolveset as soon as Android asks, as a user would);
 *  - 100 Operators (dry-run class) over the community catalogs v4.16 and v4.20 served as two
 *    ClusterCatalogs: time until every Input has an answer, resolutions and time in the resolver, API
 *    requests, controller peak RSS.
 * Prints a Markdown table for docs/benchmarks.md.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundleImage, buildCatalogImage, pushImage } from "../src/image/index.js";
import { renderBundleDirectory } from "../src/bundle/index.js";
import { formatCatalog } from "../src/fbc/write.js";
import { KubeClient, type KubeObject } from "../src/cluster/kube/client.js";
import { API_VERSION, type Instance } from "../src/cluster/rukpak/api.js";
import { approveInstance } from "../src/cluster/rukpak/approve.js";
import { CATALOG_API_VERSION } from "../src/cluster/catalogd/api.js";
import { DEPPY_API_VERSION, type Input } from "../src/cluster/deppy/api.js";
import { OPERATOR_API_VERSION } from "../src/cluster/operators/api.js";
import { resolvesetInstanceName } from "../src/cluster/deppy/resolver.js";
import { startDockerRegistry } from "../test/image/servers.js";
import {
  cpuSeconds,
  currentRss,
  peakRss,
  requestsBetween,
  settled,
  startController,
  startKube,
  untilAll,
} from "./shared.js";
import { COMMUNITY } from "../test/shared.js";

const tmp = mkdtempSync(join(tmpdir(), "opcat-bench-deppy-"));

async function until(what: string, f: () => Promise<boolean>, ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type WithConds = KubeObject & { status?: { conditions?: { type: string; status: string; reason: string }[] } };
const cond = (o: WithConds | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);

async function main(): Promise<void> {
  const kube = await startKube(tmp, "cluster.sh start failed (build it first: scripts/kube/cluster.sh build)");
  const kubeconfig = kube.kubeconfig;
  const registry = await startDockerRegistry(join(tmp, "registry"));
  const client = KubeClient.connect({ kubeconfig, context: "admin" });
  const rows: string[][] = [];
  // the catalogs: a small one with a real dependency pair, and the community v4.16 / v4.20 catalogs
  const ops = join(COMMUNITY, "operators");
  const dirs = {
    rabbit: join(ops, "rabbitmq-cluster-operator", "2.9.0"),
    topo: join(ops, "rabbitmq-messaging-topology-operator", "1.17.4"),
  };
  const small = join(tmp, "small");
  mkdirSync(small);
  for (const [k, d] of Object.entries(dirs)) {
    const ref = `${registry.host}/${k}-bundle:v1`;
    await pushImage(buildBundleImage(d), ref, { useHttp: true });
    const cfg = renderBundleDirectory(d, { image: ref });
    const b = cfg.bundles[0];
    const head = [
      { schema: "olm.package", name: b.package, defaultChannel: "stable" },
      { schema: "olm.channel", name: "stable", package: b.package, entries: [{ name: b.name }] },
    ];
    writeFileSync(
      join(small, `${k}.json`),
      head.map((x) => JSON.stringify(x)).join("\n") + "\n" + formatCatalog(cfg, "json"),
    );
  }
  await pushImage(buildCatalogImage(small), `${registry.host}/catalogs/small:v1`, { useHttp: true });
  for (const v of ["v4.16", "v4.20"])
    await pushImage(buildCatalogImage(join(COMMUNITY, "catalogs", v)), `${registry.host}/catalogs/community:${v}`, {
      useHttp: true,
    });

  const { ctl, log, requests } = await startController(kubeconfig, join(tmp, "state"));
  // the controller's peak (and current) RSS after each phase: where the peak is reached
  const phases: string[] = [];
  const phase = (what: string) =>
    phases.push(`${what} ${peakRss(ctl.pid!).toFixed(0)} (${currentRss(ctl.pid!).toFixed(0)})`);
  phase("started");
  try {
    const catalog = (name: string, ref: string, priority: number) =>
      client.apply({
        apiVersion: CATALOG_API_VERSION,
        kind: "ClusterCatalog",
        metadata: { name },
        spec: { source: { type: "Image", image: { ref } }, priority },
      } as unknown as KubeObject);
    let t = performance.now();
    await catalog("small", `${registry.host}/catalogs/small:v1`, 0);
    await until(
      "small served",
      async () =>
        cond(await client.tryGet<WithConds>(CATALOG_API_VERSION, "ClusterCatalog", "small"), "Serving")?.status ===
        "True",
    );
    rows.push(["ClusterCatalog (2 bundles) created → Serving", `${(performance.now() - t).toFixed(0)} ms`]);
    phase("small catalog");

    t = performance.now();
    await client.apply({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: "topology" },
      spec: {
        inputClass: "subscription",
        catalog: { name: "small", package: "rabbitmq-messaging-topology-operator", channel: "stable" },
      },
    } as unknown as KubeObject);
    let approvedAt = 0;
    await until("topology approved", async () => {
      const i = await client.tryGet<Instance>(API_VERSION, "Instance", resolvesetInstanceName("topology"));
      if (cond(i, "Approved")?.reason !== "NewPermissions") return false;
      approvedAt = performance.now();
      await approveInstance(client, resolvesetInstanceName("topology"));
      return true;
    });
    await until("both installed", async () => {
      const a = await client.tryGet<Instance>(API_VERSION, "Instance", "rabbitmq-messaging-topology-operator");
      const b = await client.tryGet<Instance>(API_VERSION, "Instance", "rabbitmq-cluster-operator");
      return cond(a, "Installed")?.status === "True" && cond(b, "Installed")?.status === "True";
    });
    const total = performance.now() - t;
    rows.push([
      "Operator (one dependency, subscription) created → both packages Installed",
      `${total.toFixed(0)} ms (${(approvedAt - t).toFixed(0)} ms to the approval ` +
        `request, ${(total - (approvedAt - t)).toFixed(0)} ms from approval to installed)`,
    ]);
    phase("dependency pair installed");

    t = performance.now();
    await catalog("v4-16", `${registry.host}/catalogs/community:v4.16`, 0);
    await catalog("v4-20", `${registry.host}/catalogs/community:v4.20`, 1);
    await until("community catalogs served", async () => {
      for (const n of ["v4-16", "v4-20"])
        if (
          cond(await client.tryGet<WithConds>(CATALOG_API_VERSION, "ClusterCatalog", n), "Serving")?.status !== "True"
        )
          return false;
      return true;
    });
    rows.push([
      "ClusterCatalogs community v4.16 + v4.20 created → both Serving",
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);
    phase("community catalogs");
    const pkgs = readdirSync(join(COMMUNITY, "catalogs", "v4.20")).sort();
    const n = Number(process.env.BENCH_OPERATORS ?? 100);
    const names = Array.from({ length: n }, (_, i) => `op-${i}`);
    const requestsBefore = await settled(requests);
    t = performance.now();
    await Promise.all(
      names.map((name, i) =>
        client.apply({
          apiVersion: OPERATOR_API_VERSION,
          kind: "Operator",
          metadata: { name },
          spec: { inputClass: "dry-run", catalog: { package: pkgs[i % pkgs.length] } },
        } as unknown as KubeObject),
      ),
    );
    const answered = (i: Input) => !!cond(i, "Resolved") && i.status?.observedGeneration === i.metadata.generation;
    const inputs = await untilAll<Input>(client, DEPPY_API_VERSION, "Input", names, answered);
    const resolved = names.filter((n) => cond(inputs.get(n), "Resolved")?.status === "True").length;
    const failed = n - resolved;
    const ms = performance.now() - t;
    rows.push([
      `${n} Operators (dry-run, ${pkgs.length} packages of v4.20, v4.16 also served) created → every Input answered`,
      `${ms.toFixed(0)} ms (${resolved} resolved, ${failed} failed)`,
    ]);
    phase(`${n} Operators`);
    rows.push([
      `API requests of the ${n} Operators until the controller is quiet again (per Operator)`,
      requestsBetween(requestsBefore, await settled(requests), n).replace(/per unit/g, "per Operator"),
    ]);
    rows.push(["controller peak RSS (VmHWM) after all of the above", `${peakRss(ctl.pid!).toFixed(0)} MiB`]);
    rows.push(["controller peak RSS (and RSS now) after each phase, MiB", phases.join("; ")]);
    rows.push(["controller CPU time (user + system) over the whole run", `${cpuSeconds(ctl.pid!).toFixed(1)} s`]);
  } finally {
    const exited = new Promise((r) => ctl.once("exit", r));
    ctl.kill("SIGTERM");
    await exited;
    const d = /deppy: (.*)/.exec(log());
    if (d) rows.push(["resolutions over the whole run", d[1]]);
    const rec = /reconciles: (.*)/.exec(log());
    if (rec) rows.push(["reconciles per controller over the whole run", rec[1]]);
    const m = /api requests: (.*)/.exec(log());
    if (m) rows.push(["controller API requests over the whole run", m[1]]);
    client.close();
    await registry.stop();
    kube.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log("| Deppy + Operator API (real kube-apiserver 1.35.4 + etcd on 127.0.0.1) | value |\n|---|---|");
  for (const r of rows) console.log(`| ${r[0]} | ${r[1]} |`);
}

await main();
