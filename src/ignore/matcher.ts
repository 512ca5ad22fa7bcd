/**
 * `.indexignore` handling exactly as opm does it: github.com/joelanford/ignore v0.1.2 (walk + line
 * parsing) over go-git's gitignore matcher (v5.19.1). See opm-spec §1.3.
 *
 * Differences from git that are deliberate (they are opm's behaviour):
 * - every line is trimmed of Unicode white space at both ends (git keeps leading spaces);
 * - all patterns of all ignore files form one list in walk order, scanned last to first, first match
 *   decides; nothing is pruned, so `!dir/keep.json` after `dir/` re-includes the file;
 * - component wildcards are Go's filepath.Match (`[^a]` negates, `[!a]` does not).
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { toByteString, trimSpaceBytes } from "./bytes.js";
import { EXCLUDE, NO_MATCH, Pattern } from "./pattern.js";

/** Decides which files opm skips while loading a catalog directory. */
export interface IgnoreMatcher {
  /**
   * True when opm would skip this file. `relPath` uses '/' and is relative to the catalog root
   * (e.g. `pkg/README.md`), as fs.WalkDir yields it. opm only ever asks with `isDir` false (the
   * default); directories are never pruned.
   */
  ignores(relPath: string, isDir?: boolean): boolean;
  /** Number of patterns read (comments and blank lines excluded). */
  readonly patternCount: number;
}

/** The default ignore-file name opm uses. */
export const INDEX_IGNORE_FILENAME = ".indexignore";

/** bufio.MaxScanTokenSize: a line of this many bytes or more makes bufio.Scanner fail. */
const MAX_LINE_BYTES = 64 * 1024;

/** Error text of bufio.ErrTooLong, which opm returns for an over-long ignore-file line. */
export const ERR_TOKEN_TOO_LONG = "bufio.Scanner: token too long";

class Matcher implements IgnoreMatcher {
  constructor(private readonly patterns: readonly Pattern[]) {}

  get patternCount(): number {
    return this.patterns.length;
  }

  ignores(relPath: string, isDir = false): boolean {
    const path = toByteString(relPath).split("/");
    const ps = this.patterns;
    for (let i = ps.length - 1; i >= 0; i--) {
      const r = ps[i].match(path, isDir);
      if (r !== NO_MATCH) return r === EXCLUDE;
    }
    return false;
  }
}

/**
 * Parses one ignore file (content as a byte string) the way joelanford/ignore's loadPatterns does:
 * bufio.ScanLines (split at '\n', one trailing '\r' dropped), strings.TrimSpace, skip blank lines and
 * lines starting with '#'. Throws Error(ERR_TOKEN_TOO_LONG) for a line of 64 KiB or more.
 */
function parseIgnoreFile(bytes: string, domain: readonly string[], out: Pattern[]): void {
  let start = 0;
  const len = bytes.length;
  while (start < len) {
    let nl = bytes.indexOf("\n", start);
    const atEnd = nl < 0;
    if (atEnd) nl = len;
    if (nl - start >= MAX_LINE_BYTES) throw new Error(ERR_TOKEN_TOO_LONG);
    const line = trimSpaceBytes(bytes.slice(start, nl));
    if (line !== "" && line.charCodeAt(0) !== 0x23) out.push(Pattern.parse(line, domain));
    start = nl + 1;
  }
}

function domainOf(dir: string): string[] {
  return dir === "" || dir === "." ? [] : toByteString(dir).split("/");
}

/**
 * Builds a matcher from ignore files that were already read, given in walk order (see
 * {@link loadIgnoreMatcher}): `dir` is the slash-separated directory of the file relative to the root
 * ("" for the root itself), `content` its text. Throws Error("bufio.Scanner: token too long") as opm
 * fails for a line of 64 KiB or more.
 */
export function buildIgnoreMatcher(files: readonly { dir: string; content: string }[]): IgnoreMatcher {
  const patterns: Pattern[] = [];
  for (const f of files) parseIgnoreFile(toByteString(f.content), domainOf(f.dir), patterns);
  return new Matcher(patterns);
}

/** Compares two file names by their UTF-8 bytes (Go's string order), i.e. by code points. */
export function compareNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP code point in UTF-8/code-point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Walks `root` asynchronously, depth first, entries of each directory in byte order of their names
 * (Go's fs.WalkDir), reads every regular file (or symlink, which is followed) named `fileName`, and
 * returns the combined matcher. Symlinks to directories are not descended into. File-system errors
 * (missing root, unreadable directory or file) reject the promise with the Node error, as the Go walk
 * fails with the OS error; an over-long line rejects with Error("bufio.Scanner: token too long").
 * File contents are taken byte for byte (invalid UTF-8 behaves as in Go).
 */
export async function loadIgnoreMatcher(
  root: string,
  fileName: string = INDEX_IGNORE_FILENAME,
): Promise<IgnoreMatcher> {
  const patterns: Pattern[] = [];
  const walk = async (absDir: string, relDir: string): Promise<void> => {
    const entries = await readdir(absDir, { withFileTypes: true });
    entries.sort((x, y) => compareNames(x.name, y.name));
    for (const e of entries) {
      const rel = relDir === "" ? e.name : `${relDir}/${e.name}`;
      const abs = join(absDir, e.name);
      if (e.isDirectory()) {
        await walk(abs, rel);
      } else if (e.name === fileName) {
        const bytes = (await readFile(abs)).toString("latin1");
        parseIgnoreFile(bytes, relDir === "" ? [] : toByteString(relDir).split("/"), patterns);
      }
    }
  };
  await walk(root, "");
  return new Matcher(patterns);
}
