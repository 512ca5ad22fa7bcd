/**
 * The trust model's invariants over random sequences of catalog publications and user actions, on
 * the Operator API, Deppy and Android approval (docs/security.md, "trust decisions"): the companion
 * of invariants.test.ts for what comes from catalogs. A real docker-registry on 127.0.0.1 holds the
 * bundle and catalog images opcat builds; a ClusterCatalog serves them; an admin's Operator follows
 * the channel's head, so every publication is an upgrade that Android either approves by itself (no
 * new permission) or leaves waiting for a person. Nobody approves anything after the first install.
 *
 * Each publication is a new version of package invd-op (skipping every earlier one, so the head is
 * always the candidate) with one payload: the same content as the first (Android's to approve), or
 * an escalation an earlier Android let through — the same ClusterRole bound to `system:authenticated`
 * (attack 3), a ClusterRole labelled `aggregate-to-view`, the operator's role turned into an
 * aggregation of the bootstrap roles (attack 4), a mutating webhook on Secrets (attack 7), or one more
 * rule. Between publications: the tenant edits the installed entry Bundle to point at the newest
 * image (attack 2), the approver writes the installed Instance's `status.activeBundle` (attack 2
 * through status), the tenant edits owner references and labels of what the controllers made
 * (attack 1), and the controllers restart. After every step, once the controllers are quiet, it
 * checks with the API server's own answers:
 * - nobody gained a right: the tenant, the approver, an ordinary user and the operator's own
 *   ServiceAccount hold (SelfSubjectRulesReview in four namespaces, SelfSubjectAccessReview of a few
 *   cluster-wide rights) nothing beyond what they held after the first, approved install;
 * - nothing of an escalating payload exists (its bindings, roles, webhook configuration), and the
 *   package's Instance never says it installed an escalating version.
 * Seeded (OPCAT_INVARIANT_DEPPY_SEED, a comma-separated list, default 3,5) and bounded in steps per
 * seed (OPCAT_INVARIANT_DEPPY_STEPS, default 14); a failure prints the seed, the step and the actions
 * so far.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION as RUKPAK, type Bundle, type Instance } from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { clusterManifests } from "../../src/cluster/manifests.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import { DEPPY_API_VERSION } from "../../src/cluster/deppy/api.js";
import { resolvesetInstanceName } from "../../src/cluster/deppy/resolvesetwriter.js";
import { OPERATOR_API_VERSION, type Operator } from "../../src/cluster/operators/api.js";
import { OLM_API_VERSION, type ClusterExtension } from "../../src/cluster/olm/api.js";
import { instanceNameFor } from "../../src/cluster/olm/extension.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import {
  bindClusterRole,
  clientAs,
  clusterKubeconfig,
  cond,
  controllerLog,
  grantClusterRole,
  waitFor,
} from "./harness.js";
import { attempt, Explorer, quiet, type Rights, rightsOf } from "./invariantkit.js";

const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry");
const skip = cluster.skip || missingTools;
const SEEDS = (process.env.OPCAT_INVARIANT_DEPPY_SEED ?? "3,5").split(",").map(Number);
const SEED = SEEDS.join(",");
const STEPS = Number(process.env.OPCAT_INVARIANT_DEPPY_STEPS ?? 14);
const PKG = "invd-op";
const OP = "invd";
const INSTALL_NS = `${PKG}-system`;
const TEAM = "invd-team";
const SA = `system:serviceaccount:${INSTALL_NS}:${PKG}`;
const RBAC = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP = "rbac.authorization.k8s.io";
const WEBHOOK = "m.invd.example.com";
/** A second package, harmless, that an admin's ClusterExtension installs. */
const CE_PKG = "invd-ce";
const ADMIN_CE = "invd-admin-ce";

/** What a published version ships beside the operator's first content. */
type Payload = "same" | "subjects" | "aggregate-label" | "aggregation-rule" | "webhook" | "more-rules";
const ESCALATIONS: Payload[] = ["subjects", "aggregate-label", "aggregation-rule", "webhook", "more-rules"];

type Json = Record<string, unknown>;

