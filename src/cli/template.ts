/**
 * `opcat template render` (aliases `render-template`, `render-veneer`): renders a basic, semver or
 * substitutes catalog template like `opm alpha render-template`, and the composite template like
 * opm's former `opm alpha render-template composite`. Bundle images are pulled and rendered
 * (`--reuse` answers them from an already-rendered catalog first). Flags → src/action/template.ts → print.
 */
import { type Command, Option } from "commander";
import type * as ALib from "../action/template.js";
import type { TemplateProgress } from "../action/template.js";
import { OpcatError, problem } from "../errors/index.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import type { SemverSkips } from "../template/index.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { migrateLevelOption, outputFormatError, outputOption } from "./flags.js";
import { formatBytes, Progress } from "./output.js";
import { registerConvertCommand } from "./template-convert.js";
import { registerAddBundleCommand } from "./template-add.js";
import { loadOnAction } from "./lazy.js";

// Loaded when a template render runs (see loadOnAction below).
let A: typeof ALib;
let T: ALib.TemplateFlagValues;

const OUTPUTS = ["json", "yaml", "mermaid"];

interface RenderOpts extends ImageAccessFlags {
  output: string;
  migrateLevel?: string;
  reuse?: string;
  reuseTags?: boolean;
  offline?: boolean;
  semverSkips?: SemverSkips;
  catalogConfig?: string;
  compositeConfig?: string;
  validate: boolean;
}

/** The template type handled by opcat's CLI itself (opm registered it as its own subcommand). */
const COMPOSITE = "composite";

/** The progress line of a render's image pulls (on a terminal). */
function progressLine(progress: Progress): (p: TemplateProgress) => void {
  return (p) =>
    progress.update(
      `${p.done}/${p.total} images; ${p.ref}` +
        (p.bytes ? `: ${formatBytes(p.bytes.done)}/${formatBytes(p.bytes.total)}` : ""),
    );
}

async function runComposite(args: string[], opts: RenderOpts): Promise<void> {
  if (args.length > 1)
    throw new OpcatError("USAGE_ARGS", `accepts at most 0 arg(s), received ${args.length - 1}`, {
      kind: "usage",
    });
  if (opts.output !== "json" && opts.output !== "yaml") {
    throw outputFormatError(opts.output, ["json", "yaml"], goQuote);
  }
  if (opts.migrateLevel !== undefined)
    throw new OpcatError("USAGE_FLAGS", "--migrate-level is not supported by the composite template", {
      kind: "usage",
    });
  const progress = new Progress("pulling");
  try {
    const pull = await imageAccessFrom(opts);
    await A.renderCompositeAction(
      { catalogConfig: opts.catalogConfig, compositeConfig: opts.compositeConfig },
      {
        pull,
        reuse: opts.reuse,
        reuseTags: opts.reuseTags,
        offline: opts.offline,
        onProgress: progressLine(progress),
        output: opts.output,
        validate: opts.validate,
        semverSkips: opts.semverSkips,
      },
    );
  } finally {
    progress.done();
  }
}

async function runRender(args: string[], opts: RenderOpts): Promise<void> {
  if (args[0] === COMPOSITE) return runComposite(args, opts);
  if (opts.catalogConfig !== undefined || opts.compositeConfig !== undefined) {
    throw new OpcatError("USAGE_FLAGS", "--catalog-config and --composite-config are only for the composite template", {
      kind: "usage",
    });
  }
  let type: string | undefined;
  let file = "-";
  if (args.length === 1) {
    if (T.allTypes.includes(args[0])) type = args[0];
    else file = args[0];
  } else if (args.length === 2) {
    [type, file] = args;
  } else if (args.length > 2) {
    throw new OpcatError("USAGE_ARGS", `accepts between 0 and 2 arg(s), received ${args.length}`, {
      kind: "usage",
    });
  }
  if (type !== undefined && !T.allTypes.includes(type)) {
    // opm's text (its types); opcat's own types are named in a hint.
    const message = `invalid template type ${goQuote(type)}, must be one of: [${T.types.join(" ")}]`;
    const others = [...T.allTypes.filter((t) => !T.types.includes(t)), COMPOSITE];
    const hint = `opcat also renders: ${others.join(", ")}`;
    throw new OpcatError("TEMPLATE_TYPE", message, {
      kind: "usage",
      problems: [problem("TEMPLATE_TYPE", message, { hint })],
    });
  }
  const progress = new Progress("pulling");
  let cfg: DeclarativeConfig;
  try {
    const pull = await imageAccessFrom(opts);
    cfg = await A.renderTemplateAction(
      { type, file },
      {
        pull,
        reuse: opts.reuse,
        reuseTags: opts.reuseTags,
        offline: opts.offline,
        onProgress: progressLine(progress),
        migrateLevel: opts.migrateLevel,
        semverSkips: opts.semverSkips,
      },
    );
  } finally {
    progress.done();
  }
  await A.writeRenderedCatalog(cfg, opts.output as "json" | "yaml" | "mermaid", process.stdout, (w) =>
    process.stderr.write(w.endsWith("\n") ? w : w + "\n"),
  );
}

