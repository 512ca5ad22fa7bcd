import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpGet } from "../../test/serve/helpers.js";
import { CatalogStore, parseCatalogArg, startHttpServer, type HttpServerHandle, type StoreEvent } from "./index.js";

/** A valid one-package catalog; `pad` bytes of filler make it as large as wanted; `v` changes the content. */
function catalogText(v: string, pad = 0): string {
  const blobs = [
    { schema: "olm.package", name: "foo", defaultChannel: "stable" },
    { schema: "olm.channel", name: "stable", package: "foo", entries: [{ name: "foo.v1.0.0" }] },
    {
      schema: "olm.bundle",
      name: "foo.v1.0.0",
      package: "foo",
      image: "quay.io/foo/bundle:v1.0.0",
      properties: [
        { type: "olm.package", value: { packageName: "foo", version: "1.0.0" } },
        { type: "example.filler", value: { v, pad: "x".repeat(pad) } },
      ],
    },
  ];
  return blobs.map((b) => JSON.stringify(b)).join("\n");
}

function writeCatalog(dir: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "catalog.json"), text);
}

const INVALID = JSON.stringify({ schema: "olm.package", name: "foo", defaultChannel: "missing" });

describe("CatalogStore", () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "opcat-serve-"));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test("parseCatalogArg: name=dir, or the directory's base name", () => {
    assert.deepEqual(parseCatalogArg("ops=/a/b"), { name: "ops", source: "/a/b" });
    assert.deepEqual(parseCatalogArg("/data/v4.16"), { name: "v4.16", source: "/data/v4.16" });
    assert.deepEqual(parseCatalogArg("./x/a=b"), { name: "a=b", source: "./x/a=b" });
  });

  test("names must be DNS-1123 subdomains (they are URL path segments)", async () => {
    const store = new CatalogStore();
    await assert.rejects(store.add("Bad_Name", tmp), /invalid catalog name "Bad_Name"/);
  });

  test("reload to an invalid catalog keeps serving the old revision and reports why", async () => {
    const dir = join(tmp, "inv");
    writeCatalog(dir, catalogText("1"));
    const events: StoreEvent[] = [];
    const store = new CatalogStore({ onEvent: (e) => events.push(e) });
    const first = await store.add("inv", dir);
    assert.equal(first.status, "loaded");
    const rev1 = store.get("inv");
    writeCatalog(dir, INVALID);
    const out = await store.reload("inv");
    assert.equal(out.status, "failed");
    assert.ok(out.status === "failed" && out.serving === rev1);
    assert.equal(store.get("inv"), rev1);
    assert.match(
      store
        .lastError("inv")
        ?.map((p) => p.message)
        .join("\n") ?? "",
      /invalid package "foo"/,
    );
    assert.equal(events.at(-1)?.status, "failed");
    // Fixing the content swaps in a new revision with a later Last-Modified.
    writeCatalog(dir, catalogText("2"));
    const fixed = await store.reload("inv");
    assert.equal(fixed.status, "loaded");
    const rev2 = store.get("inv");
    assert.ok(rev2 && rev1 && rev2.serial > rev1.serial && rev2.lastModified > rev1.lastModified);
    assert.equal(store.lastError("inv"), undefined);
    // Same content again: nothing changes.
    assert.equal((await store.reload("inv")).status, "unchanged");
    assert.equal(store.get("inv"), rev2);
  });

  test("an invalid catalog at start is registered but not served (readyz is 503)", async () => {
    const dir = join(tmp, "bad");
    writeCatalog(dir, INVALID);
    const store = new CatalogStore();
    const out = await store.add("bad", dir);
    assert.equal(out.status, "failed");
    const srv = await startHttpServer(store, { port: 0 });
    try {
      const base = `http://127.0.0.1:${srv.address.port}`;
      assert.equal((await httpGet(`${base}/readyz`)).status, 503);
      assert.equal((await httpGet(`${base}/catalogs/bad/api/v1/all`)).status, 404);
    } finally {
      await srv.close();
    }
  });

  test("reload during concurrent requests: every answer is one whole revision", async () => {
    const dir = join(tmp, "race");
    const texts = [catalogText("A", 200_000), catalogText("B", 300_000)];
    writeCatalog(dir, texts[0]);
    const store = new CatalogStore();
    await store.add("race", dir);
    const srv = await startHttpServer(store, { port: 0 });
    const url = `http://127.0.0.1:${srv.address.port}/catalogs/race/api/v1/all`;
    const seen = new Map<string, string>(); // etag → body digest
    try {
      const bodies = new Set<string>();
      let stop = false;
      const reloader = (async () => {
        for (let i = 1; i <= 8; i++) {
          writeCatalog(dir, texts[i % 2]);
          await store.reload("race");
        }
        stop = true;
      })();
      const clients = Array.from({ length: 6 }, async () => {
        while (!stop) {
          const r = await httpGet(url, { "accept-encoding": "identity" });
          assert.equal(r.status, 200);
          assert.equal(Number(r.headers["content-length"]), r.body.length);
          const text = r.body.toString("utf8");
          const lines = text
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l));
          assert.equal(lines.length, 3);
          const v = lines[2].properties[1].value.v;
          assert.ok(v === "A" || v === "B");
          const etag = String(r.headers.etag);
          const prev = seen.get(etag);
          if (prev !== undefined) assert.equal(prev, text, "one ETag, one body");
          seen.set(etag, text);
          bodies.add(v);
        }
      });
      await Promise.all([reloader, ...clients]);
      assert.ok(bodies.size >= 1);
    } finally {
      await srv.close();
    }
  });

  test("watch: a changed file is picked up (debounced)", async () => {
    const dir = join(tmp, "watched");
    writeCatalog(dir, catalogText("1"));
    let loaded: () => void = () => undefined;
    const reloaded = new Promise<void>((r) => (loaded = r));
    const store = new CatalogStore({
      watchDebounceMs: 50,
      onEvent: (e) => {
        if (e.status === "loaded" && e.revision.serial === 2) loaded();
      },
    });
    await store.add("watched", dir);
    store.watch();
    try {
      writeCatalog(dir, catalogText("2"));
      await reloaded; // an event, not a deadline: a missing reload hangs the test until the runner's timeout
      assert.equal(store.get("watched")?.serial, 2);
    } finally {
      await store.close();
    }
  });
});

