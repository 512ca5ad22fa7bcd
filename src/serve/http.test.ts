import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { httpGet } from "../../test/serve/helpers.js";
import { CatalogStore, startHttpServer, type HttpServerHandle } from "./index.js";
import { acceptsGzip, parseHttpDate, parseRange } from "./http.js";

const here = dirname(fileURLToPath(import.meta.url));
const catalogDir = join(here, "testdata", "catalog");
// Written by the Go oracle with declcfg.WalkMetasFS + Meta.Blob, exactly as catalogd's storage writes catalog.jsonl.
const golden = readFileSync(join(here, "testdata", "all.golden.jsonl"));

describe("catalogd HTTP API", () => {
  const store = new CatalogStore();
  const logs: string[] = [];
  let srv: HttpServerHandle;
  let base: string;
  before(async () => {
    assert.equal((await store.add("test", catalogDir)).status, "loaded");
    srv = await startHttpServer(store, { port: 0, accessLog: (l) => logs.push(l) });
    base = `http://127.0.0.1:${srv.address.port}`;
  });
  after(async () => {
    await srv.close();
    await store.close();
  });

  test("request heads up to 1 MiB are served (as catalogd's Go server does); beyond, a clear 431", async () => {
    const q = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=${"v".repeat(4)}`).join("&");
    for (const n of [2_000, 12_000]) {
      const r = await httpGet(`${base}/catalogs/test/api/v1/all?${q(n)}`);
      assert.equal(r.status, 200, `${n} parameters`);
    }
    const huge = await new Promise<string>((resolve, reject) => {
      const sock = connect({ host: "127.0.0.1", port: srv.address.port });
      let got = "";
      sock.on("data", (d: Buffer) => {
        got += d.toString();
        if (got.includes("\r\n\r\n")) sock.destroy();
      });
      sock.on("close", () => resolve(got));
      sock.on("error", reject);
      sock.write(`GET /catalogs/test/api/v1/all?${"x".repeat(1_100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.match(huge, /larger than the 1 MiB limit/);
  });

  test("many short headers (30 KB) are served: only the head's size is limited, as in Go's net/http", async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect({ host: "127.0.0.1", port: srv.address.port });
      let got = "";
      sock.on("data", (d: Buffer) => {
        got += d.toString();
        if (got.includes("\r\n\r\n")) sock.destroy();
      });
      sock.on("close", () => resolve(got));
      sock.on("error", reject);
      const headers = Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v\r\n`).join("");
      sock.write(`HEAD /catalogs/test/api/v1/all HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
    });
    // Node's default (2000 names and values) answered 431 naming the 1 MiB limit the request was far from
    assert.match(reply, /^HTTP\/1\.1 200 /);
  });

  test("GET /metrics: the process's memory (RSS, heap) and each catalog in Prometheus text format", async () => {
    const r = await httpGet(`${base}/metrics`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
    const text = r.body.toString();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    assert.match(text, /^# TYPE process_resident_memory_bytes gauge$/m);
    assert.ok(value("process_resident_memory_bytes") > 1 << 20, text);
    assert.ok(value("nodejs_heap_size_used_bytes") > 0, text);
    assert.ok(value("nodejs_heap_size_total_bytes") >= value("nodejs_heap_size_used_bytes"), text);
    assert.match(text, /^opcat_catalog_revision\{catalog="test"\} 1$/m);
    assert.match(text, new RegExp(`^opcat_catalog_bytes\\{catalog="test"\\} ${golden.length}$`, "m"));
    assert.equal((await httpGet(`${base}/metrics`, {}, "POST")).status, 405);
  });

  test("GET /all is catalogd's catalog.jsonl, byte for byte", async () => {
    const r = await httpGet(`${base}/catalogs/test/api/v1/all`);
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "application/jsonl");
    assert.equal(r.headers["content-length"], String(golden.length));
    assert.equal(r.headers["accept-ranges"], "bytes");
    assert.equal(r.headers["vary"], "Accept-Encoding");
    assert.match(String(r.headers["etag"]), /^"[A-Za-z0-9_-]+"$/);
    assert.equal(parseHttpDate(String(r.headers["last-modified"])), store.get("test")?.lastModified.getTime());
    assert.ok(r.body.equals(golden));
  });

  test("HEAD /all: same headers, no body", async () => {
    const g = await httpGet(`${base}/catalogs/test/api/v1/all`);
    const h = await httpGet(`${base}/catalogs/test/api/v1/all`, {}, "HEAD");
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
    for (const k of ["content-type", "content-length", "etag", "last-modified"])
      assert.equal(h.headers[k], g.headers[k]);
  });

  test("gzip: pre-compressed body, its own strong ETag", async () => {
    const r = await httpGet(`${base}/catalogs/test/api/v1/all`, { "accept-encoding": "br, gzip;q=0.5" });
    assert.equal(r.headers["content-encoding"], "gzip");
    assert.equal(r.headers["content-length"], String(r.body.length));
    assert.ok(gunzipSync(r.body).equals(golden));
    assert.match(String(r.headers["etag"]), /-gzip"$/);
    const no = await httpGet(`${base}/catalogs/test/api/v1/all`, { "accept-encoding": "gzip;q=0, br" });
    assert.equal(no.headers["content-encoding"], undefined);
  });

  test(
    "conditional requests: If-None-Match / If-Modified-Since " + "→ 304, If-Match / If-Unmodified-Since → 412",
    async () => {
      const first = await httpGet(`${base}/catalogs/test/api/v1/all`);
      const etag = String(first.headers["etag"]);
      const lm = String(first.headers["last-modified"]);
      const inm = await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-none-match": `"other", ${etag}` });
      assert.equal(inm.status, 304);
      assert.equal(inm.body.length, 0);
      assert.equal(inm.headers["etag"], etag);
      assert.equal(inm.headers["content-type"], undefined);
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-none-match": "*" })).status, 304);
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-none-match": `"nope"` })).status, 200);
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-modified-since": lm })).status, 304);
      const earlier = new Date(Date.parse(lm) - 1000).toUTCString();
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-modified-since": earlier })).status, 200);
      // If-None-Match wins over If-Modified-Since.
      assert.equal(
        (await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-none-match": `"nope"`, "if-modified-since": lm }))
          .status,
        200,
      );
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-match": `"nope"` })).status, 412);
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-match": etag })).status, 200);
      assert.equal((await httpGet(`${base}/catalogs/test/api/v1/all`, { "if-unmodified-since": earlier })).status, 412);
      // metas answers carry Last-Modified and honour If-Modified-Since too.
      const m = await httpGet(`${base}/catalogs/test/api/v1/metas?schema=olm.package`, { "if-modified-since": lm });
      assert.equal(m.status, 304);
    },
  );

  test("byte ranges on /all", async () => {
    const r = await httpGet(`${base}/catalogs/test/api/v1/all`, { range: "bytes=10-19" });
    assert.equal(r.status, 206);
    assert.equal(r.headers["content-range"], `bytes 10-19/${golden.length}`);
    assert.ok(r.body.equals(golden.subarray(10, 20)));
    const suffix = await httpGet(`${base}/catalogs/test/api/v1/all`, { range: "bytes=-5" });
    assert.ok(suffix.body.equals(golden.subarray(golden.length - 5)));
    const bad = await httpGet(`${base}/catalogs/test/api/v1/all`, { range: `bytes=${golden.length + 10}-` });
    assert.equal(bad.status, 416);
    assert.equal(bad.body.toString(), "invalid range: failed to overlap\n");
    const stale = await httpGet(`${base}/catalogs/test/api/v1/all`, { range: "bytes=0-1", "if-range": `"old"` });
    assert.equal(stale.status, 200);
  });

  test("metas: answered from the index, in catalog order, exactly the lines a filter would select", async () => {
    const lines = golden.toString("utf8").split(/(?<=\n)/);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const values = (k: string): string[] => [
      ...new Set(parsed.map((p) => p[k]).filter((v): v is string => typeof v === "string")),
    ];
    const pick = (k: string) => fc.oneof(fc.constant(""), fc.constantFrom(...values(k)), fc.string({ maxLength: 4 }));
    await fc.assert(
      fc.asyncProperty(
        pick("schema"),
        pick("package"),
        pick("name"),
        fc.boolean(),
        async (schema, pkg, name, sendEmpty) => {
          const qs = new URLSearchParams();
          if (schema || sendEmpty) qs.set("schema", schema);
          if (pkg) qs.set("package", pkg);
          if (name) qs.set("name", name);
          const r = await httpGet(`${base}/catalogs/test/api/v1/metas?${qs}`, { "accept-encoding": "identity" });
          assert.equal(r.status, 200);
          assert.equal(r.headers["content-type"], "application/jsonl");
          const want = lines
            .filter(
              (_, i) =>
                (!schema || parsed[i].schema === schema) &&
                (!pkg || parsed[i].package === pkg) &&
                (!name || parsed[i].name === name),
            )
            .join("");
          assert.equal(r.body.toString("utf8"), want);
        },
      ),
      { numRuns: 60 },
    );
  });

  test("metas: package= does not find olm.package blobs; gzip when large; unknown parameter → 400", async () => {
    const byPkg = await httpGet(`${base}/catalogs/test/api/v1/metas?package=etcd&schema=olm.package`);
    assert.equal(byPkg.body.length, 0);
    const byName = await httpGet(`${base}/catalogs/test/api/v1/metas?schema=olm.package&name=etcd`);
    assert.equal(JSON.parse(byName.body.toString()).name, "etcd");
    const gz = await httpGet(`${base}/catalogs/test/api/v1/metas?schema=olm.bundle`, { "accept-encoding": "gzip" });
    assert.equal(gz.headers["content-encoding"], "gzip");
    const plain = await httpGet(`${base}/catalogs/test/api/v1/metas?schema=olm.bundle`);
    assert.ok(gunzipSync(gz.body).equals(plain.body));
    assert.notEqual(gz.headers["etag"], plain.headers["etag"]);
    const bad = await httpGet(`${base}/catalogs/test/api/v1/metas?schema=olm.bundle&pkg=etcd`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.toString(), "400 Bad Request\n");
    const all = await httpGet(`${base}/catalogs/test/api/v1/metas`);
    assert.ok(all.body.equals(golden));
  });

  test("errors as catalogd answers them", async () => {
    const cases: [string, string, number, string][] = [
      ["GET", "/catalogs/nope/api/v1/all", 404, "404 Not Found\n"],
      ["GET", "/catalogs/nope/api/v1/metas?schema=x", 404, "404 Not Found\n"],
      ["GET", "/catalogs/test/api/v2/all", 404, "404 page not found\n"],
      ["GET", "/catalogs/test/api/v1/all/", 404, "404 page not found\n"],
      ["POST", "/catalogs/test/api/v1/all", 405, "Method Not Allowed\n"],
      ["DELETE", "/catalogs/test/api/v1/metas", 405, "Method Not Allowed\n"],
      [
        "GET",
        "/catalogs/Te_st/api/v1/all",
        400,
        "invalid catalog name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
          "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', " +
          "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n",
      ],
      ["GET", "/catalogs/..%2Fetc/api/v1/all", 400, ""],
    ];
    for (const [method, path, status, body] of cases) {
      const r = await httpGet(base + path, {}, method);
      assert.equal(r.status, status, path);
      if (body) assert.equal(r.body.toString(), body, path);
      assert.equal(r.headers["content-type"], "text/plain; charset=utf-8");
      assert.equal(r.headers["x-content-type-options"], "nosniff");
    }
  });

  test("healthz / readyz", async () => {
    assert.equal((await httpGet(`${base}/healthz`)).body.toString(), "ok\n");
    assert.equal((await httpGet(`${base}/readyz`)).status, 200);
  });

  test("access log: one JSON line per request", async () => {
    logs.length = 0;
    await httpGet(`${base}/catalogs/test/api/v1/all`, { "user-agent": "t" });
    await new Promise((r) => setImmediate(r));
    assert.equal(logs.length, 1);
    const e = JSON.parse(logs[0]);
    assert.equal(e.method, "GET");
    assert.equal(e.status, 200);
    assert.equal(e.catalog, "test");
    assert.equal(e.bytes, golden.length);
    assert.equal(e.user_agent, "t");
    assert.equal(typeof e.duration_ms, "number");
  });
});

describe("HTTP helpers", () => {
  test("parseHttpDate reads Go's three formats", () => {
    const t = Date.UTC(1994, 10, 6, 8, 49, 37);
    assert.equal(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), t);
    assert.equal(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), t);
    assert.equal(parseHttpDate("Sun Nov  6 08:49:37 1994"), t);
    assert.equal(parseHttpDate("yesterday"), undefined);
    assert.equal(parseHttpDate("Sun, 31 Feb 1994 08:49:37 GMT"), undefined);
  });
  test("parseRange follows Go's rules", () => {
    assert.deepEqual(parseRange("bytes=0-0", 10), { start: 0, length: 1 });
    assert.deepEqual(parseRange("bytes=5-", 10), { start: 5, length: 5 });
    assert.deepEqual(parseRange("bytes=-20", 10), { start: 0, length: 10 });
    assert.deepEqual(parseRange("bytes=8-100", 10), { start: 8, length: 2 });
    assert.equal(parseRange("items=0-1", 10), "invalid range");
    assert.equal(parseRange("bytes=3-1", 10), "invalid range");
    assert.equal(parseRange("bytes=10-", 10), "invalid range: failed to overlap");
    assert.equal(parseRange("bytes=0-1,3-4", 10), undefined);
  });
  test("acceptsGzip", () => {
    assert.equal(acceptsGzip("gzip"), true);
    assert.equal(acceptsGzip("GZIP;q=0.1"), true);
    assert.equal(acceptsGzip("gzip;q=0"), false);
    assert.equal(acceptsGzip("*"), true);
    assert.equal(acceptsGzip("*;q=0"), false);
    assert.equal(acceptsGzip("identity"), false);
    assert.equal(acceptsGzip(undefined), false);
    fc.assert(fc.property(fc.string(), (s) => typeof acceptsGzip(s) === "boolean"));
  });
});
