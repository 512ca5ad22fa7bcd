/**
 * The in-cluster pieces that need no cluster: the manifests (every flag they pass is one `opcat cluster
 * run` takes), the shared webhook certificate's coverage and expiry check, Prometheus text, and how a
 * Pod's state becomes the reason an Instance is not Available.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { makeServingCerts } from "./kube/certs.js";
import { prometheusText } from "./health.js";
import { clusterManifests, REGISTRIES_CONF_MAP } from "./manifests.js";
import { podProblem, workloadState } from "./rukpak/availability.js";
import { certCovers, ROTATE_BEFORE_MS } from "./servingcert.js";
import type { KubeClient, KubeObject } from "./kube/client.js";
import { WorkQueue } from "./kube/queue.js";
import { ControllerSet, controllerMetrics } from "./run.js";
import type { RukpakController } from "./rukpak/controller.js";

const REPO = process.env.OPCAT_REPO_ROOT ?? join(import.meta.dirname, "..", "..");

type Container = { args: string[]; readinessProbe?: unknown; livenessProbe?: unknown; securityContext?: unknown };
type Dep = KubeObject & { spec: { replicas: number; template: { spec: { containers: Container[] } } } };

test("manifests: two probed, restricted replicas, a PDB, three Services, registries.conf only when given", () => {
  const objs = clusterManifests({ image: "r.example/opcat@sha256:abc", registriesConf: "# mirrors\n" });
  const kinds = (k: string) => objs.filter((o) => o.kind === k).map((o) => o.metadata.name);
  assert.deepEqual(kinds("Service").sort(), ["opcat-catalogd", "opcat-metrics", "opcat-rukpak-webhook"]);
  assert.deepEqual(kinds("PodDisruptionBudget"), ["opcat-rukpak"]);
  assert.deepEqual(kinds("ConfigMap"), [REGISTRIES_CONF_MAP]);
  assert.deepEqual(kinds("ValidatingWebhookConfiguration"), ["opcat-rukpak"]);
  const d = objs.find((o) => o.kind === "Deployment") as Dep;
  assert.equal(d.spec.replicas, 2);
  const c = d.spec.template.spec.containers[0];
  assert.ok(c.readinessProbe && c.livenessProbe);
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
    readOnlyRootFilesystem: true,
  });
  assert.ok(c.args.includes("--registries-conf=/etc/opcat/registries.conf"));
  const without = clusterManifests({ image: "x" });
  assert.equal(without.filter((o) => o.kind === "ConfigMap").length, 0);
  // every flag the Deployment passes is one `opcat cluster run` takes
  const help = spawnSync(process.execPath, [join(REPO, "bin", "opcat"), "cluster", "run", "--help"], {
    encoding: "utf8",
  }).stdout;
  for (const a of c.args.filter((x) => x.startsWith("--")))
    assert.ok(help.includes(`${a.split("=")[0]} `), `cluster run takes ${a.split("=")[0]}`);
});

test("the shared webhook certificate is kept while it names every host and is far from expiry", () => {
  const hosts = ["opcat-rukpak-webhook.opcat-system.svc", "127.0.0.1"];
  const c = makeServingCerts(hosts, 365);
  assert.equal(certCovers(c.cert, hosts), true);
  assert.equal(certCovers(c.cert, [...hosts, "other.svc"]), false, "a name it lacks");
  assert.equal(certCovers(c.cert, hosts, Date.now() + 365 * 86_400_000 - ROTATE_BEFORE_MS + 86_400_000), false);
  assert.equal(certCovers("not a certificate", hosts), false);
});

test("metrics in Prometheus text format", () => {
  const text = prometheusText([
    { name: "opcat_queue_depth", help: "Keys waiting.", type: "gauge", samples: [[{ controller: 'a"b' }, 3]] },
  ]);
  assert.equal(
    text,
    '# HELP opcat_queue_depth Keys waiting.\n# TYPE opcat_queue_depth gauge\nopcat_queue_depth{controller="a\\"b"} 3\n',
  );
});

test("metrics: reconcile errors and a histogram of durations per controller", () => {
  const rukpak = { bundleQueue: new WorkQueue(), instanceQueue: new WorkQueue() } as unknown as RukpakController;
  const set = new ControllerSet(rukpak);
  set.rukpak.instanceQueue.durations.observe(0.02);
  set.rukpak.instanceQueue.durations.observe(3);
  set.rukpak.instanceQueue.errors = 1;
  const client = {
    stats: { total: 3, byVerb: { GET: 1, PUT: 2 }, byResource: { "GET instances": 1, "PUT instances/status": 2 } },
  } as unknown as KubeClient;
  const text = prometheusText(controllerMetrics(client, set));
  assert.match(text, /^# TYPE opcat_reconcile_duration_seconds histogram$/m);
  const line = (l: string) => assert.ok(text.split("\n").includes(l), `${l} in\n${text}`);
  line('opcat_api_requests_total{verb="PUT"} 2');
  line('opcat_api_requests_by_resource_total{request="PUT instances/status"} 2');
  line('opcat_reconcile_errors_total{controller="instance"} 1');
  line('opcat_reconcile_errors_total{controller="bundle"} 0');
  line('opcat_reconcile_duration_seconds_bucket{controller="instance",le="0.01"} 0');
  line('opcat_reconcile_duration_seconds_bucket{controller="instance",le="0.025"} 1');
  line('opcat_reconcile_duration_seconds_bucket{controller="instance",le="2.5"} 1');
  line('opcat_reconcile_duration_seconds_bucket{controller="instance",le="5"} 2');
  line('opcat_reconcile_duration_seconds_bucket{controller="instance",le="+Inf"} 2');
  line('opcat_reconcile_duration_seconds_sum{controller="instance"} 3.02');
  line('opcat_reconcile_duration_seconds_count{controller="instance"} 2');
  // the process's memory, as serve's /metrics reports it
  assert.ok(Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]) > 0, text);
  assert.ok(Number(/^nodejs_heap_size_used_bytes (\d+)$/m.exec(text)?.[1]) > 0, text);
});

test("a Pod's state becomes the reason, naming the Pod and the container", () => {
  const pod = (status: unknown) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "op-1", namespace: "ns" },
    status: status as never,
  });
  assert.deepEqual(
    podProblem(
      pod({
        phase: "Pending",
        containerStatuses: [
          { name: "manager", ready: false, state: { waiting: { reason: "ImagePullBackOff", message: "not found" } } },
        ],
      }),
    ),
    { reason: "ImagePullBackOff", message: "container manager of Pod ns/op-1: ImagePullBackOff: not found" },
  );
  const crash = podProblem(
    pod({
      phase: "Running",
      containerStatuses: [
        {
          name: "manager",
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s" } },
          lastState: { terminated: { reason: "Error", exitCode: 1 } },
        },
      ],
    }),
  );
  assert.equal(crash?.reason, "CrashLoopBackOff");
  assert.match(crash?.message ?? "", /last exit: Error, code 1/);
  const unready = podProblem(
    pod({ phase: "Running", containerStatuses: [{ name: "manager", ready: false, state: { running: {} } }] }),
  );
  assert.equal(unready?.reason, "ContainerNotReady");
  const unsched = podProblem(
    pod({ phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] }),
  );
  assert.equal(unsched?.reason, "Unschedulable");
  assert.equal(
    podProblem(pod({ phase: "Running", containerStatuses: [{ name: "m", ready: true, state: { running: {} } }] })),
    undefined,
  );
});

test("a Deployment is available from its status, and rolling out while replicas are not updated", () => {
  const dep = (status: unknown, generation = 1) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d", namespace: "ns", generation },
    spec: { replicas: 2 },
    status: status as never,
  });
  const ok = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 };
  assert.deepEqual(workloadState(dep({ ...ok, conditions: [{ type: "Available", status: "True" }] })), {
    available: true,
    progressing: false,
    what: "Deployment ns/d",
  });
  const rolling = workloadState(
    dep({ ...ok, updatedReplicas: 1, conditions: [{ type: "Available", status: "True" }] }),
  );
  assert.equal(rolling.progressing, true);
  assert.equal(workloadState(dep({ ...ok, conditions: [{ type: "Available", status: "True" }] }, 2)).available, false);
  assert.equal(workloadState(dep({ observedGeneration: 1, replicas: 2, availableReplicas: 0 })).available, false);
});
