// go-yaml v2 sorter.go `keyList.Less` for string keys (the only kind JSONToYAML produces).
//
// Runes are compared one by one; at the first difference: two letters compare by rune; if exactly one
// is a letter, the non-letter sorts first; otherwise the digit runs starting there are compared as
// (wrapping) int64 numbers, then by run length, then by rune. A prefix sorts before the longer key.
// Go sorts the keys with sort.Sort after taking them in random map order, so for the (rare) key sets on
// which Less is not a strict weak order Go itself is not deterministic; we use a stable sort.

// unicode.IsLetter / unicode.IsDigit on Go's own tables (Unicode 15.0.0, as Go 1.26 which opm is built with).
import { isGoDigit as isDigit, isGoLetter as isLetter } from "../gojson/unicodetables.js";

/** Decodes a JS string into Go runes (lone surrogates become U+FFFD, as Go's UTF-8 decoding would). */
function runes(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

function isAsciiOnly(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** Reads the digit run of `r` from `i` into a wrapping int64 (as Go does), starting from `init`. */
function digitRun(r: ArrayLike<number>, i: number, init: bigint | number): [bigint | number, number] {
  let j = i;
  let n: number = typeof init === "number" ? init : 0;
  let big: bigint | undefined = typeof init === "bigint" ? init : undefined;
  for (; j < r.length && isDigit(r[j]); j++) {
    const d = r[j] - 48;
    if (big === undefined && d >= 0 && d <= 9 && n < 1e14) {
      n = n * 10 + d;
    } else {
      if (big === undefined) big = BigInt(n);
      big = BigInt.asIntN(64, big * 10n + BigInt(d));
    }
  }
  return [big === undefined ? n : big, j];
}

function lessRunes(ar: ArrayLike<number>, br: ArrayLike<number>): boolean {
  const n = Math.min(ar.length, br.length);
  for (let i = 0; i < n; i++) {
    const a = ar[i];
    const b = br[i];
    if (a === b) continue;
    const al = isLetter(a);
    const bl = isLetter(b);
    if (al && bl) return a < b;
    if (al || bl) return bl;
    let init = 0;
    if (a === 48 || b === 48) {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== 48) {
          init = 1;
          break;
        }
      }
    }
    const [an, ai] = digitRun(ar, i, init);
    const [bn, bi] = digitRun(br, i, init);
    // biome-ignore lint/suspicious/noDoubleEquals: number vs bigint: only loose equality compares the values
    if (an != bn) return an < bn; // mixed number/bigint comparison is exact
    if (ai !== bi) return ai < bi;
    return a < b;
  }
  return ar.length < br.length;
}

/** go-yaml v2 keyList.Less(a, b) for two string keys. */
export function goKeyLess(a: string, b: string): boolean {
  if (isAsciiOnly(a) && isAsciiOnly(b)) return lessAscii(a, b);
  return lessRunes(runes(a), runes(b));
}

function lessAscii(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const al = (x >= 65 && x <= 90) || (x >= 97 && x <= 122);
    const bl = (y >= 65 && y <= 90) || (y >= 97 && y <= 122);
    if (al && bl) return x < y;
    if (al || bl) return bl;
    const xd = x >= 48 && x <= 57;
    const yd = y >= 48 && y <= 57;
    if (!xd && !yd) return x < y; // both digit runs are empty: numbers equal, lengths equal
    return lessRunes(runes(a), runes(b));
  }
  return a.length < b.length;
}

/** Sorts keys in place in go-yaml v2 order and returns the array. */
export function sortGoKeys(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  return keys.sort((a, b) => (goKeyLess(a, b) ? -1 : goKeyLess(b, a) ? 1 : 0));
}
