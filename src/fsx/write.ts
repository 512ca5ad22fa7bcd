/**
 * Writing files with one guarantee: every byte or an error, and a file or directory that appears whole
 * or not at all. `fs.writeSync` returns how much it wrote, and on a nearly full disk that is less than
 * asked (the next write fails with ENOSPC): a writer that ignores the count leaves a truncated file and
 * reports success; `writeAllSync` writes the rest, so the failure surfaces. `writeFileAtomic` stages
 * the file beside its target (./staged.ts), keeps the mode of the file it replaces (a new one gets
 * 0666 less the umask, as a shell redirection or opm gives it), flushes it, renames it into place and
 * flushes the directory. `writeDirectoryAtomic` does the same for a directory.
 */
import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { stagedName, sweepStaged } from "./staged.js";

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
 * Writes `data` to `path` atomically: staged beside it (with the replaced file's mode), flushed, renamed
 * over the target, and the directory flushed. On failure the target is untouched, the staged file
 * removed, and the error names `path` (what the user would look for), not the staged name.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  ops: { rename?: (from: string, to: string) => void; sweep?: boolean } = {},
): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = stageFile(path, data, ops);
  try {
    (ops.rename ?? renameSync)(tmp, path);
  } catch (e) {
    tryUnlink(tmp);
    throw e;
  }
  syncDirectory(dirname(path));
}

/**
 * Writes the staged copy of `path` (the replaced file's mode, every byte, flushed) and returns its
 * name: for writers that rename several files into place together. Errors name `path`.
 */
export function stageFile(path: string, data: string | Uint8Array, opts: { sweep?: boolean } = {}): string {
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    // a new file
  }
  // what an earlier run killed before its rename left behind (a caller writing many files into one
  // directory sweeps it once itself: sweepStagedOnce)
  if (opts.sweep !== false) sweepStaged(path);
  const tmp = stagedName(path);
  try {
    const fd = openSync(tmp, "wx", mode ?? 0o666);
    try {
      if (mode !== undefined) fchmodSync(fd, mode); // open applies the umask
      writeAllSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    tryUnlink(tmp);
    const x = e as NodeJS.ErrnoException;
    if (x.path === undefined || x.path === tmp) x.path = path;
    throw e;
  }
  return tmp;
}

/** Flushes a directory's entries (a rename is durable once its directory is). */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // some file systems refuse fsync on a directory: the rename stands, only its durability is weaker
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Removes a file if it is there. */
export function tryUnlink(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // already gone
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
  sweepStaged(resolve(dir));
  const tmp = stagingDirectory(resolve(dir));
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

/**
 * Creates the staged sibling of `dir` (./staged.ts names it) with the mode a plain mkdir gives, 0777
 * less the umask (opm's directories are 0755 under umask 022).
 */
function stagingDirectory(dir: string): string {
  for (;;) {
    const tmp = stagedName(dir);
    try {
      mkdirSync(tmp);
      return tmp;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}
