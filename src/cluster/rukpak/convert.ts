/**
 * registry+v1 → plain objects: what the operator provisioner applies for an OLM bundle, by the rules
 * of RukPak's `pkg/convert/registryv1.go` as operator-controller's renderer fixed them
 * (../shared/reference/olmv1-spec.md §3.9 and §5.9): gates, validators (all errors reported
 * together), install namespace and target namespaces, then ServiceAccounts, Roles/RoleBindings,
 * ClusterRoles/ClusterRoleBindings, CRDs, the other allowed manifests, and Deployments, in that order.
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

export interface Converted {
  installNamespace: string;
  targetNamespaces: string[];
  objects: KubeObject[];
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
// VerticalPodAutoscaler is namespaced but OLM lists it as cluster-scoped: its namespace is not rewritten (upstream quirk kept).
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
  const hash = BigInt(`0x${createHash("sha256").update(JSON.stringify(rules)).digest("hex").slice(0, 15)}`).toString(36);
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
    .map((p) => ({ serviceAccountName: typeof p.serviceAccountName === "string" && p.serviceAccountName !== "" ? p.serviceAccountName : "default", rules: Array.isArray(p.rules) ? p.rules : [] }));
}

/** Target namespaces by operator-controller's rules; an error sentence when the install modes do not allow them. */
export function targetNamespaces(supported: Set<string>, installNs: string, requested: string[] | undefined): string[] | string {
  const modes = `[${[...supported].join(" ")}]`;
  if (requested === undefined) {
    if (supported.has("AllNamespaces")) return [""];
    if (supported.has("OwnNamespace")) return [installNs];
    return `supported install modes ${modes} do not support targeting all namespaces; set watchNamespaces`;
  }
  if (requested.length === 0 || (requested.length === 1 && requested[0] === "")) {
    return supported.has("AllNamespaces") ? [""] : `supported install modes ${modes} do not support targeting all namespaces`;
  }
  if (requested.length === 1) {
    if (requested[0] === installNs) return supported.has("OwnNamespace") ? requested : `supported install modes ${modes} do not support targeting own namespace`;
    return supported.has("SingleNamespace") ? requested : `supported install modes ${modes} do not support target namespaces [${requested.join(" ")}]`;
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
  if (arrAt(spec, "apiservicedefinitions", "owned").length > 0) errors.push("unsupported bundle: apiServiceDefintions are not supported");
  if (arrAt(spec, "webhookdefinitions").length > 0) errors.push("unsupported bundle: webhookDefinitions are not supported (opcat does not provision webhook certificates yet)");
  if (!b.package) errors.push("package name is empty");

  const installNs = opts.installNamespace || csvAnnotations["operatorframework.io/suggested-namespace"] || `${b.package}-system`;
  const supported = new Set(
    arrAt(spec, "installModes")
      .filter(isObj)
      .filter((m) => m.supported === true && typeof m.type === "string")
      .map((m) => m.type as string),
  );
  if (!["AllNamespaces", "SingleNamespace", "OwnNamespace"].some((m) => supported.has(m))) {
    errors.push("unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes");
  }
  const targets = targetNamespaces(supported, installNs, opts.watchNamespaces);
  if (typeof targets === "string") errors.push(`invalid target namespaces [${(opts.watchNamespaces ?? []).join(" ")}]: ${targets}`);

  // validators
  const deployments = arrAt(spec, "install", "spec", "deployments").filter(isObj);
  const seenDeps = new Set<string>();
  for (const d of deployments) {
    const name = typeof d.name === "string" ? d.name : "";
    if (seenDeps.has(name)) errors.push(`cluster service version contains duplicate strategy deployment spec '${name}'`);
    seenDeps.add(name);
    if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253) errors.push(`invalid deployment name '${name}': a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`);
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
    if (!crdNames.has(n)) errors.push(`cluster service definition references owned custom resource definition '${n}' not found in bundle`);
  }
  const others = b.objects.filter((o) => o.kind !== "ClusterServiceVersion" && o.kind !== "CustomResourceDefinition");
  for (const o of others) {
    if (!NAMESPACED_KINDS.has(o.kind) && !CLUSTER_KINDS.has(o.kind)) errors.push(`unsupported resource "${strAt(o.object, "metadata", "name") ?? ""}" with kind "${o.kind}"`);
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
  for (const sa of sas) objects.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: installNs } });

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
        roles.push({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace: ns }, rules: clone(p.rules) });
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
  // 3. clusterPermissions (and, in AllNamespaces mode, permissions with namespace discovery) → ClusterRole + ClusterRoleBinding
  const cluster = [...clusterPerms];
  if (allNamespaces) {
    for (const p of perms) cluster.push({ serviceAccountName: p.serviceAccountName, rules: [...p.rules, { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] }] });
  }
  for (const p of cluster) {
    const name = rbacName(csvName, p.serviceAccountName, p.rules);
    clusterRoles.push({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules: clone(p.rules) });
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
  for (const c of crds) objects.push(stripStatus(clone(c.object) as unknown as KubeObject));
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
    const annotations: Record<string, string> = { ...csvAnnotations, ...((objAt(tmeta, "annotations") ?? {}) as Record<string, string>) };
    annotations["olm.targetNamespaces"] = targets.join(",");
    annotations["olm.operatorNamespace"] = installNs;
    const labels = objAt(d, "label");
    objects.push({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: d.name as string, namespace: installNs, ...(labels ? { labels: labels as Record<string, string> } : {}) },
      spec: { ...depSpec, revisionHistoryLimit: 1, template: { ...template, metadata: { ...tmeta, annotations } } },
    });
  }
  return { installNamespace: installNs, targetNamespaces: targets, objects, package: b.package, csvName, version: strAt(spec, "version") ?? "" };
}

function stripStatus(o: KubeObject): KubeObject {
  delete (o as Record<string, unknown>).status;
  const m = o.metadata ?? ({} as KubeObject["metadata"]);
  for (const k of ["creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"]) delete (m as Record<string, unknown>)[k];
  o.metadata = m;
  return o;
}
