/**
 * Image manifests, indexes and configs in both OCI and Docker v2 schema 2 media types: parsing with
 * shape checks, platform selection, and the canonical JSON this project writes.
 */
import { checkDigest, ImageError } from "./errors.js";

export const MEDIA_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const MEDIA_OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const MEDIA_OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
export const MEDIA_OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip";
export const MEDIA_OCI_LAYER = "application/vnd.oci.image.layer.v1.tar";
export const MEDIA_OCI_LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd";
export const MEDIA_DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const MEDIA_DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
export const MEDIA_DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";
export const MEDIA_DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip";
export const MEDIA_DOCKER_SCHEMA1 = "application/vnd.docker.distribution.manifest.v1+json";
export const MEDIA_DOCKER_SCHEMA1_SIGNED = "application/vnd.docker.distribution.manifest.v1+prettyjws";

/** The `Accept` header for manifest requests: every manifest and index type this client reads. */
export const MANIFEST_ACCEPT = [MEDIA_OCI_MANIFEST, MEDIA_OCI_INDEX, MEDIA_DOCKER_MANIFEST, MEDIA_DOCKER_LIST].join(
  ", ",
);

/** The annotation that names an image in an OCI layout's index.json. */
export const ANNOTATION_REF_NAME = "org.opencontainers.image.ref.name";

