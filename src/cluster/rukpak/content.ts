/**
 * Unpacking a Bundle's refs into local, content-addressed storage (no Pod needed: opcat pulls images
 * itself): `docker://` images through opcat's registry client (pull secrets, registries.conf mirrors,
 * digest verification, the blob cache), `file://` paths from ConfigMaps mounted by `volumeMounts`,
 * `https://` gzipped tarballs checked against `spec.digest`. The result is a directory
 * `<root>/sha256-<digest of the tree>` holding the bundle's files, plus its format and objects.
 *
 * Content is read as its requester: a ConfigMap or pull Secret is read only after a
 * SubjectAccessReview says the requester may `get` it, and a refusal does not tell whether it exists.
 * Work is bounded ({@link ContentLimits}): downloads are streamed to disk under a cap, expansion
 * has a byte and an entry cap, each pull has a time limit, and no symlink may leave the tree.
 */
import { createHash } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { join, relative, resolve } from "node:path";
import { isBundleDirectory, readBundleDirectory } from "../../bundle/index.js";
import { applyLayer, type UnpackBudget } from "../../image/unpack.js";
import { ImageError, pullImage, unpackImage, type PullOptions } from "../../image/index.js";
import { parseGoDuration } from "../../gojson/duration.js";
import { parseKubeDocuments } from "./manifests.js";
import { isForbidden, isNotFound, type KubeClient, type KubeObject } from "../kube/client.js";
import type { BundleSpec } from "./api.js";
import { canI, type Requester } from "./permissions.js";
import type { ConditionReason } from "./reasons.js";

export interface UnpackedContent {
  /** Directory with the bundle's files. */
  dir: string;
  /** sha256 over the sorted file paths and contents. */
  digest: string;
  format: "registry+v1" | "plain";
  /** Refs pinned to what was unpacked (images by digest). */
  resolvedRefs: string[];
  /** `/objects/<kind>/<namespace>/<name>` of each manifest. */
  objects: string[];
}

/**
 * A failure to unpack; `reason` is a CamelCase condition reason,
 * `retryable` false for content that will never unpack.
 */
export class UnpackError extends Error {
  constructor(
    readonly reason: ConditionReason,
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = "UnpackError";
  }
}

/** Bounds of one unpack (ProvisionerClass parameters, see {@link limitsOf}). */
export interface ContentLimits {
  /** Bytes of the unpacked tree, and of a downloaded tarball (default 64 MiB: `maxBundleSize`). */
  maxBytes?: number;
  /** Files, directories and symlinks of the unpacked tree (default 10,000: `maxBundleFiles`). */
  maxFiles?: number;
  /** Bytes of one file under `manifests/` (`maxObjectSize`; default: only `maxBytes`). */
  maxObjectBytes?: number;
  /** Time for fetching one ref, docker:// or https:// (default 5 min: `pullTimeout`). */
  pullTimeoutMs?: number;
}

export const DEFAULT_LIMITS: Required<Omit<ContentLimits, "maxObjectBytes">> = {
  maxBytes: 64 * 1024 ** 2,
  maxFiles: 10_000,
  pullTimeoutMs: 5 * 60_000,
};

export interface ContentOptions {
  /** Root of the content store. */
  root: string;
  /** Image access (registries.conf, TLS, cache) for docker:// refs. */
  pull?: PullOptions;
  client: KubeClient;
  /**
   * Who asked for the content: ConfigMaps and pull Secrets are read only when a SubjectAccessReview
   * says this user may `get` them. Without one, none are read.
   */
  requester?: Requester;
  /**
   * The client acts as the requester itself (its own credentials: `instance describe`): its reads
   * are checked by the API server, no SubjectAccessReview is needed.
   */
  clientIsRequester?: boolean;
  /** The Bundle was made by the controllers for their own purposes: it has no requester by design. */
  madeByControllers?: boolean;
  limits?: ContentLimits;
  /** Aborts the unpack (the Bundle was deleted or changed); partial content is removed. */
  signal?: AbortSignal;
}

const UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  m: 1e6,
  g: 1e9,
  t: 1e12,
  ki: 1024,
  mi: 1024 ** 2,
  gi: 1024 ** 3,
  ti: 1024 ** 4,
};

