/**
 * The upgrade graph: laid out by the server (elkjs, src/web/graphlayout.ts),
 * drawn as SVG, zoom/pan, details, upgrade paths, SVG and Mermaid export.
 * The parts: graphmodel.ts (what is shown), graphview.ts (zoom and pan), graphdraw.tsx (the
 * drawing), graphpanels.tsx (toolbar, panels, details).
 */
import { useMemo, useRef, useState } from "preact/hooks";
import type { UiGraph } from "../web/uitypes.js";
import { api } from "./api.js";
import { drawGraph, GraphCanvas } from "./graphdraw.js";
import { useGraphModel } from "./graphmodel.js";
import {
  GraphToolbar,
  type MermaidText,
  MermaidPanel,
  NodeDetail,
  PathsPanel,
  RangePanel,
  type SetQuery,
} from "./graphpanels.js";
import { useViewControl } from "./graphview.js";
import { download, Show, useLoad } from "./util.js";

export type { Layout } from "./graphmodel.js";

export function GraphView({
  catalog,
  pkg,
  query,
  setQuery,
}: {
  catalog: string;
  pkg: string;
  query: URLSearchParams;
  setQuery: (q: Record<string, string | undefined>) => void;
}) {
  // no channel in the link: the package's default channel (the server knows it); "*": all channels
  const asked = query.get("channel");
  const from = query.get("from") ?? "";
  const range = query.get("range") ?? "";
  const selected = query.get("node") ?? "";
  const hide = query.get("hide") ?? "";
  const compare = query.get("compare") === "previous";
  const v = useLoad(() => api.graph(catalog, pkg, asked, hide, compare), [catalog, pkg, asked, hide, compare]);
  return (
    <div class="graph-page">
      <Show v={v}>
        {(g) => {
          const defaultChannel = g.defaultChannel;
          const channelParam = asked ?? defaultChannel;
          const q = (over: Record<string, string | undefined>): void =>
            setQuery({
              channel: channelParam === defaultChannel ? undefined : channelParam,
              from: from || undefined,
              node: selected || undefined,
              hide: hide || undefined,
              compare: compare ? "previous" : undefined,
              range: range || undefined,
              ...over,
            });
          return (
            <>
              <div class="toolbar" role="toolbar" aria-label="graph options">
                <label>
                  Channel{" "}
                  <select
                    name="channel"
                    value={channelParam}
                    onChange={(e) =>
                      q({ channel: (e.target as HTMLSelectElement).value, from: undefined, node: undefined })
                    }
                  >
                    {g.channels.map((c) => (
                      <option key={c} value={c}>
                        {c}
                        {c === defaultChannel ? " (default)" : ""}
                      </option>
                    ))}
                    <option value="*">all channels</option>
                  </select>
                </label>
                <label>
                  From version{" "}
                  <select
                    name="from"
                    value={from}
                    onChange={(e) => q({ from: (e.target as HTMLSelectElement).value || undefined })}
                  >
                    <option value="">(none)</option>
                    {[...g.nodes]
                      .filter((n) => n.channels.length > 0)
                      .sort((a, b) => cmpVersion(a.version, b.version))
                      .map((n) => (
                        <option key={n.name} value={n.name}>
                          {n.version || n.name} ({n.name})
                        </option>
                      ))}
                  </select>
                </label>
                <form
                  class="inline"
                  onSubmit={(e) => {
                    e.preventDefault();
                    const v = (
                      (e.currentTarget as HTMLFormElement).elements.namedItem("range") as HTMLInputElement
                    ).value.trim();
                    q({ range: v || undefined });
                  }}
                >
                  <label>
                    Version range <input name="range" value={range} placeholder="e.g. >=2.4.0 <2.5.0" size={18} />
                  </label>
                </form>
              </div>
              <Graph
                g={g}
                catalog={catalog}
                channel={g.channel}
                from={from}
                selected={selected}
                hidden={hide}
                range={range}
                q={q}
              />
            </>
          );
        }}
      </Show>
    </div>
  );
}

/** The banner of a graph compared with the previous revision. */
function Compared({ g }: { g: UiGraph }) {
  const count = <T extends { change?: "added" | "removed" }>(xs: T[], c: "added" | "removed"): number =>
    xs.filter((x) => x.change === c).length;
  return (
    <div class="paths" role="status" data-testid="compared">
      Changes from revision {g.compared?.from} to {g.compared?.to}:{" "}
      <span class="legend-added">+{count(g.nodes, "added")} bundles</span>,{" "}
      <span class="legend-removed">−{count(g.nodes, "removed")} bundles</span>,{" "}
      <span class="legend-added">+{count(g.edges, "added")} edges</span>,{" "}
      <span class="legend-removed">−{count(g.edges, "removed")} edges</span> (added in green, removed in red and
      dashed).
    </div>
  );
}

