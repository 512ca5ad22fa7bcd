import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { OpcatError } from "../../errors/index.js";
import { loadFile, loadText } from "../../fbc/load.js";
import { RawJson } from "../../fbc/rawjson.js";
import { normalizeForRender } from "../../fbc/render.js";
import type { Bundle, DeclarativeConfig } from "../../fbc/types.js";
import { validateCatalog } from "../../fbc/validate.js";
import { formatCatalog } from "../../fbc/write.js";
import { catalogToGraphTemplate } from "../convert.js";
import {
  addBundleToGraph,
  catalogTagLister,
  formatGraphTemplate,
  parseGraphTemplate,
  renderGraphTemplate,
  renderParsedGraphTemplate,
  type GraphDescription,
  type GraphTemplate,
  type TagLister,
} from "./graph.js";
import { renderTemplate } from "../index.js";
import { reuseSource } from "../source/reuse.js";
import type { BundleSource, RenderedBundle } from "../source/source.js";

const DATA = join(dirname(fileURLToPath(import.meta.url)), "..", "testdata", "graph");
const read = (f: string): string => readFileSync(join(DATA, f), "utf8");

/** An in-memory registry: bundles by image, tags from the images. */
function memSource(bundles: readonly Bundle[]): BundleSource & TagLister {
  const byImage = new Map(bundles.map((b) => [b.image, b]));
  return {
    render(image: string): Promise<RenderedBundle> {
      const b = byImage.get(image);
      if (!b) return Promise.reject(new OpcatError("TEST_NOT_FOUND", `no image ${image}`));
      return Promise.resolve({ ...b, properties: [...b.properties], relatedImages: [...b.relatedImages] });
    },
    listTags(repo: string): Promise<string[]> {
      return Promise.resolve(
        bundles.filter((b) => b.image.startsWith(repo + ":")).map((b) => b.image.slice(repo.length + 1)),
      );
    },
  };
}

function bundle(pkg: string, v: string, image = `reg.example/${pkg}-bundle:v${v}`): Bundle {
  return {
    schema: "olm.bundle",
    name: `${pkg}.v${v}`,
    package: pkg,
    image,
    properties: [{ type: "olm.package", value: RawJson.fromValue({ packageName: pkg, version: v }) }],
    relatedImages: [],
  };
}

const yaml = (cfg: DeclarativeConfig): string => formatCatalog(normalizeForRender(cfg), "yaml");

async function rejectsWith(p: Promise<unknown>, code: string, message: string | RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof OpcatError, String(e));
    assert.equal(e.code, code, e.message);
    if (typeof message === "string") assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

test("the graph template example (docs/templates.md) renders to its channel (v0.1.0 … v1.0.1), valid", async () => {
  const reg = loadFile(join(DATA, "seed-bundles.yaml")).config;
  const src = reuseSource(reg, { reuseTags: true });
  const cfg = await renderGraphTemplate(read("seed-template.yaml"), src, { tags: catalogTagLister(reg) });
  assert.equal(yaml(cfg), read("seed-expected.yaml"));
  assert.deepEqual(validateCatalog(cfg).problems, []);
  // Through renderTemplate: the alias schema is auto-detected as the graph type.
  const again = await renderTemplate(read("seed-template.yaml"), src, { tags: catalogTagLister(reg) });
  assert.equal(yaml(again), read("seed-expected.yaml"));
  const typed = await renderTemplate(read("seed-template.yaml"), src, { type: "graph", tags: catalogTagLister(reg) });
  assert.equal(yaml(typed), read("seed-expected.yaml"));
});

test(
  "the example as first printed: the double-quoted tagRegex is not " +
    "YAML, and its v0.0.x entries without bundles do not validate",
  async () => {
    const printed = read("seed-template.yaml").replace(`'^v\\d+\\.\\d+\\.\\d+$'`, `"^v\\d+\\.\\d+\\.\\d+$"`);
    assert.notEqual(printed, read("seed-template.yaml"));
    await rejectsWith(
      renderGraphTemplate(printed, memSource([])),
      "TEMPLATE_DECODE",
      // go-yaml's text, checked with the oracle (scripts/oracle/yaml)
      "decoding template: error converting YAML to JSON: yaml: line 10: found unknown escape character",
    );
    // The seed's printed channel: v0.0.1–v0.0.3 are channel entries, but no bundle is printed for them.
    const reg = loadFile(join(DATA, "seed-bundles.yaml")).config;
    const cfg = await renderGraphTemplate(read("seed-template.yaml"), memSource(reg.bundles), {});
    const ch = cfg.channels[0];
    assert.ok(ch.entries);
    ch.entries.unshift(
      { name: "example.v0.0.1", replaces: "", skips: [], skipRange: "" },
      { name: "example.v0.0.2", replaces: "example.v0.0.1", skips: [], skipRange: "" },
      { name: "example.v0.0.3", replaces: "example.v0.0.1", skips: ["example.v0.0.2"], skipRange: "" },
    );
    const problems = validateCatalog(cfg).problems.map((p) => p.message);
    assert.ok(
      problems.some((m) =>
        m.includes(
          `no olm.bundle blobs found in package "example" for olm.channel ` +
            `entries [example.v0.0.1 example.v0.0.2 example.v0.0.3]`,
        ),
      ),
      problems.join("\n"),
    );
  },
);

