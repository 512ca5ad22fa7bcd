/**
 * Serving catalogs: catalogd's HTTP content API and opm's gRPC registry API over named catalogs
 * that reload atomically. The resolver API and the web UI are the web layer's (`opcat/web`,
 * src/web), mounted beside the catalog API by `opcat serve`.
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
export {
  createCatalogHandler,
  startHttpServer,
  type HttpMount,
  type HttpServeOptions,
  type HttpServerHandle,
  type ServerCerts,
  type MountedHandler,
} from "./http.js";
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
