import { ADD_BUNDLE_EXIT_CODES } from "../../cli/template-add.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { parse } from "yaml";
import { loadText } from "../../fbc/load.js";
import { validateCatalog } from "../../fbc/validate.js";
import {
  addBundleFromReleaseConfig,
  addBundleKinds,
  addBundleToFile,
  planAddBundle,
  registerAddBundleKind,
  worstOutcome,
  type AddBundleRequest,
} from "./addbundle.js";
import { writeFileAtomic } from "../../fsx/write.js";
import { parseEditable, yamlScalar } from "./edit.js";
import { parseReleaseConfig } from "./releaseconfig.js";
import { reuseSource } from "../source/reuse.js";
import type { BundleSource } from "../source/source.js";

/** A rendered bundle blob (JSON) of package `pkg`. */
function bundleBlob(pkg: string, version: string, image: string, name = `${pkg}.v${version}`): string {
  return JSON.stringify({
    schema: "olm.bundle",
    name,
    package: pkg,
    image,
    properties: [{ type: "olm.package", value: { packageName: pkg, version } }],
  });
}

const IMG = (v: string): string => `quay.io/acme/foo-bundle:v${v}`;

/** A source answering foo 0.1.0 … 0.4.0 (and bar 9.9.9 under IMG("bar")). */
function source(extra: string[] = []): BundleSource {
  const blobs = ["0.1.0", "0.2.0", "0.3.0", "0.4.0"].map((v) => bundleBlob("foo", v, IMG(v)));
  const cfg = loadText([...blobs, ...extra].join("\n"), "src").config;
  return reuseSource(cfg, { reuseTags: true });
}

const BASIC = `---
# The foo operator's catalog template.
schema: olm.template.basic
entries:
- schema: olm.package
  name: foo
  defaultChannel: stable   # keep stable the default
- schema: olm.channel
  name: stable
  package: foo
  entries:
  - name: foo.v0.1.0
  # 0.2.0 upgrades from 0.1.0
  - name: foo.v0.2.0
    replaces: foo.v0.1.0
- schema: olm.bundle
  image: quay.io/acme/foo-bundle:v0.1.0
- schema: olm.bundle
  image: "quay.io/acme/foo-bundle:v0.2.0"
# end of entries
`;

const req = (v: string, extra: Partial<AddBundleRequest> = {}): AddBundleRequest => ({
  image: IMG(v),
  channels: ["stable"],
  ...extra,
});

test("basic: the entry and the bundle are appended; comments and quoting are kept byte for byte", async () => {
  const p = await planAddBundle(
    BASIC,
    "basic.yaml",
    req("0.3.0", { replaces: "foo.v0.2.0", skips: ["foo.v0.1.0"], skipRange: ">=0.1.0 <0.3.0" }),
    { source: source() },
  );
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.equal(p.validation, "rendered");
  assert.equal(
    p.result,
    BASIC.replace(
      "    replaces: foo.v0.1.0\n",
      "    replaces: foo.v0.1.0\n  - name: foo.v0.3.0\n    replaces: foo.v0.2.0\n" +
        "    skips:\n    - foo.v0.1.0\n    skipRange: '>=0.1.0 <0.3.0'\n",
    ).replace('v0.2.0"\n', 'v0.2.0"\n- schema: olm.bundle\n  image: quay.io/acme/foo-bundle:v0.3.0\n'),
  );
  assert.deepEqual(
    p.changes.map((c) => [c.op, c.path]),
    [
      ["add", "/entries/1/entries/-"],
      ["add", "/entries/-"],
    ],
  );
  assert.deepEqual(p.bundle, { name: "foo.v0.3.0", package: "foo", version: "0.3.0" });
  assert.match(p.diff ?? "", /^@@ -15,0 \+16,5 @@\n\+ {2}- name: foo\.v0\.3\.0$/m);
  // A second run finds everything in place.
  const again = await planAddBundle(
    p.result ?? "",
    "basic.yaml",
    req("0.3.0", { replaces: "foo.v0.2.0", skips: ["foo.v0.1.0"], skipRange: ">=0.1.0 <0.3.0" }),
    { source: source() },
  );
  assert.equal(again.outcome, "already-present");
  assert.deepEqual(again.changes, []);
  assert.equal(again.result, undefined);
  // Skips compare as a set.
  const reordered = await planAddBundle(
    p.result ?? "",
    "basic.yaml",
    req("0.3.0", { replaces: "foo.v0.2.0", skips: ["foo.v0.1.0", "foo.v0.1.0"], skipRange: ">=0.1.0 <0.3.0" }),
    { source: source() },
  );
  assert.equal(reordered.outcome, "already-present");
});

