import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { loadText } from "./load.js";
import { goSortSlice, renderMermaid } from "./mermaid.js";
import { generateMermaidCases } from "./testdata/mermaid/cases.js";
import type { DeclarativeConfig } from "./types.js";

const dir = new URL("./testdata/mermaid/", import.meta.url);

function load(text: string, name = "catalog.json"): DeclarativeConfig {
  const r = loadText(text, name);
  assert.deepEqual(r.problems, [], "fixture loads cleanly");
  return r.config;
}

const fixture = (): DeclarativeConfig => load(readFileSync(new URL("valid-config.json", dir), "utf8"));

const HEADER = `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
`;
/** An edge line of the boba-fett goldens, too long to write on one source line. */
const BOBA_EDGE =
  '      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]-- replace --> ' +
  'boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]';

// alpha/declcfg/write_test.go TestWriteMermaidChannels (library default: v0 semantics on).
test("TestWriteMermaidChannels/SuccessNoFilters", () => {
  const r = renderMermaid(fixture(), {});
  assert.equal(
    r.text,
    HEADER +
      `  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]
    end
  end
  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
${BOBA_EDGE}
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated
class anakin-dark-anakin.v0.1.0 skipped
linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
`,
  );
  assert.deepEqual(r.warnings, []);
});

test("TestWriteMermaidChannels/SuccessMinEdgeFilter", () => {
  const r = renderMermaid(fixture(), { minimumEdge: "anakin.v0.1.0" });
  assert.equal(
    r.text,
    HEADER +
      `  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.1.0 skipped
`,
  );
});

test("TestWriteMermaidChannels/SuccessPackageNameFilter", () => {
  const r = renderMermaid(fixture(), { packageName: "boba-fett" });
  assert.equal(
    r.text,
    HEADER +
      `  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
${BOBA_EDGE}
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
`,
  );
});

test("without v0 semantics only deprecations are decorated and there is no linkStyle", () => {
  const r = renderMermaid(fixture(), { drawV0Semantics: false });
  assert.ok(
    r.text.endsWith(
      "style anakin fill:#989695\nstyle anakin-light fill:#DCD0FF\n" +
        "class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated\n",
    ),
  );
  assert.ok(!r.text.includes("linkStyle"));
  assert.ok(!r.text.includes(" skipped\n"));
});

test("v0 semantics: re-skipped targets, edges of skipped entries and deprecatedskipped", () => {
  const cfg = load(
    [
      { schema: "olm.package", name: "p", defaultChannel: "c" },
      {
        schema: "olm.channel",
        package: "p",
        name: "c",
        entries: [
          { name: "p.v3", replaces: "p.v2", skips: ["p.v1"] },
          { name: "p.v2", skips: ["p.v1"], skipRange: "<2.0.0" },
          { name: "p.v1" },
        ],
      },
      ...[1, 2, 3].map((n) => ({
        schema: "olm.bundle",
        name: `p.v${n}`,
        package: "p",
        image: "i",
        properties: [{ type: "olm.package", value: { packageName: "p", version: `${n}.0.0` } }],
      })),
      {
        schema: "olm.deprecations",
        package: "p",
        entries: [{ reference: { schema: "olm.bundle", name: "p.v1" }, message: "m" }],
      },
    ]
      .map((b) => JSON.stringify(b))
      .join("\n"),
  );
  const r = renderMermaid(cfg, { drawV0Semantics: true });
  assert.equal(
    r.text,
    HEADER +
      `  %% package "p"
  subgraph "p"
    %% channel "c"
    subgraph p-c["c"]
      p-c-p.v3["p.v3"]
      p-c-p.v1["p.v1"]-- skip --> p-c-p.v3["p.v3"]
      p-c-p.v2["p.v2"]-- replace --> p-c-p.v3["p.v3"]
      p-c-p.v2["p.v2"]
      p-c-p.v1["p.v1"]-- skip --> p-c-p.v2["p.v2"]
      p-c-p.v1["p.v1"]-- "skipRange(<2.0.0)" --> p-c-p.v2["p.v2"]
      p-c-p.v1["p.v1"]
    end
  end
class p-c-p.v1 deprecatedskipped
linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
`,
  );
});

test("invalid skipRange is reported as a warning, not drawn", () => {
  const cfg = load(
    [
      { schema: "olm.channel", package: "p", name: "c", entries: [{ name: "a", skipRange: ">=x.y" }] },
      {
        schema: "olm.bundle",
        name: "a",
        package: "p",
        image: "i",
        properties: [{ type: "olm.package", value: { packageName: "p", version: "1.0.0" } }],
      },
    ]
      .map((b) => JSON.stringify(b))
      .join("\n"),
  );
  const r = renderMermaid(cfg, { drawV0Semantics: false });
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0], /^warning: ignoring invalid SkipRange for package\/edge "p"\/"a": /);
  assert.ok(!r.text.includes("skipRange"));
});

