/**
 * The Bundle reconcile of the RukPak controller, as named steps: a Bundle is unpacked once per
 * generation, as its requester, into the content store. `InProgress` is written when a generation is
 * first seen (before the unpack starts), then `Done` or `Failed` at the end. A failure that may pass
 * is retried with the queue's backoff without writing anything until the outcome changes; one that
 * cannot pass stays until the spec changes. At most `concurrency - 1` unpacks fetch from one host or
 * for one requester at once ({@link UnpackSlots}).
 */
import { rmSync } from "node:fs";
import { safeMessage, setCondition } from "../kube/conditions.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../kube/finalizers.js";
import type { WorkQueue } from "../kube/queue.js";
import type { Result } from "../runtime/controller.js";
import { passBy, reconcileObject, workingCopy } from "../runtime/reconcile.js";
import { writeStatus } from "../runtime/status.js";
import type { Step, StepOutcome } from "../runtime/steps.js";
import { API_VERSION, FINALIZER_CONTENT, type Bundle, type BundleStatus } from "./api.js";
import { contentExists, limitsOf, UnpackError, unpackBundle } from "./content.js";
import { contentRequesterOf, madeForNobody, type RukpakContext } from "./context.js";
import type { Requester } from "./permissions.js";

/** Where a ref is fetched from ("" for none: file:// reads ConfigMaps). */
function hostOf(ref: string): string {
  if (ref.startsWith("docker://")) return ref.slice("docker://".length).split("/")[0];
  if (ref.startsWith("https://")) return new URL(ref).host;
  return "";
}

/** What this process knows of the unpacks: those running, waiting for a slot, tried, settled. */
export class UnpackSlots {
  /** Unpacks running: the Bundle's key → its abort controller and the slots (hosts, requester) it holds. */
  readonly unpacking = new Map<string, { ac: AbortController; slots: string[] }>();
  /** Bundles waiting for a free slot of a host they fetch from or of their requester. */
  readonly waitingForSlot = new Set<string>();
  /** Bundles this process has tried to unpack (a Failed one is tried once more after a restart). */
  readonly tried = new Set<string>();
  /** The generation of each Bundle whose outcome is final here: unpacked (with its digest) or failed for good. */
  readonly settled = new Map<string, { gen: number; digest?: string }>();

  constructor(readonly perSlot: number) {}

  /**
   * Takes a slot of every host the refs fetch from and of the requester, or none and false (the Bundle
   * waits): neither one host nor one user ever holds every worker.
   */
  take(b: Bundle, ac: AbortController, requester: Requester | undefined): boolean {
    const name = b.metadata.name;
    const hosts = [...new Set(b.spec.refs.map((r) => hostOf(r)).filter((h) => h !== ""))];
    const slots = [
      ...hosts.map((h) => `host ${h}`),
      ...(hosts.length > 0 ? [`user ${requester?.username ?? ""}`] : []),
    ];
    const busy = (k: string) => [...this.unpacking.values()].filter((u) => u.slots.includes(k)).length;
    if (slots.some((k) => busy(k) >= this.perSlot)) {
      this.waitingForSlot.add(name);
      return false;
    }
    this.unpacking.set(name, { ac, slots });
    return true;
  }

  release(name: string, queue: Pick<WorkQueue, "add">): void {
    if (!this.unpacking.delete(name)) return;
    for (const k of [...this.waitingForSlot]) {
      this.waitingForSlot.delete(k);
      queue.add(k);
    }
  }

  /** Forgets what this process decided about a Bundle (it is unpacked again when asked). */
  forget(name: string): void {
    this.settled.delete(name);
    this.tried.delete(name);
  }

  /** Stops a running unpack (its Bundle is being deleted or changed). */
  abort(name: string, why: string): void {
    this.unpacking.get(name)?.ac.abort(new UnpackError("Aborted", why, false));
  }
}

interface Outcome {
  status: BundleStatus;
  event: ["Normal" | "Warning", string, string];
}

