/**
 * The composite template (operator-registry alpha/template/composite before its removal, commit
 * 0970a2c7^): a catalog maintainer's catalog configuration (`olm.composite.catalogs`: catalogs with
 * a working directory and the builders they allow) and an operator author's contribution
 * configuration (`olm.composite`: components, each built by one builder into
 * `<workingDir>/<destination.path>/<output>`), optionally validated per component directory.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, mkdirSync, statSync, writeFileSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, posix, resolve } from "node:path";
import { type ErrorKind, OpcatError } from "../errors/index.js";
import { readInputTextSync } from "../fsx/readfile.js";
import { loadDirectory, loadText } from "../fbc/load.js";
import type { Bundle, DeclarativeConfig } from "../fbc/types.js";
import { validateCatalog } from "../fbc/validate.js";
import { formatCatalog, type OutputFormat } from "../fbc/write.js";
import { goQuote } from "../gojson/fmt.js";
import { renderBasicTemplate } from "./basic.js";
import { firstStreamDocument } from "./document.js";
import { SCHEMA_BASIC } from "./detect.js";
import { goDecode, type GoType } from "../gojson/structdecode.js";
import { renderSemverTemplate, type SemverSkips } from "./semver.js";
import type { BundleSource } from "./source/source.js";
import { goErrnoText, goPathError } from "../gojson/goerrno.js";

/** Schema of the contribution configuration. */
export const COMPOSITE_SCHEMA = "olm.composite";
/** Schema of the catalog configuration. */
export const CATALOGS_SCHEMA = "olm.composite.catalogs";

const BASIC_BUILDER = "olm.builder.basic";
const SEMVER_BUILDER = "olm.builder.semver";
const RAW_BUILDER = "olm.builder.raw";
const CUSTOM_BUILDER = "olm.builder.custom";
/** The registered builder schemas. */
export const BUILDER_SCHEMAS: readonly string[] = Object.freeze([
  BASIC_BUILDER,
  SEMVER_BUILDER,
  RAW_BUILDER,
  CUSTOM_BUILDER,
]);

const STRING: GoType = { kind: "string", goName: "string" };
const STRINGS: GoType = { kind: "slice", goName: "[]string", elem: STRING };
const struct = (goName: string, fields: [string, GoType][]): GoType => ({
  kind: "struct",
  goName: `composite.${goName}`,
  shortName: goName,
  fields: fields.map(([json, type]) => ({ json, type })),
});

// The Go types have no JSON tags: keys match the field names in any letter case.
const CATALOG_CONFIG = struct("CatalogConfig", [
  ["Schema", STRING],
  [
    "Catalogs",
    {
      kind: "slice",
      goName: "[]composite.Catalog",
      elem: struct("Catalog", [
        ["Name", STRING],
        ["Destination", struct("CatalogDestination", [["WorkingDir", STRING]])],
        ["Builders", STRINGS],
      ]),
    },
  ],
]);
const COMPOSITE_CONFIG = struct("CompositeConfig", [
  ["Schema", STRING],
  [
    "Components",
    {
      kind: "slice",
      goName: "[]composite.Component",
      elem: struct("Component", [
        ["Name", STRING],
        ["Destination", struct("ComponentDestination", [["Path", STRING]])],
        [
          "Strategy",
          struct("BuildStrategy", [
            ["Name", STRING],
            [
              "Template",
              struct("TemplateDefinition", [
                ["Schema", STRING],
                ["Config", { kind: "custom", goName: "json.RawMessage" }],
              ]),
            ],
          ]),
        ],
      ]),
    },
  ],
]);
const IO_CONFIG = (name: string): GoType =>
  struct(name, [
    ["Input", STRING],
    ["Output", STRING],
  ]);
const CUSTOM_CONFIG = struct("CustomConfig", [
  ["Command", STRING],
  ["Args", STRINGS],
  ["Output", STRING],
]);

interface CatalogConfig {
  Schema: string;
  Catalogs: { Name: string; Destination: { WorkingDir: string }; Builders: string[] | null }[] | null;
}
interface Component {
  Name: string;
  Destination: { Path: string };
  Strategy: { Name: string; Template: { Schema: string; Config: unknown } };
}
interface CompositeConfig {
  Schema: string;
  Components: Component[] | null;
}

