/**
 * The persisted revision index of `opcat serve --cache-dir D`: everything a catalog revision answers
 * with (the `/all` JSON Lines and their gzip, the line offsets and metas index, the gRPC registry in
 * its encoded form) in one file per served catalog path, `D/serve-index/<key>.idx`, so that a start
 * with unchanged content parses no YAML at all.
 *
 * Validity (opm's pkg/cache decides by a digest of the catalog's files; here there are two):
 * - the stat signature, a SHA-256 of every entry's path, type, size, mtime, ctime and inode, for the
 *   fast check of a normal start;
 * - the content digest, a SHA-256 of every entry's path, type, size and bytes, the authority: when
 *   the stat signature differs (files copied, touched, a checkout) and the contents are the same, the
 *   index is still used; `--cache-enforce-integrity` always checks the contents.
 * Both are taken before the catalog is read for a build, so content changed during a build is found
 * stale on the next start rather than served under a newer digest.
 *
 * Integrity: the file starts with a magic, its format number and a JSON header naming the opcat
 * version, the catalog path and load options it belongs to, the sections' places and a SHA-256 of
 * the sections before the heavy one and of the heavy section (CSV JSON and manifests). Only the index
 * tables are read into memory (line offsets, the metas index, the registry's structure); the lines,
 * their gzip and the encoded bundles are read from the file when a request asks for them, as opm reads
 * its cache (bytes.ts). Anything that does not match — another format or
 * version, another catalog, a checksum, a length — is not served: the catalog is rebuilt and the file
 * rewritten. Files are written to a temporary name and renamed into place, so a reader (or a crash)
 * never sees half an index.
 *
 * The same file, without the registry's sections, holds an HTTP-only revision's served bytes when its
 * store keeps them on disk (`files`, the cluster's catalogs: revision.ts), read back at once and never
 * looked up again.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Stats } from "node:fs";
import { stagedName, sweepStaged } from "../fsx/staged.js";
import { VERSION } from "../version.js";
import { FileBytes, OpenFile, type Bytes } from "./bytes.js";
import { KeyIndex } from "./keyindex.js";
import type { HeavyStore, PersistedRegistry } from "./registry.js";

const MAGIC = Buffer.from("OPCATIDX", "latin1");
export const INDEX_FORMAT = 2;
const PREFIX = MAGIC.length + 8; // magic, format (u32), header length (u32)
const MAX_HEADER = 1 << 20;

/** What a catalog revision consists of, as written to and read from an index file. */
export interface RevisionParts {
  jsonl: Bytes;
  gzip: Bytes;
  /** Line offsets, blobCount + 1 of them. */
  offsets: Float64Array;
  bySchema: KeyIndex;
  byPackage: KeyIndex;
  byName: KeyIndex;
  /** The gRPC registry; none in the files of an HTTP-only revision (empty sections). */
  registry: PersistedRegistry | undefined;
  /** SHA-256 of `jsonl`. */
  digest: string;
  files: number;
  bytes: number;
}

/** The state of a catalog's files, taken before it is read. */
export interface TreeState {
  /** Resolved path of the catalog. */
  real: string;
  stat: string;
  content?: string;
}

interface Header {
  format: number;
  opcat: string;
  source: string;
  checkMetaKeys: boolean;
  stat: string;
  content: string;
  digest: string;
  files: number;
  bytes: number;
  blobs: number;
  /** name → [offset from the body's start, length] */
  sections: Record<string, [number, number]>;
  residentSha256: string;
  heavySha256: string;
}

export interface TreeEntry {
  rel: string;
  path: string;
  st: Stats;
}

/** Every entry under `real` (itself included), sorted by path, following symbolic links. */
export function treeEntries(real: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  const visit = (path: string, rel: string): void => {
    let st;
    try {
      st = statSync(path);
    } catch {
      return;
    }
    out.push({ rel, path, st });
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch {
      return;
    }
    for (const n of names) visit(join(path, n), `${rel}/${n}`);
  };
  visit(real, "");
  return out;
}

/** The stat signature of a catalog path (see the module comment); "missing" when it does not exist. */
export function treeState(source: string, withContent: boolean): TreeState {
  let real: string;
  try {
    real = realpathSync(source);
  } catch {
    return { real: source, stat: "missing" };
  }
  const entries = treeEntries(real);
  const sig = createHash("sha256");
  for (const e of entries) {
    const kind = e.st.isDirectory() ? "d" : e.st.isFile() ? "f" : "o";
    sig.update(`${e.rel}\0${kind}\0${e.st.size}\0${e.st.mtimeMs}\0${e.st.ctimeMs}\0${e.st.ino}\n`);
  }
  return { real, stat: sig.digest("hex"), content: withContent ? contentDigest(entries) : undefined };
}

