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