/** Inputs of {@link renderCompositeTemplate}. */
export interface CompositeOptions {
  /** Text of the catalog configuration (`-f`). */
  catalogs: string;
  /** Text of the contribution configuration (`-c`). */
  contributions: string;
  /** Absolute directory of the contribution file: inputs not found as given are looked up there. */
  contributionDir: string;
  /** Format of the files written (default json). */
  output?: OutputFormat;
  /** Validate each component's directory after building it, like `opm validate` (default true). */
  validate?: boolean;
  /** Renders the basic and semver templates' bundle images. */
  source: BundleSource;
  /** Directory that relative working dirs, inputs and custom commands are relative to (default the process's). */
  cwd?: string;
  /** What the semver builder's Y-stream heads skip (default cumulative, as today's opm). */
  semverSkips?: SemverSkips;
}

/** What a composite render wrote. */
export interface CompositeResult {
  /** One entry per component built, in contribution order. */
  components: { name: string; builder: string; file: string }[];
}

/** An error with `prefix: ` added, keeping the cause's code and exit code. */
function wrapped(prefix: string, e: unknown): OpcatError {
  if (e instanceof OpcatError)
    return new OpcatError(e.code, `${prefix}: ${e.message}`, { kind: e.kind, problems: e.problems, cause: e });
  return new OpcatError("TEMPLATE_COMPOSITE", `${prefix}: ${e instanceof Error ? e.message : String(e)}`, {
    kind: "invalid",
    cause: e,
  });
}

function fail(code: string, message: string, kind: ErrorKind = "invalid"): OpcatError {
  return new OpcatError(code, message, { kind });
}

/**
 * The first document decoded leniently (YAMLOrJSONDecoder + json.Unmarshal),
 * with `decoding <what>: ` / `unmarshalling <what>: ` errors.
 */
function decodeConfig(text: string, type: GoType, what: string): unknown {
  const doc = firstStreamDocument(text);
  if (doc.kind === "eof") throw fail("TEMPLATE_DECODE", `decoding ${what}: EOF`);
  if (doc.kind === "error") throw fail("TEMPLATE_DECODE", `decoding ${what}: ${doc.message}`);
  if (doc.kind === "empty") throw fail("TEMPLATE_DECODE", `unmarshalling ${what}: unexpected end of JSON input`);
  const r = goDecode(doc.value, type);
  if (!r.ok) throw fail("TEMPLATE_DECODE", `unmarshalling ${what}: ${r.error}`);
  return r.value;
}

/** sigs.k8s.io/yaml.UnmarshalStrict of a builder's raw config. */
function decodeBuilderConfig<T>(raw: unknown, type: GoType, kind: string): T {
  const r = goDecode(raw === undefined ? null : (raw as never), type, {
    disallowUnknownFields: true,
    coerceStrings: true,
  });
  if (!r.ok)
    throw fail(
      "TEMPLATE_COMPOSITE_CONFIG",
      `unmarshalling ${kind} template config: error unmarshaling JSON: while decoding JSON: ${r.error}`,
    );
  return r.value as T;
}

function checkFields(kind: string, missing: [boolean, string][]): void {
  const errs = missing
    .filter(([m]) => m)
    .map(([, field]) => `${kind} template config must have a non-empty ${field} (templateDefinition.config.${field})`);
  if (errs.length > 0)
    throw fail("TEMPLATE_COMPOSITE_CONFIG", `${kind} template configuration is invalid: ${errs.join(",")}`);
}

/** Go's exec.LookPath for a command name without a slash; the name itself otherwise or when not found. */
function lookPath(cmd: string): string | undefined {
  if (cmd.includes("/")) return cmd;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const p = join(dir === "" ? "." : dir, cmd);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, constants.X_OK);
        return p;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a custom builder's command without a shell; resolves with its standard output. */
function runCommand(command: string, args: readonly string[], cwd: string): Promise<Buffer> {
  const found = lookPath(command);
  const shown = [found ?? command, ...args].join(" ");
  return new Promise((resolvePromise, reject) => {
    if (found === undefined) {
      reject(
        fail(
          "TEMPLATE_COMPOSITE_COMMAND",
          `running command ${goQuote(shown)}: exec: ${goQuote(command)}: executable file not found in $PATH: []`,
        ),
      );
      return;
    }
    execFile(found, [...args], { cwd, encoding: "buffer", maxBuffer: 1 << 30 }, (err, stdout) => {
      if (!err) {
        resolvePromise(stdout);
        return;
      }
      const e = err as NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals | null };
      const why =
        typeof e.code === "number"
          ? `exit status ${e.code}`
          : e.signal
            ? `signal: ${signalText(e.signal)}`
            : `fork/exec ${found}: ${goErrnoText(e)}`;
      reject(
        fail("TEMPLATE_COMPOSITE_COMMAND", `running command ${goQuote(shown)}: ${why}: [${[...stdout].join(" ")}]`),
      );
    });
  });
}

