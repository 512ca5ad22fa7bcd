/**
 * Whether what an Instance installed runs: the conditions `Available` and `Progressing` of an installed
 * Instance, from the real state of its workloads (Deployments, StatefulSets, DaemonSets among
 * `status.objects`): available replicas, rollouts, and for a workload that is not available the reason
 * of each Pod that keeps it from being so — an image that cannot be pulled, a crash loop, a failing
 * probe, a Pod that cannot be scheduled — naming the Pod and container, also as a Warning Event.
 *
 * A controller of its own (run with the others, under the same leader): it watches the Deployments,
 * StatefulSets and DaemonSets opcat installed (label `rukpak.io/instance`) and the Instances, and
 * looks again every few seconds while something is not available (Pod states such as a crash loop do
 * not change the workload's status).
 */
import { isConflict, type KubeClient, type KubeObject } from "../client.js";
import { findCondition, setCondition, type Condition, type NewCondition } from "../conditions.js";
import { EventRecorder } from "../events.js";
import { Informer } from "../informer.js";
import { WorkQueue } from "../queue.js";
import { API_VERSION, LABEL_INSTANCE, type Instance } from "./api.js";

const WORKLOAD_KINDS = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["apps/v1", "DaemonSet"],
] as const;

interface Workload extends KubeObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    numberAvailable?: number;
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    currentReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: { reason?: string } };
  lastState?: { terminated?: { reason?: string; exitCode?: number } };
}

interface Pod extends KubeObject {
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

/** Why a Pod keeps its workload from being available (undefined: nothing to say yet). */
export function podProblem(p: Pod): { reason: string; message: string } | undefined {
  const where = (c: string) => `container ${c} of Pod ${p.metadata.namespace}/${p.metadata.name}`;
  const sched = p.status?.conditions?.find((c) => c.type === "PodScheduled");
  if (sched?.status === "False")
    return { reason: sched.reason ?? "Unschedulable", message: `Pod ${p.metadata.name}: ${sched.message ?? ""}` };
  for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
    const w = c.state?.waiting;
    if (w?.reason && w.reason !== "ContainerCreating" && w.reason !== "PodInitializing") {
      const last = c.lastState?.terminated;
      const exit = last ? ` (last exit: ${last.reason ?? "?"}, code ${last.exitCode ?? "?"})` : "";
      return { reason: w.reason, message: `${where(c.name)}: ${w.reason}${w.message ? `: ${w.message}` : ""}${exit}` };
    }
    if (c.state?.running && !c.ready && p.status?.phase === "Running")
      return {
        reason: "ContainerNotReady",
        message:
          `${where(c.name)} runs but is not ready (its readiness probe fails)` +
          (c.restartCount ? `; restarted ${c.restartCount} times (liveness probe or exits)` : ""),
      };
  }
  return undefined;
}

/** Whether a workload is available, and whether it is rolling out. */
export function workloadState(w: Workload): { available: boolean; progressing: boolean; what: string } {
  const s = w.status ?? {};
  const what = `${w.kind} ${w.metadata.namespace}/${w.metadata.name}`;
  const stale = (s.observedGeneration ?? 0) < (w.metadata.generation ?? 0);
  if (w.kind === "DaemonSet") {
    const want = s.desiredNumberScheduled ?? 0;
    return {
      available: !stale && (s.numberAvailable ?? 0) >= want,
      progressing: stale || (s.updatedNumberScheduled ?? 0) < want,
      what,
    };
  }
  const want = w.spec?.replicas ?? 1;
  const avail = w.kind === "Deployment" ? (s.availableReplicas ?? 0) : (s.readyReplicas ?? 0);
  const cond = s.conditions?.find((c) => c.type === "Available");
  const available = !stale && (cond ? cond.status === "True" && avail >= Math.min(want, 1) : avail >= want);
  const progressing = stale || (s.updatedReplicas ?? 0) < want || (s.replicas ?? 0) > want || avail < want;
  return { available, progressing, what };
}

export interface Availability {
  available: NewCondition;
  progressing: NewCondition;
  /** One line per Pod problem (for Events). */
  problems: { reason: string; message: string }[];
}

