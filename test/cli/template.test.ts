/**
 * `opcat template render` (and its aliases) as a user runs it: bin/opcat in a child process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");

function opcat(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    input,
    cwd: REPO_ROOT,
    env: { ...process.env, OPCAT_DEBUG: "" },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const dir = mkdtempSync(join(tmpdir(), "opcat-template-"));
const catalog = join(dir, "catalog.json");
const bundle = (v: string): string =>
  JSON.stringify({
    schema: "olm.bundle",
    name: `a.v${v}`,
    package: "a",
    image: `quay.io/a/a:${v}`,
    properties: [{ type: "olm.package", value: { packageName: "a", version: v } }],
  });
writeFileSync(catalog, ["1.0.0", "1.0.1", "1.1.0"].map(bundle).join("\n") + "\n");
const semver = join(dir, "semver.yaml");
writeFileSync(
  semver,
  "schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/a/a:1.0.0\n" +
    "  - image: quay.io/a/a:1.0.1\n  - image: quay.io/a/a:1.1.0\n",
);
const basic = join(dir, "basic.yaml");
writeFileSync(
  basic,
  "schema: olm.template.basic\nentries:\n- schema: olm.package\n" +
    "  name: a\n- schema: olm.bundle\n  image: quay.io/a/a:1.0.0\n",
);

test("template render: semver with --reuse, YAML output, type auto-detected", () => {
  const r = opcat(["template", "render", semver, "--reuse", catalog, "--reuse-tags", "-o", "yaml"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^---\ndefaultChannel: stable-v1\.1\nname: a\nschema: olm\.package\n/);
  assert.match(r.stdout, /- name: a\.v1\.1\.0\n  replaces: a\.v1\.0\.1\n  skips:\n  - a\.v1\.0\.0\n/);
});

test(
  "template render --semver-skips y-stream: a Y-stream head skips " +
    "only its own Y-stream (seed 000); bad values are usage errors",
  () => {
    const r = opcat([
      "template",
      "render",
      semver,
      "--reuse",
      catalog,
      "--reuse-tags",
      "-o",
      "yaml",
      "--semver-skips",
      "y-stream",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /- name: a\.v1\.1\.0\n  replaces: a\.v1\.0\.1\nname: stable-v1\.1\n/);
    const bad = opcat(["template", "render", semver, "--semver-skips", "none"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --semver-skips value "none", expected \(cumulative\|y-stream\)/);
  },
);

test("render-template / render-veneer aliases, TYPE argument and stdin", () => {
  const a = opcat(
    ["render-template", "basic", "-", "--reuse", catalog, "--reuse-tags"],
    "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: quay.io/a/a:1.0.1\n",
  );
  assert.equal(a.code, 0, a.stderr);
  assert.equal(JSON.parse(a.stdout).name, "a.v1.0.1");
  const b = opcat(["render-veneer", basic, "--reuse", catalog, "--reuse-tags", "-o", "json"]);
  assert.equal(b.code, 0, b.stderr);
  assert.match(b.stdout, /"schema": "olm.package"/);
});

test("mermaid output", () => {
  const r = opcat(["template", "render", "semver", semver, "--reuse", catalog, "--reuse-tags", "-o", "mermaid"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^graph LR/);
});

/** A registries.conf sending quay.io/a to a closed local port, so that pulls fail fast and offline. */
const closedConf = join(dir, "registries.conf");
writeFileSync(closedConf, `[[registry]]\nprefix = "quay.io/a"\nlocation = "127.0.0.1:1/a"\ninsecure = true\n`);

