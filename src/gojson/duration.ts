import { goQuote } from "./fmt.js";

/**
 * Go's time.ParseDuration, in milliseconds: `300ms`, `30s`, `5m`, `1h30m`, `1.5h`. Returns the
 * error text (Go's) for anything else.
 */
export function parseGoDuration(s: string): number | string {
  const invalid = `time: invalid duration ${goQuote(s)}`;
  let rest = s;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest[0] === "-") sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") return invalid;
  const units: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    "\u00b5s": 1e-3,
    "\u03bcs": 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  while (rest !== "") {
    const m = /^([0-9]*)(\.[0-9]*)?/.exec(rest);
    const num = m ? m[0] : "";
    if (num === "" || num === "." || !/[0-9]/.test(num)) return invalid;
    rest = rest.slice(num.length);
    const u = /^[^0-9.]*/.exec(rest)?.[0] ?? "";
    if (u === "") return `time: missing unit in duration ${goQuote(s)}`;
    const mult = units[u];
    if (mult === undefined) return `time: unknown unit ${goQuote(u)} in duration ${goQuote(s)}`;
    rest = rest.slice(u.length);
    total += Number(num) * mult;
  }
  return sign * total;
}
