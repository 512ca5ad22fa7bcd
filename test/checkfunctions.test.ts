// scripts/check-functions.mjs (run by `npm run lint`): a function over 150 lines is reported and fails
// the check, one of 150 passes; arrow functions and methods count as functions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), "../scripts/check-functions.mjs");

/** A function whose text spans `lines` lines, from its first line to its closing brace. */
const fn = (head: string, lines: number): string =>
  `${head} {\n${Array.from({ length: lines - 2 }, (_, i) => `  void ${i};`).join("\n")}\n}\n`;

const cases: { name: string; text: string; fails: string | undefined }[] = [
  { name: "a function of 150 lines passes", text: fn("export function ok()", 150), fails: undefined },
  { name: "a function of 151 lines fails", text: fn("export function tooLong()", 151), fails: "tooLong is 151 lines" },
  { name: "an arrow function counts", text: `export const arrow = () =>${fn("", 151)}`, fails: "arrow is 151 lines" },
  { name: "a method counts", text: `export class C {\n${fn("  m()", 151)}}\n`, fails: "m is 151 lines" },
];

for (const c of cases) {
  test(`check-functions: ${c.name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-check-functions-"));
    try {
      writeFileSync(join(dir, "f.ts"), c.text);
      const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });
      if (c.fails === undefined) assert.equal(r.status, 0, r.stdout + r.stderr);
      else {
        assert.equal(r.status, 1, r.stdout + r.stderr);
        assert.match(r.stdout, new RegExp(`f\\.ts:\\d+: ${c.fails.replace(/[()]/g, "\\$&")}`));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
