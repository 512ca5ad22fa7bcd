/**
 * Every command that writes, onto a nearly full file system (issue 25, item 2): a write that only
 * partly fits is an error (exit 2, IO_WRITE, "the output is incomplete"), never a truncated file and
 * exit 0. A small tmpfs needs root; CI runs as root, so there the test is never skipped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const root = process.getuid?.() === 0;
const skip = root || process.env.CI === "true" ? false : "needs root to mount a small tmpfs";
const PAGE = 4096;
/** The small file system's size, in pages. */
const PAGES = 64;

/** A catalog whose every rendering is far larger than a page: one package, 200 bundles in a chain. */
function bigCatalog(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const name = (i: number): string => `big.v1.${i}.0`;
  const blobs: object[] = [
    { schema: "olm.package", name: "big", defaultChannel: "stable", description: "a big package" },
    {
      schema: "olm.channel",
      package: "big",
      name: "stable",
      entries: Array.from({ length: 200 }, (_, i) =>
        i === 0 ? { name: name(i) } : { name: name(i), replaces: name(i - 1) },
      ),
    },
  ];
  for (let i = 0; i < 200; i++)
    blobs.push({
      schema: "olm.bundle",
      package: "big",
      name: name(i),
      image: `quay.io/example/big-bundle@sha256:${i.toString(16).padStart(64, "0")}`,
      properties: [{ type: "olm.package", value: { packageName: "big", version: `1.${i}.0` } }],
    });
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

test("writers on a nearly full disk: exit 2, IO_WRITE, the output is incomplete", { skip }, () => {
  assert.ok(root, "under CI=true this test must run, as root");
  const work = mkdtempSync(join(tmpdir(), "opcat-fulldisk-"));
  const cat = join(work, "catalog");
  bigCatalog(cat);
  const disk = join(work, "disk");
  mkdirSync(disk);
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${PAGES * 4}k`, "tmpfs", disk], { encoding: "utf8" });
  assert.equal(mounted.status, 0, mounted.stderr);
  /** Leaves exactly one page free on the small file system. */
  const fill = (): void => {
    for (const n of readdirSync(disk)) rmSync(join(disk, n), { recursive: true, force: true });
    writeFileSync(join(disk, "fill"), Buffer.alloc((PAGES - 1) * PAGE));
  };
  try {
    const reuse = join(work, "basic.json");
    const conv = spawnSync(process.execPath, [BIN, "template", "convert", cat, "--to", "basic", "-o", "json"]);
    writeFileSync(reuse, conv.stdout);
    // standard output redirected to a file on the full disk
    const toStdout: string[][] = [
      ["render", cat, "-o", "json"],
      ["render", cat, "-o", "yaml"],
      ["render-graph", cat],
      ["list", "bundles", cat],
      ["template", "convert", cat, "--to", "basic", "-o", "yaml"],
      ["template", "convert", cat, "--to", "graph", "-o", "json"],
      ["template", "render", reuse, "--reuse", cat, "-o", "yaml"],
      ["cluster", "manifests"],
      ["completion", "bash"],
    ];
    for (const args of toStdout) {
      fill();
      const whole = spawnSync(process.execPath, [BIN, ...args]);
      assert.equal(whole.status, 0, `${args.join(" ")}: ${whole.stderr}`);
      assert.ok(whole.stdout.length > PAGE, `${args.join(" ")} prints more than a page`);
      const out = join(disk, "out");
      const fd = openSync(out, "w");
      const r = spawnSync(process.execPath, [BIN, ...args], { stdio: ["ignore", fd, "pipe"], encoding: "utf8" });
      closeSync(fd);
      assert.equal(
        r.status,
        2,
        `${args.join(" ")}: exit ${r.status}, ${statSync(out).size} bytes written: ${r.stderr}`,
      );
      assert.match(r.stderr, /error\[IO_WRITE\]: writing standard output \(.*out\): ENOSPC/, args.join(" "));
      assert.match(r.stderr, /the output is incomplete/, args.join(" "));
    }
    // files written by the command itself
    fill();
    const m = spawnSync(process.execPath, [BIN, "migrate", cat, join(disk, "migrated")], { encoding: "utf8" });
    assert.equal(m.status, 2, m.stderr);
    assert.match(m.stderr, /error\[IO_WRITE\]: .*ENOSPC[\s\S]*the output is incomplete/);
    assert.deepEqual(readdirSync(disk), ["fill"], "migrate leaves nothing behind");

    // add-bundle rewrites a template (more than a page) through a temporary file: one page is left
    for (const n of readdirSync(disk)) rmSync(join(disk, n), { recursive: true, force: true });
    const template = join(disk, "t.json");
    cpSync(reuse, template);
    const before = readFileSync(template);
    assert.ok(before.length > PAGE);
    writeFileSync(join(disk, "fill"), Buffer.alloc((PAGES - 1 - Math.ceil(before.length / PAGE)) * PAGE));
    const add = spawnSync(
      process.execPath,
      [
        BIN,
        "template",
        "add-bundle",
        template,
        "--image",
        "quay.io/example/big-bundle:v2.0.0",
        "--name",
        "big.v2.0.0",
        "--channel",
        "stable",
        "--replaces",
        "big.v1.199.0",
      ],
      { encoding: "utf8" },
    );
    // add-bundle's own outcome table: a failed write is invalid-input (exit 1), the file untouched
    assert.equal(add.status, 1, add.stderr);
    assert.match(add.stderr, /error\[TEMPLATE_ADD_WRITE\]: writing .*t\.json: ENOSPC.*the file was left unchanged/);
    assert.deepEqual(readFileSync(template), before, "the template is left as it was");
    assert.deepEqual(readdirSync(disk).sort(), ["fill", "t.json"], "no temporary file left");

    fill();
    const build = spawnSync(
      process.execPath,
      [BIN, "catalog", "build", cat, "-t", `oci:${join(disk, "layout")}:v1`, "--base-image", "scratch"],
      { encoding: "utf8" },
    );
    assert.equal(build.status, 2, build.stderr);
    assert.match(build.stderr, /ENOSPC/);
  } finally {
    spawnSync("umount", [disk]);
    rmSync(work, { recursive: true, force: true });
  }
});
