/**
 * The parts of the upgrade graph page around the drawing: its toolbar (edge kinds, zoom, exports),
 * the upgrade paths and version range panels, the selected bundle's details and the Mermaid text.
 */
import type { UiGraph } from "../web/uitypes.js";
import type { PathHighlight } from "./paths.js";
import { KINDS, type Kind, type Ranged } from "./graphmodel.js";
import { CopyButton, download, ErrorBox } from "./util.js";

/** Changes the page's query (undefined: leave the parameter out). */
export type SetQuery = (over: Record<string, string | undefined>) => void;

/** The Mermaid text of the graph, or why it could not be had. */
export type MermaidText = { text?: string; error?: Error };

/** The graph's toolbar: a checkbox per edge kind (with its count), the legend, zoom, fit and the exports. */
export function GraphToolbar({
  hiddenKinds,
  counts,
  q,
  zoomAt,
  fit,
  laidOut,
  exportSvg,
  mermaid,
}: {
  hiddenKinds: Set<string>;
  counts: Record<Kind, number>;
  q: SetQuery;
  zoomAt: (factor: number, cx: number, cy: number) => void;
  fit: () => void;
  laidOut: boolean;
  exportSvg: () => void;
  mermaid: () => void;
}) {
  return (
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
      <button type="button" class="small" disabled={!laidOut} onClick={exportSvg}>
        Export SVG
      </button>
      <button type="button" class="small" onClick={mermaid}>
        Mermaid
      </button>
    </div>
  );
}

/** The upgrade paths from `from` to the channel's heads, in words. */
export function PathsPanel({
  paths,
  from,
  channel,
  q,
}: {
  paths: PathHighlight;
  from: string;
  channel: string;
  q: SetQuery;
}) {
  return (
    <div class="paths" role="status" data-testid="paths">
      {paths.heads.length === 0 ? (
        <span>
          No upgrade path from {from} to {channel ? `the head of ${channel}` : "a channel head"}.
        </span>
      ) : (
        paths.heads.map((h) => <PathToHead key={h.name} from={from} head={h} paths={paths} />)
      )}{" "}
      <button type="button" class="small" onClick={() => q({ from: undefined })}>
        Clear
      </button>
    </div>
  );
}

/** The shortest upgrade path from `from` to one head, and how much of the graph is on upgrade paths. */
function PathToHead({
  from,
  head,
  paths,
}: {
  from: string;
  head: PathHighlight["heads"][number];
  paths: PathHighlight;
}) {
  const hops = <strong data-testid="hops">{head.hops}</strong>;
  return (
    <div>
      From <strong>{from}</strong> to head <strong>{head.name}</strong>: {hops} hop{head.hops === 1 ? "" : "s"} (
      {head.path.join(" → ")}); {paths.hops.size} bundles and {paths.edges.size} edges on upgrade paths are highlighted.
    </div>
  );
}

/** The version range: why it is not one, or how many bundles it admits. */
export function RangePanel({
  g,
  range,
  ranged,
  q,
}: {
  g: UiGraph;
  range: string;
  ranged: NonNullable<Ranged>;
  q: SetQuery;
}) {
  return "error" in ranged ? (
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
  );
}

/** The selected bundle: its version, channels, heads, edges, and links on. */
export function NodeDetail({
  g,
  sel,
  catalog,
  q,
}: {
  g: UiGraph;
  sel: UiGraph["nodes"][number];
  catalog: string;
  q: SetQuery;
}) {
  return (
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
  );
}

/** The graph's Mermaid text (as `opcat render-graph` prints it) with copy and download, or the error. */
export function MermaidPanel({
  mermaid,
  fileName,
  close,
}: {
  mermaid: MermaidText;
  /** The name the text is downloaded as. */
  fileName: string;
  close: () => void;
}) {
  return (
    <div class="mermaid-out" data-testid="mermaid">
      {mermaid.error ? (
        <ErrorBox error={mermaid.error} />
      ) : (
        <>
          <div class="blob-bar">
            <strong>Mermaid (as opcat render-graph prints it)</strong>
            <CopyButton text={() => mermaid.text ?? ""} />
            <button type="button" class="small" onClick={() => download(fileName, mermaid.text ?? "", "text/plain")}>
              Download
            </button>
            <button type="button" class="small" onClick={close}>
              Close
            </button>
          </div>
          <pre class="blob-text" tabIndex={0}>
            {mermaid.text}
          </pre>
        </>
      )}
    </div>
  );
}
