// YAML → JSON value with the semantics of sigs.k8s.io/yaml.YAMLToJSON (go-yaml v2 decoding into
// interface{}, YAML 1.1 implicit typing, convertToJSONableObject, encoding/json), followed by
// encoding/json decoding into interface{} (so every number is a float64 / JS number).
//
// Syntax is parsed by js-yaml 5's event parser (`parseEvents`); the composer below is our own port of
// go-yaml v2's decoder (decode.go) so that tags, merges, duplicate keys, key conversion and errors follow Go.
// libyaml/YAML 1.1 details that js-yaml (YAML 1.2) does not share are patched around it: NEL, U+2028 and
// U+2029 as line breaks, the root-level block scalar indentation indicator, a final line break missing after
// a block scalar, trailing content after a complete root node (ignored by Go), `: v` without a key, anchor
// name characters.
//
// Known differences from Go (rare in practice; all syntax-level):
// * Error wording. js-yaml's errors are mapped to go-yaml's text and line convention (`line N` is 0-based
//   for parser errors and 1-based for scanner errors, omitted on the first line) for: unclosed quotes and
//   flow collections, characters that cannot start a token, tab indentation, `- ` or `key: a: b` in the
//   wrong place, under-/over-indented keys, missing `:`, unknown anchors. Other syntax errors (directives,
//   some errors inside flow collections) keep js-yaml's reason after the Go-style prefix. On random
//   YAML-like garbage about 80-95% of Go's messages are reproduced exactly (testdata/load-fuzz.json).
// * Acceptance. libyaml accepts a lone `-` as a plain scalar in flow context (`[-]`) and tabs as separators
//   inside flow collections and quoted continuation lines; js-yaml rejects them. libyaml rejects some tab
//   placements js-yaml accepts (a tab after `- `, a tab-only line at column 0, a tab before content in an
//   indentation). libyaml accepts continuation lines of quoted scalars and flow collections at any
//   indentation (`a: 'x\ny'`, `k: [\na]`); js-yaml rejects under-indented ones ("deficient indentation"),
//   except after U+2028/U+2029 inside quoted scalars, which go-yaml's emitter produces and which are handled.
//   A root-level plain scalar followed by more lines is read differently. Folded (`>`) block scalars
//   containing U+2028/U+2029 keep js-yaml's folding.
// * Keys that differ in Go's type but convert to the same JSON key (`1` and `"1"`) are random in Go; here the
//   last one in document order wins. When several keys cannot be converted (null, uint64) Go reports a
//   random one; here the first.
// * The values printed in "unsupported map key" and "invalid map key" errors use a simplified %#v.

import { getScalarValue, parseEvents, type Event, type ScalarEvent } from "js-yaml";
import { goFormatFloatG } from "../gojson/float.js";
import type { JsonValue } from "./emit.js";
import { GoYamlError } from "./errors.js";
import { resolvePlain } from "./resolve.js";

const PREFIX = "error converting YAML to JSON: ";

const EV_DOCUMENT = 1;
const EV_SEQUENCE = 2;
const EV_MAPPING = 3;
const EV_SCALAR = 4;
const EV_ALIAS = 5;

const STYLE_PLAIN = 1;

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
        return JSON.stringify(s.v);
    }
  }
  if (v === null || v === undefined) return "interface {}(nil)";
  if (Array.isArray(v)) return "[]interface {}{" + v.map((x) => goSharpV(x)).join(", ") + "}";
  if (typeof v === "object") {
    return (
      "map[interface {}]interface {}{" +
      Object.keys(v)
        .map((k) => JSON.stringify(k) + ":" + goSharpV(v[k]))
        .join(", ") +
      "}"
    );
  }
  return typeof v === "string" ? JSON.stringify(v) : String(v);
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
  if (Array.isArray(v)) return v.map(clone);
  const o: { [k: string]: JsonValue } = {};
  for (const k of Object.keys(v)) setKey(o, k, clone(v[k]));
  return o;
}

/**
 * A copy of `s` that does not keep its source alive. V8 makes slices of 13 or more characters
 * views into the parent string, so every scalar would pin the whole catalog file text in memory;
 * flattening a one-character concatenation yields a fresh string at memcpy speed (measured: 25%
 * less retained heap on the community catalogs, no measurable time).
 */
