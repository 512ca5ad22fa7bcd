/** Go's `unicode.IsSpace`. */
export function isGoSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** apimachinery's hasJSONPrefix: the first character that is not `unicode.IsSpace` is `{`. */
export function hasJsonPrefix(text: string, limit = text.length): boolean {
  const n = Math.min(limit, text.length);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isGoSpace(c)) continue;
    return c === 0x7b;
  }
  return false;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The form in which encoding/json compares a JSON member name with a struct field's (ASCII) name:
 * two names match when their folds are equal (`bytes.EqualFold`, simple Unicode case folding).
 * Among non-ASCII characters only the Kelvin sign (U+212A, folds with `k`) and the long s (U+017F,
 * folds with `s`) fold into ASCII letters, so those two become ASCII and every other non-ASCII
 * character is kept as is (it can never equal an ASCII field name). `toLowerCase` alone would miss
 * the long s (and lower-case other scripts, which is harmless but slower). For one name against
 * one key, {@link goFoldEqual} compares without building strings.
 */
export function foldFieldName(s: string): string {
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  let out = "";
  for (const c of s) {
    if (c === "\u212a") out += "k";
    else if (c === "\u017f") out += "s";
    else if (c.length === 1 && c.charCodeAt(0) < 0x80) out += c.toLowerCase();
    else out += c;
  }
  return out;
}

/**
 * bytes.EqualFold for a JSON key against an ASCII field name: ASCII letters fold by case, and the
 * two non-ASCII letters whose simple folding reaches ASCII (U+212A KELVIN SIGN → k, U+017F LONG S → s).
 */
export function goFoldEqual(key: string, asciiName: string): boolean {
  let i = 0;
  let j = 0;
  while (i < key.length && j < asciiName.length) {
    const c = key.charCodeAt(i++);
    const f = c === 0x212a ? 0x6b : c === 0x17f ? 0x73 : c >= 0x41 && c <= 0x5a ? c + 32 : c;
    let n = asciiName.charCodeAt(j++);
    if (n >= 0x41 && n <= 0x5a) n += 32;
    if (f !== n) return false;
  }
  return i === key.length && j === asciiName.length;
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
