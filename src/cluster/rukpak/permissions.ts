/**
 * What installing a set of objects asks of the cluster: the SubjectAccessReviews that decide the
 * UserPermission approval policy (could the requesting user create every object themselves?) and
 * the RBAC rules a bundle would grant (shown by `instance describe` before anyone approves).
 */
import { BoundedMap } from "../kube/bounded.js";
import type { KubeServer, KubeObject } from "../kube/client.js";
import { crdGroupProblem, groupKindOf, ownKinds, servedBuiltInGroups } from "./crdgroups.js";
import { readInPass, refOf, type PassReads } from "./reads.js";

export interface Requester {
  username: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

export function describeCheck(c: AccessCheck): string {
  const res = c.group ? `${c.resource}.${c.group}` : c.resource;
  return (
    `${c.verb} ${res}${c.name ? ` ${JSON.stringify(c.name)}` : ""}` +
    `${c.namespace ? ` in namespace ${c.namespace}` : " (cluster-wide)"}`
  );
}

/**
 * How long an allowed answer is reused for the same question (user, groups, uid, extra, attributes),
 * as the API server's own webhook authorizer caches allowed answers (there for 5 minutes): the
 * admission webhook, the Bundle's and the Instance's passes ask the same `use` question of one
 * install within seconds. Refusals are never reused: a new grant counts at once.
 */
export const ALLOWED_TTL_MS = 5_000;
const MAX_REMEMBERED = 4096;
const allowedUntil = new WeakMap<KubeServer, BoundedMap<string, number>>();

/** One SubjectAccessReview as `user`; true when allowed (an allowed answer reused for {@link ALLOWED_TTL_MS}). */
export async function canI(client: KubeServer, user: Requester, c: AccessCheck): Promise<boolean> {
  const spec = {
    user: user.username,
    groups: user.groups ?? [],
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.extra ? { extra: user.extra } : {}),
    resourceAttributes: { verb: c.verb, group: c.group, resource: c.resource, namespace: c.namespace, name: c.name },
  };
  const key = JSON.stringify(spec);
  let remembered = allowedUntil.get(client);
  if (!remembered) allowedUntil.set(client, (remembered = new BoundedMap(MAX_REMEMBERED)));
  const until = remembered.get(key);
  if (until !== undefined && until > Date.now()) return true;
  const r = await client.request<{ status?: { allowed?: boolean } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    { body: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec } },
  );
  remembered.delete(key);
  if (r.status?.allowed !== true) return false;
  remembered.set(key, Date.now() + ALLOWED_TTL_MS);
  return true;
}

/** The checks that creating (or updating) each object needs. */
export async function checksFor(client: KubeServer, objects: readonly KubeObject[]): Promise<AccessCheck[]> {
  const out: AccessCheck[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const r = await client.resourceFor(o.apiVersion, o.kind).catch(() => undefined);
    const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
    const resource = r?.resource ?? `${o.kind.toLowerCase()}s`;
    const ns = r ? (r.namespaced ? o.metadata.namespace : undefined) : o.metadata.namespace;
    for (const verb of ["create", "update"]) {
      const c: AccessCheck = {
        verb,
        group,
        resource,
        namespace: ns,
        name: verb === "update" ? o.metadata.name : undefined,
      };
      const k = JSON.stringify(c);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(c);
      }
    }
    // granting RBAC needs the rights granted (or escalate/bind): the API server enforces that on create itself,
    // so a user who lacks them would be refused; the SAR above on roles/clusterroles covers creation only.
  }
  return out;
}

/** The checks `user` fails. */
export async function missingPermissions(
  client: KubeServer,
  user: Requester,
  objects: readonly KubeObject[],
): Promise<AccessCheck[]> {
  const checks = await checksFor(client, objects);
  const results = await Promise.all(checks.map((c) => canI(client, user, c)));
  return checks.filter((_, i) => !results[i]);
}

export interface GrantedRule {
  scope: "cluster" | string;
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  /** Who is granted: `ServiceAccount <namespace>/<name>`, `User <name>` or `Group <name>`. */
  subject: string;
}

