/**
 * `opcat template add-bundle`: publishes a bundle into a catalog template (basic, semver, graph or
 * raw FBC), idempotently, with an outcome per template and an exit code per outcome. A thin layer over
 * src/action/template.ts (addBundleAction), which composes the bundle source for src/template/addbundle.
 */
import type { Command } from "commander";
import { OpcatError } from "../errors/index.js";
import type * as ALib from "../action/template.js";
import type { AddBundleOutcome, AddBundlePlan, ReleaseConfigReport } from "../template/addbundle/addbundle.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { outputOption } from "./flags.js";
import { loadOnAction } from "./lazy.js";
import { problemToJson } from "./output.js";

interface AddOpts extends ImageAccessFlags {
  image: string;
  channel: string[];
  replaces?: string;
  skips: string[];
  skipRange?: string;
  releaseConfig?: string;
  templatesDir?: string;
  name?: string;
  reuse: string[];
  reuseTags?: boolean;
  pull?: boolean;
  dryRun?: boolean;
  output: "text" | "json";
}

/**
 * Process exit code per outcome: 0 when the bundle is in the template afterwards (added or
 * already present; the JSON report tells which), 1 invalid input, 4 unreachable image,
 * 5 conflict. (2 stays the usage/I/O code and 3 opcat's internal-error code.)
 */
export const ADD_BUNDLE_EXIT_CODES: Readonly<Record<AddBundleOutcome, number>> = Object.freeze({
  added: 0,
  "already-present": 0,
  "invalid-input": 1,
  "unreachable-image": 4,
  conflict: 5,
});

// Loaded when add-bundle runs (see loadOnAction below).
let A: typeof ALib;

const collect = (v: string, prev: string[]): string[] => [...prev, v];

function usage(message: string): OpcatError {
  return new OpcatError("USAGE_FLAGS", message, { kind: "usage" });
}

function planJson(p: AddBundlePlan, dryRun: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = { outcome: p.outcome, template: p.template, image: p.image };
  if (p.kind !== undefined) o.kind = p.kind;
  if (p.bundle !== undefined) o.bundle = p.bundle;
  o.changes = p.changes;
  o.problems = p.problems.map(problemToJson);
  o.validation = p.validation;
  o.written = p.written;
  if (dryRun && p.diff !== undefined) o.diff = p.diff;
  return o;
}

const LABEL: Record<AddBundlePlan["outcome"], string> = {
  added: "added",
  "already-present": "already present",
  conflict: "conflict",
  "invalid-input": "invalid input",
  "unreachable-image": "unreachable image",
};

function printPlan(p: AddBundlePlan, dryRun: boolean): void {
  const how =
    p.validation === "rendered"
      ? "; validated by rendering"
      : p.validation === "structural"
        ? "; checked structurally only"
        : "";
  const what =
    p.outcome === "added"
      ? dryRun
        ? " (dry run: not written)"
        : p.written
          ? ""
          : " (not written)"
      : p.outcome === "already-present"
        ? " (nothing changed)"
        : "";
  process.stdout.write(`${LABEL[p.outcome]}: ${p.template}${p.kind ? ` (${p.kind}${how})` : ""}${what}\n`);
  for (const c of p.changes) if (p.outcome === "added") process.stdout.write(`  + ${c.description}\n`);
  for (const pr of p.problems)
    process.stderr.write(
      `${p.template}: ${pr.severity}[${pr.code}]: ${pr.message}${pr.hint ? `\n  hint: ${pr.hint}` : ""}\n`,
    );
  if (dryRun && p.diff) process.stdout.write(p.diff);
}

async function runAdd(file: string | undefined, opts: AddOpts): Promise<void> {
  if (opts.releaseConfig !== undefined) {
    if (file !== undefined) throw usage("give either a template file or --release-config, not both");
    if (
      opts.channel.length > 0 ||
      opts.replaces !== undefined ||
      opts.skips.length > 0 ||
      opts.skipRange !== undefined
    ) {
      throw usage("--channel, --replaces, --skips and --skip-range come from the release config with --release-config");
    }
  } else {
    if (file === undefined) throw usage("a template file (or --release-config) is required");
    if (opts.templatesDir !== undefined) throw usage("--templates-dir needs --release-config");
    if (opts.channel.length === 0) throw usage("at least one --channel is required");
  }
  if (opts.reuseTags && opts.reuse.length === 0) throw usage("--reuse-tags needs --reuse");
  const dryRun = opts.dryRun === true;
  // Images come from the --reuse catalogs, then (with --pull) from registries; the image-access flags
  // are checked once the catalogs are open.
  const source: ALib.AddBundleSourceOptions = {
    reuse: opts.reuse,
    reuseTags: opts.reuseTags,
    pull: opts.pull ? () => imageAccessFrom(opts) : undefined,
    dryRun,
  };
  if (opts.releaseConfig !== undefined) {
    const r: ReleaseConfigReport = await A.addBundleFromReleaseConfigAction(opts.releaseConfig, opts.image, {
      ...source,
      name: opts.name,
      templatesDir: opts.templatesDir,
    });
    if (opts.output === "json") {
      const o = {
        outcome: r.outcome,
        releaseConfig: r.releaseConfig,
        image: r.image,
        templates: r.templates.map((p) => planJson(p, dryRun)),
        problems: r.problems.map(problemToJson),
        written: r.written,
      };
      process.stdout.write(JSON.stringify(o, null, 2) + "\n");
    } else {
      for (const pr of r.problems)
        process.stderr.write(`${r.releaseConfig}: ${pr.severity}[${pr.code}]: ${pr.message}\n`);
      for (const p of r.templates) printPlan(p, dryRun);
      if (!dryRun && !r.written && r.templates.some((p) => p.outcome === "added"))
        process.stdout.write("nothing was written: a template failed\n");
    }
    process.exitCode = ADD_BUNDLE_EXIT_CODES[r.outcome];
    return;
  }
  const plan = await A.addBundleAction(
    file as string,
    {
      image: opts.image,
      channels: opts.channel,
      replaces: opts.replaces,
      skips: opts.skips,
      skipRange: opts.skipRange,
      name: opts.name,
    },
    source,
  );
  if (opts.output === "json") process.stdout.write(JSON.stringify(planJson(plan, dryRun), null, 2) + "\n");
  else printPlan(plan, dryRun);
  process.exitCode = ADD_BUNDLE_EXIT_CODES[plan.outcome];
}