test(
  "errors: unreachable images (exit 2; tags are pulled, not reused, " +
    "without --reuse-tags), bad type, bad output, template errors (exit 1)",
  () => {
    const pull = opcat([
      "template",
      "render",
      semver,
      "--registries-conf",
      closedConf,
      "--cache-dir",
      join(dir, "cache"),
    ]);
    assert.equal(pull.code, 2);
    assert.match(
      pull.stderr,
      /rendering template: render reference "quay\.io\/a\/a:1\.0\.0": failed to pull image "quay\.io\/a\/a:1\.0\.0": /,
    );
    const tag = opcat([
      "template",
      "render",
      semver,
      "--reuse",
      catalog,
      "--registries-conf",
      closedConf,
      "--cache-dir",
      join(dir, "cache"),
    ]);
    assert.equal(tag.code, 2);
    assert.match(tag.stderr, /failed to pull image "quay\.io\/a\/a:1\.0\.0"/);
    const tls = opcat(["template", "render", semver, "--use-http", "--skip-tls-verify"]);
    assert.equal(tls.code, 2);
    assert.match(tls.stderr, /invalid flag combination: --use-http and --skip-tls-verify cannot both be true/);
    const type = opcat(["template", "render", "foo", semver]);
    assert.equal(type.code, 2);
    assert.match(type.stderr, /invalid template type "foo", must be one of: \[basic semver substitutes\]/);
    const out = opcat(["template", "render", semver, "-o", "xml"]);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /invalid --output value "xml", expected \(json\|yaml\|mermaid\)/);
    const bad = opcat(["template", "render", "-"], "schema: olm.semver\nbogus: 1\n");
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      new RegExp(
        /rendering template: render: unable to read file: error /.source +
          /unmarshaling JSON: while decoding JSON: json: unknown field "bogus"/.source,
      ),
    );
    const missing = opcat(["template", "render", join(dir, "nope.yaml")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /unable to open ".*nope\.yaml"/);
  },
);

test("--help documents the command", () => {
  const r = opcat(["template", "render", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--reuse <rendered-fbc>/);
  assert.match(r.stdout, /--registries-conf <file>/);
  assert.match(r.stdout, /-f, --catalog-config <file\|url>/);
  assert.doesNotMatch(r.stdout, /not available yet/i);
});

test("composite: usage errors", () => {
  const out = opcat(["template", "render", "composite", "-o", "mermaid"]);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /invalid --output value "mermaid", expected \(json\|yaml\)/);
  const args = opcat(["template", "render", "composite", "x"]);
  assert.equal(args.code, 2);
  assert.match(args.stderr, /accepts at most 0 arg\(s\), received 1/);
  const missing = opcat(["template", "render", "composite", "-c", join(dir, "nope.yaml")]);
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /opening composite config file ".*nope\.yaml": open .*nope\.yaml: no such file or directory/,
  );
  const flags = opcat(["template", "render", semver, "-f", "catalogs.yaml"]);
  assert.equal(flags.code, 2);
  assert.match(flags.stderr, /--catalog-config and --composite-config are only for the composite template/);
  const bool = opcat(["template", "render", "composite", "--validate=maybe"]);
  assert.equal(bool.code, 2);
  assert.match(bool.stderr, /invalid argument "maybe" for "--validate" flag/);
});

test(
  "template render graph --offline: the seed 003 example " + "without any registry; unknown types name opcat's own",
  () => {
    const g = join(REPO_ROOT, "src", "template", "testdata", "graph");
    const r = opcat([
      "template",
      "render",
      "graph",
      join(g, "seed-template.yaml"),
      "--reuse",
      join(g, "seed-bundles.yaml"),
      "--offline",
      "-o",
      "yaml",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /- name: example\.v1\.0\.1\n  replaces: example\.v0\.3\.2\n  skips:\n  - example\.v1\.0\.0\n/,
    );
    const auto = opcat([
      "render-template",
      join(g, "seed-template.yaml"),
      "--reuse",
      join(g, "seed-bundles.yaml"),
      "--offline",
      "-o",
      "yaml",
    ]);
    assert.equal(auto.stdout, r.stdout);
    const needsReuse = opcat(["template", "render", "graph", join(g, "seed-template.yaml"), "--offline"]);
    assert.equal(needsReuse.code, 2);
    assert.match(needsReuse.stderr, /--offline needs --reuse/);
    const bad = opcat(["template", "render", "nope", basic]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      new RegExp(
        /invalid template type "nope", must be one of: \[basic semver /.source +
          /substitutes\]\n  hint: opcat also renders: graph, composite/.source,
      ),
    );
  },
);
