/**
 * Helpers for working on "byte strings": JS strings whose code units are all 0..255 and stand for the
 * bytes of a UTF-8 text (latin1 view of a Buffer). Go's gitignore and filepath.Match compare bytes and
 * decode runes with utf8.DecodeRuneInString; doing the same here keeps invalid or partial UTF-8
 * sequences behaving exactly as in Go. ASCII strings are their own byte string, so the common case
 * costs only a regular-expression test.
 */
import { isGoSpace } from "../gojson/unicode.js";

const NON_ASCII = /[^\x00-\x7f]/;

/** The UTF-8 bytes of `s` as a byte string (identity for ASCII). */
export function toByteString(s: string): string {
  return NON_ASCII.test(s) ? Buffer.from(s, "utf8").toString("latin1") : s;
}

/** U+FFFD, what Go's decoder yields for an invalid byte. */
export const RUNE_ERROR = 0xfffd;

/**
 * Go's utf8.DecodeRuneInString on byte string `s` at `i` (which must be < s.length): the rune and the
 * number of bytes it takes. An invalid or truncated sequence yields (U+FFFD, 1).
 */
export function decodeRune(s: string, i: number): [rune: number, size: number] {
  const b0 = s.charCodeAt(i);
  if (b0 < 0x80) return [b0, 1];
  const n = s.length - i;
  let size: number;
  let min: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    size = 2;
    min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    min = 0x800;
    if (b0 === 0xe0) lo = 0xa0;
    else if (b0 === 0xed) hi = 0x9f; // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    min = 0x10000;
    if (b0 === 0xf0) lo = 0x90;
    else if (b0 === 0xf4) hi = 0x8f;
  } else {
    return [RUNE_ERROR, 1];
  }
  if (n < size) {
    // Truncated: still (RuneError, 1), whatever the following bytes are.
    return [RUNE_ERROR, 1];
  }
  const b1 = s.charCodeAt(i + 1);
  if (b1 < lo || b1 > hi) return [RUNE_ERROR, 1];
  let r = ((b0 & (0xff >> (size + 1))) << 6) | (b1 & 0x3f);
  for (let k = 2; k < size; k++) {
    const b = s.charCodeAt(i + k);
    if (b < 0x80 || b > 0xbf) return [RUNE_ERROR, 1];
    r = (r << 6) | (b & 0x3f);
  }
  return r < min ? [RUNE_ERROR, 1] : [r, size];
}

/** Go's strings.TrimSpace on a byte string (Unicode white space; invalid bytes are not space). */
export function trimSpaceBytes(s: string): string {
  let start = 0;
  const end0 = s.length;
  while (start < end0) {
    const [r, size] = decodeRune(s, start);
    if (!isGoSpace(r)) break;
    start += size;
  }
  // Scan forward from `start` and remember where the last non-space rune ends. Valid white-space
  // encodings are found the same way going forwards as Go's DecodeLastRune finds them backwards.
  let end = start;
  let i = start;
  while (i < end0) {
    const [r, size] = decodeRune(s, i);
    i += size;
    if (!isGoSpace(r)) end = i;
  }
  return s.slice(start, end);
}
