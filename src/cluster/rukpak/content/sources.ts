/**
 * Fetching a Bundle's refs as its requester: `docker://` images (pull secrets read with the
 * requester's rights), `file://` ConfigMaps, `https://` tarballs; each bounded in bytes and time.
 */
import { createHash } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import { createReadStream, createWriteStream, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { join, relative, resolve } from "node:path";
import { applyLayer, type UnpackBudget } from "../../../image/unpack.js";
import { ImageError, pullImage, unpackImage } from "../../../image/index.js";
import { isForbidden, isNotFound, type KubeObject } from "../../kube/client.js";
import type { BundleSpec } from "../api.js";
import { canI } from "../permissions.js";
import type { ConditionReason } from "../reasons.js";

import { DEFAULT_LIMITS, UnpackError, type ContentLimits, type ContentOptions, type UnpackedContent } from "./types.js";
import { commit, copyTree, invalid, lstatOrUndef, realDir, stage, tooLarge } from "./store.js";
import { inspect } from "./inspect.js";
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

/**
 * The format and object list of an unpacked tree; refuses content neither format accepts, links that
 * leave it and content beyond the limits.
 */
