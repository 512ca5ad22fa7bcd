/**
 * Tar archives: a streaming reader (ustar, GNU long names, PAX records, base-256 sizes) that checks
 * header checksums and reports truncation, and a reproducible writer (fixed mtime, uid/gid 0, no
 * user names, entries in the order given).
 */
import { ImageError } from "./errors.js";

export type TarEntryType = "file" | "dir" | "symlink" | "hardlink" | "other";

export interface TarEntry {
  /** The entry path as stored (PAX `path` and GNU long names applied). */
  name: string;
  type: TarEntryType;
  size: number;
  mode: number;
  /** Link target for symlinks and hard links. */
  linkname: string;
  /** The entry's bytes; what the consumer does not read is skipped. */
  body(): AsyncGenerator<Buffer>;
}

const BLOCK = 512;

/** Exact-length reads over an async iterable of chunks. */
class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  private done = false;
  constructor(private readonly it: AsyncIterator<Buffer | Uint8Array | string>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.buf.length < n && !this.done) {
      const r = await this.it.next();
      if (r.done) {
        this.done = true;
        break;
      }
      const c =
        typeof r.value === "string"
          ? Buffer.from(r.value)
          : Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
      this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
    }
    return this.buf.length >= n;
  }

  /** Exactly n bytes, or null at a clean end of input (no bytes at all); throws when cut short. */
  async read(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) {
      if (this.buf.length === 0) return null;
      throw truncated();
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** Up to n bytes in chunks as they come; throws when the input ends first. */
  async *chunks(n: number): AsyncGenerator<Buffer> {
    while (n > 0) {
      if (this.buf.length === 0 && !(await this.fill(1))) throw truncated();
      const take = Math.min(n, this.buf.length);
      const out = this.buf.subarray(0, take);
      this.buf = this.buf.subarray(take);
      n -= take;
      yield out;
    }
  }

  async skip(n: number): Promise<void> {
    for await (const _ of this.chunks(n)) void _;
  }
}

function truncated(): ImageError {
  return new ImageError("IMAGE_LAYER_CORRUPT", "unexpected end of tar archive (truncated layer)");
}

function cstr(b: Buffer, off: number, len: number): string {
  const f = b.subarray(off, off + len);
  const z = f.indexOf(0);
  return (z < 0 ? f : f.subarray(0, z)).toString("utf8");
}

