/**
 * What the views derive from a revision, once: the blobs of a schema, package or name (parsed from the
 * revision's JSON lines), and a per-revision memo of package lists, summaries, digests, changes and
 * graphs (dropped with the revision).
 */
import type { CatalogRevision } from "../../serve/revision.js";
import type { UiBlob, UiCatalogChanges, UiCatalogSummary, UiGraph, UiPackageList } from "../uitypes.js";

/** What the UI needs of one revision, computed on first use. */
export interface Derived {
  list?: UiPackageList;
  catalog?: UiCatalogSummary;
  /** Package content hashes (for the diff of two revisions). */
  digests?: Map<string, string>;
  /** The changes against the revision this one replaced. */
  changes?: { from: CatalogRevision; value: UiCatalogChanges };
  /** Graphs (laid out or not) by package, channel and hidden edge kinds; the oldest go first past GRAPH_CACHE. */
  graphs?: Map<string, Promise<UiGraph>>;
}
const derived = new WeakMap<CatalogRevision, Derived>();

export function derivedOf(rev: CatalogRevision): Derived {
  let d = derived.get(rev);
  if (!d) derived.set(rev, (d = {}));
  return d;
}

export function blobs(rev: CatalogRevision, schema: string, pkg: string, name: string): UiBlob[] {
  const ids = rev.query(schema, pkg, name);
  const out: UiBlob[] = [];
  if (!ids) return out;
  for (const i of ids) out.push(JSON.parse(rev.line(i).toString("utf8")) as UiBlob);
  return out;
}

export { props, str } from "../uiblob.js";