/** A SHA-256 of every entry's path, type, size and bytes. */
function contentDigest(entries: TreeEntry[]): string {
  const h = createHash("sha256");
  const buf = Buffer.allocUnsafe(1 << 20);
  for (const e of entries) {
    const kind = e.st.isDirectory() ? "d" : e.st.isFile() ? "f" : "o";
    h.update(`${e.rel}\0${kind}\0${kind === "f" ? e.st.size : 0}\n`);
    if (kind !== "f") continue;
    let fd: number;
    try {
      fd = openSync(e.path, "r");
    } catch {
      h.update("\0unreadable\n");
      continue;
    }
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        h.update(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }
  return h.digest("hex");
}

/** Where the index of the catalog at `real` (loaded with these options) lives. */
export function indexPath(cacheDir: string, real: string, checkMetaKeys: boolean): string {
  const key = createHash("sha256")
    .update(`${real}\0${checkMetaKeys ? 1 : 0}`)
    .digest("hex")
    .slice(0, 32);
  return join(cacheDir, "serve-index", `${key}.idx`);
}

/** Why an index was not used. */
export type IndexMiss = { reason: "missing" | "stale" | "invalid"; message: string };

/** A heavy store reading from a range of an open index file. */
function fileHeavyStore(bytes: Bytes): HeavyStore {
  return {
    read: (offset, length) =>
      offset < 0 || offset + length > bytes.length
        ? Promise.reject(new Error("bundle outside the index's heavy section"))
        : bytes.slice(offset, offset + length),
  };
}

/** SHA-256 (hex) of `length` bytes of `fd` from `pos` on, read in pieces; undefined when the file is shorter. */
function hashRange(fd: number, pos: number, length: number): string | undefined {
  const h = createHash("sha256");
  const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(length, 1)));
  for (let off = 0; off < length; ) {
    const n = readSync(fd, chunk, 0, Math.min(chunk.length, length - off), pos + off);
    if (n <= 0) return undefined;
    h.update(chunk.subarray(0, n));
    off += n;
  }
  return h.digest("hex");
}

/**
 * Reads the index at `path` if it belongs to `source` (resolved: `state.real`) with these options
 * and to its current content. With `enforce`, the contents are always compared (the stat signature
 * alone is not trusted).
 */
export function readIndex(
  path: string,
  state: TreeState,
  checkMetaKeys: boolean,
  enforce: boolean,
): { parts: Omit<RevisionParts, "registry">; registryJson: string; light: Bytes; heavy: HeavyStore } | IndexMiss {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return {
      reason: "missing",
      message: err.code === "ENOENT" ? "no index yet" : `cannot open ${path}: ${err.message}`,
    };
  }
  let keep = false;
  try {
    const size = fstatSync(fd).size;
    const invalid = (why: string): IndexMiss => ({ reason: "invalid", message: `${path}: ${why}` });
    const exact = (buf: Buffer, pos: number): boolean => readSync(fd, buf, 0, buf.length, pos) === buf.length;
    const prefix = Buffer.alloc(PREFIX);
    if (size < PREFIX || !exact(prefix, 0) || !prefix.subarray(0, MAGIC.length).equals(MAGIC))
      return invalid("not an opcat serve index");
    const format = prefix.readUInt32LE(MAGIC.length);
    if (format !== INDEX_FORMAT) return invalid(`index format ${format}, this opcat writes ${INDEX_FORMAT}`);
    const headerLen = prefix.readUInt32LE(MAGIC.length + 4);
    if (headerLen > MAX_HEADER || PREFIX + headerLen > size) return invalid("truncated header");
    const hb = Buffer.alloc(headerLen);
    if (!exact(hb, PREFIX)) return invalid("truncated header");
    let h: Header;
    try {
      h = JSON.parse(hb.toString("utf8")) as Header;
    } catch {
      return invalid("header is not JSON");
    }
    if (h.opcat !== VERSION) return invalid(`written by opcat ${h.opcat}, this is ${VERSION}`);
    if (h.source !== state.real || h.checkMetaKeys !== checkMetaKeys)
      return invalid(`belongs to ${JSON.stringify(h.source)} (checkMetaKeys ${h.checkMetaKeys})`);
    // the contents decide; the stat signature spares reading them when nothing was touched
    if (enforce || h.stat !== state.stat) {
      if (state.content === undefined) state.content = treeState(state.real, true).content;
      if (h.content !== state.content)
        return { reason: "stale", message: "the catalog's files changed since the index was written" };
    }
    const body = PREFIX + headerLen;
    const sec = h.sections;
    const heavySec = sec.heavy;
    if (!heavySec || heavySec[0] + heavySec[1] + body !== size) return invalid("truncated or extended file");
    const residentLen = heavySec[0];
    const residentSum = hashRange(fd, body, residentLen);
    if (residentSum === undefined) return invalid("truncated");
    if (residentSum !== h.residentSha256) return invalid("checksum mismatch");
    const heavySum = hashRange(fd, body + heavySec[0], heavySec[1]);
    if (heavySum === undefined) return invalid("truncated");
    if (heavySum !== h.heavySha256) return invalid("checksum mismatch (bundle manifests)");
    const place = (name: string): [number, number] => {
      const s = sec[name];
      if (!s || s[0] < 0 || s[1] < 0 || s[0] + s[1] > residentLen) throw new Error(`section ${name} out of bounds`);
      return s;
    };
    // the index tables: read into memory
    const load = (name: string): Buffer => {
      const [at, len] = place(name);
      const b = Buffer.allocUnsafe(len);
      if (!exact(b, body + at)) throw new Error(`section ${name} truncated`);
      return b;
    };
    let tables: Omit<RevisionParts, "registry" | "jsonl" | "gzip">;
    let registryJson: string;
    let served: Record<"jsonl" | "gzip" | "light", [number, number]>;
    try {
      const off = load("offsets");
      // copied: the section's place in the file need not be 8-byte aligned
      const offsets = new Float64Array(off.length / 8);
      Buffer.from(offsets.buffer).set(off);
      if (offsets.length !== h.blobs + 1) throw new Error("offsets do not match the blob count");
      served = { jsonl: place("jsonl"), gzip: place("gzip"), light: place("light") };
      tables = {
        offsets,
        bySchema: KeyIndex.decode(load("bySchema")),
        byPackage: KeyIndex.decode(load("byPackage")),
        byName: KeyIndex.decode(load("byName")),
        digest: h.digest,
        files: h.files,
        bytes: h.bytes,
      };
      if (served.jsonl[1] !== offsets[h.blobs]) throw new Error("the lines do not match their offsets");
      registryJson = load("registry").toString("utf8");
    } catch (e) {
      return invalid((e as Error).message);
    }
    keep = true;
    // the served bytes stay in the file, read when a request asks for them; the last range collected closes it
    const file = new OpenFile(fd);
    const lazy = ([at, len]: [number, number]): Bytes => new FileBytes(file, body + at, len);
    return {
      parts: { ...tables, jsonl: lazy(served.jsonl), gzip: lazy(served.gzip) },
      registryJson,
      light: lazy(served.light),
      heavy: fileHeavyStore(lazy([heavySec[0], heavySec[1]])),
    };
  } finally {
    if (!keep) closeSync(fd);
  }
}

