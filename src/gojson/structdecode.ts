/**
 * Decoding JSON into Go structs the way encoding/json does it, with one way to describe Go types
 * ({@link GoType}) and two entry points over it:
 *
 * * {@link goUnmarshal}: `json.Unmarshal(text, &v)` on JSON text — a port of encoding/json's
 *   decodeState: syntax errors first, then members in text order (duplicate keys decode again into
 *   the value already there, a slice reuses the elements within its capacity), field names matched
 *   exactly first, then case-insensitively (the first field of a folded name), `json.RawMessage`
 *   fields keep their verbatim text, custom UnmarshalJSON methods get the raw text, the first type
 *   error is kept while decoding goes on. Decoded values: `undefined` is every type's zero value;
 *   strings, booleans and ints are JS values; structs are plain objects keyed by the fields' JSON
 *   names (absent fields stay absent, i.e. zero); maps are `Map`s; slices are {@link GoSlice}s;
 *   a pointer is its element's value (`undefined` for nil), so a present zero struct (`{}`) and a
 *   nil pointer stay distinct. Used by the CSV migration (fbc/migrate.ts) and the bundle renderer.
 * * {@link goDecode}: the same rules over an already parsed JSON value (no duplicate keys, no
 *   verbatim texts), for the template inputs opm declares (BasicTemplateData, SemverTemplateData,
 *   the schema probe, composite and substitutes templates) and the FBC blob decoders' exact path;
 *   structs come back with Go zero values filled in. With `coerceStrings` it also applies
 *   sigs.k8s.io/yaml's YAML→JSON step first: a YAML number or boolean headed for a Go string field
 *   becomes its string form (ints in decimal, floats as strconv.FormatFloat(f, 'g', -1, 32),
 *   booleans as true/false).
 *
 * Errors are Go's texts: `json: cannot unmarshal <kind> into Go struct field <Struct>.<path> of
 * type <T>` (UnmarshalTypeError: Struct is the innermost struct, the path the JSON names from the
 * top, with the Go name of an embedded struct before a promoted field), `json: unknown field "<k>"`
 * under DisallowUnknownFields, and the syntax errors of json.Unmarshal.
 */
import { goBase64ErrorOffset } from "./base64.js";
import { goFormatFloatG } from "./float.js";
import { compareUtf8, formatGoFloat } from "./encode.js";
import { goQuote } from "./quote.js";
import { findJsonValueEnd, goJsonSyntaxError, stringEnd } from "./scan.js";
import { foldFieldName } from "./unicode.js";
import type { JsonValue } from "./value.js";
import { goJsonKind, goUnmarshalTypeError, parseGoValueTypeError } from "./unmarshal.js";

/** A Go type as encoding/json sees it. `goName` is what Go prints in type errors (`[]declcfg.Bundle`). */
export type GoType =
  /** string and named string types (`v1.OperationType`). */
  | { kind: "string"; goName: string }
  | { kind: "bool" }
  /** Signed integers: a JSON number whose literal is an integer within [min, max]. */
  | { kind: "int"; goName: string; min: bigint; max: bigint }
  /** `[]byte`: a standard padded base64 string (goDecode only). */
  | { kind: "bytes" }
  /** `json.RawMessage`: the verbatim text (`"null"` for null). */
  | { kind: "raw" }
  | { kind: "slice"; goName: string; elem: GoType }
  | { kind: "map"; goName: string; elem: GoType }
  /** A pointer: null makes it nil (`undefined`), anything else decodes into its element. */
  | { kind: "ptr"; goName: string; elem: GoType }
  | { kind: "struct"; goName: string; shortName: string; fields: readonly GoField[] }
  /** A struct type checked only for being a JSON object; its content is kept as it is. */
  | { kind: "opaque"; goName: string }
  /**
   * A type with its own UnmarshalJSON (declcfg.Meta, metav1.Time, intstr.IntOrString…): the raw
   * text goes to `unmarshal` (goUnmarshal), the value to `GoDecodeOptions.custom` (goDecode).
   */
  | { kind: "custom"; goName: string; unmarshal?: (raw: string, d: GoUnmarshalContext) => void };

