/**
 * The resolver API of `opcat serve` (POST /api/v1/query and /api/v1/resolve) over real HTTP on
 * 127.0.0.1, on the bundled example catalog and the seed 002 example input.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { CatalogStore, startHttpServer, type HttpServerHandle } from "../../src/serve/index.js";
import { REPO_ROOT } from "../shared.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

function call(base: string, path: string, body: string | Buffer | undefined, opts: { method?: string; type?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.type !== "") headers["content-type"] = opts.type ?? "application/json";
    const req = request(base + path, { method: opts.method ?? "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? (JSON.parse(text) as unknown) : undefined });
      });
    });
    // A server that answers before the whole body was sent may reset the connection.
    req.on("error", (e: NodeJS.ErrnoException) => (e.code === "EPIPE" || e.code === "ECONNRESET" ? undefined : reject(e)));
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const post = (base: string, path: string, value: unknown): Promise<Answer> => call(base, path, JSON.stringify(value));
const errorCode = (a: Answer): string => (a.json as { error: { code: string } }).error.code;

let dir: string;
let store: CatalogStore;
let server: HttpServerHandle;
let base: string;
const inputDocs = loadAll(readFileSync(join(REPO_ROOT, "examples", "resolve", "input.yaml"), "utf8")) as unknown[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "opcat-resolveapi-"));
  cpSync(join(REPO_ROOT, "examples", "catalog"), join(dir, "catalog"), { recursive: true });
  rmSync(join(dir, "catalog", "README.md"));
  store = new CatalogStore();
  const out = await store.add("catalog", join(dir, "catalog"));
  assert.equal(out.status, "loaded");
  server = await startHttpServer(store, { port: 0, resolver: { maxRequestBytes: 64 * 1024 } });
  base = `http://127.0.0.1:${server.address.port}`;
});

after(async () => {
  await server.close(0);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test("query: an olm.constraint value and a CEL rule", async () => {
  const byPkg = await post(base, "/api/v1/query", { query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=1.1.0" } }) });
  assert.equal(byPkg.status, 200);
  assert.equal(byPkg.headers["content-type"], "application/json");
  const names = (byPkg.json as { bundles: { name: string; catalog: string }[] }).bundles.map((b) => b.name).sort();
  assert.deepEqual(names, ["cache-operator.v1.1.0", "cache-operator.v1.1.1"]);
  const cel = await post(base, "/api/v1/query", { query: 'properties.exists(p, p.type == "olm.package.required")', catalogs: ["catalog"] });
  assert.equal(cel.status, 200);
  assert.ok((cel.json as { bundles: { package: string }[] }).bundles.every((b) => b.package === "etcd-example"));
  const bad = await post(base, "/api/v1/query", { query: "properties.exists(" });
  assert.equal(bad.status, 400);
  assert.equal(errorCode(bad), "RESOLVE_QUERY_INVALID");
});

test("resolve: the seed 002 example input resolves with its dependency; an impossible input is a 409 with the explanation", async () => {
  const ok = await post(base, "/api/v1/resolve", { inputs: inputDocs });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  const rs = ok.json as { resolved: boolean; bundles: { package: string }[] };
  assert.equal(rs.resolved, true);
  assert.deepEqual([...new Set(rs.bundles.map((b) => b.package))].sort(), ["cache-operator", "etcd-example"]);
  const impossible = await post(base, "/api/v1/resolve", {
    inputs: [{ apiVersion: "deppy.io/v1", kind: "Input", metadata: { name: "x" }, spec: { constraints: [{ type: "olm.packageVersion", value: { package: "cache-operator", version: ">=9.0.0" } }] } }],
  });
  assert.equal(impossible.status, 409);
  const failed = impossible.json as { resolved: boolean; inputs: { conditions: { status: string; message: string }[] }[] };
  assert.equal(failed.resolved, false);
  assert.ok(failed.inputs[0].conditions.some((c) => c.status === "True" && c.message.length > 0));
});

test("errors: method, content type, JSON, fields, unknown catalog, size limit", async () => {
  const get = await call(base, "/api/v1/resolve", undefined, { method: "GET" });
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, "POST");
  assert.equal(errorCode(get), "SERVE_API_METHOD");
  const text = await call(base, "/api/v1/query", "query", { type: "text/plain" });
  assert.equal(text.status, 415);
  assert.equal(errorCode(await call(base, "/api/v1/query", "{not json")), "SERVE_API_BAD_JSON");
  assert.equal(errorCode(await post(base, "/api/v1/query", [1])), "SERVE_API_BAD_REQUEST");
  assert.equal(errorCode(await post(base, "/api/v1/query", { query: 5 })), "SERVE_API_BAD_REQUEST");
  assert.equal(errorCode(await post(base, "/api/v1/resolve", { inputs: "x" })), "SERVE_API_BAD_REQUEST");
  const noInput = await post(base, "/api/v1/resolve", { inputs: [] });
  assert.equal(noInput.status, 400);
  assert.equal(errorCode(noInput), "RESOLVE_INPUT_INVALID");
  const unknown = await post(base, "/api/v1/query", { query: "true", catalogs: ["nope"] });
  assert.equal(unknown.status, 404);
  assert.equal(errorCode(unknown), "SERVE_API_UNKNOWN_CATALOG");
  const big = await call(base, "/api/v1/query", JSON.stringify({ query: "true", pad: "x".repeat(100 * 1024) }));
  assert.equal(big.status, 413);
  assert.equal(errorCode(big), "SERVE_API_TOO_LARGE");
  // The catalog routes are untouched.
  const all = await fetch(`${base}/catalogs/catalog/api/v1/all`);
  assert.equal(all.status, 200);
  assert.equal(all.headers.get("content-type"), "application/jsonl");
  await all.text();
});

test("a reload swaps the resolver's catalog set atomically", async () => {
  const before = await post(base, "/api/v1/query", { query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=0.0.0" } }) });
  assert.equal((before.json as { bundles: unknown[] }).bundles.length, 3);
  const file = join(dir, "catalog", "cache-operator", "catalog.json");
  // Drop the newest bundle (and its channel entry).
  const pkg = "cache-operator";
  const bundle = (v: string): string => JSON.stringify({ schema: "olm.bundle", name: `${pkg}.v${v}`, package: pkg, image: `quay.io/example/cache-bundle:v${v}`, properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }] });
  writeFileSync(
    file,
    [
      JSON.stringify({ schema: "olm.package", name: pkg, defaultChannel: "stable-v1" }),
      JSON.stringify({ schema: "olm.channel", name: "stable-v1", package: pkg, entries: [{ name: `${pkg}.v1.0.0` }, { name: `${pkg}.v1.1.0`, replaces: `${pkg}.v1.0.0` }] }),
      bundle("1.0.0"),
      bundle("1.1.0"),
    ].join("\n") + "\n",
  );
  const out = await store.reload("catalog");
  assert.equal(out.status, "loaded", JSON.stringify(out));
  const concurrent = await Promise.all(Array.from({ length: 8 }, () => post(base, "/api/v1/query", { query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=0.0.0" } }) })));
  for (const a of concurrent) assert.equal((a.json as { bundles: unknown[] }).bundles.length, 2);
});
