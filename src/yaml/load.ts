// YAML → JSON value with the semantics of sigs.k8s.io/yaml.YAMLToJSON (go-yaml v2 decoding into
// interface{}, YAML 1.1 implicit typing, convertToJSONableObject, encoding/json), followed by
// encoding/json decoding into interface{} (so every number is a float64 / JS number).
//
// Syntax: goyaml/ is a port of go-yaml v2's libyaml scanner and parser (scannerc.go, parserc.go and the
// reader's character checks of readerc.go, go.yaml.in/yaml/v2 v2.4.4 = gopkg.in/yaml.v2 v2.4.0) and of
// decode.go's parser wrapper: yaml.Unmarshal reads the first document only (what follows is never parsed,
// beyond the look-ahead libyaml needs to see that the document ended), and errors read as Go prints them
// ("yaml: line N: …": the problem's 0-based line for parser errors, 1-based for scanner errors, none
// on the first line; reader errors have no line).
// Composition: the composer below is a port of go-yaml v2's decoder (decode.go) so that tags, merges,
// duplicate keys, key conversion, the alias limit and errors follow Go.
//
// Known differences from Go:
// * The input is a JS string: invalid UTF-8 cannot occur (Go reports "invalid leading UTF-8 octet" and the
//   like; a file read as UTF-8 by Node has U+FFFD instead), and a lone surrogate reads as U+FFFD.
// * Keys that differ in Go's type but convert to the same JSON key (`1` and `"1"`) are random in Go; here the
//   last one in document order wins. When several keys cannot be converted (null, uint64) Go reports a
//   random one; here the first.
// * In "invalid map key" and "unsupported map key" errors, the keys of a map printed with %#v appear as
//   strings (Go prints them with their type: `1:`, `interface {}(nil):`).
// Agreement is tested on every document of testdata/load.json, load-fuzz.json and load-errors.json.

import { goFormatFloatG } from "../gojson/float.js";
import type { JsonValue } from "./emit.js";
import { GoYamlError } from "./errors.js";
import {
  ParseFailure,
  parseFirstDocument,
  type YamlEvent,
  yaml_ALIAS_EVENT,
  yaml_MAPPING_END_EVENT,
  yaml_MAPPING_START_EVENT,
  yaml_SCALAR_EVENT,
  yaml_SEQUENCE_END_EVENT,
  yaml_SEQUENCE_START_EVENT,
} from "./goyaml/parser.js";
import { formatGoFloat, resolvePlain } from "./resolve.js";

const PREFIX = "error converting YAML to JSON: ";

const TAG_PREFIX = "tag:yaml.org,2002:";
const T_STR = TAG_PREFIX + "str";
const T_BOOL = TAG_PREFIX + "bool";
const T_INT = TAG_PREFIX + "int";
const T_FLOAT = TAG_PREFIX + "float";
const T_NULL = TAG_PREFIX + "null";
const T_TIMESTAMP = TAG_PREFIX + "timestamp";
const T_BINARY = TAG_PREFIX + "binary";
const T_MERGE = TAG_PREFIX + "merge";

function shortTag(tag: string): string {
  return tag.startsWith(TAG_PREFIX) ? "!!" + tag.slice(TAG_PREFIX.length) : tag;
}

/** Internal failure carrying a complete "yaml: …" style message (without the YAMLToJSON prefix). */
class Fail {
  constructor(readonly msg: string) {}
}

/** A decoded Go value: scalars carry their Go type so keys can be converted like convertToJSONableObject. */
type GoScalar =
  | { t: "null" }
  | { t: "bool"; v: boolean }
  | { t: "int"; v: number; dec: string }
  | { t: "uint64"; v: number; dec: string }
  | { t: "float"; v: number }
  | { t: "str"; v: string };

interface Anchor {
  done: boolean;
  /** go-yaml v2 decode operations the anchored node took (nested aliases expanded). */
  size: number;
  value: JsonValue;
  /** Go type of a scalar value (needed when the alias is used as a key). */
  scalar?: GoScalar;
  /** The anchored node is a mapping (for merge checks). */
  isMap: boolean;
  /** Strict mode: the anchored node's log (an alias decodes it again: its errors come again). */
  log?: StrictLog;
}

