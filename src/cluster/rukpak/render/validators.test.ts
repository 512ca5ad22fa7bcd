import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle, crd, deployments, modes, owned } from "../../../../test/cluster/registryv1.js";
import { type ConvertOptions, renderContext } from "./context.js";
import type { JsonObj } from "./json.js";
import {
  checkAPIServiceDefinitionsUnsupported,
  checkConversionWebhook,
  checkCRDUniqueness,
  checkDeployments,
  checkObjectSupport,
  checkOwnedCRDExistence,
  checkPackageNameNotEmpty,
  checkSupportedInstallModes,
  checkTargetNamespaces,
  checkWebhookDeploymentReferentialIntegrity,
  checkWebhookNameIsDNS1123SubDomain,
  checkWebhookNameUniqueness,
  checkWebhookRules,
  checkWebhooks,
  checkWebhookType,
  VALIDATORS,
  type Validator,
  type WebhookCheck,
  type WebhookSeen,
} from "./validators.js";

interface Case {
  name: string;
  spec?: JsonObj;
  objects?: JsonObj[];
  pkg?: string;
  opts?: ConvertOptions;
  want: string[];
}
const base: JsonObj = { installModes: modes("AllNamespaces", "OwnNamespace"), ...deployments("op") };

function table(validatorName: string, validate: Validator, cases: Case[]): void {
  for (const c of cases) {
    test(`${validatorName}: ${c.name}`, () => {
      const b = bundle({ ...base, ...c.spec }, c.objects, c.pkg);
      assert.deepEqual(validate(b, renderContext(b, c.opts)), c.want);
    });
  }
}

table("checkAPIServiceDefinitionsUnsupported", checkAPIServiceDefinitionsUnsupported, [
  { name: "none", want: [] },
  { name: "empty owned list", spec: { apiservicedefinitions: { owned: [] } }, want: [] },
  {
    name: "an owned API service",
    spec: { apiservicedefinitions: { owned: [{ name: "v1.example.com" }] } },
    want: ["unsupported bundle: apiServiceDefintions are not supported"],
  },
]);

table("checkPackageNameNotEmpty", checkPackageNameNotEmpty, [
  { name: "named", want: [] },
  { name: "empty", pkg: "", want: ["package name is empty"] },
]);

const noModes =
  "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes";
table("checkSupportedInstallModes", checkSupportedInstallModes, [
  { name: "AllNamespaces", spec: { installModes: modes("AllNamespaces") }, want: [] },
  { name: "SingleNamespace", spec: { installModes: modes("SingleNamespace") }, want: [] },
  { name: "MultiNamespace alone", spec: { installModes: modes("MultiNamespace") }, want: [noModes] },
  { name: "none supported", spec: { installModes: modes() }, want: [noModes] },
  { name: "no installModes", spec: { installModes: undefined }, want: [noModes] },
]);

table("checkTargetNamespaces", checkTargetNamespaces, [
  { name: "default, AllNamespaces supported", want: [] },
  { name: "own namespace", opts: { installNamespace: "ns", watchNamespaces: ["ns"] }, want: [] },
  {
    name: "two namespaces, MultiNamespace unsupported",
    opts: { watchNamespaces: ["a", "b"] },
    want: [
      "invalid target namespaces [a b]: supported install modes [AllNamespaces OwnNamespace] " +
        "do not support target namespaces [a b]",
    ],
  },
  {
    name: "default, neither AllNamespaces nor OwnNamespace",
    spec: { installModes: modes("SingleNamespace") },
    want: [
      "invalid target namespaces []: supported install modes [SingleNamespace] " +
        "do not support targeting all namespaces; set watchNamespaces",
    ],
  },
]);

const badDeployment = (name: string) =>
  `invalid deployment name '${name}': a lowercase RFC 1123 subdomain ` +
  `must consist of lower case alphanumeric characters, '-' or '.'`;
const dupDeployment = (name: string) => `cluster service version contains duplicate strategy deployment spec '${name}'`;
table("checkDeployments", checkDeployments, [
  { name: "distinct valid names", spec: deployments("op", "op.webhook"), want: [] },
  { name: "duplicate", spec: deployments("op", "op"), want: [dupDeployment("op")] },
  { name: "uppercase", spec: deployments("Op"), want: [badDeployment("Op")] },
  { name: "not a string", spec: deployments(3), want: [badDeployment("")] },
  { name: "too long", spec: deployments("a".repeat(254)), want: [badDeployment("a".repeat(254))] },
  {
    name: "errors of a deployment stay together",
    spec: deployments("Op", "Op"),
    want: [badDeployment("Op"), dupDeployment("Op"), badDeployment("Op")],
  },
]);

