import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle, crd, deployments, modes, owned } from "../../../../test/cluster/registryv1.js";
import type { KubeObject } from "../../kube/client.js";
import { type ConvertOptions, type GenerateContext, generateContext, renderContext } from "./context.js";
import {
  addCertVolumes,
  certificateRequests,
  type Generator,
  generateAdditionalResources,
  generateClusterPermissions,
  generateCRDs,
  generateDeployments,
  generatePermissions,
  generateServiceAccounts,
  generateWebhookConfigurations,
  generateWebhookServices,
  rbacName,
} from "./generators.js";
import type { JsonObj } from "./json.js";

/** The generators' context of a bundle with this CSV spec and these manifests (validation assumed passed). */
function context(spec: JsonObj, opts: ConvertOptions = {}, objects: JsonObj[] = []): GenerateContext {
  const ctx = renderContext(
    bundle({ installModes: modes("AllNamespaces", "OwnNamespace", "MultiNamespace"), ...spec }, objects),
    {
      installNamespace: "op-ns",
      ...opts,
    },
  );
  assert.ok(typeof ctx.targetNamespaces !== "string", ctx.targetNamespaces as string);
  return generateContext(ctx, ctx.targetNamespaces);
}
/** kind/namespace/name of each object. */
const ids = (objects: KubeObject[]) =>
  objects.map((o) => [o.kind, o.metadata.namespace, o.metadata.name].filter((x) => x !== undefined).join("/"));
const perms = (key: "permissions" | "clusterPermissions", ...sas: string[]) => ({
  [key]: sas.map((serviceAccountName) => ({
    serviceAccountName,
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
  })),
});
const strategy = (spec: JsonObj) => ({ install: { spec } });

interface Case {
  name: string;
  spec?: JsonObj;
  opts?: ConvertOptions;
  objects?: JsonObj[];
  want: string[];
}
function table(generatorName: string, generate: Generator, cases: Case[]): void {
  for (const c of cases)
    test(`${generatorName}: ${c.name}`, () => {
      assert.deepEqual(ids(generate(context(c.spec ?? {}, c.opts, c.objects))), c.want);
    });
}

const role = (sa: string) => rbacName("pkg.v1.0.0", sa, perms("permissions", sa).permissions[0].rules);
const withNamespaces = (sa: string) =>
  rbacName("pkg.v1.0.0", sa, [
    ...perms("permissions", sa).permissions[0].rules,
    { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] },
  ]);

table("generateServiceAccounts", generateServiceAccounts, [
  { name: "none", want: [] },
  {
    name: "from permissions, clusterPermissions and deployments, once each, never default",
    spec: strategy({
      ...perms("permissions", "a", "default"),
      ...perms("clusterPermissions", "b", "a"),
      deployments: [
        { name: "op", spec: { template: { spec: { serviceAccountName: "c" } } } },
        { name: "op2", spec: { template: { spec: { serviceAccountName: "default" } } } },
      ],
    }),
    want: ["ServiceAccount/op-ns/a", "ServiceAccount/op-ns/b", "ServiceAccount/op-ns/c"],
  },
  { name: "empty name is default", spec: strategy(perms("permissions", "")), want: [] },
]);

table("generatePermissions", generatePermissions, [
  { name: "AllNamespaces: none (cluster roles instead)", spec: strategy(perms("permissions", "a")), want: [] },
  {
    name: "own namespace",
    spec: strategy(perms("permissions", "a")),
    opts: { watchNamespaces: ["op-ns"] },
    want: [`Role/op-ns/${role("a")}`, `RoleBinding/op-ns/${role("a")}`],
  },
  {
    name: "two namespaces: the Roles, then the RoleBindings",
    spec: strategy(perms("permissions", "a")),
    opts: { watchNamespaces: ["x", "y"] },
    want: [`Role/x/${role("a")}`, `Role/y/${role("a")}`, `RoleBinding/x/${role("a")}`, `RoleBinding/y/${role("a")}`],
  },
]);

table("generateClusterPermissions", generateClusterPermissions, [
  { name: "none", want: [] },
  {
    name: "AllNamespaces: permissions become cluster roles with namespace discovery",
    spec: strategy({ ...perms("clusterPermissions", "b"), ...perms("permissions", "a") }),
    want: [
      `ClusterRole/${role("b")}`,
      `ClusterRole/${withNamespaces("a")}`,
      `ClusterRoleBinding/${role("b")}`,
      `ClusterRoleBinding/${withNamespaces("a")}`,
    ],
  },
  {
    name: "own namespace: clusterPermissions only",
    spec: strategy({ ...perms("clusterPermissions", "b"), ...perms("permissions", "a") }),
    opts: { watchNamespaces: ["op-ns"] },
    want: [`ClusterRole/${role("b")}`, `ClusterRoleBinding/${role("b")}`],
  },
]);

