/**
 * Port of Go's path/filepath.Match (Unix flavour: '\\' escapes, '/' is the separator), which go-git's
 * gitignore package uses for every pattern component. It works on byte strings (see bytes.ts): literals
 * compare bytes, '?' and classes decode one UTF-8 rune, and a '*' may resume matching in the middle of
 * a multi-byte character, exactly as Go does.
 *
 * Syntax: `*` any run of non-'/' bytes, `?` one non-'/' rune, `[` [`^`] ranges `]` (`c`, `\c`,
 * `lo-hi`; the class must be non-empty), `\c` the literal c. Unlike git there is no `[!...]` negation and
 * no `**` (gitignore handles `**` itself, component-wise).
 */
import { decodeRune } from "./bytes.js";

/** Outcome of {@link fnmatch}: no match, match, or Go's ErrBadPattern. */
export type MatchResult = typeof NO_MATCH | typeof MATCH | typeof BAD_PATTERN;
export const NO_MATCH = 0;
export const MATCH = 1;
export const BAD_PATTERN = 2;

const SEP = 0x2f; // '/'
const BACKSLASH = 0x5c;

/** filepath.Match(pattern, name) on byte strings. */
export function fnmatch(pattern: string, name: string): MatchResult {
  let p = 0; // position in pattern
  let n = 0; // position in name
  const plen = pattern.length;
  outer: while (p < plen) {
    // scanChunk: optional run of stars, then a star-free chunk [cs, ce).
    let star = false;
    while (p < plen && pattern.charCodeAt(p) === 0x2a) {
      p++;
      star = true;
    }
    const cs = p;
    let ce = plen;
    let inrange = false;
    for (let i = p; i < plen; i++) {
      const c = pattern.charCodeAt(i);
      if (c === BACKSLASH) {
        if (i + 1 < plen) i++;
      } else if (c === 0x5b) {
        inrange = true;
      } else if (c === 0x5d) {
        inrange = false;
      } else if (c === 0x2a && !inrange) {
        ce = i;
        break;
      }
    }
    p = ce;
    if (star && cs === ce) {
      // Trailing * matches the rest of the name unless it has a '/'.
      return name.indexOf("/", n) < 0 ? MATCH : NO_MATCH;
    }
    const last = p >= plen;
    let t = matchChunk(pattern, cs, ce, name, n);
    if (t >= 0 && (t === name.length || !last)) {
      n = t;
      continue;
    }
    if (t === BAD) return BAD_PATTERN;
    if (star) {
      for (let i = n; i < name.length && name.charCodeAt(i) !== SEP; i++) {
        t = matchChunk(pattern, cs, ce, name, i + 1);
        if (t >= 0) {
          if (last && t < name.length) continue;
          n = t;
          continue outer;
        }
        if (t === BAD) return BAD_PATTERN;
      }
    }
    return NO_MATCH;
  }
  return n === name.length ? MATCH : NO_MATCH;
}

const FAIL = -1;
const BAD = -2;

/**
 * matchChunk: does pattern[cs, ce) (no stars outside classes) match a prefix of name[n..]? Returns the
 * end of the matched prefix, FAIL, or BAD (malformed chunk; the chunk is checked to the end even after
 * the name stopped matching, as Go does).
 */
function matchChunk(pat: string, cs: number, ce: number, s: string, n: number): number {
  let failed = false;
  let i = cs;
  const slen = s.length;
  while (i < ce) {
    failed = failed || n >= slen;
    const c = pat.charCodeAt(i);
    if (c === 0x5b) {
      let r = 0;
      if (!failed) {
        const [rr, size] = decodeRune(s, n);
        r = rr;
        n += size;
      }
      i++;
      let negated = false;
      if (i < ce && pat.charCodeAt(i) === 0x5e) {
        negated = true;
        i++;
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (i < ce && pat.charCodeAt(i) === 0x5d && nrange > 0) {
          i++;
          break;
        }
        const lo = getEsc(pat, i, ce);
        if (lo === undefined) return BAD;
        i = lo[1];
        let hi = lo[0];
        // Go indexes chunk[0] here; getEsc guarantees a byte follows.
        if (pat.charCodeAt(i) === 0x2d) {
          const h = getEsc(pat, i + 1, ce);
          if (h === undefined) return BAD;
          hi = h[0];
          i = h[1];
        }
        if (lo[0] <= r && r <= hi) match = true;
        nrange++;
      }
      failed = failed || match === negated;
    } else if (c === 0x3f) {
      if (!failed) {
        failed = s.charCodeAt(n) === SEP;
        n += decodeRune(s, n)[1];
      }
      i++;
    } else {
      let lit = c;
      if (c === BACKSLASH) {
        i++;
        if (i >= ce) return BAD;
        lit = pat.charCodeAt(i);
      }
      if (!failed) {
        failed = lit !== s.charCodeAt(n);
        n++;
      }
      i++;
    }
  }
  return failed ? FAIL : n;
}

/** getEsc: a possibly escaped rune of a class at pat[i..ce); undefined for ErrBadPattern. */
function getEsc(pat: string, i: number, ce: number): [rune: number, next: number] | undefined {
  if (i >= ce) return undefined;
  let c = pat.charCodeAt(i);
  if (c === 0x2d || c === 0x5d) return undefined;
  if (c === BACKSLASH) {
    i++;
    if (i >= ce) return undefined;
    c = pat.charCodeAt(i);
  }
  // A chunk ends at '*' or at the end of the pattern, so decoding in the whole pattern is the same
  // as decoding in the chunk.
  const [r, size] = decodeRune(pat, i);
  if (r === 0xfffd && size === 1) return undefined;
  const next = i + size;
  if (next >= ce) return undefined;
  return [r, next];
}
