/**
 * `opcat resolve`, `opcat query` and `opcat images`: the resolver (docs/cluster.md) on the command line.
 * Flags → src/action/resolve.ts (resolveAction, queryAction, imagesAction) → print.
 * Exit codes: 0 resolved, 1 not resolvable (or invalid catalog/input content), 2 usage or I/O error.
 */
import type { Command } from "commander";
import type * as ALib from "../action/resolve.js";
import type { ImageUse } from "../resolve/index.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { outputOption } from "./flags.js";
import { loadOnAction } from "./lazy.js";
import { EXIT_INVALID } from "./output.js";

// Loaded when resolve, query or images runs (see loadOnAction below).
let A: typeof ALib;

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

interface CatalogFlags extends ImageAccessFlags {
  catalog?: string[];
  priority?: string[];
}

/** The catalog options of an action: image access is checked when the action reaches the catalogs. */
const catalogOptions = (o: CatalogFlags): ALib.CatalogSetOptions => ({
  catalogs: o.catalog,
  priorities: o.priority,
  pull: () => imageAccessFrom(o),
});

async function print(value: unknown, format: string): Promise<void> {
  process.stdout.write(await A.formatResult(value, format === "json" ? "json" : "yaml"));
}

function printImages(list: ImageUse[], format: string): void {
  if (format === "json") process.stdout.write(JSON.stringify(list, null, 2) + "\n");
  else for (const i of list) process.stdout.write(i.image + "\n");
}

/** Registers `resolve`, `query` and `images` on the program. */
export function registerResolveCommands(program: Command): void {
  const resolveCmd = program.command("resolve");
  const queryCmd = program.command("query");
  const imagesCmd = program.command("images");
  loadOnAction([resolveCmd, queryCmd, imagesCmd], async () => {
    A = await import("../action/resolve.js");
  });
  addImageAccessOptions(
    resolveCmd
      .description(
        "Resolve Inputs (Deppy Input/InputClass/Operator documents) against catalogs and print the resolveset",
      )
      .option(
        "--catalog <[name=]dir|image>",
        "a catalog to resolve from (repeatable); the name defaults to the last path segment",
        collect,
      )
      .option("--priority <name=N>", "catalog priority, higher preferred (repeatable; default 0)", collect)
      .option(
        "--input <file>",
        "Input, InputClass and Operator documents, YAML or JSON (repeatable; - for stdin)",
        collect,
      )
      .option("--installed <file>", "an Installed document listing installed operators (and optionally the cluster)")
      .option("--kube-version <version>", "the cluster's Kubernetes version (checked against minKubeVersion)")
      .option(
        "--openshift-version <version>",
        "the cluster's OpenShift version (checked against olm.maxOpenShiftVersion)",
      )
      .option("--trace", "include the solver's search trace", false)
      .addOption(
        outputOption(
          ["text", "yaml", "json"],
          undefined,
          "output format: text (a line per bundle: package, version, channel, catalog, why; each failure " +
            "explained), or the full resolveset as yaml|json (default: text on a terminal, yaml otherwise)",
        ),
      ),
  ).action(
    async (
      o: CatalogFlags & {
        input?: string[];
        installed?: string;
        kubeVersion?: string;
        openshiftVersion?: string;
        trace: boolean;
        output?: string;
      },
    ) => {
      const rs = await A.resolveAction({
        ...catalogOptions(o),
        inputs: o.input,
        installed: o.installed,
        kubeVersion: o.kubeVersion,
        openshiftVersion: o.openshiftVersion,
        trace: o.trace,
      });
      // a person at a terminal reads the short form; a pipe or file keeps getting the resolveset
      const format = o.output ?? (process.stdout.isTTY ? "text" : "yaml");
      if (format === "text") process.stdout.write(await A.formatResult(rs, "text"));
      else {
        await print(rs, format);
        for (const s of rs.inputs)
          for (const c of s.conditions)
            if (c.status === "True") process.stderr.write(`input ${s.name}: ${c.type}: ${c.message}\n`);
      }
      process.exitCode = rs.resolved ? 0 : EXIT_INVALID;
    },
  );

  addImageAccessOptions(
    queryCmd
      .description("List the catalog bundles matching an olm.constraint value (JSON) or a CEL rule over properties")
      .argument(
        "<constraint-or-cel>",
        'e.g. \'{"gvk":{"group":"etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster"}}\' ' +
          "or 'properties.exists(p, p.type == \"olm.maxOpenShiftVersion\")'",
      )
      .option("--catalog <[name=]dir|image>", "a catalog to query (repeatable)", collect)
      .option("--priority <name=N>", "catalog priority (repeatable)", collect)
      .addOption(outputOption(["text", "json", "yaml"], "text")),
  ).action(async (expr: string, o: CatalogFlags & { output: string }) => {
    const matches = await A.queryAction(expr, catalogOptions(o));
    if (o.output === "text")
      for (const m of matches)
        process.stdout.write(`${m.catalog}\t${m.package}\t${m.name}\t${m.version}\t${m.image}\n`);
    else await print(matches, o.output);
  });

  addImageAccessOptions(
    imagesCmd
      .description(
        "List every image a resolveset or catalog needs (bundle images, relatedImages, " +
          "and the images of olm.operand / olm.relatedimages entries), for mirroring",
      )
      .option("--catalog <[name=]dir|image>", "a catalog whose bundles' images to list (repeatable)", collect)
      .option(
        "--package <name>",
        "with --catalog: only these packages' bundles and the " +
          "operand / related-image entries they can use (repeatable)",
        collect,
      )
      .option("--resolveset <file>", "a resolveset printed by opcat resolve (YAML or JSON)")
      .addOption(outputOption(["text", "json"], "text")),
  ).action(async (o: CatalogFlags & { resolveset?: string; package?: string[]; output: string }) => {
    const images = await A.imagesAction({ ...catalogOptions(o), resolveset: o.resolveset, packages: o.package });
    printImages(images, o.output);
  });
}