table("generateAdditionalResources", generateAdditionalResources, [
  {
    name: "namespaced kinds moved into the install namespace, the others left",
    objects: [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "elsewhere" } },
      { apiVersion: "v1", kind: "Service", metadata: { name: "s" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "r" } },
      { apiVersion: "autoscaling.k8s.io/v1", kind: "VerticalPodAutoscaler", metadata: { name: "v", namespace: "n" } },
    ],
    want: ["ConfigMap/op-ns/c", "Service/op-ns/s", "ClusterRole/r", "VerticalPodAutoscaler/n/v"],
  },
  { name: "CRDs are not additional resources", objects: [crd("a.example.com")], want: [] },
]);

table("generateWebhookConfigurations", generateWebhookConfigurations, [
  {
    name: "validating and mutating, in CSV order; conversion webhooks left to the CRDs",
    spec: {
      ...deployments("op"),
      webhookdefinitions: [
        { type: "MutatingAdmissionWebhook", generateName: "m-", deploymentName: "op" },
        { type: "ConversionWebhook", generateName: "c", deploymentName: "op", conversionCRDs: [] },
        { type: "ValidatingAdmissionWebhook", generateName: "v.example.com", deploymentName: "op" },
      ],
    },
    want: ["MutatingWebhookConfiguration/m", "ValidatingWebhookConfiguration/v.example.com"],
  },
]);

table("generateWebhookServices", generateWebhookServices, [
  { name: "no webhooks", spec: deployments("op"), want: [] },
  {
    name: "one Service per deployment serving webhooks",
    spec: {
      ...deployments("a", "b", "c"),
      webhookdefinitions: [
        { type: "ValidatingAdmissionWebhook", generateName: "v1", deploymentName: "b" },
        { type: "ValidatingAdmissionWebhook", generateName: "v2", deploymentName: "a" },
        { type: "MutatingAdmissionWebhook", generateName: "m", deploymentName: "b" },
      ],
    },
    want: ["Service/op-ns/b-service", "Service/op-ns/a-service"],
  },
]);

test("generateWebhookConfigurations: the webhook, limited to the target namespaces outside AllNamespaces", () => {
  const ctx = context(
    {
      ...deployments("op"),
      webhookdefinitions: [
        {
          type: "MutatingAdmissionWebhook",
          generateName: "m-",
          deploymentName: "op",
          containerPort: 8443,
          webhookPath: "/mutate",
          rules: [{ apiGroups: ["apps"], resources: ["deployments"] }],
          failurePolicy: "Fail",
          reinvocationPolicy: "IfNeeded",
        },
      ],
    },
    { watchNamespaces: ["x", "y"] },
  );
  assert.deepEqual(generateWebhookConfigurations(ctx)[0].webhooks, [
    {
      name: "m-",
      clientConfig: {
        service: { namespace: "op-ns", name: "op-service", path: "/mutate", port: 8443 },
        caBundle: "__opcat_ca_bundle__/op-service-cert",
      },
      rules: [{ apiGroups: ["apps"], resources: ["deployments"] }],
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      failurePolicy: "Fail",
      namespaceSelector: {
        matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["x", "y"] }],
      },
      reinvocationPolicy: "IfNeeded",
    },
  ]);
});

test("generateWebhookServices, certificateRequests: a port per container and target port, one certificate", () => {
  const ctx = context({
    install: { spec: { deployments: [{ name: "op", spec: { selector: { matchLabels: { app: "op" } } } }] } },
    webhookdefinitions: [
      { type: "ValidatingAdmissionWebhook", generateName: "v1", deploymentName: "op", targetPort: 9443 },
      { type: "ValidatingAdmissionWebhook", generateName: "v2", deploymentName: "op", targetPort: 9443 },
      { type: "MutatingAdmissionWebhook", generateName: "m", deploymentName: "op", containerPort: 8443 },
    ],
  });
  assert.deepEqual(generateWebhookServices(ctx)[0].spec, {
    ports: [
      { name: "443", port: 443, targetPort: 9443, protocol: "TCP" },
      { name: "8443", port: 8443, targetPort: 8443, protocol: "TCP" },
    ],
    selector: { app: "op" },
  });
  assert.deepEqual(certificateRequests(ctx), [
    {
      secretName: "op-service-cert",
      namespace: "op-ns",
      dnsNames: ["op-service.op-ns.svc", "op-service.op-ns.svc.cluster.local"],
    },
  ]);
});