export interface GoField {
  /** The JSON name from the struct tag (the Go field name when the tag has none). */
  json: string;
  type: GoType;
  /** Go name of the embedded struct a promoted field comes from (it precedes the field in error paths). */
  embed?: string;
}

/** What a custom UnmarshalJSON method can do while {@link goUnmarshal} runs. */
export interface GoUnmarshalContext {
  /**
   * `json.Unmarshal(raw, &target)` inside the method: a type error
   * aborts the outer decoding, with the outer context.
   */
  unmarshalInner(raw: string, type: GoType): unknown;
  /** unmarshalInner into a string (`""` for null). */
  unmarshalString(raw: string): string;
  /** Returns `message` as the method's error: decoding stops with it. */
  abort(message: string): never;
}

/** The name Go prints for a type. */
export function goTypeName(t: GoType): string {
  switch (t.kind) {
    case "bool":
      return "bool";
    case "bytes":
      return "[]uint8";
    case "raw":
      return "json.RawMessage";
    default:
      return t.goName;
  }
}

// Constructors of type descriptions.
export const GO_STRING: GoType = { kind: "string", goName: "string" };
export const GO_BOOL: GoType = { kind: "bool" };
export const GO_INT32: GoType = { kind: "int", goName: "int32", min: -(2n ** 31n), max: 2n ** 31n - 1n };
export const GO_INT64: GoType = { kind: "int", goName: "int64", min: -(2n ** 63n), max: 2n ** 63n - 1n };
/** A byte of a `[]byte` decoded from a JSON array (unsigned: ParseUint rejects a sign). */
const GO_UINT8: GoType = { kind: "int", goName: "uint8", min: 0n, max: 255n };

/** strconv.ParseInt / ParseUint of a number literal into an int type: the value, or undefined. */
function parseGoInt(lit: string, t: Extract<GoType, { kind: "int" }>): number | undefined {
  if (!/^-?\d+$/.test(lit) || (t.min === 0n && lit.charCodeAt(0) === 0x2d)) return undefined;
  const n = BigInt(lit);
  return n >= t.min && n <= t.max ? Number(n) : undefined;
}
export const GO_RAW: GoType = { kind: "raw" };
export const GO_BYTES: GoType = { kind: "bytes" };
export const goString = (goName = "string"): GoType => (goName === "string" ? GO_STRING : { kind: "string", goName });
export const goSlice = (elem: GoType, goName = "[]" + goTypeName(elem)): GoType => ({ kind: "slice", goName, elem });
export const goPtr = (elem: GoType): GoType => ({ kind: "ptr", goName: "*" + goTypeName(elem), elem });
export const goMap = (elem: GoType, goName = "map[string]" + goTypeName(elem)): GoType => ({
  kind: "map",
  goName,
  elem,
});
export const GO_STRINGS: GoType = goSlice(GO_STRING);
export const GO_STRING_MAP: GoType = goMap(GO_STRING);

/**
 * A struct type from its package-qualified Go name (`declcfg.Bundle`) and its fields in Go order:
 * `[json name, type]` or `[json name, type, embedding struct's Go name]`.
 */
export function goStruct(goName: string, fields: readonly (readonly [string, GoType, string?])[]): GoStructType {
  return {
    kind: "struct",
    goName,
    shortName: goName.slice(goName.lastIndexOf(".") + 1),
    fields: fields.map(([json, type, embed]) => (embed === undefined ? { json, type } : { json, type, embed })),
  };
}

export type GoStructType = Extract<GoType, { kind: "struct" }>;

interface FieldIndex {
  exact: Map<string, GoField>;
  /** folded name → the first field with that folded name (Go's byFoldedName). */
  folded: Map<string, GoField>;
}

const fieldIndexes = new WeakMap<GoStructType, FieldIndex>();

