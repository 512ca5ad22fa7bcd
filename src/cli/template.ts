/**
 * `opcat template render` (aliases `render-template`, `render-veneer`): renders a basic or semver
 * catalog template like `opm alpha render-template`. Bundle images are answered from an already
 * rendered catalog with --reuse; pulling images is not available yet.
 */
import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { OpcatError } from "../fbc/errors.js";
import { loadCatalog } from "../fbc/load.js";
import { renderMermaid } from "../fbc/mermaid.js";
import { migrationHelpText, validateMigrationLevel } from "../fbc/migrate.js";
import { normalizeForRender } from "../fbc/render.js";
import { writeCatalog } from "../fbc/write.js";
import { goQuote } from "../gojson/fmt.js";
import { renderTemplate, reuseSource, TEMPLATE_TYPES, unavailableSource, type BundleSource } from "../template/index.js";
import { EXIT_INVALID, EXIT_USAGE } from "./output.js";

const OUTPUTS = ["json", "yaml", "mermaid"];

interface RenderOpts {
  output: string;
  migrateLevel?: string;
  reuse?: string;
  reuseTags?: boolean;
}

async function readInput(file: string): Promise<string> {
  if (file === "-") {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
    return Buffer.concat(chunks).toString("utf8");
  }
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file or directory" : code === "EISDIR" ? "is a directory" : (e as Error).message;
    throw new OpcatError("IO_ERROR", `unable to open ${goQuote(file)}: open ${file}: ${why}`, { exitCode: EXIT_USAGE });
  }
}

async function runRender(args: string[], opts: RenderOpts): Promise<void> {
  let type: string | undefined;
  let file = "-";
  if (args.length === 1) {
    if (TEMPLATE_TYPES.includes(args[0])) type = args[0];
    else file = args[0];
  } else if (args.length === 2) {
    [type, file] = args;
  } else if (args.length > 2) {
    throw new OpcatError("USAGE_ARGS", `accepts between 0 and 2 arg(s), received ${args.length}`, { exitCode: EXIT_USAGE });
  }
  let src: BundleSource = unavailableSource();
  if (opts.reuse !== undefined) {
    const res = await loadCatalog(opts.reuse);
    if (res.problems.length > 0) throw new OpcatError(res.problems[0].code, res.problems[0].message, { problems: res.problems, exitCode: EXIT_INVALID });
    src = reuseSource(res.config, { reuseTags: opts.reuseTags });
  }
  if (type !== undefined && !TEMPLATE_TYPES.includes(type)) {
    throw new OpcatError("TEMPLATE_TYPE", `invalid template type ${goQuote(type)}, must be one of: [${TEMPLATE_TYPES.join(" ")}]`, { exitCode: EXIT_USAGE });
  }
  const text = await readInput(file);
  const cfg = await renderTemplate(text, src, { type });
  normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
  if (opts.output === "mermaid") {
    const { text: graph, warnings } = renderMermaid(cfg, { drawV0Semantics: true });
    for (const w of warnings) process.stderr.write(w.endsWith("\n") ? w : w + "\n");
    process.stdout.write(graph);
    return;
  }
  await writeCatalog(cfg, opts.output as "json" | "yaml", process.stdout);
}

function addRenderCommand(cmd: Command): Command {
  return cmd
    .description("Render a catalog template (basic or semver) like `opm alpha render-template`; the type is detected from the schema when TYPE is omitted")
    .argument("[args...]", "[TYPE] [FILE]: TYPE is one of basic, semver, substitutes; FILE is a template file or - for standard input (the default)")
    .addOption(
      new Option("-o, --output <format>", `output format (${OUTPUTS.join("|")})`).default("json").argParser((v) => {
        if (!OUTPUTS.includes(v)) throw new OpcatError("USAGE_OUTPUT", `invalid --output value ${JSON.stringify(v)}, expected (json|yaml|mermaid)`, { exitCode: EXIT_USAGE });
        return v;
      }),
    )
    .addOption(
      new Option("--migrate-level <level>", `name of the last migration to run on the rendered bundles (default: none)${migrationHelpText()}`).argParser((v) => {
        const err = validateMigrationLevel(v);
        if (err) throw new OpcatError("USAGE_MIGRATE_LEVEL", err, { exitCode: EXIT_USAGE });
        return v;
      }),
    )
    .option("--reuse <rendered-fbc>", "answer bundle images from this already-rendered catalog (directory, file or -) instead of pulling them; only digest-pinned references unless --reuse-tags")
    .option("--reuse-tags", "with --reuse, also answer tag references (a tag may have moved since the catalog was rendered)", false)
    .addHelpText(
      "after",
      `
Examples:
  opcat template render semver semver.yaml --reuse catalog/ -o yaml
  opcat template render basic-template.yaml --reuse index.yaml --reuse-tags
  opcat render-template - < template.yaml   # auto-detects the type, reads standard input

Pulling bundle images is not available yet: without --reuse, a template that names images fails (exit 2).
The output is not validated (like opm); check it with \`opcat validate\`.`,
    )
    .action(async (args: string[], opts: RenderOpts) => {
      if (opts.reuseTags && opts.reuse === undefined) throw new OpcatError("USAGE_FLAGS", "--reuse-tags needs --reuse", { exitCode: EXIT_USAGE });
      await runRender(args, opts);
    });
}

/** Adds `template render` and its top-level aliases `render-template` and `render-veneer`. */
export function registerTemplateCommands(program: Command): void {
  const tmpl = program.command("template").description("Catalog templates (basic, semver), rendered like `opm alpha render-template`");
  addRenderCommand(tmpl.command("render"));
  addRenderCommand(program.command("render-template").alias("render-veneer"));
}
