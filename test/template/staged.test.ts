/**
 * A write killed just before its rename (kill -9) leaves opcat's temporary file beside the target
 * (src/fsx): it is never read as catalog content, and the next write of that file removes it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeFileAtomic } from "../../src/fsx/write.js";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const CATALOG = readFileSync(join(REPO_ROOT, "examples", "catalog", "etcd-example", "catalog.yaml"), "utf8");

test("a temporary file left by a write killed before its rename is not content, and is swept next time", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-staged-"));
  const target = join(dir, "t.yaml");
  writeFileSync(target, CATALOG);
  // the atomic write of add-bundle, killed (SIGKILL) at its rename: the staged copy stays behind
  const module = pathToFileURL(join(REPO_ROOT, "src", "fsx", "write.ts")).href;
  const killed = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `const { writeFileAtomic } = await import(${JSON.stringify(module)});\n` +
        `writeFileAtomic(${JSON.stringify(target)}, ${JSON.stringify(CATALOG)}, ` +
        `{ rename: () => process.kill(process.pid, "SIGKILL") });`,
    ],
    { encoding: "utf8" },
  );
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  const left = readdirSync(dir).filter((n) => n !== "t.yaml");
  assert.equal(left.length, 1, "the staged copy is left behind");
  assert.match(left[0], /^\.t\.yaml\.\d+\.[0-9a-f]{8}\.tmp$/);

  for (const cmd of [["validate"], ["render"], ["list", "bundles"]]) {
    const r = spawnSync(process.execPath, [BIN, ...cmd, dir], { encoding: "utf8" });
    assert.equal(r.status, 0, `${cmd.join(" ")}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /DUPLICATE|duplicate/);
  }
  const rendered = spawnSync(process.execPath, [BIN, "render", dir, "-o", "json"], { encoding: "utf8" });
  assert.equal(rendered.stdout.split('"schema": "olm.package"').length - 1, 1);

  // the next write of the same file removes what the killed process left
  writeFileAtomic(target, CATALOG);
  assert.deepEqual(readdirSync(dir), ["t.yaml"]);
});
