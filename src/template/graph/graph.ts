/**
 * The graph template (`olm.template.graph`, alias `olm.template.goodstuff`;
 * docs/templates.md#graph-template): the "comprehensive template". One document names the package,
 * where its bundles come from (explicit images and/or the tags of a repository, filtered by a regex
 * and a semver range) and one or more channels as ordered lists of bundle names with tombstones and
 * tail edges. The semantics
 * (docs/templates.md#graph-template) guarantee a valid catalog or a precise error naming the field.
 *
 * Channel of a graph with entries E and tombstones T: the live entries L0, L1, … (E without T, in
 * order) become the channel entries; L0 takes the tail edges (`replaces`, `skips`, `skipRange`),
 * every later Lk `replaces` L(k-1) and takes its `skipRanges` value, if any; a tombstone is
 * skipped by the next live entry after it
 * (appended to that entry's skips in list order, after L0's tail-edge skips), tombstones after the
 * last live entry by the last live entry (the head). Tombstones are neither channel entries nor
 * emitted bundles. A bundle is emitted when it is a live entry of at least one graph.
 */
import { OpcatError } from "../../errors/index.js";
import { decodeStdBase64 } from "../../fbc/decode.js";
import { dns1123LabelErrors, validateCatalog } from "../../fbc/validate.js";
import {
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  type Bundle,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
  type JsonValue,
  type Package,
} from "../../fbc/types.js";
import { encodeOrderedCompact, indentCompactJson } from "../../gojson/encode.js";
import { goQuote } from "../../gojson/fmt.js";
import { mapPool } from "../../image/registry.js";
import { SemverPanic, tryParseRange } from "../../semver/index.js";
import { toGoYaml } from "../../yaml/index.js";
import { SCHEMA_GRAPH, SCHEMA_GRAPH_ALIAS } from "../detect.js";
import { readStrictYaml } from "../document.js";
import { discoverTagImages, type TagLister } from "./discover.js";
import type { BundleSource, RenderedBundle } from "../source/source.js";

export {
  catalogTagLister,
  registryTagLister,
  discoverTagImages,
  compileTagRegex,
  type TagLister,
} from "./discover.js";

export { SCHEMA_GRAPH, SCHEMA_GRAPH_ALIAS } from "../detect.js";