/**
 * A size as ProvisionerClass parameters write it: a number of bytes, or a Kubernetes quantity with an
 * SI (`10M`, `500k`) or binary (`10Mi`) suffix, also with a trailing `b`/`B` and in any case (`10mb`,
 * `64MiB`): `m` is mega here, never milli. Undefined when it is not a size.
 */
export function parseSize(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtKMGT]i?)?[bB]?\s*$/.exec(v);
  if (!m) return undefined;
  const unit = UNITS[(m[2] ?? "").toLowerCase()];
  return unit === undefined ? undefined : Math.floor(Number(m[1]) * unit);
}

/**
 * The limits a ProvisionerClass's parameters set: `maxObjectSize` (one manifest), `maxBundleSize`
 * (the unpacked tree), `maxBundleFiles`, `pullTimeout` (a Go duration). Values that do not parse are
 * reported in `problems` and the default is used.
 */
export function limitsOf(parameters: Record<string, unknown> | undefined): {
  limits: ContentLimits;
  problems: string[];
} {
  const p = parameters ?? {};
  const limits: ContentLimits = {};
  const problems: string[] = [];
  const size = (key: string, set: (n: number) => void) => {
    if (p[key] === undefined) return;
    const n = parseSize(p[key]);
    if (n === undefined) problems.push(`parameter ${key}: ${JSON.stringify(p[key])} is not a size (e.g. 10Mi, 10mb)`);
    else set(n);
  };
  size("maxObjectSize", (n) => (limits.maxObjectBytes = n));
  size("maxBundleSize", (n) => (limits.maxBytes = n));
  if (p.maxBundleFiles !== undefined) {
    const n = Number(p.maxBundleFiles);
    if (Number.isInteger(n) && n > 0) limits.maxFiles = n;
    else problems.push(`parameter maxBundleFiles: ${JSON.stringify(p.maxBundleFiles)} is not a positive integer`);
  }
  if (p.pullTimeout !== undefined) {
    const d = typeof p.pullTimeout === "string" ? parseGoDuration(p.pullTimeout) : "not a string";
    if (typeof d === "number" && d > 0) limits.pullTimeoutMs = d;
    else problems.push(`parameter pullTimeout: ${JSON.stringify(p.pullTimeout)} is not a duration (e.g. 5m)`);
  }
  return { limits, problems };
}

function invalid(message: string): UnpackError {
  return new UnpackError("InvalidContent", message, false);
}

/**
 * Where a symlink at `link` (root-relative, in a real directory) leads: resolved component by
 * component inside `root`, following links on the way (chains included), as the kernel would. Throws
 * when it leaves the root, is absolute, loops or leads to nothing.
 */
function resolveLink(root: string, link: string): string {
  const resolved = link.split("/").slice(0, -1);
  let rest = readlinkSync(join(root, link)).split("/");
  const target = rest.join("/");
  const refuse = (why: string) => invalid(`symlink ${JSON.stringify(link)} -> ${JSON.stringify(target)} ${why}`);
  if (target.startsWith("/")) throw refuse("is absolute (only links within the content are allowed)");
  let hops = 0;
  while (rest.length > 0) {
    const c = rest.shift()!;
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (resolved.length === 0) throw refuse("leads outside the content");
      resolved.pop();
      continue;
    }
    const p = [...resolved, c].join("/");
    let st;
    try {
      st = lstatSync(join(root, p));
    } catch {
      throw refuse("leads to nothing in the content");
    }
    if (st.isSymbolicLink()) {
      if (++hops > 40) throw refuse("is a loop of links");
      const t = readlinkSync(join(root, p));
      if (t.startsWith("/")) throw refuse(`goes through ${JSON.stringify(p)}, an absolute link`);
      rest = [...t.split("/"), ...rest];
      continue;
    }
    if (!st.isDirectory() && rest.some((x) => x !== "" && x !== ".")) throw refuse("goes through a file");
    resolved.push(c);
  }
  return resolved.join("/");
}

interface TreeEntry {
  path: string;
  kind: "file" | "dir" | "link";
  /** Link target. */
  target?: string;
}

/** C0 and C1 control characters, DEL, and the Unicode bidirectional overrides (names that lie when shown). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * Every entry of a tree (root-relative, `/`-separated, sorted), checked: names without control
 * characters, symlinks that stay inside it,
 * within the limits. Throws {@link UnpackError} (`InvalidContent`, `ContentTooLarge`).
 */
