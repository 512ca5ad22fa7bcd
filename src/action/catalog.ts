/**
 * Catalog actions, shaped like opm's alpha/action: opening the references a command names (through
 * the one opener, reference.ts's `openReference`), merging them, and the checks every command
 * shares. The CLI, `serve` and templates call these; they print nothing and choose no exit code:
 * failures are OpcatErrors whose `kind` the caller maps.
 */
import { OpcatError, problemsKind, type Problem } from "../errors/index.js";
import type { LoadOptions } from "../fbc/load.js";
import { emptyConfig, mergeConfigs, type DeclarativeConfig } from "../fbc/types.js";
import type { ValidationResult } from "../fbc/validate.js";

/** Validation loads (semver ranges, the model) only when a command validates. */
const validation = () => import("../fbc/validate.js");
import { goQuote } from "../gojson/fmt.js";
import {
  openReference,
  prefixError,
  type OpenedReference,
  type OpenReferenceOptions,
  type RenderRefKind,
} from "./reference.js";

/** Every kind of reference a command can read catalogs from (bundles excluded). */
export const CATALOG_KINDS: readonly RenderRefKind[] = ["catalog-dir", "catalog-file", "stdin", "catalog-image"];

export interface OpenCatalogsOptions extends OpenReferenceOptions {
  /** Progress: called with the reference being read and the loader's running totals. */
  onLoad?: (ref: string, file: string, filesDone: number, bytesDone: number) => void;
  /** opm's `render reference "<ref>": ` before every error (as `render` and templates do). */
  prefixErrors?: boolean;
}

/** Problems found in several references (or an image) name their file below the reference. */
function qualify(ref: string, opened: OpenedReference, many: boolean): Problem[] {
  if (!many && opened.kind !== "catalog-image") return opened.problems;
  for (const p of opened.problems) if (p.loc) p.loc = { ...p.loc, file: joinRef(ref, p.loc.file) };
  return opened.problems;
}

function joinRef(ref: string, file: string): string {
  return file === ref || ref === "-" ? file : `${ref.replace(/\/+$/, "")}/${file}`;
}

/** The first of `problems` as an error carrying them all (kind "invalid", or "io" when a file could not be read). */
export function invalidCatalog(problems: Problem[], prefix = ""): OpcatError {
  return new OpcatError(problems[0].code, prefix + problems[0].message, { problems, kind: problemsKind(problems) });
}

/**
 * Opens every reference in order and merges them into one catalog, as `opm render` does. Problems of
 * all references are collected and thrown together (kind "invalid"); an unreadable reference throws
 * at once.
 */
export async function openCatalogs(
  refs: readonly string[],
  opts: OpenCatalogsOptions = {},
): Promise<DeclarativeConfig> {
  const cfg = emptyConfig();
  const problems: Problem[] = [];
  for (const ref of refs) {
    const onFile: LoadOptions["onFile"] | undefined = opts.onLoad
      ? (f, n, b) => opts.onLoad?.(ref, f, n, b)
      : undefined;
    let opened: OpenedReference;
    try {
      opened = await openReference(ref, { ...opts, onFile });
    } catch (e) {
      throw opts.prefixErrors ? prefixError(e, `render reference ${goQuote(ref)}`) : e;
    }
    problems.push(...qualify(ref, opened, refs.length > 1));
    mergeConfigs(cfg, opened.config);
  }
  if (problems.length > 0) throw invalidCatalog(problems);
  return cfg;
}

/** A catalog opened and validated, with what was read. */
export interface ValidatedCatalog {
  opened: OpenedReference;
  /** Load problems when there are any (validation needs a loaded catalog), else every rule's. */
  problems: Problem[];
  /** The linked model, when the catalog loaded. */
  model?: ValidationResult["model"];
}

/**
 * `opm validate`: opens one local catalog (directory, file or `-`) and checks it with every rule.
 * Problems are returned, not thrown.
 */
export async function validateReference(ref: string, opts: OpenReferenceOptions = {}): Promise<ValidatedCatalog> {
  const opened = await openReference(ref, { local: true, ...opts });
  if (opened.problems.length > 0) return { opened, problems: opened.problems };
  return { opened, ...(await validation()).validateCatalog(opened.config) };
}

/**
 * Opens catalogs and validates the merged result; throws (kind "invalid") on any problem, its message
 * prefixed `<label>: ` when a label is given.
 */
export async function openValidCatalog(
  refs: readonly string[],
  opts: OpenCatalogsOptions = {},
  label?: string,
): Promise<ValidationResult & { config: DeclarativeConfig }> {
  let config: DeclarativeConfig;
  try {
    config = await openCatalogs(refs, { allow: CATALOG_KINDS, ...opts });
  } catch (e) {
    // the catalogs' problems (an unreadable file inside one among them): labelled; a reference that cannot
    // be opened at all is thrown as it is
    const found = e instanceof OpcatError && (e.kind === "invalid" || e.problems.some((p) => p.loc !== undefined));
    if (label && found) throw invalidCatalog(e.problems, `${label}: `);
    throw e;
  }
  const v = (await validation()).validateCatalog(config);
  if (v.problems.length > 0) throw invalidCatalog(v.problems, label ? `${label}: ` : "");
  return { ...v, config };
}