table("checkCRDUniqueness", checkCRDUniqueness, [
  { name: "distinct", objects: [crd("a.example.com"), crd("b.example.com")], want: [] },
  {
    name: "the same CRD twice",
    objects: [crd("a.example.com"), crd("a.example.com")],
    want: ["bundle contains duplicate custom resource definition 'a.example.com'"],
  },
]);

table("checkOwnedCRDExistence", checkOwnedCRDExistence, [
  { name: "owned CRD in the bundle", spec: owned("a.example.com"), objects: [crd("a.example.com")], want: [] },
  {
    name: "owned CRD missing",
    spec: owned("a.example.com", "b.example.com"),
    objects: [crd("a.example.com")],
    want: [
      "cluster service definition references owned custom resource definition 'b.example.com' not found in bundle",
    ],
  },
]);

table("checkObjectSupport", checkObjectSupport, [
  {
    name: "namespaced and cluster-scoped kinds",
    objects: [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "r" } },
    ],
    want: [],
  },
  {
    name: "a Pod",
    objects: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }],
    want: ['unsupported resource "p" with kind "Pod"'],
  },
]);

const hook = (w: JsonObj): JsonObj => ({
  type: "ValidatingAdmissionWebhook",
  generateName: "vhook.example.com",
  deploymentName: "op",
  ...w,
});
const conversion = (generateName: string, ...conversionCRDs: string[]): JsonObj =>
  hook({ type: "ConversionWebhook", generateName, conversionCRDs });

table("checkWebhooks", checkWebhooks, [
  { name: "no webhooks", want: [] },
  { name: "a valid admission webhook", spec: { webhookdefinitions: [hook({})] }, want: [] },
  {
    name: "errors per webhook, in WEBHOOK_CHECKS order",
    spec: { webhookdefinitions: [hook({ type: "Bogus", deploymentName: "nope" }), hook({ type: "Bogus" })] },
    want: [
      "webhook 'vhook.example.com' has unknown type 'Bogus'",
      "webhook of type 'Bogus' with name 'vhook.example.com' references non-existent deployment 'nope'",
      "webhook 'vhook.example.com' has unknown type 'Bogus'",
      "duplicate webhook 'vhook.example.com' of type 'Bogus'",
    ],
  },
]);

/** Runs a webhook check on each of `hooks` in turn (one `seen` for all), concatenating the errors. */
function hookTable(
  checkName: string,
  check: WebhookCheck,
  cases: (Omit<Case, "spec"> & { spec?: JsonObj; hooks: JsonObj[] })[],
) {
  for (const c of cases) {
    test(`${checkName}: ${c.name}`, () => {
      const b = bundle({ ...base, ...c.spec, webhookdefinitions: c.hooks }, c.objects);
      const ctx = renderContext(b, c.opts);
      const seen: WebhookSeen = { hooks: new Set(), convertedCrds: new Map() };
      assert.deepEqual(
        ctx.webhooks.flatMap((w) => check(w, ctx, seen)),
        c.want,
      );
    });
  }
}

hookTable("checkWebhookType", checkWebhookType, [
  { name: "validating", hooks: [hook({})], want: [] },
  { name: "mutating", hooks: [hook({ type: "MutatingAdmissionWebhook" })], want: [] },
  { name: "conversion", hooks: [hook({ type: "ConversionWebhook" })], want: [] },
  { name: "missing", hooks: [hook({ type: undefined })], want: ["webhook 'vhook.example.com' has unknown type ''"] },
]);

hookTable("checkWebhookNameUniqueness", checkWebhookNameUniqueness, [
  { name: "same name, other type", hooks: [hook({}), hook({ type: "MutatingAdmissionWebhook" })], want: [] },
  {
    name: "same name and type",
    hooks: [hook({}), hook({}), hook({})],
    want: [
      "duplicate webhook 'vhook.example.com' of type 'ValidatingAdmissionWebhook'",
      "duplicate webhook 'vhook.example.com' of type 'ValidatingAdmissionWebhook'",
    ],
  },
]);

hookTable("checkWebhookNameIsDNS1123SubDomain", checkWebhookNameIsDNS1123SubDomain, [
  { name: "a subdomain", hooks: [hook({})], want: [] },
  { name: "a generate name ending in -", hooks: [hook({ generateName: "vhook-" })], want: [] },
  {
    name: "uppercase",
    hooks: [hook({ generateName: "VHook" })],
    want: [
      "webhook of type 'ValidatingAdmissionWebhook' has invalid name 'VHook': " +
        "a lowercase RFC 1123 subdomain is required",
    ],
  },
]);

