/** `opcat resolve`, `query` and `images` as a user runs them, on the bundled example catalog. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const CATALOG = join(REPO_ROOT, "examples", "catalog");

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test("resolve: a subscription pulls in its package dependency (exit 0)", () => {
  const r = opcat([
    "resolve",
    "--catalog",
    CATALOG,
    "--input",
    join(REPO_ROOT, "examples", "resolve", "input.yaml"),
    "-o",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rs = JSON.parse(r.stdout);
  assert.equal(rs.resolved, true);
  assert.deepEqual(rs.bundles.map((b: { name: string }) => b.name).sort(), [
    "cache-operator.v1.1.1",
    "etcd-example.v0.9.4",
  ]);
  const etcd = rs.inputs[0].instances[0];
  assert.equal(etcd.dependencies[0].name, "cache-operator.v1.1.1");
});

test(
  "resolve: an unsatisfiable input exits 1 and explains " + "itself in a sentence; unrelated inputs still resolve",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-resolve-"));
    const input = join(dir, "input.yaml");
    writeFileSync(
      input,
      `kind: Input
metadata: {name: etcd}
spec:
  constraints:
  - type: olm.catalog
    value: {catalog: catalog, package: etcd-example}
---
kind: Input
metadata: {name: future-cache}
spec:
  constraints:
  - type: olm.packageVersion
    value: {package: cache-operator, version: "3.0.0"}
`,
    );
    const r = opcat(["resolve", "--catalog", CATALOG, "--input", input, "-o", "json"]);
    assert.equal(r.code, 1);
    const rs = JSON.parse(r.stdout);
    const failed = rs.inputs.find((i: { name: string }) => i.name === "future-cache");
    assert.equal(failed.conditions[0].reason, "ConstraintsNotSatisfiable");
    assert.match(failed.conditions[0].message, /no operators found with version 3\.0\.0 in package cache-operator/);
    assert.deepEqual(rs.inputs.find((i: { name: string }) => i.name === "etcd").conditions, []);
    assert.match(r.stderr, /input future-cache: ResolutionFailed/);
  },
);

test("resolve: usage errors exit 2; query and images list what the catalog offers", () => {
  assert.equal(opcat(["resolve", "--input", join(REPO_ROOT, "examples", "resolve", "input.yaml")]).code, 2);
  const q = opcat([
    "query",
    "--catalog",
    CATALOG,
    '{"package":{"packageName":"cache-operator","versionRange":">=1.1.0"}}',
    "-o",
    "json",
  ]);
  assert.equal(q.code, 0, q.stderr);
  assert.match(q.stdout, /cache-operator\.v1\.1\.1/);
  assert.doesNotMatch(q.stdout, /cache-operator\.v1\.0\.0/);
  const imgs = opcat(["images", "--catalog", CATALOG]);
  assert.equal(imgs.code, 0, imgs.stderr);
  assert.match(imgs.stdout, /^quay\.io\/example\/etcd:v3\.5\.9$/m);
});

test("resolve: two Inputs with the same name are invalid input (exit 1) naming both documents", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-dup-input-"));
  const input = (channel: string): string =>
    "kind: Input\nmetadata: {name: etcd}\nspec:\n  constraints:\n  - type: olm.catalog\n" +
    `    value: {package: etcd-example, channel: ${channel}}\n`;
  writeFileSync(join(dir, "input.yaml"), `${input("stable")}---\n${input("fast")}`);
  const r = opcat(["resolve", "--catalog", CATALOG, "--input", join(dir, "input.yaml")]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /input\.yaml document 2: Input etcd: the name is already used by \S+input\.yaml document 1/);
  assert.doesNotMatch(r.stderr, /internal error/);
});

test("resolve: the short text form on a terminal, the resolveset (as -o yaml) through a pipe", (t) => {
  const args = ["resolve", "--catalog", CATALOG, "--input", join(REPO_ROOT, "examples", "resolve", "input.yaml")];
  const piped = opcat(args);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stdout, opcat([...args, "-o", "yaml"]).stdout);
  assert.match(piped.stdout, /^apiVersion: deppy\.io\/v1\n/);
  const text =
    "PACKAGE         VERSION  CHANNEL    CATALOG  WHY\n" +
    "cache-operator  1.1.1    stable-v1  catalog  needed by etcd-example.v0.9.4\n" +
    "etcd-example    0.9.4    stable     catalog  input etcd\n";
  assert.equal(opcat([...args, "-o", "text"]).stdout, text);
  // a terminal: script(1) gives the command a pseudo-terminal
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const tty = spawnSync("script", ["-qec", [process.execPath, BIN, ...args].map(quote).join(" "), "/dev/null"], {
    encoding: "utf8",
  });
  if (tty.error) return t.skip("script(1) is not available");
  assert.equal(tty.status, 0, tty.stdout);
  assert.equal(tty.stdout.replace(/\r\n/g, "\n"), text);
});