test("basic: only the missing parts are added (bundle present, entry missing; and the reverse)", async () => {
  const withImage = BASIC + "- schema: olm.bundle\n  image: quay.io/acme/foo-bundle:v0.3.0\n";
  const a = await planAddBundle(withImage, "t", req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source() });
  assert.equal(a.outcome, "added");
  assert.deepEqual(
    a.changes.map((c) => c.path),
    ["/entries/1/entries/-"],
  );
  const withEntry = BASIC.replace(
    "    replaces: foo.v0.1.0\n",
    "    replaces: foo.v0.1.0\n  - name: foo.v0.3.0\n    replaces: foo.v0.2.0\n",
  );
  const b = await planAddBundle(withEntry, "t", req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source() });
  assert.equal(b.outcome, "added");
  assert.deepEqual(
    b.changes.map((c) => c.path),
    ["/entries/-"],
  );
});

test("basic: a missing channel is created before the bundle (as the community pipeline does)", async () => {
  const p = await planAddBundle(BASIC, "t", req("0.3.0", { channels: ["stable", "fast"], replaces: "foo.v0.2.0" }), {
    source: source(),
  });
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  const doc = parse(p.result ?? "") as { entries: Record<string, unknown>[] };
  assert.deepEqual(doc.entries.slice(-2), [
    { schema: "olm.channel", name: "fast", package: "foo", entries: [{ name: "foo.v0.3.0", replaces: "foo.v0.2.0" }] },
    { schema: "olm.bundle", image: IMG("0.3.0") },
  ]);
  // fast's replaces target lives in another channel: allowed, with a warning.
  assert.ok(p.problems.some((x) => x.code === "TEMPLATE_ADD_REPLACES_OTHER_CHANNEL" && x.severity === "warning"));
});

test("basic: without a source, --name gives the bundle's name and the result is checked structurally", async () => {
  const p = await planAddBundle(BASIC, "t", req("0.3.0", { name: "foo.v0.3.0", replaces: "foo.v0.2.0" }));
  assert.equal(p.outcome, "added");
  assert.equal(p.validation, "structural");
  assert.ok(p.problems.some((x) => x.code === "TEMPLATE_ADD_NOT_RENDERED"));
  const none = await planAddBundle(BASIC, "t", req("0.3.0"));
  assert.equal(none.outcome, "unreachable-image");
  const mismatch = await planAddBundle(BASIC, "t", req("0.3.0", { name: "foo.v9" }), { source: source() });
  assert.equal(mismatch.outcome, "invalid-input");
  assert.equal(mismatch.problems[0].code, "TEMPLATE_ADD_NAME_MISMATCH");
});

test("conflicts: other edges, an unknown replaces target, a name or version carried by another image", async () => {
  const withEntry = BASIC.replace(
    "    replaces: foo.v0.1.0\n",
    "    replaces: foo.v0.1.0\n  - name: foo.v0.3.0\n    replaces: foo.v0.1.0\n",
  );
  const edges = await planAddBundle(withEntry, "t", req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source() });
  assert.equal(edges.outcome, "conflict");
  assert.equal(edges.problems[0].code, "TEMPLATE_ADD_EDGE_CONFLICT");
  assert.match(edges.problems[0].message, /with replaces "foo\.v0\.1\.0"; requested replaces "foo\.v0\.2\.0"/);
  assert.deepEqual(edges.changes, []);

  const missing = await planAddBundle(BASIC, "t", req("0.3.0", { replaces: "foo.v0.2.5" }), { source: source() });
  assert.equal(missing.outcome, "conflict");
  assert.equal(missing.problems[0].code, "TEMPLATE_ADD_REPLACES_MISSING");

  // Another image renders to foo.v0.2.0 (a rebuilt bundle under a new tag).
  const rebuilt = source([bundleBlob("foo", "0.2.0", "quay.io/acme/foo-bundle:v0.2.0-rebuild")]);
  const dup = await planAddBundle(
    BASIC,
    "t",
    { image: "quay.io/acme/foo-bundle:v0.2.0-rebuild", channels: ["stable"], replaces: "foo.v0.1.0" },
    { source: rebuilt },
  );
  assert.equal(dup.outcome, "conflict");
  assert.ok(
    dup.problems.some((x) => x.code === "TEMPLATE_ADD_BUNDLE_CONFLICT" && x.message.includes("foo.v0.2.0")),
    JSON.stringify(dup.problems),
  );
  // Same version under another name.
  const sameVersion = source([bundleBlob("foo", "0.2.0", "quay.io/acme/foo-bundle:v0.2.0-x", "foo.v0.2.0-x")]);
  const ver = await planAddBundle(
    BASIC,
    "t",
    { image: "quay.io/acme/foo-bundle:v0.2.0-x", channels: ["stable"], replaces: "foo.v0.1.0" },
    { source: sameVersion },
  );
  assert.equal(ver.outcome, "conflict");
  assert.ok(
    ver.problems.some((x) => x.code === "TEMPLATE_ADD_BUNDLE_CONFLICT" && /version 0\.2\.0/.test(x.message)),
    JSON.stringify(ver.problems),
  );

  // An edit that makes the catalog invalid (two heads) is a conflict; an already invalid template is invalid input.
  const heads = await planAddBundle(BASIC, "t", req("0.3.0", { replaces: "foo.v0.1.0" }), { source: source() });
  assert.equal(heads.outcome, "conflict");
  assert.match(
    heads.problems[0].message,
    /^adding the bundle would make the catalog invalid: .*multiple channel heads/,
  );
  const broken = BASIC.replace("  - name: foo.v0.1.0\n", "  - name: foo.v0.1.0\n  - name: foo.v0.0.9\n");
  const before = await planAddBundle(broken, "t", req("0.3.0", { replaces: "foo.v0.2.0" }), {
    source: source([bundleBlob("foo", "0.0.9", IMG("0.0.9"))]),
  });
  assert.equal(before.outcome, "invalid-input");
  assert.match(before.problems[0].message, /^the template is not valid before the edit/);
});

