/**
 * What the benches on a real API server (cluster.ts, deppy.ts) share: `opcat cluster run` started as
 * a process (resolved once it logs "controllers started"); and a process's peak RSS (also servestart.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

/** Starts `bin/opcat cluster run` against `kubeconfig` (context admin, plain HTTP registries). */
export async function startController(
  kubeconfig: string,
  stateDir: string,
): Promise<{ ctl: ChildProcess; log: () => string }> {
  const ctl = spawn(
    process.execPath,
    [
      join(root, "bin", "opcat"),
      "cluster",
      "run",
      "--kubeconfig",
      kubeconfig,
      "--context",
      "admin",
      "--state-dir",
      stateDir,
      "--use-http",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  await new Promise<void>((resolve, reject) => {
    ctl.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes("controllers started")) resolve();
    });
    ctl.once("exit", (c) => reject(new Error(`controller exited ${c}: ${log}`)));
  });
  return { ctl, log: () => log };
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
export function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}
