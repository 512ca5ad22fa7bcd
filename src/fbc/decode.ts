/**
 * Decoding blobs into the typed model with the rules of Go's encoding/json, which opm uses:
 * field names match case-insensitively (the last matching key in sorted order wins), unknown
 * fields are dropped, `null` leaves a field at its zero value, `[]byte` fields are standard
 * base64, and a type mismatch fails with Go's `json: cannot unmarshal …` message.
 */
import { formatGoFloat, sortedKeys } from "../gojson/encode.js";
import { foldFieldName } from "../gojson/unicode.js";
import { RawJson } from "./rawjson.js";
import type {
  Bundle,
  Channel,
  ChannelEntry,
  Deprecation,
  DeprecationEntry,
  Icon,
  JsonObject,
  JsonValue,
  Location,
  Package,
  Property,
  RelatedImage,
} from "./types.js";
import { goJsonKind, goUnmarshalTypeError } from "../gojson/unmarshal.js";
import { goBase64ErrorOffset } from "../gojson/base64.js";
import { goTypeName, type GoStructType, type GoType } from "../gojson/structdecode.js";
import {
  GO_BUNDLE,
  GO_CHANNEL,
  GO_DEPRECATION,
  GO_PACKAGE,
  GO_PROPERTY,
  GO_PROPERTY_BUNDLE_OBJECT,
  GO_PROPERTY_TYPES,
  GO_RELATED_IMAGE,
} from "./gotypes.js";

/** A decoding failure; `message` is Go's error text. */
export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DecodeError";
  }
}

type Kind =
  | { k: "string" }
  | { k: "strings" }
  | { k: "bytes" }
  | { k: "raw" }
  | { k: "stringMap"; goType: string }
  | { k: "opaque"; goType: string }
  | { k: "opaques"; goType: string }
  | { k: "struct"; spec: StructSpec; ptr?: boolean }
  | { k: "structs"; spec: StructSpec };

interface FieldSpec {
  json: string;
  kind: Kind;
}

interface StructSpec {
  /** Go type name without package, e.g. `ChannelEntry`. */
  name: string;
  /** Go type with package, e.g. `declcfg.ChannelEntry`. */
  goType: string;
  fields: FieldSpec[];
  /** folded json name ({@link foldFieldName}) → field */
  byFold: Map<string, FieldSpec>;
  /** exact json name → field (fast path) */
  exact: Map<string, FieldSpec>;
}

function spec(name: string, goType: string, fields: FieldSpec[]): StructSpec {
  const byFold = new Map<string, FieldSpec>();
  const exact = new Map<string, FieldSpec>();
  for (const f of fields) {
    byFold.set(foldFieldName(f.json), f);
    exact.set(f.json, f);
  }
  return { name, goType, fields, byFold, exact };
}

const specs = new Map<GoStructType, StructSpec>();

/** The decoder's view of a struct described by a {@link GoType} (fbc/gotypes.ts). */
function specOf(t: GoStructType): StructSpec {
  let s = specs.get(t);
  if (s === undefined) {
    s = spec(
      t.shortName,
      t.goName,
      t.fields.map((f) => ({ json: f.json, kind: kindOf(f.type) })),
    );
    specs.set(t, s);
  }
  return s;
}

function kindOf(t: GoType): Kind {
  switch (t.kind) {
    case "string":
      if (t.goName === "string") return { k: "string" };
      break;
    case "bytes":
      return { k: "bytes" };
    case "raw":
      return { k: "raw" };
    case "opaque":
      return { k: "opaque", goType: t.goName };
    case "struct":
      return { k: "struct", spec: specOf(t) };
    case "ptr":
      if (t.elem.kind === "struct") return { k: "struct", spec: specOf(t.elem), ptr: true };
      break;
    case "map":
      if (t.elem.kind === "string" && t.elem.goName === "string") return { k: "stringMap", goType: t.goName };
      break;
    case "slice":
      if (t.elem.kind === "string" && t.elem.goName === "string") return { k: "strings" };
      if (t.elem.kind === "struct") return { k: "structs", spec: specOf(t.elem) };
      if (t.elem.kind === "opaque") return { k: "opaques", goType: t.elem.goName };
      break;
  }
  throw new Error(`fbc/decode: no decoder for Go type ${goTypeName(t)}`);
}

