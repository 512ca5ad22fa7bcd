/**
 * A new user's first run (issue 25, item 7): on a machine whose Node is older than 22, `npm run demo`
 * puts Node 24 into .node/, and bin/opcat (so `npx opcat` too) must then run with it; and what a
 * new user reads on the way (summaries, hints) makes sense.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CatalogStore, startHttpServer } from "../../src/serve/index.js";
import { webMounts } from "../../src/web/index.js";
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
const BIN = join(REPO_ROOT, "bin", "opcat");

/** A copy of the launchers (every bin entry) beside the built dist/, with or without a Node 24 in .node/. */
function install(withLocalNode: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-firstrun-"));
  mkdirSync(join(dir, "bin"));
  for (const f of readdirSync(join(REPO_ROOT, "bin"))) copyFileSync(join(REPO_ROOT, "bin", f), join(dir, "bin", f));
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

/** A directory with a `node` that answers `--version` as Node 20 does and fails if started for anything else. */
function fakeOldNode(): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-fake-node-"));
  const script =
    '#!/bin/sh\n[ "$1" = --version ] && { echo v20.20.2; exit 0; }\necho "old node started" >&2\nexit 99\n';
  writeFileSync(join(dir, "node"), script, { mode: 0o755 });
  return dir;
}

test("bin/opcat run as a program with an old node on PATH starts the Node 24 in .node/ directly", () => {
  for (const bin of ["opcat", "kubectl-instance"]) {
    const dir = install(true);
    const env = { ...process.env, PATH: `${fakeOldNode()}:/usr/bin:/bin` };
    const args = bin === "opcat" ? ["validate", join(REPO_ROOT, "examples", "catalog")] : ["--help"];
    const r = spawnSync(join(dir, "bin", bin), args, { encoding: "utf8", env });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /old node started/);
    if (bin === "opcat") assert.match(r.stderr, /examples\/catalog: valid \(2 packages/);
  }
  // without .node/, `version` goes to the old node (which says which Node opcat needs), not answered by sh
  const bare = install(false);
  const env = { ...process.env, PATH: `${fakeOldNode()}:/usr/bin:/bin` };
  const r = spawnSync(join(bare, "bin", "opcat"), ["version"], { encoding: "utf8", env });
  assert.match(r.stderr, /old node started/);
});

test("bin/opcat run as a program uses the node on PATH when it is 22 or newer", () => {
  const dir = install(false);
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
  const r = spawnSync(join(dir, "bin", "opcat"), ["--help"], { encoding: "utf8", env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8" }).stdout);
});

test("bin/opcat run as a program answers --version and version as the CLI does, failed writes too", () => {
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
  const outs: [string, import("node:child_process").StdioOptions][] = [["pipe", "pipe"]];
  if (existsSync("/dev/full")) outs.push(["/dev/full", ["ignore", openSync("/dev/full", "w"), "pipe"]]);
  for (const [, stdio] of outs) {
    for (const args of [["--version"], ["version"], ["--version", "version"]]) {
      const sh = spawnSync(BIN, args, { encoding: "utf8", env, stdio });
      const node = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env, stdio });
      assert.deepEqual([sh.status, sh.stdout, sh.stderr], [node.status, node.stdout, node.stderr], args.join(" "));
    }
  }
});

test("bin/opcat with an old Node and no .node/ says which Node it needs (exit 2)", { skip }, () => {
  const dir = install(false);
  const r = spawnSync(OLD as string, [join(dir, "bin", "opcat"), "version"], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /needs Node\.js 22 or newer/);
  assert.match(r.stderr, /npm run demo/);
});

