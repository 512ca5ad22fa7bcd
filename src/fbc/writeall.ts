/**
 * Writing every byte or failing: `fs.writeSync` returns how much it wrote, and on a nearly full disk
 * that is less than asked (the next write fails with ENOSPC). A writer that ignores the count leaves
 * a truncated file and reports success; this one writes the rest, so the failure surfaces. And a
 * directory written whole or not at all (`writeDirectoryAtomic`). Imports only node: built-ins, so
 * that src/image writes image layouts without loading the catalog writers.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmdirSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";

/** Writes all of `data` to `fd` at its current position; throws the system's error (ENOSPC, EIO…). */
export function writeAllSync(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let off = 0;
  while (off < buf.length) {
    const n = writeSync(fd, buf, off, buf.length - off);
    if (n === 0) {
      const e: NodeJS.ErrnoException = new Error("EIO: i/o error, write returned 0 bytes");
      e.code = "EIO";
      e.syscall = "write";
      throw e;
    }
    off += n;
  }
}

/**
 * Fills a temporary sibling of `dir` with `fill` and renames it into place: a failed run (a full
 * disk) leaves the old state (nothing, or the empty directory `dir`), never partial files. Errors
 * name the path the user asked for, not the temporary one.
 */
export function writeDirectoryAtomic<T>(dir: string, fill: (tmp: string) => T): T {
  const parent = dirname(resolve(dir));
  mkdirSync(parent, { recursive: true });
  const tmp = stagingDirectory(join(parent, `.${basename(resolve(dir))}.tmp-`));
  try {
    const out = fill(tmp);
    if (existsSync(dir)) rmdirSync(dir); // empty (checked by the caller): rename cannot replace a non-empty one
    renameSync(tmp, dir);
    return out;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    const err = e as NodeJS.ErrnoException;
    if (typeof err.path === "string") err.path = join(dir, relative(tmp, err.path));
    else if (err.syscall === "write") err.path = dir;
    throw e;
  }
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * Creates `<prefix>XXXXXX` (six random letters or digits, as mkdtemp names them: fbc/tempname.ts knows
 * the name) with the mode a plain mkdir gives, 0777 less the umask. mkdtemp makes it 0700, and the
 * rename would keep that: opm's directories are 0755 under umask 022.
 */
function stagingDirectory(prefix: string): string {
  for (;;) {
    const tmp = prefix + [...randomBytes(6)].map((b) => ALNUM[b % ALNUM.length]).join("");
    try {
      mkdirSync(tmp);
      return tmp;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}
