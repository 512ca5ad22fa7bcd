/**
 * What an `olm.packageVersion` constraint (an Input's or Operator's `spec.version`) selects: an
 * exact version ("1.2", "v1.2.3", compared as blang's ParseTolerant reads it) or a range (">=1.2.0
 * <2.0.0", blang's range grammar). Used by the resolver and by the web UI's graph highlight.
 */
import { tryParseRange } from "./range.js";
import { SemverError, tryParseTolerant, type Version } from "./version.js";

export interface VersionMatcher {
  kind: "exact" | "range";
  test(v: Version): boolean;
}

const EXACT = /^\s*v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?\s*$/;

export function packageVersionMatcher(spec: string): VersionMatcher | SemverError {
  if (EXACT.test(spec)) {
    const exact = tryParseTolerant(spec.trim());
    if (!(exact instanceof SemverError)) return { kind: "exact", test: (v) => v.compare(exact) === 0 };
  }
  const r = tryParseRange(spec);
  if (r instanceof SemverError) return r;
  return { kind: "range", test: r };
}
