/**
 * The upgrade graph page: a package's graph (all channels or one) with replaces, skips and skipRange
 * edges as opm's render-graph draws them, laid out by the server (graphlayout.ts) when asked, the
 * union with the previous revision's graph (compare=previous), and the diff of a rendered package
 * against the served one. Graphs are computed once per revision.
 */
import { SemverError, SemverPanic, tryParseRange, tryParseVersion, type Version } from "../../semver/index.js";
import type { CatalogRevision } from "../../serve/revision.js";
import { HttpError, sendJson } from "../http.js";
import type { UiBlob, UiGraph, UiGraphDiff, UiGraphEdge, UiGraphNode, UiPackageDetail } from "../uitypes.js";
import { noPackage, servedRevision, type UiContext, type UiRequest } from "./context.js";
import { blobs, derivedOf, props, str } from "./derived.js";
import { packageDetail } from "./package.js";

const GRAPH_CACHE = 256;
const EDGE_KINDS = new Set<UiGraphEdge["kind"]>(["replaces", "skips", "skipRange"]);

/** A graph of a revision, computed once (a failure is not kept); the oldest go first past GRAPH_CACHE. */
function cachedGraph(rev: CatalogRevision, key: string, make: () => Promise<UiGraph>): Promise<UiGraph> {
  const cache = (derivedOf(rev).graphs ??= new Map());
  let p = cache.get(key);
  if (!p) {
    p = make();
    if (cache.size >= GRAPH_CACHE) cache.delete(cache.keys().next().value as string);
    cache.set(key, p);
    const made = p;
    made.catch(() => cache.get(key) === made && cache.delete(key));
  }
  return p;
}

/**
 * The union of two graphs of a package, what only `after` has
 * marked added and what only `before` has marked removed.
 */
export function graphUnion(before: UiGraph | undefined, after: UiGraph | undefined): UiGraph {
  const base = after ?? before;
  if (!base) throw new Error("graphUnion needs a graph");
  const nodes = new Map<string, UiGraphNode>();
  const edges = new Map<string, UiGraphEdge>();
  const key = (e: UiGraphEdge): string => `${e.from}\u0000${e.to}\u0000${e.kind}`;
  const beforeNames = new Set((before?.nodes ?? []).map((n) => n.name));
  for (const n of after?.nodes ?? []) nodes.set(n.name, beforeNames.has(n.name) ? n : { ...n, change: "added" });
  for (const n of before?.nodes ?? [])
    if (!nodes.has(n.name)) nodes.set(n.name, { ...n, heads: [], change: "removed" });
  const beforeKeys = new Set((before?.edges ?? []).map(key));
  for (const e of after?.edges ?? []) edges.set(key(e), beforeKeys.has(key(e)) ? e : { ...e, change: "added" });
  for (const e of before?.edges ?? []) if (!edges.has(key(e))) edges.set(key(e), { ...e, change: "removed" });
  return {
    ...base,
    nodes: [...nodes.values()],
    edges: [...edges.values()],
    warnings: [...new Set([...(after?.warnings ?? []), ...(before?.warnings ?? [])])],
  };
}

/**
 * The upgrade graph of a package (all channels, or one): one node per bundle in a channel, an edge
 * from every bundle a channel entry replaces, skips or whose version its skipRange covers (as opm's
 * render-graph draws them). Heads are the entries nothing in their channel replaces or skips.
 */
