/**
 * The web layer of `opcat serve`: the resolver API and the web UI's API (static files, pages, graph
 * layout, cluster pages), mounted beside the catalog server's HTTP API with `webMounts`.
 */
export { webMounts, type WebMountOptions } from "./mount.js";
export { HttpError } from "./http.js";
export {
  ResolverApi,
  DEFAULT_MAX_REQUEST_BYTES,
  QUERY_PATH,
  RESOLVE_PATH,
  type ApiAnswer,
  type ApiErrorBody,
  type ApiProblem,
  type ResolverApiOptions,
} from "./resolveapi.js";
export {
  UiHandler,
  UI_CSP,
  UI_API_PREFIX,
  defaultUiAssetsDir,
  packageList,
  packageDetail,
  packageMermaid,
  type UiOptions,
} from "./uiapi.js";
export type * from "./uitypes.js";