/** Largest manifest or config accepted (containers/image's limit). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
}

export interface ImageManifest {
  kind: "manifest";
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
}

export interface ImageIndex {
  kind: "index";
  mediaType: string;
  manifests: Descriptor[];
}

/** The parts of an image config this project reads and writes. */
export interface ImageConfig {
  architecture?: string;
  os?: string;
  config?: { Labels?: Record<string, string> | null; [k: string]: unknown };
  rootfs?: { type: string; diff_ids: string[] };
  [k: string]: unknown;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function descriptor(v: unknown, where: string): Descriptor {
  if (
    !isObj(v) ||
    typeof v.digest !== "string" ||
    typeof v.size !== "number" ||
    !Number.isSafeInteger(v.size) ||
    v.size < 0
  ) {
    throw new ImageError("IMAGE_BAD_MANIFEST", `${where}: invalid descriptor`);
  }
  const d: Descriptor = {
    mediaType: typeof v.mediaType === "string" ? v.mediaType : "",
    digest: checkDigest(v.digest, where),
    size: v.size,
  };
  if (isObj(v.annotations)) d.annotations = v.annotations as Record<string, string>;
  if (isObj(v.platform) && typeof v.platform.architecture === "string" && typeof v.platform.os === "string") {
    d.platform = { architecture: v.platform.architecture, os: v.platform.os };
    if (typeof v.platform.variant === "string") d.platform.variant = v.platform.variant;
  }
  return d;
}

/**
 * Parses manifest bytes; `contentType` (from the registry or a descriptor) wins over the document's
 * own `mediaType`. Schema 1 manifests and unknown types are refused.
 */
export function parseManifest(
  bytes: Uint8Array,
  contentType: string | undefined,
  where: string,
): ImageManifest | ImageIndex {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (e) {
    throw new ImageError("IMAGE_BAD_MANIFEST", `${where}: manifest is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObj(doc)) throw new ImageError("IMAGE_BAD_MANIFEST", `${where}: manifest is not a JSON object`);
  const ct = (contentType ?? "").split(";")[0].trim();
  let mt = typeof doc.mediaType === "string" ? doc.mediaType : "";
  if (ct && ct !== "application/json" && ct !== "text/plain" && ct !== "application/octet-stream") mt = ct;
  if (!mt)
    mt = Array.isArray(doc.manifests)
      ? MEDIA_OCI_INDEX
      : doc.schemaVersion === 1
        ? MEDIA_DOCKER_SCHEMA1
        : MEDIA_OCI_MANIFEST;
  if (mt === MEDIA_DOCKER_SCHEMA1 || mt === MEDIA_DOCKER_SCHEMA1_SIGNED || doc.schemaVersion === 1) {
    throw new ImageError("IMAGE_UNSUPPORTED_MANIFEST", `${where}: Docker schema 1 manifests are not supported`);
  }
  if (mt === MEDIA_OCI_INDEX || mt === MEDIA_DOCKER_LIST) {
    if (!Array.isArray(doc.manifests))
      throw new ImageError("IMAGE_BAD_MANIFEST", `${where}: image index has no manifests list`);
    return {
      kind: "index",
      mediaType: mt,
      manifests: doc.manifests.map((m, i) => descriptor(m, `${where}: manifests[${i}]`)),
    };
  }
  if (mt === MEDIA_OCI_MANIFEST || mt === MEDIA_DOCKER_MANIFEST) {
    if (!Array.isArray(doc.layers))
      throw new ImageError("IMAGE_BAD_MANIFEST", `${where}: image manifest has no layers list`);
    return {
      kind: "manifest",
      mediaType: mt,
      config: descriptor(doc.config, `${where}: config`),
      layers: doc.layers.map((l, i) => descriptor(l, `${where}: layers[${i}]`)),
    };
  }
  throw new ImageError("IMAGE_UNSUPPORTED_MANIFEST", `${where}: unsupported manifest media type ${JSON.stringify(mt)}`);
}

/** Parses an image config blob. */
export function parseConfig(bytes: Uint8Array, where: string): ImageConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (e) {
    throw new ImageError("IMAGE_BAD_CONFIG", `${where}: image config is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObj(doc)) throw new ImageError("IMAGE_BAD_CONFIG", `${where}: image config is not a JSON object`);
  return doc as ImageConfig;
}

/** The image's labels (`config.Labels`), {} when there are none. */
export function configLabels(cfg: ImageConfig): Record<string, string> {
  const l = cfg.config?.Labels;
  const out: Record<string, string> = {};
  if (isObj(l)) for (const [k, v] of Object.entries(l)) if (typeof v === "string") out[k] = v;
  return out;
}

/** Go's runtime.GOARCH for this process (the architecture opm picks from an index). */
export function hostPlatform(): Platform {
  const arch: Record<string, string> = {
    x64: "amd64",
    arm64: "arm64",
    arm: "arm",
    ppc64: "ppc64le",
    s390x: "s390x",
    ia32: "386",
    riscv64: "riscv64",
  };
  return { os: "linux", architecture: arch[process.arch] ?? process.arch };
}

/**
 * Picks the manifest for `platform` from an index (containers/image semantics: OS and architecture must
 * match; a variant, when asked for, must match too, else the first entry without a variant).
 */
export function selectPlatform(index: ImageIndex, platform: Platform, where: string): Descriptor {
  const candidates = index.manifests.filter(
    (m) =>
      m.platform &&
      m.platform.os === platform.os &&
      m.platform.architecture === platform.architecture &&
      (m.mediaType === "" || m.mediaType === MEDIA_OCI_MANIFEST || m.mediaType === MEDIA_DOCKER_MANIFEST),
  );
  const exact = platform.variant ? candidates.find((m) => m.platform?.variant === platform.variant) : undefined;
  const pick = exact ?? candidates.find((m) => !m.platform?.variant || !platform.variant) ?? candidates[0];
  if (!pick) {
    throw new ImageError(
      "IMAGE_NO_PLATFORM",
      `${where}: choosing image instance: no image found in image index for architecture ` +
        `${JSON.stringify(platform.architecture)}, variant ` +
        `${JSON.stringify(platform.variant ?? "")}, OS ${JSON.stringify(platform.os)}`,
    );
  }
  return pick;
}

/** Canonical JSON of a manifest this project writes (OCI image manifest, fixed key order). */
export function encodeManifest(config: Descriptor, layers: Descriptor[], annotations?: Record<string, string>): Buffer {
  const d = (x: Descriptor): Record<string, unknown> => ({
    mediaType: x.mediaType,
    digest: x.digest,
    size: x.size,
    ...(x.annotations ? { annotations: x.annotations } : {}),
  });
  const doc: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: MEDIA_OCI_MANIFEST,
    config: d(config),
    layers: layers.map(d),
  };
  if (annotations && Object.keys(annotations).length > 0) doc.annotations = sortKeys(annotations);
  return Buffer.from(JSON.stringify(doc));
}

/** A copy of a string map with keys in byte order (so that JSON output is reproducible). */
export function sortKeys(m: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = m[k];
  return out;
}
