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
import { prng } from "../shared.js";

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

/** What a published version ships beside the operator's first content. */
type Payload = "same" | "subjects" | "aggregate-label" | "aggregation-rule" | "webhook" | "more-rules";
const ESCALATIONS: Payload[] = ["subjects", "aggregate-label", "aggregation-rule", "webhook", "more-rules"];

type Json = Record<string, unknown>;

/** The objects of one version of the package: its CSV and the other manifests. */
function manifestsOf(version: string, payload: Payload): Json[] {
  const rules: Json[] = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];
  if (payload === "more-rules") rules.push({ apiGroups: [""], resources: ["nodes"], verbs: ["list"] });
  const csv: Json = {
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: `${PKG}.v${version}` },
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
              name: PKG,
              spec: {
                selector: { matchLabels: { app: PKG } },
                template: {
                  metadata: { labels: { app: PKG } },
                  spec: { serviceAccountName: PKG, containers: [{ name: "op", image: "127.0.0.1:1/none:1" }] },
                },
              },
            },
          ],
          clusterPermissions: [{ serviceAccountName: PKG, rules }],
        },
      },
      ...(payload === "webhook"
        ? {
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
          }
        : {}),
    },
  };
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

/** Writes one version's bundle directory (registry+v1). */
function writeBundle(dir: string, version: string, payload: Payload): void {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  for (const [i, o] of manifestsOf(version, payload).entries())
    writeFileSync(join(dir, "manifests", `${i}-${String(o.kind).toLowerCase()}.yaml`), toYaml(o));
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    toYaml({
      annotations: {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": PKG,
        "operators.operatorframework.io.bundle.channels.v1": "stable",
        "operators.operatorframework.io.bundle.channel.default.v1": "stable",
      },
    }),
  );
}

