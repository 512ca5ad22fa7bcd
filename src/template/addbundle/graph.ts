/**
 * `add-bundle` for the graph template (`olm.template.graph`, alias `olm.template.goodstuff`): the
 * text-editing counterpart of {@link addBundleToGraph} (docs/templates.md, "Publishing a bundle").
 *
 * Per `--channel`, the graph of that name gets the bundle's name appended to its `entries` (the new
 * entry replaces the graph's head, its last live entry); a missing graph is created in `graphs`.
 * `--replaces` must name the head; `--skips` naming no entry become tombstones right before the
 * new entry; `--skip-range` goes to the graph's `skipRanges`. In a new graph the edges become its
 * `tailEdges`. The image is appended to `bundles.images` unless listed there or discovered from
 * `bundles.repo` (its tag passes `tagRegex` and `semverRange`).
 *
 * Stricter than addBundleToGraph where the chain is positional: the bundle is already present only
 * as the graph's head; as an earlier entry or a tombstone it is a conflict. A name that is already a
 * live entry of any graph is a conflict too when the image is neither listed nor discovered
 * (another image carries it).
 */
import { isMap, isScalar, isSeq, type Node, type Pair, type YAMLMap, type YAMLSeq } from "../../yaml/edit.js";
import { OpcatError } from "../../errors/index.js";
import { goQuote } from "../../gojson/fmt.js";
import { SemverPanic, tryParseRange, tryParseTolerant } from "../../semver/index.js";
import { findKey, pointerToken, type EditValue, type SourceDoc } from "./edit.js";
import type { AddBundleContext, AddBundleKind } from "./registry.js";
import { SCHEMA_GRAPH, SCHEMA_GRAPH_ALIAS } from "../detect.js";
import {
  checkGraphTemplate,
  compileTagRegex,
  graphChannel,
  parseGraphTemplate,
  renderGraphTemplate,
  type GraphBundleSources,
  type GraphDescription,
  type GraphTemplate,
} from "../graph/graph.js";

/** A tag, as the reference grammar allows it. */
const TAG = /^[\w][\w.-]{0,127}$/;

/**
 * The tag of `image` when it is `<repo>:<tag>` with `repo` spelled as written (discovery yields
 * `<repo>:<tag>` as written, so another spelling of the same repository is another image).
 */
export function tagInRepo(repo: string, image: string): string | undefined {
  if (repo === "" || !image.startsWith(repo + ":")) return undefined;
  const tag = image.slice(repo.length + 1);
  return TAG.test(tag) ? tag : undefined;
}

/**
 * Whether `image` is one `bundles.repo` discovery would yield:
 * `<repo>:<tag>` with a tag passing tagRegex and semverRange.
 */
export function discoveredImage(bundles: GraphBundleSources, image: string): boolean {
  const repo = bundles.repo;
  const tag = repo ? tagInRepo(repo, image) : undefined;
  if (tag === undefined) return false;
  try {
    if (bundles.tagRegex && !compileTagRegex(bundles.tagRegex).test(tag)) return false;
    if (bundles.semverRange) {
      const range = tryParseRange(bundles.semverRange);
      const v = tryParseTolerant(tag);
      if (range instanceof Error || v instanceof Error || !range(v)) return false;
    }
  } catch (e) {
    // A bad regex or range: not discovered (rendering reports it).
    if (e instanceof SemverPanic || e instanceof OpcatError) return false;
    throw e;
  }
  return true;
}

function isNull(n: unknown): boolean {
  return n === null || n === undefined || (isScalar(n) && (n.value === null || n.value === ""));
}

function keyName(p: Pair<unknown, unknown>): string {
  return isScalar(p.key) ? String(p.key.value) : String(p.key);
}

/** Sets `key` of `map` to `value` (a missing or null value), or calls `existing` with the collection already there. */
function addOrExtend(
  ctx: AddBundleContext,
  sd: SourceDoc,
  map: YAMLMap<unknown, unknown>,
  pointer: string,
  key: string,
  value: EditValue,
  description: string,
  existing: (node: Node, pointer: string) => void,
): void {
  const p = findKey(map, key);
  if (p === undefined) {
    ctx.edits.addToMap(sd, map, key, value);
    ctx.change(`${pointer}/${pointerToken(key)}`, value, description);
  } else if (isNull(p.value)) {
    ctx.edits.replaceNullValue(sd, map, p, value);
    ctx.change(`${pointer}/${pointerToken(keyName(p))}`, value, description);
  } else existing(p.value as Node, `${pointer}/${pointerToken(keyName(p))}`);
}

