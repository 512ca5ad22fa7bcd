/**
 * Semantic versions exactly as github.com/blang/semver/v4 (v4.0.0) parses, prints and orders them:
 * strict `MAJOR.MINOR.PATCH[-PRE][+BUILD]` with uint64 numbers (kept as `bigint`), the same
 * validation order and the same error texts.
 */
import { goQuote, goTrimSpace, utf8LenAtLeast2 } from "./gostr.js";

/** An error from blang/semver; `message` is blang's exact error text. */
export class SemverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SemverError";
  }
}

/**
 * One pre-release identifier (blang `PRVersion`). Like blang, a numeric identifier has
 * `isNum = true`, its value in `num` and an empty `str`; an alphanumeric one has `num = 0n`.
 */
export interface PRVersion {
  readonly str: string;
  readonly num: bigint;
  readonly isNum: boolean;
}

const UINT64_MAX = (1n << 64n) - 1n;

/** 0-9 → 1, A-Z a-z `-` → 2, anything else → 0 (indexed by UTF-16 code unit below 128). */
const CHAR_CLASS = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) CHAR_CLASS[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) CHAR_CLASS[c] = 2;
for (let c = 0x61; c <= 0x7a; c++) CHAR_CLASS[c] = 2;
CHAR_CLASS[0x2d] = 2;

/** blang `containsOnly(s, numbers)`; true for the empty string. */
function onlyDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** blang `containsOnly(s, alphanum)`; true for the empty string. */
function onlyAlphanum(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || CHAR_CLASS[c] === 0) return false;
  }
  return true;
}

/** blang `hasLeadingZeroes`. */
function hasLeadingZeroes(s: string): boolean {
  return s.length > 1 && s.charCodeAt(0) === 0x30;
}

/** Shared bigints for small numbers: no allocation for the common case. */
const SMALL_BIGINTS: readonly bigint[] = Array.from({ length: 1024 }, (_, i) => BigInt(i));

/** Go `strconv.ParseUint(s, 10, 64)` for a string already known to hold only ASCII digits. */
function parseUint64(s: string): bigint | SemverError {
  if (s.length === 0) return new SemverError('strconv.ParseUint: parsing "": invalid syntax');
  // Up to 15 digits always fit a double exactly; skip the overflow check.
  if (s.length <= 15) {
    const n = Number(s);
    return n < SMALL_BIGINTS.length ? SMALL_BIGINTS[n] : BigInt(n);
  }
  const n = BigInt(s);
  if (n > UINT64_MAX) return new SemverError(`strconv.ParseUint: parsing "${s}": value out of range`);
  return n;
}

function prCompare(a: PRVersion, b: PRVersion): -1 | 0 | 1 {
  if (a.isNum) {
    if (!b.isNum) return -1;
    return a.num === b.num ? 0 : a.num > b.num ? 1 : -1;
  }
  if (b.isNum) return 1;
  // Identifiers are ASCII, so UTF-16 order equals Go's byte order.
  return a.str === b.str ? 0 : a.str > b.str ? 1 : -1;
}

/** blang `PRVersion.Compare`: numeric < alphanumeric, numbers numerically, strings by bytes. */
export function comparePRVersions(a: PRVersion, b: PRVersion): -1 | 0 | 1 {
  return prCompare(a, b);
}

/** blang `PRVersion.String`. */
export function prVersionToString(p: PRVersion): string {
  return p.isNum ? p.num.toString() : p.str;
}

function tryNewPRVersion(s: string): PRVersion | SemverError {
  if (s.length === 0) return new SemverError("Prerelease is empty");
  if (onlyDigits(s)) {
    if (hasLeadingZeroes(s)) {
      return new SemverError(`Numeric PreRelease version must not contain leading zeroes ${goQuote(s)}`);
    }
    const num = parseUint64(s);
    if (num instanceof SemverError) return num;
    return { str: "", num, isNum: true };
  }
  if (onlyAlphanum(s)) return { str: s, num: 0n, isNum: false };
  return new SemverError(`Invalid character(s) found in prerelease ${goQuote(s)}`);
}

/** blang `NewPRVersion`: parses one pre-release identifier; throws {@link SemverError}. */
export function newPRVersion(s: string): PRVersion {
  const r = tryNewPRVersion(s);
  if (r instanceof SemverError) throw r;
  return r;
}

