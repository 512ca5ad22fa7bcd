/**
 * Errors and digests shared by the image code: every failure is an {@link OpcatError} with an
 * `IMAGE_*` code and kind "io" unless said otherwise.
 */
import { createHash, type Hash } from "node:crypto";
import { type ErrorKind, OpcatError } from "../errors/index.js";

/** An image problem (pull, push, unpack, layout, registry): `code` is stable, `message` says what and where. */
export class ImageError extends OpcatError {
  /** HTTP status when the error is a registry answer. */
  readonly status?: number;
  constructor(code: string, message: string, opts: { status?: number; cause?: unknown; kind?: ErrorKind } = {}) {
    super(code, message, { kind: opts.kind ?? "io", cause: opts.cause });
    this.name = "ImageError";
    if (opts.status !== undefined) this.status = opts.status;
  }
}

const DIGEST_RE = /^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;

/** True for a digest this client can verify (`sha256:` or `sha512:` with lowercase hex). */
export function isVerifiableDigest(d: string): boolean {
  return DIGEST_RE.test(d);
}

/** Checks a digest coming from a manifest, index or reference, throwing IMAGE_BAD_DIGEST otherwise. */
export function checkDigest(d: string, where: string): string {
  if (!isVerifiableDigest(d))
    throw new ImageError("IMAGE_BAD_DIGEST", `${where}: unsupported or invalid digest ${JSON.stringify(d)}`);
  return d;
}

/** A hash object for the algorithm of `digest`. */
export function hasherFor(digest: string): Hash {
  return createHash(digest.startsWith("sha512:") ? "sha512" : "sha256");
}

/** `sha256:<hex>` of bytes. */
export function sha256Digest(data: Uint8Array | string): string {
  return "sha256:" + createHash("sha256").update(data).digest("hex");
}

/** The digest of `data` in the algorithm of `like` (sha256 or sha512). */
export function digestLike(like: string, data: Uint8Array): string {
  const alg = like.startsWith("sha512:") ? "sha512" : "sha256";
  return alg + ":" + createHash(alg).update(data).digest("hex");
}

/** The relative blob path `<alg>/<hex>` of a digest (as in OCI layouts and the cache). */
export function blobRelPath(digest: string): string {
  const i = digest.indexOf(":");
  return `${digest.slice(0, i)}/${digest.slice(i + 1)}`;
}

/** Error text of a caught value. */
export function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
