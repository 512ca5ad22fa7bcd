/**
 * Resolver actions: `opcat resolve` (Inputs against named catalogs into a resolveset), `opcat query`
 * (the catalog bundles matching a constraint or CEL rule) and `opcat images` (every image a resolveset
 * or catalog needs). They load the named catalogs (`[name=]ref`, with priorities), read and decode the
 * input files, and call src/resolve. They print nothing and choose no exit code: a resolveset that is
 * not resolvable is returned (its `resolved` says so); failures are OpcatErrors whose `kind` the caller maps.
 *
 * The resolver, the YAML reader and the catalog loader are imported when an action runs, so that
 * importing this module stays cheap.
 */
import { readInputTextSync } from "../fsx/readfile.js";
import { basename } from "node:path";
import { OpcatError } from "../errors/index.js";
import { goErrnoText } from "../gojson/goerrno.js";
import type { CatalogSet, ImageUse, NamedCatalog, QueryMatch, ResolveSet } from "../resolve/index.js";
import type { JsonValue } from "../gojson/value.js";
import { accessOf, type ImageAccess } from "./access.js";

const resolveLib = () => import("../resolve/index.js");

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

/** The catalogs an action reads. */
export interface CatalogSetOptions {
  /** `[name=]<dir|image>` each (`--catalog`); the name defaults to the last path segment. */
  catalogs?: readonly string[];
  /** `name=N` each (`--priority`); higher is preferred, default 0. */
  priorities?: readonly string[];
  /** Image access for catalog images; a function is called once the flags are checked. */
  pull?: ImageAccess;
}

/** Loads and validates every catalog; invalid catalogs fail with kind `invalid`. */
async function loadCatalogSet(o: CatalogSetOptions): Promise<CatalogSet> {
  const refs = (o.catalogs ?? []).map(parseCatalogFlag);
  if (refs.length === 0) throw new OpcatError("USAGE_CATALOG", "at least one --catalog is required", { kind: "usage" });
  const prio = parsePriorities(o.priorities ?? []);
  for (const n of prio.keys())
    if (!refs.some((r) => r.name === n))
      throw new OpcatError(
        "USAGE_PRIORITY",
        `--priority names catalog ${JSON.stringify(n)}, which no --catalog defines`,
        { kind: "usage" },
      );
  const access = await accessOf(o.pull);
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
    const v = await (await import("./catalog.js")).openValidCatalog(
      [r.ref],
      { ...access, allow: ["catalog-dir", "catalog-file", "catalog-image"] },
      `catalog ${r.name}`,
    );
    named.push({ name: r.name, priority: prio.get(r.name) ?? 0, model: v.model, others: v.config.others });
  }
  return new (await resolveLib()).CatalogSet(named);
}

/** A file's text (`-` for standard input); unreadable files fail with kind `usage`. */
function readText(path: string, what: string): string {
  try {
    return readInputTextSync(path === "-" ? 0 : path, { what });
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    throw new OpcatError("IO_ERROR", `read ${what} ${path}: ${goErrnoText(e)}`, { kind: "usage" });
  }
}

export interface ResolveActionOptions extends CatalogSetOptions {
  /** Files of Input, InputClass and Operator documents, YAML or JSON (`-` for standard input). */
  inputs?: readonly string[];
  /** A file with an Installed document (installed operators, optionally the cluster). */
  installed?: string;
  /** The cluster's Kubernetes version (overrides the Installed document's). */
  kubeVersion?: string;
  /** The cluster's OpenShift version (overrides the Installed document's). */
  openshiftVersion?: string;
  /** Include the solver's search trace. */
  trace?: boolean;
}

/** `opcat resolve`: the resolveset of the inputs against the catalogs, resolvable or not. */
export async function resolveAction(o: ResolveActionOptions): Promise<ResolveSet> {
  if (!o.inputs || o.inputs.length === 0)
    throw new OpcatError("USAGE_INPUT", "at least one --input is required", { kind: "usage" });
  const R = await resolveLib();
  const docs = { inputs: [], classes: [], installed: [], errors: [] } as ReturnType<typeof R.parseInputDocuments>;
  for (const f of o.inputs) R.parseInputDocuments(readText(f, "input"), f, docs);
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
  return R.resolve({
    catalogs: set,
    inputs: docs.inputs,
    classes: docs.classes,
    installed: docs.installed,
    cluster,
    trace: o.trace ?? false,
  });
}

/** `opcat query`: the catalog bundles matching an olm.constraint value (JSON) or a CEL rule. */
export async function queryAction(expr: string, o: CatalogSetOptions): Promise<QueryMatch[]> {
  const set = await loadCatalogSet(o);
  const R = await resolveLib();
  try {
    return R.query(set, expr);
  } catch (e) {
    throw new OpcatError("RESOLVE_QUERY_INVALID", `invalid query: ${(e as Error).message}`, { kind: "usage" });
  }
}

export interface ImagesActionOptions extends CatalogSetOptions {
  /** A resolveset file printed by `opcat resolve` (YAML or JSON); used instead of the catalogs. */
  resolveset?: string;
  /** With catalogs: only these packages' bundles and the entries they can use. */
  packages?: readonly string[];
}

/** `opcat images`: every image a resolveset or the catalogs need, for mirroring. */
export async function imagesAction(o: ImagesActionOptions): Promise<ImageUse[]> {
  if (!o.resolveset && !(o.catalogs ?? []).length)
    throw new OpcatError("USAGE_INPUT", "give --resolveset or at least one --catalog", { kind: "usage" });
  const R = await resolveLib();
  if (o.resolveset) {
    // read as resolve reads its input documents (the YAML-or-JSON stream reader), first document
    const Y = await import("../yaml/index.js");
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
    if (o.packages?.length)
      throw new OpcatError("USAGE_INPUT", "--package applies to --catalog, not to --resolveset", {
        kind: "usage",
      });
    return R.resolveSetImages({
      bundles: bundles as ResolveSet["bundles"],
      operands: (operands ?? []) as ResolveSet["operands"],
    });
  }
  return R.catalogImages(await loadCatalogSet(o), { packages: o.packages });
}

/**
 * A resolveset or query matches as `-o json` (indented, a newline after) or `-o yaml` prints them; a
 * resolveset as `-o text` (one line per bundle, failures explained: src/resolve/text.ts).
 */
export async function formatResult(value: unknown, format: "json" | "yaml" | "text"): Promise<string> {
  if (format === "text") return (await resolveLib()).resolveSetText(value as ResolveSet);
  if (format === "json") return JSON.stringify(value, null, 2) + "\n";
  return (await import("../yaml/index.js")).toGoYaml(JSON.parse(JSON.stringify(value)) as JsonValue);
}
