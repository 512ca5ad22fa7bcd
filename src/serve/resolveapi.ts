/**
 * Seed 002's "Resolver API" over the served catalogs:
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
 * Errors are JSON `{"error": {"code", "message", "problems"?}}`: 400 (bad JSON, bad fields, bad
 * query or documents), 404 (unknown catalog), 405 (not POST), 413 (body over the limit), 415 (not
 * application/json), 503 (no catalog has valid content yet).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { loadText } from "../fbc/load.js";
import { validateCatalog } from "../fbc/validate.js";
import { CatalogSet, parseInputDocuments, query, resolve, type InputDocuments, type NamedCatalog } from "../resolve/index.js";
import type { CatalogRevision } from "./revision.js";
import type { CatalogStore } from "./store.js";

export const QUERY_PATH = "/api/v1/query";
export const RESOLVE_PATH = "/api/v1/resolve";

export interface ResolverApiOptions {
  /** Catalog priorities by name (higher preferred; default 0). */
  priorities?: ReadonlyMap<string, number>;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxRequestBytes?: number;
}

export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems?: unknown[],
  ) {
    super(message);
  }
}

/** What the resolver needs of one revision, derived once from its content. */
const resolverParts = new WeakMap<CatalogRevision, Pick<NamedCatalog, "model" | "others">>();

