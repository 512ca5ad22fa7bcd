/**
 * operator-controller's API shapes that both of its API groups here use (ClusterCatalog in ../catalogd,
 * ClusterExtension in ../olm): metav1 types exactly as controller-gen writes them, and upstream's field
 * descriptions (./descriptions.ts) put on a CRD so that `kubectl explain` reads as upstream's.
 */
import type { KubeObject } from "../kube/client.js";
import { arr, crdObject, enumOf, int, map, obj, str, type CrdDefinition, type OpenApi } from "../kube/schema.js";

/** metav1.Condition exactly as controller-gen writes it. */
export const upstreamConditionSchema = obj(
  {
    lastTransitionTime: str({ format: "date-time" }),
    message: str({ maxLength: 32768 }),
    observedGeneration: int({ format: "int64", minimum: 0 }),
    reason: str({ maxLength: 1024, minLength: 1, pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$" }),
    status: enumOf(["True", "False", "Unknown"] as const),
    type: str({
      maxLength: 316,
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" +
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    }),
  },
  ["lastTransitionTime", "message", "reason", "status", "type"],
);
export const upstreamConditionsSchema = arr(upstreamConditionSchema, {
  "x-kubernetes-list-map-keys": ["type"],
  "x-kubernetes-list-type": "map",
});

/** metav1.LabelSelector exactly as controller-gen writes it. */
export const upstreamLabelSelectorSchema = obj(
  {
    matchExpressions: arr(
      obj({ key: str(), operator: str(), values: arr(str(), { "x-kubernetes-list-type": "atomic" }) }, [
        "key",
        "operator",
      ]),
      { "x-kubernetes-list-type": "atomic" },
    ),
    matchLabels: map(str()),
  },
  [],
  { "x-kubernetes-map-type": "atomic" },
);

/** Sets `description` on every field of `schema` that `texts` has one for (keyed by field path). */
export function describe(schema: OpenApi, texts: Record<string, string>, path = ""): void {
  const d = texts[path];
  if (d !== undefined) schema.description = d;
  for (const [k, v] of Object.entries(schema.properties ?? {})) describe(v, texts, path ? `${path}.${k}` : k);
  if (schema.items) describe(schema.items, texts, `${path}[]`);
}

/** A CRD object with upstream's descriptions on every field (a copy: the schemas are shared). */
export function describedCrd(d: CrdDefinition, texts: Record<string, string>): KubeObject {
  const crd = JSON.parse(JSON.stringify(crdObject(d))) as {
    spec: { versions: { schema: { openAPIV3Schema: OpenApi } }[] };
  };
  for (const v of crd.spec.versions) describe(v.schema.openAPIV3Schema, texts);
  return crd as unknown as KubeObject;
}