function ownCopy(s: string): string {
  return s.length < 13 ? s : ("\0" + s).slice(1);
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
    private readonly src: string,
    private readonly events: Event[],
    /** The text before U+2028/U+2029 were replaced by "\n" in `src`, when they occur. */
    private readonly original?: string,
  ) {}

  private anchorName(start: number, end: number): string {
    const name = this.src.slice(start, end);
    if (!/^[0-9A-Za-z_-]+$/.test(name)) {
      // libyaml's scanner only takes alphanumerics, '-' and '_' in anchor and alias names.
      throw new Fail(
        `yaml: ${goWhere(countLines(this.src, start), true)}did not find expected alphabetic or numeric character`,
      );
    }
    return name;
  }

  private tagOf(start: number, end: number): string {
    if (start < 0) return "";
    const raw = this.src.slice(start, end);
    if (raw.startsWith("!<")) return raw.slice(2, -1);
    if (raw.startsWith("!!")) return TAG_PREFIX + raw.slice(2);
    const m = /^(![A-Za-z0-9-]*!)(.*)$/.exec(raw);
    if (m !== null) {
      const p = this.tagHandles.get(m[1]);
      if (p !== undefined) return p + m[2];
    }
    return raw;
  }

  private tagHandles = new Map<string, string>();

  run(): JsonValue {
    const ev = this.events;
    if (ev.length === 0) return null;
    const doc = ev[0];
    if (doc.type !== EV_DOCUMENT) return null;
    for (const d of doc.directives) if (d.kind === "tag") this.tagHandles.set(d.handle, d.prefix);
    this.i = 1;
    const value = this.node().value;
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

  /** Decodes the next node; returns its JSON value and, for scalars, the Go-typed scalar. */
  private node(): { value: JsonValue; scalar?: GoScalar; isMap: boolean; merge?: boolean } {
    const e = this.events[this.i++];
    const before = this.decodeCount;
    this.decodeCount++;
    this.checkAliasing();
    switch (e.type) {
      case EV_SCALAR: {
        const s = this.scalar(e);
        if (e.anchorStart >= 0) {
          this.anchors.set(this.anchorName(e.anchorStart, e.anchorEnd), {
            done: true,
            size: this.decodeCount - before,
            value: s.value,
            scalar: s.scalar,
            isMap: false,
          });
        }
        return s;
      }
      case EV_ALIAS: {
        const name = this.anchorName(e.anchorStart, e.anchorEnd);
        const a = this.anchors.get(name);
        if (a === undefined) throw new Fail(`yaml: unknown anchor '${name}' referenced`);
        if (!a.done) throw new Fail(`yaml: anchor '${name}' value contains itself`);
        // Go decodes the aliased node again: every one of its decode operations counts as aliased
        this.decodeCount += a.size;
        this.aliasCount += a.size;
        this.checkAliasing();
        return { value: clone(a.value), scalar: a.scalar, isMap: a.isMap };
      }
      case EV_SEQUENCE: {
        let anchor: Anchor | undefined;
        if (e.anchorStart >= 0) {
          anchor = { done: false, size: 0, value: null, isMap: false };
          this.anchors.set(this.anchorName(e.anchorStart, e.anchorEnd), anchor);
        }
        const arr: JsonValue[] = [];
        while (this.events[this.i].type !== 6) arr.push(this.node().value);
        this.i++;
        if (anchor !== undefined) {
          anchor.value = arr;
          anchor.size = this.decodeCount - before;
          anchor.done = true;
        }
        return { value: arr, isMap: false };
      }
      case EV_MAPPING: {
        let anchor: Anchor | undefined;
        if (e.anchorStart >= 0) {
          anchor = { done: false, size: 0, value: null, isMap: true };
          this.anchors.set(this.anchorName(e.anchorStart, e.anchorEnd), anchor);
        }
        if (
          e.style === 1 &&
          this.src[e.start] === ":" &&
          /^:(?:[ \t\r\n]|$)/.test(this.src.slice(e.start, e.start + 2))
        ) {
          // `: value` without a key: libyaml's parser rejects it (js-yaml reads a null key).
          throw new Fail(`yaml: ${goWhere(countLines(this.src, e.start), false)}did not find expected key`);
        }
        const obj = this.mapping();
        if (anchor !== undefined) {
          anchor.value = obj;
          anchor.size = this.decodeCount - before;
          anchor.done = true;
        }
        return { value: obj, isMap: true };
      }
      default:
        throw new Fail("yaml: unexpected event");
    }
  }

  private mapping(): { [k: string]: JsonValue } {
    const keys: string[] = [];
    const vals: JsonValue[] = [];
    const ev = this.events;
    while (ev[this.i].type !== 6) {
      const ke = ev[this.i];
      // isMerge: a `<<` scalar that is plain and untagged, or tagged !!merge.
      if (ke.type === EV_SCALAR && ke.valueEnd - ke.valueStart === 2 && this.src.startsWith("<<", ke.valueStart)) {
        const tag = this.tagOf(ke.tagStart, ke.tagEnd);
        if ((ke.style === STYLE_PLAIN && tag === "") || tag === T_MERGE) {
          this.i++;
          if (ke.anchorStart >= 0) {
            this.anchors.set(this.anchorName(ke.anchorStart, ke.anchorEnd), {
              done: true,
              size: 1,
              value: "<<",
              scalar: { t: "str", v: "<<" },
              isMap: false,
            });
          }
          this.merge(keys, vals);
          continue;
        }
      }
      const k = this.node();
      if (!k.isMap && k.scalar === undefined && Array.isArray(k.value))
        throw new Fail(`yaml: invalid map key: ${goSharpV(k.value)}`);
      if (k.isMap) throw new Fail(`yaml: invalid map key: ${goSharpV(k.value)}`);
      const v = this.node().value;
      const ks = this.keyString(k.scalar, k.value, v);
      keys.push(ks);
      vals.push(v);
    }
    this.i++;
    return buildObject(keys, vals);
  }

  /** convertToJSONableObject's key conversion. */
  private keyString(s: GoScalar | undefined, kv: JsonValue, v: JsonValue): string {
    if (s === undefined) return typeof kv === "string" ? kv : String(kv);
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
        this.convertError ??= `unsupported map key of type: %!s(<nil>), key: <nil>, value: ${v === null ? "<nil>" : goSharpV(v)}`;
        return "";
      case "uint64":
        this.convertError ??= `unsupported map key of type: uint64, key: ${goSharpV(null, s)}, value: ${v === null ? "<nil>" : goSharpV(v)}`;
        return s.dec;
    }
  }

  private merge(keys: string[], vals: JsonValue[]): void {
    const e = this.events[this.i];
    const wantMap = () => new Fail("yaml: map merge requires map or sequence of maps as the value");
    const addAll = (o: JsonValue) => {
      if (o === null || typeof o !== "object" || Array.isArray(o)) throw wantMap();
      for (const k of Object.keys(o)) {
        keys.push(k);
        vals.push(o[k]);
      }
    };
    if (e.type === EV_MAPPING || e.type === EV_ALIAS) {
      const n = this.node();
      if (!n.isMap) throw wantMap();
      addAll(n.value);
    } else if (e.type === EV_SEQUENCE) {
      this.i++;
      const items: { value: JsonValue; isMap: boolean }[] = [];
      while (this.events[this.i].type !== 6) {
        const t = this.events[this.i].type;
        const n = this.node();
        if (!(t === EV_MAPPING || t === EV_ALIAS) || !n.isMap) throw wantMap();
        items.push(n);
      }
      this.i++;
      for (let j = items.length - 1; j >= 0; j--) addAll(items[j].value);
    } else {
      this.node();
      throw wantMap();
    }
  }

  private scalar(e: ScalarEvent): { value: JsonValue; scalar: GoScalar; isMap: false } {
    let text = ownCopy(e.fast ? this.src.slice(e.valueStart, e.valueEnd) : getScalarValue(this.src, e));
    if (this.original !== undefined && e.valueStart >= 0) {
      const raw = this.original.slice(e.valueStart, e.valueEnd);
      if (/[\u2028\u2029]/.test(raw)) {
        if (e.style === 4) text = literalContent(raw, e.indent, e.chomping);
        else if (e.style !== 5)
          text = foldFlowScalar(raw, e.style === 2 ? "single" : e.style === 3 ? "double" : "plain");
        // Folded block scalars keep js-yaml's folding (approximation).
      }
    }
    if (e.style >= 4 && e.valueEnd >= this.src.length && text.endsWith("\n") && !/[\r\n]$/.test(this.src)) {
      // A block scalar running into the end of a text without a final line break: libyaml has no break
      // to keep, js-yaml adds one.
      text = text.slice(0, -1);
    }
    const tag = this.tagOf(e.tagStart, e.tagEnd);
    let s: GoScalar;
    if (tag === "") {
      if (e.style !== STYLE_PLAIN) s = { t: "str", v: text };
      else s = this.resolve(text, "");
    } else {
      s = this.resolve(text, tag);
    }
    let value: JsonValue;
    switch (s.t) {
      case "null":
        value = null;
        break;
      case "str":
      case "bool":
        value = s.v;
        break;
      case "float":
        if (!Number.isFinite(s.v)) this.nonFinite = true;
        value = s.v;
        break;
      default:
        value = s.v;
    }
    return { value, scalar: s, isMap: false };
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
        return { t: "str", v: text };
    }
    if (tag === T_STR) return { t: "str", v: text };
    const r = resolvePlain(text);
    let rtag: string;
    let out: GoScalar;
    switch (r.kind) {
      case "null":
        rtag = T_NULL;
        out = { t: "null" };
        break;
      case "bool":
        rtag = T_BOOL;
        out = { t: "bool", v: r.value as boolean };
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
          out = { t: "str", v: text };
          break;
        }
        rtag = T_STR;
        out = { t: "str", v: text };
        break;
      case "merge":
        rtag = T_MERGE;
        out = { t: "str", v: "<<" };
        break;
      default:
        rtag = T_STR;
        out = { t: "str", v: text };
    }
    if (tag === "" || tag === rtag) return out;
    if (tag === T_FLOAT && out.t === "int") return { t: "float", v: out.v };
    throw new Fail(`yaml: cannot decode ${shortTag(rtag)} \`${text}\` as a ${shortTag(tag)}`);
  }
}

