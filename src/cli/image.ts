/**
 * Image commands: `bundle build`, `catalog build`, `catalog build-from-config`, `generate dockerfile`
 * and `image inspect`, plus the image access flags (`--use-http`, `--skip-tls-verify`, `--ca-file`,
 * `--cache-dir`, `--authfile`, `--registries-conf`) shared with `render`. Flags → src/action/image.ts → print.
 */
import { normalize } from "node:path";
import { type Command, Option } from "commander";
import { OpcatError } from "../errors/index.js";
import type { OutputFormat } from "../fbc/write.js";
import { DEFAULT_OPM_IMAGE, parseExtraLabels } from "../image/dockerfile.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { count, Progress } from "./output.js";

/** The image actions, loaded when an image command runs. */
const actions = () => import("../action/image.js");

function labelsFrom(values: string[] | undefined): Record<string, string> {
  const l = parseExtraLabels(values ?? []);
  if ("error" in l && typeof l.error === "string") throw new OpcatError("USAGE_LABEL", l.error, { kind: "usage" });
  return l as Record<string, string>;
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

interface BuildFlags extends ImageAccessFlags {
  tag: string;
  push?: boolean;
  extraLabels?: string[];
  validate?: boolean;
}

/** `bundle build`. */
function registerBundleCommands(program: Command): void {
  const bundle = program.command("bundle").description("Bundle images");
  addImageAccessOptions(
    bundle
      .command("build")
      .description(
        "Build a registry+v1 bundle image (/manifests, /metadata, annotations.yaml labels) " +
          "into an OCI layout or a registry, reproducibly and without a container engine",
      )
      .argument("<bundle-dir>", "bundle directory with manifests/ and metadata/annotations.yaml")
      .requiredOption("-t, --tag <ref>", "oci:<dir>:<tag> for an OCI layout, or a registry reference with --push")
      .option("--push", "push to the registry reference given with --tag")
      .option("-l, --extra-labels <key=value>", "extra image labels (repeatable, comma-separated)", collect),
    "while pushing the image",
  ).action(async (dir: string, f: BuildFlags) => {
    const labels = labelsFrom(f.extraLabels);
    const where = await (await actions()).buildBundleImageAction(dir, {
      tag: f.tag,
      push: f.push,
      labels,
      pull: () => imageAccessFrom(f, "pushing"),
    });
    process.stdout.write(where + "\n");
  });
}

/** `catalog build` and `catalog build-from-config`. */
function registerCatalogCommands(program: Command): void {
  const catalog = program.command("catalog").description("Catalog images");
  addImageAccessOptions(
    catalog
      .command("build")
      .description(
        "Build a catalog image (the catalog at /configs, label " +
          "operators.operatorframework.io.index.configs.v1=/configs) into an " +
          "OCI layout or a registry, reproducibly and without a container engine",
      )
      .argument("<catalog-dir>", "File-Based Catalog directory")
      .requiredOption("-t, --tag <ref>", "oci:<dir>:<tag> for an OCI layout, or a registry reference with --push")
      .option("--push", "push to the registry reference given with --tag")
      .option("-l, --extra-labels <key=value>", "extra image labels (repeatable, comma-separated)", collect)
      .option("--no-validate", "build without validating the catalog first")
      .option(
        "--base-image <ref>",
        "image to build on, as `opm generate dockerfile` + docker build do: its layers " +
          "and config, ENTRYPOINT /bin/opm, CMD serve /configs --cache-dir=/tmp/cache " +
          "(what OLM v0 runs as a CatalogSource); opcat's own image (`opcat cluster image`): " +
          "`opcat serve /configs` on opm's gRPC port 50051; `scratch` for a content-only image",
        DEFAULT_OPM_IMAGE,
      ),
    "while pulling the base image and pushing the image",
  ).action(async (dir: string, f: BuildFlags & { baseImage: string }) => {
    const labels = labelsFrom(f.extraLabels);
    const where = await (await actions()).buildCatalogImageAction(dir, {
      tag: f.tag,
      push: f.push,
      labels,
      validate: f.validate,
      baseImage: f.baseImage,
      pull: () => imageAccessFrom(f, "pushing"),
    });
    process.stdout.write(where + "\n");
  });

  addImageAccessOptions(
    catalog
      .command("build-from-config")
      .description(
        "Render every reference of a catalog configuration ({name, repo, tag, references: [{name, " +
          "image}]}) into <name>/<reference>/, validate, build the catalog image and push it to <repo>:<tag>",
      )
      .argument("<config>", "catalog configuration file (YAML or JSON)")
      .option(
        "--output-dir <dir>",
        "where to create the catalog directory <name>/ (default: beside the configuration file)",
      )
      .addOption(
        new Option("-o, --output <format>", "format of the rendered files (index.yaml or index.json)")
          .choices(["yaml", "json"])
          .default("yaml"),
      )
      .option("-t, --tag <ref>", "write the image here instead of <repo>:<tag> (e.g. oci:<dir>:<tag>)")
      .option("--push", "push the image (to <repo>:<tag> or the registry reference given with --tag)")
      .option("--no-build", "only render and validate the catalog")
      .option("-l, --extra-labels <key=value>", "extra image labels (repeatable, comma-separated)", collect)
      .option(
        "--base-image <ref>",
        "image to build on (as catalog build: opm's layers, ENTRYPOINT and CMD); `scratch` for a content-only image",
        DEFAULT_OPM_IMAGE,
      ),
  ).action(
    async (
      file: string,
      f: ImageAccessFlags & {
        outputDir?: string;
        output: OutputFormat;
        tag?: string;
        push?: boolean;
        build?: boolean;
        extraLabels?: string[];
        baseImage: string;
      },
    ) => {
      const labels = labelsFrom(f.extraLabels);
      const step = new Progress("build-from-config");
      try {
        const r = await (await actions()).buildFromConfigAction(file, {
          pull: () => imageAccessFrom(f),
          outputDir: f.outputDir,
          format: f.output,
          tag: f.tag,
          push: f.push,
          noBuild: f.build === false,
          labels,
          baseImage: f.baseImage,
          onStep: (m) => step.update(m),
        });
        step.done();
        process.stderr.write(
          `wrote ${count(r.files.length, "file")} to ` +
            `${r.catalogDir} (${count(r.packages, "package")}, ${count(r.bundles, "bundle")})\n`,
        );
        if (r.image) process.stdout.write(r.image + "\n");
      } finally {
        step.done();
      }
    },
  );
}

/** `generate dockerfile`. */
function registerGenerateCommands(program: Command): void {
  const generate = program
    .command("generate")
    .description("Generate artifacts for File-Based Catalogs (like `opm generate`)");
  generate
    .command("dockerfile")
    .description("Write <dir>.Dockerfile next to a catalog directory, identical to `opm generate dockerfile`")
    .argument("<fbcRootDir>", "catalog directory")
    .addOption(new Option("--binary-image <image>", "deprecated: use --base-image").hideHelp())
    .option("-i, --base-image <image>", "image base to use to build catalog", DEFAULT_OPM_IMAGE)
    .option("-b, --builder-image <image>", "image to use as a build stage", DEFAULT_OPM_IMAGE)
    .option(
      "-l, --extra-labels <key=value>",
      "extra labels to include in the generated Dockerfile (key=value; repeatable, comma-separated)",
      collect,
    )
    .action(
      async (
        arg: string,
        f: { binaryImage?: string; baseImage: string; builderImage: string; extraLabels?: string[] },
        cmd: Command,
      ) => {
        const fromDir = normalize(arg).replace(/(.)\/+$/, "$1");
        const baseSet = cmd.getOptionValueSource("baseImage") === "cli";
        const builderSet = cmd.getOptionValueSource("builderImage") === "cli";
        if (f.binaryImage !== undefined && baseSet)
          throw new OpcatError(
            "USAGE_FLAGS",
            "if any flags in the group [binary-image base-image] are set none " +
              "of the others can be; [base-image binary-image] were all set",
            { kind: "usage" },
          );
        const base = f.binaryImage ?? f.baseImage;
        let builder = f.builderImage;
        if (builder === "scratch")
          throw new OpcatError("USAGE_FLAGS", `invalid builder image: "scratch"`, { kind: "usage" });
        if (f.binaryImage !== undefined && !builderSet) builder = base;
        const labels = labelsFrom(f.extraLabels);
        (await actions()).generateDockerfileAction(fromDir, { baseImage: base, builderImage: builder, labels });
      },
    );
}

/** `image inspect`. */
function registerImageInspect(program: Command): void {
  const image = program.command("image").description("Container images");
  addImageAccessOptions(
    image
      .command("inspect")
      .description(
        "Pull an image (or read oci:<dir>[:tag]) into the cache and print its digest, labels and layers as JSON",
      )
      .argument("<ref>", "registry image reference or oci:<dir>[:tag]"),
  ).action(async (ref: string, f: ImageAccessFlags) => {
    const out = await (await actions()).inspectImageAction(ref, () => imageAccessFrom(f));
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  });
}

/** Registers the image commands on the program. */
export function registerImageCommands(program: Command): void {
  registerBundleCommands(program);
  registerCatalogCommands(program);
  registerGenerateCommands(program);
  registerImageInspect(program);
}
