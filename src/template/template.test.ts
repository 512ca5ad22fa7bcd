/** Unit tests: reuse rules, opm's linkChannels vectors (semver_test.go), properties of the generated graph. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import { validateCatalog } from "../fbc/validate.js";
import { formatCatalog } from "../fbc/write.js";
import { parseVersion } from "../semver/index.js";
import { detectTemplateSchema, renderSemverTemplate, renderTemplate, reuseSource, unavailableSource } from "./index.js";
import { generateSemverChannels, type Archetype } from "./semver.js";
import { goFormatFloatG } from "../gojson/float.js";
import { goFoldEqual } from "../gojson/unicode.js";

/** strconv.FormatFloat(f, 'g', -1, 32), from src/gojson/float.ts. */
const formatFloat32G = (f: number): string => goFormatFloatG(f, 32);

const bundle = (name: string, version: string, image: string, extra = ""): string =>
  `{"schema":"olm.bundle","name":"${name}","package":"a","image":"${image}","properties":` +
  `[{"type":"olm.package","value":{"packageName":"a","version":"${version}"}}${extra}]}\n`;

test("reuseSource: digest references only, unless reuseTags", async () => {
  const digest = "quay.io/a/b@sha256:" + "0".repeat(64);
  const cat = loadText(bundle("a.v1", "1.0.0", digest) + bundle("a.v2", "2.0.0", "quay.io/a/b:v2"), "c.json").config;
  const strict = reuseSource(cat);
  assert.equal((await strict.render(digest)).name, "a.v1");
  await assert.rejects(
    strict.render("quay.io/a/b:v2"),
    (e: OpcatError) => e.code === "TEMPLATE_REUSE_TAG" && e.kind === "usage",
  );
  const tags = reuseSource(cat, { reuseTags: true });
  assert.equal((await tags.render("quay.io/a/b:v2")).name, "a.v2");
  await assert.rejects(
    tags.render("quay.io/a/b:v3"),
    (e: OpcatError) =>
      e.code === "TEMPLATE_REUSE_NOT_FOUND" &&
      e.message === 'render reference "quay.io/a/b:v3": image not found in the reused catalog',
  );
  // copies: mutating a result leaves the catalog alone
  const b = await tags.render("quay.io/a/b:v2");
  b.properties.length = 0;
  assert.equal(cat.bundles[1].properties.length, 1);
});

test("unavailableSource: a clear error, exit code 2", async () => {
  await assert.rejects(
    renderTemplate("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: x\n", unavailableSource()),
    (e: OpcatError) =>
      e.kind === "io" &&
      e.message ===
        `rendering template: render reference "x": no bundle source given (bundle images are not pulled here)`,
  );
});

test(
  "semver from a csv-metadata catalog: description from " +
    "olm.csv.metadata, icon from the package of the default channel head",
  async () => {
    const meta = ',{"type":"olm.csv.metadata","value":{"description":"Hello <b>","displayName":"A"}}';
    const cat = loadText(
      '{"schema":"olm.package","name":"a","defaultChannel":"stable-v1.0",' +
        '"icon":{"base64data":"aGk=","mediatype":"image/png"}}\n' +
        '{"schema":"olm.channel","name":"stable-v1.0","package":' +
        '"a","entries":[{"name":"a.v1.0.0"},{"name":"a.v1.0.1"}]}\n' +
        bundle("a.v1.0.0", "1.0.0", "r/a:1.0.0", meta) +
        bundle("a.v1.0.1", "1.0.1", "r/a:1.0.1", meta),
      "c.json",
    ).config;
    const src = reuseSource(cat, { reuseTags: true });
    const one = await renderSemverTemplate("schema: olm.semver\nstable:\n  bundles:\n  - image: r/a:1.0.0\n", src);
    assert.equal(one.packages[0].description, "Hello <b>");
    assert.equal(one.packages[0].icon, undefined);
    const two = await renderSemverTemplate(
      "schema: olm.semver\nstable:\n  bundles:\n  - image: r/a:1.0.0\n  - image: r/a:1.0.1\n",
      src,
    );
    const icon = two.packages[0].icon;
    assert.equal(icon?.mediatype, "image/png");
    assert.equal(Buffer.from(icon?.base64data ?? []).toString(), "hi");
  },
);

