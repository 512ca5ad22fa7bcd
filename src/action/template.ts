/**
 * Template actions, shaped like opm's alpha/action: rendering a catalog template (`template render`,
 * opm's `alpha render-template`), the composite template, converting a catalog into a template and
 * publishing a bundle into one (`template add-bundle`). Each composes the bundle source (images pulled
 * with opm's per-reference rendering, `--reuse` catalogs answering first, migrations), reads the input
 * files and calls the renderers of src/template. They print nothing (progress goes to a callback) and
 * choose no exit code: failures are OpcatErrors whose `kind` the caller maps.
 *
 * The template and image libraries are imported when an action runs, so that importing this module
 * (and `template convert`, which needs neither) stays cheap.
 */
import { readInputStream, readInputTextSync } from "../fsx/readfile.js";
import { dirname, resolve } from "node:path";
import { OpcatError } from "../errors/index.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import { goPathError } from "../gojson/goerrno.js";
import type { PullOptions, RegistryClient } from "../image/index.js";
import type {
  AddBundlePlan,
  AddBundleRequest,
  BundleSource,
  CompositeResult,
  ConvertOptions,
  ReleaseConfigReport,
  SemverSkips,
  TagLister,
} from "../template/index.js";
import { accessOf, type ImageAccess } from "./access.js";
import { openCatalogs } from "./catalog.js";

const libraries = () => Promise.all([import("../template/index.js"), import("../image/index.js")]);

/** Progress of the bundle images a render pulls (for a progress line). */
export interface TemplateProgress {
  /** Distinct images rendered so far, and asked for so far. */
  done: number;
  total: number;
  /** The image being pulled, or just started or finished. */
  ref: string;
  /** While the image downloads: its bytes received and its size. */
  bytes?: { done: number; total: number };
}

/** Where a render's bundle images come from. */
export interface TemplateSourceOptions {
  /** Image access (TLS, credentials, mirrors, cache, timeouts): one registry client is made from it per render. */
  pull?: PullOptions;
  /** An already-rendered catalog (directory, file or `-`) answering bundle images before they are pulled. */
  reuse?: string;
  /** With `reuse`, tag references are answered from it too. */
  reuseTags?: boolean;
  /** With `reuse`, no registry is touched: every reference (tags too) is answered from it. */
  offline?: boolean;
  /** Called as images are pulled and rendered; replaces `pull.onProgress`. */
  onProgress?: (p: TemplateProgress) => void;
}

/** The template `renderTemplateAction` renders: its text, or a file (`-`, the default, is standard input). */
export interface TemplateInput {
  /** `basic`, `semver`, `substitutes` or `graph`; detected from the schema when absent. */
  type?: string;
  file?: string;
  text?: string;
}

export interface RenderTemplateActionOptions extends TemplateSourceOptions {
  /** Name of the last migration run on the rendered bundles (default: none). */
  migrateLevel?: string;
  /** Semver template: what a Y-stream head skips (default cumulative). */
  semverSkips?: SemverSkips;
}

type Libraries = Awaited<ReturnType<typeof libraries>>;

/**
 * The bundle source of a render: images pulled (at most 4 at once), after the `reuse` catalog when
 * given, with opm's per-reference normalisation and migrations.
 */
async function bundleSource(
  [T]: Libraries,
  client: RegistryClient,
  opts: TemplateSourceOptions,
  migrateLevel?: string,
): Promise<BundleSource & { reused?: DeclarativeConfig }> {
  let pulled = 0;
  let total = 0;
  const onProgress = opts.onProgress;
  const pull = T.imageSource({
    ...opts.pull,
    client,
    ...(onProgress && {
      onProgress: (p) => onProgress({ done: pulled, total, ref: p.ref, bytes: { done: p.bytes, total: p.total } }),
    }),
    onImage: (e) => {
      pulled = e.done;
      total = Math.max(total, e.total);
      onProgress?.({ done: e.done, total, ref: e.ref });
    },
  });
  let src: BundleSource = pull;
  let reused: DeclarativeConfig | undefined;
  if (opts.reuse !== undefined) {
    reused = await openCatalogs([opts.reuse], { local: true });
    // offline: the reused catalog answers every reference, tags included; nothing is pulled.
    src = opts.offline
      ? T.reuseSource(reused, { reuseTags: true })
      : T.fallbackSource(T.reuseSource(reused, { reuseTags: opts.reuseTags }), pull);
  }
  return Object.assign(T.renderedSource(src, { migrateLevel }), { reused });
}

async function readTemplate(input: TemplateInput): Promise<string> {
  if (input.text !== undefined) return input.text;
  const file = input.file ?? "-";
  if (file === "-")
    return (await readInputStream(process.stdin, "standard input", { what: "template" })).toString("utf8");
  try {
    return readInputTextSync(file, { what: "template" });
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    throw new OpcatError("IO_ERROR", `unable to open ${goQuote(file)}: ${goPathError("open", file, e)}`, {
      kind: "usage",
    });
  }
}

