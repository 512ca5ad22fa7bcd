/**
 * catalogd's catalog content HTTP API over a CatalogStore (operator-controller
 * internal/catalogd/server/handlers.go):
 *
 *   GET|HEAD /catalogs/<name>/api/v1/all                       the whole catalog as JSON Lines
 *   GET|HEAD /catalogs/<name>/api/v1/metas?schema=&package=&name=   the matching lines
 *   GET /healthz, GET /readyz
 *   GET /metrics                                              Prometheus text: the process's memory (RSS,
 *                                                              heap), each catalog's revision and size
 *   anything a mount claims                                   the handlers mounted beside it: `opcat serve`
 *                                                              mounts the web layer's resolver API (POST
 *                                                              /api/v1/query, /api/v1/resolve) and UI (GET /,
 *                                                              /assets/*, /ui/api/*): src/web/mount.ts
 *
 * Same paths, content type (`application/jsonl`), status codes and error bodies as catalogd, Go's
 * conditional-request rules (Last-Modified / If-Modified-Since / If-Unmodified-Since, plus strong
 * ETags / If-None-Match / If-Match / If-Range) and single byte ranges on `/all`, ported in
 * `conditional.ts`. `/all` is gzip-compressed once per revision; filtered `metas` answers are built
 * once per revision and query (identity up to 4 MiB; gzip up to 64 MiB of content, compressed in the
 * thread pool) and kept in a bounded per-revision cache; larger identity answers are streamed from the
 * revision's lines.
 * Bodies are written with back-pressure, so a slow or vanished client only holds a view of the
 * revision's buffer (or, for a revision read from its persisted index, the piece of the file being
 * sent: the lines and their gzip stay in the file) and never delays other requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip, gzip as gzipCb } from "node:zlib";
import { memoryMetrics, prometheusText, type MetricFamily } from "./metrics.js";
import type { Bytes } from "./bytes.js";
import type { CatalogRevision } from "./revision.js";
import { dns1123SubdomainErrors, type CatalogStore } from "./store.js";
import { checkIfRange, checkPreconditions, finishPrecondition, parseRange } from "./conditional.js";

export { checkPreconditions, parseHttpDate, parseRange } from "./conditional.js";

export interface HttpServeOptions {
  /** Host to listen on. Default 127.0.0.1. */
  host?: string;
  /** Port (0 picks a free one). Default 8080. */
  port?: number;
  /** Write one JSON access-log line per request to this function (e.g. stderr). */
  accessLog?: (line: string) => void;
  /** Close connections idle (no bytes moving) for this long, in ms. Default 300000 (catalogd's write timeout). */
  idleTimeoutMs?: number;
  /** Bodies of at least this many bytes are gzip-encoded for clients that accept it. Default 1400. */
  gzipMinSize?: number;
  /**
   * Handlers answered beside the catalog API, tried in order (the serve action mounts the web layer's
   * resolver API and UI: src/web/mount.ts). None by default: the catalog server alone.
   */
  mounts?: readonly HttpMount[];
  /**
   * The catalog server has no resolver API of its own (it is a mount): `false` is accepted, as callers
   * that turned it off before pass it, and changes nothing.
   */
  resolver?: false;
  /** Receives one entry per 500 answer with the error behind it (the client only reads "internal error"). */
  errorLog?: (entry: Record<string, unknown>) => void;
  /** Serve HTTPS with this certificate and key (PEM), as catalogd does behind its Service. Default: HTTP. */
  tls?: ServerCerts;
}

/** A serving certificate (with its chain) and its private key, PEM. */
export interface ServerCerts {
  cert: string;
  key: string;
}

