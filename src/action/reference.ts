/**
 * What a `render` argument is, decided as opm decides it: a local path first (a bundle directory
 * when it has `manifests/` and `metadata/`, else a catalog directory; opcat also reads catalog
 * files and `-`), then `oci:<dir>[:tag]`, then a registry image, which is pulled, unpacked into
 * the cache and classified by its labels.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { isBundleDirectory, renderBundleDirectory, type RenderBundleOptions } from "../bundle/index.js";
import { OpcatError, problemsKind, type Problem } from "../errors/index.js";
import { loadCatalog, type LoadOptions } from "../fbc/load.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import { classifyImage } from "../image/classify.js";
import { ImageError } from "../image/errors.js";
import type { PullOptions, PulledImage } from "../image/pull.js";

export type RenderRefKind = "stdin" | "catalog-file" | "catalog-dir" | "bundle-dir" | "catalog-image" | "bundle-image";

/** A classified `render` argument. */
export interface ResolvedRenderRef {
  kind: RenderRefKind;
  /** The argument as given. */
  ref: string;
  /**
   * What to read: the file or directory given; for a catalog image the catalog directory inside its
   * unpacked tree; for a bundle image the unpacked tree (a bundle directory); "-" for stdin.
   */
  path: string;
  /** For bundle images: the bundle's `image` (the reference exactly as given, as opm does). */
  image?: string;
  /** For images: the manifest digest and labels. */
  digest?: string;
  labels?: Record<string, string>;
}

export interface ResolveRenderRefOptions extends PullOptions {
  /** Kinds the command accepts (default all); others fail with opm's "not allowed" errors. */
  allow?: readonly RenderRefKind[];
}

function notAllowed(msg: string): OpcatError {
  return new OpcatError("RENDER_NOT_ALLOWED", `${msg}: not allowed`, { kind: "usage" });
}

function check(kind: RenderRefKind, ref: string, allow: readonly RenderRefKind[] | undefined): void {
  if (!allow || allow.includes(kind)) return;
  switch (kind) {
    case "bundle-dir":
      throw notAllowed(`cannot render bundle directory ${goQuote(ref)}`);
    case "catalog-dir":
      throw notAllowed("cannot render declarative config directory");
    case "catalog-image":
      throw notAllowed("cannot render declarative config image");
    case "bundle-image":
      throw notAllowed("cannot render bundle image");
    default:
      throw notAllowed(`ref ${goQuote(ref)} is not a directory`);
  }
}

function rewrap(e: unknown, prefix: string): never {
  if (e instanceof ImageError)
    throw new ImageError(e.code, `${prefix}: ${e.message}`, { status: e.status, cause: e, kind: e.kind });
  if (e instanceof OpcatError) throw new OpcatError(e.code, `${prefix}: ${e.message}`, { kind: e.kind, cause: e });
  throw e;
}

/**
 * Classifies `ref`; images are pulled (or read from an OCI layout) and unpacked into the cache.
 * Errors: opm's `failed to pull image "<ref>": …`, `failed to unpack image "<ref>": …`, the label
 * classification errors, and the "not allowed" refusals.
 */
export async function resolveRenderRef(ref: string, opts: ResolveRenderRefOptions = {}): Promise<ResolvedRenderRef> {
  if (ref === "-") {
    check("stdin", ref, opts.allow);
    return { kind: "stdin", ref, path: "-" };
  }
  let st;
  try {
    st = statSync(ref);
  } catch {
    st = undefined;
  }
  if (st) {
    if (st.isDirectory()) {
      const kind = isBundleDirectory(ref) ? "bundle-dir" : "catalog-dir";
      check(kind, ref, opts.allow);
      return { kind, ref, path: ref };
    }
    check("catalog-file", ref, opts.allow);
    return { kind: "catalog-file", ref, path: ref };
  }
  // The registry client and the unpacker load only when a reference is an image.
  const [{ getImage, unpackImage }, { cleanEntryPath }] = await Promise.all([
    import("../image/pull.js"),
    import("../image/unpack.js"),
  ]);
  let img: PulledImage;
  try {
    img = await getImage(ref, opts);
  } catch (e) {
    rewrap(e, `failed to pull image ${goQuote(ref)}`);
  }
  const c = classifyImage(img);
  check(c.kind, ref, opts.allow);
  let only: string[] | undefined;
  if (c.kind === "catalog-image") {
    const d = cleanEntryPath(c.configsDir, "configs label");
    only = d === "" ? undefined : [d];
  } else only = ["manifests", "metadata"];
  let root: string;
  try {
    root = await unpackImage(img, { cacheDir: opts.cacheDir, only });
  } catch (e) {
    rewrap(e, `failed to unpack image ${goQuote(ref)}`);
  }
  const base = { ref, digest: img.digest, labels: img.labels };
  if (c.kind === "catalog-image")
    return { ...base, kind: "catalog-image", path: join(root, cleanEntryPath(c.configsDir)) };
  return { ...base, kind: "bundle-image", path: root, image: ref };
}