export function scanTree(root: string, limits: ContentLimits = {}): TreeEntry[] {
  const maxBytes = limits.maxBytes ?? DEFAULT_LIMITS.maxBytes;
  const maxFiles = limits.maxFiles ?? DEFAULT_LIMITS.maxFiles;
  const out: TreeEntry[] = [];
  let bytes = 0;
  const visit = (rel: string) => {
    for (const e of readdirSync(rel ? join(root, rel) : root, { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      // a name that would write raw control bytes (escape sequences, newlines) into statuses and Events
      if (CONTROL.test(e.name)) throw invalid(`the name ${JSON.stringify(p)} contains a control character`);
      if (out.length >= maxFiles) throw tooLarge(`the content has more than ${maxFiles} entries`);
      if (e.isSymbolicLink()) {
        resolveLink(root, p);
        out.push({ path: p, kind: "link", target: readlinkSync(join(root, p)) });
      } else if (e.isDirectory()) {
        out.push({ path: p, kind: "dir" });
        visit(p);
      } else if (e.isFile()) {
        bytes += lstatSync(join(root, p)).size;
        if (bytes > maxBytes) throw tooLarge(`the content is larger than ${maxBytes} bytes`);
        out.push({ path: p, kind: "file" });
      } else throw invalid(`${JSON.stringify(p)} is not a file, directory or symlink`);
    }
  };
  visit("");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function tooLarge(message: string): UnpackError {
  return new UnpackError("ContentTooLarge", message, false);
}

/**
 * sha256 over a tree: every file (path and content), directory (path, so empty ones count) and
 * symlink (path and target), in path order. Two trees with this digest read the same.
 */
export function treeDigest(
  dir: string,
  entries: TreeEntry[] = scanTree(dir, { maxBytes: Infinity, maxFiles: Infinity }),
): string {
  const h = createHash("sha256");
  for (const e of entries) {
    if (e.kind === "file") {
      const data = readFileSync(join(dir, e.path));
      h.update(`f\0${e.path}\0${data.length}\0`);
      h.update(data);
    } else if (e.kind === "dir") h.update(`d\0${e.path}\0`);
    else h.update(`l\0${e.path}\0${e.target}\0`);
  }
  return `sha256:${h.digest("hex")}`;
}

/** Moves a staged tree into the store under its digest (kept if already there). */
function commit(root: string, staged: string, limits: ContentLimits): { dir: string; digest: string } {
  const digest = treeDigest(staged, scanTree(staged, limits));
  const dir = join(root, digest.replace(":", "-"));
  if (existsSync(dir)) rmSync(staged, { recursive: true, force: true });
  else renameSync(staged, dir);
  return { dir, digest };
}

function stage(root: string): string {
  mkdirSync(root, { recursive: true });
  const d = join(root, `.staging-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(d);
  return d;
}

/**
 * Copies a tree (files, directories and symlinks as they are: {@link scanTree} checks the links of
 * the result) within the budget.
 */
function copyTree(src: string, dst: string, budget: UnpackBudget, limits: Required<ContentLimits>): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const s = join(src, e.name);
    const d = join(dst, e.name);
    if (++budget.entries > limits.maxFiles) throw tooLarge(`the content has more than ${limits.maxFiles} entries`);
    // over an earlier ref: directories merge, anything else (a symlink above all) is replaced
    const st = lstatOrUndef(d);
    if (st && !(st.isDirectory() && e.isDirectory())) rmSync(d, { recursive: true, force: true });
    if (e.isSymbolicLink()) symlinkSync(readlinkSync(s), d);
    else if (e.isDirectory()) copyTree(s, d, budget, limits);
    else if (e.isFile()) {
      budget.bytes += statSync(s).size;
      if (budget.bytes > limits.maxBytes) throw tooLarge(`the content is larger than ${limits.maxBytes} bytes`);
      writeFileSync(d, readFileSync(s));
    }
  }
}

/** Makes `rel` a real directory under `root`, replacing what an earlier ref left on its way (links, files). */
function realDir(root: string, rel: string): string {
  let p = root;
  for (const c of rel.split("/")) {
    if (c === "" || c === ".") continue;
    p = join(p, c);
    const st = lstatOrUndef(p);
    if (st?.isDirectory()) continue;
    if (st) rmSync(p, { recursive: true, force: true });
    mkdirSync(p);
  }
  return p;
}

function lstatOrUndef(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Reads a ConfigMap or Secret as the requester would: allowed by a SubjectAccessReview (or the
 * requester's own client) and existing, else one message that does not tell which.
 */
async function readAsRequester<T extends KubeObject>(
  opts: ContentOptions,
  kind: "ConfigMap" | "Secret",
  namespace: string,
  name: string,
  reason: ConditionReason,
): Promise<T> {
  const who = opts.requester?.username ?? (opts.clientIsRequester ? "you" : undefined);
  const refused = () =>
    new UnpackError(
      reason,
      who === undefined
        ? opts.madeByControllers
          ? `${kind} ${namespace}/${name} cannot be read: this Bundle was made by opcat's controllers for no ` +
            "user (an object of another Instance's bundle), and nobody's rights read content for it; " +
            "install content that needs no ConfigMap or Secret, or create the Bundle yourself"
          : `${kind} ${namespace}/${name} cannot be read: who asked for this Bundle cannot be verified ` +
            "(it or its Instance was written while opcat's admission webhook was not serving); " +
            "change its spec again to have the requester recorded"
        : `${kind} ${namespace}/${name} cannot be read by ${who} (it does not exist or ${who} may not get it)`,
      false,
    );
  if (opts.clientIsRequester) {
    try {
      const o = await opts.client.tryGet<T>("v1", kind, name, namespace);
      if (!o) throw refused();
      return o;
    } catch (e) {
      if (isForbidden(e) || isNotFound(e)) throw refused();
      throw e;
    }
  }
  if (!opts.requester) throw refused();
  const allowed = await canI(opts.client, opts.requester, {
    verb: "get",
    group: "",
    resource: kind === "ConfigMap" ? "configmaps" : "secrets",
    namespace,
    name,
  });
  if (!allowed) throw refused();
  const o = await opts.client.tryGet<T>("v1", kind, name, namespace);
  if (!o) throw refused();
  return o;
}

interface DockerConfigSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

async function authFileFromSecrets(
  spec: BundleSpec,
  opts: ContentOptions,
  staging: string,
): Promise<string | undefined> {
  if (!spec.pullSecrets?.length) return undefined;
  const auths: Record<string, unknown> = {};
  for (const s of spec.pullSecrets) {
    const sec = await readAsRequester<DockerConfigSecret>(opts, "Secret", s.namespace, s.name, "PullSecretNotReadable");
    const raw = sec.data?.[".dockerconfigjson"] ?? sec.data?.[".dockercfg"];
    const bad = (why: string) =>
      new UnpackError("PullSecretInvalid", `pull secret ${s.namespace}/${s.name} ${why}`, false);
    if (!raw) throw bad("has no .dockerconfigjson key");
    let parsed: { auths?: Record<string, unknown> };
    try {
      parsed = JSON.parse(Buffer.from(raw, "base64").toString("utf8")) as { auths?: Record<string, unknown> };
    } catch {
      throw bad("does not hold a docker config (JSON)");
    }
    if (!parsed || typeof parsed !== "object") throw bad("does not hold a docker config (JSON)");
    Object.assign(auths, parsed.auths ?? parsed);
  }
  const f = join(staging, "..", `.auth-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, JSON.stringify({ auths }), { mode: 0o600 });
  return f;
}

/** The error an aborted or timed-out fetch ends with. */
function abortError(signal: AbortSignal, what: string, timeoutMs: number): UnpackError {
  const r = signal.reason as unknown;
  if (r instanceof UnpackError) return r;
  if (r instanceof DOMException && r.name === "TimeoutError")
    return new UnpackError("PullTimeout", `${what}: not done within ${timeoutMs / 1000} s`);
  return new UnpackError("Aborted", `${what}: aborted`, false);
}

/** Settles as `p`, or rejects when `signal` aborts first (the work behind `p` is left to its own timeouts). */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", abort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", abort);
        reject(e);
      },
    );
  });
}

/** An ImageError of the layer reader as an UnpackError: limits → ContentTooLarge, anything else invalid. */
function layerError(e: unknown, what: string): unknown {
  if (!(e instanceof ImageError)) return e;
  if (/exceeds \d+ bytes|more than \d+ entries/.test(e.message)) return tooLarge(`${what}: ${e.message}`);
  return invalid(`${what}: ${e.message}`);
}

/**
 * Unpacks a Bundle's content (all refs merged into one tree, later refs over earlier ones) within
 * `opts.limits`. Whatever fails, nothing of it stays on disk.
 */
export async function unpackBundle(spec: BundleSpec, opts: ContentOptions): Promise<UnpackedContent> {
  const limits: Required<ContentLimits> = {
    maxObjectBytes: Infinity,
    ...DEFAULT_LIMITS,
    ...Object.fromEntries(Object.entries(opts.limits ?? {}).filter(([, v]) => v !== undefined)),
  };
  const signal = opts.signal ?? new AbortController().signal;
  const staged = stage(opts.root);
  const resolvedRefs: string[] = [];
  const budget: UnpackBudget = { bytes: 0, entries: 0 };
  let authFile: string | undefined;
  let download: string | undefined;
  try {
    authFile = await authFileFromSecrets(spec, opts, staged);
    for (const ref of spec.refs) {
      if (signal.aborted) throw abortError(signal, ref, limits.pullTimeoutMs);
      const pullSignal = AbortSignal.any([signal, AbortSignal.timeout(limits.pullTimeoutMs)]);
      if (ref.startsWith("docker://")) {
        const image = ref.slice("docker://".length);
        let img;
        try {
          const total = Math.min(opts.pull?.totalTimeoutMs ?? limits.pullTimeoutMs, limits.pullTimeoutMs);
          img = await raceAbort(
            pullImage(image, {
              ...opts.pull,
              quietErrors: true,
              totalTimeoutMs: total,
              ...(authFile ? { authFile } : {}),
            }),
            pullSignal,
            () => abortError(pullSignal, `pulling ${image}`, limits.pullTimeoutMs),
          );
        } catch (e) {
          if (e instanceof UnpackError) throw e;
          const msg = (e as Error).message;
          const permanent =
            /digest|manifest unknown|not found|NAME_UNKNOWN|MANIFEST_UNKNOWN/i.test(msg) && image.includes("@sha256:");
          throw new UnpackError("PullFailed", `pulling ${image}: ${msg}`, !permanent);
        }
        const layers = img.manifest.layers.reduce((n, l) => n + (l.size ?? 0), 0);
        if (layers > limits.maxBytes)
          throw tooLarge(`${image}: its layers hold ${layers} bytes, more than the limit of ${limits.maxBytes}`);
        let tree;
        try {
          tree = await unpackImage(img, {
            cacheDir: opts.pull?.cacheDir,
            maxBytes: limits.maxBytes,
            maxEntries: limits.maxFiles,
          });
        } catch (e) {
          throw layerError(e, image);
        }
        copyTree(tree, staged, budget, limits);
        const named = image.replace(/[:@][^/]*$/, "");
        resolvedRefs.push(`docker://${image.includes("@") ? image : `${named}@${img.digest}`}`);
      } else if (ref.startsWith("file://")) {
        const path = resolve("/", ref.slice("file://".length));
        let found = false;
        for (const m of spec.volumeMounts ?? []) {
          const mount = resolve("/", m.mountPath);
          const under = mount === path || mount.startsWith(path === "/" ? "/" : path + "/");
          if (!under) continue;
          found = true;
          const cm = await readAsRequester<
            KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> }
          >(opts, "ConfigMap", m.configMap.namespace, m.configMap.name, "ConfigMapNotReadable");
          const target = realDir(staged, relative(path, mount));
          for (const [k, v] of Object.entries(cm.data ?? {}))
            writeSafe(target, k, Buffer.from(v, "utf8"), budget, limits);
          for (const [k, v] of Object.entries(cm.binaryData ?? {}))
            writeSafe(target, k, Buffer.from(v, "base64"), budget, limits);
        }
        if (!found) throw new UnpackError("InvalidRef", `${ref}: no volumeMount at or below ${path}`, false);
        resolvedRefs.push(ref);
      } else if (ref.startsWith("https://")) {
        if (!spec.digest)
          throw new UnpackError(
            "DigestRequired",
            `${ref}: https refs need spec.digest (sha256:<hex> of the tarball)`,
            false,
          );
        download = join(opts.root, `.download-${Math.random().toString(36).slice(2)}`);
        const got = await httpsDownload(ref, opts.pull?.caFile, download, limits, pullSignal);
        if (got !== spec.digest)
          throw new UnpackError(
            "DigestMismatch",
            `${ref}: content digest ${got} does not match spec.digest ${spec.digest}`,
          );
        try {
          await applyLayer(staged, boundedGunzip(download, limits), budget, {
            label: ref,
            maxBytes: limits.maxBytes,
            maxEntries: limits.maxFiles,
          });
        } catch (e) {
          throw layerError(e, ref);
        }
        rmSync(download, { force: true });
        download = undefined;
        resolvedRefs.push(ref);
      } else {
        throw new UnpackError("InvalidRef", `unsupported ref ${ref} (docker://, file:// or https://)`, false);
      }
    }
    if (signal.aborted) throw abortError(signal, "unpacking", limits.pullTimeoutMs);
    const { format, objects } = inspect(staged, limits);
    const { dir, digest } = commit(opts.root, staged, limits);
    return { dir, digest, format, resolvedRefs, objects };
  } catch (e) {
    rmSync(staged, { recursive: true, force: true });
    throw e;
  } finally {
    if (authFile) rmSync(authFile, { force: true });
    if (download) rmSync(download, { force: true });
  }
}

