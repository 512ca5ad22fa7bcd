#!/usr/bin/env node
// Builds opcat's V8 startup snapshot, dist/snapshot/cli-<node version>.blob (after tsc, by `npm run build`
// and scripts/bootstrap.mjs): esbuild bundles scripts/snapshot-entry.mjs (the CLI and the catalog commands'
// modules, from dist/) into one CommonJS script, and `node --build-snapshot` runs it and writes the heap.
// bin/opcat starts render, validate, render-graph, list, migrate and init from the blob when it exists for
// the Node it runs and is newer than dist/cli/main.js, which saves loading, compiling and evaluating about
// 90 modules (docs/benchmarks.md); other commands, and every command when there is no blob, start from
// dist/. A blob works only with the Node binary that built it, hence the version in its name.
// Other command groups' modules (cluster, serve, image, resolve, template actions) are not bundled: their
// imports become a module that throws, which the commands above never reach. Without esbuild (a dependency
// of tsx and vite) or on a Node older than 22 it builds nothing and says so; opcat then starts from dist/.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "snapshot");
const blob = join(out, `cli-${process.version}.blob`);
const bundle = join(out, "cli.cjs");
rmSync(out, { recursive: true, force: true });

function skip(why) {
  process.stderr.write(`build-snapshot: ${why}; no start-up snapshot (bin/opcat starts from dist/)\n`);
  process.exit(0);
}

if (Number(process.versions.node.split(".")[0]) < 22) skip(`Node ${process.version} is older than 22`);
if (!existsSync(join(root, "dist", "cli", "main.js"))) skip("dist/ is not built");
let esbuild;
try {
  esbuild = await import("esbuild");
} catch {
  skip("esbuild is not installed");
}

// A dynamic import of another command group's actions from the command definitions (dist/cli/); esbuild
// filters are Go regular expressions (no lookahead), so fbc.js is let through in the callback.
const ACTIONS = /^\.\.\/action\/[\w-]+\.js$/;
mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [join(root, "scripts", "snapshot-entry.mjs")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node22",
  // the bundle's source is kept in the snapshot: 1 MB less to read and deserialize at every start (names are
  // kept, so messages and stack traces name the same functions)
  minifyWhitespace: true,
  outfile: bundle,
  logLevel: "warning",
  // import.meta is empty in a CommonJS bundle: a bundled module that uses it must fail the build
  logOverride: { "empty-import-meta": "error" },
  plugins: [
    {
      name: "other-command-groups",
      setup(build) {
        build.onResolve({ filter: ACTIONS }, (a) =>
          a.kind === "dynamic-import" && a.path !== "../action/fbc.js" && a.importer.includes(join("dist", "cli"))
            ? { path: a.path, namespace: "not-in-snapshot" }
            : undefined,
        );
        build.onLoad({ filter: /.*/, namespace: "not-in-snapshot" }, (a) => ({
          contents: `throw new Error(${JSON.stringify(
            `${a.path} is not in opcat's start-up snapshot: bin/opcat starts this command from dist/ ` +
              "(set OPCAT_NO_SNAPSHOT=1 to start every command from there)",
          )});`,
          loader: "js",
        }));
      },
    },
  ],
});
const r = spawnSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", bundle], {
  cwd: out,
  encoding: "utf8",
  // the warm-up's inputs (scripts/snapshot-entry.mjs)
  env: { ...process.env, OPCAT_SNAPSHOT_ROOT: root },
});
rmSync(bundle, { force: true });
if (r.status !== 0 || !existsSync(blob)) {
  process.stderr.write(r.stderr);
  rmSync(out, { recursive: true, force: true });
  skip(`node --build-snapshot failed (exit ${r.status})`);
}
