/** `opcat template add-bundle` as a script runs it: exit codes per outcome and the JSON report. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../shared.js";

// The CLI from source (through tsx), so that the test does not depend on a fresh dist/.
const RUNNER =
  `import { run } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src", "cli", "main.ts")).href)};\n` +
  `process.exitCode = await run(process.argv.slice(1));`;

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", RUNNER, ...args], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    env: { ...process.env, OPCAT_DEBUG: "" },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const IMG = (v: string): string => `quay.io/acme/foo-bundle:v${v}`;

function catalog(): string {
  const blobs = ["0.1.0", "0.2.0"].map((v) =>
    JSON.stringify({
      schema: "olm.bundle",
      name: `foo.v${v}`,
      package: "foo",
      image: IMG(v),
      properties: [{ type: "olm.package", value: { packageName: "foo", version: v } }],
    }),
  );
  return blobs.join("\n") + "\n";
}

const BASIC = `---
schema: olm.template.basic
entries:
- schema: olm.package
  name: foo
  defaultChannel: stable
- schema: olm.channel
  name: stable
  package: foo
  entries:
  - name: foo.v0.1.0   # first
- schema: olm.bundle
  image: quay.io/acme/foo-bundle:v0.1.0
`;

function setup(): { dir: string; tmpl: string; cat: string } {
  const dir = mkdtempSync(join(tmpdir(), "opcat-ab-cli-"));
  const tmpl = join(dir, "basic.yaml");
  const cat = join(dir, "catalog.json");
  writeFileSync(tmpl, BASIC);
  writeFileSync(cat, catalog());
  return { dir, tmpl, cat };
}

test("add-bundle: added (0), already-present (0), with the JSON report", () => {
  const { tmpl, cat } = setup();
  const args = [
    "template",
    "add-bundle",
    tmpl,
    "--image",
    IMG("0.2.0"),
    "--channel",
    "stable",
    "--replaces",
    "foo.v0.1.0",
    "--reuse",
    cat,
    "--reuse-tags",
    "-o",
    "json",
  ];
  const r = opcat(args);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(report), [
    "outcome",
    "template",
    "image",
    "kind",
    "bundle",
    "changes",
    "problems",
    "validation",
    "written",
  ]);
  assert.equal(report.outcome, "added");
  assert.equal(report.validation, "rendered");
  assert.equal(report.written, true);
  assert.deepEqual(report.bundle, { name: "foo.v0.2.0", package: "foo", version: "0.2.0" });
  assert.deepEqual(report.changes, [
    {
      op: "add",
      path: "/entries/1/entries/-",
      value: { name: "foo.v0.2.0", replaces: "foo.v0.1.0" },
      description: 'added "foo.v0.2.0" to channel "stable" (replaces "foo.v0.1.0")',
    },
    {
      op: "add",
      path: "/entries/-",
      value: { schema: "olm.bundle", image: IMG("0.2.0") },
      description: `added bundle image "${IMG("0.2.0")}"`,
    },
  ]);
  assert.equal(
    readFileSync(tmpl, "utf8"),
    BASIC.replace("# first\n", "# first\n  - name: foo.v0.2.0\n    replaces: foo.v0.1.0\n") +
      "- schema: olm.bundle\n  image: quay.io/acme/foo-bundle:v0.2.0\n",
  );
  const again = opcat(args);
  assert.equal(again.code, 0, again.stderr);
  assert.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, "already-present");
  const text = opcat(args.slice(0, -2));
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^already present: .*basic\.yaml \(basic\) \(nothing changed\)$/m);
});

test("add-bundle: conflict (5), invalid input (1), unreachable image (4), usage (2)", () => {
  const { dir, tmpl, cat } = setup();
  const base = ["template", "add-bundle", tmpl, "--image", IMG("0.2.0"), "--reuse", cat, "--reuse-tags", "-o", "json"];
  const conflict = opcat([...base, "--channel", "stable", "--replaces", "foo.v0.0.1"]);
  assert.equal(conflict.code, 5, conflict.stderr);
  const cr = JSON.parse(conflict.stdout) as { outcome: string; problems: { code: string }[]; written: boolean };
  assert.equal(cr.outcome, "conflict");
  assert.equal(cr.problems[0].code, "TEMPLATE_ADD_REPLACES_MISSING");
  assert.equal(cr.written, false);
  assert.equal(readFileSync(tmpl, "utf8"), BASIC);

  writeFileSync(join(dir, "bad.yaml"), "schema: olm.nothing\n");
  const invalid = opcat([
    "template",
    "add-bundle",
    join(dir, "bad.yaml"),
    "--image",
    IMG("0.2.0"),
    "--channel",
    "stable",
    "-o",
    "json",
  ]);
  assert.equal(invalid.code, 1);
  assert.equal((JSON.parse(invalid.stdout) as { outcome: string }).outcome, "invalid-input");

  const unreachable = opcat([
    "template",
    "add-bundle",
    tmpl,
    "--image",
    "quay.io/acme/other:v1",
    "--channel",
    "stable",
    "--reuse",
    cat,
    "--reuse-tags",
  ]);
  assert.equal(unreachable.code, 4);
  assert.match(unreachable.stdout, /^unreachable image: /m);
  assert.match(unreachable.stderr, /error\[TEMPLATE_REUSE_NOT_FOUND\]/);

  assert.equal(opcat(["template", "add-bundle", tmpl, "--image", IMG("0.2.0")]).code, 2);
  assert.equal(opcat(["template", "add-bundle", "--image", IMG("0.2.0"), "--channel", "x"]).code, 2);
  assert.equal(opcat([...base, "--channel", "stable", "-o", "yaml"]).code, 2);
});

test("add-bundle: --dry-run prints the diff and writes nothing", () => {
  const { tmpl } = setup();
  const r = opcat([
    "template",
    "add-bundle",
    tmpl,
    "--image",
    IMG("0.2.0"),
    "--channel",
    "stable",
    "--replaces",
    "foo.v0.1.0",
    "--name",
    "foo.v0.2.0",
    "--dry-run",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^added: .*\(basic; checked structurally only\) \(dry run: not written\)$/m);
  assert.match(r.stdout, /^@@ -11,0 \+12,2 @@\n\+ {2}- name: foo\.v0\.2\.0\n\+ {4}replaces: foo\.v0\.1\.0$/m);
  assert.match(r.stderr, /warning\[TEMPLATE_ADD_NOT_RENDERED\]/);
  assert.equal(readFileSync(tmpl, "utf8"), BASIC);
});

test("add-bundle: --release-config applies every listed template; --help documents the exit codes", () => {
  const { dir, cat } = setup();
  const templates = join(dir, "foo", "catalog-templates");
  mkdirSync(templates, { recursive: true });
  mkdirSync(join(dir, "foo", "0.2.0"));
  writeFileSync(join(templates, "basic.yaml"), BASIC);
  writeFileSync(
    join(templates, "semver.yaml"),
    "Schema: olm.semver\nFast:\n  Bundles:\n  - Image: quay.io/acme/foo-bundle:v0.1.0\n",
  );
  const rc = join(dir, "foo", "0.2.0", "release-config.yaml");
  writeFileSync(
    rc,
    "catalog_templates:\n  - template_name: basic.yaml\n    channels: [stable]\n" +
      "    replaces: foo.v0.1.0\n  - template_name: semver.yaml\n    channels: [Fast, Stable]\n",
  );
  const r = opcat([
    "template",
    "add-bundle",
    "--release-config",
    rc,
    "--image",
    IMG("0.2.0"),
    "--reuse",
    cat,
    "--reuse-tags",
    "-o",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as {
    outcome: string;
    written: boolean;
    templates: { outcome: string; kind: string }[];
  };
  assert.equal(report.outcome, "added");
  assert.equal(report.written, true);
  assert.deepEqual(
    report.templates.map((t) => [t.kind, t.outcome]),
    [
      ["basic", "added"],
      ["semver", "added"],
    ],
  );
  assert.match(
    readFileSync(join(templates, "semver.yaml"), "utf8"),
    /Stable:\n {2}Bundles:\n {2}- Image: quay\.io\/acme\/foo-bundle:v0\.2\.0\n$/,
  );
  assert.equal(
    opcat(["template", "add-bundle", "--release-config", rc, "--image", IMG("0.2.0"), "--channel", "x"]).code,
    2,
  );
  const help = opcat(["template", "add-bundle", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /conflict {11}5/);
  assert.match(help.stdout, /unreachable-image {2}4/);
});
