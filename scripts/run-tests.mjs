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
// (scripts/kube/cluster.sh build; .ci/run builds them), stop it at the end.
const clusterEnv = {};
let clusterHome;
const wantsCluster = files.some(
  (f) => f.includes(`${join("test", "cluster")}`) || f.includes(`${join("src", "cluster")}`),
);
if (wantsCluster && !process.env.OPCAT_TEST_KUBECONFIG) {
  clusterHome = join(tmp, "kube");
  const script = join(root, "scripts", "kube", "cluster.sh");
  const ports = freePorts(3);
  const env = {
    ...process.env,
    KUBE_HOME: clusterHome,
    KUBE_PORT: String(ports[0]),
    ETCD_PORT: String(ports[1]),
    PEER_PORT: String(ports[2]),
  };
  const started = spawnSync("bash", [script, "start"], {
    cwd: root,
    encoding: "utf8",
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const m = /export KUBECONFIG=(\S+)/.exec(started.stdout ?? "");
  if (started.status === 0 && m) {
    clusterEnv.OPCAT_TEST_KUBECONFIG = m[1];
    // the in-process controllers of the cluster tests log here (test/cluster/harness.ts controllerLog)
    clusterEnv.OPCAT_TEST_LOG_DIR = join(clusterHome, "logs");
    // what a fault test needs to run `cluster.sh restart-apiserver` on this cluster
    clusterEnv.OPCAT_TEST_KUBE_ENV = JSON.stringify({
      KUBE_HOME: clusterHome,
      KUBE_PORT: env.KUBE_PORT,
      ETCD_PORT: env.ETCD_PORT,
      PEER_PORT: env.PEER_PORT,
    });
  } else {
    clusterHome = undefined;
    process.stderr.write(
      `run-tests: no test cluster (scripts/kube/cluster.sh start exited ${started.status}); ` +
        `cluster tests will ${process.env.CI === "true" ? "fail" : "skip"}\n`,
    );
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
function keepClusterLogs() {
  if (!clusterHome) return;
  const from = join(clusterHome, "logs");
  const to = join(root, ".test-logs");
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
function stopCluster() {
  if (clusterHome)
    spawnSync("bash", [join(root, "scripts", "kube", "cluster.sh"), "stop"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, KUBE_HOME: clusterHome },
    });
}
// Two batches: everything else (two files at a time), then the cluster tests one file at a time
// (they share one API server and its cluster-wide webhook configurations).
const isClusterFile = (f) => f.includes(join("test", "cluster")) || f.includes(join("src", "cluster"));
const batches = [files.filter((f) => !isClusterFile(f)), files.filter(isClusterFile)];
const totals = { pass: 0, fail: 0, skipped: 0 };
let status = 0;
let reported = true;
batches.forEach((batch, i) => {
  if (batch.length === 0) return;
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
    { cwd: root, stdio: "inherit", env: { ...process.env, ...clusterEnv, OPCAT_REPO_ROOT: root } },
  );
  if (res.status !== 0) status = res.status ?? 1;
  if (res.status !== 0 && i === 1) keepClusterLogs();
  try {
    const text = readFileSync(tap, "utf8");
    const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, "m")) ?? [])[1] ?? 0);
    totals.pass += count("pass");
    totals.fail += count("fail");
    totals.skipped += count("skipped") + count("todo");
  } catch {
    reported = false;
  }
});
stopCluster();
if (!reported) {
  totals.fail = Math.max(totals.fail, 1);
  status = status || 1;
}
const summary =
  `tests: ${totals.pass} passed, ${totals.fail} failed` + (totals.skipped ? `, ${totals.skipped} skipped` : "");
rmSync(tmp, { recursive: true, force: true });
console.log(summary);
process.exit(status);
