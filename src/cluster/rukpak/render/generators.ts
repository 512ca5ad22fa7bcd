/**
 * The resource generators of a registry+v1 bundle, after operator-controller's
 * `render/registryv1/generators`: each makes the objects of one kind of resource from a validated
 * context, and `GENERATORS` runs them in the order the objects are applied. `certificateRequests` lists
 * the serving certificates of the webhook Services for the provisioner to provide (their CA bundles
 * are placeholders until it does).
 *
 * Names of generated RBAC objects are `<csv>-<serviceaccount>-<hash>` shortened to 63 characters,
 * as upstream; the hash is opcat's (sha256 of the rules), not Go's spew/FNV hash, so the suffixes
 * differ from operator-controller's (they are only names).
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "../../kube/client.js";
import { type CertificateRequest, caBundlePlaceholder, type GenerateContext, type Permission } from "./context.js";
import { applyDeploymentConfig } from "./deploymentconfig.js";
import { arrAt, clone, isObj, type Json, type JsonObj, objAt, strAt, stripStatus } from "./json.js";
import { NAMESPACED_KINDS } from "./validators.js";

/** The objects of one kind of resource. */
export type Generator = (ctx: GenerateContext) => KubeObject[];

/** `<csv>-<sa>-<hash>` within 63 characters (upstream shortens the prefix and keeps the hash). */
export function rbacName(csvName: string, sa: string, rules: Json): string {
  const hash = BigInt(`0x${createHash("sha256").update(JSON.stringify(rules)).digest("hex").slice(0, 15)}`).toString(
    36,
  );
  const base = `${csvName}-${sa}`;
  const max = 63 - hash.length - 1;
  return `${base.length > max ? base.slice(0, max) : base}-${hash}`.replace(/[-.]+-/, "-");
}

/** The Service of a webhook deployment. */
export const webhookServiceName = (dep: string) => `${dep}-service`;
/** The serving certificate Secret of a webhook deployment's Service. */
export const webhookSecretName = (dep: string) => `${webhookServiceName(dep)}-cert`;

const subject = (ctx: GenerateContext, sa: string) => ({
  kind: "ServiceAccount",
  name: sa,
  namespace: ctx.installNamespace,
});

/** The ServiceAccounts named by permissions, clusterPermissions and deployments (never `default`). */
export const generateServiceAccounts: Generator = (ctx) => {
  const sas = new Set<string>();
  for (const p of [...ctx.permissions, ...ctx.clusterPermissions])
    if (p.serviceAccountName !== "default") sas.add(p.serviceAccountName);
  for (const d of ctx.deployments) {
    const sa = strAt(d, "spec", "template", "spec", "serviceAccountName");
    if (sa && sa !== "default") sas.add(sa);
  }
  return [...sas].map((sa) => ({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: sa, namespace: ctx.installNamespace },
  }));
};

/**
 * permissions → a Role and a RoleBinding per target namespace (none in AllNamespaces mode): the Roles,
 * then the RoleBindings.
 */
export const generatePermissions: Generator = (ctx) => {
  const roles: KubeObject[] = [];
  const roleBindings: KubeObject[] = [];
  if (ctx.allNamespaces) return [];
  for (const ns of ctx.targetNamespaces) {
    for (const p of ctx.permissions) {
      const name = rbacName(ctx.csvName, p.serviceAccountName, p.rules);
      roles.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace: ns },
        rules: clone(p.rules),
      });
      roleBindings.push({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [subject(ctx, p.serviceAccountName)],
      });
    }
  }
  return [...roles, ...roleBindings];
};

/**
 * clusterPermissions (and, in AllNamespaces mode, permissions with namespace discovery) → a
 * ClusterRole and a ClusterRoleBinding each: the ClusterRoles, then the ClusterRoleBindings.
 */
export const generateClusterPermissions: Generator = (ctx) => {
  const cluster: Permission[] = [...ctx.clusterPermissions];
  if (ctx.allNamespaces) {
    for (const p of ctx.permissions)
      cluster.push({
        serviceAccountName: p.serviceAccountName,
        rules: [...p.rules, { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] }],
      });
  }
  const clusterRoles: KubeObject[] = [];
  const clusterRoleBindings: KubeObject[] = [];
  for (const p of cluster) {
    const name = rbacName(ctx.csvName, p.serviceAccountName, p.rules);
    clusterRoles.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: clone(p.rules),
    });
    clusterRoleBindings.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [subject(ctx, p.serviceAccountName)],
    });
  }
  return [...clusterRoles, ...clusterRoleBindings];
};

