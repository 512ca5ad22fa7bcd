/**
 * Small helpers reproducing the Go standard-library string functions that blang/semver's
 * behaviour (and its error texts) depend on: `strconv.Quote` (`%q`), `strings.TrimSpace`,
 * `unicode.IsDigit` and `strconv.Atoi`. Internal to the semver module.
 */

import { goTrimSpace } from "../gojson/unicode.js";

export { goTrimSpace };
import { isGoDigit } from "../gojson/unicodetables.js";

export { goQuote } from "../gojson/quote.js";

/** Index (UTF-16) of the first rune of `s` for which Go's `unicode.IsDigit` holds, or -1. */
export function indexGoDigit(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) return i;
    if (c >= 0x80) {
      const cp = s.codePointAt(i)!;
      if (isGoDigit(cp)) return i;
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
