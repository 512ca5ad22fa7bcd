/**
 * The opcat command line: a thin layer over the library. Every command reads its inputs, calls the
 * library, prints the result on stdout and problems on stderr, and exits 0 (success), 1 (invalid
 * catalog or other invalid content), 2 (usage or I/O error) or 3 (internal error).
 */
import { readFileSync } from "node:fs";
import { Argument, Command, CommanderError, Option } from "commander";
import { compileImageRefTemplate, renderBundleDirectory, type ImageRefTemplate } from "../bundle/index.js";
import { goQuote } from "../gojson/fmt.js";
import { OpcatError } from "../fbc/errors.js";
import { loadCatalog, type LoadResult } from "../fbc/load.js";
import { listBundles, listChannels, listJson, listPackages } from "../fbc/list.js";
import { renderMermaid } from "../fbc/mermaid.js";
import { migrationHelpText, validateMigrationLevel } from "../fbc/migrate.js";
import { normalizeForRender } from "../fbc/render.js";
import { initPackage } from "../fbc/init.js";
import { mergeConfigs, emptyConfig, type DeclarativeConfig } from "../fbc/types.js";
import { validateCatalog } from "../fbc/validate.js";
import {
  formatCatalog,
  isEmptyOrMissingDir,
  writeCatalog,
  writeCatalogDirectory,
  type OutputFormat,
} from "../fbc/write.js";
import { VERSION } from "../version.js";
import { registerTemplateCommands } from "./template.js";
import { registerServeCommand } from "./serve.js";
import { registerResolveCommands } from "./resolve.js";
import { registerClusterCommands } from "./cluster.js";
import { completionScript } from "./completion.js";
import { addImageAccessOptions, imageAccessFrom, registerImageCommands, type ImageAccessFlags } from "./image.js";
import { resolveRenderRef, type PullOptions } from "../image/index.js";
import {
  EXIT_INVALID,
  EXIT_USAGE,
  formatBytes,
  handleError,
  Progress,
  problemToJson,
  reportProblems,
  type ErrorFormat,
} from "./output.js";