/** The first entry's edges to bundles before the graph. */
export interface GraphTailEdges {
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

/** One channel: ordered bundle names, the tombstoned ones among them, and the first entry's tail edges. */
export interface GraphDescription {
  name: string;
  entries: string[];
  tombstones?: string[];
  tailEdges?: GraphTailEdges;
  /** skipRange of live entries, by name (the first live entry's may be given here or as tailEdges.skipRange). */
  skipRanges?: Record<string, string>;
}

/** Where bundles come from: explicit images and/or the tags of `repo` (filtered by `tagRegex` and `semverRange`). */
export interface GraphBundleSources {
  images?: string[];
  repo?: string;
  tagRegex?: string;
  semverRange?: string;
}

export interface GraphPackage {
  name: string;
  defaultChannel?: string;
  description?: string;
  icon?: { base64data: string; mediatype: string };
}

/** A parsed graph template. `graphs` holds `graph-description` (seed form) or the `graphs` list. */
export interface GraphTemplate {
  schema: string;
  package: GraphPackage;
  bundles: GraphBundleSources;
  graphs: GraphDescription[];
  /**
   * True when the document used the single `graph-description` of the first design (docs/templates.md)
   * instead of `graphs`.
   */
  singleGraph?: boolean;
}

export interface RenderGraphOptions {
  /** Lists a repository's tags for `bundles.repo`; else the source's own `listTags`, if it has one. */
  tags?: TagLister;
  /** Images rendered at once (default 8). */
  concurrency?: number;
}

function fieldError(path: string, msg: string): OpcatError {
  return new OpcatError("TEMPLATE_GRAPH_FIELD", `${path}: ${msg}`, { kind: "invalid" });
}
function invalid(path: string, msg: string): OpcatError {
  return new OpcatError("TEMPLATE_GRAPH_INVALID", `${path}: ${msg}`, { kind: "invalid" });
}

type Obj = { [k: string]: JsonValue };

function isObj(v: JsonValue | undefined): v is Obj {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

function kind(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "a mapping" : `a ${typeof v}`;
}

function obj(v: JsonValue | undefined, path: string, allowed: readonly string[]): Obj {
  if (!isObj(v)) throw fieldError(path, `must be a mapping, not ${v === undefined ? "missing" : kind(v)}`);
  for (const k of Object.keys(v))
    if (!allowed.includes(k))
      throw fieldError(`${path}.${k}`, `unknown field (expected one of: ${allowed.join(", ")})`);
  return v;
}

function optString(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw fieldError(`${path}.${key}`, `must be a string, not ${kind(v)}`);
  return v;
}

function reqString(o: Obj, key: string, path: string): string {
  const v = optString(o, key, path);
  if (v === undefined || v === "") throw fieldError(`${path}.${key}`, "is required");
  return v;
}

function optStrings(o: Obj, key: string, path: string): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw fieldError(`${path}.${key}`, `must be a list of strings, not ${kind(v)}`);
  return v.map((s, i) => {
    if (typeof s !== "string") throw fieldError(`${path}.${key}[${i}]`, `must be a string, not ${kind(s)}`);
    if (s === "") throw fieldError(`${path}.${key}[${i}]`, "must not be empty");
    return s;
  });
}

const TOP_FIELDS = ["schema", "package", "bundles", "graph-description", "graphs"];
const PACKAGE_FIELDS = ["name", "defaultChannel", "description", "icon"];
const BUNDLES_FIELDS = ["images", "repo", "tagRegex", "semverRange"];
const GRAPH_FIELDS = ["name", "package", "entries", "tombstones", "tailEdges", "skipRanges"];
const TAIL_FIELDS = ["replaces", "skips", "skipRange"];

function parseGraph(v: JsonValue, path: string, pkg: string): GraphDescription {
  const o = obj(v, path, GRAPH_FIELDS);
  const p = optString(o, "package", path);
  if (p !== undefined && p !== pkg)
    throw invalid(`${path}.package`, `${goQuote(p)} is not the template's package ${goQuote(pkg)}`);
  const g: GraphDescription = { name: reqString(o, "name", path), entries: optStrings(o, "entries", path) ?? [] };
  const tombstones = optStrings(o, "tombstones", path);
  if (tombstones) g.tombstones = tombstones;
  if (o.tailEdges !== undefined && o.tailEdges !== null) {
    const t = obj(o.tailEdges, `${path}.tailEdges`, TAIL_FIELDS);
    const tail: GraphTailEdges = {};
    const r = optString(t, "replaces", `${path}.tailEdges`);
    if (r) tail.replaces = r;
    const s = optStrings(t, "skips", `${path}.tailEdges`);
    if (s) tail.skips = s;
    const sr = optString(t, "skipRange", `${path}.tailEdges`);
    if (sr) tail.skipRange = sr;
    g.tailEdges = tail;
  }
  if (o.skipRanges !== undefined && o.skipRanges !== null) {
    const sp = `${path}.skipRanges`;
    if (!isObj(o.skipRanges))
      throw fieldError(sp, `must be a mapping of entry names to ranges, not ${kind(o.skipRanges)}`);
    const ranges: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.skipRanges)) {
      if (typeof v !== "string" || v === "")
        throw fieldError(`${sp}[${goQuote(k)}]`, v === "" ? "must not be empty" : `must be a string, not ${kind(v)}`);
      ranges[k] = v;
    }
    g.skipRanges = ranges;
  }
  return g;
}

/**
 * Parses a graph template (first YAML/JSON document; duplicate keys and unknown fields are errors,
 * field names are case-sensitive). Only the shape is checked here; checkGraphTemplate checks the
 * rules. Errors: TEMPLATE_DECODE, TEMPLATE_SCHEMA, TEMPLATE_GRAPH_FIELD (`<field path>: <problem>`).
 */
