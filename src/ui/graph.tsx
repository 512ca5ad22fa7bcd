/**
 * The upgrade graph: laid out by the server (elkjs, src/web/graphlayout.ts),
 * drawn as SVG, zoom/pan, details, upgrade paths, SVG and Mermaid export.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { UiGraph, UiGraphEdge } from "../web/uitypes.js";
import { api } from "./api.js";
import { upgradePaths } from "./paths.js";
import { packageVersionMatcher, SemverError, tryParseVersion } from "../semver/index.js";
import { CopyButton, download, ErrorBox, Show, useLoad } from "./util.js";

export interface Layout {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number; w: number; h: number }>;
  edges: { index: number; d: string }[];
}

type Kind = UiGraphEdge["kind"];
const KINDS: Kind[] = ["replaces", "skips", "skipRange"];

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

interface View {
  x: number;
  y: number;
  k: number;
}

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
  q: (over: Record<string, string | undefined>) => void;
}) {
  // a version range (as an Input's spec.version selects, the resolver's own matcher): the bundles it admits
  const ranged = useMemo((): { error: string } | { names: Set<string> } | undefined => {
    if (!range) return undefined;
    const m = packageVersionMatcher(range);
    if (m instanceof SemverError) return { error: m.message };
    const names = new Set<string>();
    for (const n of g.nodes) {
      const v = n.version ? tryParseVersion(n.version) : undefined;
      if (v && !(v instanceof SemverError) && m.test(v)) names.add(n.name);
    }
    return { names };
  }, [g, range]);
  const hiddenKinds = new Set(hidden.split(",").filter((k) => k !== ""));
  const shownEdges = useMemo(
    () => g.edges.map((e, i) => ({ e, i })).filter(({ e }) => !hiddenKinds.has(e.kind)),
    [g, hidden],
  );
  // laid out by the server (the edges of the kinds not hidden; edge indexes refer to g.edges)
  const layout = useMemo(
    (): Layout | undefined => (g.layout ? { ...g.layout, nodes: new Map(Object.entries(g.layout.nodes)) } : undefined),
    [g],
  );
  const heads = useMemo(
    () => g.nodes.filter((n) => (channel === "" ? n.heads.length > 0 : n.heads.includes(channel))).map((n) => n.name),
    [g, channel],
  );
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
  // the highlighted edges as indexes into g.edges
  const onPath = useMemo(() => new Set([...(paths?.edges ?? [])].map((k) => pathEdges[k].i)), [paths, pathEdges]);
  const counts = { replaces: 0, skips: 0, skipRange: 0 };
  for (const e of g.edges) counts[e.kind]++;
  const svgRef = useRef<SVGSVGElement>(null);
  const viewportRef = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<View>({ x: 10, y: 10, k: 1 });
  // Zoom and pan move the drawn SVG as one composited layer (a CSS transform on the <svg>, which
  // the browser moves and scales without painting its thousands of paths again); while it moves
  // the layer is kept (will-change), and re-rasterised sharp at the new scale once it rests.
  const [moving, setMoving] = useState(false);
  const rest = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const moved = (): void => {
    setMoving(true);
    clearTimeout(rest.current);
    rest.current = setTimeout(() => setMoving(false), 200);
  };
  useEffect(() => () => clearTimeout(rest.current), []);
  const [mermaid, setMermaid] = useState<{ text?: string; error?: Error } | undefined>(undefined);

  // fit the graph into the view once laid out
  const fit = (): void => {
    const box = viewportRef.current;
    if (!box || !layout) return;
    const r = box.getBoundingClientRect();
    const k = Math.min(
      1.5,
      Math.max(
        0.05,
        Math.min((r.width - 20) / Math.max(1, layout.width), (r.height - 20) / Math.max(1, layout.height)),
      ),
    );
    setView({ k, x: (r.width - layout.width * k) / 2, y: (r.height - layout.height * k) / 2 });
  };
  useEffect(fit, [layout]);

  const drag = useRef<{ x: number; y: number; vx: number; vy: number } | undefined>(undefined);
  const zoomAt = (factor: number, cx: number, cy: number): void => {
    moved();
    setView((v) => {
      const k = Math.min(4, Math.max(0.03, v.k * factor));
      return { k, x: cx - ((cx - v.x) * k) / v.k, y: cy - ((cy - v.y) * k) / v.k };
    });
  };

  // the drawn bundles and edges do not change while zooming or panning: the same vnodes are reused,
  // so that a view change only updates the transform (Preact skips unchanged vnodes)
  const qRef = useRef(q);
  qRef.current = q;
  const drawn = useMemo(() => {
    if (!layout) return null;
    return (
      <>
        {layout.edges.map(({ index, d }) => {
          const e = g.edges[index];
          const on = onPath.has(index);
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
        })}
        {g.nodes.map((n) => {
          const p = layout.nodes.get(n.name);
          if (!p) return null;
          const isHead = channel === "" ? n.heads.length > 0 : n.heads.includes(channel);
          const hop = paths?.hops.get(n.name);
          const cls = [
            "node",
            isHead ? "head" : "",
            n.deprecated ? "deprecated" : "",
            !n.inCatalog ? "missing" : "",
            n.name === selected ? "selected" : "",
            hop !== undefined ? "on-path" : "",
            n.name === from ? "from" : "",
            n.change ? `change-${n.change}` : "",
            ranged && "names" in ranged && ranged.names.has(n.name) ? "in-range" : "",
          ]
            .filter(Boolean)
            .join(" ");
          return (
            <g
              key={n.name}
              class={cls}
              transform={`translate(${p.x},${p.y})`}
              tabindex={0}
              role="button"
              aria-label={
                `${n.name}${n.version ? ` version ${n.version}` : ""}${isHead ? ", head" : ""}` +
                `${n.deprecated ? ", deprecated" : ""}${n.change ? `, ${n.change} by the last reload` : ""}`
              }
              data-node={n.name}
              onClick={() => qRef.current({ node: n.name })}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  qRef.current({ node: n.name });
                }
              }}
            >
              <rect width={p.w} height={p.h} rx="6" />
              <text x={p.w / 2} y="16" class="ver">
                {n.version || n.name}
                {hop !== undefined && n.name !== from ? ` · ${hop} hop${hop === 1 ? "" : "s"}` : ""}
              </text>
              <text x={p.w / 2} y="30" class="nm">
                {n.name}
              </text>
            </g>
          );
        })}
      </>
    );
  }, [layout, onPath, paths, g, channel, selected, from, ranged]);

  const sel = g.nodes.find((n) => n.name === selected);
  return (
    <div class="graph-wrap">
      <div class="toolbar" role="toolbar" aria-label="graph view">
        {KINDS.map((k) => (
          <label key={k} class={`legend ${k}`}>
            <input
              type="checkbox"
              name={`show-${k}`}
              checked={!hiddenKinds.has(k)}
              onChange={(e) => {
                const h = new Set(hiddenKinds);
                if ((e.target as HTMLInputElement).checked) h.delete(k);
                else h.add(k);
                q({ hide: [...h].join(",") || undefined });
              }}
            />{" "}
            <svg width="28" height="8" aria-hidden="true">
              <line x1="0" y1="4" x2="28" y2="4" class={`edge ${k}`} />
            </svg>{" "}
            {k} ({counts[k]})
          </label>
        ))}
        <span class="legend">
          <span class="swatch head" /> head
        </span>
        <span class="legend">
          <span class="swatch deprecated" /> deprecated
        </span>
        <span class="spacer" />
        <button type="button" class="small" aria-label="zoom in" onClick={() => zoomAt(1.25, 300, 200)}>
          +
        </button>
        <button type="button" class="small" aria-label="zoom out" onClick={() => zoomAt(0.8, 300, 200)}>
          −
        </button>
        <button type="button" class="small" onClick={fit}>
          Fit
        </button>
        <button
          type="button"
          class="small"
          disabled={!layout}
          onClick={() =>
            layout &&
            download(`${g.package}${channel ? `-${channel}` : ""}.svg`, exportSvg(svgRef.current), "image/svg+xml")
          }
        >
          Export SVG
        </button>
        <button
          type="button"
          class="small"
          onClick={() =>
            api.mermaid(catalog, g.package, channel).then(
              (text) => setMermaid({ text }),
              (error: Error) => setMermaid({ error }),
            )
          }
        >
          Mermaid
        </button>
      </div>
      {paths ? (
        <div class="paths" role="status" data-testid="paths">
          {paths.heads.length === 0 ? (
            <span>
              No upgrade path from {from} to {channel ? `the head of ${channel}` : "a channel head"}.
            </span>
          ) : (
            paths.heads.map((h) => (
              <div key={h.name}>
                From <strong>{from}</strong> to head <strong>{h.name}</strong>:{" "}
                <strong data-testid="hops">{h.hops}</strong> hop{h.hops === 1 ? "" : "s"} ({h.path.join(" → ")});{" "}
                {paths.hops.size} bundles and {paths.edges.size} edges on upgrade paths are highlighted.
              </div>
            ))
          )}{" "}
          <button type="button" class="small" onClick={() => q({ from: undefined })}>
            Clear
          </button>
        </div>
      ) : null}
      {g.compared ? <Compared g={g} /> : null}
      {ranged ? (
        "error" in ranged ? (
          <div class="error" role="alert" data-testid="range">
            Version range {JSON.stringify(range)}: {ranged.error}
          </div>
        ) : (
          <div class="paths" role="status" data-testid="range">
            {ranged.names.size === 0
              ? `Version range ${range}: no bundle of this graph is in it.`
              : `Version range ${range}: ${ranged.names.size} of ` +
                `${g.nodes.filter((n) => n.version).length} bundles are in it (outlined).`}{" "}
            <button type="button" class="small" onClick={() => q({ range: undefined })}>
              Clear
            </button>
          </div>
        )
      ) : null}
      {g.warnings.map((w) => (
        <div class="warning" key={w}>
          {w}
        </div>
      ))}
      <div class="graph-area">
        <div
          ref={viewportRef}
          class="graph"
          role="img"
          aria-label={
            `upgrade graph of ${g.package}${channel ? `, channel ${channel}` : ""}: ` +
            `${g.nodes.length} bundles, ${shownEdges.length} edges`
          }
          data-testid="graph"
          tabIndex={0}
          onWheel={(e) => {
            e.preventDefault();
            const r = (e.currentTarget as HTMLDivElement).getBoundingClientRect();
            zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
          }}
          onPointerDown={(e) => {
            if ((e.target as Element).closest(".node")) return;
            drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
            (e.currentTarget as HTMLDivElement).setPointerCapture(e.pointerId);
          }}
          onPointerMove={(e) => {
            const d = drag.current;
            if (!d) return;
            moved();
            setView((v) => ({ ...v, x: d.vx + e.clientX - d.x, y: d.vy + e.clientY - d.y }));
          }}
          onPointerUp={() => (drag.current = undefined)}
          onKeyDown={(e) => {
            const step = 40;
            const pan = (dx: number, dy: number): void => {
              moved();
              setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
            };
            if (e.key === "+" || e.key === "=") zoomAt(1.2, 300, 200);
            else if (e.key === "-") zoomAt(1 / 1.2, 300, 200);
            else if (e.key === "ArrowLeft") pan(step, 0);
            else if (e.key === "ArrowRight") pan(-step, 0);
            else if (e.key === "ArrowUp") pan(0, step);
            else if (e.key === "ArrowDown") pan(0, -step);
            else return;
            e.preventDefault();
          }}
        >
          {layout ? (
            <svg
              ref={svgRef}
              class={`graph-svg${paths ? " highlighting" : ""}${ranged && "names" in ranged ? " ranging" : ""}`}
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
        {sel ? (
          <aside class="node-detail" data-testid="node-detail" aria-label={`bundle ${sel.name}`}>
            <h3>{sel.name}</h3>
            <dl>
              <dt>Version</dt>
              <dd>{sel.version || "(not in the catalog)"}</dd>
              <dt>Channels</dt>
              <dd>{sel.channels.join(", ") || "(none: only referenced)"}</dd>
              {sel.heads.length > 0 ? (
                <>
                  <dt>Head of</dt>
                  <dd>{sel.heads.join(", ")}</dd>
                </>
              ) : null}
              {sel.deprecated ? (
                <>
                  <dt>Deprecated</dt>
                  <dd>yes</dd>
                </>
              ) : null}
              <dt>Upgrades to</dt>
              <dd>
                {g.edges
                  .filter((e) => e.from === sel.name)
                  .map((e) => `${e.to} (${e.kind})`)
                  .join(", ") || "none"}
              </dd>
              <dt>Upgraded from</dt>
              <dd>
                {g.edges
                  .filter((e) => e.to === sel.name)
                  .map((e) => `${e.from} (${e.kind})`)
                  .join(", ") || "none"}
              </dd>
            </dl>
            <button type="button" class="small" onClick={() => q({ from: sel.name })}>
              Upgrade paths from here
            </button>{" "}
            <a
              href={
                `#/c/${encodeURIComponent(catalog)}/p/${encodeURIComponent(g.package)}` +
                `?tab=bundles&bundle=${encodeURIComponent(sel.name)}`
              }
            >
              Bundle details
            </a>{" "}
            <button type="button" class="small" onClick={() => q({ node: undefined })}>
              Close
            </button>
          </aside>
        ) : null}
      </div>
      {mermaid ? (
        <div class="mermaid-out" data-testid="mermaid">
          {mermaid.error ? (
            <ErrorBox error={mermaid.error} />
          ) : (
            <>
              <div class="blob-bar">
                <strong>Mermaid (as opcat render-graph prints it)</strong>
                <CopyButton text={() => mermaid.text ?? ""} />
                <button
                  type="button"
                  class="small"
                  onClick={() =>
                    download(`${g.package}${channel ? `-${channel}` : ""}.mmd`, mermaid.text ?? "", "text/plain")
                  }
                >
                  Download
                </button>
                <button type="button" class="small" onClick={() => setMermaid(undefined)}>
                  Close
                </button>
              </div>
              <pre class="blob-text" tabIndex={0}>
                {mermaid.text}
              </pre>
            </>
          )}
        </div>
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
