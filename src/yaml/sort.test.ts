import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { goKeyLess, sortGoKeys } from "./index.js";

test("go-yaml v2 key order", () => {
  assert.deepEqual(sortGoKeys(["b", "a10", "a9", "_x", "10", "2", "1", "A", "aB", "ab", "a.b", "a-b"]), [
    "_x",
    "1",
    "2",
    "10",
    "A",
    "a-b",
    "a.b",
    "a9",
    "a10",
    "aB",
    "ab",
    "b",
  ]);
  assert.deepEqual(sortGoKeys(["a01", "a1", "a001"]), ["a1", "a01", "a001"]);
  assert.deepEqual(sortGoKeys(["x10y", "x9y", "x09y"]), ["x9y", "x09y", "x10y"]);
  assert.deepEqual(sortGoKeys(["image", "name", "package", "properties", "relatedImages", "schema"]), [
    "image",
    "name",
    "package",
    "properties",
    "relatedImages",
    "schema",
  ]);
  assert.deepEqual(sortGoKeys(["schema", "name", "icon", "description", "defaultChannel"]), [
    "defaultChannel",
    "description",
    "icon",
    "name",
    "schema",
  ]);
  assert.equal(goKeyLess("a", "ab"), true);
  assert.equal(goKeyLess("ab", "a"), false);
  // Non-ASCII: letters by rune, a letter after a non-letter.
  assert.deepEqual(sortGoKeys(["é", "z", "日本", "1"]), ["1", "z", "é", "日本"]);
});

test("goKeyLess is irreflexive and asymmetric", () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 8, unit: fc.constantFrom("a", "b", "A", "0", "1", "9", "-", "_", ".", "é", "٣") }),
      fc.string({ maxLength: 8, unit: fc.constantFrom("a", "b", "A", "0", "1", "9", "-", "_", ".", "é", "٣") }),
      (a, b) => {
        assert.equal(goKeyLess(a, a), false);
        if (a !== b) assert.ok(!(goKeyLess(a, b) && goKeyLess(b, a)));
      },
    ),
  );
});

test("go-yaml v2 key order around characters whose Unicode class changed after Go's Unicode 15.0.0 (Go oracle)", () => {
  // [keys, go-yaml's order] from scripts/oracle/yamlsort: letters and digits Node's newer Unicode knows
  // but Go 1.26 does not, which must sort as the non-letters, non-digits they are to Go.
  const vectors = JSON.parse(readFileSync(new URL("./testdata/sort-unicode.json", import.meta.url), "utf8")) as [
    string[],
    string[],
  ][];
  assert.ok(vectors.length >= 40);
  for (const [keys, want] of vectors) assert.deepEqual(sortGoKeys([...keys]), want, keys.join(" "));
});
