/**
 * registry+v1 bundle directories rendered into `olm.bundle` blobs exactly as `opm render <dir>`
 * does: the same properties in the same order and encoding, the same related images, opm's error
 * messages for bundles it cannot read.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { normalizeForRender } from "../fbc/render.js";
import { emptyConfig, type DeclarativeConfig } from "../fbc/types.js";
import { readBundleDirectory } from "./read.js";
import { renderBundle, type RenderBundleOptions } from "./render.js";

export {
  readBundleDirectory,
  type RegistryBundle,
  type BundleManifest,
  type RawProperty,
  type ApiKey,
} from "./read.js";
export { renderBundle, compileImageRefTemplate, type RenderBundleOptions } from "./render.js";
export { parseImageRefTemplate, TemplateError, type ImageRefTemplate, type ImageRefTemplateData } from "./template.js";

/**
 * Reads and renders a bundle directory into a catalog holding its one `olm.bundle` blob, then runs
 * the requested migrations (opm applies them to bundles with an image only).
 */
export function renderBundleDirectory(dir: string, opts: RenderBundleOptions = {}): DeclarativeConfig {
  const bundle = renderBundle(readBundleDirectory(dir), opts);
  const cfg = emptyConfig();
  cfg.bundles.push(bundle);
  if (opts.migrateLevel) normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
  return cfg;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * opm's classification of a directory given to `render`: a bundle when it has both `manifests/`
 * and `metadata/` sub-directories. A directory with `metadata/annotations.yaml` but no `manifests/`
 * is also treated as a (broken) bundle here, so that the error names the missing directory instead
 * of failing to load the bundle's files as a catalog.
 */
export function isBundleDirectory(dir: string): boolean {
  if (!isDir(join(dir, "metadata"))) return false;
  return isDir(join(dir, "manifests")) || isFile(join(dir, "metadata", "annotations.yaml"));
}
