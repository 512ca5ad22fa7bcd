/**
 * The trust model's invariants, checked over random sequences of actions on a real API server
 * (docs/security.md, "trust decisions") — a test that looks for attacks nobody named. Identities hold
 * the roles docs/security.md documents: a tenant (carol: Instances and Bundles, `use` on two classes,
 * admin of namespace team-a, may create ClusterRoleBindings and CustomResourceDefinitions), an approver (alice: `rukpak-approver`,
 * who reviews content with `opcat instance approve --show`'s preview and approves only what grants
 * nothing), an ordinary user (bob), an admin. The
 * generator is seeded with the ingredients of the attacks that got through before: bundles that
 * grant cluster-admin, aggregate into built-in roles, shadow a built-in kind with a CRD, write
 * kube-system, or ship Instances; owner references naming an admin's Operator; edits of objects the
 * controllers made; re-pointing an admin's Instance; controller restarts. After every step, once the
 * controllers are quiet, it checks with the API server's own answers:
 * - nobody gained a right: each identity's SelfSubjectRulesReview (in team-a, kube-system, default)
 *   and SubjectAccessReviews of a few cluster-wide rights are within what they held at the start
 *   (the approver approves only content that grants nothing, so no right may be gained at all);
 * - nothing was deleted that the actor could not delete: every object an admin's Instance installed
 *   is there while that Instance is;
 * - nothing was installed that is not approved: every installed Instance's approval verifies for its
 *   current generation, Bundle and content digest.
 * Seeded (OPCAT_INVARIANT_SEED, a comma-separated list run one after the other on the same cluster,
 * default 2,7 — CI's fixed run: seed 2 nests, edits owners and restarts; seed 7 approves, then
 * re-points and rewrites what was approved) and bounded in steps per seed (OPCAT_INVARIANT_STEPS,
 * default 20); a failure prints the seeds, the step and the actions so far, so a run can be replayed.
 * A longer exploration: `OPCAT_INVARIANT_SEED=$RANDOM OPCAT_INVARIANT_STEPS=150 node scripts/run-tests.mjs
 * test/cluster/invariants.test.ts`.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, type Instance } from "../../src/cluster/rukpak/api.js";
import { clusterManifests, deppyCrdObjects } from "../../src/cluster/manifests.js";
import { OPERATOR_API_VERSION } from "../../src/cluster/operators/api.js";
import { approvalMismatch, loadSigningKey, type ApprovalRecord } from "../../src/cluster/rukpak/trust.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { previewInstance } from "../../src/cluster/rukpak/preview.js";
import { runControllers, waitForCrds, type RunningControllers } from "../../src/cluster/run.js";
import { bindClusterRole, clientAs, clusterKubeconfig, cond, controllerLog, grantClusterRole } from "./harness.js";
import { prng } from "../shared.js";

const cluster = clusterKubeconfig();
const NS = "inv-team";
const SEEDS = (process.env.OPCAT_INVARIANT_SEED ?? "2,7").split(",").map(Number);
const SEED = SEEDS.join(",");
const STEPS = Number(process.env.OPCAT_INVARIANT_STEPS ?? 20);

/** The payloads bundles carry: harmless, or what would be an escalation if it were ever installed. */
const PAYLOADS: Record<string, (tag: string) => unknown[]> = {
  harmless: (t) => [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `inv-ok-${t}`, namespace: NS } }],
  "cluster-admin": (t) => [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `inv-admin-${t}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carol" },
        { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
      ],
    },
  ],
  aggregate: (t) => [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `inv-agg-${t}`, labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } },
      rules: [{ apiGroups: [""], resources: ["secrets", "nodes"], verbs: ["*"] }],
    },
  ],
  // attack 6: a CRD claiming the built-in kind ClusterRoleBinding (another version), beside a real one
  shadow: (t) => [
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: {
        name: "clusterrolebindings.rbac.authorization.k8s.io",
        // what the API server asks of a CRD in a *.k8s.io group
        annotations: { "api-approved.kubernetes.io": "unapproved, invariant test" },
      },
      spec: {
        group: "rbac.authorization.k8s.io",
        scope: "Cluster",
        names: { plural: "clusterrolebindings", singular: "clusterrolebinding", kind: "ClusterRoleBinding" },
        versions: [
          {
            name: "v9",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `inv-shadow-${t}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carol" }],
    },
  ],
  "kube-system": (t) => [
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `inv-ks-${t}`, namespace: "kube-system" } },
  ],
  // an Instance naming a Bundle an admin made (unpacked with the admin's rights, installed by nobody)
  "nested-ref": (t) => [
    {
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: `inv-nested-ref-${t}` },
      spec: { selector: { matchLabels: { inv: `nested-ref-${t}` } }, bundle: { name: "inv-admin-crb" } },
    },
  ],
  nested: (t) => [
    {
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: `inv-nested-${t}` },
      spec: {
        selector: { matchLabels: { inv: `nested-${t}` } },
        bundle: { name: `inv-nested-${t}`, spec: plainSpec("inv-user", "cluster-admin") },
      },
    },
  ],
};

