/**
 * Port of go-git's plumbing/format/gitignore pattern.go (v5.19.1): one gitignore pattern scoped to a
 * domain (the directory of the ignore file that holds it). All strings here are byte strings.
 */
import { BAD_PATTERN, MATCH, fnmatch } from "./fnmatch.js";

/** Outcome of one pattern against one path. */
export const NO_MATCH = 0;
export const EXCLUDE = 1;
export const INCLUDE = 2;
export type PatternResult = typeof NO_MATCH | typeof EXCLUDE | typeof INCLUDE;

export class Pattern {
  private constructor(
    private readonly domain: readonly string[],
    private readonly parts: readonly string[],
    private readonly inclusion: boolean,
    private readonly dirOnly: boolean,
    private readonly isGlob: boolean,
  ) {}

  /** gitignore.ParsePattern(p, domain). `p` is one (already trimmed) line. */
  static parse(p: string, domain: readonly string[]): Pattern {
    let inclusion = false;
    if (p.startsWith("!")) {
      inclusion = true;
      p = p.slice(1);
    }
    if (!p.endsWith("\\ ")) {
      let e = p.length;
      while (e > 0 && p.charCodeAt(e - 1) === 0x20) e--;
      p = p.slice(0, e);
    }
    let dirOnly = false;
    if (p.endsWith("/")) {
      dirOnly = true;
      p = p.slice(0, -1);
    }
    const isGlob = p.includes("/");
    return new Pattern(domain.slice(), p.split("/"), inclusion, dirOnly, isGlob);
  }

  /** pattern.Match: `path` is the slash-split path relative to the catalog root. */
  match(path: readonly string[], isDir: boolean): PatternResult {
    const domain = this.domain;
    const dl = domain.length;
    if (path.length <= dl) return NO_MATCH;
    for (let i = 0; i < dl; i++) if (path[i] !== domain[i]) return NO_MATCH;
    const ok = this.isGlob ? this.globMatch(path, dl, isDir) : this.simpleNameMatch(path, dl, isDir);
    if (!ok) return NO_MATCH;
    return this.inclusion ? INCLUDE : EXCLUDE;
  }

  /** A pattern without '/': matches any one component below the domain. */
  private simpleNameMatch(path: readonly string[], start: number, isDir: boolean): boolean {
    const pat = this.parts[0];
    for (let i = start; i < path.length; i++) {
      const m = fnmatch(pat, path[i]);
      if (m === BAD_PATTERN) return false;
      if (m !== MATCH) continue;
      if (this.dirOnly && !isDir && i === path.length - 1) return false;
      return true;
    }
    return false;
  }

  /** A pattern with '/': anchored at the domain, component by component, `**` spanning directories. */
  private globMatch(path: readonly string[], start: number, isDir: boolean): boolean {
    const parts = this.parts;
    let pos = start;
    const end = path.length;
    let matched = false;
    let canTraverse = false;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part === "") {
        canTraverse = false;
        continue;
      }
      if (part === "**") {
        if (i === parts.length - 1) break;
        canTraverse = true;
        continue;
      }
      if (part.includes("**")) return false;
      if (pos >= end) return false;
      if (canTraverse) {
        canTraverse = false;
        while (pos < end) {
          const e = path[pos++];
          const m = fnmatch(part, e);
          if (m === BAD_PATTERN) return false;
          if (m === MATCH) {
            matched = true;
            break;
          } else if (pos >= end) {
            matched = false;
          }
        }
      } else {
        if (fnmatch(part, path[pos]) !== MATCH) return false;
        matched = true;
        pos++;
      }
    }
    if (matched && this.dirOnly && !isDir && pos >= end) matched = false;
    return matched;
  }
}
