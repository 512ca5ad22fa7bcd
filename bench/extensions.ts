/**
 * operator-controller's workload on a real API server (`npm run bench`, BENCH_ONLY=extensions): etcd +
 * kube-apiserver + kcm from scripts/kube/cluster.sh, a real docker-registry on 127.0.0.1 and
 * `opcat cluster run` as a process (bench/shared.ts). Issue 37 compared opcat with operator-controller +
 * catalogd on the same steps; this measures opcat's side:
 *  - one ClusterCatalog holding the real community catalogs (v4.20 as published, v4.16's packages renamed
 *    `-v416` beside it: 55 packages, 1,024 bundles, ~35 MB of FBC, the largest real catalog here), built
 *    into an image, pushed and unpacked: time until Serving (`BENCH_V416_COPIES=n`: n renamed copies of
 *    v4.16, default 1; 0 for v4.20 alone, 2 for a larger catalog: how memory grows with the catalog);
 *  - 20 ClusterExtensions of 20 different packages created at once, each pinned to a real version of
 *    its package (the bundle built from the community operators repository's directory, pushed to the
 *    registry; the catalog's image field of that bundle points at it): time until all are Installed,
 *    the controllers' API requests by verb and resource (from their own /metrics);
 *  - the upgrade of all 20 at once: each pin moved to the version that directly replaces or skips the
 *    installed one in the package's real channel graph (so the default CatalogProvided policy allows it);
 *  - the controller's peak RSS, and after each phase its RSS now and its peak so far (which phase reaches
 *    the peak).
 * Prints Markdown tables for docs/benchmarks.md.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { buildBundleImage, buildCatalogImage, pushImage } from "../src/image/index.js";
import { KubeClient, type KubeObject } from "../src/cluster/kube/client.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../src/cluster/catalogd/api.js";
import { OLM_API_VERSION, type ClusterExtension } from "../src/cluster/olm/api.js";
import { crdUpgradeProblems } from "../src/cluster/rukpak/crdsafety.js";
import { loadCatalog } from "../src/fbc/load.js";
import { writeCatalogDirectory } from "../src/fbc/write.js";
import type { DeclarativeConfig, JsonObject } from "../src/fbc/types.js";
import { startDockerRegistry } from "../test/image/servers.js";
import { renamePackages } from "./generate.js";
import { COMMUNITY } from "../test/shared.js";
import { currentRss, peakRss, settled, startController, startKube, untilAll } from "./shared.js";

const tmp = mkdtempSync(join(tmpdir(), "opcat-bench-ext-"));
const bin = join(process.env.OPCAT_KUBE_CACHE ?? join(homedir(), ".cache", "opcat", "kube"), "v1.35.4", "bin");
const COUNT = Number(process.env.BENCH_EXTENSIONS ?? 20);
/** Copies of v4.16 (packages renamed) beside v4.20 in the catalog: its size (0: v4.20 alone). */
const V416_COPIES = Number(process.env.BENCH_V416_COPIES ?? 1);

/** One package to install: the version installed first and its direct successor in the default channel. */
interface Pick {
  pkg: string;
  from: string;
  to: string;
  bundles: { from: string; to: string };
  /** The bundle supports OwnNamespace but not AllNamespaces: it watches its install namespace. */
  own?: boolean;
}

/** Ships a custom resource its own CRD's schema refuses (`.spec.aws_iam_secret: field not declared`). */
const REFUSED = new Set(["ecr-secret-operator"]);

const versionOf = (cfg: DeclarativeConfig, bundle: string): string => {
  const b = cfg.bundles.find((x) => x.name === bundle);
  const p = b?.properties.find((x) => x.type === "olm.package");
  return String((p?.value.value as JsonObject | undefined)?.version ?? "");
};

/**
 * What a bundle directory can be installed as here: "all" (AllNamespaces), "own" (OwnNamespace only),
 * or undefined: no directory, or objects of kinds no API server here serves (Prometheus' ServiceMonitor).
 */