// alpha/template/semver/semver_test.go TestGenerateChannels (major and minor), as (channel, entries) text.
test("generateSemverChannels: opm's TestGenerateChannels vectors", () => {
  const names = [
    "0.1.0",
    "0.1.1",
    "1.1.0",
    "1.2.1",
    "1.3.1",
    "2.1.0",
    "1.3.1-beta",
    "2.1.1",
    "2.3.1",
    "2.3.2",
    "3.1.0",
    "3.1.1",
    "1.3.1-alpha",
    "1.4.1",
    "1.4.1-beta1",
    "1.4.1-beta2",
  ];
  const versions = new Map<Archetype, Map<string, ReturnType<typeof parseVersion>>>([
    ["stable", new Map(names.map((v) => [`a-v${v}`, parseVersion(v)]))],
  ]);
  const show = (chs: ReturnType<typeof generateSemverChannels>["channels"]): string =>
    chs
      .map(
        (c) =>
          `${c.name}: ` +
          (c.entries ?? [])
            .map(
              (e) =>
                `${e.name}${e.replaces ? ` r=${e.replaces}` : ""}${e.skips.length ? ` s=[${e.skips.join(",")}]` : ""}`,
            )
            .join("; "),
      )
      .join("\n");
  const major = generateSemverChannels(
    { generateMajorChannels: true, generateMinorChannels: false, defaultChannelTypePreference: "major" },
    "a",
    versions,
  );
  assert.equal(major.defaultChannel, "stable-v3");
  assert.equal(
    show(major.channels),
    [
      "stable-v0: a-v0.1.0; a-v0.1.1 s=[a-v0.1.0]",
      "stable-v1: a-v1.1.0; a-v1.2.1 r=a-v1.1.0; a-v1.3.1-alpha; a-v1.3.1-beta; a-v1.3.1 r=a-v1.2.1 " +
        "s=[a-v1.1.0,a-v1.3.1-alpha,a-v1.3.1-beta]; a-v1.4.1-beta1; a-v1.4.1-beta2; a-v1.4.1 " +
        "r=a-v1.3.1 s=[a-v1.1.0,a-v1.2.1,a-v1.3.1-alpha,a-v1.3.1-beta,a-v1.4.1-beta1,a-v1.4.1-beta2]",
      "stable-v2: a-v2.1.0; a-v2.1.1 s=[a-v2.1.0]; a-v2.3.1; a-v2.3.2 r=a-v2.1.1 s=[a-v2.1.0,a-v2.3.1]",
      "stable-v3: a-v3.1.0; a-v3.1.1 s=[a-v3.1.0]",
    ].join("\n"),
  );
  const both = generateSemverChannels(
    { generateMajorChannels: true, generateMinorChannels: true, defaultChannelTypePreference: "minor" },
    "a",
    versions,
  );
  assert.equal(both.defaultChannel, "stable-v3.1");
  assert.equal(
    generateSemverChannels(
      { generateMajorChannels: true, generateMinorChannels: true, defaultChannelTypePreference: "major" },
      "a",
      versions,
    ).defaultChannel,
    "stable-v3",
  );
  const minor = generateSemverChannels(
    { generateMajorChannels: false, generateMinorChannels: true, defaultChannelTypePreference: "minor" },
    "a",
    versions,
  );
  assert.match(show(minor.channels), /^stable-v1\.2: a-v1\.2\.1 r=a-v1\.1\.0$/m);
  assert.match(
    show(minor.channels),
    /^stable-v2\.3: a-v2\.3\.1; a-v2\.3\.2 r=a-v2\.1\.1 s=\[a-v2\.1\.0,a-v2\.3\.1\]$/m,
  );
});