function fieldIndex(t: GoStructType): FieldIndex {
  let ix = fieldIndexes.get(t);
  if (ix === undefined) {
    ix = { exact: new Map(), folded: new Map() };
    for (const f of t.fields) {
      if (!ix.exact.has(f.json)) ix.exact.set(f.json, f);
      const k = foldFieldName(f.json);
      if (!ix.folded.has(k)) ix.folded.set(k, f);
    }
    fieldIndexes.set(t, ix);
  }
  return ix;
}

/** The field encoding/json stores member `key` into: exact name first, then the folded name. */
function goStructField(t: GoStructType, key: string): GoField | undefined {
  const ix = fieldIndex(t);
  return ix.exact.get(key) ?? ix.folded.get(foldFieldName(key));
}

/** Go's errorContext: the innermost struct being decoded and the field names leading to the value. */
class ErrorContext {
  struct: string | undefined;
  readonly stack: string[] = [];

  text(value: string, goType: string): string {
    const at =
      this.struct !== undefined || this.stack.length > 0
        ? { struct: this.struct ?? "", field: this.stack.join(".") }
        : undefined;
    return goUnmarshalTypeError(value, goType, at);
  }
}

/**
 * A decoded value, or Go's error. After a type error Go has still decoded everything else:
 * `value` then holds that partial value (absent after a syntax error or an UnmarshalJSON error).
 */
export type GoDecodeResult =
  | { ok: true; value: unknown }
  /** `offset`: goUnmarshal's UnmarshalTypeError.Offset (bytes of the text read when the type error occurred). */
  | { ok: false; error: string; value?: unknown; offset?: number };

class Abort {
  /** `offset`: a UnmarshalTypeError's Offset in bytes (inside the raw text a custom method decoded). */
  constructor(
    readonly message: string,
    readonly offset?: number,
  ) {}
}

// ---------------------------------------------------------------------------------------------
// goUnmarshal: JSON text

/** A decoded Go slice: `n` elements of `b`; `b` may hold more (Go's spare capacity keeps old elements). */
export interface GoSlice {
  b: unknown[];
  n: number;
}

/** The elements of a decoded {@link GoSlice} (`[]` for nil). */
export function goSliceItems(v: unknown): unknown[] {
  const s = v as GoSlice | undefined;
  if (s === undefined || s.n === 0) return [];
  return s.b.length === s.n ? s.b : s.b.slice(0, s.n);
}

/** A port of the parts of Go's encoding/json decodeState used for typed decoding of valid JSON. */
class TextDecoder implements GoUnmarshalContext {
  pos = 0;
  saved: string | undefined;
  /** UTF-16 index of Go's UnmarshalTypeError.Offset for a saved type error. */
  savedAt: number | undefined;
  readonly ctx = new ErrorContext();

  constructor(readonly text: string) {}

  /** Records the first type error, with the current context (saveError + addErrorContext). */
  typeError(value: string, type: string, at: number): void {
    if (this.saved === undefined) {
      this.saved = this.ctx.text(value, type);
      this.savedAt = at;
    }
  }

  /** A text index as Go's byte offset. */
  byteOffset(i: number): number {
    return Buffer.byteLength(this.text.slice(0, i), "utf8");
  }

  abort(message: string): never {
    throw new Abort(message);
  }

  unmarshalInner(raw: string, type: GoType): unknown {
    const inner = new TextDecoder(raw);
    const v = inner.value(type, undefined);
    if (inner.saved !== undefined) {
      const m = parseGoValueTypeError(inner.saved);
      const at = inner.savedAt === undefined ? undefined : inner.byteOffset(inner.savedAt);
      throw new Abort(m ? this.ctx.text(m.value, m.goType) : inner.saved, at);
    }
    return v;
  }

  unmarshalString(raw: string): string {
    return (this.unmarshalInner(raw, GO_STRING) as string | undefined) ?? "";
  }

  skipSpace(): number {
    const t = this.text;
    let i = this.pos;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.pos = i;
    return t.charCodeAt(i);
  }