const PKG = "pkg";
const POOL = Array.from({ length: 12 }, (_, i) => bundle(PKG, `0.${i}.0`));
const nameOf = (i: number): string => `${PKG}.v0.${i}.0`;

function template(graphs: GraphDescription[], images: string[], extra: Partial<GraphTemplate> = {}): GraphTemplate {
  return {
    schema: "olm.template.graph",
    package: { name: PKG, defaultChannel: graphs[0]?.name },
    bundles: { images },
    graphs,
    ...extra,
  };
}

const imagesOf = (names: string[]): string[] => POOL.filter((b) => names.includes(b.name)).map((b) => b.image);

test(
  "graph semantics: live entries chain by replaces, tombstones " +
    "are skipped by the next live entry, trailing ones by the head",
  async () => {
    const entries = [0, 1, 2, 3, 4, 5].map(nameOf);
    const t = template(
      [
        {
          name: "stable",
          entries,
          tombstones: [nameOf(0), nameOf(2), nameOf(5)],
          tailEdges: { replaces: "pkg.v0.0.1", skips: ["pkg.v0.0.2"], skipRange: "<0.1.0" },
          skipRanges: { [nameOf(4)]: "<0.4.0" },
        },
      ],
      imagesOf(entries),
    );
    const cfg = await renderParsedGraphTemplate(t, memSource(POOL));
    assert.deepEqual(cfg.channels[0].entries, [
      { name: nameOf(1), replaces: "pkg.v0.0.1", skips: ["pkg.v0.0.2", nameOf(0)], skipRange: "<0.1.0" },
      { name: nameOf(3), replaces: nameOf(1), skips: [nameOf(2)], skipRange: "" },
      { name: nameOf(4), replaces: nameOf(3), skips: [nameOf(5)], skipRange: "<0.4.0" },
    ]);
    assert.deepEqual(
      cfg.bundles.map((b) => b.name),
      [1, 3, 4].map(nameOf),
    );
    assert.equal(cfg.packages[0].defaultChannel, "stable");
  },
);

test("graph template: the graphs list, package description and icon, default channel of a single graph", async () => {
  const text = [
    "schema: olm.template.graph",
    "package:",
    "  name: pkg",
    "  description: an operator",
    "  icon: {base64data: PHN2Zy8+, mediatype: image/svg+xml}",
    "bundles:",
    "  images: [reg.example/pkg-bundle:v0.0.0, reg.example/pkg-bundle:v0.1.0]",
    "graphs:",
    "- name: alpha",
    "  entries: [pkg.v0.0.0, pkg.v0.1.0]",
  ].join("\n");
  const cfg = await renderGraphTemplate(text, memSource(POOL));
  assert.equal(cfg.packages[0].defaultChannel, "alpha");
  assert.equal(cfg.packages[0].description, "an operator");
  assert.equal(Buffer.from(cfg.packages[0].icon?.base64data ?? []).toString(), "<svg/>");
  assert.deepEqual(validateCatalog(cfg).problems, []);
});

