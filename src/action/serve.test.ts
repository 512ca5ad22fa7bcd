// The serve action called directly: a small catalog served on 127.0.0.1 (port 0), nothing printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../fbc/errors.js";
import { buildServeCacheAction, parseServeCatalogArg, type ServeEvent, startServeAction } from "./serve.js";

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), "..", "serve", "testdata");
const CATALOG = join(TESTDATA, "catalog");

/**
 * Runs `fn` with standard output and error captured; returns the text written to them. Binary chunks
 * are the test runner's own reports (serialized to standard output while `fn` awaits): passed on.
 */
async function silent<T>(fn: () => Promise<T>): Promise<{ value: T; written: string }> {
  const out = process.stdout.write;
  const err = process.stderr.write;
  let written = "";
  const capture = (orig: typeof process.stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: string | Uint8Array, ...rest: never[]): boolean => {
      if (typeof chunk !== "string") return orig.call(stream, chunk, ...rest);
      written += chunk;
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out, process.stdout);
  process.stderr.write = capture(err, process.stderr);
  try {
    return { value: await fn(), written };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

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

test("buildServeCacheAction: loads and closes; an invalid catalog is an event and an invalid-kind error", async () => {
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
    (e: unknown) => e instanceof OpcatError && e.kind === "invalid" && e.code === "SERVE_INVALID_CATALOG",
  );
  assert.deepEqual(
    events.map((e) => (e.source === "store" ? `${e.event.status} ${e.event.catalog}` : e.source)),
    ["failed gone"],
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
