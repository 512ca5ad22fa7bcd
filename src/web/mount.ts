/**
 * The web layer as the catalog server mounts it (src/serve/http.ts `mounts`): the resolver API under
 * /api/ and the UI (/, /index.html, /assets/*, /favicon.*, /ui/api/*), each loaded with the first
 * request it claims, so that a server that only serves catalogs starts without them.
 */
import type { HttpMount } from "../serve/http.js";
import type { CatalogStore } from "../serve/store.js";
import type { ResolverApiOptions } from "./resolveapi.js";
import type { UiOptions } from "./uiapi.js";

export interface WebMountOptions {
  /** The resolver API (POST /api/v1/query, /api/v1/resolve): its options, or false to leave it out. Default on. */
  resolver?: ResolverApiOptions | false;
  /** The web UI: its options, or false/absent to leave it out. */
  ui?: UiOptions | false;
  /** Receives one entry per 500 answer with the error behind it (the client only reads "internal error"). */
  errorLog?: (entry: Record<string, unknown>) => void;
}

/** Paths the resolver API answers (resolveapi.ts API_PREFIX). */
const RESOLVER_PREFIX = "/api/";

/** Paths the web UI serves (uiapi.ts `handle`). */
function isUiPath(p: string): boolean {
  return (
    p.startsWith("/ui/api/") ||
    p === "/" ||
    p === "/index.html" ||
    p.startsWith("/assets/") ||
    p === "/favicon.svg" ||
    p === "/favicon.ico"
  );
}

/** The resolver API and (when asked) the UI over `store`, in the order the server tries them. */
export function webMounts(store: CatalogStore, opts: WebMountOptions = {}): HttpMount[] {
  const { errorLog, resolver, ui } = opts;
  const mounts: HttpMount[] = [];
  if (resolver !== false)
    mounts.push({
      claims: (p) => p.startsWith(RESOLVER_PREFIX),
      load: async () => {
        const api = new (await import("./resolveapi.js")).ResolverApi(store, { errorLog, ...(resolver ?? {}) });
        return { handle: (req, res, path, _query, ctx) => api.handle(req, res, path, ctx), close: () => api.close() };
      },
    });
  if (ui)
    mounts.push({
      claims: isUiPath,
      load: async () => {
        const handler = new (await import("./uiapi.js")).UiHandler(store, { errorLog, ...ui });
        return { handle: (req, res, path, query) => handler.handle(req, res, path, query) };
      },
    });
  return mounts;
}
