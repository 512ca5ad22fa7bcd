/**
 * Upgrade paths in a graph: from a bundle, every bundle and edge on some path to the channel
 * head(s), with the fewest hops to each (what `render-graph --minimum-edge` shows as text).
 */
import type { UiGraphEdge } from "../web/uitypes.js";

export interface PathHighlight {
  from: string;
  /** Fewest hops from `from` to each bundle on a path to a head. */
  hops: Map<string, number>;
  /** Edges (indexes into the edge list) on some path from `from` to a head. */
  edges: Set<number>;
  /** The heads reached, with their fewest hops, and one shortest path to each. */
  heads: { name: string; hops: number; path: string[] }[];
}

export function upgradePaths(from: string, edges: readonly UiGraphEdge[], heads: readonly string[]): PathHighlight {
  const out = new Map<string, number[]>();
  const into = new Map<string, number[]>();
  edges.forEach((e, i) => {
    if (e.from === e.to) return;
    (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(i);
    (into.get(e.to) ?? into.set(e.to, []).get(e.to)!).push(i);
  });
  // forward BFS: fewest hops from `from`
  const dist = new Map<string, number>([[from, 0]]);
  const parent = new Map<string, string>();
  const queue = [from];
  for (let qi = 0; qi < queue.length; qi++) {
    const n = queue[qi];
    for (const i of out.get(n) ?? []) {
      const t = edges[i].to;
      if (dist.has(t)) continue;
      dist.set(t, (dist.get(n) ?? 0) + 1);
      parent.set(t, n);
      queue.push(t);
    }
  }
  // backward reachability from the heads that `from` reaches
  const reachedHeads = heads.filter((h) => dist.has(h));
  const toHead = new Set<string>(reachedHeads);
  const back = [...reachedHeads];
  for (let qi = 0; qi < back.length; qi++) {
    for (const i of into.get(back[qi]) ?? []) {
      const f = edges[i].from;
      if (!toHead.has(f) && dist.has(f)) {
        toHead.add(f);
        back.push(f);
      }
    }
  }
  const hops = new Map<string, number>();
  for (const n of toHead) hops.set(n, dist.get(n) ?? 0);
  const onPath = new Set<number>();
  edges.forEach((e, i) => {
    if (toHead.has(e.from) && toHead.has(e.to) && e.from !== e.to) onPath.add(i);
  });
  const headInfo = reachedHeads.map((h) => {
    const path = [h];
    for (let n = h; n !== from; ) {
      const p = parent.get(n);
      if (p === undefined) break;
      path.unshift(p);
      n = p;
    }
    return { name: h, hops: dist.get(h) ?? 0, path };
  });
  return { from, hops, edges: onPath, heads: headInfo };
}
