/**
 * Serving catalogs: catalogd's HTTP content API and opm's gRPC registry API over named catalogs
 * that reload atomically.
 */
export {
  CatalogStore,
  dns1123SubdomainErrors,
  parseCatalogArg,
  type CatalogStoreOptions,
  type ReloadOutcome,
  type StoreEvent,
} from "./store.js";
export {
  addImageCatalog,
  ImageCatalog,
  imageCatalogName,
  isImageArgument,
  parseGoDuration,
  parseImageCatalogArg,
  type ImageCatalogOptions,
  type ImageSourceEvent,
} from "./imagesource.js";
export { CatalogRevision, type LoadRevisionOptions, type LoadRevisionResult } from "./revision.js";
export { createCatalogHandler, startHttpServer, type HttpServeOptions, type HttpServerHandle } from "./http.js";
export {
  CATALOG_METADATA_KEY,
  createGrpcServer,
  loadServiceDefinitions,
  registryProtoPath,
  startGrpcServer,
  type GrpcServeOptions,
  type GrpcServerHandle,
} from "./grpc.js";
export {
  convertBundle,
  RegistryIndex,
  type ApiBundle,
  type ApiChannel,
  type ApiChannelEntry,
  type ApiPackage,
  type RpcError,
  type RpcResult,
} from "./registry.js";
export { decodeApiBundle } from "./pb.js";
export { synthesizeCsvJson, type CsvContext } from "./csv.js";
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