function plainSpec(cls: string, payload: string) {
  return {
    class: cls,
    refs: ["file://content"],
    volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: `inv-src-${payload}`, namespace: NS } }],
  };
}

type Rights = Set<string>;

describe("trust invariants over random actions (real API server)", { skip: cluster.skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let carol: KubeClient;
  let bob: KubeClient;
  let alice: KubeClient;
  let running: RunningControllers | undefined;
  let tmp = "";
  let stateDir = "";
  const start = async () => {
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir,
      deppy: false,
      log: controllerLog("invariant-controllers"),
    });
  };

  /** What `user` may do: SelfSubjectRulesReview rules in each namespace, and cluster-wide probes. */
  async function rights(user: KubeClient): Promise<Rights> {
    const out = new Set<string>();
    for (const namespace of [NS, "kube-system", "default"]) {
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
      { verb: "delete", resource: "configmaps", namespace: "kube-system" },
      { verb: "list", resource: "nodes" },
      { verb: "impersonate", resource: "users" },
      { verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
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

  /** Waits (bounded) until every Instance's status is of its generation and nothing changed for 1.5 s. */
  async function settle(): Promise<void> {
    const deadline = Date.now() + 30_000;
    let last = "";
    let stableSince = Date.now();
    while (Date.now() < deadline) {
      const { items } = await admin.list<Instance>(API_VERSION, "Instance");
      const busy = items.some(
        (i) => i.metadata.generation !== i.status?.observedGeneration && !i.metadata.deletionTimestamp,
      );
      const sig = items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`).join(",");
      if (sig !== last) {
        last = sig;
        stableSince = Date.now();
      }
      if (!busy && Date.now() - stableSince >= 1_500) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    carol = clientAs(kubeconfig, "carol");
    bob = clientAs(kubeconfig, "bob");
    alice = clientAs(kubeconfig, "alice");
    tmp = mkdtempSync(join(tmpdir(), "opcat-inv-"));
    stateDir = join(tmp, "state");
    await start();
    for (const o of clusterManifests({ local: true }).filter((x) => x.kind === "ClusterRole")) await admin.apply(o);
    const crds = deppyCrdObjects();
    for (const c of crds) await admin.apply(c);
    await waitForCrds(
      admin,
      crds.map((c) => c.metadata.name),
    );
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "inv-carol-admin", namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carol" }],
    } as unknown as KubeObject);
    await grantClusterRole(admin, "inv-tenant", { user: "carol" }, [
      {
        apiGroups: ["rukpak.io"],
        resources: ["instances", "bundles"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "list"] },
      {
        apiGroups: ["rukpak.io"],
        resources: ["provisionerclasses"],
        resourceNames: ["inv-user", "inv-deny"],
        verbs: ["use"],
      },
      {
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterrolebindings"],
        verbs: ["get", "create", "patch"],
      },
      { apiGroups: ["operators.coreos.com"], resources: ["operators"], verbs: ["get", "list"] },
      // one extra right (attack 6's tenant): CRDs of her own, which UserPermission lets her install
      { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "create"] },
    ]);
    // the approver: the documented role, and reading the sources her reviews unpack
    await bindClusterRole(admin, "inv-approver", "rukpak-approver", { user: "alice" });
    await bindClusterRole(admin, "inv-approver-view", "view", { user: "alice" }, NS);
    for (const [name, approval] of [
      ["inv-user", "UserPermission"],
      ["inv-deny", "DenyAll"],
    ])
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name },
        provisioner: "rukpak.io/plain",
        parameters: { approval },
      } as unknown as KubeObject);
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "inv-admin-crb" },
      spec: plainSpec("inv-user", "cluster-admin"),
    } as unknown as KubeObject);
    for (const [p, make] of Object.entries(PAYLOADS))
      await admin.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `inv-src-${p}`, namespace: NS },
        data: {
          "objects.yaml": make("x")
            .map((o) => toYaml(o))
            .join("---\n"),
        },
      } as unknown as KubeObject);
  });

  after(async () => {
    try {
      for (const i of (await admin.list<Instance>(API_VERSION, "Instance")).items)
        if (i.metadata.name.startsWith("inv-")) await admin.delete(API_VERSION, "Instance", i.metadata.name);
      await admin.delete(OPERATOR_API_VERSION, "Operator", "inv-admin-op").catch(() => false);
      await admin.delete(API_VERSION, "Bundle", "inv-admin-crb").catch(() => false);
      for (const [kind, name] of [
        ["ClusterRoleBinding", "inv-approver"],
        ["ClusterRoleBinding", "inv-tenant"],
        ["ClusterRole", "inv-tenant"],
      ])
        await admin.delete("rbac.authorization.k8s.io/v1", kind, name).catch(() => false);
    } finally {
      await running?.stop();
      carol?.close();
      bob?.close();
      alice?.close();
      admin?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  test(`seeds ${SEED}, ${STEPS} steps each: no right gained, nothing deleted or installed unapproved`, async () => {
    let rnd = prng(SEEDS[0]!);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const key = await loadSigningKey(admin, "opcat-system");
    // an admin's Operator (no Operator controller runs here): an identity worth stealing
    const op = await admin.apply<KubeObject>({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: "inv-admin-op" },
      spec: { bundle: { name: "inv-admin-op-b", spec: plainSpec("inv-user", "kube-system") } },
    } as unknown as KubeObject);
    const before = { carol: await rights(carol), bob: await rights(bob), alice: await rights(alice) };
    /** What the admin's Instances installed (the objects that must stay while those Instances are there). */
    const adminInstalled = new Map<string, { kind: string; name: string; namespace?: string }[]>();
    const log: string[] = [];
    let n = 0;
    async function editMetadata(
      prefix: string,
      kind = pick(["Instance", "Bundle"]),
      edits = ["ownerToAdminOperator", "dropOwners", "label", "copyRequester"],
    ): Promise<string> {
      const all = (await admin.list(API_VERSION, kind)).items.filter((o) => o.metadata.name.startsWith(prefix));
      if (all.length === 0) return `carol edits no ${kind}`;
      const o = pick(all);
      const edit = pick(edits);
      const patch =
        edit === "ownerToAdminOperator"
          ? {
              metadata: {
                ownerReferences: [
                  ...(o.metadata.ownerReferences ?? []),
                  { apiVersion: OPERATOR_API_VERSION, kind: "Operator", name: "inv-admin-op", uid: op.metadata.uid! },
                ],
              },
            }
          : edit === "dropOwners"
            ? { metadata: { ownerReferences: null } }
            : edit === "label"
              ? { metadata: { labels: { [`inv-${n}`]: "x" } } }
              : { metadata: { annotations: { ...(op.metadata.annotations ?? {}) } } };
      const r = await carol.mergePatch(API_VERSION, kind, o.metadata.name, patch).then(
        () => "done",
        (e: Error) => `refused: ${e.message.slice(0, 80)}`,
      );
      return `carol ${edit} on ${kind} ${o.metadata.name}: ${r}`;
    }
    const actions: Record<string, () => Promise<string>> = {
      tenantInstalls: async () => {
        const name = `inv-c${n}`;
        const payload = pick(Object.keys(PAYLOADS));
        const cls = pick(["inv-user", "inv-deny"]);
        await carol.create({
          apiVersion: API_VERSION,
          kind: "Instance",
          metadata: { name },
          spec: { selector: { matchLabels: { inv: name } }, bundle: { name, spec: plainSpec(cls, payload) } },
        } as unknown as KubeObject);
        return `carol installs ${payload} as ${name} (${cls})`;
      },
      // objects of its own name (a source of its own), so that every admin install is installed
      adminInstalls: async () => {
        const name = `inv-a${n}`;
        await admin.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `inv-src-${name}`, namespace: NS },
          data: { "objects.yaml": toYaml(PAYLOADS["kube-system"](name)[0]) },
        } as unknown as KubeObject);
        await admin.create({
          apiVersion: API_VERSION,
          kind: "Instance",
          metadata: { name },
          spec: {
            selector: { matchLabels: { inv: name } },
            bundle: { name, spec: plainSpec("inv-user", name) },
          },
        } as unknown as KubeObject);
        return `admin installs kube-system as ${name}`;
      },
      tenantRepoints: async () => {
        const all = (await admin.list<Instance>(API_VERSION, "Instance")).items.filter((i) =>
          i.metadata.name.startsWith("inv-"),
        );
        if (all.length === 0) return "carol re-points nothing";
        // half the time an admin's Instance, if any: what a pivot would prune is the admin's
        const admins = all.filter((x) => x.metadata.name.startsWith("inv-a"));
        const i = pick(admins.length > 0 && rnd() < 0.5 ? admins : all);
        const payload = pick(Object.keys(PAYLOADS));
        const bundle = `${i.metadata.name}-p${n}`;
        // a source of her own with names of its own: no collision hides what the pivot would prune
        await carol.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `inv-src-${bundle}`, namespace: NS },
          data: {
            "objects.yaml": PAYLOADS[payload](bundle)
              .map((o) => toYaml(o))
              .join("---\n"),
          },
        } as unknown as KubeObject);
        const r = await carol
          .mergePatch(API_VERSION, "Instance", i.metadata.name, {
            spec: { bundle: { name: bundle, spec: plainSpec("inv-user", bundle) } },
          })
          .then(
            () => "done",
            (e: Error) => `refused: ${e.message.slice(0, 80)}`,
          );
        return `carol re-points ${i.metadata.name} at ${payload}: ${r}`;
      },
      tenantEditsMetadata: () => editMetadata("inv-"),
      // what the controllers made for their own purposes (the objects of a bundle): the attacks' favourite
      tenantEditsControllersObjects: () => editMetadata("inv-nested-"),
      // attack 1's recipe as one step: a bundle that ships an Instance, then an edit of what the
      // controllers made from it
      tenantNestsAndEdits: async () => {
        const name = `inv-c${n}`;
        const payload = pick(["nested", "nested-ref"]);
        await carol.create({
          apiVersion: API_VERSION,
          kind: "Instance",
          metadata: { name },
          spec: {
            selector: { matchLabels: { inv: name } },
            bundle: { name, spec: plainSpec("inv-user", payload) },
          },
        } as unknown as KubeObject);
        await settle();
        const edit = await editMetadata(`inv-${payload}-`, "Instance", ["ownerToAdminOperator", "dropOwners"]);
        return `carol installs ${payload} as ${name}, then ${edit}`;
      },
      tenantDeletes: async () => {
        const mine = (await admin.list<Instance>(API_VERSION, "Instance")).items.filter((i) =>
          i.metadata.name.startsWith("inv-c"),
        );
        if (mine.length === 0) return "carol deletes nothing";
        const i = pick(mine);
        await carol.delete(API_VERSION, "Instance", i.metadata.name);
        return `carol deletes ${i.metadata.name}`;
      },
      bobTries: async () => {
        const r = await bob
          .create({
            apiVersion: API_VERSION,
            kind: "Instance",
            metadata: { name: `inv-b${n}` },
            spec: {
              selector: { matchLabels: { inv: "b" } },
              bundle: { name: `inv-b${n}`, spec: plainSpec("inv-user", "cluster-admin") },
            },
          } as unknown as KubeObject)
          .then(
            () => "created",
            (e: Error) => `refused: ${e.message.slice(0, 60)}`,
          );
        return `bob installs cluster-admin: ${r}`;
      },
      // the approver reviews a waiting Instance as a careful person would (the preview unpacks what the
      // Bundle names, with her rights) and approves exactly that content when it grants nothing
      approverReviews: async () => {
        const waiting = (await admin.list<Instance>(API_VERSION, "Instance")).items.filter(
          (i) => i.metadata.name.startsWith("inv-") && cond(i, "Approved")?.status !== "True",
        );
        if (waiting.length === 0) return "alice has nothing to review";
        // up to three reviews, until one approval
        const done: string[] = [];
        for (let k = 0; k < 3 && waiting.length > 0; k++) {
          const i = waiting.splice(Math.floor(rnd() * waiting.length), 1)[0]!;
          const p = await previewInstance(alice, i, { cacheDir: join(tmp, "preview") });
          if (p.error || !p.digest) {
            done.push(`cannot review ${i.metadata.name}: ${(p.error ?? "").slice(0, 60)}`);
            continue;
          }
          const harmless =
            p.objects.length > 0 &&
            p.rules.length === 0 &&
            p.objects.every((o) => o.kind === "ConfigMap" && o.metadata.namespace === NS);
          const r = await approveInstance(alice, i.metadata.name, { digest: p.digest, deny: !harmless }).then(
            () => "done",
            (e: Error) => `refused: ${e.message.slice(0, 80)}`,
          );
          done.push(`${harmless ? "approves" : "denies"} ${i.metadata.name} (${p.objects.length} objects): ${r}`);
          if (harmless) break;
        }
        return `alice ${done.join("; ")}`;
      },
      // the tenant may write the sources in her namespace: what a reviewed name held is no promise
      tenantRewritesSource: async () => {
        const payload = pick(["cluster-admin", "aggregate", "harmless"]);
        const yaml = PAYLOADS[payload](`rw${n}`)
          .map((o) => toYaml(o))
          .join("---\n");
        await carol.mergePatch(
          "v1",
          "ConfigMap",
          "inv-src-harmless",
          { data: { "objects.yaml": yaml } },
          { namespace: NS },
        );
        return `carol rewrites the harmless source as ${payload}`;
      },
      restart: async () => {
        await running?.stop();
        await start();
        return "the controllers restart";
      },
    };
    // weights: the ingredients of earlier attacks come often
    const weighted = [
      ...Array(4).fill("tenantInstalls"),
      ...Array(2).fill("adminInstalls"),
      ...Array(3).fill("tenantRepoints"),
      ...Array(2).fill("tenantEditsMetadata"),
      ...Array(2).fill("tenantEditsControllersObjects"),
      ...Array(2).fill("tenantNestsAndEdits"),
      ...Array(3).fill("approverReviews"),
      "tenantRewritesSource",
      "tenantDeletes",
      "bobTries",
      "restart",
    ] as string[];
    const fail = (what: string) =>
      assert.fail(
        `invariant broken after step ${n} (seeds ${SEED}, ${STEPS} steps each): ${what}\n` +
          `replay: OPCAT_INVARIANT_SEED=${SEED} OPCAT_INVARIANT_STEPS=${STEPS} node scripts/run-tests.mjs ` +
          `test/cluster/invariants.test.ts\nsteps:\n  ${log.join("\n  ")}`,
      );
    /** Why an Instance that says it is Installed and Approved has no approval of its content, if so. */
    const unapproved = async (i: Instance): Promise<string | undefined> => {
      const claims =
        cond(i, "Installed")?.status === "True" &&
        cond(i, "Approved")?.status === "True" &&
        i.status?.activeBundle === i.spec.bundle.name &&
        i.status?.observedGeneration === i.metadata.generation;
      if (!claims) return undefined;
      const a = i.status?.approval as ApprovalRecord | undefined;
      const b = await admin.tryGet<KubeObject & { status?: { digest?: string } }>(
        API_VERSION,
        "Bundle",
        i.spec.bundle.name,
      );
      if (!a || !b) return "no approval or no Bundle";
      return approvalMismatch(key, a, {
        instanceUid: i.metadata.uid!,
        generation: i.metadata.generation ?? 0,
        bundle: { name: b.metadata.name, uid: b.metadata.uid!, generation: b.metadata.generation ?? 0 },
        digest: b.status?.digest ?? "",
      });
    };
    const check = async () => {
      await settle();
      for (const [who, client] of [
        ["carol", carol],
        ["bob", bob],
        ["alice", alice],
      ] as const) {
        const now = await rights(client);
        const gained = [...now].filter((r) => !before[who].has(r));
        if (gained.length > 0) fail(`${who} gained ${gained.slice(0, 5).join("; ")}`);
      }
      const instances = (await admin.list<Instance>(API_VERSION, "Instance")).items;
      for (const i of instances) {
        if (!i.metadata.name.startsWith("inv-")) continue;
        // what the admin's Instances installed stays while they are there
        if (
          i.metadata.name.startsWith("inv-a") &&
          cond(i, "Installed")?.status === "True" &&
          !adminInstalled.has(i.metadata.name)
        )
          adminInstalled.set(
            i.metadata.name,
            (i.status?.objects ?? []).map((o) => ({ ...o })),
          );
        // an installed Instance's approval verifies for what it has installed
        const mismatch = await unapproved(i);
        if (mismatch) fail(`Instance ${i.metadata.name} is Installed without an approval of its content (${mismatch})`);
      }
      for (const [name, objects] of adminInstalled) {
        if (!instances.some((i) => i.metadata.name === name)) {
          adminInstalled.delete(name);
          continue;
        }
        for (const o of objects) {
          const apiVersion = o.kind === "ConfigMap" ? "v1" : ((o as { apiVersion?: string }).apiVersion ?? "v1");
          if (!(await admin.tryGet(apiVersion, o.kind, o.name, o.namespace)))
            fail(`${o.kind} ${o.namespace ?? ""}/${o.name}, installed by the admin's ${name}, was deleted`);
        }
      }
    };
    await check();
    // step numbers go on across seeds, so the names a step makes never collide with an earlier seed's
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
    process.stderr.write(`invariants: seeds ${SEED}, ${STEPS} steps each:\n  ${log.join("\n  ")}\n`);
  });
});
