/**
 * The real-cluster side of the test harness. scripts/run-tests.mjs starts etcd + kube-apiserver
 * (scripts/kube/cluster.sh) when cluster tests are selected and passes KUBECONFIG (contexts admin,
 * alice, bob, carol); without it the cluster tests skip with a message, except under CI=true, where a
 * missing cluster is a failure.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient, type KubeObject } from "../../src/cluster/kube/client.js";

export function clusterKubeconfig(): { kubeconfig: string; skip: false } | { skip: string } {
  const kc = process.env.OPCAT_TEST_KUBECONFIG;
  if (kc) return { kubeconfig: kc, skip: false };
  const why =
    "no test cluster (scripts/run-tests.mjs starts one with scripts/kube/cluster.sh " +
    "when its binaries are built: scripts/kube/cluster.sh build)";
  if (process.env.CI === "true") throw new Error(`CI=true: ${why}`);
  return { skip: why };
}

/**
 * The cluster with a real node for the node tests (test/node/): scripts/run-tests.mjs starts it with
 * `WITH_NODE=1 scripts/kube/cluster.sh start` after the cluster tests and passes its kubeconfig and
 * registry (plain HTTP on the node's bridge, reached by the node's containerd and by Pods). Without it
 * the node tests skip with a message, except under CI=true.
 */
export function nodeCluster(): { kubeconfig: string; registry: string; skip: false } | { skip: string } {
  const kubeconfig = process.env.OPCAT_TEST_KUBECONFIG;
  const registry = process.env.OPCAT_TEST_REGISTRY;
  if (kubeconfig && registry) return { kubeconfig, registry, skip: false };
  const why =
    "no test node (scripts/run-tests.mjs starts one with WITH_NODE=1 scripts/kube/cluster.sh start: it needs " +
    "root, the binaries of scripts/kube/cluster.sh build, and containerd, runc, containernetworking-plugins)";
  if (process.env.CI === "true") throw new Error(`CI=true: ${why}`);
  return { skip: why };
}

/**
 * The log sink for controllers a test file runs in-process: stderr with OPCAT_TEST_LOG=1, else a file
 * `<name>.log` in OPCAT_TEST_LOG_DIR (scripts/run-tests.mjs points it at the test cluster's log folder
 * and prints the tails of that folder when a cluster test fails), else nothing.
 */
export function controllerLog(name: string): (m: string) => void {
  if (process.env.OPCAT_TEST_LOG) return (m) => process.stderr.write(`${m}\n`);
  const dir = process.env.OPCAT_TEST_LOG_DIR;
  if (!dir) return () => {};
  const file = join(dir, `${name}.log`);
  return (m) => appendFileSync(file, `${new Date().toISOString()} ${m}\n`);
}

/**
 * What a timeout message shows of an object: who owns it, when it
 * was made, whether it is being deleted, its status.
 */
function describeObject(o: KubeObject | undefined): string {
  if (!o) return "null";
  const m = o.metadata;
  return JSON.stringify({
    metadata: {
      uid: m.uid,
      generation: m.generation,
      creationTimestamp: m.creationTimestamp,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(m.finalizers?.length ? { finalizers: m.finalizers } : {}),
      ...(m.ownerReferences?.length
        ? { ownerReferences: m.ownerReferences.map((r) => `${r.kind}/${r.name} (${r.uid})`) }
        : {}),
      ...(m.labels ? { labels: m.labels } : {}),
    },
    status: (o as { status?: unknown }).status,
  });
}

export function clientAs(kubeconfig: string, context: string): KubeClient {
  return KubeClient.connect({ kubeconfig, context });
}

/**
 * The one wait of the cluster tests: reads, and while `holds` is false watches `path` (with
 * `fieldSelector`, from the version read) until an event passes `wakes`, then reads again. The timeout
 * only bounds a hung test and is no performance threshold.
 */