export function parseGraphTemplate(text: string): GraphTemplate {
  const y = readStrictYaml(text);
  if (!y.ok) throw new OpcatError("TEMPLATE_DECODE", `decoding template: ${y.error}`, { kind: "invalid" });
  const top = obj(y.value, "template", TOP_FIELDS);
  const schema = optString(top, "schema", "template") ?? "";
  if (schema !== SCHEMA_GRAPH && schema !== SCHEMA_GRAPH_ALIAS) {
    throw new OpcatError(
      "TEMPLATE_SCHEMA",
      `template has unknown schema (${goQuote(schema)}), should be ${goQuote(SCHEMA_GRAPH)}`,
      { kind: "invalid" },
    );
  }
  const po = obj(top.package, "package", PACKAGE_FIELDS);
  const pkg: GraphPackage = { name: reqString(po, "name", "package") };
  const dc = optString(po, "defaultChannel", "package");
  if (dc) pkg.defaultChannel = dc;
  const desc = optString(po, "description", "package");
  if (desc) pkg.description = desc;
  if (po.icon !== undefined && po.icon !== null) {
    const io = obj(po.icon, "package.icon", ["base64data", "mediatype"]);
    const data = optString(io, "base64data", "package.icon") ?? "";
    try {
      decodeStdBase64(data);
    } catch (e) {
      throw fieldError("package.icon.base64data", (e as Error).message);
    }
    pkg.icon = { base64data: data, mediatype: optString(io, "mediatype", "package.icon") ?? "" };
  }
  const bundles: GraphBundleSources = {};
  if (top.bundles !== undefined && top.bundles !== null) {
    const bo = obj(top.bundles, "bundles", BUNDLES_FIELDS);
    const images = optStrings(bo, "images", "bundles");
    if (images) bundles.images = images;
    for (const k of ["repo", "tagRegex", "semverRange"] as const) {
      const s = optString(bo, k, "bundles");
      if (s) bundles[k] = s;
    }
  }
  const single = top["graph-description"];
  const list = top.graphs;
  const hasSingle = single !== undefined && single !== null;
  const hasList = list !== undefined && list !== null;
  if (hasSingle && hasList)
    throw fieldError("graphs", "use either graph-description (one graph) or graphs (a list), not both");
  let graphs: GraphDescription[];
  if (hasSingle) graphs = [parseGraph(single, "graph-description", pkg.name)];
  else if (hasList) {
    if (!Array.isArray(list)) throw fieldError("graphs", `must be a list of graph descriptions, not ${kind(list)}`);
    graphs = list.map((g, i) => parseGraph(g, `graphs[${i}]`, pkg.name));
  } else graphs = [];
  const t: GraphTemplate = { schema, package: pkg, bundles, graphs };
  if (hasSingle) t.singleGraph = true;
  return t;
}

function graphPath(t: GraphTemplate, i: number): string {
  return t.singleGraph ? "graph-description" : `graphs[${i}]`;
}

function checkSkipRange(r: string, path: string): void {
  let res;
  try {
    res = tryParseRange(r);
  } catch (e) {
    if (e instanceof SemverPanic) throw invalid(path, `invalid skipRange ${goQuote(r)}: ${e.message}`);
    throw e;
  }
  if (res instanceof Error) throw invalid(path, `invalid skipRange ${goQuote(r)}: ${res.message}`);
}

/**
 * Checks the rules that do not need the bundles (TEMPLATE_GRAPH_INVALID, `<field path>: …`):
 * a valid package name; at least one graph; graph names unique; the default channel names a graph
 * (it may be omitted when there is exactly one); entries unique and each tombstone one of its
 * graph's entries, listed once; at least one live entry per graph; tail edges naming no entry of
 * their graph; skipRanges keyed by live entries (the first one's not given twice) and every
 * skipRange parsing.
 */
