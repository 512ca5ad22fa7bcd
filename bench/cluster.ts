/**
 * RukPak on a real API server (`npm run bench`, BENCH_ONLY=cluster): starts etcd + kube-apiserver with
 * scripts/kube/cluster.sh and a real docker-registry on 127.0.0.1, runs `opcat cluster run` as a
 * process, and measures
 *  - time from an Instance created to Installed for a real bundle (rabbitmq-cluster-operator 2.8.0),
 *    cold (empty image cache and content store) and warm (image blobs cached, new Bundle);
 *  - 100 Instances created at once (plain bundles from ConfigMaps, one object each): time until all
 *    are Installed, the controller's API requests, and its peak RSS.
 * Prints a Markdown table for docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundleImage, pushImage } from "../src/image/index.js";
import { KubeClient, type KubeObject } from "../src/cluster/kube/client.js";
import { API_VERSION, type Instance } from "../src/cluster/rukpak/api.js";
import { startDockerRegistry } from "../test/image/servers.js";
import { cpuSeconds, peakRss, requestsBetween, settled, startController, startKube, untilAll } from "./shared.js";
import { COMMUNITY } from "../test/shared.js";

const tmp = mkdtempSync(join(tmpdir(), "opcat-bench-cluster-"));
const bin = join(process.env.OPCAT_KUBE_CACHE ?? join(homedir(), ".cache", "opcat", "kube"), "v1.35.4", "bin");

function installed(i: Instance | undefined): boolean {
  return (
    i?.status?.conditions?.some((c) => c.type === "Installed" && c.status === "True") === true &&
    i.status?.observedGeneration === i.metadata.generation
  );
}

const waitInstalled = (client: KubeClient, names: string[], pred: (i: Instance) => boolean) =>
  untilAll<Instance>(client, API_VERSION, "Instance", names, pred);

async function main(): Promise<void> {
  const kube = await startKube(
    tmp,
    `cluster.sh start failed (build it first: scripts/kube/cluster.sh build; binaries expected in ${bin})`,
  );
  const kubeconfig = kube.kubeconfig;
  const registry = await startDockerRegistry(join(tmp, "registry"));
  const client = KubeClient.connect({ kubeconfig, context: "admin" });
  const { ctl, log, requests } = await startController(kubeconfig, join(tmp, "state"));
  const rows: string[][] = [];
  try {
    const ref = `${registry.host}/rabbitmq-bundle:2.8.0`;
    await pushImage(buildBundleImage(join(COMMUNITY, "operators", "rabbitmq-cluster-operator", "2.8.0")), ref, {
      useHttp: true,
    });
    await client.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "bench" },
      provisioner: "operators.coreos.com/operators",
      parameters: { approval: "AllowAll" },
    } as unknown as KubeObject);
    await client.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "bench-plain" },
      provisioner: "rukpak.io/plain",
      parameters: { approval: "AllowAll" },
    } as unknown as KubeObject);
    const inst = (name: string, bundle: string, spec: unknown): KubeObject =>
      ({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name },
        spec: { selector: { matchLabels: { subscription: name } }, bundle: { name: bundle, spec } },
      }) as unknown as KubeObject;

    let t = performance.now();
    await client.create(inst("rabbit-cold", "rabbit-cold-2.8.0", { class: "bench", refs: [`docker://${ref}`] }));
    await waitInstalled(client, ["rabbit-cold"], installed);
    rows.push([
      "Instance → Installed, rabbitmq-cluster-operator 2.8.0, cold image cache",
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);
    await client.delete(API_VERSION, "Instance", "rabbit-cold", undefined, "Foreground");
    const deadline = Date.now() + 120_000;
    while (
      await client.tryGet("apiextensions.k8s.io/v1", "CustomResourceDefinition", "rabbitmqclusters.rabbitmq.com")
    ) {
      if (Date.now() > deadline) throw new Error("the garbage collector did not remove the first install");
      await new Promise((r) => setTimeout(r, 200));
    }
    t = performance.now();
    await client.create(inst("rabbit-warm", "rabbit-warm-2.8.0", { class: "bench", refs: [`docker://${ref}`] }));
    await waitInstalled(client, ["rabbit-warm"], installed);
    rows.push([
      "Instance → Installed, same bundle, warm image cache (new Bundle)",
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);

    // 100 Instances at once: plain bundles from ConfigMaps
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } });
    const n = Number(process.env.BENCH_INSTANCES ?? 100);
    for (let i = 0; i < n; i++) {
      const obj =
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n` + `  name: obj-${i}\n  namespace: bench\ndata:\n  i: "${i}"\n`;
      await client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `content-${i}`, namespace: "bench" },
        data: { "obj.yaml": obj },
      } as unknown as KubeObject);
    }
    const names = Array.from({ length: n }, (_, i) => `plain-${i}`);
    const requestsBefore = await settled(requests);
    t = performance.now();
    await Promise.all(
      names.map((name, i) =>
        client.create(
          inst(name, `${name}-b`, {
            class: "bench-plain",
            refs: ["file://content"],
            volumeMounts: [
              { mountPath: "/content/manifests", configMap: { name: `content-${i}`, namespace: "bench" } },
            ],
          }),
        ),
      ),
    );
    await waitInstalled(client, names, installed);
    const ms = performance.now() - t;
    rows.push([
      `${n} Instances created at once (plain bundles from ConfigMaps) → all Installed`,
      `${ms.toFixed(0)} ms (${(ms / n).toFixed(1)} ms per Instance)`,
    ]);
    rows.push([
      `API requests of the ${n} Instances until the controller is quiet again (per Instance)`,
      requestsBetween(requestsBefore, await settled(requests), n).replace(/per unit/g, "per Instance"),
    ]);
    rows.push(["controller peak RSS (VmHWM) after all of the above", `${peakRss(ctl.pid!).toFixed(0)} MiB`]);
    rows.push(["controller CPU time (user + system) over the whole run", `${cpuSeconds(ctl.pid!).toFixed(1)} s`]);
  } finally {
    const exited = new Promise((r) => ctl.once("exit", r));
    ctl.kill("SIGTERM");
    await exited;
    const m = /api requests: (.*)/.exec(log());
    if (m) rows.push(["controller API requests over the whole run", m[1]]);
    client.close();
    await registry.stop();
    kube.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log("| cluster (real kube-apiserver 1.35.4 + etcd on 127.0.0.1) | value |\n|---|---|");
  for (const r of rows) console.log(`| ${r[0]} | ${r[1]} |`);
}

await main();
