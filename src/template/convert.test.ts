import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { loadFile, loadText } from "../fbc/load.js";
import { normalizeForRender } from "../fbc/render.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { formatCatalog } from "../fbc/write.js";
import { catalogFiles, REPO_ROOT, requireShared } from "../../test/shared.js";
import { catalogToGraphTemplate, convertCatalog } from "./convert.js";
import { renderBasicTemplate } from "./basic.js";
import { renderGraphTemplate } from "./graph/graph.js";
import { reuseSource } from "./source/reuse.js";

const yaml = (cfg: DeclarativeConfig): string => formatCatalog(normalizeForRender(cfg), "yaml");

/** The catalog with each channel's entries in name order (entry order carries no meaning). */
function entryOrderFree(cfg: DeclarativeConfig): string {
  for (const ch of cfg.channels) ch.entries?.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return yaml(cfg);
}

const SMALL = [
  `{"schema":"olm.package","name":"a","defaultChannel":"stable","description":"<b>A</b> & co"}`,
  `{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":` +
    `"a.v1.0.0"},{"name":"a.v1.1.0","replaces":"a.v1.0.0","skips":["a.v1.0.1"]}]}`,
  `{"schema":"olm.bundle","package":"a","name":"a.v1.1.0","image":"quay.io/a/a:v1.1.0",` +
    `"properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.1.0"}}]}`,
  `{"schema":"olm.bundle","package":"a","name":"a.v1.0.0","image":"quay.io/a/a:v1.0.0",` +
    `"properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}`,
  `{"schema":"olm.deprecations","package":"a","entries":[{"reference":` +
    `{"schema":"olm.bundle","name":"a.v1.0.0"},"message":"old"}]}`,
  `{"schema":"custom.thing","package":"a","z":1,"a":[true]}`,
  `{"schema":"custom.root","x":"y"}`,
].join("\n");

test(
  "convert --to basic: opm's convert-template basic layout (sorted keys, " +
    "four-space JSON, HTML escaped; --- YAML), blobs in opm's write order",
  () => {
    const cfg = loadText(SMALL, "small.json").config;
    assert.equal(
      convertCatalog(cfg, { to: "basic" }),
      `{
    "schema": "olm.template.basic",
    "entries": [
        {
            "defaultChannel": "stable",
            "description": "\\u003cb\\u003eA\\u003c/b\\u003e \\u0026 co",
            "name": "a",
            "schema": "olm.package"
        },
        {
            "entries": [
                {
                    "name": "a.v1.0.0"
                },
                {
                    "name": "a.v1.1.0",
                    "replaces": "a.v1.0.0",
                    "skips": [
                        "a.v1.0.1"
                    ]
                }
            ],
            "name": "stable",
            "package": "a",
            "schema": "olm.channel"
        },
        {
            "schema": "olm.bundle",
            "image": "quay.io/a/a:v1.0.0"
        },
        {
            "schema": "olm.bundle",
            "image": "quay.io/a/a:v1.1.0"
        },
        {
            "a": [
                true
            ],
            "package": "a",
            "schema": "custom.thing",
            "z": 1
        },
        {
            "entries": [
                {
                    "message": "old",
                    "reference": {
                        "name": "a.v1.0.0",
                        "schema": "olm.bundle"
                    }
                }
            ],
            "package": "a",
            "schema": "olm.deprecations"
        },
        {
            "schema": "custom.root",
            "x": "y"
        }
    ]
}
`,
    );
    const y = convertCatalog(cfg, { to: "basic", output: "yaml", package: "a" });
    assert.ok(
      y.startsWith(
        "---\nentries:\n- defaultChannel: stable\n  description: <b>A</b> & co\n  name: a\n  schema: olm.package\n",
      ),
      y,
    );
    assert.ok(y.endsWith("schema: olm.template.basic\n\n"));
    assert.ok(!y.includes("custom.root"), "--package leaves out package-less blobs");
    assert.throws(
      () => convertCatalog(cfg, { to: "basic", package: "b" }),
      (e: unknown) =>
        e instanceof OpcatError &&
        e.code === "TEMPLATE_CONVERT_PACKAGE" &&
        e.message === `package "b" not found in the catalog`,
    );
  },
);

