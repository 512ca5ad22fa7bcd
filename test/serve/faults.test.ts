/**
 * Fault tests for `opcat serve`'s HTTP side, all on 127.0.0.1, beyond src/serve/store.test.ts (which
 * covers one vanishing identity client, store.reload races and a non-reading client not holding up others):
 * clients vanishing mid-body in every encoding while revisions swap; a `--watch` reload to invalid
 * content; many concurrent requests (plain, gzip, resumed ranges) while `--watch` swaps revisions,
 * each answer checked against its ETag (a hash of the body) so a mixed body cannot pass; and slow
 * readers, whose responses must be written with backpressure (bounded per-response buffering, no
 * copy of the body per client) rather than queued whole.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { gunzipSync } from "node:zlib";
import { CatalogStore, startHttpServer, type HttpServerHandle, type StoreEvent } from "../../src/serve/index.js";
import { httpGet } from "./helpers.js";

setFlagsFromString("--expose-gc");
/** A full garbage collection, so that memory measurements count only what is retained. */
const runGc = runInNewContext("gc") as () => void;
/**
 * A full collection whose dead ArrayBuffers are really freed: V8 releases their backing stores on a
 * background thread after a GC (the array buffer sweeper), so `process.memoryUsage().arrayBuffers`
 * right after one `gc()` can still count them on a busy machine; the next GC first waits for that
 * sweep to finish.
 */
const gc = (): void => {
  runGc();
  runGc();
};

/**
 * A valid catalog of `bundles` bundles of package foo, each carrying `fill`
 * bytes of incompressible filler and the marker `v` everywhere.
 */
function catalogText(v: string, bundles: number, fill: number): string {
  const out: string[] = [
    JSON.stringify({ schema: "olm.package", name: "foo", defaultChannel: "stable", description: `marker ${v}` }),
    JSON.stringify({
      schema: "olm.channel",
      name: "stable",
      package: "foo",
      entries: Array.from({ length: bundles }, (_, i) => ({
        name: `foo.v${i}.0.0`,
        ...(i > 0 ? { replaces: `foo.v${i - 1}.0.0` } : {}),
      })),
    }),
  ];
  for (let i = 0; i < bundles; i++) {
    out.push(
      JSON.stringify({
        schema: "olm.bundle",
        name: `foo.v${i}.0.0`,
        package: "foo",
        image: `quay.io/foo/bundle:v${i}.0.0`,
        properties: [
          { type: "olm.package", value: { packageName: "foo", version: `${i}.0.0` } },
          { type: "example.filler", value: { v, pad: randomBytes(fill / 2).toString("hex") } },
        ],
      }),
    );
  }
  return out.join("\n") + "\n";
}

/** Replaces the catalog file at once (written elsewhere, renamed into place), so a watcher never sees half a file. */
function writeAtomically(dir: string, stage: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  mkdirSync(stage, { recursive: true });
  const tmp = join(stage, `catalog-${process.hrtime.bigint()}.json`);
  writeFileSync(tmp, text);
  renameSync(tmp, join(dir, "catalog.json"));
}

/** The strong ETag the server derives from a body's SHA-256 (see CatalogRevision). */
function etagOf(body: Buffer): string {
  const hex = createHash("sha256").update(body).digest("hex");
  return `"${Buffer.from(hex.slice(0, 48), "hex").toString("base64url")}"`;
}

/** Checks that `body` is one whole catalog: every line parses and carries one marker. Returns the marker. */
function wholeCatalog(body: Buffer, bundles: number): string {
  const lines = body.toString("utf8").split("\n");
  assert.equal(lines.pop(), "", "ends with a newline");
  assert.equal(lines.length, bundles + 2);
  const objs = lines.map(
    (l) => JSON.parse(l) as { schema: string; description?: string; properties?: { value: { v?: string } }[] },
  );
  const marker = (objs.find((o) => o.schema === "olm.package")?.description ?? "").replace("marker ", "");
  for (const o of objs)
    if (o.schema === "olm.bundle") assert.equal(o.properties?.[1].value.v, marker, "one revision per body");
  return marker;
}

/**
 * Resolves once `cond()` holds, checked now and each time `emitter` emits `event`
 * (no clock: a wait that never ends is caught by the runner's timeout).
 */
function when(emitter: EventEmitter, event: string, cond: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (cond()) return resolve();
    const check = (): void => {
      if (!cond()) return;
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
  });
}

/** The server's open sockets, with a "closed" event each time one closes. */
function trackConnections(srv: HttpServerHandle): { open: Set<Socket>; events: EventEmitter } {
  const open = new Set<Socket>();
  const events = new EventEmitter();
  srv.server.on("connection", (s: Socket) => {
    open.add(s);
    s.once("close", () => {
      open.delete(s);
      events.emit("closed");
    });
  });
  return { open, events };
}