/** One reference opened: what it was classified as, and the catalog read from it. */
export interface OpenedReference extends ResolvedRenderRef {
  /** The catalog; for a bundle (directory or image), the one rendered olm.bundle. */
  config: DeclarativeConfig;
  /** Problems found reading a catalog (empty for bundles, which throw). */
  problems: Problem[];
  /** Files and bytes read (0 for bundles). */
  files: number;
  bytes: number;
}

export interface OpenReferenceOptions extends ResolveRenderRefOptions, Pick<RenderBundleOptions, "imageRefTemplate"> {
  /** Progress while a catalog is read: after each file, with running totals. */
  onFile?: LoadOptions["onFile"];
  /**
   * Read `ref` as a local catalog (directory, file or `-`) only, as `opm validate` does: no bundle
   * rendering, no image pull; a missing path is the loader's I/O error.
   */
  local?: boolean;
}

/**
 * The one way opcat opens a catalog reference (directory, file, `-`, bundle directory, `oci:` layout or
 * registry image): classified as opm classifies it, images pulled and unpacked, catalogs loaded
 * (their problems returned, not thrown), bundles rendered (directories with `imageRefTemplate`,
 * images with their reference as `image`).
 */
export async function openReference(ref: string, opts: OpenReferenceOptions = {}): Promise<OpenedReference> {
  if (opts.local) {
    const res = await loadCatalog(ref, { onFile: opts.onFile });
    const kind = ref === "-" ? "stdin" : statSync(ref).isDirectory() ? "catalog-dir" : "catalog-file";
    return { kind, ref, path: ref, ...res };
  }
  const r = await resolveRenderRef(ref, opts);
  if (r.kind === "bundle-dir" || r.kind === "bundle-image") {
    const config = renderBundleDirectory(
      r.path,
      r.kind === "bundle-image" ? { image: r.image } : { imageRefTemplate: opts.imageRefTemplate },
    );
    return { ...r, config, problems: [], files: 0, bytes: 0 };
  }
  const res = await loadCatalog(r.path, { onFile: opts.onFile });
  return { ...r, ...res };
}

/** `prefix: ` before an error's message and its problems' (warnings keep theirs); other errors pass. */
export function prefixError(e: unknown, prefix: string): unknown {
  if (e instanceof ImageError)
    return new ImageError(e.code, `${prefix}: ${e.message}`, { status: e.status, cause: e, kind: e.kind });
  if (e instanceof OpcatError) {
    const ps = e.problems.map((p) => (p.severity === "error" ? { ...p, message: `${prefix}: ${p.message}` } : p));
    return new OpcatError(e.code, `${prefix}: ${e.message}`, { problems: ps, kind: e.kind, cause: e });
  }
  return e;
}

/**
 * Renders one reference as opm's `render` does (without the final normalisation): catalogs are
 * loaded (problems throw), bundles rendered with their image. Errors are prefixed
 * `render reference "<ref>": `.
 */
export async function renderReference(ref: string, opts: OpenReferenceOptions = {}): Promise<DeclarativeConfig> {
  try {
    const r = await openReference(ref, opts);
    if (r.problems.length > 0) {
      const p = r.problems[0];
      throw new OpcatError(p.code, p.message, { problems: r.problems, kind: problemsKind(r.problems) });
    }
    return r.config;
  } catch (e) {
    throw prefixError(e, `render reference ${goQuote(ref)}`);
  }
}
