// The layers of opcat (docs/architecture.md): leaves import nothing from the rest of it, each layer only
// what lies below it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../src");
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
/** The same, telling `import type` / `export type` (erased: no module loads) from the rest. */
const TYPED =
  /(?:^|[\s;])(import|export)(\s+type)?\s[^'"`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

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

test("src/fsx (atomic writes, staged names, safe reads) imports only node: built-ins and the errors leaf", () => {
  const outside = importsOf("fsx").filter(
    (i) => !i.target.startsWith("fsx/") && !i.target.startsWith("node:") && !i.target.startsWith("errors/"),
  );
  assert.deepEqual(outside, []);
});

test("src/cluster/kube (the controllers' kernel) imports nothing of the API groups, the runtime or opcat", () => {
  const outside = importsOf("cluster/kube").filter(
    (i) => !i.target.startsWith("cluster/kube/") && (i.target.includes("/") || i.target.startsWith(".")),
  );
  // libraries (a bare name, maybe with a subpath) and node: built-ins are fine
  assert.deepEqual(
    outside.filter((i) => !/^(@[\w.-]+\/)?[\w.-]+(\/[\w./-]+)?$/.test(i.target) || i.target.split("/")[0] in LOCAL),
    [],
  );
});

/** The top folders of src: a bare import naming one is opcat's, not a library's. */
const LOCAL: Record<string, true> = Object.fromEntries(
  readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => [e.name, true]),
);

/**
 * The folders of src/cluster from the bottom up: each imports only its own folder and those before it.
 * The root of src/cluster (run.ts, manifests.ts, health.ts, servingcert.ts) composes them all.
 */
const CLUSTER_LAYERS = [["kube"], ["runtime"], ["upstream"], ["rukpak"], ["catalogd"], ["deppy", "olm"], ["operators"]];

test("the folders of src/cluster import only downward (kube → runtime → groups → composition)", () => {
  const rank = (folder: string): number => {
    const i = CLUSTER_LAYERS.findIndex((l) => l.includes(folder));
    return i < 0 ? CLUSTER_LAYERS.length : i;
  };
  const folderOf = (p: string): string => (p.split("/").length > 2 ? p.split("/")[1] : "");
  const bad = allImports()
    .filter((i) => i.file.startsWith("cluster/") && i.target.startsWith("cluster/"))
    .filter((i) => {
      const from = folderOf(i.file);
      const to = folderOf(i.target);
      return from !== to && (from === "" ? false : to === "" || rank(to) >= rank(from));
    })
    .map((i) => `${i.file} → ${i.target}`);
  assert.deepEqual(bad, []);
});

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
  const allowed = new Set(["bundle/read.js"]);
  const bad = importsOf("image")
    .filter((i) => i.file !== "image/index.ts")
    .filter((i) => /^(fbc|bundle|action|template|serve|cluster|resolve)\//.test(i.target) && !allowed.has(i.target));
  assert.deepEqual(bad, []);
});

test("src/serve is the catalog server only: it imports nothing of the web layer, the controllers or above", () => {
  const bad = importsOf("serve").filter((i) => /^(web|cluster|action|cli|ui)\//.test(i.target));
  assert.deepEqual(bad, []);
});

test("the browser code (src/ui) imports of the rest only the UI API's types and leaves made to share", () => {
  const shared = new Set(["web/uitypes.js", "web/uiblob.js", "semver/index.js", "yaml/yaml12.js"]);
  const bad = allImports().filter(
    (i) =>
      i.file.startsWith("ui/") &&
      i.target.split("/")[0] in LOCAL &&
      !i.target.startsWith("ui/") &&
      !shared.has(i.target),
  );
  assert.deepEqual(bad, []);
});

test("src/web/uiblob.ts, shared with the browser, imports nothing", () => {
  assert.deepEqual(
    allImports().filter((i) => i.file === "web/uiblob.ts"),
    [],
  );
});

test("neither the catalog server nor the controllers import the web layer (src/web)", () => {
  const bad = [...importsOf("serve"), ...importsOf("cluster")].filter((i) => i.target.startsWith("web/"));
  assert.deepEqual(bad, []);
});

/** Every import of every non-test source file in src, with whether it is type-only. */
function allImports(): { file: string; target: string; typeOnly: boolean }[] {
  const out: { file: string; target: string; typeOnly: boolean }[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "testdata") walk(p);
      } else if ((e.name.endsWith(".ts") || e.name.endsWith(".tsx")) && !e.name.endsWith(".test.ts")) {
        for (const m of readFileSync(p, "utf8").matchAll(TYPED)) {
          const spec = m[3] ?? m[4];
          const target = spec.startsWith(".") ? relative(SRC, resolve(dirname(p), spec)) : spec;
          out.push({ file: relative(SRC, p), target, typeOnly: m[2] !== undefined });
        }
      }
    }
  };
  walk(SRC);
  return out;
}

