/**
 * Container images: references (Docker reference grammar as opm validates pull specs), a registry
 * client (OCI distribution API, auth, TLS, mirrors), OCI layouts, a content-addressed pull cache with
 * safe unpacking, opm's classification of render references, and image building.
 */
export {
  ImageReferenceError,
  type ImageReference,
  parseNormalizedNamed,
  tryParseNormalizedNamed,
  parseReference,
  tryParseReference,
  parseNamed,
  validatePullSpec,
} from "./reference.js";
export { ImageError } from "./errors.js";
export { lookupCredentials, authFilePaths, type Credentials, type AuthLookupOptions } from "./auth.js";
export {
  loadRegistriesConf,
  parseRegistriesConf,
  pullSources,
  type RegistriesConf,
  type RegistryEntry,
  type RegistryMirror,
} from "./registries.js";
export { checkTlsFlags, defaultCacheDir } from "./access.js";
export { RegistryClient, mapPool, type RegistryOptions, type RepoTarget } from "./registry.js";
export {
  parseManifest,
  type Descriptor,
  type ImageConfig,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from "./manifest.js";
export { BlobStore, parseLayoutRef, resolveLayoutRef, tagInLayout, type LayoutRef } from "./store.js";
export {
  getImage,
  openLayoutImage,
  pullImage,
  unpackImage,
  type PullOptions,
  type PullProgress,
  type PulledImage,
} from "./pull.js";
export { LABEL_BUNDLE_PACKAGE, LABEL_CONFIGS, LABEL_DATABASE } from "./labels.js";
export { classifyImage } from "./classify.js";
// The public entry keeps what moved to src/action (opening references, the catalog recipe): the
// package's `opcat/image` API is unchanged; no module of src/image imports them.
export {
  renderReference,
  resolveRenderRef,
  type RenderRefKind,
  type ResolvedRenderRef,
  type ResolveRenderRefOptions,
} from "../action/reference.js";
export {
  assembleImage,
  buildBundleImage,
  buildCatalogImage,
  CATALOG_CMD,
  CATALOG_ENTRYPOINT,
  onBaseImage,
  outputImage,
  pushImage,
  withBaseImage,
  writeToLayout,
  type BaseImage,
  type BuildOptions,
  type BuiltImage,
} from "./build.js";
export { DEFAULT_OPM_IMAGE, generateDockerfile, parseExtraLabels, type DockerfileOptions } from "./dockerfile.js";
export {
  buildFromConfig,
  parseCatalogBuildConfig,
  type BuildFromConfigOptions,
  type BuildFromConfigResult,
  type CatalogBuildConfig,
} from "../action/buildconfig.js";
export {
  buildOpcatImage,
  IMAGE_OPCAT_DIR,
  IMAGE_UID,
  LABEL_OPCAT_RUNTIME,
  productionDependencies,
  type OpcatImageOptions,
} from "./runtime.js";
