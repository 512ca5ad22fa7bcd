#!/usr/bin/env node
// Runs chosen test files N times, each run on a fresh test cluster (scripts/run-tests.mjs starts
// one), with CPU hogs beside them, and reports every run: its tests' counts, its time, and for a
// failed run the failing tests' names and messages plus the folder its diagnostics were kept in.
//
//   npm run test:soak -- [--runs N] [--hogs K] [--keep-going] <test files or folders>...
//   e.g. npm run test:soak -- --runs 5 test/cluster/deppy.test.ts
//        npm run test:soak -- --runs 5 test/node
//
// --runs N      how many runs (default 5)
// --hogs K      CPU hogs (busy-loop processes) beside each run (default 1:
//               on 2 cores, half the machine is taken, as by a parallel job on a CI host)
// --keep-going  go on after a failed run (default: stop at the first failure, whose logs are then
//               the newest in .test-logs/)
// Exit code: 0 when every run passed, 1 otherwise. Each run's full output is kept in
// .test-logs/soak/<stamp>/run-<i>.log, and the test cluster's logs of a failed run beside it.
// Nothing here waits for a time to pass: a hog is a child process killed when its run ends.
import { spawn } from "node:child_process";
import { cpSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
let runs = 5;
let hogs = 1;
let keepGoing = false;
const targets = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--runs") runs = Number(argv[++i]);
  else if (a === "--hogs") hogs = Number(argv[++i]);
  else if (a === "--keep-going") keepGoing = true;
  else if (a === "-h" || a === "--help") {
    process.stdout.write(readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0]);
    process.exit(0);
  } else targets.push(a);
}
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(hogs) || hogs < 0 || targets.length === 0) {
  process.stderr.write("usage: npm run test:soak -- [--runs N] [--hogs K] [--keep-going] <test files>...\n");
  process.exit(2);
}

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const out = join(root, ".test-logs", "soak", stamp);
mkdirSync(out, { recursive: true });

/** A busy loop in its own process (no I/O, no network), killed by stopHogs. */
function startHogs() {
  const children = [];
  for (let i = 0; i < hogs; i++)
    children.push(spawn(process.execPath, ["-e", "for(;;){Math.sqrt(Math.random())}"], { stdio: "ignore" }));
  return () => {
    for (const c of children) c.kill("SIGKILL");
  };
}

/** The names and first message lines of the failed tests in a spec report. */
function failures(text) {
  const lines = text.split("\n");
  const found = [];
  const start = lines.findIndex((l) => /^✖ failing tests:/.test(l));
  const from = start >= 0 ? lines.slice(start + 1) : lines;
  for (let i = 0; i < from.length && found.length < 20; i++) {
    const m = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/.exec(from[i]);
    if (!m) continue;
    const detail = from
      .slice(i + 1, i + 8)
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith("at ") && !l.startsWith("✖"));
    found.push(`${m[1]}${detail ? `\n      ${detail.slice(0, 400)}` : ""}`);
  }
  return [...new Set(found)];
}

function runOnce(i) {
  return new Promise((resolve) => {
    const log = join(out, `run-${i}.log`);
    const file = createWriteStream(log);
    const stopHogs = startHogs();
    const t0 = Date.now();
    let text = "";
    const child = spawn(process.execPath, [join(root, "scripts", "run-tests.mjs"), ...targets], {
      cwd: root,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const take = (chunk) => {
      text += chunk;
      file.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("close", (code) => {
      stopHogs();
      file.end();
      const seconds = ((Date.now() - t0) / 1000).toFixed(0);
      const summary = /^tests: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/m.exec(text);
      const passed = Number(summary?.[1] ?? 0);
      const failed = Number(summary?.[2] ?? 0);
      const skipped = Number(summary?.[3] ?? 0);
      const ok = code === 0 && summary !== null && failed === 0 && skipped === 0;
      let kept = "";
      if (!ok) {
        // run-tests keeps the failed cluster's logs in .test-logs/cluster or node: copy them beside the run
        for (const name of ["cluster", "node"]) {
          const from = join(root, ".test-logs", name);
          if (!existsSync(from)) continue;
          cpSync(from, join(out, `run-${i}-${name}`), { recursive: true });
          rmSync(from, { recursive: true, force: true });
          kept += ` ${join(out, `run-${i}-${name}`)}`;
        }
      }
      resolve({ i, ok, code, passed, failed, skipped, seconds, log, kept, failures: ok ? [] : failures(text) });
    });
  });
}

process.stdout.write(
  `soak: ${runs} run(s) of ${targets.join(" ")} with ${hogs} CPU hog(s) beside each; logs in ${out}\n`,
);
const results = [];
for (let i = 1; i <= runs; i++) {
  // a stale copy from an earlier run would be taken for this run's
  for (const name of ["cluster", "node"]) rmSync(join(root, ".test-logs", name), { recursive: true, force: true });
  const r = await runOnce(i);
  results.push(r);
  process.stdout.write(
    `soak: run ${i}/${runs}: ${r.ok ? "passed" : "FAILED"} in ${r.seconds} s ` +
      `(${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ""}, exit ${r.code})\n`,
  );
  for (const f of r.failures) process.stdout.write(`    ✖ ${f}\n`);
  if (!r.ok) process.stdout.write(`    output: ${r.log}${r.kept ? `\n    cluster logs:${r.kept}` : ""}\n`);
  if (!r.ok && !keepGoing) break;
}
const bad = results.filter((r) => !r.ok).length;
process.stdout.write(
  `soak: ${results.length - bad} of ${results.length} run(s) passed` +
    `${results.length < runs ? ` (stopped after the first failure of ${runs} planned)` : ""}\n`,
);
process.exit(bad === 0 && results.length === runs ? 0 : 1);