test("invalid input: unreadable, unknown schema, bad semver channel, no channel, bad structure", async () => {
  const cases: [string, AddBundleRequest, string][] = [
    ["schema: olm.template.basic\nentries: [\n", req("0.3.0"), "TEMPLATE_ADD_PARSE"],
    ["schema: olm.template.nope\n", req("0.3.0"), "TEMPLATE_ADD_UNKNOWN_KIND"],
    ["foo: bar\n", req("0.3.0"), "TEMPLATE_ADD_UNKNOWN_KIND"],
    ["schema: olm.semver\ncandidate:\n  bundles: []\n", req("0.3.0", { channels: ["beta"] }), "TEMPLATE_ADD_CHANNEL"],
    [BASIC, req("0.3.0", { channels: [] }), "TEMPLATE_ADD_REQUEST"],
    ["schema: olm.template.basic\nentries:\n", req("0.3.0"), "TEMPLATE_ADD_STRUCTURE"],
    ["schema: olm.semver\nbogus: 1\n", req("0.3.0"), "TEMPLATE_DECODE"],
  ];
  for (const [text, r, code] of cases) {
    const p = await planAddBundle(text, "t", r, { source: source() });
    assert.equal(p.outcome, "invalid-input", text);
    assert.equal(p.problems[0].code, code, `${text}: ${JSON.stringify(p.problems)}`);
    assert.equal(ADD_BUNDLE_EXIT_CODES[p.outcome], 1);
  }
  const dir = mkdtempSync(join(tmpdir(), "opcat-ab-"));
  const missing = await addBundleToFile(join(dir, "nope.yaml"), req("0.3.0"));
  assert.equal(missing.outcome, "invalid-input");
  assert.equal(missing.problems[0].code, "TEMPLATE_ADD_NO_TEMPLATE");
});

const SEMVER = `---
Schema: olm.semver
GenerateMajorChannels: true
GenerateMinorChannels: false
Fast:
  Bundles:
  # the first release
  - Image: quay.io/acme/foo-bundle:v0.1.0
`;

test("semver: images go to each named archetype (any letter case), created in the template's spelling", async () => {
  const p = await planAddBundle(
    SEMVER,
    "semver.yaml",
    { image: IMG("0.2.0"), channels: ["fast", "Stable", "FAST"] },
    { source: source() },
  );
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.equal(p.validation, "rendered");
  assert.equal(
    p.result,
    SEMVER +
      "  - Image: quay.io/acme/foo-bundle:v0.2.0\nStable:\n  Bundles:\n  - Image: quay.io/acme/foo-bundle:v0.2.0\n",
  );
  assert.deepEqual(
    p.changes.map((c) => c.path),
    ["/Fast/Bundles/-", "/Stable"],
  );
  const again = await planAddBundle(
    p.result ?? "",
    "t",
    { image: IMG("0.2.0"), channels: ["Fast", "stable"] },
    { source: source() },
  );
  assert.equal(again.outcome, "already-present");
  // Edges are the template's business.
  const edges = await planAddBundle(
    SEMVER,
    "t",
    { image: IMG("0.2.0"), channels: ["Fast"], replaces: "x" },
    { source: source() },
  );
  assert.ok(edges.problems.some((x) => x.code === "TEMPLATE_ADD_EDGES_IGNORED"));
  // Lower-case templates, null and missing lists, indented sequences.
  const lower =
    "schema: olm.semver\ncandidate:\n  bundles:\nfast: {}\nstable:\n" +
    "  bundles:\n    - image: quay.io/acme/foo-bundle:v0.1.0\n";
  const q = await planAddBundle(lower, "t", { image: IMG("0.2.0"), channels: ["Candidate", "Stable"] });
  assert.equal(q.outcome, "added", JSON.stringify(q.problems));
  assert.equal(q.validation, "structural");
  assert.equal(
    q.result,
    "schema: olm.semver\ncandidate:\n  bundles:\n    - image: quay.io/acme/foo-bundle:v0.2.0\nfast: {}\n" +
      "stable:\n  bundles:\n    - image: quay.io/acme/foo-bundle:v0.1.0\n" +
      "    - image: quay.io/acme/foo-bundle:v0.2.0\n",
  );
  // A source that cannot render the image: unreachable.
  const unreachable = await planAddBundle(
    SEMVER,
    "t",
    { image: "quay.io/acme/other:v1", channels: ["Fast"] },
    { source: source() },
  );
  assert.equal(unreachable.outcome, "unreachable-image");
  assert.equal(unreachable.problems[0].code, "TEMPLATE_REUSE_NOT_FOUND");
  assert.equal(ADD_BUNDLE_EXIT_CODES[unreachable.outcome], 4);
});

