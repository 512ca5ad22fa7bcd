/**
 * The catalog commands' work, shaped like opm's alpha/action: `render`, `validate`, `render-graph`,
 * `list`, `init` and `migrate`. Each action opens its references through `catalog.ts`, calls the
 * catalog library and returns (or writes to the stream it is given) what the command prints; none
 * chooses an exit code. Each loads the library it needs when it runs, so that `init` does not load
 * the image client and `opcat --help` loads none of them.
 */
import { OpcatError, problemToJson } from "../errors/index.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import type { OutputFormat } from "../fbc/write.js";
import { accessOf, type ImageAccess } from "./access.js";
import type { OpenCatalogsOptions, ValidatedCatalog } from "./catalog.js";

export type { OutputFormat };

/** The largest icon `init -i` reads (catalog icons are small PNG or SVG images, base64 in the package blob). */
const MAX_ICON_BYTES = 1 << 20;

/** A progress display for loading, started when the references are about to be read. */
export interface LoadProgress {
  update(ref: string, file: string, filesDone: number, bytesDone: number): void;
  done(): void;
}

/** What every action that opens references takes. */
export interface OpenActionOptions {
  /** Image access for image references (a function: called once the request itself is checked). */
  access?: ImageAccess;
  /** Called right before the references are read; its `done` is called when they are. */
  progress?: () => LoadProgress;
}

/**
 * Opens every reference (catalogs; with `render`'s options also bundles, prefixing errors as opm's
 * render does) with progress; all problems fail together (kind "invalid").
 */
async function open(
  refs: readonly string[],
  opts: OpenActionOptions,
  extra: Pick<OpenCatalogsOptions, "imageRefTemplate" | "prefixErrors">,
): Promise<DeclarativeConfig> {
  const { openCatalogs, CATALOG_KINDS } = await import("./catalog.js");
  const access = await accessOf(opts.access);
  const progress = opts.progress?.();
  try {
    return await openCatalogs(refs, {
      ...access,
      ...(extra.prefixErrors ? extra : { allow: CATALOG_KINDS }),
      onLoad: progress ? (ref, f, n, bytes) => progress.update(ref, f, n, bytes) : undefined,
    });
  } finally {
    progress?.done();
  }
}

export interface RenderActionOptions extends OpenActionOptions {
  output: OutputFormat;
  /** The last migration to run (`all` for every one). */
  migrateLevel?: string;
  /** For bundle directories: the Go template of the bundle image (`--image-ref-template`). */
  imageRefTemplate?: string;
}

/** `render`: every reference in order, merged, normalised as opm's render does, written to `out`. */
export async function renderAction(
  refs: readonly string[],
  opts: RenderActionOptions,
  out: NodeJS.WritableStream,
): Promise<void> {
  const { compileImageRefTemplate } = await import("../bundle/render.js");
  const imageRefTemplate = opts.imageRefTemplate ? compileImageRefTemplate(opts.imageRefTemplate) : undefined;
  const cfg = await open(refs, opts, { imageRefTemplate, prefixErrors: true });
  (await import("../fbc/render.js")).normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
  await (await import("../fbc/write.js")).writeCatalog(cfg, opts.output, out);
}

/** `validate`: one local catalog checked with every rule; problems are returned, not thrown. */
export async function validateAction(
  ref: string,
  opts: { onFile?: (file: string, filesDone: number, bytesDone: number) => void } = {},
): Promise<ValidatedCatalog> {
  return (await import("./catalog.js")).validateReference(ref, { onFile: opts.onFile });
}

/** `validate -o json|yaml`: the report of a validation, as the command prints it. */
export async function validationReport(res: ValidatedCatalog, format: "json" | "yaml"): Promise<string> {
  const { opened, problems } = res;
  const passed = problems.length === 0;
  const report: Record<string, unknown> = { passed };
  if (!passed) report.error = { message: problems.map((p) => p.message).join("\n") };
  report.problems = problems.map(problemToJson);
  report.summary = {
    files: opened.files,
    bytes: opened.bytes,
    packages: opened.config.packages.length,
    channels: opened.config.channels.length,
    bundles: opened.config.bundles.length,
    problems: problems.length,
  };
  return format === "json"
    ? JSON.stringify(report, null, 2) + "\n"
    : (await import("../yaml/index.js")).toGoYaml(JSON.parse(JSON.stringify(report))) + "\n";
}

export interface RenderGraphActionOptions extends OpenActionOptions {
  minimumEdge?: string;
  packageName?: string;
  drawV0Semantics?: boolean;
}