/**
 * The uncompressed stream of a downloaded .tar.gz (or plain .tar), at most `maxBytes` plus 4 KiB per
 * allowed entry (headers and padding): a small tarball that expands without end is stopped here.
 */
async function* boundedGunzip(file: string, limits: Required<ContentLimits>): AsyncGenerator<Buffer> {
  const cap = limits.maxBytes + 4096 * limits.maxFiles;
  const head = Buffer.alloc(2);
  const fd = createReadStream(file, { start: 0, end: 1 });
  let n = 0;
  for await (const c of fd) n += (c as Buffer).copy(head, n);
  const src = createReadStream(file);
  const stream = head[0] === 0x1f && head[1] === 0x8b ? src.pipe(createGunzip()) : src;
  let total = 0;
  try {
    for await (const c of stream) {
      total += (c as Buffer).length;
      if (total > cap) throw tooLarge(`the tarball expands to more than ${cap} bytes`);
      yield c as Buffer;
    }
  } catch (e) {
    if (e instanceof UnpackError) throw e;
    throw invalid(`truncated or corrupt gzip stream: ${(e as Error).message}`);
  } finally {
    src.destroy();
    stream.destroy();
  }
}

/**
 * GETs an https URL into `file` (CA certificates from the image access options trusted besides the
 * system's), streamed and hashed on the way, at most `maxBytes`, 60 s idle, until `signal` aborts.
 * Resolves with the sha256 of the body.
 */