test("property: semver output is a valid catalog whose every channel has one head, for any version set", async () => {
  const ver = fc.tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 4 }),
    fc.integer({ min: 0, max: 12 }),
    fc.option(fc.constantFrom("alpha", "beta.1", "rc.2"), { nil: undefined }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(ver, { minLength: 1, maxLength: 25, selector: (v) => v.join(".") }),
      fc.boolean(),
      fc.boolean(),
      fc.array(fc.constantFrom<Archetype>("candidate", "fast", "stable"), { minLength: 1, maxLength: 3 }),
      async (vs, major, minor, archs) => {
        const strs = vs.map(([x, y, z, p]) => `${x}.${y}.${z}${p ? `-${p}` : ""}`);
        const cat = loadText(strs.map((s) => bundle(`a.v${s}`, s, `r/a:${s}`)).join(""), "c.json").config;
        const arch = (a: Archetype): string =>
          `${a}:\n  bundles:\n` + strs.map((s) => `  - image: r/a:${s}\n`).join("");
        const text =
          `schema: olm.semver\ngenerateMajorChannels: ${major}\ngenerateMinorChannels: ${minor}\n` +
          [...new Set(archs)].map(arch).join("");
        const cumulative = await renderSemverTemplate(text, reuseSource(cat, { reuseTags: true }));
        const ystream = await renderSemverTemplate(text, reuseSource(cat, { reuseTags: true }), { skips: "y-stream" });
        for (const cfg of [cumulative, ystream]) {
          const problems = validateCatalog(loadText(formatCatalog(cfg, "json"), "out.json").config).problems;
          assert.deepEqual(
            problems.filter((p) => p.severity === "error" && !/default channel/.test(p.message)),
            [],
          );
          for (const c of cfg.channels) {
            const entries = c.entries ?? [];
            const target = new Set(entries.flatMap((e) => [e.replaces, ...e.skips]));
            // the last entry (highest version) is never replaced nor skipped inside its channel
            assert.ok(!target.has(entries[entries.length - 1].name));
          }
        }
        // y-stream mode: same channels, same replaces, skips a subset
        // of the cumulative ones, each in the head's own X.Y
        assert.deepEqual(ystream.packages, cumulative.packages);
        assert.deepEqual(
          ystream.channels.map((c) => c.name),
          cumulative.channels.map((c) => c.name),
        );
        const xy = (name: string): string => name.replace(/^a\.v(\d+)\.(\d+)\..*$/, "$1.$2");
        ystream.channels.forEach((c, i) => {
          (c.entries ?? []).forEach((e, j) => {
            const other = (cumulative.channels[i].entries ?? [])[j];
            assert.equal(e.name, other.name);
            assert.equal(e.replaces, other.replaces);
            assert.ok(e.skips.every((s) => other.skips.includes(s) && xy(s) === xy(e.name)));
            assert.deepEqual(
              other.skips.filter((s) => xy(s) === xy(e.name)),
              e.skips,
            );
          });
        });
      },
    ),
    { numRuns: 60 },
  );
});

test("detectTemplateSchema: schema of the first document", () => {
  assert.equal(detectTemplateSchema('{"Schema":"olm.semver"}\n{"x":1}'), "olm.semver");
  assert.throws(() => detectTemplateSchema(""), /auto-detecting template type: decoding template input: EOF/);
});

test("helpers: Go's case folding, float32 formatting", () => {
  assert.ok(
    goFoldEqual("SCHEMA", "schema") &&
      goFoldEqual("ſchema", "schema") &&
      goFoldEqual("\u212aind", "kind") &&
      !goFoldEqual("schemas", "schema"),
  );
  assert.equal(formatFloat32G(5.25), "5.25");
  assert.equal(formatFloat32G(0.1), "0.1");
  assert.equal(formatFloat32G(3.14159265), "3.1415927");
  assert.equal(formatFloat32G(1e-7), "1e-07");
  assert.equal(formatFloat32G(1234567.5), "1.2345675e+06");
});
