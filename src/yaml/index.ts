// The one YAML entry of opcat: no module outside src/yaml imports a YAML library (test/layering.test.ts).
// One reader per documented purpose:
// * go-yaml v2 (YAML 1.1, sigs.k8s.io/yaml YAMLToJSON semantics): `parseGoYamlDocument` (load.ts on the
//   port in goyaml/) — everything opm reads: catalogs, bundle manifests, templates, resolve inputs and
//   resolvesets. Its streams go through `forEachStreamItem` / `firstStreamItem` / `firstYamlDocument`
//   (stream.ts, the one port of apimachinery's YAMLOrJSONDecoder / YAMLReader).
//   `parseGoYamlDocument(text, { strict: true })` is yaml.UnmarshalStrict (semver template: duplicate keys).
// * YAML 1.2 (`yaml` package): `parseYaml12` (yaml12.ts) — only the community pipeline's
//   release-config.yaml, which Python's ruamel.yaml reads, never opm; `stringifyYaml12` for the web UI's
//   blob viewer. Imported from yaml12.ts itself, not re-exported here: this index is loaded by every
//   catalog command, and the `yaml` package is 72 modules (src/ui also keeps the rest of src/yaml out of
//   the browser bundle that way).
// * Comment-preserving editing (`yaml` package Document API): edit.ts — `template add-bundle`.
// Writing: the go-yaml v2 emitter used by sigs.k8s.io/yaml JSONToYAML (opm's `-o yaml`), `toGoYaml`.
export { toGoYaml, type JsonValue } from "./emit.js";
export { parseGoYamlDocument } from "./load.js";
export {
  consumeWhitespaceLine,
  decodeStream,
  firstStreamItem,
  firstYamlDocument,
  forEachStreamItem,
  guessJsonStream,
  jsonFailure,
} from "./stream.js";
export { GoYamlError } from "./errors.js";
export { goKeyLess, sortGoKeys } from "./sort.js";
export {
  resolvePlain,
  isGoTimestamp,
  isBase60Float,
  formatGoFloat,
} from "./resolve.js";