test("graph template errors name the field", async () => {
  const src = memSource(POOL);
  const base = (g: string, more = ""): string =>
    `schema: olm.template.graph\npackage: {name: pkg, defaultChannel: stable}\n` +
    `bundles: {images: [reg.example/pkg-bundle:v0.0.0, reg.example/pkg-bundle:v0.1.0]}\n${more}graphs:\n${g}`;
  const cases: [string, string, string | RegExp][] = [
    [
      "schema: olm.template.basic\n",
      "TEMPLATE_SCHEMA",
      `template has unknown schema ("olm.template.basic"), should be "olm.template.graph"`,
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg}\ngraph: []\n",
      "TEMPLATE_GRAPH_FIELD",
      "template.graph: unknown field (expected one of: schema, package, bundles, graph-description, graphs)",
    ],
    ["schema: olm.template.graph\npackage: {name: pkg}\nschema: x\n", "TEMPLATE_DECODE", /already set in map/],
    ["schema: olm.template.graph\n", "TEMPLATE_GRAPH_FIELD", "package: must be a mapping, not missing"],
    ["schema: olm.template.graph\npackage: {defaultChannel: x}\n", "TEMPLATE_GRAPH_FIELD", "package.name: is required"],
    [
      "schema: olm.template.graph\npackage: {name: Pkg}\ngraphs: [{name: a, entries: [x]}]\n",
      "TEMPLATE_GRAPH_INVALID",
      /^package\.name: invalid package name "Pkg"/,
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg, icon: {base64data: '!!', mediatype: x}}\n",
      "TEMPLATE_GRAPH_FIELD",
      "package.icon.base64data: illegal base64 data at input byte 0",
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg}\n",
      "TEMPLATE_GRAPH_INVALID",
      "graphs: the template describes no graph (channel); add graph-description or graphs",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, 3]\n"),
      "TEMPLATE_GRAPH_FIELD",
      "graphs[0].entries[1]: must be a string, not a number",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, '']\n"),
      "TEMPLATE_GRAPH_FIELD",
      "graphs[0].entries[1]: must not be empty",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0]\n  tailEdge: {}\n"),
      "TEMPLATE_GRAPH_FIELD",
      /^graphs\[0\]\.tailEdge: unknown field/,
    ],
    [base("- entries: [pkg.v0.0.0]\n"), "TEMPLATE_GRAPH_FIELD", "graphs[0].name: is required"],
    [
      base("- name: stable\n  entries: []\n"),
      "TEMPLATE_GRAPH_INVALID",
      "graphs[0].entries: a graph needs at least one entry",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.0.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].entries[1]: "pkg.v0.0.0" is already listed as entries[0]`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0]\n- name: stable\n  entries: [pkg.v0.1.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[1].name: channel "stable" is already described by graphs[0]`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0]\n  tombstones: [pkg.v0.2.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tombstones[0]: "pkg.v0.2.0" is not one of the graph's entries`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  tombstones: [pkg.v0.1.0, pkg.v0.1.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tombstones[1]: "pkg.v0.1.0" is already listed as tombstones[0]`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0]\n  tombstones: [pkg.v0.0.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      "graphs[0].tombstones: every entry is a tombstone; a channel needs at least one installable entry",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  tailEdges: {replaces: pkg.v0.1.0}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tailEdges.replaces: "pkg.v0.1.0" is an entry of ` +
        `the graph; tail edges name bundles before its first entry`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.1.0]\n  tailEdges: {skips: [a, pkg.v0.1.0]}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tailEdges.skips[1]: "pkg.v0.1.0" is an entry of ` +
        `the graph; tail edges name bundles before its first entry`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.1.0]\n  tailEdges: {skips: [a, a]}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tailEdges.skips[1]: "a" is listed twice`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.1.0]\n  tailEdges: {skipRange: '>v0.1.0'}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].tailEdges.skipRange: invalid skipRange ">v0.1.0": Could not ` +
        `parse Range ">v0.1.0": Could not parse comparator ">v" in ">v0.1.0"`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  skipRanges: {pkg.v0.2.0: '<1.0.0'}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].skipRanges["pkg.v0.2.0"]: "pkg.v0.2.0" is not one of the graph's entries`,
    ],
    [
      base(
        "- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n" +
          "  tombstones: [pkg.v0.0.0]\n  skipRanges: {pkg.v0.0.0: '<1.0.0'}\n",
      ),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].skipRanges["pkg.v0.0.0"]: "pkg.v0.0.0" is a tombstone; only installable entries have a skipRange`,
    ],
    [
      base(
        "- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n" +
          "  tailEdges: {skipRange: '<0.0.0'}\n  skipRanges: {pkg.v0.0.0: '<1.0.0'}\n",
      ),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].skipRanges["pkg.v0.0.0"]: "pkg.v0.0.0" is the first ` +
        `installable entry, whose skipRange is already given as tailEdges.skipRange`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  skipRanges: {pkg.v0.1.0: 'nope'}\n"),
      "TEMPLATE_GRAPH_INVALID",
      `graphs[0].skipRanges["pkg.v0.1.0"]: invalid skipRange "nope": Could not get version from string: "nope"`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  skipRanges: {pkg.v0.1.0: 1}\n"),
      "TEMPLATE_GRAPH_FIELD",
      `graphs[0].skipRanges["pkg.v0.1.0"]: must be a string, not a number`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0]\n  skipRanges: [a]\n"),
      "TEMPLATE_GRAPH_FIELD",
      `graphs[0].skipRanges: must be a mapping of entry names to ranges, not a list`,
    ],
    [
      base("- name: alpha\n  entries: [pkg.v0.1.0]\n"),
      "TEMPLATE_GRAPH_INVALID",
      `package.defaultChannel: "stable" is not the name of a graph (channels: alpha)`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.1.0]\n", "graph-description: {name: x, entries: [a]}\n"),
      "TEMPLATE_GRAPH_FIELD",
      "graphs: use either graph-description (one graph) or graphs (a list), not both",
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg}\ngraph-description: {name: x, package: other, entries: [a]}\n",
      "TEMPLATE_GRAPH_INVALID",
      `graph-description.package: "other" is not the template's package "pkg"`,
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg}\ngraphs: [{name: a, entries: [p]}, {name: b, entries: [q]}]\n",
      "TEMPLATE_GRAPH_INVALID",
      "package.defaultChannel: is required when the template describes several graphs",
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0]\n"),
      "TEMPLATE_GRAPH_BUNDLE",
      `bundle "pkg.v0.1.0" (image "reg.example/pkg-bundle:v0.1.0") is not named by any ` +
        `graph's entries, tombstones or tail edges; add it to a graph or remove its image`,
    ],
    [
      base("- name: stable\n  entries: [pkg.v0.0.0, pkg.v0.1.0, pkg.v0.2.0]\n"),
      "TEMPLATE_GRAPH_BUNDLE",
      `graphs[0].entries[2]: no image renders bundle "pkg.v0.2.0" ` +
        `(bundles come from bundles.images and the tags of bundles.repo)`,
    ],
    [
      "schema: olm.template.graph\npackage: {name: pkg}\nbundles: {tagRegex: x}\ngraphs: [{name: a, entries: [x]}]\n",
      "TEMPLATE_GRAPH_FIELD",
      "bundles.repo: is required with bundles.tagRegex and bundles.semverRange",
    ],
  ];
  for (const [text, code, message] of cases) await rejectsWith(renderGraphTemplate(text, src), code, message);

  // Bundles of another package, and one bundle rendered from two images.
  const other = memSource([
    ...POOL,
    bundle("other", "1.0.0"),
    { ...POOL[0], image: "reg.example/pkg-bundle@sha256:" + "a".repeat(64) },
  ]);
  await rejectsWith(
    renderParsedGraphTemplate(
      template([{ name: "s", entries: [nameOf(0)] }], [POOL[0].image, "reg.example/other-bundle:v1.0.0"]),
      other,
    ),
    "TEMPLATE_GRAPH_BUNDLE",
    `bundle "other.v1.0.0" (image "reg.example/other-bundle:v1.0.0") ` +
      `belongs to package "other", not to the template's package "pkg"`,
  );
  await rejectsWith(
    renderParsedGraphTemplate(
      template(
        [{ name: "s", entries: [nameOf(0)] }],
        [POOL[0].image, "reg.example/pkg-bundle@sha256:" + "a".repeat(64)],
      ),
      other,
    ),
    "TEMPLATE_GRAPH_BUNDLE",
    `bundle "pkg.v0.0.0" is rendered from two images: "reg.example/pkg-bundle:v0.0.0" ` +
      `and "reg.example/pkg-bundle@sha256:${"a".repeat(64)}"`,
  );
  // Bundles that make the catalog invalid by themselves (two names, one version).
  const twins = memSource([POOL[0], { ...bundle(PKG, "0.0.0", "reg.example/pkg-bundle:twin"), name: "pkg.twin" }]);
  await rejectsWith(
    renderParsedGraphTemplate(
      template([{ name: "s", entries: [nameOf(0), "pkg.twin"] }], [POOL[0].image, "reg.example/pkg-bundle:twin"]),
      twins,
    ),
    "TEMPLATE_GRAPH_RESULT_INVALID",
    /^resulting catalog is not valid FBC: .*duplicate versions found in bundles/s,
  );
  // Errors go through renderTemplate's wrapping.
  await rejectsWith(
    renderTemplate(base("- name: stable\n  entries: []\n"), src),
    "TEMPLATE_GRAPH_INVALID",
    "rendering template: graphs[0].entries: a graph needs at least one entry",
  );
});

