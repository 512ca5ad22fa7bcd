/**
 * src/gojson/structdecode.ts against Go: json.Unmarshal of hand-picked and random JSON texts into
 * the Go types opm decodes (declcfg, property, v1alpha1.ClusterServiceVersion, pkg/registry, and
 * apiextensions CRDs through opm's UniversalDeserializer),
 * vectors from scripts/oracle/structdecode. goUnmarshal must give Go's value or error text for
 * every vector; goDecode (over JSON.parse's value, which cannot repeat a key nor keep verbatim
 * RawMessage text) must agree wherever those two limits do not apply.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { goDecode, goSliceItems, goUnmarshal, type GoType } from "../gojson/structdecode.js";
import type { JsonValue } from "../fbc/types.js";
import {
  GO_BUNDLE,
  GO_CHANNEL,
  GO_DEPRECATION,
  GO_PACKAGE,
  GO_PROPERTY_BUNDLE_OBJECT,
  GO_PROPERTY_GVK,
  GO_PROPERTY_PACKAGE,
  GO_RELATED_IMAGE,
} from "../fbc/gotypes.js";
import { GO_CLUSTER_SERVICE_VERSION } from "../fbc/migrate.js";
import { GO_ANNOTATIONS_FILE, GO_CRD, GO_CSV_SPEC, GO_PROPERTIES_FILE } from "./gotypes.js";
import { goSlice } from "../gojson/structdecode.js";
import { formatGoFloat } from "../gojson/encode.js";

interface Vector {
  type: string;
  text: string;
  dup?: boolean;
  value?: unknown;
  error?: string;
  /** UnmarshalTypeError.Offset */
  offset?: number;
}

const vectors = JSON.parse(
  readFileSync(new URL("./testdata/structdecode-vectors.json", import.meta.url), "utf8"),
) as Vector[];

const TYPES: Record<string, GoType> = {
  "property.GVK": GO_PROPERTY_GVK,
  "property.Package": GO_PROPERTY_PACKAGE,
  "property.BundleObject": GO_PROPERTY_BUNDLE_OBJECT,
  "[]declcfg.RelatedImage": goSlice(GO_RELATED_IMAGE),
  "declcfg.Package": GO_PACKAGE,
  "declcfg.Channel": GO_CHANNEL,
  "declcfg.Bundle": GO_BUNDLE,
  "declcfg.Deprecation": GO_DEPRECATION,
  "registry.PropertiesFile": GO_PROPERTIES_FILE,
  "registry.AnnotationsFile": GO_ANNOTATIONS_FILE,
  "registry.csvSpec": GO_CSV_SPEC,
  "v1alpha1.ClusterServiceVersion": GO_CLUSTER_SERVICE_VERSION,
};
/** Types whose values hold custom Go types or a subset of Kubernetes types: the oracle prints "ok" only. */
const OK_ONLY = new Set(["registry.csvSpec", "v1alpha1.ClusterServiceVersion"]);
/** Types with custom UnmarshalJSON methods, which goDecode leaves to its caller. */
const NO_GODECODE = new Set(["v1alpha1.ClusterServiceVersion"]);

const b64 = (b: Uint8Array): string => Buffer.from(b).toString("base64");

/** The oracle's dump of a goUnmarshal value (every field, nil as null, RawMessage as {raw}). */
function dumpText(t: GoType, v: unknown): unknown {
  switch (t.kind) {
    case "string":
      return v ?? "";
    case "bool":
      return v ?? false;
    case "int":
      return v ?? 0;
    case "raw":
      return v === undefined ? null : { raw: v };
    case "bytes":
      return v === undefined ? null : b64(v as Uint8Array);
    case "slice":
      return v === undefined ? null : goSliceItems(v).map((x) => dumpText(t.elem, x));
    case "map":
      return v === undefined
        ? null
        : Object.fromEntries([...(v as Map<string, unknown>)].map(([k, x]) => [k, dumpText(t.elem, x)]));
    case "ptr":
      return v === undefined ? null : dumpText(t.elem, v);
    case "struct": {
      const o = (v ?? {}) as Record<string, unknown>;
      return Object.fromEntries(t.fields.map((f) => [f.json, dumpText(f.type, o[f.json])]));
    }
    default:
      throw new Error(`no dump for ${t.kind}`);
  }
}

/** The same dump of a goDecode value; RawMessage texts compared by their parsed value. */
function dumpValue(t: GoType, v: unknown): unknown {
  switch (t.kind) {
    case "raw":
      return v === undefined ? null : { raw: JSON.stringify(v) };
    case "bytes":
      return v === null ? null : b64(v as Uint8Array);
    case "slice":
      return v === null ? null : (v as unknown[]).map((x) => dumpValue(t.elem, x));
    case "map":
      return v === null
        ? null
        : Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, dumpValue(t.elem, x)]));
    case "ptr":
      return v === null ? null : dumpValue(t.elem, v);
    case "struct": {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(t.fields.map((f) => [f.json, dumpValue(f.type, o[f.json])]));
    }
    default:
      return v;
  }
}