/** The `clientConfig` of a webhook definition: its deployment's Service, with the CA bundle placeholder. */
function clientConfig(ctx: GenerateContext, w: JsonObj): JsonObj {
  const dep = String(w.deploymentName);
  return {
    service: {
      namespace: ctx.installNamespace,
      name: webhookServiceName(dep),
      path: typeof w.webhookPath === "string" ? w.webhookPath : "/",
      port: typeof w.containerPort === "number" ? w.containerPort : 443,
    },
    caBundle: caBundlePlaceholder(webhookSecretName(dep)),
  };
}

/** The CRDs (status and server fields dropped), with the webhook conversion of those a conversion webhook converts. */
export const generateCRDs: Generator = (ctx) =>
  ctx.crds.map((c) => {
    const crd = stripStatus(clone(c.object) as unknown as KubeObject);
    const hook = ctx.webhooks.find(
      (w) => w.type === "ConversionWebhook" && arrAt(w, "conversionCRDs").map(String).includes(crd.metadata.name),
    );
    if (hook) {
      (crd.spec as JsonObj).conversion = {
        strategy: "Webhook",
        webhook: {
          clientConfig: clientConfig(ctx, hook),
          conversionReviewVersions:
            arrAt(hook, "admissionReviewVersions").length > 0 ? arrAt(hook, "admissionReviewVersions") : ["v1"],
        },
      };
    }
    return crd;
  });

/** The bundle's other manifests; those of NAMESPACED_KINDS moved into the install namespace. */
export const generateAdditionalResources: Generator = (ctx) =>
  ctx.others.map((o) => {
    const obj = stripStatus(clone(o.object) as unknown as KubeObject);
    if (NAMESPACED_KINDS.has(o.kind)) obj.metadata = { ...obj.metadata, namespace: ctx.installNamespace };
    return obj;
  });

/**
 * The CSV's deployments in the install namespace, their pods annotated with the CSV's annotations and
 * the target and operator namespaces, the serving certificate volumes mounted in those that serve
 * webhooks, then the configuration's deploymentConfig applied (deploymentconfig.ts).
 */
export const generateDeployments: Generator = (ctx) =>
  ctx.deployments.map((d) => {
    const dep = deployment(ctx, d);
    applyDeploymentConfig(dep, ctx.deploymentConfig);
    return dep;
  });

/** One CSV deployment as a Deployment, before the deploymentConfig. */
function deployment(ctx: GenerateContext, d: JsonObj): KubeObject {
  const depSpec = clone(objAt(d, "spec") ?? {});
  const template = objAt(depSpec, "template") ?? {};
  const tmeta = objAt(template, "metadata") ?? {};
  const annotations: Record<string, string> = {
    ...ctx.csvAnnotations,
    ...((objAt(tmeta, "annotations") ?? {}) as Record<string, string>),
  };
  annotations["olm.targetNamespaces"] = ctx.targetNamespaces.join(",");
  annotations["olm.operatorNamespace"] = ctx.installNamespace;
  const labels = objAt(d, "label");
  const podSpec = clone(objAt(template, "spec") ?? {});
  if (ctx.webhooks.some((w) => w.deploymentName === d.name))
    addCertVolumes(podSpec, webhookSecretName(d.name as string));
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: d.name as string,
      namespace: ctx.installNamespace,
      ...(labels ? { labels: labels as Record<string, string> } : {}),
    },
    spec: {
      ...depSpec,
      revisionHistoryLimit: 1,
      template: { ...template, metadata: { ...tmeta, annotations }, spec: podSpec },
    },
  };
}

/**
 * The serving certificate volumes operator-controller mounts into webhook
 * deployments (replacing user volumes of the same names or paths).
 */