/**
 * `opm alpha render-template [TYPE] [FILE]`: renders a basic, semver, substitutes or graph template,
 * its bundle images pulled (or answered by `reuse`). The graph template lists `bundles.repo` tags from
 * the registry (offline: from the reused catalog's images). The result is not validated, as in opm.
 */
export async function renderTemplateAction(
  input: TemplateInput,
  opts: RenderTemplateActionOptions = {},
): Promise<DeclarativeConfig> {
  const libs = await libraries();
  const [T, I] = libs;
  const client = new I.RegistryClient(opts.pull);
  try {
    const src = await bundleSource(libs, client, opts, opts.migrateLevel);
    const text = await readTemplate(input);
    const tags = opts.offline && src.reused ? T.catalogTagLister(src.reused) : T.registryTagLister(client);
    return await T.renderTemplate(text, src, { type: input.type, tags, semverSkips: opts.semverSkips });
  } finally {
    client.close();
  }
}

/** The configuration files of a composite render. */
export interface CompositeInput {
  /** The catalog configuration (olm.composite.catalogs): a path or an http(s) URL (default catalogs.yaml). */
  catalogConfig?: string;
  /** The contribution configuration (olm.composite) (default composite.yaml). */
  compositeConfig?: string;
}

export interface RenderCompositeActionOptions extends TemplateSourceOptions {
  /** Format of the files written (default json). */
  output?: "json" | "yaml";
  /** Validate each component's directory like `opm validate` (default true). */
  validate?: boolean;
  /** The semver builder: what a Y-stream head skips (default cumulative). */
  semverSkips?: SemverSkips;
}

/** opm's FetchCatalogConfig: a local path (relative or absolute), or a URL fetched with GET (status not checked). */
async function fetchCatalogConfig(path: string): Promise<string> {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(path) && !path.startsWith("/")) {
    const scheme = path.slice(0, path.indexOf(":")).toLowerCase();
    if (scheme !== "http" && scheme !== "https") {
      throw new OpcatError(
        "IO_ERROR",
        `fetching remote catalog config file ${goQuote(path)}: Get ` +
          `${goQuote(path)}: unsupported protocol scheme ${goQuote(scheme)}`,
        { kind: "usage" },
      );
    }
    try {
      const r = await fetch(path);
      return await r.text();
    } catch (e) {
      throw new OpcatError(
        "IO_ERROR",
        `fetching remote catalog config file ${goQuote(path)}: Get ${goQuote(path)}: ${(e as Error).message}`,
        { kind: "usage", cause: e },
      );
    }
  }
  try {
    return readInputTextSync(path, { what: "catalog config file" });
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    throw new OpcatError("IO_ERROR", `opening catalog config file ${goQuote(path)}: ${goPathError("open", path, e)}`, {
      kind: "usage",
    });
  }
}

/**
 * opm's former `alpha render-template composite`: renders the contributions into the catalogs'
 * working directories (files written there, nothing printed). Errors are prefixed
 * `rendering the composite template: ` as opm's were.
 */
export async function renderCompositeAction(
  input: CompositeInput = {},
  opts: RenderCompositeActionOptions = {},
): Promise<CompositeResult> {
  const compositeFile = input.compositeConfig ?? "composite.yaml";
  const catalogFile = input.catalogConfig ?? "catalogs.yaml";
  const libs = await libraries();
  const [T, I] = libs;
  const client = new I.RegistryClient(opts.pull);
  try {
    const source = await bundleSource(libs, client, opts);
    let contributions: string;
    try {
      contributions = readInputTextSync(compositeFile, { what: "composite config file" });
    } catch (e) {
      if (e instanceof OpcatError) throw e;
      throw new OpcatError(
        "IO_ERROR",
        `opening composite config file ${goQuote(compositeFile)}: ${goPathError("open", compositeFile, e)}`,
        { kind: "usage" },
      );
    }
    const catalogs = await fetchCatalogConfig(catalogFile);
    try {
      return await T.renderCompositeTemplate({
        catalogs,
        contributions,
        contributionDir: resolve(dirname(compositeFile)),
        output: opts.output,
        validate: opts.validate,
        source,
        semverSkips: opts.semverSkips,
      });
    } catch (e) {
      if (e instanceof OpcatError)
        throw new OpcatError(e.code, `rendering the composite template: ${e.message}`, {
          kind: e.kind,
          cause: e,
        });
      throw e;
    }
  } finally {
    client.close();
  }
}

/**
 * `template convert`: a catalog (directory, file or `-`) as a basic or graph template that renders
 * back to it; returns the template's text.
 */
export async function convertTemplateAction(ref: string, opts: ConvertOptions): Promise<string> {
  const { convertCatalog } = await import("../template/convert.js");
  const cfg = await openCatalogs([ref], { local: true });
  return convertCatalog(cfg, opts);
}

