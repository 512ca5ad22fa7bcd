import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { atomsOf, covers, formatAtom, newObjectPrivileges, newPermissions } from "./android.js";
import { selectorMatches } from "../kube/selector.js";
import { grantedRules, type GrantedRule } from "../rukpak/permissions.js";
import type { KubeObject } from "../kube/client.js";
import {
  bundlesOf,
  entryProperties,
  formatPropertiesAnnotation,
  parsePropertiesAnnotation,
  parseResolveset,
} from "./resolver.js";
import { classForEntry, resolvesetApprovalOf } from "./resolveset.js";
import { defaultInputClasses, resolvesetProvisionerClass } from "./api.js";
import type { ResolveSet } from "../../resolve/index.js";
import type { JsonValue } from "../../fbc/types.js";

const rule = (r: Partial<GrantedRule>): GrantedRule => ({
  scope: "cluster",
  verbs: [],
  apiGroups: [""],
  resources: [],
  subject: "ServiceAccount ns/sa",
  ...r,
});

test("android: the same rules add nothing; a first install adds everything it grants", () => {
  const rules = [
    rule({ verbs: ["get", "list"], resources: ["pods"] }),
    rule({ scope: "ops", verbs: ["create"], apiGroups: ["apps"], resources: ["deployments"] }),
  ];
  assert.deepEqual(newPermissions(rules, rules), []);
  assert.deepEqual(newPermissions([], rules), [
    "create deployments.apps in namespace ops for ServiceAccount ns/sa",
    "get pods cluster-wide for ServiceAccount ns/sa",
    "list pods cluster-wide for ServiceAccount ns/sa",
  ]);
});

test("android: wildcards, subresources, resource names, non-resource URLs and scope", () => {
  const star = [rule({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] })];
  assert.deepEqual(
    newPermissions(star, [rule({ verbs: ["delete"], apiGroups: ["apps"], resources: ["deployments/scale"] })]),
    [],
  );
  // a namespaced grant does not cover the same verb cluster-wide
  assert.deepEqual(
    newPermissions(
      [rule({ scope: "a", verbs: ["get"], resources: ["secrets"] })],
      [rule({ verbs: ["get"], resources: ["secrets"] })],
    ),
    ["get secrets cluster-wide for ServiceAccount ns/sa"],
  );
  // a cluster-wide grant covers every namespace
  assert.deepEqual(
    newPermissions(
      [rule({ verbs: ["get"], resources: ["secrets"] })],
      [rule({ scope: "b", verbs: ["get"], resources: ["secrets"] })],
    ),
    [],
  );
  // named resources: covered only by the same names or by a rule without names
  assert.deepEqual(
    newPermissions(
      [rule({ verbs: ["update"], resources: ["configmaps"], resourceNames: ["a"] })],
      [rule({ verbs: ["update"], resources: ["configmaps"], resourceNames: ["a", "b"] })],
    ),
    ["update configmaps named b cluster-wide for ServiceAccount ns/sa"],
  );
  assert.deepEqual(
    newPermissions(
      [rule({ verbs: ["update"], resources: ["configmaps"], resourceNames: ["a"] })],
      [rule({ verbs: ["update"], resources: ["configmaps"] })],
    ),
    ["update configmaps cluster-wide for ServiceAccount ns/sa"],
  );
  assert.deepEqual(
    newPermissions(
      [rule({ verbs: ["get"], resources: ["pods/*"] })],
      [rule({ verbs: ["get"], resources: ["pods/log"] })],
    ),
    [],
  );
  assert.deepEqual(
    newPermissions(
      [rule({ verbs: ["get"], resources: [], nonResourceURLs: ["/metrics*"] })],
      [rule({ verbs: ["get"], resources: [], nonResourceURLs: ["/metrics/cadvisor", "/healthz"] })],
    ),
    ["get non-resource URL /healthz cluster-wide for ServiceAccount ns/sa"],
  );
});

test("android (A3): the same rights for another subject are new; subjects are compared exactly", () => {
  const get = (subject: string) => rule({ verbs: ["get"], resources: ["pods"], subject });
  for (const other of [
    "ServiceAccount b/x",
    "ServiceAccount a/y",
    "Group system:authenticated",
    "User mallory",
    "Group dev-team",
  ])
    assert.deepEqual(newPermissions([get("ServiceAccount a/x")], [get("ServiceAccount a/x"), get(other)]), [
      `get pods cluster-wide for ${other}`,
    ]);
  assert.deepEqual(newPermissions([get("Group g")], [get("Group g")]), []);
});

