// The layers of opcat (docs/architecture.md): leaves import nothing from the rest of it, each layer only
// what lies below it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../src");
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every module a non-test source file under `dir` imports, as paths relative to src (or bare names). */
function importsOf(dir: string): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if ((e.name.endsWith(".ts") || e.name.endsWith(".tsx")) && !e.name.endsWith(".test.ts")) {
        for (const m of readFileSync(p, "utf8").matchAll(SPECIFIER)) {
          const spec = m[1] ?? m[2];
          const target = spec.startsWith(".") ? relative(SRC, resolve(dirname(p), spec)) : spec;
          out.push({ file: relative(SRC, p), target });
        }
      }
    }
  };
  walk(join(SRC, dir));
  return out;
}

for (const leaf of ["gojson", "reference", "errors"]) {
  test(`src/${leaf} imports only itself and node: built-ins`, () => {
    const outside = importsOf(leaf).filter((i) => !i.target.startsWith(`${leaf}/`) && !i.target.startsWith("node:"));
    assert.deepEqual(outside, []);
  });
}

test("src/fbc does not import src/image (it uses the leaf src/reference)", () => {
  assert.deepEqual(
    importsOf("fbc").filter((i) => i.target.startsWith("image/")),
    [],
  );
});

test("only src/yaml imports a YAML library (js-yaml, yaml): one decoder per purpose, chosen there", () => {
  const outside = importsOf("")
    .filter((i) => i.target === "js-yaml" || i.target === "yaml")
    .filter((i) => !i.file.startsWith("yaml/"));
  assert.deepEqual(outside, []);
});

test("src/image is a transport: no catalog loading, validation, rendering or writing, no actions", () => {
  // index.ts is the package's `opcat/image` entry: it re-exports what moved to src/action, unchanged API.
  const allowed = new Set(["fbc/writeall.js", "bundle/read.js"]);
  const bad = importsOf("image")
    .filter((i) => i.file !== "image/index.ts")
    .filter((i) => /^(fbc|bundle|action|template|serve|cluster|resolve)\//.test(i.target) && !allowed.has(i.target));
  assert.deepEqual(bad, []);
});

test("src/serve is the catalog server only: it imports nothing of the web layer, the controllers or above", () => {
  const bad = importsOf("serve").filter((i) => /^(web|cluster|action|cli|ui)\//.test(i.target));
  assert.deepEqual(bad, []);
});

test("neither the catalog server nor the controllers import the web layer (src/web)", () => {
  const bad = [...importsOf("serve"), ...importsOf("cluster")].filter((i) => i.target.startsWith("web/"));
  assert.deepEqual(bad, []);
});