/** blang `NewPRVersion` without throwing: the identifier or the error. */
export function tryParsePRVersion(s: string): PRVersion | SemverError {
  return tryNewPRVersion(s);
}

const EMPTY_PRE: readonly PRVersion[] = Object.freeze([]);
const EMPTY_BUILD: readonly string[] = Object.freeze([]);

/** A parsed semantic version (blang `Version`). Build metadata never takes part in comparisons. */
export class Version {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  readonly pre: readonly PRVersion[];
  readonly build: readonly string[];

  /** Builds a version from its parts without validation (like a Go struct literal). */
  constructor(
    major: bigint,
    minor: bigint,
    patch: bigint,
    pre: readonly PRVersion[] = EMPTY_PRE,
    build: readonly string[] = EMPTY_BUILD,
    /** The canonical text when the caller already has it (a strictly parsed version's input). */
    text = "",
  ) {
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    this.pre = pre;
    this.build = build;
    this.#text = text;
  }

  /** blang `String`: `MAJOR.MINOR.PATCH[-PRE][+BUILD]` (computed once: a version never changes). */
  toString(): string {
    if (this.#text === "") this.#text = this.format();
    return this.#text;
  }

  /** The canonical text; "" until first needed (a version's text is never empty). */
  #text: string;

  private format(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    const pre = this.pre;
    if (pre.length > 0) {
      s += "-" + prVersionToString(pre[0]);
      for (let i = 1; i < pre.length; i++) s += "." + prVersionToString(pre[i]);
    }
    if (this.build.length > 0) s += "+" + this.build.join(".");
    return s;
  }

  /** blang `FinalizeVersion`: `MAJOR.MINOR.PATCH` only. */
  finalizeVersion(): string {
    return `${this.major}.${this.minor}.${this.patch}`;
  }

  /** blang `Compare`: -1, 0 or 1 by SemVer precedence (build metadata ignored). */
  compare(o: Version): -1 | 0 | 1 {
    if (this.major !== o.major) return this.major > o.major ? 1 : -1;
    if (this.minor !== o.minor) return this.minor > o.minor ? 1 : -1;
    if (this.patch !== o.patch) return this.patch > o.patch ? 1 : -1;
    const a = this.pre;
    const b = o.pre;
    if (a.length === 0) return b.length === 0 ? 0 : 1;
    if (b.length === 0) return -1;
    const n = a.length < b.length ? a.length : b.length;
    for (let i = 0; i < n; i++) {
      const c = prCompare(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }

  /** blang `Equals`/`EQ`: same precedence (build metadata ignored). */
  equals(o: Version): boolean {
    return this.compare(o) === 0;
  }
  /** blang `LT`. */
  lt(o: Version): boolean {
    return this.compare(o) < 0;
  }
  /** blang `LTE`. */
  lte(o: Version): boolean {
    return this.compare(o) <= 0;
  }
  /** blang `GT`. */
  gt(o: Version): boolean {
    return this.compare(o) > 0;
  }
  /** blang `GTE`. */
  gte(o: Version): boolean {
    return this.compare(o) >= 0;
  }
}

/** blang `Compare` as a free function, usable as an `Array.prototype.sort` comparator. */
export function compareVersions(a: Version, b: Version): number {
  return a.compare(b);
}

const NO_MMP = "No Major.Minor.Patch elements found";

/** blang `Parse` without throwing: the version, or the error blang would return. */
export function tryParseVersion(s: string): Version | SemverError {
  if (s.length === 0) return new SemverError("Version string empty");
  const d1 = s.indexOf(".");
  if (d1 < 0) return new SemverError(NO_MMP);
  const d2 = s.indexOf(".", d1 + 1);
  if (d2 < 0) return new SemverError(NO_MMP);

  const majorStr = s.slice(0, d1);
  if (!onlyDigits(majorStr)) {
    return new SemverError(`Invalid character(s) found in major number ${goQuote(majorStr)}`);
  }
  if (hasLeadingZeroes(majorStr)) {
    return new SemverError(`Major number must not contain leading zeroes ${goQuote(majorStr)}`);
  }
  const major = parseUint64(majorStr);
  if (major instanceof SemverError) return major;

  const minorStr = s.slice(d1 + 1, d2);
  if (!onlyDigits(minorStr)) {
    return new SemverError(`Invalid character(s) found in minor number ${goQuote(minorStr)}`);
  }
  if (hasLeadingZeroes(minorStr)) {
    return new SemverError(`Minor number must not contain leading zeroes ${goQuote(minorStr)}`);
  }
  const minor = parseUint64(minorStr);
  if (minor instanceof SemverError) return minor;

  let patchEnd = s.length;
  let buildStr: string | undefined;
  let preStr: string | undefined;
  const plus = s.indexOf("+", d2 + 1);
  if (plus >= 0) {
    buildStr = s.slice(plus + 1);
    patchEnd = plus;
  }
  const dash = s.indexOf("-", d2 + 1);
  if (dash >= 0 && dash < patchEnd) {
    preStr = s.slice(dash + 1, patchEnd);
    patchEnd = dash;
  }

  const patchStr = s.slice(d2 + 1, patchEnd);
  if (!onlyDigits(patchStr)) {
    return new SemverError(`Invalid character(s) found in patch number ${goQuote(patchStr)}`);
  }
  if (hasLeadingZeroes(patchStr)) {
    return new SemverError(`Patch number must not contain leading zeroes ${goQuote(patchStr)}`);
  }
  const patch = parseUint64(patchStr);
  if (patch instanceof SemverError) return patch;

  let pre = EMPTY_PRE;
  if (preStr !== undefined) {
    const ids = preStr.split(".");
    const out: PRVersion[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const p = tryNewPRVersion(ids[i]);
      if (p instanceof SemverError) return p;
      out[i] = p;
    }
    pre = out;
  }

  let build = EMPTY_BUILD;
  if (buildStr !== undefined) {
    const ids = buildStr.split(".");
    for (const id of ids) {
      if (id.length === 0) return new SemverError("Build meta data is empty");
      if (!onlyAlphanum(id)) {
        return new SemverError(`Invalid character(s) found in build meta data ${goQuote(id)}`);
      }
    }
    build = ids;
  }

  // Strict parsing admits only the canonical spelling (no leading zeroes, no prefix, build and
  // pre-release identifiers kept as written), so the input is the version's text.
  return new Version(major, minor, patch, pre, build, s);
}

/** blang `Parse`: strict SemVer 2.0; throws {@link SemverError} with blang's message. */
export function parseVersion(s: string): Version {
  const v = tryParseVersion(s);
  if (v instanceof SemverError) throw v;
  return v;
}

/**
 * blang `ParseTolerant` without throwing: trims Go white space, drops one leading `v`, strips
 * leading zeros from each of the first three dot-separated parts and fills `1` / `1.2` up to three
 * parts, then applies {@link tryParseVersion}.
 */
export function tryParseTolerant(input: string): Version | SemverError {
  let s = goTrimSpace(input);
  if (s.startsWith("v")) s = s.slice(1);
  const parts: string[] = [];
  let from = 0;
  while (parts.length < 2) {
    const dot = s.indexOf(".", from);
    if (dot < 0) break;
    parts.push(s.slice(from, dot));
    from = dot + 1;
  }
  parts.push(s.slice(from));
  for (let i = 0; i < parts.length; i++) {
    let p = parts[i];
    if (utf8LenAtLeast2(p)) {
      let z = 0;
      while (z < p.length && p.charCodeAt(z) === 0x30) z++;
      p = p.slice(z);
      if (p.length === 0 || p.charCodeAt(0) < 0x30 || p.charCodeAt(0) > 0x39) p = "0" + p;
      parts[i] = p;
    }
  }
  if (parts.length < 3) {
    const last = parts[parts.length - 1];
    if (last.includes("+") || last.includes("-")) {
      return new SemverError("Short version cannot contain PreRelease/Build meta data");
    }
    while (parts.length < 3) parts.push("0");
  }
  return tryParseVersion(parts.join("."));
}

/** blang `ParseTolerant`; throws {@link SemverError}. */
export function parseTolerant(s: string): Version {
  const v = tryParseTolerant(s);
  if (v instanceof SemverError) throw v;
  return v;
}