/** A private-use character that does not occur in `text`, to stand for U+2028/U+2029 inside scalars. */
function placeholderFor(text: string): string {
  let placeholder = "\ue000";
  while (text.includes(placeholder)) placeholder = String.fromCharCode(placeholder.charCodeAt(0) + 1);
  return placeholder;
}

/** Upper bound on the re-parses spent locating quoted scalars that contain U+2028/U+2029 (see below). */
const MAX_QUOTED_BREAK_ROUNDS = 64;

/**
 * The same-length copy of `original` (which contains U+2028/U+2029) that js-yaml parses. libyaml reads
 * them as line breaks everywhere, so they become "\n" — which gives js-yaml libyaml's structure, e.g. for
 * a literal block scalar whose last line ends with U+2029 and is followed by `: value` on the same byte line
 * (go-yaml's emitter writes exactly that). Inside quoted scalars, though, js-yaml (YAML 1.2) requires
 * continuation lines to be indented while libyaml does not (go-yaml writes `'…\u2028'` with the closing
 * quote at column 0): each quoted scalar js-yaml rejects for "deficient indentation" after such a break
 * gets a placeholder instead, and the text is parsed again. The composer rebuilds every scalar containing
 * U+2028/U+2029 from `original`, so the placeholder never reaches a value. Only when that does not give
 * a parse (a genuine syntax error, or too many rounds) is the old approximation used: "\n" at the start of
 * a line only, a placeholder elsewhere.
 */