test("bundles.repo: tags discovered, filtered by tagRegex and semverRange, rendered and matched by name", async () => {
  const src = memSource([
    ...POOL,
    bundle(PKG, "1.0.0"),
    { ...bundle(PKG, "9.9.9", "reg.example/pkg-bundle:latest"), name: "pkg.latest" },
  ]);
  const text = (range: string): string =>
    `schema: olm.template.graph\npackage: {name: pkg}\nbundles: {repo: reg.example/pkg-bundle, tagRegex: ` +
    `'^v\\d', semverRange: '${range}'}\n` +
    `graph-description: {name: s, entries: [pkg.v0.10.0, pkg.v0.11.0, pkg.v1.0.0]}\n`;
  const cfg = await renderGraphTemplate(text(">=0.10.0"), src);
  assert.deepEqual(
    cfg.bundles.map((b) => b.name),
    ["pkg.v0.10.0", "pkg.v0.11.0", "pkg.v1.0.0"],
  );
  await rejectsWith(
    renderGraphTemplate(text(">=0.9.0"), src),
    "TEMPLATE_GRAPH_BUNDLE",
    /^bundle "pkg\.v0\.9\.0" \(image "reg\.example\/pkg-bundle:v0\.9\.0"\) is not named/,
  );
  await rejectsWith(
    renderGraphTemplate(text(">=0.10.0"), { render: src.render }),
    "TEMPLATE_GRAPH_TAGS",
    `bundles.repo: listing the tags of "reg.example/pkg-bundle" ` +
      `needs registry access, which this bundle source does not provide`,
  );
});

