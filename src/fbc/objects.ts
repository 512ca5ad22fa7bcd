/**
 * The manifests carried by a bundle's `olm.bundle.object` properties, as opm's loader exposes them
 * (readBundleObjects / extractCSV in alpha/declcfg/load.go). They are computed on demand rather than
 * while loading, because only migrations, listings and serving need them.
 */
import { encodeSortedCompact } from "../gojson/encode.js";
import { hasJsonPrefix } from "../gojson/unicode.js";
import { parseGoYamlDocument } from "../yaml/index.js";
import { decodeBundleObjectData } from "./decode.js";
import { PROPERTY_BUNDLE_OBJECT } from "./properties.js";
import type { Bundle, JsonValue } from "./types.js";

const cache = new WeakMap<Bundle, { objects: string[]; csv: string }>();

function compute(b: Bundle): { objects: string[]; csv: string } {
  let c = cache.get(b);
  if (c) return c;
  const objects = [...objectTexts(b)];
  c = { objects, csv: firstCsv(objects) };
  cache.set(b, c);
  return c;
}

/** Each `olm.bundle.object` manifest's JSON text, in property order, decoded one at a time. */
function objectTexts(b: Bundle): Generator<string> {
  return objectTextsOf(b.properties.filter((p) => p.type === PROPERTY_BUNDLE_OBJECT).map((p) => p.value.value));
}

/** The manifests' JSON texts of `olm.bundle.object` property values, in order. */
function* objectTextsOf(values: Iterable<JsonValue>): Generator<string> {
  // opm reuses one BundleObject variable across properties: a property whose value has no `data`
  // (or is null) yields the previous object's data again.
  let data: Uint8Array | null = null;
  for (const value of values) {
    const d = decodeBundleObjectData(value);
    if (d !== undefined) data = d;
    const text = data === null ? "" : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8");
    // apimachinery yaml.ToJSON: JSON is used as it is, anything else is converted from YAML.
    if (hasJsonPrefix(text)) yield text;
    else yield text === "" ? "null" : encodeSortedCompact(parseGoYamlDocument(text)).replace(/[<>&]/g, htmlEscape);
  }
}

/** The first ClusterServiceVersion among manifests' JSON texts, or "" (opm's extractCSV). */
function firstCsv(objects: Iterable<string>): string {
  for (const o of objects) if (kindOf(o) === "ClusterServiceVersion") return o;
  return "";
}

/** The JSON text of the ClusterServiceVersion among `olm.bundle.object` property values, or "". */
export function csvJsonOfObjectValues(values: Iterable<JsonValue>): string {
  return firstCsv(objectTextsOf(values));
}

/**
 * {@link bundleCsvJson} without keeping the bundle's decoded manifests (for one look at the CSV, as
 * the resolver's minimum Kubernetes version: a catalog's decoded manifests are as large as the catalog).
 */
export function bundleCsvJsonOnce(b: Bundle): string {
  return cache.get(b)?.csv ?? firstCsv(objectTexts(b));
}

/** opm reads each object with a YAML parser (a superset of JSON); objects it cannot read are skipped. */
function kindOf(text: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    try {
      v = parseGoYamlDocument(text);
    } catch {
      return undefined;
    }
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as { kind?: unknown }).kind : undefined;
}

function htmlEscape(c: string): string {
  return c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026";
}

/** The JSON text of every `olm.bundle.object` manifest, in property order (opm's `Bundle.Objects`). */
export function bundleObjects(b: Bundle): string[] {
  return compute(b).objects;
}

/** The JSON text of the bundle's ClusterServiceVersion object, or "" (opm's `Bundle.CsvJSON`). */
export function bundleCsvJson(b: Bundle): string {
  return compute(b).csv;
}

/** Forgets cached manifests (call after changing a bundle's properties). */
export function invalidateBundleObjects(b: Bundle): void {
  cache.delete(b);
}