/** Adds `add-bundle` to the `template` command. */
export function registerAddBundleCommand(tmpl: Command): void {
  const cmd = tmpl.command("add-bundle");
  loadOnAction([cmd], async () => {
    A = await import("../action/template.js");
  });
  cmd
    .description(
      "Publish a bundle into a catalog template (basic, semver, graph or raw FBC) " +
        "idempotently: adds what is missing, changes nothing when it is all there",
    )
    .argument("[template-file]", "the template to edit in place (YAML or JSON); omit with --release-config")
    .requiredOption("--image <ref>", "the bundle image reference to add")
    .option(
      "--channel <name>",
      "a channel to add the bundle to (repeatable); semver templates: Candidate, Fast, Stable (any letter case)",
      collect,
      [],
    )
    .option(
      "--replaces <bundle>",
      "basic/FBC: the bundle the new channel entry replaces (graph: must be the graph's head)",
    )
    .option("--skips <bundle>", "basic/FBC: a bundle the new channel entry skips (repeatable)", collect, [])
    .option("--skip-range <range>", "basic/FBC: the new channel entry's skipRange")
    .option(
      "--release-config <file>",
      "apply a community release-config.yaml: every template it lists, with its channels and edges",
    )
    .option(
      "--templates-dir <dir>",
      "with --release-config: the templates directory (default: ../catalog-templates from the release config)",
    )
    .option(
      "--name <bundle-name>",
      "the bundle's name, when its image is not rendered (basic templates need it for the channel entries)",
    )
    .option(
      "--reuse <rendered-fbc>",
      "render the bundle image (and validate the result) from this already-rendered catalog (repeatable)",
      collect,
      [],
    )
    .option("--reuse-tags", "with --reuse, also answer tag references", false)
    .option("--pull", "pull and render bundle images (after --reuse); without it nothing is pulled", false)
    .option("--dry-run", "print the outcome and the diff; write nothing", false)
    .addOption(outputOption(["text", "json"], "text", "report format (text|json)"))
    .addHelpText(
      "after",
      `
What is added:
  basic template   {schema: olm.bundle, image} at the end of entries, and {name, replaces?, skips?, skipRange?}
                   at the end of each named channel (a missing channel is created, as the community pipeline does)
  semver template  {image} at the end of each named archetype's bundles (created when missing)
  raw FBC          the rendered olm.bundle blob at the end of the stream, and channel entries as for basic
  graph template   the bundle's name at the end of the named graph's entries (it replaces the graph's head;
                   --skips not in the graph become tombstones before it, --skip-range goes to skipRanges;
                   a missing graph is created), and the image in bundles.images unless listed or discovered
Comments and formatting are kept; the edited template is rendered and validated before it is written
(atomically); when its images cannot be rendered only its structure is checked (the report says so).
Images are rendered from --reuse catalogs and, with --pull, pulled; nothing is pulled otherwise.
The tags of a graph template's bundles.repo are listed from the registry with --pull, else from the
--reuse catalogs' images.

Outcomes and exit codes:
  added              0   the template was changed (or would be, with --dry-run)
  already-present    0   everything was already there; nothing was written
  invalid-input      1   the template, release config or request is not usable
  (usage error)      2   bad command-line arguments
  unreachable-image  4   the bundle image could not be rendered and the edit needs it
  conflict           5   the bundle is there with other edges, a replaces target is unknown,
                         another image carries the bundle's name or version, or the result would not validate
With several templates (--release-config) the exit code is the worst outcome's, and nothing is
written unless every template is added or already present.

Examples:
  opcat template add-bundle basic.yaml --image quay.io/acme/op-bundle@sha256:… --channel stable \\
      --replaces op.v1.0.0 --reuse catalog/ -o json
  opcat template add-bundle semver.yaml --image quay.io/acme/op-bundle:v1.1.0 --channel Fast --channel Stable
  opcat template add-bundle --release-config operators/op/1.1.0/release-config.yaml --image … ` +
        "--reuse catalog/ --reuse-tags",
    )
    .action(async (file: string | undefined, opts: AddOpts) => {
      await runAdd(file, opts);
    });
  addImageAccessOptions(cmd);
}
