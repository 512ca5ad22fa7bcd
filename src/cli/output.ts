/**
 * CLI plumbing shared by the commands: printing problems, exit codes, and a progress line on a
 * terminal while a long load runs.
 */
import { accessSync, constants, existsSync, fstatSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  compareProblems,
  type ErrorKind,
  formatProblem,
  OpcatError,
  type Problem,
  problemToJson,
} from "../errors/index.js";

export { problemToJson };
import { writeAllSync } from "../fsx/write.js";

/** Exit codes: 0 success, 1 invalid input content (catalog, template…), 2 usage or I/O error, 3 internal error. */
export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 3;

/** The one place an error's kind becomes an exit code. */
export function exitCodeFor(kind: ErrorKind): number {
  return kind === "invalid" ? EXIT_INVALID : kind === "internal" ? EXIT_INTERNAL : EXIT_USAGE;
}

export type ErrorFormat = "text" | "json" | "yaml";

type WriteHook = (chunk: Buffer | string, encoding: BufferEncoding, cb: (e?: Error | null) => void) => void;
const guarded = new WeakSet<object>();

/**
 * Standard output and error redirected to a regular file write every byte or fail: Node's stream
 * for a file drops the rest of a short write, so a nearly full disk gave a truncated file and exit 0.
 * A failed write is the stream's error, which bin/opcat reports (IO_WRITE, exit 2, "the output is
 * incomplete"). Pipes and terminals are left as they are (their streams finish partial writes).
 */
export function guardOutputStreams(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const fd = (stream as { fd?: unknown }).fd;
    if (typeof fd !== "number" || stream.isTTY || guarded.has(stream)) continue;
    try {
      if (!fstatSync(fd).isFile()) continue;
    } catch {
      continue;
    }
    guarded.add(stream);
    (stream as unknown as { _write: WriteHook })._write = (chunk, encoding, cb) => {
      try {
        writeAllSync(fd, typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk);
      } catch (e) {
        cb(e as Error);
        return;
      }
      cb();
    };
  }
}

/** Writes problems to stderr, one per line (text) or as one JSON document. */
export function reportProblems(problems: Problem[], format: ErrorFormat = "text"): void {
  const sorted = [...problems].sort(compareProblems);
  if (format === "json") {
    process.stderr.write(JSON.stringify({ problems: sorted.map(problemToJson) }, null, 2) + "\n");
    return;
  }
  for (const p of sorted) process.stderr.write(formatProblem(p) + "\n");
  if (sorted.length > 1) process.stderr.write(`${sorted.length} problems\n`);
}

/**
 * Turns any thrown value into a message on stderr and an exit code;
 * never prints a stack trace unless OPCAT_DEBUG is set.
 */
const EXIT_IO = 2;
/** Errors that only a write (or a file's growth) meets. */
const WRITE_ERRNOS = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

const IO_HINTS: Record<string, string> = {
  ENOSPC: "the disk is full: free space or write elsewhere",
  EDQUOT: "the disk quota is exhausted: free space or write elsewhere",
  EROFS: "the file system is read-only: choose a writable location (e.g. --cache-dir)",
  EACCES: "permission denied: choose a location you may write, or fix its permissions",
  EPERM: "not permitted: choose a location you may write, or fix its permissions",
  ENOTDIR: "a path component is a file where a directory is expected",
  EISDIR: "a directory is where a file is expected",
  ENOENT: "a file or directory does not exist",
  EIO: "the device reported an I/O error",
};

/**
 * A recursive mkdir (or a create) under a directory that cannot be written reports ENOENT for the
 * path it could not make; the cause is the nearest existing ancestor (a read-only file system, no
 * permission): report that, with its path.
 */
