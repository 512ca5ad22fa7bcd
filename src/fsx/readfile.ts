/**
 * Reading an input file whole, safely: every command reads its inputs (catalog files, templates,
 * `--reuse` catalogs, icons, Inputs, configurations) through these. A FIFO would block the read
 * forever and a device such as /dev/zero never ends, so the file is opened without blocking and
 * refused unless it is a regular file; and no more than a budget of bytes is ever read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { OpcatError } from "../errors/index.js";

/** The budget of one input file: JavaScript strings end near 512 Mi characters; real inputs are far smaller. */
export const MAX_FILE_BYTES = 256 * (1 << 20);

export interface ReadOptions {
  /** Largest accepted size in bytes (default MAX_FILE_BYTES). */
  maxBytes?: number;
  /** What the file is, for the messages (default "input file"). */
  what?: string;
  /** The end of the IO_NOT_REGULAR message (default: "inputs are read from regular files only"). */
  regularOnly?: string;
  /** The end of the IO_FILE_TOO_LARGE message. */
  tooLargeHint?: string;
}

function kindOf(st: Stats): string {
  return st.isFIFO()
    ? "named pipe (FIFO)"
    : st.isCharacterDevice()
      ? "character device"
      : st.isBlockDevice()
        ? "block device"
        : st.isSocket()
          ? "socket"
          : "special file";
}

/** Throws IO_NOT_REGULAR for what is neither a regular file nor a directory (a directory fails the read). */
export function refuseSpecial(path: string, st: Stats, opts: ReadOptions = {}): void {
  if (st.isFile() || st.isDirectory()) return;
  throw new OpcatError(
    "IO_NOT_REGULAR",
    `open ${path}: not a regular file but a ${kindOf(st)}; ` +
      (opts.regularOnly ?? `${opts.what ?? "input file"}s are read from regular files only`),
    { kind: "io" },
  );
}

function tooLarge(path: string, size: number | undefined, opts: ReadOptions): OpcatError {
  const max = opts.maxBytes ?? MAX_FILE_BYTES;
  const limit = max >= 1 << 20 ? `${max / (1 << 20)} MiB` : `${max / 1024} KiB`;
  return new OpcatError(
    "IO_FILE_TOO_LARGE",
    `open ${path}: ${size === undefined ? "more than" : `${size} bytes is more than`} the ${limit} opcat reads as ` +
      `one ${opts.what ?? "input file"}${opts.tooLargeHint ? `; ${opts.tooLargeHint}` : ""}`,
    { kind: "io" },
  );
}

/**
 * Opens a regular file for reading without blocking on what is not one, checked as
 * readInputFileSync checks it; the caller closes the descriptor.
 */
export function openInputSync(path: string, opts: ReadOptions = {}): { fd: number; size: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    refuseSpecial(path, st, opts);
    if (st.size > (opts.maxBytes ?? MAX_FILE_BYTES)) throw tooLarge(path, st.size, opts);
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Reads a regular file (or a file descriptor such as 0, standard input, without the checks) whole.
 * Throws OpcatError IO_NOT_REGULAR / IO_FILE_TOO_LARGE, or the system's error as it is.
 */
export function readInputFileSync(path: string | number, opts: ReadOptions = {}): Buffer {
  if (typeof path === "number") return readAll(path, String(path), opts);
  const { fd, size } = openInputSync(path, opts);
  try {
    return readAll(fd, path, opts, size);
  } finally {
    closeSync(fd);
  }
}

/** readInputFileSync as UTF-8 text. */
export function readInputTextSync(path: string | number, opts: ReadOptions = {}): string {
  return readInputFileSync(path, opts).toString("utf8");
}

/** Reads until the end, failing past the budget (a file may grow after its size was read; /proc files say 0). */
function readAll(fd: number, path: string, opts: ReadOptions, size = 0): Buffer {
  const max = opts.maxBytes ?? MAX_FILE_BYTES;
  const chunks: Buffer[] = [];
  let total = 0;
  let buf = Buffer.allocUnsafe(Math.min(Math.max(size + 1, 64 * 1024), max + 1));
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
        // standard input without data yet (a non-blocking pipe): wait for it
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      throw e;
    }
    if (n === 0) break;
    total += n;
    if (total > max) throw tooLarge(path, undefined, opts);
    chunks.push(buf.subarray(0, n));
    if (n === buf.length) buf = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
    else buf = buf.subarray(n);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

/**
 * Reads a stream (standard input) whole, failing once it passes the budget (`cat /dev/zero | opcat
 * render -` would otherwise grow until memory ends).
 */
export async function readInputStream(
  stream: NodeJS.ReadableStream,
  name: string,
  opts: ReadOptions = {},
): Promise<Buffer> {
  const max = opts.maxBytes ?? MAX_FILE_BYTES;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of stream) {
    const b = typeof c === "string" ? Buffer.from(c) : (c as Buffer);
    total += b.length;
    if (total > max) throw tooLarge(name, undefined, opts);
    chunks.push(b);
  }
  return Buffer.concat(chunks, total);
}

/** The asynchronous readInputFileSync (used while serving, so that reading never holds the event loop). */
export async function readInputFile(path: string, opts: ReadOptions = {}): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    refuseSpecial(path, st, opts);
    if (st.size > (opts.maxBytes ?? MAX_FILE_BYTES)) throw tooLarge(path, st.size, opts);
    const max = opts.maxBytes ?? MAX_FILE_BYTES;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size - total + 1, 64 * 1024), max + 1));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > max) throw tooLarge(path, undefined, opts);
      chunks.push(buf.subarray(0, bytesRead));
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}
