#!/usr/bin/env node
// No function over 150 lines: every function, method, constructor, accessor, arrow function and
// function expression in src/ (test files excepted) is measured from its first line to its last, and
// any longer than MAX_LINES is printed as `file:line: name is N lines`, exiting 1. Exempt: the ports of
// Go code, which keep the shape of the Go functions they port so that they can be compared with them
// line by line (PORTS), and the known exceptions listed in KNOWN (to be split; each names its
// current length, so that one growing is reported too). Arguments (files or directories) restrict the
// check; --list prints every function over the limit, exempt or not, longest first.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const MAX_LINES = 150;

/**
 * The Go ports: `file:function` → the Go code it follows (kept in one piece to be read beside it).
 * A directory ending in `/` exempts every function of its files (go-yaml's libyaml, function for
 * function, with the Go names).
 */
const PORTS = new Map([
  ["src/yaml/goyaml/", "go-yaml v2's scannerc.go, parserc.go, readerc.go"],
  ["src/gojson/scan.ts:goJsonSyntaxError", "encoding/json scanner.go (its state machine)"],
  ["src/fbc/validate.ts:convert", "operator-registry alpha/declcfg/declcfg_to_model.go ConvertToModel"],
  ["src/bundle/read.ts:readBundleDirectory", "operator-registry pkg/registry/parse.go, bundle.go"],
]);

/**
 * Known exceptions, `file:function` → its length now (a longer one is reported): to be split. None
 * is left; a new one may be listed only with a reason in docs/CONTRIBUTING.md ("Function length").
 */
const KNOWN = new Map([]);

/** The Go code `file:name` ports, if it is one of PORTS. */
function portOf(file, name) {
  for (const [k, v] of PORTS) if (k.endsWith("/") ? file.startsWith(k) : k === `${file}:${name}`) return v;
  return undefined;
}

function collect(path, out) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name === "testdata") continue;
      collect(join(path, e.name), out);
    }
  } else if (/\.(ts|tsx)$/.test(path) && !/\.test\.ts$/.test(path) && !path.endsWith(".d.ts")) out.push(path);
  return out;
}

function nameOf(node, sf) {
  if (node.name) return node.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p)) return p.name.getText(sf);
  if (p && ts.isPropertyAssignment(p)) return p.name.getText(sf);
  if (p && ts.isPropertyDeclaration(p)) return p.name.getText(sf);
  if (p && ts.isCallExpression(p)) return `(callback of ${p.expression.getText(sf).replace(/\s+/g, " ").slice(0, 40)})`;
  return "(anonymous)";
}

/** Every function of `file` over MAX_LINES: {file, line, name, lines}. */
export function longFunctions(file, max = MAX_LINES) {
  const text = readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? 4 : 3);
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > max) {
        const rel = relative(root, file).split(sep).join("/");
        out.push({ file: rel, line: start + 1, name: nameOf(node, sf), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const args = process.argv.slice(2);
const listAll = args.includes("--list");
const paths = args.filter((a) => a !== "--list");
const files = [];
for (const p of paths.length > 0 ? paths.map((a) => resolve(a)) : [join(root, "src")]) collect(p, files);
files.sort();
const found = files.flatMap((f) => longFunctions(f));
if (listAll) {
  for (const f of [...found].sort((a, b) => b.lines - a.lines)) {
    const port = portOf(f.file, f.name);
    const tag = port ? ` (Go port: ${port})` : KNOWN.has(`${f.file}:${f.name}`) ? " (known)" : "";
    console.log(`${f.file}:${f.line}: ${f.name} ${f.lines} lines${tag}`);
  }
  process.exit(0);
}
let bad = 0;
for (const f of found) {
  if (portOf(f.file, f.name)) continue;
  const known = KNOWN.get(`${f.file}:${f.name}`);
  if (known !== undefined && f.lines <= known) continue;
  bad++;
  console.log(
    `${f.file}:${f.line}: ${f.name} is ${f.lines} lines${known !== undefined ? ` (listed at ${known})` : ""}`,
  );
}
// a listed function that is no longer over the limit is taken off the list (checked on the whole of src)
if (paths.length === 0) {
  for (const key of KNOWN.keys()) {
    if (found.some((f) => `${f.file}:${f.name}` === key)) continue;
    bad++;
    console.log(`${key} is no longer over ${MAX_LINES} lines: take it off KNOWN in scripts/check-functions.mjs`);
  }
}
if (bad > 0) {
  console.error(`check-functions: ${bad} function${bad === 1 ? "" : "s"} over ${MAX_LINES} lines`);
  process.exit(1);
}
console.log(
  `check-functions: ${files.length} files, no function over ${MAX_LINES} lines outside the Go ports ` +
    `and ${KNOWN.size} known exceptions`,
);
