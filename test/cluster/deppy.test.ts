/**
 * Seed 002's user stories end to end on a real API server: ClusterCatalogs built from real bundles
 * of ../shared/data/community/operators (rabbitmq-messaging-topology-operator really depends on
 * rabbitmq-cluster-operator), pushed by opcat to a real docker-registry on 127.0.0.1, served by the
 * catalog controller; Operators → Inputs → resolveset Bundles and Instances → one Bundle and
 * Instance per package, installed by the RukPak provisioner; all controllers run in this process
 * with their admission webhooks registered by URL.
 */
import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION as RUKPAK, LABEL_INSTANCE, type Bundle, type Instance } from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { parseKubeDocuments } from "../../src/cluster/rukpak/manifests.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import {
  DEPPY_API_VERSION,
  LABEL_GENERATED_FOR,
  LABEL_INPUT,
  LABEL_PACKAGE,
  type Input,
  type InputClass,
} from "../../src/cluster/deppy/api.js";
import { OPERATOR_API_VERSION, type Operator } from "../../src/cluster/operators/api.js";
import { parseResolveset, RESOLVESET_FILE, resolvesetInstanceName } from "../../src/cluster/deppy/resolver.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, requireShared } from "../shared.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, waitFor, waitForCrdGone, waitForEvent } from "./harness.js";

const execFileAsync = promisify(execFile);
const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry");
const shared = requireShared();
const skip = cluster.skip || missingTools || shared.skip;
const OPS = join(COMMUNITY, "operators");
const NS = "opcat-deppy-test";
/** OPCAT_TEST_LOG=1 shows the controllers' log (else it goes to the test cluster's log folder). */
const log = controllerLog("deppy-controllers");

const RABBIT = "rabbitmq-cluster-operator";
const TOPO = "rabbitmq-messaging-topology-operator";
const CATFACTS = "cat-facts-operator";
const KUBEGREEN = "kube-green";

