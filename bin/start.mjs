// The start-up every bin entry shares (bin/opcat, bin/kubectl-instance): runs the compiled CLI from dist/
// (built by `npm run build`, or automatically by `npm run demo` / `npm test`). Must parse on old Node
// versions so that it can say which Node it needs, or run again with the Node 24 in .node/.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { quietPipes } from "./pipes.mjs";

/**
 * Runs `opcat <prefix…> <arguments>` and sets the exit code. Started by a Node older than 22, runs the
 * entry script (process.argv[1]) again with the Node 24 that `npm run demo` / `npm test` installed into
 * .node/ (same flags and arguments, signals passed on), or says which Node it needs (exit 2).
 */
export async function start(prefix = []) {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22) {
    const local = fileURLToPath(new URL("../.node/node_modules/node/bin/node", import.meta.url));
    if (existsSync(local)) {
      await runWith(local);
    } else {
      process.stderr.write(
        `opcat: needs Node.js 22 or newer (24 LTS recommended); this is Node ${process.versions.node}.\n` +
          "hint: run `npm run demo` or `npm test` once in the opcat directory (they fetch Node 24 into .node/ " +
          "and bin/opcat then uses it), or install Node 24.\n",
      );
      process.exit(2);
    }
  }
  // V8's code cache for the CLI's modules (Node >= 22.1): later starts skip compiling them.
  try {
    const { enableCompileCache } = await import("node:module");
    enableCompileCache?.();
  } catch {
    // a read-only or missing cache directory only costs speed
  }
  const main = new URL("../dist/cli/main.js", import.meta.url);
  if (!existsSync(fileURLToPath(main))) {
    process.stderr.write(
      "opcat: not built yet; run `npm install && npm run build` (or `node scripts/bootstrap.mjs`) " +
        "in the opcat directory\n",
    );
    process.exit(2);
  }
  quietPipes();
  await processModuleWithoutStdin();
  const args = process.argv.slice(2);
  if (prefix.length === 0 && args.length === 1 && (args[0] === "--version" || args[0] === "version")) {
    // answered without loading the CLI (commander and every command's definition): a start-up-bound
    // command costs Node's start and this file (docs/benchmarks.md); the same text as `run` prints
    // (test/cli/cli.test.ts compares them)
    const { VERSION } = await import(new URL("../dist/version.js", import.meta.url).href);
    process.stdout.write(args[0] === "version" ? `opcat ${VERSION}\n` : `${VERSION}\n`);
  } else {
    const { run } = await import(main.href);
    process.exitCode = await run([...prefix, ...args]);
  }
}

/**
 * Creates the ES module `node:process` (commander imports it) while `process.stdin` is hidden. Node builds
 * that module by reading every property of `process`, and reading `process.stdin` opens fd 0 as a stream,
 * which sets O_NONBLOCK on the file description opcat shares with its parent and siblings (nodejs/node#42826):
 * `opcat render a | cmp - <(opcat render b)` failed in cmp with "Resource temporarily unavailable". Only a
 * command that reads `-` now touches stdin (through `process.stdin`, which stays lazy; the module's named
 * export `stdin` is undefined, and nothing opcat loads imports it).
 */
async function processModuleWithoutStdin() {
  const stdin = Object.getOwnPropertyDescriptor(process, "stdin");
  if (!stdin?.configurable || !stdin.get) return;
  Object.defineProperty(process, "stdin", { configurable: true, enumerable: stdin.enumerable, get: () => undefined });
  try {
    await import("node:process");
  } finally {
    Object.defineProperty(process, "stdin", stdin);
  }
}

/** Runs the entry script again with the Node at `node` (same flags and arguments, signals passed on). */
async function runWith(node) {
  const { spawn } = await import("node:child_process");
  const child = spawn(node, [...process.execArgv, process.argv[1], ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) process.on(sig, () => child.kill(sig));
  child.on("error", (e) => {
    process.stderr.write(`opcat: error[IO_ERROR]: cannot start ${node}: ${e.message}\n`);
    process.exit(2);
  });
  await new Promise(() => {
    child.on("exit", (code, signal) => {
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      }
      process.exit(code ?? 1);
    });
  });
}