const PROPERTY = specOf(GO_PROPERTY);
const PACKAGE = specOf(GO_PACKAGE);
const CHANNEL = specOf(GO_CHANNEL);
const RELATED_IMAGE = specOf(GO_RELATED_IMAGE);
const BUNDLE = specOf(GO_BUNDLE);
const DEPRECATION = specOf(GO_DEPRECATION);
/** Go structs of the known property types (alpha/property/property.go), keyed by property type. */
const PROPERTY_SPECS: ReadonlyMap<string, StructSpec> = new Map(
  [...GO_PROPERTY_TYPES].map(([type, t]) => [type, specOf(t)]),
);

/**
 * Decodes a property value into the Go struct of its (known) type, as `json.Unmarshal` would;
 * throws DecodeError with Go's message. Returns the decoded fields (zero values omitted).
 */
export function decodePropertyValue(type: string, value: JsonValue): Record<string, unknown> {
  const s = PROPERTY_SPECS.get(type);
  if (!s) return {};
  return decodeTop(value, s);
}

const BUNDLE_OBJECT = specOf(GO_PROPERTY_BUNDLE_OBJECT);

function goTypeOf(kind: Kind): string {
  switch (kind.k) {
    case "string":
      return "string";
    case "strings":
      return "[]string";
    case "bytes":
      return "[]uint8";
    case "raw":
      return "json.RawMessage";
    case "struct":
      return kind.spec.goType;
    case "structs":
      return "[]" + kind.spec.goType;
    case "stringMap":
    case "opaque":
    case "opaques":
      return kind.goType;
  }
}

interface Ctx {
  struct: string | undefined;
  stack: string[];
}

function typeError(value: JsonValue, goType: string, ctx: Ctx): DecodeError {
  const at =
    ctx.struct !== undefined || ctx.stack.length > 0
      ? { struct: ctx.struct ?? "", field: ctx.stack.join(".") }
      : undefined;
  return new DecodeError(goUnmarshalTypeError(goJsonKind(value), goType, at));
}

type Decoded = Record<string, unknown>;

/** Marker: the fast path cannot decide; the exact (sorted, Go-ordered) path must run. */
const SLOW = Symbol("slow");

/**
 * The common case without sorting keys: every key that names a field is spelled exactly as the
 * field and every value has the right JSON type. Anything else (case variants, type errors,
 * base64) returns SLOW so that the exact path produces Go's result and error.
 */
function fastStruct(obj: JsonValue, s: StructSpec): Decoded | typeof SLOW {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return SLOW;
  const into: Decoded = {};
  for (const key in obj) {
    const f = s.exact.get(key);
    if (f === undefined) {
      if (s.byFold.has(foldFieldName(key))) return SLOW;
      continue;
    }
    const v = obj[key];
    switch (f.kind.k) {
      case "string":
        if (typeof v === "string") into[f.json] = v;
        else if (v !== null) return SLOW;
        break;
      case "raw":
        into[f.json] = RawJson.fromValue(v);
        break;
      case "strings":
        if (v === null) break;
        if (!Array.isArray(v)) return SLOW;
        for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return SLOW;
        into[f.json] = v;
        break;
      case "structs": {
        if (v === null) break;
        if (!Array.isArray(v)) return SLOW;
        const out: Decoded[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const d = fastStruct(v[i], f.kind.spec);
          if (d === SLOW) return SLOW;
          out[i] = d;
        }
        into[f.json] = out;
        break;
      }
      case "struct": {
        if (v === null) return SLOW;
        const d = fastStruct(v, f.kind.spec);
        if (d === SLOW) return SLOW;
        into[f.json] = d;
        break;
      }
      default:
        return SLOW;
    }
  }
  return into;
}

/** Decodes `obj` into a fresh record: the fast path when it applies, else Go's exact rules. */
function decodeTop(obj: JsonValue, s: StructSpec): Decoded {
  const fast = fastStruct(obj, s);
  if (fast !== SLOW) return fast;
  const d: Decoded = {};
  decodeStruct(obj, s, ctx0(), d);
  return d;
}

