/**
 * Building catalog and bundle images without a container engine: one reproducible layer (sorted
 * entries, mtime fixed at `SOURCE_DATE_EPOCH` or 0, uid/gid 0, gzip with a fixed header), an OCI
 * config carrying the labels opm and OLM read, and an OCI manifest; written into an OCI layout or
 * pushed to a registry.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, constants as zc } from "node:zlib";
import { readBundleDirectory } from "../bundle/read.js";
import { OpcatError } from "../errors/index.js";
import { writeDirectoryAtomic } from "../fsx/write.js";
import { parseGoYamlDocument } from "../yaml/index.js";
import { ImageError, sha256Digest } from "./errors.js";
import {
  encodeManifest,
  MEDIA_DOCKER_LAYER_GZIP,
  MEDIA_OCI_CONFIG,
  MEDIA_OCI_LAYER_GZIP,
  MEDIA_OCI_MANIFEST,
  sortKeys,
  type Descriptor,
  type ImageConfig,
  type ImageManifest,
} from "./manifest.js";
import { parseNormalizedNamed, ImageReferenceError } from "./reference.js";
import { RegistryClient, type RegistryOptions } from "./registry.js";
import { LABEL_CONFIGS } from "./labels.js";
import { BlobStore, parseLayoutRef, tagInLayout } from "./store.js";
import { getImage, type PullOptions, type PullProgress } from "./pull.js";
import { writeTar, type TarInput } from "./tar.js";

/** An image built in memory. */
export interface BuiltImage {
  manifest: Buffer;
  manifestDigest: string;
  config: Buffer;
  configDigest: string;
  layer: Buffer;
  layerDigest: string;
  /** sha256 of the uncompressed layer (the config's diff_id). */
  diffId: string;
  labels: Record<string, string>;
  /** Layers of a base image below `layer` (catalog images built on opm's image), with their bytes. */
  baseLayers?: { desc: Descriptor; bytes(): Buffer }[];
}

export interface BuildOptions {
  /** Labels added to (and overriding) the image's own. */
  labels?: Record<string, string>;
  /** Layer mtime in seconds (default `$SOURCE_DATE_EPOCH` or 0). */
  mtime?: number;
  /** Image platform (default linux/amd64). */
  os?: string;
  architecture?: string;
  /** How the image runs (Entrypoint, Cmd, Env, User, WorkingDir, ExposedPorts): the config's `config`. */
  run?: Record<string, unknown>;
  /** gzip level of the layer (default 9). */
  gzipLevel?: number;
}