/** The working state of one pass over a Bundle. */
export interface BundleState {
  name: string;
  generation: number;
  /** The Bundle as last read or written. */
  b: Bundle;
  /** The status as the steps found it (a working copy). */
  status: BundleStatus;
  /**
   * The outcome to write at the end: from the newest copy known (`base`), the status computed from
   * the Bundle as it is then (undefined: deleted or changed meanwhile, nothing to write), the Event.
   */
  write?: { base: Bundle; event: Outcome["event"]; next: (fresh: Bundle) => BundleStatus | undefined };
  /** This pass writes InProgress (a new generation). */
  startsNow?: boolean;
  ac?: AbortController;
  requester?: Requester;
  outcome?: Outcome;
  /** A failure that may pass: thrown after the outcome is written, so that the queue retries. */
  retry?: UnpackError;
  /**
   * Marks the outcome settled in this process, once the status says it: settled before a write that
   * then failed (a Conflict), the next pass would stop at `unpacked` and the status never say Done.
   */
  settle?: () => void;
}

const STOP = { stop: true } as const;

type BundleStep = (ctx: RukpakContext, u: UnpackSlots, s: BundleState) => Promise<StepOutcome> | StepOutcome;

/** Deleted: drop its unpacked content unless another Bundle has the same content, then let it go. */
const deletion: BundleStep = async (ctx, _u, s) => {
  const b = s.b;
  if (!b.metadata.deletionTimestamp) return;
  if (!hasFinalizer(b, FINALIZER_CONTENT)) return STOP;
  const digest = b.status?.digest;
  // kept while another Bundle has that content, or may have it: one unpacking the same refs whose
  // digest is not in the cache yet (removed under it, an Instance would wait for content it was told
  // is there)
  const refs = JSON.stringify(b.spec.refs);
  const shared =
    digest &&
    ctx.bundles
      .list()
      .some(
        (o) =>
          o.metadata.name !== s.name &&
          !o.metadata.deletionTimestamp &&
          (o.status?.digest === digest || JSON.stringify(o.spec.refs) === refs),
      );
  const dir = digest && !shared ? contentExists(ctx.stateDir, digest) : undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  await removeFinalizer(ctx.client, b, FINALIZER_CONTENT);
  return STOP;
};

const ownClass: BundleStep = (ctx, _u, s) => (ctx.ours(s.b.spec.class) ? undefined : STOP);

const finalizer: BundleStep = async (ctx, _u, s) => {
  if (!hasFinalizer(s.b, FINALIZER_CONTENT)) s.b = await addFinalizer(ctx.client, s.b, FINALIZER_CONTENT);
  s.generation = s.b.metadata.generation ?? 0;
  s.status = { ...(s.b.status ?? {}) };
};

/** Unpacked here already (this generation, its content in the store), or settled by this process. */
const unpacked: BundleStep = (ctx, u, s) => {
  const st = s.status;
  const gen = s.generation;
  if (st.unpacked === "Done" && st.observedGeneration === gen && st.digest && contentExists(ctx.stateDir, st.digest))
    return STOP;
  const done = u.settled.get(s.name);
  if (done?.gen === gen && (!done.digest || contentExists(ctx.stateDir, done.digest))) return STOP;
};

/**
 * A Bundle another replica (or an earlier run with another state directory) unpacked: its content is
 * fetched again from the refs pinned when it was unpacked (images by digest, not a tag that may have
 * moved), and kept only when its digest is the recorded one, so that every replica installs exactly
 * what was approved. Otherwise a full unpack follows (a new digest, which no approval names).
 */
const restorePinned: BundleStep = async (ctx, u, s) => {
  const { b, generation: gen } = s;
  const st = b.status ?? {};
  if (st.unpacked !== "Done" || st.observedGeneration !== gen || !st.digest) return;
  if (contentExists(ctx.stateDir, st.digest)) return;
  const pinned = st.resolvedRefs ?? [];
  if (
    pinned.length !== b.spec.refs.length ||
    pinned.some((r, i) => r.split("://")[0] !== b.spec.refs[i].split("://")[0])
  )
    return;
  const { limits } = limitsOf(ctx.ours(b.spec.class)?.parameters);
  try {
    const content = await unpackBundle(
      { ...b.spec, refs: pinned },
      {
        root: ctx.stateDir,
        pull: ctx.pull,
        client: ctx.client,
        requester: await contentRequesterOf(ctx, b),
        madeByControllers: madeForNobody(ctx, b),
        limits: { ...ctx.limits, ...limits },
      },
    );
    if (content.digest !== st.digest) {
      ctx.log(`bundle ${b.metadata.name}: the pinned refs now give ${content.digest}, not ${st.digest}`);
      return;
    }
  } catch (e) {
    ctx.log(`bundle ${b.metadata.name}: restoring from the pinned refs: ${(e as Error).message}`);
    return;
  }
  u.settled.set(b.metadata.name, { gen, digest: st.digest });
  contentMadeAgain(ctx, b.metadata.name);
  return STOP;
};