// ---- properties over random graph templates ----

interface Shape {
  graphs: {
    name: string;
    entries: number[];
    tombs: boolean[];
    replaces: number | null;
    skips: number[];
    skipRange: string | null;
    ranges: (string | null)[];
  }[];
}

/** Random templates that obey the rules by construction. */
const wellFormed: fc.Arbitrary<GraphTemplate> = fc
  .uniqueArray(fc.constantFrom("alpha", "beta", "stable", "fast", "candidate-v1"), { minLength: 1, maxLength: 3 })
  .chain((names) =>
    fc.tuple(
      ...names.map((name) =>
        fc.shuffledSubarray([...POOL.keys()], { minLength: 1, maxLength: 8 }).chain((entries) =>
          fc.record({
            name: fc.constant(name),
            entries: fc.constant(entries),
            tombs: fc.array(fc.boolean(), { minLength: entries.length, maxLength: entries.length }).map((t) => {
              if (t.every(Boolean)) t[t.length - 1] = false;
              return t;
            }),
            replaces: fc.option(
              fc.constantFrom(...[...POOL.keys(), 40].filter((i) => !entries.includes(i)).concat([41])),
            ),
            skips: fc.uniqueArray(fc.constantFrom(...[...POOL.keys(), 50, 51].filter((i) => !entries.includes(i))), {
              maxLength: 3,
            }),
            skipRange: fc.option(fc.constantFrom("<0.1.0", ">=0.0.1 <0.3.0", "0.x")),
            ranges: fc.array(fc.option(fc.constantFrom("<0.5.0", ">=0.1.0 <0.9.0"), { freq: 3 }), {
              minLength: entries.length,
              maxLength: entries.length,
            }),
          }),
        ),
      ),
    ),
  )
  .map((graphs) => shapeToTemplate({ graphs }));

function shapeToTemplate(s: Shape): GraphTemplate {
  const named = new Set<string>();
  const graphs: GraphDescription[] = s.graphs.map((g) => {
    const entries = g.entries.map(nameOf);
    entries.forEach((e) => named.add(e));
    const d: GraphDescription = { name: g.name, entries, tombstones: entries.filter((_, i) => g.tombs[i]) };
    const tail: NonNullable<GraphDescription["tailEdges"]> = {};
    if (g.replaces !== null) tail.replaces = nameOf(g.replaces);
    if (g.skips.length > 0) tail.skips = g.skips.map(nameOf);
    if (g.skipRange !== null) tail.skipRange = g.skipRange;
    for (const n of [tail.replaces, ...(tail.skips ?? [])]) if (n) named.add(n);
    d.tailEdges = tail;
    // skipRanges on live entries after the first one.
    const live = entries.filter((_, i) => !g.tombs[i]);
    const ranges: Record<string, string> = {};
    entries.forEach((e, i) => {
      const r = g.ranges[i];
      if (r !== null && !g.tombs[i] && e !== live[0]) ranges[e] = r;
    });
    if (Object.keys(ranges).length > 0) d.skipRanges = ranges;
    return d;
  });
  return template(graphs, imagesOf([...named]));
}

