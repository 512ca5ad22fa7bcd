/**
 * A revision's large byte ranges (the `/all` JSON Lines and their gzip, the registry's encoded
 * bundles): in memory (a revision built from the catalog's files), or a range of its persisted index
 * file (`serve --cache-dir`), read when a request asks for it, as opm reads its cache. A file range
 * holds an open descriptor of the index it was read from: a newer index renamed over it (a reload)
 * leaves the revision reading the file it was built from. The descriptor is closed when every range of
 * the file has been collected; a read in progress keeps its range alive. A file range also tells where
 * it is (`region`), for a reader in another thread of the process (the cluster's resolver worker reads a
 * revision's lines from the descriptor itself rather than being sent a copy).
 */
import { closeSync, read, readSync } from "node:fs";

/** A byte range kept in memory or in a file. */
export interface Bytes {
  readonly length: number;
  /** True when the bytes are in memory (reads are views, never copies). */
  readonly inMemory: boolean;
  /** Bytes [start, end): a view (memory) or a new buffer read synchronously (file). */
  sliceSync(start: number, end: number): Buffer;
  /** Bytes [start, end): a view (memory) or a new buffer read in the thread pool (file). */
  slice(start: number, end: number): Promise<Buffer>;
  /**
   * All of it in one buffer: the buffer itself, or a copy read from the file, shared by every caller
   * while one of them holds it (one copy per revision at a time).
   */
  whole(): Buffer;
}

const EMPTY = Buffer.alloc(0);

function checkRange(length: number, start: number, end: number): void {
  if (!(start >= 0 && end >= start && end <= length)) throw new RangeError(`bytes ${start}-${end} outside 0-${length}`);
}

/** Bytes held in memory. */
export class MemoryBytes implements Bytes {
  readonly inMemory = true;
  readonly #buf: Buffer;
  constructor(buf: Buffer) {
    this.#buf = buf;
  }
  get length(): number {
    return this.#buf.length;
  }
  sliceSync(start: number, end: number): Buffer {
    checkRange(this.#buf.length, start, end);
    return this.#buf.subarray(start, end);
  }
  slice(start: number, end: number): Promise<Buffer> {
    try {
      return Promise.resolve(this.sliceSync(start, end));
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }
  whole(): Buffer {
    return this.#buf;
  }
}

/** An open file whose descriptor is closed when it is collected (when no range of it is left). */
export class OpenFile {
  static readonly #closer = new FinalizationRegistry<number>((fd) => {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  });
  readonly fd: number;
  constructor(fd: number) {
    this.fd = fd;
    OpenFile.#closer.register(this, fd);
  }
}

/** `length` bytes of an open file from `base` on (the file is never rewritten in place). */
export class FileBytes implements Bytes {
  readonly inMemory = false;
  readonly length: number;
  readonly #file: OpenFile;
  readonly #base: number;
  #whole: WeakRef<Buffer> | undefined;

  constructor(file: OpenFile, base: number, length: number) {
    this.#file = file;
    this.#base = base;
    this.length = length;
  }

  sliceSync(start: number, end: number): Buffer {
    checkRange(this.length, start, end);
    if (end === start) return EMPTY;
    const out = Buffer.allocUnsafe(end - start);
    for (let done = 0; done < out.length; ) {
      const n = readSync(this.#file.fd, out, done, out.length - done, this.#base + start + done);
      if (n <= 0) throw new Error("short read from the index file");
      done += n;
    }
    return out;
  }

  slice(start: number, end: number): Promise<Buffer> {
    try {
      checkRange(this.length, start, end);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    if (end === start) return Promise.resolve(EMPTY);
    const out = Buffer.allocUnsafe(end - start);
    const file = this.#file; // held by the callback: the descriptor stays open until the read ends
    return new Promise((resolve, reject) => {
      const next = (done: number): void => {
        read(file.fd, out, done, out.length - done, this.#base + start + done, (err, n) => {
          if (err) reject(err);
          else if (n <= 0) reject(new Error("short read from the index file"));
          else if (done + n < out.length) next(done + n);
          else resolve(out);
        });
      };
      next(0);
    });
  }

  /**
   * Where the bytes are: the open file (its descriptor stays open while `file` is held) and the offset
   * of byte 0 in it.
   */
  get region(): { file: OpenFile; base: number; length: number } {
    return { file: this.#file, base: this.#base, length: this.length };
  }

  whole(): Buffer {
    const held = this.#whole?.deref();
    if (held) return held;
    const buf = this.sliceSync(0, this.length);
    this.#whole = new WeakRef(buf);
    return buf;
  }
}
