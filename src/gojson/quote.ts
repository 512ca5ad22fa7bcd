/** Go `strconv.Quote` (what `fmt`'s `%q` verb prints for a string), on Go's own Unicode tables. */
import { isGoPrint } from "./unicodetables.js";

const HEX = "0123456789abcdef";

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
 * Go `strconv.Quote`. A lone UTF-16 surrogate is treated as U+FFFD, which is what it becomes when the
 * string is encoded to UTF-8 for Go (and what Go's encoding/json decodes `"\ud800"` to).
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
      out += cp === 0xfffd ? "\ufffd" : ch;
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
