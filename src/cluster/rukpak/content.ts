/**
 * Unpacking a Bundle's refs into local, content-addressed storage (no Pod needed: opcat pulls images
 * itself): `docker://` images through opcat's registry client (pull secrets, registries.conf mirrors,
 * digest verification, the blob cache), `file://` paths from ConfigMaps mounted by `volumeMounts`,
 * `https://` gzipped tarballs checked against `spec.digest`. The result is a directory
 * `<root>/sha256-<digest of the files>` holding the bundle's files, plus its format and objects.
 */
import { createHash } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { isBundleDirectory, readBundleDirectory } from "../../bundle/index.js";
import { applyLayer } from "../../image/unpack.js";
import { pullImage, unpackImage, type PullOptions } from "../../image/index.js";
import { parseKubeDocuments } from "./manifests.js";
import type { KubeClient, KubeObject } from "../client.js";
import type { BundleSpec } from "./api.js";

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
    readonly reason: string,
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = "UnpackError";
  }
}

export interface ContentOptions {
  /** Root of the content store. */
  root: string;
  /** Image access (registries.conf, TLS, cache) for docker:// refs. */
  pull?: PullOptions;
  client: KubeClient;
}

function walk(dir: string, out: string[] = [], base = dir): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out, base);
    else if (e.isFile()) out.push(relative(base, p));
  }
  return out;
}

/** sha256 over the sorted relative paths and contents of a tree. */
export function treeDigest(dir: string): string {
  const h = createHash("sha256");
  for (const f of walk(dir).sort()) {
    h.update(f.split(sep).join("/"));
    h.update("\0");
    h.update(readFileSync(join(dir, f)));
    h.update("\0");
  }
  return `sha256:${h.digest("hex")}`;
}

/** Moves a staged tree into the store under its digest (kept if already there). */
function commit(root: string, staged: string): { dir: string; digest: string } {
  const digest = treeDigest(staged);
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

/** Copies a tree (regular files and directories only). */
function copyTree(src: string, dst: string): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const s = join(src, e.name);
    const d = join(dst, e.name);
    if (e.isDirectory()) copyTree(s, d);
    else if (e.isFile()) writeFileSync(d, readFileSync(s));
  }
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
    const sec = await opts.client.tryGet<DockerConfigSecret>("v1", "Secret", s.name, s.namespace);
    if (!sec) throw new UnpackError("PullSecretNotFound", `pull secret ${s.namespace}/${s.name} not found`);
    const raw = sec.data?.[".dockerconfigjson"] ?? sec.data?.[".dockercfg"];
    if (!raw)
      throw new UnpackError(
        "PullSecretInvalid",
        `pull secret ${s.namespace}/${s.name} has no .dockerconfigjson key`,
        false,
      );
    const parsed = JSON.parse(Buffer.from(raw, "base64").toString("utf8")) as { auths?: Record<string, unknown> };
    Object.assign(auths, parsed.auths ?? parsed);
  }
  const f = join(staging, "..", `.auth-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, JSON.stringify({ auths }), { mode: 0o600 });
  return f;
}

/** Unpacks a Bundle's content (all refs merged into one tree, later refs over earlier ones). */
export async function unpackBundle(spec: BundleSpec, opts: ContentOptions): Promise<UnpackedContent> {
  const staged = stage(opts.root);
  const resolvedRefs: string[] = [];
  let authFile: string | undefined;
  try {
    authFile = await authFileFromSecrets(spec, opts, staged);
    for (const ref of spec.refs) {
      if (ref.startsWith("docker://")) {
        const image = ref.slice("docker://".length);
        let img;
        try {
          img = await pullImage(image, { ...opts.pull, ...(authFile ? { authFile } : {}) });
        } catch (e) {
          const msg = (e as Error).message;
          const permanent =
            /digest|manifest unknown|not found|NAME_UNKNOWN|MANIFEST_UNKNOWN/i.test(msg) && image.includes("@sha256:");
          throw new UnpackError("PullFailed", `pulling ${image}: ${msg}`, !permanent);
        }
        const tree = await unpackImage(img, { cacheDir: opts.pull?.cacheDir });
        copyTree(tree, staged);
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
          const cm = await opts.client.tryGet<
            KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> }
          >("v1", "ConfigMap", m.configMap.name, m.configMap.namespace);
          if (!cm)
            throw new UnpackError(
              "ConfigMapNotFound",
              `configmap ${m.configMap.namespace}/${m.configMap.name} (mounted at ${m.mountPath}) not found`,
            );
          const target = join(staged, relative(path, mount));
          mkdirSync(target, { recursive: true });
          for (const [k, v] of Object.entries(cm.data ?? {})) writeSafe(target, k, Buffer.from(v, "utf8"));
          for (const [k, v] of Object.entries(cm.binaryData ?? {})) writeSafe(target, k, Buffer.from(v, "base64"));
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
        const body = await httpsGet(ref, opts.pull?.caFile);
        const got = `sha256:${createHash("sha256").update(body).digest("hex")}`;
        if (got !== spec.digest)
          throw new UnpackError(
            "DigestMismatch",
            `${ref}: content digest ${got} does not match spec.digest ${spec.digest}`,
          );
        await applyLayer(
          staged,
          (async function* () {
            yield body;
          })(),
          { bytes: 0, entries: 0 },
          { label: ref },
        );
        resolvedRefs.push(ref);
      } else {
        throw new UnpackError("InvalidRef", `unsupported ref ${ref} (docker://, file:// or https://)`, false);
      }
    }
    const { format, objects } = inspect(staged);
    const { dir, digest } = commit(opts.root, staged);
    return { dir, digest, format, resolvedRefs, objects };
  } catch (e) {
    rmSync(staged, { recursive: true, force: true });
    throw e;
  } finally {
    if (authFile) rmSync(authFile, { force: true });
  }
}

/**
 * GET an https URL (CA certificates from the image access options
 * trusted besides the system's), at most 1 GiB, 60 s idle.
 */
function httpsGet(url: string, caFile: string | readonly string[] | undefined): Promise<Buffer> {
  const files = caFile === undefined ? [] : typeof caFile === "string" ? [caFile] : [...caFile];
  const ca = files.length > 0 ? [...tls.rootCertificates, ...files.map((f) => readFileSync(f, "utf8"))] : undefined;
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, timeout: 60_000 }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(
          new UnpackError(
            "FetchFailed",
            `GET ${url}: unexpected status "${res.statusCode} ${res.statusMessage ?? ""}"`,
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let n = 0;
      res.on("data", (c: Buffer) => {
        n += c.length;
        if (n > 1 << 30) req.destroy(new UnpackError("FetchFailed", `GET ${url}: more than 1 GiB`, false));
        else chunks.push(c);
      });
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new UnpackError("FetchFailed", `GET ${url}: no answer for 60 s`)));
    req.on("error", (e) =>
      reject(e instanceof UnpackError ? e : new UnpackError("FetchFailed", `GET ${url}: ${e.message}`)),
    );
  });
}

function writeSafe(dir: string, name: string, data: Buffer): void {
  if (name.includes("/") || name === ".." || name === ".")
    throw new UnpackError("InvalidContent", `configmap key ${JSON.stringify(name)} is not a file name`, false);
  writeFileSync(join(dir, name), data);
}

function objectPath(o: KubeObject): string {
  return `/objects/${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name ?? ""}`;
}

/** The format and object list of an unpacked tree; refuses content neither format accepts. */
export function inspect(dir: string): { format: "registry+v1" | "plain"; objects: string[] } {
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
