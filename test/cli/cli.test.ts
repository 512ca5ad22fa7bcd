/** The CLI as a user runs it: bin/opcat in a child process, checking stdout, stderr and exit codes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const EXAMPLE = join(REPO_ROOT, "examples", "catalog");

function opcat(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    input,
    env: { ...process.env, OPCAT_DEBUG: "" },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function tmpCatalog(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-cli-"));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

test("validate: a valid catalog exits 0 with a summary on stderr, nothing on stdout", () => {
  const r = opcat(["validate", EXAMPLE]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /valid \(2 packages, 3 channels, 7 bundles/);
  assert.equal(opcat(["validate", "-q", EXAMPLE]).stderr, "");
});

test("validate: an invalid catalog exits 1 and lists every problem with file:line and code", () => {
  const dir = tmpCatalog({
    "a/catalog.yaml":
      "schema: olm.package\nname: a\ndefaultChannel: stable\n---\nschema: olm.channel\n" +
      "package: a\nname: stable\nentries:\n- name: a.v1\n- name: a.v2\n",
    "a/bundles.json":
      '{"schema":"olm.bundle","package":"a","name":"a.v1","image":"x","properties":[{"type":"olm.package",' +
      '"value":{"packageName":"a","version":"1.0.0"}}]}\n' +
      '{"schema":"olm.bundle","package":"a","name":"a.v2","image":"y","properties":' +
      '[{"type":"olm.package","value":{"packageName":"a","version":"2.0.0"}}]}\n',
    "b/catalog.yaml": "schema: olm.package\nname: B\n",
  });
  const r = opcat(["validate", dir]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    new RegExp(
      /^a\/catalog\.yaml:5: error\[FBC_CHANNEL_MULTIPLE_HEADS\]: invalid package "a": /.source +
        /invalid channel "stable": multiple channel heads found in graph: a\.v1, a\.v2$/.source,
      "m",
    ),
  );
  assert.match(r.stderr, /^b\/catalog\.yaml:1: error\[FBC_PACKAGE_INVALID_NAME\]/m);
  assert.match(r.stderr, /^2 problems$/m);
  const j = opcat(["validate", dir, "-o", "json"]);
  assert.equal(j.code, 1);
  const report = JSON.parse(j.stdout);
  assert.equal(report.passed, false);
  assert.equal(report.problems.length, 2);
  assert.deepEqual(report.problems[0].location, { file: "a/catalog.yaml", line: 5, index: 1 });
  assert.equal(report.problems[0].code, "FBC_CHANNEL_MULTIPLE_HEADS");
});

test("validate: parse errors are located, never a stack trace", () => {
  const dir = tmpCatalog({
    "x/catalog.yaml": "schema: olm.package\nname: x\n---\nfoo: [bar\n",
    "x/README.md": "# Read me\nSome text.\n",
  });
  const r = opcat(["validate", dir]);
  assert.equal(r.code, 1);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.match(r.stderr, /^x\/README\.md:1: error\[FBC_NOT_AN_OBJECT\]/m);
  assert.match(r.stderr, /hint: if this file is not part of the catalog, exclude it with a \.indexignore file/);
  assert.match(
    r.stderr,
    new RegExp(
      /^x\/catalog\.yaml:4: error\[FBC_YAML_SYNTAX\]: error converting /.source +
        /YAML to JSON: yaml: line 1: did not find expected ',' or ']'$/.source,
      "m",
    ),
  );
});

test("usage and I/O errors exit 2", () => {
  assert.equal(opcat(["validate", "/nonexistent/dir"]).code, 2);
  const bad = opcat(["render", EXAMPLE, "-o", "xml"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /invalid --output value "xml", expected \(json\|yaml\)/);
  assert.equal(opcat(["no-such-command"]).code, 2);
  assert.equal(opcat(["render"]).code, 2);
});

test("render: YAML and JSON, from a directory and from stdin, are stable", () => {
  const yaml = opcat(["render", EXAMPLE, "-o", "yaml"]);
  assert.equal(yaml.code, 0, yaml.stderr);
  assert.ok(
    yaml.stdout.startsWith("---\ndefaultChannel: stable-v1\nname: cache-operator\nschema: olm.package\n"),
    yaml.stdout.slice(0, 200),
  );
  const json = opcat(["render", EXAMPLE]);
  assert.equal(json.code, 0);
  assert.ok(
    json.stdout.startsWith(
      '{\n    "schema": "olm.package",\n    "name": "cache-operator",\n    "defaultChannel": "stable-v1"\n}\n',
    ),
  );
  const again = opcat(["render", "-", "-o", "yaml"], json.stdout);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, yaml.stdout);
});

test("render-graph prints Mermaid", () => {
  const r = opcat(["render-graph", EXAMPLE]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.startsWith("graph LR\n"));
  assert.match(
    r.stdout,
    new RegExp(
      /etcd-example-stable-etcd-example\.v0\.9\.2\["etcd-example\.v0\.9\.2"\]-- replace /.source +
        /--> etcd-example-stable-etcd-example\.v0\.9\.4\["etcd-example\.v0\.9\.4"\]/.source,
    ),
  );
  const bad = opcat(["render-graph", EXAMPLE, "--minimum-edge", "nope"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown minimum edge name: "nope"/);
});

test("list, init, migrate and version", () => {
  const pk = opcat(["list", "packages", EXAMPLE]);
  assert.equal(pk.code, 0, pk.stderr);
  assert.match(pk.stdout, /^NAME\s+DISPLAY NAME\s+DEFAULT CHANNEL\n/);
  assert.match(
    opcat(["list", "channels", EXAMPLE, "etcd-example"]).stdout,
    /etcd-example\s+stable\s+etcd-example\.v0\.9\.4/,
  );
  assert.match(
    opcat(["list", "bundles", EXAMPLE]).stdout,
    /cache-operator\s+stable-v1\s+cache-operator\.v1\.1\.1\s+cache-operator\.v1\.1\.0/,
  );
  const init = opcat(["init", "my-op", "-c", "alpha", "-o", "yaml"]);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(init.stdout, "---\ndefaultChannel: alpha\nname: my-op\nschema: olm.package\n");
  const out = join(mkdtempSync(join(tmpdir(), "opcat-migrate-")), "out");
  const m = opcat(["migrate", EXAMPLE, out, "-o", "yaml"]);
  assert.equal(m.code, 0, m.stderr);
  assert.deepEqual(readdirSync(out).sort(), ["cache-operator", "etcd-example"]);
  assert.ok(
    readFileSync(join(out, "etcd-example", "catalog.yaml"), "utf8").startsWith("---\ndefaultChannel: stable\n"),
  );
  const again = opcat(["migrate", EXAMPLE, out]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /must be empty/);
  assert.match(opcat(["version"]).stdout, /^opcat \d+\.\d+\.\d+\n$/);
  // bin/opcat answers these two without loading the CLI: the same text and code as the CLI's own
  for (const args of [["version"], ["--version"]]) {
    const viaCli = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { run } = await import(${JSON.stringify(join(REPO_ROOT, "dist", "cli", "main.js"))});` +
          `process.exitCode = await run(${JSON.stringify(args)});`,
      ],
      { encoding: "utf8" },
    );
    const fast = opcat(args);
    assert.deepEqual([fast.code, fast.stdout, fast.stderr], [viaCli.status, viaCli.stdout, viaCli.stderr], args[0]);
  }
  assert.match(opcat(["--help"]).stdout, /render-graph/);
  assert.match(opcat(["validate", "--help"]).stdout, /-o, --output <format>/);
});

test("a reader that closes the pipe early (| head) ends opcat quietly", async () => {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [BIN, "render", EXAMPLE, "-o", "yaml"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.once("data", () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  assert.equal(code, 0);
  assert.doesNotMatch(stderr, /EPIPE|\n\s+at /);
});
