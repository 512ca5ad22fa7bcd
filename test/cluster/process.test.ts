/**
 * `opcat cluster run` as a real process against the real API server: killed with SIGKILL during an
 * install and started again, it converges with no duplicate or orphaned objects; `kubectl instance
 * approve` (the plugin, run by the real kubectl) is refused for a user without the approve verb;
 * with leader election only one of two processes acts.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundleImage, pushImage } from "../../src/image/index.js";
import { readBundleDirectory } from "../../src/bundle/index.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { convertRegistryV1 } from "../../src/cluster/rukpak/convert.js";
import {
  API_VERSION,
  LABEL_INSTANCE,
  OPERATOR_PROVISIONER,
  type Bundle,
  type Instance,
} from "../../src/cluster/rukpak/api.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, REPO_ROOT, requireShared } from "../shared.js";
import { clientAs, clusterKubeconfig, cond, waitFor } from "./harness.js";
import { Informer } from "../../src/cluster/kube/informer.js";

const cluster = clusterKubeconfig();
const skip = cluster.skip || requireTools("docker-registry") || requireShared().skip;
const OPS = join(COMMUNITY, "operators");
const KUBECTL = join(
  process.env.OPCAT_KUBE_CACHE ?? join(homedir(), ".cache", "opcat", "kube"),
  `v${process.env.KUBE_VERSION ?? "1.35.4"}`,
  "bin",
  "kubectl",
);

interface Proc {
  child: ChildProcess;
  log: string[];
  waitLog(re: RegExp): Promise<void>;
}

function startController(kubeconfig: string, stateDir: string, extra: string[] = []): Proc {
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, "bin", "opcat"),
      "cluster",
      "run",
      "--kubeconfig",
      kubeconfig,
      "--context",
      "controller",
      "--state-dir",
      stateDir,
      "--use-http",
      ...extra,
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const log: string[] = [];
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  let buf = "";
  child.stderr!.on("data", (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      log.push(line);
      for (const w of waiters.splice(0))
        if (w.re.test(line)) w.resolve();
        else waiters.push(w);
    }
  });
  return {
    child,
    log,
    waitLog(re) {
      if (log.some((l) => re.test(l))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        // bounds a hung test only (no performance threshold)
        const timer = setTimeout(() => reject(new Error(`no log line ${re} within 120 s: ${log.join("\n")}`)), 120_000);
        waiters.push({ re, resolve: () => (clearTimeout(timer), resolve()) });
        child.once(
          "exit",
          (code) => (
            clearTimeout(timer),
            reject(new Error(`controller exited (${code}) before logging ${re}: ${log.join("\n")}`))
          ),
        );
      });
    },
  };
}

function stop(p: Proc | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.child.once("exit", () => resolve());
    p.child.kill(signal);
  });
}

describe("opcat cluster run as a process", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let registry: RunningRegistry;
  let tmp = "";
  let ref = "";
  let ref2 = "";
  const procs: Proc[] = [];

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-rukpak-proc-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    ref = `docker://${registry.host}/koku-bundle:4.4.1`;
    await pushImage(buildBundleImage(join(OPS, "koku-metrics-operator", "4.4.1")), ref.slice(9), { useHttp: true });
    ref2 = `docker://${registry.host}/apicurio-bundle:3.3.1`;
    await pushImage(buildBundleImage(join(OPS, "apicurio-registry-3", "3.3.1")), ref2.slice(9), { useHttp: true });
  });

  after(async () => {
    for (const p of procs) await stop(p, "SIGKILL");
    await registry?.stop();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test(
    "SIGKILL during an install, then a restart: the " + "install converges with no duplicate or orphaned objects",
    async () => {
      const state = join(tmp, "state");
      const first = startController(kubeconfig, state);
      procs.push(first);
      await first.waitLog(/controllers started/);
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name: "proc-allow" },
        provisioner: OPERATOR_PROVISIONER,
        parameters: { approval: "AllowAll" },
      } as unknown as KubeObject);
      await admin.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "koku" },
        spec: {
          selector: { matchLabels: { subscription: "koku" } },
          bundle: { name: "koku-4.4.1", spec: { class: "proc-allow", refs: [ref] } },
        },
      } as unknown as KubeObject);
      // kill as soon as the controller has started working on it (the Bundle it creates exists)
      await waitFor(admin, API_VERSION, "Bundle", "koku-4.4.1", (b) => b !== undefined, "created by the controller");
      await stop(first, "SIGKILL");
      const second = startController(kubeconfig, state);
      procs.push(second);
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "koku",
        (o) => cond(o, "Installed")?.status === "True",
        "Installed after the restart",
      );
      const expected = convertRegistryV1(readBundleDirectory(join(OPS, "koku-metrics-operator", "4.4.1")));
      assert.equal(inst?.status?.objects?.length, expected.objects.length);
      // every object exactly once, none left over: list each kind by the Instance's label
      for (const kind of new Set(expected.objects.map((o) => `${o.apiVersion}|${o.kind}`))) {
        const [apiVersion, k] = kind.split("|");
        const { items } = await admin.list(apiVersion, k, { labelSelector: `${LABEL_INSTANCE}=koku` });
        const want = expected.objects
          .filter((o) => o.apiVersion === apiVersion && o.kind === k)
          .map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`)
          .sort();
        assert.deepEqual(
          items.map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`).sort(),
          want,
          `${k} objects`,
        );
      }
      const { items: bundles } = await admin.list<Bundle>(API_VERSION, "Bundle", {
        labelSelector: `${LABEL_INSTANCE}=koku`,
      });
      assert.deepEqual(
        bundles.map((b) => b.metadata.name),
        ["koku-4.4.1"],
      );
      await stop(second);
    },
  );

  test("kubectl instance approve (the plugin, via the real kubectl) is refused for a user without the approve verb", {
    skip: spawnSync(KUBECTL, ["version", "--client"]).status !== 0 && "kubectl not built",
  }, async () => {
    const ctl = startController(kubeconfig, join(tmp, "state2"));
    procs.push(ctl);
    await ctl.waitLog(/controllers started/);
    // alice may read Instances and write their status, but has no approve verb
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "proc-alice" },
      rules: [
        { apiGroups: ["rukpak.io"], resources: ["instances"], verbs: ["get", "list"] },
        { apiGroups: ["rukpak.io"], resources: ["instances/status"], verbs: ["get", "update", "patch"] },
        { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get"] },
      ],
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "proc-alice" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "proc-alice" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" }],
    } as unknown as KubeObject);
    const env = { ...process.env, KUBECONFIG: kubeconfig, PATH: `${join(REPO_ROOT, "bin")}:${process.env.PATH}` };
    const denied = spawnSync(KUBECTL, ["instance", "approve", "koku", "--context", "alice"], { env, encoding: "utf8" });
    assert.notEqual(denied.status, 0);
    assert.match(denied.stderr, /alice may not change the Approved condition of Instance "koku"/);
    const listed = spawnSync(KUBECTL, ["instance", "list", "--context", "admin"], { env, encoding: "utf8" });
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(
      listed.stdout,
      /^koku\s+koku-4\.4\.1\s+koku-4\.4\.1\s+True \(AllowAll\)\s+True \(InstallationSucceeded\)$/m,
    );
    await stop(ctl);
  });

  test(
    "the API server restarted: informers resume (watching again, or " +
      "listing again when their version is gone) and installs go on",
    async () => {
      const ctl = startController(kubeconfig, join(tmp, "state3"));
      procs.push(ctl);
      await ctl.waitLog(/controllers started/);
      const seen: string[] = [];
      const informer = new Informer(admin, API_VERSION, "ProvisionerClass");
      let sawAfterRestart: () => void = () => undefined;
      const afterRestart = new Promise<void>((resolve) => (sawAfterRestart = resolve));
      informer.on((ev, o) => {
        seen.push(`${ev}:${o.metadata.name}`);
        if (ev === "add" && o.metadata.name === "after-restart") sawAfterRestart();
      });
      await informer.start();
      try {
        const env = {
          ...process.env,
          ...(JSON.parse(process.env.OPCAT_TEST_KUBE_ENV ?? "{}") as Record<string, string>),
        };
        const r = spawnSync("bash", [join(REPO_ROOT, "scripts", "kube", "cluster.sh"), "restart-apiserver"], {
          env,
          encoding: "utf8",
        });
        assert.equal(r.status, 0, r.stderr);
        await admin.apply({
          apiVersion: API_VERSION,
          kind: "ProvisionerClass",
          metadata: { name: "after-restart" },
          provisioner: OPERATOR_PROVISIONER,
          parameters: { approval: "AllowAll" },
        } as unknown as KubeObject);
        // The informer's own add event (a guard timer only turns a hang into a message).
        let guard: NodeJS.Timeout | undefined;
        await Promise.race([
          afterRestart,
          new Promise<never>((_res, reject) => {
            guard = setTimeout(
              () => reject(new Error(`the informer saw no event after the restart: ${seen.join(", ")}`)),
              120_000,
            );
          }),
        ]).finally(() => clearTimeout(guard));
      } finally {
        informer.stop();
      }
      await admin.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "apicurio" },
        spec: {
          selector: { matchLabels: { subscription: "apicurio" } },
          bundle: { name: "apicurio-3.3.1", spec: { class: "after-restart", refs: [ref2] } },
        },
      } as unknown as KubeObject);
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "apicurio",
        (o) => cond(o, "Installed")?.status === "True",
        "Installed after the API server restart",
      );
      await stop(ctl);
    },
  );

  test("an informer resuming from a resourceVersion the server no longer has gets 410 Gone and lists again", {
    timeout: 120_000,
  }, async () => {
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "proc-410" },
      provisioner: OPERATOR_PROVISIONER,
    } as unknown as KubeObject);
    const informer = new Informer(admin, API_VERSION, "ProvisionerClass", { resourceVersion: "1" });
    // resuming from version 1, the cache starts empty: the class arrives with the list after 410 Gone
    const seen = new Promise<void>((res) =>
      informer.on((ev, o) => {
        if (ev === "add" && o.metadata.name === "proc-410") res();
      }),
    );
    try {
      await informer.start();
      await seen;
      assert.ok(informer.lists >= 1, "the informer listed");
      assert.ok(informer.gone >= 1, "the server answered 410 Gone");
      assert.ok(informer.get("proc-410"), "the relisted cache holds the classes");
    } finally {
      informer.stop();
      await admin.delete(API_VERSION, "ProvisionerClass", "proc-410").catch(() => false);
    }
  });

  // (the timeout bounds a hang, no performance threshold: a watch that loses the event never delivers it)
  test("a watch keeps multi-byte text whole where the stream splits it between chunks", {
    timeout: 120_000,
  }, async () => {
    // 2-, 3- and 4-byte UTF-8 characters, some 600 KB of them: the stream arrives in many chunks
    const text = "ö€𝄞".repeat(60_000);
    const ns = "default";
    const name = "opcat-utf8-watch";
    await admin.delete("v1", "ConfigMap", name, ns).catch(() => false);
    const informer = new Informer<KubeObject & { data?: Record<string, string> }>(admin, "v1", "ConfigMap", {
      namespace: ns,
      labelSelector: "opcat-test=utf8-watch",
    });
    const added = new Promise<KubeObject & { data?: Record<string, string> }>((res) =>
      informer.on((ev, o) => {
        if (ev === "add" && o.metadata.name === name) res(o);
      }),
    );
    try {
      await informer.start();
      await admin.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: ns, labels: { "opcat-test": "utf8-watch" } },
        data: { text },
      } as KubeObject);
      const o = await added;
      assert.equal(informer.lists, 1, "seen by the watch, not by a list");
      assert.equal(o.data?.text.length, text.length);
      assert.ok(o.data?.text === text, "the text arrived unchanged");
    } finally {
      informer.stop();
      await admin.delete("v1", "ConfigMap", name, ns).catch(() => false);
    }
  });

  test(
    "opcat instance describe shows the conditions and what the controllers unpacked and installed; " +
      "with --pull, the objects the bundle creates and the permissions it grants",
    () => {
      const describe = (...more: string[]) =>
        spawnSync(
          process.execPath,
          [
            join(REPO_ROOT, "bin", "opcat"),
            "instance",
            "describe",
            "koku",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "admin",
            ...more,
          ],
          { encoding: "utf8" },
        );
      // without --pull nothing is pulled on the client: what the controllers recorded
      const recorded = describe();
      assert.equal(recorded.status, 0, recorded.stderr);
      assert.match(
        recorded.stdout,
        /^Unpacked \(as the controllers recorded it\):\n {2}State: +Done \(Successfully unpacked/m,
      );
      assert.match(recorded.stdout, /^ {2}Format: +registry\+v1$/m);
      assert.match(recorded.stdout, /^ {2}Digest: +sha256:[0-9a-f]{64}$/m);
      assert.match(recorded.stdout, /^ {4}ClusterServiceVersion \S+koku-metrics-operator\S*$/m);
      assert.match(recorded.stdout, /^Installed objects \(\d+\):\n {2}\S+ /m);
      assert.match(recorded.stdout, /^ {2}Deployment \S+\/koku-metrics-operator/m);
      assert.doesNotMatch(recorded.stdout, /^Would create/m);
      const r = describe("--pull", "--use-http", "--cache-dir", join(tmp, "describe-cache"));
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^Bundle:\s+koku-4\.4\.1$/m);
      assert.match(
        r.stdout,
        /^  Installed=True InstallationSucceeded: Instantiated bundle koku-4\.4\.1 successfully$/m,
      );
      assert.match(r.stdout, /^  Unpacked=True UnpackSuccessful: /m);
      const expected = convertRegistryV1(readBundleDirectory(join(OPS, "koku-metrics-operator", "4.4.1")));
      assert.match(r.stdout, new RegExp(`^Would create \\(${expected.objects.length} objects\\):$`, "m"));
      for (const o of expected.objects)
        assert.ok(
          r.stdout.includes(
            `  ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}\n`,
          ),
          `${o.kind} ${o.metadata.name} listed`,
        );
      assert.match(r.stdout, /^Permissions granted \(\d+ rules\):$/m);
      assert.match(r.stdout, / cluster-wide for ServiceAccount koku-metrics-operator\//);
    },
  );

  test(
    "attack 12: SIGKILL mid-pivot, then a new target: nothing the interrupted pivot applied is orphaned, " +
      "and Installed is not True while a pivot is half applied",
    async () => {
      const ns = "pivot-kill";
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } as KubeObject);
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name: "proc-plain" },
        provisioner: "rukpak.io/plain",
        parameters: { approval: "AllowAll" },
      } as unknown as KubeObject);
      const objects = (prefix: string, n: number) =>
        Array.from(
          { length: n },
          (_, i) =>
            `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${prefix}-${i}\n  namespace: ${ns}\n` +
            `  labels: {pivot-object: "${prefix}"}\ndata:\n  i: "${i}"\n`,
        ).join("---\n");
      for (const [name, n] of [
        ["a", 5],
        ["b", 600],
        ["c", 5],
      ] as const)
        await admin.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `src-${name}`, namespace: ns },
          data: { "objects.yaml": objects(name, n) },
        } as unknown as KubeObject);
      const bundle = (name: string) => ({
        name: `pivot-${name}`,
        spec: {
          class: "proc-plain",
          refs: ["file://content"],
          volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: `src-${name}`, namespace: ns } }],
        },
      });
      const count = async (prefix: string) =>
        (await admin.list("v1", "ConfigMap", { namespace: ns, labelSelector: `pivot-object=${prefix}` })).items.length;
      const state = join(tmp, "state-pivot");
      const first = startController(kubeconfig, state);
      procs.push(first);
      await first.waitLog(/controllers started/);
      await admin.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "pivot" },
        spec: { selector: { matchLabels: { pivot: "yes" } }, bundle: bundle("a") },
      } as unknown as KubeObject);
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "pivot",
        (o) => cond(o, "Installed")?.status === "True" && o?.status?.activeBundle === "pivot-a",
        "Installed pivot-a",
      );
      // the pivot to b: killed once some of its 600 objects exist
      const informer = new Informer(admin, "v1", "ConfigMap", { namespace: ns, labelSelector: "pivot-object=b" });
      let seen = 0;
      const some = new Promise<void>((res) =>
        informer.on((ev) => {
          if (ev === "add" && ++seen === 50) res();
        }),
      );
      await informer.start();
      try {
        await admin.mergePatch(API_VERSION, "Instance", "pivot", { spec: { bundle: bundle("b") } });
        await some;
        await stop(first, "SIGKILL");
      } finally {
        informer.stop();
      }
      const b = await count("b");
      assert.ok(b > 0 && b < 600, `killed mid-pivot (${b} of 600 applied)`);
      const half = await admin.get<Instance>(API_VERSION, "Instance", "pivot");
      assert.notEqual(cond(half, "Installed")?.status, "True", "not Installed while half applied");
      // while no controller runs, an admin (webhooks removed) points the Instance at c
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
        await admin.delete("admissionregistration.k8s.io/v1", kind, "opcat-rukpak");
      await admin.mergePatch(API_VERSION, "Instance", "pivot", { spec: { bundle: bundle("c") } });
      const second = startController(kubeconfig, state);
      procs.push(second);
      await second.waitLog(/controllers started/);
      // changed without the webhook: nobody verifiable asked for c, so its content is not read
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "pivot",
        (o) => /cannot be verified/.test(cond(o, "Unpacked")?.message ?? ""),
        "c refused until its requester is recorded",
      );
      // the admin changes the spec again with the webhook serving: recorded and signed, c installs
      await admin.mergePatch(API_VERSION, "Instance", "pivot", {
        spec: { selector: { matchLabels: { pivot: "yes", recorded: "yes" } } },
      });
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "pivot",
        (o) => cond(o, "Installed")?.status === "True" && o?.status?.activeBundle === "pivot-c",
        "Installed pivot-c",
      );
      assert.equal(await count("a"), 0, "a pruned");
      assert.equal(await count("b"), 0, "what the interrupted pivot applied is pruned too");
      assert.equal(await count("c"), 5);
      await admin.delete(API_VERSION, "Instance", "pivot");
      await stop(second);
    },
  );

  test("leader election: of two processes only one acts; when it is killed the other takes over", async () => {
    const a = startController(kubeconfig, join(tmp, "state-a"), [
      "--leader-elect-namespace",
      "default",
      "--no-webhooks",
    ]);
    procs.push(a);
    await a.waitLog(/leading: starting the controllers/);
    const b = startController(kubeconfig, join(tmp, "state-b"), [
      "--leader-elect-namespace",
      "default",
      "--no-webhooks",
    ]);
    procs.push(b);
    const lease = await waitFor<KubeObject & { spec?: { holderIdentity?: string } }>(
      admin,
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      (l) => Boolean(l?.spec?.holderIdentity),
      "held",
      60_000,
      "default",
    );
    assert.match(lease?.spec?.holderIdentity ?? "", new RegExp(`-${a.child.pid}$`));
    assert.ok(
      !b.log.some((l) => /leading/.test(l)),
      "the second process does not lead while the first holds the Lease",
    );
    await stop(a, "SIGKILL");
    await b.waitLog(/leading: starting the controllers/);
    const after = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      "default",
    );
    assert.match(after.spec?.holderIdentity ?? "", new RegExp(`-${b.child.pid}$`));
    await stop(b);
  });
});
