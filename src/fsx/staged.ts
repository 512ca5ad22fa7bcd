/**
 * The names of opcat's own temporary files and directories: one scheme for every writer (catalogs,
 * templates, image blobs and unpacked layers, serve's indexes). A writer stages its output beside the
 * target, `.<name>.<pid>.<8 hex digits>.tmp`, and renames it into place; a process killed in between
 * leaves the staged entry behind. Readers of catalog directories skip these names (they are never
 * content), and the next writer removes the ones whose process is gone.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** `.<name>.<pid>.<8 hex digits>.tmp`: the staged copy of `<name>`, a file or a directory. */
const STAGED = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/;
/** `.<name>.tmp-XXXXXX`: the staged directories of earlier versions (mkdtemp's six characters). */
const STAGED_DIR = /^\..+\.tmp-[A-Za-z0-9]{6}$/;

/** The name to stage `path` under (`random`: 8 hexadecimal digits, fresh ones by default). */
export function stagedName(path: string, random = randomBytes(4).toString("hex")): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${random}.tmp`);
}

/** Whether a directory entry is one of opcat's temporary files or directories (never catalog content). */
export function isOpcatTemp(name: string, isDirectory: boolean): boolean {
  return STAGED.test(name) || (isDirectory && STAGED_DIR.test(name));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the staged copies of `path` that processes no longer running left behind; returns how many. */
export function sweepStaged(path: string): number {
  return sweep(dirname(path), basename(path));
}

/** Removes every staged entry in `dir` that a process no longer running left behind; returns how many. */
export function sweepStagedIn(dir: string): number {
  return sweep(dir);
}

const sweptDirs = new Set<string>();

/**
 * {@link sweepStagedIn}, once per directory and process: writers call it before every write, and only
 * the first write into a directory pays for listing it (a blob store's directory holds thousands).
 */
export function sweepStagedOnce(dir: string): void {
  const d = resolve(dir);
  if (sweptDirs.has(d)) return;
  sweptDirs.add(d);
  sweepStagedIn(d);
}

function sweep(dir: string, only?: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    const m = STAGED.exec(name);
    if (!m || (only !== undefined && m[1] !== only)) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || alive(pid)) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      n++;
    } catch {
      // removed meanwhile, or not ours to remove
    }
  }
  return n;
}
