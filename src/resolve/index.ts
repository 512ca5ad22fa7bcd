/**
 * Dependency resolution over File-Based Catalogs (Deppy's, docs/cluster.md): catalogs with priorities,
 * Inputs and InputClasses, installed operators and a described cluster → a resolveset.
 */
export {
  CatalogSet,
  channelOrder,
  operandRefs,
  sortChannel,
  supports,
  type ChannelEdge,
  type Entity,
  type NamedCatalog,
  type OperandRefs,
} from "./catalog.js";
export {
  decodeOperandBlob,
  decodeOperandReference,
  operandProblems,
  SCHEMA_OPERAND,
  SCHEMA_RELATED_IMAGES,
  type OperandBlob,
  type OperandEntry,
  type OperandImage,
  type OperandReference,
} from "./operands.js";
export {
  DEFAULT_INPUT_CLASSES,
  parseInputDocuments,
  type ClusterDescription,
  type Input,
  type InputClass,
  type InputClassParameters,
  type InputConstraint,
  type InputDocuments,
  type InstalledOperator,
} from "./inputs.js";
export { compileCel, compileConstraint, dependenciesOf, type Predicate } from "./predicates.js";
export { catalogImages, query, resolveSetImages, type ImageUse, type QueryMatch } from "./query.js";
export { forEachSlimLineForResolution, slimCatalogChunksForResolution, slimCatalogForResolution } from "./slim.js";
export { resolveSetText } from "./text.js";
export {
  resolve,
  type Condition,
  type InputStatus,
  type InstalledStatus,
  type InstanceReference,
  type InstanceStatus,
  type OperandInstanceReference,
  type ResolvedOperand,
  type ResolveRequest,
  type ResolveSet,
  type ResolvedBundle,
  type UpdateOptions,
} from "./resolver.js";