function decodeStruct(obj: JsonValue, s: StructSpec, ctx: Ctx, into: Decoded): void {
  if (obj === null) return;
  if (typeof obj !== "object" || Array.isArray(obj)) throw typeError(obj, s.goType, ctx);
  const outer = ctx.struct;
  const depth = ctx.stack.length;
  for (const key of sortedKeys(obj)) {
    const f = s.byFold.get(foldFieldName(key));
    if (f === undefined) continue;
    ctx.struct = s.name;
    ctx.stack.push(f.json);
    into[f.json] = decodeField(obj[key], f.kind, ctx, into[f.json]);
    ctx.stack.length = depth;
  }
  ctx.struct = outer;
}

function decodeField(v: JsonValue, kind: Kind, ctx: Ctx, current: unknown): unknown {
  switch (kind.k) {
    case "raw":
      return RawJson.fromValue(v);
    case "string":
      if (v === null) return current;
      if (typeof v !== "string") throw typeError(v, "string", ctx);
      return v;
    case "strings": {
      if (v === null) return undefined;
      if (!Array.isArray(v)) throw typeError(v, "[]string", ctx);
      const out: string[] = [];
      for (const e of v) {
        if (e === null) out.push("");
        else if (typeof e !== "string") throw typeError(e, "string", ctx);
        else out.push(e);
      }
      return out;
    }
    case "bytes":
      if (v === null) return null;
      if (Array.isArray(v)) return decodeByteArray(v, ctx);
      if (typeof v !== "string") throw typeError(v, "[]uint8", ctx);
      return decodeStdBase64(v);
    case "stringMap": {
      if (v === null) return undefined;
      if (typeof v !== "object" || Array.isArray(v)) throw typeError(v, kind.goType, ctx);
      for (const k of sortedKeys(v)) {
        const e = v[k];
        if (e !== null && typeof e !== "string") throw typeError(e, "string", ctx);
      }
      return v;
    }
    case "opaque":
      if (v === null) return current;
      if (typeof v !== "object" || Array.isArray(v)) throw typeError(v, kind.goType, ctx);
      return v;
    case "opaques":
      if (v === null) return undefined;
      if (!Array.isArray(v)) throw typeError(v, "[]" + kind.goType, ctx);
      for (const e of v)
        if (e !== null && (typeof e !== "object" || Array.isArray(e))) throw typeError(e, kind.goType, ctx);
      return v;
    case "struct": {
      if (v === null) return kind.ptr ? undefined : current;
      const into: Decoded = (current as Decoded | undefined) ?? {};
      decodeStruct(v, kind.spec, ctx, into);
      return into;
    }
    case "structs": {
      if (v === null) return undefined;
      if (!Array.isArray(v)) throw typeError(v, goTypeOf(kind), ctx);
      const out: Decoded[] = [];
      for (const e of v) {
        const into: Decoded = {};
        decodeStruct(e, kind.spec, ctx, into);
        out.push(into);
      }
      return out;
    }
  }
}

/**
 * Why Node's decoder can stand in for Go's: see {@link decodeStdBase64Fast}.
 * Bytes expected, or -1 if `data` cannot be valid.
 */
function fastBase64Length(data: string): number {
  const n = data.length;
  if (n % 4 !== 0 || data.indexOf("-") !== -1 || data.indexOf("_") !== -1) return -1;
  const pad = n > 0 && data.charCodeAt(n - 1) === 0x3d ? (data.charCodeAt(n - 2) === 0x3d ? 2 : 1) : 0;
  return (n / 4) * 3 - pad;
}

/**
 * Fast check for standard, padded base64 (what Go's base64.StdEncoding accepts without error):
 * Node's decoder skips or stops at characters outside the alphabet, so the decoded length equals
 * the length implied by the text only when every character is valid — except for the URL-safe
 * `-` and `_`, which Node also accepts and are therefore excluded first. Returns the decoded
 * bytes, or undefined when the exact (slow) path must decide.
 */
export function decodeStdBase64Fast(data: string): Buffer | undefined {
  const want = fastBase64Length(data);
  if (want < 0) return undefined;
  const bytes = Buffer.from(data, "base64");
  return bytes.length === want ? bytes : undefined;
}

let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * {@link decodeStdBase64Fast} into a scratch buffer reused by the next call, for checks that look
 * at the bytes and drop them (loading checks every olm.bundle.object without keeping it): no
 * allocation per manifest. The view is overwritten by the next call: never keep it.
 */
