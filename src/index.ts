/**
 * opcat library API: File-Based Catalogs loaded, validated, rendered and written exactly as opm
 * does, with located, coded problems instead of first-error-only messages.
 *
 * ```ts
 * import { loadCatalog, validateCatalog, formatCatalog } from "opcat";
 * const { config, problems } = await loadCatalog("catalog/");
 * const { model, problems: invalid } = validateCatalog(config);
 * process.stdout.write(formatCatalog(config, "yaml"));
 * ```
 */
export * from "./fbc/types.js";
export { RawJson } from "./fbc/rawjson.js";
export {
  OpcatError,
  formatProblem,
  formatLocation,
  compareProblems,
  type Problem,
  type Severity,
} from "./errors/index.js";
export {
  loadCatalog,
  loadCatalogOrThrow,
  loadDirectory,
  loadFile,
  loadText,
  loadStream,
  listCatalogFiles,
  type LoadResult,
  type LoadOptions,
} from "./fbc/load.js";
export { validateCatalog, dns1123LabelErrors, parseRelease, type ValidationResult } from "./fbc/validate.js";
export {
  channelHead,
  compareModelBundles,
  versionString,
  type Model,
  type ModelPackage,
  type ModelChannel,
  type ModelBundle,
} from "./fbc/model.js";
export {
  parseProperties,
  packageProperty,
  csvMetadataOf,
  constraintsOf,
  PropertyParseError,
  type ParsedProperties,
  type PackageProperty,
  type GVKProperty,
  type PackageRequiredProperty,
  type CSVMetadata,
} from "./fbc/properties.js";
export {
  parseConstraint,
  constraintKind,
  ConstraintParseError,
  type Constraint,
  type CelConstraint,
  type GVKConstraint,
  type PackageConstraint,
  type CompoundConstraint,
} from "./fbc/constraint.js";
export { bundleObjects, bundleCsvJson } from "./fbc/objects.js";
export { normalizeForRender, type RenderOptions } from "./fbc/render.js";
export {
  migrate,
  MIGRATION_LEVELS,
  validateMigrationLevel,
  csvMetadataFromCsv,
  type MigrationLevel,
} from "./fbc/migrate.js";
export {
  formatCatalog,
  writeCatalog,
  writeJson,
  writeYaml,
  writeCatalogDirectory,
  type OutputFormat,
} from "./fbc/write.js";
export { renderMermaid } from "./fbc/mermaid.js";
export { listPackages, listChannels, listBundles } from "./fbc/list.js";
export { initPackage } from "./fbc/init.js";
export * as semver from "./semver/index.js";
export { VERSION } from "./version.js";
