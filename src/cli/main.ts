/**
 * The opcat command line: a thin layer over the library. Every command reads its inputs, calls the
 * library, prints the result on stdout and problems on stderr, and exits 0 (success), 1 (invalid
 * catalog or other invalid content), 2 (usage or I/O error) or 3 (internal error).
 */
import { Argument, Command, CommanderError, Option } from "commander";
import type { ImageRefTemplate } from "../bundle/index.js";
import { OpcatError } from "../errors/index.js";
import { migrationHelpText, validateMigrationLevel } from "../fbc/migrations.js";
import type { ReadOptions } from "../fbc/readfile.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import type { OutputFormat } from "../fbc/write.js";
import type { PullOptions } from "../image/index.js";
import { VERSION } from "../version.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { completionScript } from "./completion.js";
import { registerClusterCommands } from "./cluster.js";
import { registerImageCommands } from "./image.js";
import { registerResolveCommands } from "./resolve.js";
import { registerServeCommand } from "./serve.js";
import { registerTemplateCommands } from "./template.js";
import {
  EXIT_INVALID,
  EXIT_USAGE,
  count,
  formatBytes,
  guardOutputStreams,
  handleError,
  Progress,
  problemToJson,
  reportProblems,
  type ErrorFormat,
} from "./output.js";
import { goErrnoText } from "../gojson/goerrno.js";

/** The largest icon `init -i` reads (catalog icons are small PNG or SVG images, base64 in the package blob). */
const MAX_ICON_BYTES = 1 << 20;

// Each command loads the library it needs when it runs (dynamic imports below), so that starting
// opcat, `--help` and `--version` cost only the command definitions.
const catalogActions = () => import("../action/catalog.js");
const fbcWrite = () => import("../fbc/write.js");
const fbcRender = () => import("../fbc/render.js");
const fbcValidate = () => import("../fbc/validate.js");

function outputOption(formats: string[], def: string): Option {
  return new Option("-o, --output <format>", `output format (${formats.join("|")})`).default(def).argParser((v) => {
    if (!formats.includes(v))
      throw new OpcatError(
        "USAGE_OUTPUT",
        `invalid --output value ${JSON.stringify(v)}, expected (${formats.join("|")})`,
        { kind: "usage" },
      );
    return v;
  });
}

function migrateLevelOption(): Option {
  return new Option(
    "--migrate-level <level>",
    `name of the last migration to run (default: none)${migrationHelpText()}`,
  ).argParser((v) => {
    const err = validateMigrationLevel(v);
    if (err) throw new OpcatError("USAGE_MIGRATE_LEVEL", err, { kind: "usage" });
    return v;
  });
}

/**
 * Opens every reference (catalogs; with `render`'s options also bundles, prefixing errors as opm's
 * render does) with a progress line on a terminal; all problems fail together (exit 1).
 */
