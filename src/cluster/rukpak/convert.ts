/**
 * registry+v1 → plain objects: what the operator provisioner applies for an OLM bundle, by the rules
 * of RukPak's `pkg/convert/registryv1.go` as operator-controller's renderer fixed them
 * (../shared/reference/olmv1-spec.md §3.9 and §5.9): gates, validators (all errors reported
 * together), install namespace and target namespaces, then ServiceAccounts, Roles/RoleBindings,
 * ClusterRoles/ClusterRoleBindings, CRDs, the other allowed manifests, Deployments, and for webhooks
 * the webhook configurations and Services, with the serving certificates listed for the provisioner
 * to provide (their CA bundles are placeholders until it does).
 *
 * Names of generated RBAC objects are `<csv>-<serviceaccount>-<hash>` shortened to 63 characters,
 * as upstream; the hash is opcat's (sha256 of the rules), not Go's spew/FNV hash, so the suffixes
 * differ from operator-controller's (they are only names).
 */
import { createHash } from "node:crypto";
import type { RegistryBundle } from "../../bundle/index.js";
import type { KubeObject } from "../client.js";

type Json = unknown;
type JsonObj = Record<string, Json>;

export interface ConvertOptions {
  /** Where the operator runs (default: the CSV's suggested namespace, else `<package>-system`). */
  installNamespace?: string;
  /** Namespaces the operator watches; [] or [""] means all (default: all when supported, else its own namespace). */
  watchNamespaces?: string[];
}

/** A serving certificate the provisioner must provide (a kubernetes.io/tls Secret) for a webhook Service. */
export interface CertificateRequest {
  secretName: string;
  namespace: string;
  dnsNames: string[];
}

/** Placeholder for the PEM CA bundle of a certificate request, in webhook configurations and CRD conversion. */
export function caBundlePlaceholder(secretName: string): string {
  return `__opcat_ca_bundle__/${secretName}`;
}

export interface Converted {
  installNamespace: string;
  targetNamespaces: string[];
  objects: KubeObject[];
  /** Serving certificates for webhook Services (empty for bundles without webhooks). */
  certificates: CertificateRequest[];
  package: string;
  csvName: string;
  version: string;
}

/** A bundle that cannot be converted; `errors` are all the reasons, each a sentence. */
export class ConvertError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join("; "));
    this.name = "ConvertError";
  }
}

