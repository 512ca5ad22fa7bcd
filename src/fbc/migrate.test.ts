import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { loadCatalog } from "./load.js";
import { csvMetadataFromCsv, migrate, MIGRATION_LEVELS, migrationHelpText, validateMigrationLevel } from "./migrate.js";
import { bundleCsvJson } from "./objects.js";
import { RawJson } from "./rawjson.js";
import { normalizeForRender } from "./render.js";
import { emptyConfig, type Bundle, type DeclarativeConfig, type Property } from "./types.js";
import { formatCatalog } from "./write.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.join(here, "testdata", "migrate");

interface Vector {
  name: string;
  csv: string;
  value?: string;
  error?: string;
  csvJson?: string;
}

/**
 * Golden vectors from the Go oracle in scripts/oracle/migrate (json.Unmarshal
 * into v1alpha1.ClusterServiceVersion + property.MustBuildCSVMetadata).
 */
const vectors = JSON.parse(readFileSync(path.join(testdata, "csv-metadata-vectors.json"), "utf8")) as Vector[];
const vector = (name: string): Vector => {
  const v = vectors.find((x) => x.name === name);
  assert.ok(v, `vector ${name}`);
  return v;
};

/**
 * Where opcat knowingly differs from Go: the pod template's PodSpec (k8s core/v1, hundreds of
 * fields) is only checked to be an object, so type errors inside it are not reported.
 */
const KNOWN_DEVIATIONS = new Set(["podspec unchecked inside"]);

