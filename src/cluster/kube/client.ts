/**
 * A small Kubernetes REST client for opcat's controllers. `@kubernetes/client-node` loads the
 * kubeconfig and supplies authentication (client certificates, tokens, exec plugins) and TLS; this
 * module speaks the REST API directly so that every verb a controller needs is uniform: typed paths
 * for any group/version/kind (found through discovery), server-side apply (also on `status`),
 * streaming watches, and errors as values with the API server's status reason.
 */
import https from "node:https";
import http from "node:http";
import { KubeConfig } from "./kubeconfig.js";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [k: string]: unknown;
}

/** Who a request is authenticated as (a SelfSubjectReview's or an admission request's userInfo). */
export interface UserInfo {
  username: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A Kubernetes API error (a non-2xx answer), with the `Status` object's reason and message. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly details: unknown;
  constructor(status: number, reason: string, message: string, details?: unknown) {
    super(message);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 404;
}
export function isForbidden(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 403;
}
export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 409;
}
export function isGone(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 410;
}

/** Where a kind lives in the API: its REST resource name and scope. */
export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
}

export interface ConnectOptions {
  /** A kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account). */
  kubeconfig?: string;
  /** A context of the kubeconfig (default: its current context). */
  context?: string;
  /** The field manager for server-side apply (default `opcat`). */
  fieldManager?: string;
}

export function loadKubeConfig(opts: ConnectOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) kc.setCurrentContext(opts.context);
  return kc;
}

export interface WatchEvent<T = KubeObject> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** How long one request (not a watch) may take before it is abandoned. */
export const REQUEST_TIMEOUT_MS = 90_000;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

/** Counts the requests made, per verb (for benchmarks and tests). */
export interface RequestStats {
  total: number;
  byVerb: Record<string, number>;
  /** By verb and resource (`GET instances`, `PUT inputs/status`, `WATCH bundles`), for finding who asks most. */
  byResource: Record<string, number>;
}

/** The resource a request path names (`instances`, `inputs/status`; `namespaces` for a namespace itself). */
export function resourceOfPath(path: string): string {
  const seg = path.split("?")[0].split("/").filter(Boolean);
  let rest = seg[0] === "api" ? seg.slice(2) : seg[0] === "apis" ? seg.slice(3) : seg;
  if (rest[0] === "namespaces" && rest.length > 2) rest = rest.slice(2);
  if (rest.length === 0) return seg.join("/") || "/";
  return rest.length >= 3 ? `${rest[0]}/${rest[2]}` : rest[0];
}

export class KubeClient implements KubeServer {
  readonly config: KubeConfig;
  readonly server: URL;
  readonly fieldManager: string;
  /** Requests made, shared with the clients made by {@link impersonating} (they count here too). */
  readonly stats: RequestStats;
  /** Told of every request sent (method, path with query, body): for tests that count requests per object. */
  readonly requestListeners: Set<(method: string, path: string, body: string | undefined) => void>;
  private readonly tls: Promise<https.RequestOptions>;
  /** The pool of short requests: bounded, so that a busy controller cannot flood the API server. */
  private readonly agent: https.Agent | http.Agent;
  /**
   * Watches, apart: each holds its connection for minutes, so in the bounded pool a process with more
   * informers than connections would queue every request behind them (admissions timing out).
   */
  private readonly watchAgent: https.Agent | http.Agent;
  private discovery = new Map<string, Promise<Map<string, ResourceInfo>>>();
  /** Impersonation headers (`Impersonate-User`, …) sent with every request of this client. */
  private readonly extraHeaders: Record<string, string>;
  private readonly owned: boolean;

  constructor(
    config: KubeConfig,
    opts: { fieldManager?: string } = {},
    shared?: { client: KubeClient; headers: Record<string, string> },
  ) {
    this.config = config;
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
    this.fieldManager = opts.fieldManager ?? "opcat";
    this.extraHeaders = shared?.headers ?? {};
    this.owned = !shared;
    const agent = (maxSockets: number) =>
      this.server.protocol === "https:"
        ? new https.Agent({ keepAlive: true, maxSockets })
        : new http.Agent({ keepAlive: true, maxSockets });
    this.stats = shared ? shared.client.stats : { total: 0, byVerb: {}, byResource: {} };
    this.requestListeners = shared ? shared.client.requestListeners : new Set();
    this.agent = shared ? shared.client.agent : agent(32);
    this.watchAgent = shared ? shared.client.watchAgent : agent(Infinity);
    this.tls = shared
      ? shared.client.tls
      : (async () => {
          const o: https.RequestOptions = {};
          await config.applyToHTTPSOptions(o);
          return o;
        })();
    if (shared) this.discovery = shared.client.discovery;
  }

