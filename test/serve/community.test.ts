/**
 * End to end on the real community catalog (v4.16): `/all` is byte-identical to what catalogd
 * stores (digest recorded with the Go oracle), the gRPC answers match opm v1.73.0's (digests of
 * the normalised answers), and the operatorhub.io importer's walk works: ListPackages →
 * GetPackage → GetBundleForChannel → GetBundle along each channel's replaces chain.
 * The data lives outside the repository: $OPCAT_SHARED or <repo>/../shared. Skipped when absent,
 * except under CI=true where it fails.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { callRpc, httpGet, makeClient, normalizeResponses, type GenericClient } from "./helpers.js";
import {
  CatalogStore,
  loadServiceDefinitions,
  startGrpcServer,
  startHttpServer,
  type GrpcServerHandle,
  type HttpServerHandle,
} from "../../src/serve/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const shared = process.env.OPCAT_SHARED ?? join(here, "..", "..", "..", "shared");
const catalogDir = join(shared, "data", "community", "catalogs", "v4.16");
const present = existsSync(catalogDir);

if (!present && process.env.CI === "true") {
  test("community catalogs are required under CI=true", () =>
    assert.fail(`${catalogDir} not found (set OPCAT_SHARED)`));
}

interface Golden {
  allJsonlSha256: string;
  allJsonlBytes: number;
  calls: { rpc: string; req: object; count: number; sha256: string; error?: { code: number; message: string } }[];
}

describe("community catalog v4.16 end to end", { skip: present ? false : `${catalogDir} not found` }, () => {
  const golden = JSON.parse(readFileSync(join(here, "testdata", "community-v4.16.golden.json"), "utf8")) as Golden;
  const defs = loadServiceDefinitions();
  const store = new CatalogStore();
  let http: HttpServerHandle;
  let grpcSrv: GrpcServerHandle;
  let client: GenericClient;
  before(async () => {
    const out = await store.add("v4.16", catalogDir);
    assert.equal(out.status, "loaded");
    http = await startHttpServer(store, { port: 0 });
    grpcSrv = await startGrpcServer(store, { port: 0 });
    client = makeClient(defs, "api.Registry", `127.0.0.1:${grpcSrv.port}`);
  });
  after(async () => {
    client?.close();
    await http?.close();
    await grpcSrv?.close();
    await store.close();
  });

  test("/all is catalogd's catalog.jsonl (identity and gzip)", async () => {
    const url = `http://127.0.0.1:${http.address.port}/catalogs/v4.16/api/v1/all`;
    const plain = await httpGet(url);
    assert.equal(plain.body.length, golden.allJsonlBytes);
    assert.equal(createHash("sha256").update(plain.body).digest("hex"), golden.allJsonlSha256);
    const gz = await httpGet(url, { "accept-encoding": "gzip" });
    assert.ok(gunzipSync(gz.body).equals(plain.body));
  });

  test("gRPC answers match opm's", async () => {
    for (const g of golden.calls) {
      const got = await callRpc(client, defs, "api.Registry", g.rpc, g.req);
      assert.deepEqual(got.error, g.error, `${g.rpc} ${JSON.stringify(g.req)}`);
      assert.equal(got.responses.length, g.count, `${g.rpc} ${JSON.stringify(g.req)}`);
      const digest = createHash("sha256")
        .update(normalizeResponses(g.rpc, got.responses, true).join("\n"))
        .digest("hex");
      assert.equal(digest, g.sha256, `${g.rpc} ${JSON.stringify(g.req)}`);
    }
  });

  test(
    "operatorhub.io importer walk: ListPackages → GetPackage " + "→ GetBundleForChannel → GetBundle along replaces",
    async () => {
      const listed = await callRpc(client, defs, "api.Registry", "ListBundles", {});
      const replaces = new Map<string, string>();
      for (const b of listed.responses as {
        packageName: string;
        channelName: string;
        csvName: string;
        replaces: string;
      }[]) {
        replaces.set(`${b.packageName}/${b.channelName}/${b.csvName}`, b.replaces);
      }
      const pkgs = (await callRpc(client, defs, "api.Registry", "ListPackages", {})).responses as { name: string }[];
      assert.ok(pkgs.length > 0);
      let bundles = 0;
      for (const { name } of pkgs) {
        const pkg = (await callRpc(client, defs, "api.Registry", "GetPackage", { name })).responses[0] as {
          channels: { name: string; csvName: string }[];
          defaultChannelName: string;
        };
        assert.ok(pkg.channels.some((c) => c.name === pkg.defaultChannelName));
        for (const ch of pkg.channels) {
          const head = (
            await callRpc(client, defs, "api.Registry", "GetBundleForChannel", { pkgName: name, channelName: ch.name })
          ).responses[0] as { csvName: string };
          assert.equal(head.csvName, ch.csvName);
          const seen = new Set<string>();
          let csv = head.csvName;
          while (csv && !seen.has(csv)) {
            seen.add(csv);
            const b = await callRpc(client, defs, "api.Registry", "GetBundle", {
              pkgName: name,
              channelName: ch.name,
              csvName: csv,
            });
            const key = `${name}/${ch.name}/${csv}`;
            if (!replaces.has(key)) {
              // The chain may point at a bundle that is not in the channel (pruned history): opm answers "not found".
              assert.match(String(b.error?.message), /not found$/);
              break;
            }
            assert.equal(b.error, undefined);
            const bundle = b.responses[0] as { csvName: string; csvJson: string; replaces: string };
            assert.equal(bundle.csvName, csv);
            assert.equal(bundle.replaces, "");
            bundles++;
            csv = replaces.get(key) ?? "";
          }
        }
      }
      assert.ok(bundles > 0);
    },
  );
});