function unicodeBreaksForJsYaml(original: string): string {
  let copy = original.replace(/[\u2028\u2029]/g, "\n");
  let placeholder: string | undefined;
  const masked: number[] = [];
  for (let round = 0; round <= MAX_QUOTED_BREAK_ROUNDS; round++) {
    let events: Event[];
    try {
      events = parseEvents(copy, { maxDepth: 10000 });
    } catch (err) {
      if (round === MAX_QUOTED_BREAK_ROUNDS) break;
      const e = err as JsYamlError;
      if (e.mark === undefined || e.reason !== "deficient indentation") break;
      // The break run just before the error position: js-yaml stopped on the first character of a
      // continuation line it found under-indented.
      const end = e.mark.position;
      let start = end;
      while (start > 0 && " \t\r\n".includes(copy[start - 1])) start--;
      let changed = false;
      placeholder ??= placeholderFor(original);
      let next = "";
      let from = 0;
      for (let i = start; i < end; i++) {
        const c = original.charCodeAt(i);
        if (c === 0x2028 || c === 0x2029) {
          next += copy.slice(from, i) + placeholder;
          from = i + 1;
          masked.push(i);
          changed = true;
        }
      }
      if (!changed) break;
      copy = next + copy.slice(from);
      continue;
    }
    // A placeholder anywhere but inside a quoted scalar would have changed the structure.
    if (masked.length === 0 || insideQuotedScalars(events, masked)) return copy;
    break;
  }
  return maskUnicodeBreaks(original);
}

