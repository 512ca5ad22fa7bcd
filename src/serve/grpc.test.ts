import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect as http2Connect, type IncomingHttpHeaders } from "node:http2";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { callRpc, makeClient, normalizeResponses, type GenericClient } from "../../test/serve/helpers.js";
import { CatalogStore, loadServiceDefinitions, startGrpcServer, type GrpcServerHandle } from "./index.js";

const here = dirname(fileURLToPath(import.meta.url));
const catalogDir = join(here, "testdata", "catalog");

interface GoldenCall {
  rpc: string;
  req: object;
  md?: Record<string, string>;
  responses: unknown[];
  error?: { code: number; message: string };
}

describe("gRPC registry API (golden answers from opm v1.73.0's own server)", () => {
  const defs = loadServiceDefinitions();
  const store = new CatalogStore();
  let srv: GrpcServerHandle;
  let registry: GenericClient;
  let experimental: GenericClient;
  let health: GenericClient;
  before(async () => {
    const out = await store.add("test", catalogDir);
    assert.equal(out.status, "loaded", JSON.stringify(out));
    srv = await startGrpcServer(store, { port: 0 });
    const addr = `127.0.0.1:${srv.port}`;
    registry = makeClient(defs, "api.Registry", addr);
    experimental = makeClient(defs, "api.ExperimentalRegistry", addr);
    health = makeClient(defs, "grpc.health.v1.Health", addr);
  });
  after(async () => {
    registry.close();
    experimental.close();
    health.close();
    await srv.close();
    await store.close();
  });

  const golden = JSON.parse(readFileSync(join(here, "testdata", "grpc-golden.json"), "utf8")) as GoldenCall[];
  for (const g of golden) {
    test(`${g.rpc} ${JSON.stringify(g.req)}${g.md ? " " + JSON.stringify(g.md) : ""}`, async () => {
      const service = g.rpc.startsWith("Experimental") ? "api.ExperimentalRegistry" : "api.Registry";
      const got = await callRpc(
        service === "api.Registry" ? registry : experimental,
        defs,
        service,
        g.rpc,
        g.req,
        g.md,
      );
      assert.deepEqual(got.error, g.error);
      assert.deepEqual(normalizeResponses(g.rpc, got.responses, true), normalizeResponses(g.rpc, g.responses, false));
    });
  }

  test(
    "GetChannelEntriesThatReplace with an empty name answers " +
      "the entries that replace nothing, as opm's server does",
    async () => {
      const got = await callRpc(registry, defs, "api.Registry", "GetChannelEntriesThatReplace", { csvName: "" });
      assert.equal(got.error, undefined);
      const entries = got.responses as { bundleName: string; channelName: string; replaces?: string }[];
      assert.ok(entries.length > 0);
      assert.ok(
        entries.every((e) => (e.replaces ?? "") === ""),
        JSON.stringify(entries),
      );
    },
  );

  /**
   * One raw HTTP/2 request: `body` then END_STREAM; the response's
   * headers and trailers merged (a trailers-only answer has none).
   */
  function rawRequest(
    path: string,
    headers: Record<string, string>,
    body: Buffer,
  ): Promise<{ headers: IncomingHttpHeaders; data: Buffer }> {
    return new Promise((resolve, reject) => {
      const session = http2Connect(`http://127.0.0.1:${srv.port}`);
      session.on("error", reject);
      const req = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        ...headers,
      });
      const got: IncomingHttpHeaders = {};
      const data: Buffer[] = [];
      req.on("response", (h) => Object.assign(got, h));
      req.on("trailers", (t) => Object.assign(got, t));
      req.on("data", (d: Buffer) => data.push(d));
      req.on("error", reject);
      req.on("close", () => {
        session.close();
        resolve({ headers: got, data: Buffer.concat(data) });
      });
      req.end(body);
    });
  }
  /** A gRPC length-prefixed message: flag byte, 4-byte length (`length`, default the payload's), payload. */
  const frame = (flag: number, payload: Buffer, length = payload.length): Buffer =>
    Buffer.concat([Buffer.from([flag]), Buffer.from(new Uint32Array([length]).buffer).reverse(), payload]);
  /** GetPackageRequest{name: "etcd"} as protobuf. */
  const etcd = Buffer.from([0x0a, 4, ...Buffer.from("etcd")]);
  const statusOf = (r: { headers: IncomingHttpHeaders }) => ({
    http: r.headers[":status"],
    code: r.headers["grpc-status"],
    message: decodeURIComponent(String(r.headers["grpc-message"])),
  });

  test(
    "a body that ends inside a message gets grpc-go's answers: `unexpected EOF` (Unknown for " +
      "unary, Internal for streaming), `EOF` / cardinality violation without a whole message",
    async () => {
      const ok = await rawRequest("/api.Registry/GetPackage", {}, frame(0, etcd));
      assert.deepEqual(statusOf(ok), { http: 200, code: "0", message: "OK" });
      assert.ok(ok.data.length > 5);
      // The length prefix promises 100 bytes; 6 come, then END_STREAM.
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/GetPackage", {}, frame(0, etcd, 100))), {
        http: 200,
        code: "2",
        message: "unexpected EOF",
      });
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/ListBundles", {}, frame(0, Buffer.alloc(0), 100))), {
        http: 200,
        code: "13",
        message: "unexpected EOF",
      });
      // No message, or part of a prefix: grpc-go reads io.EOF.
      for (const body of [Buffer.alloc(0), Buffer.from([0, 0])]) {
        assert.deepEqual(statusOf(await rawRequest("/api.Registry/GetPackage", {}, body)), {
          http: 200,
          code: "2",
          message: "EOF",
        });
        assert.deepEqual(statusOf(await rawRequest("/api.Registry/ListPackages", {}, body)), {
          http: 200,
          code: "13",
          message: "cardinality violation: received no request message from non-client-streaming RPC",
        });
      }
      // A whole message followed by a stray partial one is served (grpc-go reads one message for a unary call).
      assert.equal(
        statusOf(await rawRequest("/api.Registry/GetPackage", {}, Buffer.concat([frame(0, etcd), Buffer.from([0, 0])])))
          .code,
        "0",
      );
    },
  );

  test(
    "the compressed flag without a grpc-encoding (or with identity) is " +
      "Internal, as grpc-go's checkRecvPayload; so is a flag other than 0 or 1",
    async () => {
      const want = { http: 200, code: "13", message: "grpc: compressed flag set with identity or empty encoding" };
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/GetPackage", {}, frame(1, etcd))), want);
      assert.deepEqual(
        statusOf(await rawRequest("/api.Registry/GetPackage", { "grpc-encoding": "identity" }, frame(1, etcd))),
        want,
      );
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/ListBundles", {}, frame(1, Buffer.alloc(0)))), want);
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/GetPackage", {}, frame(2, etcd))), {
        http: 200,
        code: "13",
        message: "grpc: received unexpected payload format 2",
      });
      // The flag is checked once the whole message is in: a truncated compressed message is still `unexpected EOF`.
      assert.deepEqual(statusOf(await rawRequest("/api.Registry/GetPackage", {}, frame(1, etcd, 100))), {
        http: 200,
        code: "2",
        message: "unexpected EOF",
      });
    },
  );

  test("a content-type that is not application/grpc[+…|;…] gets grpc-go's HTTP 415 with InvalidArgument", async () => {
    for (const ct of ["text/plain", "application/grpcx", "application/json"]) {
      const r = await rawRequest("/api.Registry/GetPackage", { "content-type": ct }, frame(0, etcd));
      assert.deepEqual(statusOf(r), { http: 415, code: "3", message: `invalid gRPC request content-type "${ct}"` });
      assert.equal(r.headers["content-type"], "application/grpc");
      assert.equal(
        r.headers["grpc-message"],
        `invalid gRPC request content-type "${ct}"`,
        "percent-encoded as grpc-go (printable ASCII stays)",
      );
    }
    for (const ct of ["application/grpc+proto", "application/grpc;x"])
      assert.equal(
        statusOf(await rawRequest("/api.Registry/GetPackage", { "content-type": ct }, frame(0, etcd))).code,
        "0",
        ct,
      );
    // The server goes on answering well-formed calls.
    const r = await callRpc(registry, defs, "api.Registry", "GetPackage", { name: "etcd" });
    assert.equal((r.responses[0] as { name: string }).name, "etcd");
  });

  test("health Check answers SERVING for any service name; Watch is unimplemented", async () => {
    for (const service of ["", "api.Registry", "anything"]) {
      const r = await callRpc(health, defs, "grpc.health.v1.Health", "Check", { service });
      assert.deepEqual(r.responses, [{ status: "SERVING" }]);
    }
    const w = await callRpc(health, defs, "grpc.health.v1.Health", "Watch", { service: "" });
    assert.equal(w.error?.code, grpc.status.UNIMPLEMENTED);
    assert.equal(w.error?.message, "method Watch not implemented");
  });

  test("x-opcat-catalog selects a catalog; unknown names are NOT_FOUND", async () => {
    const r = await callRpc(
      registry,
      defs,
      "api.Registry",
      "GetPackage",
      { name: "etcd" },
      { "x-opcat-catalog": "test" },
    );
    assert.equal((r.responses[0] as { name: string }).name, "etcd");
    const u = await callRpc(
      registry,
      defs,
      "api.Registry",
      "GetPackage",
      { name: "etcd" },
      { "x-opcat-catalog": "nope" },
    );
    assert.equal(u.error?.code, grpc.status.NOT_FOUND);
  });
});

