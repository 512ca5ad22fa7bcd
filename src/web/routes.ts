/**
 * The UI API's route table: each route is a path pattern below /ui/api/ (`:name` matches one
 * segment, a trailing `**` any rest), the method it takes (GET also answers HEAD; ANY leaves the
 * method to the view) and the view that answers it. `dispatch` decodes the path, answers the first
 * route that matches and, when none does, says why: 405 "use GET" for any other method, 404 for an
 * unknown catalog, else 404 "no UI API at …".
 */
import { HttpError } from "./http.js";
import { catalogsView, packagesView } from "./views/catalogs.js";
import { changesView } from "./views/changes.js";
import { clusterView, configView, statusView } from "./views/cluster.js";
import { servedRevision, type UiContext, type UiRequest } from "./views/context.js";
import { graphView } from "./views/graph.js";
import { iconView, mermaidView, packageView } from "./views/package.js";
import { renderView } from "./views/render.js";

export interface UiRoute {
  readonly path: string;
  readonly method: "GET" | "POST" | "ANY";
  readonly view: (ctx: UiContext, r: UiRequest) => void | Promise<void>;
}

/** Every page's endpoints, in the order they are tried. */
export const UI_ROUTES: readonly UiRoute[] = [
  { path: "render-template", method: "POST", view: renderView },
  { path: "config", method: "ANY", view: configView },
  { path: "status", method: "GET", view: statusView },
  { path: "cluster/**", method: "ANY", view: clusterView },
  { path: "catalogs", method: "GET", view: catalogsView },
  { path: "catalogs/:catalog/packages", method: "GET", view: packagesView },
  { path: "catalogs/:catalog/changes", method: "GET", view: changesView },
  { path: "catalogs/:catalog/packages/:package", method: "GET", view: packageView },
  { path: "catalogs/:catalog/packages/:package/graph", method: "GET", view: graphView },
  { path: "catalogs/:catalog/packages/:package/mermaid", method: "GET", view: mermaidView },
  { path: "catalogs/:catalog/packages/:package/icon", method: "GET", view: iconView },
];

function matches(pattern: string, parts: readonly string[]): boolean {
  const segs = pattern.split("/");
  if (segs[segs.length - 1] === "**") {
    const fixed = segs.slice(0, -1);
    return parts.length >= fixed.length && fixed.every((s, i) => s.startsWith(":") || s === parts[i]);
  }
  return segs.length === parts.length && segs.every((s, i) => s.startsWith(":") || s === parts[i]);
}

/** The path below /ui/api/ as segments, each percent-decoded (400 for a segment that does not decode). */
export function pathSegments(rest: string): string[] {
  return rest.split("/").map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      throw new HttpError(400, "SERVE_UI_BAD_REQUEST", `invalid path segment ${JSON.stringify(p)}`);
    }
  });
}

/** Answers one UI API request by the route table; rejects with an HttpError for the error answers. */
export async function dispatch(ctx: UiContext, r: UiRequest): Promise<void> {
  const get = r.method === "GET" || r.method === "HEAD";
  for (const route of UI_ROUTES) {
    if (!matches(route.path, r.parts)) continue;
    if (route.method === "POST" && r.method !== "POST") throw new HttpError(405, "SERVE_UI_METHOD", "use POST");
    if (route.method === "GET" && !get) throw new HttpError(405, "SERVE_UI_METHOD", "use GET");
    return route.view(ctx, r);
  }
  if (!get) throw new HttpError(405, "SERVE_UI_METHOD", "use GET");
  if (r.parts[0] === "catalogs" && r.parts.length >= 2) servedRevision(ctx, r.parts[1]);
  throw new HttpError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/${r.rest}`);
}
