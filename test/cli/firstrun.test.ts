/**
 * A new user's first run (issue 25, item 7): on a machine whose Node is older than 22, `npm run demo`
 * puts Node 24 into .node/, and bin/opcat (so `npx opcat` too) must then run with it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

/** A Node older than 22 on this machine (Debian's /usr/bin/node is 20 on ours), or undefined. */
function oldNode(): string | undefined {
  for (const n of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    const r = spawnSync(n, ["-p", "process.versions.node"], { encoding: "utf8" });
    if (r.status === 0 && Number(r.stdout.split(".")[0]) < 22) return n;
  }
  return undefined;
}
const OLD = oldNode();
const skip = OLD ? false : "no Node older than 22 on this machine";

/** A copy of the launcher beside the built dist/, with or without a Node 24 in .node/. */
function install(withLocalNode: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-firstrun-"));
  mkdirSync(join(dir, "bin"));
  copyFileSync(join(REPO_ROOT, "bin", "opcat"), join(dir, "bin", "opcat"));
  symlinkSync(join(REPO_ROOT, "dist"), join(dir, "dist"));
  if (withLocalNode) {
    mkdirSync(join(dir, ".node", "node_modules", "node", "bin"), { recursive: true });
    symlinkSync(process.execPath, join(dir, ".node", "node_modules", "node", "bin", "node"));
  }
  return dir;
}

test("bin/opcat with an old Node runs with the Node 24 in .node/", { skip }, () => {
  const dir = install(true);
  const r = spawnSync(OLD as string, [join(dir, "bin", "opcat"), "validate", join(REPO_ROOT, "examples", "catalog")], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /examples\/catalog: valid \(2 packages/);
});

test("bin/opcat with an old Node and no .node/ says which Node it needs (exit 2)", { skip }, () => {
  const dir = install(false);
  const r = spawnSync(OLD as string, [join(dir, "bin", "opcat"), "version"], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /needs Node\.js 22 or newer/);
  assert.match(r.stderr, /npm run demo/);
});

test("bin/opcat with an old Node passes SIGTERM on to the server it started", { skip }, async () => {
  const dir = install(true);
  const args = ["serve", join(REPO_ROOT, "examples", "catalog"), "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"];
  const child = spawn(OLD as string, [join(dir, "bin", "opcat"), ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  const exited = new Promise<string>((res) => child.on("exit", (code, sig) => res(`${code} ${sig}`)));
  await new Promise<void>((res) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes('"msg":"serving"')) res();
    });
    child.on("exit", () => res());
  });
  assert.match(err, /"msg":"serving"/);
  child.kill("SIGTERM");
  assert.equal(await exited, "0 null", err);
  assert.match(err, /"msg":"stopped"/);
});
