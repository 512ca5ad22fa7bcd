/**
 * What benches share: for those on a real API server (cluster.ts, deppy.ts), etcd + kube-apiserver
 * (+ kcm) started with scripts/kube/cluster.sh and `opcat cluster run` started as a process (resolved
 * once it logs "controllers started"); a process's peak RSS; the median of samples.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/image/servers.js";

const root = join(import.meta.dirname, "..");

/**
 * Starts etcd, kube-apiserver and kube-controller-manager on free ports with their state in
 * `<tmp>/kube`; throws `failure` when cluster.sh cannot. `stop()` stops them.
 */
export async function startKube(tmp: string, failure: string): Promise<{ kubeconfig: string; stop: () => void }> {
  const [kubePort, etcdPort, peerPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    KUBE_HOME: join(tmp, "kube"),
    KUBE_PORT: String(kubePort),
    ETCD_PORT: String(etcdPort),
    PEER_PORT: String(peerPort),
    WITH_KCM: "1",
  };
  const script = join(root, "scripts", "kube", "cluster.sh");
  const up = spawnSync("bash", [script, "start"], { env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (up.status !== 0) throw new Error(failure);
  return {
    kubeconfig: join(tmp, "kube", "kubeconfig"),
    stop: () => void spawnSync("bash", [script, "stop"], { env, stdio: "inherit" }),
  };
}

/**
 * Starts `bin/opcat cluster run` against `kubeconfig` (context admin, plain HTTP registries), with the
 * Node flag and environment of opcat's image (src/image/runtime.ts), so that its memory is the deployed one.
 */
export async function startController(
  kubeconfig: string,
  stateDir: string,
): Promise<{ ctl: ChildProcess; log: () => string }> {
  const ctl = spawn(
    process.execPath,
    [
      "--max-semi-space-size=4",
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
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, MALLOC_ARENA_MAX: "2" } },
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

/** Resident set size now (VmRSS) of a process, in MiB. */
export function currentRss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time (user + system) a process has used so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
  // fields 14 and 15 (utime, stime) are the 12th and 13th after the command name, in clock ticks
  return (Number(rest[11]) + Number(rest[12])) / 100;
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