hookTable("checkWebhookDeploymentReferentialIntegrity", checkWebhookDeploymentReferentialIntegrity, [
  { name: "a deployment of the CSV", hooks: [hook({})], want: [] },
  {
    name: "an unknown deployment",
    hooks: [hook({ deploymentName: "other" })],
    want: [
      "webhook of type 'ValidatingAdmissionWebhook' with name 'vhook.example.com' " +
        "references non-existent deployment 'other'",
    ],
  },
  {
    name: "no deployment",
    hooks: [hook({ deploymentName: undefined })],
    want: [
      "webhook of type 'ValidatingAdmissionWebhook' with name 'vhook.example.com' " +
        "references non-existent deployment ''",
    ],
  },
]);

const forbidden = (g: string, res?: string) =>
  `webhook "vhook.example.com" contains forbidden rule: admission webhook rules cannot reference API group "${g}"` +
  (res === undefined ? "" : ` resource "${res}"`);
hookTable("checkWebhookRules", checkWebhookRules, [
  {
    name: "apps deployments",
    hooks: [hook({ rules: [{ apiGroups: ["apps"], resources: ["deployments"] }] })],
    want: [],
  },
  {
    name: "all groups and OLM's group",
    hooks: [hook({ rules: [{ apiGroups: ["*", "olm.operatorframework.io"], resources: ["x"] }] })],
    want: [forbidden("*"), forbidden("olm.operatorframework.io")],
  },
  {
    name: "webhook configurations",
    hooks: [
      hook({
        rules: [
          {
            apiGroups: ["admissionregistration.k8s.io"],
            resources: ["*", "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "other"],
          },
        ],
      }),
    ],
    want: [
      forbidden("admissionregistration.k8s.io", "*"),
      forbidden("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
      forbidden("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ],
  },
]);

const allOnly = { installModes: modes("AllNamespaces") };
hookTable("checkConversionWebhook", checkConversionWebhook, [
  { name: "an admission webhook", hooks: [hook({ conversionCRDs: ["x"] })], want: [] },
  {
    name: "an owned CRD, AllNamespaces only",
    spec: { ...allOnly, ...owned("a.example.com") },
    objects: [crd("a.example.com")],
    hooks: [conversion("conv", "a.example.com")],
    want: [],
  },
  {
    name: "other install modes",
    spec: owned("a.example.com"),
    hooks: [conversion("conv", "a.example.com")],
    want: [
      'bundle contains conversion webhook "conv" and supports install modes [AllNamespaces OwnNamespace] - ' +
        "conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
    ],
  },
  {
    name: "a CRD not owned, a CRD converted twice",
    spec: { ...allOnly, ...owned("a.example.com") },
    hooks: [conversion("conv1", "a.example.com", "b.example.com"), conversion("conv2", "a.example.com")],
    want: [
      "conversion webhook \"conv1\" references custom resource definition 'b.example.com' not owned by bundle",
      'conversion webhooks "conv1" and "conv2" reference the same custom resource definition \'a.example.com\'',
    ],
  },
  {
    name: "a CRD preserving unknown fields",
    spec: { ...allOnly, ...owned("a.example.com") },
    objects: [crd("a.example.com", { preserveUnknownFields: true })],
    hooks: [conversion("conv", "a.example.com")],
    want: [
      "custom resource definition 'a.example.com' must have .spec.preserveUnknownFields " +
        "set to false to let API Server call webhook to do the conversion",
    ],
  },
]);

test("VALIDATORS: every error of a bundle, in validator order", () => {
  const b = bundle(
    {
      apiservicedefinitions: { owned: [{ name: "v1.example.com" }] },
      installModes: modes("MultiNamespace"),
      ...deployments("op", "op"),
      ...owned("a.example.com"),
      webhookdefinitions: [hook({ deploymentName: "nope" })],
    },
    [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }],
    "",
  );
  const ctx = renderContext(b, {});
  assert.deepEqual(
    VALIDATORS.flatMap((v) => v(b, ctx)),
    [
      "unsupported bundle: apiServiceDefintions are not supported",
      "package name is empty",
      noModes,
      "invalid target namespaces []: supported install modes [MultiNamespace] " +
        "do not support targeting all namespaces; set watchNamespaces",
      dupDeployment("op"),
      "cluster service definition references owned custom resource definition 'a.example.com' not found in bundle",
      'unsupported resource "p" with kind "Pod"',
      "webhook of type 'ValidatingAdmissionWebhook' with name 'vhook.example.com' " +
        "references non-existent deployment 'nope'",
    ],
  );
});
