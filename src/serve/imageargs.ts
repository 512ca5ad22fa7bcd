/**
 * Telling catalog image arguments of `opcat serve` from directories, without loading the image
 * client (imagesource.ts re-exports these).
 */
import { basename, resolve } from "node:path";
import { parseLayoutRef } from "../image/store.js";

/**
 * The default catalog name of an image reference: the repository's
 * base name (`quay.io/org/my-index:v1` → `my-index`).
 */
export function imageCatalogName(ref: string): string {
  const lr = parseLayoutRef(ref);
  if (lr) return basename(resolve(lr.dir));
  const at = ref.indexOf("@");
  const noDigest = at < 0 ? ref : ref.slice(0, at);
  const last = noDigest.slice(noDigest.lastIndexOf("/") + 1);
  const colon = last.indexOf(":");
  return colon < 0 ? last : last.slice(0, colon);
}

/**
 * True for a command-line catalog argument (after any `name=`) that is an image reference rather
 * than a path: `oci:<dir>[:tag]`, `docker://<ref>`, or a reference whose first component is a
 * registry host (has a "." or ":" or is "localhost"), when no such file exists.
 */
export function isImageArgument(source: string, exists: (p: string) => boolean): boolean {
  if (source.startsWith("oci:") || source.startsWith("docker://")) return true;
  if (exists(source)) return false;
  const slash = source.indexOf("/");
  if (slash <= 0) return false;
  const host = source.slice(0, slash);
  return (
    (host.includes(".") || host.includes(":") || host === "localhost") && /^[a-z0-9]/.test(source) && !/\s/.test(source)
  );
}

/** Parses `[name=]<image-ref>`; the name defaults to {@link imageCatalogName}; `docker://` is dropped. */
export function parseImageCatalogArg(arg: string): { name: string; ref: string } {
  const eq = arg.indexOf("=");
  let name: string | undefined;
  let ref = arg;
  if (eq > 0 && !arg.slice(0, eq).includes("/") && !arg.slice(0, eq).includes(":")) {
    name = arg.slice(0, eq);
    ref = arg.slice(eq + 1);
  }
  if (ref.startsWith("docker://")) ref = ref.slice("docker://".length);
  return { name: name ?? imageCatalogName(ref), ref };
}