function outcome(csv: string): { value?: string; error?: string } {
  try {
    return { value: csvMetadataFromCsv(csv) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const prop = (type: string, text: string): Property => ({ type, value: RawJson.fromText(text) });
const bundleObject = (data: string): Property =>
  prop("olm.bundle.object", JSON.stringify({ data: Buffer.from(data, "utf8").toString("base64") }));
const propsText = (b: Bundle): string[] => b.properties.map((p) => `${p.type} ${p.value.text}`);

describe("migration levels", () => {
  it("lists opm's migrations in order", () => {
    assert.deepEqual(
      MIGRATION_LEVELS.map((m) => m.name),
      ["none", "bundle-object-to-csv-metadata"],
    );
  });

  it("accepts every level and all, rejects others with opm's text", () => {
    assert.equal(validateMigrationLevel("none"), undefined);
    assert.equal(validateMigrationLevel("bundle-object-to-csv-metadata"), undefined);
    assert.equal(validateMigrationLevel("all"), undefined);
    assert.equal(validateMigrationLevel(""), 'unknown migration level ""');
    assert.equal(validateMigrationLevel("ALL"), 'unknown migration level "ALL"');
    // Go's %q (checked with a Go program).
    assert.equal(validateMigrationLevel("all\x01é\u2028"), 'unknown migration level "all\\x01é\\u2028"');
  });

  it("help text is opm's HelpText (tabwriter-aligned, checked with a Go program)", () => {
    assert.equal(
      migrationHelpText(),
      "\nThe migrator will run all migrations up to and including the selected level.\n\nAvailable migrators:\n" +
        "  - none                          : do nothing\n" +
        '  - bundle-object-to-csv-metadata : migrates bundles\' "olm.bundle.object" to "olm.csv.metadata"\n',
    );
  });

  it("migrate throws opm's error for an unknown level", () => {
    assert.throws(
      () => migrate(emptyConfig(), "bogus"),
      (e: unknown) => e instanceof OpcatError && e.message === 'unknown migration level "bogus"',
    );
  });
});

describe("csvMetadataFromCsv: golden vectors from the Go oracle", () => {
  for (const v of vectors) {
    it(v.name, () => {
      const got = outcome(v.csv);
      const want = v.error !== undefined ? { error: v.error } : { value: v.value };
      if (KNOWN_DEVIATIONS.has(v.name)) {
        assert.notDeepEqual(got, want, "a known deviation now matches Go: remove it from KNOWN_DEVIATIONS");
        assert.ok(got.value !== undefined);
        return;
      }
      assert.deepEqual(got, want);
    });
  }
});

// alpha/action/migrations/migrations_test.go
const fooRawCsv =
  `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": ` +
  `"foo.v0.1.0"}, "spec": {"displayName": "Foo Operator", "customresourcedefinitions": {"owned": ` +
  `[{"group": "test.foo", "version": "v1", "kind": "Foo", "name": "foos.test.foo"}]}, "version": ` +
  `"0.1.0", "relatedImages": [{"name": "operator", "image": "test.registry/foo-operator/foo:v0.1.0"}]}}`;
const fooRawCrd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.test.foo
spec:
  group: test.foo
  names:
    kind: Foo
    plural: foos
  versions:
    - name: v1`;

const fooHeadProps = (): Property[] => [
  prop("olm.gvk", '{"group":"test.foo","kind":"Foo","version":"v1"}'),
  prop("olm.gvk.required", '{"group":"test.bar","kind":"Bar","version":"v1alpha1"}'),
  prop("olm.package", '{"packageName":"foo","version":"0.1.0"}'),
  prop("olm.package.required", '{"packageName":"bar","versionRange":"<0.1.0"}'),
];

function unmigratedCatalog(): DeclarativeConfig {
  const cfg = emptyConfig();
  cfg.bundles.push({
    schema: "olm.bundle",
    name: "foo.v0.1.0",
    package: "foo",
    image: "quay.io/openshift-community-operators/foo:v0.1.0",
    properties: [...fooHeadProps(), bundleObject(fooRawCrd), bundleObject(fooRawCsv)],
    relatedImages: [],
  });
  return cfg;
}

describe("migrate (migrations_test.go)", () => {
  const expectedMigrated = [
    ...fooHeadProps(),
    prop("olm.csv.metadata", vector("migrations_test fooRawCsv").value as string),
  ].map((p) => `${p.type} ${p.value.text}`);

  it("none changes nothing", () => {
    const cfg = unmigratedCatalog();
    migrate(cfg, "none");
    assert.deepEqual(propsText(cfg.bundles[0]), propsText(unmigratedCatalog().bundles[0]));
  });

  for (const level of ["bundle-object-to-csv-metadata", "all"]) {
    it(`${level} replaces the bundle objects with olm.csv.metadata`, () => {
      const cfg = unmigratedCatalog();
      migrate(cfg, level);
      assert.deepEqual(propsText(cfg.bundles[0]), expectedMigrated);
      assert.equal(
        cfg.bundles[0].properties.at(-1)?.value.text,
        '{"apiServiceDefinitions":{},"crdDescriptions":{"owned":[{"name":"foos.test.foo",' +
          '"version":"v1","kind":"Foo"}]},"displayName":"Foo Operator","provider":{}}',
      );
      // Running it again changes nothing (the bundle has no CSV object left).
      migrate(cfg, level);
      assert.deepEqual(propsText(cfg.bundles[0]), expectedMigrated);
    });
  }

  it("leaves bundles without an image or without a CSV alone", () => {
    const cfg = unmigratedCatalog();
    cfg.bundles[0].image = "";
    const noCsv = {
      ...unmigratedCatalog().bundles[0],
      name: "foo.v0.2.0",
      properties: [...fooHeadProps(), bundleObject(fooRawCrd)],
    };
    cfg.bundles.push(noCsv);
    migrate(cfg, "all");
    assert.deepEqual(propsText(cfg.bundles[0]), propsText(unmigratedCatalog().bundles[0]));
    assert.deepEqual(propsText(cfg.bundles[1]).length, 5);
  });

  it("does not touch a bundle that already has olm.csv.metadata", () => {
    const cfg = unmigratedCatalog();
    const b = cfg.bundles[0];
    b.properties.push(prop("olm.csv.metadata", '{"displayName":"kept"}'));
    const before = propsText(b);
    migrate(cfg, "all");
    assert.deepEqual(propsText(b), before);
  });

  it("reproduces Go's in-place filtering when it stops at an existing olm.csv.metadata", () => {
    // props := b.Properties[:0] overwrites the shared array before the early return.
    const cfg = unmigratedCatalog();
    const b = cfg.bundles[0];
    const gvk = prop("olm.gvk", '{"group":"g","kind":"K","version":"v1"}');
    const meta = prop("olm.csv.metadata", "{}");
    b.properties = [bundleObject(fooRawCsv), gvk, meta];
    migrate(cfg, "all");
    assert.deepEqual(b.properties, [gvk, gvk, meta]);
  });

  it("fails with opm's error when a CSV cannot be decoded, before looking at properties", () => {
    const cfg = unmigratedCatalog();
    const bad = fooRawCsv.replace('"version": "0.1.0"', '"version": 1');
    cfg.bundles[0].properties = [...fooHeadProps(), bundleObject(bad), prop("olm.csv.metadata", "{}")];
    assert.throws(
      () => migrate(cfg, "bundle-object-to-csv-metadata"),
      (e: unknown) =>
        e instanceof OpcatError &&
        e.message ===
          "migrate: json: cannot unmarshal number into Go struct " +
            "field ClusterServiceVersionSpec.spec.version of type string",
    );
    // none never decodes anything
    migrate(cfg, "none");
  });

  it(
    "builds the value from a YAML CSV object the way opm " + "does (HTML-escaped CsvJSON, raw descriptor values kept)",
    () => {
      const yaml = readFileSync(path.join(testdata, "yaml-csv.yaml"), "utf8");
      const [expected] = JSON.parse(readFileSync(path.join(testdata, "yaml-csv.expected.json"), "utf8")) as Vector[];
      const cfg = unmigratedCatalog();
      const b = cfg.bundles[0];
      b.properties = [...fooHeadProps(), bundleObject(yaml)];
      assert.equal(bundleCsvJson(b), expected.csvJson);
      migrate(cfg, "all");
      assert.equal(b.properties.at(-1)?.type, "olm.csv.metadata");
      assert.equal(b.properties.at(-1)?.value.text, expected.value);
      assert.equal(b.properties.length, 5);
    },
  );
});

// Arbitrary CSV metadata built from JSON-friendly values, and an independent model of the Go output.
const text = fc.string({ unit: "binary", maxLength: 12 });
const smallMap = fc.dictionary(text, text, { maxKeys: 4 });
const jsonValue = fc.jsonValue({ maxDepth: 2 });
const descriptorArb = fc.record(
  {
    path: text,
    displayName: text,
    description: text,
    "x-descriptors": fc.array(text, { maxLength: 3 }),
    value: jsonValue,
  },
  { requiredKeys: ["path"] },
);
const crdArb = fc.record(
  {
    name: text,
    version: text,
    kind: text,
    displayName: text,
    description: text,
    resources: fc.array(fc.record({ name: text, kind: text, version: text }), { maxLength: 2 }),
    specDescriptors: fc.array(descriptorArb, { maxLength: 2 }),
    statusDescriptors: fc.array(descriptorArb, { maxLength: 2 }),
    actionDescriptors: fc.array(descriptorArb, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const apiArb = fc.record(
  {
    name: text,
    group: text,
    version: text,
    kind: text,
    deploymentName: text,
    containerPort: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    specDescriptors: fc.array(descriptorArb, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const link = fc.record({ name: text, url: text }, { requiredKeys: [] });
const csvArb = fc.record({
  metadata: fc.record({ annotations: smallMap, labels: smallMap }, { requiredKeys: [] }),
  spec: fc.record(
    {
      displayName: text,
      description: text,
      maturity: text,
      minKubeVersion: text,
      keywords: fc.array(text, { maxLength: 3 }),
      links: fc.array(link, { maxLength: 2 }),
      maintainers: fc.array(fc.record({ name: text, email: text }, { requiredKeys: [] }), { maxLength: 2 }),
      provider: link,
      installModes: fc.array(fc.record({ type: text, supported: fc.boolean() }), { maxLength: 2 }),
      nativeAPIs: fc.array(fc.record({ group: text, version: text, kind: text }), { maxLength: 2 }),
      customresourcedefinitions: fc.record(
        { owned: fc.array(crdArb, { maxLength: 2 }), required: fc.array(crdArb, { maxLength: 1 }) },
        { requiredKeys: [] },
      ),
      apiservicedefinitions: fc.record(
        { owned: fc.array(apiArb, { maxLength: 2 }), required: fc.array(apiArb, { maxLength: 1 }) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
});

type Obj = Record<string, unknown>;
/** Go struct encoding model: keys in the given order, omitempty for the listed keys. */
function pick(
  o: Obj | undefined,
  keys: string[],
  omitEmpty: Set<string>,
  sub: Record<string, (v: unknown) => unknown> = {},
): Obj {
  const out: Obj = {};
  for (const k of keys) {
    let v = o?.[k];
    if (v === undefined) v = k in sub ? undefined : typeof v === "boolean" ? false : "";
    if (k in sub) v = sub[k](v);
    if (omitEmpty.has(k) && (v === undefined || v === "" || v === 0 || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = v ?? (k === "supported" ? false : "");
  }
  return out;
}
const list = (f: (x: Obj) => unknown) => (v: unknown) => ((v as Obj[] | undefined) ?? []).map(f);
const descriptorModel = (d: Obj) => {
  const out = pick(
    d,
    ["path", "displayName", "description", "x-descriptors"],
    new Set(["displayName", "description", "x-descriptors"]),
    {
      "x-descriptors": (v) => v ?? [],
    },
  );
  // json.RawMessage: omitted only when absent (a JSON "" or null is kept).
  if (d.value !== undefined) out.value = d.value;
  return out;
};
const descriptorSubs = {
  resources: list((r) => pick(r, ["name", "kind", "version"], new Set())),
  statusDescriptors: list(descriptorModel),
  specDescriptors: list(descriptorModel),
  actionDescriptors: list(descriptorModel),
};
const descLists = ["resources", "statusDescriptors", "specDescriptors", "actionDescriptors"];
const crdModel = (c: Obj) =>
  pick(
    c,
    ["name", "version", "kind", "displayName", "description", ...descLists],
    new Set(["displayName", "description", ...descLists]),
    descriptorSubs,
  );
const apiModel = (a: Obj) =>
  pick(
    a,
    ["name", "group", "version", "kind", "deploymentName", "containerPort", "displayName", "description", ...descLists],
    new Set(["deploymentName", "containerPort", "displayName", "description", ...descLists]),
    {
      ...descriptorSubs,
      containerPort: (v) => v ?? 0,
    },
  );
const ownedRequired = (f: (x: Obj) => unknown) => (v: unknown) =>
  pick(v as Obj | undefined, ["owned", "required"], new Set(["owned", "required"]), {
    owned: list(f),
    required: list(f),
  });
const sortedMap = (v: unknown) => {
  const m = (v as Record<string, string> | undefined) ?? {};
  const keys = Object.keys(m).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return keys.length === 0 ? undefined : keys.map((k) => [k, m[k]]);
};
function csvModel(csv: { metadata: Obj; spec: Obj }): unknown {
  const s = csv.spec;
  const named = (second: string) => (l: Obj) => pick(l, ["name", second], new Set(["name", second]));
  return {
    annotations: sortedMap(csv.metadata.annotations),
    ...pick(
      s,
      ["apiservicedefinitions", "customresourcedefinitions", "description", "displayName", "installModes", "keywords"],
      new Set(["description", "displayName", "installModes", "keywords"]),
      {
        apiservicedefinitions: ownedRequired(apiModel),
        customresourcedefinitions: ownedRequired(crdModel),
        installModes: list((m) => pick(m, ["type", "supported"], new Set())),
        keywords: (v) => v ?? [],
      },
    ),
    labels: sortedMap(csv.metadata.labels),
    ...pick(
      s,
      ["links", "maintainers", "maturity", "minKubeVersion", "nativeAPIs", "provider"],
      new Set(["links", "maintainers", "maturity", "minKubeVersion", "nativeAPIs"]),
      {
        links: list(named("url")),
        maintainers: list(named("email")),
        nativeAPIs: list((g) => pick(g, ["group", "version", "kind"], new Set())),
        provider: (v) => named("url")((v as Obj | undefined) ?? {}),
      },
    ),
  };
}
/** Reads the Go output back into the model's shape (maps as sorted entry lists, key order kept). */
function outputModel(out: string): unknown {
  const o = JSON.parse(out) as Obj;
  const entries = (v: unknown) => (v === undefined ? undefined : Object.entries(v as Obj));
  return {
    annotations: entries(o.annotations),
    apiservicedefinitions: o.apiServiceDefinitions,
    customresourcedefinitions: o.crdDescriptions,
    ...Object.fromEntries(
      Object.entries(o).filter(
        ([k]) => !["annotations", "labels", "apiServiceDefinitions", "crdDescriptions"].includes(k),
      ),
    ),
    labels: entries(o.labels),
  };
}

describe("csvMetadataFromCsv properties", () => {
  it("matches an independent model of Go's struct encoding", () => {
    fc.assert(
      fc.property(csvArb, (csv) => {
        const out = csvMetadataFromCsv(JSON.stringify(csv));
        const model = csvModel(csv as { metadata: Obj; spec: Obj });
        assert.deepEqual(JSON.stringify(outputModel(out)), JSON.stringify(reorder(model, outputModel(out))));
        assert.ok(!/[\n\r\t]/.test(out.replace(/"(?:[^"\\]|\\.)*"/g, "")), "compact");
      }),
      { numRuns: 300 },
    );
  });

  it("does not depend on the CSV's formatting", () => {
    fc.assert(
      fc.property(csvArb, (csv) => {
        assert.equal(csvMetadataFromCsv(JSON.stringify(csv, null, 3)), csvMetadataFromCsv(JSON.stringify(csv)));
      }),
      { numRuns: 200 },
    );
  });

  it("never writes HTML escapes for strings it decodes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii" }), (s) => {
        const out = csvMetadataFromCsv(JSON.stringify({ spec: { displayName: s + "<&>" } }));
        assert.equal((JSON.parse(out) as Obj).displayName, s + "<&>");
        assert.ok(!out.includes("\\u003c"));
      }),
    );
  });
});

/** The model object with its top-level keys put in the order the output has them (both are checked separately). */
function reorder(model: unknown, out: unknown): unknown {
  const m = model as Obj;
  const o = out as Obj;
  const r: Obj = {};
  for (const k of Object.keys(o)) r[k] = m[k];
  for (const k of Object.keys(m)) if (!(k in r) && m[k] !== undefined) r[k] = m[k];
  return r;
}

// Conformance on real catalogs: v4.16 (bundle objects) migrated must equal v4.20 (migrated by opm).
describe("conformance: community catalogs v4.16 migrated = v4.20", () => {
  const repoRoot = path.resolve(here, "..", "..");
  const shared = process.env.OPCAT_SHARED ?? path.resolve(repoRoot, "../shared");
  const catalogs = path.join(shared, "data", "community", "catalogs");
  const available = existsSync(path.join(catalogs, "v4.16")) && existsSync(path.join(catalogs, "v4.20"));

  it("finds the shared data", (t) => {
    if (!available) {
      if (process.env.CI === "true") assert.fail(`shared data not found at ${catalogs} (set OPCAT_SHARED)`);
      t.diagnostic(`SKIPPED: shared data not found at ${catalogs} (set OPCAT_SHARED to run the conformance test)`);
    }
  });
  if (!available) return;

  const packages = readdirSync(path.join(catalogs, "v4.16")).filter(
    (p) =>
      existsSync(path.join(catalogs, "v4.16", p, "catalog.yaml")) &&
      existsSync(path.join(catalogs, "v4.20", p, "catalog.yaml")),
  );

  it("every bundle present in both renders identically", async (t) => {
    let identical = 0;
    let total = 0;
    const mismatches: string[] = [];
    for (const p of packages) {
      const oldRes = await loadCatalog(path.join(catalogs, "v4.16", p, "catalog.yaml"));
      const newRes = await loadCatalog(path.join(catalogs, "v4.20", p, "catalog.yaml"));
      assert.deepEqual(oldRes.problems, []);
      assert.deepEqual(newRes.problems, []);
      normalizeForRender(oldRes.config, { migrateLevel: "bundle-object-to-csv-metadata" });
      const newer = new Map(newRes.config.bundles.map((b) => [b.name, b]));
      for (const b of oldRes.config.bundles) {
        const nb = newer.get(b.name);
        if (!nb) continue;
        total++;
        const one = (x: Bundle): string =>
          formatCatalog({ ...emptyConfig(), bundles: [{ ...x, loc: undefined }] }, "yaml");
        if (one(b) === one(nb)) identical++;
        else mismatches.push(`${p}/${b.name}`);
      }
    }
    t.diagnostic(`${identical}/${total} bundles identical across ${packages.length} packages`);
    assert.ok(total > 0);
    assert.deepEqual(mismatches, []);
  });
});