test("grantedRules: subjects of shipped bindings, a RoleBinding's ServiceAccount without namespace in its own", () => {
  const rules = grantedRules([
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "r" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "b", namespace: "ns1" },
      roleRef: { kind: "ClusterRole", name: "r" },
      subjects: [
        { kind: "ServiceAccount", name: "op" },
        { kind: "Group", name: "system:authenticated" },
      ],
    },
  ] as unknown as KubeObject[]);
  assert.deepEqual(
    rules.map((r) => `${r.subject} ${r.scope}`),
    ["ServiceAccount ns1/op ns1", "Group system:authenticated ns1"],
  );
});

const obj = (apiVersion: string, kind: string, name: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, ...((extra.metadata as object) ?? {}) }, ...extra, ...{} }) as KubeObject;
const cr = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name, labels },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    ...extra,
  }) as KubeObject;

test("android (A4): aggregationRules and aggregated labels are new unless identical in the installed content", () => {
  const agg = cr("agg", {}, { rules: [], aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: "y" } }] } });
  assert.match(newObjectPrivileges([], [agg], []).join(), /aggregates the rules of other ClusterRoles/);
  assert.deepEqual(newObjectPrivileges([agg], [agg], []), []);
  // a changed selector is new again
  const wider = cr("agg", {}, { rules: [], aggregationRule: { clusterRoleSelectors: [{}] } });
  assert.equal(newObjectPrivileges([agg], [wider], []).length, 1);
  for (const to of ["view", "edit", "admin"]) {
    const r = cr("widen", { [`rbac.authorization.k8s.io/aggregate-to-${to}`]: "true" });
    assert.match(newObjectPrivileges([], [r], []).join(), /adds its rules to other ClusterRoles/);
    assert.deepEqual(newObjectPrivileges([r], [r], []), []);
    // the same labels with more rules: new
    const more = cr(
      "widen",
      { [`rbac.authorization.k8s.io/aggregate-to-${to}`]: "true" },
      { rules: [{ verbs: ["*"] }] },
    );
    assert.equal(newObjectPrivileges([r], [more], []).length, 1);
  }
  // a label an aggregationRule of the cluster (or of the same content) selects
  const sel = [{ matchExpressions: [{ key: "team", operator: "In", values: ["ops"] }] }];
  assert.equal(newObjectPrivileges([], [cr("r", { team: "ops" })], sel).length, 1);
  assert.deepEqual(newObjectPrivileges([], [cr("r", { team: "dev" })], sel), []);
  assert.equal(newObjectPrivileges([agg], [agg, cr("r", { x: "y" })], []).length, 1);
  assert.equal(selectorMatches({}, {}), true);
  assert.equal(selectorMatches({ matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, { a: "" }), false);
  assert.equal(selectorMatches({ matchExpressions: [{ key: "a", operator: "Bogus" }] }, { a: "" }), false);
});

test("android (A7): webhooks, APIServices, conversion webhooks, tokens, unknown kinds, new workload SAs", () => {
  const vwc = obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "w", { webhooks: [] });
  const mwc = obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "m", { webhooks: [] });
  const api = obj("apiregistration.k8s.io/v1", "APIService", "v1.x.io", { spec: { group: "x.io" } });
  const conv = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "as.x.io", {
    spec: { group: "x.io", names: { kind: "A" }, conversion: { strategy: "Webhook" } },
  });
  const token = obj("v1", "Secret", "t", { type: "kubernetes.io/service-account-token" });
  const other = obj("example.org/v1", "Grant", "g");
  for (const o of [vwc, mwc, api, conv, token, other]) {
    assert.equal(newObjectPrivileges([], [o], []).length, 1, o.kind);
    assert.deepEqual(newObjectPrivileges([o], [o], []), [], o.kind);
  }
  // what grants nothing by itself is never new
  const crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "as.x.io", {
    spec: { group: "x.io", names: { kind: "A" } },
  });
  const quiet = [
    crd,
    obj("x.io/v1", "A", "mine"),
    obj("v1", "ConfigMap", "c"),
    obj("v1", "Secret", "s", { type: "Opaque" }),
    obj("v1", "Service", "svc", { spec: { ports: [] } }),
  ];
  assert.deepEqual(newObjectPrivileges([], quiet, []), []);
  // a ServiceAccount of the workloads: new, or changed (an annotation may name a cloud identity)
  const sa = obj("v1", "ServiceAccount", "op");
  const irsa = obj("v1", "ServiceAccount", "op", {
    metadata: { name: "op", annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/admin" } },
  });
  assert.equal(newObjectPrivileges([], [sa], []).length, 1);
  assert.deepEqual(newObjectPrivileges([sa], [sa], []), []);
  assert.equal(newObjectPrivileges([sa], [irsa], []).length, 1);
  // a custom resource of a kind a CRD in a built-in group claims is not the bundle's own
  const shadow = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "x", {
    spec: { group: "rbac.authorization.k8s.io", names: { kind: "Thing" } },
  });
  assert.equal(newObjectPrivileges([], [shadow, obj("rbac.authorization.k8s.io/v1", "Thing", "t")], []).length, 1);
  // workloads: a ServiceAccount no installed workload ran as (the default one included)
  const dep = (sa?: string) =>
    ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "op", namespace: "ns" },
      spec: { template: { spec: { ...(sa ? { serviceAccountName: sa } : {}), containers: [] } } },
    }) as unknown as KubeObject;
  assert.deepEqual(newObjectPrivileges([dep("op")], [dep("op")], []), []);
  assert.deepEqual(newObjectPrivileges([dep("op")], [dep("builder")], []), [
    'Deployment "op" runs as ServiceAccount ns/builder, which no installed workload runs as',
  ]);
  assert.equal(newObjectPrivileges([dep("op")], [dep()], []).length, 1);
});

