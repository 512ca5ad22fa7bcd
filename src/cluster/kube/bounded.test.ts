import { test } from "node:test";
import assert from "node:assert/strict";
import { BoundedMap } from "./bounded.js";

test("BoundedMap keeps the newest entries: setting a key again makes it the newest", () => {
  const m = new BoundedMap<string, number>(2);
  m.set("a", 1).set("b", 2);
  m.set("a", 3); // a is now newer than b
  m.set("c", 4);
  assert.deepEqual(
    [...m],
    [
      ["a", 3],
      ["c", 4],
    ],
  );
});
