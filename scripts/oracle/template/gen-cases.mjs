import { writeFileSync } from "node:fs";
// Writes src/template/testdata/cases.json: node gen-cases.mjs ../../../src/template/testdata/cases.json
const out = process.argv[2];
const TO = ["0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.2.0", "0.2.1", "0.2.2", "0.3.0", "1.0.0", "1.0.1", "1.1.0"];
const img = (v) => `quay.io/foo/olm:testoperator.v${v}`;
const csv = (desc, icon) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: "x" },
      spec: { description: desc, ...(icon ? { icon } : {}) },
    }),
  ).toString("base64");
const bundle = (name, pkg, version, image, extra = []) => ({
  schema: "olm.bundle",
  name,
  package: pkg,
  image,
  properties: [{ type: "olm.package", value: { packageName: pkg, version } }, ...extra],
});
const bundles = [];
for (const v of TO)
  bundles.push(
    bundle(
      `testoperator.v${v}`,
      "testoperator",
      v,
      img(v),
      v === "1.0.1"
        ? [
            {
              type: "olm.bundle.object",
              value: {
                data: csv("Test operator provides awesome functionality", [
                  { base64data: "aGVsbG93b3JsZA==", mediatype: "image/svg+xml" },
                  { base64data: "c2Vjb25k", mediatype: "image/png" },
                ]),
              },
            },
          ]
        : [],
    ),
  );
