import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compareUtf8 } from "./encode.js";
import { goSortSlice } from "./sort.js";

// Written by scripts/oracle/sortslice (Go's own sort.Slice by image, as opm sorts relatedImages).
const vectors = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "bundle", "testdata", "sortslice.json"), "utf8"),
) as {
  images: string[];
  cases: { in: number[]; order: number[] }[];
};

test("goSortSlice orders equal elements exactly as Go's sort.Slice (300 vectors from the Go oracle)", () => {
  let unstable = 0;
  for (const [i, c] of vectors.cases.entries()) {
    const entries = c.in.map((img, j) => ({ name: String(j), image: vectors.images[img] }));
    goSortSlice(entries, (a, b) => compareUtf8(a.image, b.image) < 0);
    assert.deepEqual(
      entries.map((e) => Number(e.name)),
      c.order,
      `case ${i}`,
    );
    const stable = c.in
      .map((img, j) => ({ j, image: vectors.images[img] }))
      .sort((a, b) => compareUtf8(a.image, b.image));
    if (stable.some((e, k) => e.j !== c.order[k])) unstable++;
  }
  assert.ok(
    unstable > 50,
    `the vectors exercise unstable orders (${unstable} of ${vectors.cases.length} differ from a stable sort)`,
  );
});

test(
  "sorting a sorted slice again changes nothing (opcat " + "sorts related images at render and again when normalising)",
  () => {
    for (const c of vectors.cases) {
      const entries = c.in.map((img, j) => ({ name: String(j), image: vectors.images[img] }));
      goSortSlice(entries, (a, b) => compareUtf8(a.image, b.image) < 0);
      const once = entries.map((e) => e.name);
      goSortSlice(entries, (a, b) => compareUtf8(a.image, b.image) < 0);
      assert.deepEqual(
        entries.map((e) => e.name),
        once,
      );
    }
  },
);
