/**
 * The `olm.constraint` property (operator-framework/api pkg/constraints): a generic dependency with
 * exactly one of `cel`, `gvk`, `package`, `all`, `any` or `not`, and an optional `failureMessage`.
 * opm only copies these; the resolver evaluates them. Parsing follows `constraints.Parse`: at most
 * 128 KiB of raw JSON, unknown fields rejected, Go's decoding rules and messages.
 */
import { sortedKeys } from "../gojson/encode.js";
import { goFoldEqual } from "../gojson/unicode.js";
import type { JsonValue } from "./types.js";
import { goJsonKind, goUnmarshalTypeError } from "../gojson/unmarshal.js";

export const MAX_CONSTRAINT_SIZE = 2 << 16;

export interface CelConstraint {
  rule: string;
}
export interface GVKConstraint {
  group: string;
  kind: string;
  version: string;
}
export interface PackageConstraint {
  packageName: string;
  versionRange: string;
}
export interface CompoundConstraint {
  constraints: Constraint[];
}
export interface Constraint {
  failureMessage?: string;
  cel?: CelConstraint;
  package?: PackageConstraint;
  gvk?: GVKConstraint;
  all?: CompoundConstraint;
  any?: CompoundConstraint;
  not?: CompoundConstraint;
}

/** Which kind of constraint this is, or an error text when it has none or several. */
export function constraintKind(
  c: Constraint,
): { kind: "cel" | "package" | "gvk" | "all" | "any" | "not" } | { error: string } {
  const kinds = (["cel", "package", "gvk", "all", "any", "not"] as const).filter((k) => c[k] !== undefined);
  if (kinds.length === 1) return { kind: kinds[0] };
  if (kinds.length === 0) return { error: "constraint must have one of cel, package, gvk, all, any or not" };
  return { error: `constraint has more than one of cel, package, gvk, all, any or not: ${kinds.join(", ")}` };
}

export class ConstraintParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConstraintParseError";
  }
}

type Field = { json: string; kind: "string" | "cel" | "gvk" | "package" | "compound" | "constraints" };
const FIELDS: Record<string, Field[]> = {
  Constraint: [
    { json: "failureMessage", kind: "string" },
    { json: "cel", kind: "cel" },
    { json: "package", kind: "package" },
    { json: "gvk", kind: "gvk" },
    { json: "all", kind: "compound" },
    { json: "any", kind: "compound" },
    { json: "not", kind: "compound" },
  ],
  Cel: [{ json: "rule", kind: "string" }],
  GVKConstraint: [
    { json: "group", kind: "string" },
    { json: "kind", kind: "string" },
    { json: "version", kind: "string" },
  ],
  PackageConstraint: [
    { json: "packageName", kind: "string" },
    { json: "versionRange", kind: "string" },
  ],
  CompoundConstraint: [{ json: "constraints", kind: "constraints" }],
};
const GO_TYPE: Record<Field["kind"], string> = {
  string: "string",
  cel: "constraints.Cel",
  gvk: "constraints.GVKConstraint",
  package: "constraints.PackageConstraint",
  compound: "constraints.CompoundConstraint",
  constraints: "[]constraints.Constraint",
};
const STRUCT_OF: Partial<Record<Field["kind"], string>> = {
  cel: "Cel",
  gvk: "GVKConstraint",
  package: "PackageConstraint",
  compound: "CompoundConstraint",
};

interface Ctx {
  struct: string;
  path: string[];
}

function typeError(v: JsonValue, goType: string, ctx: Ctx): ConstraintParseError {
  return new ConstraintParseError(
    goUnmarshalTypeError(goJsonKind(v), goType, { struct: ctx.struct, field: ctx.path.join(".") }),
  );
}

function decodeStruct(v: JsonValue, struct: string, ctx: Ctx, goType: string): Record<string, unknown> | undefined {
  if (v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    if (ctx.path.length === 0) throw new ConstraintParseError(goUnmarshalTypeError(goJsonKind(v), goType));
    throw typeError(v, goType, ctx);
  }
  const out: Record<string, unknown> = {};
  const fields = FIELDS[struct];
  for (const key of sortedKeys(v)) {
    const f = fields.find((x) => x.json === key) ?? fields.find((x) => goFoldEqual(key, x.json));
    if (!f) throw new ConstraintParseError(`json: unknown field ${JSON.stringify(key)}`);
    const val = v[key];
    const inner: Ctx = { struct, path: [...ctx.path, f.json] };
    if (f.kind === "string") {
      if (val === null) continue;
      if (typeof val !== "string") throw typeError(val, "string", inner);
      out[f.json] = val;
    } else if (f.kind === "constraints") {
      if (val === null) continue;
      if (!Array.isArray(val)) throw typeError(val, GO_TYPE.constraints, inner);
      out[f.json] = val.map((e) => decodeStruct(e, "Constraint", inner, "constraints.Constraint") ?? {});
    } else {
      const d = decodeStruct(val, STRUCT_OF[f.kind] as string, inner, GO_TYPE[f.kind]);
      if (d !== undefined) out[f.json] = d;
    }
  }
  return out;
}

/**
 * Parses an `olm.constraint` value (raw JSON text) as `constraints.Parse` does; throws
 * ConstraintParseError with Go's message.
 */
export function parseConstraint(raw: string): Constraint {
  if (Buffer.byteLength(raw) > MAX_CONSTRAINT_SIZE) {
    throw new ConstraintParseError(
      `olm.constraint value is greater than max constraint size ${MAX_CONSTRAINT_SIZE} bytes`,
    );
  }
  let v: JsonValue;
  try {
    v = JSON.parse(raw) as JsonValue;
  } catch {
    throw new ConstraintParseError(raw.trim() === "" ? "EOF" : "invalid JSON");
  }
  const d = decodeStruct(v, "Constraint", { struct: "Constraint", path: [] }, "constraints.Constraint");
  return normalize(d ?? {});
}

function normalize(d: Record<string, unknown>): Constraint {
  const c: Constraint = {};
  if (typeof d.failureMessage === "string") c.failureMessage = d.failureMessage;
  if (d.cel) c.cel = { rule: ((d.cel as Record<string, unknown>).rule as string) ?? "" };
  if (d.package) {
    const p = d.package as Record<string, unknown>;
    c.package = { packageName: (p.packageName as string) ?? "", versionRange: (p.versionRange as string) ?? "" };
  }
  if (d.gvk) {
    const g = d.gvk as Record<string, unknown>;
    c.gvk = { group: (g.group as string) ?? "", kind: (g.kind as string) ?? "", version: (g.version as string) ?? "" };
  }
  for (const k of ["all", "any", "not"] as const) {
    if (d[k]) {
      const list = ((d[k] as Record<string, unknown>).constraints as Record<string, unknown>[] | undefined) ?? [];
      c[k] = { constraints: list.map(normalize) };
    }
  }
  return c;
}
