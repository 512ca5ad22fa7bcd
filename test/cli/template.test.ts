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
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", input, cwd: REPO_ROOT, env: { ...process.env, OPCAT_DEBUG: "" } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const dir = mkdtempSync(join(tmpdir(), "opcat-template-"));
const catalog = join(dir, "catalog.json");
const bundle = (v: string): string =>
  JSON.stringify({ schema: "olm.bundle", name: `a.v${v}`, package: "a", image: `quay.io/a/a:${v}`, properties: [{ type: "olm.package", value: { packageName: "a", version: v } }] });
writeFileSync(catalog, ["1.0.0", "1.0.1", "1.1.0"].map(bundle).join("\n") + "\n");
const semver = join(dir, "semver.yaml");
writeFileSync(semver, "schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/a/a:1.0.0\n  - image: quay.io/a/a:1.0.1\n  - image: quay.io/a/a:1.1.0\n");
const basic = join(dir, "basic.yaml");
writeFileSync(basic, "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n- schema: olm.bundle\n  image: quay.io/a/a:1.0.0\n");

test("template render: semver with --reuse, YAML output, type auto-detected", () => {
  const r = opcat(["template", "render", semver, "--reuse", catalog, "--reuse-tags", "-o", "yaml"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^---\ndefaultChannel: stable-v1\.1\nname: a\nschema: olm\.package\n/);
  assert.match(r.stdout, /- name: a\.v1\.1\.0\n  replaces: a\.v1\.0\.1\n  skips:\n  - a\.v1\.0\.0\n/);
});

test("render-template / render-veneer aliases, TYPE argument and stdin", () => {
  const a = opcat(["render-template", "basic", "-", "--reuse", catalog, "--reuse-tags"], "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: quay.io/a/a:1.0.1\n");
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

test("errors: no image pulling yet (exit 2), tags need --reuse-tags, bad type, bad output, template errors (exit 1)", () => {
  const pull = opcat(["template", "render", semver]);
  assert.equal(pull.code, 2);
  assert.match(pull.stderr, /pulling bundle images is not available yet/);
  const tag = opcat(["template", "render", semver, "--reuse", catalog]);
  assert.equal(tag.code, 2);
  assert.match(tag.stderr, /only digest-pinned references/);
  const type = opcat(["template", "render", "foo", semver]);
  assert.equal(type.code, 2);
  assert.match(type.stderr, /invalid template type "foo", must be one of: \[basic semver substitutes\]/);
  const out = opcat(["template", "render", semver, "-o", "xml"]);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /invalid --output value "xml", expected \(json\|yaml\|mermaid\)/);
  const bad = opcat(["template", "render", "-"], "schema: olm.semver\nbogus: 1\n");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /rendering template: render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "bogus"/);
  const missing = opcat(["template", "render", join(dir, "nope.yaml")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /unable to open ".*nope\.yaml"/);
});

test("--help documents the command", () => {
  const r = opcat(["template", "render", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--reuse <rendered-fbc>/);
  assert.match(r.stdout, /pulling bundle images is not available yet/i);
});
