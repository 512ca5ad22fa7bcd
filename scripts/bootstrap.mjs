#!/usr/bin/env node
// Makes a fresh clone usable, then (optionally) runs one of the package's commands with it:
//   node scripts/bootstrap.mjs [demo|test|bench] [args...]
// 1. Node: opcat needs Node >= 22 (24 LTS is what CI runs). When the running Node is older, Node 24
//    is installed from the npm registry (the `node` package ships a real binary) into `.node/`
//    (git-ignored) and the rest runs with it; one line on stderr says so.
// 2. Installs dependencies when node_modules is missing or older than the lockfile.
// 3. (Re)builds dist/ when any source file is newer than the last build: tsc for the library and
//    CLI, Vite for the web UI (src/ui → dist/ui), then the catalog commands' start-up snapshot
//    (scripts/build-snapshot.mjs).
// This file must stay runnable by old Node versions (no syntax newer than Node 16's).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const MIN_MAJOR = 22;
const NODE_SPEC = "node@24";

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
    else if (/\.(ts|tsx|css|html|mjs)$/.test(entry.name) && !entry.name.endsWith(".test.ts"))
      newest = Math.max(newest, mtime(p));
  }
  return newest;
}

const major = Number(process.versions.node.split(".")[0]);
if (major < MIN_MAJOR) {
  const local = join(root, ".node", "node_modules", "node", "bin", "node");
  if (!existsSync(local)) {
    process.stderr.write(
      `opcat: Node ${process.versions.node} is older than ${MIN_MAJOR}; ` +
        `installing ${NODE_SPEC} from the npm registry into .node/ …\n`,
    );
    mkdirSync(join(root, ".node"), { recursive: true });
    execFileSync(
      npm,
      [
        "install",
        "--prefix",
        join(root, ".node"),
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--no-save",
        NODE_SPEC,
      ],
      {
        cwd: root,
        stdio: ["ignore", "inherit", "inherit"],
      },
    );
  } else {
    process.stderr.write(
      `opcat: Node ${process.versions.node} is older than ${MIN_MAJOR}; using .node/ (${NODE_SPEC})\n`,
    );
  }
  // Re-run this script with Node 24, with .node's bin first on PATH so that npm and children use it too.
  const bin = dirname(local);
  const env = { ...process.env, PATH: `${bin}${process.platform === "win32" ? ";" : ":"}${process.env.PATH ?? ""}` };
  const res = spawnSync(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
    env,
  });
  process.exit(res.status ?? 1);
}

const quiet = { cwd: root, stdio: ["ignore", "inherit", "inherit"] };
const marker = join(root, "node_modules", ".package-lock.json");
if (!existsSync(marker) || mtime(marker) < mtime(join(root, "package-lock.json"))) {
  process.stderr.write("opcat: installing dependencies (npm ci)…\n");
  execFileSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], quiet);
}
const built = join(root, "dist", ".build-stamp");
if (
  !existsSync(built) ||
  !existsSync(join(root, "dist", "ui", "index.html")) ||
  mtime(built) < Math.max(newestIn(join(root, "src")), mtime(join(root, "tsconfig.json")))
) {
  process.stderr.write("opcat: building (tsc, vite)…\n");
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    quiet,
  );
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--config", join("src", "ui", "vite.config.mjs")],
    quiet,
  );
  execFileSync(
    process.execPath,
    ["-e", "require('fs').writeFileSync(process.argv[1], new Date().toISOString())", built],
    quiet,
  );
  // the start-up snapshot of the catalog commands, for this Node (bin/opcat uses it when it is newer than dist/)
  execFileSync(process.execPath, [join(root, "scripts", "build-snapshot.mjs")], quiet);
}

function run(args) {
  const res = spawnSync(process.execPath, args, {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, OPCAT_BOOTSTRAPPED: "1" },
  });
  if (res.status !== 0) process.exit(res.status ?? 1);
}

const [command, ...rest] = process.argv.slice(2);
const opcat = join(root, "bin", "opcat");
switch (command) {
  case undefined:
    break;
  case "demo":
    run([opcat, "validate", "examples/catalog"]);
    run([opcat, "render-graph", "examples/catalog"]);
    break;
  case "test":
    run([join(root, "scripts", "run-tests.mjs"), ...rest]);
    break;
  case "bench":
    run(["--expose-gc", "--import", "tsx", join(root, "bench", "run.ts"), ...rest]);
    break;
  default:
    process.stderr.write(`bootstrap: unknown command ${command} (demo, test, bench)\n`);
    process.exit(2);
}
