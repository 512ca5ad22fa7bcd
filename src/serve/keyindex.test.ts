/** KeyIndex: the metas index's lookups, before and after its persisted form, for any keys. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KeyIndex } from "./keyindex.js";

test("every key finds its list, others none, before and after encode/decode", () => {
  const m = new Map<string, number[]>([
    ["olm.bundle", [2, 5, 9]],
    ["olm.package", [0]],
    ["Zeta", [1, 3]],
    ["é-accent", [4]],
    ["日本", [6, 7]],
    ["a", [8]],
    ["ab", [10]],
  ]);
  const built = KeyIndex.from(m);
  for (const idx of [built, KeyIndex.decode(Buffer.concat([Buffer.from("x"), built.encode()]).subarray(1))]) {
    for (const [k, v] of m) assert.deepEqual([...(idx.get(k) ?? [])], v, k);
    for (const k of ["", "b", "olm", "olm.bundles", "日", "zeta", "A"]) assert.equal(idx.get(k), undefined, k);
    assert.equal(idx.getOrEmpty("none").length, 0);
  }
  const empty = KeyIndex.decode(KeyIndex.from(new Map()).encode());
  assert.equal(empty.get("x"), undefined);
  assert.throws(() => KeyIndex.decode(built.encode().subarray(0, 20)), /truncated|inconsistent/);
});