test("generateCRDs: status dropped, webhook conversion for the CRDs a conversion webhook converts", () => {
  const ctx = context(
    {
      ...deployments("op"),
      ...owned("a.example.com"),
      webhookdefinitions: [
        { type: "ConversionWebhook", generateName: "c", deploymentName: "op", conversionCRDs: ["a.example.com"] },
      ],
    },
    {},
    [{ ...crd("a.example.com"), status: { x: 1 } }, crd("b.example.com")],
  );
  const [a, b] = generateCRDs(ctx);
  assert.equal(a.status, undefined);
  assert.deepEqual((a.spec as JsonObj).conversion, {
    strategy: "Webhook",
    webhook: {
      clientConfig: {
        service: { namespace: "op-ns", name: "op-service", path: "/", port: 443 },
        caBundle: "__opcat_ca_bundle__/op-service-cert",
      },
      conversionReviewVersions: ["v1"],
    },
  });
  assert.equal((b.spec as JsonObj).conversion, undefined);
});

test("generateDeployments: install namespace, pod annotations, one revision, certificate volumes for webhooks", () => {
  const ctx = context(
    {
      install: {
        spec: {
          deployments: [
            { name: "op", label: { app: "op" }, spec: { template: { metadata: { annotations: { a: "pod" } } } } },
            { name: "hook", spec: { template: { spec: { containers: [{ name: "c" }] } } } },
          ],
        },
      },
      webhookdefinitions: [{ type: "ValidatingAdmissionWebhook", generateName: "v", deploymentName: "hook" }],
    },
    { watchNamespaces: ["x", "y"] },
  );
  const [op, hook] = generateDeployments(ctx);
  assert.deepEqual(op.metadata, { name: "op", namespace: "op-ns", labels: { app: "op" } });
  assert.deepEqual(op.spec, {
    revisionHistoryLimit: 1,
    template: {
      metadata: { annotations: { a: "pod", "olm.targetNamespaces": "x,y", "olm.operatorNamespace": "op-ns" } },
      spec: {},
    },
  });
  const pod = (hook.spec as { template: { spec: JsonObj } }).template.spec;
  assert.deepEqual(
    (pod.volumes as { name: string }[]).map((v) => v.name),
    ["webhook-cert", "apiservice-cert"],
  );
});

test("addCertVolumes: replaces volumes and mounts of the same names or paths, mounts in containers only", () => {
  const podSpec: JsonObj = {
    volumes: [{ name: "webhook-cert", emptyDir: {} }, { name: "data" }],
    containers: [
      {
        name: "c",
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "old", mountPath: "/tmp/k8s-webhook-server/serving-certs" },
        ],
      },
    ],
    initContainers: [{ name: "i", volumeMounts: [{ name: "apiservice-cert", mountPath: "/x" }] }],
  };
  addCertVolumes(podSpec, "s");
  assert.deepEqual(
    (podSpec.volumes as JsonObj[]).map((v) => [v.name, (v.secret as JsonObj | undefined)?.secretName]),
    [
      ["data", undefined],
      ["webhook-cert", "s"],
      ["apiservice-cert", "s"],
    ],
  );
  assert.deepEqual((podSpec.containers as JsonObj[])[0].volumeMounts, [
    { name: "data", mountPath: "/data" },
    { name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs" },
    { name: "apiservice-cert", mountPath: "/apiserver.local.config/certificates" },
  ]);
  assert.deepEqual((podSpec.initContainers as JsonObj[])[0].volumeMounts, []);
});

test("rbacName: <csv>-<serviceaccount>-<hash>, shortened to 63 characters keeping the hash", () => {
  const short = rbacName("pkg.v1.0.0", "sa", []);
  assert.match(short, /^pkg\.v1\.0\.0-sa-[0-9a-z]+$/);
  const long = rbacName("a".repeat(60), "sa", []);
  assert.ok(long.length <= 63, long);
  assert.equal(long.slice(long.lastIndexOf("-")), short.slice(short.lastIndexOf("-")));
  assert.notEqual(rbacName("pkg.v1.0.0", "sa", [{ verbs: ["get"] }]), short);
});