/** Where `template add-bundle` renders the bundle image from. */
export interface AddBundleSourceOptions {
  /** Already-rendered catalogs answering the image first. */
  reuse?: readonly string[];
  /** With `reuse`, tag references are answered from them too. */
  reuseTags?: boolean;
  /**
   * Pull and render images after the `reuse` catalogs (`--pull`): the image access, or a function
   * giving it, called once the `reuse` catalogs are open. Without it nothing is pulled.
   */
  pull?: ImageAccess;
  /** Plan only: report (with the diff) and write nothing. */
  dryRun?: boolean;
}

/**
 * The bundle source of add-bundle: the `reuse` catalogs, then (with `pull`) images pulled. Graph
 * templates list the tags of `bundles.repo` from the registry when pulling, else from the reused
 * catalogs' images. `close` releases the registry client.
 */
async function addBundleSource(
  opts: AddBundleSourceOptions,
): Promise<{ source: (BundleSource & Partial<TagLister>) | undefined; close: () => void }> {
  const [T, I] = await libraries();
  let src: BundleSource | undefined;
  let tags: TagLister | undefined;
  let client: RegistryClient | undefined;
  if (opts.reuse !== undefined && opts.reuse.length > 0) {
    const cfg = await openCatalogs(opts.reuse, { local: true });
    src = T.reuseSource(cfg, { reuseTags: opts.reuseTags });
    tags = T.catalogTagLister(cfg);
  }
  if (opts.pull) {
    const access = await accessOf(opts.pull);
    client = new I.RegistryClient(access);
    const pull = T.imageSource({ ...access, client });
    src = src ? T.fallbackSource(src, pull) : pull;
    tags = T.registryTagLister(client);
  }
  const close = (): void => client?.close();
  if (!src) return { source: undefined, close };
  const rendered = T.renderedSource(src);
  const lister = tags;
  return {
    source: lister ? Object.assign(rendered, { listTags: (repo: string) => lister.listTags(repo) }) : rendered,
    close,
  };
}

/** `template add-bundle FILE`: publishes a bundle into one template (edited in place unless `dryRun`). */
export async function addBundleAction(
  file: string,
  req: AddBundleRequest,
  opts: AddBundleSourceOptions = {},
): Promise<AddBundlePlan> {
  const { source, close } = await addBundleSource(opts);
  try {
    const { addBundleToFile } = await import("../template/addbundle/addbundle.js");
    return await addBundleToFile(file, req, { source, dryRun: opts.dryRun === true });
  } finally {
    close();
  }
}

/**
 * `template add-bundle --release-config`: publishes a bundle into every template a release config
 * lists (`name`: the bundle's name when its image is not rendered; `templatesDir`: the templates
 * directory, default ../catalog-templates from the release config).
 */
export async function addBundleFromReleaseConfigAction(
  releaseConfig: string,
  image: string,
  opts: AddBundleSourceOptions & { name?: string; templatesDir?: string } = {},
): Promise<ReleaseConfigReport> {
  const { source, close } = await addBundleSource(opts);
  try {
    const { addBundleFromReleaseConfig } = await import("../template/addbundle/addbundle.js");
    return await addBundleFromReleaseConfig(releaseConfig, image, {
      source,
      name: opts.name,
      templatesDir: opts.templatesDir,
      dryRun: opts.dryRun === true,
    });
  } finally {
    close();
  }
}

/** What `template render`'s arguments and flags are checked against, from the template library. */
export interface TemplateFlagValues {
  /** Every type name a template may be given as (aliases included). */
  allTypes: readonly string[];
  /** The type names listed in messages. */
  types: readonly string[];
  /** The `--semver-skips` modes. */
  semverSkips: readonly SemverSkips[];
}

export async function templateFlagValues(): Promise<TemplateFlagValues> {
  const T = await import("../template/index.js");
  return { allTypes: T.ALL_TEMPLATE_TYPES, types: T.TEMPLATE_TYPES, semverSkips: T.SEMVER_SKIPS };
}

/**
 * A rendered catalog as `template render -o` prints it: JSON or YAML as opm writes them, or the Mermaid
 * graph with v0 semantics (its warnings to `warn`, before the graph).
 */
export async function writeRenderedCatalog(
  cfg: DeclarativeConfig,
  output: "json" | "yaml" | "mermaid",
  out: NodeJS.WritableStream,
  warn: (warning: string) => void,
): Promise<void> {
  if (output === "mermaid") {
    const { text, warnings } = (await import("../fbc/mermaid.js")).renderMermaid(cfg, { drawV0Semantics: true });
    for (const w of warnings) warn(w);
    out.write(text);
    return;
  }
  await (await import("../fbc/write.js")).writeCatalog(cfg, output, out);
}