const FBC_YAML = `---
defaultChannel: stable
name: foo
schema: olm.package
---
entries:
- name: foo.v0.1.0
name: stable
package: foo
schema: olm.channel
---
image: quay.io/acme/foo-bundle:v0.1.0
name: foo.v0.1.0
package: foo
properties:
- type: olm.package
  value:
    packageName: foo
    version: 0.1.0
schema: olm.bundle
`;

test("raw FBC: the rendered bundle blob is appended and the channel entry added (YAML and JSON streams)", async () => {
  const p = await planAddBundle(FBC_YAML, "catalog.yaml", req("0.2.0", { replaces: "foo.v0.1.0" }), {
    source: source(),
  });
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.equal(p.validation, "rendered");
  assert.deepEqual(
    p.changes.map((c) => c.path),
    ["/1/entries/-", "/-"],
  );
  const cfg = loadText(p.result ?? "", "x");
  assert.deepEqual(cfg.problems, []);
  assert.deepEqual(validateCatalog(cfg.config).problems, []);
  assert.deepEqual(
    cfg.config.channels[0].entries?.map((e) => [e.name, e.replaces]),
    [
      ["foo.v0.1.0", ""],
      ["foo.v0.2.0", "foo.v0.1.0"],
    ],
  );
  assert.ok(isSubsequence(FBC_YAML.split("\n"), (p.result ?? "").split("\n")));
  assert.equal(
    (await planAddBundle(p.result ?? "", "t", req("0.2.0", { replaces: "foo.v0.1.0" }), { source: source() })).outcome,
    "already-present",
  );

  const json = loadText(FBC_YAML, "x").config;
  const jsonText =
    [
      JSON.stringify({ schema: "olm.package", name: "foo", defaultChannel: "stable" }, null, 4),
      JSON.stringify(
        { schema: "olm.channel", name: "stable", package: "foo", entries: [{ name: "foo.v0.1.0" }] },
        null,
        4,
      ),
      JSON.stringify(JSON.parse(bundleBlob("foo", "0.1.0", IMG("0.1.0"))), null, 4),
    ].join("\n") + "\n";
  assert.equal(json.bundles.length, 1);
  const j = await planAddBundle(
    jsonText,
    "catalog.json",
    req("0.2.0", { replaces: "foo.v0.1.0", channels: ["stable", "fast"] }),
    { source: source() },
  );
  assert.equal(j.outcome, "added", JSON.stringify(j.problems));
  const jl = loadText(j.result ?? "", "x");
  assert.deepEqual(jl.problems, []);
  assert.deepEqual(
    jl.config.channels.map((c) => [c.name, c.entries?.map((e) => e.name)]),
    [
      ["stable", ["foo.v0.1.0", "foo.v0.2.0"]],
      ["fast", ["foo.v0.2.0"]],
    ],
  );
  assert.match(
    j.result ?? "",
    new RegExp(
      / {8}\{\n {12}"name": "foo\.v0\.1\.0"\n {8}\},\n {8}\{\n {12}/.source +
        /"name": "foo\.v0\.2\.0",\n {12}"replaces": "foo\.v0\.1\.0"\n {8}\}/.source,
    ),
  );

  // A raw FBC needs the rendered bundle; a name carried by another image is a conflict.
  assert.equal((await planAddBundle(FBC_YAML, "t", req("0.2.0", { name: "foo.v0.2.0" }))).outcome, "unreachable-image");
  const clash = await planAddBundle(
    FBC_YAML,
    "t",
    { image: "quay.io/acme/foo-bundle:v0.1.0-b", channels: ["stable"] },
    { source: source([bundleBlob("foo", "0.1.0", "quay.io/acme/foo-bundle:v0.1.0-b")]) },
  );
  assert.equal(clash.outcome, "conflict");
  assert.equal(clash.problems[0].code, "TEMPLATE_ADD_BUNDLE_CONFLICT");
});

