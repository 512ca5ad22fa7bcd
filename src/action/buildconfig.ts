/**
 * The catalog build recipe of the OLM documentation in one step: a configuration file
 * `{name, repo, tag, references: [{name, image}]}` → render each reference into
 * `<dir>/<name>/<reference name>/index.(yaml|json)` → validate the catalog → build the catalog image →
 * push it to `<repo>:<tag>` (or write it to an OCI layout).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { OpcatError, problemsKind } from "../errors/index.js";
import { loadDirectory } from "../fbc/load.js";
import { normalizeForRender } from "../fbc/render.js";
import { emptyConfig, mergeConfigs } from "../fbc/types.js";
import { validateCatalog } from "../fbc/validate.js";
import { formatCatalog, isEmptyOrMissingDir, type OutputFormat } from "../fbc/write.js";
import { parseGoYamlDocument } from "../yaml/index.js";
import { buildCatalogImage, outputImage, withBaseImage, type BuildOptions } from "../image/build.js";
import { mapPool, RegistryClient } from "../image/registry.js";
import { renderReference, type ResolveRenderRefOptions } from "./reference.js";
import { goErrnoText } from "../gojson/goerrno.js";

export interface CatalogBuildConfig {
  name: string;
  repo: string;
  tag: string;
  references: { name: string; image: string }[];
}

function bad(file: string, msg: string): OpcatError {
  return new OpcatError("BUILD_CONFIG_INVALID", `${file}: ${msg}`, { kind: "invalid" });
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Parses and checks a catalog build configuration (YAML or JSON). */
export function parseCatalogBuildConfig(text: string, file = "catalog.yaml"): CatalogBuildConfig {
  let doc: unknown;
  try {
    doc = parseGoYamlDocument(text);
  } catch (e) {
    throw bad(file, (e as Error).message);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw bad(file, "expected a mapping with name, repo, tag and references");
  const d = doc as Record<string, unknown>;
  const str = (k: string): string => {
    const v = d[k];
    if (typeof v !== "string" || v === "") throw bad(file, `${k} must be a non-empty string`);
    return v;
  };
  const name = str("name");
  if (!NAME_RE.test(name)) throw bad(file, `name ${JSON.stringify(name)} must be a plain directory name`);
  const refs = d.references;
  if (!Array.isArray(refs) || refs.length === 0) throw bad(file, "references must be a non-empty list");
  const seen = new Set<string>();
  const references = refs.map((r, i) => {
    if (typeof r !== "object" || r === null) throw bad(file, `references[${i}] must be a mapping with name and image`);
    const o = r as Record<string, unknown>;
    if (typeof o.name !== "string" || !NAME_RE.test(o.name))
      throw bad(file, `references[${i}].name must be a plain directory name`);
    if (typeof o.image !== "string" || o.image === "")
      throw bad(file, `references[${i}].image must be a non-empty string`);
    if (seen.has(o.name)) throw bad(file, `references[${i}].name ${JSON.stringify(o.name)} is used twice`);
    seen.add(o.name);
    return { name: o.name, image: o.image };
  });
  return { name, repo: str("repo"), tag: String(d.tag ?? "latest") || "latest", references };
}

export interface BuildFromConfigOptions extends ResolveRenderRefOptions, BuildOptions {
  /**
   * Where the catalog directory `<name>/` is created (default: beside
   * the configuration file). It must be absent or empty.
   */
  outputDir?: string;
  /** File format of each reference's rendered catalog (default yaml: `index.yaml`). */
  format?: OutputFormat;
  /** Write here instead of `<repo>:<tag>` (e.g. `oci:<dir>:<tag>`). */
  tag?: string;
  /** Push to the registry (otherwise only an `oci:` tag is written). */
  push?: boolean;
  /** Only render and validate. */
  noBuild?: boolean;
  /** Image to build on (see withBaseImage); none or `scratch`: a content-only image. */
  baseImage?: string;
  onStep?: (msg: string) => void;
}

export interface BuildFromConfigResult {
  catalogDir: string;
  files: string[];
  /** Where the image went (`name@digest`, or the layout ref with its digest); undefined with noBuild. */
  image?: string;
  packages: number;
  bundles: number;
}

/** Runs the recipe; every reference is rendered (pulled with a bounded pool) before anything is written. */
export async function buildFromConfig(file: string, opts: BuildFromConfigOptions = {}): Promise<BuildFromConfigResult> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new OpcatError("IO_ERROR", `open ${file}: ${goErrnoText(e)}`, { kind: "io" });
  }
  const cfg = parseCatalogBuildConfig(text, file);
  const catalogDir = join(opts.outputDir ?? dirname(resolve(file)), cfg.name);
  if (!isEmptyOrMissingDir(catalogDir))
    throw new OpcatError("BUILD_OUTPUT_NOT_EMPTY", `output dir ${JSON.stringify(catalogDir)} must be empty`, {
      kind: "io",
    });
  const format = opts.format ?? "yaml";
  const client = opts.client ?? new RegistryClient(opts);
  try {
    const rendered = await mapPool(cfg.references, opts.concurrency ?? 4, async (r) => {
      opts.onStep?.(`rendering ${r.image}`);
      const c = await renderReference(r.image, { ...opts, client });
      normalizeForRender(c, {});
      return c;
    });
    const files: string[] = [];
    for (let i = 0; i < cfg.references.length; i++) {
      const dir = join(catalogDir, cfg.references[i].name);
      mkdirSync(dir, { recursive: true });
      const f = join(dir, `index.${format}`);
      writeFileSync(f, formatCatalog(rendered[i], format));
      files.push(f);
    }
    opts.onStep?.(`validating ${catalogDir}`);
    const loaded = loadDirectory(catalogDir);
    const problems = [...loaded.problems];
    if (problems.length === 0) problems.push(...validateCatalog(loaded.config).problems);
    const errors = problems.filter((p) => p.severity === "error");
    if (errors.length > 0)
      throw new OpcatError(errors[0].code, errors[0].message, { problems, kind: problemsKind(problems) });
    const all = emptyConfig();
    for (const c of rendered) mergeConfigs(all, c);
    const result: BuildFromConfigResult = {
      catalogDir,
      files,
      packages: all.packages.length,
      bundles: all.bundles.length,
    };
    if (opts.noBuild) return result;
    const target = opts.tag ?? `${cfg.repo}:${cfg.tag}`;
    opts.onStep?.(`building ${target}`);
    const img = await withBaseImage(buildCatalogImage(catalogDir, opts), opts.baseImage, {
      ...opts,
      onProgress: undefined,
    });
    result.image = await outputImage(img, target, { ...opts, client });
    return result;
  } finally {
    if (!opts.client) client.close();
  }
}