const arbRule = fc.record({
  scope: fc.constantFrom("cluster", "a", "b"),
  verbs: fc.subarray(["get", "list", "create", "delete", "*"], { minLength: 1 }),
  apiGroups: fc.subarray(["", "apps", "*"], { minLength: 1 }),
  resources: fc.subarray(["pods", "secrets", "pods/log", "*"], { minLength: 1 }),
  resourceNames: fc.option(fc.subarray(["x", "y"], { minLength: 1 }), { nil: undefined }),
  subject: fc.constantFrom("ServiceAccount ns/sa", "Group g"),
});

test(
  "android (property): a rule set never adds to itself or to a " +
    "superset; the new permissions are exactly the atoms not covered",
  () => {
    fc.assert(
      fc.property(fc.array(arbRule, { maxLength: 4 }), fc.array(arbRule, { maxLength: 4 }), (a, b) => {
        const ga = a as GrantedRule[];
        const gb = b as GrantedRule[];
        assert.deepEqual(newPermissions(ga, ga), []);
        assert.deepEqual(newPermissions([...ga, ...gb], gb), []);
        const fresh = newPermissions(ga, gb);
        for (const r of gb)
          for (const at of atomsOf(r)) if (ga.some((x) => covers(x, at))) assert.ok(!fresh.includes(formatAtom(at)));
        // adding what is new to the current set leaves nothing new
        return newPermissions([...ga, ...gb], [...gb, ...ga]).length === 0;
      }),
    );
  },
);

test("resolveset content and the olm.properties annotation round-trip", () => {
  const props: { type: string; value: JsonValue }[] = [
    { type: "olm.package", value: { packageName: "p", version: "1.0.0" } },
    { type: "olm.gvk", value: { group: "g", version: "v1", kind: "K" } },
  ];
  const text = formatPropertiesAnnotation(props);
  assert.equal(
    text,
    '{"olm.package":{"packageName":"p","version":"1.0.0"}}\n{"olm.gvk":{"group":"g","version":"v1","kind":"K"}}',
  );
  assert.deepEqual(parsePropertiesAnnotation(text), props);
  assert.equal(parsePropertiesAnnotation('{"a":1,"b":2}'), 'line 1: expected one {"<type>": <value>} object');
  assert.match(String(parsePropertiesAnnotation("\n{oops")), /^line 2: /);
  assert.deepEqual(
    parseResolveset('{"schema":"olm.bundle","name":"a"}\n\n{"schema":"olm.bundle","name":"b"}\n').map((e) => e.name),
    ["a", "b"],
  );
});

test("a resolveset entry keeps olm.csv.metadata as its minKubeVersion alone (annotations hold 256 KiB)", () => {
  const big = "x".repeat(300_000);
  const props: { type: string; value: JsonValue }[] = [
    { type: "olm.package", value: { packageName: "p", version: "1.0.0" } },
    { type: "olm.csv.metadata", value: { description: big, minKubeVersion: "1.25.0", annotations: { a: big } } },
    { type: "olm.gvk", value: { group: "g", version: "v1", kind: "K" } },
  ];
  assert.deepEqual(entryProperties(props), [
    props[0],
    { type: "olm.csv.metadata", value: { minKubeVersion: "1.25.0" } },
    props[2],
  ]);
  // no minimum version: nothing of it is kept
  assert.deepEqual(entryProperties([{ type: "olm.csv.metadata", value: { description: big } }, props[0]]), [props[0]]);
  assert.ok(formatPropertiesAnnotation(entryProperties(props)).length < 200);
});