export function decodeStdBase64Transient(data: string): Buffer | undefined {
  const want = fastBase64Length(data);
  if (want < 0) return undefined;
  if (want > scratch.length) scratch = Buffer.allocUnsafe(Math.max(want, scratch.length * 2));
  const written = want === 0 ? 0 : scratch.write(data, 0, want, "base64");
  return written === want ? scratch.subarray(0, want) : undefined;
}

/**
 * Go's `base64.StdEncoding.Decode` (padding required, `\r` and `\n` ignored): the decoded bytes,
 * or a DecodeError `illegal base64 data at input byte N`.
 */
export function decodeStdBase64(s: string): Uint8Array {
  const fast = decodeStdBase64Fast(s);
  if (fast !== undefined) return fast;
  const err = goBase64ErrorOffset(s);
  if (err >= 0) throw new DecodeError(`illegal base64 data at input byte ${err}`);
  return Buffer.from(s.replace(/[\r\n]/g, ""), "base64");
}

function ctx0(): Ctx {
  return { struct: undefined, stack: [] };
}

/** encoding/json fills a `[]byte` from an array of numbers 0..255 (as Go re-encoded them) like any other slice. */
function decodeByteArray(v: JsonValue[], ctx: Ctx): Uint8Array {
  const out = new Uint8Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const e = v[i];
    if (e === null) continue;
    if (typeof e !== "number") throw typeError(e, "uint8", ctx);
    const lit = formatGoFloat(e);
    if (!/^\d+$/.test(lit) || e > 255) {
      const at =
        ctx.struct !== undefined || ctx.stack.length > 0
          ? { struct: ctx.struct ?? "", field: ctx.stack.join(".") }
          : undefined;
      throw new DecodeError(goUnmarshalTypeError(`number ${lit}`, "uint8", at));
    }
    out[i] = e;
  }
  return out;
}

/** The decoded property records become the Property objects themselves (they are fresh records). */
function toProperties(v: unknown): Property[] {
  if (!v) return [];
  const list = v as Decoded[];
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p.type === undefined) p.type = "";
    if (p.value === undefined) p.value = RawJson.missing();
  }
  return list as unknown as Property[];
}

export function decodePackage(blob: JsonObject, loc?: Location): Package {
  const d = decodeTop(blob, PACKAGE);
  const pkg: Package = {
    schema: (d.schema as string) ?? "",
    name: (d.name as string) ?? "",
    defaultChannel: (d.defaultChannel as string) ?? "",
    description: (d.description as string) ?? "",
    properties: toProperties(d.properties),
    loc,
  };
  if (d.icon) {
    const icon = d.icon as Decoded;
    pkg.icon = {
      base64data: (icon.base64data as Uint8Array | null | undefined) ?? null,
      mediatype: (icon.mediatype as string) ?? "",
    } satisfies Icon;
  }
  return pkg;
}

export function decodeChannel(blob: JsonObject, loc?: Location): Channel {
  const d = decodeTop(blob, CHANNEL);
  const entries = d.entries as Decoded[] | undefined;
  return {
    schema: (d.schema as string) ?? "",
    name: (d.name as string) ?? "",
    package: (d.package as string) ?? "",
    entries: entries
      ? entries.map(
          (e): ChannelEntry => ({
            name: (e.name as string) ?? "",
            replaces: (e.replaces as string) ?? "",
            skips: (e.skips as string[] | undefined) ?? [],
            skipRange: (e.skipRange as string) ?? "",
          }),
        )
      : null,
    properties: toProperties(d.properties),
    loc,
  };
}

/** Like toProperties: the fresh decoded records are completed in place. */
function toRelatedImages(list: Decoded[]): RelatedImage[] {
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (r.name === undefined) r.name = "";
    if (r.image === undefined) r.image = "";
  }
  return list as unknown as RelatedImage[];
}

/**
 * The common olm.bundle blob decoded straight into its final shape (no intermediate records): every
 * key spelled exactly as its field, strings where strings belong. Anything else (a key in another
 * letter case, a type to report, a null element) returns undefined and {@link decodeBundleExact}
 * decides, so the result is always what the exact path gives (a fast-check property holds this).
 */