/**
 * A binding's subject as Android compares it: kind and name, and a ServiceAccount's namespace (in a
 * RoleBinding, one without a namespace is the binding's own, as RBAC's authorizer reads it).
 */
export function subjectOf(s: { kind?: string; name?: string; namespace?: string }, bindingNamespace?: string): string {
  if (s.kind === "ServiceAccount") return `ServiceAccount ${s.namespace || bindingNamespace || ""}/${s.name ?? ""}`;
  return `${s.kind ?? "?"} ${s.name ?? ""}`;
}

/** The RBAC rules the objects grant, flattened per Role/ClusterRole bound to a subject. */
export function grantedRules(objects: readonly KubeObject[]): GrantedRule[] {
  const roles = new Map<string, { rules: Record<string, unknown>[] }>();
  for (const o of objects) {
    if (o.kind === "Role" || o.kind === "ClusterRole") {
      roles.set(`${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`, {
        rules: (o.rules as Record<string, unknown>[]) ?? [],
      });
    }
  }
  const out: GrantedRule[] = [];
  for (const o of objects) {
    if (o.kind !== "RoleBinding" && o.kind !== "ClusterRoleBinding") continue;
    const ref = o.roleRef as { kind: string; name: string };
    const role = roles.get(`${ref.kind}/${ref.kind === "Role" ? (o.metadata.namespace ?? "") : ""}/${ref.name}`);
    if (!role) continue;
    for (const s of (o.subjects as { kind: string; name: string; namespace?: string }[]) ?? []) {
      for (const r of role.rules) {
        out.push({
          scope: o.kind === "ClusterRoleBinding" ? "cluster" : (o.metadata.namespace ?? ""),
          verbs: (r.verbs as string[]) ?? [],
          apiGroups: (r.apiGroups as string[]) ?? [],
          resources: (r.resources as string[]) ?? [],
          ...(r.resourceNames ? { resourceNames: r.resourceNames as string[] } : {}),
          ...(r.nonResourceURLs ? { nonResourceURLs: r.nonResourceURLs as string[] } : {}),
          subject: subjectOf(s, o.kind === "RoleBinding" ? o.metadata.namespace : undefined),
        });
      }
    }
  }
  return out;
}

export function formatRule(r: GrantedRule): string {
  const what = r.nonResourceURLs?.length
    ? `non-resource URLs ${r.nonResourceURLs.join(",")}`
    : `${r.resources.join(",")}` +
      `${r.apiGroups.some((g) => g !== "") ? ` (groups ${r.apiGroups.map((g) => g || '""').join(",")})` : ""}` +
      `${r.resourceNames?.length ? ` named ${r.resourceNames.join(",")}` : ""}`;
  return (
    `${r.verbs.join(",")} on ${what} ` +
    `${r.scope === "cluster" ? "cluster-wide" : `in namespace ${r.scope}`} for ${r.subject}`
  );
}

/** One object the requester could not create or change, with the API server's own answer. */
export interface DryRunRefusal {
  object: string;
  message: string;
  /**
   * An authorisation or policy refusal (403: RBAC or an admission webhook or policy; a kind the API
   * server does not know; a CRD in a group it may not claim): what the requester may not do. False
   * for anything else the API server answered (an immutable field, an invalid object, a conflict, a
   * missing namespace): not a question of rights, and it may clear by itself.
   */
  denied: boolean;
}

/** True when a dry run's answer is a refusal of the requester (see {@link DryRunRefusal.denied}). */
export function isDenial(status: number, message: string): boolean {
  return (
    status === 403 || (status === 404 && /could not find the requested resource|no matches for kind/.test(message))
  );
}

/** `Kind "name"` or `Kind "name" in namespace ns`. */
export function describeObject(o: KubeObject): string {
  const where = o.metadata.namespace ? ` in namespace ${o.metadata.namespace}` : "";
  return `${o.kind} ${JSON.stringify(o.metadata.name)}${where}`;
}

