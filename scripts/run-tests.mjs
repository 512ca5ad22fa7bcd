#!/usr/bin/env node
// Runs every *.test.ts file under src/ and test/ with node's built-in test runner (through tsx),
// prints the spec report, then one plain closing line "tests: N passed, N failed[, N skipped]".
// Arguments that are paths restrict the run to those files/directories; other arguments are passed
// to `node --test` (e.g. --test-name-pattern=semver).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// The CLI tests run bin/opcat, which needs an up-to-date dist/.
// Run directly with an old Node, hand over to the bootstrap (which fetches Node 24 and comes back here).
if (Number(process.versions.node.split(".")[0]) < 22) {
  const r = spawnSync(process.execPath, [join(root, "scripts", "bootstrap.mjs"), "test", ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
  });
  process.exit(r.status ?? 1);
}
if (!process.env.OPCAT_BOOTSTRAPPED) {
  const boot = spawnSync(process.execPath, [join(root, "scripts", "bootstrap.mjs")], { cwd: root, stdio: "inherit" });
  if (boot.status !== 0) process.exit(boot.status ?? 1);
}

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && e.name !== "testdata") collect(p, out);
    } else if (e.name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

const args = process.argv.slice(2);
const paths = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
const files = [];
if (paths.length > 0) {
  for (const p of paths) {
    const abs = resolve(p);
    if (statSync(abs).isDirectory()) collect(abs, files);
    else files.push(abs);
  }
} else {
  collect(join(root, "src"), files);
  collect(join(root, "test"), files);
}
files.sort();
const tmp = mkdtempSync(join(tmpdir(), "opcat-test-"));

// Cluster tests need a real kube-apiserver + etcd: start one for the run when its binaries are built
// (scripts/kube/cluster.sh build; .ci/run builds them), stop it at the end. Node tests (test/node/) need
// Pods: a second cluster with a real node (WITH_NODE=1; root only), started after the cluster tests.
const isNodeFile = (f) => f.includes(join("test", "node") + "/");
const isClusterFile = (f) =>
  !isNodeFile(f) && (f.includes(join("test", "cluster")) || f.includes(join("src", "cluster")));
/** Starts a test cluster in `home`; returns the environment its tests get, or undefined (with a message). */
function startCluster(home, withNode) {
  const script = join(root, "scripts", "kube", "cluster.sh");
  const ports = freePorts(3);
  const env = {
    ...process.env,
    KUBE_HOME: home,
    KUBE_PORT: String(ports[0]),
    ETCD_PORT: String(ports[1]),
    PEER_PORT: String(ports[2]),
    WITH_NODE: withNode ? "1" : "0",
  };
  const t0 = Date.now();
  const started = spawnSync("bash", [script, "start"], {
    cwd: root,
    encoding: "utf8",
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const m = /export KUBECONFIG=(\S+)/.exec(started.stdout ?? "");
  const reg = /export OPCAT_TEST_REGISTRY=(\S+)/.exec(started.stdout ?? "");
  if (started.status !== 0 || !m || (withNode && !reg)) {
    process.stderr.write(
      `run-tests: no test ${withNode ? "node" : "cluster"} (scripts/kube/cluster.sh start exited ` +
        `${started.status}); ${withNode ? "node" : "cluster"} tests will ` +
        `${process.env.CI === "true" ? "fail" : "skip"}\n`,
    );
    return undefined;
  }
  if (withNode) process.stderr.write(`run-tests: cluster with a node up in ${Date.now() - t0} ms\n`);
  return {
    OPCAT_TEST_KUBECONFIG: m[1],
    ...(reg ? { OPCAT_TEST_REGISTRY: reg[1] } : {}),
    // the in-process controllers of the cluster tests log here (test/cluster/harness.ts controllerLog)
    OPCAT_TEST_LOG_DIR: join(home, "logs"),
    // what a fault test needs to run `cluster.sh restart-apiserver` (or restart-kubelet) on this cluster
    OPCAT_TEST_KUBE_ENV: JSON.stringify({
      KUBE_HOME: home,
      KUBE_PORT: env.KUBE_PORT,
      ETCD_PORT: env.ETCD_PORT,
      PEER_PORT: env.PEER_PORT,
    }),
  };
}
const clusterHomes = [];
let clusterEnv = {};
if (files.some(isClusterFile) && !process.env.OPCAT_TEST_KUBECONFIG) {
  const home = join(tmp, "kube");
  const env = startCluster(home, false);
  if (env) {
    clusterEnv = env;
    clusterHomes.push(home);
  }
}
/** n free TCP ports on 127.0.0.1 (asked of the kernel by a child process, since this script is synchronous). */
function freePorts(n) {
  const code =
    `const net=require("net");const out=[];let k=${n};const srv=[];for(let i=0;i<${n};i++){const ` +
    `s=net.createServer();srv.push(s);s.listen(0,"127.0.0.1",()=>{out.push(s.address().port);` +
    `if(--k===0){console.log(out.join(" "));srv.forEach(x=>x.close())}})}`;
  const r = spawnSync(process.execPath, ["-e", code], { encoding: "utf8" });
  return r.stdout.trim().split(" ").map(Number);
}
/**
 * After a failed cluster batch: copies the test cluster's logs (etcd, kube-apiserver,
 * kube-controller-manager, the in-process controllers) to .test-logs/ in the repository (ignored by
 * git) and prints the last warnings and errors of the controllers, so that a CI failure can be read.
 */
function keepClusterLogs(home, name) {
  if (!home) return;
  const from = join(home, "logs");
  const to = join(root, ".test-logs", name);
  try {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true });
  } catch {
    return;
  }
  const lines = [];
  for (const f of readdirSync(to).sort()) {
    if (!f.endsWith("-controllers.log") && f !== "kcm.log") continue;
    const text = readFileSync(join(to, f), "utf8").split("\n");
    // klog's warning and error lines of kube-controller-manager; what the controllers said went wrong
    const re = f === "kcm.log" ? /^[EW]\d{4} / : /error|fail|warn|refus|conflict/i;
    const notable = text.filter((l) => re.test(l)).slice(-8);
    for (const l of notable) lines.push(`  ${f}: ${l.length > 300 ? `${l.slice(0, 300)}…` : l}`);
  }
  process.stdout.write(
    `run-tests: the test cluster's logs are kept in ` +
      `${to}${lines.length ? `; their last warnings and errors:\n${lines.join("\n")}` : ""}\n`,
  );
}
function stopCluster(home) {
  spawnSync("bash", [join(root, "scripts", "kube", "cluster.sh"), "stop"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, KUBE_HOME: home },
  });
}
// Three batches: everything else (two files at a time), then the cluster tests one file at a time
// (they share one API server and its cluster-wide webhook configurations), then the node tests one file
// at a time on their own cluster with a node (started when their turn comes, one node per machine).
const batches = [
  files.filter((f) => !isClusterFile(f) && !isNodeFile(f)),
  files.filter(isClusterFile),
  files.filter(isNodeFile),
];
const totals = { pass: 0, fail: 0, skipped: 0 };
let status = 0;
let reported = true;
batches.forEach((batch, i) => {
  if (batch.length === 0) return;
  let env = i === 0 ? {} : clusterEnv;
  let home = clusterHomes[0];
  if (i === 2) {
    // the API-server-only cluster is done: stop it before the node's starts
    for (const h of clusterHomes.splice(0)) stopCluster(h);
    home = undefined;
    env = {};
    if (!process.env.OPCAT_TEST_KUBECONFIG) {
      const h = join(tmp, "node");
      const started = startCluster(h, true);
      if (started) {
        env = started;
        home = h;
        clusterHomes.push(h);
      }
    }
  }
  const tap = join(tmp, `report-${i}.tap`);
  const res = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      `--test-concurrency=${i === 0 ? 2 : 1}`,
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      "--test-reporter=tap",
      `--test-reporter-destination=${tap}`,
      ...flags,
      ...batch,
    ],
    { cwd: root, stdio: "inherit", env: { ...process.env, ...env, OPCAT_REPO_ROOT: root } },
  );
  if (res.status !== 0) status = res.status ?? 1;
  if (res.status !== 0 && i > 0) keepClusterLogs(home, i === 1 ? "cluster" : "node");
  try {
    const text = readFileSync(tap, "utf8");
    const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, "m")) ?? [])[1] ?? 0);
    totals.pass += count("pass");
    // a test cancelled because its suite's hook failed is a failure, not a pass nor a skip
    totals.fail += count("fail") + count("cancelled");
    totals.skipped += count("skipped") + count("todo");
  } catch {
    reported = false;
  }
});
for (const h of clusterHomes) stopCluster(h);
if (!reported) {
  totals.fail = Math.max(totals.fail, 1);
  status = status || 1;
}
const summary =
  `tests: ${totals.pass} passed, ${totals.fail} failed` + (totals.skipped ? `, ${totals.skipped} skipped` : "");
rmSync(tmp, { recursive: true, force: true });
console.log(summary);
process.exit(status);
