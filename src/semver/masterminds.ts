/**
 * Version constraints exactly as github.com/Masterminds/semver/v3 (v3.5.0) `NewConstraint` reads them
 * and `Constraints.Check` applies them: operator-controller's `ClusterExtension.spec.source.catalog.version`
 * (`^ ~ x X * ||`, comparisons and their `=>`/`=<`/`~>` spellings, hyphen ranges, prereleases only when
 * an AND group names one). Go's regular expressions are reproduced with ASCII-only `\s`, as RE2 has it.
 * Golden vectors: src/semver/testdata/masterminds.json (scripts/oracle/masterminds).
 */
import { goQuote } from "./gostr.js";
import type { Version as BlangVersion } from "./version.js";
import { prVersionToString } from "./version.js";

/** A Masterminds `Version` (only what constraints look at). */
export interface MMVersion {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
}

export class MastermindsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MastermindsError";
  }
}

const MAX_CONSTRAINT_LEN = 512;
const MAX_CONSTRAINT_GROUPS = 32;
const MAX_VERSION_LEN = 256;
const UINT64_MAX = (1n << 64n) - 1n;

const S = "[\\t\\n\\f\\r ]"; // RE2's \s
const OPS = "=||!=|>|<|>=|=>|<=|=<|~|~>|\\^";
const CV =
  "v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?" +
  "(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?" +
  "(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?";
const constraintRegex = new RegExp(`^${S}*(${OPS})${S}*(${CV})${S}*$`);
const constraintRangeRegex = new RegExp(`${S}*(${CV})${S}+-${S}+(${CV})${S}*`, "g");
const findConstraintRegex = new RegExp(`(${OPS})${S}*(${CV})`, "g");
const validConstraintRegex = new RegExp(
  `^(${S}*(${OPS})${S}*(${CV})${S}*)((?:${S}+|,${S}*)(${OPS})${S}*(${CV})${S}*)*$`,
);
const looseVersionRegex = new RegExp(
  "^v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?" +
    "(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?$",
);

/** strconv.ParseUint(s, 10, 64); undefined on any error. */
function parseUint(s: string): bigint | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n > UINT64_MAX ? undefined : n;
}

const ALLOWED = /^[0-9A-Za-z-]*$/;

function validPrerelease(p: string): boolean {
  for (const part of p.split(".")) {
    if (part === "") return false;
    if (/^[0-9]+$/.test(part)) {
      if (part.length > 1 && part[0] === "0") return false;
    } else if (!ALLOWED.test(part)) return false;
  }
  return true;
}

function validMetadata(m: string): boolean {
  return m.split(".").every((p) => p !== "" && ALLOWED.test(p));
}

/** `NewVersion` (coercing, the default of v3.5.0); undefined where Go returns an error. */
function newVersion(v: string): MMVersion | undefined {
  if (v.length > MAX_VERSION_LEN) return undefined;
  const m = looseVersionRegex.exec(v);
  if (!m) return undefined;
  const major = parseUint(m[1]);
  const minor = m[2] ? parseUint(m[2].slice(1)) : 0n;
  const patch = m[3] ? parseUint(m[3].slice(1)) : 0n;
  if (major === undefined || minor === undefined || patch === undefined) return undefined;
  const pre = m[5] ?? "";
  const metadata = m[8] ?? "";
  if (pre !== "" && !validPrerelease(pre)) return undefined;
  if (metadata !== "" && !validMetadata(metadata)) return undefined;
  return { major, minor, patch, pre, metadata };
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === "") return -1;
  if (o === "") return 1;
  const oi = parseUint(o);
  const si = parseUint(s);
  if (oi === undefined && si === undefined) return s > o ? 1 : -1;
  if (oi === undefined) return -1;
  if (si === undefined) return 1;
  return si > oi ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sp = v.split(".");
  const op = o.split(".");
  const l = Math.max(sp.length, op.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sp[i] ?? "", op[i] ?? "");
    if (d !== 0) return d;
  }
  return 0;
}

/** Masterminds `Version.Compare`. */
export function compareMM(v: MMVersion, o: MMVersion): number {
  const d = cmp(v.major, o.major) || cmp(v.minor, o.minor) || cmp(v.patch, o.patch);
  if (d !== 0) return d;
  if (v.pre === "" && o.pre === "") return 0;
  if (v.pre === "") return 1;
  if (o.pre === "") return -1;
  return comparePrerelease(v.pre, o.pre);
}

interface Constraint {
  con: MMVersion;
  op: string;
  minorDirty: boolean;
  patchDirty: boolean;
  dirty: boolean;
}

const isX = (x: string) => x === "x" || x === "*" || x === "X";

function parseConstraint(c: string): Constraint | MastermindsError {
  const m = constraintRegex.exec(c);
  if (!m) return new MastermindsError(`improper constraint: ${goQuote(c)}`);
  let ver = m[2];
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  const pre = m[6] ?? "";
  const minor = m[4] ?? "";
  const patch = m[5] ?? "";
  if (isX(m[3]) || m[3] === "") {
    ver = `0.0.0${pre}`;
    dirty = true;
  } else if (isX(minor.replace(/^\./, "")) || minor === "") {
    minorDirty = true;
    dirty = true;
    ver = `${m[3]}.0.0${pre}`;
  } else if (isX(patch.replace(/^\./, "")) || patch === "") {
    dirty = true;
    patchDirty = true;
    ver = `${m[3]}${minor}.0${pre}`;
  }
  const con = newVersion(ver);
  if (!con) return new MastermindsError("constraint parser error");
  return { con, op: m[1], minorDirty, patchDirty, dirty };
}