  /** End of the (valid) JSON value starting at `this.pos`. */
  valueEnd(): number {
    const t = this.text;
    let i = this.pos;
    const c = t.charCodeAt(i);
    if (c === 0x22) return stringEnd(t, i);
    if (c === 0x7b || c === 0x5b) {
      let depth = 0;
      for (;;) {
        const d = t.charCodeAt(i);
        if (d === 0x22) {
          i = stringEnd(t, i);
          continue;
        }
        if (d === 0x7b || d === 0x5b) depth++;
        else if (d === 0x7d || d === 0x5d) {
          depth--;
          if (depth === 0) return i + 1;
        }
        i++;
      }
    }
    while (i < t.length) {
      const d = t.charCodeAt(i);
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      i++;
    }
    return i;
  }

  skipValue(): string {
    const start = this.pos;
    this.pos = this.valueEnd();
    return this.text.slice(start, this.pos);
  }

  readString(): string {
    const t = this.text;
    const start = this.pos;
    const end = stringEnd(t, start);
    this.pos = end;
    const body = t.slice(start + 1, end - 1);
    return body.includes("\\") ? (JSON.parse(t.slice(start, end)) as string) : body;
  }

  /** Decodes the value at `pos` into a Go value of type `t` whose current value is `old`. */
  value(t: GoType, old: unknown): unknown {
    const c = this.skipSpace();
    if (t.kind === "custom") {
      const raw = this.skipValue();
      t.unmarshal?.(raw, this);
      return old;
    }
    switch (c) {
      case 0x6e: // null
        this.pos += 4;
        switch (t.kind) {
          case "raw":
            return "null";
          case "ptr":
          case "slice":
          case "map":
          case "bytes":
            return undefined;
          default:
            return old;
        }
      case 0x7b: // {
        if (t.kind === "ptr") return this.value(t.elem, old);
        if (t.kind === "raw") return this.skipValue();
        if (t.kind === "struct") return this.object(t, (old as Record<string, unknown> | undefined) ?? {});
        if (t.kind === "map") return this.map(t.elem, (old as Map<string, unknown> | undefined) ?? new Map());
        if (t.kind !== "opaque") this.typeError("object", goTypeName(t), this.pos + 1);
        this.skipValue();
        return old;
      case 0x5b: // [
        if (t.kind === "ptr") return this.value(t.elem, old);
        if (t.kind === "raw") return this.skipValue();
        if (t.kind === "slice") return this.array(t.elem, old as GoSlice | undefined);
        if (t.kind === "bytes") {
          // encoding/json fills a []byte from an array of numbers like any other slice.
          const prev = old as Uint8Array | undefined;
          const s = this.array(GO_UINT8, prev === undefined ? undefined : { b: Array.from(prev), n: prev.length });
          return Uint8Array.from(goSliceItems(s), (x) => (x as number | undefined) ?? 0);
        }
        this.typeError("array", goTypeName(t), this.pos + 1);
        this.skipValue();
        return old;
      case 0x22: // "
        if (t.kind === "ptr") return this.value(t.elem, old);
        if (t.kind === "raw") return this.skipValue();
        if (t.kind === "string") return this.readString();
        if (t.kind === "bytes") {
          const s = this.readString();
          const err = goBase64ErrorOffset(s);
          if (err < 0) return new Uint8Array(Buffer.from(s.replace(/[\r\n]/g, ""), "base64"));
          if (this.saved === undefined) this.saved = `illegal base64 data at input byte ${err}`;
          return old;
        }
        this.skipValue();
        this.typeError("string", goTypeName(t), this.pos);
        return old;
      case 0x74: // true
      case 0x66: // false
        if (t.kind === "ptr") return this.value(t.elem, old);
        if (t.kind === "raw") return this.skipValue();
        this.pos += c === 0x74 ? 4 : 5;
        if (t.kind === "bool") return c === 0x74;
        this.typeError("bool", goTypeName(t), this.pos);
        return old;
      default: {
        // number
        if (t.kind === "ptr") return this.value(t.elem, old);
        const lit = this.skipValue();
        if (t.kind === "raw") return lit;
        if (t.kind === "int") {
          const n = parseGoInt(lit, t);
          if (n !== undefined) return n;
          this.typeError("number " + lit, t.goName, this.pos);
          return old;
        }
        this.typeError("number", goTypeName(t), this.pos);
        return old;
      }
    }
  }