function signalText(sig: string): string {
  const names: Record<string, string> = {
    SIGKILL: "killed",
    SIGTERM: "terminated",
    SIGINT: "interrupt",
    SIGSEGV: "segmentation fault",
    SIGABRT: "aborted",
    SIGPIPE: "broken pipe",
    SIGHUP: "hangup",
  };
  return names[sig] ?? sig;
}

/** Loads FBC text as declcfg.LoadReader does; the first problem's message on failure. */
function loadFbc(text: string, file: string): DeclarativeConfig | OpcatError {
  const res = loadText(text, file);
  if (res.problems.length > 0)
    return new OpcatError(res.problems[0].code, res.problems[0].message, { kind: "invalid", problems: res.problems });
  return res.config;
}

/**
 * Renders the contributions into the catalogs' working directories as `opm alpha render-template
 * composite` did. Errors carry opm's texts (see docs/templates.md); nothing is printed. The basic
 * builder accepts both the `olm.template.basic` template and the plain FBC stream opm's basic
 * template read when the composite template existed.
 */
export async function renderCompositeTemplate(opts: CompositeOptions): Promise<CompositeResult> {
  const cwd = opts.cwd ?? process.cwd();
  const ctx: BuildContext = {
    opts,
    cwd,
    output: opts.output ?? "json",
    at: (p: string): string => (isAbsolute(p) ? p : resolve(cwd, p)),
  };
  const { cat, comp } = decodeConfigs(opts);
  const builders = catalogBuilders(cat);
  const result: CompositeResult = { components: [] };
  for (const c of comp.Components ?? []) result.components.push(await buildComponent(ctx, builders, c));
  return result;
}

/** What the builders share: the options, the working directory, the output format, paths resolved. */
interface BuildContext {
  opts: CompositeOptions;
  cwd: string;
  output: OutputFormat;
  /** A path relative to `cwd` made absolute (an absolute one as is). */
  at: (p: string) => string;
}

/** A catalog of the catalog configuration: its working directory and the builder schemas it allows. */
interface CatalogBuilder {
  workingDir: string;
  schemas: Set<string>;
}

/** The two configurations decoded, their schemas checked (catalogs first). */
function decodeConfigs(opts: CompositeOptions): { cat: CatalogConfig; comp: CompositeConfig } {
  const cat = decodeConfig(opts.catalogs, CATALOG_CONFIG, "catalog config") as CatalogConfig;
  if (cat.Schema !== CATALOGS_SCHEMA)
    throw fail(
      "TEMPLATE_SCHEMA",
      `catalog configuration file has unknown schema, should be ${goQuote(CATALOGS_SCHEMA)}`,
    );
  const comp = decodeConfig(opts.contributions, COMPOSITE_CONFIG, "composite config") as CompositeConfig;
  if (comp.Schema !== COMPOSITE_SCHEMA)
    throw fail(
      "TEMPLATE_SCHEMA",
      `composite configuration file has unknown schema, should be ${goQuote(COMPOSITE_SCHEMA)}`,
    );
  return { cat, comp };
}

/** newCatalogBuilderMap: each catalog by name (the first of a name wins), its field errors together. */
function catalogBuilders(cat: CatalogConfig): Map<string, CatalogBuilder> {
  const builders = new Map<string, CatalogBuilder>();
  const setupErrors = new Map<string, string[]>();
  for (const c of cat.Catalogs ?? []) {
    if (c.Destination.WorkingDir === "") {
      setupErrors.set(c.Name, ["destination.workingDir must not be an empty string"]);
      continue;
    }
    if (builders.has(c.Name)) continue;
    const schemas = new Set<string>();
    for (const s of c.Builders ?? []) {
      if (!BUILDER_SCHEMAS.includes(s))
        throw fail(
          "TEMPLATE_COMPOSITE_BUILDER",
          `getting builder ${goQuote(s)} for catalog ${goQuote(c.Name)}: unknown schema ${goQuote(s)}`,
        );
      schemas.add(s);
    }
    builders.set(c.Name, { workingDir: c.Destination.WorkingDir, schemas });
  }
  if (setupErrors.size > 0) {
    let msg = "";
    for (const [name, errs] of setupErrors) msg += `\nCatalog ${name}:\n` + errs.map((e) => `  - ${e}\n`).join("");
    throw fail("TEMPLATE_COMPOSITE_CATALOGS", `catalog configuration file field validation failed: ${msg}`);
  }
  return builders;
}