test("an Input's resolveset: the bundles it requested and, transitively, their dependencies", () => {
  const b = (name: string, requestedBy: string[], dependencyOf: string[]) =>
    ({ name, requestedBy, dependencyOf }) as unknown as ResolveSet["bundles"][number];
  const rs = {
    bundles: [
      b("app", ["in"], []),
      b("dep", [], ["app"]),
      b("depdep", [], ["dep"]),
      b("other", ["in2"], []),
      b("shared", [], ["other", "app"]),
    ],
  } as ResolveSet;
  assert.deepEqual(
    bundlesOf(rs, "in").map((x) => x.name),
    ["app", "dep", "depdep", "shared"],
  );
  assert.deepEqual(
    bundlesOf(rs, "in2").map((x) => x.name),
    ["other", "shared"],
  );
});

test("matchBundle / matchSchema pick an entry's class; approval defaults to Android", () => {
  const pc = resolvesetProvisionerClass();
  assert.equal(classForEntry(pc, { schema: "olm.bundle" }), "olm.bundle");
  assert.equal(classForEntry(pc, { schema: "helm.chart" }), undefined);
  assert.equal(
    classForEntry(
      { ...pc, parameters: { matchSchema: [{ schema: "helm.chart", class: "helm" }] } },
      { schema: "helm.chart" },
    ),
    "helm",
  );
  assert.equal(resolvesetApprovalOf(pc), "Android");
  assert.equal(resolvesetApprovalOf({ ...pc, parameters: { approval: "DenyAll" } }), "DenyAll");
  assert.equal(resolvesetApprovalOf(undefined), "Android");
});

test("default InputClasses: the seed's five, dry-run-next at the next minor release", () => {
  const cs = defaultInputClasses({ kube: "1.36", ocp: "4.19" });
  assert.deepEqual(
    cs.map((c) => c.metadata.name),
    ["subscription", "force", "minimal-version", "dry-run", "dry-run-next"],
  );
  assert.deepEqual(cs[4].parameters?.constraints, [
    { type: "minKubeVersion", value: ">= 1.36" },
    { type: "minOCPVersion", value: ">= 4.19" },
  ]);
  assert.deepEqual(defaultInputClasses()[4].parameters?.constraints, [
    { type: "minKubeVersion", value: ">= 1.21" },
    { type: "minOCPVersion", value: ">= 4.8" },
  ]);
  assert.equal(cs[1].parameters?.force, true);
  assert.equal(cs[0].parameters?.generateInputsForDependencies, true);
});

test(
  "opcat cluster manifests carry the Deppy and Operator " + "CRDs, the resolveset class and the default InputClasses",
  async () => {
    const { clusterManifests } = await import("../manifests.js");
    for (const local of [true, false]) {
      const objs = clusterManifests({ local });
      const crds = objs
        .filter((o) => o.kind === "CustomResourceDefinition")
        .map((o) => o.metadata.name)
        .sort();
      assert.deepEqual(crds, [
        "bundles.rukpak.io",
        "clustercatalogs.olm.operatorframework.io",
        "clusterextensions.olm.operatorframework.io",
        "inputclasses.deppy.io",
        "inputs.deppy.io",
        "instances.rukpak.io",
        "operators.operators.coreos.com",
        "provisionerclasses.rukpak.io",
      ]);
      assert.ok(objs.some((o) => o.kind === "ProvisionerClass" && o.metadata.name === "deppy.resolveset"));
      assert.equal(objs.filter((o) => o.kind === "InputClass").length, 5);
      // in the cluster, the webhooks exist (and fail closed) from the moment the manifests are applied
      const hooks = objs.filter((o) => o.kind.endsWith("WebhookConfiguration"));
      assert.deepEqual(
        hooks.map((o) => o.kind),
        local ? [] : ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"],
      );
      for (const h of hooks)
        for (const w of h.webhooks as { failurePolicy: string; clientConfig: Record<string, unknown> }[]) {
          assert.equal(w.failurePolicy, "Fail");
          assert.deepEqual(Object.keys(w.clientConfig), ["service"], "no CA until a controller makes one");
        }
    }
  },
);