function installable(dir: string): "all" | "own" | undefined {
  const m = join(dir, "manifests");
  if (!existsSync(m)) return undefined;
  const files = readdirSync(m);
  const texts = files.map((f) => readFileSync(join(m, f), "utf8"));
  if (texts.some((t) => /monitoring\.coreos\.com\//.test(t))) return undefined;
  const csv = texts[files.findIndex((f) => f.includes("clusterserviceversion"))];
  if (!csv) return undefined;
  const doc = parse(csv) as { spec?: { installModes?: { type: string; supported: boolean }[] } };
  const modes = new Set((doc.spec?.installModes ?? []).filter((x) => x.supported).map((x) => x.type));
  return modes.has("AllNamespaces") ? "all" : modes.has("OwnNamespace") ? "own" : undefined;
}

/** The CRDs of a bundle directory. */
function crdsOf(dir: string): KubeObject[] {
  const m = join(dir, "manifests");
  return readdirSync(m)
    .flatMap((f) => parseAllDocuments(readFileSync(join(m, f), "utf8")).map((d) => d.toJS() as KubeObject))
    .filter((o) => o?.kind === "CustomResourceDefinition");
}

/** Whether upgrading between two bundles passes crdUpgradeSafety (several real upgrades drop CRD fields). */
function safeUpgrade(dir: string, cfg: DeclarativeConfig, from: string, to: string): boolean {
  const before = new Map(crdsOf(join(dir, versionOf(cfg, from))).map((c) => [c.metadata.name, c]));
  return crdsOf(join(dir, versionOf(cfg, to))).every((c) => {
    const old = before.get(c.metadata.name);
    return !old || crdUpgradeProblems(old, c).length === 0;
  });
}

/** A bundle of the catalog that declares no dependency (operator-controller does not resolve those). */
const noDependencies = (cfg: DeclarativeConfig, bundle: string): boolean =>
  !cfg.bundles
    .find((x) => x.name === bundle)
    ?.properties.some((p) => p.type === "olm.gvk.required" || p.type === "olm.package.required");

/**
 * Packages of the catalog with a bundle directory in the community operators repository for two
 * versions where the newer one replaces or skips the older one in the default channel (the newest such
 * pair), both installable here.
 */
function pickPackages(cfg: DeclarativeConfig): Pick[] {
  const out: Pick[] = [];
  for (const p of cfg.packages) {
    const dir = join(COMMUNITY, "operators", p.name);
    if (!existsSync(dir) || REFUSED.has(p.name)) continue;
    const mode = (b: string) => (noDependencies(cfg, b) ? installable(join(dir, versionOf(cfg, b) || "-")) : undefined);
    const ch = cfg.channels.find((c) => c.package === p.name && c.name === p.defaultChannel);
    let pick: Pick | undefined;
    for (const e of ch?.entries ?? []) {
      const m = mode(e.name);
      if (!m) continue;
      for (const o of [e.replaces, ...(e.skips ?? [])])
        if (o && mode(o) && (!pick || versionOf(cfg, e.name) !== pick.to) && safeUpgrade(dir, cfg, o, e.name))
          pick = {
            pkg: p.name,
            from: versionOf(cfg, o),
            to: versionOf(cfg, e.name),
            bundles: { from: o, to: e.name },
            ...(m === "own" || mode(o) === "own" ? { own: true } : {}),
          };
    }
    if (pick) out.push(pick);
  }
  // those installing for all namespaces first (operator-controller's usual case)
  return out.sort((x, y) => Number(!!x.own) - Number(!!y.own)).slice(0, COUNT);
}

/**
 * The catalog directory: v4.20 as published plus v4.16 renamed, the picked bundles' images pointing at
 * the local registry. Returns the picks.
 */
async function writeCatalog(dir: string, registryHost: string): Promise<{ picks: Pick[]; bundles: number }> {
  const a = (await loadCatalog(join(COMMUNITY, "catalogs", "v4.20"))).config;
  const copies: DeclarativeConfig[] = [];
  for (let i = 0; i < V416_COPIES; i++) {
    const b = (await loadCatalog(join(COMMUNITY, "catalogs", "v4.16"))).config;
    renamePackages(b, i === 0 ? "-v416" : `-v416-${i + 1}`);
    copies.push(b);
  }
  const picks = pickPackages(a);
  for (const p of picks)
    for (const [which, name] of Object.entries(p.bundles)) {
      const bu = a.bundles.find((x) => x.name === name)!;
      bu.image = `${registryHost}/bundles/${p.pkg}:${which === "from" ? p.from : p.to}`;
    }
  const merged = { ...a };
  for (const k of ["packages", "channels", "bundles", "deprecations", "others"] as const)
    (merged[k] as unknown[]) = [...a[k], ...copies.flatMap((b): unknown[] => b[k])];
  writeCatalogDirectory(merged, dir, "yaml");
  return { picks, bundles: merged.bundles.length };
}

const namespaceOf = (p: Pick): string => `ns-${p.pkg}`.slice(0, 63).replace(/-+$/, "");

function extension(p: Pick): ClusterExtension {
  return {
    apiVersion: OLM_API_VERSION,
    kind: "ClusterExtension",
    metadata: { name: p.pkg },
    spec: {
      namespace: namespaceOf(p),
      source: { sourceType: "Catalog", catalog: { packageName: p.pkg, version: p.from } },
      ...(p.own ? { config: { configType: "Inline", inline: { watchNamespace: namespaceOf(p) } } } : {}),
    },
  } as unknown as ClusterExtension;
}

const cond = (o: ClusterExtension, t: string) => o.status?.conditions?.find((c) => c.type === t);

/** Installed at `version` for the current generation. */
const installedAt = (version: (name: string) => string) => (o: ClusterExtension) =>
  cond(o, "Installed")?.status === "True" &&
  o.status?.install?.bundle.version === version(o.metadata.name) &&
  cond(o, "Progressing")?.reason === "Succeeded" &&
  cond(o, "Progressing")?.observedGeneration === o.metadata.generation;

/** Waits until every ClusterExtension is installed at its version; on a timeout says where each stands. */
async function untilInstalled(client: KubeClient, names: string[], version: (name: string) => string) {
  try {
    await untilAll<ClusterExtension>(client, OLM_API_VERSION, "ClusterExtension", names, installedAt(version), 300_000);
  } catch (e) {
    for (const o of (await client.list<ClusterExtension>(OLM_API_VERSION, "ClusterExtension")).items)
      if (!installedAt(version)(o)) console.error(o.metadata.name, JSON.stringify(o.status?.conditions?.slice(0, 2)));
    throw e;
  }
}

type Counts = Map<string, number>;
const diff = (a: Counts, b: Counts): Counts =>
  new Map([...b].map(([k, n]) => [k, n - (a.get(k) ?? 0)] as [string, number]).filter(([, n]) => n > 0));
const total = (m: Counts): number => [...m.values()].reduce((x, y) => x + y, 0);

/** One row per request kind (verb and resource), a column per phase. */
function requestTable(phases: [string, Counts][]): string[] {
  const keys = [...new Set(phases.flatMap(([, m]) => [...m.keys()]))];
  const sum = (k: string) => phases.reduce((a, [, m]) => a + (m.get(k) ?? 0), 0);
  keys.sort((a, b) => sum(b) - sum(a) || a.localeCompare(b));
  const out = [
    `| request | ${phases.map(([p]) => p).join(" | ")} |`,
    `|---|${phases.map(() => "---:").join("|")}|`,
    `| **total** | ${phases.map(([, m]) => `**${total(m)}**`).join(" | ")} |`,
  ];
  for (const k of keys) out.push(`| ${k} | ${phases.map(([, m]) => m.get(k) ?? 0).join(" | ")} |`);
  return out;
}

async function main(): Promise<void> {
  const kube = await startKube(tmp, `cluster.sh start failed (build it first: scripts/kube/cluster.sh build; ${bin})`);
  const registry = await startDockerRegistry(join(tmp, "registry"));
  const client = KubeClient.connect({ kubeconfig: kube.kubeconfig, context: "admin" });
  const { ctl, log, requests } = await startController(kube.kubeconfig, join(tmp, "state"));
  const rows: string[][] = [];
  const phases: [string, Counts][] = [];
  const memory: string[] = [];
  /** The controller's RSS now and its peak so far, once a phase has settled. */
  const rssAfter = (phase: string): void => {
    memory.push(`| ${phase} | ${currentRss(ctl.pid!).toFixed(0)} MiB | ${peakRss(ctl.pid!).toFixed(0)} MiB |`);
  };
  try {
    const { picks, bundles } = await writeCatalog(join(tmp, "catalog"), registry.host);
    if (picks.length < COUNT) throw new Error(`only ${picks.length} packages to install`);
    for (const p of picks)
      for (const v of [p.from, p.to])
        await pushImage(
          buildBundleImage(join(COMMUNITY, "operators", p.pkg, v)),
          `${registry.host}/bundles/${p.pkg}:${v}`,
          {
            useHttp: true,
          },
        );
    await pushImage(buildCatalogImage(join(tmp, "catalog")), `${registry.host}/catalogs/community:v1`, {
      useHttp: true,
    });
    for (const p of picks)
      await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: extension(p).spec.namespace } });

    let before = await settled(requests);
    rssAfter("started, images pushed");
    let t = performance.now();
    await client.create({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name: "community" },
      spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/community:v1` } } },
    } as unknown as KubeObject);
    await untilAll<ClusterCatalog>(client, CATALOG_API_VERSION, "ClusterCatalog", ["community"], (c) =>
      (c.status?.conditions ?? []).some((x) => x.type === "Serving" && x.status === "True"),
    );
    rows.push([
      `ClusterCatalog → Serving (${bundles} bundles, image pushed to a local registry)`,
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);
    let after = await settled(requests);
    phases.push(["catalog", diff(before, after)]);
    rssAfter("ClusterCatalog served");

    const names = picks.map((p) => p.pkg);
    const want = new Map(picks.map((p) => [p.pkg, p.from]));
    before = after;
    t = performance.now();
    await Promise.all(picks.map((p) => client.create(extension(p) as unknown as KubeObject)));
    await untilInstalled(client, names, (n) => want.get(n)!);
    rows.push([
      `${COUNT} ClusterExtensions created at once → all Installed`,
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);
    after = await settled(requests);
    phases.push([`install ${COUNT}`, diff(before, after)]);
    rssAfter(`${COUNT} installed`);

    for (const p of picks) want.set(p.pkg, p.to);
    before = after;
    t = performance.now();
    await Promise.all(
      picks.map((p) =>
        client.mergePatch(OLM_API_VERSION, "ClusterExtension", p.pkg, {
          spec: { source: { catalog: { version: p.to } } },
        }),
      ),
    );
    await untilInstalled(client, names, (n) => want.get(n)!);
    rows.push([
      `the ${COUNT} upgraded at once → all Installed at the new version`,
      `${(performance.now() - t).toFixed(0)} ms`,
    ]);
    after = await settled(requests);
    phases.push([`upgrade ${COUNT}`, diff(before, after)]);
    rssAfter(`${COUNT} upgraded`);
    for (const [p, m] of phases.slice(1))
      rows.push([`API requests: ${p} (per ClusterExtension)`, `${total(m)} (${(total(m) / COUNT).toFixed(1)})`]);
    rows.push(["controller peak RSS (VmHWM)", `${peakRss(ctl.pid!).toFixed(0)} MiB`]);
    rows.push(["packages (installed → upgraded)", picks.map((p) => `${p.pkg} ${p.from}→${p.to}`).join(", ")]);
  } finally {
    const exited = new Promise((r) => ctl.once("exit", r));
    ctl.kill("SIGTERM");
    await exited;
    if (process.env.BENCH_CONTROLLER_LOG) writeFileSync(process.env.BENCH_CONTROLLER_LOG, log());
    client.close();
    await registry.stop();
    kube.stop();
    rmSync(tmp, { recursive: true, force: true });
    // what was measured, also when a later step failed
    console.log("| ClusterExtensions (real kube-apiserver 1.35.4 + etcd on 127.0.0.1) | value |\n|---|---|");
    for (const r of rows) console.log(`| ${r[0]} | ${r[1]} |`);
    console.log(`\n${requestTable(phases).join("\n")}`);
    console.log(`\n| controller after the phase | RSS (VmRSS) | peak so far (VmHWM) |\n|---|---:|---:|`);
    for (const m of memory) console.log(m);
  }
}

await main();