/** Whether every position of `sorted` (ascending) lies in the content of a single- or double-quoted scalar. */
function insideQuotedScalars(events: Event[], sorted: number[]): boolean {
  let k = 0;
  for (const e of events) {
    if (k === sorted.length) return true;
    if (e.type !== EV_SCALAR || (e.style !== 2 && e.style !== 3)) continue;
    if (sorted[k] < e.valueStart) return false;
    while (k < sorted.length && sorted[k] < e.valueEnd) k++;
  }
  return k === sorted.length;
}

/** U+2028/U+2029 → "\n" at the start of a line, otherwise a placeholder (see unicodeBreaksForJsYaml). */
function maskUnicodeBreaks(text: string): string {
  const placeholder = placeholderFor(text);
  let out = "";
  let atLineStart = true;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2028 || c === 0x2029) {
      out += text.slice(start, i) + (atLineStart ? "\n" : placeholder);
      start = i + 1;
    } else if (c === 0x0a || c === 0x0d) {
      atLineStart = true;
    } else if (c !== 0x20 && c !== 0x09) {
      atLineStart = false;
    }
  }
  return out + text.slice(start);
}

// ---------------------------------------------------------------------------------------------
// libyaml's scalar content rules, used for scalars that contain U+2028/U+2029 (line breaks in YAML 1.1
// that are kept verbatim in the content, unlike "\n" which folds to a space).

function isBlankChar(c: string): boolean {
  return c === " " || c === "\t";
}

/** Reads the line break at `i`: [content it stands for, length]; [, 0] when there is none. */
function readBreak(raw: string, i: number): [string, number] {
  const c = raw[i];
  if (c === "\r") return ["\n", raw[i + 1] === "\n" ? 2 : 1];
  if (c === "\n" || c === "\u0085") return ["\n", 1];
  if (c === "\u2028" || c === "\u2029") return [c, 1];
  return ["", 0];
}

const SIMPLE_ESCAPES: { [k: string]: string } = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029",
};

/** Content of a plain, single- or double-quoted scalar from its raw text (yaml_parser_scan_flow_scalar). */
function foldFlowScalar(raw: string, mode: "plain" | "single" | "double"): string {
  let s = "";
  let i = 0;
  const n = raw.length;
  let leadingBlanks = false;
  let whitespaces = "";
  let leadingBreak = "";
  let trailingBreaks = "";
  while (i < n) {
    while (i < n && !isBlankChar(raw[i]) && readBreak(raw, i)[1] === 0) {
      const c = raw[i];
      if (mode === "single" && c === "'" && raw[i + 1] === "'") {
        s += "'";
        i += 2;
      } else if (mode === "double" && c === "\\") {
        const lb = readBreak(raw, i + 1);
        if (lb[1] > 0) {
          i += 1 + lb[1];
          leadingBlanks = true;
          break;
        }
        const e = raw[i + 1];
        const simple = SIMPLE_ESCAPES[e];
        if (simple !== undefined) {
          s += simple;
          i += 2;
        } else {
          const len = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
          s += len > 0 ? String.fromCodePoint(parseInt(raw.slice(i + 2, i + 2 + len), 16)) : e;
          i += 2 + len;
        }
      } else {
        s += c;
        i++;
      }
    }
    while (i < n) {
      if (isBlankChar(raw[i])) {
        if (!leadingBlanks) whitespaces += raw[i];
        i++;
        continue;
      }
      const [b, len] = readBreak(raw, i);
      if (len === 0) break;
      i += len;
      if (!leadingBlanks) {
        whitespaces = "";
        leadingBreak = b;
        leadingBlanks = true;
      } else {
        trailingBreaks += b;
      }
    }
    if (leadingBlanks) {
      if (leadingBreak === "\n") s += trailingBreaks === "" ? " " : trailingBreaks;
      else s += leadingBreak + trailingBreaks;
      leadingBreak = "";
      trailingBreaks = "";
      leadingBlanks = false;
    } else {
      s += whitespaces;
    }
    whitespaces = "";
  }
  return s;
}

