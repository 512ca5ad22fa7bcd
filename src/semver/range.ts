/**
 * Version ranges exactly as github.com/blang/semver/v4 (v4.0.0) `ParseRange` reads them, quirks
 * included: comparators separated by spaces are ANDed, `||` separates OR groups, a space right after
 * `<`, `>` or `=` is joined to the operator, one-byte tokens are silently dropped, and every
 * comparator containing the letter `x` is put through blang's wildcard expansion.
 */
import { goAtoi, goIncInt, goQuote, goTrimSpace, indexGoDigit, utf8LenAtLeast2 } from "./gostr.js";
import { SemverError, tryParseVersion, type Version } from "./version.js";

/** A parsed range: true when the version satisfies it. */
export type Range = (v: Version) => boolean;

/**
 * Thrown when a range is evaluated in a state where blang's `Range` calls a nil function (and the
 * Go program would panic): an empty OR group, as in `1.0.0 || || 2.0.0`, reached because every
 * group before it was false.
 */
export class SemverPanic extends Error {
  constructor() {
    super("runtime error: invalid memory address or nil pointer dereference");
    this.name = "SemverPanic";
  }
}

/** Comparison operators (blang `compEQ` … `compLE`). */
const Op = { EQ: 0, NE: 1, GT: 2, GE: 3, LT: 4, LE: 5 } as const;
type Op = (typeof Op)[keyof typeof Op];

interface Comparator {
  readonly op: Op;
  readonly v: Version;
}

function opFromString(s: string): Op | undefined {
  switch (s) {
    case "":
    case "=":
    case "==":
      return Op.EQ;
    case ">":
      return Op.GT;
    case ">=":
      return Op.GE;
    case "<":
      return Op.LT;
    case "<=":
      return Op.LE;
    case "!":
    case "!=":
      return Op.NE;
    default:
      return undefined;
  }
}

function test(c: Comparator, v: Version): boolean {
  const r = v.compare(c.v);
  switch (c.op) {
    case Op.EQ:
      return r === 0;
    case Op.NE:
      return r !== 0;
    case Op.GT:
      return r === 1;
    case Op.GE:
      return r >= 0;
    case Op.LT:
      return r === -1;
    case Op.LE:
      return r <= 0;
  }
}

/**
 * blang `splitAndTrim`: splits on ' ' except right after '>', '<' or '=' (the last non-space
 * byte), drops pieces shorter than two UTF-8 bytes, then removes every ' ' from each piece.
 */
function splitAndTrim(s: string): string[] {
  const out: string[] = [];
  let last = 0;
  let lastChar = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20) {
      if (lastChar !== 0x3e && lastChar !== 0x3c && lastChar !== 0x3d) {
        if (utf8LenAtLeast2(s.slice(last, i))) out.push(s.slice(last, i));
        last = i + 1;
      }
    } else {
      lastChar = c;
    }
  }
  if (utf8LenAtLeast2(s.slice(last))) out.push(s.slice(last));
  for (let i = 0; i < out.length; i++) {
    if (out[i].includes(" ")) out[i] = out[i].replaceAll(" ", "");
  }
  return out;
}

/** blang `splitORParts`. */
function splitORParts(parts: string[]): string[][] | SemverError {
  const groups: string[][] = [];
  let last = 0;
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === "||") {
      if (i === 0) return new SemverError("First element in range is '||'");
      groups.push(parts.slice(last, i));
      last = i + 1;
    }
  }
  if (last === parts.length) return new SemverError("Last element in range is '||'");
  groups.push(parts.slice(last));
  return groups;
}

/** blang `splitComparatorVersion`: the operator (Go-trimmed) and the version from the first digit. */
function splitComparatorVersion(s: string): [string, string] | SemverError {
  const i = indexGoDigit(s);
  if (i < 0) return new SemverError(`Could not get version from string: ${goQuote(s)}`);
  return [goTrimSpace(s.slice(0, i)), s.slice(i)];
}

/** Go `strings.Replace(s, old, new, 1)`. */
function replaceFirst(s: string, old: string, repl: string): string {
  const i = s.indexOf(old);
  return i < 0 ? s : s.slice(0, i) + repl + s.slice(i + old.length);
}