/**
 * Content made again here without a status change (so without an event): the Instances naming the
 * Bundle are told, since one that found the content missing waits for it.
 */
function contentMadeAgain(ctx: RukpakContext, bundle: string): void {
  for (const i of ctx.instances.list()) if (i.spec.bundle.name === bundle) ctx.instanceQueue.add(i.metadata.name);
}

/** A failure of this generation: retried only by the backoff (or once after a restart). */
const backoff: BundleStep = (ctx, u, s) => {
  const st = s.status;
  const failedBefore = st.unpacked === "Failed" && st.observedGeneration === s.generation;
  if (failedBefore && ctx.bundleQueue.failuresOf(s.name) === 0 && u.tried.has(s.name)) return STOP;
  s.startsNow = !failedBefore && (st.unpacked !== "InProgress" || st.observedGeneration !== s.generation);
};

/** A generation seen for the first time: `InProgress` is written before the unpack starts. */
const inProgress: BundleStep = async (ctx, _u, s) => {
  if (!s.startsNow) return;
  const gen = s.generation;
  const message = "unpacking the bundle's content";
  const cond = { type: "Unpacked", status: "False" as const, reason: "Unpacking", message, observedGeneration: gen };
  let stale = false;
  const out = await writeStatus<Bundle>(ctx.client, {
    apiVersion: API_VERSION,
    kind: "Bundle",
    name: s.name,
    uid: s.b.metadata.uid,
    cached: s.b,
    next: (fresh) => {
      s.b = fresh;
      // a new spec (its update event brings the next pass) or a deletion: nothing to start
      if ((fresh.metadata.generation ?? 0) !== gen || fresh.metadata.deletionTimestamp) {
        stale = true;
        return fresh.status ?? {};
      }
      const st = fresh.status ?? {};
      const { conditions } = setCondition(st.conditions, cond);
      return { ...st, unpacked: "InProgress", reason: "Unpacking", message, conditions, observedGeneration: gen };
    },
    written: (b) => {
      s.b = b;
    },
  });
  if (out === "gone" || stale) return STOP;
  s.status = { ...(s.b.status ?? {}) };
};

const slot: BundleStep = async (ctx, u, s) => {
  s.ac = new AbortController();
  s.requester = await contentRequesterOf(ctx, s.b);
  if (!u.take(s.b, s.ac, s.requester)) return STOP; // queued again when a slot frees
};

const unpack: BundleStep = async (ctx, u, s) => {
  const b = s.b;
  u.tried.add(s.name);
  const pc = ctx.ours(b.spec.class);
  const { limits, problems } = limitsOf(pc?.parameters);
  if (problems.length > 0) ctx.log(`ProvisionerClass ${pc?.metadata.name}: ${problems.join("; ")}`);
  try {
    const content = await unpackBundle(b.spec, {
      root: ctx.stateDir,
      pull: ctx.pull,
      client: ctx.client,
      requester: s.requester,
      madeByControllers: madeForNobody(ctx, s.b),
      limits: { ...ctx.limits, ...limits },
      signal: s.ac!.signal,
    });
    const type = b.spec.refs[0].split("://")[0];
    const msg = `Successfully unpacked the ${type} Bundle (${content.format}, ${content.objects.length} objects)`;
    const { digest, resolvedRefs, format, objects } = content;
    s.outcome = {
      status: { unpacked: "Done", reason: "UnpackSuccessful", message: msg, digest, resolvedRefs, format, objects },
      event: ["Normal", "Unpacked", msg],
    };
  } catch (e) {
    if (!(e instanceof UnpackError)) throw e;
    if (e.reason === "Aborted") return STOP; // deleted or changed: the next pass deals with that
    s.outcome = {
      status: { unpacked: "Failed", reason: e.reason, message: safeMessage(e.message) },
      event: ["Warning", e.reason, e.message],
    };
    if (e.retryable) s.retry = e;
  } finally {
    u.release(s.name, ctx.bundleQueue);
  }
};