function partsOf(rev: CatalogRevision): Pick<NamedCatalog, "model" | "others"> {
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
  readonly #store: CatalogStore;
  readonly #priorities: ReadonlyMap<string, number>;
  readonly #maxBytes: number;
  /** Catalog sets by revision combination (a handful at most: reloads replace combinations). */
  readonly #sets = new Map<string, CatalogSet>();

  constructor(store: CatalogStore, opts: ResolverApiOptions = {}) {
    this.#store = store;
    this.#priorities = opts.priorities ?? new Map();
    this.#maxBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  }

  /** Answers `req` if its path is a resolver endpoint; returns whether it did. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (path !== QUERY_PATH && path !== RESOLVE_PATH) return false;
    this.#serve(req, res, path).catch((e: unknown) => {
      const err = e instanceof ApiError ? e : new ApiError(500, "SERVE_INTERNAL", "internal error");
      sendJson(res, err.status, { error: { code: err.code, message: err.message, ...(err.problems ? { problems: err.problems } : {}) } }, err.status === 405 ? { Allow: "POST" } : undefined);
      if (err.status === 413) req.destroy();
    });
    return true;
  }

  async #serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (req.method !== "POST") throw new ApiError(405, "SERVE_API_METHOD", `${req.method ?? ""} is not allowed on ${path}: use POST with a JSON body`);
    const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") throw new ApiError(415, "SERVE_API_CONTENT_TYPE", `the request body must be JSON (Content-Type: application/json), got ${JSON.stringify(type)}`);
    const body = await readBody(req, this.#maxBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw new ApiError(400, "SERVE_API_BAD_JSON", `the request body is not JSON: ${(e as Error).message}`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new ApiError(400, "SERVE_API_BAD_REQUEST", "the request body must be a JSON object");
    const obj = parsed as Record<string, unknown>;
    const set = this.catalogSet(obj.catalogs);
    if (path === QUERY_PATH) {
      if (typeof obj.query !== "string" || obj.query.trim() === "") throw new ApiError(400, "SERVE_API_BAD_REQUEST", '"query" must be a non-empty string: an olm.constraint value as JSON text, or a CEL rule');
      let bundles;
      try {
        bundles = query(set, obj.query);
      } catch (e) {
        throw new ApiError(400, "RESOLVE_QUERY_INVALID", `invalid query: ${(e as Error).message}`);
      }
      sendJson(res, 200, { bundles });
      return;
    }
    const docs: InputDocuments = { inputs: [], classes: [], installed: [], errors: [] };
    for (const field of ["inputs", "installed"] as const) {
      const list = obj[field];
      if (list === undefined && field === "installed") continue;
      if (!Array.isArray(list)) throw new ApiError(400, "SERVE_API_BAD_REQUEST", `"${field}" must be a list of documents (Input, InputClass, Operator, Installed)`);
      list.forEach((d, i) => parseInputDocuments(JSON.stringify(d), `${field}[${i}]`, docs));
    }
    if (docs.errors.length > 0) throw new ApiError(400, "RESOLVE_INPUT_INVALID", docs.errors.join("\n"), docs.errors);
    if (docs.inputs.length === 0) throw new ApiError(400, "RESOLVE_INPUT_INVALID", "the request defines no Input or Operator");
    const cluster = { ...docs.cluster };
    if (obj.cluster !== undefined) {
      const c = obj.cluster as Record<string, unknown> | null;
      if (c === null || typeof c !== "object" || Array.isArray(c)) throw new ApiError(400, "SERVE_API_BAD_REQUEST", '"cluster" must be an object {kubernetesVersion?, openshiftVersion?}');
      for (const k of ["kubernetesVersion", "openshiftVersion"] as const) {
        if (c[k] === undefined) continue;
        if (typeof c[k] !== "string") throw new ApiError(400, "SERVE_API_BAD_REQUEST", `"cluster.${k}" must be a string`);
        cluster[k] = c[k] as string;
      }
    }
    if (obj.trace !== undefined && typeof obj.trace !== "boolean") throw new ApiError(400, "SERVE_API_BAD_REQUEST", '"trace" must be a boolean');
    const rs = resolve({ catalogs: set, inputs: docs.inputs, classes: docs.classes, installed: docs.installed, cluster, trace: obj.trace === true });
    sendJson(res, rs.resolved ? 200 : 409, rs);
  }

  /** The catalog set over the named (default: all) catalogs' current revisions. */
  catalogSet(names: unknown): CatalogSet {
    let wanted: string[];
    if (names === undefined) wanted = this.#store.names().filter((n) => this.#store.get(n) !== undefined);
    else if (Array.isArray(names) && names.every((n) => typeof n === "string")) wanted = names as string[];
    else throw new ApiError(400, "SERVE_API_BAD_REQUEST", '"catalogs" must be a list of catalog names');
    if (wanted.length === 0) {
      throw names === undefined ? new ApiError(503, "SERVE_API_NOT_READY", "no catalog has valid content yet") : new ApiError(400, "SERVE_API_BAD_REQUEST", '"catalogs" is empty');
    }
    const revs: CatalogRevision[] = [];
    for (const n of wanted) {
      const rev = this.#store.get(n);
      if (!rev) {
        if (this.#store.names().includes(n)) throw new ApiError(503, "SERVE_API_NOT_READY", `catalog ${JSON.stringify(n)} has no valid content yet`);
        throw new ApiError(404, "SERVE_API_UNKNOWN_CATALOG", `unknown catalog ${JSON.stringify(n)}; served: ${this.#store.names().join(", ")}`);
      }
      revs.push(rev);
    }
    const key = revs.map((r) => `${r.catalog}@${r.serial}`).sort().join(",");
    let set = this.#sets.get(key);
    if (!set) {
      set = new CatalogSet(revs.map((r) => ({ name: r.catalog, priority: this.#priorities.get(r.catalog) ?? 0, ...partsOf(r) })));
      // Keep the newest few combinations: older ones belong to replaced revisions.
      if (this.#sets.size >= 8) this.#sets.delete(this.#sets.keys().next().value as string);
      this.#sets.set(key, set);
    }
    return set;
  }
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > max) return Promise.reject(tooLarge(max));
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on("data", (c: Buffer) => {
      n += c.length;
      if (n > max) {
        req.removeAllListeners("data");
        req.pause();
        reject(tooLarge(max));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolveBody(Buffer.concat(chunks, n).toString("utf8")));
    req.on("error", reject);
  });
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "SERVE_API_TOO_LARGE", `the request body is larger than ${max} bytes (--max-request-bytes)`);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  if (res.headersSent) return void res.destroy();
  const body = Buffer.from(JSON.stringify(value) + "\n");
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Content-Length", body.length);
  if (status === 413) res.setHeader("Connection", "close");
  for (const [k, v] of Object.entries(headers ?? {})) res.setHeader(k, v);
  res.writeHead(status);
  res.end(body);
}