function explainMissing(sys: NodeJS.ErrnoException): NodeJS.ErrnoException {
  if (sys.code !== "ENOENT" || typeof sys.path !== "string" || (sys.syscall !== "mkdir" && sys.syscall !== "open"))
    return sys;
  let dir = dirname(resolve(sys.path));
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return sys;
  } catch (a) {
    const why = a as NodeJS.ErrnoException;
    if (why.code !== "EROFS" && why.code !== "EACCES" && why.code !== "EPERM") return sys;
    const out = new Error(
      `${why.code}: cannot create ${sys.path}: ${dir} is ` +
        `${why.code === "EROFS" ? "on a read-only file system" : "not writable"}`,
    ) as NodeJS.ErrnoException;
    out.code = why.code;
    out.syscall = sys.syscall;
    out.path = sys.path;
    return out;
  }
}

export function handleError(e: unknown, format: ErrorFormat = "text"): number {
  if (e instanceof OpcatError) {
    if (format === "json") {
      process.stderr.write(
        JSON.stringify(
          {
            error: { code: e.code, message: e.message, kind: e.kind, exitCode: exitCodeFor(e.kind) },
            problems: e.problems.map(problemToJson),
          },
          null,
          2,
        ) + "\n",
      );
    } else if (e.problems.length > 1 || (e.problems.length === 1 && (e.problems[0].loc || e.problems[0].hint))) {
      reportProblems(e.problems, "text");
    } else {
      process.stderr.write(`opcat: ${e.message}\n`);
    }
    return exitCodeFor(e.kind);
  }
  const err = e as Error;
  let sys = e as NodeJS.ErrnoException;
  if (sys && typeof sys.code === "string" && /^E[A-Z]+$/.test(sys.code) && typeof sys.syscall === "string") {
    sys = explainMissing(sys);
    // the operating system refused (a full disk, a read-only or missing directory, a file where a
    // directory is expected): an I/O error the user can act on, not a bug
    const what = sys.path ? `${sys.syscall} ${sys.path}` : sys.syscall;
    // a write the file system refused (a full disk, a quota, an I/O error while writing): what was
    // being written is incomplete
    const writing = sys.syscall === "write" || WRITE_ERRNOS.has(sys.code ?? "");
    const code = writing ? "IO_WRITE" : "IO_ERROR";
    const base = sys.code ? IO_HINTS[sys.code] : undefined;
    const hint = writing ? `${base ?? "free space on the target or write elsewhere"}; the output is incomplete` : base;
    if (format === "json")
      process.stderr.write(
        JSON.stringify(
          {
            error: { code, message: `${what}: ${sys.message}`, errno: sys.code, exitCode: EXIT_IO },
            ...(hint ? { hint } : {}),
          },
          null,
          2,
        ) + "\n",
      );
    else
      process.stderr.write(
        `opcat: error[${code}]: ${what}: ${sys.code}: ${sys.message.replace(/^[A-Z]+: /, "")}\n` +
          `${hint ? `  hint: ${hint}\n` : ""}`,
      );
    return EXIT_IO;
  }
  process.stderr.write(`opcat: internal error: ${err?.message ?? String(e)}\n`);
  if (process.env.OPCAT_DEBUG) process.stderr.write(String(err?.stack) + "\n");
  else process.stderr.write("  (this is a bug in opcat; run again with OPCAT_DEBUG=1 for details and report it)\n");
  return EXIT_INTERNAL;
}

/** A single self-overwriting status line on stderr, only when stderr is a terminal. */
export class Progress {
  private last = 0;
  private shown = false;
  private readonly start = Date.now();
  private readonly enabled: boolean;

  constructor(private readonly label: string) {
    this.enabled = Boolean(process.stderr.isTTY) && !process.env.CI;
  }

  update(detail: string): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.start < 300 || now - this.last < 100) return;
    this.last = now;
    this.shown = true;
    const line = `${this.label}: ${detail}`;
    process.stderr.write(`\r\x1b[2K${line.slice(0, (process.stderr.columns ?? 80) - 1)}`);
  }

  done(): void {
    if (this.shown) process.stderr.write("\r\x1b[2K");
  }
}

/** `1 package`, `2 packages`, `0 packages`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