/** Strict mode: a key set in a mapping — Go-typed identity, %#v text, its value's line, its JSON key. */
interface StrictEntry {
  id: string;
  shown: string;
  line: number;
  key: string;
}

/**
 * Strict mode: what decoding a node did, in order — the errors of nested nodes (`msg`) and the keys
 * it tried to set at its own level (`entry`, `dup` when the mapping had it already). A merge replays
 * the key attempts against the mapping it merges into, as Go decodes the merged node into it.
 */
type StrictLog = ({ msg: string } | { entry: StrictEntry; dup: boolean })[];

function dupMessage(e: StrictEntry): string {
  return `line ${e.line + 1}: key ${e.shown} already set in map`;
}

/** Appends the error messages of `log` to `into` as fixed messages. */
function appendMessages(into: StrictLog, log: StrictLog): void {
  for (const item of log) {
    if ("msg" in item) into.push(item);
    else if (item.dup) into.push({ msg: dupMessage(item.entry) });
  }
}

/** Go's string(bytes) then json.Marshal: each invalid UTF-8 byte becomes U+FFFD. */
function goBytesToString(b: Uint8Array): string {
  let out = "";
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i++;
      continue;
    }
    let n = 0;
    let cp = 0;
    let min = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0f;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
      min = 0x10000;
    }
    let ok = n > 0 && i + n < b.length;
    if (ok) {
      for (let k = 1; k <= n; k++) {
        const d = b[i + k];
        if (d === undefined || (d & 0xc0) !== 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (d & 0x3f);
      }
    }
    if (ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) {
      out += String.fromCodePoint(cp);
      i += n + 1;
    } else {
      out += "\ufffd";
      i++;
    }
  }
  return out;
}

/** Go's base64.StdEncoding.DecodeString (CR/LF ignored, padding required). */
function goBase64(s: string): Uint8Array | undefined {
  const t = s.replace(/[\r\n]/g, "");
  if (t.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(={0,2})$/.test(t)) return undefined;
  const pad = t.endsWith("==") ? 2 : t.endsWith("=") ? 1 : 0;
  if (pad > 0 && t.length === 0) return undefined;
  return new Uint8Array(Buffer.from(t, "base64"));
}

/** strconv.FormatFloat(f, 'g', -1, 32) as used by convertToJSONableObject for float keys. */
function formatFloat32Key(f: number): string {
  if (Number.isNaN(f)) return ".nan";
  if (f === Infinity) return ".inf";
  if (f === -Infinity) return "-.inf";
  const f32 = Math.fround(f);
  if (!Number.isFinite(f32)) return f32 > 0 ? ".inf" : "-.inf";
  return goFormatFloatG(f32, 32);
}

/** Approximation of Go's %#v for decoded YAML values (used only in error messages). */
function goSharpV(v: JsonValue | undefined, s?: GoScalar): string {
  if (s !== undefined) {
    switch (s.t) {
      case "null":
        return "<nil>";
      case "bool":
        return String(s.v);
      case "int":
        return s.dec;
      case "uint64":
        return "0x" + BigInt(s.dec).toString(16);
      case "float":
        return String(s.v);
      case "str":
        return goQuote(s.v);
    }
  }
  if (v === null || v === undefined) return "interface {}(nil)";
  if (Array.isArray(v)) return "[]interface {}{" + v.map((x) => goSharpV(x)).join(", ") + "}";
  if (typeof v === "object") {
    return (
      "map[interface {}]interface {}{" +
      Object.keys(v)
        .map((k) => goQuote(k) + ":" + goSharpV(v[k]))
        .join(", ") +
      "}"
    );
  }
  return typeof v === "string" ? goQuote(v) : String(v);
}

/**
 * Characters strconv.Quote writes as they are: unicode.IsPrint
 * (letters, marks, numbers, punctuation, symbols, ' ').
 */
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** strconv.Quote, as %#v prints a string. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (cp < 0x80 && cp >= 0x20 && cp !== 0x7f) out += ch;
    else if (cp >= 0x80 && GO_PRINTABLE.test(ch)) out += ch;
    else if (cp === 0x07) out += "\\a";
    else if (cp === 0x08) out += "\\b";
    else if (cp === 0x0c) out += "\\f";
    else if (cp === 0x0a) out += "\\n";
    else if (cp === 0x0d) out += "\\r";
    else if (cp === 0x09) out += "\\t";
    else if (cp === 0x0b) out += "\\v";
    else if (cp < 0x80) out += "\\x" + cp.toString(16).padStart(2, "0");
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += "\\ufffd"; // a lone surrogate: U+FFFD once encoded
    else if (cp < 0x10000) out += "\\u" + cp.toString(16).padStart(4, "0");
    else out += "\\U" + cp.toString(16).padStart(8, "0");
  }
  return out + '"';
}

