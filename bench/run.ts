/**
 * `npm run bench`: load, validate and render throughput and peak RSS on (a) the v4.16 and v4.20
 * community catalogs merged into one catalog and (b) generated JSON catalogs of 1k–10k bundles,
 * beside the bare parse of the same bytes. Each figure is the median of several runs, each in a
 * fresh process; two "warm" rows time a second pass of the bare parse and of load + validate within
 * one process (the steady state). Results are printed as a Markdown table (paste into docs/benchmarks.md).
 * Then, each in its own process: bundle rendering and image pulls (bench/images.ts, needs Debian's
 * docker-registry), and the SAT solver (bench/sat.ts).
 * `BENCH_ONLY=fbc|images|sat|resolve|templates|serve|cluster|extensions|deppy|vsopm|servestart|ui|uiscale|allgzip`
 * runs one part (extensions: bench/extensions.ts, a ClusterCatalog and 20 ClusterExtensions installed and
 * upgraded; serve: bench/serve.ts, load on `opcat serve` with wrk or autocannon in a separate process; uiscale:
 * bench/uiscale.ts, the UI on a 100,000-package catalog and a 10 MB description in Chromium; allgzip:
 * bench/allgzip.ts, `/api/v1/all` of community v4.20 with and without gzip).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generateJsonCatalog, mergeCommunityCatalogs } from "./generate.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const community = join(process.env.OPCAT_SHARED ?? resolve(root, "..", "shared"), "data", "community");
const runs = Number(process.env.BENCH_RUNS ?? 3);
const stages = ["parse", "load", "validate", "render-yaml", "render-json"] as const;
// Second passes in one process (see worker.ts): the steady state, compared warm with warm.
const warmStages = ["parse-warm", "validate-warm"] as const;

interface Sample {
  ms: number;
  bytes: number;
  maxRssBytes: number;
}

function runWorker(dir: string, stage: string): Sample {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "bench", "worker.ts"), dir, stage], {
    cwd: root,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`worker ${stage} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop() as string) as Sample;
}

function summarise(samples: Sample[]): Sample {
  samples.sort((a, b) => a.ms - b.ms);
  const med = samples[Math.floor(samples.length / 2)];
  return { ms: med.ms, bytes: med.bytes, maxRssBytes: Math.max(...samples.map((s) => s.maxRssBytes)) };
}

/**
 * Every stage `runs` times, in rounds (each round runs every stage once), so that the machine's
 * drift over minutes falls on all stages alike instead of on whichever stage ran last.
 */
function measureStages(dir: string, list: readonly string[]): Map<string, Sample> {
  const samples = new Map<string, Sample[]>(list.map((s) => [s, []]));
  for (let i = 0; i < runs; i++) for (const s of list) samples.get(s)?.push(runWorker(dir, s));
  return new Map(list.map((s) => [s, summarise(samples.get(s) ?? [])]));
}

const mb = (b: number): string => (b / 1e6).toFixed(1);

let baseline: Sample | undefined;

function scenario(name: string, dir: string): void {
  baseline ??= measureStages(dir, ["baseline"]).get("baseline");
  if (!baseline) throw new Error("no baseline");
  const base = baseline.maxRssBytes;
  const res = measureStages(dir, [...stages, ...warmStages]);
  const parse = res.get("parse") as Sample;
  const parseWarm = res.get("parse-warm") as Sample;
  console.log(`\n### ${name} (${mb(parse.bytes)} MB input)\n`);
  console.log(`Process RSS floor (code loaded, nothing read): ${mb(base)} MB.\n`);
  console.log("| stage | time (ms) | MB/s | peak RSS (MB) | RSS above floor / input | vs bare parse |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const s of [...stages, ...warmStages]) {
    const x = res.get(s) as Sample;
    const rate = x.bytes / 1e6 / (x.ms / 1000);
    const limit = s.endsWith("-warm") ? parseWarm : parse;
    const parseRate = limit.bytes / 1e6 / (limit.ms / 1000);
    const label =
      s === "parse"
        ? "bare parse (limit)"
        : s === "load"
          ? "load"
          : s === "validate"
            ? "load + validate"
            : s === "parse-warm"
              ? "warm: bare parse, second pass (limit)"
              : s === "validate-warm"
                ? "warm: load + validate, second pass"
                : `load + validate + ${s}`;
    const ratio = s === "parse" || s === "parse-warm" ? "100%" : ((rate / parseRate) * 100).toFixed(0) + "%";
    // A second pass's peak RSS includes the first pass: not a figure against the input size.
    const rssRatio = s.endsWith("-warm") ? "—" : ((x.maxRssBytes - base) / x.bytes).toFixed(2);
    console.log(
      `| ${label} | ${x.ms.toFixed(0)} | ${rate.toFixed(1)} | ${mb(x.maxRssBytes)} | ${rssRatio} | ${ratio} |`,
    );
  }
}

const only = process.env.BENCH_ONLY;

function sub(script: string, args: string[] = []): void {
  console.log(`\n## ${script}\n`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "bench", script), ...args], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) console.log(`(${script} exited with ${r.status})`);
}

const tmp = mkdtempSync(join(tmpdir(), "opcat-bench-"));
if (!only || only === "fbc")
  try {
    console.log(`opcat benchmark: node ${process.version}, ${runs} runs per figure (median time, max peak RSS)`);
    if (existsSync(community)) {
      const merged = join(tmp, "community-merged");
      await mergeCommunityCatalogs(community, merged);
      scenario("community v4.16 + v4.20 merged (YAML)", merged);
      // The same real bundles as JSON (opm's JSON output): real bundle sizes (tens of KB of manifests
      // each) instead of the generated catalog's 3.4 KB bundles.
      const mergedJson = join(tmp, "community-merged-json");
      await mergeCommunityCatalogs(community, mergedJson, "json");
      scenario("community v4.16 + v4.20 merged (JSON)", mergedJson);
    } else {
      console.log(`\n(community data not found at ${community}: skipping the real-data scenario)`);
    }
    for (const n of [1000, 2000, 5000, 10000]) {
      const dir = join(tmp, `gen-${n}`);
      generateJsonCatalog(dir, n);
      scenario(`generated ${n} bundles (JSON)`, dir);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
if (!only || only === "images") sub("images.ts", [process.env.BENCH_IMAGES ?? "40"]);
if (!only || only === "sat") sub("sat.ts");
if (!only || only === "resolve") sub("resolve.ts");
if (!only || only === "templates") sub("templates.ts");
if (!only || only === "serve") sub("serve.ts");
if (!only || only === "cluster") sub("cluster.ts");
if (!only || only === "extensions") sub("extensions.ts");
if (!only || only === "deppy") sub("deppy.ts");
if (!only || only === "vsopm") sub("vsopm.ts");
if (!only || only === "servestart") sub("servestart.ts");
if (!only || only === "ui") sub("ui.ts");
if (!only || only === "uiscale") sub("uiscale.ts");
if (!only || only === "allgzip") sub("allgzip.ts");