test("JSON basic templates keep their indentation (2, 4, tab) or stay compact", async () => {
  const tmpl = {
    schema: "olm.template.basic",
    entries: [
      { schema: "olm.package", name: "foo", defaultChannel: "stable" },
      { schema: "olm.channel", name: "stable", package: "foo", entries: [{ name: "foo.v0.1.0" }] },
      { schema: "olm.bundle", image: IMG("0.1.0") },
    ],
  };
  const expected = structuredClone(tmpl) as typeof tmpl & { entries: Record<string, unknown>[] };
  (expected.entries[1].entries as unknown[]).push({ name: "foo.v0.2.0", replaces: "foo.v0.1.0" });
  expected.entries.push({ schema: "olm.bundle", image: IMG("0.2.0") });
  for (const indent of [2, 4, "\t", undefined]) {
    const text = JSON.stringify(tmpl, null, indent) + "\n";
    const p = await planAddBundle(text, "t.json", req("0.2.0", { replaces: "foo.v0.1.0" }), { source: source() });
    assert.equal(p.outcome, "added", JSON.stringify(p.problems));
    assert.equal(p.result, JSON.stringify(expected, null, indent) + "\n", `indent ${String(indent)}`);
  }
});

test("edits inside flow sequences, empty lists and missing keys", async () => {
  const t =
    "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: foo, defaultChannel: stable}\n" +
    "- schema: olm.channel\n  name: stable\n  package: foo\n" +
    "  entries: []\n- schema: olm.channel\n  name: fast\n  package: foo\n";
  const p = await planAddBundle(t, "t", req("0.1.0", { channels: ["stable", "fast"] }), { source: source() });
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.equal(
    p.result,
    "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: foo, defaultChannel: stable}\n" +
      "- schema: olm.channel\n  name: stable\n  package: foo\n  entries:\n  - name: foo.v0.1.0\n" +
      "- schema: olm.channel\n  name: fast\n  package: foo\n  entries:\n" +
      "  - name: foo.v0.1.0\n- schema: olm.bundle\n  image: quay.io/acme/foo-bundle:v0.1.0\n",
  );
  const flow =
    "schema: olm.template.basic\nentries: [{schema: olm.package, name: foo, defaultChannel: " +
    "stable}, {schema: olm.channel, name: stable, package: foo, entries: [{name: " +
    "foo.v0.1.0}]}, {schema: olm.bundle, image: 'quay.io/acme/foo-bundle:v0.1.0'}]\n";
  const f = await planAddBundle(flow, "t", req("0.2.0", { replaces: "foo.v0.1.0" }), { source: source() });
  assert.equal(f.outcome, "added", JSON.stringify(f.problems));
  assert.deepEqual((parse(f.result ?? "") as { entries: unknown[] }).entries.slice(1), [
    {
      schema: "olm.channel",
      name: "stable",
      package: "foo",
      entries: [{ name: "foo.v0.1.0" }, { name: "foo.v0.2.0", replaces: "foo.v0.1.0" }],
    },
    { schema: "olm.bundle", image: IMG("0.1.0") },
    { schema: "olm.bundle", image: IMG("0.2.0") },
  ]);
});

test("style: ruamel-wrapped long values are wrapped the same way; YAML scalars are quoted when needed", async () => {
  const long = "quay.io/community-operator-pipeline-prod/some-long-operator-name-here:1.2.3";
  const t =
    `schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: foo\n` +
    `  defaultChannel: stable\n- schema: olm.channel\n  name: stable\n  package: foo\n` +
    `  entries:\n  - name: foo.v0.1.0\n- schema: olm.bundle\n  image: \n    ${long}-old\n`;
  const p = await planAddBundle(t, "t", {
    image: long,
    channels: ["stable"],
    name: "foo.v0.2.0",
    replaces: "foo.v0.1.0",
  });
  assert.equal(p.outcome, "added");
  assert.ok(p.result?.endsWith(`- schema: olm.bundle\n  image: \n    ${long}\n`), p.result);
  assert.equal(parseEditable(p.result ?? "") instanceof Object, true);
  for (const [s, q] of [
    ["foo.v1.0.0", "foo.v1.0.0"],
    [">=1.0.0 <1.1.0", "'>=1.0.0 <1.1.0'"],
    ["yes", "'yes'"],
    ["1.0", "'1.0'"],
    ["it's", "'it''s'"],
    ["", "''"],
    ["quay.io/a/b@sha256:0123", "quay.io/a/b@sha256:0123"],
  ]) {
    assert.equal(yamlScalar(s), q);
    assert.equal(parse(`k: ${q}`, { version: "1.1" }).k, s);
  }
});