function describeEdges(replaces: string, skips: readonly string[], skipRange: string): string {
  const parts: string[] = [];
  if (replaces) parts.push(`replaces ${goQuote(replaces)}`);
  if (skips.length > 0) parts.push(`skips [${skips.map(goQuote).join(", ")}]`);
  if (skipRange) parts.push(`skipRange ${goQuote(skipRange)}`);
  return parts.length > 0 ? parts.join(", ") : "no edges";
}

/** The edits of one existing graph, planned first and applied in a safe order. */
interface GraphEdit {
  sd: SourceDoc;
  node: YAMLMap<unknown, unknown>;
  pointer: string;
  graph: GraphDescription;
  tombstones: string[];
}

/** Plans one existing graph; returns its edit, or undefined when nothing is to be added (or on failure). */
function planExisting(
  ctx: AddBundleContext,
  t: GraphTemplate,
  g: GraphDescription,
  name: string,
  where: { sd: SourceDoc; node: YAMLMap<unknown, unknown>; pointer: string },
): GraphEdit | undefined {
  const req = ctx.request;
  const tomb = new Set(g.tombstones ?? []);
  let headIndex = -1;
  for (let i = g.entries.length - 1; i >= 0; i--) {
    if (!tomb.has(g.entries[i])) {
      headIndex = i;
      break;
    }
  }
  const head = g.entries[headIndex];
  const skips = [...new Set(req.skips ?? [])];
  const idx = g.entries.indexOf(name);
  if (idx >= 0) {
    if (tomb.has(name)) {
      ctx.fail(
        "conflict",
        "TEMPLATE_ADD_GRAPH_POSITION",
        `bundle ${goQuote(name)} is a tombstone of graph ${goQuote(g.name)}`,
        "a pulled release is not published again; remove it from tombstones by hand if that is meant",
      );
      return undefined;
    }
    if (idx !== headIndex) {
      ctx.fail(
        "conflict",
        "TEMPLATE_ADD_GRAPH_POSITION",
        `bundle ${goQuote(name)} is already an entry of graph ${goQuote(g.name)}, but not its head ` +
          `${goQuote(head)}: the graph is one replaces chain in list ` +
          `order, and the bundle cannot be added again at its end`,
        "publish a newer bundle instead, or edit the graph's entries by hand",
      );
      return undefined;
    }
    const e = graphChannel(t.package.name, g).entries?.find((x) => x.name === name);
    const have = e ?? { replaces: "", skips: [] as string[], skipRange: "" };
    if (
      (req.replaces && req.replaces !== have.replaces) ||
      (req.skipRange && req.skipRange !== have.skipRange) ||
      skips.some((s) => !have.skips.includes(s))
    ) {
      ctx.fail(
        "conflict",
        "TEMPLATE_ADD_EDGE_CONFLICT",
        `graph ${goQuote(g.name)} already has ${goQuote(name)} as its head with ` +
          `${describeEdges(have.replaces, have.skips, have.skipRange)}; requested ` +
          `${describeEdges(req.replaces ?? "", skips, req.skipRange ?? "")}`,
        "edit the graph by hand, or publish with the edges it already has",
      );
    }
    return undefined;
  }
  if (req.replaces && req.replaces !== head) {
    ctx.fail(
      "conflict",
      "TEMPLATE_ADD_GRAPH_REPLACES",
      `${goQuote(name)} cannot replace ${goQuote(req.replaces)} in graph ` +
        `${goQuote(g.name)}: a new entry replaces the graph's head ${goQuote(head)}`,
      `omit --replaces, or give --replaces ${head}`,
    );
    return undefined;
  }
  const trailing = new Set(g.entries.slice(headIndex + 1));
  const tail = new Set([...(g.tailEdges?.replaces ? [g.tailEdges.replaces] : []), ...(g.tailEdges?.skips ?? [])]);
  const tombstones: string[] = [];
  let ok = true;
  for (const s of skips) {
    if (trailing.has(s)) continue; // a tombstone after the head: the new entry skips it already
    if (s === name) {
      ctx.fail("invalid-input", "TEMPLATE_ADD_REQUEST", `${goQuote(name)} cannot skip itself`);
      ok = false;
    } else if (g.entries.includes(s)) {
      const why = tomb.has(s)
        ? "a tombstone an earlier entry skips"
        : "an installable entry of the chain: skipping it would break the chain";
      ctx.fail(
        "conflict",
        "TEMPLATE_ADD_GRAPH_SKIPS",
        `${goQuote(name)} cannot skip ${goQuote(s)} in graph ${goQuote(g.name)}: it is ${why}`,
        "skip only bundles that are not entries of the graph",
      );
      ok = false;
    } else if (tail.has(s)) {
      ctx.fail(
        "conflict",
        "TEMPLATE_ADD_GRAPH_SKIPS",
        `${goQuote(name)} cannot skip ${goQuote(s)} in graph ${goQuote(g.name)}: it is named by the graph's tailEdges`,
      );
      ok = false;
    } else tombstones.push(s);
  }
  return ok ? { ...where, graph: g, tombstones } : undefined;
}

