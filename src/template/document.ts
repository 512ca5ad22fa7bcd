/**
 * Reading the first document of a template, in the two ways opm does:
 * - apimachinery's YAMLOrJSONDecoder (schema detection, basic template): src/yaml/stream.ts, first
 *   blob only;
 * - go-yaml v2 `UnmarshalStrict` on the whole input (semver template, through sigs.k8s.io/yaml): the
 *   first YAML document, with duplicate mapping keys reported as
 *   `yaml: unmarshal errors:\n  line N: key "k" already set in map`.
 */
import type { JsonValue } from "../fbc/types.js";
import { firstStreamItem, parseGoYamlDocument } from "../yaml/index.js";

/** The first blob as YAMLOrJSONDecoder.Decode(&json.RawMessage) gives it. */
export type FirstDocument =
  | { kind: "value"; value: JsonValue }
  /** A document without content: the RawMessage stays empty. */
  | { kind: "empty" }
  | { kind: "eof" }
  | { kind: "error"; message: string };

export function firstStreamDocument(text: string): FirstDocument {
  const first = firstStreamItem(text);
  if (first === undefined) return { kind: "eof" };
  if (first.kind === "error") return { kind: "error", message: first.message };
  return first.value === null ? { kind: "empty" } : { kind: "value", value: first.value };
}

/**
 * sigs.k8s.io/yaml.UnmarshalStrict's first step: the first document as JSON, or go-yaml's error text
 * (prefixed `error converting YAML to JSON: `).
 */
export function readStrictYaml(text: string): { ok: true; value: JsonValue } | { ok: false; error: string } {
  try {
    // like yaml.UnmarshalStrict, the go-yaml port reads the first document of the whole text
    return { ok: true, value: parseGoYamlDocument(text, { strict: true }) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}
