import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { decodeStream } from "../yaml/index.js";

// Streams of concatenated JSON objects, compact or indented, some carrying long strings (as base64
// manifests do) with or without characters JSON must escape. The scanner skips strings quote to
// quote, so escaped quotes and backslash runs inside long strings are what it must get right.
const LONG_STRING = 1024;
const plainPiece = fc.constantFrom("QUJD", "ZGVm", "+/==", "é", "😀");
const anyPiece = fc.constantFrom("QUJD", "\\", '"', "\n", "\t", "\u0001", "é");
const longString = fc
  .tuple(
    fc.boolean(),
    fc.array(plainPiece, { minLength: LONG_STRING / 4, maxLength: Math.floor(LONG_STRING / 3) }),
    fc.array(anyPiece, { minLength: LONG_STRING / 4, maxLength: Math.floor(LONG_STRING / 3) }),
  )
  .map(([plain, a, b]) => (plain ? a : b).join("").padEnd(LONG_STRING + 1, "x"));
const blob = fc.record({
  schema: fc.constantFrom("olm.bundle", "olm.package", "custom"),
  name: fc.string({ maxLength: 8 }),
  properties: fc.array(
    fc.record({
      type: fc.constantFrom("olm.bundle.object", "olm.gvk"),
      value: fc.oneof(fc.record({ data: longString }), fc.record({ group: fc.string({ maxLength: 4 }) })),
    }),
    { maxLength: 3 },
  ),
});
const space = fc.constantFrom("", "\n", "\n\n  ", " ", "\r\n");

test("property: every JSON blob decodes to JSON.parse's value, on the line it starts", () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(space, blob, fc.boolean()), { minLength: 1, maxLength: 6 }), (parts) => {
      let text = "";
      const expected: { value: unknown; line: number }[] = [];
      for (const [ws, value, pretty] of parts) {
        text += ws;
        const written = pretty ? JSON.stringify(value, null, 4) : JSON.stringify(value);
        expected.push({ value: JSON.parse(written), line: text.split("\n").length });
        text += written;
      }
      const items = decodeStream(text);
      assert.deepStrictEqual(
        items.map((i) => (i.kind === "blob" ? { value: i.value, line: i.line } : i)),
        expected,
      );
    }),
    { numRuns: 200 },
  );
});

test("a stream cut inside a long string fails after the good values, with the line of the broken one", () => {
  const data = Buffer.alloc(LONG_STRING * 2, 1).toString("base64");
  const good = JSON.stringify({ schema: "olm.bundle", properties: [{ type: "olm.bundle.object", value: { data } }] });
  const text = `${good}\n${good}\n\n${good.slice(0, 100)}`;
  const items = decodeStream(text);
  assert.equal(items.length, 3);
  assert.deepEqual(
    items
      .slice(0, 2)
      .map(
        (i) =>
          i.kind === "blob" &&
          (i.value as { properties: { value: { data: string } }[] }).properties[0].value.data === data,
      ),
    [true, true],
  );
  const last = items[2];
  assert.equal(last.kind, "error");
  assert.equal(last.kind === "error" && last.fatal, true);
  assert.equal(last.line, 4);
});

test(
  "nesting budget: JSON deeper than encoding/json's 10000 levels is refused with " +
    "Go's error at Go's offset (checked against opm); YAML deeper than go-yaml's too",
  () => {
    const doc = (n: number) => `{"schema":"olm.package","name":"a","x":${"[".repeat(n)}${"]".repeat(n)}}\n`;
    const ok = decodeStream(doc(9999));
    assert.equal(ok.length, 1);
    assert.equal(ok[0].kind, "blob");
    for (const n of [10000, 50000]) {
      const bad = decodeStream(doc(n));
      assert.equal(bad[0].kind, "error");
      assert.equal(
        bad[0].kind === "error" && bad[0].message,
        "json: offset 10039: invalid character '[' exceeded max depth",
      );
    }
    const yaml = decodeStream(`schema: olm.package\nname: a\nx: ${"[".repeat(20000)}${"]".repeat(20000)}\n`);
    assert.equal(yaml[0].kind, "error");
    assert.match(yaml[0].kind === "error" ? yaml[0].message : "", /exceeded max depth of 10000/);
  },
);
