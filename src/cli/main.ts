/**
 * The opcat command line: a thin layer over the library. Every command reads its inputs, calls the
 * library, prints the result on stdout and problems on stderr, and exits 0 (success), 1 (invalid
 * catalog or other invalid content), 2 (usage or I/O error) or 3 (internal error).
 */
import { Argument, Command, CommanderError, Option } from "commander";
import type { ListKind, LoadProgress, OutputFormat } from "../action/fbc.js";
import { OpcatError, problemsKind } from "../errors/index.js";
import { VERSION } from "../version.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { completionScript } from "./completion.js";
import { migrateLevelOption, outputOption } from "./flags.js";
import { registerClusterCommands } from "./cluster.js";
import { registerImageCommands } from "./image.js";
import { registerResolveCommands } from "./resolve.js";
import { registerServeCommand } from "./serve.js";
import { registerTemplateCommands } from "./template.js";
import {
  EXIT_USAGE,
  count,
  exitCodeFor,
  formatBytes,
  guardOutputStreams,
  handleError,
  Progress,
  reportProblems,
  type ErrorFormat,
} from "./output.js";

// Each command loads its action when it runs (src/action/fbc.ts, which loads the library it needs),
// so that starting opcat, `--help` and `--version` cost only the command definitions.
const actions = () => import("../action/fbc.js");

/** The loading line on a terminal, as `render`, `render-graph`, `list` and `migrate` show it. */
function loadingProgress(): LoadProgress {
  const progress = new Progress("loading");
  return {
    update: (ref, f, n, bytes) => progress.update(`${ref}: ${n} files, ${formatBytes(bytes)} (${f})`),
    done: () => progress.done(),
  };
}

/** `render`: catalogs and bundles as one File-Based Catalog, byte-identical to opm. */
function registerRender(program: Command): void {
  const render = program
    .command("render")
    .description(
      "Render catalogs and bundles (directories, files, - for stdin, OCI layouts, " +
        "registry images) as one File-Based Catalog, byte-identical to `opm render`",
    )
    .argument(
      "<refs...>",
      "catalog directories or files, - for standard input, registry+v1 bundle directories " +
        "(manifests/ + metadata/), oci:<dir>[:tag] layouts, or catalog/bundle image references",
    )
    .addOption(outputOption(["json", "yaml"], "json"))
    .addOption(migrateLevelOption("name of the last migration to run (default: none)"))
    .option("--migrate", "run all migrations (same as --migrate-level all)")
    .option(
      "--image-ref-template <tmpl>",
      "for bundle directories: Go template for the bundle image ({{.Package}}, " +
        "{{.Name}}, {{.Version}}), like opm's --alpha-image-ref-template",
    )
    .addOption(new Option("--alpha-image-ref-template <tmpl>", "same as --image-ref-template (opm's name)").hideHelp());
  addImageAccessOptions(render).action(
    async (
      refs: string[],
      opts: ImageAccessFlags & {
        output: OutputFormat;
        migrateLevel?: string;
        migrate?: boolean;
        imageRefTemplate?: string;
        alphaImageRefTemplate?: string;
      },
    ) => {
      if (opts.migrate && opts.migrateLevel)
        throw new OpcatError(
          "USAGE_FLAGS",
          "if any flags in the group [migrate migrate-level] are set none " +
            "of the others can be; [migrate migrate-level] were all set",
          { kind: "usage" },
        );
      await (await actions()).renderAction(
        refs,
        {
          output: opts.output,
          migrateLevel: opts.migrate ? "all" : opts.migrateLevel,
          imageRefTemplate: opts.imageRefTemplate ?? opts.alphaImageRefTemplate,
          access: () => imageAccessFrom(opts),
          progress: loadingProgress,
        },
        process.stdout,
      );
    },
  );
}

type ValidateFlags = { output: "text" | "json" | "yaml"; quiet?: boolean };

/** `validate`: every rule of `opm validate`, all problems at once; several catalogs, one verdict each. */
function registerValidate(program: Command): void {
  program
    .command("validate")
    .description(
      "Validate a catalog with every rule of `opm validate`; all problems are reported at once, with file and line",
    )
    .argument(
      "<ref...>",
      "catalog directory, catalog file, or - for standard input; several: one verdict each, as separate runs " +
        "would print, and the worst exit code",
    )
    .addOption(outputOption(["text", "json", "yaml"], "text"))
    .option("-q, --quiet", "print nothing on success (like opm)")
    .action(async (refs: string[], opts: ValidateFlags) => {
      if (refs.length === 1) {
        process.exitCode = await validateOne(refs[0], opts);
        return;
      }
      // a batch (a curator's 300 package directories pay Node's start once): each catalog's verdict is
      // what `opcat validate <ref>` prints, errors included; the exit code is the worst of them
      let worst = 0;
      for (const ref of refs) {
        let code: number;
        try {
          code = await validateOne(ref, opts);
        } catch (e) {
          code = handleError(e, opts.output === "json" ? "json" : "text");
        }
        worst = Math.max(worst, code);
      }
      process.exitCode = worst;
    });
}