const NAMESPACED_KINDS = new Set([
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
// VerticalPodAutoscaler is namespaced but OLM lists it as
// cluster-scoped: its namespace is not rewritten (upstream quirk kept).
const CLUSTER_KINDS = new Set([
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

function isObj(v: Json): v is JsonObj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function objAt(v: Json, ...path: string[]): JsonObj | undefined {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return isObj(cur) ? cur : undefined;
}
function arrAt(v: Json, ...path: string[]): Json[] {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return [];
    cur = cur[p];
  }
  return Array.isArray(cur) ? cur : [];
}
function strAt(v: Json, ...path: string[]): string | undefined {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return typeof cur === "string" ? cur : undefined;
}
function clone<T>(v: T): T {
  return structuredClone(v);
}

/** `<csv>-<sa>-<hash>` within 63 characters (upstream shortens the prefix and keeps the hash). */
export function rbacName(csvName: string, sa: string, rules: Json): string {
  const hash = BigInt(`0x${createHash("sha256").update(JSON.stringify(rules)).digest("hex").slice(0, 15)}`).toString(
    36,
  );
  const base = `${csvName}-${sa}`;
  const max = 63 - hash.length - 1;
  return `${base.length > max ? base.slice(0, max) : base}-${hash}`.replace(/[-.]+-/, "-");
}

interface Permission {
  serviceAccountName: string;
  rules: Json[];
}

function permissions(spec: JsonObj | undefined, key: "permissions" | "clusterPermissions"): Permission[] {
  return arrAt(spec, "install", "spec", key)
    .filter(isObj)
    .map((p) => ({
      serviceAccountName:
        typeof p.serviceAccountName === "string" && p.serviceAccountName !== "" ? p.serviceAccountName : "default",
      rules: Array.isArray(p.rules) ? p.rules : [],
    }));
}

/** Target namespaces by operator-controller's rules; an error sentence when the install modes do not allow them. */
export function targetNamespaces(
  supported: Set<string>,
  installNs: string,
  requested: string[] | undefined,
): string[] | string {
  const modes = `[${[...supported].join(" ")}]`;
  if (requested === undefined) {
    if (supported.has("AllNamespaces")) return [""];
    if (supported.has("OwnNamespace")) return [installNs];
    return `supported install modes ${modes} do not support targeting all namespaces; set watchNamespaces`;
  }
  if (requested.length === 0 || (requested.length === 1 && requested[0] === "")) {
    return supported.has("AllNamespaces")
      ? [""]
      : `supported install modes ${modes} do not support targeting all namespaces`;
  }
  if (requested.length === 1) {
    if (requested[0] === installNs)
      return supported.has("OwnNamespace")
        ? requested
        : `supported install modes ${modes} do not support targeting own namespace`;
    return supported.has("SingleNamespace")
      ? requested
      : `supported install modes ${modes} do not support target namespaces [${requested.join(" ")}]`;
  }
  if (supported.has("MultiNamespace") && !requested.includes("")) return requested;
  return `supported install modes ${modes} do not support target namespaces [${requested.join(" ")}]`;
}

export function convertRegistryV1(b: RegistryBundle, opts: ConvertOptions = {}): Converted {
  const errors: string[] = [];
  const csv = b.csv.object as JsonObj;
  const csvName = b.name;
  const spec = objAt(csv, "spec");
  const csvAnnotations = (objAt(csv, "metadata", "annotations") ?? {}) as Record<string, string>;

  // gates
  if (arrAt(spec, "apiservicedefinitions", "owned").length > 0)
    errors.push("unsupported bundle: apiServiceDefintions are not supported");

  if (!b.package) errors.push("package name is empty");

  const installNs =
    opts.installNamespace || csvAnnotations["operatorframework.io/suggested-namespace"] || `${b.package}-system`;
  const supported = new Set(
    arrAt(spec, "installModes")
      .filter(isObj)
      .filter((m) => m.supported === true && typeof m.type === "string")
      .map((m) => m.type as string),
  );
  if (!["AllNamespaces", "SingleNamespace", "OwnNamespace"].some((m) => supported.has(m))) {
    errors.push(
      "unsupported bundle: bundle must support at least one of " +
        "[AllNamespaces SingleNamespace OwnNamespace] install modes",
    );
  }
  const targets = targetNamespaces(supported, installNs, opts.watchNamespaces);
  if (typeof targets === "string")
    errors.push(`invalid target namespaces [${(opts.watchNamespaces ?? []).join(" ")}]: ${targets}`);

  // validators
  const deployments = arrAt(spec, "install", "spec", "deployments").filter(isObj);
  const seenDeps = new Set<string>();
  for (const d of deployments) {
    const name = typeof d.name === "string" ? d.name : "";
    if (seenDeps.has(name))
      errors.push(`cluster service version contains duplicate strategy deployment spec '${name}'`);
    seenDeps.add(name);
    if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253)
      errors.push(
        `invalid deployment name '${name}': a lowercase RFC 1123 subdomain ` +
          `must consist of lower case alphanumeric characters, '-' or '.'`,
      );
  }
  const crds = b.objects.filter((o) => o.kind === "CustomResourceDefinition");
  const crdNames = new Set<string>();
  for (const c of crds) {
    const n = strAt(c.object, "metadata", "name") ?? "";
    if (crdNames.has(n)) errors.push(`bundle contains duplicate custom resource definition '${n}'`);
    crdNames.add(n);
  }
  for (const owned of arrAt(spec, "customresourcedefinitions", "owned").filter(isObj)) {
    const n = typeof owned.name === "string" ? owned.name : "";
    if (!crdNames.has(n))
      errors.push(`cluster service definition references owned custom resource definition '${n}' not found in bundle`);
  }
  const others = b.objects.filter((o) => o.kind !== "ClusterServiceVersion" && o.kind !== "CustomResourceDefinition");
  for (const o of others) {
    if (!NAMESPACED_KINDS.has(o.kind) && !CLUSTER_KINDS.has(o.kind))
      errors.push(`unsupported resource "${strAt(o.object, "metadata", "name") ?? ""}" with kind "${o.kind}"`);
  }
  const webhooks = arrAt(spec, "webhookdefinitions").filter(isObj);
  const depNames = new Set(deployments.map((d) => d.name as string));
  const seenHooks = new Set<string>();
  const convertedCrds = new Map<string, string>();
  for (const w of webhooks) {
    const type = String(w.type ?? "");
    const name = String(w.generateName ?? "");
    if (!["ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"].includes(type))
      errors.push(`webhook '${name}' has unknown type '${type}'`);
    if (seenHooks.has(`${type}/${name}`)) errors.push(`duplicate webhook '${name}' of type '${type}'`);
    seenHooks.add(`${type}/${name}`);
    if (!DNS1123_SUBDOMAIN.test(name.replace(/-$/, "")))
      errors.push(`webhook of type '${type}' has invalid name '${name}': a lowercase RFC 1123 subdomain is required`);
    if (!depNames.has(String(w.deploymentName ?? "")))
      errors.push(
        `webhook of type '${type}' with name '${name}' references ` +
          `non-existent deployment '${String(w.deploymentName ?? "")}'`,
      );
    for (const r of arrAt(w, "rules").filter(isObj)) {
      for (const g of arrAt(r, "apiGroups").map(String)) {
        if (g === "*" || g === "olm.operatorframework.io")
          errors.push(
            `webhook "${name}" contains forbidden rule: admission webhook rules cannot reference API group "${g}"`,
          );
        if (g === "admissionregistration.k8s.io") {
          for (const res of arrAt(r, "resources").map(String)) {
            if (res === "*" || res === "validatingwebhookconfigurations" || res === "mutatingwebhookconfigurations")
              errors.push(
                `webhook "${name}" contains forbidden rule: admission webhook ` +
                  `rules cannot reference API group "${g}" resource "${res}"`,
              );
          }
        }
      }
    }
    if (type === "ConversionWebhook") {
      const only = supported.size === 1 && supported.has("AllNamespaces");
      if (!only)
        errors.push(
          `bundle contains conversion webhook "${name}" and supports install modes ` +
            `[${[...supported].join(" ")}] - conversion webhooks are only ` +
            `supported for bundles that only support AllNamespaces install mode`,
        );
      const owned = new Set(
        arrAt(spec, "customresourcedefinitions", "owned")
          .filter(isObj)
          .map((o) => String(o.name)),
      );
      for (const c of arrAt(w, "conversionCRDs").map(String)) {
        if (!owned.has(c))
          errors.push(`conversion webhook "${name}" references custom resource definition '${c}' not owned by bundle`);
        if (convertedCrds.has(c))
          errors.push(
            `conversion webhooks "${convertedCrds.get(c)}" and "${name}" ` +
              `reference the same custom resource definition '${c}'`,
          );
        convertedCrds.set(c, name);
        const crdObj = crds.find((x) => strAt(x.object, "metadata", "name") === c);
        if (crdObj && objAt(crdObj.object, "spec")?.preserveUnknownFields === true)
          errors.push(
            `custom resource definition '${c}' must have .spec.preserveUnknownFields ` +
              `set to false to let API Server call webhook to do the conversion`,
          );
      }
    }
  }
  if (errors.length > 0 || typeof targets === "string") throw new ConvertError(errors);

  const allNamespaces = targets.length === 1 && targets[0] === "";
  const objects: KubeObject[] = [];
  const perms = permissions(spec, "permissions");
  const clusterPerms = permissions(spec, "clusterPermissions");

  // 1. ServiceAccounts named by permissions and clusterPermissions (never `default`)
  const sas = new Set<string>();
  for (const p of [...perms, ...clusterPerms]) if (p.serviceAccountName !== "default") sas.add(p.serviceAccountName);
  for (const d of deployments) {
    const sa = strAt(d, "spec", "template", "spec", "serviceAccountName");
    if (sa && sa !== "default") sas.add(sa);
  }
  for (const sa of sas)
    objects.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: installNs } });

  const subject = (sa: string) => ({ kind: "ServiceAccount", name: sa, namespace: installNs });
  const roles: KubeObject[] = [];
  const roleBindings: KubeObject[] = [];
  const clusterRoles: KubeObject[] = [];
  const clusterRoleBindings: KubeObject[] = [];
  // 2. permissions → Role + RoleBinding per target namespace (not in AllNamespaces mode)
  if (!allNamespaces) {
    for (const ns of targets) {
      for (const p of perms) {
        const name = rbacName(csvName, p.serviceAccountName, p.rules);
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
          subjects: [subject(p.serviceAccountName)],
        });
      }
    }
  }
  // 3. clusterPermissions (and, in AllNamespaces mode, permissions with
  // namespace discovery) → ClusterRole + ClusterRoleBinding
  const cluster = [...clusterPerms];
  if (allNamespaces) {
    for (const p of perms)
      cluster.push({
        serviceAccountName: p.serviceAccountName,
        rules: [...p.rules, { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] }],
      });
  }
  for (const p of cluster) {
    const name = rbacName(csvName, p.serviceAccountName, p.rules);
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
      subjects: [subject(p.serviceAccountName)],
    });
  }
  objects.push(...roles, ...roleBindings, ...clusterRoles, ...clusterRoleBindings);
  // 4. CRDs unchanged
  const serviceName = (dep: string) => `${dep}-service`;
  const secretName = (dep: string) => `${serviceName(dep)}-cert`;
  for (const c of crds) {
    const crd = stripStatus(clone(c.object) as unknown as KubeObject);
    const hook = webhooks.find(
      (w) => w.type === "ConversionWebhook" && arrAt(w, "conversionCRDs").map(String).includes(crd.metadata.name),
    );
    if (hook) {
      const dep = String(hook.deploymentName);
      (crd.spec as JsonObj).conversion = {
        strategy: "Webhook",
        webhook: {
          clientConfig: {
            service: {
              namespace: installNs,
              name: serviceName(dep),
              path: typeof hook.webhookPath === "string" ? hook.webhookPath : "/",
              port: typeof hook.containerPort === "number" ? hook.containerPort : 443,
            },
            caBundle: caBundlePlaceholder(secretName(dep)),
          },
          conversionReviewVersions:
            arrAt(hook, "admissionReviewVersions").length > 0 ? arrAt(hook, "admissionReviewVersions") : ["v1"],
        },
      };
    }
    objects.push(crd);
  }
  // 5. other manifests; namespaced ones moved into the install namespace
  for (const o of others) {
    const obj = stripStatus(clone(o.object) as unknown as KubeObject);
    if (NAMESPACED_KINDS.has(o.kind)) obj.metadata = { ...obj.metadata, namespace: installNs };
    objects.push(obj);
  }
  // 6. Deployments
  for (const d of deployments) {
    const depSpec = clone(objAt(d, "spec") ?? {});
    const template = objAt(depSpec, "template") ?? {};
    const tmeta = objAt(template, "metadata") ?? {};
    const annotations: Record<string, string> = {
      ...csvAnnotations,
      ...((objAt(tmeta, "annotations") ?? {}) as Record<string, string>),
    };
    annotations["olm.targetNamespaces"] = targets.join(",");
    annotations["olm.operatorNamespace"] = installNs;
    const labels = objAt(d, "label");
    const podSpec = clone(objAt(template, "spec") ?? {});
    if (webhooks.some((w) => w.deploymentName === d.name)) addCertVolumes(podSpec, secretName(d.name as string));
    objects.push({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: d.name as string,
        namespace: installNs,
        ...(labels ? { labels: labels as Record<string, string> } : {}),
      },
      spec: {
        ...depSpec,
        revisionHistoryLimit: 1,
        template: { ...template, metadata: { ...tmeta, annotations }, spec: podSpec },
      },
    });
  }
  // 7. webhook configurations, 8. their Services, 9. the certificates the provisioner provides
  const certificates: CertificateRequest[] = [];
  for (const w of webhooks.filter((x) => x.type !== "ConversionWebhook")) {
    const dep = String(w.deploymentName);
    const name = String(w.generateName);
    const hook: JsonObj = {
      name,
      clientConfig: {
        service: {
          namespace: installNs,
          name: serviceName(dep),
          path: typeof w.webhookPath === "string" ? w.webhookPath : "/",
          port: typeof w.containerPort === "number" ? w.containerPort : 443,
        },
        caBundle: caBundlePlaceholder(secretName(dep)),
      },
      rules: clone(arrAt(w, "rules")),
      admissionReviewVersions:
        arrAt(w, "admissionReviewVersions").length > 0 ? clone(arrAt(w, "admissionReviewVersions")) : ["v1"],
      sideEffects: w.sideEffects ?? "None",
    };
    for (const k of ["failurePolicy", "matchPolicy", "objectSelector", "timeoutSeconds"])
      if (w[k] !== undefined) hook[k] = clone(w[k]);
    if (!allNamespaces)
      hook.namespaceSelector = {
        matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...targets] }],
      };
    const mutating = w.type === "MutatingAdmissionWebhook";
    if (mutating && w.reinvocationPolicy !== undefined) hook.reinvocationPolicy = w.reinvocationPolicy;
    objects.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
      metadata: { name: name.replace(/-$/, "") },
      webhooks: [hook],
    });
  }
  for (const dep of [...new Set(webhooks.map((w) => String(w.deploymentName)))]) {
    const d = deployments.find((x) => x.name === dep)!;
    const ports = new Map<string, JsonObj>();
    for (const w of webhooks.filter((x) => x.deploymentName === dep)) {
      const port = typeof w.containerPort === "number" ? w.containerPort : 443;
      const target = w.targetPort ?? port;
      ports.set(`${port}/${JSON.stringify(target)}`, { name: String(port), port, targetPort: target, protocol: "TCP" });
    }
    objects.push({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: serviceName(dep), namespace: installNs },
      spec: { ports: [...ports.values()], selector: clone(objAt(d, "spec", "selector", "matchLabels") ?? {}) },
    });
    certificates.push({
      secretName: secretName(dep),
      namespace: installNs,
      dnsNames: [`${serviceName(dep)}.${installNs}.svc`, `${serviceName(dep)}.${installNs}.svc.cluster.local`],
    });
  }
  return {
    installNamespace: installNs,
    targetNamespaces: targets,
    objects,
    certificates,
    package: b.package,
    csvName,
    version: strAt(spec, "version") ?? "",
  };
}

/**
 * The serving certificate volumes operator-controller mounts into webhook
 * deployments (replacing user volumes of the same names or paths).
 */
function addCertVolumes(podSpec: JsonObj, secret: string): void {
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

function stripStatus(o: KubeObject): KubeObject {
  delete (o as Record<string, unknown>).status;
  const m = o.metadata ?? ({} as KubeObject["metadata"]);
  for (const k of ["creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"])
    delete (m as Record<string, unknown>)[k];
  o.metadata = m;
  return o;
}
