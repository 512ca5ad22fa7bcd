/**
 * What the UI API's views are given: the served catalogs, the graph layouter, the request limits and
 * the cluster pages (loaded on first use), and one request with its decoded path segments.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CatalogRevision } from "../../serve/revision.js";
import type { CatalogStore } from "../../serve/store.js";
import type { ClusterUi, ClusterUiOptions } from "../clusterui.js";
import type { GraphLayouter } from "../graphlayout.js";
import { HttpError } from "../http.js";

export interface UiContext {
  readonly store: CatalogStore;
  readonly layouter: GraphLayouter;
  /** Largest request body (POST /ui/api/render-template). */
  readonly maxRequestBytes: number;
  /** The cluster pages' options; none: the server shows no cluster. */
  readonly cluster: ClusterUiOptions | undefined;
  /** The cluster pages (the Kubernetes client loads with the first cluster request, not with serve). */
  clusterUi(): Promise<{ ui: ClusterUi; failure: (e: unknown) => HttpError }>;
}

export interface UiRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** The decoded path segments below /ui/api/. */
  readonly parts: string[];
  /** The path below /ui/api/ as sent. */
  readonly rest: string;
  readonly params: URLSearchParams;
}

/** The current revision of catalog `name`, or the 404 that says why there is none. */
export function servedRevision(ctx: UiContext, name: string): CatalogRevision {
  const rev = ctx.store.get(name);
  if (!rev)
    throw new HttpError(
      404,
      "SERVE_UI_NOT_FOUND",
      `no catalog ${JSON.stringify(name)} is ` +
        `served${ctx.store.names().includes(name) ? " (it has no valid content yet)" : ""}`,
    );
  return rev;
}

/** The 404 of a package the catalog does not have. */
export function noPackage(rev: CatalogRevision, pkg: string): HttpError {
  return new HttpError(
    404,
    "SERVE_UI_NOT_FOUND",
    `catalog ${JSON.stringify(rev.catalog)} has no package ${JSON.stringify(pkg)}`,
  );
}