/** Byte-order (UTF-8) comparison of two JS strings, as Go's encoding/json sorts map keys. */
function utf8Compare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800–DFFF) encode code points above U+FFFF: they sort after U+E000–U+FFFF in UTF-8.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x - y;
  }
  return a.length - b.length;
}

function setKey(obj: { [k: string]: JsonValue }, k: string, v: JsonValue): void {
  if (k === "__proto__")
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[k] = v;
}

function clone(v: JsonValue): JsonValue {
  if (v === null || typeof v !== "object") return v;
  // without recursion: an alias may name a node nested as deeply as go-yaml allows
  const copyOf = (x: JsonValue[] | { [k: string]: JsonValue }) => (Array.isArray(x) ? [] : {});
  const root = copyOf(v);
  const stack: [JsonValue[] | { [k: string]: JsonValue }, JsonValue[] | { [k: string]: JsonValue }][] = [[v, root]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [src, dst] = top;
    if (Array.isArray(src)) {
      const d = dst as JsonValue[];
      for (const x of src) {
        if (x !== null && typeof x === "object") {
          const c = copyOf(x);
          d.push(c);
          stack.push([x, c]);
        } else {
          d.push(x);
        }
      }
    } else {
      const d = dst as { [k: string]: JsonValue };
      for (const k of Object.keys(src)) {
        const x = src[k];
        if (x !== null && typeof x === "object") {
          const c = copyOf(x);
          setKey(d, k, c);
          stack.push([x, c]);
        } else {
          setKey(d, k, x);
        }
      }
    }
  }
  return root;
}

/**
 * A copy of `s` that does not keep its source alive. V8 makes slices of 13 or more characters
 * views into the parent string, so every scalar would pin the whole catalog file text in memory;
 * flattening a one-character concatenation yields a fresh string at memcpy speed (measured: 25%
 * less retained heap on the community catalogs, no measurable time).
 */
function ownCopy(s: string, pool: Map<string, string> | undefined): string {
  if (s.length < 13) return s;
  if (pool === undefined) return ("\0" + s).slice(1);
  // A catalog file repeats most of its strings (every bundle version carries the same descriptors,
  // CRD descriptions and examples): one copy per distinct text keeps the loaded catalog a quarter
  // smaller, and a hit costs less than a copy.
  let c = pool.get(s);
  if (c === undefined) {
    c = ("\0" + s).slice(1);
    pool.set(c, c);
  }
  return c;
}

interface NodeResult {
  value: JsonValue;
  scalar?: GoScalar;
  isMap: boolean;
  /** Strict mode: the node's log (collections and aliases of collections). */
  log?: StrictLog;
}

/**
 * The Go type of a scalar that is a string equal to its JSON value (the common case): Composer.scalar
 * returns this shared object instead of allocating `{ t: "str", v }`; {@link goScalarOf} makes the real one.
 */
const STR_SELF: GoScalar = { t: "str", v: "" };

const NULL_SCALAR: GoScalar = { t: "null" };
const TRUE_SCALAR: GoScalar = { t: "bool", v: true };
const FALSE_SCALAR: GoScalar = { t: "bool", v: false };

function goScalarOf(s: GoScalar | undefined, value: JsonValue): GoScalar | undefined {
  return s === STR_SELF ? { t: "str", v: value as string } : s;
}

/**
 * An open collection of Composer.node(): a sequence (arr) or a mapping (keys, vals, and the pending key
 * when hasKey). Mapping frames are reused (with their keys/vals arrays) once their object is built.
 */
