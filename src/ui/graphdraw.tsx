/**
 * The upgrade graph drawn: its edges and bundles as SVG (laid out by the server), in the viewport
 * that zooms and pans them.
 */
import type { ComponentChildren, RefObject } from "preact";
import type { UiGraph } from "../web/uitypes.js";
import type { PathHighlight } from "./paths.js";
import { isHeadOf, type Layout, type Ranged } from "./graphmodel.js";
import type { View, ViewportHandlers } from "./graphview.js";

/** What the drawn graph shows besides the graph and its layout. */
export interface Marks {
  channel: string;
  from: string;
  selected: string;
  paths: PathHighlight | undefined;
  onPath: Set<number>;
  ranged: Ranged;
  /** Selects a bundle (clicked, or Enter/Space on it). */
  select: (name: string) => void;
}

/** The edges and bundles of `g` as laid out in `layout`, marked. */
export function drawGraph(g: UiGraph, layout: Layout, m: Marks) {
  return (
    <>
      {layout.edges.map(({ index, d }) => drawEdge(g, index, d, m.onPath.has(index)))}
      {g.nodes.map((n) => {
        const p = layout.nodes.get(n.name);
        return p ? drawNode(n, p, m) : null;
      })}
    </>
  );
}

/** Edge `index` of `g`, along the path `d`. */
function drawEdge(g: UiGraph, index: number, d: string, on: boolean) {
  const e = g.edges[index];
  return (
    <path
      key={index}
      d={d}
      class={`edge ${e.kind}${on ? " on-path" : ""}${e.change ? ` change-${e.change}` : ""}`}
      marker-end="url(#arrow)"
    >
      <title>
        {`${e.from} → ${e.to} (${e.kind}${e.label ? ` ${e.label}` : ""}; ` +
          `${e.channels.join(", ")})${e.change ? `, ${e.change} by the last reload` : ""}`}
      </title>
    </path>
  );
}

/** The classes of a drawn bundle. */
function nodeClass(n: UiGraph["nodes"][number], isHead: boolean, hop: number | undefined, m: Marks): string {
  return [
    "node",
    isHead ? "head" : "",
    n.deprecated ? "deprecated" : "",
    !n.inCatalog ? "missing" : "",
    n.name === m.selected ? "selected" : "",
    hop !== undefined ? "on-path" : "",
    n.name === m.from ? "from" : "",
    n.change ? `change-${n.change}` : "",
    m.ranged && "names" in m.ranged && m.ranged.names.has(n.name) ? "in-range" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** A bundle at `p`: a box with its version (and hops on an upgrade path) and name, selectable. */
function drawNode(n: UiGraph["nodes"][number], p: { x: number; y: number; w: number; h: number }, m: Marks) {
  const isHead = isHeadOf(n, m.channel);
  const hop = m.paths?.hops.get(n.name);
  return (
    <g
      key={n.name}
      class={nodeClass(n, isHead, hop, m)}
      transform={`translate(${p.x},${p.y})`}
      tabindex={0}
      role="button"
      aria-label={
        `${n.name}${n.version ? ` version ${n.version}` : ""}${isHead ? ", head" : ""}` +
        `${n.deprecated ? ", deprecated" : ""}${n.change ? `, ${n.change} by the last reload` : ""}`
      }
      data-node={n.name}
      onClick={() => m.select(n.name)}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          m.select(n.name);
        }
      }}
    >
      <rect width={p.w} height={p.h} rx="6" />
      <text x={p.w / 2} y="16" class="ver">
        {n.version || n.name}
        {hop !== undefined && n.name !== m.from ? ` · ${hop} hop${hop === 1 ? "" : "s"}` : ""}
      </text>
      <text x={p.w / 2} y="30" class="nm">
        {n.name}
      </text>
    </g>
  );
}

/** The viewport: the drawn graph moved by `view`, or a placeholder until it is laid out. */
export function GraphCanvas({
  g,
  channel,
  shownEdges,
  layout,
  view,
  moving,
  handlers,
  viewportRef,
  svgRef,
  highlighting,
  ranging,
  drawn,
}: {
  g: UiGraph;
  channel: string;
  shownEdges: number;
  layout: Layout | undefined;
  view: View;
  moving: boolean;
  handlers: ViewportHandlers;
  viewportRef: RefObject<HTMLDivElement | null>;
  svgRef: RefObject<SVGSVGElement | null>;
  /** Upgrade paths are highlighted. */
  highlighting: boolean;
  /** The bundles of a version range are outlined. */
  ranging: boolean;
  drawn: ComponentChildren;
}) {
  return (
    <div
      ref={viewportRef}
      class="graph"
      role="img"
      aria-label={
        `upgrade graph of ${g.package}${channel ? `, channel ${channel}` : ""}: ` +
        `${g.nodes.length} bundles, ${shownEdges} edges`
      }
      data-testid="graph"
      tabIndex={0}
      onWheel={handlers.onWheel}
      onPointerDown={handlers.onPointerDown}
      onPointerMove={handlers.onPointerMove}
      onPointerUp={handlers.onPointerUp}
      onKeyDown={handlers.onKeyDown}
    >
      {layout ? (
        <svg
          ref={svgRef}
          class={`graph-svg${highlighting ? " highlighting" : ""}${ranging ? " ranging" : ""}`}
          width={layout.width + 20}
          height={layout.height + 20}
          style={{
            transform: `translate(${view.x.toFixed(1)}px,${view.y.toFixed(1)}px) scale(${view.k.toFixed(4)})`,
            willChange: moving ? "transform" : "auto",
          }}
        >
          <defs>
            <marker
              id="arrow"
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
            </marker>
          </defs>
          <g transform="translate(10,10)" data-testid="graph-content" data-layout="done">
            {drawn}
          </g>
        </svg>
      ) : (
        <p class="muted">Laying out {g.nodes.length} bundles…</p>
      )}
    </div>
  );
}
