import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { goBase64ErrorOffset as base64ErrorOffset } from "../gojson/base64.js";
import { decodeBundle, decodeChannel, decodePackage, decodeStdBase64, DecodeError } from "./decode.js";

test("base64 errors report Go's offsets", () => {
  // expectations produced by Go's base64.StdEncoding.DecodeString
  const cases: [string, number][] = [
    ["abc", 0],
    ["abcdabc", 4],
    ["ab=d", 2],
    ["abcd=", 4],
    ["ab==", -1],
    ["ab=", 3],
    ["a===", 1],
    ["ab\ncd", -1],
    ["abc*", 3],
    ["abcd\nab==\n", -1],
    ["ab==cd", 4],
    ["abc=x", 4],
  ];
  for (const [s, off] of cases) assert.equal(base64ErrorOffset(s), off, JSON.stringify(s));
  assert.throws(() => decodeStdBase64("abc*"), new DecodeError("illegal base64 data at input byte 3"));
  assert.deepEqual([...decodeStdBase64("aGk=\r\n")], [104, 105]);
  fc.assert(
    fc.property(fc.uint8Array(), (bytes) => {
      const b64 = Buffer.from(bytes).toString("base64");
      return (
        base64ErrorOffset(b64) === -1 && Buffer.compare(Buffer.from(decodeStdBase64(b64)), Buffer.from(bytes)) === 0
      );
    }),
  );
});

test("type errors carry Go's struct field path", () => {
  // expectations produced by Go's encoding/json with the same struct shapes
  const cases: [() => unknown, string][] = [
    [
      () => decodeChannel({ schema: "olm.channel", entries: [{ name: 1 }] }),
      "json: cannot unmarshal number into Go struct field ChannelEntry.entries.name of type string",
    ],
    [
      () => decodeChannel({ schema: "olm.channel", entries: ["x"] }),
      "json: cannot unmarshal string into Go struct field Channel.entries of type declcfg.ChannelEntry",
    ],
    [
      () => decodePackage({ schema: "olm.package", icon: "x" }),
      "json: cannot unmarshal string into Go struct field Package.icon of type declcfg.Icon",
    ],
    [
      () => decodePackage({ schema: "olm.package", icon: { base64data: 5 } }),
      "json: cannot unmarshal number into Go struct field Icon.icon.base64data of type []uint8",
    ],
    [
      () => decodeChannel({ schema: "olm.channel", entries: [{ skips: [1] }] }),
      "json: cannot unmarshal number into Go struct field ChannelEntry.entries.skips of type string",
    ],
    [
      () => decodeChannel({ schema: "olm.channel", entries: {} }),
      "json: cannot unmarshal object into Go struct field Channel.entries of type []declcfg.ChannelEntry",
    ],
    [
      () => decodePackage({ schema: "olm.package", name: {} }),
      "json: cannot unmarshal object into Go struct field Package.name of type string",
    ],
    [
      () => decodeBundle({ schema: "olm.bundle", relatedImages: {} }),
      "json: cannot unmarshal object into Go struct field Bundle.relatedImages of type []declcfg.RelatedImage",
    ],
    [
      () => decodePackage({ schema: "olm.package", icon: { base64data: "abc" } }),
      "illegal base64 data at input byte 0",
    ],
  ];
  for (const [fn, msg] of cases) assert.throws(fn, new DecodeError(msg));
});

test("field names match case-insensitively, the last in sorted order wins; unknown fields are dropped", () => {
  const p = decodePackage({ Schema: "olm.package", NAME: "a", name: "b", DefaultChannel: "stable", extra: 1 });
  assert.equal(p.name, "b"); // "NAME" < "name"
  assert.equal(p.defaultChannel, "stable");
  assert.equal((p as unknown as Record<string, unknown>).extra, undefined);
  const c = decodeChannel({ schema: "olm.channel", name: "x", package: "p" });
  assert.equal(c.entries, null);
  const c2 = decodeChannel({
    schema: "olm.channel",
    name: "x",
    package: "p",
    entries: [null, { name: "a", skips: null }],
  });
  assert.deepEqual(c2.entries, [
    { name: "", replaces: "", skips: [], skipRange: "" },
    { name: "a", replaces: "", skips: [], skipRange: "" },
  ]);
  const b = decodeBundle({ schema: "olm.bundle", name: null, properties: [{ type: "t" }, { type: "u", value: null }] });
  assert.equal(b.name, "");
  assert.equal(b.properties[0].value.isMissing, true);
  assert.equal(b.properties[1].value.text, "null");
});

test("the long s and the Kelvin sign fold into field names as in Go's encoding/json (checked with Go 1.26)", () => {
  // Go: {"propertieſ": [...]} fills Bundle.Properties, {"PROPERTIEſ": [{"tyPe": ...}]} too,
  // {"relatedImageſ": [{"imaGe": ...}]} fills RelatedImages, {"ſchema": ...} fills Schema;
  // "propertiés" matches nothing.
  const b = decodeBundle({ schema: "olm.bundle", "propertie\u017f": [{ type: "t", value: 1 }] });
  assert.deepEqual(
    b.properties.map((p) => [p.type, p.value.text]),
    [["t", "1"]],
  );
  const b2 = decodeBundle({ schema: "olm.bundle", "PROPERTIE\u017f": [{ tyPe: "t", value: 1 }] });
  assert.deepEqual(
    b2.properties.map((p) => [p.type, p.value.text]),
    [["t", "1"]],
  );
  const b3 = decodeBundle({ schema: "olm.bundle", "relatedImage\u017f": [{ name: "n", imaGe: "i" }] });
  assert.deepEqual(b3.relatedImages, [{ name: "n", image: "i" }]);
  assert.equal(decodeBundle({ "\u017fchema": "olm.bundle" }).schema, "olm.bundle");
  assert.deepEqual(decodeBundle({ schema: "olm.bundle", "properti\u00e9s": [{ type: "t" }] }).properties, []);
  assert.equal(
    decodePackage({ schema: "olm.package", name: "p", defaultChannel: "a", "defaultChannel\u212a": "x" })
      .defaultChannel,
    "a",
  );
});