test("errors carry opm's messages", () => {
  const bad = (props: unknown): DeclarativeConfig =>
    load(JSON.stringify({ schema: "olm.bundle", name: "b", package: "p", image: "i", properties: props }));
  const expectErr = (cfg: DeclarativeConfig, code: string, message: string, opts = {}): void => {
    assert.throws(
      () => renderMermaid(cfg, opts),
      (e: unknown) => e instanceof OpcatError && e.code === code && e.message === message,
    );
  };
  expectErr(fixture(), "GRAPH_UNKNOWN_MINIMUM_EDGE", 'unknown minimum edge name: "nope"', { minimumEdge: "nope" });
  expectErr(
    bad([]),
    "GRAPH_BUNDLE_PACKAGE_PROPERTY",
    'bundle "b" has multiple "olm.package" properties, expected exactly 1',
  );
  expectErr(
    bad([{ type: "olm.package", value: { packageName: "p", version: "1.0" } }]),
    "GRAPH_BUNDLE_INVALID_VERSION",
    'bundle "b" has invalid version "1.0": No Major.Minor.Patch elements found',
  );
  expectErr(
    bad([{ type: "olm.package", value: "x" }]),
    "GRAPH_BUNDLE_PROPERTIES",
    'parse properties for bundle "b": parse property[0] of type "olm.package": ' +
      "json: cannot unmarshal string into Go value of type property.Package",
  );
});

test("a skipRange on which blang would panic is an error", () => {
  const cfg = load(
    [
      { schema: "olm.channel", package: "p", name: "c", entries: [{ name: "a", skipRange: ">5.0.0 || || <0.1.0" }] },
      {
        schema: "olm.bundle",
        name: "a",
        package: "p",
        image: "i",
        properties: [{ type: "olm.package", value: { packageName: "p", version: "1.0.0" } }],
      },
    ]
      .map((b) => JSON.stringify(b))
      .join("\n"),
  );
  assert.throws(
    () => renderMermaid(cfg),
    (e: unknown) => e instanceof OpcatError && e.code === "GRAPH_SKIPRANGE_PANIC",
  );
});

interface Vector {
  name: string;
  text?: string;
  sha256?: string;
  length?: number;
  error?: string;
  warnings?: string[];
}

test("golden vectors from opm's MermaidWriter (random catalogs, all options)", () => {
  const vectors = JSON.parse(readFileSync(new URL("vectors.json", dir), "utf8")) as Vector[];
  const cases = generateMermaidCases();
  assert.equal(cases.length, vectors.length);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const v = vectors[i];
    assert.equal(c.name, v.name);
    const cfg = load(c.catalog);
    const opts = { minimumEdge: c.minEdge, packageName: c.packageName, drawV0Semantics: c.drawV0Semantics };
    if (v.error !== undefined) {
      assert.throws(
        () => renderMermaid(cfg, opts),
        (e: unknown) => e instanceof OpcatError && e.message === v.error,
        c.name,
      );
      continue;
    }
    const r = renderMermaid(cfg, opts);
    if (v.text !== undefined) assert.equal(r.text, v.text, c.name);
    else {
      assert.equal(Buffer.byteLength(r.text), v.length, c.name);
      assert.equal(createHash("sha256").update(r.text).digest("hex"), v.sha256, c.name);
    }
    assert.deepEqual(r.warnings, v.warnings ?? [], c.name);
  }
});

test("renderMermaid does not modify its input", () => {
  const cfg = fixture();
  const before = JSON.stringify(cfg.channels);
  renderMermaid(cfg, { minimumEdge: "anakin.v0.1.0" });
  assert.equal(JSON.stringify(cfg.channels), before);
});

test("goSortSlice sorts like a comparison sort and is a permutation", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 400 }), (xs) => {
      const items = xs.map((k, i) => ({ k, i }));
      goSortSlice(items, (a, b) => a.k < b.k);
      for (let i = 1; i < items.length; i++) assert.ok(items[i - 1].k <= items[i].k);
      assert.deepEqual(
        items.map((x) => x.i).sort((a, b) => a - b),
        xs.map((_, i) => i),
      );
    }),
  );
});

test("goSortSlice is insertion sort (stable) up to 12 elements", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 12 }), (xs) => {
      const items = xs.map((k, i) => ({ k, i }));
      goSortSlice(items, (a, b) => a.k < b.k);
      const stable = xs.map((k, i) => ({ k, i })).sort((a, b) => a.k - b.k);
      assert.deepEqual(items, stable);
    }),
  );
});

test("every drawn line ends with a newline and node ids are package-channel-bundle", () => {
  for (const c of generateMermaidCases().slice(0, 60)) {
    let r;
    try {
      r = renderMermaid(load(c.catalog), {
        minimumEdge: c.minEdge,
        packageName: c.packageName,
        drawV0Semantics: c.drawV0Semantics,
      });
    } catch (e) {
      assert.ok(e instanceof OpcatError);
      continue;
    }
    assert.ok(r.text.endsWith("\n"));
    assert.ok(r.text.startsWith(HEADER));
  }
});
