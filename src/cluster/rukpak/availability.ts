/**
 * Whether what an Instance installed runs: the conditions `Available` and `Progressing` of an installed
 * Instance, from the real state of its workloads (Deployments, StatefulSets, DaemonSets among
 * `status.objects`): available replicas, rollouts, and for a workload that is not available the reason
 * of each Pod that keeps it from being so — an image that cannot be pulled, a crash loop, a failing
 * probe, a Pod that cannot be scheduled — naming the Pod and container, also as a Warning Event.
 *
 * A controller on the runtime (run with the others, under the same leader): it caches the Deployments,
 * StatefulSets and DaemonSets opcat installed (label `rukpak.io/instance`) and the Instances, reads
 * workloads from those caches, and looks again every few seconds while something is not available
 * (Pod states such as a crash loop do not change the workload's status; Pods are listed live then).
 * Steps (on the one reconcile wrapper, `runtime/reconcile.ts`): installed → observe → report; then the
 * conditions written once, when they changed, and the report's Events.
 *
 * The Instance's status is the Instance controller's; this controller writes only its two conditions,
 * by server-side apply on the status subresource with its own field manager (`opcat-availability`,
 * forced, as a controller does for fields it alone manages): the API server merges them by type with
 * the Instance controller's (conditions are a map list keyed by type in the CRD). The Instance
 * writers PUT the whole status on top of the status as it is (`changedOnTop`), so they keep these
 * conditions as they are, and a PUT that keeps a field leaves it owned by its applier.
 */
import type { KubeServer, KubeObject } from "../kube/client.js";
import { findCondition, relayed, type Condition } from "../kube/conditions.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import {
  defineController,
  kindKey,
  type Controller,
  type ControllerContext,
  type Result,
} from "../runtime/controller.js";
import { passBy, reconcileObject } from "../runtime/reconcile.js";
import { applyConditions } from "../runtime/status.js";
import { withConditions, type Step, type StepOutcome } from "../runtime/steps.js";
import { sameJson } from "../kube/json.js";
import { API_VERSION, LABEL_INSTANCE, type Instance } from "./api.js";

const INSTANCE = { apiVersion: API_VERSION, kind: "Instance" } as const;

const WORKLOAD_KINDS = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["apps/v1", "DaemonSet"],
] as const;