test("property: a well-formed graph template renders a valid catalog with the documented channels", async () => {
  await fc.assert(
    fc.asyncProperty(wellFormed, async (t) => {
      const cfg = await renderParsedGraphTemplate(t, memSource(POOL));
      assert.deepEqual(validateCatalog(cfg).problems, []);
      const live = new Set<string>();
      t.graphs.forEach((g, i) => {
        const tomb = new Set(g.tombstones);
        const liveEntries = g.entries.filter((e) => !tomb.has(e));
        liveEntries.forEach((e) => live.add(e));
        const ch = cfg.channels[i];
        assert.deepEqual(
          ch.entries?.map((e) => e.name),
          liveEntries,
        );
        ch.entries?.forEach((e, k) => {
          assert.equal(e.replaces, k === 0 ? (g.tailEdges?.replaces ?? "") : liveEntries[k - 1]);
          assert.equal(e.skipRange, k === 0 ? (g.tailEdges?.skipRange ?? "") : (g.skipRanges?.[e.name] ?? ""));
        });
        const skipped = ch.entries?.flatMap((e) => e.skips) ?? [];
        assert.deepEqual([...skipped].sort(), [...(g.tailEdges?.skips ?? []), ...(g.tombstones ?? [])].sort());
      });
      assert.deepEqual(new Set(cfg.bundles.map((b) => b.name)), live);
    }),
    { numRuns: 300 },
  );
});

/**
 * Random templates that may break any rule: rendering either
 * validates or fails with a graph error naming the field.
 */
const anyTemplate: fc.Arbitrary<GraphTemplate> = fc
  .record({
    graphs: fc
      .oneof(
        {
          arbitrary: fc.array(fc.record({ name: fc.constantFrom("alpha", "beta", "stable") }), { maxLength: 3 }),
          weight: 1,
        },
        {
          arbitrary: fc.uniqueArray(fc.record({ name: fc.constantFrom("alpha", "beta", "stable") }), {
            minLength: 1,
            maxLength: 3,
            selector: (g) => g.name,
          }),
          weight: 4,
        },
      )
      .chain((gs) =>
        fc.tuple(
          ...gs.map((g) =>
            fc.record({
              name: fc.constant(g.name),
              entries: fc.oneof(
                { arbitrary: fc.array(fc.nat(13), { maxLength: 6 }), weight: 1 },
                { arbitrary: fc.uniqueArray(fc.nat(11), { minLength: 1, maxLength: 6 }), weight: 4 },
              ),
              tombMask: fc.array(fc.boolean(), { maxLength: 6 }),
              stray: fc.oneof({ arbitrary: fc.constant(null), weight: 8 }, { arbitrary: fc.nat(13), weight: 1 }),
              replaces: fc.option(fc.nat(13), { freq: 2 }),
              skips: fc.oneof(
                { arbitrary: fc.constant([] as number[]), weight: 2 },
                { arbitrary: fc.array(fc.nat(13), { maxLength: 2 }), weight: 1 },
              ),
              skipRange: fc.option(fc.constantFrom("<0.1.0", "bad range", ">v0.1.0", "", "0.x", ">=0.1.0 <0.3.0"), {
                freq: 2,
              }),
              ranges: fc.oneof(
                { arbitrary: fc.constant([] as [number, string][]), weight: 4 },
                {
                  arbitrary: fc.array(fc.tuple(fc.nat(13), fc.constantFrom("<0.5.0", "<0.5.0", "bad range")), {
                    maxLength: 2,
                  }) as fc.Arbitrary<[number, string][]>,
                  weight: 1,
                },
              ),
            }),
          ),
        ),
      ),
    images: fc.option(fc.array(fc.nat(13), { maxLength: 10 }), { freq: 2 }),
    defaultChannel: fc.option(fc.constantFrom("alpha", "beta", "stable", "other")),
  })
  .map((r) => {
    const graphs: GraphDescription[] = r.graphs.map((g) => {
      const tombs = g.entries.filter((_, i) => g.tombMask[i]).concat(g.stray === null ? [] : [g.stray]);
      const d: GraphDescription = { name: g.name, entries: g.entries.map(nameOf), tombstones: tombs.map(nameOf) };
      d.tailEdges = {};
      if (g.replaces !== null) d.tailEdges.replaces = nameOf(g.replaces);
      if (g.skips.length > 0) d.tailEdges.skips = g.skips.map(nameOf);
      if (g.skipRange) d.tailEdges.skipRange = g.skipRange;
      if (g.ranges.length > 0) d.skipRanges = Object.fromEntries(g.ranges.map(([i, r]) => [nameOf(i), r]));
      return d;
    });
    // Images 12 and 13 do not exist in the registry; nameOf(12), nameOf(13) are names no image renders.
    // Without a random list, the images of every name the graphs mention.
    const named = graphs.flatMap((g) => [...g.entries, g.tailEdges?.replaces ?? "", ...(g.tailEdges?.skips ?? [])]);
    const t = template(
      graphs,
      r.images === null ? imagesOf(named) : [...new Set(r.images.filter((i) => i < 12).map((i) => POOL[i].image))],
    );
    if (r.defaultChannel === null) delete t.package.defaultChannel;
    else t.package.defaultChannel = r.defaultChannel;
    return t;
  });