/** A running HTTP server. */
export interface HttpServerHandle {
  readonly server: Server;
  /** The bound address (useful with port 0). */
  readonly address: AddressInfo;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`, default 10 s), then closes. */
  close(graceMs?: number): Promise<void>;
  /** An HTTPS server: serves new connections with this certificate (a rotation). */
  setCerts(certs: ServerCerts): void;
}

/** A handler answered beside the catalog API; its module loads with the first request it claims. */
export interface HttpMount {
  /** Whether the handler answers `path` (before it is loaded: decides when it loads). */
  claims(path: string): boolean;
  load(): Promise<MountedHandler>;
}

/** A loaded mount: answers a request and says whether it did; `close` on shutdown. */
export interface MountedHandler {
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: string, ctx: { bytes: number }): boolean;
  close?(): Promise<void>;
}

const CHUNK = 64 * 1024;

/**
 * A handler whose module loads on its first request (the resolver pulls in CEL and the resolver, the
 * UI templates and image access): a server that only serves catalogs starts without them.
 */
class Lazy<T> {
  #value: T | undefined;
  #loading: Promise<T> | undefined;
  readonly #load: () => Promise<T>;
  constructor(load: () => Promise<T>) {
    this.#load = load;
  }
  get value(): T | undefined {
    return this.#value;
  }
  load(): Promise<T> {
    this.#loading ??= this.#load().then((v) => {
      this.#value = v;
      return v;
    });
    return this.#loading;
  }
}
const METAS_PARAMS = new Set(["schema", "package", "name"]);
const ROUTE = /^\/catalogs\/([^/]+)\/api\/v1\/(all|metas)$/;

interface ReqCtx {
  catalog?: string;
  bytes: number;
  encoding?: string;
}

/** The request handler (usable with any node:http server); `close` stops the resolver API's worker. */
export type CatalogHandler = ((req: IncomingMessage, res: ServerResponse) => void) & { close(): Promise<void> };

/** The request handler (usable with any node:http server). */
export function createCatalogHandler(
  store: CatalogStore,
  opts: Pick<HttpServeOptions, "accessLog" | "gzipMinSize" | "mounts" | "resolver" | "errorLog"> = {},
): CatalogHandler {
  const gzipMin = opts.gzipMinSize ?? 1400;
  const errorLog = opts.errorLog;
  const mounts: Mounted[] = (opts.mounts ?? []).map((m) => ({
    claims: (p) => m.claims(p),
    handler: new Lazy(() => m.load()),
  }));
  const internal = (req: IncomingMessage, res: ServerResponse, ctx: ReqCtx, e: unknown): void => {
    errorLog?.({
      level: "error",
      msg: "internal error",
      method: req.method ?? "",
      path: req.url ?? "",
      error: e instanceof Error ? (e.stack ?? e.message) : String(e),
    });
    if (!res.headersSent) textError(res, ctx, 500, "500 Internal Server Error");
    else res.destroy(e instanceof Error ? e : undefined);
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    const ctx: ReqCtx = { bytes: 0 };
    if (opts.accessLog) {
      const log = opts.accessLog;
      res.once("close", () => {
        const entry: Record<string, string | number | boolean> = {
          time: new Date().toISOString(),
          level: "info",
          msg: "request",
          method: req.method ?? "",
          path: req.url ?? "",
          status: res.statusCode,
          bytes: ctx.bytes,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
          remote: req.socket.remoteAddress ?? "",
          user_agent: req.headers["user-agent"] ?? "",
        };
        if (ctx.catalog !== undefined) entry.catalog = ctx.catalog;
        if (ctx.encoding) entry.encoding = ctx.encoding;
        if (!res.writableFinished) entry.aborted = true;
        log(JSON.stringify(entry));
      });
    }
    try {
      route(store, req, res, ctx, gzipMin, mounts, internal);
    } catch (e) {
      internal(req, res, ctx, e);
    }
  };
  return Object.assign(handler, {
    close: async (): Promise<void> => {
      for (const m of mounts) await m.handler.value?.close?.();
    },
  });
}

interface Mounted {
  claims(path: string): boolean;
  handler: Lazy<MountedHandler>;
}

function route(
  store: CatalogStore,
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ReqCtx,
  gzipMin: number,
  mounts: readonly Mounted[],
  internal: (req: IncomingMessage, res: ServerResponse, ctx: ReqCtx, e: unknown) => void,
): void {
  const url = req.url ?? "/";
  const qi = url.indexOf("?");
  const path = qi < 0 ? url : url.slice(0, qi);
  const query = qi < 0 ? "" : url.slice(qi + 1);
  const method = req.method ?? "GET";
  const pending = mounts.find((m) => !m.handler.value && m.claims(path))?.handler;
  if (pending) {
    // load the handler's module, then route again (the request body waits unread meanwhile)
    void pending.load().then(
      () => {
        try {
          route(store, req, res, ctx, gzipMin, mounts, internal);
        } catch (e) {
          internal(req, res, ctx, e);
        }
      },
      (e: unknown) => internal(req, res, ctx, e),
    );
    return;
  }
  for (const m of mounts) if (m.handler.value?.handle(req, res, path, query, ctx)) return;

  if (path === "/healthz" || path === "/readyz") {
    if (method !== "GET" && method !== "HEAD") return textError(res, ctx, 405, "Method Not Allowed", "GET, HEAD");
    if (path === "/readyz" && !store.ready()) {
      const missing = store.names().filter((n) => !store.get(n));
      return textError(
        res,
        ctx,
        503,
        `not ready: no valid content yet for catalog(s) ${missing.join(", ") || "(none configured)"}`,
      );
    }
    return sendText(res, ctx, 200, "ok", method === "HEAD");
  }

  if (path === "/metrics") {
    if (method !== "GET" && method !== "HEAD") return textError(res, ctx, 405, "Method Not Allowed", "GET, HEAD");
    const body = Buffer.from(prometheusText([...memoryMetrics(), ...catalogMetrics(store)]));
    res.setHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    res.setHeader("Content-Length", body.length);
    res.writeHead(200);
    if (method === "HEAD") return void res.end();
    ctx.bytes += body.length;
    return void res.end(body);
  }

  const m = ROUTE.exec(path);
  if (!m) return textError(res, ctx, 404, "404 page not found");
  if (method !== "GET" && method !== "HEAD") return textError(res, ctx, 405, "Method Not Allowed", "GET, HEAD");

  let name: string;
  try {
    name = decodeURIComponent(m[1]);
  } catch {
    name = m[1];
  }
  ctx.catalog = name;
  const errs = dns1123SubdomainErrors(name);
  if (errs.length > 0) return textError(res, ctx, 400, `invalid catalog name: ${errs.join("; ")}`);

  const params = new URLSearchParams(query);
  if (m[2] === "metas") {
    for (const k of params.keys()) if (!METAS_PARAMS.has(k)) return textError(res, ctx, 400, "400 Bad Request");
  }
  // One revision for the whole request, whatever reloads happen meanwhile.
  const rev = store.get(name);
  if (!rev) return textError(res, ctx, 404, "404 Not Found");

  if (m[2] === "all") return serveAll(rev, req, res, ctx, gzipMin);
  const schema = params.get("schema") ?? "";
  const pkg = params.get("package") ?? "";
  const blobName = params.get("name") ?? "";
  const ids = rev.query(schema, pkg, blobName);
  if (ids === undefined) return serveAll(rev, req, res, ctx, gzipMin, true);
  return serveMetas(rev, ids, req, res, ctx, gzipMin, `${schema}\u0000${pkg}\u0000${blobName}`);
}

function serveAll(
  rev: CatalogRevision,
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ReqCtx,
  gzipMin: number,
  noRanges = false,
): void {
  const size = rev.size;
  const rangeHeader = noRanges ? undefined : req.headers.range;
  const useGzip = rangeHeader === undefined && size >= gzipMin && acceptsGzip(req.headers["accept-encoding"]);
  const etag = useGzip ? rev.etagGzip : rev.etag;
  res.setHeader("Content-Type", "application/jsonl");
  res.setHeader("Vary", "Accept-Encoding");
  res.setHeader("Last-Modified", rev.lastModified.toUTCString());
  res.setHeader("ETag", etag);
  if (!useGzip && !noRanges) res.setHeader("Accept-Ranges", "bytes");
  const pre = checkPreconditions(req, etag, rev.lastModified);
  if (pre !== 0) return finishPrecondition(res, pre);

  const head = req.method === "HEAD";
  if (useGzip) {
    ctx.encoding = "gzip";
    res.setHeader("Content-Encoding", "gzip");
    res.setHeader("Content-Length", rev.gzipBytes.length);
    res.writeHead(200);
    return head ? endEmpty(res) : sendBytes(res, ctx, rev.gzipBytes, 0, rev.gzipBytes.length);
  }
  if (rangeHeader !== undefined && checkIfRange(req, etag, rev.lastModified)) {
    const r = parseRange(rangeHeader, size);
    if (typeof r === "string") {
      res.setHeader("Content-Range", `bytes */${size}`);
      return textError(res, ctx, 416, r);
    }
    if (r !== undefined) {
      res.setHeader("Content-Range", `bytes ${r.start}-${r.start + r.length - 1}/${size}`);
      res.setHeader("Content-Length", r.length);
      res.writeHead(206);
      return head ? endEmpty(res) : sendBytes(res, ctx, rev.jsonlBytes, r.start, r.start + r.length);
    }
  }
  res.setHeader("Content-Length", size);
  res.writeHead(200);
  return head ? endEmpty(res) : sendBytes(res, ctx, rev.jsonlBytes, 0, size);
}

/** Largest metas answer kept materialised in the cache; larger ones are streamed. */
const CACHE_ENTRY_MAX = 4 * 1024 * 1024;
/** Largest metas answer whose gzip encoding is cached (compressed in the thread pool, kept compressed). */
const CACHE_GZIP_SOURCE_MAX = 64 * 1024 * 1024;
/** Bytes of materialised metas answers kept per revision (oldest dropped first). */
const CACHE_BUDGET = 64 * 1024 * 1024;

interface CachedBody {
  body: Buffer;
}

/** Materialised metas answers of one revision, by query key and encoding (a revision never changes). */
class MetasCache {
  readonly lastModified: string;
  readonly #entries = new Map<string, CachedBody | Promise<CachedBody>>();
  #bytes = 0;
  constructor(rev: CatalogRevision) {
    this.lastModified = rev.lastModified.toUTCString();
  }
  get(key: string): CachedBody | Promise<CachedBody> | undefined {
    return this.#entries.get(key);
  }
  set(key: string, v: CachedBody | Promise<CachedBody>): void {
    this.#entries.set(key, v);
    if (v instanceof Promise) {
      v.then(
        (b) => {
          if (this.#entries.get(key) === v) this.#entries.set(key, b);
          this.#account(b.body.length);
        },
        () => this.#entries.delete(key),
      );
    } else this.#account(v.body.length);
  }
  #account(n: number): void {
    this.#bytes += n;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= CACHE_BUDGET) break;
      if (e instanceof Promise) continue;
      this.#entries.delete(k);
      this.#bytes -= e.body.length;
    }
  }
}

const metasCaches = new WeakMap<CatalogRevision, MetasCache>();

function metasCache(rev: CatalogRevision): MetasCache {
  let c = metasCaches.get(rev);
  if (!c) metasCaches.set(rev, (c = new MetasCache(rev)));
  return c;
}

function concatLines(rev: CatalogRevision, ids: Uint32Array, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let off = 0;
  for (const i of ids) off += rev.line(i).copy(out, off);
  return out;
}

/** Gzip in the thread pool. */
function gzipAsync(plain: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => gzipCb(plain, (err, out) => (err ? reject(err) : resolve(out))));
}

function serveMetas(
  rev: CatalogRevision,
  ids: Uint32Array,
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ReqCtx,
  gzipMin: number,
  queryKey: string,
): void {
  const size = rev.byteLength(ids);
  const useGzip = size >= gzipMin && acceptsGzip(req.headers["accept-encoding"]);
  const tag = `${rev.etag.slice(0, -1)}.${hashKey(queryKey)}`;
  const etag = useGzip ? `${tag}-gzip"` : `${tag}"`;
  const cache = metasCache(rev);
  res.setHeader("Content-Type", "application/jsonl");
  res.setHeader("Vary", "Accept-Encoding");
  res.setHeader("Last-Modified", cache.lastModified);
  res.setHeader("ETag", etag);
  const pre = checkPreconditions(req, etag, rev.lastModified);
  if (pre !== 0) return finishPrecondition(res, pre);
  if (size <= CACHE_ENTRY_MAX || (useGzip && size <= CACHE_GZIP_SOURCE_MAX)) {
    // Built once per revision and query: identity is a copy of the lines, gzip is compressed off the event loop.
    const key = useGzip ? `${queryKey}\u0000gzip` : queryKey;
    let hit = cache.get(key);
    if (hit === undefined) {
      // lines in memory are copied at once; lines in the index file are read in the thread pool
      if (rev.jsonlBytes.inMemory) {
        const plain = concatLines(rev, ids, size);
        hit = useGzip ? gzipAsync(plain).then((body) => ({ body })) : { body: plain };
      } else {
        const plain = rev.concatLines(ids, size);
        hit = plain.then(async (b) => ({ body: useGzip ? await gzipAsync(b) : b }));
      }
      cache.set(key, hit);
    }
    const send = (b: CachedBody): void => {
      if (res.destroyed) return;
      if (useGzip) {
        ctx.encoding = "gzip";
        res.setHeader("Content-Encoding", "gzip");
      }
      res.setHeader("Content-Length", b.body.length);
      res.writeHead(200);
      if (req.method === "HEAD") return endEmpty(res);
      ctx.bytes += b.body.length;
      res.end(b.body);
    };
    if (hit instanceof Promise) hit.then(send, () => res.destroy());
    else send(hit);
    return;
  }
  if (useGzip) {
    ctx.encoding = "gzip";
    res.setHeader("Content-Encoding", "gzip");
  } else res.setHeader("Content-Length", size);
  res.writeHead(200);
  if (req.method === "HEAD") return endEmpty(res);
  const source = Readable.from(rev.lineChunks(ids, CHUNK), { objectMode: false });
  const counted = source.on("data", (c: Buffer) => {
    if (!useGzip) ctx.bytes += c.length;
  });
  const done = useGzip ? pipeline(counted, createGzip(), countBytes(ctx), res) : pipeline(counted, res);
  done.catch(() => res.destroy());
}

function countBytes(ctx: ReqCtx): (src: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
  return async function* (src) {
    for await (const c of src) {
      ctx.bytes += c.length;
      yield c;
    }
  };
}

/** How much of a file-backed body is read at a time. */
const FILE_READ = 1024 * 1024;

/**
 * Writes bytes [start, end) of `bytes`: a buffer as {@link sendBuffer} does, a file range in pieces
 * read in the thread pool, each written in chunks with back-pressure; stops when the client goes away.
 */
function sendBytes(res: ServerResponse, ctx: ReqCtx, bytes: Bytes, start: number, end: number): void {
  if (bytes.inMemory) return sendBuffer(res, ctx, bytes.sliceSync(start, end));
  let pos = start;
  const next = (): void => {
    if (res.destroyed) return;
    if (pos >= end) return void res.end();
    const to = Math.min(pos + FILE_READ, end);
    bytes.slice(pos, to).then(
      (piece) => {
        pos = to;
        writeChunks(res, ctx, piece, next);
      },
      () => res.destroy(),
    );
  };
  next();
}

/** Writes `body` in chunks, waiting for `drain`; calls `done` when all is written (not when the client left). */
function writeChunks(res: ServerResponse, ctx: ReqCtx, body: Buffer, done: () => void): void {
  let off = 0;
  const pump = (): void => {
    while (off < body.length) {
      if (res.destroyed) return;
      const end = Math.min(off + CHUNK, body.length);
      const chunk = body.subarray(off, end);
      off = end;
      ctx.bytes += chunk.length;
      if (!res.write(chunk)) {
        res.once("drain", pump);
        return;
      }
    }
    done();
  };
  pump();
}

/** Writes a buffer in chunks, waiting for `drain`; stops when the client goes away. */
function sendBuffer(res: ServerResponse, ctx: ReqCtx, body: Buffer): void {
  writeChunks(res, ctx, body, () => res.end());
}

function endEmpty(res: ServerResponse): void {
  res.end();
}

function sendText(res: ServerResponse, ctx: ReqCtx, status: number, text: string, head = false): void {
  const body = Buffer.from(text + "\n");
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.writeHead(status);
  if (head) return void res.end();
  ctx.bytes += body.length;
  res.end(body);
}

/** Each served catalog's revision number and content size (`/all`, in bytes). */
function catalogMetrics(store: CatalogStore): MetricFamily[] {
  const served = store.names().flatMap((n) => {
    const r = store.get(n);
    return r ? [{ n, r }] : [];
  });
  return [
    {
      name: "opcat_catalog_revision",
      help: "Revision number of each served catalog's content (it increases on reloads).",
      type: "gauge",
      samples: served.map(({ n, r }) => [{ catalog: n }, r.serial]),
    },
    {
      name: "opcat_catalog_bytes",
      help: "Size of each served catalog's content (its /all answer), in bytes.",
      type: "gauge",
      samples: served.map(({ n, r }) => [{ catalog: n }, r.size]),
    },
  ];
}

/** Go's http.Error: plain text, nosniff, the message and a newline. */
function textError(res: ServerResponse, ctx: ReqCtx, status: number, message: string, allow?: string): void {
  for (const h of ["Content-Encoding", "ETag", "Last-Modified", "Accept-Ranges", "Vary"]) res.removeHeader(h);
  res.setHeader("X-Content-Type-Options", "nosniff");
  if (allow) res.setHeader("Allow", allow);
  sendText(res, ctx, status, message);
}

/** Whether an Accept-Encoding header accepts gzip (q > 0, directly or through `*`). */
export function acceptsGzip(h: string | undefined): boolean {
  if (!h) return false;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of h.split(",")) {
    const [coding, ...params] = part.trim().split(";");
    let qv = 1;
    for (const p of params) {
      const [k, v] = p.trim().split("=");
      if (k.trim().toLowerCase() === "q") qv = Number(v);
    }
    if (Number.isNaN(qv)) qv = 0;
    const c = coding.trim().toLowerCase();
    if (c === "gzip" || c === "x-gzip") gzip = Math.max(gzip ?? 0, qv);
    else if (c === "*") star = qv;
  }
  if (gzip !== undefined) return gzip > 0;
  return (star ?? 0) > 0;
}

function hashKey(s: string): string {
  // FNV-1a 32-bit, enough to tell queries apart inside one revision's tag.
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/** Starts the HTTP server. */
export async function startHttpServer(store: CatalogStore, opts: HttpServeOptions = {}): Promise<HttpServerHandle> {
  // request heads up to 1 MiB, as Go's net/http (DefaultMaxHeaderBytes) that catalogd uses; Node answers 431 beyond
  const handler = createCatalogHandler(store, opts);
  const serverOptions = { keepAliveTimeout: 5000, maxHeaderSize: 1 << 20 };
  const server: Server = opts.tls
    ? createHttpsServer({ ...serverOptions, cert: opts.tls.cert, key: opts.tls.key, minVersion: "TLSv1.2" }, handler)
    : createServer(serverOptions, handler);
  server.timeout = opts.idleTimeoutMs ?? 300_000;
  // No limit on the number of header fields, as Go's net/http: only the head's size counts. Node's default
  // (2000, counted as names and values) refused 1,000 short headers with the 431 below, whose message names
  // the 1 MiB size limit the request was far from.
  server.maxHeadersCount = 0;
  // A head over the limit gets a readable 431 (Node's default answer is followed by a reset that can
  // swallow it while the client is still sending): answer, stop reading into memory, close gracefully.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (err.code === "HPE_HEADER_OVERFLOW" && socket.writable) {
      const body = "request head (request line and headers) larger than the 1 MiB limit\n";
      socket.end(
        `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      socket.on("data", () => {}); // drain what the client still sends, so that closing does not reset
      setTimeout(() => socket.destroy(), 5_000).unref();
      return;
    }
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 8080, opts.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    address,
    setCerts(certs) {
      if (!(server instanceof HttpsServer)) throw new Error("setCerts: the server serves plain HTTP");
      server.setSecureContext({ cert: certs.cert, key: certs.key });
    },
    async close(graceMs = 10_000) {
      // a request computing in the resolver's worker is stopped (503), not waited for
      await handler.close();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