async function httpsDownload(
  url: string,
  caFile: string | readonly string[] | undefined,
  file: string,
  limits: Required<ContentLimits>,
  signal: AbortSignal,
): Promise<string> {
  const files = caFile === undefined ? [] : typeof caFile === "string" ? [caFile] : [...caFile];
  const ca = files.length > 0 ? [...tls.rootCertificates, ...files.map((f) => readFileSync(f, "utf8"))] : undefined;
  const failed = (m: string, retryable = true) => new UnpackError("FetchFailed", `GET ${url}: ${m}`, retryable);
  const res = await new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal, `GET ${url}`, limits.pullTimeoutMs));
    const req = https.get(url, { ca, timeout: 60_000, signal }, resolve);
    req.on("timeout", () => req.destroy(failed("no answer for 60 s")));
    req.on("error", (e) =>
      reject(
        signal.aborted
          ? abortError(signal, `GET ${url}`, limits.pullTimeoutMs)
          : e instanceof UnpackError
            ? e
            : failed(e.message),
      ),
    );
  });
  if (res.statusCode !== 200) {
    res.destroy();
    throw failed(`unexpected status ${res.statusCode}`); // no reason phrase: the target is the requester's choice
  }
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    res.destroy();
    throw tooLarge(`GET ${url}: the body has ${declared} bytes, more than the limit of ${limits.maxBytes}`);
  }
  const h = createHash("sha256");
  let n = 0;
  const count = new Transform({
    transform(c: Buffer, _enc, done) {
      n += c.length;
      if (n > limits.maxBytes)
        return done(tooLarge(`GET ${url}: the body is larger than the limit of ${limits.maxBytes} bytes`));
      h.update(c);
      done(null, c);
    },
  });
  res.setTimeout(60_000, () => res.destroy(failed("no data for 60 s")));
  try {
    await pipeline(res, count, createWriteStream(file, { mode: 0o600 }), { signal });
  } catch (e) {
    if (signal.aborted) throw abortError(signal, `GET ${url}`, limits.pullTimeoutMs);
    if (e instanceof UnpackError) throw e;
    throw failed((e as Error).message);
  }
  return `sha256:${h.digest("hex")}`;
}