/** One component built by its catalog's builder for its schema, then (unless turned off) validated. */
async function buildComponent(
  ctx: BuildContext,
  builders: Map<string, CatalogBuilder>,
  c: Component,
): Promise<CompositeResult["components"][number]> {
  const cat = builders.get(c.Name);
  if (!cat) {
    throw fail(
      "TEMPLATE_COMPOSITE_COMPONENT",
      `building component ${goQuote(c.Name)}: component does not exist in the catalog ` +
        `configuration. Available components are: [${[...builders.keys()].join(" ")}]`,
    );
  }
  const schema = c.Strategy.Template.Schema;
  if (!cat.schemas.has(schema))
    throw fail(
      "TEMPLATE_COMPOSITE_BUILDER",
      `building component ${goQuote(c.Name)}: no builder found for template schema ${goQuote(schema)}`,
    );
  let file: string;
  try {
    file = await build(ctx, schema, c, cat.workingDir);
  } catch (e) {
    throw wrapped(`building component ${goQuote(c.Name)}`, e);
  }
  if (ctx.opts.validate ?? true) {
    try {
      validateDir(ctx, cat.workingDir, c.Destination.Path);
    } catch (e) {
      throw wrapped(`validating component ${goQuote(c.Name)}`, e);
    }
  }
  return { name: c.Name, builder: schema, file };
}

/** Opens a builder input: as given, then (only when missing) relative to the contribution's directory. */
function readInput(ctx: BuildContext, input: string, what: string): string {
  const { opts, at } = ctx;
  try {
    return readInputTextSync(at(input), { what });
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    if ((e as NodeJS.ErrnoException).code === "ENOENT" && opts.contributionDir !== "") {
      const alt = posix.join(opts.contributionDir, input);
      try {
        return readInputTextSync(at(alt), { what });
      } catch (e2) {
        if (e2 instanceof OpcatError) throw e2;
        throw fail(
          "TEMPLATE_COMPOSITE_INPUT",
          `error reading ${what}: ${goPathError("open", alt, e2)} (tried ` +
            `contribution-local path: ${goQuote(opts.contributionDir)})`,
          "io",
        );
      }
    }
    throw fail("TEMPLATE_COMPOSITE_INPUT", `error reading ${what}: ${goPathError("open", input, e)}`, "io");
  }
}

/** What a builder made: the catalog and the output file named by its config. */
interface Built {
  cfg: DeclarativeConfig;
  out: string;
}

/** Builds a component with the builder of `schema` and writes it; the path written. */
async function build(ctx: BuildContext, schema: string, c: Component, workingDir: string): Promise<string> {
  const raw = c.Strategy.Template.Config;
  let built: Built;
  switch (schema) {
    case BASIC_BUILDER:
    case SEMVER_BUILDER:
      built = await buildTemplate(ctx, schema === BASIC_BUILDER ? "basic" : "semver", raw);
      break;
    case RAW_BUILDER:
      built = buildRaw(ctx, raw);
      break;
    default:
      built = await buildCustom(ctx, raw);
  }
  return writeOutput(ctx, built.cfg, posix.join(workingDir, c.Destination.Path, built.out));
}

/** The basic and semver builders: the template read from `Input` and rendered. */
async function buildTemplate(ctx: BuildContext, kind: "basic" | "semver", raw: unknown): Promise<Built> {
  const { opts } = ctx;
  const bc = decodeBuilderConfig<{ Input: string; Output: string }>(
    raw,
    IO_CONFIG(kind === "basic" ? "BasicConfig" : "SemverConfig"),
    kind,
  );
  checkFields(kind, [
    [bc.Input === "", "input"],
    [bc.Output === "", "output"],
  ]);
  const text = readInput(ctx, bc.Input, `${kind} template`);
  let cfg: DeclarativeConfig;
  try {
    cfg =
      kind === "basic"
        ? await renderBasic(opts.source, text, bc.Input)
        : await renderSemverTemplate(text, opts.source, { skips: opts.semverSkips });
  } catch (e) {
    throw wrapped(`error rendering ${kind} template`, e);
  }
  return { cfg, out: bc.Output };
}

