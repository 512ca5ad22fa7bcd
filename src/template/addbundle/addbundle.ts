import { renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { OpcatError, problem, type Problem } from "../../errors/index.js";
import { readInputTextSync } from "../../fsx/readfile.js";
import { stageFile, tryUnlink, writeFileAtomic } from "../../fsx/write.js";
import { parseProperties } from "../../fbc/properties.js";
import { validateCatalog } from "../../fbc/validate.js";
import type { DeclarativeConfig } from "../../fbc/types.js";
import { goQuote } from "../../gojson/fmt.js";
import { type EditableFile, parseEditable, stringAt, TextEdits, type EditValue } from "./edit.js";
import { tagInRepo } from "./graph.js";
import { BUILTIN_KINDS } from "./kinds.js";
import { kindsInOrder, type AddBundleKind, type AddBundleOutcome, type AddBundleRequest } from "./registry.js";
import type { TagLister } from "../graph/discover.js";
import { parseReleaseConfig } from "./releaseconfig.js";
import type { BundleSource, RenderedBundle } from "../source/source.js";
import { goErrnoText } from "../../gojson/goerrno.js";

export { registerAddBundleKind } from "./registry.js";
export type {
  AddBundleContext,
  AddBundleFailure,
  AddBundleKind,
  AddBundleOutcome,
  AddBundleRequest,
  BundleNeed,
} from "./registry.js";

/** The kinds, in the order they are tried: registered ones (latest first), then the built-in ones. */
export function addBundleKinds(): readonly AddBundleKind[] {
  return kindsInOrder(BUILTIN_KINDS);
}

/** Worst first: the outcome of several templates is the worst of theirs. */
const SEVERITY: readonly AddBundleOutcome[] = [
  "invalid-input",
  "unreachable-image",
  "conflict",
  "added",
  "already-present",
];

/** The worst of several outcomes (`already-present` for none). */
export function worstOutcome(outcomes: Iterable<AddBundleOutcome>): AddBundleOutcome {
  let best = SEVERITY.length - 1;
  for (const o of outcomes) best = Math.min(best, SEVERITY.indexOf(o));
  return SEVERITY[best];
}

/** One change made to the template, as a JSON-Patch-like `add` operation on its parsed form. */
export interface AddBundleChange {
  op: "add";
  /**
   * JSON pointer into the template's first document (basic, semver) or, for raw FBC, into the
   * stream of blobs (`/3/entries/-`; `/-` appends a blob).
   */
  path: string;
  /** The value added (for an appended rendered bundle: its schema, name, package and image only). */
  value: EditValue;
  /** The change in words. */
  description: string;
}

/** The report for one template. */
export interface AddBundleReport {
  outcome: AddBundleOutcome;
  template: string;
  image: string;
  /** The template kind (basic, semver, fbc, …) when it was recognised. */
  kind?: string;
  /** The bundle, when its name is known (rendered, or given with --name). */
  bundle?: { name: string; package?: string; version?: string };
  changes: AddBundleChange[];
  /** Why the outcome is not `added`/`already-present`, plus warnings. */
  problems: Problem[];
  /**
   * How the edited template was checked before writing: `rendered` (rendered offline and validated
   * like `opm validate`), `structural` (images could not be rendered: only the template's structure
   * was checked), `none` (nothing was edited).
   */
  validation: "rendered" | "structural" | "none";
  /** Whether the file was written. */
  written: boolean;
}

/** A planned edit: the report plus the edited text and its diff. */
export interface AddBundlePlan extends AddBundleReport {
  /** The edited text (only when the outcome is `added`). */
  result?: string;
  /** The change as unified-diff-like hunks (only when the outcome is `added`). */
  diff?: string;
}

export interface AddBundleOptions {
  /**
   * Renders bundle images (e.g. `reuseSource` over an already-rendered catalog). Without one, a
   * basic template needs `name` and a raw FBC file cannot be edited; a semver template is edited
   * and checked structurally. When a source is given and cannot render the image, the outcome is
   * `unreachable-image` unless `name` is given. A graph template lists the tags of `bundles.repo`
   * through the source's own `listTags` (a {@link TagLister}, e.g. `catalogTagLister` of the reused
   * catalog); without one it is checked structurally.
   */
  source?: BundleSource & Partial<TagLister>;
}

class Collector {
  readonly changes: AddBundleChange[] = [];
  readonly problems: Problem[] = [];
  failure: AddBundleOutcome | undefined;

  fail(outcome: AddBundleOutcome, code: string, message: string, hint?: string): void {
    this.problems.push(problem(code, message, { hint }));
    this.failure = this.failure === undefined ? outcome : worstOutcome([this.failure, outcome]);
  }

  warn(code: string, message: string): void {
    this.problems.push(problem(code, message, { severity: "warning" }));
  }
}

function bundleVersion(b: RenderedBundle): string | undefined {
  try {
    const p = parseProperties(b.properties).packages;
    return p.length === 1 ? p[0].version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A source answering `image` with `bundle` and the rest from `base`, recording which images (and
 * repositories whose tags could not be listed, for graph templates) failed. `before`: the source
 * for the template before the edit, whose repository tags leave out the new image's tag (the
 * template as it was before the bundle was pushed); otherwise the new image's tag is listed once
 * the image is rendered.
 */
function overlay(
  base: BundleSource | undefined,
  image: string,
  bundle: RenderedBundle | undefined,
  before = false,
): { source: BundleSource & TagLister; failed: string[]; omitted: () => boolean } {
  const failed: string[] = [];
  let omitted = false;
  const lister = base as (BundleSource & Partial<TagLister>) | undefined;
  return {
    failed,
    omitted: () => omitted,
    source: {
      async listTags(repo: string): Promise<string[]> {
        try {
          if (!lister?.listTags)
            throw new OpcatError(
              "TEMPLATE_GRAPH_TAGS",
              `bundles.repo: listing the tags of ${goQuote(repo)} needs ` +
                `a tag lister, which this bundle source does not provide`,
              { kind: "io" },
            );
          const tags = await lister.listTags(repo);
          const tag = tagInRepo(repo, image);
          if (tag === undefined) return tags;
          if (before) {
            omitted ||= tags.includes(tag);
            return tags.filter((t) => t !== tag);
          }
          // The new image was rendered, so its tag exists, though the lister (a reused catalog) may not know it yet.
          return bundle && !tags.includes(tag) ? [...tags, tag] : tags;
        } catch (e) {
          failed.push(repo);
          throw e;
        }
      },
      async render(ref: string): Promise<RenderedBundle> {
        if (bundle && ref === image)
          return {
            ...bundle,
            properties: [...bundle.properties],
            relatedImages: bundle.relatedImages.map((r) => ({ ...r })),
          };
        try {
          if (!base)
            throw new OpcatError("IMAGE_PULL_UNAVAILABLE", `render reference ${goQuote(ref)}: no bundle source given`, {
              kind: "io",
            });
          return await base.render(ref);
        } catch (e) {
          failed.push(ref);
          throw e;
        }
      },
    },
  };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function failed(
  template: string,
  req: AddBundleRequest,
  c: Collector,
  kind?: string,
  bundle?: AddBundleReport["bundle"],
): AddBundlePlan {
  return {
    outcome: c.failure ?? "invalid-input",
    template,
    image: req.image,
    kind,
    bundle,
    changes: [],
    problems: c.problems,
    validation: "none",
    written: false,
  };
}

/**
 * Renders and validates; returns the error problems (empty when
 * valid), or undefined when images could not be rendered.
 */
async function renderAndValidate(
  kind: AddBundleKind,
  text: string,
  base: BundleSource | undefined,
  image: string,
  bundle: RenderedBundle | undefined,
  before = false,
): Promise<{ problems: Problem[]; cfg?: DeclarativeConfig; omitted?: boolean } | undefined> {
  const o = overlay(base, image, bundle, before);
  let cfg: DeclarativeConfig;
  try {
    cfg = await kind.render(text, o.source);
  } catch (e) {
    if (o.failed.length > 0) return undefined;
    const code = e instanceof OpcatError ? e.code : "TEMPLATE_ADD_RESULT_INVALID";
    return { problems: [problem(code, messageOf(e))], omitted: o.omitted() };
  }
  const v = validateCatalog(cfg);
  return { problems: v.problems.filter((p) => p.severity === "error"), cfg, omitted: o.omitted() };
}

/**
 * The template before the edit, rendered and validated for blame: with the new image's tag left out
 * of its repository's tags (as before the bundle was pushed) and, when that fails, with it listed
 * (the template may already name the bundle); invalid only when both fail.
 */
async function renderBefore(
  kind: AddBundleKind,
  text: string,
  base: BundleSource | undefined,
  image: string,
  bundle: RenderedBundle | undefined,
): Promise<{ problems: Problem[] } | undefined> {
  const without = await renderAndValidate(kind, text, base, image, bundle, true);
  if (without === undefined || without.problems.length === 0 || !without.omitted) return without;
  const withTag = await renderAndValidate(kind, text, base, image, bundle);
  return withTag === undefined || withTag.problems.length === 0 ? withTag : without;
}

/** Another bundle carrying the new bundle's name, or its package and version, under a different image. */
function carriedElsewhere(
  cfg: DeclarativeConfig,
  image: string,
  name: string,
  pkg: string | undefined,
  version: string | undefined,
): Problem[] {
  const out: Problem[] = [];
  for (const b of cfg.bundles) {
    if (b.image === image) continue;
    if (b.name === name) {
      out.push(
        problem(
          "TEMPLATE_ADD_BUNDLE_CONFLICT",
          `bundle ${goQuote(name)} is already in the template with image ${goQuote(b.image)}`,
        ),
      );
    } else if (version !== undefined && pkg !== undefined && b.package === pkg && bundleVersion(b) === version) {
      out.push(
        problem(
          "TEMPLATE_ADD_BUNDLE_CONFLICT",
          `version ${version} of package ${goQuote(pkg)} is already in the ` +
            `template as bundle ${goQuote(b.name)} (image ${goQuote(b.image)})`,
        ),
      );
    }
  }
  return out;
}

/**
 * Plans adding a bundle to a template given as text: which kind it is, what to add, the outcome,
 * and — when the outcome is `added` — the edited text, validated. Never throws for bad input.
 *
 * `template` is the name used in the report (a path).
 */
export async function planAddBundle(
  text: string,
  template: string,
  req: AddBundleRequest,
  opts: AddBundleOptions = {},
): Promise<AddBundlePlan> {
  const c = new Collector();
  const recognised = await recogniseTemplate(text, template, req, c);
  if ("outcome" in recognised) return recognised;
  const { parsed, kind } = recognised;
  const toAdd = await bundleToAdd(kind, template, req, opts, c);
  if ("outcome" in toAdd) return toAdd;
  const { bundle, bundleName, info } = toAdd;

  const edits = new TextEdits(parsed);
  kind.plan({
    file: parsed,
    edits,
    request: req,
    bundle,
    bundleName,
    change: (path, value, description) => c.changes.push({ op: "add", path, value, description }),
    fail: (outcome, code, message, hint) => c.fail(outcome, code, message, hint),
    warn: (code, message) => c.warn(code, message),
  });
  if (c.failure) return failed(template, req, c, kind.name, info);
  const base = {
    template,
    image: req.image,
    kind: kind.name,
    bundle: info,
    changes: c.changes,
    problems: c.problems,
    written: false,
  };
  if (edits.size === 0) return { ...base, outcome: "already-present", validation: "none" };

  const result = edits.apply();
  const validation = await checkEdited({ text, result, req, opts, kind, bundle, bundleName, info }, c);
  if (validation === undefined) return failed(template, req, c, kind.name, info);
  return { ...base, outcome: "added", validation, problems: c.problems, result, diff: edits.diff(template) };
}

/**
 * The template parsed and its kind recognised, the request checked, the text checked by its kind; a
 * failed plan (the problem collected in `c`) otherwise.
 */
async function recogniseTemplate(
  text: string,
  template: string,
  req: AddBundleRequest,
  c: Collector,
): Promise<{ parsed: EditableFile; kind: AddBundleKind } | AddBundlePlan> {
  const parsed = parseEditable(text);
  if ("error" in parsed) {
    c.fail("invalid-input", "TEMPLATE_ADD_PARSE", `${template}: ${parsed.error}`);
    return failed(template, req, c);
  }
  const first = parsed.docs[0]?.doc.contents;
  const schema = stringAt(first, "schema");
  if (schema === undefined) {
    c.fail(
      "invalid-input",
      "TEMPLATE_ADD_UNKNOWN_KIND",
      `${template}: the first document has no schema; expected a template ` +
        `(olm.template.basic, olm.semver, olm.template.graph) or FBC blobs (olm.*)`,
    );
    return failed(template, req, c);
  }
  const kinds = addBundleKinds();
  const kind = kinds.find((k) => k.matches(schema));
  if (!kind) {
    c.fail(
      "invalid-input",
      "TEMPLATE_ADD_UNKNOWN_KIND",
      `${template}: add-bundle cannot edit documents with schema ` +
        `${goQuote(schema)}; supported: ${kinds.map((k) => k.name).join(", ")}`,
    );
    return failed(template, req, c);
  }
  if (req.image === "") c.fail("invalid-input", "TEMPLATE_ADD_REQUEST", "the bundle image reference is empty");
  if (req.channels.length === 0)
    c.fail("invalid-input", "TEMPLATE_ADD_REQUEST", "no channel given: name at least one channel to add the bundle to");
  if (c.failure) return failed(template, req, c, kind.name);
  try {
    await kind.check(text);
  } catch (e) {
    c.fail("invalid-input", e instanceof OpcatError ? e.code : "TEMPLATE_DECODE", `${template}: ${messageOf(e)}`);
    return failed(template, req, c, kind.name);
  }
  return { parsed, kind };
}

/** The bundle to add, as far as it is known, and its name. */
interface BundleToAdd {
  bundle: RenderedBundle | undefined;
  bundleName: string | undefined;
  info: AddBundleReport["bundle"];
}

/**
 * The bundle: rendered from its image when a source is given; its name can also be given. A failed
 * plan when the name given is not the bundle's, or when the kind needs what could not be rendered.
 */
async function bundleToAdd(
  kind: AddBundleKind,
  template: string,
  req: AddBundleRequest,
  opts: AddBundleOptions,
  c: Collector,
): Promise<BundleToAdd | AddBundlePlan> {
  const need = kind.needs(req);
  let bundle: RenderedBundle | undefined;
  let renderError: unknown;
  if (opts.source) {
    try {
      bundle = await opts.source.render(req.image);
    } catch (e) {
      renderError = e;
    }
  }
  const bundleName = bundle?.name ?? req.name;
  const info: AddBundleReport["bundle"] = bundle
    ? { name: bundle.name, package: bundle.package, version: bundleVersion(bundle) }
    : req.name !== undefined
      ? { name: req.name }
      : undefined;
  if (bundle && req.name !== undefined && req.name !== bundle.name) {
    c.fail(
      "invalid-input",
      "TEMPLATE_ADD_NAME_MISMATCH",
      `--name ${goQuote(req.name)} does not match the name of the ` +
        `bundle image ${goQuote(req.image)}: ${goQuote(bundle.name)}`,
    );
    return failed(template, req, c, kind.name, info);
  }
  if (!bundle) {
    const why =
      renderError !== undefined ? messageOf(renderError) : `no bundle source was given to render ${goQuote(req.image)}`;
    const code = renderError instanceof OpcatError ? renderError.code : "TEMPLATE_ADD_UNREACHABLE";
    if (
      need === "bundle" ||
      (need === "name" && req.name === undefined) ||
      (renderError !== undefined && req.name === undefined)
    ) {
      const what =
        need === "bundle"
          ? "the rendered bundle"
          : need === "name"
            ? "the bundle's name (or --name)"
            : "the bundle image to render";
      c.fail("unreachable-image", code, `${why} (a ${kind.name} template needs ${what})`);
      return failed(template, req, c, kind.name, info);
    }
    if (renderError !== undefined) c.warn(code, `${why}; the bundle was not rendered`);
  }
  return { bundle, bundleName, info };
}

/** The edit being checked: the text before and after it, what was asked, the kind, the bundle. */
interface EditedTemplate extends BundleToAdd {
  text: string;
  result: string;
  req: AddBundleRequest;
  opts: AddBundleOptions;
  kind: AddBundleKind;
}

/**
 * The edited text checked before it is written: it parses, its kind accepts it, and it renders and
 * validates (or, when its images cannot be rendered, only its structure was checked: a warning).
 * How it was checked; undefined when it failed (the problems collected in `c`).
 */
async function checkEdited(e: EditedTemplate, c: Collector): Promise<AddBundleReport["validation"] | undefined> {
  const { result, req, kind } = e;
  const reparsed = parseEditable(result);
  if ("error" in reparsed) {
    c.fail(
      "invalid-input",
      "TEMPLATE_ADD_RESULT_INVALID",
      `the edited template does not parse (${reparsed.error}); nothing was written`,
    );
    return undefined;
  }
  try {
    await kind.check(result);
  } catch (err) {
    c.fail(
      "invalid-input",
      "TEMPLATE_ADD_RESULT_INVALID",
      `the edited template is not a valid ${kind.name} template: ${messageOf(err)}`,
    );
    return undefined;
  }
  const checked = await renderAndValidate(kind, result, e.opts.source, req.image, e.bundle);
  if (checked === undefined) {
    c.warn(
      "TEMPLATE_ADD_NOT_RENDERED",
      "the edited template could not be rendered (some of its " +
        "images could not be rendered): only its structure was checked",
    );
    return "structural";
  }
  const clash =
    e.bundleName !== undefined && checked.cfg
      ? carriedElsewhere(checked.cfg, req.image, e.bundleName, e.info?.package, e.info?.version)
      : [];
  if (clash.length > 0 || checked.problems.length > 0) {
    await blame(e, clash, checked.problems, c);
    return undefined;
  }
  return "rendered";
}

/**
 * Blame for an edited template that clashes or is invalid: was the template already invalid before
 * the edit (`invalid-input`), or does adding the bundle make it so (`conflict`)?
 */
async function blame(e: EditedTemplate, clash: Problem[], problems: Problem[], c: Collector): Promise<void> {
  const before = await renderBefore(e.kind, e.text, e.opts.source, e.req.image, e.bundle);
  if (clash.length === 0 && before !== undefined && before.problems.length > 0) {
    for (const p of before.problems)
      c.fail("invalid-input", p.code, `the template is not valid before the edit: ${p.message}`);
  } else {
    for (const p of clash) c.fail("conflict", p.code, p.message);
    for (const p of problems)
      c.fail("conflict", p.code, `adding the bundle would make the catalog invalid: ${p.message}`);
  }
}

/** Reads a file's text; an unreadable file is an `invalid-input` plan. */
function readTemplate(path: string, req: AddBundleRequest): string | AddBundlePlan {
  try {
    return readInputTextSync(path, { what: "template" });
  } catch (e) {
    const why = e instanceof OpcatError ? e.message.replace(/^open \S+: /, "") : goErrnoText(e);
    return {
      outcome: "invalid-input",
      template: path,
      image: req.image,
      changes: [],
      problems: [problem("TEMPLATE_ADD_NO_TEMPLATE", `open ${path}: ${why}`)],
      validation: "none",
      written: false,
    };
  }
}

/**
 * Writes several files all-or-nothing as far as the file system
 * allows: every temporary file first, then the renames.
 */
function writeAll(
  files: { path: string; text: string }[],
  ops: { rename?: (from: string, to: string) => void } = {},
): void {
  const staged: { tmp: string; path: string }[] = [];
  try {
    for (const f of files) staged.push({ tmp: stageFile(f.path, f.text), path: f.path });
  } catch (e) {
    for (const s of staged) tryUnlink(s.tmp);
    throw e;
  }
  for (let i = 0; i < staged.length; i++) {
    try {
      (ops.rename ?? renameSync)(staged[i].tmp, staged[i].path);
    } catch (e) {
      for (const s of staged.slice(i)) tryUnlink(s.tmp);
      throw e;
    }
  }
}

export interface AddBundleFileOptions extends AddBundleOptions {
  /** Plan only: report (with the diff) and write nothing. */
  dryRun?: boolean;
  /** For tests: the rename step of the atomic write. */
  rename?: (from: string, to: string) => void;
}

function writeFailure(plans: AddBundlePlan[], e: unknown): void {
  for (const p of plans) {
    if (p.outcome !== "added") continue;
    p.outcome = "invalid-input";
    p.problems.push(
      problem("TEMPLATE_ADD_WRITE", `writing ${p.template}: ${messageOf(e)}; the file was left unchanged`),
    );
  }
}

/**
 * Adds a bundle to one template file (see {@link planAddBundle});
 * writes it unless the outcome is a failure or `dryRun`.
 */
export async function addBundleToFile(
  path: string,
  req: AddBundleRequest,
  opts: AddBundleFileOptions = {},
): Promise<AddBundlePlan> {
  const text = readTemplate(path, req);
  if (typeof text !== "string") return text;
  const plan = await planAddBundle(text, path, req, opts);
  if (plan.outcome === "added" && !opts.dryRun && plan.result !== undefined) {
    try {
      writeFileAtomic(path, plan.result, { rename: opts.rename });
      plan.written = true;
    } catch (e) {
      writeFailure([plan], e);
    }
  }
  return plan;
}

/** The report of a release-config run: one report per listed template. */
export interface ReleaseConfigReport {
  outcome: AddBundleOutcome;
  releaseConfig: string;
  image: string;
  templates: AddBundlePlan[];
  /** Problems of the release config itself. */
  problems: Problem[];
  /** Whether the templates were written (all of them, or none when any template failed). */
  written: boolean;
}

export interface ReleaseConfigOptions extends AddBundleFileOptions {
  /**
   * The package's `catalog-templates` directory (default:
   * `../catalog-templates` from the release config's directory).
   */
  templatesDir?: string;
  /** The bundle's name, when the image cannot be rendered. */
  name?: string;
}

/**
 * Applies a bundle to every template a community `release-config.yaml` lists, like the
 * operator-pipelines `add_bundle_to_fbc` step: each `catalog_templates` item names a template
 * (relative to the templates directory), its channels and, for basic templates, the edges.
 * Every template is planned first; the files are written only when none failed.
 */
export async function addBundleFromReleaseConfig(
  releaseConfigPath: string,
  image: string,
  opts: ReleaseConfigOptions = {},
): Promise<ReleaseConfigReport> {
  const report: ReleaseConfigReport = {
    outcome: "already-present",
    releaseConfig: releaseConfigPath,
    image,
    templates: [],
    problems: [],
    written: false,
  };
  let text: string;
  try {
    text = readInputTextSync(releaseConfigPath, { what: "release config" });
  } catch (e) {
    const why = e instanceof OpcatError ? e.message.replace(/^open \S+: /, "") : goErrnoText(e);
    report.problems.push(problem("TEMPLATE_ADD_RELEASE_CONFIG", `open ${releaseConfigPath}: ${why}`));
    report.outcome = "invalid-input";
    return report;
  }
  const rc = parseReleaseConfig(text);
  if ("problems" in rc) {
    report.problems.push(
      ...rc.problems.map((m) => problem("TEMPLATE_ADD_RELEASE_CONFIG", `${releaseConfigPath}: ${m}`)),
    );
    report.outcome = "invalid-input";
    return report;
  }
  const dir = opts.templatesDir ?? join(dirname(releaseConfigPath), "..", "catalog-templates");
  // Render the bundle once for every template.
  let memo: Promise<RenderedBundle> | undefined;
  const base = opts.source;
  const source: (BundleSource & Partial<TagLister>) | undefined = base
    ? {
        render(ref: string): Promise<RenderedBundle> {
          if (ref !== image) return base.render(ref);
          memo ??= base.render(ref);
          return memo;
        },
        ...(base.listTags ? { listTags: base.listTags.bind(base) } : {}),
      }
    : undefined;
  const current = new Map<string, string>();
  for (const t of rc.catalogTemplates) {
    const path = join(dir, t.templateName);
    const req: AddBundleRequest = {
      image,
      channels: t.channels,
      replaces: t.replaces,
      skips: t.skips,
      skipRange: t.skipRange,
      name: opts.name,
    };
    let text = current.get(path);
    if (text === undefined) {
      const read = readTemplate(path, req);
      if (typeof read !== "string") {
        report.templates.push(read);
        continue;
      }
      text = read;
    }
    const plan = await planAddBundle(text, path, req, { source });
    if (plan.result !== undefined) current.set(path, plan.result);
    report.templates.push(plan);
  }
  report.outcome = worstOutcome(report.templates.map((p) => p.outcome));
  if (!opts.dryRun && (report.outcome === "added" || report.outcome === "already-present")) {
    const files = [...current].map(([path, text]) => ({ path, text }));
    if (files.length > 0) {
      try {
        writeAll(files, { rename: opts.rename });
        for (const p of report.templates) p.written = p.outcome === "added";
        report.written = true;
      } catch (e) {
        writeFailure(report.templates, e);
        report.outcome = worstOutcome(report.templates.map((p) => p.outcome));
      }
    }
  }
  return report;
}