test(
  "convert --to basic matches opm's converter (opm alpha " + "convert-template basic, scripts/oracle/convert-basic)",
  () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), "testdata", "graph");
    const cfg = loadFile(join(dir, "convert-basic-input.json")).config;
    assert.deepEqual(
      Buffer.from(convertCatalog(cfg, { to: "basic" })),
      readFileSync(join(dir, "convert-basic-expected.json")),
    );
    assert.deepEqual(
      Buffer.from(convertCatalog(cfg, { to: "basic", output: "yaml" })),
      readFileSync(join(dir, "convert-basic-expected.yaml")),
    );
  },
);

test("convert --to basic renders back to the catalog (small catalog, both formats)", async () => {
  const cfg = loadText(SMALL, "small.json").config;
  for (const output of ["json", "yaml"] as const) {
    const back = await renderBasicTemplate(
      convertCatalog(cfg, { to: "basic", output }),
      reuseSource(cfg, { reuseTags: true }),
    );
    assert.equal(yaml(back), yaml(loadText(SMALL, "small.json").config));
  }
});

const GRAPHABLE = [
  `{"schema":"olm.package","name":"a","defaultChannel":"stable",` +
    `"icon":{"base64data":"PHN2Zy8+","mediatype":"image/svg+xml"}}`,
  `{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.2.0",` +
    `"replaces":"a.v1.1.0","skips":["a.v1.1.1","a.v1.1.2"],"skipRange":">=1.1.0 ` +
    `<1.2.0"},{"name":"a.v1.1.0","replaces":"a.v1.0.0","skips":["a.v0.9.0"],"skipRange":"<1.0.0"}]}`,
  `{"schema":"olm.channel","package":"a","name":"fast","entries":[{"name":"a.v1.2.0"}]}`,
  ...["1.1.0", "1.2.0"].map(
    (v) =>
      `{"schema":"olm.bundle","package":"a","name":"a.v${v}","image":"quay.io/a/a:v${v}",` +
      `"properties":[{"type":"olm.package","value":{"packageName":"a","version":"${v}"}}]}`,
  ),
].join("\n");

test(
  "convert --to graph: entries along the replaces chain, skipped names " +
    "as tombstones, first entry's edges as tail edges, later skipRanges",
  async () => {
    const text = GRAPHABLE;
    const cfg = loadText(text, "c.json").config;
    const t = catalogToGraphTemplate(cfg);
    assert.deepEqual(t, {
      schema: "olm.template.graph",
      package: { name: "a", defaultChannel: "stable", icon: { base64data: "PHN2Zy8+", mediatype: "image/svg+xml" } },
      bundles: { images: ["quay.io/a/a:v1.1.0", "quay.io/a/a:v1.2.0"] },
      graphs: [
        {
          name: "stable",
          entries: ["a.v1.1.0", "a.v1.1.1", "a.v1.1.2", "a.v1.2.0"],
          tombstones: ["a.v1.1.1", "a.v1.1.2"],
          tailEdges: { replaces: "a.v1.0.0", skips: ["a.v0.9.0"], skipRange: "<1.0.0" },
          skipRanges: { "a.v1.2.0": ">=1.1.0 <1.2.0" },
        },
        { name: "fast", entries: ["a.v1.2.0"] },
      ],
    });
    const back = await renderGraphTemplate(
      convertCatalog(cfg, { to: "graph", output: "yaml" }),
      reuseSource(cfg, { reuseTags: true }),
    );
    assert.equal(entryOrderFree(back), entryOrderFree(loadText(text, "c.json").config));
  },
);