function writeSafe(
  dir: string,
  name: string,
  data: Buffer,
  budget: UnpackBudget,
  limits: Required<ContentLimits>,
): void {
  if (name.includes("/") || name === ".." || name === ".")
    throw new UnpackError("InvalidContent", `configmap key ${JSON.stringify(name)} is not a file name`, false);
  budget.bytes += data.length;
  if (budget.bytes > limits.maxBytes) throw tooLarge(`the content is larger than ${limits.maxBytes} bytes`);
  const p = join(dir, name);
  if (lstatOrUndef(p)) rmSync(p, { recursive: true, force: true });
  writeFileSync(p, data);
}

function objectPath(o: KubeObject): string {
  return `/objects/${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name ?? ""}`;
}

/** Refuses a file under `manifests/` larger than `maxObjectBytes` (the class's `maxObjectSize`). */
function checkObjectSizes(dir: string, maxObjectBytes: number): void {
  const m = join(dir, "manifests");
  if (!Number.isFinite(maxObjectBytes) || !existsSync(m) || !statSync(m).isDirectory()) return;
  for (const e of readdirSync(m)) {
    const st = statSync(join(m, e));
    if (st.isFile() && st.size > maxObjectBytes)
      throw new UnpackError(
        "ObjectTooLarge",
        `manifests/${e} has ${st.size} bytes, more than the class's maxObjectSize of ${maxObjectBytes} bytes`,
        false,
      );
  }
}

