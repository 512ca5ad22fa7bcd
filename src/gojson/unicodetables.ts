/**
 * Go's Unicode predicates (`strconv.IsPrint`, `unicode.IsDigit`, `unicode.IsLetter`) from Go's own tables
 * (generated into gounicode.ts by scripts/oracle/unicode), so that results never depend on the Unicode
 * version of the running Node. Tables are decoded on first use.
 */
import { GO_DIGIT_RANGES, GO_LETTER_RANGES, GO_PRINT_RANGES } from "./gounicode.js";

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

let printTable: Uint32Array | undefined;
let digitTable: Uint32Array | undefined;
let letterTable: Uint32Array | undefined;

/** Go `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isGoPrint(cp: number): boolean {
  if (cp < 0x7f) return cp >= 0x20;
  printTable ??= decodeRanges(GO_PRINT_RANGES);
  return inRanges(printTable, cp);
}

/** Go `unicode.IsDigit` (category Nd). */
export function isGoDigit(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x30 && cp <= 0x39;
  digitTable ??= decodeRanges(GO_DIGIT_RANGES);
  return inRanges(digitTable, cp);
}

/** Go `unicode.IsLetter` (category L). */
export function isGoLetter(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  letterTable ??= decodeRanges(GO_LETTER_RANGES);
  return inRanges(letterTable, cp);
}