export function checkGraphTemplate(t: GraphTemplate): void {
  const nameErrs = dns1123LabelErrors(t.package.name);
  if (nameErrs.length > 0)
    throw invalid("package.name", `invalid package name ${goQuote(t.package.name)}: [${nameErrs.join(" ")}]`);
  if (t.graphs.length === 0)
    throw invalid("graphs", "the template describes no graph (channel); add graph-description or graphs");
  const names = new Map<string, number>();
  t.graphs.forEach((g, gi) => {
    const path = graphPath(t, gi);
    const prev = names.get(g.name);
    if (prev !== undefined)
      throw invalid(`${path}.name`, `channel ${goQuote(g.name)} is already described by ${graphPath(t, prev)}`);
    names.set(g.name, gi);
    if (g.entries.length === 0) throw invalid(`${path}.entries`, "a graph needs at least one entry");
    const index = new Map<string, number>();
    g.entries.forEach((e, i) => {
      const j = index.get(e);
      if (j !== undefined) throw invalid(`${path}.entries[${i}]`, `${goQuote(e)} is already listed as entries[${j}]`);
      index.set(e, i);
    });
    const tomb = new Map<string, number>();
    (g.tombstones ?? []).forEach((s, i) => {
      if (!index.has(s)) throw invalid(`${path}.tombstones[${i}]`, `${goQuote(s)} is not one of the graph's entries`);
      const j = tomb.get(s);
      if (j !== undefined)
        throw invalid(`${path}.tombstones[${i}]`, `${goQuote(s)} is already listed as tombstones[${j}]`);
      tomb.set(s, i);
    });
    if (tomb.size === g.entries.length)
      throw invalid(`${path}.tombstones`, "every entry is a tombstone; a channel needs at least one installable entry");
    const tail = g.tailEdges;
    if (tail) {
      const inside = (n: string, p: string): void => {
        if (index.has(n))
          throw invalid(p, `${goQuote(n)} is an entry of the graph; tail edges name bundles before its first entry`);
      };
      if (tail.replaces) inside(tail.replaces, `${path}.tailEdges.replaces`);
      const seen = new Set<string>();
      (tail.skips ?? []).forEach((s, i) => {
        inside(s, `${path}.tailEdges.skips[${i}]`);
        if (seen.has(s)) throw invalid(`${path}.tailEdges.skips[${i}]`, `${goQuote(s)} is listed twice`);
        seen.add(s);
      });
      if (tail.skipRange) checkSkipRange(tail.skipRange, `${path}.tailEdges.skipRange`);
    }
    const firstLive = g.entries.find((e) => !tomb.has(e));
    for (const [k, r] of Object.entries(g.skipRanges ?? {})) {
      const kp = `${path}.skipRanges[${goQuote(k)}]`;
      if (!index.has(k)) throw invalid(kp, `${goQuote(k)} is not one of the graph's entries`);
      if (tomb.has(k)) throw invalid(kp, `${goQuote(k)} is a tombstone; only installable entries have a skipRange`);
      if (k === firstLive && tail?.skipRange)
        throw invalid(
          kp,
          `${goQuote(k)} is the first installable entry, whose skipRange is already given as tailEdges.skipRange`,
        );
      checkSkipRange(r, kp);
    }
  });
  const dc = t.package.defaultChannel;
  if (dc) {
    if (!names.has(dc))
      throw invalid(
        "package.defaultChannel",
        `${goQuote(dc)} is not the name of a graph (channels: ${[...names.keys()].join(", ")})`,
      );
  } else if (t.graphs.length > 1) {
    throw invalid("package.defaultChannel", "is required when the template describes several graphs");
  }
}

/** The channel a graph describes (the template must have passed checkGraphTemplate). */
export function graphChannel(pkg: string, g: GraphDescription): Channel {
  const tomb = new Set(g.tombstones ?? []);
  const ranges = g.skipRanges ?? {};
  const entries: ChannelEntry[] = [];
  let pending: string[] = [];
  for (const name of g.entries) {
    if (tomb.has(name)) {
      pending.push(name);
      continue;
    }
    if (entries.length === 0) {
      const tail = g.tailEdges ?? {};
      entries.push({
        name,
        replaces: tail.replaces ?? "",
        skips: [...(tail.skips ?? []), ...pending],
        skipRange: tail.skipRange || ranges[name] || "",
      });
    } else {
      entries.push({ name, replaces: entries[entries.length - 1].name, skips: pending, skipRange: ranges[name] ?? "" });
    }
    pending = [];
  }
  if (pending.length > 0) entries[entries.length - 1].skips.push(...pending);
  return { schema: SCHEMA_CHANNEL, name: g.name, package: pkg, entries, properties: [] };
}

