/**
 * The trust model on a real API server (docs/security.md): each test is an attack that got through
 * an earlier opcat, by users holding only the roles docs/cluster.md tells admins to grant — a tenant
 * (carol, group dev-team: create Instances and Bundles, `use` on some classes, admin of namespace
 * team-a) and an approver (alice: `rukpak-approver`) — and must now fail without harm.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiError, type KubeClient, type KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, LABEL_INSTANCE, type Bundle, type Instance } from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { dryRunAs, grantedRulesInCluster } from "../../src/cluster/rukpak/permissions.js";
import { parseKubeDocuments } from "../../src/cluster/rukpak/manifests.js";
import { newPermissions } from "../../src/cluster/deppy/android.js";
import { clusterManifests } from "../../src/cluster/manifests.js";
import { buildBundleImage, pushImage } from "../../src/image/index.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, requireShared } from "../shared.js";
import { runControllers, waitForCrds, type RunningControllers } from "../../src/cluster/run.js";
import { deppyCrdObjects } from "../../src/cluster/manifests.js";
import { OPERATOR_API_VERSION } from "../../src/cluster/operators/api.js";
import { parse as fromYaml, stringify as toYaml } from "yaml";
import {
  bindClusterRole,
  clientAs,
  clusterKubeconfig,
  cond,
  controllerLog,
  grantClusterRole,
  waitFor,
} from "./harness.js";

const cluster = clusterKubeconfig();
const NS = "team-a";
const registryMissing = requireTools("docker-registry") || requireShared().skip;

describe("attacks on the trust model (real API server)", { skip: cluster.skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let carol: KubeClient;
  let alice: KubeClient;
  let running: RunningControllers | undefined;
  let tmp = "";
  let registry: RunningRegistry | undefined;
  let stateDir = "";

  const start = async () => {
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir,
      pull: { useHttp: true },
      deppy: false,
      log: controllerLog("attack-controllers"),
    });
  };

  /** A ConfigMap in team-a holding `manifests` (YAML), for a plain Bundle to mount. */
  async function content(name: string, manifests: string): Promise<void> {
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `src-${name}`, namespace: NS },
      data: { "objects.yaml": manifests },
    } as unknown as KubeObject);
  }

  function plainSpec(cls: string, cm: string) {
    return {
      class: cls,
      refs: ["file://content"],
      volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: `src-${cm}`, namespace: NS } }],
    };
  }

  function instance(name: string, bundle: string, spec?: ReturnType<typeof plainSpec>): Instance {
    return {
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name },
      spec: { selector: { matchLabels: { attack: name } }, bundle: { name: bundle, ...(spec ? { spec } : {}) } },
    };
  }

  const installed = (bundle: string) => (o: Instance | undefined) =>
    cond(o, "Installed")?.status === "True" &&
    o?.status?.activeBundle === bundle &&
    o.status.observedGeneration === o.metadata.generation;

  const crbToClusterAdmin = (name: string, user: string) =>
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n" +
    `  name: ${name}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n` +
    `  name: cluster-admin\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: ${user}\n`;

  const configMap = (name: string, ns: string, data: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  v: "${data}"\n`;

  async function carolIsClusterAdmin(): Promise<boolean> {
    const r = await admin.request<{ status?: { allowed?: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: "carol",
            groups: ["dev-team", "system:authenticated"],
            resourceAttributes: { verb: "delete", group: "", resource: "secrets", namespace: "kube-system" },
          },
        },
      },
    );
    return r.status?.allowed === true;
  }

  async function klass(name: string, approval: string): Promise<void> {
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name },
      provisioner: "rukpak.io/plain",
      parameters: { approval },
    } as unknown as KubeObject);
  }

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    carol = clientAs(kubeconfig, "carol");
    alice = clientAs(kubeconfig, "alice");
    tmp = mkdtempSync(join(tmpdir(), "opcat-attacks-"));
    stateDir = join(tmp, "state");
    await start();
    // the documented user roles, and the bindings an admin would make
    for (const o of clusterManifests({ local: true }).filter((x) => x.kind === "ClusterRole")) await admin.apply(o);
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "dev-team-admin", namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "dev-team" }],
    } as unknown as KubeObject);
    // the tenant: Instances and Bundles, `use` on two classes (not atk-allow), and creating
    // ClusterRoleBindings (which Kubernetes limits to roles she holds)
    await grantClusterRole(admin, "atk-tenant", { group: "dev-team" }, [
      {
        apiGroups: ["rukpak.io"],
        resources: ["instances", "bundles"],
        verbs: ["get", "list", "watch", "create", "update", "patch"],
      },
      { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "list"] },
      {
        apiGroups: ["rukpak.io"],
        resources: ["provisionerclasses"],
        resourceNames: ["atk-user", "atk-deny"],
        verbs: ["use"],
      },
      {
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterrolebindings"],
        verbs: ["get", "create", "patch"],
      },
    ]);
    await bindClusterRole(admin, "atk-approver", "rukpak-approver", { user: "alice" });
    await klass("atk-allow", "AllowAll");
    await klass("atk-user", "UserPermission");
    await klass("atk-deny", "DenyAll");
    assert.equal(await carolIsClusterAdmin(), false, "carol starts with few rights");
  });

  after(async () => {
    // the rights granted here must not leak into the next test file (same cluster)
    for (const [kind, name] of [
      ["ClusterRoleBinding", "atk-approver"],
      ["ClusterRoleBinding", "atk-tenant"],
      ["ClusterRole", "atk-tenant"],
    ])
      await admin?.delete("rbac.authorization.k8s.io/v1", kind, name).catch(() => false);
    await running?.stop();
    await registry?.stop();
    carol?.close();
    alice?.close();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("attack 1: objects an approver adds to status.objects are never deleted by the controller", async () => {
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "atk1-victim" } } as KubeObject);
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "atk1-victim", namespace: "kube-system" },
      data: { keep: "me" },
    } as unknown as KubeObject);
    await content("atk1-a", configMap("atk1-a", NS, "a"));
    await content("atk1-b", configMap("atk1-b", NS, "b"));
    await admin.create(instance("atk1", "atk1-a", plainSpec("atk-allow", "atk1-a")));
    const inst = await waitFor<Instance>(admin, API_VERSION, "Instance", "atk1", installed("atk1-a"), "Installed");
    // alice may write instances/status (rukpak-approver): she lists victims as installed objects
    await alice.replace<Instance>(
      {
        ...inst!,
        status: {
          ...inst!.status,
          objects: [
            ...(inst!.status?.objects ?? []),
            { apiVersion: "v1", kind: "ConfigMap", name: "atk1-victim", namespace: "kube-system" },
            { apiVersion: "v1", kind: "Namespace", name: "atk1-victim" },
          ],
        },
      },
      { subresource: "status" },
    );
    // a pivot prunes what the new bundle no longer has
    await admin.mergePatch(API_VERSION, "Instance", "atk1", {
      spec: { bundle: { name: "atk1-b", spec: plainSpec("atk-allow", "atk1-b") } },
    });
    await waitFor<Instance>(admin, API_VERSION, "Instance", "atk1", installed("atk1-b"), "pivoted to atk1-b");
    assert.ok(await admin.tryGet("v1", "ConfigMap", "atk1-victim", "kube-system"), "the kube-system ConfigMap stays");
    const ns = await admin.tryGet("v1", "Namespace", "atk1-victim");
    assert.ok(ns && !ns.metadata.deletionTimestamp, "the Namespace stays");
    // what the old bundle installed is pruned (from the controller's own record)
    assert.equal(await admin.tryGet("v1", "ConfigMap", "atk1-a", NS), undefined, "atk1-a is pruned");
    assert.ok(await admin.tryGet("v1", "ConfigMap", "atk1-b", NS), "atk1-b is installed");
    await admin.delete(API_VERSION, "Instance", "atk1");
  });

  test("attack 2: a Bundle changed after its approval is not installed under that approval", async () => {
    await content("atk2-good", configMap("atk2-good", NS, "good"));
    await content("atk2-evil", crbToClusterAdmin("atk2-carol-admin", "carol"));
    // the tenant makes the Bundle; an admin approves an Instance naming it (DenyAll: every change reviewed)
    await carol.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "atk2-bundle", labels: { attack: "atk2" } },
      spec: plainSpec("atk-deny", "atk2-good"),
    } as unknown as KubeObject);
    await admin.create(instance("atk2", "atk2-bundle"));
    await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk2",
      (o) => cond(o, "Approved")?.reason === "AwaitingApproval",
      "AwaitingApproval",
    );
    await approveInstance(admin, "atk2");
    await waitFor<Instance>(admin, API_VERSION, "Instance", "atk2", installed("atk2-bundle"), "Installed");
    // the tenant now points the approved Bundle at other content
    await carol.mergePatch(API_VERSION, "Bundle", "atk2-bundle", { spec: plainSpec("atk-deny", "atk2-evil") });
    const waiting = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk2",
      (o) => cond(o, "Approved")?.status === "False",
      "the changed Bundle waits for a new approval",
    );
    assert.match(cond(waiting, "Approved")?.message ?? "", /changed since it was approved|content changed/);
    assert.equal(
      await admin.tryGet("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "atk2-carol-admin"),
      undefined,
    );
    assert.equal(await carolIsClusterAdmin(), false);
    await admin.delete(API_VERSION, "Instance", "atk2");
    await admin.delete(API_VERSION, "Bundle", "atk2-bundle");
  });

  test("attack 3: UserPermission never grants what the API server would refuse the requester", async () => {
    await content("atk3", crbToClusterAdmin("atk3-carol-admin", "carol"));
    // carol may create ClusterRoleBindings, but Kubernetes refuses her one to a role she does not hold
    await assert.rejects(
      carol.create({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "atk3-direct" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carol" }],
      } as unknown as KubeObject),
      (e: unknown) => e instanceof KubeApiError && e.status === 403,
    );
    await carol.create(instance("atk3", "atk3-bundle", plainSpec("atk-user", "atk3")));
    const denied = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk3",
      (o) => cond(o, "Approved")?.reason === "InsufficientPermissions",
      "InsufficientPermissions",
    );
    assert.match(cond(denied, "Approved")?.message ?? "", /carol may not make ClusterRoleBinding "atk3-carol-admin"/);
    assert.match(cond(denied, "Approved")?.message ?? "", /escalat|forbidden/i);
    assert.equal(
      await admin.tryGet("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "atk3-carol-admin"),
      undefined,
    );
    assert.equal(await carolIsClusterAdmin(), false);
    await admin.delete(API_VERSION, "Instance", "atk3");
  });

  test("attack 4: the grant of a binding to an existing role (cluster-admin) is counted", async () => {
    const objects = [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "operator-admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: "op", namespace: "op-system" }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "operator-edit", namespace: "op-system" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [{ kind: "ServiceAccount", name: "op", namespace: "op-system" }],
      },
    ] as unknown as KubeObject[];
    const rules = await grantedRulesInCluster(admin, objects);
    const added = newPermissions([], rules);
    assert.ok(
      added.some((p) => /^\* \*\.\* cluster-wide for ServiceAccount op-system\/op$/.test(p)),
      added.join("\n"),
    );
    assert.ok(rules.some((r) => r.scope === "cluster" && r.verbs.includes("*") && r.resources.includes("*")));
    // `edit` is an aggregated ClusterRole: its aggregated rules count, in the binding's namespace
    assert.ok(rules.some((r) => r.scope === "op-system" && r.resources.includes("deployments")));
    // nothing new only when the installed grant already covers it
    assert.deepEqual(newPermissions(rules, rules), []);
  });

  test("attack 5: a Bundle someone else made under the name an Instance asks for is not adopted", async () => {
    await content("atk5", configMap("atk5", NS, "mine"));
    // the tenant squats the name with the same class, ref and mount, plus a field the Instance leaves out
    await carol.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "atk5-bundle" },
      spec: { ...plainSpec("atk-user", "atk5"), pullSecrets: [{ name: "registry", namespace: "kube-system" }] },
    } as unknown as KubeObject);
    await admin.create(instance("atk5", "atk5-bundle", plainSpec("atk-user", "atk5")));
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk5",
      (o) => cond(o, "Installed") !== undefined,
      "an Installed condition",
    );
    assert.equal(cond(inst, "Installed")?.reason, "BundleSpecConflict");
    assert.match(cond(inst, "Installed")?.message ?? "", /was not made from this Instance's spec/);
    assert.equal(await admin.tryGet("v1", "ConfigMap", "atk5", NS), undefined, "nothing installed");
    await admin.delete(API_VERSION, "Instance", "atk5");
    await admin.delete(API_VERSION, "Bundle", "atk5-bundle");
  });

  test("attack 6: a bundle never takes over objects it did not create, opcat's own least of all", async () => {
    const before = await admin.get<KubeObject & { webhooks?: unknown[] }>(
      "admissionregistration.k8s.io/v1",
      "ValidatingWebhookConfiguration",
      "opcat-rukpak",
    );
    await content(
      "atk6-webhooks",
      "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n" +
        "metadata:\n  name: opcat-rukpak\nwebhooks: []\n",
    );
    await admin.create(instance("atk6-webhooks", "atk6-webhooks", plainSpec("atk-allow", "atk6-webhooks")));
    const refused = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk6-webhooks",
      (o) => cond(o, "Installed")?.reason === "ProtectedObject",
      "ProtectedObject",
    );
    assert.match(cond(refused, "Installed")?.message ?? "", /opcat's own installation/);
    const after = await admin.get<KubeObject & { webhooks?: unknown[] }>(
      "admissionregistration.k8s.io/v1",
      "ValidatingWebhookConfiguration",
      "opcat-rukpak",
    );
    assert.equal(after.webhooks?.length, before.webhooks?.length);

    const crd = await admin.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "instances.rukpak.io");
    await content(
      "atk6-crd",
      JSON.stringify({
        apiVersion: crd.apiVersion,
        kind: crd.kind,
        metadata: { name: crd.metadata.name },
        spec: crd.spec,
      }),
    );
    await admin.create(instance("atk6-crd", "atk6-crd", plainSpec("atk-allow", "atk6-crd")));
    await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk6-crd",
      (o) => cond(o, "Installed")?.reason === "ProtectedObject",
      "ProtectedObject",
    );
    const crdAfter = await admin.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "instances.rukpak.io");
    assert.equal(crdAfter.metadata.ownerReferences, undefined, "opcat's CRD is owned by no Instance");

    // objects nobody manages: a kube-system ConfigMap and a Namespace are collisions, not adopted
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "atk6-victim", namespace: "kube-system" },
      data: { v: "original" },
    } as unknown as KubeObject);
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "atk6-ns" } } as KubeObject);
    await content(
      "atk6-adopt",
      `${configMap("atk6-victim", "kube-system", "overwritten")}---\n` +
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: atk6-ns\n",
    );
    await admin.create(instance("atk6-adopt", "atk6-adopt", plainSpec("atk-allow", "atk6-adopt")));
    const collided = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk6-adopt",
      (o) => cond(o, "Installed")?.reason === "ObjectCollision",
      "ObjectCollision",
    );
    assert.match(cond(collided, "Installed")?.message ?? "", /ConfigMap "atk6-victim" in namespace kube-system exists/);
    assert.match(cond(collided, "Installed")?.message ?? "", /Namespace "atk6-ns" exists/);
    const victim = await admin.get<KubeObject & { data?: Record<string, string> }>(
      "v1",
      "ConfigMap",
      "atk6-victim",
      "kube-system",
    );
    assert.deepEqual(victim.data, { v: "original" });
    assert.equal(victim.metadata.ownerReferences, undefined);
    for (const n of ["atk6-webhooks", "atk6-crd", "atk6-adopt"]) await admin.delete(API_VERSION, "Instance", n);
  });

  test(
    "attack 7: no window without webhooks: they stay after the controllers stop, and requesters or " +
      "approvals written without them are not trusted",
    async () => {
      await running!.stop();
      running = undefined;
      // stopped controllers leave the webhook configurations: writes fail closed
      await assert.rejects(
        carol.create(instance("atk7-closed", "atk7-closed", plainSpec("atk-user", "atk7"))),
        (e: unknown) => e instanceof KubeApiError && e.status >= 500,
      );
      // before the first start (no configurations at all): a forged requester, a forged approval
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
        await admin.delete("admissionregistration.k8s.io/v1", kind, "opcat-rukpak");
      await content("atk7", crbToClusterAdmin("atk7-carol-admin", "carol"));
      const forged = instance("atk7-forged", "atk7-forged", plainSpec("atk-user", "atk7"));
      forged.metadata.annotations = {
        "rukpak.io/requester": JSON.stringify({ username: "opcat-admin", groups: ["system:masters"] }),
        "rukpak.io/requester-signature": "forged",
      };
      await carol.create(forged);
      const selfApproved = await carol.create(
        instance("atk7-approved", "atk7-approved", plainSpec("atk-deny", "atk7")),
      );
      // alice (rukpak-approver) may write instances/status: she writes an approval herself
      await alice.replace<Instance>(
        {
          ...selfApproved,
          status: {
            approval: {
              decision: "Approved",
              reason: "ApprovedByUser",
              by: "opcat-admin",
              generation: 1,
              bundle: { name: "atk7-approved", uid: "x", generation: 1 },
              digest: "sha256:x",
              signature: "forged",
            },
            conditions: [
              {
                type: "Approved",
                status: "True",
                reason: "ApprovedByUser",
                message: "approved by opcat-admin",
                observedGeneration: 1,
                lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
              },
            ],
          },
        } as Instance,
        { subresource: "status" },
      );
      await start();
      // its content (a ConfigMap) is not even read: nobody verifiable asked for it
      const unverified = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "atk7-forged",
        (o) => cond(o, "Unpacked")?.reason === "UnpackFailed" || cond(o, "Approved")?.reason === "RequesterUnverified",
        "refused",
      );
      assert.match(
        `${cond(unverified, "Unpacked")?.message} ${cond(unverified, "Approved")?.message}`,
        /cannot be verified/,
      );
      const notApproved = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "atk7-approved",
        (o) => cond(o, "Approved")?.reason === "ApprovalNotSigned",
        "ApprovalNotSigned",
      );
      assert.equal(cond(notApproved, "Approved")?.status, "False");
      assert.match(cond(notApproved, "Approved")?.message ?? "", /not signed by opcat/);
      assert.equal(notApproved?.status?.approval, undefined, "the forged approval is removed");
      assert.equal(
        await admin.tryGet("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "atk7-carol-admin"),
        undefined,
      );
      assert.equal(await carolIsClusterAdmin(), false);
      for (const n of ["atk7-forged", "atk7-approved"]) await admin.delete(API_VERSION, "Instance", n);
    },
  );

  test("attack 12: an Instance naming a Bundle made later gets no class its creator may not use", async () => {
    await content("atk12", configMap("atk12", NS, "x"));
    // carol has no `use` on atk-allow; the Bundle does not exist yet, so admission cannot tell
    await carol.create(instance("atk12", "atk12-later"));
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "atk12-later" },
      spec: plainSpec("atk-allow", "atk12"),
    } as unknown as KubeObject);
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk12",
      (o) => cond(o, "Approved")?.reason === "ClassNotPermitted",
      "ClassNotPermitted",
    );
    assert.match(cond(inst, "Approved")?.message ?? "", /carol may not use ProvisionerClass "atk-allow"/);
    assert.equal(cond(inst, "Installed"), undefined);
    await admin.delete(API_VERSION, "Instance", "atk12");
    await admin.delete(API_VERSION, "Bundle", "atk12-later");
  });

  test("attack 2: a tag re-pushed and a replica with an empty state directory install exactly the approved " +
    "content (from the pinned digest), never the new one", { skip: registryMissing }, async () => {
    registry = await startDockerRegistry(join(tmp, "registry"));
    const ref = `${registry.host}/atk2b-bundle:v1`;
    const OPS = join(COMMUNITY, "operators");
    await pushImage(buildBundleImage(join(OPS, "cat-facts-operator", "1.1.0")), ref, { useHttp: true });
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "atk-deny-op" },
      provisioner: "operators.coreos.com/operators",
      parameters: { approval: "DenyAll" },
    } as unknown as KubeObject);
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "atk2b" },
      spec: {
        selector: { matchLabels: { attack: "atk2b" } },
        bundle: { name: "atk2b-1", spec: { class: "atk-deny-op", refs: [`docker://${ref}`] } },
      },
    } as unknown as Instance);
    await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "atk2b",
      (o) => cond(o, "Approved")?.reason === "AwaitingApproval",
      "AwaitingApproval",
    );
    await approveInstance(admin, "atk2b");
    const inst = await waitFor<Instance>(admin, API_VERSION, "Instance", "atk2b", installed("atk2b-1"), "Installed");
    const approvedDigest = inst!.status!.approval!.digest;
    // the same tag now holds another operator; a new replica starts with nothing unpacked
    await pushImage(buildBundleImage(join(OPS, "kube-green", "0.7.1")), ref, { useHttp: true });
    const record = `rukpak-instance-${inst!.metadata.uid}`;
    const before = await admin.get("v1", "ConfigMap", record, "opcat-system");
    await running!.stop();
    stateDir = join(tmp, "state-replica");
    await start();
    // its install pass rewrites the record
    await waitFor(
      admin,
      "v1",
      "ConfigMap",
      record,
      (o) => o !== undefined && o.metadata.resourceVersion !== before.metadata.resourceVersion,
      "the new replica's install pass",
      180_000,
      "opcat-system",
    );
    const now = await admin.get<Instance>(API_VERSION, "Instance", "atk2b");
    assert.equal(cond(now, "Installed")?.status, "True");
    assert.equal(now.status?.approval?.digest, approvedDigest, "still the approved content");
    const b = await admin.get<Bundle>(API_VERSION, "Bundle", "atk2b-1");
    assert.equal(b.status?.digest, approvedDigest);
    assert.equal(
      await admin.tryGet("apiextensions.k8s.io/v1", "CustomResourceDefinition", "sleepinfos.kube-green.com"),
      undefined,
      "nothing of the re-pushed tag's content",
    );
    await admin.delete(API_VERSION, "Instance", "atk2b");
  });

  test(
    "a collision is tried again: once the object in the way is gone (the garbage collector " +
      "removing a deleted Instance's objects, an admin), the Instance installs untouched",
    async () => {
      await admin.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "in-the-way", namespace: NS },
        data: { v: "someone else's" },
      } as unknown as KubeObject);
      await content("atk-later", configMap("in-the-way", NS, "mine"));
      await admin.create(instance("atk-later", "atk-later", plainSpec("atk-allow", "atk-later")));
      const collided = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "atk-later",
        (o) => cond(o, "Installed")?.reason === "ObjectCollision",
        "ObjectCollision",
      );
      assert.match(cond(collided, "Installed")?.message ?? "", /ConfigMap "in-the-way" in namespace team-a exists/);
      // its pass has written the collision and waits for its retry (the event of its own status write
      // folds into that): what follows the deletion can only be the retry
      const queue = running!.controllers.rukpak.instanceQueue;
      for (const until = Date.now() + 60_000; !queue.isBackingOff("atk-later"); ) {
        assert.ok(Date.now() < until, "the collision is not waiting to be tried again");
        await new Promise((r) => setTimeout(r, 20));
      }
      await admin.delete("v1", "ConfigMap", "in-the-way", NS);
      // no change to the Instance: its retry (the queue's backoff, at most 30 s apart) finds the way free
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "atk-later",
        installed("atk-later"),
        "Installed once the ConfigMap is gone",
      );
      assert.equal(inst?.metadata.generation, collided?.metadata.generation, "the Instance was not changed");
      const cm = await admin.get<KubeObject & { data?: Record<string, string> }>("v1", "ConfigMap", "in-the-way", NS);
      assert.deepEqual(cm.data, { v: "mine" });
      assert.equal(cm.metadata.labels?.[LABEL_INSTANCE], "atk-later");
      await admin.delete(API_VERSION, "Instance", "atk-later");
    },
  );

  test("A6: a CRD claiming the built-in kind ClusterRoleBinding never excuses the real one from dry runs", async () => {
    // a tenant who may create CRDs (some clusters let teams define their own APIs), not bind cluster-admin
    await grantClusterRole(admin, "atk-a6-crds", { user: "carol" }, [
      { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "create"] },
    ]);
    const shadow =
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n" +
      "  name: a6shadows.rbac.authorization.k8s.io\n" +
      '  annotations:\n    api-approved.kubernetes.io: "unapproved, attack test"\n' +
      "spec:\n  group: rbac.authorization.k8s.io\n  scope: Cluster\n" +
      "  names:\n    kind: ClusterRoleBinding\n    plural: a6shadows\n    singular: a6shadow\n" +
      "  versions:\n  - name: v1\n    served: true\n    storage: true\n" +
      "    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n";
    await content("atk-a6", `${shadow}---\n${crbToClusterAdmin("atk-a6-carol-admin", "carol")}`);
    try {
      // through the controllers (UserPermission): refused before any approval, nothing made
      await carol.create(instance("atk-a6", "atk-a6", plainSpec("atk-user", "atk-a6")));
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "atk-a6",
        (o) => cond(o, "Installed")?.reason === "ForbiddenAPIGroup" || cond(o, "Installed")?.status === "True",
        "refused (ForbiddenAPIGroup) or installed",
      );
      assert.equal(cond(inst, "Installed")?.reason, "ForbiddenAPIGroup", cond(inst, "Installed")?.message);
      assert.match(cond(inst, "Installed")?.message ?? "", /a6shadows\.rbac\.authorization\.k8s\.io.*built-in/);
      assert.equal(
        await admin.tryGet(
          "apiextensions.k8s.io/v1",
          "CustomResourceDefinition",
          "a6shadows.rbac.authorization.k8s.io",
        ),
        undefined,
      );
      assert.equal(
        await admin.tryGet("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "atk-a6-carol-admin"),
        undefined,
      );
      assert.equal(await carolIsClusterAdmin(), false);
      // the dry run as carol itself: the CRD is refused, the ClusterRoleBinding is tried (and refused)
      const objects = parseKubeDocuments(`${shadow}---\n${crbToClusterAdmin("atk-a6-carol-admin", "carol")}`, "a6");
      const refused = await dryRunAs(admin, { username: "carol", groups: ["dev-team"] }, objects, "atk-a6");
      assert.ok(
        refused.some((r) => /ClusterRoleBinding "atk-a6-carol-admin"/.test(r.object)),
        JSON.stringify(refused),
      );
      assert.ok(
        refused.some((r) => /built-in API group/.test(r.message)),
        JSON.stringify(refused),
      );
    } finally {
      await admin.delete(API_VERSION, "Instance", "atk-a6").catch(() => false);
      for (const [kind, name] of [
        ["ClusterRoleBinding", "atk-a6-crds"],
        ["ClusterRole", "atk-a6-crds"],
      ])
        await admin.delete("rbac.authorization.k8s.io/v1", kind, name).catch(() => false);
    }
  });

  test("the admin's own installs still work: UserPermission approves an admin's plain bundle", async () => {
    await content("atk-ok", configMap("atk-ok", NS, "ok"));
    await admin.create(instance("atk-ok", "atk-ok", plainSpec("atk-user", "atk-ok")));
    const inst = await waitFor<Instance>(admin, API_VERSION, "Instance", "atk-ok", installed("atk-ok"), "Installed");
    assert.equal(cond(inst, "Approved")?.reason, "UserPermission");
    assert.ok(inst?.status?.approval?.signature, "the approval is signed");
    const b = await admin.get<Bundle>(API_VERSION, "Bundle", "atk-ok");
    assert.equal(inst?.status?.approval?.digest, b.status?.digest);
    await admin.delete(API_VERSION, "Instance", "atk-ok");
  });
  // Trust by construction (docs/security.md): no identity is read from what a user can write, and
  // what the controllers made for their own purposes is theirs alone.
  const forbidden = (pattern: RegExp) => (e: unknown) =>
    e instanceof KubeApiError && e.status === 403 && pattern.test(e.message);

  test(
    "trust 1: an owner reference a tenant writes lends her no identity: the Instance the controllers " +
      "made from her bundle is judged as nobody, and only the controllers may change it",
    async () => {
      // an admin's Operator (no Operator controller runs here): the webhook signs the admin as its requester
      const crds = deppyCrdObjects();
      for (const c of crds) await admin.apply(c);
      await waitForCrds(
        admin,
        crds.map((c) => c.metadata.name),
      );
      const op = await admin.apply<KubeObject>({
        apiVersion: OPERATOR_API_VERSION,
        kind: "Operator",
        metadata: { name: "trust1-admin" },
        spec: { bundle: { name: "trust1-nothing", spec: plainSpec("atk-user", "trust1-nothing") } },
      } as unknown as KubeObject);
      // the tenant's bundle ships an Instance whose own bundle makes her cluster-admin
      await content("trust1-evil", crbToClusterAdmin("trust1-carol-admin", "carol"));
      await content(
        "trust1-outer",
        toYaml({
          apiVersion: API_VERSION,
          kind: "Instance",
          metadata: { name: "trust1-inner" },
          spec: {
            selector: { matchLabels: { attack: "trust1-inner" } },
            bundle: { name: "trust1-inner", spec: plainSpec("atk-user", "trust1-evil") },
          },
        }),
      );
      await carol.create(instance("trust1-outer", "trust1-outer", plainSpec("atk-user", "trust1-outer")));
      await waitFor<Instance>(admin, API_VERSION, "Instance", "trust1-outer", installed("trust1-outer"), "Installed");
      // made by the controllers for no user: nobody's rights read its content (a ConfigMap) or approve it
      const nobody = /made by opcat's controllers for no user/;
      const waits = (o: Instance | undefined) =>
        nobody.test(cond(o, "Unpacked")?.message ?? "") || nobody.test(cond(o, "Approved")?.message ?? "");
      const inner = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "trust1-inner",
        waits,
        "the nested Instance waits: nobody's rights read or approve it",
      );
      // she names the admin's Operator as its owner (uids are readable): refused by the webhook
      const owners = [
        ...(inner?.metadata.ownerReferences ?? []),
        { apiVersion: OPERATOR_API_VERSION, kind: "Operator", name: "trust1-admin", uid: op.metadata.uid! },
      ];
      await assert.rejects(
        carol.mergePatch(API_VERSION, "Instance", "trust1-inner", { metadata: { ownerReferences: owners } }),
        forbidden(/made by opcat's controllers and only they may change it/),
      );
      // nor may she re-point the Bundle the controllers made for it, or label it
      await assert.rejects(
        carol.mergePatch(API_VERSION, "Bundle", "trust1-inner", { spec: plainSpec("atk-user", "trust1-outer") }),
        forbidden(/made by opcat's controllers/),
      );
      await assert.rejects(
        carol.mergePatch(API_VERSION, "Instance", "trust1-inner", { metadata: { labels: { x: "y" } } }),
        forbidden(/made by opcat's controllers/),
      );
      // dropping its owner references (as the garbage collector may) is allowed, and lends no identity
      // either (an earlier opcat judged an Instance it made with no owner as the controllers themselves):
      // bounded, the controllers' pass after the change must not install the binding
      await carol.mergePatch(API_VERSION, "Instance", "trust1-inner", { metadata: { ownerReferences: null } });
      await assert.rejects(
        waitFor(
          admin,
          "rbac.authorization.k8s.io/v1",
          "ClusterRoleBinding",
          "trust1-carol-admin",
          (o) => o !== undefined,
          "the binding is never made",
          15_000,
        ),
        /timed out/,
      );
      assert.equal(await carolIsClusterAdmin(), false);
      assert.ok(waits(await admin.get<Instance>(API_VERSION, "Instance", "trust1-inner")), "it still waits");
      for (const n of ["trust1-outer", "trust1-inner"]) await admin.delete(API_VERSION, "Instance", n);
      await admin.delete(OPERATOR_API_VERSION, "Operator", "trust1-admin");
    },
  );

  test("trust 5: a pivot deletes nothing its requester could not delete themselves", async () => {
    await content("trust5-a", configMap("trust5-victim", "kube-system", "the admin's"));
    await content("trust5-b", configMap("trust5-b", NS, "harmless"));
    await admin.create(instance("trust5", "trust5-a", plainSpec("atk-user", "trust5-a")));
    await waitFor<Instance>(admin, API_VERSION, "Instance", "trust5", installed("trust5-a"), "Installed");
    // the tenant (update on instances) re-points the admin's Instance at harmless content of her own:
    // what she may create is judged, and so is what the pivot would prune
    await carol.mergePatch(API_VERSION, "Instance", "trust5", {
      spec: { bundle: { name: "trust5-b", spec: plainSpec("atk-user", "trust5-b") } },
    });
    const decided = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "trust5",
      (o) => {
        const c = cond(o, "Approved") as { reason?: string; observedGeneration?: number } | undefined;
        return (
          c?.observedGeneration === o?.metadata.generation &&
          (c?.reason === "InsufficientPermissions" || c?.reason === "UserPermission")
        );
      },
      "the pivot decided",
    );
    assert.equal(cond(decided, "Approved")?.reason, "InsufficientPermissions");
    assert.match(cond(decided, "Approved")?.message ?? "", /carol may not delete ConfigMap kube-system\/trust5-victim/);
    assert.ok(await admin.tryGet("v1", "ConfigMap", "trust5-victim", "kube-system"), "the admin's ConfigMap stays");
    await admin.delete(API_VERSION, "Instance", "trust5");
  });
  test(
    "a dry run that fails for another reason than rights (an immutable field) is retried until it clears, " +
      "never taken for missing permissions",
    async () => {
      const deployment = (app: string) =>
        toYaml({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "conflict-dep", namespace: NS },
          spec: {
            selector: { matchLabels: { app } },
            template: {
              metadata: { labels: { app } },
              spec: { containers: [{ name: "c", image: "registry.invalid/none:1" }] },
            },
          },
        });
      // a Deployment of the bundle's name is in the way, with another (immutable) selector
      await admin.apply(fromYaml(deployment("someone-else")) as KubeObject);
      await content("conflict", deployment("mine"));
      await admin.create(instance("conflict", "conflict", plainSpec("atk-user", "conflict")));
      const waiting = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "conflict",
        (o) => ["DryRunFailed", "InsufficientPermissions"].includes(cond(o, "Approved")?.reason ?? ""),
        "the dry run refused",
      );
      assert.equal(cond(waiting, "Approved")?.reason, "DryRunFailed", cond(waiting, "Approved")?.message);
      assert.match(cond(waiting, "Approved")?.message ?? "", /immutable/);
      // the obstacle goes: with no change to the Instance, its retry installs it
      await admin.delete("apps/v1", "Deployment", "conflict-dep", NS);
      const done = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "conflict",
        installed("conflict"),
        "Installed",
      );
      assert.equal(done?.metadata.generation, waiting?.metadata.generation, "the Instance was not changed");
      await admin.delete(API_VERSION, "Instance", "conflict");
    },
  );
});
