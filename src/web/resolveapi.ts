/**
 * The resolver API over the served catalogs (Deppy's "Resolver API", docs/cluster.md):
 *
 *   POST /api/v1/query    {"query": "<olm.constraint JSON or CEL>", "catalogs"?: [names]}
 *                         → 200 {"bundles": [...]}            (what `opcat query -o json` prints)
 *   POST /api/v1/resolve  {"inputs": [documents], "installed"?: [documents],
 *                          "cluster"?: {"kubernetesVersion"?, "openshiftVersion"?},
 *                          "trace"?: bool, "catalogs"?: [names]}
 *                         → 200 resolveset when resolved, 409 resolveset with its failure conditions
 *
 * `inputs` and `installed` hold the documents `opcat resolve --input/--installed` reads (Input,
 * InputClass, Operator, Installed), as JSON. The catalogs are the store's current revisions with
 * their priorities; the resolver's catalog set is built once per combination of revisions (on the
 * first request that needs it) and dropped when a reload replaces one of them.
 *
 * `installed` may also be a single Installed document. Unknown top-level fields are rejected.
 *
 * Errors are JSON `{"error": {"code", "message", "problems"?}}`: 400 (bad JSON, bad or unknown
 * fields, bad query, bad documents or constraints), 404 (unknown catalog, or another path under
 * /api/), 405 (not POST), 413 (body over the limit: reading stops there), 415 (not
 * application/json), 422 (the request ran out of its budget), 503 (no catalog has valid content yet,
 * too many requests waiting, or the server is stopping), 500 (a bug: no details leak to the client;
 * the cause goes to the error log).
 *
 * Over HTTP, requests are answered in a worker thread (resolveworker.ts) running the same `answer`,
 * one at a time, each within a budget (`budgetMs`, `--resolver-budget`): CEL rules and resolutions
 * can burn CPU, and the server's event loop must stay free for other requests and for SIGTERM. A
 * request over its budget has the worker terminated (a fresh one takes the next request). The worker
 * keeps its own copy of each served revision's lines, sent once per revision, and derives the
 * resolver's model from them before a request's budget starts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Worker } from "node:worker_threads";
import { loadText } from "../fbc/load.js";
import { validateCatalog } from "../fbc/validate.js";
import {
  CatalogSet,
  query,
  resolve,
  type InputDocuments,
  type NamedCatalog,
  type ResolveSet,
} from "../resolve/index.js";
import { addDocument } from "../resolve/inputs.js";
import type { JsonValue } from "../fbc/types.js";
import type { CatalogRevision } from "../serve/revision.js";
import { HttpError, readBody } from "./http.js";

export const QUERY_PATH = "/api/v1/query";
export const RESOLVE_PATH = "/api/v1/resolve";
/** Paths under this prefix belong to the resolver API (others answer a JSON 404). */
const API_PREFIX = "/api/";

export interface ResolverApiOptions {
  /** Catalog priorities by name (higher preferred; default 0). */
  priorities?: ReadonlyMap<string, number>;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxRequestBytes?: number;
  /** How long one request may compute over HTTP, in ms (default 10 s); then it is stopped with a 422. */
  budgetMs?: number;
  /** Receives one entry per 500 answer, with what is needed to find the cause (never sent to the client). */
  errorLog?: (entry: Record<string, unknown>) => void;
}

export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
export const DEFAULT_BUDGET_MS = 10_000;
/** Requests waiting for the worker beyond the running one; more are answered 503 at once. */
const MAX_WAITING = 64;

/** What the resolver reads of a served revision (a CatalogRevision has it). */
export type ResolverRevision = Pick<CatalogRevision, "catalog" | "serial" | "jsonl">;

/** The served catalogs, by name in registration order, with their current revisions (a CatalogStore is one). */
export interface RevisionSource {
  names(): string[];
  get(name: string): ResolverRevision | undefined;
}

/** One entry of an error's `problems`. */
export interface ApiProblem {
  code: string;
  message: string;
}

/** The JSON body of every resolver API error. */
export interface ApiErrorBody {
  error: { code: string; message: string; problems?: ApiProblem[] };
}

/** What the resolver API answered: the HTTP status and the JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** For a 500: the error behind it, with its stack (for the error log, not for the client). */
  cause?: string;
}

const QUERY_FIELDS = new Set(["query", "catalogs"]);
const RESOLVE_FIELDS = new Set(["inputs", "installed", "cluster", "trace", "catalogs"]);

