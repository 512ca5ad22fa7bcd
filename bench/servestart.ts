/**
 * `opcat serve` start-up against `opm serve` (`BENCH_ONLY=servestart`, `OPM=/path/to/opm` for the opm
 * rows): the time from spawning the server until it answers a first gRPC health check
 * (`grpc.health.v1.Health/Check` → SERVING, the same probe for both tools, sent over raw HTTP/2 every
 * 2 ms until one succeeds), its peak RSS at that moment (VmHWM from /proc), and its peak RSS after
 * one whole `ListBundles` stream. Runs are paired (every case once per round, the order rotated each
 * round so that the machine's drift falls on all alike); medians are printed as a Markdown table
 * with the ratios to `opm serve` with its pre-built cache.
 *
 * opm listens on every interface (`:port`); so that nothing listens beyond loopback, the whole
 * benchmark runs in a private network namespace (`unshare -n`, loopback only) when it can; without
 * one the opm rows are left out and opcat listens on 127.0.0.1 as always.
 *
 * Catalog: ../shared/data/community/catalogs/v4.20 (BENCH_SERVESTART_CATALOG to change). The files
 * are in the page cache after the first run: every figure is a warm-file-cache start.
 * BENCH_SERVESTART_CASES (a regular expression) keeps only the cases whose names match it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { COMMUNITY } from "../test/shared.js";
import { median, peakRss } from "./shared.js";

const root = join(import.meta.dirname, "..");
const catalog = process.env.BENCH_SERVESTART_CATALOG ?? join(COMMUNITY, "catalogs", "v4.20");
const runs = Number(process.env.BENCH_RUNS ?? 5);
const opm = process.env.OPM;
const NETNS = "OPCAT_SERVESTART_NETNS";

if (!existsSync(catalog)) {
  console.log(`servestart: catalog ${catalog} not found (set OPCAT_SHARED or BENCH_SERVESTART_CATALOG)`);
  process.exit(0);
}

// Re-run inside a private network namespace (loopback only), where opm's ":port" is loopback too.
if (process.env[NETNS] === undefined) {
  const r = spawnSync(
    "unshare",
    [
      "-n",
      "sh",
      "-c",
      'ip link set lo up && exec "$@"',
      "sh",
      process.execPath,
      ...process.execArgv,
      import.meta.filename,
    ],
    { stdio: "inherit", env: { ...process.env, [NETNS]: "1" } },
  );
  if (r.status === 0) process.exit(0);
  console.log(
    `servestart: no private network namespace (unshare -n: ` +
      `${r.error?.message ?? `exit ${r.status}`}); opm rows left out (opm listens on every interface)`,
  );
  process.env[NETNS] = "0";
}
const isolated = process.env[NETNS] === "1";

const tmp = mkdtempSync(join(tmpdir(), "opcat-servestart-"));
// bin/opcat run as users run it (its shebang sets the V8 flags), with this Node first on PATH.
const opcat = [join(root, "bin", "opcat")];
process.env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
const GRPC_PORT = 50151;

interface Case {
  name: string;
  cmd: string[];
  /** Run once before the measured runs (e.g. to build a cache). */
  prepare?: string[];
  opm?: boolean;
}

const opcatServe = (...extra: string[]): string[] => [
  ...opcat,
  "serve",
  catalog,
  "--http",
  "127.0.0.1:0",
  "--grpc",
  `127.0.0.1:${GRPC_PORT}`,
  ...extra,
];
const opmServe = (...extra: string[]): string[] => [
  opm ?? "opm",
  "serve",
  catalog,
  "-p",
  String(GRPC_PORT),
  "-t",
  join(tmp, "termination-log"),
  ...extra,
];
const opcatIndex = join(tmp, "opcat-cache");
const opmCache = join(tmp, "opm-cache");
const cases: Case[] = [
  {
    name: "opm serve, pre-built cache (`--cache-dir`, integrity checked)",
    cmd: opmServe("--cache-dir", opmCache),
    prepare: [opm ?? "opm", "serve", catalog, "--cache-dir", opmCache, "--cache-only"],
    opm: true,
  },
  { name: "opm serve, no cache (builds one in a temporary directory)", cmd: opmServe(), opm: true },
  { name: "opcat serve, cold (no `--cache-dir`)", cmd: opcatServe() },
  {
    name: "opcat serve, persisted index (`--cache-dir`)",
    cmd: opcatServe("--cache-dir", opcatIndex),
    prepare: [...opcat, "serve", catalog, "--cache-dir", opcatIndex, "--cache-only"],
  },
]
  .filter((c) => !c.opm || (opm !== undefined && isolated))
  .filter((c) => new RegExp(process.env.BENCH_SERVESTART_CASES ?? "").test(c.name));