describe("a store built without the gRPC index (the cluster's catalogd API)", () => {
  test("its revisions keep the served document and blob index only; gRPC answers UNIMPLEMENTED", async () => {
    const defs = loadServiceDefinitions();
    const full = new CatalogStore();
    const light = new CatalogStore({ grpc: false });
    const srv = await startGrpcServer(light, { port: 0 });
    const registry = makeClient(defs, "api.Registry", `127.0.0.1:${srv.port}`);
    try {
      assert.equal((await full.add("test", catalogDir)).status, "loaded");
      assert.equal((await light.add("test", catalogDir)).status, "loaded");
      const a = full.get("test")!;
      const b = light.get("test")!;
      assert.ok(a.registry);
      assert.equal(b.registry, undefined);
      assert.equal(b.digest, a.digest);
      assert.deepEqual(b.jsonl, a.jsonl);
      assert.deepEqual(b.query("olm.bundle", "etcd", ""), a.query("olm.bundle", "etcd", ""));
      const r = await callRpc(registry, defs, "api.Registry", "GetPackage", { name: "etcd" });
      assert.equal(r.error?.code, grpc.status.UNIMPLEMENTED);
      assert.equal(r.error?.message, 'catalog "test" is served without its gRPC index');
    } finally {
      registry.close();
      await srv.close();
      await full.close();
      await light.close();
    }
  });
});