function fastBundle(o: JsonObject, loc: Location | undefined): Bundle | undefined {
  let schema = "";
  let name = "";
  let pkg = "";
  let image = "";
  let properties: Property[] = [];
  let relatedImages: RelatedImage[] = [];
  for (const key in o) {
    const v = o[key];
    switch (key) {
      case "schema":
      case "name":
      case "package":
      case "image":
        if (typeof v === "string") {
          if (key === "schema") schema = v;
          else if (key === "name") name = v;
          else if (key === "package") pkg = v;
          else image = v;
        } else if (v !== null) return undefined;
        break;
      case "properties": {
        if (v === null) break;
        if (!Array.isArray(v)) return undefined;
        const out: Property[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const e = v[i];
          if (e === null || typeof e !== "object" || Array.isArray(e)) return undefined;
          let type = "";
          let value: RawJson | undefined;
          for (const k in e) {
            if (k === "type") {
              const t = e[k];
              if (typeof t === "string") type = t;
              else if (t !== null) return undefined;
            } else if (k === "value") value = RawJson.fromValue(e[k]);
            else if (PROPERTY_FOLDED_KEYS.has(foldFieldName(k))) return undefined;
          }
          out[i] = { type, value: value ?? RawJson.missing() };
        }
        properties = out;
        break;
      }
      case "relatedImages": {
        if (v === null) break;
        if (!Array.isArray(v)) return undefined;
        const out: RelatedImage[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const e = v[i];
          if (e === null || typeof e !== "object" || Array.isArray(e)) return undefined;
          let riName = "";
          let riImage = "";
          for (const k in e) {
            const x = e[k];
            if (k === "name" || k === "image") {
              if (typeof x === "string") {
                if (k === "name") riName = x;
                else riImage = x;
              } else if (x !== null) return undefined;
            } else if (RELATED_IMAGE_FOLDED_KEYS.has(foldFieldName(k))) return undefined;
          }
          out[i] = { name: riName, image: riImage };
        }
        relatedImages = out;
        break;
      }
      default:
        if (BUNDLE_FOLDED_KEYS.has(foldFieldName(key))) return undefined;
    }
  }
  return { schema, name, package: pkg, image, properties, relatedImages, loc };
}

const BUNDLE_FOLDED_KEYS: ReadonlySet<string> = new Set(BUNDLE.fields.map((f) => foldFieldName(f.json)));
const PROPERTY_FOLDED_KEYS: ReadonlySet<string> = new Set(PROPERTY.fields.map((f) => foldFieldName(f.json)));
const RELATED_IMAGE_FOLDED_KEYS: ReadonlySet<string> = new Set(RELATED_IMAGE.fields.map((f) => foldFieldName(f.json)));

/** `loc` is stored in the result (objects get their final shape at once). */
export function decodeBundle(blob: JsonObject, loc?: Location): Bundle {
  return fastBundle(blob, loc) ?? decodeBundleExact(blob, loc);
}

/** decodeBundle by the general Go-exact decoder alone (exported for the property test of the fast path). */
export function decodeBundleExact(blob: JsonObject, loc?: Location): Bundle {
  const d = decodeTop(blob, BUNDLE);
  const related = d.relatedImages as Decoded[] | undefined;
  return {
    schema: (d.schema as string) ?? "",
    name: (d.name as string) ?? "",
    package: (d.package as string) ?? "",
    image: (d.image as string) ?? "",
    properties: toProperties(d.properties),
    relatedImages: related ? toRelatedImages(related) : [],
    loc,
  };
}

export function decodeDeprecation(blob: JsonObject, loc?: Location): Deprecation {
  const d = decodeTop(blob, DEPRECATION);
  const entries = d.entries as Decoded[] | undefined;
  return {
    schema: (d.schema as string) ?? "",
    package: (d.package as string) ?? "",
    entries: entries
      ? entries.map((e): DeprecationEntry => {
          const ref = (e.reference as Decoded | undefined) ?? {};
          return {
            reference: { schema: (ref.schema as string) ?? "", name: (ref.name as string) ?? "" },
            message: (e.message as string) ?? "",
          };
        })
      : null,
    loc,
  };
}

/**
 * Decodes an `olm.bundle.object` property value (`{"data": <base64>}`) as Go's
 * `json.Unmarshal(value, &property.BundleObject{})` does. Returns `undefined` when the value is
 * `null` or has no `data` key (Go leaves the destination untouched then).
 */
export function decodeBundleObjectData(value: JsonValue): Uint8Array | null | undefined {
  const d: Decoded = {};
  decodeStruct(value, BUNDLE_OBJECT, ctx0(), d);
  return "data" in d ? (d.data as Uint8Array | null) : undefined;
}