  object(t: GoStructType, obj: Record<string, unknown>): Record<string, unknown> {
    const text = this.text;
    this.pos++; // {
    if (this.skipSpace() === 0x7d) {
      this.pos++;
      return obj;
    }
    const ctx = this.ctx;
    const origStruct = ctx.struct;
    const origDepth = ctx.stack.length;
    for (;;) {
      const key = this.readString();
      this.skipSpace();
      this.pos++; // :
      const f = goStructField(t, key);
      if (f === undefined) {
        this.skipSpace();
        this.skipValue();
      } else {
        if (f.embed !== undefined) ctx.stack.push(f.embed);
        ctx.struct = t.shortName;
        ctx.stack.push(f.json);
        obj[f.json] = this.value(f.type, obj[f.json]);
        ctx.stack.length = origDepth;
        ctx.struct = origStruct;
      }
      const c = this.skipSpace();
      this.pos++;
      if (c === 0x7d) return obj;
      this.skipSpace();
      if (text.charCodeAt(this.pos) !== 0x22) throw new Error("goUnmarshal: unexpected JSON state");
    }
  }

  map(elem: GoType, m: Map<string, unknown>): Map<string, unknown> {
    this.pos++; // {
    if (this.skipSpace() === 0x7d) {
      this.pos++;
      return m;
    }
    for (;;) {
      const key = this.readString();
      this.skipSpace();
      this.pos++; // :
      m.set(key, this.value(elem, undefined));
      const c = this.skipSpace();
      this.pos++;
      if (c === 0x7d) return m;
      this.skipSpace();
    }
  }

  array(elem: GoType, old: GoSlice | undefined): GoSlice {
    this.pos++; // [
    const s: GoSlice = old ?? { b: [], n: 0 };
    let i = 0;
    if (this.skipSpace() !== 0x5d) {
      for (;;) {
        // Go grows the slice to i+1 and decodes into the element already there (an old one
        // within the capacity, else a zero one).
        const prev = i < s.b.length ? s.b[i] : undefined;
        s.b[i] = this.value(elem, prev);
        i++;
        if (i > s.n) s.n = i;
        const c = this.skipSpace();
        this.pos++;
        if (c === 0x5d) break;
      }
    } else {
      this.pos++;
    }
    if (i === 0) return { b: [], n: 0 };
    s.n = i;
    return s;
  }
}

/** The first byte of a code point's UTF-8 encoding (Go's scanner reports bytes). */
function firstUtf8Byte(cp: number): number {
  if (cp < 0x80) return cp;
  if (cp < 0x800) return 0xc0 | (cp >> 6);
  if (cp < 0x10000) return 0xe0 | (cp >> 12);
  return 0xf0 | (cp >> 18);
}

/** encoding/json's quoteChar: a byte as Go prints it in syntax errors (`'x'`, `'\\''`, `'"'`, `'\\x01'`). */
function goQuoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const q = goQuote(String.fromCharCode(c));
  return "'" + q.slice(1, -1) + "'";
}

/** json.Unmarshal's error for text that is not exactly one JSON value, or undefined. */
function goUnmarshalSyntaxError(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    // Go's text follows.
  }
  let i = 0;
  while (i < text.length && " \t\r\n".includes(text[i])) i++;
  if (i === text.length) return "unexpected end of JSON input";
  const e = goJsonSyntaxError(text, i);
  if (e !== undefined) {
    if (!e.eof) return e.message;
    // At the end Go's scanner steps a space (scanner.eof): a literal cut short fails on it.
    const spaced = goJsonSyntaxError(text + " ", i);
    return spaced !== undefined && !spaced.eof ? spaced.message : "unexpected end of JSON input";
  }
  // The first value is valid: whatever follows it but space is Go's "after top-level value" error
  // (a literal ends at the next delimiter, so `true{` stops before the brace).
  let end = findJsonValueEnd(text, i);
  while (end < text.length && " \t\r\n".includes(text[end])) end++;
  if (end >= text.length) return undefined;
  return `invalid character ${goQuoteChar(firstUtf8Byte(text.codePointAt(end) ?? 0))} after top-level value`;
}

