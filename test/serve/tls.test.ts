/**
 * The catalog HTTP server over HTTPS (as catalogd serves behind its Service): a client trusting the
 * CA and checking the name reads the catalog; one trusting another CA is refused; after `setCerts`
 * new connections get the new certificate (a rotation), with no restart.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:https";
import { join } from "node:path";
import { makeServingCerts } from "../../src/cluster/kube/certs.js";
import { CatalogStore, startHttpServer, type HttpServerHandle } from "../../src/serve/index.js";
import { REPO_ROOT } from "../shared.js";

function get(port: number, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/catalogs/test/api/v1/all",
        ca,
        servername: "catalogd.example.svc",
        agent: false,
      },
      (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("catalog HTTP server over HTTPS", () => {
  const store = new CatalogStore();
  let srv: HttpServerHandle;
  const first = makeServingCerts(["catalogd.example.svc"], 1);
  const second = makeServingCerts(["catalogd.example.svc"], 1);
  before(async () => {
    await store.add("test", join(REPO_ROOT, "src", "serve", "testdata", "catalog"));
    srv = await startHttpServer(store, { port: 0, tls: first });
  });
  after(async () => {
    await srv.close();
    await store.close();
  });

  test("served with the certificate given; a rotation takes effect for new connections", async () => {
    const r = await get(srv.address.port, first.caCert);
    assert.equal(r.status, 200);
    assert.match(r.body, /"schema":"olm.package"/);
    await assert.rejects(get(srv.address.port, second.caCert), /self.signed|unable to verify|certificate/i);
    srv.setCerts(second);
    assert.equal((await get(srv.address.port, second.caCert)).body, r.body);
    await assert.rejects(get(srv.address.port, first.caCert), /self.signed|unable to verify|certificate/i);
  });

  test("setCerts on a plain HTTP server is a programming error", async () => {
    const plain = await startHttpServer(store, { port: 0 });
    try {
      assert.throws(() => plain.setCerts(first), /plain HTTP/);
    } finally {
      await plain.close();
    }
  });
});