/** The olm.package blob of the template. */
export function graphPackage(t: GraphTemplate): Package {
  const p: Package = {
    schema: SCHEMA_PACKAGE,
    name: t.package.name,
    defaultChannel: t.package.defaultChannel || t.graphs[0].name,
    description: t.package.description ?? "",
    properties: [],
  };
  if (t.package.icon)
    p.icon = { base64data: decodeStdBase64(t.package.icon.base64data), mediatype: t.package.icon.mediatype };
  return p;
}

function bundleError(msg: string): OpcatError {
  return new OpcatError("TEMPLATE_GRAPH_BUNDLE", msg, { kind: "invalid" });
}

/**
 * Builds the catalog from a checked template and its rendered bundles (`rendered`: image → bundle,
 * in source order). Errors (TEMPLATE_GRAPH_BUNDLE): a bundle of another package; one bundle name
 * rendered from two images; a live entry no image rendered; a rendered bundle that no graph names
 * (as entry, tombstone or tail edge). The result is not validated here.
 */
export function buildGraphCatalog(t: GraphTemplate, rendered: ReadonlyMap<string, Bundle>): DeclarativeConfig {
  const pkg = t.package.name;
  const byName = new Map<string, { b: Bundle; image: string }>();
  for (const [image, b] of rendered) {
    if (b.package !== pkg) {
      throw bundleError(
        `bundle ${goQuote(b.name)} (image ${goQuote(image)}) belongs to package ` +
          `${goQuote(b.package)}, not to the template's package ${goQuote(pkg)}`,
      );
    }
    const prev = byName.get(b.name);
    if (prev)
      throw bundleError(
        `bundle ${goQuote(b.name)} is rendered from two images: ${goQuote(prev.image)} and ${goQuote(image)}`,
      );
    byName.set(b.name, { b, image });
  }
  const live = new Set<string>();
  const named = new Set<string>();
  t.graphs.forEach((g, gi) => {
    const tomb = new Set(g.tombstones ?? []);
    g.entries.forEach((e, i) => {
      named.add(e);
      if (tomb.has(e)) return;
      live.add(e);
      if (!byName.has(e)) {
        throw bundleError(
          `${graphPath(t, gi)}.entries[${i}]: no image renders bundle ${goQuote(e)} ` +
            `(bundles come from bundles.images and the tags of bundles.repo)`,
        );
      }
    });
    if (g.tailEdges?.replaces) named.add(g.tailEdges.replaces);
    for (const s of g.tailEdges?.skips ?? []) named.add(s);
  });
  const bundles: Bundle[] = [];
  for (const [name, { b, image }] of byName) {
    if (!named.has(name)) {
      throw bundleError(
        `bundle ${goQuote(name)} (image ${goQuote(image)}) is not named by any graph's ` +
          `entries, tombstones or tail edges; add it to a graph or remove its image`,
      );
    }
    if (live.has(name)) bundles.push(b);
  }
  return {
    packages: [graphPackage(t)],
    channels: t.graphs.map((g) => graphChannel(pkg, g)),
    bundles,
    deprecations: [],
    others: [],
  };
}

/** The images to render: `bundles.images` then the discovered tags, each once. */
export async function graphImages(t: GraphTemplate, lister: TagLister | undefined): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const i of t.bundles.images ?? []) {
    if (!seen.has(i)) out.push(i);
    seen.add(i);
  }
  if (t.bundles.repo) {
    for (const i of await discoverTagImages(t.bundles, lister)) {
      if (!seen.has(i)) out.push(i);
      seen.add(i);
    }
  } else if (t.bundles.tagRegex || t.bundles.semverRange) {
    throw fieldError("bundles.repo", "is required with bundles.tagRegex and bundles.semverRange");
  }
  return out;
}

function isTagLister(v: unknown): v is TagLister {
  return typeof (v as Partial<TagLister>).listTags === "function";
}

/**
 * Renders a graph template: parse, check, discover tags, render every image through `src`, build
 * the catalog and validate it. Errors: TEMPLATE_DECODE, TEMPLATE_SCHEMA, TEMPLATE_GRAPH_FIELD,
 * TEMPLATE_GRAPH_INVALID, TEMPLATE_GRAPH_TAGS, TEMPLATE_GRAPH_BUNDLE, the source's errors, and
 * TEMPLATE_GRAPH_RESULT_INVALID (`resulting catalog is not valid FBC: …`) when the rendered bundles
 * themselves make the catalog invalid (e.g. two bundles with the same version).
 */
