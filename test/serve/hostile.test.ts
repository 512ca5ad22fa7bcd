/**
 * Requests that burn CPU (CEL rules, resolutions) do not freeze `opcat serve` (issue 25, item 1):
 * they run off the event loop within a budget, the server answers others meanwhile, and SIGTERM
 * stops it. Also (item 5): Inputs with the same name are a 400 naming both documents.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { CatalogStore, startHttpServer } from "../../src/serve/index.js";
import { webMounts } from "../../src/web/index.js";
import { REPO_ROOT } from "../shared.js";
import { httpGet } from "./helpers.js";

const EXAMPLE = join(REPO_ROOT, "examples", "catalog");
const BIN = join(REPO_ROOT, "bin", "opcat");
const HANG = { timeout: 120_000 };

/** A CEL rule that needs 10^16 steps: no server finishes it. */
const ten = "[0,1,2,3,4,5,6,7,8,9]";
const ENDLESS = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"].reduceRight(
  (inner, v) => `${ten}.all(${v}, ${inner})`,
  "a + p >= 0",
);

interface Answer {
  status: number;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
}

function post(base: string, path: string, value: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      base + path,
      { method: "POST", headers: { "content-type": "application/json" }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(value));
  });
}

/** Tells whether a promise has settled yet, without waiting for it. */
function settled(p: Promise<unknown>): Promise<boolean> {
  const mark = {};
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise((r) => setImmediate(() => r(mark))),
  ]).then((v) => v === true);
}

// (the timeouts only end a hang: a server that computes on its event loop never answers)
test(
  "a CEL query that never ends: the server answers other requests meanwhile, and closing stops it",
  HANG,
  async () => {
    const store = new CatalogStore();
    await store.add("catalog", EXAMPLE);
    const errors: Record<string, unknown>[] = [];
    const server = await startHttpServer(store, {
      port: 0,
      mounts: webMounts(store, { resolver: { budgetMs: 3_600_000 }, errorLog: (e) => errors.push(e) }),
      errorLog: (e) => errors.push(e),
    });
    const base = `http://127.0.0.1:${server.address.port}`;
    try {
      // each POST is awaited until the server has it (not sent only)
      const received = (): Promise<void> =>
        new Promise((res) => {
          const on = (req: { url?: string }): void => {
            if (req.url !== "/api/v1/query") return;
            server.server.off("request", on);
            res();
          };
          server.server.on("request", on);
        });
      let arrived = received();
      const hostile = post(base, "/api/v1/query", { query: ENDLESS });
      await arrived;
      const all = await httpGet(`${base}/catalogs/catalog/api/v1/all`);
      assert.equal(all.status, 200);
      assert.match(all.body.toString(), /"etcd-example"/);
      assert.equal((await httpGet(`${base}/healthz`)).status, 200);
      assert.equal(await settled(hostile), false, "the endless query has an answer already");
      // a second query waits for the worker; closing answers both 503
      arrived = received();
      const queued = post(base, "/api/v1/query", { query: "true" });
      await arrived;
      // a grace period, so that the 503 answers are delivered before the connections close
      await server.close(10_000);
      const [h, q] = await Promise.all([hostile, queued]);
      assert.equal(h.status, 503);
      assert.equal(h.json.error?.code, "SERVE_API_STOPPING");
      assert.equal(q.status, 503);
      assert.deepEqual(errors, []);
    } finally {
      await server.close(0);
      await store.close();
    }
  },
);

test("a request over its budget is stopped with 422 SERVE_API_BUDGET; the next one is answered", HANG, async () => {
  const store = new CatalogStore();
  await store.add("catalog", EXAMPLE);
  const server = await startHttpServer(store, { port: 0, mounts: webMounts(store, { resolver: { budgetMs: 3_000 } }) });
  const base = `http://127.0.0.1:${server.address.port}`;
  try {
    const a = await post(base, "/api/v1/query", { query: ENDLESS });
    assert.equal(a.status, 422);
    assert.equal(a.json.error?.code, "SERVE_API_BUDGET");
    assert.match(a.json.error?.message ?? "", /budget of 3s \(--resolver-budget\)/);
    const b = await post(base, "/api/v1/query", { query: 'properties.exists(p, p.type == "olm.package")' });
    assert.equal(b.status, 200);
    assert.ok((b.json.bundles as unknown[]).length > 0);
  } finally {
    await server.close(0);
    await store.close();
  }
});

test("two Inputs with the same name: 400 naming both documents", async () => {
  const store = new CatalogStore();
  await store.add("catalog", EXAMPLE);
  const server = await startHttpServer(store, { port: 0, mounts: webMounts(store) });
  const base = `http://127.0.0.1:${server.address.port}`;
  const input = (channel: string) => ({
    kind: "Input",
    metadata: { name: "etcd" },
    spec: { constraints: [{ type: "olm.catalog", value: { package: "etcd-example", channel } }] },
  });
  try {
    const a = await post(base, "/api/v1/resolve", { inputs: [input("stable"), input("fast")] });
    assert.equal(a.status, 400);
    assert.equal(a.json.error?.code, "RESOLVE_INPUT_INVALID");
    assert.match(a.json.error?.message ?? "", /^inputs\[1\]: Input etcd: the name is already used by inputs\[0\]/);
  } finally {
    await server.close(0);
    await store.close();
  }
});

test("opcat serve: a hostile query does not stop other answers, and SIGTERM ends the server", HANG, async () => {
  const child = spawn(
    process.execPath,
    [BIN, "serve", EXAMPLE, "--http", "127.0.0.1:0", "--no-grpc", "--resolver-budget", "1h"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await new Promise<void>((resolve) => {
    child.stderr.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes('"msg":"serving"')) resolve();
    });
    void exited.then(() => resolve());
  });
  try {
    const base = /"ui":"(http:\/\/127\.0\.0\.1:\d+)\//.exec(log)?.[1];
    assert.ok(base, log);
    // the request (now linear), then one that never ends
    const regex = await post(base, "/api/v1/query", { query: `"${"a".repeat(40)}!".matches("^(a+)+$")` });
    assert.equal(regex.status, 200);
    assert.deepEqual(regex.json.bundles, []);
    const hostile = post(base, "/api/v1/query", { query: ENDLESS }).catch((e: Error) => e);
    assert.equal((await httpGet(`${base}/catalogs/catalog/api/v1/all`)).status, 200);
    assert.equal((await httpGet(`${base}/`)).status, 200);
    assert.equal(await settled(hostile), false);
    child.kill("SIGTERM");
    assert.equal(await exited, 0, log);
    assert.match(log, /"msg":"stopped"/);
    const h = await hostile;
    if (!(h instanceof Error)) assert.equal(h.status, 503);
  } finally {
    child.kill("SIGKILL");
  }
});
