/**
 * Available and Progressing of installed Instances on a real API server: the availability controller,
 * on the controller runtime, reads the workloads from its caches and follows their status. This
 * cluster runs no Deployment controller and no node (test/node does, with real Pods), so the test
 * writes the Deployment's and a Pod's status through their status subresources, as those would.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, type Instance } from "../../src/cluster/rukpak/api.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();

/** An entry of metadata.managedFields. */
interface ManagedFields {
  manager: string;
  operation: string;
  subresource?: string;
  fieldsV1?: { "f:status"?: { "f:conditions"?: Record<string, unknown> } };
}
const NS = "avail";

const deployment = (name: string, replicas: number) =>
  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n" +
  `  name: ${name}\n  namespace: ${NS}\nspec:\n  replicas: ${replicas}\n` +
  `  selector:\n    matchLabels:\n      app: ${name}\n` +
  `  template:\n    metadata:\n      labels:\n        app: ${name}\n` +
  "    spec:\n      containers:\n      - name: main\n        image: registry.invalid/never-pulled:1\n";

describe("availability of installed Instances (real API server)", { skip: cluster.skip, concurrency: false }, () => {
  let admin: KubeClient;
  let running: RunningControllers | undefined;
  let tmp = "";
  /** GETs of single Deployments (the controllers read them from their caches). */
  const deploymentGets: string[] = [];

  async function install(name: string, replicas: number): Promise<void> {
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `src-${name}`, namespace: NS },
      data: { "objects.yaml": deployment(name, replicas) },
    } as unknown as KubeObject);
    await admin.create<Instance>({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: `avail-${name}` },
      spec: {
        selector: { matchLabels: { avail: name } },
        bundle: {
          name: `avail-${name}-1`,
          spec: {
            class: "avail-allow",
            refs: ["file://content"],
            volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: `src-${name}`, namespace: NS } }],
          },
        },
      },
    });
  }

  before(async () => {
    if (cluster.skip !== false) return;
    admin = clientAs(cluster.kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-avail-"));
    running = await runControllers({
      kubeconfig: cluster.kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      deppy: false,
      availability: true,
      log: controllerLog("availability-controllers"),
    });
    running.client.requestListeners.add((method, path) => {
      if (method === "GET" && /\/deployments\/[^/?]+(\?|$)/.test(path)) deploymentGets.push(path);
    });
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as unknown as KubeObject);
    // no controller-manager makes it here; Pods are admitted only with their service account
    await admin.apply({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: NS },
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "avail-allow" },
      provisioner: "rukpak.io/plain",
      parameters: { approval: "AllowAll" },
    } as unknown as KubeObject);
  });

  after(async () => {
    for (const n of ["avail-zero", "avail-one"]) await admin?.delete(API_VERSION, "Instance", n).catch(() => false);
    await running?.stop();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** Writes a Deployment's status as the Deployment controller would. */
  async function deploymentStatus(name: string, available: boolean): Promise<void> {
    const d = await admin.get<KubeObject & { status?: object }>("apps/v1", "Deployment", name, NS);
    const n = available ? 1 : 0;
    d.status = {
      observedGeneration: d.metadata.generation,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: n,
      availableReplicas: n,
      ...(available ? {} : { unavailableReplicas: 1 }),
      conditions: [
        {
          type: "Available",
          status: available ? "True" : "False",
          reason: available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
          message: "written by the test",
        },
      ],
    };
    await admin.replace(d, { subresource: "status" });
  }

  const available = (status: string) => (o: Instance | undefined) =>
    cond(o, "Installed")?.status === "True" && cond(o, "Available")?.status === status;

  test("a Deployment not yet rolled out keeps the Instance not Available; its status makes it Available", async () => {
    await install("zero", 1);
    let inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "avail-zero",
      available("False"),
      "not Available",
    );
    assert.equal(cond(inst, "Available")?.message, `Not available: Deployment ${NS}/zero`);
    assert.equal(cond(inst, "Progressing")?.reason, "RollingOut");
    await deploymentStatus("zero", true);
    inst = await waitFor<Instance>(admin, API_VERSION, "Instance", "avail-zero", available("True"), "Available");
    assert.equal(cond(inst, "Available")?.reason, "WorkloadsAvailable");
    assert.equal(cond(inst, "Available")?.message, `Available: Deployment ${NS}/zero`);
    assert.equal(cond(inst, "Progressing")?.reason, "RolloutComplete");
    // its conditions are applied with its own field manager, the Instance controller's left to it
    const managed = (inst?.metadata.managedFields ?? []) as ManagedFields[];
    const owned = (manager: string, mine = true) =>
      managed
        .filter((f) => (f.manager === manager) === mine && f.subresource === "status")
        .flatMap((f) => Object.keys(f.fieldsV1?.["f:status"]?.["f:conditions"] ?? {}))
        .filter((k) => k.startsWith("k:"))
        .sort();
    assert.deepEqual(owned("opcat-availability"), ['k:{"type":"Available"}', 'k:{"type":"Progressing"}']);
    assert.ok(managed.some((f) => f.manager === "opcat-availability" && f.operation === "Apply"));
    assert.ok(owned("opcat-availability", false).includes('k:{"type":"Installed"}'), "Installed: another manager's");
    assert.equal(cond(inst, "Installed")?.status, "True", "the Instance controller's condition kept");
  });

  test("a Pod that cannot pull its image: not Available, naming the Pod, its container and the reason", async () => {
    await install("one", 1);
    await waitFor<Instance>(admin, API_VERSION, "Instance", "avail-one", available("False"), "not Available");
    const pod = await admin.create<KubeObject & { status?: object }>({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "one-abc", namespace: NS, labels: { app: "one" } },
      spec: { containers: [{ name: "main", image: "registry.invalid/never-pulled:1" }] },
    } as unknown as KubeObject);
    pod.status = {
      phase: "Pending",
      containerStatuses: [
        {
          name: "main",
          ready: false,
          restartCount: 0,
          image: "registry.invalid/never-pulled:1",
          imageID: "",
          state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } },
        },
      ],
    };
    await admin.replace(pod, { subresource: "status" });
    await deploymentStatus("one", false);
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "avail-one",
      (o) => cond(o, "Available")?.reason === "ImagePullBackOff",
      "Available=False naming the image pull",
    );
    assert.equal(
      cond(inst, "Available")?.message,
      `Not available: Deployment ${NS}/one: container main of Pod ${NS}/one-abc: ImagePullBackOff: ` +
        "Back-off pulling image",
    );
  });

  test("once its Pods run it becomes Available; following it read no Deployment from the API server", async () => {
    // RukPak reads an object live before it applies it (whose it is must not come from a stale cache)
    deploymentGets.length = 0;
    await admin.delete("v1", "Pod", "one-abc", NS);
    await deploymentStatus("one", true);
    await waitFor<Instance>(admin, API_VERSION, "Instance", "avail-one", available("True"), "Available");
    assert.deepEqual(deploymentGets, []);
  });

  test("a pass over an installed, unchanged Instance applies nothing; a deleted object is applied again", async () => {
    const rukpak = running!.controllers.rukpak;
    const writes: string[] = [];
    const listener = (method: string, path: string) => {
      if (method !== "GET") writes.push(`${method} ${path}`);
    };
    running!.client.requestListeners.add(listener);
    try {
      // what a status write of its own or an unrelated event would do: one more pass
      rukpak.instanceQueue.add("avail-zero");
      await rukpak.instanceQueue.idle();
      assert.deepEqual(writes, [], "nothing applied, recorded or written");
      // an object deleted behind its back (ClusterExtension's installed-object watch asks for this)
      const uid = (await admin.get("apps/v1", "Deployment", "zero", NS)).metadata.uid;
      await admin.delete("apps/v1", "Deployment", "zero", NS);
      rukpak.resync("avail-zero");
      await waitFor(
        admin,
        "apps/v1",
        "Deployment",
        "zero",
        (o) => !!o && o.metadata.uid !== uid,
        "applied again",
        60_000,
        NS,
      );
    } finally {
      running!.client.requestListeners.delete(listener);
    }
  });
});
