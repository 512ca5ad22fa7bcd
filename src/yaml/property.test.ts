import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { GoYamlError, parseGoYamlDocument, toGoYaml, type JsonValue } from "./index.js";

// Characters Go's JSON → YAML round trip keeps unchanged (no NEL, C1 controls or U+FFFE/U+FFFF, which Go
// rewrites or rejects), with the YAML-significant ones over-represented.
const unit = fc.oneof(
  fc.constantFrom(" ", "  ", "\n", "\n\n", ":", ": ", "#", " #", "-", "- ", "?", "'", '"', "\\", "\t", "\r", "\x00", "\x1b",
    "é", "中", "😀", "\ufeff", "\u00a0", "|", ">", "&", "*", "!", "%", "@", "`", "[", "]", "{", "}", ",", "~", ".", "0",
    "1", "e", "x", "y", "n", "_", "yes", "null", "true", "1.5", "0x1F", "2001-12-14", "1:20", "---", "...", "\u2028", "\u2029"),
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
);
const str = fc.string({ unit, maxLength: 40 });
const longText = fc.array(fc.constantFrom("word", "a", "reliable", "of", "x".repeat(90), " ", "\n"), { maxLength: 60 }).map((a) => a.join(" "));
const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e21, 2 ** 63, 2 ** 64, 12345678901234567000, 0.1));

const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null), fc.boolean(), num, str, longText,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(str, fc.constant("k".repeat(130))), tie("value"), { maxKeys: 5 }),
  ),
}));

/** What the round trip may legitimately change: -0 becomes 0. */
function normalize(v: JsonValue): JsonValue {
  if (typeof v === "number") return Object.is(v, -0) ? 0 : v;
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(normalize);
  const o: { [k: string]: JsonValue } = {};
  for (const k of Object.keys(v)) {
    if (k === "__proto__") Object.defineProperty(o, k, { value: normalize(v[k]), enumerable: true, writable: true, configurable: true });
    else o[k] = normalize(v[k]);
  }
  return o;
}

test("parseGoYamlDocument(toGoYaml(v)) deep-equals v", () => {
  fc.assert(
    fc.property(value, (v) => {
      assert.deepStrictEqual(parseGoYamlDocument(toGoYaml(v)), normalize(v));
    }),
    { numRuns: 2000 },
  );
});

test("the loader throws nothing but GoYamlError on arbitrary text", () => {
  const yamlish = fc.string({
    unit: fc.oneof(fc.constantFrom(" ", "  ", "\n", "\t", ":", "- ", "? ", "[", "]", "{", "}", ",", "'", '"', "#", "&a", "*a", "!", "!!str", "|", ">", "|2", "<<", "%", "@", "a", "1", "~", "\\", "---", "...", "\u2028", "\u0085"), fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 })),
    maxLength: 60,
  });
  fc.assert(
    fc.property(yamlish, (text) => {
      try {
        const v = parseGoYamlDocument(text);
        JSON.stringify(v);
      } catch (e) {
        assert.ok(e instanceof GoYamlError, `${JSON.stringify(text)}: ${String(e)}`);
      }
    }),
    { numRuns: 5000 },
  );
});
