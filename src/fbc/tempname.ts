/**
 * The names of opcat's own temporary files. Writers stage a file beside its target and rename it into
 * place; a process killed in between leaves the temporary file behind. Readers of catalog directories
 * skip these names (they are never content), and the next writer of the same target removes the ones
 * whose process is gone.
 */
import { readdirSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** `.<name>.<pid>.<8 hex digits>.tmp`: the staged copy of `<name>` (an atomic write). */
const STAGED = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/;
/** `.<name>.tmp-XXXXXX`: the directory an atomic directory write fills (mkdtemp's six characters). */
const STAGED_DIR = /^\..+\.tmp-[A-Za-z0-9]{6}$/;

/** The name to stage `path` under (`random` is 8 hexadecimal digits). */
export function stagedName(path: string, random: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${random}.tmp`);
}

/** Whether a directory entry is one of opcat's temporary files or directories (never catalog content). */
export function isOpcatTemp(name: string, isDirectory: boolean): boolean {
  return isDirectory ? STAGED_DIR.test(name) : STAGED.test(name);
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
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    const m = STAGED.exec(name);
    if (!m || m[1] !== basename(path)) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || alive(pid)) continue;
    try {
      unlinkSync(join(dirname(path), name));
      n++;
    } catch {
      // removed meanwhile, or not ours to remove
    }
  }
  return n;
}
