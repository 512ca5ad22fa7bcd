/**
 * Which API groups a bundle's CRDs may define (docs/security.md). A CRD in a built-in group (the
 * core group, `apps`, `batch`, `*.k8s.io`, … or any group the API server serves that no CRD made)
 * would claim a kind the API server itself serves, such as `rbac.authorization.k8s.io`
 * `ClusterRoleBinding`; one in opcat's own groups would claim opcat's APIs. Objects of a kind a CRD of
 * the same bundle claims cannot be dry-run before that CRD exists, so those objects are skipped by
 * the dry runs: only for CRDs in groups that are neither.
 */
import type { KubeServer, KubeObject } from "../kube/client.js";

/**
 * opcat's own API groups: rukpak.io (rukpak/api.ts), deppy.io (deppy/api.ts), olm.operatorframework.io
 * (olm/api.ts, catalogd/api.ts), operators.coreos.com (operators/api.ts); a unit test keeps them equal.
 */
export const OPCAT_GROUPS: readonly string[] = [
  "rukpak.io",
  "deppy.io",
  "olm.operatorframework.io",
  "operators.coreos.com",
];

/** Kubernetes' own groups without a `.k8s.io` suffix (and the core group, ""). */
const LEGACY_BUILT_IN = new Set(["", "apps", "batch", "policy", "autoscaling", "extensions", "v1"]);

/** True for groups Kubernetes reserves for itself, whatever this API server serves. */
export function reservedGroup(group: string): boolean {
  return LEGACY_BUILT_IN.has(group) || group.endsWith(".k8s.io") || group.endsWith(".kubernetes.io");
}

/** Groups the API server serves that no CustomResourceDefinition provides (built-in or aggregated). */
export async function servedBuiltInGroups(client: KubeServer): Promise<Set<string>> {
  const d = await client.request<{ groups?: { name: string }[] }>("GET", "/apis");
  const { items } = await client.list<KubeObject & { spec?: { group?: string } }>(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
  );
  const byCrd = new Set(items.map((c) => c.spec?.group ?? ""));
  return new Set((d.groups ?? []).map((g) => g.name).filter((g) => !byCrd.has(g)));
}

const crdGroup = (c: KubeObject): string => (c.spec as { group?: string } | undefined)?.group ?? "";
const crdKind = (c: KubeObject): string => (c.spec as { names?: { kind?: string } } | undefined)?.names?.kind ?? "";

/** Why a bundle may not ship this CRD (undefined: it may). `served`: {@link servedBuiltInGroups}. */
export function crdGroupProblem(crd: KubeObject, served: ReadonlySet<string>): string | undefined {
  const g = crdGroup(crd);
  const what = `CustomResourceDefinition ${JSON.stringify(crd.metadata.name)} (group ${JSON.stringify(g)})`;
  if (OPCAT_GROUPS.includes(g)) return `${what} defines a kind in opcat's own API group`;
  if (reservedGroup(g) || served.has(g)) return `${what} defines a kind in a built-in API group`;
  return undefined;
}

/**
 * `group/Kind` of every kind a CRD among `objects` defines in a group a bundle may define kinds in:
 * the objects of those kinds are the only ones a dry run may skip (their CRD does not exist yet).
 */
export function ownKinds(objects: readonly KubeObject[], served: ReadonlySet<string>): Set<string> {
  return new Set(
    objects
      .filter((o) => o.kind === "CustomResourceDefinition" && crdGroupProblem(o, served) === undefined)
      .map((c) => `${crdGroup(c)}/${crdKind(c)}`),
  );
}

/** `group/Kind` of an object (the core group is ""). */
export const groupKindOf = (o: KubeObject): string =>
  `${o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : ""}/${o.kind}`;
