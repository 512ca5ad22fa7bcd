/**
 * Resolver benchmark (not a test): one and 100 subscriptions on the community catalogs (v4.16 +
 * v4.20 with priorities) and on a generated 20,000-bundle catalog with deep dependency chains and
 * GVK conflicts. Prints p50/p99/max ms over every run (the cold first run included, also shown on
 * its own) and peak RSS. Run: node --expose-gc --import tsx bench/resolve.ts
 * (BENCH_RESOLVE_COMMUNITY_ONLY=1 skips the generated catalog).
 */
import { join, resolve as resolvePath, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { loadCatalog, loadText } from "../src/fbc/load.js";
import { validateCatalog } from "../src/fbc/validate.js";
import { CatalogSet, resolve, type Input } from "../src/resolve/index.js";

const root = resolvePath(dirname(fileURLToPath(import.meta.url)), "..");
const shared = process.env.OPCAT_SHARED ?? resolvePath(root, "..", "shared");
let peak = 0;
const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));

/**
 * Runs `f(i)` `runs` times and prints p50/p99/max over every run (the first, cold one included).
 * A p99 needs at least 100 samples to differ from the maximum; the cold first call is also printed.
 */
function stats(name: string, f: (i: number) => void, runs: number): void {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    f(i);
    t.push(performance.now() - s);
    sample();
  }
  const first = t[0];
  t.sort((a, b) => a - b);
  const q = (p: number) => t[Math.min(t.length - 1, Math.floor(p * t.length))].toFixed(1);
  console.log(
    `${name.padEnd(52)} p50 ${q(0.5).padStart(7)} ms  p99 ${q(0.99).padStart(7)} ms  max ` +
      `${t[t.length - 1].toFixed(1).padStart(7)} ms  first ${first.toFixed(1).padStart(7)} ms  (${runs} runs)`,
  );
}

const subs = (pkgs: string[]): Input[] =>
  pkgs.map((p) => ({
    name: p,
    inputClass: "subscription",
    constraints: [{ type: "olm.catalog", value: { package: p } }],
  }));

function generated(nPkgs: number, perPkg: number): string {
  const out: string[] = [];
  for (let p = 0; p < nPkgs; p++) {
    const pkg = `pkg${p}`;
    out.push(JSON.stringify({ schema: "olm.package", name: pkg, defaultChannel: "stable" }));
    const entries = [];
    for (let v = 0; v < perPkg; v++)
      entries.push({ name: `${pkg}.v${v}`, ...(v > 0 ? { replaces: `${pkg}.v${v - 1}` } : {}) });
    out.push(JSON.stringify({ schema: "olm.channel", package: pkg, name: "stable", entries }));
    for (let v = 0; v < perPkg; v++) {
      const props: unknown[] = [{ type: "olm.package", value: { packageName: pkg, version: `${v}.0.0` } }];
      // GVK conflicts: packages p and p+1 (even p) provide the same kind; chains: p depends on p+2.
      props.push({ type: "olm.gvk", value: { group: `g${p >> 1}.io`, version: "v1", kind: "Shared" } });
      props.push({ type: "olm.gvk", value: { group: `own${p}.io`, version: "v1", kind: "Own" } });
      if (p + 2 < nPkgs)
        props.push({
          type: "olm.package.required",
          value: { packageName: `pkg${p + 2}`, versionRange: `>=${Math.max(0, v - 2)}.0.0` },
        });
      if (p + 4 < nPkgs && v % 3 === 0)
        props.push({ type: "olm.gvk.required", value: { group: `own${p + 4}.io`, version: "v1", kind: "Own" } });
      out.push(
        JSON.stringify({
          schema: "olm.bundle",
          package: pkg,
          name: `${pkg}.v${v}`,
          image: `quay.io/gen/${pkg}:v${v}`,
          properties: props,
        }),
      );
    }
  }
  return out.join("\n");
}

async function main(): Promise<void> {
  const dirs = [join(shared, "data/community/catalogs/v4.16"), join(shared, "data/community/catalogs/v4.20")];
  if (dirs.every(existsSync)) {
    const cats = [];
    for (const [i, d] of dirs.entries())
      cats.push({
        name: i === 0 ? "v4.16" : "v4.20",
        priority: i,
        model: validateCatalog((await loadCatalog(d)).config).model,
      });
    const s0 = performance.now();
    const set = new CatalogSet(cats);
    console.log(
      `community: ${set.entities.length} entities, CatalogSet built in ${(performance.now() - s0).toFixed(1)} ms`,
    );
    const pkgs = [...new Set(set.entities.map((e) => e.package))].sort();
    stats("community: 1 subscription (first package)", () => resolve({ catalogs: set, inputs: subs([pkgs[0]]) }), 1000);
    // Every package in turn: each package's first resolution (lazy per-bundle work) is among the samples.
    stats(
      `community: 1 subscription, ${pkgs.length} packages in turn`,
      (i) => resolve({ catalogs: set, inputs: subs([pkgs[i % pkgs.length]]) }),
      25 * pkgs.length,
    );
    const hundred = Array.from({ length: 100 }, (_, i) => pkgs[i % pkgs.length]).map((p, i) => ({
      ...subs([p])[0],
      name: `${p}-${i}`,
    }));
    stats(
      `community: 100 subscriptions (${pkgs.length} packages)`,
      () => resolve({ catalogs: set, inputs: hundred }),
      20,
    );
    sample();
    console.log(
      `community: peak RSS so far ${(peak / 1024 / 1024).toFixed(0)} MiB (both catalogs loaded and validated)`,
    );
  } else console.log(`community catalogs not found under ${shared}; skipped`);

  if (process.env.BENCH_RESOLVE_COMMUNITY_ONLY) return;
  const g0 = performance.now();
  const text = generated(400, 50);
  const v = validateCatalog(loadText(text, "gen.json").config);
  const set = new CatalogSet([{ name: "gen", model: v.model }]);
  console.log(
    `generated: ${set.entities.length} bundles, 400 packages, ` +
      `load+validate+index ${(performance.now() - g0).toFixed(0)} ms`,
  );
  sample();
  stats(
    "generated: 1 subscription (dependency chain of 200)",
    () => resolve({ catalogs: set, inputs: subs(["pkg0"]) }),
    10,
  );
  stats(
    "generated: 100 subscriptions",
    () => resolve({ catalogs: set, inputs: subs(Array.from({ length: 100 }, (_, i) => `pkg${i * 4 + 1}`)) }),
    5,
  );
  sample();
  console.log(`peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB`);
}

await main();
