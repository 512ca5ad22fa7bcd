// Go-compatible YAML for opcat: the go-yaml v2 emitter used by sigs.k8s.io/yaml JSONToYAML (opm's
// `-o yaml`) and a YAML 1.1 loader with the semantics of sigs.k8s.io/yaml YAMLToJSON.
export { toGoYaml, type JsonValue } from "./emit.js";
export { parseGoYamlDocument } from "./load.js";
export {
  CATALOG_SNIFF_BYTES,
  consumeWhitespaceLine,
  decodeStream,
  firstStreamItem,
  firstYamlDocument,
  forEachStreamItem,
  forEachYamlDocument,
  guessJsonStream,
  type SeparatorError,
  type StreamBlob,
  type StreamFailure,
  type StreamItem,
} from "./stream.js";
export { GoYamlError } from "./errors.js";
export { goKeyLess, sortGoKeys } from "./sort.js";
export {
  resolvePlain,
  isGoTimestamp,
  isBase60Float,
  formatGoFloat,
  type Resolved,
  type ResolvedKind,
} from "./resolve.js";
