/** Go's base64.StdEncoding decoding errors. */

const B64 = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i;

/**
 * Checks standard padded base64 exactly as Go's `base64.StdEncoding.Decode` does (a port of its
 * decodeQuantum loop); returns the offset Go reports in `illegal base64 data at input byte N`, or
 * -1 when the input is valid.
 */
export function goBase64ErrorOffset(src: string): number {
  const n = src.length;
  let si = 0;
  for (;;) {
    for (let j = 0; j < 4; j++) {
      if (si === n) {
        if (j === 0) return -1;
        return si - j;
      }
      const c = src.charCodeAt(si);
      si++;
      if (c < 128 && B64[c] >= 0) continue;
      if (c === 10 || c === 13) {
        j--;
        continue;
      }
      if (c !== 61) return si - 1;
      // padding
      if (j === 0 || j === 1) return si - 1;
      if (j === 2) {
        while (si < n && (src.charCodeAt(si) === 10 || src.charCodeAt(si) === 13)) si++;
        if (si === n) return n;
        if (src.charCodeAt(si) !== 61) return si - 1;
        si++;
      }
      while (si < n && (src.charCodeAt(si) === 10 || src.charCodeAt(si) === 13)) si++;
      return si < n ? si : -1;
    }
  }
}
