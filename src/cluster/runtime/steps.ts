/**
 * Reconciles as a list of named steps over a working copy of the status (after operator-controller's
 * ReconcileSteps): each step reads what earlier steps found, may change the working status, and
 * returns one of four outcomes: continue (nothing), stop (with conditions, an Event, observe),
 * retry-after (a stop with `retry`: tried again with the queue's backoff once its status is written)
 * or requeue-after (ms). `reconcile.ts` runs them for one object: the status written once, at the end,
 * and only when it changed; a step that must persist something before the next one acts (an
 * approval, a pivot's target set) calls its `persistStatus`.
 */
import { setCondition, type Condition, type NewCondition } from "../kube/conditions.js";

export type StepOutcome =
  | void
  | { requeueAfter: number }
  | {
      stop: true;
      conditions?: NewCondition[];
      event?: { type: "Normal" | "Warning"; reason: string; message: string };
      /**
       * What stopped the pass is outside the object (another object in the way, a stored custom
       * object): once the status is written, the pass is tried again with the queue's backoff, since
       * nothing watched would bring it back.
       */
      retry?: true;
      /** observedGeneration is written with the conditions (as {@link stopWith} marks the state). */
      observe?: true;
    };

export interface Step<S> {
  name: string;
  run(state: S): Promise<StepOutcome> | StepOutcome;
}

export interface StatusCopy {
  conditions?: Condition[];
  observedGeneration?: number;
}

/** Requeue-after: the pass ends and the object is reconciled again in `ms` (nothing else changes). */
export const requeueAfter = (ms: number): StepOutcome => ({ requeueAfter: ms });

/** Retry-after: a stop tried again with the queue's backoff once its status is written. */
export const retryAfter = (o: StepOutcome): StepOutcome => (o && "stop" in o ? { ...o, retry: true } : o);

/** Sets conditions on a working status (observedGeneration from `generation`). */
export function withConditions<T extends StatusCopy>(status: T, generation: number, cs: readonly NewCondition[]): T {
  let list = status.conditions ?? [];
  for (const c of cs) list = setCondition(list, { observedGeneration: generation, ...c }).conditions;
  return { ...status, conditions: list };
}

/**
 * Ends a pass with conditions (and an Event of the last one when `event` says so); `observe` marks the
 * state so that observedGeneration is written with them.
 */
export function stopWith(
  s: { observe?: boolean },
  event: "Normal" | "Warning" | undefined,
  ...cs: NewCondition[]
): StepOutcome {
  s.observe = true;
  const last = cs[cs.length - 1];
  return {
    stop: true,
    conditions: cs,
    ...(event && last ? { event: { type: event, reason: last.reason, message: last.message } } : {}),
  };
}

export interface StepsResult {
  /** The step that stopped the run, if any. */
  stoppedAt?: string;
  requeueAfter?: number;
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  /** The stop asks to be tried again with backoff (its message). */
  retry?: string;
}

/** Thrown after a pass wrote its status, to have it tried again with the work queue's backoff. */
export class RetryLater extends Error {}

/**
 * How many passes each step of each controller ended (`opcat_reconcile_stops_total` in /metrics): where
 * objects wait, and which step a change in behaviour moved them to. "completed" counts passes that ran
 * every step.
 */
export class StepStops {
  private readonly counts = new Map<string, number>();

  add(controller: string, step: string): void {
    const k = `${controller}\0${step}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  /** [controller, step, passes] in a stable order. */
  entries(): [string, string, number][] {
    return [...this.counts]
      .map(([k, n]) => [...(k.split("\0") as [string, string]), n] as [string, string, number])
      .sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
  }
}

/** The process's counts (one registry per process, as Prometheus' default one). */
export const STEP_STOPS = new StepStops();

/**
 * Runs `steps` in order until one stops or asks to be requeued; a stop's conditions are set on
 * `state.status` (a pass over many objects, such as a resolution, has no status of its own). With
 * `controller`, the step that ended the pass is counted in {@link STEP_STOPS}.
 */
export async function runSteps<S>(steps: readonly Step<S>[], state: S, controller?: string): Promise<StepsResult> {
  const out = await runAll(steps, state);
  if (controller) STEP_STOPS.add(controller, out.stoppedAt ?? "completed");
  return out;
}

async function runAll<S>(steps: readonly Step<S>[], state: S): Promise<StepsResult> {
  const withStatus = state as { generation?: number; status?: StatusCopy; observe?: boolean };
  for (const step of steps) {
    const out = await step.run(state);
    if (!out) continue;
    if ("requeueAfter" in out) return { stoppedAt: step.name, requeueAfter: out.requeueAfter };
    if (out.observe) withStatus.observe = true;
    if (out.conditions && withStatus.status)
      withStatus.status = withConditions(withStatus.status, withStatus.generation ?? 0, out.conditions);
    const last = out.conditions?.[out.conditions.length - 1];
    return {
      stoppedAt: step.name,
      ...(out.event ? { event: out.event } : {}),
      ...(out.retry ? { retry: last ? `${last.reason}: ${last.message}` : step.name } : {}),
    };
  }
  return {};
}