/** Content of a literal block scalar from its raw lines (yaml_parser_scan_block_scalar, literal). */
function literalContent(raw: string, indent: number, chomping: number): string {
  let s = "";
  let leadingBreak = "";
  let trailingBreaks = "";
  let i = 0;
  const n = raw.length;
  while (i < n) {
    let j = i;
    while (j < n && j - i < indent && raw[j] === " ") j++;
    let k = j;
    while (k < n && readBreak(raw, k)[1] === 0) k++;
    const [b, len] = k < n ? readBreak(raw, k) : ["", 0];
    if (k === j) {
      trailingBreaks += b; // an empty line
    } else {
      s += leadingBreak + trailingBreaks + raw.slice(j, k);
      leadingBreak = b;
      trailingBreaks = "";
    }
    i = k + len;
  }
  if (chomping !== 2) s += leadingBreak;
  if (chomping === 3) s += trailingBreaks;
  return s;
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
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "+Inf";
    if (v === -Infinity) return "-Inf";
    return undefined;
  }
  if (v === null || typeof v !== "object") return undefined;
  if (Array.isArray(v)) {
    for (const x of v) {
      const r = firstNonFinite(x);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  for (const k of Object.keys(v).sort(utf8Compare)) {
    const r = firstNonFinite(v[k]);
    if (r !== undefined) return r;
  }
  return undefined;
}

interface JsYamlError {
  reason?: string;
  mark?: { line: number; column: number; position: number };
  message?: string;
}

/** Go's "line N: " prefix: parser errors print the 0-based line, scanner errors the 1-based one; none on line 0. */
function goWhere(line0: number, scanner: boolean): string {
  if (line0 === 0) return "";
  return `line ${scanner ? line0 + 1 : line0}: `;
}

/** What is left open at the end of `text`: a quoted scalar, or the innermost flow collection. */
function unclosed(text: string): "quote" | "]" | "}" | undefined {
  const stack: string[] = [];
  let quote = "";
  let prev = "\n";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") {
        if (text[i + 1] === "'") i++;
        else quote = "";
      }
    } else if (quote === '"') {
      if (c === "\\") i++;
      else if (c === '"') quote = "";
    } else if (c === "#" && (prev === " " || prev === "\t" || prev === "\n")) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if ((c === "'" || c === '"') && /[\s[{,:-]/.test(prev)) {
      quote = c;
    } else if (c === "[" || c === "{") {
      stack.push(c === "[" ? "]" : "}");
    } else if ((c === "]" || c === "}") && stack.length > 0) {
      stack.pop();
    }
    prev = i < text.length ? text[i] : prev;
  }
  if (quote !== "") return "quote";
  return stack.length > 0 ? (stack[stack.length - 1] as "]" | "}") : undefined;
}

/**
 * Maps a js-yaml syntax error to go-yaml's wording and line convention. Covered: unclosed quotes and flow
 * collections, characters that cannot start a token (`@`, backquote, `%`, tabs), misplaced `- ` entries,
 * `key: a: b` and over-indented keys ("mapping values are not allowed in this context"), under-indented
 * keys and stray content ("did not find expected key" / "did not find expected '-' indicator").
 * Any other js-yaml error keeps js-yaml's reason text.
 */