/** A CSV of `pkg` at `version`: one Deployment running as ServiceAccount `pkg`, with `perms` as its RBAC. */
function csvOf(pkg: string, version: string, perms: Json, extra: Json = {}): Json {
  return {
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: `${pkg}.v${version}` },
    spec: {
      version,
      displayName: "invariant operator",
      installModes: ["AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"].map((type) => ({
        type,
        supported: type === "AllNamespaces",
      })),
      install: {
        strategy: "deployment",
        spec: {
          deployments: [
            {
              name: pkg,
              spec: {
                selector: { matchLabels: { app: pkg } },
                template: {
                  metadata: { labels: { app: pkg } },
                  spec: { serviceAccountName: pkg, containers: [{ name: "op", image: "127.0.0.1:1/none:1" }] },
                },
              },
            },
          ],
          ...perms,
        },
      },
      ...extra,
    },
  };
}

/** The objects of one version of the package: its CSV and the other manifests. */
function manifestsOf(version: string, payload: Payload): Json[] {
  const rules: Json[] = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];
  if (payload === "more-rules") rules.push({ apiGroups: [""], resources: ["nodes"], verbs: ["list"] });
  const webhook: Json = {
    webhookdefinitions: [
      {
        type: "MutatingAdmissionWebhook",
        generateName: WEBHOOK,
        deploymentName: PKG,
        containerPort: 8443,
        webhookPath: "/mutate",
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy: "Ignore",
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["secrets"] }],
      },
    ],
  };
  const csv = csvOf(
    PKG,
    version,
    { clusterPermissions: [{ serviceAccountName: PKG, rules }] },
    payload === "webhook" ? webhook : {},
  );
  const reader: Json =
    payload === "aggregation-rule"
      ? {
          apiVersion: RBAC,
          kind: "ClusterRole",
          metadata: { name: "invd-reader" },
          aggregationRule: {
            clusterRoleSelectors: [{ matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } }],
          },
          rules: [],
        }
      : {
          apiVersion: RBAC,
          kind: "ClusterRole",
          metadata: { name: "invd-reader" },
          rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
        };
  const binding = (name: string, subject: Json): Json => ({
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "invd-reader" },
    subjects: [subject],
  });
  const out = [csv, reader, binding("invd-reader-op", { kind: "ServiceAccount", name: PKG, namespace: INSTALL_NS })];
  if (payload === "subjects")
    out.push(binding("invd-reader-all", { kind: "Group", name: "system:authenticated", apiGroup: RBAC_GROUP }));
  if (payload === "aggregate-label")
    out.push({
      apiVersion: RBAC,
      kind: "ClusterRole",
      metadata: { name: "invd-widen", labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }],
    });
  return out;
}

/** A ClusterExtension of `pkg` installed into `namespace`. */
const extension = (name: string, namespace: string, pkg: string): ClusterExtension =>
  ({
    apiVersion: OLM_API_VERSION,
    kind: "ClusterExtension",
    metadata: { name },
    spec: { namespace, source: { sourceType: "Catalog", catalog: { packageName: pkg } } },
  }) as unknown as ClusterExtension;

/** Writes a bundle directory (registry+v1) of `pkg` with `objects`. */
function writeBundle(dir: string, pkg: string, objects: Json[]): void {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  for (const [i, o] of objects.entries())
    writeFileSync(join(dir, "manifests", `${i}-${String(o.kind).toLowerCase()}.yaml`), toYaml(o));
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    toYaml({
      annotations: {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": pkg,
        "operators.operatorframework.io.bundle.channels.v1": "stable",
        "operators.operatorframework.io.bundle.channel.default.v1": "stable",
      },
    }),
  );
}

const PROBES = [
  { verb: "get", resource: "secrets", namespace: "kube-system" },
  { verb: "list", resource: "secrets", namespace: TEAM },
  { verb: "list", resource: "nodes" },
  { verb: "impersonate", resource: "users" },
  { verb: "delete", resource: "namespaces" },
];
/** What `user` may do in the namespaces the checker watches, and cluster-wide. */
const rights = (user: KubeClient) => rightsOf(user, [TEAM, INSTALL_NS, "kube-system", "default"], PROBES);

