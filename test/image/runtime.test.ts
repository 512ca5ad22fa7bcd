/**
 * `opcat cluster image`'s image, built from this checkout: reproducible (two builds, one digest), non-root,
 * no shell, opcat's code and production dependencies only (no devDependencies, no source maps).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { buildOpcatImage, IMAGE_UID } from "../../src/image/index.js";
import { readTar } from "../../src/image/tar.js";
import { REPO_ROOT } from "../shared.js";

const linuxAmd64 = process.platform === "linux" && process.arch === "x64";

test("opcat's image: same inputs, same digest; non-root; no shell; production dependencies only", {
  skip: !linuxAmd64 && "the image ships the running Node binary, which must be linux/amd64",
}, async () => {
  const a = buildOpcatImage({ packageDir: REPO_ROOT });
  const b = buildOpcatImage({ packageDir: REPO_ROOT });
  assert.equal(a.manifestDigest, b.manifestDigest);
  const config = JSON.parse(a.config.toString("utf8")) as {
    architecture: string;
    config: { User: string; Entrypoint: string[] };
  };
  assert.equal(config.architecture, "amd64");
  assert.equal(config.config.User, `${IMAGE_UID}:${IMAGE_UID}`);
  assert.deepEqual(config.config.Entrypoint.slice(0, 1), ["/usr/local/bin/node"]);
  const names: string[] = [];
  for await (const e of readTar(Readable.from([gunzipSync(a.layer)]))) names.push(e.name);
  for (const want of [
    "usr/local/bin/node",
    "opt/opcat/dist/cli/main.js",
    "opt/opcat/bin/opcat",
    "bin/grpc_health_probe",
  ])
    assert.ok(names.includes(want), want);
  assert.ok(
    names.some((n) => n.startsWith("opt/opcat/node_modules/@grpc/grpc-js/")),
    "a production dependency",
  );
  for (const n of names) {
    assert.ok(!/^(bin|usr\/bin)\/(sh|bash|busybox)$/.test(n), `no shell: ${n}`);
    assert.ok(!/node_modules\/(typescript|vite|@biomejs|tsx)\//.test(n), `no devDependency: ${n}`);
    assert.ok(!n.endsWith(".map"), `no source map: ${n}`);
    // the entrypoint starts Node on bin/opcat: the CLI's start-up snapshot would only make the image larger
    assert.ok(!n.startsWith("opt/opcat/dist/snapshot"), `no start-up snapshot: ${n}`);
  }
});