export function packageGraph(detail: UiPackageDetail, channel: string): UiGraph {
  const versions = new Map<string, string>();
  const parsed = new Map<string, Version | null>();
  for (const b of detail.bundles) {
    for (const p of props(b))
      if (p.type === "olm.package" && !versions.has(str(b.name)))
        versions.set(str(b.name), str((p.value as UiBlob | null)?.version));
  }
  const parse = (name: string): Version | null => {
    let v = parsed.get(name);
    if (v === undefined) {
      const t = tryParseVersion(versions.get(name) ?? "");
      parsed.set(name, (v = t instanceof SemverError ? null : t));
    }
    return v;
  };
  const depBundles = new Set<string>();
  const depChannels = new Set<string>();
  let pkgDeprecated = false;
  for (const e of (detail.deprecations?.entries as UiBlob[] | undefined) ?? []) {
    const ref = (e.reference ?? {}) as UiBlob;
    if (ref.schema === "olm.bundle") depBundles.add(str(ref.name));
    else if (ref.schema === "olm.channel") depChannels.add(str(ref.name));
    else if (ref.schema === "olm.package") pkgDeprecated = true;
  }
  const nodes = new Map<string, UiGraphNode>();
  const edges: UiGraphEdge[] = [];
  const warnings: string[] = [];
  const channels = detail.channels.filter((c) => channel === "" || c.name === channel);
  if (channels.length === 0 && channel !== "")
    throw new HttpError(
      404,
      "SERVE_UI_NOT_FOUND",
      `package ${JSON.stringify(str(detail.package.name))} has no channel ${JSON.stringify(channel)}`,
    );
  const node = (name: string, ch: string): UiGraphNode => {
    let n = nodes.get(name);
    if (!n)
      nodes.set(
        name,
        (n = {
          name,
          version: versions.get(name) ?? "",
          channels: [],
          heads: [],
          deprecated: depBundles.has(name),
          inCatalog: versions.has(name),
        }),
      );
    if (ch !== "" && !n.channels.includes(ch)) n.channels.push(ch);
    return n;
  };
  const byKey = new Map<string, UiGraphEdge>();
  const edge = (from: string, to: string, kind: UiGraphEdge["kind"], ch: string, label = ""): void => {
    const key = `${from}\u0000${to}\u0000${kind}`;
    const existing = byKey.get(key);
    if (existing) {
      if (!existing.channels.includes(ch)) existing.channels.push(ch);
      return;
    }
    const e: UiGraphEdge = { from, to, kind, channels: [ch], ...(label ? { label } : {}) };
    byKey.set(key, e);
    edges.push(e);
  };
  for (const c of channels) {
    const ch = str(c.name);
    const entries = Array.isArray(c.entries) ? (c.entries as UiBlob[]) : [];
    const replaced = new Set<string>();
    for (const e of entries) node(str(e.name), ch);
    for (const e of entries) {
      const to = str(e.name);
      if (str(e.replaces)) {
        replaced.add(str(e.replaces));
        node(str(e.replaces), "");
        edge(str(e.replaces), to, "replaces", ch);
      }
      for (const sk of Array.isArray(e.skips) ? e.skips : []) {
        replaced.add(str(sk));
        node(str(sk), "");
        edge(str(sk), to, "skips", ch);
      }
      const sr = str(e.skipRange);
      if (sr) {
        const r = tryParseRange(sr);
        if (r instanceof SemverError) {
          warnings.push(`ignoring invalid skipRange ${JSON.stringify(sr)} of ${JSON.stringify(to)}: ${r.message}`);
          continue;
        }
        for (const other of entries) {
          const v = parse(str(other.name));
          if (!v || str(other.name) === to) continue;
          let hit = false;
          try {
            hit = r(v);
          } catch (err) {
            if (!(err instanceof SemverPanic)) throw err;
          }
          if (hit) edge(str(other.name), to, "skipRange", ch, sr);
        }
      }
    }
    for (const e of entries) if (!replaced.has(str(e.name))) node(str(e.name), ch).heads.push(ch);
  }
  return {
    package: str(detail.package.name),
    defaultChannel: str(detail.package.defaultChannel),
    channel,
    channels: detail.channels.map((c) => str(c.name)).sort(),
    deprecatedPackage: pkgDeprecated,
    deprecatedChannels: [...depChannels].filter((c) => channels.some((x) => x.name === c)),
    nodes: [...nodes.values()],
    edges,
    warnings,
  };
}

