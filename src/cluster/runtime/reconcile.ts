/**
 * One reconcile pass over one object, the same for every controller (after operator-controller's
 * Reconcile wrapper): read the object from the cache (nothing when it is gone, being deleted or not
 * this controller's), build the pass's state around a working copy of its status, run the named steps
 * (`steps.ts`), count and log the step that stopped the pass, set observedGeneration when the stop
 * says so, write the status once through the one status-write policy (`status.ts`: only when it
 * differs, recomputed on a Conflict; a PUT of the whole status, or a server-side apply of the
 * conditions a controller owns on an object another one writes), emit the stop's Event, and map the
 * outcome to the queue's {@link Result}: another pass after `requeueAfter`, or {@link RetryLater} (the
 * queue's backoff).
 *
 * A step's outcome is one of four (`steps.ts`): continue (nothing), stop (with conditions, an Event,
 * observe), retry-after (a stop tried again with backoff once written) and requeue-after (ms).
 *
 * A step that must persist something before the next one acts (an approval, a pivot's target set)
 * calls {@link persistStatus} with the controller's status spec: the same write the pass makes at its
 * end, after which the state goes on from what the API server returned (`rebase`).
 */
import type { KubeApi, KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import type { Result } from "./controller.js";
import { changedOnTop, writeStatus, type StatusOf, type StatusWriteResult } from "./status.js";
import { RetryLater, runSteps, type Step, type StepsResult } from "./steps.js";

type WithStatus = KubeObject & { status?: { conditions?: Condition[] } };

/** What the wrapper reads of a pass's state: the working status, the generation it is for, observe. */
export interface WorkingState<St> {
  generation: number;
  status: St;
  /** A stop with conditions: observedGeneration is written too. */
  observe?: boolean;
}

/** How a controller's status is written: from the state on top of the object as it is now. */
export interface StatusSpec<O extends WithStatus, S extends { status: StatusOf<O> }> {
  apiVersion: string;
  kind: string;
  /** The object the pass works on, as last read or written: the base of the write (its uid is checked). */
  object: (s: S) => O;
  /**
   * The status to write from the pass's state on top of `fresh` (the object as it is now); undefined:
   * nothing to write. It may throw to give the write up (RetryLater: the pass decided on what the object
   * no longer says). Default: what the pass changed set on top of the fresh status ({@link changedOnTop}).
   */
  next?: (s: S, fresh: O) => StatusOf<O> | undefined;
  /** Moves the state onto the object the write returned or the fresh read it was computed from. */
  rebase?: (s: S, seen: O) => void;
  /** Called with the object a write replaced and the one the API server returned. */
  written?: (s: S, from: O, to: O) => void;
}

/** How one write of {@link persistStatus} ended ("skipped": `next` had nothing to write). */
export type PersistResult = StatusWriteResult | "skipped";

/**
 * Writes the pass's working status now, when it differs, by the one status-write policy; the state
 * then goes on from what the API server returned. "gone": the object is gone or was replaced.
 */
export async function persistStatus<O extends WithStatus, S extends { status: StatusOf<O> }>(
  client: Pick<KubeApi, "tryGet" | "replace">,
  spec: StatusSpec<O, S>,
  s: S,
): Promise<PersistResult> {
  const base = spec.object(s);
  const { name, namespace, uid } = base.metadata;
  let seen = base;
  let skipped = false;
  const out = await writeStatus<O>(client, {
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    name,
    namespace,
    uid,
    cached: base,
    next: (fresh) => {
      seen = fresh;
      const st = spec.next
        ? spec.next(s, fresh)
        : (changedOnTop(base.status ?? {}, s.status ?? {}, fresh.status ?? {}) as StatusOf<O>);
      skipped = st === undefined;
      return st ?? ((fresh.status ?? {}) as StatusOf<O>);
    },
    written: (o) => {
      spec.written?.(s, seen, o);
      seen = o;
    },
  });
  if (out === "gone") return out;
  if (seen !== base) spec.rebase?.(s, seen);
  return skipped ? "skipped" : out;
}

/** What a pass reads and writes its object through. */
export type PassClient = Pick<KubeApi, "tryGet" | "replace">;

/** What an Event is emitted through (a controller's recorder). */
export interface EventSink {
  emit(obj: KubeObject, type: "Normal" | "Warning", reason: string, message: string): void;
}

export interface ReconcileSpec<O extends WithStatus, S extends WorkingState<StatusOf<O>>> extends StatusSpec<O, S> {
  /** The controller's name: metrics (`opcat_reconcile_stops_total`) and logs. */
  controller: string;
  client: PassClient;
  events: EventSink;
  /**
   * A debug line for each pass a step stopped (which step, why): the controller's log through
   * {@link debugLog}, quiet unless OPCAT_DEBUG is set.
   */
  debug?: (m: string) => void;
  /** The object of `key` from the cache; undefined: nothing to do (gone, being deleted, not ours). */
  get: (key: string) => O | undefined | Promise<O | undefined>;
  /** The pass's state: the object, a copy of its status as the working status, the generation. */
  state: (o: O, key: string) => S;
  steps: readonly Step<S>[];
  /**
   * When the stop's Event is emitted: "written" (default: a write that changed the status), or "kept"
   * (the status says what the pass found: written now, or unchanged).
   */
  eventWhen?: "written" | "kept";
  /**
   * How the status is written instead of {@link persistStatus}'s PUT of the whole status (default): a
   * controller that owns only some conditions of an object another controller writes applies just
   * those (`applyConditions` in `status.ts`).
   */
  write?: (s: S) => Promise<PersistResult>;
  /**
   * After the write (whatever it found, "gone" included): what a controller keeps of the pass in
   * memory once the status says it; it may throw to have the pass tried again with backoff.
   */
  done?: (s: S, write: PersistResult) => void;
}

/** How a pass ended, for callers that look past the Result (tests, a controller's own bookkeeping). */
export interface Pass<S> extends StepsResult {
  state?: S;
  write?: PersistResult;
}

/**
 * One pass over the object of `key`: the steps, the status written once, the Event, and the Result.
 * A retry-after stop throws {@link RetryLater} after its status is written.
 */
export async function reconcileObject<O extends WithStatus, S extends WorkingState<StatusOf<O>>>(
  spec: ReconcileSpec<O, S>,
  key: string,
): Promise<Result> {
  return resultOf(await runPass(spec, key));
}

/** The queue's answer to a pass: another pass later, or the backoff of a retry-after stop. */
export function resultOf<S>(p: Pass<S>): Result {
  if (p.write !== "gone" && p.retry !== undefined) throw new RetryLater(p.retry);
  return p.requeueAfter !== undefined ? { requeueAfter: p.requeueAfter } : {};
}

/** {@link reconcileObject} without the mapping to a Result (nothing thrown for a retry-after stop). */
export async function runPass<O extends WithStatus, S extends WorkingState<StatusOf<O>>>(
  spec: ReconcileSpec<O, S>,
  key: string,
): Promise<Pass<S>> {
  const obj = await spec.get(key);
  if (!obj) return {};
  const s = spec.state(obj, key);
  const out = await runSteps(spec.steps, s, spec.controller);
  if (out.stoppedAt) spec.debug?.(`${spec.controller} ${key}: stopped at ${out.stoppedAt}${why(out)}`);
  if (s.observe) s.status = { ...s.status, observedGeneration: s.generation };
  const write = await (spec.write ? spec.write(s) : persistStatus(spec.client, spec, s));
  const emit = write === "written" || (spec.eventWhen === "kept" && write === "unchanged");
  if (out.event && emit) spec.events.emit(spec.object(s), out.event.type, out.event.reason, out.event.message);
  spec.done?.(s, write);
  return { ...out, state: s, write };
}

/**
 * The parts of a {@link ReconcileSpec} that say who runs the pass, the same for every controller: its
 * name, its client and Event sink, and its log as the wrapper's debug lines ({@link debugLog}).
 */
export function passBy(controller: string, client: PassClient, events: EventSink, log: (m: string) => void) {
  return { controller, client, events, debug: debugLog(log) };
}

/** What every pass's state starts from: the object's generation and a working copy of its status. */
export function workingCopy<O extends WithStatus>(o: O): WorkingState<StatusOf<O>> {
  return { generation: o.metadata.generation ?? 0, status: { ...(o.status ?? {}) } as StatusOf<O> };
}

/** A controller's log as the wrapper's debug lines: only with OPCAT_DEBUG set (any value but "" or "0"). */
export function debugLog(log: (m: string) => void): ((m: string) => void) | undefined {
  const on = process.env.OPCAT_DEBUG;
  return on && on !== "0" ? (m) => log(`debug: ${m}`) : undefined;
}

function why(out: StepsResult): string {
  if (out.requeueAfter !== undefined) return ` (requeued after ${out.requeueAfter} ms)`;
  if (out.retry !== undefined) return ` (retried: ${out.retry})`;
  if (out.event) return ` (${out.event.reason})`;
  return "";
}
