/**
 * Micro-benchmark of the SAT core (src/resolve/sat): `node --import tsx bench/sat.ts`.
 * Prints wall-clock milliseconds for random 3-SAT (n=200, ratio 4.26), pigeonhole PHP(8,7) and
 * PHP(9,8), and an OLM-shaped deppy problem (1000 packages × 20 versions with dependencies,
 * package uniqueness and GVK at-most-one). All instances come from a fixed seed.
 */
import { performance } from "node:perf_hooks";
import {
  Solver,
  atMost,
  dependency,
  mandatory,
  solve,
  variable,
  type Constraint,
  type Variable,
} from "../src/resolve/sat/index.js";
import { prng } from "../test/shared.js";

let lastCpuMs = 0;

/** Wall-clock ms of `f` (its CPU ms, user+system, is left in `lastCpuMs`: steadier on a busy host). */
function time<T>(f: () => T): [number, T] {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = f();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  lastCpuMs = (c.user + c.system) / 1000;
  return [ms, r];
}

function random3Sat(n: number, ratio: number, seed: number): number[][] {
  const r = prng(seed);
  const m = Math.round(n * ratio);
  const cnf: number[][] = [];
  for (let i = 0; i < m; i++) {
    const cl: number[] = [];
    while (cl.length < 3) {
      const v = 1 + Math.floor(r() * n);
      if (cl.some((l) => Math.abs(l) === v)) continue;
      cl.push(r() < 0.5 ? -v : v);
    }
    cnf.push(cl);
  }
  return cnf;
}

function solveCnf(n: number, cnf: number[][]): number {
  const s = new Solver();
  for (let i = 0; i < n; i++) s.newVar();
  for (const cl of cnf) s.addClause(cl);
  return s.solve();
}

function pigeonhole(p: number, h: number): [number, number[][]] {
  const v = (i: number, j: number) => i * h + j + 1;
  const cnf: number[][] = [];
  for (let i = 0; i < p; i++) cnf.push(Array.from({ length: h }, (_, j) => v(i, j)));
  for (let j = 0; j < h; j++)
    for (let a = 0; a < p; a++) for (let b = a + 1; b < p; b++) cnf.push([-v(a, j), -v(b, j)]);
  return [p * h, cnf];
}

/**
 * Packages p0..p999, each with versions v0 (newest) .. v19. Each bundle depends on 0–2 other
 * packages (a window of up to 8 acceptable versions, newest first); every package provides one
 * GVK, and some GVKs are provided by two packages. 50 packages are required.
 */
function olmInstance(packages: number, versions: number, required: number, seed: number): Variable[] {
  const r = prng(seed);
  const vars: Variable[] = [];
  const bid = (p: number, k: number) => `p${p}.v${k}`;
  const gvkOf = (p: number) => (p % 10 === 9 ? p - 1 : p); // every 10th package shares its neighbour's GVK
  for (let p = 0; p < packages; p++) {
    for (let k = 0; k < versions; k++) {
      const cs: Constraint[] = [];
      const deps = Math.floor(r() * 3);
      for (let d = 0; d < deps; d++) {
        const q = Math.floor(r() * packages);
        if (q === p) continue;
        const lo = Math.floor(r() * versions);
        const ids: string[] = [];
        for (let j = lo; j < Math.min(versions, lo + 8); j++) ids.push(bid(q, j));
        cs.push(dependency(...ids));
      }
      vars.push(variable(bid(p, k), ...cs));
    }
  }
  for (let i = 0; i < required; i++) {
    const p = Math.floor((i * packages) / required);
    vars.push(
      variable(
        `required package p${p}`,
        mandatory(),
        dependency(...Array.from({ length: versions }, (_, k) => bid(p, k))),
      ),
    );
  }
  for (let p = 0; p < packages; p++) {
    vars.push(
      variable(
        `p${p} package uniqueness`,
        mandatory(),
        atMost(1, ...Array.from({ length: versions }, (_, k) => bid(p, k))),
      ),
    );
  }
  const byGvk = new Map<number, string[]>();
  for (let p = 0; p < packages; p++) {
    const g = gvkOf(p);
    const list = byGvk.get(g) ?? [];
    for (let k = 0; k < versions; k++) list.push(bid(p, k));
    byGvk.set(g, list);
  }
  for (const [g, ids] of byGvk) vars.push(variable(`gvk${g} uniqueness`, mandatory(), atMost(1, ...ids)));
  return vars;
}

const rows: [string, string][] = [];

{
  const times: number[] = [];
  const outcomes: number[] = [];
  let cpu = 0;
  for (let i = 0; i < 5; i++) {
    const cnf = random3Sat(200, 4.26, 1000 + i);
    const [ms, r] = time(() => solveCnf(200, cnf));
    cpu += lastCpuMs;
    times.push(ms);
    outcomes.push(r);
  }
  rows.push([
    "random 3-SAT n=200 m=852 ×5",
    `${times.map((t) => t.toFixed(0)).join(" / ")} ms, total cpu ${cpu.toFixed(0)} ` +
      `ms (${outcomes.map((o) => (o === 1 ? "SAT" : "UNSAT")).join(" ")})`,
  ]);
}
for (const [p, h] of [
  [8, 7],
  [9, 8],
]) {
  const [n, cnf] = pigeonhole(p, h);
  const [ms, r] = time(() => solveCnf(n, cnf));
  rows.push([
    `pigeonhole PHP(${p},${h})`,
    `${ms.toFixed(0)} ms, cpu ${lastCpuMs.toFixed(0)} ms (${r === -1 ? "UNSAT" : "SAT?!"})`,
  ]);
}
{
  const [buildMs, vars] = time(() => olmInstance(1000, 20, 50, 42));
  const [ms, r] = time(() => solve(vars));
  const cpu = lastCpuMs;
  const what = "selected" in r ? `${r.selected.length} selected` : "unsat" in r ? `unsat (${r.unsat.length})` : r.error;
  rows.push([
    "OLM-shaped 1000 pkgs × 20 versions, 50 required",
    `${ms.toFixed(0)} ms, cpu ${cpu.toFixed(0)} ms (${what}; ` +
      `${vars.length} variables, input built in ${buildMs.toFixed(0)} ms)`,
  ]);
  const [ms2] = time(() => solve(vars));
  rows.push(["  same, second run (warm JIT)", `${ms2.toFixed(0)} ms, cpu ${lastCpuMs.toFixed(0)} ms`]);
}

for (const [k, val] of rows) console.log(`${k.padEnd(50)} ${val}`);