/** The Available and Progressing conditions for the workloads `refs` names (read live). */
export async function availabilityOf(
  client: KubeClient,
  refs: readonly { apiVersion: string; kind: string; name: string; namespace?: string }[],
): Promise<Availability> {
  const workloads: Workload[] = [];
  for (const r of refs) {
    if (!WORKLOAD_KINDS.some(([v, k]) => v === r.apiVersion && k === r.kind)) continue;
    const w = await client.tryGet<Workload>(r.apiVersion, r.kind, r.name, r.namespace);
    if (w) workloads.push(w);
  }
  if (workloads.length === 0)
    return {
      available: { type: "Available", status: "True", reason: "NoWorkloads", message: "The bundle runs nothing" },
      progressing: { type: "Progressing", status: "False", reason: "NoWorkloads", message: "Nothing to roll out" },
      problems: [],
    };
  const states = workloads.map((w) => ({ w, ...workloadState(w) }));
  const problems: { reason: string; message: string }[] = [];
  for (const s of states.filter((x) => !x.available || x.progressing)) {
    const sel = s.w.spec?.selector?.matchLabels;
    if (!sel) continue;
    const labelSelector = Object.entries(sel)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const pods = await client.list<Pod>("v1", "Pod", { namespace: s.w.metadata.namespace, labelSelector });
    for (const p of pods.items.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
      const pr = podProblem(p);
      if (pr) problems.push(pr);
    }
  }
  const down = states.filter((s) => !s.available);
  const rolling = states.filter((s) => s.progressing);
  const deadline = workloads.flatMap((w) =>
    (w.status?.conditions ?? []).filter((c) => c.type === "Progressing" && c.reason === "ProgressDeadlineExceeded"),
  );
  const detail = problems.length ? `: ${problems.map((p) => p.message).join("; ")}` : "";
  const available: NewCondition = down.length
    ? {
        type: "Available",
        status: "False",
        reason: problems[0]?.reason ?? "WorkloadsUnavailable",
        message: `Not available: ${down.map((s) => s.what).join(", ")}${detail}`,
      }
    : {
        type: "Available",
        status: "True",
        reason: "WorkloadsAvailable",
        message: `Available: ${states.map((s) => s.what).join(", ")}`,
      };
  const progressing: NewCondition = deadline.length
    ? {
        type: "Progressing",
        status: "False",
        reason: "ProgressDeadlineExceeded",
        message: deadline.map((c) => c.message ?? "").join("; "),
      }
    : rolling.length
      ? {
          type: "Progressing",
          status: "True",
          reason: "RollingOut",
          message: `Rolling out: ${rolling.map((s) => s.what).join(", ")}`,
        }
      : { type: "Progressing", status: "False", reason: "RolloutComplete", message: "Every workload is up to date" };
  return { available, progressing, problems };
}

export interface AvailabilityOptions {
  client: KubeClient;
  log?: (m: string) => void;
  /** How often an Instance that is not available (or rolling out) is looked at again (default 5 s). */
  recheckMs?: number;
}

/** The controller: Available/Progressing on installed Instances (see the module comment). */
export class AvailabilityController {
  readonly queue = new WorkQueue({ concurrency: 2 });
  readonly instances: Informer<Instance>;
  private readonly workloads: Informer<Workload>[];
  private readonly events: EventRecorder;
  private running?: Promise<void>;
  /** The last problem reported per Instance, so that an Event is written once per new problem. */
  private reported = new Map<string, string>();

  constructor(private readonly opts: AvailabilityOptions) {
    const onError = (e: unknown) => opts.log?.(`availability: ${(e as Error).message}`);
    this.instances = new Informer<Instance>(opts.client, API_VERSION, "Instance", { onError });
    this.instances.on((_ev, o) => this.queue.add(o.metadata.name));
    this.workloads = WORKLOAD_KINDS.map(([v, k]) =>
      new Informer<Workload>(opts.client, v, k, { labelSelector: LABEL_INSTANCE, onError }).on((_ev, o) => {
        const inst = o.metadata.labels?.[LABEL_INSTANCE];
        if (inst) this.queue.add(inst);
      }),
    );
    this.events = new EventRecorder(opts.client, "opcat-availability");
  }

  async start(): Promise<void> {
    await Promise.all([this.instances.start(), ...this.workloads.map((i) => i.start())]);
    this.running = this.queue.run((name) => this.reconcile(name));
  }

  async stop(): Promise<void> {
    this.queue.stop();
    this.instances.stop();
    for (const i of this.workloads) i.stop();
    await this.running;
  }

  async reconcile(name: string): Promise<{ requeueAfter?: number } | void> {
    const inst = this.instances.cache.get(name);
    if (!inst || inst.metadata.deletionTimestamp) {
      this.reported.delete(name);
      return;
    }
    const installed = findCondition(inst.status?.conditions, "Installed");
    if (installed?.status !== "True" || !inst.status?.objects) return;
    const a = await availabilityOf(this.opts.client, inst.status.objects);
    const gen = inst.metadata.generation ?? 0;
    let conditions: Condition[] = inst.status.conditions ?? [];
    for (const c of [a.available, a.progressing])
      conditions = setCondition(conditions, { observedGeneration: gen, ...c }).conditions;
    if (JSON.stringify(conditions) !== JSON.stringify(inst.status.conditions)) {
      try {
        await this.opts.client.replace<Instance>(
          { ...inst, status: { ...inst.status, conditions } },
          {
            subresource: "status",
          },
        );
      } catch (e) {
        if (!isConflict(e)) throw e;
        return { requeueAfter: 100 };
      }
    }
    const problem = a.problems.map((p) => p.message).join("; ");
    if (problem && this.reported.get(name) !== problem)
      for (const p of a.problems) this.events.emit(inst, "Warning", p.reason, p.message);
    if (a.available.status === "True" && this.reported.get(name))
      this.events.emit(inst, "Normal", "Available", a.available.message);
    this.reported.set(name, problem);
    const settled = a.available.status === "True" && a.progressing.status === "False";
    return settled ? undefined : { requeueAfter: this.opts.recheckMs ?? 5000 };
  }
}
