/**
 * gzip on catalogd's HTTP API, end to end: a real `opcat serve` process (bin/opcat) and real HTTP
 * clients (node:http for the bytes on the wire, fetch as a browser or Go client reads them). A body
 * of at least 1,400 bytes is gzip-compressed for a client that sends `Accept-Encoding: gzip` (as
 * catalogd's gzhttp handler does), a smaller one is not; without the header the bytes are the
 * uncompressed ones, unchanged; the same for large `metas` answers.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { startServe, type Served } from "../ui/harness.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The raw answer (no decoding): what went over the wire. */
function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** A valid one-package catalog whose olm.package line (`/metas?schema=olm.package`) is `size` bytes. */
function sizedCatalog(dir: string, size: number): void {
  const line = (pad: string): string =>
    JSON.stringify({ defaultChannel: "stable", description: pad, name: "p", schema: "olm.package" }) + "\n";
  const pad = "x".repeat(size - line("").length);
  const blobs = [
    JSON.parse(line(pad)),
    { schema: "olm.channel", package: "p", name: "stable", entries: [{ name: "p.v1.0.0" }] },
    {
      schema: "olm.bundle",
      package: "p",
      name: "p.v1.0.0",
      image: "quay.example.com/p/bundle:v1.0.0",
      properties: [{ type: "olm.package", value: { packageName: "p", version: "1.0.0" } }],
    },
  ];
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

/** One package of 60 bundles of about 85 KB each: a `metas?schema=olm.bundle` answer of over 4 MiB. */
function bigCatalog(dir: string): void {
  const n = 60;
  const name = (i: number): string => `big.v1.${i}.0`;
  const blobs: unknown[] = [{ schema: "olm.package", name: "big", defaultChannel: "stable" }];
  const entries = Array.from({ length: n }, (_, i) =>
    i === 0 ? { name: name(0) } : { name: name(i), replaces: name(i - 1) },
  );
  blobs.push({ schema: "olm.channel", package: "big", name: "stable", entries });
  for (let i = 0; i < n; i++)
    blobs.push({
      schema: "olm.bundle",
      package: "big",
      name: name(i),
      image: `quay.example.com/big/bundle:v1.${i}.0`,
      properties: [
        { type: "olm.package", value: { packageName: "big", version: `1.${i}.0` } },
        // varied text (compressible, but not to nothing)
        {
          type: "olm.csv.metadata",
          value: { description: Array.from({ length: 14000 }, (_, k) => `w${(k * 7919 + i) % 10007}`).join(" ") },
        },
      ],
    });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

describe("gzip on the catalog HTTP API of a real opcat serve", () => {
  const work = mkdtempSync(join(tmpdir(), "opcat-gzip-"));
  let served: Served;
  let base: string;
  before(async () => {
    sizedCatalog(join(work, "small"), 1399);
    sizedCatalog(join(work, "edge"), 1400);
    bigCatalog(join(work, "big"));
    served = await startServe([
      `small=${join(work, "small")}`,
      `edge=${join(work, "edge")}`,
      `big=${join(work, "big")}`,
    ]);
    base = served.url.replace(/\/$/, "");
  });
  after(async () => {
    await served?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test("/all: gzip when accepted, the uncompressed bytes unchanged when not", async () => {
    const url = `${base}/catalogs/big/api/v1/all`;
    const plain = await get(url);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.headers["content-length"], String(plain.body.length));
    assert.equal(plain.headers["vary"], "Accept-Encoding");
    assert.ok(plain.body.length > 4 << 20);
    const gz = await get(url, { "accept-encoding": "gzip" });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.equal(gz.headers["vary"], "Accept-Encoding");
    assert.ok(gz.body.length < plain.body.length / 2, `${gz.body.length} of ${plain.body.length}`);
    assert.ok(gunzipSync(gz.body).equals(plain.body));
    assert.notEqual(gz.headers["etag"], plain.headers["etag"]);
    // gzip refused (q=0) or another coding only: the uncompressed bytes
    for (const ae of ["gzip;q=0", "br", "identity"]) {
      const r = await get(url, { "accept-encoding": ae });
      assert.equal(r.headers["content-encoding"], undefined, ae);
      assert.ok(r.body.equals(plain.body), ae);
    }
    // fetch asks for gzip itself and hands over the decoded body
    const f = await fetch(url);
    assert.equal(f.headers.get("content-encoding"), "gzip");
    assert.ok(Buffer.from(await f.arrayBuffer()).equals(plain.body));
    // HEAD: the headers of the gzip answer, no body
    const head = await get(url, { "accept-encoding": "gzip" }, "HEAD");
    assert.equal(head.headers["content-encoding"], "gzip");
    assert.equal(head.headers["content-length"], String(gz.body.length));
    assert.equal(head.body.length, 0);
  });

  test("1,400 bytes and more are compressed, 1,399 are not (metas and /all)", async () => {
    const small = await get(`${base}/catalogs/small/api/v1/metas?schema=olm.package`, { "accept-encoding": "gzip" });
    assert.equal(small.headers["content-encoding"], undefined);
    assert.equal(small.body.length, 1399);
    const edge = await get(`${base}/catalogs/edge/api/v1/metas?schema=olm.package`, { "accept-encoding": "gzip" });
    assert.equal(edge.headers["content-encoding"], "gzip");
    const edgePlain = await get(`${base}/catalogs/edge/api/v1/metas?schema=olm.package`);
    assert.equal(edgePlain.body.length, 1400);
    assert.ok(gunzipSync(edge.body).equals(edgePlain.body));
    // /all of both holds more than the package line: compressed
    for (const c of ["small", "edge"]) {
      const all = await get(`${base}/catalogs/${c}/api/v1/all`, { "accept-encoding": "gzip" });
      assert.equal(all.headers["content-encoding"], "gzip", c);
    }
    // a metas answer below the threshold (one channel line) is sent as it is
    const ch = await get(`${base}/catalogs/small/api/v1/metas?schema=olm.channel`, { "accept-encoding": "gzip" });
    assert.ok(ch.body.length < 1400);
    assert.equal(ch.headers["content-encoding"], undefined);
  });

  test("a metas answer of over 4 MiB: gzip-compressed when accepted, the same bytes once decoded", async () => {
    const url = `${base}/catalogs/big/api/v1/metas?schema=olm.bundle`;
    const plain = await get(url);
    assert.ok(plain.body.length > 4 << 20, String(plain.body.length));
    assert.equal(plain.headers["content-encoding"], undefined);
    const gz = await get(url, { "accept-encoding": "gzip" });
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.ok(gunzipSync(gz.body).equals(plain.body));
    const f = await fetch(url);
    assert.ok(Buffer.from(await f.arrayBuffer()).equals(plain.body));
  });
});