interface Sample {
  readyMs: number;
  hwmReady: number;
  hwmAfter: number;
  bundles: number;
}

/** One gRPC call over raw HTTP/2 with an empty request message; resolves to the status and the body size. */
function grpcCall(path: string): Promise<{ status: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${GRPC_PORT}`);
    session.on("error", (e) => {
      session.destroy();
      reject(e);
    });
    session.on("connect", () => {
      const req = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
      });
      let bytes = 0;
      let status = "";
      req.on("response", (h) => {
        if (h["grpc-status"] !== undefined) status = String(h["grpc-status"]);
      });
      req.on("trailers", (t) => {
        status = String(t["grpc-status"] ?? "");
      });
      req.on("data", (c: Buffer) => {
        bytes += c.length;
      });
      req.on("end", () => {
        session.close();
        resolve({ status, bytes });
      });
      req.on("error", (e) => {
        session.destroy();
        reject(e);
      });
      req.end(Buffer.alloc(5)); // one empty message: flag 0, length 0
    });
  });
}

async function measure(c: Case): Promise<Sample> {
  const started = performance.now();
  const child: ChildProcess = spawn(c.cmd[0], c.cmd.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    if (stderr.length < 1 << 16) stderr += d.toString();
  });
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  try {
    for (;;) {
      if (exited) throw new Error(`${c.name}: exited before it answered:\n${stderr}`);
      const r = await grpcCall("/grpc.health.v1.Health/Check").catch(() => undefined);
      if (r?.status === "0") break;
      await sleep(2);
    }
    const readyMs = performance.now() - started;
    const pid = child.pid ?? 0;
    const hwmReady = peakRss(pid);
    const list = await grpcCall("/api.Registry/ListBundles");
    if (list.status !== "0") throw new Error(`${c.name}: ListBundles answered status ${list.status}`);
    return { readyMs, hwmReady, hwmAfter: peakRss(pid), bundles: list.bytes };
  } finally {
    if (!exited) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }
}

try {
  for (const c of cases) {
    if (!c.prepare) continue;
    const r = spawnSync(c.prepare[0], c.prepare.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`preparing ${c.name} failed (${r.status}):\n${r.stderr}`);
  }
  const samples = new Map<Case, Sample[]>(cases.map((c) => [c, []]));
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < cases.length; j++) {
      const c = cases[(i + j) % cases.length];
      samples.get(c)?.push(await measure(c));
    }
  }
  const rows = cases.map((c) => {
    const s = samples.get(c) ?? [];
    const ready = s.map((x) => x.readyMs);
    return {
      c,
      ready: median(ready),
      min: Math.min(...ready),
      max: Math.max(...ready),
      hwm: median(s.map((x) => x.hwmReady)),
      after: median(s.map((x) => x.hwmAfter)),
      bytes: s[0]?.bundles ?? 0,
    };
  });
  const base = rows.find((r) => r.c === cases[0] && r.c.opm);
  console.log(
    `serve start-up: ${catalog}, ${runs} paired runs, medians; node ${process.version}; ` +
      `${isolated ? "private network namespace (loopback only)" : "no network namespace"}`,
  );
  console.log(
    "\n| start-up (until the first gRPC health check answers) | ready ms | range ms | peak RSS at ready " +
      "MiB | peak RSS after ListBundles MiB | ListBundles bytes | ready / opm cached | RSS / opm cached |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const ratio = (a: number, b: number | undefined): string => (b ? (a / b).toFixed(2) : "–");
    console.log(
      `| ${r.c.name} | ${r.ready.toFixed(0)} | ${r.min.toFixed(0)}–${r.max.toFixed(0)} | ${r.hwm.toFixed(0)} ` +
        `| ${r.after.toFixed(0)} | ${r.bytes} | ${ratio(r.ready, base?.ready)} | ${ratio(r.after, base?.after)} |`,
    );
  }
  if (!opm) console.log("\n(set OPM=/path/to/opm for the opm rows)");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
