/**
 * `opcat resolve`, `opcat query` and `opcat images`: seed 002's resolver API on the command line.
 * Exit codes: 0 resolved, 1 not resolvable (or invalid catalog/input content), 2 usage or I/O error.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { type Command, Option } from "commander";
import { OpcatError } from "../fbc/errors.js";
import type { ImageUse, NamedCatalog, ResolveSet } from "../resolve/index.js";
import type * as RLib from "../resolve/index.js";
import type { JsonValue } from "../yaml/index.js";
import type * as YLib from "../yaml/index.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { loadOnAction } from "./lazy.js";
import { EXIT_INVALID } from "./output.js";
import { goErrnoText } from "../gojson/goerrno.js";

// Loaded when resolve, query or images runs (see loadOnAction below).
let R: typeof RLib;
let Y: typeof YLib;

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

function formatOption(formats: string[], def: string): Option {
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

/** `name=ref` or `ref` (the name is then the last path segment of ref). */
export function parseCatalogFlag(arg: string): { name: string; ref: string } {
  const m = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)=(.+)$/.exec(arg);
  if (m && !arg.startsWith("/") && !arg.startsWith(".")) return { name: m[1], ref: m[3] };
  const trimmed = arg.replace(/\/+$/, "");
  const name = basename(trimmed.replace(/[@:][^/]*$/, "")) || trimmed;
  return { name, ref: arg };
}

/** `name=N` priorities. */
export function parsePriorities(args: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const a of args) {
    const m = /^(.+)=(-?\d+)$/.exec(a);
    if (!m)
      throw new OpcatError("USAGE_PRIORITY", `invalid --priority ${JSON.stringify(a)}: expected name=<integer>`, {
        kind: "usage",
      });
    out.set(m[1], Number(m[2]));
  }
  return out;
}

interface CatalogFlags extends ImageAccessFlags {
  catalog?: string[];
  priority?: string[];
}

/** Loads and validates every `--catalog`; invalid catalogs fail with exit code 1. */
async function loadCatalogSet(o: CatalogFlags): Promise<InstanceType<typeof R.CatalogSet>> {
  const refs = (o.catalog ?? []).map(parseCatalogFlag);
  if (refs.length === 0) throw new OpcatError("USAGE_CATALOG", "at least one --catalog is required", { kind: "usage" });
  const prio = parsePriorities(o.priority ?? []);
  for (const n of prio.keys())
    if (!refs.some((r) => r.name === n))
      throw new OpcatError(
        "USAGE_PRIORITY",
        `--priority names catalog ${JSON.stringify(n)}, which no --catalog defines`,
        { kind: "usage" },
      );
  const access = await imageAccessFrom(o);
  const seen = new Set<string>();
  const named: NamedCatalog[] = [];
  for (const r of refs) {
    if (seen.has(r.name))
      throw new OpcatError(
        "USAGE_CATALOG",
        `two catalogs are named ${JSON.stringify(r.name)}; name them with name=<dir|image>`,
        { kind: "usage" },
      );
    seen.add(r.name);
    const v = await (await import("../action/catalog.js")).openValidCatalog(
      [r.ref],
      { ...access, allow: ["catalog-dir", "catalog-file", "catalog-image"] },
      `catalog ${r.name}`,
    );
    named.push({ name: r.name, priority: prio.get(r.name) ?? 0, model: v.model, others: v.config.others });
  }
  return new R.CatalogSet(named);
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (e) {
    throw new OpcatError("IO_ERROR", `read ${what} ${path}: ${goErrnoText(e)}`, { kind: "usage" });
  }
}

