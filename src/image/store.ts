/**
 * Content-addressed blob storage in the OCI layout shape (`blobs/<alg>/<hex>`), used both for the
 * pull cache and for OCI image layouts. Every blob is verified against its digest before it is made
 * visible (written to a temporary file in the same directory tree, then renamed), so readers never
 * see a half-written or unverified blob; reads verify again as they stream.
 */
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  openSync,
  writeSync,
  closeSync,
  fsyncSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { stagedName, sweepStagedOnce } from "../fsx/staged.js";
import { syncDirectory, writeFileAtomic } from "../fsx/write.js";
import { blobRelPath, checkDigest, digestLike, errText, hasherFor, ImageError } from "./errors.js";
import { ANNOTATION_REF_NAME, MAX_MANIFEST_BYTES, type Descriptor } from "./manifest.js";

export class BlobStore {
  constructor(readonly root: string) {}

  /** The file of a blob. */
  path(digest: string): string {
    return join(this.root, "blobs", blobRelPath(digest));
  }

  has(digest: string): boolean {
    return existsSync(this.path(digest));
  }

  /** Size of a stored blob, or undefined. */
  size(digest: string): number | undefined {
    try {
      return statSync(this.path(digest)).size;
    } catch {
      return undefined;
    }
  }

  /** Stores bytes whose digest is `digest` (computed when omitted); returns the digest. */
  putBytes(data: Uint8Array, digest?: string): string {
    const actual = digestLike(digest ?? "sha256:", data);
    if (digest !== undefined && actual !== digest)
      throw new ImageError("IMAGE_DIGEST_MISMATCH", `blob ${digest}: content has digest ${actual}`);
    if (this.has(actual)) return actual;
    // one listing of the blob directory per process, not one per blob written into it
    sweepStagedOnce(dirname(this.path(actual)));
    writeFileAtomic(this.path(actual), data, { sweep: false });
    return actual;
  }

  /**
   * Streams `src` into the store as `digest`, verifying the digest and (when given) the exact size,
   * refusing more than `maxBytes`. Nothing is left behind on failure.
   */
  async putStream(
    digest: string,
    src: AsyncIterable<Uint8Array>,
    opts: { size?: number; maxBytes?: number; onBytes?: (n: number) => void; label?: string } = {},
  ): Promise<void> {
    checkDigest(digest, opts.label ?? "blob");
    const final = this.path(digest);
    mkdirSync(dirname(final), { recursive: true });
    sweepStagedOnce(dirname(final));
    const tmp = stagedName(final);
    const h = hasherFor(digest);
    let n = 0;
    const limit = opts.size ?? opts.maxBytes;
    const fd = openSync(tmp, "wx", 0o666); // less the umask, as any other file opcat writes
    let ok = false;
    try {
      for await (const c of src) {
        n += c.length;
        if (limit !== undefined && n > limit) {
          throw new ImageError(
            "IMAGE_BLOB_TOO_LARGE",
            `${opts.label ?? "blob " + digest}: more than ${limit} ` +
              `bytes${opts.size !== undefined ? " (the size its descriptor declares)" : ""}`,
          );
        }
        h.update(c);
        let off = 0;
        while (off < c.length) off += writeSync(fd, c, off);
        opts.onBytes?.(c.length);
      }
      if (opts.size !== undefined && n !== opts.size) {
        throw new ImageError(
          "IMAGE_BLOB_TRUNCATED",
          `${opts.label ?? "blob " + digest}: got ${n} bytes, expected ${opts.size} (truncated download)`,
        );
      }
      const actual = digest.slice(0, digest.indexOf(":") + 1) + h.digest("hex");
      if (actual !== digest)
        throw new ImageError(
          "IMAGE_DIGEST_MISMATCH",
          `${opts.label ?? "blob"}: digest mismatch: expected ${digest}, got ${actual}`,
        );
      fsyncSync(fd);
      ok = true;
    } finally {
      closeSync(fd);
      if (!ok) rmSync(tmp, { force: true });
    }
    renameSync(tmp, final);
    syncDirectory(dirname(final));
  }

  /** A small blob (manifest, config), verified; at most `maxBytes`. */
  readVerified(digest: string, maxBytes = MAX_MANIFEST_BYTES, label = `blob ${digest}`): Buffer {
    const p = this.path(digest);
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      throw new ImageError("IMAGE_BLOB_MISSING", `${label}: ${errText(e)}`, { cause: e });
    }
    if (st.size > maxBytes)
      throw new ImageError("IMAGE_BLOB_TOO_LARGE", `${label}: ${st.size} bytes is more than the limit of ${maxBytes}`);
    const data = readFileSync(p);
    const actual = digestLike(digest, data);
    if (actual !== digest)
      throw new ImageError("IMAGE_DIGEST_MISMATCH", `${label}: digest mismatch: expected ${digest}, got ${actual}`);
    return data;
  }

  /** Streams a stored blob, throwing IMAGE_DIGEST_MISMATCH at the end when its bytes do not match. */
  async *streamVerified(digest: string, label = `blob ${digest}`): AsyncGenerator<Buffer> {
    const h = hasherFor(digest);
    let s;
    try {
      s = createReadStream(this.path(digest), { highWaterMark: 1 << 20 });
      for await (const c of s) {
        h.update(c as Buffer);
        yield c as Buffer;
      }
    } catch (e) {
      if (e instanceof ImageError) throw e;
      throw new ImageError("IMAGE_BLOB_MISSING", `${label}: ${errText(e)}`, { cause: e });
    }
    const actual = digest.slice(0, digest.indexOf(":") + 1) + h.digest("hex");
    if (actual !== digest)
      throw new ImageError("IMAGE_DIGEST_MISMATCH", `${label}: digest mismatch: expected ${digest}, got ${actual}`);
  }
}