function sourceDateEpoch(): number {
  const v = process.env.SOURCE_DATE_EPOCH;
  return v && /^[0-9]+$/.test(v) ? Number(v) : 0;
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The entries of directory `dir` placed under `prefix` in the image, parents before children, names in byte order. */
export function treeEntries(dir: string, prefix: string): TarInput[] {
  const out: TarInput[] = [{ path: prefix, type: "dir" }];
  const walk = (abs: string, rel: string): void => {
    const names = readdirSync(abs).sort(byteOrder);
    for (const n of names) {
      const a = join(abs, n);
      const r = `${rel}/${n}`;
      const st = lstatSync(a);
      if (st.isDirectory()) {
        out.push({ path: r, type: "dir" });
        walk(a, r);
      } else if (st.isFile())
        out.push({ path: r, type: "file", data: readFileSync(a), mode: st.mode & 0o111 ? 0o755 : 0o644 });
      else if (st.isSymbolicLink()) out.push({ path: r, type: "symlink", linkname: readlinkSync(a) });
    }
  };
  walk(dir, prefix);
  return out;
}

/** Assembles layer, config and manifest from tar entries and labels. */
export function assembleImage(
  entries: TarInput[],
  labels: Record<string, string>,
  opts: BuildOptions = {},
): BuiltImage {
  const tar = Buffer.concat(writeTar(entries, opts.mtime ?? sourceDateEpoch()));
  // level 9, no file name, mtime 0 and OS byte fixed by zlib: the same input gives the same bytes
  const layer = gzipSync(tar, { level: opts.gzipLevel ?? 9, strategy: zc.Z_DEFAULT_STRATEGY });
  const diffId = sha256Digest(tar);
  const layerDigest = sha256Digest(layer);
  const all = sortKeys({ ...labels, ...(opts.labels ?? {}) });
  const created = new Date((opts.mtime ?? sourceDateEpoch()) * 1000).toISOString().replace(/\.000Z$/, "Z");
  const config = Buffer.from(
    JSON.stringify({
      created,
      architecture: opts.architecture ?? "amd64",
      os: opts.os ?? "linux",
      config: { ...(opts.run ?? {}), Labels: all },
      rootfs: { type: "layers", diff_ids: [diffId] },
      history: [{ created, created_by: "opcat" }],
    }),
  );
  const configDigest = sha256Digest(config);
  const manifest = encodeManifest({ mediaType: MEDIA_OCI_CONFIG, digest: configDigest, size: config.length }, [
    { mediaType: MEDIA_OCI_LAYER_GZIP, digest: layerDigest, size: layer.length },
  ]);
  return {
    manifest,
    manifestDigest: sha256Digest(manifest),
    config,
    configDigest,
    layer,
    layerDigest,
    diffId,
    labels: all,
  };
}

/**
 * A catalog image: the directory at `/configs` and the label
 * `operators.operatorframework.io.index.configs.v1=/configs`.
 */
export function buildCatalogImage(dir: string, opts: BuildOptions = {}): BuiltImage {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    st = undefined;
  }
  if (!st?.isDirectory())
    throw new OpcatError("BUILD_NOT_A_DIRECTORY", `provided root path ${JSON.stringify(dir)} is not a directory`, {
      kind: "io",
    });
  return assembleImage(treeEntries(dir, "configs"), { [LABEL_CONFIGS]: "/configs" }, opts);
}

/**
 * A bundle image: `manifests/` at `/manifests/`, `metadata/` at `/metadata/`, and every annotation of
 * `metadata/annotations.yaml` as a label (what `opm alpha bundle generate`'s Dockerfile does). The
 * bundle is read first, so a bundle opm cannot render is refused with opm's error.
 */
export function buildBundleImage(dir: string, opts: BuildOptions = {}): BuiltImage {
  const b = readBundleDirectory(dir);
  const doc = parseGoYamlDocument(readFileSync(join(dir, b.annotationsFile), "utf8")) as {
    annotations?: Record<string, unknown>;
  } | null;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc?.annotations ?? {})) if (typeof v === "string") labels[k] = v;
  const entries = [
    ...treeEntries(join(dir, "manifests"), "manifests"),
    ...treeEntries(join(dir, "metadata"), "metadata"),
  ];
  return assembleImage(entries, labels, opts);
}

/** How opm's Dockerfile (`opm generate dockerfile`) runs a catalog image. */
export const CATALOG_ENTRYPOINT = ["/bin/opm"];
export const CATALOG_CMD = ["serve", "/configs", "--cache-dir=/tmp/cache"];
/** Label of opcat's own image (`opcat cluster image`); its value names the Node runtime. */
export const LABEL_OPCAT_RUNTIME = "io.opcat.runtime";
/**
 * How a catalog image on opcat's image runs (its entrypoint is opcat): `opcat serve /configs` with opm's
 * gRPC port (50051, with the gRPC health service `grpc_health_probe` asks) and catalogd's HTTP API on 8080.
 */
export const OPCAT_CATALOG_CMD = ["serve", "/configs", "--grpc=0.0.0.0:50051", "--http=0.0.0.0:8080"];

/** A pulled base image: its manifest, config and a store holding its layers. */
export interface BaseImage {
  ref: string;
  digest: string;
  manifest: ImageManifest;
  config: ImageConfig;
  store: BlobStore;
}

/**
 * The catalog image `img` on top of `base`, as `docker build` of opm's Dockerfile makes it: the
 * base's layers, then the `/configs` layer; the base's config with opm's entrypoint and command
 * (`/bin/opm serve /configs --cache-dir=/tmp/cache`), its labels plus the catalog's, the layer's
 * diff_id and a history entry. Base layers keep their bytes (docker media types become their OCI
 * equivalents, same bytes). opm's Dockerfile also runs `opm serve --cache-only` at build time to
 * ship a pre-built serve cache; opcat cannot write opm's cache format, so opm builds it at start-up
 * in /tmp/cache (the command's --cache-dir), as a CatalogSource without a cache does.
 */
