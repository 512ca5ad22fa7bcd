/**
 * A client for registries speaking the OCI distribution API: manifests, indexes and blobs (pull and
 * push), anonymous, Basic and Bearer-token auth (the `WWW-Authenticate` challenge flow), TLS with
 * extra CAs or without verification, plain HTTP, mirrors and insecure registries from
 * registries.conf, retries with exponential backoff on 429, 5xx and dropped connections, redirects,
 * and size limits on everything read into memory.
 */
import { readFileSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { rootCertificates } from "node:tls";
import { lookupCredentials, type Credentials } from "./auth.js";
import { digestLike, errText, ImageError } from "./errors.js";
import { MANIFEST_ACCEPT, MAX_MANIFEST_BYTES, type Descriptor } from "./manifest.js";
import { loadRegistriesConf, pullSources, type RegistriesConf } from "./registries.js";
import type { BlobStore } from "./store.js";
import { VERSION } from "../version.js";
import { checkTlsFlags } from "./access.js";

/** How to reach registries: opm's `--use-http`/`--skip-tls-verify` plus CA, credentials, mirrors, retries. */
export interface RegistryOptions {
  /** Plain HTTP for every registry (opm's `--use-http`). */
  useHttp?: boolean;
  /** HTTPS without certificate verification, falling back to HTTP (opm's `--skip-tls-verify`). */
  skipTlsVerify?: boolean;
  /** PEM file(s) with CA certificates trusted in addition to the system roots. */
  caFile?: string | readonly string[];
  /** A credentials file consulted before the standard ones. */
  authFile?: string;
  /** Mirrors/insecure registries; default: the standard registries.conf files. */
  registriesConf?: RegistriesConf;
  /** Environment and home used to find credential and configuration files (tests). */
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Attempts after the first on 429, 5xx and connection errors (default 3). */
  retries?: number;
  /** First backoff delay in ms, doubled per attempt (default 250). */
  retryBaseMs?: number;
  /** Idle timeout in ms: a request that receives nothing for this long fails (default 30000). */
  timeoutMs?: number;
  /**
   * Time budget in ms for one registry operation (a manifest, a blob, a push), retries included
   * (default 120000): a registry that accepts connections and then stalls is given up on in bounded
   * time instead of idle timeout × attempts.
   */
  totalTimeoutMs?: number;
  /** Largest manifest accepted (default 4 MiB). */
  maxManifestBytes?: number;
  /**
   * Pulling for someone else (the controllers, for a requester): an error names the status code
   * only, never the reason phrase or the body of an answer that is not a registry's JSON error, so
   * that pointing a pull at a service one cannot reach otherwise does not read its answers back.
   */
  quietErrors?: boolean;
}

/** A repository at one registry: host ("127.0.0.1:5000", "registry-1.docker.io") and path ("org/repo"). */
export interface RepoTarget {
  host: string;
  repo: string;
  /** TLS may be skipped and HTTP used (skip-tls-verify or an insecure registries.conf entry). */
  insecure: boolean;
}

/** Splits domain/path into a registry host and repository (docker.io is served by registry-1.docker.io). */
export function repoTarget(name: string, insecure = false): RepoTarget {
  const i = name.indexOf("/");
  const domain = i < 0 ? name : name.slice(0, i);
  const repo = i < 0 ? "" : name.slice(i + 1);
  return { host: domain === "docker.io" ? "registry-1.docker.io" : domain, repo, insecure };
}

interface Endpoint {
  host: string;
  scheme: "https" | "http";
  /** HTTPS failed at the TLS level and HTTP may be tried. */
  allowHttpFallback: boolean;
  agent: HttpAgent | HttpsAgent;
  /** Authorization headers per scope ("" = basic for all scopes). */
  auth: Map<string, string>;
}

const RETRY_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "ERR_STREAM_PREMATURE_CLOSE",
]);
const TLS_FALLBACK_CODES = new Set([
  "EPROTO",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
  "ECONNRESET",
]);

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses a `WWW-Authenticate` header (one challenge per scheme, quoted or token parameter values). */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  const re = /\s*([A-Za-z][A-Za-z0-9_-]*)(?:\s+|$)((?:[A-Za-z0-9_-]+\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^,\s]*)\s*,?\s*)*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(header)) !== null && m[0] !== "") {
    const params: Record<string, string> = {};
    const pre = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g;
    let p: RegExpExecArray | null;
    while ((p = pre.exec(m[2])) !== null)
      params[p[1].toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : p[3];
    out.push({ scheme: m[1].toLowerCase(), params });
  }
  return out;
}

