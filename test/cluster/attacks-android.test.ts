/**
 * Attacks on Android approval (seed 002, docs/security.md) on a real API server: an update is
 * approved without an approver when Android finds no new privilege, so every privilege a bundle can
 * add must be counted. Each test is a bundle update an earlier Android called `NoNewPermissions`;
 * the comparison is the one the resolveset provisioner makes (`newPrivilegesInCluster`), with the
 * existing roles and aggregation rules read from the API server.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { newPrivilegesInCluster } from "../../src/cluster/deppy/android.js";
import { convertRegistryV1 } from "../../src/cluster/rukpak/convert.js";
import { clientAs, clusterKubeconfig } from "./harness.js";
import { bundle, modes } from "./registryv1.js";

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

  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`${what}: not within 10 s`);
  }

  const rulesOf = async (name: string) =>
    ((await admin.get(RBAC, "ClusterRole", name)).rules as { resources?: string[] }[] | undefined) ?? [];

  test("A4: an aggregationRule and an aggregate-to-* label are new privileges", async () => {
    // the installed content: a role without rules, bound to the operator
    const empty = clusterRole("a4-agg", []);
    const binding = crb("a4-agg", "a4-agg", [OPERATOR]);
    const aggregating = clusterRole("a4-agg", [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } }] },
    });
    const added = await newPrivilegesInCluster(admin, [empty, binding], [aggregating, binding]);
    assert.ok(
      added.some((p) => p.includes('ClusterRole "a4-agg" aggregates')),
      added.join("\n") || "nothing new",
    );
    assert.deepEqual(await newPrivilegesInCluster(admin, [aggregating, binding], [aggregating, binding]), []);
    // what the update gets: the API server fills in the rules of every bootstrap role a moment later
    await admin.apply(aggregating);
    made.push(aggregating);
    await eventually("a4-agg aggregated", async () => (await rulesOf("a4-agg")).length > 0);

    // a ClusterRole labelled aggregate-to-view widens every user's `view`
    const widen = clusterRole("a4-widen", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }], {
      metadata: { name: "a4-widen", labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } },
    });
    const widened = await newPrivilegesInCluster(admin, [], [widen]);
    assert.ok(
      widened.some((p) => p.includes('ClusterRole "a4-widen" adds its rules')),
      widened.join("\n") || "nothing new",
    );
    await admin.apply(widen);
    made.push(widen);
    await eventually("view includes secrets", async () =>
      (await rulesOf("view")).some((r) => r.resources?.includes("secrets")),
    );

    // a label an aggregationRule existing in the cluster (not in the bundle) selects
    const sink = clusterRole("a4-sink", [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "example.com/a4": "sink" } }] },
    });
    await admin.apply(sink);
    made.push(sink);
    const feeder = clusterRole("a4-feeder", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }], {
      metadata: { name: "a4-feeder", labels: { "example.com/a4": "sink" } },
    });
    const fed = await newPrivilegesInCluster(admin, [], [feeder]);
    assert.ok(
      fed.some((p) => p.includes('ClusterRole "a4-feeder" has labels an aggregating ClusterRole selects')),
      fed.join("\n") || "nothing new",
    );
  });

  test("A7: webhooks (a CSV's webhookdefinitions), APIServices, conversion webhooks, new workload SAs", async () => {
    const csv = (extra: Record<string, unknown>, sa = "op") =>
      convertRegistryV1(
        bundle({
          installModes: modes("AllNamespaces"),
          install: {
            strategy: "deployment",
            spec: {
              deployments: [
                {
                  name: "op",
                  spec: {
                    selector: { matchLabels: { app: "op" } },
                    template: {
                      metadata: { labels: { app: "op" } },
                      spec: { serviceAccountName: sa, containers: [{ name: "op", image: "example.com/op:1" }] },
                    },
                  },
                },
              ],
              clusterPermissions: [
                { serviceAccountName: sa, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
              ],
            },
          },
          ...extra,
        }),
        { installNamespace: "op-system" },
      ).objects;
    const v1 = csv({});
    assert.deepEqual(await newPrivilegesInCluster(admin, v1, v1), []);
    const hooked = csv({
      webhookdefinitions: [
        {
          type: "MutatingAdmissionWebhook",
          generateName: "m.example.com",
          deploymentName: "op",
          containerPort: 8443,
          webhookPath: "/mutate",
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["secrets"] }],
        },
      ],
    });
    const mutating = await newPrivilegesInCluster(admin, v1, hooked);
    assert.ok(
      mutating.some((p) => p.startsWith('MutatingWebhookConfiguration "m.example.com"')),
      mutating.join("\n") || "nothing new",
    );
    // the same operator running as another ServiceAccount of its namespace (with the same rules)
    const moved = await newPrivilegesInCluster(admin, v1, csv({}, "builder"));
    assert.ok(
      moved.some((p) => /runs as ServiceAccount op-system\/builder/.test(p)),
      moved.join("\n") || "nothing new",
    );
    // an APIService and a CRD with a conversion webhook beside the same operator
    const apiService = {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1.a7.example.com" },
      spec: {
        group: "a7.example.com",
        version: "v1",
        service: { name: "op", namespace: "op-system" },
        groupPriorityMinimum: 100,
        versionPriority: 10,
      },
    } as unknown as KubeObject;
    const converting = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "things.a7.example.com" },
      spec: {
        group: "a7.example.com",
        names: { kind: "Thing", plural: "things" },
        scope: "Namespaced",
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }],
        conversion: {
          strategy: "Webhook",
          webhook: {
            conversionReviewVersions: ["v1"],
            clientConfig: { service: { name: "op", namespace: "op-system" } },
          },
        },
      },
    } as unknown as KubeObject;
    const more = await newPrivilegesInCluster(admin, v1, [...v1, apiService, converting]);
    assert.ok(
      more.some((p) => p.startsWith('APIService "v1.a7.example.com"')),
      more.join("\n") || "nothing new",
    );
    assert.ok(
      more.some((p) => p.startsWith('CustomResourceDefinition "things.a7.example.com" sends its objects')),
      more.join("\n") || "nothing new",
    );
    // both are objects the API server accepts as they are
    for (const o of [apiService, converting])
      await admin.request("POST", await admin.path(o.apiVersion, o.kind), {
        body: o,
        query: { dryRun: "All" },
      });
  });
});
