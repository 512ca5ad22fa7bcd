/**
 * One immutable, fully validated revision of a served catalog: the JSON Lines document catalogd
 * serves at `/api/v1/all` (every blob in opm's walk order, normalised as opm's `Meta.Blob`: keys
 * sorted, compact, no HTML escaping, one per line), its gzip encoding, a schema/package/name index
 * of the lines for `/api/v1/metas`, and the gRPC registry index. A revision is built completely
 * before anyone can see it, so readers never observe a half-loaded catalog.
 *
 * A revision read from its persisted index (`serve --cache-dir`, revindex.ts) keeps in memory only
 * the index tables (line offsets, the metas index, the registry's structure); the lines, their gzip
 * and the encoded bundles stay in the index file and are read when a request asks for them. An
 * HTTP-only revision built with `files` (the cluster's catalogs) is written to such a file once built
 * and served from it the same way.
 */
import { createHash } from "node:crypto";
import { mkdir, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { gzip as gzipCb, constants as zconst } from "node:zlib";
import { promisify } from "node:util";
import { encodeSortedCompact } from "../gojson/encode.js";
import { OpcatError, problem, type Problem } from "../errors/index.js";
import { readInputFile } from "../fsx/readfile.js";
import { stagedName, sweepStagedOnce } from "../fsx/staged.js";
import { CATALOG_FILE, listCatalogFiles, loadText, type BlobMeta, type LoadResult } from "../fbc/load.js";
import { emptyConfig } from "../fbc/types.js";
import { validateCatalog } from "../fbc/validate.js";
import { RegistryIndex } from "./registry.js";
import { FileBytes, MemoryBytes, type Bytes } from "./bytes.js";
import { KeyIndex } from "./keyindex.js";
import { goErrnoText } from "../gojson/goerrno.js";
import {
  indexPath,
  readIndex,
  treeState,
  writeIndex,
  type RevisionParts as PersistedParts,
  type TreeState,
} from "./revindex.js";

const gzip = promisify(gzipCb);

export interface LoadRevisionOptions {
  /** The catalog name the revision belongs to. */
  catalog: string;
  /** Revision number (increasing per catalog). */
  serial: number;
  /** Last-Modified of the revision this one replaces; the new one is at least a second later. */
  previousLastModified?: Date;
  /** Apply opm serve's custom-schema name rule (needed for the gRPC API). Default true. */
  checkMetaKeys?: boolean;
  /**
   * Build the gRPC registry index (default true). Without it a revision holds only its JSON Lines
   * document, gzip encoding and blob index (what catalogd's HTTP API needs: the cluster's catalogs),
   * about half the memory; the custom-schema name rule and the persisted index (`cache`) go with it.
   */
  grpc?: boolean;
  /** The persisted revision index (`serve --cache-dir`, revindex.ts): read when valid, written after a build. */
  cache?: RevisionCacheOptions;
  /**
   * What a catalog that parses but fails `opcat validate` (opm's model validation: no default
   * channel, two channel heads, …) does: `refuse` (default; opm serve) or `report` — served as it
   * is, the problems kept in `validationProblems`, as catalogd stores and serves any FBC that
   * parses. `report` needs `grpc: false`: the gRPC registry index is built from a valid model.
   */
  validation?: "refuse" | "report";
  /**
   * Keep an HTTP-only revision's served bytes (`grpc: false`: the `/all` lines and their gzip) in a
   * file rather than in memory: once built, the revision is written as a persisted index (revindex.ts,
   * without the registry's sections) and served from that file as `opcat serve --cache-dir` serves
   * one; only its tables (line offsets, the metas index) stay in memory.
   */
  files?: RevisionFilesOptions;
}

/**
 * Where HTTP-only revisions keep their served bytes (LoadRevisionOptions.files). Each revision's file
 * is unlinked as soon as it is opened: its open descriptor keeps it readable, and the disk space goes
 * with the last reader (bytes.ts), whatever happens to the process. Never read by a later start.
 */
export interface RevisionFilesOptions {
  /** The directory the files are written to (created when missing). */
  dir: string;
  /** Told why a revision stays in memory (its file could not be written or read back). */
  onWarning?: (message: string) => void;
}

export interface RevisionCacheOptions {
  /** The cache directory; indexes go to `<dir>/serve-index/`. */
  dir: string;
  /**
   * Compare the catalog's contents with the index's digest even when the files' stat signature is
   * unchanged, and fail (instead of rebuilding) when the index is missing, stale or invalid: opm's
   * `--cache-enforce-integrity`.
   */
  enforceIntegrity?: boolean;
  /** Told why an index was not used or could not be written (a rebuild follows; serving goes on). */
  onWarning?: (message: string) => void;
}

export type LoadRevisionResult = { ok: true; revision: CatalogRevision } | { ok: false; problems: Problem[] };

/** An immutable loaded catalog. */
export class CatalogRevision {
  /** Catalog name. */
  readonly catalog: string;
  /** Directory (or file) it was loaded from. */
  readonly source: string;
  readonly serial: number;
  /** SHA-256 (hex) of the JSON Lines document. */
  readonly digest: string;
  /** Strong entity tag of the identity encoding of `/all` (quoted). */
  readonly etag: string;
  /** Strong entity tag of the gzip encoding of `/all` (quoted). */
  readonly etagGzip: string;
  /** Whole seconds. */
  readonly lastModified: Date;
  /** The JSON Lines document, in memory or in the persisted index file. */
  readonly jsonlBytes: Bytes;
  /** `jsonl`, gzip-compressed once. */
  readonly gzipBytes: Bytes;
  /** The gRPC registry index (undefined when built without it: `grpc: false`). */
  readonly registry: RegistryIndex | undefined;
  readonly files: number;
  readonly bytes: number;
  readonly loadMs: number;
  /**
   * Where the revision came from: its persisted index, or the catalog's
   * files (then `indexWritten` says whether an index was written).
   */
  readonly origin: "index" | "catalog";
  readonly indexWritten: boolean;
  /** What `opcat validate` finds in the served content (empty unless loaded with `validation: "report"`). */
  readonly validationProblems: readonly Problem[];
  readonly #offsets: Float64Array;
  readonly #bySchema: KeyIndex;
  readonly #byPackage: KeyIndex;
  readonly #byName: KeyIndex;

  private constructor(init: {
    catalog: string;
    source: string;
    serial: number;
    digest: string;
    lastModified: Date;
    jsonl: Bytes;
    gzip: Bytes;
    registry: RegistryIndex | undefined;
    files: number;
    bytes: number;
    loadMs: number;
    origin?: "index" | "catalog";
    indexWritten?: boolean;
    validationProblems?: readonly Problem[];
    offsets: Float64Array;
    bySchema: KeyIndex;
    byPackage: KeyIndex;
    byName: KeyIndex;
  }) {
    this.catalog = init.catalog;
    this.source = init.source;
    this.serial = init.serial;
    this.digest = init.digest;
    const tag = Buffer.from(init.digest.slice(0, 48), "hex").toString("base64url");
    this.etag = `"${tag}"`;
    this.etagGzip = `"${tag}-gzip"`;
    this.lastModified = init.lastModified;
    this.jsonlBytes = init.jsonl;
    this.gzipBytes = init.gzip;
    this.registry = init.registry;
    this.files = init.files;
    this.bytes = init.bytes;
    this.loadMs = init.loadMs;
    this.origin = init.origin ?? "catalog";
    this.indexWritten = init.indexWritten ?? false;
    this.validationProblems = init.validationProblems ?? [];
    this.#offsets = init.offsets;
    this.#bySchema = init.bySchema;
    this.#byPackage = init.byPackage;
    this.#byName = init.byName;
  }

  /** Number of blobs (lines). */
  get blobCount(): number {
    return this.#offsets.length - 1;
  }

  /**
   * The JSON Lines document in one buffer: the revision's own (built from the files), or one copy read
   * from the index file, shared while it is held. `jsonlBytes` and `lineChunks` read parts of it.
   */
  get jsonl(): Buffer {
    return this.jsonlBytes.whole();
  }

  /**
   * Where the JSON Lines are when they are in a file (undefined when in memory): the file's open
   * descriptor, kept open while `holder` is held, the offset of their first byte and their length.
   * Another thread of the process can read them there (descriptors are the process's).
   */
  get jsonlFile(): { fd: number; start: number; length: number; holder: object } | undefined {
    if (!(this.jsonlBytes instanceof FileBytes)) return undefined;
    const { file, base, length } = this.jsonlBytes.region;
    return { fd: file.fd, start: base, length, holder: file };
  }

  /** `jsonl`'s gzip encoding in one buffer (as `jsonl`). */
  get gzip(): Buffer {
    return this.gzipBytes.whole();
  }

  /** Byte length of the JSON Lines document. */
  get size(): number {
    return this.jsonlBytes.length;
  }

  /** The line of blob `i`, newline included: a view when the lines are in memory, else read from the file. */
  line(i: number): Buffer {
    return this.jsonlBytes.sliceSync(this.#offsets[i], this.#offsets[i + 1]);
  }

  /**
   * The given lines one after the other, in pieces of about `chunk` bytes (runs of consecutive lines
   * are read at once; in memory, a piece of one run is a view).
   */
  async *lineChunks(ids: Uint32Array, chunk: number): AsyncGenerator<Buffer> {
    let pending: Buffer[] = [];
    let n = 0;
    let start = -1;
    let end = -1;
    const flushRun = async (): Promise<void> => {
      if (start < 0) return;
      const b = await this.jsonlBytes.slice(start, end);
      pending.push(b);
      n += b.length;
      start = -1;
    };
    for (const i of ids) {
      const s = this.#offsets[i];
      if (s !== end || end - start >= chunk) {
        await flushRun();
        if (n >= chunk) {
          yield pending.length === 1 ? pending[0] : Buffer.concat(pending, n);
          pending = [];
          n = 0;
        }
        start = s;
      }
      end = this.#offsets[i + 1];
    }
    await flushRun();
    if (n > 0) yield pending.length === 1 ? pending[0] : Buffer.concat(pending, n);
  }

  /** The given lines (`size` bytes: {@link byteLength}) in one new buffer. */
  async concatLines(ids: Uint32Array, size: number): Promise<Buffer> {
    const out = Buffer.allocUnsafe(size);
    let off = 0;
    for await (const c of this.lineChunks(ids, 1 << 20)) off += c.copy(out, off);
    if (off !== size) throw new Error("metas answer size changed");
    return out;
  }

  /**
   * The blobs matching every non-empty filter, in catalog order (catalogd's index semantics:
   * `package` matches the blob's `package` field, so an olm.package blob is found by name only).
   * `undefined` means all blobs.
   */
  query(schema: string, pkg: string, name: string): Uint32Array | undefined {
    const lists: Uint32Array[] = [];
    if (schema !== "") lists.push(this.#bySchema.getOrEmpty(schema));
    if (pkg !== "") lists.push(this.#byPackage.getOrEmpty(pkg));
    if (name !== "") lists.push(this.#byName.getOrEmpty(name));
    if (lists.length === 0) return undefined;
    lists.sort((a, b) => a.length - b.length);
    let acc = lists[0];
    for (let i = 1; i < lists.length && acc.length > 0; i++) acc = intersectSorted(acc, lists[i]);
    return acc;
  }

  /** Total byte length of the given blobs. */
  byteLength(ids: Uint32Array): number {
    let n = 0;
    for (const i of ids) n += this.#offsets[i + 1] - this.#offsets[i];
    return n;
  }

  /**
   * Loads, validates and indexes a catalog directory (or a single catalog file). Yields to the event
   * loop between files so that a server keeps answering while a new revision is being built.
   */
  static async load(source: string, opts: LoadRevisionOptions): Promise<LoadRevisionResult> {
    const started = performance.now();
    const checkMetaKeys = opts.checkMetaKeys !== false;
    const revision = (
      init: RevisionParts & {
        registry: RegistryIndex | undefined;
        origin?: "index";
        indexWritten?: boolean;
        validationProblems?: readonly Problem[];
      },
    ) =>
      new CatalogRevision({
        catalog: opts.catalog,
        source,
        serial: opts.serial,
        lastModified: nextLastModified(opts.previousLastModified),
        loadMs: performance.now() - started,
        ...init,
      });
    const grpc = opts.grpc !== false;
    const cached = opts.cache && grpc ? readCachedIndex(source, opts.cache, checkMetaKeys) : undefined;
    if (cached && "problems" in cached) return { ok: false, problems: cached.problems };
    if (cached && "parts" in cached) return { ok: true, revision: revision({ ...cached.parts, origin: "index" }) };
    const listed = await catalogFiles(source);
    if ("problems" in listed) return { ok: false, problems: listed.problems };
    const res: LoadResult = { config: emptyConfig(), problems: [], files: 0, bytes: 0 };
    const read = await readBlobs(listed.root, listed.files, res);
    if (res.problems.length > 0) return { ok: false, problems: res.problems };
    const validated = validateCatalog(res.config);
    const report = opts.validation === "report" && !grpc;
    if (validated.problems.length > 0 && !report) return { ok: false, problems: validated.problems };
    await yieldToEventLoop();
    if (!grpc) {
      const packed = await packParts(read, res);
      return {
        ok: true,
        revision: revision({
          ...(opts.files ? await inFile(source, opts.catalog, packed, opts.files) : packed),
          registry: undefined,
          validationProblems: validated.problems,
        }),
      };
    }
    const built = RegistryIndex.build(validated.model, res.config.others, { checkMetaKeys: opts.checkMetaKeys });
    if ("problems" in built) return { ok: false, problems: built.problems };
    const parts = await packParts(read, res);
    let indexWritten = false;
    if (cached) {
      try {
        await writeIndex(cached.path, cached.state, checkMetaKeys, { ...parts, registry: built.index.persist() });
        indexWritten = true;
      } catch (e) {
        opts.cache?.onWarning?.(`serve index not written to ${cached.path}: ${(e as Error).message}`);
      }
    }
    return { ok: true, revision: revision({ ...parts, registry: built.index, indexWritten }) };
  }
}

/** What a revision holds besides its name, serial, time and registry index (revindex.ts persists them). */
type RevisionParts = Omit<PersistedParts, "registry">;

/**
 * The persisted index of a catalog (`serve --cache-dir`): its parts when it is valid; else where a
 * new one goes once built (undefined: the catalog does not exist), or, with enforceIntegrity, the
 * problem that refuses to serve without it.
 */
function readCachedIndex(
  source: string,
  cache: RevisionCacheOptions,
  checkMetaKeys: boolean,
):
  | { parts: RevisionParts & { registry: RegistryIndex } }
  | { problems: Problem[] }
  | { path: string; state: TreeState }
  | undefined {
  const enforce = cache.enforceIntegrity === true;
  const state = treeState(source, false);
  if (state.stat === "missing") return undefined;
  const path = indexPath(cache.dir, state.real, checkMetaKeys);
  const found = readIndex(path, state, checkMetaKeys, enforce);
  if ("parts" in found)
    return {
      parts: { ...found.parts, registry: RegistryIndex.fromPersisted(found.registryJson, found.light, found.heavy) },
    };
  if (enforce)
    return {
      problems: [
        problem("SERVE_CACHE_INTEGRITY", `integrity check failed: ${found.message}`, {
          hint:
            "build the index first (opcat serve <dir> --cache-dir " +
            "<dir> --cache-only), or drop --cache-enforce-integrity",
        }),
      ],
    };
  if (found.reason === "invalid") cache.onWarning?.(`serve index not used: ${found.message}; rebuilding it`);
  // both digests are taken before the files are read: content changing meanwhile is found stale next time
  if (state.content === undefined) state.content = treeState(state.real, true).content;
  return { path, state };
}

/** The catalog's files (relative to `root`): a directory's in opm's walk order, or a single file. */
async function catalogFiles(source: string): Promise<{ root: string; files: string[] } | { problems: Problem[] }> {
  try {
    const st = await stat(source);
    if (st.isDirectory()) return { root: source, files: listCatalogFiles(source) };
    return { root: dirname(source), files: [basename(source)] };
  } catch (e) {
    if (e instanceof OpcatError) return { problems: [problem(e.code, e.message)] };
    const err = e as NodeJS.ErrnoException;
    const why = goErrnoText(err);
    return {
      problems: [problem("IO_ERROR", `stat ${err.path ?? source}: ${why}`, { hint: "check the catalog path" })],
    };
  }
}

/** The served lines, normalised, and their indexes by schema, package and name. */
interface ReadBlobs {
  lines: Buffer[];
  bySchema: Map<string, number[]>;
  byPackage: Map<string, number[]>;
  byName: Map<string, number[]>;
}

/**
 * Reads and parses every file once into `res` (the model's config and problems), keeping each blob
 * of a file without problems as its normalised line; yields to the event loop between files.
 */
async function readBlobs(root: string, files: readonly string[], res: LoadResult): Promise<ReadBlobs> {
  const out: ReadBlobs = { lines: [], bySchema: new Map(), byPackage: new Map(), byName: new Map() };
  const index = (m: Map<string, number[]>, key: string, id: number): void => {
    if (key === "") return;
    const l = m.get(key);
    if (l) l.push(id);
    else m.set(key, [id]);
  };
  for (const f of files) {
    let buf: Buffer;
    try {
      // a FIFO, a device or a socket is refused without blocking on it (IO_NOT_REGULAR), as validate does
      buf = await readInputFile(join(root, f), CATALOG_FILE);
    } catch (e) {
      const loc = { file: f, line: 0, index: 0 };
      if (e instanceof OpcatError) res.problems.push(problem(e.code, e.message.replace(join(root, f), f), { loc }));
      else res.problems.push(problem("IO_ERROR", `open ${f}: ${goErrnoText(e as NodeJS.ErrnoException)}`, { loc }));
      continue;
    }
    const text = buf.toString("utf8");
    const before = res.problems.length;
    // one parse: the loader hands over each blob with its meta (reserved keys matched as opm does)
    const fileBlobs: { line: Buffer; meta: BlobMeta }[] = [];
    loadText(text, f, res, buf.length, (obj, meta) =>
      fileBlobs.push({ line: Buffer.from(encodeSortedCompact(obj) + "\n"), meta }),
    );
    if (res.problems.length === before) {
      for (const { line, meta } of fileBlobs) {
        const id = out.lines.length;
        out.lines.push(line);
        index(out.bySchema, meta.schema, id);
        index(out.byPackage, meta.package, id);
        index(out.byName, meta.name, id);
      }
    }
    await yieldToEventLoop();
  }
  return out;
}

/** The JSON Lines document, its offsets, digest and gzip encoding, and the frozen indexes. */
async function packParts(read: ReadBlobs, res: LoadResult): Promise<RevisionParts> {
  const { lines } = read;
  const offsets = new Float64Array(lines.length + 1);
  for (let i = 0; i < lines.length; i++) offsets[i + 1] = offsets[i] + lines[i].length;
  const jsonl = Buffer.concat(lines, offsets[lines.length]);
  lines.length = 0;
  const digest = createHash("sha256").update(jsonl).digest("hex");
  const gz = await gzip(jsonl, { level: zconst.Z_BEST_COMPRESSION });
  return {
    jsonl: new MemoryBytes(jsonl),
    gzip: new MemoryBytes(gz),
    offsets,
    bySchema: KeyIndex.from(read.bySchema),
    byPackage: KeyIndex.from(read.byPackage),
    byName: KeyIndex.from(read.byName),
    digest,
    files: res.files,
    bytes: res.bytes,
  };
}

/**
 * The parts of a revision read back from the file they were written to (LoadRevisionOptions.files):
 * the served bytes in the file, the tables in memory. The file is unlinked once open. When it cannot
 * be written or read, the parts stay in memory (the warning says why).
 */
async function inFile(
  source: string,
  catalog: string,
  parts: RevisionParts,
  files: RevisionFilesOptions,
): Promise<RevisionParts> {
  // a staged name: unique to this write, and swept (below) by a later process when left behind
  const path = stagedName(join(files.dir, `${catalog}.idx`));
  // the file is never looked up by its catalog's state: this one only ties it to the write
  const state: TreeState = { real: source, stat: path, content: "" };
  try {
    await mkdir(files.dir, { recursive: true });
    // the files of processes that died before unlinking theirs
    sweepStagedOnce(files.dir);
    // not synced: the file goes with the process (unlinked below), a crash leaves nothing to trust
    await writeIndex(path, state, false, { ...parts, registry: undefined }, { durable: false });
    const found = readIndex(path, state, false, false);
    if (!("parts" in found)) throw new Error(found.message);
    return found.parts;
  } catch (e) {
    files.onWarning?.(`the served bytes of ${catalog} stay in memory: ${(e as Error).message}`);
    return parts;
  } finally {
    // open (or never written): unlinked, readable through its descriptor
    await rm(path, { force: true }).catch(() => undefined);
  }
}

/** Now in whole seconds, and at least a second after the revision replaced. */
function nextLastModified(previous: Date | undefined): Date {
  const nowSec = Math.floor(Date.now() / 1000);
  const prevSec = previous ? Math.floor(previous.getTime() / 1000) : -Infinity;
  return new Date(Math.max(nowSec, prevSec + 1) * 1000);
}

function intersectSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(a[i]);
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return Uint32Array.from(out);
}