function tilde(v: MMVersion, c: Constraint): boolean {
  if (compareMM(v, c.con) < 0) return false;
  const z = c.con;
  if (z.major === 0n && z.minor === 0n && z.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== z.major) return false;
  if (v.minor !== z.minor && !c.minorDirty) return false;
  return true;
}

function check(v: MMVersion, c: Constraint, includePre: boolean): boolean {
  if (v.pre !== "" && !includePre) return false;
  const z = c.con;
  switch (c.op) {
    case "":
    case "=":
      return c.dirty ? tilde(v, c) : compareMM(v, z) === 0;
    case "!=":
      if (c.dirty) {
        if (z.major !== v.major) return true;
        if (z.minor !== v.minor && !c.minorDirty) return true;
        if (c.minorDirty) return false;
        if (z.patch !== v.patch && !c.patchDirty) return true;
        if (c.patchDirty) {
          if (v.pre !== "" || z.pre !== "") return comparePrerelease(v.pre, z.pre) !== 0;
          return false;
        }
      }
      return compareMM(v, z) !== 0;
    case ">":
      if (!c.dirty) return compareMM(v, z) === 1;
      if (v.major > z.major) return true;
      if (v.major < z.major) return false;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > z.minor;
      return compareMM(v, z) === 1;
    case "<":
      return compareMM(v, z) < 0;
    case ">=":
    case "=>":
      return compareMM(v, z) >= 0;
    case "<=":
    case "=<":
      if (!c.dirty) return compareMM(v, z) <= 0;
      if (v.major > z.major) return false;
      if (v.major === z.major && v.minor > z.minor && !c.minorDirty) return false;
      return true;
    case "~":
    case "~>":
      return tilde(v, c);
    case "^":
      if (compareMM(v, z) < 0) return false;
      if (z.major > 0n || c.minorDirty) return v.major === z.major;
      if (z.major === 0n && v.major > 0n) return false;
      if (z.minor > 0n || c.patchDirty) return v.minor === z.minor;
      if (z.minor === 0n && v.minor > 0n) return false;
      return z.patch === v.patch;
    default:
      return false;
  }
}

/** Go's strings.Replace(s, old, repl, 1). */
function replaceFirst(s: string, old: string, repl: string): string {
  const i = s.indexOf(old);
  return i < 0 ? s : s.slice(0, i) + repl + s.slice(i + old.length);
}

function rewriteRange(i: string): string {
  let o = i;
  for (const m of i.matchAll(constraintRangeRegex)) o = replaceFirst(o, m[0], `>= ${m[1]}, <= ${m[11]} `);
  return o;
}

/** Parsed constraints: OR groups of AND-ed constraints. */
export class Constraints {
  private constructor(
    private readonly groups: Constraint[][],
    private readonly containsPre: boolean[],
  ) {}

  /** `NewConstraint`: the constraints, or Go's error text. */
  static parse(text: string): Constraints | MastermindsError {
    if (Buffer.byteLength(text) > MAX_CONSTRAINT_LEN)
      return new MastermindsError(`constraint string is too long (max ${MAX_CONSTRAINT_LEN} bytes)`);
    const c = rewriteRange(text);
    const ors = c.split("||");
    if (ors.length > MAX_CONSTRAINT_GROUPS)
      return new MastermindsError(`too many constraint groups (max ${MAX_CONSTRAINT_GROUPS})`);
    const groups: Constraint[][] = [];
    const hasPre: boolean[] = [];
    for (const v of ors) {
      if (!validConstraintRegex.test(v)) return new MastermindsError(`improper constraint: ${goQuote(v)}`);
      const found = [...v.matchAll(findConstraintRegex)].map((m) => m[0]);
      const cs = found.length > 0 ? found : [v];
      const group: Constraint[] = [];
      let pre = false;
      for (const s of cs) {
        const pc = parseConstraint(s);
        if (pc instanceof MastermindsError) return pc;
        if (pc.con.pre !== "") pre = true;
        group.push(pc);
      }
      groups.push(group);
      hasPre.push(pre);
    }
    return new Constraints(groups, hasPre);
  }

  /** `Check`: true when some OR group holds for `v`. */
  check(v: MMVersion): boolean {
    return this.groups.some((g, i) => g.every((c) => check(v, c, this.containsPre[i])));
  }
}

/** The Masterminds version operator-controller builds from a bundle's (blang) version. */
export function fromBlang(v: BlangVersion): MMVersion {
  return {
    major: v.major,
    minor: v.minor,
    patch: v.patch,
    pre: v.pre.map(prVersionToString).join("."),
    metadata: v.build.join("."),
  };
}

/**
 * operator-controller's `NewVersionRange`: a predicate over bundle versions, or the error text of
 * `NewConstraint`.
 */
export function mastermindsRange(text: string): ((v: BlangVersion) => boolean) | MastermindsError {
  const cs = Constraints.parse(text);
  if (cs instanceof MastermindsError) return cs;
  return (v) => cs.check(fromBlang(v));
}
