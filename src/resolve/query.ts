/**
 * Resolver queries (seed 002's "Queries": a constraint or a CEL rule → matching catalog bundles)
 * and the image list a resolveset or catalog needs.
 */
import { parseConstraint } from "../fbc/constraint.js";
import type { CatalogSet, Entity } from "./catalog.js";
import { compileCel, compileConstraint, matching } from "./predicates.js";
import type { ResolveSet } from "./resolver.js";

/** One bundle answering a query. */
export interface QueryMatch {
  catalog: string;
  package: string;
  name: string;
  version: string;
  image: string;
  channels: string[];
}

/**
 * Runs a query: text starting with `{` is an `olm.constraint` value (gvk, package, cel, all, any,
 * not); anything else is a CEL rule over `properties`. Throws an Error with the parse or compile
 * message when the query is invalid.
 */
export function query(set: CatalogSet, text: string): QueryMatch[] {
  let found: Entity[];
  if (text.trimStart().startsWith("{")) {
    const p = compileConstraint(parseConstraint(text));
    if (p.error) throw new Error(p.error);
    found = matching(set, p);
  } else {
    const prog = compileCel(text);
    if ("error" in prog) throw new Error(prog.error);
    found = set.entities.filter(prog.test);
  }
  return found.map((e) => ({ catalog: e.catalog, package: e.package, name: e.name, version: e.versionText, image: e.image, channels: e.channels.map((c) => c.channel) }));
}

/** An image and what needs it. */
export interface ImageUse {
  image: string;
  /** `bundle` or the related image's name. */
  uses: { bundle: string; package: string; name: string }[];
}

function add(m: Map<string, ImageUse>, image: string, bundle: string, pkg: string, name: string): void {
  if (!image) return;
  const u = m.get(image) ?? { image, uses: [] };
  if (!u.uses.some((x) => x.bundle === bundle && x.name === name)) u.uses.push({ bundle, package: pkg, name });
  m.set(image, u);
}

/** Every image the bundles of a resolveset need (bundle images and relatedImages), sorted by image. */
export function resolveSetImages(rs: Pick<ResolveSet, "bundles">): ImageUse[] {
  const m = new Map<string, ImageUse>();
  for (const b of rs.bundles) {
    add(m, b.image, b.name, b.package, "bundle");
    for (const r of b.relatedImages ?? []) add(m, r.image, b.name, b.package, r.name);
  }
  return [...m.values()].sort((a, b) => (a.image < b.image ? -1 : a.image > b.image ? 1 : 0));
}

/** Every image the bundles of the catalogs need, sorted by image. */
export function catalogImages(set: CatalogSet): ImageUse[] {
  const m = new Map<string, ImageUse>();
  for (const e of set.entities) {
    add(m, e.image, e.name, e.package, "bundle");
    for (const r of e.relatedImages) add(m, r.image, e.name, e.package, r.name);
  }
  return [...m.values()].sort((a, b) => (a.image < b.image ? -1 : a.image > b.image ? 1 : 0));
}