class Frame {
  before = 0;
  /** 0-based line of the collection's start (go-yaml's node.line). */
  line = 0;
  /** Strict mode: the Go-typed keys already set in this mapping, and the collection's log. */
  seen: Set<string> | undefined = undefined;
  log: StrictLog | undefined = undefined;
  anchor: Anchor | undefined = undefined;
  arr: JsonValue[] | undefined = undefined;
  keys: string[] | undefined = undefined;
  vals: JsonValue[] | undefined = undefined;
  /** The pending key (a mapping between a key and its value): its value, Go type (STR_SELF allowed) and log. */
  isMap = false;
  hasKey = false;
  keyValue: JsonValue = null;
  keyScalar: GoScalar | undefined = undefined;
}

class Composer {
  private i = 0;
  private readonly anchors = new Map<string, Anchor>();
  /** go-yaml v2's decodeCount and aliasCount (see checkAliasing). */
  private decodeCount = 1; // the document node
  private aliasCount = 0;
  /** First error of convertToJSONableObject (reported only if decoding succeeds). */
  private convertError: string | undefined;
  /** Whether a NaN/±Inf float was decoded (json.Marshal fails on it). */
  private nonFinite = false;

  constructor(
    private readonly events: YamlEvent[],
    private readonly strict = false,
    private readonly pool?: Map<string, string>,
  ) {}

  run(): JsonValue {
    if (this.events.length === 0) return null;
    const root = this.node();
    const value = root.value;
    if (root.log !== undefined) {
      // yaml.UnmarshalStrict's TypeError comes before sigs.k8s.io/yaml converts the value to JSON
      const errors: StrictLog = [];
      appendMessages(errors, root.log);
      if (errors.length > 0)
        throw new Fail(`yaml: unmarshal errors:\n  ${errors.map((m) => (m as { msg: string }).msg).join("\n  ")}`);
    }
    if (this.convertError !== undefined) throw new Fail(this.convertError);
    if (this.nonFinite) {
      const bad = firstNonFinite(value);
      if (bad !== undefined) throw new Fail(`json: unsupported value: ${bad}`);
    }
    return value;
  }

  /**
   * go-yaml v2's defence against alias bombs ("billion laughs"), decode.go `unmarshal` /
   * `allowedAliasRatio`: every node decoded counts, nodes decoded again through an alias count as
   * aliased, and once more than 100 of more than 1000 operations are aliased, a ratio above 99%
   * (scaling down to 10% between 400,000 and 4,000,000 operations) fails the document.
   */
  private checkAliasing(): void {
    const d = this.decodeCount;
    if (this.aliasCount <= 100 || d <= 1000) return;
    const allowed = d <= 400_000 ? 0.99 : d >= 4_000_000 ? 0.1 : 0.99 - 0.89 * ((d - 400_000) / 3_600_000);
    if (this.aliasCount / d > allowed) throw new Fail("yaml: document contains excessive aliasing");
  }

  /** Mapping and sequence frames no longer open (see Frame). */
  private readonly framePool: Frame[] = [];
  /** The JSON value of the scalar that scalar() decoded last. */
  private scalarValue: JsonValue = null;

  private openFrame(before: number, line: number, anchor: Anchor | undefined, isMap: boolean): Frame {
    const f = this.framePool.pop() ?? new Frame();
    f.before = before;
    f.line = line;
    f.anchor = anchor;
    if (isMap) {
      f.keys ??= [];
      f.vals ??= [];
    } else {
      f.arr = [];
    }
    f.isMap = isMap;
    return f;
  }

  private releaseFrame(f: Frame): void {
    f.seen = undefined;
    f.log = undefined;
    f.anchor = undefined;
    f.arr = undefined;
    if (f.keys !== undefined) f.keys.length = 0;
    if (f.vals !== undefined) f.vals.length = 0;
    f.hasKey = false;
    f.keyValue = null;
    f.keyScalar = undefined;
    if (this.framePool.length < 64) this.framePool.push(f);
  }

