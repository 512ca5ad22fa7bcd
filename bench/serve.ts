/**
 * Load benchmark of `opcat serve` (not a test): the v4.16 and v4.20 community catalogs merged into
 * one catalog, served by a child process on 127.0.0.1 (the compiled server in dist/). With Debian's
 * `wrk` installed, wrk drives `/all` (identity, gzip, 304), filtered `metas` (64 connections) and the
 * resolver API (POST /api/v1/query and /api/v1/resolve),
 * then a soak run (BENCH_SOAK_SECONDS, default 60: metas at 64 connections and /all gzip from a second
 * wrk at once) while the server's RSS is sampled every second (start/end/peak printed);
 * without it, autocannon runs a smaller set. A grpc-js client drives ListBundles and
 * GetBundleForChannel. Prints req/s, p50/p99 latency, MB/s and the server's peak RSS.
 *
 *   node --import tsx bench/serve.ts [--seconds 5] [--connections 10]
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  // The compiled server (what `opcat serve` runs); BENCH_SRC=1 measures the sources under tsx.
  const lib = process.env.BENCH_SRC ? "../src/serve/index.ts" : "../dist/serve/index.js";
  const web = process.env.BENCH_SRC ? "../src/web/index.ts" : "../dist/web/index.js";
  const { CatalogStore, startHttpServer, startGrpcServer } = (await import(
    new URL(lib, import.meta.url).href
  )) as typeof import("../src/serve/index.js");
  const { webMounts } = (await import(new URL(web, import.meta.url).href)) as typeof import("../src/web/index.js");
  const store = new CatalogStore();
  const t0 = performance.now();
  const out = await store.add("merged", dir);
  if (out.status !== "loaded")
    throw new Error(
      `catalog did not load: ${JSON.stringify(out.status === "failed" ? out.problems.slice(0, 3) : out)}`,
    );
  const loadMs = performance.now() - t0;
  const http = await startHttpServer(store, { port: 0, mounts: webMounts(store) });
  const grpc = await startGrpcServer(store, { port: 0 });
  const rev = store.get("merged");
  process.stdout.write(
    JSON.stringify({
      pid: process.pid,
      http: http.address.port,
      grpc: grpc.port,
      loadMs,
      bytes: rev?.jsonl.length,
      gzipBytes: rev?.gzip.length,
      bundles: rev?.registry?.bundleCount,
      rssAfterLoad: process.memoryUsage().rss,
    }) + "\n",
  );
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
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--server", dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  // A failing scenario must not leave the server running (it would skew every later measurement).
  process.on("exit", () => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
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
  const info = JSON.parse(await nextLine()) as {
    pid: number;
    http: number;
    grpc: number;
    loadMs: number;
    bytes: number;
    gzipBytes: number;
    bundles: number;
    rssAfterLoad: number;
  };
  const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
  console.log(
    `catalog: ${mb(info.bytes)} JSONL (${mb(info.gzipBytes)} gzip), ${info.bundles} channel bundles, ` +
      `loaded in ${(info.loadMs / 1000).toFixed(2)} s, server RSS after load ${mb(info.rssAfterLoad)}`,
  );
  console.log(
    `each scenario: ${seconds} s, loopback; autocannon and gRPC scenarios: ` +
      `at most ${1000 * seconds} requests, ${connections} connections\n`,
  );

  const base = `http://127.0.0.1:${info.http}/catalogs/merged/api/v1`;
  const rows: string[][] = [["scenario", "conns", "req/s", "p50 ms", "p99 ms", "MB/s", "errors"]];
  const pkg0 = await firstPackage(base);
  const hasWrk = spawnSync("wrk", ["--version"]).error === undefined;
  if (hasWrk) {
    // wrk (C, Debian's package) in its own process: the client costs far less CPU than the server.
    console.log("HTTP client: wrk (2 threads)\n");
    const http = async (
      label: string,
      path: string,
      conns: number,
      headers: Record<string, string> = {},
      secs = seconds,
    ): Promise<WrkResult> => {
      const r = await runWrk(base + path, conns, secs, headers);
      rows.push([
        label,
        String(conns),
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        (r.bytesPerSec / 1e6).toFixed(0),
        String(r.errors),
      ]);
      return r;
    };
    await http("GET /all (identity)", "/all", 4);
    const gz = await http("GET /all (gzip, pre-compressed)", "/all", 4, { "Accept-Encoding": "gzip" });
    console.log(`/all gzip: ${(gz.bytesPerSec / 1e9).toFixed(2)} GB/s of compressed content (target ≥ 1 GB/s)`);
    await http("GET /all If-None-Match → 304", "/all", 64, { "If-None-Match": await etagOf(base + "/all") });
    await http("GET /metas?schema=olm.package", "/metas?schema=olm.package", 64);
    const ch = await http("GET /metas?schema=olm.channel&package=…", `/metas?schema=olm.channel&package=${pkg0}`, 64);
    console.log(`filtered metas at 64 connections: p99 ${ch.p99.toFixed(2)} ms (target < 5 ms)`);
    await http("GET /metas?schema=olm.bundle&package=… (gzip)", `/metas?schema=olm.bundle&package=${pkg0}`, 64, {
      "Accept-Encoding": "gzip",
    });
    await http("GET /metas?schema=olm.bundle (gzip)", "/metas?schema=olm.bundle", 8, { "Accept-Encoding": "gzip" });
    // Seed 002's resolver API: POST bodies through a wrk script; the first request builds the
    // resolver's catalog set for the revision (timed apart), later ones reuse it.
    const apiBase = `http://127.0.0.1:${info.http}`;
    const post = async (path: string, body: object): Promise<number> => {
      const r = await fetch(apiBase + path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await r.arrayBuffer();
      return r.status;
    };
    const queryBody = { query: JSON.stringify({ package: { packageName: pkg0, versionRange: ">=0.0.0" } }) };
    const t0 = performance.now();
    const firstStatus = await post("/api/v1/query", queryBody);
    console.log(
      `resolver API: first query (builds the catalog set of the revision) ` +
        `${(performance.now() - t0).toFixed(0)} ms, status ${firstStatus}`,
    );
    // The first packages need cert-manager or Tekton APIs that neither catalog has (409, correctly):
    // the resolve scenario uses the first package that resolves.
    const resolveBodyFor = async (pkg: string): Promise<object> => ({
      inputs: [
        {
          apiVersion: "deppy.io/v1",
          kind: "Input",
          metadata: { name: "bench" },
          spec: {
            constraints: [
              {
                type: "olm.catalog",
                value: { catalog: "merged", package: pkg, channel: await defaultChannel(base, pkg) },
              },
            ],
          },
        },
      ],
    });
    let resolveBody: object | undefined;
    let resolvedPkg = "";
    for (const pkg of await packageNames(base)) {
      const body = await resolveBodyFor(pkg);
      if ((await post("/api/v1/resolve", body)) === 200) {
        resolveBody = body;
        resolvedPkg = pkg;
        break;
      }
    }
    if (!resolveBody) throw new Error("no package of the merged catalog resolves");
    console.log(`resolver API: resolve scenario installs ${resolvedPkg} (default channel)`);
    for (const [label, path, body] of [
      ["POST /api/v1/query (package constraint)", "/api/v1/query", queryBody],
      ["POST /api/v1/resolve (one Input)", "/api/v1/resolve", resolveBody],
    ] as const) {
      const status = await post(path, body);
      if (status !== 200) throw new Error(`${path} answered ${status}`);
      const script = join(tmp, `post-${path.split("/").pop()}.lua`);
      writeFileSync(
        script,
        `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n` +
          `wrk.body = [==[${JSON.stringify(body)}]==]\n`,
      );
      const r = await runWrk(apiBase + path, 8, seconds, {}, script);
      rows.push([
        label,
        "8",
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        (r.bytesPerSec / 1e6).toFixed(1),
        String(r.errors),
      ]);
    }
    // Memory over a long run: the server's RSS each second while filtered metas (64 connections)
    // and /all gzip (4 connections, a second wrk process) are hammered at the same time.
    const soak = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
    const rss: number[] = [procRss(info.pid)];
    const sampler = setInterval(() => rss.push(procRss(info.pid)), 1000);
    const [r, a] = await Promise.all([
      runWrk(`${base}/metas?schema=olm.channel&package=${pkg0}`, 64, soak, {}),
      runWrk(`${base}/all`, 4, soak, { "Accept-Encoding": "gzip" }),
    ]);
    clearInterval(sampler);
    rss.push(procRss(info.pid));
    rows.push([
      `soak ${soak} s: metas channel`,
      "64",
      r.rps.toFixed(0),
      r.p50.toFixed(2),
      r.p99.toFixed(2),
      (r.bytesPerSec / 1e6).toFixed(0),
      String(r.errors),
    ]);
    rows.push([
      `soak ${soak} s: /all gzip, at the same time`,
      "4",
      a.rps.toFixed(0),
      a.p50.toFixed(2),
      a.p99.toFixed(2),
      (a.bytesPerSec / 1e6).toFixed(0),
      String(a.errors),
    ]);
    const samples = rss.filter((x) => x > 0);
    const mbs = samples.map((x) => (x / 1e6).toFixed(0));
    console.log(`server RSS during the ${soak} s soak, one sample per second (MB): ${mbs.join(" ")}`);
    if (samples.length > 0) {
      const [first, last, peak] = [samples[0], samples[samples.length - 1], Math.max(...samples)];
      console.log(
        `server RSS over the soak: start ${(first / 1e6).toFixed(0)} MB, end ${(last / 1e6).toFixed(0)} ` +
          `MB, peak ${(peak / 1e6).toFixed(0)} MB (end − start ${((last - first) / 1e6).toFixed(1)} MB)`,
      );
    }
  } else {
    const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
    console.log("HTTP client: autocannon (wrk not installed)\n");
    const http = async (label: string, path: string, headers: Record<string, string> = {}): Promise<void> => {
      const r = await autocannon({
        url: base + path,
        connections,
        duration: seconds,
        maxOverallRequests: 1000 * seconds,
        headers,
      });
      rows.push([
        label,
        String(connections),
        r.requests.average.toFixed(0),
        String(r.latency.p50),
        String(r.latency.p99),
        (r.throughput.average / 1e6).toFixed(1),
        String(r.non2xx + r.errors),
      ]);
    };
    await http("GET /all (identity)", "/all");
    await http("GET /all (gzip, pre-compressed)", "/all", { "accept-encoding": "gzip" });
    await http("GET /metas?schema=olm.package", "/metas?schema=olm.package");
    await http("GET /metas?schema=olm.channel&package=…", `/metas?schema=olm.channel&package=${pkg0}`);
  }

  const grpc = await import("@grpc/grpc-js");
  const { loadServiceDefinitions } = await import("../src/serve/index.js");
  const defs = loadServiceDefinitions();
  const Ctor = grpc.makeGenericClientConstructor(
    defs["api.Registry"] as import("@grpc/grpc-js").ServiceDefinition,
    "api.Registry",
  );
  const client = new Ctor(`127.0.0.1:${info.grpc}`, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
  }) as unknown as Record<string, (...a: unknown[]) => unknown> & { close(): void };
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
    rows.push([label, String(connections), (lat.length / secs).toFixed(0), pct(0.5), pct(0.99), "", String(errors)]);
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
  await grpcScenario(
    "gRPC GetBundleForChannel",
    () =>
      new Promise<void>(
        (res, rej) =>
          void client.GetBundleForChannel({ pkgName: pkg, channelName: channel }, (e: Error | null) =>
            e ? rej(e) : res(),
          ),
      ),
    1000 * seconds,
  );
  client.close();

  child.kill("SIGTERM");
  const rss = JSON.parse(await nextLine()) as { maxRssKiB: number };
  await once(child, "exit");
  rmSync(tmp, { recursive: true, force: true });
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
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

async function packageNames(base: string): Promise<string[]> {
  const r = await fetch(`${base}/metas?schema=olm.package`);
  return (await r.text())
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { name: string }).name);
}

async function defaultChannel(base: string, pkg: string): Promise<string> {
  const r = await fetch(`${base}/metas?schema=olm.package&name=${pkg}`);
  return (JSON.parse((await r.text()).split("\n")[0]) as { defaultChannel: string }).defaultChannel;
}

/** execFile as a promise (a function declaration: the benchmark runs before later consts initialise). */
function execFileP(
  file: string,
  args: string[],
  opts: { encoding: "utf8" },
): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(file, args, opts);
}

interface WrkResult {
  rps: number;
  bytesPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Runs wrk (2 threads, --latency, optionally a Lua script) and parses its summary; latencies in ms. */
async function runWrk(
  url: string,
  conns: number,
  secs: number,
  headers: Record<string, string>,
  script?: string,
): Promise<WrkResult> {
  const args = [
    "-t2",
    `-c${conns}`,
    `-d${secs}s`,
    "--latency",
    ...(script ? ["-s", script] : []),
    ...Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    url,
  ];
  const out = (await execFileP("wrk", args, { encoding: "utf8" })).stdout;
  const num = (re: RegExp): number => Number(re.exec(out)?.[1] ?? NaN);
  const unit: Record<string, number> = { us: 1e-3, ms: 1, s: 1000, B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };
  const lat = (p: string): number => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * unit[m[2]] : NaN;
  };
  const tm = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
  const errs = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    bytesPerSec: tm ? Number(tm[1]) * unit[tm[2]] : NaN,
    p50: lat("50"),
    p99: lat("99"),
    errors: (errs ? Number(errs[1]) : 0) + (sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  };
}

/** A process's resident set size in bytes (Linux /proc), 0 when unavailable. */
function procRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