function print(value: unknown, format: string): void {
  process.stdout.write(
    format === "json"
      ? JSON.stringify(value, null, 2) + "\n"
      : Y.toGoYaml(JSON.parse(JSON.stringify(value)) as JsonValue),
  );
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
    [R, Y] = await Promise.all([import("../resolve/index.js"), import("../yaml/index.js")]);
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
      .addOption(formatOption(["yaml", "json"], "yaml")),
  ).action(
    async (
      o: CatalogFlags & {
        input?: string[];
        installed?: string;
        kubeVersion?: string;
        openshiftVersion?: string;
        trace: boolean;
        output: string;
      },
    ) => {
      if (!o.input || o.input.length === 0)
        throw new OpcatError("USAGE_INPUT", "at least one --input is required", { kind: "usage" });
      const docs = { inputs: [], classes: [], installed: [], errors: [] } as ReturnType<typeof R.parseInputDocuments>;
      for (const f of o.input) R.parseInputDocuments(readText(f, "input"), f, docs);
      if (o.installed) R.parseInputDocuments(readText(o.installed, "installed operators"), o.installed, docs);
      if (docs.errors.length > 0)
        throw new OpcatError("RESOLVE_INPUT_INVALID", docs.errors.join("\n"), { kind: "invalid" });
      if (docs.inputs.length === 0)
        throw new OpcatError("RESOLVE_INPUT_INVALID", "the input files define no Input or Operator", {
          kind: "invalid",
        });
      const set = await loadCatalogSet(o);
      const cluster = { ...docs.cluster };
      if (o.kubeVersion) cluster.kubernetesVersion = o.kubeVersion;
      if (o.openshiftVersion) cluster.openshiftVersion = o.openshiftVersion;
      const rs: ResolveSet = R.resolve({
        catalogs: set,
        inputs: docs.inputs,
        classes: docs.classes,
        installed: docs.installed,
        cluster,
        trace: o.trace,
      });
      print(rs, o.output);
      for (const s of rs.inputs)
        for (const c of s.conditions)
          if (c.status === "True") process.stderr.write(`input ${s.name}: ${c.type}: ${c.message}\n`);
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
      .addOption(formatOption(["text", "json", "yaml"], "text")),
  ).action(async (expr: string, o: CatalogFlags & { output: string }) => {
    const set = await loadCatalogSet(o);
    let matches;
    try {
      matches = R.query(set, expr);
    } catch (e) {
      throw new OpcatError("RESOLVE_QUERY_INVALID", `invalid query: ${(e as Error).message}`, { kind: "usage" });
    }
    if (o.output === "text")
      for (const m of matches)
        process.stdout.write(`${m.catalog}\t${m.package}\t${m.name}\t${m.version}\t${m.image}\n`);
    else print(matches, o.output);
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
      .addOption(formatOption(["text", "json"], "text")),
  ).action(async (o: CatalogFlags & { resolveset?: string; package?: string[]; output: string }) => {
    if (!o.resolveset && !(o.catalog ?? []).length)
      throw new OpcatError("USAGE_INPUT", "give --resolveset or at least one --catalog", { kind: "usage" });
    if (o.resolveset) {
      // read as resolve reads its --input documents (the YAML-or-JSON stream reader), first document
      const first = Y.firstStreamItem(readText(o.resolveset, "resolveset"));
      if (first?.kind === "error")
        throw new OpcatError("RESOLVE_INPUT_INVALID", `${o.resolveset}: ${first.message.split("\n")[0]}`, {
          kind: "invalid",
        });
      const rs: unknown = first?.value;
      const bundles = (rs as { bundles?: unknown } | null | undefined)?.bundles;
      if (!Array.isArray(bundles))
        throw new OpcatError("RESOLVE_INPUT_INVALID", `${o.resolveset}: not a resolveset (no bundles list)`, {
          kind: "invalid",
        });
      const operands = (rs as { operands?: unknown }).operands;
      if (operands !== undefined && operands !== null && !Array.isArray(operands))
        throw new OpcatError("RESOLVE_INPUT_INVALID", `${o.resolveset}: operands must be a list`, {
          kind: "invalid",
        });
      if (o.package?.length)
        throw new OpcatError("USAGE_INPUT", "--package applies to --catalog, not to --resolveset", {
          kind: "usage",
        });
      printImages(
        R.resolveSetImages({
          bundles: bundles as ResolveSet["bundles"],
          operands: (operands ?? []) as ResolveSet["operands"],
        }),
        o.output,
      );
      return;
    }
    printImages(R.catalogImages(await loadCatalogSet(o), { packages: o.package }), o.output);
  });
}
