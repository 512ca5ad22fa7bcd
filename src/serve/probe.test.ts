import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CatalogStore, startGrpcServer, type GrpcServerHandle } from "./index.js";
import { parseProbeFlags, probe } from "./probe.js";
import { freePort } from "../../test/image/servers.js";

const catalogDir = join(dirname(fileURLToPath(import.meta.url)), "testdata", "catalog");

function sink(): Writable & { text: string } {
  const w = new Writable({
    write(c, _e, cb) {
      w.text += String(c);
      cb();
    },
  }) as Writable & { text: string };
  w.text = "";
  return w;
}

describe("grpc_health_probe work-alike (what OLM v0 runs in a catalog Pod's probes)", () => {
  const store = new CatalogStore();
  let srv: GrpcServerHandle;
  before(async () => {
    await store.add("test", catalogDir);
    srv = await startGrpcServer(store, { port: 0 });
  });
  after(async () => {
    await srv.close();
    await store.close();
  });

  test("flags as grpc_health_probe spells them; -addr=:port means this host", () => {
    assert.deepEqual(parseProbeFlags(["-addr=:50051"]), {
      addr: "127.0.0.1:50051",
      service: "",
      connectTimeoutMs: 1000,
      rpcTimeoutMs: 1000,
    });
    const f = parseProbeFlags(["-addr", "10.1.2.3:1", "-connect-timeout=500ms", "--rpc-timeout=2s"]);
    assert.ok(typeof f !== "string");
    assert.equal(f.connectTimeoutMs, 500);
    assert.equal(f.rpcTimeoutMs, 2000);
    assert.equal(parseProbeFlags([]), "-addr not specified");
    assert.match(String(parseProbeFlags(["-addr=:1", "-tls-no-verify=x"])), /flag provided but not defined/);
    assert.match(String(parseProbeFlags(["-addr=:1", "-rpc-timeout=soon"])), /invalid value/);
  });

  test("exit 0 and `status: SERVING` from opcat's gRPC server", async () => {
    const out = sink();
    assert.equal(await probe([`-addr=:${srv.port}`], out, sink()), 0);
    assert.equal(out.text, "status: SERVING\n");
  });

  test("exit 2 when nothing listens, exit 1 on bad flags", async () => {
    const port = await freePort();
    const err = sink();
    assert.equal(await probe([`-addr=127.0.0.1:${port}`, "-connect-timeout=300ms"], sink(), err), 2);
    assert.match(err.text, /failed to connect/);
    assert.equal(await probe(["-bogus"], sink(), sink()), 1);
  });
});
