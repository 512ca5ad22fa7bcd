/**
 * `opcat template convert <fbc> --to basic|graph`: an existing catalog as a basic template (like
 * `opm alpha convert-template basic`) or as a graph template, either of which renders back to it.
 */
import { type Command, Option } from "commander";
import { OpcatError } from "../errors/index.js";
import type { ConvertTarget } from "../template/convert.js";
import { outputOption } from "./flags.js";

const TARGETS = ["basic", "graph"];
const OUTPUTS = ["json", "yaml"];

interface ConvertOpts {
  to: ConvertTarget;
  output: "json" | "yaml";
  package?: string;
}

/** Adds `convert` under the `template` command. */
export function registerConvertCommand(tmpl: Command): void {
  tmpl
    .command("convert")
    .description(
      "Convert a catalog (directory, file or - for standard input) " +
        "into a basic or graph template that renders back to it",
    )
    .argument("<fbc>", "catalog directory, file, or - for standard input")
    .addOption(
      new Option("--to <type>", `template type (${TARGETS.join("|")})`).makeOptionMandatory().argParser((v) => {
        if (!TARGETS.includes(v))
          throw new OpcatError("USAGE_FLAGS", `invalid --to value ${JSON.stringify(v)}, expected (basic|graph)`, {
            kind: "usage",
          });
        return v;
      }),
    )
    .addOption(outputOption(OUTPUTS, "json"))
    .option(
      "--package <name>",
      "convert only this package (a graph template holds one package: required when the catalog has several)",
    )
    .addHelpText(
      "after",
      `
Examples:
  opcat template convert catalog/ --to basic -o yaml > basic-template.yaml
  opcat template convert catalog.yaml --to graph --package my-operator -o yaml > graph-template.yaml
  opcat template render graph-template.yaml --reuse catalog.yaml --reuse-tags   # renders the same catalog

--to basic keeps every blob and reduces each olm.bundle to its image (like opm alpha convert-template basic).
--to graph refuses packages whose channels a graph template cannot express (branching replaces, several
chain starts, entries skipping entries, deprecations, custom blobs) with an error saying why.`,
    )
    .action(async (fbc: string, opts: ConvertOpts) => {
      const { convertTemplateAction } = await import("../action/template.js");
      process.stdout.write(
        await convertTemplateAction(fbc, { to: opts.to, output: opts.output, package: opts.package }),
      );
    });
}
