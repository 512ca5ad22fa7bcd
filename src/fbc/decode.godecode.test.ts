/**
 * fbc/decode.ts keeps its own fast decoders for the hot load path; they are described with the
 * same GoType descriptions as src/gojson's general decoder (fbc/gotypes.ts) and must give exactly
 * what goDecode gives over the blob as opm reads it (members in sorted order, opm having
 * re-encoded the blob): the same values and the same error texts, for random blobs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { goDecode, type GoStructType } from "../gojson/structdecode.js";
import {
  DecodeError,
  decodeBundle,
  decodeBundleObjectData,
  decodeChannel,
  decodeDeprecation,
  decodePackage,
  decodePropertyValue,
} from "./decode.js";
import {
  GO_BUNDLE,
  GO_CHANNEL,
  GO_DEPRECATION,
  GO_PACKAGE,
  GO_PROPERTY_BUNDLE_OBJECT,
  GO_PROPERTY_TYPES,
} from "./gotypes.js";
import type { RawJson } from "./rawjson.js";
import type { JsonObject, JsonValue } from "./types.js";

type Outcome = { error: string } | { value: unknown };

function fbc(f: () => unknown): Outcome {
  try {
    return { value: f() };
  } catch (e) {
    if (e instanceof DecodeError) return { error: e.message };
    throw e;
  }
}

function general(blob: JsonValue, type: GoStructType, shape: (v: Record<string, unknown>) => unknown): Outcome {
  const r = goDecode(blob, type, { sortedKeys: true });
  return r.ok ? { value: shape(r.value as Record<string, unknown>) } : { error: r.error };
}

type G = Record<string, unknown>;
const raw = (v: unknown): string => (v === undefined ? "<missing>" : JSON.stringify(v));
const rawOf = (r: RawJson): string => (r.isMissing ? "<missing>" : JSON.stringify(r.value));
const bytes = (b: unknown): unknown => (b === null || b === undefined ? b : [...(b as Uint8Array)]);
const props = (ps: unknown): unknown => ((ps as G[] | null) ?? []).map((p) => ({ type: p.type, value: raw(p.value) }));
const fbcProps = (ps: { type: string; value: RawJson }[]): unknown =>
  ps.map((p) => ({ type: p.type, value: rawOf(p.value) }));

// Shapes both results are compared in (the fbc model's types, RawJson and bytes made comparable).
const packageShape = (g: G): unknown => ({
  schema: g.schema,
  name: g.name,
  defaultChannel: g.defaultChannel,
  description: g.description,
  properties: props(g.properties),
  icon:
    g.icon === null ? undefined : { base64data: bytes((g.icon as G).base64data), mediatype: (g.icon as G).mediatype },
});
const channelShape = (g: G): unknown => ({
  schema: g.schema,
  name: g.name,
  package: g.package,
  entries: g.entries === null ? null : (g.entries as G[]).map((e) => ({ ...e, skips: e.skips ?? [] })),
  properties: props(g.properties),
});
const bundleShape = (g: G): unknown => ({
  schema: g.schema,
  name: g.name,
  package: g.package,
  image: g.image,
  properties: props(g.properties),
  relatedImages: g.relatedImages ?? [],
});
const deprecationShape = (g: G): unknown => ({ schema: g.schema, package: g.package, entries: g.entries });

const scalar = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.constantFrom("YWJj", "YQ==", "ab=c", "", "olm.package", "olm.gvk"),
  fc.constant(null),
  fc.integer({ min: -3, max: 300 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
);
const value: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "name", "image", "type", "value", "schema", "data"), tie("v"), { maxKeys: 3 }),
  ),
})).v;
const keyed = (keys: string[], val: fc.Arbitrary<JsonValue>): fc.Arbitrary<JsonValue> =>
  fc.oneof(fc.dictionary(fc.constantFrom(...keys), val, { maxKeys: 5 }), value);
const variants = (names: string[]): string[] =>
  names.flatMap((n) => [
    n,
    n.toUpperCase(),
    n[0].toUpperCase() + n.slice(1),
    n.replace("s", "\u017f").replace("k", "\u212a"),
  ]);

const property = keyed(variants(["type", "value"]).concat("other"), value);
const icon = keyed(
  variants(["base64data", "mediatype"]),
  fc.oneof(scalar, fc.array(fc.integer({ min: -1, max: 256 }), { maxLength: 3 })),
);
const entry = keyed(
  variants(["name", "replaces", "skips", "skipRange"]),
  fc.oneof(value, fc.array(scalar, { maxLength: 3 })),
);
const reference = keyed(variants(["schema", "name"]), value);
const depEntry = keyed(variants(["reference", "message"]), fc.oneof(value, reference));
const related = keyed(variants(["name", "image"]), value);
const listOf = (a: fc.Arbitrary<JsonValue>): fc.Arbitrary<JsonValue> => fc.oneof(fc.array(a, { maxLength: 3 }), value);

const blob = (fields: Record<string, fc.Arbitrary<JsonValue>>): fc.Arbitrary<JsonObject> =>
  fc
    .array(
      fc.oneof(
        ...Object.entries(fields).map(
          ([k, a]) => fc.tuple(fc.constantFrom(...variants([k])), a) as fc.Arbitrary<[string, JsonValue]>,
        ),
        fc.tuple(fc.constantFrom("zz", "other"), value) as fc.Arbitrary<[string, JsonValue]>,
      ),
      { maxLength: 6 },
    )
    .map((pairs) => Object.fromEntries(pairs) as JsonObject);

const str = fc.oneof(fc.string({ maxLength: 3 }), value);
const packageBlob = blob({
  schema: str,
  name: str,
  defaultChannel: str,
  icon: fc.oneof(icon, value),
  description: str,
  properties: listOf(property),
});
const channelBlob = blob({
  schema: str,
  name: str,
  package: str,
  entries: listOf(entry),
  properties: listOf(property),
});
const bundleBlob = blob({
  schema: str,
  name: str,
  package: str,
  image: str,
  properties: listOf(property),
  relatedImages: listOf(related),
});
const deprecationBlob = blob({ schema: str, package: str, entries: listOf(depEntry) });

const RUNS = { numRuns: 3000 };

test("decodePackage equals goDecode into declcfg.Package (values and errors)", () => {
  fc.assert(
    fc.property(packageBlob, (b) => {
      const want = general(b, GO_PACKAGE, packageShape);
      const got = fbc(() => {
        const p = decodePackage(b);
        const { loc: _loc, icon: i, properties, ...rest } = p;
        return {
          ...rest,
          properties: fbcProps(properties),
          icon: i === undefined ? undefined : { base64data: bytes(i.base64data), mediatype: i.mediatype },
        };
      });
      assert.deepEqual(got, want);
    }),
    RUNS,
  );
});

test("decodeChannel equals goDecode into declcfg.Channel (values and errors)", () => {
  fc.assert(
    fc.property(channelBlob, (b) => {
      const want = general(b, GO_CHANNEL, channelShape);
      const got = fbc(() => {
        const { loc: _loc, properties, ...rest } = decodeChannel(b);
        return { ...rest, properties: fbcProps(properties) };
      });
      assert.deepEqual(got, want);
    }),
    RUNS,
  );
});

test("decodeBundle (fast and exact paths) equals goDecode into declcfg.Bundle (values and errors)", () => {
  fc.assert(
    fc.property(bundleBlob, (b) => {
      const want = general(b, GO_BUNDLE, bundleShape);
      const got = fbc(() => {
        const { loc: _loc, properties, ...rest } = decodeBundle(b);
        return { ...rest, properties: fbcProps(properties) };
      });
      assert.deepEqual(got, want);
    }),
    RUNS,
  );
});

test("decodeDeprecation equals goDecode into declcfg.Deprecation (values and errors)", () => {
  fc.assert(
    fc.property(deprecationBlob, (b) => {
      const want = general(b, GO_DEPRECATION, deprecationShape);
      const got = fbc(() => {
        const { loc: _loc, ...rest } = decodeDeprecation(b);
        return rest;
      });
      assert.deepEqual(got, want);
    }),
    RUNS,
  );
});

test("decodePropertyValue and decodeBundleObjectData give goDecode's errors for every known property type", () => {
  const types = [...GO_PROPERTY_TYPES.keys()];
  const fieldsOf = (t: string): string[] => (GO_PROPERTY_TYPES.get(t) as GoStructType).fields.map((f) => f.json);
  const arb = fc
    .constantFrom(...types)
    .chain((t) =>
      fc.tuple(
        fc.constant(t),
        keyed(
          variants(fieldsOf(t)),
          fc.oneof(
            value,
            fc.dictionary(fc.string({ maxLength: 2 }), scalar, { maxKeys: 2 }),
            fc.array(value, { maxLength: 2 }),
          ),
        ),
      ),
    );
  fc.assert(
    fc.property(arb, ([t, v]) => {
      const want = goDecode(v, GO_PROPERTY_TYPES.get(t) as GoStructType, { sortedKeys: true });
      const got = fbc(() => decodePropertyValue(t, v));
      assert.deepEqual("error" in got ? got.error : undefined, want.ok ? undefined : want.error);
      if (t === "olm.bundle.object" && want.ok) {
        const data = (want.value as G).data;
        const mine = fbc(() => decodeBundleObjectData(v));
        assert.deepEqual(bytes((mine as { value: unknown }).value ?? null), bytes(data));
      }
    }),
    RUNS,
  );
  assert.equal(GO_PROPERTY_TYPES.get("olm.bundle.object"), GO_PROPERTY_BUNDLE_OBJECT);
});
