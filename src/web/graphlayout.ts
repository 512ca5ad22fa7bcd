/**
 * Upgrade graphs laid out for the web UI with elkjs (Eclipse Layout Kernel, layered algorithm), in a
 * worker thread of the server, cached per catalog revision: the browser gets positions and edge
 * paths with the graph and only draws them (no 450 KB layout engine to load and warm up per tab,
 * and a graph laid out once is ready for every later visit).
 *
 * Only the edges that shape an upgrade graph (replaces and skips, and a skipRange edge where a
 * bundle has no other) go through ELK's layering and routing, whose cost grows fast with the edge
 * count (skipRanges give a few edges per bundle, often over a thousand in a channel); the other
 * skipRange edges are drawn as curves between the placed bundles.
 */
import { Worker } from "node:worker_threads";
import type { ELK, ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import type { UiGraph, UiGraphEdge, UiGraphLayout, UiGraphNode } from "./uitypes.js";

const NODE_H = 38;
const CHAR_W = 7;

/** The drawn width of a bundle's box (its name and version in the UI's font sizes). */
export function nodeWidth(n: UiGraphNode): number {
  return Math.max(90, Math.ceil(Math.max(n.name.length * (CHAR_W - 0.8), (n.version || n.name).length * CHAR_W) + 24));
}

/** Lays out the edges of `g` whose kind is not in `hidden`; edge indexes refer to `g.edges`. */
export async function layoutWith(
  elk: ELK,
  g: UiGraph,
  hidden: ReadonlySet<UiGraphEdge["kind"]>,
): Promise<UiGraphLayout> {
  const shown: number[] = [];
  g.edges.forEach((e, i) => {
    if (!hidden.has(e.kind)) shown.push(i);
  });
  const connected = new Set<string>();
  const routed: number[] = [];
  for (const i of shown) {
    const e = g.edges[i];
    if (e.kind === "skipRange") continue;
    routed.push(i);
    connected.add(e.from).add(e.to);
  }
  for (const i of shown) {
    const e = g.edges[i];
    if (e.kind !== "skipRange" || (connected.has(e.from) && connected.has(e.to))) continue;
    routed.push(i);
    connected.add(e.from).add(e.to);
  }
  const graph: ElkNode = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.edgeRouting": "POLYLINE",
      "elk.layered.spacing.nodeNodeBetweenLayers": "50",
      "elk.spacing.nodeNode": "18",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      // a long replaces chain is wrapped into rows (about twice as wide as high, like the view)
      // instead of one line thousands of pixels long that only fits the view at an unreadable scale
      "elk.layered.wrapping.strategy": "MULTI_EDGE",
      "elk.aspectRatio": "2",
    },
    children: g.nodes.map((n) => ({ id: n.name, width: nodeWidth(n), height: NODE_H })),
    edges: routed.map((i): ElkExtendedEdge => ({ id: `e${i}`, sources: [g.edges[i].from], targets: [g.edges[i].to] })),
  };
  const res = await elk.layout(graph);
  const nodes: UiGraphLayout["nodes"] = {};
  for (const c of res.children ?? [])
    nodes[c.id] = { x: round(c.x ?? 0), y: round(c.y ?? 0), w: c.width ?? 0, h: c.height ?? 0 };
  const edges: UiGraphLayout["edges"] = [];
  const done = new Set<number>();
  for (const e of (res.edges ?? []) as ElkExtendedEdge[]) {
    const index = Number(e.id.slice(1));
    const s = e.sections?.[0];
    if (!s) continue;
    const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint];
    edges.push({ index, d: `M${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" L")}` });
    done.add(index);
  }
  for (const i of shown) {
    if (done.has(i)) continue;
    const a = nodes[g.edges[i].from];
    const b = nodes[g.edges[i].to];
    if (a && b) edges.push({ index: i, d: curve(a, b) });
  }
  edges.sort((x, y) => x.index - y.index);
  return { width: Math.ceil(res.width ?? 0), height: Math.ceil(res.height ?? 0), nodes, edges };
}

const round = (n: number): number => Math.round(n * 10) / 10;