/**
 * Writes the index of a revision built from the files in `state` (taken before they were read):
 * to a temporary file in the same directory, then renamed into place. `durable: false` skips the
 * fsync (a file that does not outlive the process: an HTTP-only revision's, revision.ts).
 */
export async function writeIndex(
  path: string,
  state: TreeState,
  checkMetaKeys: boolean,
  parts: RevisionParts,
  { durable = true }: { durable?: boolean } = {},
): Promise<void> {
  if (state.content === undefined) throw new Error("writeIndex: the content digest was not taken");
  const blobs = parts.offsets.length - 1;
  const sections: [string, Buffer | readonly Buffer[]][] = [
    ["jsonl", parts.jsonl.whole()],
    ["gzip", parts.gzip.whole()],
    ["offsets", Buffer.from(parts.offsets.buffer, parts.offsets.byteOffset, parts.offsets.byteLength)],
    ["bySchema", parts.bySchema.encode()],
    ["byPackage", parts.byPackage.encode()],
    ["byName", parts.byName.encode()],
    ["registry", Buffer.from(parts.registry?.json ?? "")],
    ["light", parts.registry?.light ?? Buffer.alloc(0)],
    ["heavy", parts.registry?.heavy ?? []], // last: read when asked for, not kept in memory
  ];
  const placed: Record<string, [number, number]> = {};
  const resident = createHash("sha256");
  let off = 0;
  const heavyHash = createHash("sha256");
  for (const [name, b] of sections) {
    const list = Buffer.isBuffer(b) ? [b] : b;
    let len = 0;
    for (const x of list) {
      (name === "heavy" ? heavyHash : resident).update(x);
      len += x.length;
    }
    placed[name] = [off, len];
    off += len;
  }
  const header: Header = {
    format: INDEX_FORMAT,
    opcat: VERSION,
    source: state.real,
    checkMetaKeys,
    stat: state.stat,
    content: state.content,
    digest: parts.digest,
    files: parts.files,
    bytes: parts.bytes,
    blobs,
    sections: placed,
    residentSha256: resident.digest("hex"),
    heavySha256: heavyHash.digest("hex"),
  };
  const hb = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(PREFIX);
  MAGIC.copy(prefix);
  prefix.writeUInt32LE(INDEX_FORMAT, MAGIC.length);
  prefix.writeUInt32LE(hb.length, MAGIC.length + 4);
  await mkdir(dirname(path), { recursive: true });
  const tmp = stagedName(path);
  const fh = await open(tmp, "wx", 0o644);
  try {
    let pos = 0;
    for (const b of [prefix, hb, ...sections.flatMap(([, x]) => (Buffer.isBuffer(x) ? [x] : x))]) {
      for (let done = 0; done < b.length; ) {
        const { bytesWritten } = await fh.write(b, done, b.length - done, pos);
        done += bytesWritten;
        pos += bytesWritten;
      }
    }
    if (durable) await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  sweepStaged(path); // what writers that died before their rename left behind
}