test("bin/kubectl-instance with an old Node runs with the Node 24 in .node/, as bin/opcat does", { skip }, () => {
  const dir = install(true);
  // a kubeconfig that is not there: the command loads the Kubernetes client (undici, which Node 20
  // cannot load) before it reads the file, and fails with an I/O error, exit 2
  const kubeconfig = join(dir, "no-such-kubeconfig");
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  const plugin = join(dir, "bin", "kubectl-instance");
  const want = spawnSync(process.execPath, [plugin, "list"], { encoding: "utf8", env });
  const r = spawnSync(OLD as string, [plugin, "list"], { encoding: "utf8", env });
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, r.stderr);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, want.stderr);
  assert.equal(r.stdout, want.stdout);
  const help = spawnSync(OLD as string, [plugin, "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0, help.stderr);
  assert.equal(help.stdout, spawnSync(process.execPath, [plugin, "--help"], { encoding: "utf8" }).stdout);
});

test("bin/kubectl-instance with an old Node and no .node/ says which Node it needs (exit 2)", { skip }, () => {
  const dir = install(false);
  const r = spawnSync(OLD as string, [join(dir, "bin", "kubectl-instance"), "list"], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /needs Node\.js 22 or newer/);
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

test("template render --reuse with tag references that cannot be pulled names --reuse-tags", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-reuse-tags-"));
  // a registry on loopback where nothing listens: the pull fails at once, as quay.io does offline
  const image = "127.0.0.1:9/acme/foo-bundle:v1.0.0";
  const catalog = [
    { schema: "olm.package", name: "foo", defaultChannel: "stable" },
    { schema: "olm.channel", package: "foo", name: "stable", entries: [{ name: "foo.v1.0.0" }] },
    {
      schema: "olm.bundle",
      package: "foo",
      name: "foo.v1.0.0",
      image,
      properties: [{ type: "olm.package", value: { packageName: "foo", version: "1.0.0" } }],
    },
  ];
  writeFileSync(join(dir, "catalog.json"), catalog.map((b) => JSON.stringify(b)).join("\n") + "\n");
  const template = {
    schema: "olm.template.basic",
    entries: [catalog[0], catalog[1], { schema: "olm.bundle", image }],
  };
  writeFileSync(join(dir, "template.json"), JSON.stringify(template));
  const run = (extra: string[]) =>
    spawnSync(
      process.execPath,
      [BIN, "template", "render", join(dir, "template.json"), "--reuse", join(dir, "catalog.json"), ...extra],
      { encoding: "utf8" },
    );
  const r = run(["--use-http", "--timeout", "5s"]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /the reused catalog has this tag reference: add --reuse-tags to take it from there/);
  const ok = run(["--reuse-tags"]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /"name": "foo\.v1\.0\.0"/);
});

test("validate's summary counts in English; serve's log counts bundles as validate does", async () => {
  const example = join(REPO_ROOT, "examples", "catalog");
  const v = spawnSync(process.execPath, [BIN, "validate", example], { encoding: "utf8" });
  assert.equal(v.status, 0, v.stderr);
  assert.match(v.stderr, /valid \(2 packages, 3 channels, 7 bundles, 1 deprecation, 0 other blobs in 2 files, /);
  const child = spawn(process.execPath, [BIN, "serve", example, "--http", "127.0.0.1:0", "--no-grpc"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  await new Promise<void>((res) => {
    child.stderr.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes('"msg":"serving"')) res();
    });
    child.on("exit", () => res());
  });
  child.kill("SIGTERM");
  // 7 bundles (validate, the web UI), in 9 channel entries
  assert.match(log, /"msg":"catalog loaded".*"bundles":7,"channel_entries":9/);
});

test("the web UI declares its icon, which is served; /favicon.ico is not a 404", async () => {
  const store = new CatalogStore();
  await store.add("catalog", join(REPO_ROOT, "examples", "catalog"));
  const srv = await startHttpServer(store, { port: 0, mounts: webMounts(store, { ui: {} }) });
  const base = `http://127.0.0.1:${srv.address.port}`;
  try {
    const page = await (await fetch(`${base}/`)).text();
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(page)?.[1];
    assert.ok(href, page);
    const icon = await fetch(base + href);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get("content-type"), "image/svg+xml");
    assert.match(await icon.text(), /^<svg /);
    const ico = await fetch(`${base}/favicon.ico`);
    assert.equal(ico.status, 204);
  } finally {
    await srv.close(0);
    await store.close();
  }
});