  /**
   * Decodes the next node (decode.go's unmarshal for an interface{} target); returns its JSON value and, for
   * scalars, the Go-typed scalar. Iterative (an explicit stack of open collections), so that nesting is
   * limited by go-yaml's own limits (10000 flow levels, 10000 indentation levels), not by the JS stack;
   * only a merge value is decoded by a nested call. The node just decoded is kept in locals (value, scalar,
   * isMap, log) rather than in an object per node.
   */
  private node(): NodeResult {
    const ev = this.events;
    const stack: Frame[] = [];
    for (;;) {
      let done = false;
      let value: JsonValue = null;
      /** Go type of a scalar (STR_SELF: a string, `value`); undefined for collections. */
      let scalar: GoScalar | undefined;
      let isMap = false;
      let log: StrictLog | undefined;
      let resLine = 0;
      const top = stack.length > 0 ? stack[stack.length - 1] : undefined;
      if (top !== undefined) {
        const next = ev[this.i];
        if (!top.isMap) {
          if (next.typ === yaml_SEQUENCE_END_EVENT) {
            this.i++;
            stack.pop();
            value = top.arr as JsonValue[];
            log = this.finish(top, value);
            resLine = top.line;
            this.releaseFrame(top);
            done = true;
          }
        } else if (!top.hasKey) {
          if (next.typ === yaml_MAPPING_END_EVENT) {
            this.i++;
            stack.pop();
            value = buildObject(top.keys as string[], top.vals as JsonValue[]);
            log = this.finish(top, value);
            isMap = true;
            resLine = top.line;
            this.releaseFrame(top);
            done = true;
          } else if (next.typ === yaml_SCALAR_EVENT && next.value === "<<" && (next.implicit || next.tag === T_MERGE)) {
            // isMerge: a scalar `<<` that is implicit (plain, untagged or tagged `!`) or tagged !!merge;
            // decode.go's mapping() does not decode the key node
            this.i++;
            if (next.anchor.length > 0) {
              this.anchors.set(next.anchor, {
                done: true,
                size: 1,
                value: "<<",
                scalar: { t: "str", v: "<<" },
                isMap: false,
              });
            }
            this.merge(top);
            continue;
          }
        }
      }
      if (!done) {
        const e = ev[this.i++];
        resLine = e.line;
        const before = this.decodeCount;
        this.decodeCount++;
        this.checkAliasing();
        switch (e.typ) {
          case yaml_SCALAR_EVENT: {
            // a mapping key becomes a property name (V8 copies it): it needs no copy of its own
            const isKey = top?.isMap === true && !top.hasKey && e.anchor.length === 0;
            scalar = this.scalar(e, !isKey);
            value = this.scalarValue;
            if (e.anchor.length > 0) {
              this.anchors.set(e.anchor, {
                done: true,
                size: this.decodeCount - before,
                value,
                scalar: goScalarOf(scalar, value),
                isMap: false,
              });
            }
            break;
          }
          case yaml_ALIAS_EVENT: {
            const name = e.anchor;
            const a = this.anchors.get(name);
            if (a === undefined) throw new Fail(`yaml: unknown anchor '${name}' referenced`);
            if (!a.done) throw new Fail(`yaml: anchor '${name}' value contains itself`);
            // Go decodes the aliased node again: every one of its decode operations counts as aliased
            this.decodeCount += a.size;
            this.aliasCount += a.size;
            this.checkAliasing();
            value = clone(a.value);
            scalar = a.scalar;
            isMap = a.isMap;
            log = a.log;
            break;
          }
          case yaml_SEQUENCE_START_EVENT:
          case yaml_MAPPING_START_EVENT: {
            const m = e.typ === yaml_MAPPING_START_EVENT;
            let anchor: Anchor | undefined;
            if (e.anchor.length > 0) {
              anchor = { done: false, size: 0, value: null, isMap: m };
              this.anchors.set(e.anchor, anchor);
            }
            stack.push(this.openFrame(before, e.line, anchor, m));
            continue;
          }
          default:
            throw new Fail("yaml: unexpected event");
        }
      }
      const parent = stack.length > 0 ? stack[stack.length - 1] : undefined;
      if (parent === undefined) {
        const res: NodeResult = { value, scalar: goScalarOf(scalar, value), isMap };
        if (log !== undefined) res.log = log;
        return res;
      }
      // strict mode: the errors of a decoded value come before its parent's setMapIndex
      if (log !== undefined) appendMessages((parent.log ??= []), log);
      if (!parent.isMap) {
        (parent.arr as JsonValue[]).push(value);
      } else if (!parent.hasKey) {
        if (isMap || (scalar === undefined && Array.isArray(value)))
          throw new Fail(`yaml: invalid map key: ${goSharpV(value)}`);
        parent.hasKey = true;
        parent.keyValue = value;
        parent.keyScalar = scalar;
      } else if (this.strict) {
        const entry = this.strictEntry(goScalarOf(parent.keyScalar, parent.keyValue), resLine);
        if (entry !== undefined && !this.setOnce(parent, entry)) {
          parent.hasKey = false; // setMapIndex in strict mode: the first value stays
          continue;
        }
        const k = this.keyString(parent.keyScalar, parent.keyValue, value);
        if (entry !== undefined) entry.key = k;
        (parent.keys as string[]).push(k);
        (parent.vals as JsonValue[]).push(value);
        parent.hasKey = false;
      } else {
        (parent.keys as string[]).push(this.keyString(parent.keyScalar, parent.keyValue, value));
        (parent.vals as JsonValue[]).push(value);
        parent.hasKey = false;
      }
    }
  }

