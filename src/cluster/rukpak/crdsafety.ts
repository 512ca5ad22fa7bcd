/**
 * CRD upgrade safety (olmv1-spec §3.11 / §5.11): before a CRD that exists on the cluster is
 * replaced, the change is compared with what is there. Refused: removing a version still listed in
 * `status.storedVersions`; a scope change; and, for each version kept, removing a property, changing
 * its type, adding a required property, adding an enum restriction or removing enum values. Each
 * finding names the CRD, the version and the property path.
 */
import type { KubeObject } from "../client.js";

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  additionalProperties?: Schema | boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
};

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Schema };
}

interface Crd extends KubeObject {
  spec: { scope?: string; versions?: CrdVersion[] };
  status?: { storedVersions?: string[] };
}

function compare(path: string, old: Schema | undefined, next: Schema | undefined, out: string[]): void {
  if (!old || !next) return;
  if (old.type && next.type && old.type !== next.type) out.push(`${path}: type changed from ${old.type} to ${next.type}`);
  if (old.enum === undefined && next.enum !== undefined) out.push(`${path}: enum restriction added`);
  if (old.enum && next.enum) {
    const removed = old.enum.filter((v) => !next.enum!.some((n) => JSON.stringify(n) === JSON.stringify(v)));
    if (removed.length > 0) out.push(`${path}: enum values removed: ${removed.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  const newRequired = (next.required ?? []).filter((r) => !(old.required ?? []).includes(r));
  for (const r of newRequired) out.push(`${path}.${r}: new required field`);
  if (old.properties && !next["x-kubernetes-preserve-unknown-fields"]) {
    for (const [k, v] of Object.entries(old.properties)) {
      if (!next.properties || !(k in next.properties)) out.push(`${path}.${k}: field removed`);
      else compare(`${path}.${k}`, v, next.properties[k], out);
    }
  }
  if (old.items && next.items) compare(`${path}[*]`, old.items, next.items, out);
  if (typeof old.additionalProperties === "object" && typeof next.additionalProperties === "object") compare(`${path}[*]`, old.additionalProperties, next.additionalProperties, out);
}

/** The reasons the change from `existing` to `desired` is unsafe (empty when it is safe). */
export function crdUpgradeProblems(existing: KubeObject, desired: KubeObject): string[] {
  const a = existing as Crd;
  const b = desired as Crd;
  const out: string[] = [];
  const name = a.metadata.name;
  if ((a.spec.scope ?? "Namespaced") !== (b.spec.scope ?? "Namespaced")) out.push(`scope changed from ${a.spec.scope} to ${b.spec.scope}`);
  const newVersions = new Map((b.spec.versions ?? []).map((v) => [v.name, v]));
  const removedStored = (a.status?.storedVersions ?? []).filter((v) => !newVersions.has(v));
  if (removedStored.length > 0) out.push(`NoStoredVersionRemoved: stored version${removedStored.length > 1 ? "s" : ""} ${removedStored.map((v) => JSON.stringify(v)).join(", ")} removed`);
  for (const v of a.spec.versions ?? []) {
    const n = newVersions.get(v.name);
    if (!n) continue;
    const found: string[] = [];
    compare("^", v.schema?.openAPIV3Schema, n.schema?.openAPIV3Schema, found);
    for (const f of found) out.push(`${v.name}: ${f}`);
  }
  return out.map((p) => `validating upgrade for CRD ${JSON.stringify(name)}: ${p}`);
}