/** Go's RawMessage texts in a dump, normalised to JSON.stringify of their value. */
function normaliseRaw(d: unknown): unknown {
  if (Array.isArray(d)) return d.map(normaliseRaw);
  if (d !== null && typeof d === "object") {
    const o = d as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === "raw" && typeof o.raw === "string")
      return { raw: JSON.stringify(JSON.parse(o.raw)) };
    return Object.fromEntries(keys.map((k) => [k, normaliseRaw(o[k])]));
  }
  return d;
}

test("structdecode vectors cover every type, with values and errors", () => {
  assert.ok(vectors.length > 1500);
  for (const name of [...Object.keys(TYPES), ...CRDS]) {
    assert.ok(
      vectors.some((v) => v.type === name && v.error !== undefined),
      `${name}: no error vector`,
    );
    assert.ok(
      vectors.some((v) => v.type === name && v.value !== undefined),
      `${name}: no value vector`,
    );
  }
});

const CRDS = new Set(["crd.v1", "crd.v1beta1"]);

test(
  "CRDs: goDecode case-sensitive over the sorted object, " + "as opm's UniversalDeserializer decodes them (Go vectors)",
  () => {
    let compared = 0;
    let failures = 0;
    for (const v of vectors) {
      if (!CRDS.has(v.type)) continue;
      let value: JsonValue;
      try {
        value = JSON.parse(v.text) as JsonValue;
      } catch {
        continue; // opm never gets there: the manifest fails to decode first
      }
      compared++;
      const version = v.type === "crd.v1" ? "v1" : "v1beta1";
      const r = goDecode(value, GO_CRD[version], { sortedKeys: true, caseSensitive: true });
      let have: unknown;
      if (!r.ok) have = { error: `error decoding ${version} CRD: ${r.error}` };
      else {
        const spec = (r.value as { spec: Record<string, unknown> }).spec;
        const names = spec.names as Record<string, string>;
        have = {
          value: {
            group: spec.group,
            names: { kind: names.kind, plural: names.plural },
            ...(spec.version ? { version: spec.version } : {}),
            // the oracle appends each version to a nil slice: no versions print as null
            versions: (spec.versions as unknown[] | null)?.length ? spec.versions : null,
          },
        };
      }
      const want = v.error !== undefined ? { error: v.error } : { value: v.value };
      try {
        assert.deepEqual(have, want);
      } catch {
        if (++failures <= 5) console.error(v.type, JSON.stringify(v.text), JSON.stringify(have), JSON.stringify(want));
      }
    }
    assert.ok(compared > 250, `${compared}`);
    assert.equal(failures, 0);
  },
);

test("goUnmarshal gives json.Unmarshal's value or error, with UnmarshalTypeError.Offset (Go vectors)", () => {
  let failures = 0;
  for (const v of vectors) {
    if (CRDS.has(v.type)) continue;
    const t = TYPES[v.type];
    const got = goUnmarshal(v.text, t);
    const want = v.error !== undefined ? { error: v.error, offset: v.offset } : { value: v.value };
    const have = got.ok
      ? { value: OK_ONLY.has(v.type) ? "ok" : dumpText(t, got.value) }
      : { error: got.error, offset: got.offset };
    try {
      assert.deepEqual(have, want);
    } catch {
      if (++failures <= 5) console.error(v.type, JSON.stringify(v.text), JSON.stringify(have), JSON.stringify(want));
    }
  }
  assert.equal(failures, 0);
});

test("goDecode agrees with Go on every vector without repeated keys (Go vectors)", () => {
  let failures = 0;
  let compared = 0;
  for (const v of vectors) {
    if (v.dup || NO_GODECODE.has(v.type) || CRDS.has(v.type)) continue;
    let value: JsonValue;
    let canonical = true;
    try {
      // goDecode sees numbers as json.Marshal writes them (its inputs are re-encoded by Go): a
      // literal such as 1e3 or 1.50 is only json.Unmarshal's business.
      value = JSON.parse(v.text, (_k, x: JsonValue, c?: { source?: string }) => {
        if (typeof x === "number" && c?.source !== formatGoFloat(x)) canonical = false;
        return x;
      }) as JsonValue;
    } catch {
      continue; // syntax errors are goUnmarshal's (goDecode receives parsed values)
    }
    if (!canonical) continue;
    compared++;
    const t = TYPES[v.type];
    const got = goDecode(value, t);
    const want = v.error !== undefined ? { error: v.error } : { value: normaliseRaw(v.value) };
    const have = got.ok ? { value: OK_ONLY.has(v.type) ? "ok" : dumpValue(t, got.value) } : { error: got.error };
    try {
      assert.deepEqual(have, want);
    } catch {
      if (++failures <= 5) console.error(v.type, JSON.stringify(v.text), JSON.stringify(have), JSON.stringify(want));
    }
  }
  assert.ok(compared > 1000, `${compared}`);
  assert.equal(failures, 0);
});
