/** `opcat validate dir1 dir2 …`: one verdict per argument, the same output as separate runs, the worst exit code. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const EXAMPLE = join(REPO_ROOT, "examples", "catalog");

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, OPCAT_DEBUG: "" } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function invalidCatalog(): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-batch-"));
  mkdirSync(join(dir, "b"));
  writeFileSync(join(dir, "b", "catalog.yaml"), "schema: olm.package\nname: B\n");
  return dir;
}

test("validate with several catalogs prints what separate runs print, in order, and exits with the worst code", () => {
  const bad = invalidCatalog();
  const missing = join(bad, "no-such-dir");
  for (const format of [[], ["-o", "json"]]) {
    const refs = [EXAMPLE, bad, missing, EXAMPLE];
    const batch = opcat(["validate", ...format, ...refs]);
    const runs = refs.map((r) => opcat(["validate", ...format, r]));
    assert.deepEqual(
      runs.map((r) => r.code),
      [0, 1, 2, 0],
    );
    assert.equal(batch.stdout, runs.map((r) => r.stdout).join(""));
    assert.equal(batch.stderr, runs.map((r) => r.stderr).join(""));
    assert.equal(batch.code, 2, batch.stderr);
  }
  const onlyInvalid = opcat(["validate", "-q", EXAMPLE, bad]);
  assert.equal(onlyInvalid.code, 1);
  assert.match(onlyInvalid.stderr, /^b\/catalog\.yaml:1: error\[FBC_PACKAGE_INVALID_NAME\]/);
  assert.equal(opcat(["validate", "-q", EXAMPLE, EXAMPLE]).code, 0);
});
