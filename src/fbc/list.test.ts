import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { csvDisplayName, listBundles, listChannels, listPackages, tabwriterFormat } from "./list.js";
import { loadCatalog, loadText } from "./load.js";
import type { Model } from "./model.js";
import { validateCatalog } from "./validate.js";

const dir = new URL("./testdata/list-index/", import.meta.url);
/** The registry of the bundle images in list-index (keeps the golden table rows under 120 columns). */
const REG = "test.registry";

async function listIndexModel(): Promise<Model> {
  const r = await loadCatalog(fileURLToPath(new URL("catalog", dir)));
  assert.deepEqual(r.problems, []);
  const v = validateCatalog(r.config);
  assert.deepEqual(v.problems, []);
  return v.model;
}

const notFound = (e: unknown): boolean =>
  e instanceof OpcatError && e.code === "LIST_PACKAGE_NOT_FOUND" && e.message === 'package "unknown" not found';

// alpha/action/list_test.go, on alpha/action/testdata/list-index.
test("TestListPackages/Success/ValidIndex", async () => {
  assert.equal(
    listPackages(await listIndexModel()),
    `NAME  DISPLAY NAME  DEFAULT CHANNEL
bar   Bar Operator  beta
foo   Foo Operator  beta
`,
  );
});

test("TestListChannels", async () => {
  const m = await listIndexModel();
  assert.equal(
    listChannels(m, "foo"),
    `PACKAGE  CHANNEL  HEAD
foo      beta     foo.v0.2.0
foo      stable   foo.v0.2.0
`,
  );
  assert.equal(
    listChannels(m),
    `PACKAGE  CHANNEL  HEAD
bar      beta     bar.v0.2.0
bar      stable   bar.v0.2.0
foo      beta     foo.v0.2.0
foo      stable   foo.v0.2.0
`,
  );
  assert.throws(() => listChannels(m, "unknown"), notFound);
});

test("TestListBundles", async () => {
  const m = await listIndexModel();
  assert.equal(
    listBundles(m, "foo"),
    `PACKAGE  CHANNEL  BUNDLE      REPLACES    SKIPS                  SKIP RANGE  IMAGE
foo      beta     foo.v0.1.0                                     <0.1.0      ${REG}/foo-operator/foo-bundle:v0.1.0
foo      beta     foo.v0.2.0  foo.v0.1.0  foo.v0.1.1,foo.v0.1.2  <0.2.0      ${REG}/foo-operator/foo-bundle:v0.2.0
foo      stable   foo.v0.2.0  foo.v0.1.0  foo.v0.1.1,foo.v0.1.2  <0.2.0      ${REG}/foo-operator/foo-bundle:v0.2.0
`,
  );
  assert.equal(
    listBundles(m),
    `PACKAGE  CHANNEL  BUNDLE      REPLACES    SKIPS                  SKIP RANGE  IMAGE
bar      beta     bar.v0.1.0                                     <0.1.0      ${REG}/bar-operator/bar-bundle:v0.1.0
bar      beta     bar.v0.2.0  bar.v0.1.0  bar.v0.1.1,bar.v0.1.2  <0.2.0      ${REG}/bar-operator/bar-bundle:v0.2.0
bar      stable   bar.v0.2.0  bar.v0.1.0  bar.v0.1.1,bar.v0.1.2  <0.2.0      ${REG}/bar-operator/bar-bundle:v0.2.0
foo      beta     foo.v0.1.0                                     <0.1.0      ${REG}/foo-operator/foo-bundle:v0.1.0
foo      beta     foo.v0.2.0  foo.v0.1.0  foo.v0.1.1,foo.v0.1.2  <0.2.0      ${REG}/foo-operator/foo-bundle:v0.2.0
foo      stable   foo.v0.2.0  foo.v0.1.0  foo.v0.1.1,foo.v0.1.2  <0.2.0      ${REG}/foo-operator/foo-bundle:v0.2.0
`,
  );
  assert.throws(() => listBundles(m, "unknown"), notFound);
});

interface ListVectors {
  catalog: string;
  cases: {
    name: string;
    kind: "packages" | "channels" | "bundles";
    packageName?: string;
    text?: string;
    error?: string;
  }[];
}