describe("Deppy and the Operator API on a real API server (seed 002 user stories)", {
  skip,
  concurrency: false,
}, () => {
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

  /**
   * A catalog directory: packages with channels (entries in order,
   * each replacing the one before) and the bundles' blobs.
   */
  function writeCatalog(
    dir: string,
    pkgs: { name: string; defaultChannel: string; channels: Record<string, string[]> }[],
    dirs: Record<string, string>,
  ): void {
    mkdirSync(dir, { recursive: true });
    for (const p of pkgs) {
      const blobs: unknown[] = [{ schema: "olm.package", name: p.name, defaultChannel: p.defaultChannel }];
      for (const [ch, keys] of Object.entries(p.channels)) {
        blobs.push({
          schema: "olm.channel",
          name: ch,
          package: p.name,
          entries: keys.map((k, i) => ({ name: names[k], ...(i > 0 ? { replaces: names[keys[i - 1]] } : {}) })),
        });
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

  /**
   * Deletes an Operator and waits until what it installed is gone: its Input, the Inputs generated
   * for its dependencies, its resolveset Instance, the package Instances and their CRDs.
   */
  async function removeOperator(name: string, packages: string[] = [RABBIT, TOPO, CATFACTS, KUBEGREEN]): Promise<void> {
    const crds = new Set<string>();
    for (const p of packages)
      for (const o of (await admin.tryGet<Instance>(RUKPAK, "Instance", p))?.status?.objects ?? [])
        if (o.kind === "CustomResourceDefinition") crds.add(o.name);
    const generated = (
      await admin.list<Input>(DEPPY_API_VERSION, "Input", { labelSelector: `${LABEL_GENERATED_FOR}=${name}` })
    ).items.map((i) => i.metadata.name);
    await admin.delete(OPERATOR_API_VERSION, "Operator", name, undefined, "Foreground");
    await waitFor(admin, OPERATOR_API_VERSION, "Operator", name, (o) => o === undefined, "Operator gone");
    for (const i of [name, ...generated]) {
      await waitFor(admin, DEPPY_API_VERSION, "Input", i, (o) => o === undefined, "Input gone");
      await waitFor(admin, RUKPAK, "Instance", resolvesetInstanceName(i), (o) => o === undefined, "resolveset gone");
    }
    for (const p of packages)
      await waitFor(admin, RUKPAK, "Instance", p, (o) => o === undefined, `package Instance ${p} gone`);
    await removeCRDs(crds);
  }

  async function removeCRDs(crds: Iterable<string>): Promise<void> {
    for (const c of crds) await waitForCrdGone(admin, c);
  }

  /**
   * Leaves the cluster as this file found it, also after a failed story (the next test file installs
   * the same operators): every Operator, then whatever Deppy objects are left, and the CRDs they installed.
   */
  async function cleanCluster(): Promise<void> {
    for (const o of (await admin.list(OPERATOR_API_VERSION, "Operator")).items) await removeOperator(o.metadata.name);
    const crds = new Set<string>();
    const left = (await admin.list<Instance>(RUKPAK, "Instance")).items.filter(
      (i) => i.metadata.labels?.[LABEL_PACKAGE] !== undefined || i.metadata.labels?.[LABEL_INPUT] !== undefined,
    );
    for (const i of left)
      for (const o of i.status?.objects ?? []) if (o.kind === "CustomResourceDefinition") crds.add(o.name);
    for (const i of (await admin.list<Input>(DEPPY_API_VERSION, "Input")).items)
      await admin.delete(DEPPY_API_VERSION, "Input", i.metadata.name).catch(() => false);
    for (const i of left) {
      await admin.delete(RUKPAK, "Instance", i.metadata.name).catch(() => false);
      await waitFor(admin, RUKPAK, "Instance", i.metadata.name, (o) => o === undefined, "leftover Instance gone");
    }
    for (const b of (await admin.list(RUKPAK, "Bundle", { labelSelector: LABEL_PACKAGE })).items)
      await admin.delete(RUKPAK, "Bundle", b.metadata.name).catch(() => false);
    for (const c of crds)
      await admin.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", c).catch(() => false);
    await removeCRDs(crds);
  }

  /**
   * An Event about `name` with `reason` (Inputs are cluster-scoped: their
   * Events are in namespace default; written after the status).
   */
  const eventFor = (name: string, reason: string) => waitForEvent(admin, "default", name, reason);

  const resolvesetOf = async (input: string) => {
    const i = await waitFor<Input>(
      admin,
      DEPPY_API_VERSION,
      "Input",
      input,
      (o) => !!o?.status?.resolveset && cond(o, "Resolved")?.status === "True",
      "resolved",
    );
    const cm = await admin.get<KubeObject & { data: Record<string, string> }>(
      "v1",
      "ConfigMap",
      i!.status!.resolveset!,
      NS,
    );
    return { input: i!, entries: parseResolveset(cm.data[RESOLVESET_FILE]) };
  };

  // the Bundle of a catalog bundle is named after it (with a suffix when another image had that name first)
  const installedAt = (bundle: string) => (o: Instance | undefined) =>
    cond(o, "Installed")?.status === "True" &&
    (o?.status?.activeBundle === bundle || !!o?.status?.activeBundle?.startsWith(`${bundle}-`));

  /** Approves the resolveset Instance of `input` once it waits for approval with the given reason. */
  async function approveWhenAsked(input: string, reason = "NewPermissions"): Promise<Instance> {
    const name = resolvesetInstanceName(input);
    const waiting = await waitFor<Instance>(
      admin,
      RUKPAK,
      "Instance",
      name,
      (o) =>
        cond(o, "Approved")?.status === "False" &&
        cond(o, "Approved")?.reason === reason &&
        (cond(o, "Approved") as { observedGeneration?: number } | undefined)?.observedGeneration ===
          o?.metadata.generation,
      `waiting for approval (${reason})`,
    );
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
    const csv = parseKubeDocuments(readFileSync(csvFile, "utf8"), "csv")[0] as unknown as {
      spec: { install: { spec: { clusterPermissions: { rules: unknown[] }[] } } };
    };
    csv.spec.install.spec.clusterPermissions[0].rules.push({
      apiGroups: [""],
      resources: ["nodes"],
      verbs: ["delete"],
    });
    writeFileSync(csvFile, JSON.stringify(csv));
    dirs.rabbitPerm = perm;
    for (const [k, d] of Object.entries(dirs)) await pushBundle(k, d, `${k.toLowerCase()}-bundle:v1`);

    writeCatalog(
      join(tmp, "community"),
      [
        {
          name: RABBIT,
          defaultChannel: "stable",
          channels: { stable: ["rabbit280", "rabbit290"], candidate: ["rabbit280", "rabbit290", "rabbit2100"] },
        },
        { name: TOPO, defaultChannel: "stable", channels: { stable: ["topo"] } },
        { name: CATFACTS, defaultChannel: "alpha", channels: { alpha: ["catfacts"] } },
        { name: KUBEGREEN, defaultChannel: "alpha", channels: { alpha: ["kubegreen"] } },
      ],
      dirs,
    );
    writeCatalog(
      join(tmp, "extra"),
      [{ name: RABBIT, defaultChannel: "stable", channels: { stable: ["rabbit280", "rabbit290", "rabbitPerm"] } }],
      dirs,
    );
    await pushImage(buildCatalogImage(join(tmp, "community")), `${registry.host}/catalogs/community:v1`, {
      useHttp: true,
    });
    await pushImage(buildCatalogImage(join(tmp, "extra")), `${registry.host}/catalogs/extra:v1`, { useHttp: true });

    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true },
      namespace: NS,
      log,
    });
    // leftovers of an interrupted earlier run on the same cluster
    await cleanCluster();
    await admin.apply({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name: "community" },
      spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/community:v1` } }, priority: 10 },
    } as ClusterCatalog);
    await admin.apply({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name: "extra" },
      spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/extra:v1` } } },
    } as ClusterCatalog);
    for (const c of ["community", "extra"])
      await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        c,
        (o) => cond(o, "Serving")?.status === "True",
        "Serving",
      );
  });

  // every story starts from a cluster with nothing installed
  afterEach(async () => {
    if (cluster.skip !== false) return;
    for (const o of (await admin.list(OPERATOR_API_VERSION, "Operator")).items) await removeOperator(o.metadata.name);
  });

  after(async () => {
    try {
      if (admin && running) await cleanCluster();
    } finally {
      for (const c of ["community", "extra"])
        await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", c).catch(() => false);
      await running?.stop();
      await registry?.stop();
      admin?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  test(
    "catalogs on the cluster: a ClusterCatalog is pulled, served " +
      "over catalogd's HTTP API, with its digest and URL in status",
    async () => {
      const cc = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "community");
      assert.match(
        cc.status?.resolvedSource?.image?.ref ?? "",
        /^127\.0\.0\.1:\d+\/catalogs\/community@sha256:[0-9a-f]{64}$/,
      );
      const base = cc.status?.urls?.base ?? "";
      assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/catalogs\/community$/);
      const all = await (await fetch(`${base}/api/v1/all`)).text();
      const pkgs = all
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { schema: string; name: string })
        .filter((b) => b.schema === "olm.package")
        .map((b) => b.name);
      assert.deepEqual(pkgs.sort(), [CATFACTS, KUBEGREEN, RABBIT, TOPO].sort());
      assert.equal(cond(cc, "Progressing")?.reason, "Succeeded");
    },
  );

  test(
    "default InputClasses exist with the seed's parameters; " + "dry-run-next targets the cluster's next minor release",
    async () => {
      const sub = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "subscription");
      assert.deepEqual(sub.parameters, {
        force: false,
        generateInputsForDependencies: true,
        dryRun: false,
        trace: false,
        constraints: [
          { type: "minKubeVersion", value: ">= 1.20" },
          { type: "minOCPVersion", value: ">= 4.7" },
        ],
      });
      const force = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "force");
      assert.equal(force.parameters?.force, true);
      const next = await admin.get<InputClass>(DEPPY_API_VERSION, "InputClass", "dry-run-next");
      const v = await admin.request<{ gitVersion: string }>("GET", "/version");
      const m = /v(\d+)\.(\d+)/.exec(v.gitVersion)!;
      assert.deepEqual(next.parameters?.constraints?.[0], {
        type: "minKubeVersion",
        value: `>= ${m[1]}.${Number(m[2]) + 1}`,
      });
      assert.equal(next.parameters?.dryRun, true);
    },
  );

  test(
    "story: force install a single operator from a catalog — the resolveset holds only " +
      "the matching bundle, no dependencies; Android asks for approval of a first install",
    async () => {
      await operator("plumbus-force", {
        inputClass: "force",
        catalog: { name: "community", namespace: "my-ns", package: TOPO, channel: "stable" },
        version: "1.17.4",
      });
      const input = await admin
        .get<Input>(DEPPY_API_VERSION, "Input", "plumbus-force")
        .catch(
          async () =>
            (await waitFor<Input>(admin, DEPPY_API_VERSION, "Input", "plumbus-force", (o) => !!o, "Input created"))!,
        );
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
      assert.ok(
        waiting.status!.permissions!.every((p) => p.startsWith(`${names.topo} (new install): `)),
        waiting.status!.permissions!.join("\n"),
      );
      await waitFor<Instance>(admin, RUKPAK, "Instance", TOPO, installedAt(names.topo), "topology operator installed");
      assert.equal(await admin.tryGet(RUKPAK, "Instance", RABBIT), undefined, "no dependency was installed");
      await removeOperator("plumbus-force", [TOPO]);
    },
  );
  test(
    "story: install an operator and its dependencies without updates (minimal-version, pinned) " +
      "— the dependency is the lowest satisfying version, the Input says which constraint it meets",
    async () => {
      await operator("plumbus-minimal", {
        inputClass: "minimal-version",
        catalog: { name: "community", package: TOPO, channel: "stable" },
        version: "1.17.4",
      });
      const { entries, input } = await resolvesetOf("plumbus-minimal");
      assert.deepEqual(
        entries.map((e) => [e.package, e.name, e.action]).sort(),
        [
          [RABBIT, names.rabbit280, "install"],
          [TOPO, names.topo, "install"],
        ].sort(),
      );
      // status.instances: the topology operator depends on the cluster
      // operator's Instance, meeting its olm.package and olm.gvk constraints
      const topo = input.status?.instances?.find((x) => x.name === names.topo);
      assert.ok(topo, JSON.stringify(input.status));
      const dep = topo.dependencies?.find((d) => d.name === RABBIT);
      assert.ok(dep, JSON.stringify(topo));
      assert.equal(dep.kind, "Instance");
      assert.ok(dep.meets.length >= 2, JSON.stringify(dep.meets));
      await approveWhenAsked("plumbus-minimal");
      await waitFor<Instance>(admin, RUKPAK, "Instance", TOPO, installedAt(names.topo), "topology installed");
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        RABBIT,
        installedAt(names.rabbit280),
        "cluster operator installed at 2.8.0",
      );
      const op = await waitFor<Operator>(
        admin,
        OPERATOR_API_VERSION,
        "Operator",
        "plumbus-minimal",
        (o) => cond(o, "Installed")?.status === "True",
        "Operator Installed",
      );
      // components: Input, resolveset Instance, package Instances,
      // Bundles, and the Deployments/CRDs/RBAC the bundles made
      const kinds = new Set(op!.status!.components!.refs!.map((r) => r.kind));
      for (const k of [
        "Input",
        "Instance",
        "Bundle",
        "Deployment",
        "CustomResourceDefinition",
        "ClusterRole",
        "ServiceAccount",
      ])
        assert.ok(kinds.has(k), `component kind ${k} in ${[...kinds].join(",")}`);
      assert.deepEqual(op!.status!.components!.matchLabels, { "operators.coreos.com/plumbus-minimal": "" });
      assert.equal(op!.status!.installedBundle, names.topo);
    },
  );

  test(
    "story: update the dependencies of an operator without subscribing them (minimal-version) " +
      "— a newer dependency in the catalog is not taken while the operator does not need it",
    async () => {
      await operator("plumbus-minimal", {
        inputClass: "minimal-version",
        catalog: { name: "community", package: TOPO, channel: "stable" },
      });
      await resolvesetOf("plumbus-minimal");
      await approveWhenAsked("plumbus-minimal");
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        RABBIT,
        installedAt(names.rabbit280),
        "cluster operator installed at 2.8.0",
      );
      // a new resolution still keeps the cluster operator at 2.8.0 although 2.9.0 is in its channel
      const before = (await admin.get<Input>(DEPPY_API_VERSION, "Input", "plumbus-minimal")).status?.resolveset;
      await running!.controllers.deppy!.queue.add("resolve");
      const { entries } = await resolvesetOf("plumbus-minimal");
      assert.deepEqual(entries.find((e) => e.package === RABBIT)?.name, names.rabbit280);
      assert.equal((await admin.get<Input>(DEPPY_API_VERSION, "Input", "plumbus-minimal")).status?.resolveset, before);
      const { items } = await admin.list<Input>(DEPPY_API_VERSION, "Input", { labelSelector: LABEL_GENERATED_FOR });
      assert.deepEqual(
        items.map((i) => i.metadata.name),
        [],
        "minimal-version generates no Inputs for dependencies",
      );
      await removeOperator("plumbus-minimal", [TOPO, RABBIT]);
    },
  );

  test(
    "story: install an operator and its dependencies and subscribe all " +
      "(subscription) — the newest dependency, and an Input generated for it",
    async () => {
      await operator("plumbus-sub", {
        inputClass: "subscription",
        catalog: { name: "community", package: TOPO, channel: "stable" },
      });
      const { entries } = await resolvesetOf("plumbus-sub");
      assert.deepEqual(
        entries.find((e) => e.package === RABBIT)?.name,
        names.rabbit290,
        "the newest dependency in its default channel",
      );
      await approveWhenAsked("plumbus-sub");
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        RABBIT,
        installedAt(names.rabbit290),
        "cluster operator installed at 2.9.0",
      );
      const gen = await waitFor<Input>(
        admin,
        DEPPY_API_VERSION,
        "Input",
        RABBIT,
        (o) => !!o && cond(o, "Resolved")?.status === "True",
        "an Input generated for the dependency",
      );
      assert.equal(gen!.metadata.labels?.[LABEL_GENERATED_FOR], "plumbus-sub");
      assert.equal(gen!.spec.inputClass, "subscription");
      assert.deepEqual(gen!.spec.constraints?.[0], {
        type: "olm.catalog",
        value: { name: "community", package: RABBIT, channel: "stable" },
      });
      // its resolveset keeps what is installed: nothing new to grant, approved automatically
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        resolvesetInstanceName(RABBIT),
        (o) => cond(o, "Approved")?.reason === "NoNewPermissions" && cond(o, "Installed")?.status === "True",
        "generated Input's resolveset approved without review",
      );
      await removeOperator("plumbus-sub", [TOPO, RABBIT]);
    },
  );

  test(
    "story: install a single operator and subscribe it, but not its " +
      "dependencies (minimal-version, no version) — no Input for the dependency",
    async () => {
      await operator("plumbus-one", {
        inputClass: "minimal-version",
        catalog: { name: "community", package: TOPO, channel: "stable" },
      });
      const { entries } = await resolvesetOf("plumbus-one");
      assert.deepEqual(entries.map((e) => e.package).sort(), [RABBIT, TOPO].sort());
      const { items } = await admin.list<Input>(DEPPY_API_VERSION, "Input", { labelSelector: LABEL_GENERATED_FOR });
      assert.deepEqual(
        items.map((i) => i.metadata.name),
        [],
      );
      await admin.delete(OPERATOR_API_VERSION, "Operator", "plumbus-one");
      await waitFor(admin, DEPPY_API_VERSION, "Input", "plumbus-one", (o) => o === undefined, "Input gone");
    },
  );

  test(
    "story: install a single operator bundle directly (no catalog) and force-update it to " +
      "another version with no catalog — the Instance pivots, the old Bundle is visible as Replaced",
    async () => {
      const first = {
        name: "rabbit-direct-2.8.0",
        spec: { class: "olm.bundle", refs: [`docker://${images.rabbit280}`] },
      };
      await operator("direct", { bundle: first });
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        "direct",
        installedAt("rabbit-direct-2.8.0"),
        "installed directly",
      );
      const inst = await admin.get<Instance>(RUKPAK, "Instance", "direct");
      assert.deepEqual(inst.spec.selector, { matchLabels: { "operators.coreos.com/direct": "" } });
      assert.deepEqual(inst.spec.bundle, first);
      assert.equal(
        await admin.tryGet(DEPPY_API_VERSION, "Input", "direct"),
        undefined,
        "no Input: the resolver is not involved",
      );
      await operator("direct", {
        bundle: { name: "rabbit-direct-2.9.0", spec: { class: "olm.bundle", refs: [`docker://${images.rabbit290}`] } },
      });
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        "direct",
        installedAt("rabbit-direct-2.9.0"),
        "pivoted to 2.9.0",
      );
      const op = await waitFor<Operator>(
        admin,
        OPERATOR_API_VERSION,
        "Operator",
        "direct",
        (o) =>
          cond(o, "Installed")?.status === "True" &&
          !!o?.status?.components?.refs?.some(
            (r) =>
              r.kind === "Bundle" &&
              r.name === "rabbit-direct-2.8.0" &&
              r.conditions?.some((c) => c.type === "Replaced" && c.status === "True"),
          ),
        "the older Bundle visible as Replaced",
      );
      assert.ok(op!.status!.components!.refs!.some((r) => r.kind === "Bundle" && r.name === "rabbit-direct-2.9.0"));
      // the Operator gone first (until then its controller may still act on it), then its Instance and
      // the Instance's CRD (objects are owned without blockOwnerDeletion: the garbage collector deletes
      // them after): the next story installs an older rabbitmq, to which this CRD would be an unsafe downgrade
      await removeOperator("direct", ["direct"]);
    },
  );

  test(
    "story: update options across channels and catalogs — UpdateAvailable/CrossChannelUpdateFound; an " +
      "upgrade with the same permissions is approved by Android, one with more waits and --show names them",
    async () => {
      // pinned at 2.8.0: every update needs a spec change
      await operator("rabbit", {
        inputClass: "subscription",
        catalog: { name: "community", package: RABBIT, channel: "stable" },
        version: "2.8.0",
      });
      await approveWhenAsked("rabbit");
      await waitFor<Instance>(admin, RUKPAK, "Instance", RABBIT, installedAt(names.rabbit280), "installed 2.8.0");
      const op = await waitFor<Operator>(
        admin,
        OPERATOR_API_VERSION,
        "Operator",
        "rabbit",
        (o) => cond(o, "UpdateAvailable")?.status === "True" && (o?.status?.updates?.length ?? 0) === 3,
        "UpdateAvailable",
      );
      assert.equal(cond(op, "UpdateAvailable")?.reason, "CrossChannelUpdateFound");
      assert.equal(
        cond(op, "UpdateAvailable")?.message,
        "updates have been found that require a change in the operator spec to apply",
      );
      assert.deepEqual(
        op!.status!.updates!.map((u) => [u.catalogSourceRef.name, u.channel, u.options]),
        [
          ["community", "stable", [names.rabbit290]],
          ["community", "candidate", [names.rabbit290]],
          ["extra", "stable", [names.rabbit290]],
        ],
      );
      assert.equal(op!.status!.installedVersion, "2.8.0");
      // unpinned: the head of stable, 2.9.0, needs nothing 2.8.0 did not have: approved without review
      await operator("rabbit", {
        inputClass: "subscription",
        catalog: { name: "community", package: RABBIT, channel: "stable" },
      });
      await waitFor<Instance>(admin, RUKPAK, "Instance", RABBIT, installedAt(names.rabbit290), "upgraded to 2.9.0");
      assert.equal(
        cond(await admin.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName("rabbit")), "Approved")?.reason,
        "NoNewPermissions",
      );
      // the extra catalog's 2.10.0 (another image) also wants to delete nodes: Android waits
      await operator("rabbit", {
        inputClass: "force",
        catalog: { name: "extra", package: RABBIT, channel: "stable" },
        version: "2.10.0",
      });
      const rsName = resolvesetInstanceName("rabbit");
      const waiting = await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        rsName,
        (o) => cond(o, "Approved")?.reason === "NewPermissions",
        "Android waits",
      );
      assert.ok(
        waiting!.status?.permissions?.some((p) => p.includes("delete nodes cluster-wide")),
        JSON.stringify(waiting!.status?.permissions),
      );
      assert.ok(
        waiting!.status!.permissions!.every((p) => p.includes("delete nodes")),
        `only the new permission is listed: ${waiting!.status!.permissions!.join("; ")}`,
      );
      // kubectl instance approve --show prints exactly what is new, then approves (with the user's own credentials)
      // asynchronously: the admission webhooks are served by this very process
      const { stdout: out } = await execFileAsync(
        process.execPath,
        [
          join(import.meta.dirname, "..", "..", "bin", "opcat"),
          "instance",
          "approve",
          "--show",
          rsName,
          "--kubeconfig",
          kubeconfig,
          "--context",
          "admin",
        ],
        { encoding: "utf8" },
      );
      assert.deepEqual(out.trim().split("\n"), [
        ...waiting!.status!.permissions!.map((p) => `new permission: ${p}`),
        `instance.rukpak.io/${rsName} approved (generation ${waiting!.metadata.generation})`,
      ]);
      const approved = await admin.get<Instance>(RUKPAK, "Instance", rsName);
      assert.equal(cond(approved, "Approved")?.reason, "ApprovedByUser");
      // (installing it then stops at RukPak's CRD upgrade check: 2.10.0
      // adds a required field to the RabbitmqCluster CRD)
    },
  );

  test("story: determine what would be installed (dry-run) — a resolveset Bundle, no Instance", async () => {
    await operator("dry", {
      inputClass: "dry-run",
      catalog: { name: "community", package: TOPO, channel: "stable" },
      version: "1.17.4",
    });
    const { entries, input } = await resolvesetOf("dry");
    assert.equal(cond(input, "Resolved")?.reason, "DryRun");
    assert.deepEqual(entries.map((e) => e.package).sort(), [RABBIT, TOPO].sort());
    assert.ok(await admin.tryGet(RUKPAK, "Bundle", input.status!.resolveset!), "the resolveset Bundle exists");
    assert.equal(
      await admin.tryGet(RUKPAK, "Instance", resolvesetInstanceName("dry")),
      undefined,
      "no resolveset Instance",
    );
    assert.equal(await admin.tryGet(RUKPAK, "Instance", TOPO), undefined, "nothing installed");
    await operator("dry-next", { inputClass: "dry-run-next", catalog: { name: "community", package: KUBEGREEN } });
    const next = await resolvesetOf("dry-next");
    assert.deepEqual(
      next.entries.map((e) => e.name),
      [names.kubegreen],
    );
    assert.equal(await admin.tryGet(RUKPAK, "Instance", resolvesetInstanceName("dry-next")), undefined);
    // minOCPVersion cannot be checked on a cluster without a ClusterVersion: said on the Input
    assert.equal(cond(next.input, "OpenShiftVersionChecked")?.reason, "NoClusterVersion");
    for (const n of ["dry", "dry-next"]) await admin.delete(OPERATOR_API_VERSION, "Operator", n);
  });

  test(
    "story: unrelated operators are not blocked, and why " + "an update is blocked is told by Events and status",
    async () => {
      // blocked: a version nothing in the catalogs has
      await operator("blocked", {
        inputClass: "subscription",
        catalog: { name: "community", package: CATFACTS },
        version: "9.9.9",
      });
      await operator("unblocked", { inputClass: "subscription", catalog: { name: "community", package: KUBEGREEN } });
      const b = await waitFor<Input>(
        admin,
        DEPPY_API_VERSION,
        "Input",
        "blocked",
        (o) => cond(o, "ResolutionFailed")?.status === "True",
        "blocked fails",
      );
      assert.match(cond(b, "ResolutionFailed")!.message, /9\.9\.9/);
      await resolvesetOf("unblocked");
      await approveWhenAsked("unblocked");
      await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        KUBEGREEN,
        installedAt(names.kubegreen),
        "the unrelated operator is installed",
      );
      assert.match((await eventFor("blocked", "ResolutionFailed")).message, /9\.9\.9/);
      // an installed operator held below its channel head by its own
      // version range: UpdateBlocked with the resolver's reason
      await operator("rabbit", {
        inputClass: "subscription",
        catalog: { name: "community", package: RABBIT, channel: "stable" },
        version: "<2.9.0",
      });
      await approveWhenAsked("rabbit");
      await waitFor<Instance>(admin, RUKPAK, "Instance", RABBIT, installedAt(names.rabbit280), "installed 2.8.0");
      const held = await waitFor<Input>(
        admin,
        DEPPY_API_VERSION,
        "Input",
        "rabbit",
        (o) => cond(o, "UpdateBlocked")?.status === "True",
        "UpdateBlocked",
      );
      assert.match(
        cond(held, "UpdateBlocked")!.message,
        new RegExp(
          `${RABBIT} stays at ${names.rabbit280.replace(/\./g, "\\.")} although ` +
            `${names.rabbit290.replace(/\./g, "\\.")} is in channel stable: `,
        ),
      );
      assert.match((await eventFor("rabbit", "UpdateBlocked")).message, /stays at/);
      await admin.delete(OPERATOR_API_VERSION, "Operator", "blocked");
      await removeOperator("unblocked", [KUBEGREEN]);
      await removeOperator("rabbit", [RABBIT]);
    },
  );

  test(
    "story: change the properties of an installed bundle — an edited olm.properties " +
      "annotation changes what the resolver sees; unsatisfied dependencies are explained",
    async () => {
      await operator("edited", { inputClass: "subscription", catalog: { name: "community", package: CATFACTS } });
      await approveWhenAsked("edited");
      await waitFor<Instance>(admin, RUKPAK, "Instance", CATFACTS, installedAt(names.catfacts), "installed");
      const bundle = await admin.get<Bundle>(RUKPAK, "Bundle", names.catfacts);
      const props = bundle.metadata.annotations?.["olm.properties"] ?? "";
      assert.match(props, /\{"olm\.package":\{"packageName":"cat-facts-operator"/);
      // the user adds a requirement nothing provides
      await admin.mergePatch(RUKPAK, "Bundle", names.catfacts, {
        metadata: {
          annotations: {
            "olm.properties":
              `${props}\n` + `{"olm.gvk.required":{"group":"example.com","kind":"Grumbo","version":"v1alpha1"}}`,
          },
        },
      });
      const failed = await waitFor<Input>(
        admin,
        DEPPY_API_VERSION,
        "Input",
        "edited",
        (o) => cond(o, "ResolutionFailed")?.status === "True",
        "the edit is seen",
      );
      assert.match(cond(failed, "ResolutionFailed")!.message, /example\.com\/v1alpha1\/Grumbo|Grumbo/);
      // undo the edit: resolved again
      await admin.mergePatch(RUKPAK, "Bundle", names.catfacts, {
        metadata: { annotations: { "olm.properties": props } },
      });
      await waitFor<Input>(
        admin,
        DEPPY_API_VERSION,
        "Input",
        "edited",
        (o) => cond(o, "ResolutionFailed")?.status === "False",
        "resolved again",
      );
      await removeOperator("edited", [CATFACTS]);
    },
  );

  test(
    "story: a non-administrator installs namespace-local " +
      "content with sufficient permission (UserPermission approves)",
    async () => {
      const ns = "team-a";
      if (!(await admin.tryGet("v1", "Namespace", ns)))
        await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "test-deppy-carol" },
        rules: [
          {
            apiGroups: ["rukpak.io"],
            resources: ["instances", "bundles"],
            verbs: ["get", "list", "watch", "create", "update", "patch"],
          },
          { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "list", "use"] },
        ],
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "test-deppy-carol" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-deppy-carol" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "carol" }],
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "configmaps", namespace: ns },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["*"] }],
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "carol-configmaps", namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmaps" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "carol" }],
      } as unknown as KubeObject);
      const carol = clientAs(kubeconfig, "carol");
      try {
        await carol.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "chart", namespace: ns },
          data: {
            "settings.yaml":
              `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team-a-settings\n` +
              `  namespace: ${ns}\ndata:\n  greeting: hello\n`,
          },
        } as KubeObject);
        await carol.create({
          apiVersion: RUKPAK,
          kind: "Instance",
          metadata: { name: "team-a-settings" },
          spec: {
            selector: { matchLabels: { app: "team-a-settings" } },
            bundle: {
              name: "team-a-settings-1",
              spec: {
                class: "plain",
                refs: ["file://content"],
                volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: "chart", namespace: ns } }],
              },
            },
          },
        } as Instance);
      } finally {
        carol.close();
      }
      const inst = await waitFor<Instance>(
        admin,
        RUKPAK,
        "Instance",
        "team-a-settings",
        (o) => cond(o, "Installed")?.status === "True",
        "installed",
      );
      assert.equal(cond(inst, "Approved")?.reason, "UserPermission");
      assert.match(cond(inst, "Approved")!.message, /^carol may create every object/);
      const made = await admin.get<KubeObject & { data: Record<string, string> }>(
        "v1",
        "ConfigMap",
        "team-a-settings",
        ns,
      );
      assert.equal(made.data.greeting, "hello");
      assert.equal(made.metadata.labels?.[LABEL_INSTANCE], "team-a-settings");
      await admin.delete(RUKPAK, "Instance", "team-a-settings");
    },
  );

  test(
    "attack 5: a Bundle a tenant made under a resolveset entry's name is not adopted by " + "an admin's install",
    async () => {
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "test-deppy-squatter" },
        rules: [
          { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get", "list", "create"] },
          { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "use"] },
        ],
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "test-deppy-squatter" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-deppy-squatter" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" }],
      } as unknown as KubeObject);
      // the name, class and image the resolveset will ask for, plus a mount of the tenant's choosing
      const squat = names.kubegreen;
      const bob = clientAs(kubeconfig, "bob");
      try {
        await bob.create({
          apiVersion: RUKPAK,
          kind: "Bundle",
          metadata: { name: squat, labels: { [LABEL_PACKAGE]: KUBEGREEN } },
          spec: {
            class: "olm.bundle",
            refs: [`docker://${images.kubegreen}`],
            volumeMounts: [{ mountPath: "/extra", configMap: { name: "anything", namespace: "default" } }],
          },
        } as unknown as KubeObject);
      } finally {
        bob.close();
      }
      await operator("squatted", { catalog: { name: "community", package: KUBEGREEN } });
      await approveWhenAsked("squatted");
      const inst = await waitFor<Instance>(admin, RUKPAK, "Instance", KUBEGREEN, installedAt(squat), "installed");
      assert.notEqual(inst?.spec.bundle.name, squat, "the tenant's Bundle is not the one installed");
      const theirs = await admin.get<Bundle>(RUKPAK, "Bundle", squat);
      assert.deepEqual(
        (theirs.metadata.ownerReferences ?? []).map((o) => o.kind),
        [],
        "nothing of the install took the tenant's Bundle over",
      );
      await removeOperator("squatted", [KUBEGREEN]);
      await admin.delete(RUKPAK, "Bundle", squat);
      for (const kind of ["ClusterRoleBinding", "ClusterRole"])
        await admin.delete("rbac.authorization.k8s.io/v1", kind, "test-deppy-squatter");
    },
  );

  test("attack: an Operator's spec.bundle is judged as the Operator's creator, never as the controllers", async () => {
    const ns = "atk-operator";
    if (!(await admin.tryGet("v1", "Namespace", ns)))
      await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "evil", namespace: ns },
      data: {
        "crb.yaml":
          "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: atk-op-carol\n" +
          "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n" +
          "subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: carol\n",
      },
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-atk-operator" },
      rules: [
        { apiGroups: ["operators.coreos.com"], resources: ["operators"], verbs: ["get", "create"] },
        { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "use"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
      ],
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "test-atk-operator" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-atk-operator" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "carol" }],
    } as unknown as KubeObject);
    const carol = clientAs(kubeconfig, "carol");
    try {
      await carol.create({
        apiVersion: OPERATOR_API_VERSION,
        kind: "Operator",
        metadata: { name: "atk-op" },
        spec: {
          bundle: {
            name: "atk-op-1",
            spec: {
              class: "plain",
              refs: ["file://content"],
              volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: "evil", namespace: ns } }],
            },
          },
        },
      } as unknown as KubeObject);
    } finally {
      carol.close();
    }
    const inst = await waitFor<Instance>(
      admin,
      RUKPAK,
      "Instance",
      "atk-op",
      (o) => cond(o, "Approved")?.reason === "InsufficientPermissions",
      "InsufficientPermissions",
    );
    assert.match(cond(inst, "Approved")?.message ?? "", /^carol may not make ClusterRoleBinding "atk-op-carol"/);
    assert.equal(await admin.tryGet("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "atk-op-carol"), undefined);
    await admin.delete(OPERATOR_API_VERSION, "Operator", "atk-op");
    await waitFor(admin, RUKPAK, "Instance", "atk-op", (o) => o === undefined, "Instance gone");
    for (const kind of ["ClusterRoleBinding", "ClusterRole"])
      await admin.delete("rbac.authorization.k8s.io/v1", kind, "test-atk-operator");
  });

  test(
    "fault: a catalog image replaced by an invalid one " + "— the old content keeps serving, the status says why",
    async () => {
      const bad = join(tmp, "bad-catalog");
      mkdirSync(bad, { recursive: true });
      writeFileSync(
        join(bad, "catalog.json"),
        '{"schema":"olm.package","name":"broken","defaultChannel":"missing"}\n{"schema":"olm.bundle","name":"x"\n',
      );
      await pushImage(buildCatalogImage(bad), `${registry.host}/catalogs/extra:v1`, { useHttp: true });
      const before = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "extra");
      // a spec change makes the controller poll now
      await admin.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "extra", {
        spec: { source: { image: { pollIntervalMinutes: 60 } } },
      });
      const cc = await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        "extra",
        (o) => cond(o, "Progressing")?.reason === "Retrying",
        "the bad image is reported",
      );
      assert.match(cond(cc, "Progressing")!.message, /not a valid catalog; the previous content stays served/);
      assert.equal(cond(cc, "Serving")?.status, "True");
      assert.equal(cc!.status?.resolvedSource?.image?.ref, before.status?.resolvedSource?.image?.ref);
      const all = await (await fetch(`${cc!.status!.urls!.base}/api/v1/all`)).text();
      assert.match(all, new RegExp(names.rabbitPerm.replace(/\./g, "\\.")));
    },
  );

  test("fault: the controllers restart in the middle of a resolution and finish the install", async () => {
    await operator("restart", { inputClass: "subscription", catalog: { name: "community", package: CATFACTS } });
    await waitFor<Input>(admin, DEPPY_API_VERSION, "Input", "restart", (o) => !!o, "Input created");
    await running!.stop();
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true },
      namespace: NS,
      log,
    });
    await approveWhenAsked("restart");
    await waitFor<Instance>(
      admin,
      RUKPAK,
      "Instance",
      CATFACTS,
      installedAt(names.catfacts),
      "installed after the restart",
    );
    await removeOperator("restart", [CATFACTS]);
  });

  test(
    "attack 11: an Input whose CEL rule never ends runs out of its budget in the worker, while admission " +
      "and the other controllers keep answering",
    async () => {
      await running!.stop();
      running = await runControllers({
        kubeconfig,
        context: "controller",
        stateDir: join(tmp, "state"),
        pull: { useHttp: true },
        namespace: NS,
        log,
        resolutionBudgetMs: 5_000,
      });
      try {
        const list = `[${Array.from({ length: 300 }, (_, i) => i).join(",")}]`;
        await admin.apply({
          apiVersion: DEPPY_API_VERSION,
          kind: "Input",
          metadata: { name: "hostile" },
          spec: {
            constraints: [
              {
                type: "olm.cel",
                value: { rule: `${list}.all(a, ${list}.all(b, ${list}.all(c, a + b + c >= 0)))` },
              },
            ],
          },
        } as unknown as KubeObject);
        // the resolution has started (a wait, not a measurement)
        while (!running.controllers.deppy!.resolving) await new Promise((r) => setTimeout(r, 20));
        // admission (served on the controllers' event loop) answers meanwhile
        await admin.create({
          apiVersion: RUKPAK,
          kind: "Bundle",
          metadata: { name: "during-a-long-resolution" },
          spec: { class: "olm.bundle", refs: [`docker://${images.kubegreen}`] },
        } as unknown as KubeObject);
        assert.ok(running.controllers.deppy!.resolving, "the hostile resolution was still running");
        const input = await waitFor<Input>(
          admin,
          DEPPY_API_VERSION,
          "Input",
          "hostile",
          (o) => cond(o, "ResolutionFailed")?.reason === "ResolutionBudgetExceeded",
          "ResolutionBudgetExceeded",
        );
        assert.match(cond(input, "ResolutionFailed")?.message ?? "", /more than its budget of 5s/);
      } finally {
        await admin.delete(DEPPY_API_VERSION, "Input", "hostile");
        await admin.delete(RUKPAK, "Bundle", "during-a-long-resolution");
        await running!.stop();
        running = await runControllers({
          kubeconfig,
          context: "controller",
          stateDir: join(tmp, "state"),
          pull: { useHttp: true },
          namespace: NS,
          log,
        });
      }
    },
  );

  test("fault: two controllers with leader election — only the leader resolves", async () => {
    await running!.stop();
    // a stopped controller leaves its webhook configurations (they fail closed): an admin replacing
    // the controllers removes the old registration
    const unregister = async (name: string) => {
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
        await admin.delete("admissionregistration.k8s.io/v1", kind, name);
    };
    await unregister("opcat-rukpak");
    const lease = "kube-system";
    const a = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state-a"),
      pull: { useHttp: true },
      namespace: NS,
      log,
      leaderElectionNamespace: lease,
      identity: "a",
      webhookName: "opcat-a",
    });
    const b = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state-b"),
      pull: { useHttp: true },
      namespace: NS,
      log,
      leaderElectionNamespace: lease,
      identity: "b",
      webhookName: "opcat-b",
    });
    try {
      await operator("leader", { inputClass: "dry-run", catalog: { name: "community", package: KUBEGREEN } });
      await resolvesetOf("leader");
      const ra = a.controllers.deppy!.resolutions;
      const rb = b.controllers.deppy!.resolutions;
      assert.ok(ra > 0 !== rb > 0, `exactly one controller resolved (a: ${ra}, b: ${rb})`);
      await admin.delete(OPERATOR_API_VERSION, "Operator", "leader");
    } finally {
      await a.stop();
      await b.stop();
      await unregister("opcat-a");
      await unregister("opcat-b");
      running = await runControllers({
        kubeconfig,
        context: "controller",
        stateDir: join(tmp, "state"),
        pull: { useHttp: true },
        namespace: NS,
        log,
      });
    }
  });
});
