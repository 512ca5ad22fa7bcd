/**
 * Android-style approval (docs/cluster.md, docs/security.md): an update is approved automatically
 * only when it needs no privilege the installed bundle does not already have. RBAC grants are
 * compared one atom at a time: (subject, verb, API group, resource, resource name, namespace), or
 * (subject, verb, non-resource URL), with RBAC's wildcards: `*` verbs, groups, resources and
 * trailing-`*` non-resource URLs, `resource/*` subresources, rules without resourceNames covering
 * every name, and cluster-wide grants covering every namespace. Subjects are compared exactly (kind,
 * name, a ServiceAccount's namespace): the same rights given to anyone else are new. Beside the
 * rules, every object whose privilege Android cannot compute exactly is new unless the installed
 * content has the same object (`newObjectPrivileges`). */
import type { KubeServer, KubeObject } from "../kube/client.js";
import { groupKindOf, ownKinds } from "../rukpak/crdgroups.js";
import { grantedRulesInCluster, type GrantedRule } from "../rukpak/permissions.js";
import { selectorMatches, type LabelSelector } from "../kube/selector.js";

/** One permission atom. */
export interface PermissionAtom {
  subject: string;
  scope: string; // "cluster" or a namespace
  verb: string;
  group?: string;
  resource?: string;
  name?: string;
  url?: string;
}

export function atomsOf(r: GrantedRule): PermissionAtom[] {
  const out: PermissionAtom[] = [];
  for (const verb of r.verbs) {
    if (r.nonResourceURLs?.length) {
      for (const url of r.nonResourceURLs) out.push({ subject: r.subject, scope: r.scope, verb, url });
      continue;
    }
    for (const group of r.apiGroups.length ? r.apiGroups : [""]) {
      for (const resource of r.resources) {
        if (r.resourceNames?.length)
          for (const name of r.resourceNames)
            out.push({ subject: r.subject, scope: r.scope, verb, group, resource, name });
        else out.push({ subject: r.subject, scope: r.scope, verb, group, resource });
      }
    }
  }
  return out;
}

function resourceCovers(have: string, want: string): boolean {
  if (have === "*" || have === want) return true;
  // "pods/*" covers every subresource of pods; "*/scale" covers scale of every resource
  const [hr, hs] = have.split("/");
  const [wr, ws] = want.split("/");
  if (hs === undefined || ws === undefined) return false;
  return (hr === "*" || hr === wr) && (hs === "*" || hs === ws);
}

function urlCovers(have: string, want: string): boolean {
  return have === "*" || have === want || (have.endsWith("*") && want.startsWith(have.slice(0, -1)));
}

/** True when rule `r` grants atom `a`. */
export function covers(r: GrantedRule, a: PermissionAtom): boolean {
  if (r.subject !== a.subject) return false;
  if (r.scope !== "cluster" && r.scope !== a.scope) return false;
  if (!r.verbs.includes("*") && !r.verbs.includes(a.verb)) return false;
  if (a.url !== undefined) return (r.nonResourceURLs ?? []).some((u) => urlCovers(u, a.url!));
  if (r.nonResourceURLs?.length && r.resources.length === 0) return false;
  const groups = r.apiGroups.length ? r.apiGroups : [""];
  if (!groups.includes("*") && !groups.includes(a.group ?? "")) return false;
  if (!r.resources.some((x) => resourceCovers(x, a.resource ?? ""))) return false;
  if (r.resourceNames?.length) return a.name !== undefined && r.resourceNames.includes(a.name);
  return true;
}

export function formatAtom(a: PermissionAtom): string {
  const where = a.scope === "cluster" ? "cluster-wide" : `in namespace ${a.scope}`;
  if (a.url !== undefined) return `${a.verb} non-resource URL ${a.url} ${where} for ${a.subject}`;
  const res = a.group ? `${a.resource}.${a.group}` : a.resource;
  return `${a.verb} ${res}${a.name ? ` named ${a.name}` : ""} ${where} for ${a.subject}`;
}

/** The permissions `next` grants that `current` does not, as sentences (sorted, without repeats). */
export function newPermissions(current: readonly GrantedRule[], next: readonly GrantedRule[]): string[] {
  const out = new Set<string>();
  for (const r of next) for (const a of atomsOf(r)) if (!current.some((c) => covers(c, a))) out.add(formatAtom(a));
  return [...out].sort();
}

/**
 * What Android asks about one entry: the privileges the objects `next` would install add to those of
 * `current` (the installed, approved content), the existing roles their bindings reference read from
 * the cluster. Empty: nothing new.
 */
export async function newPrivilegesInCluster(
  client: KubeServer,
  current: readonly KubeObject[],
  next: readonly KubeObject[],
): Promise<string[]> {
  const rules = newPermissions(await grantedRulesInCluster(client, current), await grantedRulesInCluster(client, next));
  return [...rules, ...newObjectPrivileges(current, next, await aggregationSelectors(client))];
}

/** JSON with sorted keys, for comparing objects. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/** What makes an object the same one: group, kind, namespace, name, labels, annotations and content. */
function identity(o: KubeObject): string {
  const { apiVersion, metadata, ...rest } = o;
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  return canonical({
    group,
    name: metadata.name,
    namespace: metadata.namespace ?? "",
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
    rest,
  });
}

const AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-";
const RBAC_KINDS = new Set(["Role", "RoleBinding", "ClusterRoleBinding"].map((k) => `rbac.authorization.k8s.io/${k}`));

/** Kinds that grant nothing by themselves (their subjects, workloads and data are compared elsewhere). */
const INERT = new Set([
  "/ConfigMap",
  "/Namespace",
  "/PersistentVolumeClaim",
  "policy/PodDisruptionBudget",
  "autoscaling/HorizontalPodAutoscaler",
  "networking.k8s.io/NetworkPolicy",
]);