/** The outcome, written (from a fresh read) unless the status says it already. */
const outcome: BundleStep = async (ctx, u, s) => {
  const { name, generation: gen } = s;
  const out = s.outcome!;
  const cur = ctx.bundles.get(name) ?? s.b;
  if (cur.metadata.deletionTimestamp || (cur.metadata.generation ?? 0) !== gen) {
    s.retry = undefined;
    return STOP;
  }
  const settle = () => {
    if (out.status.unpacked === "Done" || !s.retry) u.settled.set(name, { gen, digest: out.status.digest });
  };
  const was = cur.status ?? {};
  // (the cache may not hold this pass's InProgress yet: then the outcome is written whatever it shows)
  const same =
    !s.startsNow &&
    was.unpacked === out.status.unpacked &&
    was.reason === out.status.reason &&
    was.message === out.status.message &&
    was.digest === (out.status.digest ?? was.digest) &&
    was.observedGeneration === gen;
  if (same) {
    settle();
    if (out.status.unpacked === "Done") contentMadeAgain(ctx, name);
    return;
  }
  // the newest copy this pass knows (its own InProgress write, else the cache's): a stale one is a
  // Conflict, answered by reading again
  const base = s.startsNow ? s.b : cur;
  const next = (fresh: Bundle): BundleStatus | undefined => {
    if (fresh.metadata.deletionTimestamp || (fresh.metadata.generation ?? 0) !== gen) return undefined;
    const fst = fresh.status ?? {};
    const c = setCondition(fst.conditions, {
      type: "Unpacked",
      status: out.status.unpacked === "Done" ? "True" : "False",
      reason: out.status.reason!,
      message: out.status.message!,
      observedGeneration: gen,
    });
    return { ...fst, ...out.status, conditions: c.conditions, observedGeneration: gen };
  };
  s.write = { base, event: out.event, next };
  s.settle = settle;
};

const BUNDLE_STEPS: [string, BundleStep][] = [
  ["deletion", deletion],
  ["class", ownClass],
  ["finalizer", finalizer],
  ["unpacked", unpacked],
  ["restorePinned", restorePinned],
  ["backoff", backoff],
  ["inProgress", inProgress],
  ["slot", slot],
  ["unpack", unpack],
  ["outcome", outcome],
];

/** The steps of a Bundle's reconcile, in order. */
export function bundleSteps(ctx: RukpakContext, u: UnpackSlots): Step<BundleState>[] {
  return BUNDLE_STEPS.map(([name, run]) => ({ name, run: (s: BundleState) => run(ctx, u, s) }));
}

/**
 * One pass over a Bundle, by the one reconcile wrapper (`runtime/reconcile.ts`): the steps, then the
 * outcome written once with its Event; a failure that may pass is thrown last, so that the queue
 * retries it with backoff.
 */
export async function reconcileBundle(
  ctx: RukpakContext,
  steps: readonly Step<BundleState>[],
  name: string,
): Promise<Result> {
  return reconcileObject<Bundle, BundleState>(
    {
      ...passBy("bundle", ctx.client, ctx.events, ctx.log),
      apiVersion: API_VERSION,
      kind: "Bundle",
      // a Bundle being deleted: its deletion step releases its content and finalizer
      get: (key) => ctx.bundles.get(key),
      state: (b, key) => ({ ...workingCopy(b), name: key, b }),
      steps,
      // the newest copy the pass knows (its own InProgress write, else the cache's); nothing without an outcome
      object: (s) => s.write?.base ?? s.b,
      next: (s, fresh) => s.write?.next(fresh),
      done: (s, write) => {
        // settled once the status says it (written now, or found saying it already)
        if (write === "written" || write === "unchanged") s.settle?.();
        if (write === "written" && s.write) ctx.events.emit(s.write.base, ...s.write.event);
        if (s.retry) throw s.retry; // retried with backoff, nothing written while the outcome stays the same
      },
    },
    name,
  );
}