/** blang `incrementMajorVersion` / `incrementMinorVersion` (errors give ""). */
function incrementPart(vStr: string, index: 0 | 1): string {
  const parts = vStr.split(".");
  const n = goAtoi(parts[index]);
  if (n === null) return "";
  parts[index] = goIncInt(n).toString();
  return parts.join(".");
}

/** blang `expandWildcardVersion` for one comparator containing `x`; pushes one or two comparators. */
function expandWildcard(ap: string, out: string[]): SemverError | undefined {
  const split = splitComparatorVersion(ap);
  if (split instanceof SemverError) return split;
  const [opStr, vStr] = split;

  // getWildcardType
  const vParts = vStr.split(".");
  const wildcardType = vParts[vParts.length - 1] === "x" && vParts.length <= 3 ? vParts.length : 0;

  // createVersionFromWildcard
  let flat = replaceFirst(replaceFirst(vStr, ".x.x", ".x"), ".x", ".0");
  if (flat.split(".").length === 2) flat += ".0";

  let resultOperator = "";
  let increment = false;
  switch (opStr) {
    case ">":
      resultOperator = ">=";
      increment = true;
      break;
    case ">=":
      resultOperator = ">=";
      break;
    case "<":
      resultOperator = "<";
      break;
    case "<=":
      resultOperator = "<";
      increment = true;
      break;
    case "":
    case "=":
    case "==":
      out.push(">=" + flat);
      resultOperator = "<";
      increment = true;
      break;
    case "!=":
    case "!":
      out.push("<" + flat);
      resultOperator = ">=";
      increment = true;
      break;
    default:
      // blang leaves an unknown operator out entirely.
      break;
  }

  let resultVersion = "";
  if (increment) {
    if (wildcardType === 3) resultVersion = incrementPart(flat, 1);
    else if (wildcardType === 2) resultVersion = incrementPart(flat, 0);
  } else {
    resultVersion = flat;
  }
  out.push(resultOperator + resultVersion);
  return undefined;
}

/** blang `ParseRange` without throwing: the range, or the error blang would return. */
export function tryParseRange(s: string): Range | SemverError {
  const orParts = splitORParts(splitAndTrim(s));
  if (orParts instanceof SemverError) return orParts;

  // Wildcard expansion runs over every group before any comparator is parsed.
  const expanded: string[][] = new Array(orParts.length);
  for (let g = 0; g < orParts.length; g++) {
    const group = orParts[g];
    const out: string[] = [];
    for (const ap of group) {
      if (ap.includes("x")) {
        const e = expandWildcard(ap, out);
        if (e !== undefined) return e;
      } else {
        out.push(ap);
      }
    }
    expanded[g] = out;
  }

  const groups: Comparator[][] = new Array(expanded.length);
  for (let g = 0; g < expanded.length; g++) {
    const group = expanded[g];
    const comps: Comparator[] = new Array(group.length);
    for (let i = 0; i < group.length; i++) {
      const ap = group[i];
      const split = splitComparatorVersion(ap);
      if (split instanceof SemverError) return split;
      const [opStr, vStr] = split;
      const op = opFromString(opStr);
      if (op === undefined) {
        return new SemverError(
          `Could not parse Range ${goQuote(ap)}: Could not parse ` +
            `comparator ${goQuote(opStr)} in ${goQuote(opStr + vStr)}`,
        );
      }
      const v = tryParseVersion(vStr);
      if (v instanceof SemverError) {
        return new SemverError(
          `Could not parse Range ${goQuote(ap)}: Could not parse version ` +
            `${goQuote(vStr)} in ${goQuote(opStr + vStr)}: ${v.message}`,
        );
      }
      comps[i] = { op, v };
    }
    groups[g] = comps;
  }
  return compile(groups);
}

function compile(groups: Comparator[][]): Range {
  if (groups.length === 1 && groups[0].length === 1) {
    const c = groups[0][0];
    return (v) => test(c, v);
  }
  return (v) => {
    for (const group of groups) {
      if (group.length === 0) throw new SemverPanic();
      let ok = true;
      for (const c of group) {
        if (!test(c, v)) {
          ok = false;
          break;
        }
      }
      if (ok) return true;
    }
    return false;
  };
}

/** blang `ParseRange`; throws {@link SemverError} with blang's message. */
export function parseRange(s: string): Range {
  const r = tryParseRange(s);
  if (r instanceof SemverError) throw r;
  return r;
}
