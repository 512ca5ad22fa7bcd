/**
 * Image actions: building a bundle image (`bundle build`) or a catalog image (`catalog build`) into an
 * OCI layout or a registry, building a catalog from a catalog configuration (`catalog build-from-config`),
 * writing a catalog's Dockerfile (`generate dockerfile`, opm's) and inspecting an image (`image inspect`).
 * They print nothing (progress goes to a callback) and choose no exit code: failures are OpcatErrors
 * whose `kind` the caller maps.
 *
 * The image library (and the catalog loader and validator) are imported when an action runs, so that
 * importing this module stays cheap.
 */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { OpcatError, problemsKind } from "../errors/index.js";
import type { OutputFormat } from "../fbc/write.js";
import { generateDockerfile } from "../image/dockerfile.js";
import type { BuildFromConfigResult } from "./buildconfig.js";
import { accessOf, type ImageAccess } from "./access.js";

const imageLib = () => import("../image/index.js");

/** Where a built image goes. */
export interface ImageTarget {
  /** `oci:<dir>:<tag>` for an OCI layout, or a registry reference (with `push`). */
  tag: string;
  /** Push to the registry reference `tag`. */
  push?: boolean;
  /** Extra image labels. */
  labels?: Record<string, string>;
  /** Image access while pulling the base image and pushing. */
  pull?: ImageAccess;
}

/** `--push` names a registry; an `oci:` layout is written without it (pushing there would be a no-op nobody meant). */
function checkPushTarget(f: { tag?: string; push?: boolean }): void {
  if (f.push && f.tag?.startsWith("oci:")) {
    throw new OpcatError(
      "USAGE_PUSH_OCI",
      `--push with --tag ${f.tag}: an oci: layout is written ` +
        `locally; drop --push, or give a registry reference to push to`,
      { kind: "usage" },
    );
  }
}

/** `bundle build`: a registry+v1 bundle directory as an image; returns where it went (`ref@digest`). */
export async function buildBundleImageAction(dir: string, target: ImageTarget): Promise<string> {
  const { buildBundleImage, outputImage } = await imageLib();
  const img = buildBundleImage(dir, { labels: target.labels ?? {} });
  checkPushTarget(target);
  return outputImage(img, target.tag, { ...(await accessOf(target.pull)), push: target.push });
}

export interface CatalogImageTarget extends ImageTarget {
  /** Validate the catalog first (default true). */
  validate?: boolean;
  /** The image to build on (opm's by default); `scratch` (or none) for a content-only image. */
  baseImage?: string;
}

/** `catalog build`: a File-Based Catalog directory as an image at /configs; returns where it went. */
export async function buildCatalogImageAction(dir: string, target: CatalogImageTarget): Promise<string> {
  const { buildCatalogImage, outputImage, withBaseImage } = await imageLib();
  if (target.validate !== false && existsSync(dir) && statSync(dir).isDirectory()) {
    const { loadDirectory } = await import("../fbc/load.js");
    const { validateCatalog } = await import("../fbc/validate.js");
    const res = loadDirectory(dir);
    const problems = [...res.problems];
    if (problems.length === 0) problems.push(...validateCatalog(res.config).problems);
    const errors = problems.filter((p) => p.severity === "error");
    if (errors.length > 0)
      throw new OpcatError(errors[0].code, errors[0].message, { problems, kind: problemsKind(problems) });
  }
  checkPushTarget(target);
  const access = await accessOf(target.pull);
  const img = await withBaseImage(buildCatalogImage(dir, { labels: target.labels ?? {} }), target.baseImage, {
    ...access,
    onProgress: undefined,
  });
  return outputImage(img, target.tag, { ...access, push: target.push });
}

export interface BuildFromConfigActionOptions {
  /** Where the catalog directory `<name>/` is created (default: beside the configuration file). */
  outputDir?: string;
  /** Format of the rendered files. */
  format?: OutputFormat;
  /** Write the image here instead of `<repo>:<tag>`. */
  tag?: string;
  push?: boolean;
  /** Only render and validate the catalog. */
  noBuild?: boolean;
  labels?: Record<string, string>;
  baseImage?: string;
  /** Image access while pulling the references and the base image and pushing. */
  pull?: ImageAccess;
  /** Called with each step (a reference rendered, the image built, …). */
  onStep?: (message: string) => void;
}

/** `catalog build-from-config`: renders every reference of a catalog configuration, validates, builds. */
export async function buildFromConfigAction(
  file: string,
  opts: BuildFromConfigActionOptions = {},
): Promise<BuildFromConfigResult> {
  checkPushTarget(opts);
  const { buildFromConfig } = await import("./buildconfig.js");
  return buildFromConfig(file, {
    ...(await accessOf(opts.pull)),
    outputDir: opts.outputDir,
    format: opts.format,
    tag: opts.tag,
    push: opts.push,
    noBuild: opts.noBuild,
    labels: opts.labels ?? {},
    baseImage: opts.baseImage,
    onStep: opts.onStep,
  });
}

export interface DockerfileActionOptions {
  baseImage: string;
  builderImage: string;
  labels?: Record<string, string>;
}

/**
 * `opm generate dockerfile`: writes `<dir>.Dockerfile` next to the catalog directory `fromDir` (which
 * must exist; the Dockerfile must not); returns its path.
 */
export function generateDockerfileAction(fromDir: string, opts: DockerfileActionOptions): string {
  const indexName = basename(fromDir);
  const out = join(dirname(fromDir), `${indexName}.Dockerfile`);
  if (existsSync(out))
    throw new OpcatError("IO_ERROR", `path ${JSON.stringify(out)}: file already exists`, {
      kind: "usage",
    });
  let st;
  try {
    st = statSync(fromDir);
  } catch (e) {
    throw new OpcatError("IO_ERROR", `stat ${fromDir}: no such file or directory`, {
      kind: "usage",
      cause: e,
    });
  }
  if (!st.isDirectory())
    throw new OpcatError("IO_ERROR", `provided root path ${JSON.stringify(fromDir)} is not a directory`, {
      kind: "usage",
    });
  writeFileSync(
    out,
    generateDockerfile({
      baseImage: opts.baseImage,
      builderImage: opts.builderImage,
      indexDir: indexName,
      extraLabels: opts.labels ?? {},
    }),
  );
  return out;
}

/** What `image inspect` reports of an image. */
export interface ImageSummary {
  ref: string;
  digest: string;
  mediaType: string | undefined;
  labels: Record<string, string>;
  layers: { digest: string; size: number; mediaType: string }[];
}

/** `image inspect`: pulls an image (or reads `oci:<dir>[:tag]`) into the cache and summarises it. */
export async function inspectImageAction(ref: string, pull?: ImageAccess): Promise<ImageSummary> {
  const { getImage } = await imageLib();
  const img = await getImage(ref, await accessOf(pull));
  return {
    ref,
    digest: img.digest,
    mediaType: img.manifest.mediaType,
    labels: img.labels,
    layers: img.manifest.layers.map((l) => ({ digest: l.digest, size: l.size, mediaType: l.mediaType })),
  };
}