type Rights = Set<string>;

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
    writeBundle(dir, version, payload);
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

  /** What `user` may do: SelfSubjectRulesReview rules in each namespace, and cluster-wide probes. */
  async function rights(user: KubeClient): Promise<Rights> {
    const out = new Set<string>();
    for (const namespace of [TEAM, INSTALL_NS, "kube-system", "default"]) {
      type Rule = { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] };
      const r = await user.request<{ status?: { resourceRules?: Rule[] } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        { body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } } },
      );
      for (const rule of r.status?.resourceRules ?? [])
        for (const v of rule.verbs)
          for (const g of rule.apiGroups ?? [""])
            for (const res of rule.resources ?? [])
              out.add(`${namespace}:${v}:${g}:${res}:${(rule.resourceNames ?? []).join(",")}`);
    }
    const probes = [
      { verb: "get", resource: "secrets", namespace: "kube-system" },
      { verb: "list", resource: "secrets", namespace: TEAM },
      { verb: "list", resource: "nodes" },
      { verb: "impersonate", resource: "users" },
      { verb: "delete", resource: "namespaces" },
    ];
    for (const p of probes) {
      const r = await user.request<{ status?: { allowed?: boolean } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: { resourceAttributes: { group: "", ...p } },
          },
        },
      );
      if (r.status?.allowed) out.add(`probe:${p.verb}:${p.resource}:${p.namespace ?? ""}`);
    }
    return out;
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
    const deadline = Date.now() + 60_000;
    let last = "";
    let stableSince = Date.now();
    while (Date.now() < deadline) {
      const objects = await ours();
      const busy = objects.some((o) => {
        if (o.metadata.deletionTimestamp) return false;
        const s = (o as { status?: { observedGeneration?: number; conditions?: { observedGeneration?: number }[] } })
          .status;
        const seen = s?.observedGeneration ?? s?.conditions?.[0]?.observedGeneration;
        return seen !== undefined && seen !== o.metadata.generation;
      });
      const sig = objects.map((o) => `${o.kind}/${o.metadata.name}@${o.metadata.resourceVersion}`).join(",");
      if (sig !== last) {
        last = sig;
        stableSince = Date.now();
      }
      if (!busy && Date.now() - stableSince >= 2_000) return;
      await new Promise((r) => setTimeout(r, 250));
    }
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
    ]);
    // `use` on every class (the documented rukpak-class-user): olm.bundle, the class of the entry Bundles
    await bindClusterRole(admin, "invd-tenant-classes", "rukpak-class-user", { user: "carol" });
    // the approver, with the documented role, and `view` of the team's namespace (what aggregation would widen)
    await bindClusterRole(admin, "invd-approver", "rukpak-approver", { user: "alice" });
    await bindClusterRole(admin, "invd-approver-view", "view", { user: "alice" }, TEAM);
    await publish("same");
    await admin.apply({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: OP },
      spec: { inputClass: "subscription", catalog: { name: OP, package: PKG, channel: "stable" } },
    } as Operator);
    // the first install is a person's decision (Android asks for it): the admin approves it
    const rs = resolvesetInstanceName(OP);
    await waitFor<Instance>(
      admin,
      RUKPAK,
      "Instance",
      rs,
      (o) => cond(o, "Approved")?.reason === "NewPermissions",
      "first install waits for approval",
    );
    await approveInstance(admin, rs);
    await waitFor<Instance>(
      admin,
      RUKPAK,
      "Instance",
      PKG,
      (o) => cond(o, "Installed")?.status === "True",
      "first install installed",
    );
  });

  after(async () => {
    try {
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
    let rnd = prng(SEEDS[0]!);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    await settle();
    const who = { carol, bob, alice, [SA]: operatorSa } as Record<string, KubeClient>;
    const before: Record<string, Rights> = {};
    for (const [k, c] of Object.entries(who)) before[k] = await rights(c);
    const log: string[] = [];
    let n = 0;
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
      const r = await carol.mergePatch(RUKPAK, "Bundle", name, { spec: { refs: escBundle.spec.refs } }).then(
        () => "done",
        (e: Error) => `refused: ${e.message.slice(0, 80)}`,
      );
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
        const r = await alice
          .mergePatch(RUKPAK, "Instance", PKG, { status: { activeBundle: target } }, { subresource: "status" })
          .then(
            () => "done",
            (e: Error) => `refused: ${e.message.slice(0, 80)}`,
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
              : { metadata: { labels: { [`invd-${n}`]: "x" } } };
        const r = await carol.mergePatch(RUKPAK, o.kind, o.metadata.name, patch).then(
          () => "done",
          (e: Error) => `refused: ${e.message.slice(0, 80)}`,
        );
        return `carol ${edit} on ${o.kind} ${o.metadata.name}: ${r}`;
      },
      restart: async () => {
        await running?.stop();
        await start();
        return "the controllers restart";
      },
    };
    const weighted = [
      ...Array(6).fill("publish"),
      "tenantRepointsInstalledBundle",
      "publishesThenTenantRepoints",
      "approverWritesActiveBundle",
      "tenantEditsMetadata",
      "restart",
    ] as string[];
    const fail = (what: string) =>
      assert.fail(
        `invariant broken after step ${n} (seeds ${SEED}, ${STEPS} steps each): ${what}\n` +
          `replay: OPCAT_INVARIANT_DEPPY_SEED=${SEED} OPCAT_INVARIANT_DEPPY_STEPS=${STEPS} ` +
          `node scripts/run-tests.mjs test/cluster/invariants-deppy.test.ts\nsteps:\n  ${log.join("\n  ")}`,
      );
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
      const i = await admin.tryGet<Instance>(RUKPAK, "Instance", PKG);
      if (i && cond(i, "Installed")?.status === "True" && i.status?.observedGeneration === i.metadata.generation) {
        const at = published.find((p) => i.spec.bundle.name === p.name || i.spec.bundle.name.startsWith(`${p.name}-`));
        if (at && at.payload !== "same")
          fail(`${PKG} is Installed at ${at.name}, an escalation (${at.payload}) nobody approved`);
        if (at) installedSeen.add(at.name);
      }
    };
    await check();
    for (const [k, seed] of SEEDS.entries()) {
      rnd = prng(seed);
      log.push(`seed ${seed}:`);
      for (n = k * STEPS + 1; n <= (k + 1) * STEPS; n++) {
        const action = pick(weighted);
        log.push(
          `${n}. [${action}] ${await actions[action]().catch((e: Error) => `failed: ${e.message.slice(0, 100)}`)}`,
        );
        await check();
      }
    }
    const rs = await admin.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName(OP));
    const pkg = await admin.get<Instance>(RUKPAK, "Instance", PKG);
    log.push(
      `at the end: ${PKG} at ${pkg.spec.bundle.name}; resolveset Approved ${cond(rs, "Approved")?.reason}: ` +
        `${cond(rs, "Approved")?.message.slice(0, 200)}`,
    );
    process.stderr.write(`invariants (Deppy): seeds ${SEED}, ${STEPS} steps each:\n  ${log.join("\n  ")}\n`);
    // the checker must have exercised Android both ways: an upgrade it approved, and an escalation
    assert.ok(
      published.some((p) => p.payload !== "same") && [...installedSeen].some((b) => b !== published[0]!.name),
      `the seeds published no escalation, or Android approved no upgrade:\n  ${log.join("\n  ")}`,
    );
  });
});
