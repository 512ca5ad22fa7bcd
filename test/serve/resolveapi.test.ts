/**
 * The resolver API of `opcat serve` (POST /api/v1/query and /api/v1/resolve) over real HTTP on
 * 127.0.0.1, on the bundled example catalog and the seed 002 example input.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { CatalogStore, startHttpServer, type HttpServerHandle } from "../../src/serve/index.js";
import { webMounts } from "../../src/web/index.js";
import { REPO_ROOT } from "../shared.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

function call(
  base: string,
  path: string,
  body: string | Buffer | undefined,
  opts: { method?: string; type?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.type !== "") headers["content-type"] = opts.type ?? "application/json";
    const req = request(base + path, { method: opts.method ?? "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          json: text ? (JSON.parse(text) as unknown) : undefined,
        });
      });
    });
    // A server that answers before the whole body was sent may reset the connection.
    req.on("error", (e: NodeJS.ErrnoException) =>
      e.code === "EPIPE" || e.code === "ECONNRESET" ? undefined : reject(e),
    );
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
const accessLines: string[] = [];
const accessLogged = new EventEmitter();
const inputDocs = loadAll(readFileSync(join(REPO_ROOT, "examples", "resolve", "input.yaml"), "utf8")) as unknown[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "opcat-resolveapi-"));
  cpSync(join(REPO_ROOT, "examples", "catalog"), join(dir, "catalog"), { recursive: true });
  rmSync(join(dir, "catalog", "README.md"));
  store = new CatalogStore();
  const out = await store.add("catalog", join(dir, "catalog"));
  assert.equal(out.status, "loaded");
  server = await startHttpServer(store, {
    port: 0,
    mounts: webMounts(store, { resolver: { maxRequestBytes: 64 * 1024 } }),
    accessLog: (l) => {
      accessLines.push(l);
      accessLogged.emit("line");
    },
  });
  base = `http://127.0.0.1:${server.address.port}`;
});

after(async () => {
  await server.close(0);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test("query: an olm.constraint value and a CEL rule", async () => {
  const byPkg = await post(base, "/api/v1/query", {
    query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=1.1.0" } }),
  });
  assert.equal(byPkg.status, 200);
  assert.equal(byPkg.headers["content-type"], "application/json");
  const names = (byPkg.json as { bundles: { name: string; catalog: string }[] }).bundles.map((b) => b.name).sort();
  assert.deepEqual(names, ["cache-operator.v1.1.0", "cache-operator.v1.1.1"]);
  const cel = await post(base, "/api/v1/query", {
    query: 'properties.exists(p, p.type == "olm.package.required")',
    catalogs: ["catalog"],
  });
  assert.equal(cel.status, 200);
  assert.ok((cel.json as { bundles: { package: string }[] }).bundles.every((b) => b.package === "etcd-example"));
  const bad = await post(base, "/api/v1/query", { query: "properties.exists(" });
  assert.equal(bad.status, 400);
  assert.equal(errorCode(bad), "RESOLVE_QUERY_INVALID");
});

test(
  "resolve: the seed 002 example input resolves with its " +
    "dependency; an impossible input is a 409 with the explanation",
  async () => {
    const ok = await post(base, "/api/v1/resolve", { inputs: inputDocs });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const rs = ok.json as { resolved: boolean; bundles: { package: string }[] };
    assert.equal(rs.resolved, true);
    assert.deepEqual([...new Set(rs.bundles.map((b) => b.package))].sort(), ["cache-operator", "etcd-example"]);
    const impossible = await post(base, "/api/v1/resolve", {
      inputs: [
        {
          apiVersion: "deppy.io/v1",
          kind: "Input",
          metadata: { name: "x" },
          spec: {
            constraints: [{ type: "olm.packageVersion", value: { package: "cache-operator", version: ">=9.0.0" } }],
          },
        },
      ],
    });
    assert.equal(impossible.status, 409);
    const failed = impossible.json as {
      resolved: boolean;
      inputs: { conditions: { status: string; message: string }[] }[];
    };
    assert.equal(failed.resolved, false);
    assert.ok(failed.inputs[0].conditions.some((c) => c.status === "True" && c.message.length > 0));
  },
);

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
  for (const method of ["PUT", "HEAD", "DELETE"]) {
    const a = await call(base, "/api/v1/query", undefined, { method });
    assert.equal(a.status, 405, method);
    assert.equal(a.headers.allow, "POST");
  }
  const noType = await call(base, "/api/v1/resolve", "{}", { type: "" });
  assert.equal(noType.status, 415);
  assert.equal(errorCode(noType), "SERVE_API_CONTENT_TYPE");
  const charset = await call(base, "/api/v1/query", JSON.stringify({ query: "true" }), {
    type: "application/json; charset=utf-8",
  });
  assert.equal(charset.status, 200);
  const path = await post(base, "/api/v1/nothing", {});
  assert.equal(path.status, 404);
  assert.equal(errorCode(path), "SERVE_API_NOT_FOUND");
  assert.equal(path.headers["content-type"], "application/json");
  const badConstraint = await post(base, "/api/v1/resolve", {
    inputs: [
      {
        kind: "Input",
        metadata: { name: "x" },
        spec: { constraints: [{ type: "olm.packageVersion", value: { package: "cache-operator", version: "nope" } }] },
      },
    ],
  });
  assert.equal(badConstraint.status, 400);
  assert.equal(errorCode(badConstraint), "RESOLVE_INPUT_INVALID");
  const declared = await new Promise<number>((resolve, reject) => {
    const req = request(
      base + "/api/v1/query",
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(10 * 1024 * 1024) },
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) =>
      e.code === "EPIPE" || e.code === "ECONNRESET" ? undefined : reject(e),
    );
    req.write("{");
  });
  assert.equal(declared, 413);
});

test("413 arrives while an oversized chunked body is still being sent; reading stops at the limit", async () => {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const max = 256;
  const got = await new Promise<{ status: number; sent: number; body: string }>((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(
      base + "/api/v1/resolve",
      { method: "POST", headers: { "content-type": "application/json" }, agent: false },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, sent, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) =>
      e.code === "EPIPE" || e.code === "ECONNRESET" ? undefined : reject(e),
    );
    const pump = (): void => {
      while (!answered && sent < max * chunk.length) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
  assert.equal(got.status, 413);
  assert.equal((JSON.parse(got.body) as { error: { code: string } }).error.code, "SERVE_API_TOO_LARGE");
  assert.ok(got.sent < max * chunk.length, `the client could send all ${got.sent} bytes`);
});

test("access log lines for the resolver API, like the other routes", async () => {
  const n = accessLines.length;
  const a = await post(base, "/api/v1/query", { query: "true" });
  assert.equal(a.status, 200);
  // The line is written when the response finishes, which may be after the client has the body:
  // wait for the access log's own event (no clock).
  const logged = (): boolean => accessLines.slice(n).some((l) => l.includes('"/api/v1/query"'));
  while (!logged()) await new Promise((r) => accessLogged.once("line", r));
  const entries = accessLines
    .slice(n)
    .map((l) => JSON.parse(l) as { method: string; path: string; status: number; bytes: number; msg: string });
  const e = entries.find((x) => x.path === "/api/v1/query");
  assert.ok(e, JSON.stringify(entries));
  assert.equal(e.method, "POST");
  assert.equal(e.status, 200);
  assert.equal(e.msg, "request");
  assert.ok(e.bytes > 0);
});

test("trace: the resolveset carries the solver's search trace when asked", async () => {
  const plain = await post(base, "/api/v1/resolve", { inputs: inputDocs });
  const traced = await post(base, "/api/v1/resolve", { inputs: inputDocs, trace: true });
  assert.equal(traced.status, 200);
  const hasTrace = (a: Answer): boolean => Array.isArray((a.json as { trace?: string[] }).trace);
  assert.equal(hasTrace(plain), false);
  assert.equal(hasTrace(traced), true);
});

test("concurrent queries and resolutions give the same answers as sequential ones", async () => {
  const bodies: [string, unknown][] = [
    ["/api/v1/resolve", { inputs: inputDocs }],
    [
      "/api/v1/resolve",
      {
        inputs: [
          {
            kind: "Input",
            metadata: { name: "x" },
            spec: {
              constraints: [{ type: "olm.packageVersion", value: { package: "cache-operator", version: ">=9.0.0" } }],
            },
          },
        ],
      },
    ],
    ["/api/v1/query", { query: 'properties.exists(p, p.type == "olm.package")' }],
  ];
  const sequential: Answer[] = [];
  for (const [p, b] of bodies) sequential.push(await post(base, p, b));
  const parallel = await Promise.all(
    Array.from({ length: 30 }, (_, i) => post(base, bodies[i % 3][0], bodies[i % 3][1])),
  );
  parallel.forEach((a, i) => {
    assert.equal(a.status, sequential[i % 3].status);
    assert.deepEqual(a.json, sequential[i % 3].json);
  });
});

test("503 from a server whose only catalog has no valid content", async () => {
  const bad = join(dir, "broken");
  mkdirSync(bad);
  writeFileSync(join(bad, "catalog.json"), "{broken\n");
  const s = new CatalogStore();
  assert.equal((await s.add("broken", bad)).status, "failed");
  const h = await startHttpServer(s, { port: 0, mounts: webMounts(s) });
  try {
    const a = await post(`http://127.0.0.1:${h.address.port}`, "/api/v1/query", { query: "true" });
    assert.equal(a.status, 503);
    assert.equal(errorCode(a), "SERVE_API_NOT_READY");
  } finally {
    await h.close(0);
    await s.close();
  }
});

test("a reload swaps the resolver's catalog set atomically", async () => {
  const before = await post(base, "/api/v1/query", {
    query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=0.0.0" } }),
  });
  assert.equal((before.json as { bundles: unknown[] }).bundles.length, 3);
  const file = join(dir, "catalog", "cache-operator", "catalog.json");
  // Drop the newest bundle (and its channel entry).
  const pkg = "cache-operator";
  const bundle = (v: string): string =>
    JSON.stringify({
      schema: "olm.bundle",
      name: `${pkg}.v${v}`,
      package: pkg,
      image: `quay.io/example/cache-bundle:v${v}`,
      properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }],
    });
  writeFileSync(
    file,
    [
      JSON.stringify({ schema: "olm.package", name: pkg, defaultChannel: "stable-v1" }),
      JSON.stringify({
        schema: "olm.channel",
        name: "stable-v1",
        package: pkg,
        entries: [{ name: `${pkg}.v1.0.0` }, { name: `${pkg}.v1.1.0`, replaces: `${pkg}.v1.0.0` }],
      }),
      bundle("1.0.0"),
      bundle("1.1.0"),
    ].join("\n") + "\n",
  );
  // Requests racing the reload see the old or the new revision, never a mix or an error.
  const query = { query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=0.0.0" } }) };
  const racing = Promise.all(Array.from({ length: 8 }, () => post(base, "/api/v1/query", query)));
  const out = await store.reload("catalog");
  assert.equal(out.status, "loaded", JSON.stringify(out));
  for (const a of await racing) {
    assert.equal(a.status, 200);
    assert.ok([2, 3].includes((a.json as { bundles: unknown[] }).bundles.length));
  }
  const concurrent = await Promise.all(
    Array.from({ length: 8 }, () =>
      post(base, "/api/v1/query", {
        query: JSON.stringify({ package: { packageName: "cache-operator", versionRange: ">=0.0.0" } }),
      }),
    ),
  );
  for (const a of concurrent) assert.equal((a.json as { bundles: unknown[] }).bundles.length, 2);
});
