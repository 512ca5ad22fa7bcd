/**
 * Go `fmt` verbs applied to values decoded by encoding/json into `interface{}` (nil, bool,
 * float64, string, []interface{}, map[string]interface{}), for error messages that must read
 * exactly like opm's.
 */
import type { JsonValue } from "./value.js";
import { sortedKeys } from "./encode.js";
import { goFloatV } from "./float.js";

/** `%v` of a decoded JSON value. */
export function goV(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return goFloatV(v);
    case "string":
      return v;
    default:
      if (Array.isArray(v)) return "[" + v.map(goV).join(" ") + "]";
      return (
        "map[" +
        sortedKeys(v)
          .map((k) => `${k}:${goV(v[k])}`)
          .join(" ") +
        "]"
      );
  }
}

/** Go type name of a decoded JSON value held in an `interface{}`. */
export function goTypeName(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return "float64";
    case "string":
      return "string";
    default:
      return Array.isArray(v) ? "[]interface {}" : "map[string]interface {}";
  }
}

/** `%t` of a decoded JSON value: the bool itself, otherwise Go's `%!t(type=value)` complaint. */
export function goT(v: JsonValue | undefined): string {
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null || v === undefined) return "%!t(<nil>)";
  return `%!t(${goTypeName(v)}=${goV(v)})`;
}

/** Go's `%q` of a string (strconv.Quote). */
export { goQuote } from "./quote.js";