async function readWatchUntil<T>(
  client: KubeClient,
  path: string,
  fieldSelector: string,
  read: () => Promise<{ value: T; resourceVersion: string }>,
  holds: (v: T) => boolean,
  wakes: (ev: { type: string; object: unknown }) => boolean,
  timeoutMs: number,
  timedOut: (last: T) => Error,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { value, resourceVersion } = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw timedOut(value);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 5_000);
    try {
      await client.watch(
        path,
        { fieldSelector, resourceVersion, timeoutSeconds: 5 },
        (ev) => {
          if (wakes(ev)) ac.abort();
        },
        ac.signal,
      );
    } catch {
      // a watch error (e.g. 410): read again
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Waits until `pred` holds for the object (watching it). Resolves with the object. */
export async function waitFor<T extends KubeObject>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  name: string,
  pred: (o: T | undefined) => boolean,
  what: string,
  timeoutMs = 180_000,
  namespace?: string,
): Promise<T | undefined> {
  return readWatchUntil<T | undefined>(
    client,
    await client.path(apiVersion, kind, namespace),
    `metadata.name=${name}`,
    async () => {
      const o = await client.tryGet<T>(apiVersion, kind, name, namespace);
      return { value: o, resourceVersion: o?.metadata.resourceVersion ?? "0" };
    },
    pred,
    (ev) => ev.type !== "BOOKMARK" && pred(ev.type === "DELETED" ? undefined : (ev.object as T)),
    timeoutMs,
    (last) => new Error(`timed out waiting for ${kind} ${name}: ${what}; last seen: ${describeObject(last)}`),
  );
}

type Crd = KubeObject & {
  spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
};

/**
 * Waits until CRD `name` is gone. The API server's own finalizer (customresourcecleanup) deletes its
 * custom resources first, listing them through the custom resources' watch cache, which the API
 * server makes on first use: while that cache initializes, the list fails ("storage is
 * (re)initializing", Kubernetes' resilient watch cache initialization, KEP-4568) and the finalizer
 * tries again with its work queue's exponential backoff — minutes under load (operator-controller's
 * e2e tests met the same: operator-framework/operator-controller#1437). Only that blocks, so only
 * that is removed: while the Terminating condition says InstanceDeletionFailed, the CRD gets a new
 * annotation (any change but the condition re-queues the finalizer at once), at most every few seconds.
 * Nothing else is forced: no finalizer is removed. On time-out the error says where the finalizer
 * stands, which custom resources are left and with which finalizers, who last wrote the CRD, and
 * what kube-apiserver logged about it.
 */
