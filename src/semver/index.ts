/**
 * A port of github.com/blang/semver/v4 (v4.0.0), the SemVer library opm uses for bundle versions,
 * `olm.skipRange` and version ranges. Not npm `semver`: see range.ts for the grammar and quirks.
 */
export {
  SemverError,
  Version,
  type PRVersion,
  parseVersion,
  tryParseVersion,
  parseTolerant,
  tryParseTolerant,
  newPRVersion,
  tryParsePRVersion,
  comparePRVersions,
  prVersionToString,
  compareVersions,
} from "./version.js";
export { type Range, SemverPanic, parseRange, tryParseRange } from "./range.js";
export { packageVersionMatcher, type VersionMatcher } from "./match.js";