  /** A collection is complete: its anchor gets its value and size. Returns its log (strict mode). */
  private finish(f: Frame, value: JsonValue): StrictLog | undefined {
    if (f.anchor !== undefined) {
      f.anchor.value = value;
      f.anchor.size = this.decodeCount - f.before;
      f.anchor.done = true;
      if (this.strict) f.anchor.log = f.log ?? [];
    }
    return this.strict ? (f.log ?? []) : undefined;
  }

  /** Strict mode: the Go-typed identity of a key whose value starts on `valueLine` (undefined: never equal). */
  private strictEntry(s: GoScalar | undefined, valueLine: number): StrictEntry | undefined {
    if (s === undefined) return undefined;
    let id: string;
    let shown: string;
    switch (s.t) {
      case "null":
        id = "null";
        shown = "<nil>";
        break;
      case "bool":
        id = `bool:${s.v}`;
        shown = String(s.v);
        break;
      case "int":
      case "uint64":
        id = `${s.t}:${s.dec}`;
        shown = goSharpV(null, s);
        break;
      case "float":
        if (Number.isNaN(s.v)) return undefined; // NaN never equals a map key
        id = `float:${s.v}`;
        shown = formatGoFloat(s.v);
        break;
      case "str":
        id = `str:${s.v}`;
        shown = goQuote(s.v);
        break;
    }
    return { id, shown, line: valueLine, key: "" };
  }

  /**
   * decode.go setMapIndex in strict mode: records the key in the mapping, or, when the mapping already
   * has it, the `key … already set in map` error at the value's line (false: the value is not set).
   */
  private setOnce(f: Frame, e: StrictEntry): boolean {
    const seen = (f.seen ??= new Set());
    const dup = seen.has(e.id);
    seen.add(e.id);
    (f.log ??= []).push({ entry: e, dup });
    return !dup;
  }

  /** convertToJSONableObject's key conversion. */
  private keyString(s: GoScalar | undefined, kv: JsonValue, v: JsonValue): string {
    if (s === undefined) return typeof kv === "string" ? kv : String(kv);
    if (s === STR_SELF) return kv as string;
    switch (s.t) {
      case "str":
        return s.v;
      case "int":
        return s.dec;
      case "bool":
        return s.v ? "true" : "false";
      case "float":
        return formatFloat32Key(s.v);
      case "null":
        this.convertError ??=
          `unsupported map key of type: %!s(<nil>), key: ` + `<nil>, value: ${v === null ? "<nil>" : goSharpV(v)}`;
        return "";
      case "uint64":
        this.convertError ??=
          `unsupported map key of type: uint64, key: ${goSharpV(null, s)}, ` +
          `value: ${v === null ? "<nil>" : goSharpV(v)}`;
        return s.dec;
    }
  }

  /** Skips the events of one node. */
  private skipNode(): void {
    let depth = 0;
    do {
      const t = this.events[this.i++].typ;
      if (t === yaml_SEQUENCE_START_EVENT || t === yaml_MAPPING_START_EVENT) depth++;
      else if (t === yaml_SEQUENCE_END_EVENT || t === yaml_MAPPING_END_EVENT) depth--;
    } while (depth > 0);
  }

