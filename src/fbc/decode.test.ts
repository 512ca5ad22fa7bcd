import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { base64ErrorOffset, decodeBundle, decodeChannel, decodePackage, decodeStdBase64, DecodeError } from "./decode.js";

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
      return base64ErrorOffset(b64) === -1 && Buffer.compare(Buffer.from(decodeStdBase64(b64)), Buffer.from(bytes)) === 0;
    }),
  );
});

test("type errors carry Go's struct field path", () => {
  // expectations produced by Go's encoding/json with the same struct shapes
  const cases: [() => unknown, string][] = [
    [() => decodeChannel({ schema: "olm.channel", entries: [{ name: 1 }] }), "json: cannot unmarshal number into Go struct field ChannelEntry.entries.name of type string"],
    [() => decodeChannel({ schema: "olm.channel", entries: ["x"] }), "json: cannot unmarshal string into Go struct field Channel.entries of type declcfg.ChannelEntry"],
    [() => decodePackage({ schema: "olm.package", icon: "x" }), "json: cannot unmarshal string into Go struct field Package.icon of type declcfg.Icon"],
    [() => decodePackage({ schema: "olm.package", icon: { base64data: 5 } }), "json: cannot unmarshal number into Go struct field Icon.icon.base64data of type []uint8"],
    [() => decodeChannel({ schema: "olm.channel", entries: [{ skips: [1] }] }), "json: cannot unmarshal number into Go struct field ChannelEntry.entries.skips of type string"],
    [() => decodeChannel({ schema: "olm.channel", entries: {} }), "json: cannot unmarshal object into Go struct field Channel.entries of type []declcfg.ChannelEntry"],
    [() => decodePackage({ schema: "olm.package", name: {} }), "json: cannot unmarshal object into Go struct field Package.name of type string"],
    [() => decodeBundle({ schema: "olm.bundle", relatedImages: {} }), "json: cannot unmarshal object into Go struct field Bundle.relatedImages of type []declcfg.RelatedImage"],
    [() => decodePackage({ schema: "olm.package", icon: { base64data: "abc" } }), "illegal base64 data at input byte 0"],
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
  const c2 = decodeChannel({ schema: "olm.channel", name: "x", package: "p", entries: [null, { name: "a", skips: null }] });
  assert.deepEqual(c2.entries, [
    { name: "", replaces: "", skips: [], skipRange: "" },
    { name: "a", replaces: "", skips: [], skipRange: "" },
  ]);
  const b = decodeBundle({ schema: "olm.bundle", name: null, properties: [{ type: "t" }, { type: "u", value: null }] });
  assert.equal(b.name, "");
  assert.equal(b.properties[0].value.isMissing, true);
  assert.equal(b.properties[1].value.text, "null");
});