/**
 * The format and object list of an unpacked tree; refuses content neither format accepts, links that
 * leave it and content beyond the limits.
 */
export function inspect(
  dir: string,
  limits: ContentLimits = {},
): { format: "registry+v1" | "plain"; objects: string[] } {
  scanTree(dir, limits);
  checkObjectSizes(dir, limits.maxObjectBytes ?? Infinity);
  if (isBundleDirectory(dir)) {
    let b;
    try {
      b = readBundleDirectory(dir);
    } catch (e) {
      throw new UnpackError("InvalidBundle", `invalid registry+v1 bundle: ${(e as Error).message}`, false);
    }
    return { format: "registry+v1", objects: b.objects.map((o) => objectPath(o.object as unknown as KubeObject)) };
  }
  return { format: "plain", objects: readPlainObjects(dir).map(objectPath) };
}

/** A plain bundle: every YAML/JSON document in `manifests/` (no subdirectories), at least one object. */
export function readPlainObjects(dir: string): KubeObject[] {
  const m = join(dir, "manifests");
  if (!existsSync(m) || !statSync(m).isDirectory())
    throw new UnpackError("InvalidBundle", "invalid bundle: no manifests/ directory", false);
  const out: KubeObject[] = [];
  for (const e of readdirSync(m, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory())
      throw new UnpackError(
        "InvalidBundle",
        `subdirectories are not allowed within the "manifests" directory of the bundle: found "manifests/${e.name}"`,
        false,
      );
    if (!e.isFile() || e.name.startsWith(".")) continue;
    try {
      out.push(...parseKubeDocuments(readFileSync(join(m, e.name), "utf8"), `manifests/${e.name}`));
    } catch (err) {
      throw new UnpackError("InvalidBundle", (err as Error).message, false);
    }
  }
  if (out.length === 0)
    throw new UnpackError(
      "InvalidBundle",
      "invalid bundle: found zero objects: plain bundles are required to contain at least one object",
      false,
    );
  return out;
}

export function contentExists(root: string, digest: string): string | undefined {
  const dir = join(root, digest.replace(":", "-"));
  return existsSync(dir) ? dir : undefined;
}
