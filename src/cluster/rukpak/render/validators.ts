/**
 * The validators of a registry+v1 bundle, after operator-controller's
 * `render/registryv1/validators`: each returns the reasons (sentences) the bundle cannot be
 * rendered, and `VALIDATORS` runs them all, in order, so that every error is reported at once.
 *
 * Where upstream has one validator per rule, those rules that report per item (per deployment, per
 * webhook) are one validator here that runs its item checks in turn on each item: the errors of an
 * item stay together, in the order opcat has always reported them. A webhook's checks are
 * `WEBHOOK_CHECKS`, each testable alone with a fresh `WebhookSeen`.
 */
import type { RegistryBundle } from "../../../bundle/index.js";
import type { RenderContext } from "./context.js";
import { arrAt, isObj, type JsonObj, objAt, strAt } from "./json.js";

/** The errors of a bundle by one rule (none when it holds). */
export type Validator = (b: RegistryBundle, ctx: RenderContext) => string[];

/** Kinds of other manifests moved into the install namespace. */
export const NAMESPACED_KINDS = new Set([
  "Secret",
  "ConfigMap",
  "Service",
  "ServiceAccount",
  "Role",
  "RoleBinding",
  "PrometheusRule",
  "ServiceMonitor",
  "PodMonitor",
  "PodDisruptionBudget",
  "NetworkPolicy",
]);
/**
 * Kinds of other manifests left as they are. VerticalPodAutoscaler is namespaced but OLM lists it as
 * cluster-scoped: its namespace is not rewritten (upstream quirk kept).
 */
export const CLUSTER_KINDS = new Set([
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "PriorityClass",
  "ConsoleYAMLSample",
  "ConsoleQuickStart",
  "ConsoleCLIDownload",
  "ConsoleLink",
  "ConsolePlugin",
  "VerticalPodAutoscaler",
]);

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Gate: API service definitions are not supported. */
export const checkAPIServiceDefinitionsUnsupported: Validator = (_b, ctx) =>
  arrAt(ctx.spec, "apiservicedefinitions", "owned").length > 0
    ? ["unsupported bundle: apiServiceDefintions are not supported"]
    : [];

export const checkPackageNameNotEmpty: Validator = (b) => (b.package ? [] : ["package name is empty"]);

/** Gate: one of AllNamespaces, SingleNamespace, OwnNamespace is supported (MultiNamespace alone is not enough). */
export const checkSupportedInstallModes: Validator = (_b, ctx) =>
  ["AllNamespaces", "SingleNamespace", "OwnNamespace"].some((m) => ctx.supported.has(m))
    ? []
    : [
        "unsupported bundle: bundle must support at least one of " +
          "[AllNamespaces SingleNamespace OwnNamespace] install modes",
      ];

/** The requested watch namespaces are allowed by the install modes. */
export const checkTargetNamespaces: Validator = (_b, ctx) =>
  typeof ctx.targetNamespaces === "string"
    ? [`invalid target namespaces [${(ctx.opts.watchNamespaces ?? []).join(" ")}]: ${ctx.targetNamespaces}`]
    : [];

/** Per deployment spec: its name is unique, then it is a DNS-1123 subdomain. */
export const checkDeployments: Validator = (_b, ctx) => {
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const d of ctx.deployments) {
    const name = typeof d.name === "string" ? d.name : "";
    if (seen.has(name)) errors.push(`cluster service version contains duplicate strategy deployment spec '${name}'`);
    seen.add(name);
    if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253)
      errors.push(
        `invalid deployment name '${name}': a lowercase RFC 1123 subdomain ` +
          `must consist of lower case alphanumeric characters, '-' or '.'`,
      );
  }
  return errors;
};

export const checkCRDUniqueness: Validator = (_b, ctx) => {
  const errors: string[] = [];
  const names = new Set<string>();
  for (const c of ctx.crds) {
    const n = strAt(c.object, "metadata", "name") ?? "";
    if (names.has(n)) errors.push(`bundle contains duplicate custom resource definition '${n}'`);
    names.add(n);
  }
  return errors;
};

/** Every CRD the CSV owns is in the bundle. */
export const checkOwnedCRDExistence: Validator = (_b, ctx) => {
  const names = new Set(ctx.crds.map((c) => strAt(c.object, "metadata", "name") ?? ""));
  return arrAt(ctx.spec, "customresourcedefinitions", "owned")
    .filter(isObj)
    .map((owned) => (typeof owned.name === "string" ? owned.name : ""))
    .filter((n) => !names.has(n))
    .map((n) => `cluster service definition references owned custom resource definition '${n}' not found in bundle`);
};

/** Every other manifest is of a kind the renderer knows (NAMESPACED_KINDS, CLUSTER_KINDS). */
export const checkObjectSupport: Validator = (_b, ctx) =>
  ctx.others
    .filter((o) => !NAMESPACED_KINDS.has(o.kind) && !CLUSTER_KINDS.has(o.kind))
    .map((o) => `unsupported resource "${strAt(o.object, "metadata", "name") ?? ""}" with kind "${o.kind}"`);

/** What the webhook checks remember across the webhooks of a bundle. */
export interface WebhookSeen {
  /** `<type>/<generateName>` of the webhooks checked so far. */
  hooks: Set<string>;
  /** CRD name → the conversion webhook that converts it. */
  convertedCrds: Map<string, string>;
}

/** The errors of one webhook definition, given those checked before it. */
export type WebhookCheck = (w: JsonObj, ctx: RenderContext, seen: WebhookSeen) => string[];