  /** decode.go's merge(): the value of a `<<` key. */
  private merge(f: Frame): void {
    const keys = f.keys as string[];
    const vals = f.vals as JsonValue[];
    const e = this.events[this.i];
    const wantMap = () => new Fail("yaml: map merge requires map or sequence of maps as the value");
    const addAll = ({ value: o, log }: NodeResult) => {
      if (o === null) return; // a mapping tagged !!null decodes to nil: nothing to merge
      if (typeof o !== "object" || Array.isArray(o)) throw wantMap();
      if (log !== undefined) {
        // Go decodes the merged mapping into this one: each of its keys goes through setMapIndex again
        for (const item of log) {
          if ("msg" in item) (f.log ??= []).push(item);
          else if (this.setOnce(f, item.entry)) {
            keys.push(item.entry.key);
            vals.push(o[item.entry.key]);
          }
        }
        return;
      }
      for (const k of Object.keys(o)) {
        keys.push(k);
        vals.push(o[k]);
      }
    };
    const aliasOfMap = (a: YamlEvent) => this.anchors.get(a.anchor)?.isMap !== false;
    if (e.typ === yaml_MAPPING_START_EVENT) {
      addAll(this.node());
    } else if (e.typ === yaml_ALIAS_EVENT) {
      if (!aliasOfMap(e)) throw wantMap();
      addAll(this.node());
    } else if (e.typ === yaml_SEQUENCE_START_EVENT) {
      // Step backwards as earlier nodes take precedence (the sequence node itself is not decoded).
      this.i++;
      const starts: number[] = [];
      while (this.events[this.i].typ !== yaml_SEQUENCE_END_EVENT) {
        starts.push(this.i);
        this.skipNode();
      }
      const end = this.i + 1;
      for (let j = starts.length - 1; j >= 0; j--) {
        this.i = starts[j];
        const ni = this.events[this.i];
        if (ni.typ === yaml_ALIAS_EVENT) {
          if (!aliasOfMap(ni)) throw wantMap();
        } else if (ni.typ !== yaml_MAPPING_START_EVENT) {
          throw wantMap();
        }
        addAll(this.node());
      }
      this.i = end;
    } else {
      throw wantMap();
    }
  }

  /**
   * Decodes a scalar event: its value goes to scalarValue, its Go type is returned (STR_SELF: the value is
   * the scalar's text). `own`: the text, when it is the value, is copied (see ownCopy).
   */
  private scalar(e: YamlEvent, own: boolean): GoScalar {
    const text = e.value;
    const tag = e.tag;
    // decode.go scalar(): an untagged non-plain scalar is a string, anything else is resolved
    const s: GoScalar = tag === "" && !e.implicit ? STR_SELF : this.resolve(text, tag);
    switch (s.t) {
      case "null":
        this.scalarValue = null;
        break;
      case "str":
        this.scalarValue = s === STR_SELF ? (own ? ownCopy(text, this.pool) : text) : s.v;
        break;
      case "float":
        if (!Number.isFinite(s.v)) this.nonFinite = true;
        this.scalarValue = s.v;
        break;
      default:
        this.scalarValue = s.v;
    }
    return s;
  }

  /** go-yaml v2 resolve(tag, in) followed by decoder.scalar's conversions for an interface{} target. */
  private resolve(text: string, tag: string): GoScalar {
    switch (tag) {
      case "":
      case T_STR:
      case T_BOOL:
      case T_INT:
      case T_FLOAT:
      case T_NULL:
      case T_TIMESTAMP:
        break;
      case T_BINARY: {
        const b = goBase64(text);
        if (b === undefined) throw new Fail("yaml: !!binary value contains invalid base64 data");
        return { t: "str", v: goBytesToString(b) };
      }
      default:
        return STR_SELF;
    }
    if (tag === T_STR) return STR_SELF;
    const r = resolvePlain(text);
    let rtag: string;
    let out: GoScalar;
    switch (r.kind) {
      case "null":
        rtag = T_NULL;
        out = NULL_SCALAR;
        break;
      case "bool":
        rtag = T_BOOL;
        out = r.value === true ? TRUE_SCALAR : FALSE_SCALAR;
        break;
      case "int":
        rtag = T_INT;
        out =
          r.goType === "uint64"
            ? { t: "uint64", v: r.value as number, dec: r.decimal as string }
            : { t: "int", v: r.value as number, dec: r.decimal as string };
        break;
      case "float":
        rtag = T_FLOAT;
        out = { t: "float", v: r.value as number };
        break;
      case "timestamp":
        // Decoded into interface{} as the original string.
        if (tag === "" || tag === T_TIMESTAMP) {
          rtag = T_TIMESTAMP;
          out = STR_SELF;
          break;
        }
        rtag = T_STR;
        out = STR_SELF;
        break;
      case "merge":
        rtag = T_MERGE;
        out = { t: "str", v: "<<" };
        break;
      default:
        rtag = T_STR;
        out = STR_SELF;
    }
    if (tag === "" || tag === rtag) return out;
    if (tag === T_FLOAT && out.t === "int") return { t: "float", v: out.v };
    throw new Fail(`yaml: cannot decode ${shortTag(rtag)} \`${text}\` as a ${shortTag(tag)}`);
  }
}