function syntaxError(err: JsYamlError, text: string): GoYamlError {
  const reason = err.reason ?? err.message ?? "unknown problem parsing YAML content";
  const mark = err.mark;
  // libyaml moves the stream-end mark to a new line when the text does not end with a line break.
  const eofLine = countLines(text, text.length) + (text.length > 0 && !/[\r\n]$/.test(text) ? 1 : 0);
  let msg = reason;
  let line0 = mark !== undefined ? mark.line : 0;
  let scanner = false;
  const at = mark !== undefined ? (text[mark.position] ?? "") : "";
  const lineStart = mark !== undefined ? text.lastIndexOf("\n", mark.position - 1) + 1 : 0;
  const lineText = text.slice(
    lineStart,
    text.indexOf("\n", lineStart) < 0 ? text.length : text.indexOf("\n", lineStart),
  );
  const open = /deficient indentation|unexpected end of the stream|missed comma|flow collection/.test(reason)
    ? unclosed(text)
    : undefined;
  if (open === "quote") {
    msg = "found unexpected end of stream";
    scanner = true;
    line0 = countLines(text, text.length);
  } else if (open !== undefined) {
    const last = text
      .replace(/(^|\s)#[^\n]*/g, "")
      .trimEnd()
      .slice(-1);
    msg = "[{,:".includes(last) ? "did not find expected node content" : `did not find expected ',' or '${open}'`;
    line0 = eofLine;
  } else if (/expected ':' after a mapping key/.test(reason)) {
    msg = "could not find expected ':'";
    scanner = true;
    line0 = (mark?.line ?? 0) + 1;
  } else if (/a multiline key may not be an implicit key/.test(reason)) {
    msg = "could not find expected ':'";
    scanner = true;
  } else if (/^\t/.test(lineText) || /tab/.test(reason)) {
    msg = "found character that cannot start any token";
    scanner = true;
  } else if (/bad indentation of a mapping entry|end of the stream or a document separator is expected/.test(reason)) {
    if (at === "@" || at === "`" || at === "%") {
      msg = "found character that cannot start any token";
      scanner = true;
    } else if (at === "-" && /^-(\s|$)/.test(text.slice(mark?.position ?? 0))) {
      msg = "block sequence entries are not allowed in this context";
      scanner = true;
    } else if (at === "]" || at === "}" || (at === "," && /end of the stream/.test(reason))) {
      const before = text
        .slice(0, mark?.position ?? 0)
        .replace(/(^|\s)#[^\n]*/g, "")
        .trimEnd();
      msg = before === "" || /[:?-]$/.test(before) ? "did not find expected node content" : "did not find expected key";
    } else if (/end of the stream/.test(reason)) {
      const rest = text.slice(mark?.position ?? 0);
      const colon = /:(?=[ \t\r\n]|$)/.exec(rest);
      const rootIsSequence = /^[ \t]*-(\s|$)/.test(skipBlankAndCommentLines(text));
      if (colon !== null && mark !== undefined && !rootIsSequence) {
        msg = "mapping values are not allowed in this context";
        scanner = true;
        line0 = countLines(text, mark.position + colon.index);
      } else {
        msg = rootIsSequence ? "did not find expected '-' indicator" : "did not find expected key";
      }
    } else {
      const indent = lineText.length - lineText.trimStart().length;
      const prevIndent = previousIndent(text, lineStart);
      if (mark !== undefined && mark.position - lineStart === indent && indent < prevIndent) {
        msg = "did not find expected key";
      } else {
        msg = "mapping values are not allowed in this context";
        scanner = true;
      }
    }
  }
  const where = goWhere(line0, scanner);
  return new GoYamlError(`${PREFIX}yaml: ${where}${msg}`, mark !== undefined ? mark.line + 1 : undefined);
}

/** The text from the first line that is neither blank nor a comment. */
function skipBlankAndCommentLines(text: string): string {
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    const t = text.slice(pos, end).trim();
    if (t !== "" && !t.startsWith("#")) break;
    pos = end + 1;
  }
  return text.slice(pos);
}

function countLines(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Indentation of the closest non-blank, non-comment line before `lineStart`. */
function previousIndent(text: string, lineStart: number): number {
  let end = lineStart - 1;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const l = text.slice(start, end);
    const t = l.trimStart();
    if (t !== "" && !t.startsWith("#")) return l.length - t.length;
    end = start - 1;
  }
  return 0;
}

/**
 * yaml.Unmarshal reads only the first document: once its root node is complete (a scalar, a flow
 * collection, or a block collection followed by a less indented line), libyaml ends the document
 * implicitly and whatever follows is never parsed. js-yaml rejects such trailing content; when that is
 * the only problem, returns the events of the text before it.
 */
function trailingContentIgnoredByGo(err: JsYamlError, text: string): Event[] | undefined {
  const mark = err.mark;
  if (mark === undefined || !/end of the stream or a document separator is expected/.test(err.reason ?? ""))
    return undefined;
  const rest = text.slice(mark.position);
  if (unclosed(rest) === "quote" || /^[@`%\t]/.test(rest) || /^---(?:\s|$)|^\.\.\.(?:\s|$)/.test(rest))
    return undefined;
  let events: Event[];
  try {
    events = parseEvents(text.slice(0, mark.position), { maxDepth: 10000 });
  } catch {
    return undefined;
  }
  const root = events[1];
  if (root === undefined) return undefined;
  // A plain scalar at the root absorbs the following lines unless a comment ended it (not emulated).
  if (
    root.type === EV_SCALAR &&
    root.style === STYLE_PLAIN &&
    (root.valueEnd < 0 || !text.slice(root.valueEnd, mark.position).includes("#"))
  ) {
    return undefined;
  }
  if ((root.type === EV_MAPPING || root.type === EV_SEQUENCE) && root.style === 1) {
    const column = root.start - (text.lastIndexOf("\n", root.start - 1) + 1);
    if (mark.column >= column) return undefined;
  }
  return events;
}

/**
 * go-yaml resolves an explicit indentation indicator of a block scalar at the document root against
 * indentation 0, js-yaml against -1; shift the indicator by one for js-yaml.
 */
function fixRootBlockIndicator(text: string, events: Event[]): string | undefined {
  const root = events[1];
  if (root === undefined || root.type !== EV_SCALAR || root.style < 4) return undefined;
  const head = text.slice(0, root.valueStart);
  const re = /[|>]([+-]?)([1-8])([+-]?)[ \t]*(#[^\n]*)?\r?\n/g;
  let m: RegExpExecArray | null;
  let last: RegExpExecArray | undefined;
  while ((m = re.exec(head)) !== null) last = m;
  if (last === undefined) return undefined;
  const digitAt = last.index + 1 + last[1].length;
  return text.slice(0, digitAt) + String(Number(last[2]) + 1) + text.slice(digitAt + 1);
}

/**
 * Parses ONE YAML document (text already split at `---` lines by the caller) into the JSON value that
 * sigs.k8s.io/yaml.YAMLToJSON produces, as decoded by encoding/json into interface{} (numbers become
 * float64). Object keys are inserted in Go's encoding/json order (UTF-8 byte order; note that JS objects
 * still list integer-like keys first). A document without content yields null.
 * Throws GoYamlError with Go's message (`error converting YAML to JSON: yaml: line N: …`).
 */
export function parseGoYamlDocument(text: string): JsonValue {
  // YAML 1.1 (libyaml) reads a raw NEL (U+0085) as a line break producing "\n"; js-yaml (YAML 1.2) does not.
  if (text.indexOf("\u0085") >= 0) text = text.replace(/\u0085/g, "\n");
  // libyaml also breaks lines at U+2028/U+2029 (keeping the character in scalar content). js-yaml parses a
  // copy of the same length where they are "\n" at the start of a line and an inert character elsewhere;
  // the composer rebuilds the scalars that contain them from the original text.
  let original: string | undefined;
  if (/[\u2028\u2029]/.test(text)) {
    original = text;
    text = unicodeBreaksForJsYaml(original);
  }
  let events: Event[];
  try {
    events = parseEvents(text, { maxDepth: 10000 });
    const fixed = fixRootBlockIndicator(text, events);
    if (fixed !== undefined) {
      text = fixed;
      events = parseEvents(text, { maxDepth: 10000 });
    }
  } catch (err) {
    // js-yaml's parser is recursive: nesting deeper than about 2500 levels overflows the stack before
    // reaching go-yaml's limit of 10000, and is reported with go-yaml's message for that limit.
    if (err instanceof RangeError) throw new GoYamlError(PREFIX + "yaml: exceeded max depth of 10000");
    const prefixEvents = trailingContentIgnoredByGo(err as JsYamlError, text);
    if (prefixEvents === undefined) throw syntaxError(err as JsYamlError, text);
    events = prefixEvents;
  }
  try {
    return new Composer(text, events, original).run();
  } catch (err) {
    if (err instanceof Fail) throw new GoYamlError(PREFIX + err.msg);
    if (err instanceof RangeError) throw new GoYamlError(PREFIX + "yaml: exceeded max depth of 10000");
    throw err;
  }
}