describe("slow and vanishing clients", () => {
  let tmp: string;
  let store: CatalogStore;
  let srv: HttpServerHandle;
  let size = 0;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "opcat-serve-big-"));
    writeCatalog(join(tmp, "big"), catalogText("big", 24 * 1024 * 1024));
    store = new CatalogStore();
    await store.add("big", join(tmp, "big"));
    size = store.get("big")?.jsonl.length ?? 0;
    srv = await startHttpServer(store, { port: 0 });
  });
  after(async () => {
    await srv.close(1000);
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** A raw client that sends a GET for /all and then reads nothing (or closes after `readBytes`). */
  function rawClient(
    readBytes?: number,
  ): Promise<{ received: number; close: () => void; resume: () => Promise<number> }> {
    return new Promise((resolve) => {
      const sock = connect({ host: "127.0.0.1", port: srv.address.port });
      let received = 0;
      sock.on("connect", () => {
        sock.write(
          "GET /catalogs/big/api/v1/all HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
        );
      });
      const api = {
        get received() {
          return received;
        },
        close: () => sock.destroy(),
        resume: () =>
          new Promise<number>((res) => {
            sock.on("data", (c: Buffer) => {
              received += c.length;
            });
            sock.on("close", () => res(received));
            sock.resume();
          }),
      };
      sock.once("data", (c: Buffer) => {
        received += c.length;
        if (readBytes === undefined) sock.pause();
        resolve(api);
      });
    });
  }

  test("a client disconnecting mid-stream is dropped; the server goes on", async () => {
    const c = await rawClient(1);
    c.close();
    const r = await httpGet(`http://127.0.0.1:${srv.address.port}/catalogs/big/api/v1/metas?schema=olm.package`);
    assert.equal(r.status, 200);
    // the dropped client's connection goes away (waiting for that event, without a clock)
    const conns = () => new Promise<number>((res) => srv.server.getConnections((_e, n) => res(n)));
    while ((await conns()) > 0) await new Promise((res) => setImmediate(res));
    assert.equal(await conns(), 0);
  });

  test("a slow (non-reading) client does not delay others", async () => {
    const slow = await Promise.all([rawClient(), rawClient()]);
    // the stalled clients hold their answers unread; these requests complete
    // anyway (they would hang if a slow reader blocked the server)
    for (let i = 0; i < 5; i++) {
      const r = await httpGet(`http://127.0.0.1:${srv.address.port}/catalogs/big/api/v1/metas?schema=olm.channel`);
      assert.equal(r.status, 200);
    }
    const full = await httpGet(`http://127.0.0.1:${srv.address.port}/catalogs/big/api/v1/all`, {
      "accept-encoding": "identity",
    });
    assert.equal(full.body.length, size);
    // The stalled clients still get everything once they read.
    for (const s of slow) {
      const n = await s.resume();
      assert.ok(n > size && n < size + 1000, `${n} bytes for a ${size}-byte body`);
    }
  });

  test("graceful shutdown lets an in-flight download finish", async () => {
    const local = await startHttpServer(store, { port: 0 });
    const sock = connect({ host: "127.0.0.1", port: local.address.port });
    let received = 0;
    let started!: () => void;
    const firstBytes = new Promise<void>((r) => (started = r));
    const done = new Promise<void>((resolve) => {
      sock.on("data", (c: Buffer) => {
        received += c.length;
        started();
        if (received === 1 || received < 100_000) sock.pause();
      });
      sock.on("close", () => resolve());
    });
    sock.write(
      "GET /catalogs/big/api/v1/all HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
    );
    await firstBytes; // the download is in flight
    const closing = local.close(10_000);
    // New connections are refused while the old one drains.
    await assert.rejects(httpGet(`http://127.0.0.1:${local.address.port}/healthz`));
    sock.resume();
    await done;
    await closing;
    assert.ok(received > size, `received ${received} of ${size} body bytes plus headers`);
  });
});

