#!/usr/bin/env node
// No source line over 120 characters: Biome formats code at that width (biome.json formatter.lineWidth)
// but does not break string and template literals, comments, regexes or test titles, so this checks
// every line of the repository's own code: *.ts, *.tsx, *.mts, *.cts, *.js, *.mjs, *.cjs and *.sh files
// under src/, test/, scripts/, bench/, bin/ and .ci/, and the scripts without an extension in bin/ and .ci/
// (their first line is a #! line). node_modules, dist and .node are skipped; so are the data files of
// testdata folders (only code is checked). Characters are Unicode code points, as Biome counts them.
// Prints `file:line: N characters` for every longer line and exits 1; arguments (files or directories)
// restrict the check.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ROOTS = ["src", "test", "scripts", "bench", "bin", ".ci"];
const SKIP_DIRS = new Set(["node_modules", "dist", ".node", ".git"]);
const CODE = new Set([".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".sh"]);

function maxWidth() {
  try {
    const width = JSON.parse(readFileSync(join(root, "biome.json"), "utf8")).formatter?.lineWidth;
    if (Number.isInteger(width) && width > 0) return width;
  } catch {
    // no readable biome.json: the project's width
  }
  return 120;
}

/** A code file by its extension, or an extensionless script (#!) directly in bin/ or .ci/. */
function isCode(file) {
  if (CODE.has(extname(file))) return true;
  const dir = relative(root, dirname(file));
  if (extname(file) !== "" || (dir !== "bin" && dir !== ".ci")) return false;
  return readFileSync(file, "utf8").startsWith("#!");
}

function collect(path, out) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      if (e.isDirectory() && SKIP_DIRS.has(e.name)) continue;
      collect(join(path, e.name), out);
    }
  } else if (st.isFile() && isCode(path)) out.push(path);
  return out;
}

const max = maxWidth();
const args = process.argv.slice(2);
const files = [];
for (const p of args.length > 0 ? args.map((a) => resolve(a)) : ROOTS.map((r) => join(root, r))) {
  try {
    collect(p, files);
  } catch (e) {
    if (args.length > 0 || e.code !== "ENOENT") throw e;
  }
}
files.sort();
let long = 0;
for (const file of files) {
  const lines = readFileSync(file, "utf8").split("\n");
  lines.forEach((line, i) => {
    // code points, not UTF-16 units; a CR of a CRLF line ending is not a character of the line
    const n = [...line.replace(/\r$/, "")].length;
    if (n > max) {
      long++;
      console.log(`${relative(root, file).split(sep).join("/")}:${i + 1}: ${n} characters`);
    }
  });
}
if (long > 0) {
  console.error(`check-lines: ${long} line${long === 1 ? "" : "s"} over ${max} characters`);
  process.exit(1);
}
console.log(`check-lines: ${files.length} files, no line over ${max} characters`);