/**
 * A curve from `a` to `b`: right side to left side when `b` lies to the right; otherwise (the rows
 * of a wrapped layout) from the bottom of `a` to the top of `b`, or top to bottom when `b` is above.
 */
function curve(
  a: { x: number; y: number; w: number; h: number },
  b: { x: number; y: number; w: number; h: number },
): string {
  const f = (n: number): string => n.toFixed(1);
  if (b.x >= a.x + a.w + 10) {
    const x1 = a.x + a.w;
    const y1 = a.y + a.h / 2;
    const x2 = b.x;
    const y2 = b.y + b.h / 2;
    const bend = Math.max(30, Math.abs(x2 - x1) / 3);
    return `M${f(x1)},${f(y1)} C${f(x1 + bend)},${f(y1)} ${f(x2 - bend)},${f(y2)} ${f(x2)},${f(y2)}`;
  }
  const down = b.y >= a.y;
  const x1 = a.x + a.w / 2;
  const y1 = down ? a.y + a.h : a.y;
  const x2 = b.x + b.w / 2;
  const y2 = down ? b.y : b.y + b.h;
  const bend = Math.max(20, Math.abs(y2 - y1) / 2) * (down ? 1 : -1);
  return `M${f(x1)},${f(y1)} C${f(x1)},${f(y1 + bend)} ${f(x2)},${f(y2 - bend)} ${f(x2)},${f(y2)}`;
}

export async function loadElk(): Promise<ELK> {
  const m = (await import("elkjs/lib/elk.bundled.js")) as unknown as { default: new () => ELK };
  return new m.default();
}

interface Job {
  resolve(l: UiGraphLayout): void;
  reject(e: Error): void;
}

/**
 * Lays graphs out in one worker thread (started on first use, or ahead with `warm()`), so that a
 * large layout never holds up the server's other answers. Jobs run one at a time in the worker.
 */
export class GraphLayouter {
  #worker: Worker | undefined;
  #jobs = new Map<number, Job>();
  #next = 1;

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // the compiled worker beside this module (dist/serve), or the source under tsx (tests)
    const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
    const w = new Worker(new URL(`./layoutworker${ext}`, import.meta.url));
    w.unref();
    w.on("message", (m: { id: number; layout?: UiGraphLayout; error?: string }) => {
      const job = this.#jobs.get(m.id);
      if (!job) return;
      this.#jobs.delete(m.id);
      if (m.layout) job.resolve(m.layout);
      else job.reject(new Error(m.error ?? "layout failed"));
    });
    const fail = (e: Error): void => {
      for (const j of this.#jobs.values()) j.reject(e);
      this.#jobs.clear();
      this.#worker = undefined;
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the graph layout worker exited (${code})`)));
    this.#worker = w;
    return w;
  }

  /** Starts the worker and warms the layout engine up (a small layout), without waiting. */
  warm(): void {
    const g: UiGraph = {
      package: "warm",
      defaultChannel: "",
      channel: "",
      channels: ["c"],
      deprecatedPackage: false,
      deprecatedChannels: [],
      nodes: [0, 1, 2].map((i) => ({
        name: `w.v${i}`,
        version: `${i}.0.0`,
        channels: ["c"],
        heads: [],
        deprecated: false,
        inCatalog: true,
      })),
      edges: [
        { from: "w.v0", to: "w.v1", kind: "replaces", channels: ["c"] },
        { from: "w.v1", to: "w.v2", kind: "replaces", channels: ["c"] },
      ],
      warnings: [],
    };
    this.layout(g, new Set()).catch(() => undefined);
  }

  layout(g: UiGraph, hidden: ReadonlySet<UiGraphEdge["kind"]>): Promise<UiGraphLayout> {
    const w = this.#start();
    const id = this.#next++;
    w.ref();
    return new Promise<UiGraphLayout>((resolve, reject) => {
      this.#jobs.set(id, { resolve, reject });
      w.postMessage({ id, g, hidden: [...hidden] });
    }).finally(() => {
      if (this.#jobs.size === 0) this.#worker?.unref();
    });
  }

  async close(): Promise<void> {
    const w = this.#worker;
    this.#worker = undefined;
    if (w) await w.terminate();
  }
}
