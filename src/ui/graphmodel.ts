/**
 * What the upgrade graph page draws, derived from the server's graph: the edges shown, the layout,
 * the channel heads, the upgrade paths from a bundle and the bundles in a version range.
 */
import { useMemo } from "preact/hooks";
import type { UiGraph, UiGraphEdge } from "../web/uitypes.js";
import { type PathHighlight, upgradePaths } from "./paths.js";
import { packageVersionMatcher, SemverError, tryParseVersion } from "../semver/index.js";

export interface Layout {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number; w: number; h: number }>;
  edges: { index: number; d: string }[];
}

export type Kind = UiGraphEdge["kind"];
export const KINDS: Kind[] = ["replaces", "skips", "skipRange"];

/** A version range's bundles (or why the range is not one); undefined without a range. */
export type Ranged = { error: string } | { names: Set<string> } | undefined;

/** What the graph page shows of `g`. */
export interface GraphModel {
  /** The range's bundles. */
  ranged: Ranged;
  /** The edge kinds hidden. */
  hiddenKinds: Set<string>;
  /** The edges of the kinds shown, with their indexes into g.edges. */
  shownEdges: { e: UiGraphEdge; i: number }[];
  /** The server's layout (of the edges shown; edge indexes refer to g.edges). */
  layout: Layout | undefined;
  /** The upgrade paths from `from`, when it is a bundle of the graph. */
  paths: PathHighlight | undefined;
  /** The highlighted edges, as indexes into g.edges. */
  onPath: Set<number>;
  /** The edges of each kind, hidden or not. */
  counts: Record<Kind, number>;
}

/** A version range (as an Input's spec.version selects, the resolver's own matcher): the bundles it admits. */
export function rangedNames(g: UiGraph, range: string): Ranged {
  if (!range) return undefined;
  const m = packageVersionMatcher(range);
  if (m instanceof SemverError) return { error: m.message };
  const names = new Set<string>();
  for (const n of g.nodes) {
    const v = n.version ? tryParseVersion(n.version) : undefined;
    if (v && !(v instanceof SemverError) && m.test(v)) names.add(n.name);
  }
  return { names };
}

/** Whether a bundle is a head of `channel` (of any channel for ""). */
export function isHeadOf(n: UiGraph["nodes"][number], channel: string): boolean {
  return channel === "" ? n.heads.length > 0 : n.heads.includes(channel);
}

/** The graph page's model of `g`, each part recomputed only when what it depends on changes. */
export function useGraphModel(g: UiGraph, channel: string, from: string, hidden: string, range: string): GraphModel {
  const ranged = useMemo((): Ranged => rangedNames(g, range), [g, range]);
  const hiddenKinds = new Set(hidden.split(",").filter((k) => k !== ""));
  const shownEdges = useMemo(
    () => g.edges.map((e, i) => ({ e, i })).filter(({ e }) => !hiddenKinds.has(e.kind)),
    [g, hidden],
  );
  const layout = useMemo(
    (): Layout | undefined => (g.layout ? { ...g.layout, nodes: new Map(Object.entries(g.layout.nodes)) } : undefined),
    [g],
  );
  const heads = useMemo(() => g.nodes.filter((n) => isHeadOf(n, channel)).map((n) => n.name), [g, channel]);
  // upgrade paths use the edges shown, not those the last reload removed (when comparing)
  const pathEdges = useMemo(() => shownEdges.filter(({ e }) => e.change !== "removed"), [shownEdges]);
  const paths = useMemo(
    () =>
      from && g.nodes.some((n) => n.name === from)
        ? upgradePaths(
            from,
            pathEdges.map(({ e }) => e),
            heads,
          )
        : undefined,
    [from, pathEdges, heads],
  );
  const onPath = useMemo(() => new Set([...(paths?.edges ?? [])].map((k) => pathEdges[k].i)), [paths, pathEdges]);
  const counts = { replaces: 0, skips: 0, skipRange: 0 };
  for (const e of g.edges) counts[e.kind]++;
  return { ranged, hiddenKinds, shownEdges, layout, paths, onPath, counts };
}