describe("trust invariants over catalog publications and Android (real API server)", {
  skip,
  concurrency: false,
}, () => {
  let admin: KubeClient;
  let carol: KubeClient;
  let bob: KubeClient;
  let alice: KubeClient;
  let operatorSa: KubeClient;
  let registry: RunningRegistry;
  let running: RunningControllers | undefined;
  let tmp = "";
  let kubeconfig = "";
  /** The catalog blobs of the ClusterExtension's package (one version, in every catalog image). */
  let ceFbc = "";
  /** Published versions, in order: bundle name, image, payload, and its catalog blobs. */
  const published: { name: string; image: string; payload: Payload; fbc: string }[] = [];
  const start = async () => {
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true },
      log: controllerLog("invariant-deppy-controllers"),
    });
  };

  /** Publishes the next version with `payload`: its bundle image, a catalog image, the ClusterCatalog re-pointed. */
  async function publish(payload: Payload): Promise<string> {
    const version = `1.0.${published.length}`;
    const name = `${PKG}.v${version}`;
    const dir = join(tmp, "bundles", version);
    writeBundle(dir, PKG, manifestsOf(version, payload));
    const image = `${registry.host}/${PKG}-bundle:v${version}`;
    await pushImage(buildBundleImage(dir), image, { useHttp: true });
    published.push({
      name,
      image,
      payload,
      fbc: formatCatalog(renderBundleDirectory(dir, { image }), "json"),
    });
    // every version replaces the one before and skips all earlier ones: the head is always the candidate
    const entries = published.map((p, i) => ({
      name: p.name,
      ...(i > 0 ? { replaces: published[i - 1]!.name } : {}),
      ...(i > 1 ? { skips: published.slice(0, i - 1).map((x) => x.name) } : {}),
    }));
    const catalog = join(tmp, "catalogs", version);
    mkdirSync(catalog, { recursive: true });
    const head = [
      { schema: "olm.package", name: PKG, defaultChannel: "stable" },
      { schema: "olm.channel", name: "stable", package: PKG, entries },
    ];
    writeFileSync(
      join(catalog, `${PKG}.json`),
      head.map((b) => `${JSON.stringify(b)}\n`).join("") + published.map((p) => p.fbc).join(""),
    );
    writeFileSync(join(catalog, `${CE_PKG}.json`), ceFbc);
    const ref = `${registry.host}/catalogs/invd:v${version}`;
    await pushImage(buildCatalogImage(catalog), ref, { useHttp: true });
    await admin.apply({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name: OP },
      spec: { source: { type: "Image", image: { ref } } },
    } as ClusterCatalog);
    return name;
  }

  /** The Deppy and RukPak objects of this file (names and labels carry `invd`). */
  async function ours(): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    for (const [apiVersion, kind] of [
      [OPERATOR_API_VERSION, "Operator"],
      [DEPPY_API_VERSION, "Input"],
      [RUKPAK, "Instance"],
      [RUKPAK, "Bundle"],
      [CATALOG_API_VERSION, "ClusterCatalog"],
      [OLM_API_VERSION, "ClusterExtension"],
    ] as const)
      for (const o of (await admin.list(apiVersion, kind)).items)
        if (o.metadata.name.includes("invd") || JSON.stringify(o.metadata.labels ?? {}).includes("invd")) out.push(o);
    return out;
  }

  /**
   * Waits (bounded) until the ClusterCatalog serves the newest image, every object of ours has its
   * generation observed, and nothing changed for 2 s.
   */
  async function settle(): Promise<void> {
    await quiet(
      async () => {
        const objects = await ours();
        const busy = objects.some((o) => {
          if (o.metadata.deletionTimestamp) return false;
          type Observed = { observedGeneration?: number; conditions?: { observedGeneration?: number }[] };
          const s = (o as { status?: Observed }).status;
          const seen = s?.observedGeneration ?? s?.conditions?.[0]?.observedGeneration;
          return seen !== undefined && seen !== o.metadata.generation;
        });
        return {
          busy,
          signature: objects.map((o) => `${o.kind}/${o.metadata.name}@${o.metadata.resourceVersion}`).join(","),
        };
      },
      2_000,
      60_000,
    );
  }

  before(async () => {
    if (skip || cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    carol = clientAs(kubeconfig, "carol");
    bob = clientAs(kubeconfig, "bob");
    alice = clientAs(kubeconfig, "alice");
    operatorSa = admin.impersonating({
      username: SA,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${INSTALL_NS}`, "system:authenticated"],
    });
    tmp = mkdtempSync(join(tmpdir(), "opcat-invd-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    await start();
    // the roles opcat ships (rukpak-approver among them)
    for (const o of clusterManifests({ local: true }).filter((x) => x.kind === "ClusterRole")) await admin.apply(o);
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: TEAM } } as KubeObject);
    // the tenant: Instances and Bundles (the documented tenant rights), reading the Operator API
    await grantClusterRole(admin, "invd-tenant", { user: "carol" }, [
      {
        apiGroups: ["rukpak.io"],
        resources: ["instances", "bundles"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      { apiGroups: ["deppy.io", "operators.coreos.com"], resources: ["inputs", "operators"], verbs: ["get", "list"] },
      // ClusterExtensions, which install as their author
      {
        apiGroups: ["olm.operatorframework.io"],
        resources: ["clusterextensions"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
    ]);
    // `use` on every class (the documented rukpak-class-user): olm.bundle, the class of the entry Bundles
    await bindClusterRole(admin, "invd-tenant-classes", "rukpak-class-user", { user: "carol" });
    // the approver, with the documented role, and `view` of the team's namespace (what aggregation would widen)
    await bindClusterRole(admin, "invd-approver", "rukpak-approver", { user: "alice" });
    await bindClusterRole(admin, "invd-approver-view", "view", { user: "alice" }, TEAM);
    const ceDir = join(tmp, "bundles", CE_PKG);
    const ceRules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];
    writeBundle(ceDir, CE_PKG, [
      csvOf(CE_PKG, "1.0.0", { permissions: [{ serviceAccountName: CE_PKG, rules: ceRules }] }),
    ]);
    const ceImage = `${registry.host}/${CE_PKG}-bundle:v1.0.0`;
    await pushImage(buildBundleImage(ceDir), ceImage, { useHttp: true });
    ceFbc =
      [
        { schema: "olm.package", name: CE_PKG, defaultChannel: "stable" },
        { schema: "olm.channel", name: "stable", package: CE_PKG, entries: [{ name: `${CE_PKG}.v1.0.0` }] },
      ]
        .map((b) => `${JSON.stringify(b)}\n`)
        .join("") + formatCatalog(renderBundleDirectory(ceDir, { image: ceImage }), "json");
    await publish("same");
    await admin.apply({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: OP },
      spec: { inputClass: "subscription", catalog: { name: OP, package: PKG, channel: "stable" } },
    } as Operator);
    // the first install is a person's decision (Android asks for it): the admin approves it
    const rs = resolvesetInstanceName(OP);
    const instance = (name: string, holds: (o: Instance | undefined) => boolean, what: string) =>
      waitFor<Instance>(admin, RUKPAK, "Instance", name, holds, what);
    await instance(rs, (o) => cond(o, "Approved")?.reason === "NewPermissions", "first install waits for approval");
    await approveInstance(admin, rs);
    await instance(PKG, (o) => cond(o, "Installed")?.status === "True", "first install installed");
    // an admin's ClusterExtension of the other package: what it installed must stay while it is there
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "invd-admin" } } as KubeObject);
    await admin.apply(extension(ADMIN_CE, "invd-admin", CE_PKG));
    await waitFor<ClusterExtension>(
      admin,
      OLM_API_VERSION,
      "ClusterExtension",
      ADMIN_CE,
      (o) => cond(o, "Installed")?.status === "True",
      "the admin's ClusterExtension installed",
    );
  });

  after(async () => {
    try {
      for (const e of (await admin.list(OLM_API_VERSION, "ClusterExtension")).items)
        if (e.metadata.name.startsWith("invd-"))
          await admin.delete(OLM_API_VERSION, "ClusterExtension", e.metadata.name).catch(() => false);
      await admin?.delete(OPERATOR_API_VERSION, "Operator", OP, undefined, "Foreground").catch(() => false);
      await waitFor(admin, RUKPAK, "Instance", PKG, (o) => o === undefined, "package Instance gone").catch(() => {});
      await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", OP).catch(() => false);
      for (const [kind, name] of [
        ["ClusterRoleBinding", "invd-approver"],
        ["ClusterRoleBinding", "invd-tenant-classes"],
        ["ClusterRoleBinding", "invd-tenant"],
        ["ClusterRole", "invd-tenant"],
      ])
        await admin?.delete(RBAC, kind, name).catch(() => false);
    } finally {
      await running?.stop();
      await registry?.stop();
      for (const c of [carol, bob, alice, admin]) c?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  test(`seeds ${SEED}, ${STEPS} steps each: Android approves nothing that grants more`, async () => {
    const x = new Explorer({
      seedVar: "OPCAT_INVARIANT_DEPPY_SEED",
      stepsVar: "OPCAT_INVARIANT_DEPPY_STEPS",
      file: "test/cluster/invariants-deppy.test.ts",
      seeds: SEEDS,
      steps: STEPS,
    });
    const { pick, fail } = x;
    await settle();
    const who = { carol, bob, alice, [SA]: operatorSa } as Record<string, KubeClient>;
    const before: Record<string, Rights> = {};
    for (const [k, c] of Object.entries(who)) before[k] = await rights(c);
    const installedSeen = new Set<string>();
    const latestEscalation = () => [...published].reverse().find((p) => p.payload !== "same");
    const installedBundleName = async () => (await admin.tryGet<Instance>(RUKPAK, "Instance", PKG))?.spec.bundle.name;

    const repoint = async (): Promise<string> => {
      const name = await installedBundleName();
      const esc = latestEscalation();
      // the escalation's own entry Bundle (made by the controllers for the waiting upgrade) names its digest
      const escBundle = esc
        ? (await admin.list<Bundle>(RUKPAK, "Bundle")).items.find((b) => b.metadata.name.startsWith(esc.name))
        : undefined;
      if (!name || !esc || !escBundle) return "carol finds nothing to re-point";
      const r = await attempt(carol.mergePatch(RUKPAK, "Bundle", name, { spec: { refs: escBundle.spec.refs } }));
      return `carol re-points the installed Bundle ${name} at ${esc.name}: ${r}`;
    };
    const actions: Record<string, () => Promise<string>> = {
      publish: async () => {
        const payload = pick<Payload>(["same", "same", "same", ...ESCALATIONS]);
        return `the catalog publishes ${await publish(payload)} (${payload})`;
      },
      // attack 2: the installed entry Bundle re-pointed at the newest escalation (the waiting upgrade, when
      // the channel's head is one), so that Android's baseline would already have what the upgrade adds
      tenantRepointsInstalledBundle: repoint,
      // attack 2's recipe as one step: an escalation published, then the installed Bundle re-pointed at it
      publishesThenTenantRepoints: async () => {
        const esc = pick(ESCALATIONS);
        const name = await publish(esc);
        await settle();
        return `the catalog publishes ${name} (${esc}), then ${await repoint()}`;
      },
      // attack 2 through status: an approver may write instances/status
      approverWritesActiveBundle: async () => {
        const esc = latestEscalation();
        const i = await admin.tryGet<Instance>(RUKPAK, "Instance", PKG);
        if (!esc || !i) return "alice finds nothing to rewrite";
        const bundles = (await admin.list<Bundle>(RUKPAK, "Bundle")).items.filter((b) =>
          b.metadata.name.startsWith(esc.name),
        );
        const target = bundles[0]?.metadata.name ?? esc.name;
        const r = await attempt(
          alice.mergePatch(RUKPAK, "Instance", PKG, { status: { activeBundle: target } }, { subresource: "status" }),
        );
        return `alice writes ${PKG}'s status.activeBundle = ${target}: ${r}`;
      },
      // attack 1: owner references and labels of what the controllers made
      tenantEditsMetadata: async () => {
        const objects = (await ours()).filter((o) => o.apiVersion === RUKPAK);
        if (objects.length === 0) return "carol edits nothing";
        const o = pick(objects);
        const opObj = await admin.tryGet(OPERATOR_API_VERSION, "Operator", OP);
        const edit = pick(["owner", "dropOwners", "label"]);
        const patch =
          edit === "owner" && opObj
            ? {
                metadata: {
                  ownerReferences: [
                    ...(o.metadata.ownerReferences ?? []),
                    { apiVersion: OPERATOR_API_VERSION, kind: "Operator", name: OP, uid: opObj.metadata.uid! },
                  ],
                },
              }
            : edit === "dropOwners"
              ? { metadata: { ownerReferences: null } }
              : { metadata: { labels: { [`invd-${x.step}`]: "x" } } };
        const r = await attempt(carol.mergePatch(RUKPAK, o.kind, o.metadata.name, patch));
        return `carol ${edit} on ${o.kind} ${o.metadata.name}: ${r}`;
      },
      restart: async () => {
        await running?.stop();
        await start();
        return "the controllers restart";
      },
      // a ClusterExtension installs as its author: the tenant's, of either package, into a namespace of its own
      tenantInstallsExtension: async () => {
        const name = `invd-carol-${x.step}`;
        const pkg = pick([PKG, CE_PKG]);
        const r = await attempt(carol.create(extension(name, name, pkg)));
        return `carol installs ${pkg} as ClusterExtension ${name}: ${r}`;
      },
      // attack 5's shape on a ClusterExtension: the tenant rewrites the admin's spec (its package name is
      // immutable): a version pin, a range, or one that no catalog has; whatever it does happens as her
      tenantRewritesAdminExtension: async () => {
        const version = pick(["1.0.0", ">=0.1.0", "9.9.9"]);
        const patch = { spec: { source: { catalog: { version } } } };
        const r = await attempt(carol.mergePatch(OLM_API_VERSION, "ClusterExtension", ADMIN_CE, patch));
        return `carol sets the admin's ClusterExtension to version ${version}: ${r}`;
      },
      tenantDeletesExtension: async () => {
        const mine = (await admin.list(OLM_API_VERSION, "ClusterExtension")).items.filter((e) =>
          e.metadata.name.startsWith("invd-carol-"),
        );
        if (mine.length === 0) return "carol deletes no ClusterExtension";
        const e = pick(mine);
        const r = await attempt(carol.delete(OLM_API_VERSION, "ClusterExtension", e.metadata.name));
        return `carol deletes ${e.metadata.name}: ${r}`;
      },
    };
    const weighted = [
      ...Array(6).fill("publish"),
      "tenantRepointsInstalledBundle",
      "publishesThenTenantRepoints",
      "approverWritesActiveBundle",
      "tenantEditsMetadata",
      "restart",
      ...Array(2).fill("tenantInstallsExtension"),
      "tenantRewritesAdminExtension",
      "tenantDeletesExtension",
    ] as string[];
    /** What the admin's ClusterExtension installed: it stays while that ClusterExtension is there. */
    const adminObjects =
      (await admin.get<Instance>(RUKPAK, "Instance", instanceNameFor(ADMIN_CE))).status?.objects ?? [];
    assert.ok(adminObjects.length > 0, "the admin's ClusterExtension installed nothing");
    const escalationObjects: [string, string, string][] = [
      [RBAC, "ClusterRoleBinding", "invd-reader-all"],
      [RBAC, "ClusterRole", "invd-widen"],
      ["admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", WEBHOOK],
    ];
    const check = async () => {
      await settle();
      for (const [k, c] of Object.entries(who)) {
        const gained = [...(await rights(c))].filter((r) => !before[k]!.has(r));
        if (gained.length > 0) fail(`${k} gained ${gained.slice(0, 5).join("; ")}`);
      }
      for (const [apiVersion, kind, name] of escalationObjects)
        if (await admin.tryGet(apiVersion, kind, name)) fail(`${kind} ${name} of an escalating version exists`);
      const reader = await admin.tryGet(RBAC, "ClusterRole", "invd-reader");
      if (reader && (reader as { aggregationRule?: unknown }).aggregationRule)
        fail("ClusterRole invd-reader aggregates the bootstrap roles");
      // no Instance (the Operator's package Instance, a ClusterExtension's) installed an escalating version
      for (const i of (await admin.list<Instance>(RUKPAK, "Instance")).items) {
        if (cond(i, "Installed")?.status !== "True" || i.status?.observedGeneration !== i.metadata.generation) continue;
        const at = published.find((p) => i.spec.bundle.name === p.name || i.spec.bundle.name.startsWith(`${p.name}-`));
        if (at && at.payload !== "same")
          fail(`Instance ${i.metadata.name} is Installed at ${at.name}, an escalation (${at.payload}) nobody approved`);
        if (at && i.metadata.name === PKG) installedSeen.add(at.name);
      }
      if (await admin.tryGet(OLM_API_VERSION, "ClusterExtension", ADMIN_CE))
        for (const o of adminObjects)
          if (!(await admin.tryGet(o.apiVersion, o.kind, o.name, o.namespace)))
            fail(`${o.kind} ${o.namespace ?? ""}/${o.name}, installed by the admin's ClusterExtension, was deleted`);
    };
    await x.explore(weighted, actions, check);
    const rs = await admin.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName(OP));
    const pkg = await admin.get<Instance>(RUKPAK, "Instance", PKG);
    x.log.push(
      `at the end: ${PKG} at ${pkg.spec.bundle.name}; resolveset Approved ${cond(rs, "Approved")?.reason}: ` +
        `${cond(rs, "Approved")?.message.slice(0, 200)}`,
    );
    process.stderr.write(`invariants (Deppy): seeds ${SEED}, ${STEPS} steps each:\n  ${x.log.join("\n  ")}\n`);
    // the checker must have exercised Android both ways: an upgrade it approved, and an escalation
    assert.ok(
      published.some((p) => p.payload !== "same") && [...installedSeen].some((b) => b !== published[0]!.name),
      `the seeds published no escalation, or Android approved no upgrade:\n  ${x.log.join("\n  ")}`,
    );
  });
});