/** A random basic template text with comments, and the bundle versions it holds. */
const basicTemplateArb = fc
  .record({
    versions: fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 6 }),
    comments: fc.array(fc.constantFrom("# a comment", "  # indented note", ""), { maxLength: 4 }),
    indentSeq: fc.boolean(),
    quoteImages: fc.boolean(),
  })
  .map(({ versions, comments, indentSeq, quoteImages }) => {
    const d = indentSeq ? "  " : "";
    const sorted = [...versions].sort((a, b) => a - b);
    const lines = [
      "schema: olm.template.basic",
      "entries:",
      `${d}- schema: olm.package`,
      `${d}  name: foo`,
      `${d}  defaultChannel: stable`,
    ];
    lines.push(`${d}- schema: olm.channel`, `${d}  name: stable`, `${d}  package: foo`, `${d}  entries:`);
    sorted.forEach((v, i) => {
      lines.push(`${d}  ${d}- name: foo.v0.${v}.0`);
      if (i > 0) lines.push(`${d}  ${d}  replaces: foo.v0.${sorted[i - 1]}.0`);
      if (comments[i]) lines.push(comments[i]);
    });
    for (const v of versions)
      lines.push(`${d}- schema: olm.bundle`, `${d}  image: ${quoteImages ? `"${IMG(`0.${v}.0`)}"` : IMG(`0.${v}.0`)}`);
    return { text: lines.join("\n") + "\n", head: sorted[sorted.length - 1] };
  });

function wideSource(): BundleSource {
  const blobs: string[] = [];
  for (let v = 1; v <= 31; v++) blobs.push(bundleBlob("foo", `0.${v}.0`, IMG(`0.${v}.0`)));
  return reuseSource(loadText(blobs.join("\n"), "s").config, { reuseTags: true });
}

/** Whether `small`'s lines appear in `big` in order (insertions only). */
function isSubsequence(small: string[], big: string[]): boolean {
  let i = 0;
  for (const l of big) if (i < small.length && l === small[i]) i++;
  return i === small.length;
}

test("property: adding twice is adding once; the original lines all survive in order", async () => {
  const src = wideSource();
  await fc.assert(
    fc.asyncProperty(
      basicTemplateArb,
      fc.integer({ min: 1, max: 31 }),
      fc.subarray(["stable", "fast"], { minLength: 1 }),
      async ({ text, head }, v, channels) => {
        const r: AddBundleRequest = {
          image: IMG(`0.${v}.0`),
          channels,
          replaces: v > head ? `foo.v0.${head}.0` : undefined,
        };
        const once = await planAddBundle(text, "t", r, { source: src });
        const after1 = once.result ?? text;
        const twice = await planAddBundle(after1, "t", r, { source: src });
        if (once.outcome === "added" || once.outcome === "already-present") {
          assert.equal(twice.outcome, "already-present", JSON.stringify(twice.problems));
          assert.equal(twice.result, undefined);
          assert.ok(isSubsequence(text.split("\n"), after1.split("\n")));
          assert.ok(after1.includes(IMG(`0.${v}.0`)));
        } else {
          // A refused edit is refused again, the same way.
          assert.equal(twice.outcome, once.outcome);
          assert.deepEqual(twice.problems, once.problems);
        }
      },
    ),
    { numRuns: 150 },
  );
});

test("property: semver add twice is add once", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { maxLength: 4 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 9 }),
      fc.subarray(["Candidate", "fast", "STABLE"], { minLength: 1 }),
      async (versions, upper, v, channels) => {
        const k = (s: string): string => (upper ? s.charAt(0).toUpperCase() + s.slice(1) : s);
        let text = `${k("schema")}: olm.semver\n${k("candidate")}:\n  ${k("bundles")}:\n`;
        for (const x of versions) text += `  - ${k("image")}: ${IMG(`0.${x}.0`)}\n`;
        const r: AddBundleRequest = { image: IMG(`0.${v}.0`), channels };
        const once = await planAddBundle(text, "t", r);
        assert.ok(once.outcome === "added" || once.outcome === "already-present", JSON.stringify(once.problems));
        const twice = await planAddBundle(once.result ?? text, "t", r);
        assert.equal(twice.outcome, "already-present");
        const doc = parse(once.result ?? text) as Record<string, { [b: string]: { [i: string]: string }[] }>;
        for (const ch of channels)
          assert.ok(doc[k(ch.toLowerCase())][k("bundles")].some((b) => b[k("image")] === r.image));
      },
    ),
    { numRuns: 100 },
  );
});

