/**
 * Attacks on Android approval (seed 002, docs/security.md) on a real API server: an update is
 * approved without an approver when Android finds no new privilege, so every privilege a bundle can
 * add must be counted. Each test is a bundle update an earlier Android called `NoNewPermissions`;
 * the comparison is the one the resolveset provisioner makes (`newPrivilegesInCluster`), with the
 * existing roles and aggregation rules read from the API server.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject } from "../../src/cluster/client.js";
import { newPrivilegesInCluster } from "../../src/cluster/deppy/android.js";
import { clientAs, clusterKubeconfig } from "./harness.js";

const cluster = clusterKubeconfig();
const RBAC = "rbac.authorization.k8s.io/v1";

type Subject = { kind: string; name: string; namespace?: string; apiGroup?: string };

const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules, ...extra }) as unknown as KubeObject;

const crb = (name: string, role: string, subjects: Subject[]): KubeObject =>
  ({
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  }) as unknown as KubeObject;

const rb = (name: string, ns: string, role: string, subjects: Subject[]): KubeObject =>
  ({
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: { name, namespace: ns },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  }) as unknown as KubeObject;

const OPERATOR: Subject = { kind: "ServiceAccount", name: "op", namespace: "op-system" };

describe("attacks on Android approval (real API server)", { skip: cluster.skip, concurrency: false }, () => {
  let admin: KubeClient;
  const made: KubeObject[] = [];

  before(() => {
    if (cluster.skip !== false) return;
    admin = clientAs(cluster.kubeconfig, "admin");
  });

  after(async () => {
    for (const o of made.reverse())
      await admin?.delete(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace).catch(() => false);
    admin?.close();
  });

  async function sar(user: string, groups: string[], verb: string, resource: string): Promise<boolean> {
    const r = await admin.request<{ status?: { allowed?: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: { user, groups, resourceAttributes: { verb, group: "", resource, namespace: "kube-system" } },
        },
      },
    );
    return r.status?.allowed === true;
  }

  test("A3: the same ClusterRole newly bound to other subjects is a new permission, for each subject", async () => {
    const reader = clusterRole("a3-secret-reader", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
    const current = [reader, crb("a3-op", "a3-secret-reader", [OPERATOR])];
    // the installed content adds nothing to itself
    assert.deepEqual(await newPrivilegesInCluster(admin, current, current), []);
    const others: Subject[] = [
      { kind: "Group", name: "system:authenticated", apiGroup: "rbac.authorization.k8s.io" },
      { kind: "User", name: "mallory", apiGroup: "rbac.authorization.k8s.io" },
      { kind: "Group", name: "dev-team", apiGroup: "rbac.authorization.k8s.io" },
      { kind: "ServiceAccount", name: "op", namespace: "other" },
    ];
    for (const s of others) {
      const next = [...current, crb("a3-extra", "a3-secret-reader", [s])];
      const added = await newPrivilegesInCluster(admin, current, next);
      assert.ok(
        added.some((p) => p.includes("get secrets cluster-wide") && p.includes(s.name)),
        `${s.kind} ${s.name}: ${added.join("; ") || "nothing new"}`,
      );
    }
    // an existing role (`view`, read from the API server) moved from the operator to everyone
    const was = [rb("a3-view", "op-system", "view", [OPERATOR])];
    const now = [rb("a3-view", "op-system", "view", [others[0]!])];
    const moved = await newPrivilegesInCluster(admin, was, now);
    assert.ok(
      moved.some((p) => /^list pods in namespace op-system for Group system:authenticated$/.test(p)),
      moved.join("\n") || "nothing new",
    );
    // what the attack gets, on the API server: every authenticated user reads kube-system's Secrets
    assert.equal(await sar("eve", ["system:authenticated"], "get", "secrets"), false);
    for (const o of [reader, crb("a3-extra", "a3-secret-reader", [others[0]!])]) {
      await admin.apply(o);
      made.push(o);
    }
    // RBAC's cache follows within moments
    let allowed = false;
    for (let i = 0; i < 50 && !allowed; i++) {
      allowed = await sar("eve", ["system:authenticated"], "get", "secrets");
      if (!allowed) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(allowed, true);
  });
});