/**
 * Applies an existing graph's edits: nested collections first, then
 * new keys of the graph (same insertion point, right order).
 */
function applyExisting(ctx: AddBundleContext, ge: GraphEdit, name: string): void {
  const { sd, node, pointer, graph } = ge;
  const req = ctx.request;
  const entries = findKey(node, "entries")?.value as YAMLSeq<unknown>;
  const entriesPtr = `${pointer}/${pointerToken(keyName(findKey(node, "entries") as Pair<unknown, unknown>))}`;
  const desc =
    `added ${goQuote(name)} to graph ${goQuote(graph.name)} (replaces its ` +
    `head${ge.tombstones.length > 0 ? `, skips [${ge.tombstones.map(goQuote).join(", ")}]` : ""}` +
    `${req.skipRange ? `, skipRange ${goQuote(req.skipRange)}` : ""})`;
  for (const s of ge.tombstones) {
    ctx.edits.appendToSeq(sd, entries, s);
    ctx.change(
      `${entriesPtr}/-`,
      s,
      `added tombstone ${goQuote(s)} to graph ${goQuote(graph.name)}, skipped by ${goQuote(name)}`,
    );
  }
  ctx.edits.appendToSeq(sd, entries, name);
  ctx.change(`${entriesPtr}/-`, name, desc);
  // Nested collections before new keys of the graph mapping: they may share an insertion point.
  const late: (() => void)[] = [];
  const extend = (
    key: string,
    value: EditValue,
    description: string,
    existing: (n: Node, ptr: string) => void,
  ): void => {
    const p = findKey(node, key);
    if (p !== undefined && !isNull(p.value)) existing(p.value as Node, `${pointer}/${pointerToken(keyName(p))}`);
    else late.push(() => addOrExtend(ctx, sd, node, pointer, key, value, description, () => undefined));
  };
  if (ge.tombstones.length > 0) {
    const d = `tombstoned [${ge.tombstones.map(goQuote).join(", ")}] in graph ${goQuote(graph.name)}`;
    extend("tombstones", [...ge.tombstones], d, (n, ptr) => {
      for (const s of ge.tombstones) {
        ctx.edits.appendToSeq(sd, n as YAMLSeq<unknown>, s);
        ctx.change(`${ptr}/-`, s, d);
      }
    });
  }
  if (req.skipRange) {
    const range = req.skipRange;
    const d = `skipRange ${goQuote(range)} of ${goQuote(name)} in graph ${goQuote(graph.name)}`;
    extend("skipRanges", { [name]: range }, d, (n, ptr) => {
      ctx.edits.addToMap(sd, n as YAMLMap<unknown, unknown>, name, range);
      ctx.change(`${ptr}/${pointerToken(name)}`, range, d);
    });
  }
  for (const f of late) f();
}

/** A new graph's value, keys in the documented order. */
function newGraph(channel: string, name: string, req: AddBundleContext["request"]): { [key: string]: EditValue } {
  const g: { [key: string]: EditValue } = { name: channel, entries: [name] };
  const tail: { [key: string]: EditValue } = {};
  if (req.replaces) tail.replaces = req.replaces;
  const skips = [...new Set(req.skips ?? [])];
  if (skips.length > 0) tail.skips = skips;
  if (req.skipRange) tail.skipRange = req.skipRange;
  if (Object.keys(tail).length > 0) g.tailEdges = tail;
  return g;
}

