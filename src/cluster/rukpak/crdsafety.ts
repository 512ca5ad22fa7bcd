/**
 * CRD upgrade safety (olmv1-spec §3.11 / §5.11): before a CRD that exists on the cluster is
 * replaced, the change is compared with what is there. Refused: removing a version still listed in
 * `status.storedVersions`; a scope change; and, for each version kept, removing a property, changing
 * its type, adding a required property, adding an enum restriction or removing enum values. Each
 * finding names the CRD, the version and the property path.
 */
import type { KubeObject } from "../kube/client.js";

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
  if (old.type && next.type && old.type !== next.type)
    out.push(`${path}: type changed from ${old.type} to ${next.type}`);
  if (old.enum === undefined && next.enum !== undefined) out.push(`${path}: enum restriction added`);
  if (old.enum && next.enum) {
    const removed = old.enum.filter((v) => !next.enum!.some((n) => JSON.stringify(n) === JSON.stringify(v)));
    if (removed.length > 0)
      out.push(`${path}: enum values removed: ${removed.map((v) => JSON.stringify(v)).join(", ")}`);
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
  if (typeof old.additionalProperties === "object" && typeof next.additionalProperties === "object")
    compare(`${path}[*]`, old.additionalProperties, next.additionalProperties, out);
}

/** The reasons the change from `existing` to `desired` is unsafe (empty when it is safe). */
export function crdUpgradeProblems(existing: KubeObject, desired: KubeObject): string[] {
  const a = existing as Crd;
  const b = desired as Crd;
  const out: string[] = [];
  const name = a.metadata.name;
  if ((a.spec.scope ?? "Namespaced") !== (b.spec.scope ?? "Namespaced"))
    out.push(`scope changed from ${a.spec.scope} to ${b.spec.scope}`);
  const newVersions = new Map((b.spec.versions ?? []).map((v) => [v.name, v]));
  const removedStored = (a.status?.storedVersions ?? []).filter((v) => !newVersions.has(v));
  if (removedStored.length > 0)
    out.push(
      `NoStoredVersionRemoved: stored version${removedStored.length > 1 ? "s" : ""} ` +
        `${removedStored.map((v) => JSON.stringify(v)).join(", ")} removed`,
    );
  for (const v of a.spec.versions ?? []) {
    const n = newVersions.get(v.name);
    if (!n) continue;
    const found: string[] = [];
    compare("^", v.schema?.openAPIV3Schema, n.schema?.openAPIV3Schema, found);
    for (const f of found) out.push(`${v.name}: ${f}`);
  }
  return out.map((p) => `validating upgrade for CRD ${JSON.stringify(name)}: ${p}`);
}

type ValueSchema = Schema & {
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
};

/** Checks a value against the subset of a structural schema that decides whether existing objects stay valid. */
export function validateAgainst(schema: ValueSchema | undefined, v: unknown, path: string, out: string[]): void {
  if (!schema || out.length >= 20) return;
  if (v === null) {
    if (!schema.nullable && schema.type) out.push(`${path}: must be ${schema.type}, not null`);
    return;
  }
  const t = schema.type;
  const kind = Array.isArray(v)
    ? "array"
    : typeof v === "number"
      ? Number.isInteger(v)
        ? "integer"
        : "number"
      : typeof v;
  if (t && !(t === kind || (t === "number" && kind === "integer"))) {
    out.push(`${path}: must be ${t}, is ${kind}`);
    return;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    out.push(`${path}: ${JSON.stringify(v)} is not one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  if (typeof v === "number") {
    if (schema.minimum !== undefined && v < schema.minimum)
      out.push(`${path}: ${v} is less than the minimum ${schema.minimum}`);
    if (schema.maximum !== undefined && v > schema.maximum)
      out.push(`${path}: ${v} is more than the maximum ${schema.maximum}`);
  }
  if (typeof v === "string") {
    if (schema.minLength !== undefined && v.length < schema.minLength)
      out.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && v.length > schema.maxLength)
      out.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems)
      out.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && v.length > schema.maxItems)
      out.push(`${path}: more than ${schema.maxItems} items`);
    v.forEach((x, i) => validateAgainst(schema.items as ValueSchema | undefined, x, `${path}[${i}]`, out));
  }
  if (kind === "object" && v) {
    const o = v as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!(r in o)) out.push(`${path}.${r}: Required value`);
    for (const [k, x] of Object.entries(o)) {
      const sub =
        schema.properties?.[k] ??
        (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
      validateAgainst(sub as ValueSchema | undefined, x, `${path}.${k}`, out);
    }
  }
}

/**
 * Existing custom resources checked against the new schema of their version (§3.11 rule 2): each
 * object that would no longer be valid is named with what is wrong.
 */
export function existingObjectProblems(desired: KubeObject, version: string, objects: readonly KubeObject[]): string[] {
  const d = desired as Crd;
  const schema = d.spec.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  if (!schema) return [];
  const out: string[] = [];
  for (const o of objects) {
    const found: string[] = [];
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = o as Record<string, unknown>;
    void _a;
    void _k;
    void _m;
    validateAgainst(schema as ValueSchema, rest, "", found);
    if (found.length > 0) {
      const id = `${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
      const problems = found
        .slice(0, 5)
        .map((f) => f.replace(/^\./, ""))
        .join("; ");
      out.push(
        `validating upgrade for CRD ${JSON.stringify(d.metadata.name)}: existing custom object ${id} ` +
          `failed validation for new schema version ${version}: ${problems}`,
      );
    }
  }
  return out;
}
