/**
 * Load benchmark of `opcat serve` (not a test): the v4.16 and v4.20 community catalogs merged into
 * one catalog, served by a child process on 127.0.0.1; autocannon drives `/all` (identity and
 * gzip) and filtered `metas`, a grpc-js client drives ListBundles and GetBundleForChannel. Each
 * scenario is bounded in time and count. Prints req/s, p50/p99 latency and the server's peak RSS.
 *
 *   node --import tsx bench/serve.ts [--seconds 5] [--connections 10]
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { mergeCommunityCatalogs } from "./generate.js";

const argv = process.argv.slice(2);
const arg = (name: string, def: number): number => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : def;
};

if (argv[0] === "--server") await runServer(argv[1]);
else await runBench();

/** Child: serve the catalog, print the ports, report peak RSS on SIGTERM. */
async function runServer(dir: string): Promise<void> {
  const { CatalogStore, startHttpServer, startGrpcServer } = await import("../src/serve/index.js");
  const store = new CatalogStore();
  const t0 = performance.now();
  const out = await store.add("merged", dir);
  if (out.status !== "loaded") throw new Error(`catalog did not load: ${JSON.stringify(out.status === "failed" ? out.problems.slice(0, 3) : out)}`);
  const loadMs = performance.now() - t0;
  const http = await startHttpServer(store, { port: 0 });
  const grpc = await startGrpcServer(store, { port: 0 });
  const rev = store.get("merged");
  process.stdout.write(JSON.stringify({ http: http.address.port, grpc: grpc.port, loadMs, bytes: rev?.jsonl.length, gzipBytes: rev?.gzip.length, bundles: rev?.registry.bundleCount, rssAfterLoad: process.memoryUsage().rss }) + "\n");
  process.once("SIGTERM", async () => {
    await Promise.all([http.close(1000), grpc.close(1000)]);
    process.stdout.write(JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS }) + "\n");
    process.exit(0);
  });
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  throughput: { average: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

async function runBench(): Promise<void> {
  const root = resolve(fileURLToPath(import.meta.url), "..", "..");
  const community = join(process.env.OPCAT_SHARED ?? resolve(root, "..", "shared"), "data", "community");
  const seconds = arg("--seconds", 5);
  const connections = arg("--connections", 10);
  const tmp = mkdtempSync(join(tmpdir(), "opcat-bench-serve-"));
  const dir = join(tmp, "merged");
  await mergeCommunityCatalogs(community, dir);
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--server", dir], { stdio: ["ignore", "pipe", "inherit"] });
  const lines: string[] = [];
  let buf = "";
  const nextLine = (): Promise<string> =>
    new Promise((res) => {
      const check = (): void => {
        if (lines.length > 0) res(lines.shift() as string);
        else child.stdout.once("data", check);
      };
      check();
    });
  child.stdout.on("data", (c: Buffer) => {
    buf += c.toString();
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  const info = JSON.parse(await nextLine()) as { http: number; grpc: number; loadMs: number; bytes: number; gzipBytes: number; bundles: number; rssAfterLoad: number };
  const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`catalog: ${mb(info.bytes)} JSONL (${mb(info.gzipBytes)} gzip), ${info.bundles} channel bundles, loaded in ${(info.loadMs / 1000).toFixed(2)} s, server RSS after load ${mb(info.rssAfterLoad)}`);
  console.log(`each scenario: ${seconds} s or ${1000 * seconds} requests at most, ${connections} connections, loopback\n`);

  const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
  const base = `http://127.0.0.1:${info.http}/catalogs/merged/api/v1`;
  const rows: string[][] = [["scenario", "req/s", "p50 ms", "p99 ms", "MB/s", "errors"]];
  const http = async (label: string, path: string, headers: Record<string, string> = {}): Promise<void> => {
    const r = await autocannon({ url: base + path, connections, duration: seconds, maxOverallRequests: 1000 * seconds, headers });
    rows.push([label, r.requests.average.toFixed(0), String(r.latency.p50), String(r.latency.p99), (r.throughput.average / 1e6).toFixed(1), String(r.non2xx + r.errors)]);
  };
  await http("GET /all (identity)", "/all");
  await http("GET /all (gzip, pre-compressed)", "/all", { "accept-encoding": "gzip" });
  await http("GET /all If-None-Match → 304", "/all", { "if-none-match": await etagOf(base + "/all") });
  await http("GET /metas?schema=olm.package", "/metas?schema=olm.package");
  await http("GET /metas?schema=olm.channel&package=…", `/metas?schema=olm.channel&package=${await firstPackage(base)}`);
  await http("GET /metas?schema=olm.bundle (gzip stream)", "/metas?schema=olm.bundle", { "accept-encoding": "gzip" });

  const grpc = await import("@grpc/grpc-js");
  const { loadServiceDefinitions } = await import("../src/serve/index.js");
  const defs = loadServiceDefinitions();
  const Ctor = grpc.makeGenericClientConstructor(defs["api.Registry"] as import("@grpc/grpc-js").ServiceDefinition, "api.Registry");
  const client = new Ctor(`127.0.0.1:${info.grpc}`, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": -1 }) as unknown as Record<string, (...a: unknown[]) => unknown> & { close(): void };
  const pkg = await firstPackage(base);
  const channel = await defaultChannel(base, pkg);
  const grpcScenario = async (label: string, call: () => Promise<void>, maxCalls: number): Promise<void> => {
    const lat: number[] = [];
    const end = performance.now() + seconds * 1000;
    let errors = 0;
    const worker = async (): Promise<void> => {
      while (performance.now() < end && lat.length < maxCalls) {
        const t = performance.now();
        try {
          await call();
        } catch {
          errors++;
        }
        lat.push(performance.now() - t);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: connections }, worker));
    const secs = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    const pct = (p: number): string => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(1);
    rows.push([label, (lat.length / secs).toFixed(0), pct(0.5), pct(0.99), "", String(errors)]);
  };
  await grpcScenario(
    "gRPC ListBundles (stream)",
    () =>
      new Promise<void>((res, rej) => {
        const s = client.ListBundles({}) as NodeJS.EventEmitter;
        s.on("data", () => undefined);
        s.on("end", () => res());
        s.on("error", rej);
      }),
    200,
  );
  await grpcScenario("gRPC GetBundleForChannel", () => new Promise<void>((res, rej) => void client.GetBundleForChannel({ pkgName: pkg, channelName: channel }, (e: Error | null) => (e ? rej(e) : res()))), 1000 * seconds);
  client.close();

  child.kill("SIGTERM");
  const rss = JSON.parse(await nextLine()) as { maxRssKiB: number };
  await once(child, "exit");
  rmSync(tmp, { recursive: true, force: true });
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
  console.log(`\nserver peak RSS: ${(rss.maxRssKiB / 1024).toFixed(0)} MiB`);
}

async function etagOf(url: string): Promise<string> {
  const r = await fetch(url, { method: "HEAD", headers: { "accept-encoding": "identity" } });
  return r.headers.get("etag") ?? "";
}

async function firstPackage(base: string): Promise<string> {
  const r = await fetch(`${base}/metas?schema=olm.package`);
  return (JSON.parse((await r.text()).split("\n")[0]) as { name: string }).name;
}

async function defaultChannel(base: string, pkg: string): Promise<string> {
  const r = await fetch(`${base}/metas?schema=olm.package&name=${pkg}`);
  return (JSON.parse((await r.text()).split("\n")[0]) as { defaultChannel: string }).defaultChannel;
}