/** Validates one catalog and prints its verdict; returns the exit code. */
async function validateOne(ref: string, opts: ValidateFlags): Promise<number> {
  const A = await actions();
  const progress = new Progress(`loading ${ref}`);
  let validated: Awaited<ReturnType<typeof A.validateAction>>;
  try {
    validated = await A.validateAction(ref, {
      onFile: (f, n, bytes) => progress.update(`${n} files, ${formatBytes(bytes)} (${f})`),
    });
  } finally {
    progress.done();
  }
  const { opened: res, problems } = validated;
  const passed = problems.length === 0;
  if (opts.output === "text") {
    if (!passed) {
      reportProblems(problems, "text");
      return exitCodeFor(problemsKind(problems));
    }
    if (!opts.quiet) {
      const c = res.config;
      process.stderr.write(
        `${ref}: valid (${count(c.packages.length, "package")}, ${count(c.channels.length, "channel")}, ` +
          `${count(c.bundles.length, "bundle")}, ${count(c.deprecations.length, "deprecation")}, ` +
          `${count(c.others.length, "other blob")} in ${count(res.files, "file")}, ${formatBytes(res.bytes)})\n`,
      );
    }
    return 0;
  }
  process.stdout.write(await A.validationReport(validated, opts.output));
  return passed ? 0 : exitCodeFor(problemsKind(problems));
}

/** `render-graph`: the upgrade graph as Mermaid. */
function registerRenderGraph(program: Command): void {
  const renderGraph = program
    .command("render-graph")
    .description("Print the upgrade graph of a catalog as a Mermaid flowchart, identical to `opm alpha render-graph`")
    .argument("<ref>", "catalog directory, catalog file, or - for standard input")
    .option(
      "--minimum-edge <bundle>",
      "draw only edges from this bundle's version upwards (restricts output to its package)",
    )
    .option("-p, --package-name <package>", "draw only this package")
    .option("--draw-v0-semantics", "mark bundles and edges that OLM v0 would skip", false);
  addImageAccessOptions(renderGraph).action(
    async (
      ref: string,
      opts: ImageAccessFlags & { minimumEdge?: string; packageName?: string; drawV0Semantics: boolean },
    ) => {
      const { text, warnings } = await (await actions()).renderGraphAction(ref, {
        minimumEdge: opts.minimumEdge,
        packageName: opts.packageName,
        drawV0Semantics: opts.drawV0Semantics,
        access: () => imageAccessFrom(opts),
        progress: loadingProgress,
      });
      for (const w of warnings) process.stderr.write(w.endsWith("\n") ? w : w + "\n");
      process.stdout.write(text);
    },
  );
}

/** `list packages|channels|bundles`. */
function registerList(program: Command): void {
  const list = program
    .command("list")
    .description("List the packages, channels or bundles of a catalog (like `opm alpha list`)");
  const listCmd = (name: ListKind, desc: string): void => {
    const cmd = list
      .command(name)
      .description(desc)
      .argument("<ref>", "catalog directory, catalog file, catalog image, or - for standard input");
    // packages takes the catalog alone (opm's `alpha list packages` takes exactly one argument)
    if (name !== "packages") cmd.argument("[package]", "only this package");
    cmd.addOption(outputOption(["text", "json"], "text"));
    addImageAccessOptions(cmd).action(async (ref: string, ...rest: unknown[]) => {
      const pkg = name === "packages" ? undefined : (rest[0] as string | undefined);
      const opts = cmd.opts<ImageAccessFlags & { output: string }>();
      const output = opts.output as "text" | "json";
      const access = () => imageAccessFrom(opts);
      process.stdout.write(
        await (await actions()).listAction(name, ref, pkg, { output, access, progress: loadingProgress }),
      );
    });
  };
  listCmd("packages", "List packages with display name and default channel");
  listCmd("channels", "List channels with their head bundle");
  listCmd("bundles", "List bundles per channel with their upgrade edges and image");
}

/** `init`: a new olm.package blob. */
function registerInit(program: Command): void {
  program
    .command("init")
    .description("Print an olm.package blob for a new package (like `opm init`)")
    .argument("<packageName>", "the package name")
    .option("-c, --default-channel <channel>", "the package's default channel")
    .option("-d, --description <file>", "file whose contents become the package description (e.g. README.md)")
    .option("-i, --icon <file>", "image file to use as the package icon")
    .addOption(outputOption(["json", "yaml"], "json"))
    .action(
      async (
        name: string,
        opts: { defaultChannel?: string; description?: string; icon?: string; output: OutputFormat },
      ) => {
        process.stdout.write(await (await actions()).initAction(name, opts));
      },
    );
}