test("convert --to graph refuses what a graph template cannot express, saying why", () => {
  const b = (v: string, pkg = "a"): string =>
    `{"schema":"olm.bundle","package":"${pkg}","name":"${pkg}.v${v}","image":"quay.io/a/${pkg}:v` +
    `${v}","properties":[{"type":"olm.package","value":{"packageName":"${pkg}","version":"${v}"}}]}`;
  const pkg = `{"schema":"olm.package","name":"a","defaultChannel":"s"}`;
  const ch = (entries: string): string => `{"schema":"olm.channel","package":"a","name":"s","entries":${entries}}`;
  const refused = (why: string): string => `package "a" cannot be expressed as a graph template: ${why}`;
  const cases: [string[], string, string][] = [
    [
      [pkg, ch(`[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1"},{"name":"a.v3","replaces":"a.v1"}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`channel "s": "a.v2" and "a.v3" both replace "a.v1" (a graph's entries form a single replaces chain)`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"},{"name":"a.v2"}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(
        `channel "s" has 2 entries that replace no entry of the channel ` +
          `(a.v1, a.v2); a graph's entries form a single replaces chain`,
      ),
    ],
    [
      [pkg, ch(`[{"name":"a.v1","replaces":"a.v2"},{"name":"a.v2","replaces":"a.v1"}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`channel "s": its replaces edges form a cycle`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1","skips":["a.v1"]}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(
        `channel "s": "a.v2" skips "a.v1", which is also an entry of the ` +
          `channel (only tombstones, which are not entries, can be skipped)`,
      ),
    ],
    [
      [
        pkg,
        ch(
          `[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1","skips":` +
            `["x"]},{"name":"a.v3","replaces":"a.v2","skips":["x"]}]`,
        ),
      ],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`channel "s": "x" is skipped by both "a.v2" and "a.v3" (a tombstone is skipped by one entry)`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1","skips":["x"]},{"name":"a.v2","replaces":"a.v1","skips":["x"]}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`channel "s": "x" is named by the first entry "a.v1" and skipped by "a.v2"`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"}]`), `{"schema":"olm.deprecations","package":"a","entries":[]}`],
      "TEMPLATE_CONVERT_GRAPH",
      refused("it has an olm.deprecations blob, which a graph template does not carry (convert --to basic keeps it)"),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"}]`), `{"schema":"my.blob","package":"a"}`],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`it has a "my.blob" blob, which a graph template does not carry (convert --to basic keeps it)`),
    ],
    [
      [
        `{"schema":"olm.package","name":"a","defaultChannel":"s","properties":[{"type":"x","value":1}]}`,
        ch(`[{"name":"a.v1"}]`),
      ],
      "TEMPLATE_CONVERT_GRAPH",
      refused("its olm.package blob has properties, which a graph template does not carry"),
    ],
    [
      [
        pkg,
        `{"schema":"olm.channel","package":"a","name":"s","entries":` +
          `[{"name":"a.v1"}],"properties":[{"type":"x","value":1}]}`,
      ],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`channel "s" has properties, which a graph template does not carry`),
    ],
    [[pkg, ch(`[]`)], "TEMPLATE_CONVERT_GRAPH", refused(`channel "s" has no entries`)],
    [[pkg], "TEMPLATE_CONVERT_GRAPH", refused("it has no channel")],
    [
      [pkg, ch(`[{"name":"a.v1"}]`), b("1"), b("2")],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`bundle "a.v2" is in no channel`),
    ],
    [
      [
        pkg,
        ch(`[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1"}]`),
        b("1"),
        b("2").replace("quay.io/a/a:v2", "quay.io/a/a:v1"),
      ],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`bundles "a.v1" and "a.v2" have the same image "quay.io/a/a:v1"`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"}]`), b("1").replace("quay.io/a/a:v1", "")],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`bundle "a.v1" has no image to render it from`),
    ],
    [
      [`{"schema":"olm.package","name":"a","defaultChannel":"t"}`, ch(`[{"name":"a.v1"}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`package.defaultChannel: "t" is not the name of a graph (channels: s)`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1","skipRange":"nope"}]`)],
      "TEMPLATE_CONVERT_GRAPH",
      refused(`graphs[0].tailEdges.skipRange: invalid skipRange "nope": Could not get version from string: "nope"`),
    ],
    [
      [pkg, ch(`[{"name":"a.v1"}]`), b("1", "b")],
      "TEMPLATE_CONVERT_PACKAGE",
      "the catalog has 2 packages (a, b); a graph template holds one: choose it with --package",
    ],
    [[], "TEMPLATE_CONVERT_PACKAGE", "the catalog has no package"],
  ];
  for (const [blobs, code, message] of cases) {
    const cfg = loadText(blobs.join("\n"), "c.json").config;
    assert.throws(
      () => catalogToGraphTemplate(cfg),
      (e: unknown) => {
        assert.ok(e instanceof OpcatError);
        assert.equal(e.message, message);
        assert.equal(e.code, code);
        return true;
      },
    );
  }
  const two = loadText(
    [pkg, ch(`[{"name":"a.v1"}]`), b("1"), `{"schema":"olm.package","name":"b","defaultChannel":"s"}`].join("\n"),
    "c.json",
  ).config;
  assert.equal(catalogToGraphTemplate(two, "a").package.name, "a");
  assert.throws(
    () => catalogToGraphTemplate(two, "c"),
    /^OpcatError: package "c" not found in the catalog$|package "c" not found in the catalog/,
  );
});