/** The graph template (`olm.template.graph`, `olm.template.goodstuff`). */
export const GRAPH_KIND: AddBundleKind = {
  name: "graph",
  matches: (schema) => schema === SCHEMA_GRAPH || schema === SCHEMA_GRAPH_ALIAS,
  needs: () => "name",
  check(text: string): void {
    checkGraphTemplate(parseGraphTemplate(text));
  },
  // Tags of bundles.repo are listed by the source's own listTags (add-bundle's source forwards the caller's).
  render: (text, source) => renderGraphTemplate(text, source),
  plan(ctx: AddBundleContext): void {
    const name = ctx.bundleName;
    if (name === undefined) {
      ctx.fail(
        "unreachable-image",
        "TEMPLATE_ADD_UNREACHABLE",
        "the bundle's name is needed for the graph's entries; render the image or give --name",
      );
      return;
    }
    const sd = ctx.file.docs[0];
    const root = sd.doc.contents;
    if (!isMap(root)) {
      ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", "the template is not a mapping");
      return;
    }
    const t = parseGraphTemplate(ctx.file.text);
    const req = ctx.request;
    if (ctx.bundle && ctx.bundle.package !== t.package.name) {
      ctx.fail(
        "invalid-input",
        "TEMPLATE_ADD_GRAPH_PACKAGE",
        `bundle ${goQuote(name)} (image ${goQuote(req.image)}) belongs to package ` +
          `${goQuote(ctx.bundle.package)}, not to the template's package ${goQuote(t.package.name)}`,
      );
      return;
    }
    if (req.replaces === name) {
      ctx.fail("invalid-input", "TEMPLATE_ADD_REQUEST", `${goQuote(name)} cannot replace itself`);
      return;
    }
    // A live entry of the template already renders from some listed or discovered image; another image
    // carrying its name would render it twice (caught here too when the images cannot be rendered).
    const img = req.image;
    const imageKnown = (t.bundles.images ?? []).includes(img) || discoveredImage(t.bundles, img);
    if (!imageKnown) {
      const holder = t.graphs.find((g) => g.entries.includes(name) && !(g.tombstones ?? []).includes(name));
      if (holder) {
        ctx.fail(
          "conflict",
          "TEMPLATE_ADD_BUNDLE_CONFLICT",
          `bundle ${goQuote(name)} is already in the template (an entry of graph ` +
            `${goQuote(holder.name)}), but image ${goQuote(img)} is neither in ` +
            `bundles.images nor discovered from bundles.repo: another image carries it`,
          "publish the bundle with the image the template has, or replace that image by hand",
        );
        return;
      }
    }
    // Where each graph's mapping is.
    const graphsPair = t.singleGraph ? findKey(root, "graph-description") : findKey(root, "graphs");
    if (!graphsPair) {
      ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", "the graph template has no graphs");
      return;
    }
    const gKey = pointerToken(keyName(graphsPair));
    const nodes: YAMLMap<unknown, unknown>[] = t.singleGraph
      ? [graphsPair.value as YAMLMap<unknown, unknown>]
      : ((graphsPair.value as YAMLSeq<unknown>).items as YAMLMap<unknown, unknown>[]);
    const pointerOf = (i: number): string => (t.singleGraph ? `/${gKey}` : `/${gKey}/${i}`);

    const existing: GraphEdit[] = [];
    const created: { [key: string]: EditValue }[] = [];
    for (const ch of [...new Set(req.channels)]) {
      const gi = t.graphs.findIndex((g) => g.name === ch);
      if (gi < 0) {
        if (t.singleGraph) {
          ctx.fail(
            "invalid-input",
            "TEMPLATE_ADD_STRUCTURE",
            `the template describes one graph (graph-description ` +
              `${goQuote(t.graphs[0].name)}); channel ${goQuote(ch)} needs a graphs list`,
            "turn graph-description into graphs: [ … ] to add channels",
          );
          continue;
        }
        if ((req.skips ?? []).includes(name)) {
          ctx.fail("invalid-input", "TEMPLATE_ADD_REQUEST", `${goQuote(name)} cannot skip itself`);
          continue;
        }
        created.push(newGraph(ch, name, req));
        continue;
      }
      const ge = planExisting(ctx, t, t.graphs[gi], name, { sd, node: nodes[gi], pointer: pointerOf(gi) });
      if (ge) existing.push(ge);
    }
    // Order matters where edits share an insertion point: inside graphs, new graphs, then bundles.
    for (const ge of existing) applyExisting(ctx, ge, name);
    for (const g of created) {
      ctx.edits.appendToSeq(sd, graphsPair.value as YAMLSeq<unknown>, g);
      const skipped = g.tailEdges
        ? ` (tail edges: ${describeEdges(req.replaces ?? "", [...new Set(req.skips ?? [])], req.skipRange ?? "")})`
        : "";
      ctx.change(`/${gKey}/-`, g, `created graph ${goQuote(g.name as string)} with ${goQuote(name)}${skipped}`);
    }
    if ((t.bundles.images ?? []).includes(img)) return;
    if (discoveredImage(t.bundles, img)) {
      ctx.warn(
        "TEMPLATE_ADD_GRAPH_DISCOVERED",
        `image ${goQuote(img)} is discovered from bundles.repo (its tag ` +
          `passes tagRegex and semverRange): not added to bundles.images`,
      );
      return;
    }
    const desc = `added bundle image ${goQuote(img)}`;
    addOrExtend(ctx, sd, root, "", "bundles", { images: [img] }, desc, (bundles, bptr) => {
      if (!isMap(bundles)) {
        ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", "bundles is not a mapping");
        return;
      }
      addOrExtend(ctx, sd, bundles, bptr, "images", [img], desc, (images, iptr) => {
        if (!isSeq(images)) {
          ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", "bundles.images is not a list");
          return;
        }
        ctx.edits.appendToSeq(sd, images as YAMLSeq<unknown>, img);
        ctx.change(`${iptr}/-`, img, desc);
      });
    });
  },
};
