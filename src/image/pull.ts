/**
 * Pulling images into the content-addressed cache (`<cacheDir>/blobs/<alg>/<hex>`) from a registry
 * or reading them from an OCI layout, and unpacking their layers into cached, read-only trees
 * (`<cacheDir>/unpacked/<alg>-<hex>[-<filter>]`). An image named by digest whose blobs are cached is
 * resolved without touching the network; a tag is always resolved against the registry.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defaultCacheDir } from "./access.js";
import { ImageError, errText } from "./errors.js";
import {
  configLabels,
  hostPlatform,
  parseConfig,
  parseManifest,
  selectPlatform,
  type Descriptor,
  type ImageConfig,
  type ImageManifest,
  type Platform,
} from "./manifest.js";
import { parseNamed, ImageReferenceError, type ImageReference } from "./reference.js";
import { mapPool, RegistryClient, type RegistryOptions, type RepoTarget } from "./registry.js";
import { stagedName, sweepStagedOnce } from "../fsx/staged.js";
import { BlobStore, parseLayoutRef, resolveLayoutRef } from "./store.js";
import { applyLayer, type UnpackBudget, type UnpackLimits } from "./unpack.js";

/** Progress of a pull, for a progress display. */
export interface PullProgress {
  ref: string;
  /** Bytes downloaded so far and bytes to download (blobs not already cached). */
  bytes: number;
  total: number;
  blobsDone: number;
  blobs: number;
}

export interface PullOptions extends RegistryOptions {
  /** The cache directory (default {@link defaultCacheDir}). */
  cacheDir?: string;
  /** Platform picked from an image index (default linux and this machine's architecture). */
  platform?: Platform;
  /** Blobs downloaded at once (default 4). */
  concurrency?: number;
  /** A client to reuse (its options win over these). */
  client?: RegistryClient;
  onProgress?: (p: PullProgress) => void;
}

/** An image available locally: its manifest, config, labels and the store holding its blobs. */
export interface PulledImage {
  /** The reference as given. */
  ref: string;
  /** Digest of the image manifest (of the platform's manifest when the reference names an index). */
  digest: string;
  manifest: ImageManifest;
  config: ImageConfig;
  labels: Record<string, string>;
  store: BlobStore;
  /** True when nothing was fetched from the network. */
  fromCache: boolean;
}

/** Parses a registry reference as opm does (it must be fully qualified: "repository name must be canonical"). */
export function parseImageRef(ref: string): ImageReference {
  try {
    return parseNamed(ref);
  } catch (e) {
    if (e instanceof ImageReferenceError) throw new ImageError("IMAGE_BAD_REFERENCE", e.message, { cause: e });
    throw e;
  }
}

function loadManifestFrom(
  store: BlobStore,
  desc: { digest: string; mediaType?: string },
  platform: Platform,
  where: string,
): { manifest: ImageManifest; digest: string } | undefined {
  if (!store.has(desc.digest)) return undefined;
  const m = parseManifest(
    store.readVerified(desc.digest, undefined, `${where}: manifest ${desc.digest}`),
    desc.mediaType,
    where,
  );
  if (m.kind === "manifest") return { manifest: m, digest: desc.digest };
  const child = selectPlatform(m, platform, where);
  return loadManifestFrom(store, child, platform, where);
}

/** Reads an image from an OCI layout (`oci:<dir>[:tag]`); every blob read is verified. */
export function openLayoutImage(ref: string, platform: Platform = hostPlatform()): PulledImage {
  const lr = parseLayoutRef(ref);
  if (!lr) throw new ImageError("IMAGE_BAD_REFERENCE", `not an OCI layout reference: ${JSON.stringify(ref)}`);
  const store = new BlobStore(lr.dir);
  const desc = resolveLayoutRef(lr);
  const got = loadManifestFrom(store, desc, platform, ref);
  if (!got) throw new ImageError("IMAGE_BLOB_MISSING", `${ref}: manifest ${desc.digest} is missing from the layout`);
  const config = parseConfig(store.readVerified(got.manifest.config.digest, undefined, `${ref}: config`), ref);
  for (const l of got.manifest.layers)
    if (!store.has(l.digest))
      throw new ImageError("IMAGE_BLOB_MISSING", `${ref}: layer ${l.digest} is missing from the layout`);
  return {
    ref,
    digest: got.digest,
    manifest: got.manifest,
    config,
    labels: configLabels(config),
    store,
    fromCache: true,
  };
}

/**
 * Pulls a registry image into the cache (blobs verified, written atomically, downloaded with a
 * bounded pool) and returns it. A digest reference whose blobs are all cached needs no network.
 */