const REFUSAL_KINDS: [RegExp, string][] = [
  [/both replace/, "branching replaces"],
  [/entries that replace no entry of the channel/, "several chain starts"],
  [/which is also an entry of the channel/, "skips an entry of the channel"],
  [/is skipped by both|is named by the first entry/, "one name skipped twice"],
  [/replaces edges form a cycle|replaces cycle/, "replaces cycle"],
  [
    /olm\.deprecations|blob, which a graph template|has properties|icon has no base64data/,
    "blobs or fields a graph template does not carry",
  ],
  [/same image|no image|in no channel/, "bundle images"],
];

test("community catalogs: convert → render with --reuse gives back " +
  "the catalog (basic: all exactly; graph: what it can express)", {
  skip: requireShared().skip,
}, async (t) => {
  const files = [...catalogFiles("v4.16"), ...catalogFiles("v4.20")];
  assert.equal(files.length, 55);
  let graphExact = 0;
  let graphReordered = 0;
  const refusals = new Map<string, string[]>();
  for (const { file } of files) {
    const orig = loadFile(file).config;
    const want = yaml(loadFile(file).config);
    const src = reuseSource(orig, { reuseTags: true });
    for (const output of ["json", "yaml"] as const) {
      const back = await renderBasicTemplate(convertCatalog(orig, { to: "basic", output }), src);
      assert.equal(yaml(back), want, `${file} --to basic -o ${output}`);
    }
    let text: string;
    try {
      text = convertCatalog(orig, { to: "graph", output: "yaml" });
    } catch (e) {
      assert.ok(e instanceof OpcatError && e.code === "TEMPLATE_CONVERT_GRAPH", String(e));
      const kind = REFUSAL_KINDS.find(([re]) => re.test(e.message));
      assert.ok(kind, `unclassified refusal: ${e.message}`);
      refusals.set(kind[1], [...(refusals.get(kind[1]) ?? []), file.split("/").slice(-3, -1).join("/")]);
      continue;
    }
    const back = await renderGraphTemplate(text, src);
    if (yaml(back) === want) graphExact++;
    else {
      assert.equal(entryOrderFree(back), entryOrderFree(loadFile(file).config), `${file} --to graph`);
      graphReordered++;
    }
  }
  t.diagnostic(
    `graph: ${graphExact} exact, ${graphReordered} equal up to the order of ` +
      `channel entries, ${files.length - graphExact - graphReordered} refused`,
  );
  for (const [kind, list] of refusals) t.diagnostic(`  refused (${kind}): ${list.length}: ${list.join(", ")}`);
  assert.ok(graphExact + graphReordered > 0);
});

test("opcat template convert (CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-convert-"));
  try {
    const file = join(dir, "catalog.json");
    writeFileSync(file, SMALL + "\n");
    const run = (args: string[]): { code: number; stdout: string; stderr: string } => {
      const r = spawnSync(
        process.execPath,
        ["--import", "tsx", join(REPO_ROOT, "test/image/cli-harness.ts"), ...args],
        { cwd: REPO_ROOT, encoding: "utf8", env: { ...process.env, OPCAT_DEBUG: "" } },
      );
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    };
    const basic = run(["template", "convert", file, "--to", "basic"]);
    assert.equal(basic.code, 0, basic.stderr);
    assert.equal(basic.stdout, convertCatalog(loadText(SMALL, "x").config, { to: "basic" }));
    const graph = run(["template", "convert", file, "--to", "graph", "-o", "yaml"]);
    assert.equal(graph.code, 1);
    assert.match(graph.stderr, /package "a" cannot be expressed as a graph template: it has an olm\.deprecations blob/);
    const bad = run(["template", "convert", file, "--to", "semver"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --to value "semver", expected \(basic\|graph\)/);
    const missing = run(["template", "convert", join(dir, "nope"), "--to", "basic"]);
    assert.equal(missing.code, 2);
    // A graph template written by convert renders back through `template render` (type detected).
    const chain = join(dir, "chain.json");
    writeFileSync(chain, GRAPHABLE + "\n");
    const tmpl = run(["template", "convert", chain, "--to", "graph", "-o", "yaml"]);
    assert.equal(tmpl.code, 0, tmpl.stderr);
    assert.match(tmpl.stdout, /^---\n[\s\S]*schema: olm\.template\.graph\n$/);
    const tfile = join(dir, "graph.yaml");
    writeFileSync(tfile, tmpl.stdout);
    const rendered = run(["template", "render", tfile, "--reuse", chain, "--reuse-tags", "-o", "yaml"]);
    assert.equal(rendered.code, 0, rendered.stderr);
    assert.equal(
      entryOrderFree(loadText(rendered.stdout, "out.yaml").config),
      entryOrderFree(loadText(GRAPHABLE, "c.json").config),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
