/**
 * `/api/v1/all` of the community v4.20 catalog with and without gzip, from a real `opcat serve`
 * (bin/opcat, the built dist/) on 127.0.0.1, read by node:http (the bytes on the wire, not decoded).
 * Not a test: it prints a Markdown table for docs/benchmarks.md. `BENCH_ONLY=allgzip npm run bench`,
 * or `node --import tsx bench/allgzip.ts [runs]`.
 *
 * Per encoding: the body's bytes, the time from sending the request until the last byte arrived
 * (median of `runs`, after one warm-up request), and for gzip also with the client's gunzip; and the
 * time the body would take on a 100 Mbit/s link (bytes only: loopback hides the network).
 */
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { startServe } from "../test/ui/harness.js";
import { median } from "./shared.js";

const root = resolve(import.meta.dirname, "..");
const v420 = join(process.env.OPCAT_SHARED ?? resolve(root, "..", "shared"), "data", "community", "catalogs", "v4.20");
const runs = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 15);

function get(url: string, headers: Record<string, string>): Promise<{ ms: number; body: Buffer; encoding: string }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        done({
          ms: performance.now() - t0,
          body: Buffer.concat(chunks),
          encoding: String(res.headers["content-encoding"] ?? "identity"),
        }),
      );
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end();
  });
}

if (!existsSync(v420)) {
  console.log(`\n(community v4.20 not found at ${v420}: skipping)`);
} else {
  const served = await startServe([`v4.20=${v420}`]);
  try {
    const url = `${served.url}catalogs/v4.20/api/v1/all`;
    const rows: string[] = [];
    let plain: Buffer | undefined;
    for (const [label, headers] of [
      ["no Accept-Encoding", {}],
      ["Accept-Encoding: gzip", { "accept-encoding": "gzip" }],
    ] as const) {
      await get(url, headers);
      const times: number[] = [];
      const decoded: number[] = [];
      let last: { ms: number; body: Buffer; encoding: string } = { ms: 0, body: Buffer.alloc(0), encoding: "" };
      for (let i = 0; i < runs; i++) {
        last = await get(url, headers);
        times.push(last.ms);
        if (last.encoding === "gzip") {
          const t0 = performance.now();
          const out = gunzipSync(last.body);
          decoded.push(last.ms + performance.now() - t0);
          if (plain && !out.equals(plain)) throw new Error("gzip body does not decode to the identity body");
        }
      }
      if (last.encoding === "identity") plain = last.body;
      const link = (last.body.length * 8) / 100e6;
      rows.push(
        `| ${label} | ${last.encoding} | ${last.body.length.toLocaleString("en")} | ${median(times).toFixed(1)} ms | ` +
          `${decoded.length ? `${median(decoded).toFixed(1)} ms` : "—"} | ${(link * 1000).toFixed(0)} ms |`,
      );
    }
    console.log(`\n### \`/api/v1/all\` of community v4.20 (\`bench/allgzip.ts\`, median of ${runs})\n`);
    console.log("| request | Content-Encoding | bytes | time to last byte | with gunzip | at 100 Mbit/s |");
    console.log("|---|---|---:|---:|---:|---:|");
    for (const r of rows) console.log(r);
  } finally {
    await served.stop();
  }
}