async function readBody(res: IncomingMessage, max: number, what: string): Promise<Buffer> {
  const len = Number(res.headers["content-length"] ?? NaN);
  if (Number.isFinite(len) && len > max) {
    res.destroy();
    throw new ImageError("IMAGE_TOO_LARGE", `${what}: ${len} bytes is more than the limit of ${max} bytes`);
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res) {
    n += (c as Buffer).length;
    if (n > max) {
      res.destroy();
      throw new ImageError("IMAGE_TOO_LARGE", `${what}: more than the limit of ${max} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** "manifest unknown: ..." from a registry's JSON error body, or the body's first 200 characters. */
function registryErrorText(body: Buffer): string {
  const json = registryJsonErrorText(body);
  if (json) return json;
  const t = body.toString("utf8").trim();
  return t.length > 200 ? t.slice(0, 200) + "…" : t;
}

/** "manifest unknown: ..." from a registry's JSON error body (codes and messages only), or "". */
function registryJsonErrorText(body: Buffer): string {
  try {
    const v = JSON.parse(body.toString("utf8")) as { errors?: { code?: string; message?: string }[] };
    if (Array.isArray(v.errors) && v.errors.length > 0)
      return v.errors
        .map((e) => [e.code?.toLowerCase().replace(/_/g, " "), e.message].filter((x) => x).join(": "))
        .join("; ");
  } catch {
    // not JSON
  }
  return "";
}

function statusError(res: IncomingMessage, body: Buffer, what: string, quiet = false): ImageError {
  const status = res.statusCode ?? 0;
  const detail = quiet ? registryJsonErrorText(body) : registryErrorText(body);
  const head = quiet ? `${what}: status ${status}` : `${what}: ${status} ${res.statusMessage ?? ""}`.trimEnd();
  const msg = detail ? `${head}: ${detail}` : head;
  const code =
    status === 401 || status === 403
      ? "IMAGE_UNAUTHORIZED"
      : status === 404
        ? "IMAGE_NOT_FOUND"
        : status === 429
          ? "IMAGE_RATE_LIMITED"
          : "IMAGE_REGISTRY_ERROR";
  return new ImageError(code, msg, { status });
}

interface Req {
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH";
  /** A path ("/v2/...") on the endpoint, or an absolute URL (upload locations, redirects). */
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: Buffer;
  /** Token scope ("repository:org/repo:pull"). */
  scope: string;
  /** What the request does, for messages. */
  what: string;
}

/** A registry client; one per command (it keeps connections, tokens and endpoints). Call close() when done. */
export class RegistryClient {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly ca: string[] | undefined;
  private conf: RegistriesConf | undefined;
  private readonly credCache = new Map<string, Credentials | undefined>();

  constructor(readonly opts: RegistryOptions = {}) {
    const err = checkTlsFlags(opts);
    if (err) throw new ImageError("USAGE_FLAGS", err, { kind: "usage" });
    const files = opts.caFile === undefined ? [] : typeof opts.caFile === "string" ? [opts.caFile] : [...opts.caFile];
    if (files.length > 0) {
      this.ca = [...rootCertificates];
      for (const f of files) {
        try {
          this.ca.push(readFileSync(f, "utf8"));
        } catch (e) {
          throw new ImageError("IMAGE_CA_FILE", `reading CA file ${JSON.stringify(f)}: ${errText(e)}`, { cause: e });
        }
      }
    }
    this.conf = opts.registriesConf;
  }

  /** The registries configuration in force (loaded on first use). */
  registries(): RegistriesConf {
    if (!this.conf) this.conf = loadRegistriesConf({ env: this.opts.env, home: this.opts.home });
    return this.conf;
  }

  /** Where to pull `name` (domain/path) from, mirrors first. */
  sourcesFor(name: string, byDigest: boolean): RepoTarget[] {
    return pullSources(this.registries(), name, byDigest).map((s) =>
      repoTarget(s.name, s.insecure || Boolean(this.opts.skipTlsVerify)),
    );
  }

  /** Where to push `name`: its registries.conf location (mirrors are for pulls only). */
  pushTarget(name: string): RepoTarget {
    const src = pullSources(this.registries(), name, false);
    const primary = src[src.length - 1];
    return repoTarget(primary.name, primary.insecure || Boolean(this.opts.skipTlsVerify));
  }

  /** Closes idle connections. */
  close(): void {
    for (const ep of this.endpoints.values()) ep.agent.destroy();
    this.endpoints.clear();
  }

  private endpoint(t: RepoTarget): Endpoint {
    const key = `${t.host}|${t.insecure}`;
    let ep = this.endpoints.get(key);
    if (!ep) {
      const http = Boolean(this.opts.useHttp);
      ep = {
        host: t.host,
        scheme: http ? "http" : "https",
        allowHttpFallback: !http && t.insecure,
        agent: http
          ? new HttpAgent({ keepAlive: true, maxSockets: 8 })
          : new HttpsAgent({ keepAlive: true, maxSockets: 8, rejectUnauthorized: !t.insecure, ca: this.ca }),
        auth: new Map(),
      };
      this.endpoints.set(key, ep);
    }
    return ep;
  }

  private credentials(t: RepoTarget): Credentials | undefined {
    const name = `${t.host === "registry-1.docker.io" ? "docker.io" : t.host}/${t.repo}`;
    if (!this.credCache.has(name))
      this.credCache.set(
        name,
        lookupCredentials(name, { authFile: this.opts.authFile, env: this.opts.env, home: this.opts.home }),
      );
    return this.credCache.get(name);
  }

  /** One HTTP exchange (no retries, no auth handling); follows redirects. */
  private once(ep: Endpoint, req: Req, auth: string | undefined, redirects = 0): Promise<IncomingMessage> {
    const url = new URL(/^https?:\/\//.test(req.path) ? req.path : `${ep.scheme}://${ep.host}${req.path}`);
    const sameHost = url.host === ep.host;
    const headers: OutgoingHttpHeaders = { "User-Agent": `opcat/${VERSION}`, ...req.headers };
    if (auth && sameHost) headers.Authorization = auth;
    if (req.body) headers["Content-Length"] = String(req.body.length);
    else if (req.method === "PUT" || req.method === "POST") headers["Content-Length"] = "0";
    const isHttps = url.protocol === "https:";
    const agent = sameHost && (isHttps ? ep.scheme === "https" : ep.scheme === "http") ? ep.agent : undefined;
    const fn = isHttps ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const r = fn(
        url,
        {
          method: req.method,
          headers,
          agent,
          timeout: this.idleMs,
          ...(isHttps && !agent ? { rejectUnauthorized: !(this.opts.skipTlsVerify ?? false), ca: this.ca } : {}),
        },
        (res) => {
          const st = res.statusCode ?? 0;
          if (
            (st === 301 || st === 302 || st === 303 || st === 307 || st === 308) &&
            res.headers.location &&
            (req.method === "GET" || req.method === "HEAD")
          ) {
            res.resume();
            if (redirects >= 5)
              return reject(new ImageError("IMAGE_REGISTRY_ERROR", `${req.what}: too many redirects`));
            const next = new URL(res.headers.location, url).toString();
            this.once(
              ep,
              { ...req, path: next },
              new URL(next).host === ep.host ? auth : undefined,
              redirects + 1,
            ).then(resolve, reject);
            return;
          }
          resolve(res);
        },
      );
      r.on("timeout", () =>
        r.destroy(
          Object.assign(new Error(`no data from ${url.host} for ${this.idleMs / 1000} s (idle timeout)`), {
            code: "ETIMEDOUT",
          }),
        ),
      );
      r.on("error", reject);
      r.end(req.body);
    });
  }

  private async fetchToken(t: RepoTarget, _ep: Endpoint, ch: Challenge, scope: string, what: string): Promise<string> {
    const realm = ch.params.realm;
    if (!realm) throw new ImageError("IMAGE_UNAUTHORIZED", `${what}: bearer challenge without realm`);
    const u = new URL(realm);
    if (ch.params.service) u.searchParams.set("service", ch.params.service);
    u.searchParams.set("scope", scope);
    const creds = this.credentials(t);
    const headers: OutgoingHttpHeaders = { "User-Agent": `opcat/${VERSION}`, Accept: "application/json" };
    if (creds) headers.Authorization = "Basic " + Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
    const isHttps = u.protocol === "https:";
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = (isHttps ? httpsRequest : httpRequest)(
        u,
        {
          method: "GET",
          headers,
          timeout: this.idleMs,
          ...(isHttps ? { rejectUnauthorized: !t.insecure, ca: this.ca } : {}),
        },
        resolve,
      );
      r.on("timeout", () => r.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
      r.on("error", reject);
      r.end();
    }).catch((e: unknown) => {
      throw new ImageError("IMAGE_NETWORK", `${what}: requesting token from ${u.origin}${u.pathname}: ${errText(e)}`, {
        cause: e,
      });
    });
    const body = await readBody(res, 1 << 20, `${what}: token response`);
    if ((res.statusCode ?? 0) !== 200) {
      const e = statusError(
        res,
        body,
        `${what}: requesting token from ${u.origin}${u.pathname}`,
        this.opts.quietErrors,
      );
      throw new ImageError(
        res.statusCode === 401 || res.statusCode === 403 ? "IMAGE_UNAUTHORIZED" : e.code,
        e.message,
        { status: res.statusCode },
      );
    }
    let token = "";
    try {
      const v = JSON.parse(body.toString("utf8")) as { token?: string; access_token?: string };
      token = v.token || v.access_token || "";
    } catch {
      token = "";
    }
    if (!token)
      throw new ImageError("IMAGE_UNAUTHORIZED", `${what}: token response from ${u.origin}${u.pathname} has no token`);
    return `Bearer ${token}`;
  }

  /**
   * Sends a request with auth (answering one 401 challenge) and retries (429, 5xx, connection
   * errors) and returns a response with a status below 400, or throws an ImageError. `accept` lists
   * statuses returned to the caller as they are (e.g. 404 for HEAD probes).
   */
  async send(t: RepoTarget, req: Req, accept: readonly number[] = []): Promise<IncomingMessage> {
    const ep = this.endpoint(t);
    const retries = this.opts.retries ?? 3;
    const base = this.opts.retryBaseMs ?? 250;
    const deadline = Date.now() + this.totalMs;
    let challenged = false;
    for (let attempt = 0; ; attempt++) {
      const auth = ep.auth.get(req.scope) ?? ep.auth.get("");
      let res: IncomingMessage;
      try {
        res = await this.once(ep, req, auth);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? "";
        if (ep.allowHttpFallback && ep.scheme === "https" && TLS_FALLBACK_CODES.has(code)) {
          ep.scheme = "http";
          ep.agent.destroy();
          ep.agent = new HttpAgent({ keepAlive: true, maxSockets: 8 });
          attempt--;
          continue;
        }
        if (e instanceof ImageError) throw e;
        // TLS spoken to a plain-HTTP registry: OpenSSL's "wrong version number" says nothing to a user
        if (
          ep.scheme === "https" &&
          (code === "ERR_SSL_WRONG_VERSION_NUMBER" ||
            code === "ERR_SSL_PACKET_LENGTH_TOO_LONG" ||
            /wrong version number|packet length too long/i.test(errText(e)))
        ) {
          throw new ImageError(
            "IMAGE_PLAIN_HTTP",
            `${req.what}: ${t.host} speaks plain HTTP, not HTTPS; use ` +
              `--use-http (or mark the registry insecure in registries.conf)`,
            { cause: e },
          );
        }
        if (attempt < retries && (RETRY_CODES.has(code) || /socket hang up|timeout/i.test(errText(e)))) {
          if (Date.now() + base * 2 ** attempt + 1000 > deadline) throw this.timeoutError(t, req.what, e, attempt + 1);
          await sleep(base * 2 ** attempt);
          continue;
        }
        if (code === "ETIMEDOUT") throw this.timeoutError(t, req.what, e, attempt + 1);
        throw new ImageError("IMAGE_NETWORK", `${req.what}: ${errText(e)}`, { cause: e });
      }
      ep.allowHttpFallback = false; // the scheme works
      const st = res.statusCode ?? 0;
      if (st === 401 && !challenged) {
        const body = await readBody(res, 1 << 20, req.what).catch(() => Buffer.alloc(0));
        const chs = parseChallenges(String(res.headers["www-authenticate"] ?? ""));
        const bearer = chs.find((c) => c.scheme === "bearer");
        const basic = chs.find((c) => c.scheme === "basic");
        challenged = true;
        if (bearer) {
          ep.auth.set(req.scope, await this.fetchToken(t, ep, bearer, req.scope, req.what));
          attempt--;
          continue;
        }
        const creds = this.credentials(t);
        if (basic && creds) {
          ep.auth.set("", "Basic " + Buffer.from(`${creds.username}:${creds.password}`).toString("base64"));
          attempt--;
          continue;
        }
        const e = statusError(res, body, req.what, this.opts.quietErrors);
        throw new ImageError(
          "IMAGE_UNAUTHORIZED",
          `${e.message}${basic && !creds ? " (no credentials found; log in or set REGISTRY_AUTH_FILE)" : ""}`,
          { status: 401 },
        );
      }
      if (accept.includes(st) || (st >= 200 && st < 400)) return res;
      const body = await readBody(res, 1 << 20, req.what).catch(() => Buffer.alloc(0));
      if ((st === 429 || st >= 500) && attempt < retries) {
        const ra = Number(res.headers["retry-after"]);
        await sleep(Number.isFinite(ra) && ra >= 0 ? Math.min(ra * 1000, 10_000) : base * 2 ** attempt);
        continue;
      }
      throw statusError(res, body, req.what, this.opts.quietErrors);
    }
  }

  /** GET a manifest by tag or digest; verifies the digest when `reference` is one. */
  async getManifest(t: RepoTarget, reference: string): Promise<{ bytes: Buffer; mediaType: string; digest: string }> {
    const what = `reading manifest ${reference} in ${t.host}/${t.repo}`;
    const res = await this.send(t, {
      method: "GET",
      path: `/v2/${t.repo}/manifests/${reference}`,
      headers: { Accept: MANIFEST_ACCEPT },
      scope: `repository:${t.repo}:pull`,
      what,
    });
    const bytes = await readBody(res, this.opts.maxManifestBytes ?? MAX_MANIFEST_BYTES, what);
    const mediaType = String(res.headers["content-type"] ?? "");
    const isDigest = reference.includes(":");
    const digest = digestLike(isDigest ? reference : "sha256:", bytes);
    if (isDigest && digest !== reference)
      throw new ImageError(
        "IMAGE_DIGEST_MISMATCH",
        `${what}: manifest digest mismatch: expected ${reference}, got ${digest}`,
      );
    return { bytes, mediaType, digest };
  }

  /**
   * Lists a repository's tags (`GET /v2/<name>/tags/list`, `?n=<pageSize>` when given), following
   * `Link: <…>; rel="next"` headers from page to page.
   */
  async listTags(t: RepoTarget, pageSize?: number): Promise<string[]> {
    const what = `listing tags of ${t.host}/${t.repo}`;
    const tags: string[] = [];
    let path: string | undefined = `/v2/${t.repo}/tags/list${pageSize ? `?n=${pageSize}` : ""}`;
    for (let pages = 0; path !== undefined; pages++) {
      if (pages >= 100_000) throw new ImageError("IMAGE_REGISTRY_ERROR", `${what}: too many pages`);
      const res = await this.send(t, {
        method: "GET",
        path,
        headers: { Accept: "application/json" },
        scope: `repository:${t.repo}:pull`,
        what,
      });
      const body = await readBody(res, 64 << 20, what);
      let page: unknown;
      try {
        page = JSON.parse(body.toString("utf8"));
      } catch (e) {
        throw new ImageError("IMAGE_REGISTRY_ERROR", `${what}: invalid tag list: ${errText(e)}`);
      }
      const list = (page as { tags?: unknown } | null)?.tags;
      if (list !== null && list !== undefined && !(Array.isArray(list) && list.every((x) => typeof x === "string"))) {
        throw new ImageError("IMAGE_REGISTRY_ERROR", `${what}: invalid tag list: "tags" is not a list of strings`);
      }
      if (list) tags.push(...(list as string[]));
      const next = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(String(res.headers.link ?? ""))?.[1];
      path = next === undefined ? undefined : /^https?:\/\//.test(next) || next.startsWith("/") ? next : `/${next}`;
    }
    return tags;
  }

  private get idleMs(): number {
    return this.opts.timeoutMs ?? 30_000;
  }

  private get totalMs(): number {
    return this.opts.totalTimeoutMs ?? 120_000;
  }

  /** The error for a registry given up on: which one, what it was waiting for, and the flags that set the limits. */
  private timeoutError(t: RepoTarget, what: string, cause: unknown, attempts: number): ImageError {
    return new ImageError(
      "IMAGE_TIMEOUT",
      `${what}: gave up on ${t.host} after ${attempts} attempt${attempts === 1 ? "" : "s"} within ` +
        `${this.totalMs / 1000} s: ${errText(cause)} (--timeout sets the time for one pull or push of a ` +
        `manifest or blob, retries included; --idle-timeout how long a silent connection is waited for)`,
      { cause },
    );
  }

  /** Downloads a blob into `store`, verifying size and digest; retried as a whole on connection errors. */
  async fetchBlob(t: RepoTarget, desc: Descriptor, store: BlobStore, onBytes?: (n: number) => void): Promise<void> {
    const what = `pulling blob ${desc.digest} from ${t.host}/${t.repo}`;
    const retries = this.opts.retries ?? 3;
    const deadline = Date.now() + this.totalMs;
    for (let attempt = 0; ; attempt++) {
      let got = 0;
      try {
        const res = await this.send(t, {
          method: "GET",
          path: `/v2/${t.repo}/blobs/${desc.digest}`,
          scope: `repository:${t.repo}:pull`,
          what,
        });
        await store.putStream(desc.digest, res, {
          size: desc.size,
          label: what,
          onBytes: (n) => {
            got += n;
            onBytes?.(n);
          },
        });
        return;
      } catch (e) {
        onBytes?.(-got);
        const code = (e as NodeJS.ErrnoException).code ?? "";
        const dropped =
          !(e instanceof ImageError) && (RETRY_CODES.has(code) || /aborted|socket hang up|premature/i.test(errText(e)));
        const truncated = e instanceof ImageError && e.code === "IMAGE_BLOB_TRUNCATED";
        if ((dropped || truncated) && attempt < retries) {
          const wait = (this.opts.retryBaseMs ?? 250) * 2 ** attempt;
          if (Date.now() + wait + 1000 > deadline) throw this.timeoutError(t, what, e, attempt + 1);
          await sleep(wait);
          continue;
        }
        if (e instanceof ImageError) throw e;
        if (code === "ETIMEDOUT") throw this.timeoutError(t, what, e, attempt + 1);
        throw new ImageError("IMAGE_NETWORK", `${what}: ${errText(e)}`, { cause: e });
      }
    }
  }

  /** Is the blob already in the repository? */
  async hasBlob(t: RepoTarget, digest: string, scope = `repository:${t.repo}:pull,push`): Promise<boolean> {
    const res = await this.send(
      t,
      {
        method: "HEAD",
        path: `/v2/${t.repo}/blobs/${digest}`,
        scope,
        what: `checking blob ${digest} in ${t.host}/${t.repo}`,
      },
      [404],
    );
    res.resume();
    return res.statusCode === 200;
  }

  /** Uploads a blob (monolithic POST + PUT) unless the repository has it. */
  async pushBlob(t: RepoTarget, digest: string, data: Buffer): Promise<void> {
    const scope = `repository:${t.repo}:pull,push`;
    if (await this.hasBlob(t, digest, scope)) return;
    const what = `pushing blob ${digest} to ${t.host}/${t.repo}`;
    const start = await this.send(t, { method: "POST", path: `/v2/${t.repo}/blobs/uploads/`, scope, what });
    start.resume();
    const loc = start.headers.location;
    if (!loc) throw new ImageError("IMAGE_REGISTRY_ERROR", `${what}: upload response has no Location`);
    const ep = this.endpoint(t);
    const u = new URL(loc, `${ep.scheme}://${ep.host}`);
    u.searchParams.set("digest", digest);
    const put = await this.send(t, {
      method: "PUT",
      path: u.toString(),
      headers: { "Content-Type": "application/octet-stream" },
      body: data,
      scope,
      what,
    });
    put.resume();
  }

  /** Uploads a manifest under a tag or digest; returns the digest the registry reports (or computes). */
  async putManifest(t: RepoTarget, reference: string, mediaType: string, bytes: Buffer): Promise<string> {
    const what = `pushing manifest ${reference} to ${t.host}/${t.repo}`;
    const res = await this.send(t, {
      method: "PUT",
      path: `/v2/${t.repo}/manifests/${reference}`,
      headers: { "Content-Type": mediaType },
      body: bytes,
      scope: `repository:${t.repo}:pull,push`,
      what,
    });
    res.resume();
    return String(res.headers["docker-content-digest"] ?? digestLike("sha256:", bytes));
  }
}

/** Runs `fn` over `items` with at most `limit` at once; rejects with the first error after all started ones settle. */
export async function mapPool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: { e: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (e) {
        if (!failed) failed = { e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw failed.e;
  return out;
}
