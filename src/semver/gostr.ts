/**
 * Small helpers reproducing the Go standard-library string functions that blang/semver's
 * behaviour (and its error texts) depend on: `strconv.Quote` (`%q`), `strings.TrimSpace`,
 * `unicode.IsDigit` and `strconv.Atoi`. Internal to the semver module.
 */

import { GO_DIGIT_RANGES, GO_PRINT_RANGES } from "./gotables.js";

const HEX = "0123456789abcdef";

/** Decodes a generated range table into a flat sorted [lo0, hi0, lo1, hi1, …] array. */
function decodeRanges(enc: string): Uint32Array {
  const pairs = enc.split(",");
  const out = new Uint32Array(pairs.length * 2);
  for (let i = 0; i < pairs.length; i++) {
    const [lo, hi] = pairs[i].split("-");
    out[2 * i] = parseInt(lo, 36);
    out[2 * i + 1] = parseInt(hi, 36);
  }
  return out;
}

let printTable: Uint32Array | undefined;
let digitTable: Uint32Array | undefined;

function inRanges(t: Uint32Array, cp: number): boolean {
  let lo = 0;
  let hi = t.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (cp < t[2 * mid]) hi = mid - 1;
    else if (cp > t[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * Go `strconv.IsPrint` (letters, marks, numbers, punctuation, symbols and ASCII space), from Go's
 * own tables so the result does not depend on the Unicode version of the running Node.
 */
function isGoPrint(cp: number): boolean {
  if (cp < 0x7f) return cp >= 0x20;
  printTable ??= decodeRanges(GO_PRINT_RANGES);
  return inRanges(printTable, cp);
}

/** True when `s` is quoted by Go as-is: printable ASCII without `"` and `\`. */
function isPlainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

function hex(cp: number, digits: number): string {
  let out = "";
  for (let s = (digits - 1) * 4; s >= 0; s -= 4) out += HEX[(cp >>> s) & 0xf];
  return out;
}

/**
 * Go `strconv.Quote` (what `fmt`'s `%q` verb prints for a string). A lone UTF-16 surrogate is
 * treated as U+FFFD, which is what it becomes when the string is encoded to UTF-8 for Go.
 */
export function goQuote(s: string): string {
  if (isPlainAscii(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22 || cp === 0x5c) {
      out += "\\" + ch;
      continue;
    }
    if (isGoPrint(cp)) {
      out += String.fromCodePoint(cp);
      continue;
    }
    switch (cp) {
      case 0x07:
        out += "\\a";
        break;
      case 0x08:
        out += "\\b";
        break;
      case 0x0c:
        out += "\\f";
        break;
      case 0x0a:
        out += "\\n";
        break;
      case 0x0d:
        out += "\\r";
        break;
      case 0x09:
        out += "\\t";
        break;
      case 0x0b:
        out += "\\v";
        break;
      default:
        if (cp < 0x20 || cp === 0x7f) out += "\\x" + hex(cp, 2);
        else if (cp < 0x10000) out += "\\u" + hex(cp, 4);
        else out += "\\U" + hex(cp, 8);
    }
  }
  return out + '"';
}

/** Go `unicode.IsSpace`. */
function isGoSpace(c: number): boolean {
  if (c <= 0xff) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Go `strings.TrimSpace` (Unicode white space; unlike `String.prototype.trim`, U+FEFF is kept). */
export function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  // Every Go space is a single UTF-16 unit, so scanning by code unit is exact.
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** Index (UTF-16) of the first rune of `s` for which Go's `unicode.IsDigit` holds, or -1. */
export function indexGoDigit(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) return i;
    if (c >= 0x80) {
      const cp = s.codePointAt(i)!;
      digitTable ??= decodeRanges(GO_DIGIT_RANGES);
      if (inRanges(digitTable, cp)) return i;
      if (cp > 0xffff) i++;
    }
  }
  return -1;
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const ATOI_SYNTAX = /^[+-]?[0-9]+$/;

/** Go `strconv.Atoi` on a 64-bit platform; `null` on any error. */
export function goAtoi(s: string): bigint | null {
  if (!ATOI_SYNTAX.test(s)) return null;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? null : n;
}

/** Go `int` (int64) addition of 1, wrapping on overflow. */
export function goIncInt(n: bigint): bigint {
  return BigInt.asIntN(64, n + 1n);
}

/** Length of `s` in UTF-8 bytes is greater than one (Go's `len(s) > 1`). */
export function utf8LenAtLeast2(s: string): boolean {
  return s.length > 1 || (s.length === 1 && s.charCodeAt(0) >= 0x80);
}
