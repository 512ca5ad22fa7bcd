/**
 * `.indexignore` matching exactly as opm does it (github.com/joelanford/ignore over go-git's gitignore
 * package). See matcher.ts for the behaviour and its differences from git.
 */
export {
  type IgnoreMatcher,
  INDEX_IGNORE_FILENAME,
  ERR_TOKEN_TOO_LONG,
  buildIgnoreMatcher,
  loadIgnoreMatcher,
} from "./matcher.js";
