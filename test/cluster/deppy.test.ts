/**
 * Seed 002's user stories end to end on a real API server: ClusterCatalogs built from real bundles
 * of ../shared/data/community/operators (rabbitmq-messaging-topology-operator really depends on
 * rabbitmq-cluster-operator), pushed by opcat to a real docker-registry on 127.0.0.1, served by the
 * catalog controller; Operators → Inputs → resolveset Bundles and Instances → one Bundle and
 * Instance per package, installed by the RukPak provisioner; all controllers run in this process
 * with their admission webhooks registered by URL.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import type { KubeClient, KubeObject } from "../../src/cluster/client.js";
import { API_VERSION as RUKPAK, LABEL_INSTANCE, type Bundle, type Instance } from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { parseKubeDocuments } from "../../src/cluster/rukpak/manifests.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { CATALOG_API_VERSION, DEPPY_API_VERSION, LABEL_GENERATED_FOR, LABEL_INPUT, LABEL_RESOLVESET, OPERATOR_API_VERSION, type ClusterCatalog, type Input, type InputClass, type Operator } from "../../src/cluster/deppy/api.js";
import { parseResolveset, RESOLVESET_FILE, resolvesetInstanceName } from "../../src/cluster/deppy/resolver.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, requireShared } from "../shared.js";
import { clientAs, clusterKubeconfig, cond, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry");
const shared = requireShared();
const skip = cluster.skip || missingTools || shared.skip;
const OPS = join(COMMUNITY, "operators");
const NS = "opcat-deppy-test";

const RABBIT = "rabbitmq-cluster-operator";
const TOPO = "rabbitmq-messaging-topology-operator";
const CATFACTS = "cat-facts-operator";
const KUBEGREEN = "kube-green";

describe("Deppy and the Operator API on a real API server (seed 002 user stories)", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let registry: RunningRegistry;
  let running: RunningControllers | undefined;
  let tmp = "";
  const images: Record<string, string> = {};
  const names: Record<string, string> = {};

  async function pushBundle(key: string, dir: string, tag: string): Promise<void> {
    const ref = `${registry.host}/${tag}`;
    await pushImage(buildBundleImage(dir), ref, { useHttp: true });
    images[key] = ref;
    names[key] = renderBundleDirectory(dir).bundles[0].name;
  }

  /** A catalog directory: packages with channels (entries in order, each replacing the one before) and the bundles' blobs. */
  function writeCatalog(dir: string, pkgs: { name: string; defaultChannel: string; channels: Record<string, string[]> }[], dirs: Record<string, string>): void {
    mkdirSync(dir, { recursive: true });
    for (const p of pkgs) {
      const blobs: unknown[] = [{ schema: "olm.package", name: p.name, defaultChannel: p.defaultChannel }];
      for (const [ch, keys] of Object.entries(p.channels)) {
        blobs.push({ schema: "olm.channel", name: ch, package: p.name, entries: keys.map((k, i) => ({ name: names[k], ...(i > 0 ? { replaces: names[keys[i - 1]] } : {}) })) });
      }
      let text = blobs.map((b) => JSON.stringify(b)).join("\n") + "\n";
      const keys = [...new Set(Object.values(p.channels).flat())];
      for (const k of keys) text += formatCatalog(renderBundleDirectory(dirs[k], { image: images[k] }), "json");
      writeFileSync(join(dir, `${p.name}.json`), text);
    }
  }

  async function operator(name: string, spec: Operator["spec"]): Promise<void> {
    await admin.apply({ apiVersion: OPERATOR_API_VERSION, kind: "Operator", metadata: { name }, spec } as Operator);
  }

  async function removeOperator(name: string, packages: string[]): Promise<void> {
    await admin.delete(OPERATOR_API_VERSION, "Operator", name, undefined, "Foreground");
    for (const p of packages) await waitFor(admin, RUKPAK, "Instance", p, (o) => o === undefined, `package Instance ${p} gone`);
    await waitFor(admin, DEPPY_API_VERSION, "Input", name, (o) => o === undefined, "Input gone");
  }

  const resolvesetOf = async (input: string) => {
    const i = await waitFor<Input>(admin, DEPPY_API_VERSION, "Input", input, (o) => !!o?.status?.resolveset && cond(o, "Resolved")?.status === "True", "resolved");
    const cm = await admin.get<KubeObject & { data: Record<string, string> }>("v1", "ConfigMap", i!.status!.resolveset!, NS);
    return { input: i!, entries: parseResolveset(cm.data[RESOLVESET_FILE]) };
  };

  const installedAt = (bundle: string) => (o: Instance | undefined) => cond(o, "Installed")?.status === "True" && o?.status?.activeBundle === bundle;

  /** Approves the resolveset Instance of `input` once it waits for approval with the given reason. */
  async function approveWhenAsked(input: string, reason = "NewPermissions"): Promise<Instance> {
    const name = resolvesetInstanceName(input);
    const waiting = await waitFor<Instance>(admin, RUKPAK, "Instance", name, (o) => cond(o, "Approved")?.status === "False" && cond(o, "Approved")?.reason === reason && cond(o, "Approved")?.observedGeneration === o?.metadata.generation, `waiting for approval (${reason})`);
    await approveInstance(admin, name);
    return waiting!;
  }

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-deppy-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    const dirs: Record<string, string> = {
      rabbit280: join(OPS, RABBIT, "2.8.0"),
      rabbit290: join(OPS, RABBIT, "2.9.0"),
      rabbit2100: join(OPS, RABBIT, "2.10.0"),
      topo: join(OPS, TOPO, "1.17.4"),
      catfacts: join(OPS, CATFACTS, "1.1.0"),
      kubegreen: join(OPS, KUBEGREEN, "0.7.1"),
    };
    // rabbitmq 2.10.0 that also wants to delete nodes: more permissions than 2.9.0
    const perm = join(tmp, "rabbit-2.10.0-perm");
    cpSync(dirs.rabbit2100, perm, { recursive: true });
    const csvFile = join(perm, "manifests", "rabbitmq.clusterserviceversion.yaml");
    const csv = parseKubeDocuments(readFileSync(csvFile, "utf8"), "csv")[0] as unknown as { spec: { install: { spec: { clusterPermissions: { rules: unknown[] }[] } } } };
    csv.spec.install.spec.clusterPermissions[0].rules.push({ apiGroups: [""], resources: ["nodes"], verbs: ["delete"] });
    writeFileSync(csvFile, JSON.stringify(csv));
    dirs.rabbitPerm = perm;
    for (const [k, d] of Object.entries(dirs)) await pushBundle(k, d, `${k.toLowerCase()}-bundle:v1`);

    writeCatalog(
      join(tmp, "community"),
      [
        { name: RABBIT, defaultChannel: "stable", channels: { stable: ["rabbit280", "rabbit290"], candidate: ["rabbit280", "rabbit290", "rabbit2100"] } },
        { name: TOPO, defaultChannel: "stable", channels: { stable: ["topo"] } },
        { name: CATFACTS, defaultChannel: "alpha", channels: { alpha: ["catfacts"] } },
        { name: KUBEGREEN, defaultChannel: "alpha", channels: { alpha: ["kubegreen"] } },
      ],
      dirs,
    );
    writeCatalog(join(tmp, "extra"), [{ name: RABBIT, defaultChannel: "stable", channels: { stable: ["rabbit290", "rabbitPerm"] } }], dirs);
    await pushImage(buildCatalogImage(join(tmp, "community")), `${registry.host}/catalogs/community:v1`, { useHttp: true });
    await pushImage(buildCatalogImage(join(tmp, "extra")), `${registry.host}/catalogs/extra:v1`, { useHttp: true });

    running = await runControllers({ kubeconfig, context: "admin", stateDir: join(tmp, "state"), pull: { useHttp: true }, namespace: NS, log: () => {} });
    await admin.apply({ apiVersion: CATALOG_API_VERSION, kind: "ClusterCatalog", metadata: { name: "community" }, spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/community:v1` } }, priority: 10 } } as ClusterCatalog);
    await admin.apply({ apiVersion: CATALOG_API_VERSION, kind: "ClusterCatalog", metadata: { name: "extra" }, spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/extra:v1` } } } } as ClusterCatalog);
    for (const c of ["community", "extra"]) await waitFor<ClusterCatalog>(admin, CATALOG_API_VERSION, "ClusterCatalog", c, (o) => cond(o, "Serving")?.status === "True", "Serving");
  });

  after(async () => {
    for (const o of ["plumbus-force", "plumbus-minimal", "plumbus-sub", "plumbus-one", "direct", "rabbit", "dry", "dry-next", "blocked", "unblocked", "edited", "restart"]) await admin?.delete(OPERATOR_API_VERSION, "Operator", o).catch(() => false);
    for (const c of ["community", "extra"]) await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", c).catch(() => false);
    await running?.stop();
    await registry?.stop();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("catalogs on the cluster: a ClusterCatalog is pulled, served over catalogd's HTTP API, with its digest and URL in status", async () => {
    const cc = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "community");
    assert.match(cc.status?.resolvedSource?.image?.ref ?? "", /^127\.0\.0\.1:\d+\/catalogs\/community@sha256:[0-9a-f]{64}$/);
    const base = cc.status?.urls?.base ?? "";
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/catalogs\/community$/);
    const all = await (await fetch(`${base}/api/v1/all`)).text();
    const pkgs = all.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { schema: string; name: string }).filter((b) => b.schema === "olm.package").map((b) => b.name);
    assert.deepEqual(pkgs.sort(), [CATFACTS, KUBEGREEN, RABBIT, TOPO].sort());
    assert.equal(cond(cc, "Progressing")?.reason, "Succeeded");
  });

  test("default InputClasses exist with the seed's parameters; dry-run-next targets the cluster's next minor release", async () => {
    const sub = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "subscription");
    assert.deepEqual(sub.parameters, { force: false, generateInputsForDependencies: true, dryRun: false, trace: false, constraints: [{ type: "minKubeVersion", value: ">= 1.20" }, { type: "minOCPVersion", value: ">= 4.7" }] });
    const force = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "force");
    assert.equal(force.parameters?.force, true);
    const next = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "dry-run-next");
    const v = await admin.request<{ gitVersion: string }>("GET", "/version");
    const m = /v(\d+)\.(\d+)/.exec(v.gitVersion)!;
    assert.deepEqual(next.parameters?.constraints?.[0], { type: "minKubeVersion", value: `>= ${m[1]}.${Number(m[2]) + 1}` });
    assert.equal(next.parameters?.dryRun, true);
  });

  test("story: force install a single operator from a catalog — the resolveset holds only the matching bundle, no dependencies; Android asks for approval of a first install", async () => {
    await operator("plumbus-force", { inputClass: "force", catalog: { name: "community", namespace: "my-ns", package: TOPO, channel: "stable" }, version: "1.17.4" });
    const input = await admin.get<Input>(DEPPY_API_VERSION, "Input", "plumbus-force").catch(async () => (await waitFor<Input>(admin, DEPPY_API_VERSION, "Input", "plumbus-force", (o) => !!o, "Input created"))!);
    assert.deepEqual(input.spec, {
      inputClass: "force",
      constraints: [
        { type: "olm.catalog", value: { name: "community", namespace: "my-ns", package: TOPO, channel: "stable" } },
        { type: "olm.packageVersion", value: { package: TOPO, version: "1.17.4" } },
      ],
    });
    const { entries } = await resolvesetOf("plumbus-force");
    assert.deepEqual(
      entries.map((e) => [e.name, e.action]),
      [[names.topo, "force"]],
    );
    const waiting = await approveWhenAsked("plumbus-force");
    assert.ok((waiting.status?.permissions ?? []).length > 0);
    assert.ok(waiting.status!.permissions!.every((p) => p.startsWith(`${names.topo} (new install): `)), waiting.status!.permissions!.join("\n"));
    await waitFor<Instance>(admin, RUKPAK, "Instance", TOPO, installedAt(names.topo), "topology operator installed");
    assert.equal(await admin.tryGet(RUKPAK, "Instance", RABBIT), undefined, "no dependency was installed");
    await removeOperator("plumbus-force", [TOPO]);
  });
});
