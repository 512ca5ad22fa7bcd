import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
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
      const got = await callRpc(service === "api.Registry" ? registry : experimental, defs, service, g.rpc, g.req, g.md);
      assert.deepEqual(got.error, g.error);
      assert.deepEqual(normalizeResponses(g.rpc, got.responses, true), normalizeResponses(g.rpc, g.responses, false));
    });
  }

  test("GetChannelEntriesThatReplace with an empty name answers the entries that replace nothing, as opm's server does", async () => {
    const got = await callRpc(registry, defs, "api.Registry", "GetChannelEntriesThatReplace", { csvName: "" });
    assert.equal(got.error, undefined);
    const entries = got.responses as { bundleName: string; channelName: string; replaces?: string }[];
    assert.ok(entries.length > 0);
    assert.ok(entries.every((e) => (e.replaces ?? "") === ""), JSON.stringify(entries));
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
    const r = await callRpc(registry, defs, "api.Registry", "GetPackage", { name: "etcd" }, { "x-opcat-catalog": "test" });
    assert.equal((r.responses[0] as { name: string }).name, "etcd");
    const u = await callRpc(registry, defs, "api.Registry", "GetPackage", { name: "etcd" }, { "x-opcat-catalog": "nope" });
    assert.equal(u.error?.code, grpc.status.NOT_FOUND);
  });
});