/**
 * `json.Unmarshal(text, &v)` with `v` a fresh zero value of `type`: the decoded value (see the
 * module comment for its representation; `undefined` is the zero value) or Go's error text.
 */
export function goUnmarshal(text: string, type: GoType): GoDecodeResult {
  const syntax = goUnmarshalSyntaxError(text);
  if (syntax !== undefined) return { ok: false, error: syntax };
  const d = new TextDecoder(text);
  let v: unknown;
  try {
    v = d.value(type, undefined);
  } catch (e) {
    if (e instanceof Abort)
      return e.offset === undefined
        ? { ok: false, error: e.message }
        : { ok: false, error: e.message, offset: e.offset };
    throw e;
  }
  if (d.saved === undefined) return { ok: true, value: v };
  return d.savedAt === undefined
    ? { ok: false, error: d.saved, value: v }
    : { ok: false, error: d.saved, value: v, offset: d.byteOffset(d.savedAt) };
}

// ---------------------------------------------------------------------------------------------
// goDecode: parsed JSON values

export interface GoDecodeOptions {
  disallowUnknownFields?: boolean;
  coerceStrings?: boolean;
  /** Members are visited in sorted (UTF-8) order, as in text Go re-encoded from a map (implied by coerceStrings). */
  sortedKeys?: boolean;
  /**
   * Field names match exactly only, as sigs.k8s.io/json's case-sensitive decoding (apimachinery's
   * serializers) does; members in another letter case are unknown fields.
   */
  caseSensitive?: boolean;
  /**
   * Called for each value of a `custom` type, `null` included (Go then sets a nil pointer without
   * calling UnmarshalJSON); returning a string aborts decoding with that message (Go returns an
   * Unmarshaler's error at once, dropping any saved type error).
   */
  custom?: (value: JsonValue, path: readonly string[]) => unknown;
}

/** sigs.k8s.io/yaml's coercion of a YAML scalar into a string field. */
function coerceToString(v: JsonValue): JsonValue {
  if (typeof v === "boolean") return v ? "true" : "false";
  // go-yaml v2 resolves an integer that fits int64 or uint64 as an integer (FormatInt/FormatUint),
  // anything else as a float64 (FormatFloat(f, 'g', -1, 32)).
  if (typeof v === "number")
    return Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 64 ? BigInt(v).toString() : goFormatFloatG(v, 32);
  return v;
}

/**
 * goDecode's zero value of a type: "", false, 0, null (nil slice, map, pointer, []byte,
 * custom, opaque struct), undefined (nil RawMessage), or a struct of zero fields.
 */
function goZero(t: GoType): unknown {
  switch (t.kind) {
    case "string":
      return "";
    case "bool":
      return false;
    case "int":
      return 0;
    case "raw":
      return undefined;
    case "struct": {
      const o: Record<string, unknown> = {};
      for (const f of t.fields) o[f.json] = goZero(f.type);
      return o;
    }
    default:
      return null;
  }
}

const isObject = (v: JsonValue): v is Record<string, JsonValue> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Decodes `value` into a fresh zero value of `type` (structs become plain objects keyed by the JSON
 * field names, with Go zero values for absent fields, see {@link goZero}; slices are arrays, maps
 * plain objects, a non-nil pointer its element's value, a RawMessage the JSON value itself, `[]byte`
 * a Uint8Array).
 */
