/**
 * JSON text exactly as Go's encoding/json writes it.
 *
 * opm normalises every blob it loads by decoding it into a map and re-encoding it (keys sorted by
 * byte order, compact, HTML escaping off), and writes catalogs with `SetIndent("", "    ")`. These
 * functions reproduce those bytes: string escapes (`\u2028`, `\u2029`, invalid UTF-16 → U+FFFD),
 * float formatting (`-0`, exponent thresholds) and UTF-8 byte order of keys.
 */
import type { JsonValue } from "./value.js";
import { goJsonFloat } from "./float.js";

const NEEDS_FIXUP = /[\u2028\u2029\ud800-\udfff]/;
const HTML_CHARS = /[<>&]/;

/** Go's encoding/json string encoding (`escapeHTML` as `SetEscapeHTML`). */
export function quoteGoString(s: string, escapeHTML = false): string {
  let out: string;
  if (NEEDS_FIXUP.test(s)) {
    // Go escapes U+2028/U+2029 and replaces invalid UTF-16 (invalid UTF-8 to Go) with U+FFFD;
    // JSON.stringify leaves the former raw and escapes lone surrogates.
    out = JSON.stringify(s.replace(LONE_SURROGATE, "\ufffd"))
      .replace(/\u2028/g, "\\u2028")
      .replace(/\u2029/g, "\\u2029");
  } else {
    out = JSON.stringify(s);
  }
  if (escapeHTML && HTML_CHARS.test(s)) {
    out = out.replace(/[<>&]/g, (c) => (c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026"));
  }
  return out;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Go's float64 formatting in encoding/json (shortest round trip; `e` form below 1e-6 or from 1e21). */
export const formatGoFloat = goJsonFloat;

/** Compares two strings by the byte order of their UTF-8 encodings (Go's string order). */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point (= UTF-8 byte) order only between surrogates and U+E000..U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      if (x >= 0xe000) x -= 0x800;
      else x += 0x2000;
      if (y >= 0xe000) y -= 0x800;
      else y += 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

export function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort(compareUtf8);
  return keys;
}

/**
 * Compact JSON with object keys sorted by byte order, no HTML escaping: the normal form of a blob
 * (opm's `Meta.Blob`, without the trailing newline) and of property values loaded from files.
 */
export function encodeSortedCompact(v: JsonValue): string {
  switch (typeof v) {
    case "string":
      return quoteGoString(v);
    case "number":
      return goJsonFloat(v);
    case "boolean":
      return v ? "true" : "false";
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        let s = "[";
        for (let i = 0; i < v.length; i++) {
          if (i > 0) s += ",";
          s += encodeSortedCompact(v[i]);
        }
        return s + "]";
      }
      const keys = sortedKeys(v);
      let s = "{";
      for (let i = 0; i < keys.length; i++) {
        if (i > 0) s += ",";
        s += quoteGoString(keys[i]) + ":" + encodeSortedCompact(v[keys[i]]);
      }
      return s + "}";
    }
    default:
      throw new TypeError(`cannot encode ${typeof v} as JSON`);
  }
}

/** Compact JSON keeping the objects' own key order (for values built in Go struct-field order). */
export function encodeOrderedCompact(v: JsonValue, escapeHTML = false): string {
  if (typeof v === "string") return quoteGoString(v, escapeHTML);
  if (typeof v === "number") return goJsonFloat(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map((x) => encodeOrderedCompact(x, escapeHTML)).join(",") + "]";
  const parts: string[] = [];
  for (const k of Object.keys(v))
    parts.push(quoteGoString(k, escapeHTML) + ":" + encodeOrderedCompact(v[k], escapeHTML));
  return "{" + parts.join(",") + "}";
}

/**
 * Go's `json.Indent(dst, compact, prefix, indent)` on compact JSON text: whitespace only, escapes
 * are kept as they are. `level` is the nesting depth the value starts at.
 */
export function indentCompactJson(compact: string, indent: string, level = 0): string {
  let out = "";
  let depth = level;
  let start = 0;
  const len = compact.length;
  let needIndent = false; // just opened a container: newline before its first element
  // "\n" + indent × depth, made once per depth
  const breaks: string[] = [];
  const lineBreak = (d: number): string => (breaks[d] ??= "\n" + indent.repeat(d));
  for (let i = 0; i < len; i++) {
    const c = compact.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const j = closingQuote(compact, i);
      if (needIndent) {
        out += compact.slice(start, i) + lineBreak(depth);
        start = i;
        needIndent = false;
      }
      i = j;
      continue;
    }
    if (needIndent && c !== 0x5d && c !== 0x7d) {
      out += compact.slice(start, i) + lineBreak(depth);
      start = i;
      needIndent = false;
    }
    switch (c) {
      case 0x7b: // {
      case 0x5b: // [
        depth++;
        needIndent = true;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth--;
        if (needIndent) {
          needIndent = false; // empty container stays `{}` / `[]`
        } else {
          out += compact.slice(start, i) + lineBreak(depth);
          start = i;
        }
        break;
      case 0x2c: // ,
        out += compact.slice(start, i + 1) + lineBreak(depth);
        start = i + 1;
        break;
      case 0x3a: // :
        out += compact.slice(start, i + 1) + " ";
        start = i + 1;
        break;
      default:
        break;
    }
  }
  return out + compact.slice(start);
}

/**
 * The index of the quote closing the JSON string that opens at `open` (`len` when unterminated):
 * found with indexOf (long strings such as base64 icons are skipped at memchr speed), a quote preceded
 * by an odd number of backslashes being escaped.
 */
function closingQuote(s: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = s.indexOf('"', from);
    if (q < 0) return s.length;
    let b = q - 1;
    while (b > open && s.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    from = q + 1;
  }
}
