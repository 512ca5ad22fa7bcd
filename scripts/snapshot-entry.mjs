// The entry of opcat's V8 startup snapshot (scripts/build-snapshot.mjs bundles it with the catalog
// commands into one script and runs `node --build-snapshot` over it). Building evaluates the CLI's
// modules and those of the catalog commands (render, validate, render-graph, list, migrate, init), so a
// start from the snapshot deserializes them instead of loading, compiling and evaluating ~90 modules.
// bin/opcat runs `node --snapshot-blob dist/snapshot/cli-<node version>.blob <command> …` for those
// commands only; everything else starts from dist/ as before.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import v8 from "node:v8";
import * as catalog from "../dist/action/catalog.js";
import * as fbc from "../dist/action/fbc.js";
import * as bundleRender from "../dist/bundle/render.js";
import { buildProgram, run } from "../dist/cli/main.js";
import * as fbcList from "../dist/fbc/list.js";
import * as fbcRender from "../dist/fbc/render.js";
import * as validate from "../dist/fbc/validate.js";
import * as write from "../dist/fbc/write.js";
import { quietPipes } from "../bin/pipes.mjs";

// evaluated now, while building, so that they are in the snapshot (the commands import them lazily)
globalThis.__opcatSnapshotModules = [catalog, fbc, bundleRender, fbcList, fbcRender, validate, write];

// Warm-up while building: validate and render the repository's example catalog and a test bundle once, so
// that the functions they run are compiled to bytecode in the snapshot, not at every start (V8 keeps the
// bytecode of compiled functions in a snapshot; about 10% of a small validate or render). The modules'
// state after it is their caches of pure functions (YAML resolution, decoder specs, reference prefixes).
const root = process.env.OPCAT_SNAPSHOT_ROOT;
if (root) {
  const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });
  const example = join(root, "examples", "catalog");
  const bundle = join(root, "src", "bundle", "testdata", "bundles", "valid");
  (async () => {
    if (existsSync(example)) {
      await fbc.validateAction(example);
      await fbc.renderAction([example], { output: "yaml" }, sink());
    }
    if (existsSync(bundle)) await fbc.renderAction([bundle], { output: "json" }, sink());
  })();
}

// The command definitions, built now (they read nothing of the process: commander reads the environment,
// the terminal's width and colours when it parses and prints); used by the one run of the started process.
const program = buildProgram();

v8.startupSnapshot.setDeserializeMainFunction(async () => {
  quietPipes();
  // process.argv is [node, command, …] when Node starts from a snapshot (no script name)
  process.exitCode = await run(process.argv.slice(1), program);
});
