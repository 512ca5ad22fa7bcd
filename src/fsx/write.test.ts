/** The one write guarantee: whole or not at all, the replaced file's mode kept, errors naming the target. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isOpcatTemp, stagedName, sweepStagedIn } from "./staged.js";
import { stageFile, writeDirectoryAtomic, writeFileAtomic } from "./write.js";

const dir = () => mkdtempSync(join(tmpdir(), "opcat-fsx-"));

test("writeFileAtomic replaces a file, keeps its mode, and leaves no staged file", () => {
  const d = dir();
  const f = join(d, "a.yaml");
  writeFileSync(f, "old");
  chmodSync(f, 0o640);
  writeFileAtomic(f, "new");
  assert.equal(readFileSync(f, "utf8"), "new");
  assert.equal(statSync(f).mode & 0o777, 0o640);
  assert.deepEqual(readdirSync(d), ["a.yaml"]);
});

test("a new file gets 0666 less the umask, and missing parents are made", () => {
  const d = dir();
  const f = join(d, "x", "y", "b.json");
  writeFileAtomic(f, new Uint8Array([1, 2, 3]));
  assert.deepEqual([...readFileSync(f)], [1, 2, 3]);
  const umask = process.umask();
  assert.equal(statSync(f).mode & 0o777, 0o666 & ~umask);
});

test("a failed rename leaves the target untouched, no staged file, and the error names the target", () => {
  const d = dir();
  const f = join(d, "c.txt");
  writeFileSync(f, "kept");
  const err = (() => {
    try {
      writeFileAtomic(f, "lost", {
        rename: () => {
          const e: NodeJS.ErrnoException = new Error("ENOSPC: no space left on device");
          e.code = "ENOSPC";
          throw e;
        },
      });
    } catch (e) {
      return e as NodeJS.ErrnoException;
    }
  })();
  assert.equal(err?.code, "ENOSPC");
  assert.equal(readFileSync(f, "utf8"), "kept");
  assert.deepEqual(readdirSync(d), ["c.txt"]);
});

test("staged names are recognised, and only dead processes' ones are swept", () => {
  const d = dir();
  const mine = stageFile(join(d, "t.yaml"), "mine");
  assert.ok(isOpcatTemp(join(mine).split("/").pop()!, false));
  const dead = join(d, `.t.yaml.999999999.0123abcd.tmp`);
  writeFileSync(dead, "dead");
  assert.equal(sweepStagedIn(d), 1);
  assert.deepEqual(readdirSync(d).sort(), [mine.split("/").pop()!]);
  assert.match(stagedName(join(d, "z")), /\/\.z\.\d+\.[0-9a-f]{8}\.tmp$/);
});

test("writeDirectoryAtomic fills a staged directory and renames it into place", () => {
  const d = dir();
  const out = join(d, "catalog");
  writeDirectoryAtomic(out, (tmp) => {
    assert.ok(isOpcatTemp(tmp.split("/").pop()!, true));
    writeFileSync(join(tmp, "index.json"), "{}");
  });
  assert.deepEqual(readdirSync(d), ["catalog"]);
  assert.deepEqual(readdirSync(out), ["index.json"]);
});