test("golden vectors from opm's list actions (CSV display-name decoding, unicode widths)", () => {
  const vectors = JSON.parse(readFileSync(new URL("vectors.json", dir), "utf8")) as ListVectors;
  const r = loadText(vectors.catalog, "catalog.json");
  assert.deepEqual(r.problems, []);
  const v = validateCatalog(r.config);
  assert.deepEqual(v.problems, []);
  for (const c of vectors.cases) {
    const run = (): string =>
      c.kind === "packages"
        ? listPackages(v.model)
        : c.kind === "channels"
          ? listChannels(v.model, c.packageName)
          : listBundles(v.model, c.packageName);
    if (c.error !== undefined)
      assert.throws(run, (e: unknown) => e instanceof OpcatError && e.message === c.error, c.name);
    else assert.equal(run(), c.text, c.name);
  }
});

test("channels without a single head are listed with the error", () => {
  const blobs = [
    { schema: "olm.package", name: "p", defaultChannel: "c" },
    { schema: "olm.channel", package: "p", name: "c", entries: [{ name: "p.a" }, { name: "p.b" }] },
    ...["a", "b"].map((n) => ({
      schema: "olm.bundle",
      name: `p.${n}`,
      package: "p",
      image: "i",
      properties: [{ type: "olm.package", value: { packageName: "p", version: "1.0.0" } }],
    })),
  ];
  const r = loadText(blobs.map((b) => JSON.stringify(b)).join("\n"), "c.json");
  // The model is built even though validation reports the two heads.
  const v = validateCatalog(r.config);
  assert.equal(
    listChannels(v.model),
    "PACKAGE  CHANNEL  HEAD\np        c        ERROR: multiple channel heads found in graph: p.a, p.b\n",
  );
  assert.equal(listPackages(v.model), "NAME  DISPLAY NAME  DEFAULT CHANNEL\np                   c\n");
});

test("csvDisplayName follows encoding/json into the CSV type", () => {
  assert.equal(csvDisplayName('{"spec":{"displayName":"X"}}'), "X");
  assert.equal(csvDisplayName('{"spec":{"displayName":"X","DisplayName":null}}'), "X");
  assert.equal(
    csvDisplayName('{"spec":{"installModes":[{"type":"OwnNamespace","supported":"yes"}],"displayName":"X"}}'),
    "",
  );
  assert.equal(csvDisplayName('{"spec":{"release":"1.0","displayName":"X"}}'), "X");
  assert.equal(csvDisplayName('{"spec":{"release":"01","displayName":"X"}}'), "");
  assert.equal(
    csvDisplayName('{"metadata":{"creationTimestamp":"2024-01-02T03:04:05Z"},"spec":{"displayName":"X"}}'),
    "X",
  );
  assert.equal(csvDisplayName("null"), "");
  assert.equal(csvDisplayName("[]"), "");
});

interface TabVector {
  input: string;
  output: string;
}

test("tabwriterFormat matches Go's text/tabwriter (random cells, \\t \\v \\n \\f, multi-byte runes)", () => {
  const vectors = JSON.parse(readFileSync(new URL("tabwriter.json", dir), "utf8")) as TabVector[];
  assert.ok(vectors.length > 100);
  for (const v of vectors) assert.equal(tabwriterFormat(v.input), v.output, JSON.stringify(v.input));
});

test("tabwriter: uniform tables pad every column but the last to its widest cell + 2", () => {
  const cell = fc.string({ unit: fc.constantFrom("a", "é", "日", "😀", " ", "-"), maxLength: 8 });
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 5 }),
      fc.array(fc.array(cell, { minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 10 }),
      (ncols, rows) => {
        const table = rows.map((r) => r.slice(0, ncols));
        const out = tabwriterFormat(table.map((r) => r.join("\t") + "\n").join(""));
        const width = (s: string): number => [...s].length;
        const colw = Array.from({ length: ncols - 1 }, (_, j) => Math.max(...table.map((r) => width(r[j]))) + 2);
        const expected = table
          .map((r) => r.map((c, j) => (j < ncols - 1 ? c + " ".repeat(colw[j] - width(c)) : c)).join("") + "\n")
          .join("");
        assert.equal(out, expected);
      },
    ),
  );
});