export async function pullImage(ref: string, opts: PullOptions = {}): Promise<PulledImage> {
  const named = parseImageRef(ref);
  const store = new BlobStore(opts.cacheDir ?? defaultCacheDir(opts.env));
  const platform = opts.platform ?? hostPlatform();
  if (named.digest) {
    const cached = loadManifestFrom(store, { digest: named.digest }, platform, ref);
    if (
      cached &&
      store.has(cached.manifest.config.digest) &&
      cached.manifest.layers.every((l) => store.has(l.digest))
    ) {
      const config = parseConfig(store.readVerified(cached.manifest.config.digest, undefined, `${ref}: config`), ref);
      return {
        ref,
        digest: cached.digest,
        manifest: cached.manifest,
        config,
        labels: configLabels(config),
        store,
        fromCache: true,
      };
    }
  }
  const client = opts.client ?? new RegistryClient(opts);
  try {
    const sources = client.sourcesFor(named.name, Boolean(named.digest));
    const errors: string[] = [];
    for (let i = 0; i < sources.length; i++) {
      try {
        return await pullFrom(client, sources[i], named, ref, store, platform, opts);
      } catch (e) {
        if (i === sources.length - 1) {
          if (errors.length === 0 || !(e instanceof ImageError)) throw e;
          throw new ImageError(e.code, `${e.message} (mirrors failed: ${errors.join("; ")})`, {
            status: e.status,
            cause: e,
          });
        }
        errors.push(`${sources[i].host}/${sources[i].repo}: ${errText(e)}`);
      }
    }
    throw new ImageError("IMAGE_NOT_FOUND", `${ref}: no source to pull from`);
  } finally {
    if (!opts.client) client.close();
  }
}

async function pullFrom(
  client: RegistryClient,
  t: RepoTarget,
  named: ImageReference,
  ref: string,
  store: BlobStore,
  platform: Platform,
  opts: PullOptions,
): Promise<PulledImage> {
  let reference = named.digest ?? named.tag ?? "latest";
  let manifest: ImageManifest | undefined;
  let digest = "";
  for (let depth = 0; depth < 2 && !manifest; depth++) {
    const m = await client.getManifest(t, reference);
    const parsed = parseManifest(m.bytes, m.mediaType, ref);
    store.putBytes(m.bytes, m.digest);
    if (parsed.kind === "manifest") {
      manifest = parsed;
      digest = m.digest;
    } else {
      const child = selectPlatform(parsed, platform, ref);
      if (store.has(child.digest)) {
        const again = loadManifestFrom(store, child, platform, ref);
        if (again) {
          manifest = again.manifest;
          digest = again.digest;
          break;
        }
      }
      reference = child.digest;
    }
  }
  if (!manifest) throw new ImageError("IMAGE_BAD_MANIFEST", `${ref}: nested image indexes are not supported`);
  const missing: Descriptor[] = [manifest.config, ...manifest.layers].filter(
    (d, i, all) => !store.has(d.digest) && all.findIndex((x) => x.digest === d.digest) === i,
  );
  const progress: PullProgress = {
    ref,
    bytes: 0,
    total: missing.reduce((n, d) => n + d.size, 0),
    blobsDone: 0,
    blobs: missing.length,
  };
  opts.onProgress?.(progress);
  await mapPool(missing, opts.concurrency ?? 4, async (d) => {
    await client.fetchBlob(t, d, store, (n) => {
      progress.bytes += n;
      opts.onProgress?.(progress);
    });
    progress.blobsDone++;
    opts.onProgress?.(progress);
  });
  const config = parseConfig(store.readVerified(manifest.config.digest, undefined, `${ref}: config`), ref);
  return { ref, digest, manifest, config, labels: configLabels(config), store, fromCache: false };
}

/** Pulls a registry reference or opens `oci:<dir>[:tag]`. */
export async function getImage(ref: string, opts: PullOptions = {}): Promise<PulledImage> {
  if (ref.startsWith("oci:")) return openLayoutImage(ref, opts.platform);
  return pullImage(ref, opts);
}

export interface UnpackImageOptions extends UnpackLimits {
  cacheDir?: string;
  /** Only these root-relative paths are extracted (see applyLayer). */
  only?: readonly string[];
}

/**
 * Unpacks an image's layers in order into a cached directory and returns its path; a second call
 * for the same manifest and filter returns the existing tree. The tree appears only when complete.
 */
export async function unpackImage(img: PulledImage, opts: UnpackImageOptions = {}): Promise<string> {
  const cacheDir = opts.cacheDir ?? defaultCacheDir();
  const filter = opts.only ? "-" + createHash("sha256").update(opts.only.join("\n")).digest("hex").slice(0, 12) : "";
  const final = join(cacheDir, "unpacked", img.digest.replace(":", "-") + filter);
  if (existsSync(final)) return final;
  mkdirSync(join(cacheDir, "unpacked"), { recursive: true });
  sweepStagedOnce(join(cacheDir, "unpacked")); // what unpacks killed midway left behind
  const tmp = stagedName(final);
  mkdirSync(tmp, { mode: 0o700 });
  const budget: UnpackBudget = { bytes: 0, entries: 0 };
  try {
    for (const l of img.manifest.layers) {
      const label = `layer ${l.digest}`;
      await applyLayer(tmp, img.store.streamVerified(l.digest, label), budget, { ...opts, label });
    }
    try {
      renameSync(tmp, final);
    } catch (e) {
      if (!existsSync(final)) throw e;
      rmSync(tmp, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return final;
}
