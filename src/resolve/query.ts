/**
 * Resolver queries (the resolver API's queries, docs/cluster.md: a constraint or a CEL rule → matching catalog bundles)
 * and the image list a resolveset or catalog needs.
 */
import { parseConstraint } from "../fbc/constraint.js";
import { operandRefs, supports, type CatalogSet, type Entity } from "./catalog.js";
import { SCHEMA_OPERAND, SCHEMA_RELATED_IMAGES, type OperandEntry } from "./operands.js";
import { PROPERTY_RELATED_IMAGE_BUNDLE } from "../fbc/properties.js";
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
  let found: readonly Entity[];
  if (text.trimStart().startsWith("{")) {
    const p = compileConstraint(parseConstraint(text));
    if (p.error) throw new Error(p.error);
    found = matching(set, p);
  } else {
    const prog = compileCel(text);
    if ("error" in prog) throw new Error(prog.error);
    found = set.entities.filter(prog.test);
  }
  return found.map((e) => ({
    catalog: e.catalog,
    package: e.package,
    name: e.name,
    version: e.versionText,
    image: e.image,
    channels: e.channels.map((c) => c.channel),
  }));
}

/** An image and what needs it. */
export interface ImageUse {
  image: string;
  /**
   * Each use: a bundle's image (`name` is `bundle`) or related image (`name` is the related
   * image's name), or an image of an operand / related-image entry (docs/operands.md: `schema` and
   * `entry` — `<name> <version>` — are set, `bundle` is "" and `package` is the entry's scope).
   */
  uses: { bundle: string; package: string; name: string; schema?: string; entry?: string }[];
}

type Use = ImageUse["uses"][number];

function add(m: Map<string, ImageUse>, image: string, use: Use): void {
  if (!image) return;
  const u = m.get(image) ?? { image, uses: [] };
  if (
    !u.uses.some(
      (x) => x.bundle === use.bundle && x.name === use.name && x.entry === use.entry && x.schema === use.schema,
    )
  )
    u.uses.push(use);
  m.set(image, u);
}

function sorted(m: Map<string, ImageUse>): ImageUse[] {
  return [...m.values()].sort((a, b) => (a.image < b.image ? -1 : a.image > b.image ? 1 : 0));
}

function addEntry(
  m: Map<string, ImageUse>,
  o: {
    schema: string;
    name: string;
    version: string;
    package?: string;
    images?: readonly { name: string; image: string }[];
  },
): void {
  for (const i of o.images ?? [])
    add(m, i.image, {
      bundle: "",
      package: o.package ?? "",
      name: i.name,
      schema: o.schema,
      entry: `${o.name} ${o.version}`,
    });
}

/**
 * Every image a resolveset needs, sorted by image: its bundles' images and relatedImages, and the
 * images of its operand and related-image entries (docs/operands.md).
 */
export function resolveSetImages(rs: Pick<ResolveSet, "bundles"> & { operands?: ResolveSet["operands"] }): ImageUse[] {
  const m = new Map<string, ImageUse>();
  for (const b of rs.bundles) {
    add(m, b.image, { bundle: b.name, package: b.package, name: "bundle" });
    for (const r of b.relatedImages ?? []) add(m, r.image, { bundle: b.name, package: b.package, name: r.name });
  }
  for (const o of rs.operands ?? []) addEntry(m, o);
  return sorted(m);
}

/**
 * Every image the catalogs need, sorted by image: bundle images, relatedImages and the images of
 * every operand and related-image entry. With `packages`, only those packages' bundles and the
 * entries they can use (entries their `olm.operand.supported`, `olm.operand.required` or
 * `olm.relatedImageBundle` ranges match).
 */
export function catalogImages(set: CatalogSet, opts: { packages?: readonly string[] } = {}): ImageUse[] {
  const m = new Map<string, ImageUse>();
  const pkgs = opts.packages && opts.packages.length > 0 ? new Set(opts.packages) : undefined;
  const ents = pkgs ? set.entities.filter((e) => pkgs.has(e.package)) : set.entities;
  for (const e of ents) {
    add(m, e.image, { bundle: e.name, package: e.package, name: "bundle" });
    for (const r of e.relatedImages) add(m, r.image, { bundle: e.name, package: e.package, name: r.name });
  }
  for (const o of set.operandEntries) {
    if (pkgs && !ents.some((e) => usable(e, o))) continue;
    addEntry(m, { schema: o.schema, name: o.name, version: o.versionText, package: o.package, images: o.images });
  }
  return sorted(m);
}

/** True when bundle `e` can use entry `o` (supports it, or requires it through a matching range). */
function usable(e: Entity, o: OperandEntry): boolean {
  if (o.package !== "" && o.package !== e.package) return false;
  const refs = operandRefs(e);
  if (o.schema === SCHEMA_OPERAND && supports(e, o)) return true;
  for (const r of refs.required) {
    const schema = r.type === PROPERTY_RELATED_IMAGE_BUNDLE ? SCHEMA_RELATED_IMAGES : SCHEMA_OPERAND;
    if (schema === o.schema && r.name === o.name && r.range(o.version)) return true;
  }
  return false;
}