export async function renderGraphTemplate(
  text: string,
  src: BundleSource,
  opts: RenderGraphOptions = {},
): Promise<DeclarativeConfig> {
  const t = parseGraphTemplate(text);
  return renderParsedGraphTemplate(t, src, opts);
}

/** renderGraphTemplate for an already parsed template. */
export async function renderParsedGraphTemplate(
  t: GraphTemplate,
  src: BundleSource,
  opts: RenderGraphOptions = {},
): Promise<DeclarativeConfig> {
  checkGraphTemplate(t);
  const lister = opts.tags ?? (isTagLister(src) ? src : undefined);
  const images = await graphImages(t, lister);
  src.prefetch?.(images);
  const bundles = await mapPool(images, opts.concurrency ?? 8, (i) => src.render(i));
  const rendered = new Map<string, RenderedBundle>();
  images.forEach((img, i) => rendered.set(img, bundles[i]));
  const cfg = buildGraphCatalog(t, rendered);
  const v = validateCatalog(cfg);
  if (v.problems.length > 0) {
    throw new OpcatError(
      "TEMPLATE_GRAPH_RESULT_INVALID",
      `resulting catalog is not valid FBC: ${v.problems[0].message}`,
      { kind: "invalid", problems: v.problems },
    );
  }
  return cfg;
}

/** What addBundleToGraph adds. */
export interface AddBundleToGraph {
  bundleName: string;
  image: string;
  /** The graph (channel) to append to; created (with this bundle as first entry) when absent. */
  channel: string;
  /**
   * Must be the graph's last live entry (what the new entry replaces
   * anyway) or, for a new graph, becomes tailEdges.replaces.
   */
  replaces?: string;
  /** Names that are not entries yet become tombstones right before the new entry; for a new graph, tailEdges.skips. */
  skips?: string[];
  /** The new entry's skipRange (skipRanges; for a new graph, tailEdges.skipRange). */
  skipRange?: string;
}

function addError(msg: string): OpcatError {
  return new OpcatError("TEMPLATE_GRAPH_ADD", msg, { kind: "invalid" });
}

/**
 * Returns a copy of `doc` with the bundle appended to the named graph and its image to
 * `bundles.images` (unless listed). Idempotent: adding a bundle that is already a live entry of
 * the graph with the edges asked for (with its image listed) returns an equal template. Errors
 * (TEMPLATE_GRAPH_ADD): the bundle is a tombstone of the graph, or already an entry with other
 * edges; `replaces` is not the graph's last live entry; a skip names an entry the new entry
 * would not skip.
 */
