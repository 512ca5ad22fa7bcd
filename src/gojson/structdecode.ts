/**
 * Decoding a JSON value into a Go struct the way encoding/json does it, with one way to describe Go types
 * ({@link GoType}); used for the template input types opm declares (BasicTemplateData, SemverTemplateData,
 * the schema probe, composite and substitutes templates): field
 * names matched exactly first, then case-insensitively; the first type error kept while decoding
 * goes on; `json: unknown field "<k>"` under DisallowUnknownFields; Go's UnmarshalTypeError texts
 * (`json: cannot unmarshal <kind> into Go struct field <Struct>.<path> of type <T>`).
 *
 * With `coerceStrings` it also applies sigs.k8s.io/yaml's YAML→JSON step first: a YAML number or
 * boolean headed for a Go string field becomes its string form (ints in decimal, floats as
 * strconv.FormatFloat(f, 'g', -1, 32), booleans as true/false).
 */
import { goFormatFloatG } from "./float.js";
import { compareUtf8 } from "./encode.js";
import { goQuote } from "./quote.js";
import { goFoldEqual } from "./unicode.js";
import type { JsonValue } from "./value.js";
import { goJsonKind, goUnmarshalTypeError } from "./unmarshal.js";

export { goFoldEqual };

/** The Go types the template structs use. */
export type GoType =
  | { kind: "string"; goName: string }
  | { kind: "bool" }
  | { kind: "slice"; goName: string; elem: GoType }
  | { kind: "struct"; goName: string; shortName: string; fields: readonly GoField[] }
  /** A type with its own UnmarshalJSON (declcfg.Meta): the raw value is handed over as it is. */
  | { kind: "custom"; goName: string };

export interface GoField {
  /** The JSON name from the struct tag. */
  json: string;
  type: GoType;
}

export interface GoDecodeOptions {
  disallowUnknownFields?: boolean;
  coerceStrings?: boolean;
  /**
   * Called for each value of a `custom` type, `null` included (Go then sets a nil pointer without
   * calling UnmarshalJSON); returning a string aborts decoding with that message (Go returns an
   * Unmarshaler's error at once, dropping any saved type error).
   */
  custom?: (value: JsonValue, path: readonly string[]) => unknown;
}

export type GoDecodeResult = { ok: true; value: unknown } | { ok: false; error: string };

class Abort {
  constructor(readonly message: string) {}
}

/** strconv.FormatFloat(f, 'g', -1, 32): the shortest float32 digits, %e form when the exponent is < -4 or >= 6. */
export function formatFloat32G(f: number): string {
  return goFormatFloatG(f, 32);
}

/** sigs.k8s.io/yaml's coercion of a YAML scalar into a string field. */
function coerceToString(v: JsonValue): JsonValue {
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number")
    return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : formatFloat32G(v);
  return v;
}

/**
 * Decodes `value` into a fresh zero value of `type` (structs become plain objects keyed by the JSON
 * field names, with Go zero values for absent fields; slices are arrays, `null` for a nil slice).
 */
export function goDecode(value: JsonValue, type: GoType, opts: GoDecodeOptions = {}): GoDecodeResult {
  let saved: string | undefined;
  const path: string[] = [];
  let structName: string | undefined;

  const typeError = (v: JsonValue, t: GoType): void => {
    if (saved !== undefined) return;
    const tn = t.kind === "bool" ? "bool" : t.goName;
    const at =
      structName !== undefined || path.length > 0 ? { struct: structName ?? "", field: path.join(".") } : undefined;
    saved = goUnmarshalTypeError(goJsonKind(v), tn, at);
  };

  const zero = (t: GoType): unknown => {
    switch (t.kind) {
      case "string":
        return "";
      case "bool":
        return false;
      case "slice":
        return null;
      case "custom":
        return null;
      case "struct": {
        const o: Record<string, unknown> = {};
        for (const f of t.fields) o[f.json] = zero(f.type);
        return o;
      }
    }
  };

  const decode = (v: JsonValue, t: GoType, into: unknown): unknown => {
    if (opts.coerceStrings && t.kind === "string") v = coerceToString(v);
    if (t.kind === "custom") {
      const r = opts.custom ? opts.custom(v, path) : undefined;
      if (typeof r === "string") throw new Abort(r);
      return v;
    }
    if (v === null) return into;
    switch (t.kind) {
      case "string":
        if (typeof v === "string") return v;
        typeError(v, t);
        return into;
      case "bool":
        if (typeof v === "boolean") return v;
        typeError(v, t);
        return into;
      case "slice": {
        if (!Array.isArray(v)) {
          typeError(v, t);
          return into;
        }
        const out: unknown[] = [];
        for (const e of v) out.push(decode(e, t.elem, zero(t.elem)));
        return out;
      }
      case "struct": {
        if (v === null || typeof v !== "object" || Array.isArray(v)) {
          typeError(v, t);
          return into;
        }
        const obj = (into ?? zero(t)) as Record<string, unknown>;
        const keys = Object.keys(v);
        if (opts.coerceStrings) keys.sort(compareUtf8);
        const depth = path.length;
        const outerStruct = structName;
        for (const k of keys) {
          let f = t.fields.find((x) => x.json === k);
          if (!f) f = t.fields.find((x) => goFoldEqual(k, x.json));
          if (!f) {
            if (opts.disallowUnknownFields && saved === undefined) saved = `json: unknown field ${goQuote(k)}`;
            continue;
          }
          path.push(f.json);
          structName = t.shortName;
          obj[f.json] = decode(v[k], f.type, obj[f.json]);
          path.length = depth;
          structName = outerStruct;
        }
        return obj;
      }
    }
  };

  try {
    const out = decode(value, type, zero(type));
    return saved !== undefined ? { ok: false, error: saved } : { ok: true, value: out };
  } catch (e) {
    if (e instanceof Abort) return { ok: false, error: e.message };
    throw e;
  }
}
