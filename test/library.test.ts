/**
 * docs/library.md's examples run as written: each ```ts block is run from the repository root as
 * its own module, importing the package by its public subpaths (`opcat/template`, …), which Node
 * resolves through package.json "exports" to the built dist/ (the package as npm would install it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./shared.js";

const doc = readFileSync(join(REPO_ROOT, "docs", "library.md"), "utf8");
const blocks = [...doc.matchAll(/^## (opcat\/\S+)\n\n```ts\n([\s\S]*?)\n```$/gm)].map((m) => ({
  subpath: m[1],
  code: m[2],
}));

test("docs/library.md has an example for every public subpath in package.json", () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  const subpaths = Object.keys(pkg.exports)
    .filter((k) => k !== ".")
    .map((k) => `opcat/${k.slice(2)}`);
  assert.deepEqual(blocks.map((b) => b.subpath).sort(), subpaths.sort());
});

for (const b of blocks) {
  test(`the ${b.subpath} example runs and imports only public subpaths`, () => {
    for (const m of b.code.matchAll(/from "([^"]+)"/g))
      assert.match(m[1], /^(node:|opcat(\/[a-z]+)?$)/, `${b.subpath}: imports ${m[1]}`);
    // inside the package (Node resolves a package's own name there), removed afterwards
    const dir = mkdtempSync(join(REPO_ROOT, "test", ".library-example-"));
    try {
      const file = join(dir, "example.mts");
      writeFileSync(file, b.code + "\n");
      const r = spawnSync(process.execPath, ["--import", "tsx", file], {
        cwd: REPO_ROOT,
        encoding: "utf8",
        timeout: 120_000,
      });
      assert.equal(r.status, 0, `${b.subpath}:\n${r.stderr}`);
      assert.notEqual(r.stdout.trim(), "", `${b.subpath} printed nothing`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