/** `migrate`: one file per package into an empty directory. */
function registerMigrate(program: Command): void {
  const migrateCmd = program
    .command("migrate")
    .description("Render a catalog and write it as one file per package into an empty directory (like `opm migrate`)")
    .argument("<ref>", "catalog directory, catalog file, or - for standard input")
    .argument("<outputDir>", "directory to write (must be absent or empty)")
    .addOption(outputOption(["json", "yaml"], "json"))
    .addOption(migrateLevelOption("name of the last migration to run (default: none)"));
  addImageAccessOptions(migrateCmd).action(
    async (ref: string, out: string, opts: ImageAccessFlags & { output: OutputFormat; migrateLevel?: string }) => {
      const files = await (await actions()).migrateAction(ref, out, {
        output: opts.output,
        migrateLevel: opts.migrateLevel,
        access: () => imageAccessFrom(opts),
        progress: loadingProgress,
      });
      process.stderr.write(`wrote ${files.length} file${files.length === 1 ? "" : "s"} to ${out}\n`);
    },
  );
}

export function buildProgram(): Command {
  const program = new Command("opcat")
    .description(
      "Operator catalogs in one tool: load, validate, render and graph File-Based Catalogs (compatible with opm).",
    )
    .version(VERSION, "--version", "print the opcat version")
    .showHelpAfterError("(run with --help for usage)")
    .configureHelp({ sortSubcommands: false })
    .addHelpText(
      "after",
      `
A <ref> is a catalog directory (every file not excluded by .indexignore is read), a JSON/YAML file, or - for stdin.

Exit codes: 0 success, 1 invalid content (catalog problems), 2 usage or I/O error, 3 internal error.
Problems are printed as "file:line: error[CODE]: message"; -o json gives machine-readable reports.

Examples:
  opcat validate catalog/
  opcat render catalog/ -o yaml > index.yaml
  opcat render-graph catalog/ -p my-operator`,
    )
    .exitOverride();

  registerRender(program);
  registerValidate(program);
  registerRenderGraph(program);
  registerList(program);
  registerInit(program);
  registerMigrate(program);

  registerTemplateCommands(program);
  registerImageCommands(program);
  registerServeCommand(program);
  registerResolveCommands(program);

  registerClusterCommands(program);

  program
    .command("completion")
    .description("Print a shell completion script: source <(opcat completion bash)")
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(["bash", "zsh", "fish"]))
    .action((shell: "bash" | "zsh" | "fish") => {
      process.stdout.write(completionScript(program, shell));
    });

  program
    .command("version")
    .description("Print the opcat version")
    .action(() => {
      process.stdout.write(`opcat ${VERSION}\n`);
    });

  return program;
}

/**
 * opm's `alpha` spellings, rewritten to opcat's commands: `alpha list …`, `alpha render-graph …`,
 * `alpha render-template …` / `alpha render-veneer …`, `alpha convert-template basic …`,
 * `alpha bundle build …`.
 */
export function rewriteOpmAlpha(argv: string[]): string[] {
  if (argv[0] !== "alpha") return argv;
  const [, sub, ...rest] = argv;
  switch (sub) {
    case "list":
    case "render-graph":
      return [sub, ...rest];
    case "render-template":
    case "render-veneer":
      return ["template", "render", ...rest];
    case "convert-template":
      return rest[0] === "basic"
        ? ["template", "convert", ...rest.slice(1), "--to", "basic"]
        : ["template", "convert", ...rest];
    case "bundle":
      return ["bundle", ...rest];
    default:
      return argv;
  }
}

/**
 * Runs the CLI with `argv` (without the node and script entries) and returns the exit code. `program` is a
 * fresh {@link buildProgram}, used once: the start-up snapshot builds it while the snapshot is built
 * (scripts/snapshot-entry.mjs), since defining every command is about a fifth of a small command's start.
 */
export async function run(argv: string[], program: Command = buildProgram()): Promise<number> {
  guardOutputStreams();
  argv = rewriteOpmAlpha(argv);
  const errFormat: ErrorFormat =
    argv.some((a, i) => (a === "-o" || a === "--output") && argv[i + 1] === "json") || argv.includes("--output=json")
      ? "json"
      : "text";
  program.configureOutput({
    writeErr: (s) => process.stderr.write(s),
    writeOut: (s) => process.stdout.write(s),
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.exitCode === 0 ||
        e.code === "commander.helpDisplayed" ||
        e.code === "commander.version" ||
        e.code === "commander.help"
      )
        return 0;
      return EXIT_USAGE;
    }
    return handleError(e, errFormat);
  }
}