function outputOption(formats: string[], def: string): Option {
  return new Option("-o, --output <format>", `output format (${formats.join("|")})`).default(def).argParser((v) => {
    if (!formats.includes(v))
      throw new OpcatError(
        "USAGE_OUTPUT",
        `invalid --output value ${JSON.stringify(v)}, expected (${formats.join("|")})`,
        { exitCode: EXIT_USAGE },
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
    if (err) throw new OpcatError("USAGE_MIGRATE_LEVEL", err, { exitCode: EXIT_USAGE });
    return v;
  });
}

/** Loads one catalog reference (directory, file or `-`), with a progress line on a terminal. */
export async function loadWithProgress(ref: string): Promise<LoadResult> {
  const progress = new Progress(`loading ${ref}`);
  try {
    return await loadCatalog(ref, {
      onFile: (f, n, bytes) => progress.update(`${n} files, ${formatBytes(bytes)} (${f})`),
    });
  } finally {
    progress.done();
  }
}

/** Loads every reference and fails (exit 1) with all their problems if any has one. */
async function loadAll(refs: string[], access?: PullOptions): Promise<DeclarativeConfig> {
  const cfg = emptyConfig();
  const problems = [];
  for (const ref of refs) {
    // Catalog images are pulled and unpacked first; bundles are refused as opm refuses them here.
    const path = access
      ? (await resolveRenderRef(ref, { ...access, allow: ["catalog-dir", "catalog-file", "stdin", "catalog-image"] }))
          .path
      : ref;
    const res = await loadWithProgress(path);
    if (refs.length > 1) for (const p of res.problems) if (p.loc) p.loc = { ...p.loc, file: joinRef(ref, p.loc.file) };
    problems.push(...res.problems);
    mergeConfigs(cfg, res.config);
  }
  if (problems.length > 0)
    throw new OpcatError(problems[0].code, problems[0].message, { problems, exitCode: EXIT_INVALID });
  return cfg;
}

/**
 * `render`'s inputs in argument order: bundle directories (opm's classification: `manifests/` and
 * `metadata/` sub-directories) are rendered as bundles, everything else is loaded as a catalog.
 */
async function renderRefs(
  refs: string[],
  imageRefTemplate: ImageRefTemplate | undefined,
  access: PullOptions,
): Promise<DeclarativeConfig> {
  const cfg = emptyConfig();
  const problems = [];
  for (const ref of refs) {
    const prefix = `render reference ${goQuote(ref)}: `;
    try {
      const r = await resolveRenderRef(ref, access);
      if (r.kind === "bundle-dir" || r.kind === "bundle-image") {
        mergeConfigs(
          cfg,
          renderBundleDirectory(r.path, r.kind === "bundle-image" ? { image: r.image } : { imageRefTemplate }),
        );
        continue;
      }
      const res = await loadWithProgress(r.path);
      if (refs.length > 1 || r.kind === "catalog-image")
        for (const p of res.problems) if (p.loc) p.loc = { ...p.loc, file: joinRef(ref, p.loc.file) };
      problems.push(...res.problems);
      mergeConfigs(cfg, res.config);
    } catch (e) {
      if (!(e instanceof OpcatError)) throw e;
      const ps = e.problems.map((p) => (p.severity === "error" ? { ...p, message: prefix + p.message } : p));
      throw new OpcatError(e.code, prefix + e.message, { problems: ps, exitCode: e.exitCode, cause: e });
    }
  }
  if (problems.length > 0)
    throw new OpcatError(problems[0].code, problems[0].message, { problems, exitCode: EXIT_INVALID });
  return cfg;
}

function joinRef(ref: string, file: string): string {
  return file === ref || ref === "-" ? file : `${ref.replace(/\/+$/, "")}/${file}`;
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
      "Render catalogs and bundles (directories, files, - for stdin, OCI layouts, registry images) as one File-Based Catalog, byte-identical to `opm render`",
    )
    .argument(
      "<refs...>",
      "catalog directories or files, - for standard input, registry+v1 bundle directories (manifests/ + metadata/), oci:<dir>[:tag] layouts, or catalog/bundle image references",
    )
    .addOption(outputOption(["json", "yaml"], "json"))
    .addOption(migrateLevelOption())
    .option("--migrate", "run all migrations (same as --migrate-level all)")
    .option(
      "--image-ref-template <tmpl>",
      "for bundle directories: Go template for the bundle image ({{.Package}}, {{.Name}}, {{.Version}}), like opm's --alpha-image-ref-template",
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
          "if any flags in the group [migrate migrate-level] are set none of the others can be; [migrate migrate-level] were all set",
          { exitCode: EXIT_USAGE },
        );
      const tmplText = opts.imageRefTemplate ?? opts.alphaImageRefTemplate;
      const imageRefTemplate = tmplText ? compileImageRefTemplate(tmplText) : undefined;
      const cfg = await renderRefs(refs, imageRefTemplate, imageAccessFrom(opts));
      normalizeForRender(cfg, { migrateLevel: opts.migrate ? "all" : opts.migrateLevel });
      await writeCatalog(cfg, opts.output, process.stdout);
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
      const res = await loadWithProgress(ref);
      const problems = [...res.problems];
      if (res.problems.length === 0) problems.push(...validateCatalog(res.config).problems);
      const passed = problems.length === 0;
      if (opts.output === "text") {
        if (!passed) {
          reportProblems(problems, "text");
          process.exitCode = EXIT_INVALID;
        } else if (!opts.quiet) {
          const c = res.config;
          process.stderr.write(
            `${ref}: valid (${c.packages.length} packages, ${c.channels.length} channels, ${c.bundles.length} bundles, ${c.deprecations.length} deprecations, ${c.others.length} other blobs in ${res.files} files, ${formatBytes(res.bytes)})\n`,
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
      const cfg = await loadAll([ref], imageAccessFrom(opts));
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
          { exitCode: EXIT_USAGE },
        );
      }
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
    fn: (model: ReturnType<typeof validateCatalog>["model"], pkg?: string) => string,
  ): void => {
    const cmd = list
      .command(name)
      .description(desc)
      .argument("<ref>", "catalog directory, catalog file, catalog image, or - for standard input")
      .argument(name === "packages" ? "[unused]" : "[package]", name === "packages" ? "" : "only this package");
    cmd.addOption(outputOption(["text", "json"], "text"));
    addImageAccessOptions(cmd).action(
      async (ref: string, pkg: string | undefined, opts: ImageAccessFlags & { output: string }) => {
        const cfg = await loadAll([ref], imageAccessFrom(opts));
        const v = validateCatalog(cfg);
        if (v.problems.length > 0)
          throw new OpcatError(v.problems[0].code, v.problems[0].message, {
            problems: v.problems,
            exitCode: EXIT_INVALID,
          });
        const which = name === "packages" ? undefined : pkg;
        if (opts.output === "json")
          process.stdout.write(
            JSON.stringify(listJson(name as "packages" | "channels" | "bundles", v.model, which), null, 2) + "\n",
          );
        else process.stdout.write(fn(v.model, which));
      },
    );
  };
  listCmd("packages", "List packages with display name and default channel", (m) => listPackages(m));
  listCmd("channels", "List channels with their head bundle", (m, p) => listChannels(m, p));
  listCmd("bundles", "List bundles per channel with their upgrade edges and image", (m, p) => listBundles(m, p));

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
        const read = (f: string): Buffer => {
          try {
            return readFileSync(f);
          } catch (e) {
            throw new OpcatError(
              "IO_ERROR",
              `open ${f}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (e as Error).message}`,
              { exitCode: EXIT_USAGE },
            );
          }
        };
        const pkg = initPackage({
          name,
          defaultChannel: opts.defaultChannel,
          description: opts.description !== undefined ? read(opts.description).toString("utf8") : undefined,
          icon: opts.icon !== undefined ? new Uint8Array(read(opts.icon)) : undefined,
        });
        process.stdout.write(formatCatalog({ ...emptyConfig(), packages: [pkg] }, opts.output));
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
      if (!isEmptyOrMissingDir(out))
        throw new OpcatError("MIGRATE_OUTPUT_NOT_EMPTY", `output dir ${JSON.stringify(out)} must be empty`, {
          exitCode: EXIT_USAGE,
        });
      const cfg = await loadAll([ref], imageAccessFrom(opts));
      normalizeForRender(cfg, { migrateLevel: opts.migrateLevel });
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
