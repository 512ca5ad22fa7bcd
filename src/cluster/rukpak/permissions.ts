/**
 * What installing a set of objects asks of the cluster: the SubjectAccessReviews that decide the
 * UserPermission approval policy (could the requesting user create every object themselves?) and
 * the RBAC rules a bundle would grant (shown by `instance describe` before anyone approves).
 */
import type { KubeClient, KubeObject } from "../client.js";

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

/** One SubjectAccessReview as `user`; true when allowed. */
export async function canI(client: KubeClient, user: Requester, c: AccessCheck): Promise<boolean> {
  const r = await client.request<{ status?: { allowed?: boolean } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: user.username,
          groups: user.groups ?? [],
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          resourceAttributes: {
            verb: c.verb,
            group: c.group,
            resource: c.resource,
            namespace: c.namespace,
            name: c.name,
          },
        },
      },
    },
  );
  return r.status?.allowed === true;
}

/** The checks that creating (or updating) each object needs. */
export async function checksFor(client: KubeClient, objects: readonly KubeObject[]): Promise<AccessCheck[]> {
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
  client: KubeClient,
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
  serviceAccount: string;
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
          serviceAccount: `${s.namespace ?? ""}/${s.name}`,
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
    `${r.scope === "cluster" ? "cluster-wide" : `in namespace ${r.scope}`} for ${r.serviceAccount}`
  );
}
