/**
 * Property-based robustness on real data: random mutations of opm-written catalog files (deleted,
 * inserted, replaced and duplicated spans, truncation) must give a loaded catalog or located problems —
 * never an exception — and validation of whatever loaded must not throw either. The per-test timeout
 * only guards against hangs; it is not a performance check.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import fc from "fast-check";
import { loadText } from "../../src/fbc/load.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import { formatCatalog } from "../../src/fbc/write.js";
import { catalogFiles, requireShared } from "../shared.js";

type Mutation =
  | { op: "delete"; at: number; len: number }
  | { op: "insert"; at: number; text: string }
  | { op: "replace"; at: number; text: string }
  | { op: "duplicate"; at: number; len: number }
  | { op: "truncate"; at: number };

const fragment = fc.oneof(
  fc.constantFrom(
    "---\n",
    "--- x\n",
    "\n",
    ":",
    ": ",
    "- ",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "\t",
    "#",
    "&a ",
    "*a",
    "<<: *a\n",
    "~",
    "null",
    "0777",
    "yes",
    "\ufeff",
    "\u2028",
    "\\",
    '{"schema":1}',
    "schema: olm.package\n",
  ),
  fc.string({ maxLength: 8 }),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), text: fragment }),
  fc.record({ op: fc.constant("replace" as const), at: fc.nat(), text: fragment }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
);

function apply(text: string, muts: Mutation[]): string {
  for (const m of muts) {
    const at = text.length === 0 ? 0 : m.at % text.length;
    switch (m.op) {
      case "delete":
        text = text.slice(0, at) + text.slice(at + m.len);
        break;
      case "insert":
        text = text.slice(0, at) + m.text + text.slice(at);
        break;
      case "replace":
        text = text.slice(0, at) + m.text + text.slice(at + m.text.length);
        break;
      case "duplicate":
        text = text.slice(0, at + m.len) + text.slice(at, at + m.len) + text.slice(at + m.len);
        break;
      case "truncate":
        text = text.slice(0, at);
        break;
    }
  }
  return text;
}

test("mutated real catalogs load to blobs or located problems, never an exception", {
  timeout: 300_000,
  ...requireShared(),
}, () => {
  // The smaller files of each version keep the run short; together they cover every schema and both flavours.
  const files = [...catalogFiles("v4.16"), ...catalogFiles("v4.20")]
    .sort((a, b) => statSync(a.file).size - statSync(b.file).size)
    .slice(0, 8);
  assert.ok(files.length > 0);
  const texts = files.map((f) => readFileSync(f.file, "utf8"));
  const asJson = texts.slice(0, 3).map((t) => formatCatalog(loadText(t, "x").config, "json"));
  const sources = [...texts, ...asJson];
  fc.assert(
    fc.property(fc.nat({ max: sources.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 4 }), (i, muts) => {
      const text = apply(sources[i], muts);
      const res = loadText(text, "mutated.yaml");
      const lines = text.split("\n").length;
      for (const p of res.problems) {
        assert.equal(typeof p.code, "string");
        assert.ok(p.message.length > 0);
        assert.ok(
          p.loc !== undefined && p.loc.file === "mutated.yaml" && p.loc.line >= 1 && p.loc.line <= lines + 1,
          `bad location ${JSON.stringify(p.loc)} of ${lines} lines`,
        );
      }
      const v = validateCatalog(res.config);
      for (const p of v.problems) assert.ok(p.code.startsWith("FBC_"));
    }),
    { numRuns: 1500 },
  );
});
