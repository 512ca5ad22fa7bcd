// The serve action called directly: a small catalog served on 127.0.0.1 (port 0), nothing printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { buildServeCacheAction, parseServeCatalogArg, type ServeEvent, startServeAction } from "./serve.js";
import { silent } from "../../test/shared.js";

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), "..", "serve", "testdata");
const CATALOG = join(TESTDATA, "catalog");

test("startServeAction: serves a catalog over HTTP and gRPC on loopback, closes, prints nothing", async () => {
  const events: ServeEvent[] = [];
  const { value: body, written } = await silent(async () => {
    const served = await startServeAction({
      catalogs: [parseServeCatalogArg(`test=${CATALOG}`)],
      http: { host: "127.0.0.1", port: 0 },
      grpc: { host: "127.0.0.1", port: 0 },
      resolver: false,
      ui: false,
      onEvent: (e) => events.push(e),
    });
    try {
      assert.deepEqual(served.catalogs, ["test"]);
      assert.equal(served.addresses.http?.address, "127.0.0.1");
      assert.ok((served.addresses.http?.port ?? 0) > 0);
      assert.equal(served.addresses.grpc?.host, "127.0.0.1");
      assert.ok((served.addresses.grpc?.port ?? 0) > 0);
      const res = await fetch(`http://127.0.0.1:${served.addresses.http?.port}/catalogs/test/api/v1/all`);
      assert.equal(res.status, 200);
      return await res.text();
    } finally {
      await served.close(0);
    }
  });
  assert.equal(written, "");
  assert.equal(body, readFileSync(join(TESTDATA, "all.golden.jsonl"), "utf8"));
  assert.deepEqual(
    events.map((e) => (e.source === "store" ? `${e.event.status} ${e.event.catalog}` : e.source)),
    ["loaded test"],
  );
});

test("buildServeCacheAction: loads, closes; a failed catalog is an event and an error (io: unreadable)", async () => {
  const { value, written } = await silent(() => buildServeCacheAction({ catalogs: [parseServeCatalogArg(CATALOG)] }));
  assert.equal(written, "");
  assert.deepEqual(value, { catalogs: ["catalog"] });
  const events: ServeEvent[] = [];
  const missing = silent(() =>
    buildServeCacheAction({
      catalogs: [parseServeCatalogArg(`gone=${join(TESTDATA, "no-such-dir")}`)],
      onEvent: (e) => events.push(e),
    }),
  );
  await assert.rejects(
    missing,
    // a directory that is not there (IO_ERROR): exit 2, as for validate or render
    (e: unknown) => e instanceof OpcatError && e.kind === "io" && e.code === "SERVE_INVALID_CATALOG",
  );
  assert.deepEqual(
    events.map((e) => (e.source === "store" ? `${e.event.status} ${e.event.catalog}` : e.source)),
    ["failed gone"],
  );
  const bad = mkdtempSync(join(tmpdir(), "opcat-serve-invalid-"));
  writeFileSync(join(bad, "catalog.json"), '{"schema":"olm.channel","package":"p","name":"c"}\n');
  await assert.rejects(
    silent(() => buildServeCacheAction({ catalogs: [parseServeCatalogArg(`bad=${bad}`)] })),
    (e: unknown) => e instanceof OpcatError && e.kind === "invalid" && e.code === "SERVE_INVALID_CATALOG",
  );
});

test("parseServeCatalogArg: directories and images, optionally named", () => {
  assert.deepEqual(parseServeCatalogArg(`x=${CATALOG}`), { name: "x", source: CATALOG, image: false });
  assert.deepEqual(parseServeCatalogArg("quay.io/org/my-index:v1"), {
    name: "my-index",
    source: "quay.io/org/my-index:v1",
    image: true,
  });
});