async function openWithProgress(
  refs: string[],
  access: PullOptions,
  render?: { imageRefTemplate?: ImageRefTemplate },
): Promise<DeclarativeConfig> {
  const { openCatalogs, CATALOG_KINDS } = await catalogActions();
  const progress = new Progress("loading");
  try {
    return await openCatalogs(refs, {
      ...access,
      ...(render ? { imageRefTemplate: render.imageRefTemplate, prefixErrors: true } : { allow: CATALOG_KINDS }),
      onLoad: (ref, f, n, bytes) => progress.update(`${ref}: ${n} files, ${formatBytes(bytes)} (${f})`),
    });
  } finally {
    progress.done();
  }
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
    .addOption(migrateLevelOption())
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
      const tmplText = opts.imageRefTemplate ?? opts.alphaImageRefTemplate;
      const { compileImageRefTemplate } = await import("../bundle/render.js");
      const imageRefTemplate = tmplText ? compileImageRefTemplate(tmplText) : undefined;
      const cfg = await openWithProgress(refs, await imageAccessFrom(opts), { imageRefTemplate });
      (await fbcRender()).normalizeForRender(cfg, { migrateLevel: opts.migrate ? "all" : opts.migrateLevel });
      await (await fbcWrite()).writeCatalog(cfg, opts.output, process.stdout);
    },
  );

  program
    .command("validate")
    .description(
      "Validate a catalog with every rule of `opm validate`; all problems are reported at once, with file and line",
    )
    .argument("<ref>", "catalog directory, catalog file, or - for standard input")
    .addOption(outputOption(["text", "json", "yaml"], "text"))
    .option("-q, --quiet", "print nothing on success (like opm)")
    .action(async (ref: string, opts: { output: "text" | "json" | "yaml"; quiet?: boolean }) => {
      const { validateReference } = await catalogActions();
      const progress = new Progress(`loading ${ref}`);
      let res: Awaited<ReturnType<typeof validateReference>>["opened"];
      let problems;
      try {
        ({ opened: res, problems } = await validateReference(ref, {
          onFile: (f, n, bytes) => progress.update(`${n} files, ${formatBytes(bytes)} (${f})`),
        }));
      } finally {
        progress.done();
      }
      const passed = problems.length === 0;
      if (opts.output === "text") {
        if (!passed) {
          reportProblems(problems, "text");
          process.exitCode = EXIT_INVALID;
        } else if (!opts.quiet) {
          const c = res.config;
          process.stderr.write(
            `${ref}: valid (${count(c.packages.length, "package")}, ${count(c.channels.length, "channel")}, ` +
              `${count(c.bundles.length, "bundle")}, ${count(c.deprecations.length, "deprecation")}, ` +
              `${count(c.others.length, "other blob")} in ${count(res.files, "file")}, ${formatBytes(res.bytes)})\n`,
          );
        }
        return;
      }
      const report: Record<string, unknown> = { passed };
      if (!passed) report.error = { message: problems.map((p) => p.message).join("\n") };
      report.problems = problems.map(problemToJson);
      report.summary = {
        files: res.files,
        bytes: res.bytes,
        packages: res.config.packages.length,
        channels: res.config.channels.length,
        bundles: res.config.bundles.length,
        problems: problems.length,
      };
      process.stdout.write(
        opts.output === "json"
          ? JSON.stringify(report, null, 2) + "\n"
          : (await import("../yaml/index.js")).toGoYaml(JSON.parse(JSON.stringify(report))) + "\n",
      );
      if (!passed) process.exitCode = EXIT_INVALID;
    });

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
      const cfg = await openWithProgress([ref], await imageAccessFrom(opts));
      if (
        opts.packageName !== undefined &&
        !cfg.packages.some((p) => p.name === opts.packageName) &&
        !cfg.bundles.some((b) => b.package === opts.packageName)
      ) {
        const known = [...new Set(cfg.packages.map((p) => p.name))].sort();
        const list =
          known.length > 10
            ? `${known.slice(0, 10).join(", ")} and ${known.length - 10} more`
            : known.join(", ") || "none";
        throw new OpcatError(
          "GRAPH_UNKNOWN_PACKAGE",
          `package ${JSON.stringify(opts.packageName)} is not in ${ref} (packages: ${list})`,
          { kind: "usage" },
        );
      }
      const { renderMermaid } = await import("../fbc/mermaid.js");
      const { text, warnings } = renderMermaid(cfg, {
        minimumEdge: opts.minimumEdge,
        packageName: opts.packageName,
        drawV0Semantics: opts.drawV0Semantics,
      });
      for (const w of warnings) process.stderr.write(w.endsWith("\n") ? w : w + "\n");
      process.stdout.write(text);
    },
  );

  const list = program
    .command("list")
    .description("List the packages, channels or bundles of a catalog (like `opm alpha list`)");
  const listCmd = (
    name: string,
    desc: string,
    fn: (list: typeof import("../fbc/list.js"), model: import("../fbc/model.js").Model, pkg?: string) => string,
  ): void => {
    const cmd = list
      .command(name)
      .description(desc)
      .argument("<ref>", "catalog directory, catalog file, catalog image, or - for standard input")
      .argument(name === "packages" ? "[unused]" : "[package]", name === "packages" ? "" : "only this package");
    cmd.addOption(outputOption(["text", "json"], "text"));
    addImageAccessOptions(cmd).action(
      async (ref: string, pkg: string | undefined, opts: ImageAccessFlags & { output: string }) => {
        const cfg = await openWithProgress([ref], await imageAccessFrom(opts));
        const v = (await fbcValidate()).validateCatalog(cfg);
        if (v.problems.length > 0) throw (await catalogActions()).invalidCatalog(v.problems);
        const which = name === "packages" ? undefined : pkg;
        const lists = await import("../fbc/list.js");
        if (opts.output === "json")
          process.stdout.write(
            JSON.stringify(lists.listJson(name as "packages" | "channels" | "bundles", v.model, which), null, 2) + "\n",
          );
        else process.stdout.write(fn(lists, v.model, which));
      },
    );
  };
  listCmd("packages", "List packages with display name and default channel", (l, m) => l.listPackages(m));
  listCmd("channels", "List channels with their head bundle", (l, m, p) => l.listChannels(m, p));
  listCmd("bundles", "List bundles per channel with their upgrade edges and image", (l, m, p) => l.listBundles(m, p));

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
        const { readInputFileSync } = await import("../fbc/readfile.js");
        // refused without reading: FIFOs and devices (/dev/zero never ends); an icon is at most 1 MiB
        const read = (f: string, opts: ReadOptions): Buffer => {
          try {
            return readInputFileSync(f, opts);
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
            opts.description !== undefined
              ? read(opts.description, { what: "description" }).toString("utf8")
              : undefined,
          icon: opts.icon !== undefined ? new Uint8Array(read(opts.icon, iconOpts)) : undefined,
        });
        process.stdout.write((await fbcWrite()).formatCatalog({ ...emptyConfig(), packages: [pkg] }, opts.output));
      },
    );

  const migrateCmd = program
    .command("migrate")
    .description("Render a catalog and write it as one file per package into an empty directory (like `opm migrate`)")
    .argument("<ref>", "catalog directory, catalog file, or - for standard input")
    .argument("<outputDir>", "directory to write (must be absent or empty)")
    .addOption(outputOption(["json", "yaml"], "json"))
    .addOption(migrateLevelOption());
  addImageAccessOptions(migrateCmd).action(
    async (ref: string, out: string, opts: ImageAccessFlags & { output: OutputFormat; migrateLevel?: string }) => {
      const { isEmptyOrMissingDir, writeCatalogDirectory } = await fbcWrite();
      if (!isEmptyOrMissingDir(out))
        throw new OpcatError("MIGRATE_OUTPUT_NOT_EMPTY", `output dir ${JSON.stringify(out)} must be empty`, {
          kind: "usage",
        });
      const cfg = await openWithProgress([ref], await imageAccessFrom(opts));
      (await fbcRender()).normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
      const files = writeCatalogDirectory(cfg, out, opts.output);
      process.stderr.write(`wrote ${files.length} file${files.length === 1 ? "" : "s"} to ${out}\n`);
    },
  );

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

/** Runs the CLI with `argv` (without the node and script entries) and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  guardOutputStreams();
  argv = rewriteOpmAlpha(argv);
  const program = buildProgram();
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
