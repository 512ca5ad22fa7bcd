#!/usr/bin/env node
// Makes a fresh clone usable: installs dependencies when node_modules is missing or older than the
// lockfile, and (re)builds dist/ when any source file is newer than the last build. Used by the
// `demo`, `test` and `bench` scripts so that each quick-start command works on its own.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = { cwd: root, stdio: ["ignore", "inherit", "inherit"] };

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestIn(p));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) newest = Math.max(newest, mtime(p));
  }
  return newest;
}

const marker = join(root, "node_modules", ".package-lock.json");
if (!existsSync(marker) || mtime(marker) < mtime(join(root, "package-lock.json"))) {
  process.stderr.write("opcat: installing dependencies (npm ci)…\n");
  execFileSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], quiet);
}
const built = join(root, "dist", ".build-stamp");
if (!existsSync(built) || mtime(built) < Math.max(newestIn(join(root, "src")), mtime(join(root, "tsconfig.json")))) {
  process.stderr.write("opcat: building (tsc)…\n");
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], quiet);
  execFileSync(process.execPath, ["-e", "require('fs').writeFileSync(process.argv[1], new Date().toISOString())", built], quiet);
}