/** What a rendered package changes against the served one (bundles and edges over all channels). */
export function graphDiff(rendered: UiPackageDetail | undefined, current: UiPackageDetail | undefined): UiGraphDiff {
  const edgeKeys = (d: UiPackageDetail | undefined): Set<string> =>
    new Set(d ? packageGraph(d, "").edges.map((e) => `${e.from} → ${e.to} (${e.kind})`) : []);
  const bundleNames = (d: UiPackageDetail | undefined): Set<string> =>
    new Set(d ? d.bundles.map((b) => str(b.name)) : []);
  const nb = bundleNames(rendered);
  const ob = bundleNames(current);
  const ne = edgeKeys(rendered);
  const oe = edgeKeys(current);
  const minus = (a: Set<string>, b: Set<string>): string[] => [...a].filter((x) => !b.has(x)).sort();
  return {
    package: str((rendered ?? current)?.package.name),
    existing: current !== undefined,
    addedBundles: minus(nb, ob),
    removedBundles: minus(ob, nb),
    addedEdges: minus(ne, oe),
    removedEdges: minus(oe, ne),
  };
}

/** A package's graph, with its layout when asked (`layout=1`, `hide=` edge kinds), computed once per revision. */
function graphOf(ctx: UiContext, rev: CatalogRevision, pkg: string, params: URLSearchParams): Promise<UiGraph> {
  const missing = (): HttpError => noPackage(rev, pkg);
  // no channel: the package's default channel; "*" (or empty): all channels
  const asked = params.get("channel");
  let channel: string;
  if (asked === null) {
    const p = blobs(rev, "olm.package", "", pkg)[0];
    if (!p) throw missing();
    channel = str(p.defaultChannel);
  } else channel = asked === "*" ? "" : asked;
  const hide = (params.get("hide") ?? "").split(",").filter((k) => k !== "");
  for (const k of hide)
    if (!EDGE_KINDS.has(k as UiGraphEdge["kind"]))
      throw new HttpError(
        400,
        "SERVE_UI_BAD_REQUEST",
        `hide: unknown edge kind ${JSON.stringify(k)} (replaces, skips or skipRange)`,
      );
  const hidden = new Set(hide.sort() as UiGraphEdge["kind"][]);
  // compare=previous: the union with the graph of the revision this one replaced, changes marked
  const compare = params.get("compare") === "previous";
  const prev = compare ? ctx.store.previous(rev.catalog) : undefined;
  if (compare && !prev)
    throw new HttpError(
      404,
      "SERVE_UI_NO_PREVIOUS",
      `catalog ${JSON.stringify(rev.catalog)} has not been reloaded since the server started`,
    );
  const base = `${pkg}\u0000${channel}\u0000${compare ? "previous" : ""}`;
  const plain = cachedGraph(rev, `${base}\u0000-`, async () => {
    if (!prev) {
      const detail = packageDetail(rev, pkg);
      if (!detail) throw missing();
      return packageGraph(detail, channel);
    }
    // either side may lack the package (added or removed) or the channel
    const side = (r: CatalogRevision): UiGraph | undefined => {
      const detail = packageDetail(r, pkg);
      if (!detail || (channel !== "" && !detail.channels.some((c) => c.name === channel))) return undefined;
      return packageGraph(detail, channel);
    };
    const before = side(prev);
    const after = side(rev);
    if (!before && !after) throw missing();
    return { ...graphUnion(before, after), compared: { from: prev.serial, to: rev.serial } };
  });
  if (params.get("layout") !== "1") return plain;
  return cachedGraph(rev, `${base}\u0000${[...hidden].join(",")}`, async () => {
    const g = await plain;
    return { ...g, layout: await ctx.layouter.layout(g, hidden) };
  });
}

/** GET /ui/api/catalogs/<c>/packages/<p>/graph?channel=&layout=1&hide=&compare=previous */
export async function graphView(ctx: UiContext, r: UiRequest): Promise<void> {
  sendJson(r.res, 200, await graphOf(ctx, servedRevision(ctx, r.parts[1]), r.parts[3], r.params));
}