export function onBaseImage(img: BuiltImage, base: BaseImage): BuiltImage {
  const own = JSON.parse(img.config.toString("utf8")) as { created: string; architecture: string; os: string };
  const bc = base.config;
  const labels = sortKeys({
    ...((bc.config?.Labels as Record<string, string> | null | undefined) ?? {}),
    ...img.labels,
  });
  const history = Array.isArray(bc.history) ? (bc.history as unknown[]) : [];
  // on opcat's own image: its entrypoint (opcat) serves the catalog; on opm's: /bin/opm serve
  const opcatBase = Boolean((bc.config?.Labels as Record<string, string> | null | undefined)?.[LABEL_OPCAT_RUNTIME]);
  const entrypoint = opcatBase ? ((bc.config?.Entrypoint as string[] | undefined) ?? []) : CATALOG_ENTRYPOINT;
  const cmd = opcatBase ? OPCAT_CATALOG_CMD : CATALOG_CMD;
  const config = Buffer.from(
    JSON.stringify({
      ...bc,
      created: own.created,
      architecture: bc.architecture ?? own.architecture,
      os: bc.os ?? own.os,
      config: { ...(bc.config ?? {}), Labels: labels, Entrypoint: entrypoint, Cmd: cmd },
      rootfs: { type: "layers", diff_ids: [...(bc.rootfs?.diff_ids ?? []), img.diffId] },
      history: [
        ...history,
        {
          created: own.created,
          created_by: `opcat catalog build: /configs (ENTRYPOINT ${entrypoint.join(" ")}, CMD ${cmd.join(" ")})`,
        },
      ],
    }),
  );
  const configDigest = sha256Digest(config);
  const ociMedia = (m: string | undefined): string =>
    m === MEDIA_DOCKER_LAYER_GZIP || m === undefined ? MEDIA_OCI_LAYER_GZIP : m;
  const baseLayers = base.manifest.layers.map((l) => {
    if (!base.store.has(l.digest))
      throw new ImageError("IMAGE_BLOB_MISSING", `base image ${base.ref}: layer ${l.digest} is not in the cache`);
    return {
      desc: { mediaType: ociMedia(l.mediaType), digest: l.digest, size: l.size },
      bytes: () => readFileSync(base.store.path(l.digest)),
    };
  });
  const manifest = encodeManifest({ mediaType: MEDIA_OCI_CONFIG, digest: configDigest, size: config.length }, [
    ...baseLayers.map((l) => l.desc),
    { mediaType: MEDIA_OCI_LAYER_GZIP, digest: img.layerDigest, size: img.layer.length },
  ]);
  return { ...img, config, configDigest, manifest, manifestDigest: sha256Digest(manifest), labels, baseLayers };
}

/**
 * `img` on the base image `ref` (pulled with `pull`; its layers are fetched into the cache), or
 * `img` itself for `scratch` or no base. A base that cannot be pulled is an error saying what to do.
 */
export async function withBaseImage(
  img: BuiltImage,
  ref: string | undefined,
  pull: PullOptions = {},
): Promise<BuiltImage> {
  if (ref === undefined || ref === "" || ref === "scratch") return img;
  let base: BaseImage;
  try {
    base = await getImage(ref, { ...pull, platform: pull.platform ?? { os: "linux", architecture: "amd64" } });
  } catch (e) {
    if (!(e instanceof ImageError || e instanceof OpcatError)) throw e;
    throw new OpcatError(
      "BUILD_BASE_IMAGE",
      `pulling the base image ${ref}: ${e.message} (use --base-image with an ` +
        `opm image you can reach, e.g. a mirror of quay.io/operator-framework/opm, ` +
        `or --base-image scratch for a content-only image that OLM v0 cannot run)`,
      { kind: "io", cause: e },
    );
  }
  return onBaseImage(img, base);
}

/** The manifest descriptor of a built image. */
export function manifestDescriptor(img: BuiltImage): Descriptor {
  return { mediaType: MEDIA_OCI_MANIFEST, digest: img.manifestDigest, size: img.manifest.length };
}