/** What the resolver needs of one revision, derived once from its content. */
const resolverParts = new WeakMap<ResolverRevision, Pick<NamedCatalog, "model" | "others">>();

/** Derives (once) the resolver's model of a revision. */
export function partsOf(rev: ResolverRevision): Pick<NamedCatalog, "model" | "others"> {
  let p = resolverParts.get(rev);
  if (!p) {
    // The revision's JSON lines are a valid catalog (it was validated before it was served).
    const loaded = loadText(rev.jsonl.toString("utf8"), `${rev.catalog}.jsonl`);
    const v = validateCatalog(loaded.config);
    p = { model: v.model, others: loaded.config.others };
    resolverParts.set(rev, p);
  }
  return p;
}

/** The resolver endpoints of `opcat serve`; `handle` answers their paths and returns false for others. */
export class ResolverApi {
  readonly #store: RevisionSource;
  readonly #priorities: ReadonlyMap<string, number>;
  readonly #maxBytes: number;
  readonly #budgetMs: number;
  readonly #errorLog: ((entry: Record<string, unknown>) => void) | undefined;
  /** Catalog sets by revision combination; combinations holding a replaced revision are dropped. */
  readonly #sets = new Map<string, { revs: ResolverRevision[]; set: CatalogSet }>();
  #builds = 0;
  #runner: WorkerRunner | undefined;
  #closed = false;

  constructor(store: RevisionSource, opts: ResolverApiOptions = {}) {
    this.#store = store;
    this.#priorities = opts.priorities ?? new Map();
    this.#maxBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.#budgetMs = opts.budgetMs ?? DEFAULT_BUDGET_MS;
    this.#errorLog = opts.errorLog;
  }

