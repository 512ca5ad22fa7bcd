// Port of go-yaml v2's implicit scalar resolution (resolve.go, `resolve("", in)`), plus the helpers the
// encoder uses to decide whether a string must be quoted (isBase60Float) and Go's number formatting.

import { goFormatFloatG } from "../gojson/float.js";

/** The type go-yaml v2 gives an untagged plain scalar. */
export type ResolvedKind = "null" | "bool" | "int" | "float" | "timestamp" | "merge" | "str";

/** Result of resolving a plain scalar. `value` is meaningful for null/bool/int/float. */
export interface Resolved {
  kind: ResolvedKind;
  /** null for "null", boolean for "bool", number for "int"/"float" (ints beyond 2^53 are rounded). */
  value: null | boolean | number | string;
  /**
   * For "int": Go's Go type of the value: "int" (fits int64), "uint64" (only fits uint64).
   * For "float": always "float64".
   */
  goType?: "int" | "uint64" | "float64";
  /** For "int": the exact decimal text of the integer (Go's strconv.Format{Int,Uint}). */
  decimal?: string;
}

const MAP: Map<string, Resolved> = new Map();
(function init() {
  const add = (r: Resolved, names: string[]) => {
    for (const n of names) MAP.set(n, r);
  };
  add({ kind: "bool", value: true }, ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]);
  add({ kind: "bool", value: false }, ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]);
  add({ kind: "null", value: null }, ["", "~", "null", "Null", "NULL"]);
  add({ kind: "float", value: NaN, goType: "float64" }, [".nan", ".NaN", ".NAN"]);
  add({ kind: "float", value: Infinity, goType: "float64" }, [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"]);
  add({ kind: "float", value: -Infinity, goType: "float64" }, ["-.inf", "-.Inf", "-.INF"]);
  add({ kind: "merge", value: "<<" }, ["<<"]);
})();

const STR: Resolved = { kind: "str", value: null };

// resolveTable hints: 'S' sign, 'D' digit, 'M' map, '.' float.
function hintOf(c: number): number {
  if (c === 43 || c === 45) return 83; // 'S'
  if (c >= 48 && c <= 57) return 68; // 'D'
  if (c === 46) return 46; // '.'
  switch (c) {
    case 121:
    case 89:
    case 110:
    case 78:
    case 116:
    case 84:
    case 102:
    case 70:
    case 111:
    case 79:
    case 126:
      return 77; // 'M'
  }
  return 0;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
// strconv.ParseFloat syntax for strings that start with '.': decimal digits, optional exponent, and
// underscores only between two digits (strconv's underscoreOK).
const DOT_FLOAT = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64) syntax (after go-yaml removed every `_`):
 * optional sign (ParseInt only), then 0x/0X hex, 0b/0B binary, 0o/0O octal, leading-0 octal, or decimal.
 * Returns the exact value or undefined when the syntax is invalid.
 */
function parseGoIntLiteral(s: string): bigint | undefined {
  let i = 0;
  let neg = false;
  if (s[0] === "+" || s[0] === "-") {
    neg = s[0] === "-";
    i = 1;
  }
  let base = 10;
  let digits = s.slice(i);
  if (digits.length === 0) return undefined;
  if (digits[0] === "0" && digits.length > 1) {
    const p = digits[1];
    if (p === "x" || p === "X") {
      base = 16;
      digits = digits.slice(2);
    } else if (p === "b" || p === "B") {
      base = 2;
      digits = digits.slice(2);
    } else if (p === "o" || p === "O") {
      base = 8;
      digits = digits.slice(2);
    } else {
      base = 8;
      digits = digits.slice(1);
    }
    if (digits.length === 0) return undefined;
  }
  const re = base === 16 ? /^[0-9a-fA-F]+$/ : base === 10 ? /^[0-9]+$/ : base === 8 ? /^[0-7]+$/ : /^[01]+$/;
  if (!re.test(digits)) return undefined;
  let v: bigint;
  if (base === 10) v = BigInt(digits);
  else v = BigInt((base === 16 ? "0x" : base === 8 ? "0o" : "0b") + digits);
  return neg ? -v : v;
}

/**
 * The common case of an int without BigInt: an optional `-`, a non-zero digit and at most 14 more
 * digits (exact in a double, inside int64, and its own Go decimal form). Anything else: undefined.
 */
function smallDecimal(s: string): Resolved | undefined {
  const start = s.charCodeAt(0) === 45 ? 1 : 0;
  const n = s.length - start;
  if (n === 0 || n > 15) return undefined;
  const c = s.charCodeAt(start);
  if (c < 49 || c > 57) return undefined;
  for (let i = start + 1; i < s.length; i++) {
    const d = s.charCodeAt(i);
    if (d < 48 || d > 57) return undefined;
  }
  return { kind: "int", value: Number(s), goType: "int", decimal: s };
}

/**
 * go-yaml v2 `resolve("", in)` for an untagged plain scalar: YAML 1.1 bools, nulls, ints (with `_`,
 * hex, octal, binary), floats, `<<`, and timestamps (reported as "timestamp"; the decoder keeps those
 * as strings). Everything else is "str".
 */