describe("oneLoadAtATime", () => {
  /** A catalog of `n` packages, one file each (a load yields to the event loop after each file). */
  function manyFiles(dir: string, n: number): void {
    for (let i = 0; i < n; i++) {
      const d = join(dir, `p${i}`);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, "catalog.json"), catalogText(String(i)).replaceAll('"foo', `"foo${i}`));
    }
  }

  for (const serial of [false, true])
    test(`two catalogs added together load ${serial ? "one after the other" : "side by side"}`, async () => {
      const root = mkdtempSync(join(tmpdir(), "opcat-serial-"));
      manyFiles(join(root, "big"), 40);
      writeCatalog(join(root, "small"), catalogText("s"));
      const order: string[] = [];
      const store = new CatalogStore({
        oneLoadAtATime: serial,
        onEvent: (e) => order.push(`${e.catalog}:${e.status}`),
      });
      try {
        await Promise.all([store.add("big", join(root, "big")), store.add("small", join(root, "small"))]);
        // side by side the small one (one file) is done long before the big one (40 files, 40 yields)
        assert.deepEqual(order, serial ? ["big:loaded", "small:loaded"] : ["small:loaded", "big:loaded"]);
        assert.equal(store.get("big")?.blobCount, 120);
      } finally {
        await store.close();
        rmSync(root, { recursive: true, force: true });
      }
    });
});