test("files: written atomically with the original mode; failures and dry runs leave the file untouched", async () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-ab-"));
  const f = join(dir, "basic.yaml");
  writeFileSync(f, BASIC);
  chmodSync(f, 0o640);
  // A failing rename (after the temporary file was written) leaves the file and the directory as they were.
  const failing = await addBundleToFile(f, req("0.3.0", { replaces: "foo.v0.2.0" }), {
    source: source(),
    rename: () => {
      throw new Error("disk on fire");
    },
  });
  assert.equal(failing.outcome, "invalid-input");
  assert.equal(failing.problems.at(-1)?.code, "TEMPLATE_ADD_WRITE");
  assert.equal(failing.written, false);
  assert.equal(readFileSync(f, "utf8"), BASIC);
  assert.deepEqual(readdirSync(dir), ["basic.yaml"]);
  // Conflicts and dry runs write nothing.
  assert.equal(
    (await addBundleToFile(f, req("0.3.0", { replaces: "foo.v9" }), { source: source() })).outcome,
    "conflict",
  );
  const dry = await addBundleToFile(f, req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source(), dryRun: true });
  assert.equal(dry.outcome, "added");
  assert.equal(dry.written, false);
  assert.equal(readFileSync(f, "utf8"), BASIC);
  // The real write.
  const ok = await addBundleToFile(f, req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source() });
  assert.equal(ok.written, true);
  assert.equal(readFileSync(f, "utf8"), ok.result);
  assert.equal(statSync(f).mode & 0o777, 0o640);
  assert.deepEqual(readdirSync(dir), ["basic.yaml"]);
  const again = await addBundleToFile(f, req("0.3.0", { replaces: "foo.v0.2.0" }), { source: source() });
  assert.equal(again.outcome, "already-present");
  assert.equal(again.written, false);
  // writeFileAtomic on its own.
  writeFileAtomic(join(dir, "new.txt"), "x\n");
  assert.equal(readFileSync(join(dir, "new.txt"), "utf8"), "x\n");
});

test("files: a new file is 0666 less the umask; an edited file keeps its mode whatever the umask", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-ab-umask-"));
  const old = process.umask(0o002);
  try {
    writeFileAtomic(join(dir, "new.yaml"), "x\n");
    assert.equal((statSync(join(dir, "new.yaml")).mode & 0o777).toString(8), "664");
    process.umask(0o022);
    const f = join(dir, "shared.yaml");
    writeFileSync(f, BASIC);
    chmodSync(f, 0o664);
    writeFileAtomic(f, "y\n");
    assert.equal((statSync(f).mode & 0o777).toString(8), "664");
  } finally {
    process.umask(old);
  }
});

test("release config: every listed template, all or nothing, an outcome per template", async () => {
  const root = mkdtempSync(join(tmpdir(), "opcat-ab-rc-"));
  const templates = join(root, "foo", "catalog-templates");
  mkdirSync(templates, { recursive: true });
  mkdirSync(join(root, "foo", "0.3.0"));
  writeFileSync(join(templates, "v4.16.yaml"), BASIC);
  writeFileSync(join(templates, "v4.17.yaml"), BASIC);
  writeFileSync(join(templates, "semver.yaml"), SEMVER);
  const rc = join(root, "foo", "0.3.0", "release-config.yaml");
  writeFileSync(
    rc,
    "---\ncatalog_templates:\n  - template_name: v4.16.yaml\n    channels: [stable]\n" +
      "    replaces: foo.v0.2.0\n  - template_name: v4.17.yaml\n    channels: [stable]\n" +
      "    replaces: foo.v0.2.0\n  - template_name: semver.yaml\n    channels: [Fast, Stable]\n",
  );
  const r = await addBundleFromReleaseConfig(rc, IMG("0.3.0"), { source: source() });
  assert.equal(r.outcome, "added", JSON.stringify(r.templates.map((t) => t.problems)));
  assert.equal(r.written, true);
  assert.deepEqual(
    r.templates.map((t) => [t.template.slice(templates.length + 1), t.kind, t.outcome, t.written]),
    [
      ["v4.16.yaml", "basic", "added", true],
      ["v4.17.yaml", "basic", "added", true],
      ["semver.yaml", "semver", "added", true],
    ],
  );
  assert.match(
    readFileSync(join(templates, "semver.yaml"), "utf8"),
    /Stable:\n {2}Bundles:\n {2}- Image: quay\.io\/acme\/foo-bundle:v0\.3\.0\n$/,
  );
  const again = await addBundleFromReleaseConfig(rc, IMG("0.3.0"), { source: source() });
  assert.equal(again.outcome, "already-present");
  assert.equal(again.written, false);
  // One failing template: nothing is written anywhere.
  const rc2 = join(root, "foo", "0.3.0", "rc2.yaml");
  writeFileSync(
    rc2,
    "catalog_templates:\n  - template_name: v4.16.yaml\n    channels: [stable]\n" +
      "    replaces: foo.v0.3.0\n  - template_name: missing.yaml\n    channels: [stable]\n",
  );
  const before = readFileSync(join(templates, "v4.16.yaml"), "utf8");
  const bad = await addBundleFromReleaseConfig(rc2, IMG("0.4.0"), { source: source(), templatesDir: templates });
  assert.equal(bad.outcome, "invalid-input");
  assert.deepEqual(
    bad.templates.map((t) => t.outcome),
    ["added", "invalid-input"],
  );
  assert.equal(bad.written, false);
  assert.equal(readFileSync(join(templates, "v4.16.yaml"), "utf8"), before);
  // A broken release config.
  writeFileSync(rc2, "catalog_templates:\n  - channels: []\n    extra: 1\n");
  const broken = await addBundleFromReleaseConfig(rc2, IMG("0.4.0"));
  assert.equal(broken.outcome, "invalid-input");
  assert.ok(broken.problems.every((p) => p.code === "TEMPLATE_ADD_RELEASE_CONFIG"));
});