/** `render-graph`: the upgrade graph as Mermaid text, with opm's warnings (one per line). */
export async function renderGraphAction(
  ref: string,
  opts: RenderGraphActionOptions,
): Promise<{ text: string; warnings: string[] }> {
  const cfg = await open([ref], opts, {});
  const pkg = opts.packageName;
  if (pkg !== undefined && !cfg.packages.some((p) => p.name === pkg) && !cfg.bundles.some((b) => b.package === pkg)) {
    const known = [...new Set(cfg.packages.map((p) => p.name))].sort();
    const list =
      known.length > 10 ? `${known.slice(0, 10).join(", ")} and ${known.length - 10} more` : known.join(", ") || "none";
    throw new OpcatError(
      "GRAPH_UNKNOWN_PACKAGE",
      `package ${JSON.stringify(pkg)} is not in ${ref} (packages: ${list})`,
      {
        kind: "usage",
      },
    );
  }
  const { renderMermaid } = await import("../fbc/mermaid.js");
  return renderMermaid(cfg, {
    minimumEdge: opts.minimumEdge,
    packageName: pkg,
    drawV0Semantics: opts.drawV0Semantics,
  });
}

export type ListKind = "packages" | "channels" | "bundles";

/** `list packages|channels|bundles`: the table (text) or the rows as JSON, of a valid catalog. */
export async function listAction(
  kind: ListKind,
  ref: string,
  pkg: string | undefined,
  opts: OpenActionOptions & { output: "text" | "json" },
): Promise<string> {
  const { openValidCatalog } = await import("./catalog.js");
  const access = await accessOf(opts.access);
  const progress = opts.progress?.();
  let model;
  try {
    ({ model } = await openValidCatalog([ref], {
      ...access,
      onLoad: progress ? (r, f, n, bytes) => progress.update(r, f, n, bytes) : undefined,
    }));
  } finally {
    progress?.done();
  }
  const which = kind === "packages" ? undefined : pkg;
  const lists = await import("../fbc/list.js");
  if (opts.output === "json") return JSON.stringify(lists.listJson(kind, model, which), null, 2) + "\n";
  if (kind === "packages") return lists.listPackages(model);
  return kind === "channels" ? lists.listChannels(model, which) : lists.listBundles(model, which);
}

export interface InitActionOptions {
  defaultChannel?: string;
  /** A file whose contents become the package description. */
  description?: string;
  /** An image file (at most 1 MiB) to use as the icon; its type is sniffed. */
  icon?: string;
  output: OutputFormat;
}

/** `init`: a new olm.package blob, formatted. */
export async function initAction(name: string, opts: InitActionOptions): Promise<string> {
  const [{ readInputFileSync }, { goErrnoText }] = await Promise.all([
    import("../fsx/readfile.js"),
    import("../gojson/goerrno.js"),
  ]);
  // refused without reading: FIFOs and devices (/dev/zero never ends); an icon is at most 1 MiB
  const read = (f: string, ro: import("../fsx/readfile.js").ReadOptions): Buffer => {
    try {
      return readInputFileSync(f, ro);
    } catch (e) {
      if (e instanceof OpcatError) throw e;
      throw new OpcatError("IO_ERROR", `open ${f}: ${goErrnoText(e)}`, { kind: "usage" });
    }
  };
  const iconOpts = { what: "icon", maxBytes: MAX_ICON_BYTES, tooLargeHint: "icons are small PNG or SVG images" };
  const { initPackage } = await import("../fbc/init.js");
  const { emptyConfig } = await import("../fbc/types.js");
  const pkg = initPackage({
    name,
    defaultChannel: opts.defaultChannel,
    description:
      opts.description !== undefined ? read(opts.description, { what: "description" }).toString("utf8") : undefined,
    icon: opts.icon !== undefined ? new Uint8Array(read(opts.icon, iconOpts)) : undefined,
  });
  return (await import("../fbc/write.js")).formatCatalog({ ...emptyConfig(), packages: [pkg] }, opts.output);
}

/** `migrate`: the catalog rendered and written as one file per package into `outDir` (absent or empty). */
export async function migrateAction(
  ref: string,
  outDir: string,
  opts: OpenActionOptions & { output: OutputFormat; migrateLevel?: string },
): Promise<string[]> {
  const { isEmptyOrMissingDir, writeCatalogDirectory } = await import("../fbc/write.js");
  if (!isEmptyOrMissingDir(outDir))
    throw new OpcatError("MIGRATE_OUTPUT_NOT_EMPTY", `output dir ${JSON.stringify(outDir)} must be empty`, {
      kind: "usage",
    });
  const cfg = await open([ref], opts, {});
  (await import("../fbc/render.js")).normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
  return writeCatalogDirectory(cfg, outDir, opts.output);
}
