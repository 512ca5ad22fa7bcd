/**
 * opm's pretty JSON error for a catalog blob that is not an object. The stream itself (JSON or YAML
 * documents, per-blob lines) is read by the one YAMLOrJSONDecoder port, src/yaml/stream.ts.
 */
import { encodeSortedCompact, indentCompactJson } from "../gojson/encode.js";
import type { JsonValue } from "./types.js";
import { goJsonKind, goUnmarshalTypeError } from "../gojson/unmarshal.js";

/** opm's pretty JSON error for a top-level value that is not an object (pkg/prettyunmarshaler). */
export function notAnObjectMessage(value: JsonValue, rawText: string | undefined, yaml: boolean): string {
  const kind = goJsonKind(value); // never "object" here
  const data =
    rawText ??
    encodeSortedCompact(value).replace(/[<>&]/g, (c) => (c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026"));
  const base = goUnmarshalTypeError(kind, "map[string]interface {}");
  const marker = " <==";
  const pretty = indentCompactJson(data, "    ");
  // Go reports the offset after a scalar, and just after the `[` of an array.
  const msg =
    kind === "array"
      ? `${base} at offset 1 (indicated by${marker})\n${pretty.slice(0, 1)}${marker} ${pretty.slice(1)}`
      : `${base} at offset ${Buffer.byteLength(data)} (indicated by${marker})\n${pretty}${marker}`;
  return yaml ? `error unmarshaling JSON: while decoding JSON: ${msg}` : msg;
}