test("no import cycle between the files of src (static, dynamic and type-only imports alike)", () => {
  const graph = new Map<string, string[]>();
  for (const i of allImports()) {
    if (!i.target.includes("/") || !/\.(js|ts|tsx)$/.test(i.target)) continue;
    const to = i.target.replace(/\.js$/, ".ts");
    graph.set(i.file, [...(graph.get(i.file) ?? []), to]);
  }
  const node = (f: string): string => (graph.has(f) ? f : f.replace(/\.ts$/, ".tsx"));
  // depth-first search; a file met again while on the path closes a cycle
  const state = new Map<string, "open" | "done">();
  const cycles: string[][] = [];
  const visit = (f: string, path: string[]): void => {
    state.set(f, "open");
    for (const t of graph.get(f) ?? []) {
      const n = node(t);
      if (state.get(n) === "open") cycles.push([...path.slice(path.indexOf(n)), n]);
      else if (!state.has(n)) visit(n, [...path, n]);
    }
    state.set(f, "done");
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f, [f]);
  assert.deepEqual(cycles, []);
});

/** What the CLI may load: the actions, the errors leaf, itself, and the small leaves its flags need. */
const CLI_ALLOWED = [
  /^action\//,
  /^errors\//,
  /^cli\//,
  /^version\.js$/,
  // flag leaves: definitions, defaults and parsing of flag values, error texts of flag values
  /^fbc\/migrations\.js$/,
  /^image\/access\.js$/,
  /^image\/dockerfile\.js$/,
  /^gojson\/duration\.js$/,
  /^gojson\/fmt\.js$/,
  /^cluster\/kube\/names\.js$/,
  // writing every byte of the output (node-only)
  /^fsx\/write\.js$/,
];
test("the CLI loads only actions, the errors leaf and its flag leaves (type-only imports aside)", () => {
  const bad = allImports()
    .filter((i) => i.file.startsWith("cli/") && !i.typeOnly && i.target.includes("/"))
    .filter((i) => !CLI_ALLOWED.some((r) => r.test(i.target)));
  assert.deepEqual(bad, []);
});

test("src/cli/main.ts (render, validate, render-graph, list, init, migrate) loads only actions and flag leaves", () => {
  const bad = allImports()
    .filter((i) => i.file === "cli/main.ts" && !i.typeOnly && i.target.includes("/"))
    .filter((i) => !CLI_ALLOWED.some((r) => r.test(i.target)));
  assert.deepEqual(bad, []);
});

test("nothing below the CLI imports src/action or src/cli (the public entries of src/image aside)", () => {
  const bad = allImports()
    .filter((i) => !/^(action|cli)\//.test(i.file) && i.file !== "image/index.ts")
    .filter((i) => /^(action|cli)\//.test(i.target))
    // the bundle source of templates renders bundle images through the one opener of references
    .filter((i) => !(i.file === "template/source/imagesource.ts" && i.target === "action/reference.js"));
  assert.deepEqual(bad, []);
});

test("src/action imports nothing of src/cli", () => {
  assert.deepEqual(
    allImports().filter((i) => i.file.startsWith("action/") && i.target.startsWith("cli/")),
    [],
  );
});

const OUTSIDE_DOCUMENTS = /\bseed 00\d|\bthe seed\b|\bseed's\b|\bissue \d+\b/i;

test("src names documents of the repository, never the seeds or issues it was built from", () => {
  const bad: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mjs)$/.test(e.name) && !e.name.endsWith(".test.ts"))
        readFileSync(p, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (OUTSIDE_DOCUMENTS.test(line)) bad.push(`${relative(SRC, p)}:${i + 1}`);
          });
    }
  };
  walk(SRC);
  assert.deepEqual(bad, []);
});