test("release config parsing follows the pipeline's schema", () => {
  assert.deepEqual(
    parseReleaseConfig(
      "catalog_templates:\n- template_name: a.yaml\n  channels: [x, y]\n" +
        "  skips: [s]\n  skipRange: '<1.0.0'\n  defaultChannel: y\nmerge: false\n",
    ),
    {
      catalogTemplates: [
        { templateName: "a.yaml", channels: ["x", "y"], skips: ["s"], skipRange: "<1.0.0", defaultChannel: "y" },
      ],
      merge: false,
    },
  );
  const bad = parseReleaseConfig(
    "catalog_templates:\n- template_name: a.yaml\n  channels: [x, x]\n  defaultChannel: z\n  replaces: 3\nother: 1\n",
  );
  assert.ok("problems" in bad);
  assert.deepEqual(bad.problems, [
    'unknown key "other"',
    "catalog_templates[0].channels has duplicate items",
    "catalog_templates[0].replaces must be a string",
    "defaultChannel 'z' not found in 'a.yaml'. Available channels: ['x', 'x']",
  ]);
  assert.deepEqual(parseReleaseConfig("[]"), { problems: ["the release config is not a mapping"] });
});

test("outcomes: exit codes and ordering; a new kind plugs in with one registration", async () => {
  assert.deepEqual(ADD_BUNDLE_EXIT_CODES, {
    added: 0,
    "already-present": 0,
    "invalid-input": 1,
    "unreachable-image": 4,
    conflict: 5,
  });
  assert.equal(worstOutcome([]), "already-present");
  assert.equal(worstOutcome(["added", "already-present"]), "added");
  assert.equal(worstOutcome(["conflict", "added", "unreachable-image"]), "unreachable-image");
  assert.equal(worstOutcome(["conflict", "invalid-input"]), "invalid-input");
  registerAddBundleKind({
    name: "toy",
    matches: (schema) => schema === "olm.template.toy",
    needs: () => "nothing",
    check: () => undefined,
    render: () => Promise.resolve({ packages: [], channels: [], bundles: [], deprecations: [], others: [] }),
    plan(ctx) {
      const sd = ctx.file.docs[0];
      ctx.edits.appendDocument(`---\nimage: ${ctx.request.image}\n`);
      ctx.change("/-", { image: ctx.request.image }, `toy ${sd.base}`);
    },
  });
  const p = await planAddBundle("schema: olm.template.toy\n", "t", { image: "x", channels: ["c"] });
  assert.equal(p.kind, "toy");
  assert.equal(p.result, "schema: olm.template.toy\n---\nimage: x\n");
  // registered kinds come first, latest first; a registered kind replaces a built-in one of its name
  assert.deepEqual(
    addBundleKinds().map((k) => k.name),
    ["toy", "basic", "semver", "fbc", "graph"],
  );
  const builtinFbc = addBundleKinds().find((k) => k.name === "fbc");
  assert.ok(builtinFbc);
  registerAddBundleKind({ ...builtinFbc, matches: () => false });
  assert.deepEqual(
    addBundleKinds().map((k) => k.name),
    ["fbc", "toy", "basic", "semver", "graph"],
  );
  registerAddBundleKind(builtinFbc);
});