  /**
   * Answers like `answer`, in the worker thread and within the budget: a 422 when the request needs
   * longer, a 503 when too many wait or the API is closed.
   */
  answerInWorker(path: string, body: string): Promise<ApiAnswer> {
    if (this.#closed) return Promise.resolve(errorAnswer(stopping()));
    this.#runner ??= new WorkerRunner(this.#store, this.#priorities, this.#budgetMs);
    return this.#runner.run(path, body);
  }

  /** Stops the worker: a running request and the waiting ones are answered 503. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#runner?.close();
  }

  /** How many catalog sets were built so far (each combination of revisions is built once). */
  get catalogSetBuilds(): number {
    return this.#builds;
  }

  /**
   * Answers `req` if its path is under /api/; returns whether it did. The bytes of the body sent
   * are added to `ctx.bytes` (for the access log).
   */
  handle(req: IncomingMessage, res: ServerResponse, path: string, ctx?: { bytes: number }): boolean {
    if (!path.startsWith(API_PREFIX)) return false;
    void this.#serve(req, path).then((a) => {
      if (a.status >= 500 && a.cause !== undefined)
        this.#errorLog?.({ level: "error", msg: "internal error", method: req.method, path, error: a.cause });
      if (res.destroyed) return;
      if (res.headersSent) return void res.destroy();
      const body = Buffer.from(JSON.stringify(a.body) + "\n");
      res.setHeader("Content-Type", "application/json");
      res.setHeader("Content-Length", body.length);
      for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
      res.writeHead(a.status);
      if (ctx) ctx.bytes += body.length;
      res.end(body);
      // The rest of an oversized body is never read: close the connection once the answer is out.
      if (a.status === 413) res.once("finish", () => req.destroy());
    });
    return true;
  }

  /** Reads and answers one request (never rejects: failures are error answers). */
  async #serve(req: IncomingMessage, path: string): Promise<ApiAnswer> {
    try {
      if (path !== QUERY_PATH && path !== RESOLVE_PATH)
        throw new HttpError(
          404,
          "SERVE_API_NOT_FOUND",
          `no resolver API at ${path}: use POST ${QUERY_PATH} or POST ${RESOLVE_PATH}`,
        );
      if (req.method !== "POST")
        throw new HttpError(
          405,
          "SERVE_API_METHOD",
          `${req.method ?? ""} is not allowed on ${path}: use POST with a JSON body`,
        );
      const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      if (type !== "application/json")
        throw new HttpError(
          415,
          "SERVE_API_CONTENT_TYPE",
          `the request body must be JSON (Content-Type: application/json), got ${JSON.stringify(type)}`,
        );
      const body = await readBody(req, this.#maxBytes, () => tooLarge(this.#maxBytes));
      return await this.answerInWorker(path, body);
    } catch (e) {
      return errorAnswer(e);
    }
  }

  /**
   * Answers a request body (JSON text) for `path` (QUERY_PATH or RESOLVE_PATH) over the current
   * revisions, without HTTP: the status and JSON value the server sends.
   */
  answer(path: string, body: string): ApiAnswer {
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch (e) {
        throw new HttpError(400, "SERVE_API_BAD_JSON", `the request body is not JSON: ${(e as Error).message}`);
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
        throw new HttpError(400, "SERVE_API_BAD_REQUEST", "the request body must be a JSON object");
      const obj = parsed as Record<string, unknown>;
      const allowed = path === QUERY_PATH ? QUERY_FIELDS : RESOLVE_FIELDS;
      for (const k of Object.keys(obj)) {
        if (!allowed.has(k))
          throw new HttpError(
            400,
            "SERVE_API_BAD_REQUEST",
            `unknown field ${JSON.stringify(k)} (expected ${[...allowed].join(", ")})`,
          );
      }
      const names = catalogNames(obj.catalogs);
      if (path === QUERY_PATH) {
        if (typeof obj.query !== "string" || obj.query.trim() === "")
          throw new HttpError(
            400,
            "SERVE_API_BAD_REQUEST",
            '"query" must be a non-empty string: an olm.constraint value as JSON text, or a CEL rule',
          );
        const set = this.catalogSet(names);
        let bundles;
        try {
          bundles = query(set, obj.query);
        } catch (e) {
          throw new HttpError(400, "RESOLVE_QUERY_INVALID", `invalid query: ${(e as Error).message}`);
        }
        return { status: 200, body: { bundles } };
      }
      const docs = resolveDocuments(obj);
      const set = this.catalogSet(names);
      const rs = resolve({
        catalogs: set,
        inputs: docs.inputs,
        classes: docs.classes,
        installed: docs.installed,
        cluster: docs.cluster,
        trace: obj.trace === true,
      });
      const invalid = invalidConstraints(rs);
      if (invalid.length > 0)
        throw new HttpError(400, "RESOLVE_INPUT_INVALID", invalid.map((p) => p.message).join("\n"), invalid);
      return { status: rs.resolved ? 200 : 409, body: rs };
    } catch (e) {
      return errorAnswer(e);
    }
  }

  /**
   * The catalog set over the named catalogs' current revisions (undefined: every catalog with
   * content), in registration order. Built once per combination of revisions; throws an HttpError
   * (404 unknown name, 503 no content yet).
   */
  catalogSet(names?: readonly string[]): CatalogSet {
    const all = this.#store.names();
    let wanted: string[];
    if (names === undefined) wanted = all.filter((n) => this.#store.get(n) !== undefined);
    else {
      for (const n of names) {
        if (!all.includes(n))
          throw new HttpError(
            404,
            "SERVE_API_UNKNOWN_CATALOG",
            `unknown catalog ${JSON.stringify(n)}; served: ${all.join(", ")}`,
          );
      }
      wanted = all.filter((n) => names.includes(n));
    }
    if (wanted.length === 0) throw new HttpError(503, "SERVE_API_NOT_READY", "no catalog has valid content yet");
    const revs: ResolverRevision[] = [];
    for (const n of wanted) {
      const rev = this.#store.get(n);
      if (!rev)
        throw new HttpError(503, "SERVE_API_NOT_READY", `catalog ${JSON.stringify(n)} has no valid content yet`);
      revs.push(rev);
    }
    const key = revs.map((r) => `${r.catalog}@${r.serial}`).join(",");
    const hit = this.#sets.get(key);
    if (hit?.revs.every((r, i) => r === revs[i])) return hit.set;
    // A combination holding a revision that is no longer served will not be asked for again.
    for (const [k, v] of this.#sets) if (v.revs.some((r) => this.#store.get(r.catalog) !== r)) this.#sets.delete(k);
    const set = new CatalogSet(
      revs.map((r) => ({ name: r.catalog, priority: this.#priorities.get(r.catalog) ?? 0, ...partsOf(r) })),
    );
    this.#builds++;
    this.#sets.set(key, { revs, set });
    return set;
  }
}

function catalogNames(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((n) => typeof n === "string"))
    throw new HttpError(400, "SERVE_API_BAD_REQUEST", '"catalogs" must be a list of catalog names');
  if (v.length === 0)
    throw new HttpError(400, "SERVE_API_BAD_REQUEST", '"catalogs" is empty: leave it out to use every served catalog');
  return v as string[];
}

/** The documents of a resolve request, checked like `opcat resolve` checks its files. */
function resolveDocuments(obj: Record<string, unknown>): InputDocuments {
  const docs: InputDocuments = { inputs: [], classes: [], installed: [], errors: [] };
  if (!Array.isArray(obj.inputs))
    throw new HttpError(
      400,
      "SERVE_API_BAD_REQUEST",
      '"inputs" must be a list of documents (Input, InputClass, Operator)',
    );
  const add = (d: unknown, where: string): void => {
    if (d === null || typeof d !== "object" || Array.isArray(d))
      docs.errors.push(`${where}: expected an object with a kind`);
    else addDocument(d as JsonValue, where, docs);
  };
  obj.inputs.forEach((d, i) => add(d, `inputs[${i}]`));
  if (obj.installed !== undefined) {
    if (Array.isArray(obj.installed)) obj.installed.forEach((d, i) => add(d, `installed[${i}]`));
    else if (obj.installed !== null && typeof obj.installed === "object") add(obj.installed, "installed");
    else
      throw new HttpError(
        400,
        "SERVE_API_BAD_REQUEST",
        '"installed" must be an Installed document or a list of documents',
      );
  }
  if (obj.cluster !== undefined) {
    const c = obj.cluster as Record<string, unknown> | null;
    if (c === null || typeof c !== "object" || Array.isArray(c))
      throw new HttpError(
        400,
        "SERVE_API_BAD_REQUEST",
        '"cluster" must be an object {kubernetesVersion?, openshiftVersion?}',
      );
    const cluster = { ...docs.cluster };
    for (const k of Object.keys(c)) {
      if (k !== "kubernetesVersion" && k !== "openshiftVersion")
        throw new HttpError(
          400,
          "SERVE_API_BAD_REQUEST",
          `unknown field "cluster.${k}" (expected kubernetesVersion, openshiftVersion)`,
        );
      if (typeof c[k] !== "string")
        throw new HttpError(400, "SERVE_API_BAD_REQUEST", `"cluster.${k}" must be a string`);
      cluster[k] = c[k] as string;
    }
    docs.cluster = cluster;
  }
  if (obj.trace !== undefined && typeof obj.trace !== "boolean")
    throw new HttpError(400, "SERVE_API_BAD_REQUEST", '"trace" must be a boolean');
  if (docs.errors.length > 0) {
    throw new HttpError(
      400,
      "RESOLVE_INPUT_INVALID",
      docs.errors.join("\n"),
      docs.errors.map((message) => ({ code: "RESOLVE_INPUT_INVALID", message })),
    );
  }
  if (docs.inputs.length === 0)
    throw new HttpError(400, "RESOLVE_INPUT_INVALID", "the request defines no Input or Operator");
  return docs;
}

/** Inputs whose constraints are malformed (the resolver reports them as InvalidConstraint conditions). */
function invalidConstraints(rs: ResolveSet): ApiProblem[] {
  const out: ApiProblem[] = [];
  for (const s of rs.inputs) {
    for (const c of s.conditions)
      if (c.status === "True" && c.reason === "InvalidConstraint")
        out.push({ code: "RESOLVE_INPUT_INVALID", message: c.message });
  }
  return out;
}

function errorAnswer(e: unknown): ApiAnswer {
  const err = e instanceof HttpError ? e : new HttpError(500, "SERVE_INTERNAL", "internal error");
  const body: ApiErrorBody = {
    error: { code: err.code, message: err.message, ...(err.problems ? { problems: err.problems } : {}) },
  };
  const headers: Record<string, string> = {};
  if (err.status === 405) headers.Allow = "POST";
  if (err.status === 413) headers.Connection = "close";
  if (err.status === 503 && err.code === "SERVE_API_BUSY") headers["Retry-After"] = "1";
  const answer: ApiAnswer = { status: err.status, body, headers };
  if (!(e instanceof HttpError)) answer.cause = e instanceof Error ? (e.stack ?? e.message) : String(e);
  return answer;
}

function stopping(): HttpError {
  return new HttpError(503, "SERVE_API_STOPPING", "the server is stopping");
}

/** A message to the worker: a request, with the revisions it does not have yet. */
export interface WorkerRequest {
  path: string;
  body: string;
  /** Every served catalog in registration order, with the serial of its current revision (null: none). */
  catalogs: [string, number | null][];
  /** Revisions the worker has not been sent before. */
  revisions: { catalog: string; serial: number; jsonl: Uint8Array }[];
}

/** A message from the worker: the catalogs are ready (the budget starts), or the answer. */
export type WorkerReply = { ready: true } | { answer: ApiAnswer };

interface Job {
  path: string;
  body: string;
  done(a: ApiAnswer): void;
}

/** Runs requests in one worker thread, one at a time, each within the budget. */
class WorkerRunner {
  readonly #source: RevisionSource;
  readonly #priorities: ReadonlyMap<string, number>;
  readonly #budgetMs: number;
  #worker: Worker | undefined;
  /** The serial of each catalog's revision the current worker has. */
  #sent = new Map<string, number>();
  #running: { job: Job; timer?: NodeJS.Timeout } | undefined;
  readonly #waiting: Job[] = [];
  #closed = false;

  constructor(source: RevisionSource, priorities: ReadonlyMap<string, number>, budgetMs: number) {
    this.#source = source;
    this.#priorities = priorities;
    this.#budgetMs = budgetMs;
  }

  run(path: string, body: string): Promise<ApiAnswer> {
    if (this.#closed) return Promise.resolve(errorAnswer(stopping()));
    if (this.#waiting.length >= MAX_WAITING)
      return Promise.resolve(
        errorAnswer(new HttpError(503, "SERVE_API_BUSY", "too many resolver requests are waiting; try again later")),
      );
    return new Promise((done) => {
      this.#waiting.push({ path, body, done });
      this.#next();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const j of this.#waiting.splice(0)) j.done(errorAnswer(stopping()));
    await this.#stop(errorAnswer(stopping()));
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // the compiled worker beside this module (dist/serve), or the source under tsx (tests)
    const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
    const w = new Worker(new URL(`./resolveworker${ext}`, import.meta.url), {
      workerData: { priorities: [...this.#priorities] },
    });
    w.on("message", (m: WorkerReply) => {
      const r = this.#running;
      if (!r || w !== this.#worker) return;
      if ("ready" in m) {
        r.timer = setTimeout(() => void this.#overBudget(), this.#budgetMs);
        return;
      }
      clearTimeout(r.timer);
      this.#running = undefined;
      r.job.done(m.answer);
      this.#next();
    });
    const fail = (e: Error): void => {
      if (w !== this.#worker) return;
      this.#worker = undefined;
      this.#sent.clear();
      const r = this.#running;
      this.#running = undefined;
      if (r) {
        clearTimeout(r.timer);
        r.job.done(errorAnswer(e));
      }
      this.#next();
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the resolver worker exited (code ${code})`)));
    this.#worker = w;
    this.#sent.clear();
    return w;
  }

  #next(): void {
    if (this.#running || this.#closed) return;
    const job = this.#waiting.shift();
    if (!job) {
      this.#worker?.unref();
      return;
    }
    const w = this.#start();
    w.ref();
    const catalogs: WorkerRequest["catalogs"] = [];
    const revisions: WorkerRequest["revisions"] = [];
    for (const name of this.#source.names()) {
      const rev = this.#source.get(name);
      catalogs.push([name, rev ? rev.serial : null]);
      if (rev && this.#sent.get(name) !== rev.serial) {
        // a view of a larger buffer would be copied whole: send just its bytes
        const jsonl = rev.jsonl.byteLength === rev.jsonl.buffer.byteLength ? rev.jsonl : Uint8Array.from(rev.jsonl);
        revisions.push({ catalog: name, serial: rev.serial, jsonl });
        this.#sent.set(name, rev.serial);
      }
    }
    this.#running = { job };
    const msg: WorkerRequest = { path: job.path, body: job.body, catalogs, revisions };
    w.postMessage(msg);
  }

  async #overBudget(): Promise<void> {
    const secs = this.#budgetMs / 1000;
    await this.#stop(
      errorAnswer(
        new HttpError(
          422,
          "SERVE_API_BUDGET",
          `the request needed more than its budget of ${secs}s (--resolver-budget) and was stopped: ` +
            "simplify the query or the Inputs",
        ),
      ),
    );
    this.#next();
  }

  /** Terminates the worker; the running request (if any) gets `answer`. */
  async #stop(answer: ApiAnswer): Promise<void> {
    const w = this.#worker;
    const r = this.#running;
    this.#worker = undefined;
    this.#running = undefined;
    this.#sent.clear();
    if (r) {
      clearTimeout(r.timer);
      r.job.done(answer);
    }
    if (w) await w.terminate();
  }
}

function tooLarge(max: number): HttpError {
  return new HttpError(
    413,
    "SERVE_API_TOO_LARGE",
    `the request body is larger than ${max} bytes (--max-request-bytes)`,
  );
}