export function addBundleToGraph(doc: GraphTemplate, add: AddBundleToGraph): GraphTemplate {
  const t: GraphTemplate = structuredClone(doc);
  const images = (t.bundles.images ??= []);
  const addImage = (): void => {
    if (!images.includes(add.image)) images.push(add.image);
  };
  const gi = t.graphs.findIndex((g) => g.name === add.channel);
  if (gi < 0) {
    if (t.singleGraph)
      throw addError(
        `the template describes one graph (graph-description ` +
          `${goQuote(t.graphs[0]?.name ?? "")}); use graphs to add channel ${goQuote(add.channel)}`,
      );
    const tail: GraphTailEdges = {};
    if (add.replaces) tail.replaces = add.replaces;
    if (add.skips && add.skips.length > 0) tail.skips = [...add.skips];
    if (add.skipRange) tail.skipRange = add.skipRange;
    const g: GraphDescription = { name: add.channel, entries: [add.bundleName] };
    if (Object.keys(tail).length > 0) g.tailEdges = tail;
    t.graphs.push(g);
    addImage();
    return t;
  }
  const g = t.graphs[gi];
  const tomb = new Set(g.tombstones ?? []);
  if (g.entries.includes(add.bundleName)) {
    if (tomb.has(add.bundleName))
      throw addError(`bundle ${goQuote(add.bundleName)} is a tombstone of graph ${goQuote(g.name)}`);
    const e = graphChannel(t.package.name, g).entries?.find((x) => x.name === add.bundleName);
    const differs =
      !e ||
      (add.replaces !== undefined && add.replaces !== e.replaces) ||
      (add.skipRange !== undefined && add.skipRange !== e.skipRange) ||
      (add.skips ?? []).some((x) => !e.skips.includes(x));
    if (differs)
      throw addError(
        `bundle ${goQuote(add.bundleName)} is already an entry of graph ${goQuote(g.name)}, ` +
          `with other edges (replaces ${goQuote(e?.replaces ?? "")}, skips ` +
          `[${(e?.skips ?? []).join(", ")}], skipRange ${goQuote(e?.skipRange ?? "")})`,
      );
    addImage();
    return t;
  }
  const lastLive = [...g.entries].reverse().find((e) => !tomb.has(e));
  if (add.replaces && add.replaces !== lastLive) {
    throw addError(
      `bundle ${goQuote(add.bundleName)} cannot replace ${goQuote(add.replaces)}: a new entry of ` +
        `graph ${goQuote(g.name)} replaces its last installable entry ${goQuote(lastLive ?? "")}`,
    );
  }
  const lastLiveIndex = lastLive === undefined ? -1 : g.entries.lastIndexOf(lastLive);
  const trailing = new Set(g.entries.slice(lastLiveIndex + 1));
  const newTombs: string[] = [];
  for (const s of add.skips ?? []) {
    if (trailing.has(s)) continue; // already a tombstone the new entry skips
    if (g.entries.includes(s))
      throw addError(
        `bundle ${goQuote(add.bundleName)} cannot skip ${goQuote(s)}: it is an ` +
          `entry of graph ${goQuote(g.name)} before its last installable entry`,
      );
    if (!newTombs.includes(s)) newTombs.push(s);
  }
  g.entries.push(...newTombs, add.bundleName);
  if (newTombs.length > 0) g.tombstones = [...(g.tombstones ?? []), ...newTombs];
  if (add.skipRange) g.skipRanges = { ...(g.skipRanges ?? {}), [add.bundleName]: add.skipRange };
  addImage();
  return t;
}

/** The template as a plain JSON value, keys in the documented order. */
export function graphTemplateValue(t: GraphTemplate): JsonValue {
  const pkg: Obj = { name: t.package.name };
  if (t.package.defaultChannel) pkg.defaultChannel = t.package.defaultChannel;
  if (t.package.description) pkg.description = t.package.description;
  if (t.package.icon) pkg.icon = { base64data: t.package.icon.base64data, mediatype: t.package.icon.mediatype };
  const bundles: Obj = {};
  if (t.bundles.repo) bundles.repo = t.bundles.repo;
  if (t.bundles.tagRegex) bundles.tagRegex = t.bundles.tagRegex;
  if (t.bundles.semverRange) bundles.semverRange = t.bundles.semverRange;
  if (t.bundles.images && t.bundles.images.length > 0) bundles.images = [...t.bundles.images];
  const graph = (g: GraphDescription): Obj => {
    const o: Obj = { name: g.name, entries: [...g.entries] };
    if (g.tombstones && g.tombstones.length > 0) o.tombstones = [...g.tombstones];
    const tail: Obj = {};
    if (g.tailEdges?.replaces) tail.replaces = g.tailEdges.replaces;
    if (g.tailEdges?.skips && g.tailEdges.skips.length > 0) tail.skips = [...g.tailEdges.skips];
    if (g.tailEdges?.skipRange) tail.skipRange = g.tailEdges.skipRange;
    if (Object.keys(tail).length > 0) o.tailEdges = tail;
    if (g.skipRanges && Object.keys(g.skipRanges).length > 0) o.skipRanges = { ...g.skipRanges };
    return o;
  };
  const out: Obj = { schema: t.schema, package: pkg, bundles };
  if (t.singleGraph && t.graphs.length === 1) out["graph-description"] = graph(t.graphs[0]);
  else out.graphs = t.graphs.map(graph);
  return out;
}

/** Writes a graph template: JSON indented with four spaces, or YAML (`---` + go-yaml style, keys sorted). */
export function formatGraphTemplate(t: GraphTemplate, format: "json" | "yaml"): string {
  const v = graphTemplateValue(t);
  if (format === "json") return indentCompactJson(encodeOrderedCompact(v), "    ") + "\n";
  return "---\n" + toGoYaml(v);
}
