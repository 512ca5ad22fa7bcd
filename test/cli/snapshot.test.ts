/**
 * The catalog commands' start-up snapshot (scripts/build-snapshot.mjs, dist/snapshot/): bin/opcat starts
 * render, validate, render-graph, list, migrate and init from it when it was built for the Node on PATH,
 * and each answers with the same bytes and exit code as when started from dist/ (OPCAT_NO_SNAPSHOT=1).
 * Skipped when there is no current blob for this Node (built by `npm run build` and scripts/bootstrap.mjs).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { COMMUNITY, REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const BLOB = join(REPO_ROOT, "dist", "snapshot", `cli-${process.version}.blob`);
const MAIN = join(REPO_ROOT, "dist", "cli", "main.js");
const current = existsSync(BLOB) && statSync(BLOB).mtimeMs > statSync(MAIN).mtimeMs;
const skip = current ? false : `no start-up snapshot for ${process.version} newer than dist/`;
// this Node first on PATH, as bin/opcat finds it
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;

function opcat(args: string[], snapshot: boolean, cwd: string) {
  const env = { ...process.env, PATH, OPCAT_NO_SNAPSHOT: snapshot ? "" : "1" };
  const r = spawnSync(BIN, args, { encoding: "utf8", env, cwd, input: "" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("bin/opcat starts the catalog commands from the snapshot, the others from dist/", { skip }, () => {
  const trace = (args: string[]) =>
    spawnSync("sh", ["-x", BIN, ...args], { encoding: "utf8", env: { ...process.env, PATH } }).stderr;
  assert.match(trace(["validate", join(REPO_ROOT, "examples", "catalog")]), /exec \S+ --snapshot-blob \S+cli-v/);
  assert.doesNotMatch(trace(["version"]), /--snapshot-blob/);
  const off = spawnSync("sh", ["-x", BIN, "render", "--help"], {
    encoding: "utf8",
    env: { ...process.env, PATH, OPCAT_NO_SNAPSHOT: "1" },
  });
  assert.doesNotMatch(off.stderr, /--snapshot-blob/);
});

test("the snapshot answers as dist/ does: output bytes, messages and exit codes", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-snapshot-"));
  const bad = join(dir, "bad");
  mkdirSync(bad);
  writeFileSync(join(bad, "catalog.json"), '{"schema":"olm.package"}\n{"schema":"olm.channel","name":"x"}\n');
  const example = join(REPO_ROOT, "examples", "catalog");
  const bundle = join(COMMUNITY, "operators", "rabbitmq-cluster-operator", "2.9.0");
  const cases: string[][] = [
    ["validate", example],
    ["validate", bad],
    ["validate"],
    ["render", example, "-o", "yaml"],
    ["render", bundle],
    ["render", "--bogus"],
    ["render", join(dir, "missing")],
    ["render", "127.0.0.1:9/acme/foo:v1", "--use-http", "--timeout", "1s"],
    ["render", "--help"],
    ["render-graph", example],
    ["render-graph", example, "-p", "no-such-package"],
    ["list", "packages", example],
    ["list", "bundles", example],
    ["init", "foo", "--default-channel", "stable"],
    ["migrate", example, "out"],
  ];
  for (const args of cases) {
    const a = opcat(args, true, mkdtempSync(join(dir, "a-")));
    const b = opcat(args, false, mkdtempSync(join(dir, "b-")));
    assert.doesNotMatch(a.stderr, /not in opcat's start-up snapshot/, args.join(" "));
    assert.deepEqual(a, b, args.join(" "));
  }
});
