/**
 * What benches share: for those on a real API server (cluster.ts, deppy.ts), etcd + kube-apiserver
 * (+ kcm) started with scripts/kube/cluster.sh and `opcat cluster run` started as a process (resolved
 * once it logs "controllers started"); a process's peak RSS; the median of samples.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../src/cluster/kube/client.js";
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
): Promise<{ ctl: ChildProcess; log: () => string; requests: () => Promise<Map<string, number>> }> {
  const healthPort = await freePort();
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
      "--health-port",
      String(healthPort),
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
  return { ctl, log: () => log, requests: () => scrapeRequests(healthPort) };
}

/** The controller's API requests so far, by verb and resource ("PUT instances/status"), from its /metrics. */
async function scrapeRequests(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^opcat_api_requests_by_resource_total\{request="([^"]+)"\} (\d+)$/gm))
    out.set(m[1], Number(m[2]));
  return out;
}

/**
 * The requests made between two scrapes, per unit of work (`per`): "N (x per unit); most: …" with
 * the eight busiest.
 */
export function requestsBetween(before: Map<string, number>, after: Map<string, number>, per: number): string {
  const diff = [...after].map(([k, n]) => [k, n - (before.get(k) ?? 0)] as const).filter(([, n]) => n > 0);
  const total = diff.reduce((a, [, n]) => a + n, 0);
  const most = diff
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, n]) => `${k} ${(n / per).toFixed(2)}`);
  return `${total} (${(total / per).toFixed(1)} per unit); per unit: ${most.join(", ")}`;
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

/**
 * Waits until `holds` is true of every object of a kind named in `names`: one list, then a watch from
 * its resourceVersion (listed again when the watch ends). Returns the last copy seen of each. Polling
 * instead (a list of 1,000 Instances every 50 ms, as the benches did until 2026-11-27) cost a quarter
 * of the API server's CPU: the bench measured its own load.
 */
export async function untilAll<T extends KubeObject>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  names: Iterable<string>,
  holds: (o: T) => boolean,
  timeoutMs = 600_000,
): Promise<Map<string, T>> {
  const left = new Set(names);
  const seen = new Map<string, T>();
  const see = (o: T): void => {
    seen.set(o.metadata.name, o);
    if (left.has(o.metadata.name) && holds(o)) left.delete(o.metadata.name);
  };
  const path = await client.path(apiVersion, kind);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { items, resourceVersion } = await client.list<T>(apiVersion, kind);
    for (const o of items) see(o);
    if (left.size === 0) return seen;
    if (Date.now() > deadline) throw new Error(`${kind}s not done in time: ${[...left].slice(0, 5).join(", ")}`);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), Math.min(30_000, Math.max(1, deadline - Date.now())));
    try {
      await client.watch(
        path,
        { resourceVersion, timeoutSeconds: 30 },
        (ev) => {
          if (ev.type !== "ADDED" && ev.type !== "MODIFIED") return;
          see(ev.object as T);
          if (left.size === 0) ac.abort();
        },
        ac.signal,
      );
    } catch {
      // a watch error (e.g. 410 Gone): list again
    } finally {
      clearTimeout(timer);
    }
    if (left.size === 0) return seen;
  }
}

/** The request counts once they have not moved for two seconds (the controller is quiet). */
export async function settled(requests: () => Promise<Map<string, number>>): Promise<Map<string, number>> {
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  let last = await requests();
  for (;;) {
    await new Promise((r) => setTimeout(r, 2_000));
    const now = await requests();
    if (sum(now) === sum(last)) return now;
    last = now;
  }
}
