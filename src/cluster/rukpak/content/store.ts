/**
 * The content store: trees checked (names, links, limits), digested, and moved into
 * `<root>/sha256-<digest>` whole or not at all.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { UnpackBudget } from "../../../image/unpack.js";

import { DEFAULT_LIMITS, UnpackError, type ContentLimits } from "./types.js";
export function invalid(message: string): UnpackError {
  return new UnpackError("InvalidContent", message, false);
}

/**
 * Where a symlink at `link` (root-relative, in a real directory) leads: resolved component by
 * component inside `root`, following links on the way (chains included), as the kernel would. Throws
 * when it leaves the root, is absolute, loops or leads to nothing.
 */
function resolveLink(root: string, link: string): string {
  const resolved = link.split("/").slice(0, -1);
  let rest = readlinkSync(join(root, link)).split("/");
  const target = rest.join("/");
  const refuse = (why: string) => invalid(`symlink ${JSON.stringify(link)} -> ${JSON.stringify(target)} ${why}`);
  if (target.startsWith("/")) throw refuse("is absolute (only links within the content are allowed)");
  let hops = 0;
  while (rest.length > 0) {
    const c = rest.shift()!;
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (resolved.length === 0) throw refuse("leads outside the content");
      resolved.pop();
      continue;
    }
    const p = [...resolved, c].join("/");
    let st;
    try {
      st = lstatSync(join(root, p));
    } catch {
      throw refuse("leads to nothing in the content");
    }
    if (st.isSymbolicLink()) {
      if (++hops > 40) throw refuse("is a loop of links");
      const t = readlinkSync(join(root, p));
      if (t.startsWith("/")) throw refuse(`goes through ${JSON.stringify(p)}, an absolute link`);
      rest = [...t.split("/"), ...rest];
      continue;
    }
    if (!st.isDirectory() && rest.some((x) => x !== "" && x !== ".")) throw refuse("goes through a file");
    resolved.push(c);
  }
  return resolved.join("/");
}

export interface TreeEntry {
  path: string;
  kind: "file" | "dir" | "link";
  /** Link target. */
  target?: string;
}

/** C0 and C1 control characters, DEL, and the Unicode bidirectional overrides (names that lie when shown). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * Every entry of a tree (root-relative, `/`-separated, sorted), checked: names without control
 * characters, symlinks that stay inside it,
 * within the limits. Throws {@link UnpackError} (`InvalidContent`, `ContentTooLarge`).
 */
export function scanTree(root: string, limits: ContentLimits = {}): TreeEntry[] {
  const maxBytes = limits.maxBytes ?? DEFAULT_LIMITS.maxBytes;
  const maxFiles = limits.maxFiles ?? DEFAULT_LIMITS.maxFiles;
  const out: TreeEntry[] = [];
  let bytes = 0;
  const visit = (rel: string) => {
    for (const e of readdirSync(rel ? join(root, rel) : root, { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      // a name that would write raw control bytes (escape sequences, newlines) into statuses and Events
      if (CONTROL.test(e.name)) throw invalid(`the name ${JSON.stringify(p)} contains a control character`);
      if (out.length >= maxFiles) throw tooLarge(`the content has more than ${maxFiles} entries`);
      if (e.isSymbolicLink()) {
        resolveLink(root, p);
        out.push({ path: p, kind: "link", target: readlinkSync(join(root, p)) });
      } else if (e.isDirectory()) {
        out.push({ path: p, kind: "dir" });
        visit(p);
      } else if (e.isFile()) {
        bytes += lstatSync(join(root, p)).size;
        if (bytes > maxBytes) throw tooLarge(`the content is larger than ${maxBytes} bytes`);
        out.push({ path: p, kind: "file" });
      } else throw invalid(`${JSON.stringify(p)} is not a file, directory or symlink`);
    }
  };
  visit("");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function tooLarge(message: string): UnpackError {
  return new UnpackError("ContentTooLarge", message, false);
}

/**
 * sha256 over a tree: every file (path and content), directory (path, so empty ones count) and
 * symlink (path and target), in path order. Two trees with this digest read the same.
 */
export function treeDigest(
  dir: string,
  entries: TreeEntry[] = scanTree(dir, { maxBytes: Infinity, maxFiles: Infinity }),
): string {
  const h = createHash("sha256");
  for (const e of entries) {
    if (e.kind === "file") {
      const data = readFileSync(join(dir, e.path));
      h.update(`f\0${e.path}\0${data.length}\0`);
      h.update(data);
    } else if (e.kind === "dir") h.update(`d\0${e.path}\0`);
    else h.update(`l\0${e.path}\0${e.target}\0`);
  }
  return `sha256:${h.digest("hex")}`;
}

/** Moves a staged tree into the store under its digest (kept if already there). */
export function commit(root: string, staged: string, limits: ContentLimits): { dir: string; digest: string } {
  const digest = treeDigest(staged, scanTree(staged, limits));
  const dir = join(root, digest.replace(":", "-"));
  if (existsSync(dir)) rmSync(staged, { recursive: true, force: true });
  else renameSync(staged, dir);
  return { dir, digest };
}

export function stage(root: string): string {
  mkdirSync(root, { recursive: true });
  const d = join(root, `.staging-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(d);
  return d;
}

/**
 * Copies a tree (files, directories and symlinks as they are: {@link scanTree} checks the links of
 * the result) within the budget.
 */
export function copyTree(src: string, dst: string, budget: UnpackBudget, limits: Required<ContentLimits>): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const s = join(src, e.name);
    const d = join(dst, e.name);
    if (++budget.entries > limits.maxFiles) throw tooLarge(`the content has more than ${limits.maxFiles} entries`);
    // over an earlier ref: directories merge, anything else (a symlink above all) is replaced
    const st = lstatOrUndef(d);
    if (st && !(st.isDirectory() && e.isDirectory())) rmSync(d, { recursive: true, force: true });
    if (e.isSymbolicLink()) symlinkSync(readlinkSync(s), d);
    else if (e.isDirectory()) copyTree(s, d, budget, limits);
    else if (e.isFile()) {
      budget.bytes += statSync(s).size;
      if (budget.bytes > limits.maxBytes) throw tooLarge(`the content is larger than ${limits.maxBytes} bytes`);
      writeFileSync(d, readFileSync(s));
    }
  }
}

/** Makes `rel` a real directory under `root`, replacing what an earlier ref left on its way (links, files). */
export function realDir(root: string, rel: string): string {
  let p = root;
  for (const c of rel.split("/")) {
    if (c === "" || c === ".") continue;
    p = join(p, c);
    const st = lstatOrUndef(p);
    if (st?.isDirectory()) continue;
    if (st) rmSync(p, { recursive: true, force: true });
    mkdirSync(p);
  }
  return p;
}

export function lstatOrUndef(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Reads a ConfigMap or Secret as the requester would: allowed by a SubjectAccessReview (or the
 * requester's own client) and existing, else one message that does not tell which.
 */

export function contentExists(root: string, digest: string): string | undefined {
  const dir = join(root, digest.replace(":", "-"));
  return existsSync(dir) ? dir : undefined;
}