/** Waits for store events. */
class Events {
  readonly seen: StoreEvent[] = [];
  #waiters: { pred: (e: StoreEvent) => boolean; resolve: (e: StoreEvent) => void }[] = [];
  readonly on = (e: StoreEvent): void => {
    this.seen.push(e);
    for (const w of [...this.#waiters]) {
      if (w.pred(e)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  };
  next(pred: (e: StoreEvent) => boolean): Promise<StoreEvent> {
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }
}

describe("serve faults", () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "opcat-serve-faults-"));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test("clients vanishing mid-body (identity, gzip, range, streamed metas) while revisions swap", async () => {
    const dir = join(tmp, "vanish");
    const bundles = 1500;
    writeAtomically(dir, join(tmp, "stage"), catalogText("A", bundles, 8192));
    const store = new CatalogStore();
    await store.add("vanish", dir);
    const log: Record<string, unknown>[] = [];
    const logged = new EventEmitter();
    const srv = await startHttpServer(store, {
      port: 0,
      accessLog: (l) => {
        log.push(JSON.parse(l) as Record<string, unknown>);
        logged.emit("line");
      },
    });
    const conns = trackConnections(srv);
    const port = srv.address.port;
    const size = store.get("vanish")?.jsonl.length ?? 0;
    const requests = [
      { path: "/catalogs/vanish/api/v1/all", headers: "Accept-Encoding: identity" },
      { path: "/catalogs/vanish/api/v1/all", headers: "Accept-Encoding: gzip" },
      { path: "/catalogs/vanish/api/v1/all", headers: "Range: bytes=1000-" },
      { path: "/catalogs/vanish/api/v1/metas?schema=olm.bundle", headers: "Accept-Encoding: identity" },
    ];
    try {
      for (const [i, r] of requests.entries()) {
        const sock = connect({ host: "127.0.0.1", port });
        const got = new Promise<void>((resolve) => {
          let n = 0;
          sock.on("data", (c: Buffer) => {
            n += c.length;
            if (n > 4096) {
              sock.pause();
              resolve();
            }
          });
        });
        sock.write(`GET ${r.path} HTTP/1.1\r\nHost: x\r\n${r.headers}\r\nConnection: close\r\n\r\n`);
        await got;
        // A new revision arrives while the body is in flight, then the client vanishes.
        writeAtomically(dir, join(tmp, "stage"), catalogText(i % 2 === 0 ? "B" : "A", bundles, 8192));
        assert.equal((await store.reload("vanish")).status, "loaded");
        sock.destroy();
        await when(conns.events, "closed", () => conns.open.size === 0); // the server dropped the connection
      }
      await when(logged, "line", () => log.length >= requests.length);
      assert.equal(log.length, requests.length);
      assert.ok(size > 12 * 1024 * 1024);
      for (const l of log) {
        assert.equal(l.aborted, true, JSON.stringify(l));
        assert.ok(Number(l.bytes) < size, "not the whole body");
      }
      // The server goes on serving whole, current bodies.
      const r = await httpGet(`http://127.0.0.1:${port}/catalogs/vanish/api/v1/all`, { "accept-encoding": "identity" });
      assert.equal(r.status, 200);
      assert.equal(r.headers.etag, etagOf(r.body));
      assert.equal(r.headers.etag, store.get("vanish")?.etag);
      wholeCatalog(r.body, bundles);
    } finally {
      await srv.close(1000);
      await store.close();
    }
  });

  test(
    "--watch reload to an invalid catalog: the old content " +
      "and ETag stay, the failure is reported, a fix is picked up",
    async () => {
      const dir = join(tmp, "invalid");
      const stage = join(tmp, "stage");
      writeAtomically(dir, stage, catalogText("A", 3, 64));
      const ev = new Events();
      const store = new CatalogStore({ watchDebounceMs: 20, onEvent: ev.on });
      await store.add("invalid", dir);
      const srv = await startHttpServer(store, { port: 0 });
      const url = `http://127.0.0.1:${srv.address.port}/catalogs/invalid/api/v1/all`;
      store.watch();
      try {
        const before = await httpGet(url, { "accept-encoding": "identity" });
        const failed = ev.next((e) => e.status === "failed");
        writeAtomically(
          dir,
          stage,
          JSON.stringify({ schema: "olm.package", name: "foo", defaultChannel: "nope" }) + "\n",
        );
        const f = await failed;
        assert.ok(f.status === "failed" && f.serving?.etag === before.headers.etag);
        assert.match(f.status === "failed" ? f.problems.map((p) => p.message).join("\n") : "", /invalid package "foo"/);
        const during = await httpGet(url, { "accept-encoding": "identity" });
        assert.equal(during.headers.etag, before.headers.etag);
        assert.deepEqual(during.body, before.body);
        assert.equal(
          (await httpGet(`http://127.0.0.1:${srv.address.port}/readyz`)).status,
          200,
          "still ready: a revision is served",
        );
        // Unparsable content is refused the same way.
        const failed2 = ev.next((e) => e.status === "failed");
        writeAtomically(dir, stage, "{ not json\n");
        await failed2;
        assert.equal((await httpGet(url, { "accept-encoding": "identity" })).headers.etag, before.headers.etag);
        const loaded = ev.next((e) => e.status === "loaded");
        writeAtomically(dir, stage, catalogText("B", 3, 64));
        await loaded;
        const fixed = await httpGet(url, { "accept-encoding": "identity" });
        assert.notEqual(fixed.headers.etag, before.headers.etag);
        assert.equal(wholeCatalog(fixed.body, 3), "B");
        assert.equal(store.lastError("invalid"), undefined);
      } finally {
        await srv.close(1000);
        await store.close();
      }
    },
  );

  test(
    "--watch swaps under many concurrent requests: " + "every answer is one whole revision matching its ETag",
    async () => {
      const dir = join(tmp, "race");
      const stage = join(tmp, "stage");
      const bundles = 200;
      const texts = ["A", "B", "C"].map((v) => catalogText(v, bundles, 4096));
      writeAtomically(dir, stage, texts[0]);
      const ev = new Events();
      const store = new CatalogStore({ watchDebounceMs: 10, onEvent: ev.on });
      await store.add("race", dir);
      const srv = await startHttpServer(store, { port: 0 });
      const url = `http://127.0.0.1:${srv.address.port}/catalogs/race/api/v1/all`;
      store.watch();
      const markers = new Set<string>();
      const etags = new Map<string, string>(); // identity ETag → marker
      let answers = 0;
      let stop = false;
      try {
        const swapper = (async () => {
          for (let i = 1; i <= 9; i++) {
            const loaded = ev.next(
              (e) => e.status === "loaded" && wholeCatalog(e.revision.jsonl, bundles) === "ABC"[i % 3],
            );
            writeAtomically(dir, stage, texts[i % 3]);
            await loaded;
          }
          stop = true;
        })();
        const check = (body: Buffer, etag: string, gzip: boolean): string => {
          const plain = gzip ? gunzipSync(body) : body;
          const tag = etagOf(plain);
          assert.equal(etag, gzip ? `${tag.slice(0, -1)}-gzip"` : tag, "the ETag is the hash of this very body");
          const m = wholeCatalog(plain, bundles);
          const prev = etags.get(tag);
          if (prev !== undefined) assert.equal(prev, m);
          etags.set(tag, m);
          markers.add(m);
          answers++;
          return m;
        };
        const plainClient = async (): Promise<void> => {
          while (!stop) {
            const r = await httpGet(url, { "accept-encoding": "identity" });
            assert.equal(r.status, 200);
            assert.equal(Number(r.headers["content-length"]), r.body.length);
            check(r.body, String(r.headers.etag), false);
          }
        };
        const gzipClient = async (): Promise<void> => {
          while (!stop) {
            const r = await httpGet(url, { "accept-encoding": "gzip" });
            assert.equal(r.status, 200);
            assert.equal(r.headers["content-encoding"], "gzip");
            check(r.body, String(r.headers.etag), true);
          }
        };
        // A download resumed with If-Range: a 206 only from the same revision, else the whole new one.
        const resumingClient = async (): Promise<void> => {
          while (!stop) {
            const first = await httpGet(url, { "accept-encoding": "identity" });
            check(first.body, String(first.headers.etag), false);
            const half = Math.floor(first.body.length / 2);
            const rest = await httpGet(url, {
              "accept-encoding": "identity",
              range: `bytes=${half}-`,
              "if-range": String(first.headers.etag),
            });
            if (rest.status === 206) {
              assert.equal(rest.headers.etag, first.headers.etag);
              assert.deepEqual(Buffer.concat([first.body.subarray(0, half), rest.body]), first.body);
            } else {
              assert.equal(rest.status, 200);
              assert.notEqual(rest.headers.etag, first.headers.etag);
              check(rest.body, String(rest.headers.etag), false);
            }
          }
        };
        await Promise.all([
          swapper,
          ...Array.from({ length: 8 }, plainClient),
          ...Array.from({ length: 4 }, gzipClient),
          ...Array.from({ length: 4 }, resumingClient),
        ]);
        assert.ok(answers > 16, `${answers} answers`);
        assert.ok(markers.size >= 2, `answers from ${markers.size} revision(s)`);
        assert.ok(ev.seen.filter((e) => e.status === "loaded").length >= 10);
        assert.equal(
          ev.seen.filter((e) => e.status === "failed").length,
          0,
          "an atomic rewrite never loads half a file",
        );
      } finally {
        stop = true;
        await srv.close(1000);
        await store.close();
      }
    },
  );

  describe("slow readers get backpressure, not a buffered body", () => {
    let store: CatalogStore;
    let srv: HttpServerHandle;
    let size = 0;
    let gzSize = 0;
    let metasSize = 0;
    const responses: ServerResponse[] = [];
    const bundles = 2500;
    before(async () => {
      const dir = join(tmp, "slow");
      writeAtomically(dir, join(tmp, "stage"), catalogText("S", bundles, 8192));
      store = new CatalogStore();
      await store.add("slow", dir);
      size = store.get("slow")?.jsonl.length ?? 0;
      gzSize = store.get("slow")?.gzip.length ?? 0;
      const rev = store.get("slow");
      metasSize = rev ? rev.byteLength(rev.query("olm.bundle", "", "") ?? new Uint32Array(0)) : 0;
      srv = await startHttpServer(store, { port: 0 });
      srv.server.on("request", (_req, res: ServerResponse) => responses.push(res));
    });
    after(async () => {
      await srv.close(1000);
      await store.close();
    });

    /** Opens `n` clients that request `path`, read the first bytes, then stop reading. */
    async function stalledClients(
      n: number,
      path: string,
      headers: string,
    ): Promise<{ socks: Socket[]; res: ServerResponse[]; firstBytes: number[] }> {
      const firstBytes: number[] = [];
      const first = responses.length;
      const socks = await Promise.all(
        Array.from(
          { length: n },
          () =>
            new Promise<Socket>((resolve) => {
              const sock = connect({ host: "127.0.0.1", port: srv.address.port });
              sock.once("data", (c: Buffer) => {
                sock.pause();
                firstBytes.push(c.length);
                resolve(sock);
              });
              sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\nConnection: close\r\n\r\n`);
            }),
        ),
      );
      await when(srv.server, "request", () => responses.length >= first + n); // the server saw the requests
      const res = responses.slice(first, first + n);
      // Stalled: every response waits for 'drain' (its write returned false). Node emits no event
      // for that, so the state is checked between event-loop turns (setImmediate, no clock).
      while (!res.every((r) => r.writableNeedDrain)) await new Promise((r) => setImmediate(r));
      return { socks, res, firstBytes };
    }

    async function drainAll(socks: Socket[]): Promise<number[]> {
      return Promise.all(
        socks.map(
          (s) =>
            new Promise<number>((resolve) => {
              let n = 0;
              s.on("data", (c: Buffer) => (n += c.length));
              s.on("close", () => resolve(n));
              s.resume();
            }),
        ),
      );
    }

    for (const mode of [
      {
        name: "/all identity",
        path: "/catalogs/slow/api/v1/all",
        headers: "Accept-Encoding: identity",
        body: () => size,
      },
      { name: "/all gzip", path: "/catalogs/slow/api/v1/all", headers: "Accept-Encoding: gzip", body: () => gzSize },
      {
        name: "streamed /metas",
        path: "/catalogs/slow/api/v1/metas?schema=olm.bundle",
        headers: "Accept-Encoding: identity",
        body: () => metasSize,
      },
    ]) {
      test(`${mode.name}: bounded buffering per stalled client, no copy of the body per client`, async () => {
        assert.ok(mode.body() > 8 * 1024 * 1024, "the body is larger than what the kernel's socket buffers hold");
        gc();
        const memBefore = process.memoryUsage().arrayBuffers;
        const { socks, res, firstBytes } = await stalledClients(6, mode.path, mode.headers);
        gc();
        const memAfter = process.memoryUsage().arrayBuffers;
        for (const r of res) {
          assert.equal(r.writableEnded, false, "the body is not handed over whole");
          assert.ok(r.writableLength <= 256 * 1024, `${r.writableLength} bytes queued in the process for one client`);
          assert.ok(
            (r.socket?.bytesWritten ?? 0) < mode.body(),
            "the server stopped writing before the end of the body",
          );
        }
        assert.ok(
          memAfter - memBefore < mode.body(),
          `buffers grew by ${memAfter - memBefore} bytes for 6 stalled clients of a ${mode.body()}-byte body`,
        );
        // Once they read, every client gets the whole body.
        const got = await drainAll(socks);
        const first = firstBytes.reduce((a, b) => a + b, 0);
        assert.ok(got.reduce((a, b) => a + b, 0) + first > 6 * mode.body(), "every client got its whole body");
      });
    }
  });
});
