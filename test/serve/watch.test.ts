/**
 * `opcat serve --watch` as a real process on 127.0.0.1 while the catalog directory it was given is
 * replaced the ways deployments replace it: a symlink swapped (`ln -sfn`, how ConfigMap volumes and
 * GitOps checkouts update), the directory removed and copied again, moved away and recreated. Each
 * time the served content must follow, and the reload is logged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";
import { httpGet } from "./helpers.js";

const BIN = join(REPO_ROOT, "bin", "opcat");

function catalog(dir: string, marker: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "catalog.json"),
    [
      { schema: "olm.package", name: "foo", defaultChannel: "stable", description: `marker ${marker}` },
      { schema: "olm.channel", name: "stable", package: "foo", entries: [{ name: "foo.v1.0.0" }] },
      {
        schema: "olm.bundle",
        name: "foo.v1.0.0",
        package: "foo",
        image: "quay.io/foo/bundle:v1.0.0",
        properties: [{ type: "olm.package", value: { packageName: "foo", version: "1.0.0" } }],
      },
    ]
      .map((b) => JSON.stringify(b))
      .join("\n") + "\n",
  );
}

test("serve --watch follows a swapped symlink, a directory " +
  "removed and copied again, and one moved away and recreated", {
  timeout: 120_000,
}, async () => {
  const tmp = mkdtempSync(join(tmpdir(), "opcat-watch-"));
  catalog(join(tmp, "v1"), "one");
  catalog(join(tmp, "v2"), "two");
  catalog(join(tmp, "v3"), "three");
  catalog(join(tmp, "v4"), "four");
  const link = join(tmp, "current");
  symlinkSync(join(tmp, "v1"), link);
  const child = spawn(
    process.execPath,
    [BIN, "serve", `foo=${link}`, "--watch", "--http", "127.0.0.1:0", "--no-grpc"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const lines: ((l: string) => void)[] = [];
  child.stderr!.on("data", (d: Buffer) => {
    log += d.toString();
    for (const f of lines) f(log);
  });
  /** Resolves once the log holds `re` (the server says what it did; no sleeping). */
  const logged = (re: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (l: string) => {
        if (re.test(l)) resolve();
      };
      lines.push(check);
      check(log);
      child.once("exit", (c) => reject(new Error(`serve exited ${c}: ${log}`)));
    });
  try {
    await logged(/"msg":"serving"/);
    const url = /"http":"(http:\/\/127\.0\.0\.1:\d+)\//.exec(log)![1] + "/catalogs/foo/api/v1/all";
    const served = async () => (await httpGet(url)).body.toString();
    assert.match(await served(), /marker one/);

    // 1. the symlink swapped atomically
    symlinkSync(join(tmp, "v2"), join(tmp, "next"));
    renameSync(join(tmp, "next"), link);
    await logged(/"msg":"catalog loaded","catalog":"foo","revision":2/);
    assert.match(await served(), /marker two/);

    // 2. the directory behind the name removed and copied again
    rmSync(link);
    cpSync(join(tmp, "v3"), link, { recursive: true });
    await logged(/"msg":"catalog loaded","catalog":"foo","revision":3/);
    assert.match(await served(), /marker three/);

    // 3. moved away and recreated
    renameSync(link, join(tmp, "old"));
    cpSync(join(tmp, "v4"), link, { recursive: true });
    await logged(/"msg":"catalog loaded","catalog":"foo","revision":4/);
    assert.match(await served(), /marker four/);

    // and an edit inside the new directory is still seen
    catalog(link, "five");
    await logged(/"msg":"catalog loaded","catalog":"foo","revision":5/);
    assert.match(await served(), /marker five/);
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("serve --watch: a reload that fails logs its problems as JSON lines, like every other line", {
  timeout: 60_000,
}, async () => {
  const tmp = mkdtempSync(join(tmpdir(), "opcat-watch-json-"));
  catalog(join(tmp, "c"), "one");
  const child = spawn(process.execPath, [BIN, "serve", `foo=${join(tmp, "c")}`, "--watch", "--http", "127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const waiters: (() => void)[] = [];
  child.stderr!.on("data", (d: Buffer) => {
    log += d.toString();
    for (const f of waiters) f();
  });
  const logged = (re: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => re.test(log) && resolve();
      waiters.push(check);
      check();
      child.once("exit", (c) => reject(new Error(`serve exited ${c}: ${log}`)));
    });
  try {
    await logged(/"msg":"serving"/);
    writeFileSync(join(tmp, "c", "broken.yaml"), "schema: olm.package\nname: Bad_Name\n");
    await logged(/"code":"FBC_PACKAGE_INVALID_NAME"[^\n]*\n/);
    const lines = log.trimEnd().split("\n");
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `not a JSON log line: ${l}`);
    const problem = lines.map((l) => JSON.parse(l)).find((o) => o.code === "FBC_PACKAGE_INVALID_NAME");
    assert.equal(problem.level, "error");
    assert.equal(problem.catalog, "foo");
    assert.deepEqual(problem.location?.file, "broken.yaml");
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(tmp, { recursive: true, force: true });
  }
});