function cmpVersion(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  const pb = b.split(/[.+-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? -1;
    const y = pb[i] ?? -1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** One graph: its toolbar, the paths and range panels, the drawing, the selected bundle and the Mermaid text. */
function Graph({
  g,
  catalog,
  channel,
  from,
  selected,
  hidden,
  range,
  q,
}: {
  g: UiGraph;
  catalog: string;
  channel: string;
  from: string;
  selected: string;
  hidden: string;
  range: string;
  q: SetQuery;
}) {
  const { ranged, hiddenKinds, shownEdges, layout, paths, onPath, counts } = useGraphModel(
    g,
    channel,
    from,
    hidden,
    range,
  );
  const svgRef = useRef<SVGSVGElement>(null);
  const viewportRef = useRef<HTMLDivElement>(null);
  const { view, moving, fit, zoomAt, handlers } = useViewControl(layout, viewportRef);
  const [mermaid, setMermaid] = useState<MermaidText | undefined>(undefined);

  // the drawn bundles and edges do not change while zooming or panning: the same vnodes are reused,
  // so that a view change only updates the transform (Preact skips unchanged vnodes)
  const qRef = useRef(q);
  qRef.current = q;
  const drawn = useMemo(() => {
    if (!layout) return null;
    const select = (name: string): void => qRef.current({ node: name });
    return drawGraph(g, layout, { channel, from, selected, paths, onPath, ranged, select });
  }, [layout, onPath, paths, g, channel, selected, from, ranged]);

  const sel = g.nodes.find((n) => n.name === selected);
  const fileName = (ext: string): string => `${g.package}${channel ? `-${channel}` : ""}.${ext}`;
  return (
    <div class="graph-wrap">
      <GraphToolbar
        hiddenKinds={hiddenKinds}
        counts={counts}
        q={q}
        zoomAt={zoomAt}
        fit={fit}
        laidOut={!!layout}
        exportSvg={() => layout && download(fileName("svg"), exportSvg(svgRef.current), "image/svg+xml")}
        mermaid={() =>
          api.mermaid(catalog, g.package, channel).then(
            (text) => setMermaid({ text }),
            (error: Error) => setMermaid({ error }),
          )
        }
      />
      {paths ? <PathsPanel paths={paths} from={from} channel={channel} q={q} /> : null}
      {g.compared ? <Compared g={g} /> : null}
      {ranged ? <RangePanel g={g} range={range} ranged={ranged} q={q} /> : null}
      {g.warnings.map((w) => (
        <div class="warning" key={w}>
          {w}
        </div>
      ))}
      <div class="graph-area">
        <GraphCanvas
          g={g}
          channel={channel}
          shownEdges={shownEdges.length}
          layout={layout}
          view={view}
          moving={moving}
          handlers={handlers}
          viewportRef={viewportRef}
          svgRef={svgRef}
          highlighting={!!paths}
          ranging={!!ranged && "names" in ranged}
          drawn={drawn}
        />
        {sel ? <NodeDetail g={g} sel={sel} catalog={catalog} q={q} /> : null}
      </div>
      {mermaid ? (
        <MermaidPanel mermaid={mermaid} fileName={fileName("mmd")} close={() => setMermaid(undefined)} />
      ) : null}
    </div>
  );
}

const EXPORT_STYLE = [
  "",
  ".edge{fill:none;stroke:#555;stroke-width:1.4}.edge.skips{stroke-dasharray:6 4;stroke:#7a4fb5}" +
    ".edge.skipRange{stroke-dasharray:2 3;stroke:#2b7a78}",
  ".arrowhead{fill:#555}.node rect{fill:#fff;stroke:#333;stroke-width:1.2}" +
    ".node.head rect{stroke:#1a7f37;stroke-width:3}",
  ".node.deprecated rect{fill:#e8960f}.node.missing rect{stroke-dasharray:4 3}.node.on-path rect{fill:#fff3b0}" +
    ".edge.on-path{stroke:#d4a000;stroke-width:3}",
  ".edge.change-added{stroke:#1a7f37;stroke-width:2.5}" +
    ".edge.change-removed{stroke:#a40e26;stroke-width:2;stroke-dasharray:5 4}",
  ".node.change-added rect{stroke:#1a7f37;stroke-width:3}" +
    ".node.change-removed rect{stroke:#a40e26;stroke-width:2;stroke-dasharray:5 4}",
  "text{font-family:system-ui,sans-serif;text-anchor:middle;fill:#111}.ver{font-size:12px;font-weight:600}" +
    ".nm{font-size:10px}",
].join("\n");

/** The drawn graph as a standalone SVG document (its own styles, the whole graph at scale 1). */
export function exportSvg(svg: SVGSVGElement | null): string {
  if (!svg) return "";
  const clone = svg.cloneNode(true) as SVGSVGElement;
  const content = clone.querySelector("[data-testid=graph-content]");
  const orig = svg.querySelector("[data-testid=graph-content]") as SVGGElement | null;
  const box = orig?.getBBox() ?? { x: 0, y: 0, width: 100, height: 100 };
  content?.setAttribute("transform", `translate(${(10 - box.x).toFixed(1)},${(10 - box.y).toFixed(1)})`);
  for (const a of ["class", "tabindex", "data-testid", "role", "style"]) clone.removeAttribute(a);
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  clone.setAttribute("width", String(Math.ceil(box.width + 20)));
  clone.setAttribute("height", String(Math.ceil(box.height + 20)));
  clone.setAttribute("viewBox", `0 0 ${Math.ceil(box.width + 20)} ${Math.ceil(box.height + 20)}`);
  const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
  style.textContent = EXPORT_STYLE;
  clone.insertBefore(style, clone.firstChild);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(clone)}\n`;
}