export interface Workload extends KubeObject {
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

export interface Pod extends KubeObject {
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

/** Why a Pod keeps its workload from being available (undefined: nothing to say yet). */
/** Kubernetes' waiting states of a container that is still starting (not a problem to report). */
const STARTING = new Set(["ContainerCreating", "PodInitializing"]);

export function podProblem(p: Pod): { reason: string; message: string } | undefined {
  const where = (c: string) => `container ${c} of Pod ${p.metadata.namespace}/${p.metadata.name}`;
  const sched = p.status?.conditions?.find((c) => c.type === "PodScheduled");
  if (sched?.status === "False")
    return { reason: sched.reason ?? "Unschedulable", message: `Pod ${p.metadata.name}: ${sched.message ?? ""}` };
  for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
    const w = c.state?.waiting;
    if (w?.reason && !STARTING.has(w.reason)) {
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

/** Where availability reads workloads and Pods (the controller's caches, or the API server). */
export interface WorkloadReader {
  workload(ref: { apiVersion: string; kind: string; name: string; namespace?: string }): Promise<Workload | undefined>;
  pods(namespace: string | undefined, labelSelector: string): Promise<Pod[]>;
}

/** A reader that asks the API server (for one-off checks outside a controller). */
export function liveReader(client: KubeServer): WorkloadReader {
  return {
    workload: (r) => client.tryGet<Workload>(r.apiVersion, r.kind, r.name, r.namespace),
    pods: async (namespace, labelSelector) => (await client.list<Pod>("v1", "Pod", { namespace, labelSelector })).items,
  };
}

/** The Available and Progressing conditions for the workloads `refs` names. */
export async function availabilityOf(
  reader: WorkloadReader,
  refs: readonly { apiVersion: string; kind: string; name: string; namespace?: string }[],
): Promise<Availability> {
  const workloads: Workload[] = [];
  for (const r of refs) {
    if (!WORKLOAD_KINDS.some(([v, k]) => v === r.apiVersion && k === r.kind)) continue;
    const w = await reader.workload(r);
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
    const pods = await reader.pods(s.w.metadata.namespace, labelSelector);
    for (const p of pods.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
      const pr = podProblem(p);
      if (pr) problems.push(pr);
    }
  }
  return {
    available: availableCondition(states, problems),
    progressing: progressingCondition(workloads, states),
    problems,
  };
}

function availableCondition(
  states: { available: boolean; what: string }[],
  problems: { reason: string; message: string }[],
): NewCondition {
  const down = states.filter((s) => !s.available);
  const detail = problems.length ? `: ${problems.map((p) => p.message).join("; ")}` : "";
  return down.length
    ? {
        type: "Available",
        status: "False",
        reason: problems[0] ? relayed(problems[0].reason) : "WorkloadsUnavailable",
        message: `Not available: ${down.map((s) => s.what).join(", ")}${detail}`,
      }
    : {
        type: "Available",
        status: "True",
        reason: "WorkloadsAvailable",
        message: `Available: ${states.map((s) => s.what).join(", ")}`,
      };
}

function progressingCondition(workloads: Workload[], states: { progressing: boolean; what: string }[]): NewCondition {
  const rolling = states.filter((s) => s.progressing);
  const deadline = workloads.flatMap((w) =>
    (w.status?.conditions ?? []).filter((c) => c.type === "Progressing" && c.reason === "ProgressDeadlineExceeded"),
  );
  if (deadline.length)
    return {
      type: "Progressing",
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: deadline.map((c) => c.message ?? "").join("; "),
    };
  if (rolling.length)
    return {
      type: "Progressing",
      status: "True",
      reason: "RollingOut",
      message: `Rolling out: ${rolling.map((s) => s.what).join(", ")}`,
    };
  return { type: "Progressing", status: "False", reason: "RolloutComplete", message: "Every workload is up to date" };
}

/** The condition types this controller writes (and only it). */
export const AVAILABILITY_CONDITIONS: readonly string[] = ["Available", "Progressing"];

/** The field manager of this controller's server-side applies (it owns {@link AVAILABILITY_CONDITIONS}). */
export const AVAILABILITY_FIELD_MANAGER = "opcat-availability";

/**
 * Whether an Instance's update changed nothing but the conditions this controller writes: the
 * Instance's own controller has nothing to do then (else every workload status change would make
 * it apply the Instance's objects again).
 */
export function onlyAvailabilityChanged(old: Instance, cur: Instance): boolean {
  const strip = (i: Instance) => ({
    generation: i.metadata.generation,
    labels: i.metadata.labels,
    annotations: i.metadata.annotations,
    finalizers: i.metadata.finalizers,
    deletionTimestamp: i.metadata.deletionTimestamp,
    status: {
      ...i.status,
      conditions: (i.status?.conditions ?? []).filter((c) => !AVAILABILITY_CONDITIONS.includes(c.type)),
    },
  });
  return sameJson(strip(old), strip(cur));
}

export interface AvailabilityOptions {
  client: KubeServer;
  /** The process's caches (the Instances and workloads are shared with the other controllers). */
  caches?: SharedCaches;
  log?: (m: string) => void;
  /** How often an Instance that is not available (or rolling out) is looked at again (default 5 s). */
  recheckMs?: number;
}

/** The controller: Available/Progressing on installed Instances (see the module comment). */
export class AvailabilityController {
  readonly controller: Controller<Instance>;
  /** The last problem reported per Instance, so that an Event is written once per new problem. */
  private reported = new Map<string, string>();
  private readonly steps: Step<AvailabilityState>[] = this.defineSteps();

  constructor(private readonly opts: AvailabilityOptions) {
    this.controller = defineController<Instance>(
      opts.client,
      {
        name: "availability",
        caches: opts.caches,
        for: INSTANCE,
        watches: WORKLOAD_KINDS.map(([apiVersion, kind]) => ({
          apiVersion,
          kind,
          options: { labelSelector: LABEL_INSTANCE },
          map: (o: KubeObject) => {
            const inst = o.metadata.labels?.[LABEL_INSTANCE];
            return inst ? [inst] : [];
          },
        })),
        reconcile: (name, ctx) => this.reconcile(name, ctx),
      },
      opts.log,
    );
  }

  get queue() {
    return this.controller.queue;
  }

  async start(): Promise<void> {
    await this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
  }

  /** Workloads from the controller's caches (they hold every workload opcat installed); Pods live. */
  private reader(ctx: ControllerContext<Instance>): WorkloadReader {
    return {
      workload: async (r) => {
        const cache = ctx.caches.get(kindKey(r.apiVersion, r.kind)) as Informer<Workload> | undefined;
        return cache?.get(r.namespace ? `${r.namespace}/${r.name}` : r.name);
      },
      pods: liveReader(ctx.client).pods,
    };
  }

  private defineSteps(): Step<AvailabilityState>[] {
    return [
      {
        name: "installed",
        run: (s) => {
          const installed = findCondition(s.inst.status?.conditions, "Installed");
          if (installed?.status !== "True" || !s.inst.status?.objects) return { stop: true };
        },
      },
      {
        name: "observe",
        run: async (s) => {
          s.availability = await availabilityOf(this.reader(s.ctx), s.inst.status!.objects!);
        },
      },
      { name: "report", run: (s) => this.report(s) },
    ];
  }

  /**
   * Available and Progressing as they are to be applied (only those: the Instance controller's
   * conditions are not this controller's to write), on an Instance still installed; nothing without an
   * observation. A condition whose status stays keeps its lastTransitionTime.
   */
  private conditionsOf(s: AvailabilityState, fresh: Instance): Condition[] | undefined {
    const a = s.availability;
    if (!a || findCondition(fresh.status?.conditions, "Installed")?.status !== "True") return undefined;
    const { conditions = [] } = withConditions(fresh.status ?? {}, s.generation, [a.available, a.progressing]);
    return conditions.filter((c) => AVAILABILITY_CONDITIONS.includes(c.type));
  }

  /** The Events of a new problem (once per problem) or of availability regained, and when to look again. */
  private report(s: AvailabilityState): StepOutcome {
    const a = s.availability!;
    const problem = a.problems.map((p) => p.message).join("; ");
    if (problem && this.reported.get(s.name) !== problem)
      for (const p of a.problems) s.events.push(["Warning", p.reason, p.message]);
    if (a.available.status === "True" && this.reported.get(s.name))
      s.events.push(["Normal", "Available", a.available.message]);
    this.reported.set(s.name, problem);
    const settled = a.available.status === "True" && a.progressing.status === "False";
    return settled ? undefined : { requeueAfter: this.opts.recheckMs ?? 5000 };
  }

  /**
   * One pass by the one reconcile wrapper (`runtime/reconcile.ts`): installed → observe → report, the
   * conditions applied once (when they changed), then the report's Events.
   */
  async reconcile(name: string, ctx: ControllerContext<Instance> = this.controller.context): Promise<Result | void> {
    return reconcileObject<Instance, AvailabilityState>(
      {
        ...INSTANCE,
        ...passBy("availability", ctx.client, ctx.events, ctx.log),
        get: (key) => {
          const inst = ctx.primary.get(key);
          if (inst && !inst.metadata.deletionTimestamp) return inst;
          this.reported.delete(key);
          return undefined;
        },
        state: (inst, key) => ({
          name: key,
          ctx,
          inst,
          generation: inst.metadata.generation ?? 0,
          status: { ...(inst.status ?? {}) },
          events: [],
        }),
        steps: this.steps,
        object: (s) => s.inst,
        write: (s) =>
          applyConditions(ctx.client, {
            ...INSTANCE,
            name: s.inst.metadata.name,
            uid: s.inst.metadata.uid,
            cached: s.inst,
            fieldManager: AVAILABILITY_FIELD_MANAGER,
            conditions: (fresh) => this.conditionsOf(s, fresh),
          }),
        done: (s, write) => {
          if (write !== "gone") for (const e of s.events) ctx.events.emit(s.inst, ...e);
        },
      },
      name,
    );
  }
}

interface AvailabilityState {
  name: string;
  ctx: ControllerContext<Instance>;
  inst: Instance;
  generation: number;
  /** The working copy of the status (the write applies only Available and Progressing). */
  status: NonNullable<Instance["status"]>;
  availability?: Availability;
  /** The Events the report found, emitted once the status is written. */
  events: ["Normal" | "Warning", string, string][];
}