const hookType = (w: JsonObj) => String(w.type ?? "");
const hookName = (w: JsonObj) => String(w.generateName ?? "");

export const checkWebhookType: WebhookCheck = (w) =>
  ["ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"].includes(hookType(w))
    ? []
    : [`webhook '${hookName(w)}' has unknown type '${hookType(w)}'`];

export const checkWebhookNameUniqueness: WebhookCheck = (w, _ctx, seen) => {
  const key = `${hookType(w)}/${hookName(w)}`;
  const dup = seen.hooks.has(key);
  seen.hooks.add(key);
  return dup ? [`duplicate webhook '${hookName(w)}' of type '${hookType(w)}'`] : [];
};

/** The generate name without its trailing "-" is a DNS-1123 subdomain. */
export const checkWebhookNameIsDNS1123SubDomain: WebhookCheck = (w) =>
  DNS1123_SUBDOMAIN.test(hookName(w).replace(/-$/, ""))
    ? []
    : [
        `webhook of type '${hookType(w)}' has invalid name '${hookName(w)}': ` +
          `a lowercase RFC 1123 subdomain is required`,
      ];

export const checkWebhookDeploymentReferentialIntegrity: WebhookCheck = (w, ctx) => {
  const depNames = new Set(ctx.deployments.map((d) => d.name as string));
  const dep = String(w.deploymentName ?? "");
  return depNames.has(dep)
    ? []
    : [`webhook of type '${hookType(w)}' with name '${hookName(w)}' references non-existent deployment '${dep}'`];
};

/** Admission rules do not reach OLM's own API group, all groups, or webhook configurations. */
export const checkWebhookRules: WebhookCheck = (w) => {
  const errors: string[] = [];
  const name = hookName(w);
  for (const r of arrAt(w, "rules").filter(isObj)) {
    for (const g of arrAt(r, "apiGroups").map(String)) {
      if (g === "*" || g === "olm.operatorframework.io")
        errors.push(
          `webhook "${name}" contains forbidden rule: admission webhook rules cannot reference API group "${g}"`,
        );
      if (g !== "admissionregistration.k8s.io") continue;
      for (const res of arrAt(r, "resources").map(String)) {
        if (res === "*" || res === "validatingwebhookconfigurations" || res === "mutatingwebhookconfigurations")
          errors.push(
            `webhook "${name}" contains forbidden rule: admission webhook ` +
              `rules cannot reference API group "${g}" resource "${res}"`,
          );
      }
    }
  }
  return errors;
};

/**
 * A conversion webhook: the bundle supports AllNamespaces only; then per CRD it converts: the CSV owns
 * it, no other conversion webhook converts it, and it does not preserve unknown fields.
 */
export const checkConversionWebhook: WebhookCheck = (w, ctx, seen) => {
  if (hookType(w) !== "ConversionWebhook") return [];
  const errors: string[] = [];
  const name = hookName(w);
  if (!(ctx.supported.size === 1 && ctx.supported.has("AllNamespaces")))
    errors.push(
      `bundle contains conversion webhook "${name}" and supports install modes ` +
        `[${[...ctx.supported].join(" ")}] - conversion webhooks are only ` +
        `supported for bundles that only support AllNamespaces install mode`,
    );
  const owned = new Set(
    arrAt(ctx.spec, "customresourcedefinitions", "owned")
      .filter(isObj)
      .map((o) => String(o.name)),
  );
  for (const c of arrAt(w, "conversionCRDs").map(String)) {
    if (!owned.has(c))
      errors.push(`conversion webhook "${name}" references custom resource definition '${c}' not owned by bundle`);
    if (seen.convertedCrds.has(c))
      errors.push(
        `conversion webhooks "${seen.convertedCrds.get(c)}" and "${name}" ` +
          `reference the same custom resource definition '${c}'`,
      );
    seen.convertedCrds.set(c, name);
    const crdObj = ctx.crds.find((x) => strAt(x.object, "metadata", "name") === c);
    if (crdObj && objAt(crdObj.object, "spec")?.preserveUnknownFields === true)
      errors.push(
        `custom resource definition '${c}' must have .spec.preserveUnknownFields ` +
          `set to false to let API Server call webhook to do the conversion`,
      );
  }
  return errors;
};

/** The checks of each webhook definition, in order. */
export const WEBHOOK_CHECKS: WebhookCheck[] = [
  checkWebhookType,
  checkWebhookNameUniqueness,
  checkWebhookNameIsDNS1123SubDomain,
  checkWebhookDeploymentReferentialIntegrity,
  checkWebhookRules,
  checkConversionWebhook,
];

/** Per webhook definition, in CSV order: the WEBHOOK_CHECKS. */
export const checkWebhooks: Validator = (_b, ctx) => {
  const seen: WebhookSeen = { hooks: new Set(), convertedCrds: new Map() };
  return ctx.webhooks.flatMap((w) => WEBHOOK_CHECKS.flatMap((check) => check(w, ctx, seen)));
};

/** The validators of a registry+v1 bundle, in the order their errors are reported. */
export const VALIDATORS: Validator[] = [
  checkAPIServiceDefinitionsUnsupported,
  checkPackageNameNotEmpty,
  checkSupportedInstallModes,
  checkTargetNamespaces,
  checkDeployments,
  checkCRDUniqueness,
  checkOwnedCRDExistence,
  checkObjectSupport,
  checkWebhooks,
];