export function addCertVolumes(podSpec: JsonObj, secret: string): void {
  const mounts = [
    {
      name: "webhook-cert",
      mountPath: "/tmp/k8s-webhook-server/serving-certs",
      items: [
        { key: "tls.crt", path: "tls.crt" },
        { key: "tls.key", path: "tls.key" },
      ],
    },
    {
      name: "apiservice-cert",
      mountPath: "/apiserver.local.config/certificates",
      items: [
        { key: "tls.crt", path: "apiserver.crt" },
        { key: "tls.key", path: "apiserver.key" },
      ],
    },
  ];
  const names = new Set(mounts.map((m) => m.name));
  const paths = new Set(mounts.map((m) => m.mountPath));
  const volumes = arrAt(podSpec, "volumes")
    .filter(isObj)
    .filter((v) => !names.has(String(v.name)));
  podSpec.volumes = [
    ...volumes,
    ...mounts.map((m) => ({ name: m.name, secret: { secretName: secret, items: m.items } })),
  ];
  for (const key of ["containers", "initContainers"]) {
    if (!Array.isArray(podSpec[key])) continue;
    for (const c of (podSpec[key] as Json[]).filter(isObj)) {
      const vm = arrAt(c, "volumeMounts")
        .filter(isObj)
        .filter((m) => !names.has(String(m.name)) && !paths.has(String(m.mountPath)));
      c.volumeMounts =
        key === "containers" ? [...vm, ...mounts.map((m) => ({ name: m.name, mountPath: m.mountPath }))] : vm;
    }
  }
}

/**
 * A Validating- or MutatingWebhookConfiguration per admission webhook definition, in CSV order; outside
 * AllNamespaces mode limited to the target namespaces.
 */
export const generateWebhookConfigurations: Generator = (ctx) =>
  ctx.webhooks
    .filter((x) => x.type !== "ConversionWebhook")
    .map((w) => {
      const name = String(w.generateName);
      const hook: JsonObj = {
        name,
        clientConfig: clientConfig(ctx, w),
        rules: clone(arrAt(w, "rules")),
        admissionReviewVersions:
          arrAt(w, "admissionReviewVersions").length > 0 ? clone(arrAt(w, "admissionReviewVersions")) : ["v1"],
        sideEffects: w.sideEffects ?? "None",
      };
      for (const k of ["failurePolicy", "matchPolicy", "objectSelector", "timeoutSeconds"])
        if (w[k] !== undefined) hook[k] = clone(w[k]);
      if (!ctx.allNamespaces)
        hook.namespaceSelector = {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...ctx.targetNamespaces] }],
        };
      const mutating = w.type === "MutatingAdmissionWebhook";
      if (mutating && w.reinvocationPolicy !== undefined) hook.reinvocationPolicy = w.reinvocationPolicy;
      return {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
        metadata: { name: name.replace(/-$/, "") },
        webhooks: [hook],
      };
    });

/** The deployments serving webhooks, each once, in the order of their first webhook definition. */
const webhookDeployments = (ctx: GenerateContext) => [...new Set(ctx.webhooks.map((w) => String(w.deploymentName)))];

/** A Service per webhook deployment: one port per distinct container port and target port of its webhooks. */
export const generateWebhookServices: Generator = (ctx) =>
  webhookDeployments(ctx).map((dep) => {
    const d = ctx.deployments.find((x) => x.name === dep)!;
    const ports = new Map<string, JsonObj>();
    for (const w of ctx.webhooks.filter((x) => x.deploymentName === dep)) {
      const port = typeof w.containerPort === "number" ? w.containerPort : 443;
      const target = w.targetPort ?? port;
      ports.set(`${port}/${JSON.stringify(target)}`, { name: String(port), port, targetPort: target, protocol: "TCP" });
    }
    return {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: webhookServiceName(dep), namespace: ctx.installNamespace },
      spec: { ports: [...ports.values()], selector: clone(objAt(d, "spec", "selector", "matchLabels") ?? {}) },
    };
  });

/** The serving certificate of each webhook Service, for the provisioner to provide. */
export function certificateRequests(ctx: GenerateContext): CertificateRequest[] {
  const ns = ctx.installNamespace;
  return webhookDeployments(ctx).map((dep) => ({
    secretName: webhookSecretName(dep),
    namespace: ns,
    dnsNames: [`${webhookServiceName(dep)}.${ns}.svc`, `${webhookServiceName(dep)}.${ns}.svc.cluster.local`],
  }));
}

/** The generators of a registry+v1 bundle, in the order their objects are listed (and applied). */
export const GENERATORS: Generator[] = [
  generateServiceAccounts,
  generatePermissions,
  generateClusterPermissions,
  generateCRDs,
  generateAdditionalResources,
  generateDeployments,
  generateWebhookConfigurations,
  generateWebhookServices,
];
