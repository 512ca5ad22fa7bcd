/** encoding/json's decoding error texts (`*json.UnmarshalTypeError`), the one place that builds them. */
import type { JsonValue } from "./value.js";

/** The JSON kind Go names in an UnmarshalTypeError's Value: string, number, bool, array, object (null for null). */
export function goJsonKind(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "bool";
    default:
      return "object";
  }
}

/** Where a type error happened: Go's UnmarshalTypeError Struct and Field (the dotted path of JSON names). */
export interface GoFieldContext {
  struct: string;
  field: string;
}

/**
 * `(*json.UnmarshalTypeError).Error()`: `json: cannot unmarshal <value> into Go struct field <Struct>.<Field>
 * of type <type>` inside a struct, `json: cannot unmarshal <value> into Go value of type <type>` otherwise.
 * `value` is the JSON kind (see {@link goJsonKind}) or Go's wider description (`number 1.5`).
 */
export function goUnmarshalTypeError(value: string, goType: string, at?: GoFieldContext): string {
  return at !== undefined
    ? `json: cannot unmarshal ${value} into Go struct field ${at.struct}.${at.field} of type ${goType}`
    : `json: cannot unmarshal ${value} into Go value of type ${goType}`;
}

/** The parts of a text built by {@link goUnmarshalTypeError} without a field context, or undefined. */
export function parseGoValueTypeError(text: string): { value: string; goType: string } | undefined {
  const m = /^json: cannot unmarshal (.*) into Go value of type (.*)$/.exec(text);
  return m ? { value: m[1], goType: m[2] } : undefined;
}