/** The raw builder: the FBC read from `Input` as it is. */
function buildRaw(ctx: BuildContext, raw: unknown): Built {
  const rc = decodeBuilderConfig<{ Input: string; Output: string }>(raw, IO_CONFIG("RawConfig"), "raw");
  checkFields("raw", [
    [rc.Input === "", "input"],
    [rc.Output === "", "output"],
  ]);
  const loaded = loadFbc(readInput(ctx, rc.Input, "raw input file"), rc.Input);
  if (loaded instanceof OpcatError) {
    throw new OpcatError(loaded.code, `error parsing raw input file: ${rc.Input}, ${loaded.message}`, {
      kind: "invalid",
      problems: loaded.problems,
    });
  }
  return { cfg: loaded, out: rc.Output };
}

/** The custom builder: the FBC a command prints. */
async function buildCustom(ctx: BuildContext, raw: unknown): Promise<Built> {
  const cc = decodeBuilderConfig<{ Command: string; Args: string[] | null; Output: string }>(
    raw,
    CUSTOM_CONFIG,
    "custom",
  );
  checkFields("custom", [
    [cc.Command === "", "command"],
    [cc.Output === "", "output"],
  ]);
  const args = cc.Args ?? [];
  const stdout = await runCommand(cc.Command, args, ctx.cwd);
  const loaded = loadFbc(stdout.toString("utf8"), "-");
  if (loaded instanceof OpcatError) {
    throw new OpcatError(
      loaded.code,
      `error parsing custom command output: ${[cc.Command, ...args].join("'")}, ${loaded.message}`,
      { kind: "invalid", problems: loaded.problems },
    );
  }
  return { cfg: loaded, out: cc.Output };
}

/** The basic builder: today's `olm.template.basic`, or the plain FBC stream of opm's former basic template. */
async function renderBasic(source: BundleSource, text: string, file: string): Promise<DeclarativeConfig> {
  const doc = firstStreamDocument(text);
  const schema =
    doc.kind === "value" && doc.value !== null && typeof doc.value === "object" && !Array.isArray(doc.value)
      ? doc.value.schema
      : undefined;
  if (schema === SCHEMA_BASIC) return renderBasicTemplate(text, source);
  const loaded = loadFbc(text, file);
  if (loaded instanceof OpcatError) throw loaded;
  const isTemplate = (b: Bundle): boolean =>
    b.schema !== "" && b.image !== "" && b.package === "" && b.properties.length === 0 && b.relatedImages.length === 0;
  const bad = loaded.bundles.findIndex((b) => !isTemplate(b));
  source.prefetch?.(loaded.bundles.slice(0, bad < 0 ? undefined : bad).map((b) => b.image));
  const bundles: Bundle[] = [];
  for (const b of loaded.bundles) {
    if (!isTemplate(b)) throw fail("TEMPLATE_BUNDLE_FIELDS", "unexpected fields present in basic template bundle");
    bundles.push(await source.render(b.image));
  }
  loaded.bundles = bundles;
  return loaded;
}

function writeOutput(ctx: BuildContext, cfg: DeclarativeConfig, outPath: string): string {
  const full = ctx.at(outPath);
  try {
    mkdirSync(dirname(full), { recursive: true });
  } catch (e) {
    throw fail(
      "IO_ERROR",
      `creating output directory ${goQuote(outPath)}: ${goPathError("mkdir", dirname(outPath), e)}`,
      "io",
    );
  }
  let text: string;
  try {
    text = formatCatalog(cfg, ctx.output);
  } catch (e) {
    throw wrapped(`writing to output file ${goQuote(outPath)}`, e);
  }
  try {
    writeFileSync(full, text);
  } catch (e) {
    throw fail("IO_ERROR", `creating output file ${goQuote(outPath)}: ${goPathError("open", outPath, e)}`, "io");
  }
  return outPath;
}

function validateDir(ctx: BuildContext, workingDir: string, dir: string): void {
  const p = posix.join(workingDir, dir);
  let st;
  try {
    st = statSync(ctx.at(p));
  } catch (e) {
    throw fail(
      "TEMPLATE_COMPOSITE_VALIDATE",
      `directory not found. validation path needs to be composed of ` +
        `BuilderConfig.WorkingDir+Component[].Destination.Path: ${goQuote(p)}: ${goPathError("stat", p, e)}`,
      "io",
    );
  }
  if (!st.isDirectory()) throw fail("TEMPLATE_COMPOSITE_VALIDATE", `${goQuote(p)} is not a directory`, "io");
  const res = loadDirectory(ctx.at(p));
  const problems = [...res.problems];
  if (problems.length === 0) problems.push(...validateCatalog(res.config).problems);
  const first = problems.find((x) => x.severity === "error");
  if (first)
    throw new OpcatError(first.code, `validation failure in path ${goQuote(p)}: ${first.message}`, {
      kind: "invalid",
    });
}