  /**
   * A client acting as `user` through the API server's impersonation (the caller needs the
   * `impersonate` verb): every request is authorised, admitted and audited as that user, so that a
   * dry run tells exactly what the user could do. Shares this client's connections and discovery.
   */
  impersonating(user: { username: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> }) {
    const headers: Record<string, string> = { "Impersonate-User": user.username };
    // several values of one header: Node joins an array with ", ", which the API server splits again
    const groups = (user.groups ?? []).filter((g) => g !== "system:authenticated");
    const h = headers as Record<string, string | string[]>;
    if (groups.length > 0) h["Impersonate-Group"] = groups;
    if (user.uid) headers["Impersonate-Uid"] = user.uid;
    for (const [k, vs] of Object.entries(user.extra ?? {})) h[`Impersonate-Extra-${encodeURIComponent(k)}`] = vs;
    return new KubeClient(this.config, { fieldManager: this.fieldManager }, { client: this, headers });
  }

  static connect(opts: ConnectOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(opts), { fieldManager: opts.fieldManager });
  }

  /**
   * The user this client authenticates as, e.g. for SelfSubjectReview
   * (`/apis/authentication.k8s.io/v1/selfsubjectreviews`).
   */
  async whoami(): Promise<UserInfo> {
    const r = await this.request<{ status: { userInfo: Partial<UserInfo> & { username: string } } }>(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      {
        body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      },
    );
    const u = r.status.userInfo;
    return {
      username: u.username,
      groups: u.groups ?? [],
      ...(u.uid ? { uid: u.uid } : {}),
      ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}),
    };
  }

  close(): void {
    if (!this.owned) return;
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  private async open(method: string, path: string, opts: RequestOptions): Promise<http.IncomingMessage> {
    const tls = await this.tls;
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body =
      opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    const headers: Record<string, string> = {
      Accept: "application/json",
      ...((tls.headers as Record<string, string>) ?? {}),
      ...this.extraHeaders,
    };
    if (body !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    this.stats.total++;
    this.stats.byVerb[method] = (this.stats.byVerb[method] ?? 0) + 1;
    const what = `${opts.query?.watch === true ? "WATCH" : method} ${resourceOfPath(url.pathname)}`;
    this.stats.byResource[what] = (this.stats.byResource[what] ?? 0) + 1;
    for (const l of this.requestListeners) l(method, url.pathname + url.search, body);
    const mod = url.protocol === "https:" ? https : http;
    return await new Promise<http.IncomingMessage>((resolve, reject) => {
      const agent = opts.query?.watch === true ? this.watchAgent : this.agent;
      const req = mod.request(url, { ...tls, method, headers, agent, signal: opts.signal }, resolve);
      req.on("error", reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  /**
   * One request; the decoded JSON answer, or a {@link KubeApiError}. A connection that breaks before an
   * answer (the API server restarting, a kept-alive socket it closed) is retried with backoff for
   * about 15 s; the verbs used here are safe to repeat (a repeated create answers 409).
   */
  async request<T = KubeObject>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, opts);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const transient = code === "ECONNRESET" || code === "ECONNREFUSED" || code === "EPIPE" || code === "ETIMEDOUT";
        if (!transient || attempt >= 8 || opts.signal?.aborted) throw e;
        await new Promise((r) => setTimeout(r, Math.min(4000, 100 * 2 ** attempt)));
      }
    }
  }

  private async requestOnce<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    // bounded: a request the API server never answers (a stalled connection) must not hold a worker
    // for good; the API server ends its own work at 60 s
    const deadline = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    const chunks: Buffer[] = [];
    let res: http.IncomingMessage;
    try {
      res = await this.open(method, path, { ...opts, signal });
      for await (const c of res) chunks.push(c as Buffer);
    } catch (e) {
      if (deadline.aborted && !opts.signal?.aborted)
        throw new Error(`${method} ${path}: no answer from the API server within ${REQUEST_TIMEOUT_MS / 1000} s`);
      throw e;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw apiError(status, text, method, path);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Discovery: where `apiVersion`/`kind` lives (cached; refreshed
   * once when a kind is unknown, e.g. a CRD just created).
   */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const key = apiVersion;
    const load = () => {
      const p = (async () => {
        const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const list = await this.request<{ resources: { name: string; kind: string; namespaced: boolean }[] }>(
          "GET",
          path,
        );
        const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
        const m = new Map<string, ResourceInfo>();
        for (const r of list.resources)
          if (!r.name.includes("/"))
            m.set(r.kind, { group, version, kind: r.kind, resource: r.name, namespaced: r.namespaced });
        return m;
      })();
      this.discovery.set(key, p);
      p.catch(() => this.discovery.delete(key));
      return p;
    };
    let m = await (this.discovery.get(key) ?? load())
      .catch(() => load())
      .catch((e) => {
        if (e instanceof KubeApiError && e.status === 404)
          throw new KubeApiError(
            404,
            "NotFound",
            `required resource not found: the server has no API ${apiVersion} ` +
              `(for kind ${kind}); install the CRDs that provide it first`,
          );
        throw e;
      });
    let info = m.get(kind);
    if (!info) {
      m = await load();
      info = m.get(kind);
    }
    if (!info) throw new KubeApiError(404, "NotFound", `the server has no resource for kind ${kind} in ${apiVersion}`);
    return info;
  }

  /** The REST path of a collection (`name` omitted) or of one object. */
  async path(
    apiVersion: string,
    kind: string,
    namespace?: string,
    name?: string,
    subresource?: string,
  ): Promise<string> {
    const r = await this.resourceFor(apiVersion, kind);
    return resourcePath(r, namespace, name, subresource);
  }

  async get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T> {
    return this.request<T>("GET", await this.path(apiVersion, kind, namespace, name));
  }

  /** GET, or undefined when the object does not exist. */
  async tryGet<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    return orUndefined(this.get<T>(apiVersion, kind, name, namespace));
  }

  /**
   * The object as the API server has it now, or undefined when it is gone, being deleted, or (given
   * `uid`) another object of the same name. Controllers ask this, not their cache, before creating
   * something on an object's behalf: a cache that has not yet seen a deletion would otherwise make
   * the deleted object's children again, and with a live co-owner they would never be collected.
   */
  async getLive<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    opts: { uid?: string; namespace?: string } = {},
  ): Promise<T | undefined> {
    return liveOnly(await this.tryGet<T>(apiVersion, kind, name, opts.namespace), opts.uid);
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; resourceVersion?: string } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const r = await this.request<{ items: T[]; metadata: { resourceVersion: string } }>(
      "GET",
      await this.path(apiVersion, kind, opts.namespace),
      {
        query: {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          resourceVersion: opts.resourceVersion,
        },
      },
    );
    for (const it of r.items) {
      it.apiVersion ??= apiVersion;
      it.kind ??= kind;
    }
    return { items: r.items, resourceVersion: r.metadata.resourceVersion };
  }

  async create<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.request<T>("POST", await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace), { body: obj });
  }

  /** Server-side apply of `obj` (or of its `status` with `subresource: "status"`) as this client's field manager. */
  async apply<T extends KubeObject = KubeObject>(
    obj: T,
    opts: { force?: boolean; subresource?: "status"; dryRun?: boolean; fieldManager?: string } = {},
  ): Promise<T> {
    const path = await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name, opts.subresource);
    return this.request<T>("PATCH", path, {
      body: obj,
      contentType: "application/apply-patch+yaml",
      query: {
        fieldManager: opts.fieldManager ?? this.fieldManager,
        force: opts.force ?? true,
        dryRun: opts.dryRun ? "All" : undefined,
      },
    });
  }

  /** A JSON merge patch (`application/merge-patch+json`). */
  async mergePatch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    patch: unknown,
    opts: { namespace?: string; subresource?: "status" } = {},
  ): Promise<T> {
    const path = await this.path(apiVersion, kind, opts.namespace, name, opts.subresource);
    return this.request<T>("PATCH", path, {
      body: patch,
      contentType: "application/merge-patch+json",
      query: { fieldManager: this.fieldManager },
    });
  }

  /**
   * Replaces `obj` (optimistic concurrency through metadata.resourceVersion);
   * `subresource: "status"` writes only the status.
   */
  async replace<T extends KubeObject = KubeObject>(obj: T, opts: { subresource?: "status" } = {}): Promise<T> {
    const path = await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name, opts.subresource);
    return this.request<T>("PUT", path, { body: obj });
  }

  /**
   * Deletes an object; true when it existed. Background propagation unless said otherwise;
   * `preconditions` (uid, resourceVersion): only that object as read, else a 409 Conflict.
   */
  async delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    propagationPolicy = "Background",
    preconditions?: { uid?: string; resourceVersion?: string },
  ): Promise<boolean> {
    try {
      await this.request("DELETE", await this.path(apiVersion, kind, namespace, name), {
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy,
          ...(preconditions ? { preconditions } : {}),
        },
      });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /**
   * Opens a watch and calls `onEvent` per event until the server ends the stream, the signal aborts,
   * or an error answer arrives (rejected as a {@link KubeApiError}; 410 Gone means: list again).
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const res = await this.open("GET", path, { query: { ...query, watch: true }, signal });
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      throw apiError(status, Buffer.concat(chunks).toString("utf8"), "WATCH", path);
    }
    let buf = "";
    // decoded as a stream: a character split between two chunks stays one character
    res.setEncoding("utf8");
    try {
      for await (const chunk of res) {
        buf += chunk as string;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const ev = JSON.parse(line) as WatchEvent;
          if (ev.type === "ERROR") {
            const st = ev.object as unknown as { code?: number; reason?: string; message?: string };
            throw new KubeApiError(st.code ?? 500, st.reason ?? "Error", st.message ?? "watch error");
          }
          onEvent(ev);
        }
      }
    } catch (e) {
      if (signal?.aborted) return;
      if (e instanceof KubeApiError) throw e;
      // the stream ended
      if ((e as NodeJS.ErrnoException).code === "ECONNRESET" || (e as Error).name === "AbortError") return;
      throw e;
    }
  }
}

/** The answer of `get`, or undefined when the object does not exist. */
export async function orUndefined<T>(get: Promise<T>): Promise<T | undefined> {
  try {
    return await get;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The object unless it is gone, being deleted, or (given `uid`) another object of the same name. */
export function liveOnly<T extends KubeObject>(o: T | undefined, uid?: string): T | undefined {
  if (!o || o.metadata.deletionTimestamp) return undefined;
  if (uid && o.metadata.uid !== uid) return undefined;
  return o;
}

/** The object verbs controllers use: what the in-memory API server (./fake.ts) and this client share. */
export type KubeApi = Pick<
  KubeClient,
  "get" | "tryGet" | "getLive" | "list" | "create" | "apply" | "mergePatch" | "replace" | "delete"
>;

/** What an informer (./informer.ts) asks of the API server: a list, a kind's REST path, a watch. */
export type WatchApi = Pick<KubeClient, "list" | "path" | "watch">;

/**
 * Everything the controllers ask of the API server: the object verbs, watches, raw requests on paths
 * (dry runs, access reviews), discovery of a kind, who the client is, and impersonation. This client
 * and the in-memory API server (./fake.ts) both implement it.
 */
export interface KubeServer extends KubeApi, WatchApi {
  readonly fieldManager: string;
  request<T = KubeObject>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo>;
  whoami(): Promise<UserInfo>;
  impersonating(user: {
    username: string;
    groups?: string[];
    uid?: string;
    extra?: Record<string, string[]>;
  }): KubeServer;
  close(): void;
}

export function resourcePath(r: ResourceInfo, namespace?: string, name?: string, subresource?: string): string {
  let p = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

function apiError(status: number, text: string, method: string, path: string): KubeApiError {
  try {
    const st = JSON.parse(text) as { reason?: string; message?: string; details?: unknown };
    return new KubeApiError(
      status,
      st.reason ?? String(status),
      st.message ?? `${method} ${path}: HTTP ${status}`,
      st.details,
    );
  } catch {
    return new KubeApiError(status, String(status), `${method} ${path}: HTTP ${status}: ${text.slice(0, 200)}`);
  }
}
