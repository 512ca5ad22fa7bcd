/**
 * Interop: opcat's gRPC server answers clients built from operator-registry's REAL registry.proto
 * (fetched at test time from the Go module cache) exactly as opm does (golden answers recorded
 * from opm v1.73.0's own server), and grpcurl (built at test time) can list the services by
 * reflection and call them. Needs Go; skipped without it, except under CI=true where it fails.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as protoLoader from "@grpc/proto-loader";
import { callRpc, makeClient, normalizeResponses, type GenericClient } from "./helpers.js";
import { CatalogStore, startGrpcServer, type GrpcServerHandle } from "../../src/serve/index.js";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const OPERATOR_REGISTRY = "github.com/operator-framework/operator-registry@v1.73.0";
const GRPCURL = "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3";
const haveGo = spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
const CI = process.env.CI === "true";

interface GoldenCall {
  rpc: string;
  req: object;
  md?: Record<string, string>;
  responses: unknown[];
  error?: { code: number; message: string };
}

if (!haveGo && CI) {
  test("Go is required for the gRPC interop tests under CI=true", () => assert.fail("the go command was not found"));
}

describe("gRPC interop with operator-registry's own proto and grpcurl", {
  skip: haveGo ? false : "Go is not installed: skipping interop with the real registry.proto and grpcurl",
}, () => {
  const store = new CatalogStore();
  let srv: GrpcServerHandle;
  let work: string;
  let realDefs: protoLoader.PackageDefinition;
  let addr: string;
  const clients: GenericClient[] = [];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "opcat-interop-"));
    await run("go", ["mod", "init", "opcat.interop/test"], { cwd: work });
    const { stdout } = await run("go", ["mod", "download", "-json", OPERATOR_REGISTRY], {
      cwd: work,
      maxBuffer: 1 << 20,
      timeout: 300_000,
    });
    const dir = (JSON.parse(stdout) as { Dir: string }).Dir;
    const proto = join(dir, "pkg", "api", "registry.proto");
    assert.ok(existsSync(proto), `${proto} exists`);
    realDefs = protoLoader.loadSync(proto, {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: [dirname(proto)],
    });
    assert.equal((await store.add("test", join(repo, "src", "serve", "testdata", "catalog"))).status, "loaded");
    srv = await startGrpcServer(store, { port: 0 });
    addr = `127.0.0.1:${srv.port}`;
  });
  after(async () => {
    for (const c of clients) c.close();
    await srv?.close();
    await store.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("every RPC, through a client generated from the real registry.proto, answers like opm", async () => {
    const golden = JSON.parse(
      readFileSync(join(repo, "src", "serve", "testdata", "grpc-golden.json"), "utf8"),
    ) as GoldenCall[];
    const registry = makeClient(realDefs, "api.Registry", addr);
    const experimental = makeClient(realDefs, "api.ExperimentalRegistry", addr);
    clients.push(registry, experimental);
    const rpcs = new Set<string>();
    for (const g of golden) {
      const service = g.rpc.startsWith("Experimental") ? "api.ExperimentalRegistry" : "api.Registry";
      const got = await callRpc(
        service === "api.Registry" ? registry : experimental,
        realDefs,
        service,
        g.rpc,
        g.req,
        g.md,
      );
      assert.deepEqual(got.error, g.error, `${g.rpc} ${JSON.stringify(g.req)}`);
      assert.deepEqual(
        normalizeResponses(g.rpc, got.responses, true),
        normalizeResponses(g.rpc, g.responses, false),
        `${g.rpc} ${JSON.stringify(g.req)}`,
      );
      rpcs.add(`${service}/${g.rpc}`);
    }
    // Every method of both services of the real proto was exercised.
    for (const service of ["api.Registry", "api.ExperimentalRegistry"]) {
      for (const m of Object.keys(realDefs[service] as object))
        assert.ok(rpcs.has(`${service}/${m}`), `${service}/${m} covered`);
    }
  });

  test("grpcurl lists the services by reflection and calls them", { timeout: 600_000 }, async () => {
    const binDir = join(repo, "node_modules", ".cache", "opcat-tools", GRPCURL.split("@")[1]);
    const bin = join(binDir, "grpcurl");
    if (!existsSync(bin)) {
      mkdirSync(binDir, { recursive: true });
      await run("go", ["install", GRPCURL], { cwd: work, env: { ...process.env, GOBIN: binDir }, timeout: 600_000 });
    }
    const list = (await run(bin, ["-plaintext", addr, "list"])).stdout.trim().split("\n");
    for (const s of [
      "api.ExperimentalRegistry",
      "api.Registry",
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]) {
      assert.ok(list.includes(s), `${s} listed in ${JSON.stringify(list)}`);
    }
    const methods = (await run(bin, ["-plaintext", addr, "list", "api.Registry"])).stdout.trim().split("\n");
    assert.equal(methods.length, 10);
    const pkg = JSON.parse(
      (await run(bin, ["-plaintext", "-d", '{"name":"etcd"}', addr, "api.Registry/GetPackage"])).stdout,
    );
    assert.deepEqual(
      pkg.channels.map((c: { name: string; csvName: string }) => `${c.name}=${c.csvName}`),
      ["alpha=etcd.v0.9.2", "stable=etcd.v0.9.4"],
    );
    assert.equal(pkg.defaultChannelName, "stable");
    const names = (await run(bin, ["-plaintext", addr, "api.Registry/ListPackages"])).stdout;
    assert.deepEqual([...names.matchAll(/"name": "([^"]+)"/g)].map((m) => m[1]).sort(), ["etcd", "prometheus"]);
    const bundle = JSON.parse(
      (
        await run(bin, [
          "-plaintext",
          "-d",
          '{"pkgName":"etcd","channelName":"stable","csvName":"etcd.v0.9.4"}',
          addr,
          "api.Registry/GetBundle",
        ])
      ).stdout,
    );
    assert.equal(bundle.csvName, "etcd.v0.9.4");
    assert.equal(bundle.skipRange, ">=0.9.0 <0.9.4");
    const custom = (
      await run(bin, [
        "-plaintext",
        "-H",
        "x-acknowledge-experimental: true",
        "-d",
        '{"schema":"my.custom-schema","packageName":"etcd"}',
        addr,
        "api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas",
      ])
    ).stdout;
    assert.deepEqual(
      [...custom.matchAll(/"name": "([^"]+)"/g)].map((m) => m[1]),
      ["first", "second"],
    );
    const health = JSON.parse((await run(bin, ["-plaintext", addr, "grpc.health.v1.Health/Check"])).stdout);
    assert.deepEqual(health, { status: "SERVING" });
    const err = await run(bin, ["-plaintext", "-d", '{"name":"nope"}', addr, "api.Registry/GetPackage"]).then(
      () => "",
      (e: { stderr: string }) => e.stderr,
    );
    assert.match(err, /Code: Unknown\s+Message: package "nope" not found/);
  });
});