/**
 * Asks the API server whether `user` could make every object themselves: a create (or, for an object
 * that exists, a server-side apply) with `dryRun=All` per object, impersonating the user (name, groups,
 * uid, extra), so that RBAC — the
 * escalation and bind rules for Roles and bindings included — and every admission plugin judge
 * exactly as they would for the user. Objects of kinds that the same set's CRDs define in groups of
 * their own (CRDs not yet installed) cannot be tried; creating their CRD is tried instead. A CRD in a
 * built-in group or opcat's is a refusal and never excuses an object (crdgroups.ts); an object of a
 * kind the API server does not know is a refusal too (the API server's NotFound). `reads`: the pass's
 * reads (each object is read as the controllers once per pass, and the collision check reuses it).
 */
export async function dryRunAs(
  client: KubeServer,
  user: Requester,
  objects: readonly KubeObject[],
  fieldManager: string,
  knownServed?: ReadonlySet<string>,
  reads?: PassReads,
): Promise<DryRunRefusal[]> {
  const as = client.impersonating(user);
  // a CRD in a built-in group (or opcat's) is refused, and the objects of the kind it claims are tried
  const hasCrds = objects.some((o) => o.kind === "CustomResourceDefinition");
  const served = hasCrds ? (knownServed ?? (await servedBuiltInGroups(client))) : new Set<string>();
  const defined = ownKinds(objects, served);
  const out: DryRunRefusal[] = [];
  for (const o of objects) {
    const problem = o.kind === "CustomResourceDefinition" ? crdGroupProblem(o, served) : undefined;
    if (problem) out.push({ object: describeObject(o), message: problem, denied: true });
    if (defined.has(groupKindOf(o))) continue;
    try {
      // what the user would do: create what does not exist, change (apply) what does
      const exists = await readInPass(client, refOf(o), reads).catch(() => undefined);
      if (exists) await as.apply(o, { dryRun: true, fieldManager });
      else
        await as.request("POST", await as.path(o.apiVersion, o.kind, o.metadata.namespace), {
          body: o,
          query: { dryRun: "All", fieldManager },
        });
    } catch (e) {
      const status = (e as { status?: number }).status;
      if (status === undefined) throw e;
      const message = (e as Error).message;
      out.push({ object: describeObject(o), message, denied: isDenial(status, message) });
    }
  }
  return out;
}

/**
 * Existing Roles and ClusterRoles that bindings among `objects` reference and that `objects` do not
 * ship (a binding to `cluster-admin` grants what cluster-admin has): their rules as the API server
 * has them (an aggregated ClusterRole's aggregated rules included).
 */
export async function referencedRoles(client: KubeServer, objects: readonly KubeObject[]): Promise<KubeObject[]> {
  const shipped = new Set(
    objects
      .filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
      .map((o) => `${o.kind}/${o.kind === "Role" ? (o.metadata.namespace ?? "") : ""}/${o.metadata.name}`),
  );
  const out = new Map<string, KubeObject>();
  for (const o of objects) {
    if (o.kind !== "RoleBinding" && o.kind !== "ClusterRoleBinding") continue;
    const ref = o.roleRef as { kind?: string; name?: string } | undefined;
    if (!ref?.kind || !ref.name) continue;
    const ns = ref.kind === "Role" ? (o.metadata.namespace ?? "") : "";
    const k = `${ref.kind}/${ns}/${ref.name}`;
    if (shipped.has(k) || out.has(k)) continue;
    const role = await client
      .tryGet("rbac.authorization.k8s.io/v1", ref.kind, ref.name, ref.kind === "Role" ? ns : undefined)
      .catch(() => undefined);
    // a role that does not exist yet grants nothing now, but may later: shown as unknown by the caller
    out.set(
      k,
      role ?? {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: ref.kind,
        metadata: { name: ref.name, ...(ns ? { namespace: ns } : {}) },
        rules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      },
    );
  }
  return [...out.values()];
}

/**
 * The complete grant of `objects`: the rules of the roles they ship and of the existing roles their
 * bindings reference (a binding to a role that does not exist yet counts as granting everything,
 * since whoever makes that role later decides what it grants).
 */
export async function grantedRulesInCluster(
  client: KubeServer,
  objects: readonly KubeObject[],
): Promise<GrantedRule[]> {
  const existing = await referencedRoles(client, objects);
  return grantedRules([...existing, ...objects]);
}
