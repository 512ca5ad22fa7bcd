/**
 * One benchmark measurement in a fresh process (so that peak RSS belongs to it alone):
 *   worker.ts <dir> <stage>   stage = baseline | parse | load | validate | render-yaml | render-json
 *                             | parse-warm | validate-warm
 * Prints one JSON line: {stage, ms, bytes, maxRssBytes}. The -warm stages run the same work once
 * untimed, then time a second pass in the same process (JIT warm, heap grown): the steady state a
 * long-running process (opcat serve, a library user loading many catalogs) sees.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { load as yamlLoad, loadAll as yamlLoadAll } from "js-yaml";

// The compiled library in dist/ is what `bin/opcat` runs (npm run bench builds it first); tsx's
// transpiled sources add per-closure overhead (keepNames) that users never pay. BENCH_SRC=1 measures src/.
const lib = process.env.BENCH_SRC ? "../src/" : "../dist/";
const ext = process.env.BENCH_SRC ? ".ts" : ".js";
const mod = <T>(path: string): Promise<T> => import(new URL(lib + path + ext, import.meta.url).href) as Promise<T>;
const { loadDirectory } = await mod<typeof import("../src/fbc/load.js")>("fbc/load");
const { normalizeForRender } = await mod<typeof import("../src/fbc/render.js")>("fbc/render");
const { validateCatalog } = await mod<typeof import("../src/fbc/validate.js")>("fbc/validate");
const { writeJson, writeYaml } = await mod<typeof import("../src/fbc/write.js")>("fbc/write");
const { findJsonValueEnd, skipJsonSpace } = await mod<typeof import("../src/gojson/scan.js")>("gojson/scan");

const [dir, stage] = process.argv.slice(2);

function files(d: string, out: string[] = []): string[] {
  for (const name of readdirSync(d).sort()) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (name !== ".indexignore") out.push(p);
  }
  return out;
}

/** The bare parse of the same bytes: JSON.parse per object, or js-yaml on each file. */
function bareParse(): number {
  let bytes = 0;
  let count = 0;
  for (const f of files(dir)) {
    const text = readFileSync(f, "utf8");
    bytes += Buffer.byteLength(text);
    if (text.trimStart().startsWith("{")) {
      let pos = 0;
      for (;;) {
        const start = skipJsonSpace(text, pos);
        if (start >= text.length) break;
        const end = findJsonValueEnd(text, start);
        JSON.parse(text.slice(start, end));
        count++;
        pos = end;
      }
    } else {
      yamlLoadAll(text, () => count++);
    }
  }
  void yamlLoad;
  return bytes;
}

function loadAndValidate(): number {
  const res = loadDirectory(dir);
  if (res.problems.length) throw new Error(`load problems: ${res.problems[0].message}`);
  const v = validateCatalog(res.config);
  if (v.problems.length) throw new Error(`validation problems: ${v.problems[0].message}`);
  return res.bytes;
}

if (stage === "parse-warm") bareParse();
else if (stage === "validate-warm") loadAndValidate();

const t0 = performance.now();
let bytes = 0;
if (stage === "baseline") {
  bytes = 0; // the process with the code loaded and nothing done: the RSS floor
} else if (stage === "parse" || stage === "parse-warm") {
  bytes = bareParse();
} else if (stage === "validate-warm") {
  bytes = loadAndValidate();
} else {
  const res = loadDirectory(dir);
  if (res.problems.length) throw new Error(`load problems: ${res.problems[0].message}`);
  bytes = res.bytes;
  if (stage !== "load") {
    const v = validateCatalog(res.config);
    if (v.problems.length) throw new Error(`validation problems: ${v.problems[0].message}`);
  }
  if (stage === "render-yaml" || stage === "render-json") {
    normalizeForRender(res.config);
    let out = 0;
    (stage === "render-yaml" ? writeYaml : writeJson)(res.config, (s) => (out += s.length));
    if (out === 0) throw new Error("nothing rendered");
  }
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ stage, ms, bytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + "\n");