/** Builds an object from assignments (later ones win) with keys in Go's encoding/json (byte) order. */
function buildObject(keys: string[], vals: JsonValue[]): { [k: string]: JsonValue } {
  const n = keys.length;
  const obj: { [k: string]: JsonValue } = {};
  if (n === 0) return obj;
  let sorted = true;
  for (let j = 1; j < n; j++) {
    if (utf8Compare(keys[j - 1], keys[j]) >= 0) {
      sorted = false;
      break;
    }
  }
  if (sorted) {
    for (let j = 0; j < n; j++) setKey(obj, keys[j], vals[j]);
    return obj;
  }
  const idx: number[] = new Array(n);
  for (let j = 0; j < n; j++) idx[j] = j;
  idx.sort((a, b) => utf8Compare(keys[a], keys[b]) || a - b);
  for (let j = 0; j < n; j++) {
    const cur = idx[j];
    if (j + 1 < n && keys[idx[j + 1]] === keys[cur]) continue; // a later assignment of the same key wins
    setKey(obj, keys[cur], vals[cur]);
  }
  return obj;
}

/** The text json.Marshal reports for the first NaN/±Inf in Go's (sorted-key) traversal order. */
function firstNonFinite(v: JsonValue): string | undefined {
  const stack: JsonValue[] = [v];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (typeof x === "number") {
      if (Number.isNaN(x)) return "NaN";
      if (x === Infinity) return "+Inf";
      if (x === -Infinity) return "-Inf";
    } else if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i]);
    } else if (x !== null && typeof x === "object") {
      const keys = Object.keys(x).sort(utf8Compare);
      for (let i = keys.length - 1; i >= 0; i--) stack.push(x[keys[i]]);
    }
  }
  return undefined;
}

/**
 * Parses ONE YAML document (text already split at `---` lines by the caller) into the JSON value that
 * sigs.k8s.io/yaml.YAMLToJSON produces, as decoded by encoding/json into interface{} (numbers become
 * float64). Object keys are inserted in Go's encoding/json order (UTF-8 byte order; note that JS objects
 * still list integer-like keys first). A document without content yields null; like yaml.Unmarshal, only
 * the first document of the text is read.
 * Throws GoYamlError with Go's message (`error converting YAML to JSON: yaml: line N: …`).
 * `strict`: yaml.UnmarshalStrict (sigs.k8s.io/yaml.UnmarshalStrict, opm's semver template): a key
 * repeated in one mapping fails with `yaml: unmarshal errors:\n  line N: key "k" already set in map`.
 * `strings`: a pool shared by the documents of one stream, which then share one copy of each repeated
 * string value.
 */
export function parseGoYamlDocument(
  text: string,
  options?: { strict?: boolean; strings?: Map<string, string> },
): JsonValue {
  let events: YamlEvent[];
  try {
    events = parseFirstDocument(text);
  } catch (err) {
    if (err instanceof ParseFailure) throw new GoYamlError(PREFIX + err.message, err.line);
    throw err;
  }
  try {
    return new Composer(events, options?.strict === true, options?.strings).run();
  } catch (err) {
    if (err instanceof Fail) throw new GoYamlError(PREFIX + err.msg);
    if (err instanceof RangeError) throw new GoYamlError(PREFIX + "yaml: exceeded max depth of 10000");
    throw err;
  }
}