function octal(b: Buffer, off: number, len: number, what: string): number {
  const f = b.subarray(off, off + len);
  if (f[0] & 0x80) {
    // base-256 (GNU): big-endian two's complement, positive values only here
    let v = 0;
    for (let i = 1; i < f.length; i++) v = v * 256 + f[i];
    v += (f[0] & 0x3f) * 256 ** (f.length - 1);
    if (f[0] & 0x40 || !Number.isSafeInteger(v))
      throw new ImageError("IMAGE_LAYER_CORRUPT", `invalid tar header: ${what} out of range`);
    return v;
  }
  const s = cstr(b, off, len).replace(/ +$/, "").trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s))
    throw new ImageError("IMAGE_LAYER_CORRUPT", `invalid tar header: bad ${what} field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let unsigned = 0;
  for (let i = 0; i < BLOCK; i++) unsigned += i >= 148 && i < 156 ? 32 : h[i];
  const stored = octal(h, 148, 8, "checksum");
  return stored === unsigned;
}

function parsePax(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const sp = data.indexOf(0x20, i);
    if (sp < 0) break;
    const len = parseInt(data.subarray(i, sp).toString("ascii"), 10);
    if (!Number.isSafeInteger(len) || len <= 0 || i + len > data.length)
      throw new ImageError("IMAGE_LAYER_CORRUPT", "invalid tar PAX header");
    const rec = data.subarray(sp + 1, i + len - 1).toString("utf8");
    const eq = rec.indexOf("=");
    if (eq > 0) out.set(rec.slice(0, eq), rec.slice(eq + 1));
    i += len;
  }
  return out;
}

/** Largest PAX or GNU long-name record read into memory. */
const MAX_META = 1024 * 1024;

/** Reads a tar stream entry by entry. Errors are IMAGE_LAYER_CORRUPT. */
export async function* readTar(src: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<TarEntry> {
  const r = new ByteReader(src[Symbol.asyncIterator]());
  let pax = new Map<string, string>();
  const globalPax = new Map<string, string>();
  let longName: string | undefined;
  let longLink: string | undefined;
  for (;;) {
    const h = await r.read(BLOCK);
    if (h === null) return; // no end-of-archive marker: tolerated, as Go's archive/tar does at a block boundary
    if (h.every((x) => x === 0)) return;
    if (!checksumOk(h)) throw new ImageError("IMAGE_LAYER_CORRUPT", "invalid tar header checksum (corrupt layer)");
    const flag = String.fromCharCode(h[156] || 0x30);
    let size = octal(h, 124, 12, "size");
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (flag === "x" || flag === "g" || flag === "L" || flag === "K") {
      if (size > MAX_META) throw new ImageError("IMAGE_LAYER_CORRUPT", `tar metadata record too large (${size} bytes)`);
      const data = size === 0 ? Buffer.alloc(0) : Buffer.from((await r.read(size)) ?? Buffer.alloc(0));
      if (data.length !== size) throw truncated();
      await r.skip(padded - size);
      if (flag === "x") pax = parsePax(data);
      else if (flag === "g") for (const [k, v] of parsePax(data)) globalPax.set(k, v);
      else if (flag === "L") longName = cstr(data, 0, data.length);
      else longLink = cstr(data, 0, data.length);
      continue;
    }
    const magic = h.subarray(257, 263).toString("latin1");
    let name = cstr(h, 0, 100);
    if (magic === "ustar\0") {
      const prefix = cstr(h, 345, 155);
      if (prefix) name = `${prefix}/${name}`;
    }
    let linkname = cstr(h, 157, 100);
    const p = (k: string): string | undefined => pax.get(k) ?? globalPax.get(k);
    if (longName !== undefined) name = longName;
    if (longLink !== undefined) linkname = longLink;
    if (p("path") !== undefined) name = p("path")!;
    if (p("linkpath") !== undefined) linkname = p("linkpath")!;
    const paxSize = p("size");
    if (paxSize !== undefined) {
      if (!/^[0-9]+$/.test(paxSize)) throw new ImageError("IMAGE_LAYER_CORRUPT", "invalid tar PAX size");
      size = Number(paxSize);
    }
    pax = new Map();
    longName = longLink = undefined;
    const type: TarEntryType =
      flag === "0" || flag === "7"
        ? "file"
        : flag === "5"
          ? "dir"
          : flag === "2"
            ? "symlink"
            : flag === "1"
              ? "hardlink"
              : "other";
    // hard links, symlinks, devices and directories carry no data (size is informational for them)
    const dataSize = type === "file" || type === "other" ? size : 0;
    const dataPadded = Math.ceil(dataSize / BLOCK) * BLOCK;
    let consumed = 0;
    let started = false;
    const entry: TarEntry = {
      name,
      type,
      size: dataSize,
      mode: octal(h, 100, 8, "mode"),
      linkname,
      body: async function* () {
        if (started) throw new Error("tar entry body read twice");
        started = true;
        for await (const c of r.chunks(dataSize)) {
          consumed += c.length;
          yield c;
        }
      },
    };
    yield entry;
    if (started && consumed < dataSize) throw new Error("tar entry body not fully consumed");
    await r.skip(dataPadded - consumed);
  }
}

/** One entry for {@link writeTar}. Directory paths may end with "/" (added when missing). */
export interface TarInput {
  path: string;
  type: "file" | "dir" | "symlink";
  data?: Uint8Array;
  linkname?: string;
  mode?: number;
}

function putStr(h: Buffer, off: number, len: number, s: string): void {
  const b = Buffer.from(s, "utf8");
  b.copy(h, off, 0, Math.min(len, b.length));
}

function putOctal(h: Buffer, off: number, len: number, v: number): void {
  const s = v.toString(8).padStart(len - 1, "0");
  if (s.length > len - 1) throw new RangeError(`tar field overflow (${v})`);
  h.write(s + "\0", off, "latin1");
}

function header(name: string, flag: string, size: number, mode: number, mtime: number, linkname = ""): Buffer {
  const h = Buffer.alloc(BLOCK);
  let prefix = "";
  let short = name;
  if (Buffer.byteLength(name) > 100) {
    // ustar split: prefix (<=155) "/" name (<=100)
    const bytes = Buffer.from(name);
    let cut = -1;
    for (let i = bytes.length - 1; i > 0; i--) {
      if (bytes[i] === 0x2f && i <= 155 && bytes.length - i - 1 <= 100 && bytes.length - i - 1 > 0) {
        cut = i;
        break;
      }
    }
    if (cut < 0) throw new RangeError("needs pax");
    prefix = bytes.subarray(0, cut).toString("utf8");
    short = bytes.subarray(cut + 1).toString("utf8");
  }
  putStr(h, 0, 100, short);
  putOctal(h, 100, 8, mode);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  putOctal(h, 124, 12, size);
  putOctal(h, 136, 12, mtime);
  h.fill(0x20, 148, 156);
  h.write(flag, 156, "latin1");
  putStr(h, 157, 100, linkname);
  h.write("ustar\0" + "00", 257, "latin1");
  putStr(h, 345, 155, prefix);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i];
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "latin1");
  return h;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function pad(n: number): Buffer {
  const r = n % BLOCK;
  return Buffer.alloc(r === 0 ? 0 : BLOCK - r);
}

/**
 * Writes a reproducible tar: entries in the order given, mtime `mtime` (seconds, default 0), uid/gid 0,
 * empty user/group names, mode 0755 for directories and 0644 for files unless given. Paths that do
 * not fit ustar get a PAX header. Returns the archive's chunks.
 */
export function writeTar(entries: Iterable<TarInput>, mtime = 0): Buffer[] {
  const out: Buffer[] = [];
  for (const e of entries) {
    let name = e.path.replace(/^\/+/, "");
    if (e.type === "dir" && !name.endsWith("/")) name += "/";
    const data = e.type === "file" ? Buffer.from(e.data ?? new Uint8Array()) : Buffer.alloc(0);
    const mode = e.mode ?? (e.type === "dir" ? 0o755 : 0o644);
    const flag = e.type === "file" ? "0" : e.type === "dir" ? "5" : "2";
    const link = e.linkname ?? "";
    let h: Buffer;
    try {
      if (Buffer.byteLength(link) > 100) throw new RangeError("needs pax");
      h = header(name, flag, data.length, mode, mtime, link);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      let recs = paxRecord("path", name);
      if (link) recs += paxRecord("linkpath", link);
      const pb = Buffer.from(recs, "utf8");
      const ascii = name.replace(/[^\x20-\x7e]/g, "_");
      out.push(
        header("PaxHeaders/" + ascii.slice(-80).replace(/^\/+/, ""), "x", pb.length, 0o644, mtime),
        pb,
        pad(pb.length),
      );
      h = header(ascii.slice(-99), flag, data.length, mode, mtime, link.replace(/[^\x20-\x7e]/g, "_").slice(0, 99));
    }
    out.push(h);
    if (data.length > 0) out.push(data, pad(data.length));
  }
  out.push(Buffer.alloc(BLOCK * 2));
  return out;
}