// ---------- OCI image layouts ----------

/** `oci:<dir>[:<tag>]` split as containers/image does (at the first ":" after the prefix). */
export interface LayoutRef {
  dir: string;
  /** The `org.opencontainers.image.ref.name` to select; "" selects the only image. */
  tag: string;
}

/** Parses `oci:<dir>[:tag]`; undefined when `ref` does not start with "oci:". */
export function parseLayoutRef(ref: string): LayoutRef | undefined {
  if (!ref.startsWith("oci:")) return undefined;
  const rest = ref.slice(4);
  const i = rest.indexOf(":");
  const dir = i < 0 ? rest : rest.slice(0, i);
  const tag = i < 0 ? "" : rest.slice(i + 1);
  if (dir === "")
    throw new ImageError(
      "IMAGE_BAD_REFERENCE",
      `invalid OCI layout reference ${JSON.stringify(ref)}: empty directory`,
      { kind: "io" },
    );
  if (tag !== "" && !/^[a-zA-Z0-9_.\-:@/+]+$/.test(tag))
    throw new ImageError("IMAGE_BAD_REFERENCE", `invalid image name ${JSON.stringify(tag)} in ${JSON.stringify(ref)}`);
  return { dir, tag };
}

interface LayoutIndex {
  schemaVersion: number;
  mediaType?: string;
  manifests: Descriptor[];
}

function readLayoutIndex(dir: string): LayoutIndex {
  const p = join(dir, "index.json");
  let text: string;
  try {
    text = readFileSync(p, "utf8");
  } catch (e) {
    throw new ImageError("IMAGE_LAYOUT", `${dir}: not an OCI image layout: ${errText(e)}`, { cause: e });
  }
  try {
    const v = JSON.parse(text) as LayoutIndex;
    if (!Array.isArray(v.manifests)) throw new Error("no manifests list");
    return v;
  } catch (e) {
    throw new ImageError("IMAGE_LAYOUT", `${p}: invalid index: ${errText(e)}`, { cause: e });
  }
}

/** The descriptor of the image `ref` names in its layout. */
export function resolveLayoutRef(ref: LayoutRef): Descriptor {
  const idx = readLayoutIndex(ref.dir);
  if (ref.tag === "") {
    if (idx.manifests.length === 1) return checkedDescriptor(idx.manifests[0], ref);
    if (idx.manifests.length === 0) throw new ImageError("IMAGE_NOT_FOUND", `${ref.dir}: no images in OCI layout`);
    throw new ImageError(
      "IMAGE_LAYOUT",
      `${ref.dir}: more than one image in OCI layout, choose one with oci:${ref.dir}:<tag>`,
    );
  }
  const hit = idx.manifests.find((m) => m.annotations?.[ANNOTATION_REF_NAME] === ref.tag);
  if (!hit)
    throw new ImageError(
      "IMAGE_NOT_FOUND",
      `no descriptor found for reference ${JSON.stringify(ref.tag)} in OCI layout ${ref.dir}`,
    );
  return checkedDescriptor(hit, ref);
}

function checkedDescriptor(d: Descriptor, ref: LayoutRef): Descriptor {
  if (typeof d.digest !== "string" || typeof d.size !== "number")
    throw new ImageError("IMAGE_LAYOUT", `${ref.dir}/index.json: invalid descriptor`);
  checkDigest(d.digest, `${ref.dir}/index.json`);
  return d;
}

/**
 * Records `manifest` under `tag` in the layout's index.json (replacing an image of the same name),
 * creating `oci-layout` when missing. The blobs must already be in `new BlobStore(dir)`.
 */
export function tagInLayout(dir: string, tag: string, manifest: Descriptor): void {
  mkdirSync(dir, { recursive: true });
  const layoutFile = join(dir, "oci-layout");
  if (!existsSync(layoutFile)) writeFileAtomic(layoutFile, JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  let idx: LayoutIndex = { schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [] };
  if (existsSync(join(dir, "index.json"))) idx = readLayoutIndex(dir);
  const entry: Descriptor = { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.size };
  if (tag) entry.annotations = { [ANNOTATION_REF_NAME]: tag };
  idx.manifests = idx.manifests.filter((m) =>
    tag ? m.annotations?.[ANNOTATION_REF_NAME] !== tag : m.digest !== manifest.digest,
  );
  idx.manifests.push(entry);
  writeFileAtomic(join(dir, "index.json"), JSON.stringify(idx));
}
