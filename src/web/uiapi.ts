/**
 * The web UI of `opcat serve` ([ui.md](../../docs/ui.md)): its static assets (built by Vite into dist/ui) and the
 * JSON endpoints it reads, all derived from the store's current revisions:
 *
 *   GET /                                               the UI (index.html); GET /assets/*  its files
 *   GET /ui/api/catalogs                                catalogs served, with counts
 *   GET /ui/api/catalogs/<c>/packages?q=&in=&offset=&limit=
 *                                                       package summaries: searched (q in all, name, keyword
 *                                                       or api) and paged on the server, with counts
 *   GET /ui/api/catalogs/<c>/packages/<p>               every blob of one package (its JSON lines as served)
 *   GET /ui/api/catalogs/<c>/packages/<p>/icon          the package icon (image types only)
 *   GET /ui/api/catalogs/<c>/packages/<p>/mermaid?channel=&minimumEdge=
 *                                                       opm's render-graph Mermaid text (src/fbc/mermaid.ts)
 *   GET /ui/api/catalogs/<c>/packages/<p>/graph?channel=&layout=1&hide=  the upgrade graph (no channel:
 *                                                       the default channel; * or empty: all): bundles and
 *                                                       replaces/skips/skipRange edges; with layout=1 also
 *                                                       positions and edge paths (graphlayout.ts), without
 *                                                       the hidden edge kinds
 *   GET /ui/api/config                                   what this server offers: {cluster: boolean}
 *   GET /ui/api/status                                   the server's memory now (RSS, heap), for the status line
 *   GET|POST /ui/api/cluster/…                           the cluster pages (clusterui.ts), with --kubeconfig
 *   GET /ui/api/catalogs/<c>/changes                     what the last reload changed (graph?compare=previous draws it)
 *   POST /ui/api/render-template {template, catalog?}   renders a basic/semver/graph template with the
 *                                                       catalog as the (offline) --reuse source
 *
 * The routes are a table (routes.ts), one view module per page (views/), the HTTP helpers and the one
 * error class in http.ts, the static files in assets.ts.
 *
 * Every answer carries a strict Content-Security-Policy (scripts and styles from this origin only,
 * no inline code, no framing), `X-Content-Type-Options: nosniff` and no-referrer. Summaries are
 * computed once per revision. Errors are JSON `{"error": {"code", "message"}}` like the resolver API.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CatalogStore } from "../serve/store.js";
import { defaultUiAssetsDir, UiAssets } from "./assets.js";
import type { ClusterUi, ClusterUiOptions } from "./clusterui.js";
import { GraphLayouter } from "./graphlayout.js";
import { HttpError, sendJson } from "./http.js";
import { dispatch, pathSegments } from "./routes.js";
import type { UiContext } from "./views/context.js";

export { defaultUiAssetsDir } from "./assets.js";
export { UI_CSP } from "./http.js";
export { packageList } from "./views/catalogs.js";
export { catalogChanges } from "./views/changes.js";
export { graphDiff, graphUnion, packageGraph } from "./views/graph.js";
export { packageDetail, packageMermaid } from "./views/package.js";

export const UI_API_PREFIX = "/ui/api/";

export interface UiOptions {
  /** Cluster pages (Operators, Instances, approvals) from this kubeconfig; none without it. */
  cluster?: ClusterUiOptions;
  /** Directory of the built UI (default: dist/ui of this package). */
  assetsDir?: string;
  /** Largest template accepted by POST /ui/api/render-template, in bytes (default 1 MiB). */
  maxRequestBytes?: number;
  /** Receives one entry per 500 answer with the error behind it (the client only reads "internal error"). */
  errorLog?: (entry: Record<string, unknown>) => void;
}

/** The UI's routes; `handle` answers them and returns false for any other path. */
export class UiHandler {
  readonly #assets: UiAssets;
  readonly #ctx: UiContext;
  #warmed = false;
  readonly #errorLog: ((entry: Record<string, unknown>) => void) | undefined;

  constructor(store: CatalogStore, opts: UiOptions = {}) {
    this.#assets = new UiAssets(opts.assetsDir ?? defaultUiAssetsDir());
    this.#errorLog = opts.errorLog;
    const cluster = opts.cluster;
    // the Kubernetes client loads with the first cluster request, not with serve
    let clusterUi: Promise<{ ui: ClusterUi; failure: (e: unknown) => HttpError }> | undefined;
    this.#ctx = {
      store,
      layouter: new GraphLayouter(),
      maxRequestBytes: opts.maxRequestBytes ?? 1024 * 1024,
      cluster,
      clusterUi: () =>
        (clusterUi ??= import("./clusterui.js").then((m) => ({
          ui: new m.ClusterUi(cluster ?? {}),
          failure: m.clusterFailure,
        }))),
    };
  }

  /** Whether the built UI is present (`npm run build` writes it). */
  available(): boolean {
    return this.#assets.available();
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean {
    if (!path.startsWith(UI_API_PREFIX)) return this.#assets.handle(req, res, path);
    const method = req.method ?? "GET";
    // someone is using the UI: have the graph layout engine ready before a graph is asked for
    if (!this.#warmed) {
      this.#warmed = true;
      this.#ctx.layouter.warm();
    }
    const rest = path.slice(UI_API_PREFIX.length);
    const answer = async (): Promise<void> => {
      const parts = pathSegments(rest);
      await dispatch(this.#ctx, { req, res, method, parts, rest, params: new URLSearchParams(query) });
    };
    answer().catch((e: unknown) => {
      if (e instanceof HttpError) return sendJson(res, e.status, { error: { code: e.code, message: e.message } });
      this.#errorLog?.({
        level: "error",
        msg: "internal error",
        method,
        path,
        error: e instanceof Error ? (e.stack ?? e.message) : String(e),
      });
      if (!res.headersSent) sendJson(res, 500, { error: { code: "SERVE_UI_INTERNAL", message: "internal error" } });
      else res.destroy();
    });
    return true;
  }
}