export async function waitForCrdGone(client: KubeClient, name: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let nudges = 0;
  for (;;) {
    const crd = await client.tryGet<Crd>("apiextensions.k8s.io/v1", "CustomResourceDefinition", name);
    if (!crd) return;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for CustomResourceDefinition ${name}: gone (${nudges} finalizer re-queues)\n` +
          (await crdDiagnosis(client, name)),
      );
    const terminating = crd.status?.conditions?.find((c) => c.type === "Terminating");
    if (crd.metadata.deletionTimestamp && terminating?.reason === "InstanceDeletionFailed") {
      nudges++;
      await client
        .mergePatch("apiextensions.k8s.io/v1", "CustomResourceDefinition", name, {
          metadata: { annotations: { "opcat.test/requeue-finalizer": String(nudges) } },
        })
        .catch(() => undefined);
    }
    // a watch until it is gone, bounded so that a finalizer backing off is looked at again
    await waitFor(
      client,
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      name,
      (o) => o === undefined,
      "gone",
      2_000,
    ).catch(() => undefined);
  }
}

async function crdDiagnosis(client: KubeClient, name: string): Promise<string> {
  const crd = await client
    .tryGet<Crd>("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
    .catch(() => undefined);
  if (!crd) return "  (the CRD is gone now)";
  const lines: string[] = [];
  for (const c of crd.status?.conditions ?? [])
    lines.push(`  condition ${c.type}=${c.status} ${c.reason ?? ""}: ${c.message ?? ""}`);
  const managed = (crd.metadata.managedFields ?? []) as {
    manager?: string;
    operation?: string;
    subresource?: string;
    time?: string;
  }[];
  for (const m of managed)
    lines.push(`  written by ${m.manager} (${m.operation}${m.subresource ? ` ${m.subresource}` : ""}) at ${m.time}`);
  for (const v of crd.spec?.versions ?? []) {
    if (v.served === false) continue;
    const left = await client
      .list(`${crd.spec?.group}/${v.name}`, crd.spec?.names?.kind ?? "")
      .then((l) =>
        l.items.map(
          (o) => `${o.metadata.namespace ?? ""}/${o.metadata.name} ${JSON.stringify(o.metadata.finalizers ?? [])}`,
        ),
      )
      .catch((err: Error) => [`(list failed: ${err.message})`]);
    lines.push(`  custom resources left in ${v.name}: ${left.length ? left.join(", ") : "none"}`);
  }
  const dir = process.env.OPCAT_TEST_LOG_DIR;
  if (dir) {
    const log = (() => {
      try {
        return readFileSync(join(dir, "apiserver.log"), "utf8").split("\n");
      } catch {
        return [];
      }
    })();
    const about = log.filter((l) => l.includes(name)).slice(-10);
    const said = about.map((l) => `\n    ${l.slice(0, 400)}`).join("");
    lines.push(`  kube-apiserver about it: ${said || "nothing"}`);
  }
  return lines.join("\n");
}

export interface KubeEvent extends KubeObject {
  reason: string;
  message: string;
  type?: string;
  involvedObject: { kind?: string; name: string; namespace?: string };
}

/** Waits for an Event in `namespace` about the object `name` with `reason` (field selectors on both). */
export async function waitForEvent(
  client: KubeClient,
  namespace: string,
  name: string,
  reason: string,
  timeoutMs = 180_000,
): Promise<KubeEvent> {
  const fieldSelector = `involvedObject.name=${name},reason=${reason}`;
  const found = await readWatchUntil<KubeEvent | undefined>(
    client,
    await client.path("v1", "Event", namespace),
    fieldSelector,
    async () => {
      const { items, resourceVersion } = await client.list<KubeEvent>("v1", "Event", { namespace, fieldSelector });
      return { value: items[0], resourceVersion };
    },
    (e) => e !== undefined,
    (ev) => ev.type === "ADDED" || ev.type === "MODIFIED",
    timeoutMs,
    () => new Error(`no ${reason} Event about ${name} in namespace ${namespace}`),
  );
  return found as KubeEvent;
}

export function cond(
  o: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } } | undefined,
  type: string,
) {
  return o?.status?.conditions?.find((c) => c.type === type);
}

/**
 * Grants `rules` cluster-wide to a user or a group: a ClusterRole and
 * its binding, both named `name` (applied: may be redone).
 */
export async function grantClusterRole(
  admin: KubeClient,
  name: string,
  subject: { user: string } | { group: string },
  rules: unknown[],
): Promise<void> {
  await admin.apply({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules,
  } as unknown as KubeObject);
  await bindClusterRole(admin, name, name, subject);
}

/**
 * Binds an existing ClusterRole to a user or group: cluster-wide (a ClusterRoleBinding), or in
 * `namespace` (a RoleBinding).
 */
export async function bindClusterRole(
  admin: KubeClient,
  binding: string,
  role: string,
  subject: { user: string } | { group: string },
  namespace?: string,
): Promise<void> {
  await admin.apply({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: namespace ? "RoleBinding" : "ClusterRoleBinding",
    metadata: { name: binding, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [
      "user" in subject
        ? { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: subject.user }
        : { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: subject.group },
    ],
  } as unknown as KubeObject);
}