/** Kinds whose pods run as a ServiceAccount (the pod spec's path). */
const WORKLOADS: Record<string, (o: KubeObject) => Record<string, unknown> | undefined> = {
  "/Pod": (o) => o.spec as Record<string, unknown> | undefined,
  "/ReplicationController": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "apps/Deployment": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "apps/StatefulSet": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "apps/DaemonSet": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "apps/ReplicaSet": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "batch/Job": (o) => podSpecAt(o, ["spec", "template", "spec"]),
  "batch/CronJob": (o) => podSpecAt(o, ["spec", "jobTemplate", "spec", "template", "spec"]),
};

function podSpecAt(o: KubeObject, path: string[]): Record<string, unknown> | undefined {
  let v: unknown = o;
  for (const k of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
}

/** The ServiceAccounts the workloads among `objects` run as (`namespace/name`). */
export function workloadServiceAccounts(objects: readonly KubeObject[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of objects) {
    const spec = WORKLOADS[groupKindOf(o)]?.(o);
    if (!spec) continue;
    const sa = (spec.serviceAccountName as string | undefined) || (spec.serviceAccount as string | undefined);
    const key = `${o.metadata.namespace ?? ""}/${sa || "default"}`;
    if (!out.has(key)) out.set(key, `${o.kind} ${JSON.stringify(o.metadata.name)}`);
  }
  return out;
}

/** Why `o` may widen what someone can do in a way the RBAC diff does not see (undefined: it cannot). */
function privilegeOf(o: KubeObject, own: ReadonlySet<string>, selectors: readonly LabelSelector[]): string | undefined {
  const gk = groupKindOf(o);
  const where = o.metadata.namespace ? ` in ${o.metadata.namespace}` : "";
  const what = `${o.kind} ${JSON.stringify(o.metadata.name)}${where}`;
  if (gk === "rbac.authorization.k8s.io/ClusterRole") {
    if (o.aggregationRule) return `${what} aggregates the rules of other ClusterRoles (aggregationRule)`;
    const labels = o.metadata.labels ?? {};
    const to = Object.keys(labels).filter((k) => k.startsWith(AGGREGATE_TO));
    if (to.length > 0) return `${what} adds its rules to other ClusterRoles (${to.join(", ")})`;
    if (selectors.some((s) => selectorMatches(s, labels)))
      return `${what} has labels an aggregating ClusterRole selects: its rules are added to that role`;
    return undefined;
  }
  // Roles and bindings: their grants are the rule diff's (newPermissions)
  if (RBAC_KINDS.has(gk)) return undefined;
  if (INERT.has(gk) || WORKLOADS[gk] || own.has(gk)) return undefined;
  // a ServiceAccount's annotations may carry a cloud identity (eks.amazonaws.com/role-arn, …)
  if (gk === "/ServiceAccount") return `${what} is a new or changed ServiceAccount`;
  if (gk === "/Secret") {
    if ((o as { type?: string }).type === "kubernetes.io/service-account-token")
      return `${what} asks for a token of a ServiceAccount`;
    return undefined;
  }
  if (gk === "/Service") {
    const spec = (o.spec ?? {}) as { externalIPs?: string[] };
    return spec.externalIPs?.length ? `${what} claims external IPs` : undefined;
  }
  if (gk === "apiextensions.k8s.io/CustomResourceDefinition") {
    const conv = (o.spec as { conversion?: { strategy?: string } } | undefined)?.conversion;
    return conv?.strategy === "Webhook" ? `${what} sends its objects to a conversion webhook` : undefined;
  }
  // admission webhooks and policies, APIServices, PriorityClasses, custom resources of other APIs, …
  return `${what}: Android cannot tell what it grants`;
}

/**
 * The privileges beside RBAC rules that `next` adds to `current` (pure): any object Android cannot
 * compute exactly (an aggregating or aggregated ClusterRole, a webhook configuration, an APIService, a
 * CRD with a conversion webhook, a ServiceAccount token Secret, an unknown kind, …) unless the same
 * object is in `current`, and every ServiceAccount a workload runs as that no workload of `current`
 * ran as. `selectors`: the aggregationRules of the cluster's ClusterRoles (and of `next`'s).
 */
export function newObjectPrivileges(
  current: readonly KubeObject[],
  next: readonly KubeObject[],
  selectors: readonly LabelSelector[],
): string[] {
  const had = new Set(current.map(identity));
  const own = ownKinds(next, new Set());
  const sel = [
    ...selectors,
    ...next.flatMap(
      (o) => (o.aggregationRule as { clusterRoleSelectors?: LabelSelector[] } | undefined)?.clusterRoleSelectors ?? [],
    ),
  ];
  const out = new Set<string>();
  for (const o of next) {
    const p = privilegeOf(o, own, sel);
    if (p && !had.has(identity(o))) out.add(p);
  }
  const ran = workloadServiceAccounts(current);
  for (const [sa, by] of workloadServiceAccounts(next))
    if (!ran.has(sa)) out.add(`${by} runs as ServiceAccount ${sa}, which no installed workload runs as`);
  return [...out].sort();
}

/** The label selectors of the cluster's aggregating ClusterRoles. */
export async function aggregationSelectors(client: KubeServer): Promise<LabelSelector[]> {
  const { items } = await client.list("rbac.authorization.k8s.io/v1", "ClusterRole");
  return items.flatMap(
    (o) => (o.aggregationRule as { clusterRoleSelectors?: LabelSelector[] } | undefined)?.clusterRoleSelectors ?? [],
  );
}