export function goDecode(value: JsonValue, type: GoType, opts: GoDecodeOptions = {}): GoDecodeResult {
  let saved: string | undefined;
  const ctx = new ErrorContext();
  const sortKeys = opts.sortedKeys === true || opts.coerceStrings === true;

  const typeError = (v: JsonValue, t: GoType): void => {
    if (saved === undefined) saved = ctx.text(goJsonKind(v), goTypeName(t));
  };

  const decode = (v: JsonValue, t: GoType, into: unknown): unknown => {
    if (opts.coerceStrings && t.kind === "string") v = coerceToString(v);
    if (t.kind === "custom") {
      const r = opts.custom ? opts.custom(v, ctx.stack) : undefined;
      if (typeof r === "string") throw new Abort(r);
      return v;
    }
    if (t.kind === "raw") return v;
    if (v === null)
      return t.kind === "ptr" || t.kind === "slice" || t.kind === "map" || t.kind === "bytes" ? null : into;
    switch (t.kind) {
      case "ptr":
        return decode(v, t.elem, into ?? goZero(t.elem));
      case "string":
        if (typeof v === "string") return v;
        typeError(v, t);
        return into;
      case "bool":
        if (typeof v === "boolean") return v;
        typeError(v, t);
        return into;
      case "int": {
        if (typeof v !== "number") {
          typeError(v, t);
          return into;
        }
        // The literal Go reads is json.Marshal's encoding of the value (a re-encoded Meta, YAMLToJSON).
        const lit = formatGoFloat(v);
        const n = parseGoInt(lit, t);
        if (n !== undefined) return n;
        if (saved === undefined) saved = ctx.text(`number ${lit}`, t.goName);
        return into;
      }
      case "bytes": {
        if (Array.isArray(v)) {
          const out = new Uint8Array(v.length);
          v.forEach((e, i) => {
            out[i] = decode(e, GO_UINT8, 0) as number;
          });
          return out;
        }
        if (typeof v !== "string") {
          typeError(v, t);
          return into;
        }
        const err = goBase64ErrorOffset(v);
        if (err >= 0) {
          if (saved === undefined) saved = `illegal base64 data at input byte ${err}`;
          return into;
        }
        return new Uint8Array(Buffer.from(v.replace(/[\r\n]/g, ""), "base64"));
      }
      case "slice": {
        if (!Array.isArray(v)) {
          typeError(v, t);
          return into;
        }
        const out: unknown[] = [];
        for (const e of v) out.push(decode(e, t.elem, goZero(t.elem)));
        return out;
      }
      case "map": {
        if (!isObject(v)) {
          typeError(v, t);
          return into;
        }
        const m = (into ?? {}) as Record<string, unknown>;
        const keys = Object.keys(v);
        if (sortKeys) keys.sort(compareUtf8);
        for (const k of keys) m[k] = decode(v[k], t.elem, goZero(t.elem));
        return m;
      }
      case "opaque":
        if (isObject(v)) return v;
        typeError(v, t);
        return into;
      case "struct": {
        if (!isObject(v)) {
          typeError(v, t);
          return into;
        }
        const obj = (into ?? goZero(t)) as Record<string, unknown>;
        const keys = Object.keys(v);
        if (sortKeys) keys.sort(compareUtf8);
        const depth = ctx.stack.length;
        const outerStruct = ctx.struct;
        for (const k of keys) {
          const f = opts.caseSensitive ? t.fields.find((x) => x.json === k) : goStructField(t, k);
          if (!f) {
            if (opts.disallowUnknownFields && saved === undefined) saved = `json: unknown field ${goQuote(k)}`;
            continue;
          }
          if (f.embed !== undefined) ctx.stack.push(f.embed);
          ctx.stack.push(f.json);
          ctx.struct = t.shortName;
          obj[f.json] = decode(v[k], f.type, obj[f.json]);
          ctx.stack.length = depth;
          ctx.struct = outerStruct;
        }
        return obj;
      }
    }
  };

  try {
    const out = decode(value, type, goZero(type));
    return saved !== undefined ? { ok: false, error: saved, value: out } : { ok: true, value: out };
  } catch (e) {
    if (e instanceof Abort) return { ok: false, error: e.message };
    throw e;
  }
}