const extra = [
  bundle("other.v1.0.0", "other", "1.0.0", "r/other:1.0.0"),
  bundle("bad.v1", "testoperator", "1.0", "r/bad:1.0"),
  bundle("nopkg.v1", "testoperator", "", "r/nopkg"),
  bundle("dup.v1.0.0", "dup", "1.0.0", "r/dup:a"),
  bundle("dup.v1.0.0", "dup", "1.0.0", "r/dup:b"),
  bundle("p.v0.9.0", "p", "0.9.0", "r/p:0.9.0"),
  bundle("p.v0.10.0", "p", "0.10.0", "r/p:0.10.0"),
  bundle("p.v0.10.1-rc.1", "p", "0.10.1-rc.1", "r/p:0.10.1-rc.1"),
  bundle("p.v0.10.1", "p", "0.10.1", "r/p:0.10.1"),
  bundle("p.v0.11.0", "p", "0.11.0", "r/p:0.11.0"),
  bundle("p.v1.0.0-alpha", "p", "1.0.0-alpha", "r/p:1.0.0-alpha"),
  bundle("p.v2.0.0", "p", "2.0.0", "r/p:2.0.0"),
  bundle("p.v2.1.0", "p", "2.1.0", "r/p:2.1.0"),
  bundle("z.v0.0.0-a", "z", "0.0.0-a", "r/z:a"),
  bundle("bm.v1.0.0+a", "bm", "1.0.0+a", "r/bm:a"),
  bundle("bm.v1.0.0+b", "bm", "1.0.0+b", "r/bm:b"),
  bundle("m.v3.1.0", "m", "3.1.0", "r/m:3.1.0"),
  bundle("m.v3.2.0", "m", "3.2.0", "r/m:3.2.0"),
  bundle("five", "five", "1.2.3", "5"),
  {
    ...bundle("two.v1", "two", "1.0.0", "r/two"),
    properties: [
      { type: "olm.package", value: { packageName: "two", version: "1.0.0" } },
      { type: "olm.package", value: { packageName: "two", version: "1.0.1" } },
    ],
  },
  { ...bundle("nopr.v1", "nopr", "1.0.0", "r/nopr"), properties: [] },
  bundle("e.v1.0.0", "e", "1.0.0", "docker.io/example/example-operator-bundle:0.1.0", [
    { type: "olm.gvk", value: { group: "example.com", kind: "App", version: "v1" } },
  ]),
  bundle("e.v2.0.0", "e", "2.0.0", "docker.io/example-operator-bundle:0.2.0"),
];
const all = [...bundles, ...extra].map((b) => JSON.stringify(b)).join("\n") + "\n";
const cases = [];
const add = (name, input, type) => cases.push({ name, ...(type ? { type } : {}), input });
// --- detection / dispatch
add("detect: empty input", "");
add("detect: whitespace only", "  \n\n");
add("detect: comment only", "# nothing\n");
add("detect: schema is a number", "schema: 1\n");
add("detect: sequence", "- a\n- b\n");
add("detect: scalar", "hello\n");
add("detect: missing schema", "foo: bar\n");
add("detect: unknown schema", "schema: olm.unknown\n");
add("detect: JSON number schema", '{"schema": 5}');
add("detect: truncated JSON", '{"schema": "olm.semver"');
add("detect: YAML syntax error", "schema: [olm.semver\n");
add("detect: upper-case key", "Schema: olm.template.basic\nEntries: []\n");
add("detect: leading separator", "---\nschema: olm.template.basic\nentries: []\n");
add("detect: bad separator", "--- x\nschema: olm.template.basic\n");
add("detect: null schema", "schema: null\n");
add("detect: case differs in schema value", "schema: olm.Semver\n");
add("type: unknown type", "schema: olm.semver\n", "foo");
add("type: basic given semver input", "schema: olm.semver\n", "basic");
add("type: semver given basic input", "schema: olm.template.basic\nentries: []\n", "semver");
// --- basic
const basicOk = `schema: olm.template.basic
entries:
  - schema: olm.package
    name: e
    defaultChannel: stable
  - schema: olm.channel
    package: e
    name: stable
    entries:
      - name: e.v1.0.0
      - name: e.v2.0.0
        replaces: e.v1.0.0
  - schema: olm.bundle
    image: docker.io/example/example-operator-bundle:0.1.0
  - schema: olm.bundle
    name: ignored-name
    image: docker.io/example-operator-bundle:0.2.0
  - schema: olm.deprecations
    package: e
    entries:
      - reference: {schema: olm.bundle, name: e.v1.0.0}
        message: old
  - schema: custom.thing
    package: e
    name: x
    data: {b: 1, a: [true, null]}
`;
add("basic: full", basicOk);
add("basic: full, explicit type", basicOk, "basic");
add(
  "basic: JSON input",
  JSON.stringify(
    {
      schema: "olm.template.basic",
      entries: [
        { schema: "olm.package", name: "e" },
        { schema: "olm.bundle", image: "docker.io/example-operator-bundle:0.2.0" },
      ],
    },
    null,
    2,
  ),
);
add(
  "basic: upper-case keys",
  "Schema: olm.template.basic\nEntries:\n- Schema: olm.bundle\n" +
    "  Image: docker.io/example-operator-bundle:0.2.0\n- SCHEMA: olm.package\n  NAME: e\n",
);
add(
  "basic: bundle with package",
  "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  package: e\n  image: r/x\n",
);
add(
  "basic: bundle with properties",
  "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: r/x\n  properties: [{type: a, value: 1}]\n",
);
add(
  "basic: bundle with relatedImages",
  "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: r/x\n  relatedImages: [{image: a}]\n",
);
add("basic: bundle without image", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  name: a\n");
add(
  "basic: bundle with unknown field",
  "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n" +
    "  image: docker.io/example-operator-bundle:0.2.0\n  foo: bar\n",
);
add("basic: unknown image", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: r/missing\n");
add(
  "basic: first bad bundle wins over later ones",
  "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n" +
    "  image: r/missing\n- schema: olm.bundle\n  image: r/x\n  package: p\n",
);
add("basic: entries not a list", "schema: olm.template.basic\nentries: 5\n", "basic");
add("basic: entry is a string", "schema: olm.template.basic\nentries: [x]\n");
add("basic: entry is a list", "schema: olm.template.basic\nentries: [[1]]\n");
add("basic: entry without schema", "schema: olm.template.basic\nentries:\n- name: a\n  zz: 1\n");
add(
  "basic: entry with duplicate keys",
  "schema: olm.template.basic\nentries:\n- schema: olm.package\n  Schema: olm.package\n  name: a\n",
);
add("basic: entry with non-string name", "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: 5\n");
add(
  "basic: package with bad field type",
  "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n  defaultChannel: [x]\n",
);
add(
  "basic: channel with bad entries",
  "schema: olm.template.basic\nentries:\n- schema: olm.channel\n  name: a\n  package: p\n  entries: x\n",
);
add("basic: schema mismatch", "schema: olm.template.basicx\nentries: []\n", "basic");
add("basic: schema is a number", "schema: 1\nentries: []\n", "basic");
add("basic: top-level sequence", "- a\n", "basic");
add("basic: empty input", "", "basic");
add("basic: syntax error", "schema: [\n", "basic");
add(
  "basic: only first document",
  "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n---\nschema: olm.package\nname: b\n",
);
add("basic: empty entries", "schema: olm.template.basic\n");
add(
  "basic: meta error beats typed error",
  "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n  defaultChannel: [x]\n- x\n",
);
// --- semver
const sv = (major, minor, pref) => `Schema: olm.semver
GenerateMajorChannels: ${major}
GenerateMinorChannels: ${minor}
${pref !== undefined ? `DefaultChannelTypePreference: ${pref}\n` : ""}Candidate:
  Bundles:
${TO.map((v) => `  - Image: ${img(v)}`).join("\n")}
Fast:
  Bundles:
${["0.2.1", "0.2.2", "0.3.0", "1.0.1", "1.1.0"].map((v) => `  - Image: ${img(v)}`).join("\n")}
Stable:
  Bundles:
  - Image: ${img("1.0.1")}
`;
add("semver: README major only", sv(true, false));
add("semver: README minor only", sv(false, true));
add("semver: README both", sv(true, true));
add("semver: README both, prefer major", sv(true, true, "major"));
add("semver: README neither (defaults to minor)", sv(false, false));
add("semver: prefer minor without minor channels", sv(true, false, "minor"));
add("semver: prefer major without major channels", sv(false, true, "major"));
add("semver: unknown preference", sv(false, true, "foo"));
add(
  "semver: lower-case keys, explicit type",
  `schema: olm.semver\ngenerateMajorChannels: true\nstable:\n` +
    `  bundles:\n  - image: ${img("1.0.0")}\n  - image: ${img("1.0.1")}\n`,
  "semver",
);
add(
  "semver: JSON input",
  JSON.stringify({ schema: "olm.semver", fast: { bundles: [{ image: img("0.1.0") }, { image: img("0.2.0") }] } }),
);
add("semver: duplicate key", "schema: olm.semver\nschema: olm.semver\n");
add(
  "semver: duplicate nested keys",
  `schema: olm.semver\nstable:\n  bundles: []\n  bundles:\n  - image: a\ncandidate: {}\ncandidate:\n  bundles: []\n`,
);
add("semver: unknown field", "schema: olm.semver\ninvalid:\n  bundles: []\n");
add(
  "semver: unknown nested field",
  `schema: olm.semver\nstable:\n  bundles:\n  - image: ${img("1.0.0")}\n    foo: 1\n`,
);
add("semver: unknown field inside channel", `schema: olm.semver\nstable:\n  things: 1\n`);
add("semver: quoted bool", 'schema: olm.semver\ngenerateMajorChannels: "yes"\n');
add(
  "semver: YAML 1.1 bool",
  `schema: olm.semver\ngenerateMajorChannels: yes\ngenerateMinorChannels: off\n` +
    `stable:\n  bundles:\n  - image: ${img("1.0.0")}\n`,
);
add("semver: channel is a number", "schema: olm.semver\ncandidate: 5\n");
add("semver: bundles is a number", "schema: olm.semver\ncandidate:\n  bundles: 5\n");
add("semver: bundle is a number", "schema: olm.semver\ncandidate:\n  bundles: [5]\n");
add("semver: image is a number", "schema: olm.semver\ncandidate:\n  bundles: [{image: 5}]\n");
add("semver: image is a float", "schema: olm.semver\ncandidate:\n  bundles: [{image: 5.25}]\n");
add("semver: schema is a number", "schema: 5\n", "semver");
add("semver: preference is a bool", "schema: olm.semver\ndefaultChannelTypePreference: true\n");
add("semver: type error then unknown field", "schema: olm.semver\ngenerateMajorChannels: [1]\nzzz: 1\n");
add("semver: unknown field then type error (sorted keys)", "schema: olm.semver\nStable: 1\naaa: 1\n");
add("semver: top-level sequence", "- a\n", "semver");
add("semver: empty input", "", "semver");
add("semver: syntax error", "schema: olm.semver\nstable: [\n", "semver");
add("semver: wrong schema", "schema: olm.semverx\n", "semver");
add("semver: no bundles", "schema: olm.semver\n");
add("semver: empty bundle lists", "schema: olm.semver\ncandidate: {bundles: []}\nfast: null\n");
add(
  "semver: only first document",
  `schema: olm.semver\nstable:\n  bundles:\n  - image: ${img("1.0.0")}\n---\n{{{ garbage\n`,
);
add("semver: missing image", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/missing\n");
add("semver: invalid version", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/bad:1.0\n");
add("semver: empty version", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/nopkg\n");
add("semver: two olm.package properties", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/two\n");
add("semver: no olm.package property", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/nopr\n");
add(
  "semver: other package",
  `schema: olm.semver\nstable:\n  bundles:\n  - image: ${img("1.0.0")}\n  - image: r/other:1.0.0\n`,
);
add(
  "semver: other package across archetypes",
  `schema: olm.semver\ncandidate:\n  bundles:\n  - image: ${img("1.0.0")}\n` +
    `stable:\n  bundles:\n  - image: r/other:1.0.0\n`,
);
add(
  "semver: same image twice in one archetype",
  `schema: olm.semver\nstable:\n  bundles:\n  - image: ${img("1.0.0")}\n  - image: ${img("1.0.0")}\n`,
);
add(
  "semver: two images, same bundle name",
  "schema: olm.semver\nstable:\n  bundles:\n  - image: r/dup:a\n  - image: r/dup:b\n",
);
add("semver: build metadata alone is fine", "schema: olm.semver\nstable:\n  bundles:\n  - image: r/bm:a\n");
add(
  "semver: build metadata across archetypes is fine",
  "schema: olm.semver\ncandidate:\n  bundles:\n  - image: r/bm:a\nstable:\n  bundles:\n  - image: r/bm:b\n",
);
const pAll = ["0.9.0", "0.10.0", "0.10.1-rc.1", "0.10.1", "0.11.0", "1.0.0-alpha", "2.0.0", "2.1.0"]
  .map((v) => `  - image: r/p:${v}`)
  .join("\n");
add(
  "semver: byte-order skips, prereleases, both kinds",
  `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ncandidate:\n` +
    `  bundles:\n${pAll}\nfast:\n  bundles:\n  - image: r/p:0.10.0\n  - image: r/p:0.9.0\n`,
);
add(
  "semver: byte-order skips, major",
  `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\ncandidate:\n  bundles:\n${pAll}\n`,
);
add(
  "semver: only 0.0.0 prerelease leaves default channel empty",
  "schema: olm.semver\ncandidate:\n  bundles:\n  - image: r/z:a\n",
);
add(
  "semver: preference breaks exact ties only",
  "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n" +
    "defaultChannelTypePreference: major\nstable:\n  bundles:\n  - image: r/m:3.1.0\n  - image: r/m:3.2.0\n",
);
add(
  "semver: preference major with a single minor",
  "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n" +
    "defaultChannelTypePreference: major\nstable:\n  bundles:\n  - image: r/m:3.1.0\n",
);
add("semver: image coerced from number", "schema: olm.semver\nstable:\n  bundles:\n  - image: 5\n");
add("semver: ſchema folds to schema", "ſchema: olm.semver\nstable:\n  bundles:\n  - image: 5\n", "semver");
writeFileSync(out, JSON.stringify({ bundles: all, cases }, null, 1) + "\n");
console.log(cases.length, "cases");