test("property: any graph template renders a valid catalog or is rejected with an error naming the field", async () => {
  let ok = 0;
  await fc.assert(
    fc.asyncProperty(anyTemplate, async (t) => {
      let cfg: DeclarativeConfig;
      try {
        cfg = await renderParsedGraphTemplate(t, memSource(POOL));
      } catch (e) {
        assert.ok(e instanceof OpcatError, String(e));
        assert.ok(["TEMPLATE_GRAPH_INVALID", "TEMPLATE_GRAPH_BUNDLE"].includes(e.code), `${e.code}: ${e.message}`);
        assert.match(e.message, /^(package\.|graphs|bundle ")/);
        return;
      }
      assert.deepEqual(validateCatalog(cfg).problems, []);
      ok++;
    }),
    { numRuns: 1000 },
  );
  assert.ok(ok >= 20, `only ${ok} of 1000 random templates rendered`);
});

test("property: convert --to graph of a rendered graph template renders the same catalog", async () => {
  await fc.assert(
    fc.asyncProperty(wellFormed, async (t) => {
      const cfg = await renderParsedGraphTemplate(t, memSource(POOL));
      const back = catalogToGraphTemplate(cfg);
      for (const format of ["json", "yaml"] as const) {
        const again = await renderGraphTemplate(
          formatGraphTemplate(back, format),
          reuseSource(cfg, { reuseTags: true }),
        );
        assert.equal(yaml(again), yaml(cfg));
      }
    }),
    { numRuns: 200 },
  );
});

test("property: formatGraphTemplate output parses back to the same template", async () => {
  await fc.assert(
    fc.property(wellFormed, fc.boolean(), fc.constantFrom("json" as const, "yaml" as const), (t, single, format) => {
      const u: GraphTemplate = single ? { ...t, graphs: t.graphs.slice(0, 1), singleGraph: true } : t;
      const parsed = parseGraphTemplate(formatGraphTemplate(u, format));
      const norm = (x: GraphTemplate): GraphTemplate =>
        JSON.parse(
          JSON.stringify({
            ...x,
            graphs: x.graphs.map((g) => ({
              ...g,
              tombstones: g.tombstones?.length ? g.tombstones : undefined,
              tailEdges: g.tailEdges && Object.keys(g.tailEdges).length ? g.tailEdges : undefined,
            })),
          }),
        ) as GraphTemplate;
      assert.deepEqual(norm(parsed), norm(u));
    }),
    { numRuns: 200 },
  );
});

test("addBundleToGraph: appends to the named graph and the images, idempotently", async () => {
  const t = template([{ name: "stable", entries: [nameOf(0), nameOf(1)] }], imagesOf([nameOf(0), nameOf(1)]));
  const added = addBundleToGraph(t, {
    bundleName: nameOf(3),
    image: POOL[3].image,
    channel: "stable",
    replaces: nameOf(1),
    skips: [nameOf(2)],
  });
  assert.deepEqual(added.graphs[0], {
    name: "stable",
    entries: [nameOf(0), nameOf(1), nameOf(2), nameOf(3)],
    tombstones: [nameOf(2)],
  });
  assert.deepEqual(added.bundles.images, imagesOf([nameOf(0), nameOf(1), nameOf(3)]));
  assert.deepEqual(t.graphs[0].entries, [nameOf(0), nameOf(1)], "the input is not modified");
  assert.deepEqual(
    addBundleToGraph(added, {
      bundleName: nameOf(3),
      image: POOL[3].image,
      channel: "stable",
      replaces: nameOf(1),
      skips: [nameOf(2)],
    }),
    added,
  );
  const cfg = await renderParsedGraphTemplate(added, memSource(POOL));
  assert.deepEqual(cfg.channels[0].entries?.at(-1), {
    name: nameOf(3),
    replaces: nameOf(1),
    skips: [nameOf(2)],
    skipRange: "",
  });

  const ranged = addBundleToGraph(added, {
    bundleName: nameOf(4),
    image: POOL[4].image,
    channel: "stable",
    skipRange: "<0.4.0",
  });
  assert.deepEqual(ranged.graphs[0].skipRanges, { [nameOf(4)]: "<0.4.0" });
  assert.deepEqual((await renderParsedGraphTemplate(ranged, memSource(POOL))).channels[0].entries?.at(-1), {
    name: nameOf(4),
    replaces: nameOf(3),
    skips: [],
    skipRange: "<0.4.0",
  });
  assert.deepEqual(
    addBundleToGraph(ranged, {
      bundleName: nameOf(4),
      image: POOL[4].image,
      channel: "stable",
      skipRange: "<0.4.0",
      replaces: nameOf(3),
    }),
    ranged,
  );

  const fresh = addBundleToGraph(t, {
    bundleName: nameOf(5),
    image: POOL[5].image,
    channel: "fast",
    replaces: nameOf(4),
    skipRange: "<0.5.0",
  });
  assert.deepEqual(fresh.graphs[1], {
    name: "fast",
    entries: [nameOf(5)],
    tailEdges: { replaces: nameOf(4), skipRange: "<0.5.0" },
  });

  const errs: [Parameters<typeof addBundleToGraph>[1], string][] = [
    [
      { bundleName: nameOf(4), image: "x", channel: "stable", replaces: nameOf(1) },
      `bundle "pkg.v0.4.0" cannot replace "pkg.v0.1.0": a new entry of ` +
        `graph "stable" replaces its last installable entry "pkg.v0.3.0"`,
    ],
    [
      { bundleName: nameOf(4), image: "x", channel: "stable", skips: [nameOf(2)] },
      `bundle "pkg.v0.4.0" cannot skip "pkg.v0.2.0": it is an ` +
        `entry of graph "stable" before its last installable entry`,
    ],
    [
      { bundleName: nameOf(3), image: "x", channel: "stable", replaces: nameOf(0) },
      `bundle "pkg.v0.3.0" is already an entry of graph "stable", with ` +
        `other edges (replaces "pkg.v0.1.0", skips [pkg.v0.2.0], skipRange "")`,
    ],
    [
      { bundleName: nameOf(3), image: "x", channel: "stable", skipRange: "<1.0.0" },
      `bundle "pkg.v0.3.0" is already an entry of graph "stable", with ` +
        `other edges (replaces "pkg.v0.1.0", skips [pkg.v0.2.0], skipRange "")`,
    ],
    [{ bundleName: nameOf(2), image: "x", channel: "stable" }, `bundle "pkg.v0.2.0" is a tombstone of graph "stable"`],
  ];
  for (const [add, message] of errs) {
    assert.throws(
      () => addBundleToGraph(added, add),
      (e: unknown) => e instanceof OpcatError && e.code === "TEMPLATE_GRAPH_ADD" && e.message === message,
    );
  }
  assert.throws(
    () => addBundleToGraph({ ...t, singleGraph: true }, { bundleName: "x", image: "x", channel: "other" }),
    /use graphs to add channel "other"/,
  );
});

test("property: addBundleToGraph keeps the template valid and makes the bundle the channel head", async () => {
  await fc.assert(
    fc.asyncProperty(wellFormed, fc.nat(100), async (t, pick) => {
      const g = t.graphs[pick % t.graphs.length];
      const used = new Set(
        t.graphs.flatMap((x) => [...x.entries, x.tailEdges?.replaces ?? "", ...(x.tailEdges?.skips ?? [])]),
      );
      const free = POOL.filter((b) => !used.has(b.name));
      fc.pre(free.length > 0);
      const b = free[pick % free.length];
      const added = addBundleToGraph(t, { bundleName: b.name, image: b.image, channel: g.name });
      assert.deepEqual(addBundleToGraph(added, { bundleName: b.name, image: b.image, channel: g.name }), added);
      const cfg = await renderParsedGraphTemplate(added, memSource(POOL));
      const ch = cfg.channels.find((c) => c.name === g.name);
      assert.equal(ch?.entries?.at(-1)?.name, b.name);
    }),
    { numRuns: 200 },
  );
});

test("loadText sanity: the seed bundles file is a bundles-only stream", () => {
  const r = loadText(read("seed-bundles.yaml"), "seed-bundles.yaml");
  assert.deepEqual(r.problems, []);
  assert.equal(r.config.bundles.length, 13);
});