function parseBool(v: string): boolean {
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new OpcatError(
    "USAGE_FLAGS",
    `invalid argument ${goQuote(v)} for "--validate" flag: strconv.ParseBool: parsing ${goQuote(v)}: invalid syntax`,
    { kind: "usage" },
  );
}

function addRenderCommand(cmd: Command): Command {
  return addImageAccessOptions(
    cmd
      .description(
        "Render a catalog template (basic, semver, substitutes, composite) like `opm " +
          "alpha render-template`; the type is detected from the schema when TYPE is omitted",
      )
      .argument(
        "[args...]",
        "[TYPE] [FILE]: TYPE is one of basic, semver, substitutes, or composite (which takes " +
          "no FILE: see -f/-c); FILE is a template file or - for standard input (the default)",
      )
      .addOption(outputOption(OUTPUTS, "json", `output format (${OUTPUTS.join("|")}; composite: json|yaml)`))
      .addOption(migrateLevelOption("name of the last migration to run on the rendered bundles (default: none)"))
      .option(
        "--reuse <rendered-fbc>",
        "answer bundle images from this already-rendered catalog (directory, file or " +
          "-) before pulling them; only digest-pinned references unless --reuse-tags",
      )
      .option(
        "--reuse-tags",
        "with --reuse, also answer tag references (a tag may have moved since the catalog was rendered)",
        false,
      )
      .option(
        "--offline",
        "with --reuse, never touch a registry: every reference (tags too) is answered " +
          "from the reused catalog, and graph-template tags are listed from its images",
        false,
      )
      .addOption(
        new Option(
          "--semver-skips <mode>",
          "semver (and the composite template's semver builder): what a Y-stream head skips: cumulative " +
            "(today's opm: its own Y-stream and the earlier ones of the same major) or y-stream " +
            "(only its own Y-stream, as in the examples of opm's docs before operator-registry #1065)",
        ).default("cumulative"),
      )
      .option(
        "-f, --catalog-config <file|url>",
        "composite: the catalog configuration (olm.composite.catalogs), " +
          "a path or an http(s) URL (default catalogs.yaml)",
      )
      .option(
        "-c, --composite-config <file>",
        "composite: the contribution configuration (olm.composite) (default composite.yaml)",
      )
      .option(
        "--validate [bool]",
        "composite: validate each component's directory like `opm validate` (--validate=false to skip)",
        parseBool,
        true,
      ),
  )
    .addHelpText(
      "after",
      `
Examples:
  opcat template render semver semver.yaml -o yaml                 # pulls the bundle images
  opcat template render semver semver.yaml --reuse catalog/ -o yaml  # digest-pinned images from catalog/, ` +
        `the rest pulled
  opcat template render basic-template.yaml --reuse index.yaml --reuse-tags
  opcat template render graph graph.yaml --reuse catalog.yaml --offline  # no registry access at all
  opcat template render substitutes substitutes.yaml
  opcat template render composite -f catalogs.yaml -c contributions.yaml -o yaml
  opcat render-template - < template.yaml   # auto-detects the type, reads standard input

Bundle images are pulled into the image cache (at most 4 at once) and rendered like \`opm render\`;
each distinct reference once. Registries.conf mirrors, credentials and the TLS flags apply.
The output is not validated (like opm), except by the substitutes template and composite --validate;
check it with \`opcat validate\`.`,
    )
    .action(async (args: string[], opts: RenderOpts) => {
      if (opts.reuseTags && opts.reuse === undefined)
        throw new OpcatError("USAGE_FLAGS", "--reuse-tags needs --reuse", { kind: "usage" });
      if (opts.offline && opts.reuse === undefined)
        throw new OpcatError("USAGE_FLAGS", "--offline needs --reuse", { kind: "usage" });
      if (!(T.semverSkips as readonly string[]).includes(opts.semverSkips ?? "cumulative"))
        throw new OpcatError(
          "USAGE_FLAGS",
          `invalid --semver-skips value ${JSON.stringify(opts.semverSkips)}, expected (${T.semverSkips.join("|")})`,
          { kind: "usage" },
        );
      await runRender(args, opts);
    });
}

/** Adds `template render` and its top-level aliases `render-template` and `render-veneer`. */
export function registerTemplateCommands(program: Command): void {
  const tmpl = program
    .command("template")
    .description(
      "Catalog templates (basic, semver, substitutes, composite), rendered like `opm alpha render-template`",
    );
  const render = addRenderCommand(tmpl.command("render"));
  registerConvertCommand(tmpl);
  registerAddBundleCommand(tmpl);
  const alias = addRenderCommand(program.command("render-template").alias("render-veneer"));
  loadOnAction([render, alias], async () => {
    A = await import("../action/template.js");
    T = await A.templateFlagValues();
  });
}