/** Writes the image into the OCI layout of `oci:<dir>[:tag]` (blobs first, then index.json). */
export function writeToLayout(img: BuiltImage, ref: string): void {
  const lr = parseLayoutRef(ref);
  if (!lr) throw new ImageError("IMAGE_BAD_REFERENCE", `not an OCI layout reference: ${JSON.stringify(ref)}`);
  const write = (dir: string): void => {
    const store = new BlobStore(dir);
    for (const l of img.baseLayers ?? []) if (!store.has(l.desc.digest)) store.putBytes(l.bytes(), l.desc.digest);
    store.putBytes(img.layer, img.layerDigest);
    store.putBytes(img.config, img.configDigest);
    store.putBytes(img.manifest, img.manifestDigest);
    tagInLayout(dir, lr.tag, manifestDescriptor(img));
  };
  // An existing layout gets its blobs first and its index.json last, each written atomically: a
  // failed run leaves it as it was (plus unreferenced blobs). A new one is written whole into a
  // temporary sibling and renamed into place: a failed run leaves nothing.
  if (existsSync(lr.dir)) write(lr.dir);
  else writeDirectoryAtomic(lr.dir, write);
}

/**
 * Pushes the image to a registry reference (normalised like docker:
 * docker.io, library/, tag "latest"). Returns `name@digest`.
 */
export async function pushImage(
  img: BuiltImage,
  ref: string,
  opts: RegistryOptions & { client?: RegistryClient; onProgress?: (p: PullProgress) => void } = {},
): Promise<string> {
  let named;
  try {
    named = parseNormalizedNamed(ref);
  } catch (e) {
    if (e instanceof ImageReferenceError)
      throw new ImageError("IMAGE_BAD_REFERENCE", `invalid reference ${JSON.stringify(ref)}: ${e.message}`);
    throw e;
  }
  const client = opts.client ?? new RegistryClient(opts);
  try {
    const t = client.pushTarget(named.name);
    // progress (a line on a terminal): blobs and bytes pushed so far
    const blobs: { digest: string; size: number; bytes: () => Buffer }[] = [
      ...(img.baseLayers ?? []).map((l) => ({ digest: l.desc.digest, size: l.desc.size, bytes: l.bytes })),
      { digest: img.layerDigest, size: img.layer.length, bytes: () => img.layer },
      { digest: img.configDigest, size: img.config.length, bytes: () => img.config },
    ];
    const progress: PullProgress = {
      ref,
      bytes: 0,
      total: blobs.reduce((n, b) => n + b.size, 0),
      blobsDone: 0,
      blobs: blobs.length,
    };
    opts.onProgress?.(progress);
    for (const b of blobs) {
      await client.pushBlob(t, b.digest, b.bytes());
      progress.bytes += b.size;
      progress.blobsDone++;
      opts.onProgress?.(progress);
    }
    const tagOrDigest = named.tag ?? named.digest ?? "latest";
    if (named.digest && named.digest !== img.manifestDigest)
      throw new ImageError(
        "IMAGE_DIGEST_MISMATCH",
        `cannot push to ${ref}: the image's digest is ${img.manifestDigest}`,
      );
    await client.putManifest(t, tagOrDigest, MEDIA_OCI_MANIFEST, img.manifest);
    return `${named.name}@${img.manifestDigest}`;
  } finally {
    if (!opts.client) client.close();
  }
}

/** Writes to `oci:<dir>[:tag]` or, with `push`, pushes to a registry reference. Returns where it went. */
export async function outputImage(
  img: BuiltImage,
  tag: string,
  opts: RegistryOptions & { push?: boolean; client?: RegistryClient; onProgress?: (p: PullProgress) => void } = {},
): Promise<string> {
  if (tag.startsWith("oci:")) {
    writeToLayout(img, tag);
    return `${tag}@${img.manifestDigest}`;
  }
  if (!opts.push) {
    throw new OpcatError(
      "USAGE_TAG",
      `--tag ${JSON.stringify(tag)} is a registry reference: add --push ` +
        `to push it there, or write an OCI layout with --tag oci:<dir>:<tag>`,
      { kind: "usage" },
    );
  }
  return pushImage(img, tag, opts);
}
