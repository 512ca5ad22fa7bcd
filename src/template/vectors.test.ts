/**
 * Golden vectors from operator-registry's own template code (scripts/oracle/template/main.go run on
 * testdata/cases.json → testdata/vectors.json): every case's exact error text or exact JSON output.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadText } from "../fbc/load.js";
import { formatCatalog } from "../fbc/write.js";
import { OpcatError } from "../errors/index.js";
import { renderTemplate, reuseSource } from "./index.js";

interface Case {
  name: string;
  type?: string;
  input: string;
  bundles?: string;
}
interface Vector {
  name: string;
  out?: string;
  err?: string;
}

const dir = new URL("./testdata/", import.meta.url);
const input = JSON.parse(readFileSync(new URL("cases.json", dir), "utf8")) as { bundles: string; cases: Case[] };
const cases = input.cases;
const vectors = JSON.parse(readFileSync(new URL("vectors.json", dir), "utf8")) as Vector[];

test("vectors cover every case", () => {
  assert.equal(vectors.length, cases.length);
  assert.ok(cases.length >= 90);
});

for (let i = 0; i < cases.length; i++) {
  const c = cases[i];
  const v = vectors[i];
  test(`oracle: ${c.name}`, async () => {
    assert.equal(v.name, c.name);
    const loaded = loadText(c.bundles ?? input.bundles, "bundles.json");
    assert.deepEqual(loaded.problems, []);
    const src = reuseSource(loaded.config, { reuseTags: true });
    let out: string | undefined;
    let err: string | undefined;
    try {
      out = formatCatalog(await renderTemplate(c.input, src, { type: c.type }), "json");
    } catch (e) {
      if (!(e instanceof OpcatError)) throw e;
      err = e.message;
    }
    if (v.err !== undefined) assert.equal(err, v.err);
    else {
      assert.equal(err, undefined);
      assert.equal(out, v.out ?? "");
    }
  });
}