test("decodeBundle's fast path gives exactly what the Go-exact decoder gives, errors included", async () => {
  const { decodeBundle, decodeBundleExact } = await import("./decode.js");
  const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer(), fc.boolean());
  const value: fc.Arbitrary<unknown> = fc.oneof(
    scalar,
    fc.array(scalar, { maxLength: 2 }),
    fc.dictionary(fc.constantFrom("a", "data"), scalar, { maxKeys: 2 }),
  );
  const keyed = (keys: string[], val: fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> =>
    fc.dictionary(fc.constantFrom(...keys), val, { maxKeys: 4 });
  const property = fc.oneof(
    keyed(["type", "value", "Type", "VALUE", "other"], fc.oneof(fc.constantFrom("olm.package", "olm.gvk"), value)),
    fc.constant(null),
    fc.integer(),
  );
  const related = fc.oneof(
    keyed(["name", "image", "Image", "x"], fc.oneof(fc.string({ maxLength: 3 }), fc.constant(null), fc.integer())),
    fc.constant(null),
  );
  const noisy = fc.dictionary(
    fc.constantFrom(
      "schema",
      "name",
      "package",
      "image",
      "properties",
      "relatedImages",
      "Name",
      "relatedimages",
      "PROPERTIES",
      "extra",
      "propertie\u017f",
      "\u017fchema",
    ),
    fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.constant(null),
      fc.integer(),
      fc.array(property, { maxLength: 3 }),
      fc.array(related, { maxLength: 3 }),
    ),
    { maxKeys: 7 },
  );
  const str = fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null));
  const wellFormed = fc.record(
    {
      schema: str,
      name: str,
      package: str,
      image: str,
      properties: fc.oneof(
        fc.constant(null),
        fc.array(fc.record({ type: str, value }, { requiredKeys: [] }), { maxLength: 3 }),
      ),
      relatedImages: fc.oneof(
        fc.constant(null),
        fc.array(fc.record({ name: str, image: str }, { requiredKeys: [] }), { maxLength: 3 }),
      ),
      extra: value,
    },
    { requiredKeys: [] },
  );
  // Well-formed blobs (the fast path) and the same with one disturbing key or element (the exact path).
  const disturbed = fc
    .tuple(
      wellFormed,
      fc.constantFrom(
        "Name",
        "relatedimages",
        "IMAGE",
        "schema",
        "properties",
        "relatedImages",
        "relatedImage\u017f",
        "propertie\u017f",
      ),
      fc.oneof(value, fc.array(property, { maxLength: 2 }), fc.array(related, { maxLength: 2 })),
    )
    .map(([b, k, v]) => ({ ...b, [k]: v }));
  const bundle = fc.oneof(wellFormed, disturbed, noisy);
  const outcome = (f: () => unknown): unknown => {
    try {
      return {
        ok: JSON.parse(
          JSON.stringify(f(), (_k, v: unknown) =>
            v instanceof Object && "isMissing" in v ? { raw: (v as unknown as { text: string }).text } : v,
          ),
        ),
      };
    } catch (e) {
      return { err: (e as Error).message };
    }
  };
  fc.assert(
    fc.property(bundle, (b) => {
      assert.deepEqual(
        outcome(() => decodeBundle(b as never)),
        outcome(() => decodeBundleExact(b as never)),
      );
    }),
    { numRuns: 3000 },
  );
});

test("parseProperties reads olm.package and olm.gvk directly only where Go's decoder would agree", async () => {
  const { parseProperties } = await import("./properties.js");
  const { decodePropertyValue } = await import("./decode.js");
  const { RawJson } = await import("./rawjson.js");
  const scalar = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constant(null),
    fc.integer(),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
  );
  const keys = ["packageName", "version", "release", "group", "kind", "PackageName", "VERSION", "Kind", "other"];
  const value = fc.oneof(
    fc.dictionary(fc.constantFrom(...keys), scalar, { maxKeys: 4 }),
    fc.record(
      {
        packageName: fc.string({ maxLength: 3 }),
        version: fc.string({ maxLength: 3 }),
        group: fc.string({ maxLength: 2 }),
        kind: fc.string({ maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    scalar,
  );
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  fc.assert(
    fc.property(fc.constantFrom("olm.package", "olm.gvk"), value, (type, v) => {
      let expected: unknown;
      try {
        const d = decodePropertyValue(type, v as never);
        expected =
          type === "olm.package"
            ? {
                packages: [{ packageName: str(d.packageName), version: str(d.version), release: str(d.release) }],
                gvks: [],
              }
            : { packages: [], gvks: [{ group: str(d.group), kind: str(d.kind), version: str(d.version) }] };
      } catch (e) {
        expected = `parse property[0] of type "${type}": ${(e as Error).message}`;
      }
      let actual: unknown;
      try {
        const p = parseProperties([{ type, value: RawJson.fromValue(v as never) }]);
        actual = { packages: p.packages, gvks: p.gvks };
      } catch (e) {
        actual = (e as Error).message;
      }
      assert.deepEqual(actual, expected);
    }),
    { numRuns: 3000 },
  );
});