export function resolvePlain(s: string): Resolved {
  const hint = s.length === 0 ? 78 : hintOf(s.charCodeAt(0));
  if (hint === 0) return STR;
  const m = MAP.get(s);
  if (m !== undefined) return m;
  if (hint === 77) return STR;
  if (hint === 46) {
    if (DOT_FLOAT.test(s)) {
      const f = Number(s.indexOf("_") >= 0 ? s.replace(/_/g, "") : s);
      if (Number.isFinite(f)) return { kind: "float", value: f, goType: "float64" };
    }
    return STR;
  }
  // 'D' or 'S'
  if (isGoTimestamp(s)) return { kind: "timestamp", value: s };
  const fast = smallDecimal(s);
  if (fast !== undefined) return fast;
  const plain = s.indexOf("_") >= 0 ? s.replace(/_/g, "") : s;
  const iv = parseGoIntLiteral(plain);
  if (iv !== undefined) {
    if (iv >= INT64_MIN && iv <= INT64_MAX) {
      return { kind: "int", value: Number(iv), goType: "int", decimal: iv.toString() };
    }
    if (iv >= 0n && iv <= UINT64_MAX && plain[0] !== "+" && plain[0] !== "-") {
      return { kind: "int", value: Number(iv), goType: "uint64", decimal: iv.toString() };
    }
  }
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = Number(plain);
    if (Number.isFinite(f)) return { kind: "float", value: f, goType: "float64" };
  }
  return STR;
}

// ---------------------------------------------------------------------------------------------
// Timestamps: go-yaml v2 parseTimestamp = "starts with 4 digits and '-'" and then Go's time.Parse with
// one of the layouts "2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00",
// "2006-1-2 15:4:5.999999999", "2006-1-2". Reimplemented from time.Parse's rules for exactly these.

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** time.getnum(s, false): one or two digits. Returns [value, rest] or undefined. */
function getnum(s: string, pos: number): [number, number] | undefined {
  if (!isDigitAt(s, pos)) return undefined;
  if (!isDigitAt(s, pos + 1)) return [s.charCodeAt(pos) - 48, pos + 1];
  return [(s.charCodeAt(pos) - 48) * 10 + (s.charCodeAt(pos + 1) - 48), pos + 2];
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** Parses `s` from `pos` with the layout tail "15:4:5.999999999" (+ optional "Z07:00"); returns end or -1. */
function parseClock(s: string, pos: number, zone: boolean): number {
  let r = getnum(s, pos);
  if (r === undefined || r[0] >= 24) return -1;
  pos = r[1];
  if (s[pos] !== ":") return -1;
  r = getnum(s, pos + 1);
  if (r === undefined || r[0] >= 60) return -1;
  pos = r[1];
  if (s[pos] !== ":") return -1;
  r = getnum(s, pos + 1);
  if (r === undefined || r[0] >= 60) return -1;
  pos = r[1];
  // stdFracSecond9: optional [.,] followed by one or more digits (any number of them).
  if (pos + 1 < s.length && (s[pos] === "." || s[pos] === ",") && isDigitAt(s, pos + 1)) {
    pos += 2;
    while (isDigitAt(s, pos)) pos++;
  }
  if (zone) {
    if (s[pos] === "Z") return pos + 1;
    if (s.length - pos < 6 || s[pos + 3] !== ":") return -1;
    const sign = s[pos];
    if (!isDigitAt(s, pos + 1) || !isDigitAt(s, pos + 2) || !isDigitAt(s, pos + 4) || !isDigitAt(s, pos + 5)) return -1;
    const hr = (s.charCodeAt(pos + 1) - 48) * 10 + (s.charCodeAt(pos + 2) - 48);
    const mm = (s.charCodeAt(pos + 4) - 48) * 10 + (s.charCodeAt(pos + 5) - 48);
    if (hr > 24 || mm > 60) return -1;
    if (sign !== "+" && sign !== "-") return -1;
    return pos + 6;
  }
  return pos;
}

/** Whether go-yaml v2's parseTimestamp accepts `s`. */
export function isGoTimestamp(s: string): boolean {
  if (s.length < 5 || s[4] !== "-") return false;
  for (let i = 0; i < 4; i++) if (!isDigitAt(s, i)) return false;
  const year = Number(s.slice(0, 4));
  let r = getnum(s, 5);
  if (r === undefined || r[0] < 1 || r[0] > 12) return false;
  const month = r[0];
  if (s[r[1]] !== "-") return false;
  r = getnum(s, r[1] + 1);
  if (r === undefined) return false;
  const day = r[0];
  if (day < 1 || day > daysIn(month, year)) return false;
  const pos = r[1];
  if (pos === s.length) return true; // "2006-1-2"
  const c = s[pos];
  if (c === "T" || c === "t") {
    return parseClock(s, pos + 1, true) === s.length;
  }
  if (c === " ") {
    let p = pos;
    while (s[p] === " ") p++;
    return parseClock(s, p, false) === s.length;
  }
  return false;
}

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** go-yaml v2 encode.go isBase60Float: YAML 1.1 sexagesimal numbers are quoted on output. */
export function isBase60Float(s: string): boolean {
  if (s.length === 0) return false;
  const c = s.charCodeAt(0);
  if (!(c === 43 || c === 45 || (c >= 48 && c <= 57)) || s.indexOf(":") < 0) return false;
  return BASE60_FLOAT.test(s);
}

/** Go's strconv.FormatFloat(f, 'g', -1, 64). */
export function formatGoFloat(f: number): string {
  return goFormatFloatG(f, 64);
}
