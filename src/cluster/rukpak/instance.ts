/**
 * The Instance reconcile of the RukPak controller, as named steps over a working copy of the status
 * (`runtime/steps.ts`): the Bundle, unpacked; what it becomes (its class's provisioner,
 * `provisioner.ts`); none of opcat's own objects; an approval naming this generation, Bundle and
 * content; CRD upgrade safety; no collision (never adopt); the pivot recorded, applied, pruned; older
 * Bundles marked Replaced. The status is written once at the end; what must be persisted before the
 * next step acts is committed on the way (`persistStatus` of `runtime/reconcile.ts`): a forged approval
 * dropped, a new approval, `Upgrading` while a pivot is applied, and the failure of an apply
 * (docs/security.md). The pass itself is the one reconcile wrapper's (`reconcileObject`).
 */
import { createHash } from "node:crypto";
import { KubeApiError, type KubeApi, liveOnly } from "../kube/client.js";
import { findCondition, setCondition } from "../kube/conditions.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { Result } from "../runtime/controller.js";
import { passBy, persistStatus, reconcileObject, type StatusSpec, workingCopy } from "../runtime/reconcile.js";
import { changedOnTop, writeStatus } from "../runtime/status.js";
import { RetryLater, retryAfter, stopWith, withConditions, type Step, type StepOutcome } from "../runtime/steps.js";
import {
  API_VERSION,
  LABEL_BUNDLE,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type Bundle,
  type Instance,
  type InstanceStatus,
  type ObjectRef,
  type ProvisionerClass,
} from "./api.js";
import { collisions, install, prune, unsafeCrdChanges } from "./apply.js";
import { contentExists, UnpackError } from "./content.js";
import { crdGroupProblem, servedBuiltInGroups } from "./crdgroups.js";
import { fieldManagerFor, labelsMatch, listed, madeForInstance, type RukpakContext } from "./context.js";
import { ConfigError, ConvertError } from "./convert.js";
import { decide } from "./decide.js";
import type { DesiredContent } from "./provisioner.js";
import type { PassReads } from "./reads.js";
import { refOf, type InstallRecord } from "./record.js";
import { approvalCondition, approvalMismatch, approvalParts, protectedReason, type ApprovalSubject } from "./trust.js";
import { sameJson } from "../kube/json.js";
import { BoundedMap } from "../kube/bounded.js";

/** The working state of one pass over an Instance. */
export interface InstanceState {
  name: string;
  generation: number;
  /** The Instance as last read or written (the base of the status write). */
  inst: Instance;
  /** The working copy of its status, written at the end when it changed. */
  status: InstanceStatus;
  /** A stop with conditions: `observedGeneration` is written too. */
  observe?: boolean;
  bundleName: string;
  bundle?: Bundle;
  pc?: ProvisionerClass;
  digest?: string;
  desired?: DesiredContent;
  /** The Approved condition of this pass. */
  approved?: NewCondition;
  record?: InstallRecord;
  version?: string;
  /** The pivot: what was applied or pending before, the target set, the Bundle installed before. */
  before?: ObjectRef[];
  target?: ObjectRef[];
  previous?: string;
  /** sha256 of the desired objects (recorded with a completed install). */
  rendered?: string;
  /** Groups the API server serves that no CRD provides: asked once per pass (when the bundle has CRDs). */
  served?: Set<string>;
  /** This pass approved by UserPermission: every object was dry-run as its requesters and passed. */
  dryRun?: boolean;
  /**
   * The bundle's objects as this pass read them (dry run, CRD safety): the collision check asks each
   * object once per pass (reads.ts `readInPass`).
   */
  reads?: PassReads;
}

type InstanceStep = (ctx: RukpakContext, s: InstanceState) => Promise<StepOutcome> | StepOutcome;

const STOP = { stop: true } as const;

/** {@link stopWith} with this group's declared condition types and reasons. */
const stop: (s: { observe?: boolean }, event: "Normal" | "Warning" | undefined, ...cs: NewCondition[]) => StepOutcome =
  stopWith;

/** A stop to be tried again with backoff once its status is written (retry-after). */
const retry = retryAfter;

/** What the Instance status-write of a pass (and of the resolveset provisioner's) works on. */
export interface InstanceWork {
  inst: Instance;
  status: NonNullable<Instance["status"]>;
}

/**
 * An Instance's status, written by the one reconcile wrapper (`runtime/reconcile.ts`): what the pass
 * changed set on top of the Instance as it is now (what another writer wrote meanwhile, the availability
 * controller's conditions, stays: a PUT that keeps them as they are leaves them owned by the field
 * manager that applied them), and the pass goes on from what the API server returned. An Instance
 * whose spec or approval changed since the pass read it is not written (a user's approval is never
 * lost): the pass decided on what it no longer says and is tried again ({@link RetryLater}).
 */
export const INSTANCE_STATUS: StatusSpec<Instance, InstanceWork> = {
  apiVersion: API_VERSION,
  kind: "Instance",
  object: (s) => s.inst,
  next: (s, fresh) => {
    const base = s.inst.status ?? {};
    const { name, generation = 0 } = s.inst.metadata;
    if ((fresh.metadata.generation ?? 0) !== generation || !sameJson(fresh.status?.approval, base.approval))
      throw new RetryLater(`Instance ${name} changed while a pass decided on it; tried again`);
    return changedOnTop(base, s.status, fresh.status ?? {});
  },
  written: (s, from, to) => {
    const uid = s.inst.metadata.uid;
    if (from.metadata.resourceVersion && uid) lastWritten.set(uid, { from: from.metadata.resourceVersion, to });
  },
  rebase: (s, seen) => {
    s.inst = seen;
    s.status = { ...(seen.status ?? {}) };
  },
};

/**
 * Writes an Instance's working status now, when it changed (a step that must persist before the next
 * acts; the resolveset provisioner's passes too), by {@link persistStatus}. False: the Instance is gone.
 */
export async function commitInstanceStatus(
  client: Pick<KubeApi, "tryGet" | "replace">,
  s: InstanceWork,
): Promise<boolean> {
  return (await persistStatus(client, INSTANCE_STATUS, s)) !== "gone";
}

/**
 * The Instance status this process wrote last, by uid, with the resourceVersion it replaced: a pass
 * that starts before the informer has seen that write (queued by a Bundle's event meanwhile) starts
 * from the written copy instead of the cache's older one, which would make it decide its approval
 * again (every dry run) only for its first status write to conflict and the pass to be run again.
 */
const lastWritten = new BoundedMap<string, { from: string; to: Instance }>(10_000);

/** The cache's copy of an Instance, or the one this process wrote over it when the cache lags. */
function freshest(inst: Instance): Instance {
  const w = lastWritten.get(inst.metadata.uid!);
  return w && w.from === inst.metadata.resourceVersion ? w.to : inst;
}

const commit = (ctx: RukpakContext, s: InstanceState): Promise<boolean> => commitInstanceStatus(ctx.client, s);

function conditions(s: InstanceState, ...cs: NewCondition[]): void {
  s.status = withConditions(s.status, s.generation, cs);
}

const unpackedOk = (s: InstanceState): NewCondition => ({
  type: "Unpacked",
  status: "True",
  reason: "UnpackSuccessful",
  message: `Successfully unpacked the ${s.bundleName} Bundle`,
});

/**
 * An approval record that opcat did not sign (written while no webhook served) is removed, and the
 * Approved condition says so: the status never shows an approval nobody gave.
 */
const signature: InstanceStep = async (ctx, s) => {
  const a = s.status.approval;
  if (!a || ctx.key.verify(approvalParts(s.inst.metadata.uid!, a), a.signature)) return;
  const { approval: _, ...rest } = s.status;
  s.status = rest;
  conditions(s, {
    type: "Approved",
    status: "False",
    reason: "ApprovalNotSigned",
    message:
      "the recorded approval is not signed by opcat (written while its admission webhook was not " +
      `serving?) and is ignored; approve with kubectl instance approve ${s.name}`,
  });
  if (!(await commit(ctx, s))) return STOP; // the Instance is gone
};

/** The Bundle an Instance names; made from its embedded spec when given (and only then). */
const bundle: InstanceStep = async (ctx, s) => {
  const { inst, name, bundleName } = s;
  let b = ctx.bundles.get(bundleName) ?? (await ctx.client.tryGet<Bundle>(API_VERSION, "Bundle", bundleName));
  const embedded = inst.spec.bundle.spec;
  if (!embedded && !b)
    return stop(s, undefined, {
      type: "Unpacked",
      status: "False",
      reason: "BundleNotFound",
      message: `Bundle ${bundleName} not found`,
    });
  if (embedded && !b) {
    // made on the Instance's behalf (its content is read as whom the Instance is judged:
    // contentRequesterOf): only for an Instance that still exists (the cache may lag)
    if (!(await ctx.client.getLive(API_VERSION, "Instance", name, { uid: inst.metadata.uid }))) return STOP;
    b = await ctx.client.create<Bundle>({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: {
        name: bundleName,
        labels: { ...(inst.spec.selector?.matchLabels ?? {}), [LABEL_INSTANCE]: name },
        ownerReferences: [
          { apiVersion: API_VERSION, kind: "Instance", name, uid: inst.metadata.uid!, blockOwnerDeletion: false },
        ],
      },
      spec: embedded,
    });
  } else if (embedded && b) {
    // a Bundle of that name must be the one made from this spec for this Instance: someone else's
    // Bundle (same name, other refs, mounts or secrets) is a conflict, never a match
    const mine = madeForInstance(ctx, b, inst);
    if (!(mine && sameJson(b.spec, { ...b.spec, ...embedded })))
      return stop(s, undefined, {
        type: "Installed",
        status: "False",
        reason: "BundleSpecConflict",
        message: mine
          ? `Bundle ${bundleName} exists with another spec; name a new Bundle to pivot`
          : `Bundle ${bundleName} exists and was not made from this Instance's spec; ` +
            `name a Bundle that does not exist yet`,
      });
  }
  s.bundle = b!;
  s.pc = ctx.ours(s.bundle.spec.class);
  if (!s.pc) return STOP;
};

const unpacked: InstanceStep = (_ctx, s) => {
  const b = s.bundle!;
  const bst = b.status;
  if (bst?.unpacked === "Done" && bst.observedGeneration === b.metadata.generation && bst.digest) {
    s.digest = bst.digest;
    return;
  }
  const failed = bst?.unpacked === "Failed";
  return stop(s, undefined, {
    type: "Unpacked",
    status: "False",
    reason: failed ? "UnpackFailed" : "UnpackPending",
    message: failed
      ? `Failed to unpack the ${s.bundleName} Bundle: ${bst?.message ?? ""}`
      : `Waiting for the ${s.bundleName} Bundle to be unpacked`,
  });
};

/** The objects an unpacked Bundle becomes for an Instance: its class's provisioner decides. */
export async function desiredContent(
  ctx: RukpakContext,
  bundle: Bundle,
  inst: Instance,
  pc = ctx.ours(bundle.spec.class),
): Promise<DesiredContent> {
  const dir = contentExists(ctx.stateDir, bundle.status!.digest!);
  if (!dir)
    throw new UnpackError(
      "ContentMissing",
      `the content of bundle ${bundle.metadata.name} is not in this provisioner's store`,
    );
  const p = ctx.provisioners.forContent(pc?.provisioner ?? "", bundle.status?.format);
  if (!p) throw new Error(`no provisioner installs ${bundle.status?.format} content`);
  return p.desired(bundle, inst, { client: ctx.client, dir });
}

/** What the Bundle becomes, every object labelled with and owned by the Instance. */
const content: InstanceStep = async (ctx, s) => {
  try {
    s.desired = await desiredContent(ctx, s.bundle!, s.inst, s.pc);
  } catch (e) {
    if (e instanceof UnpackError && e.reason === "ContentMissing") {
      // unpacked by another provisioner process: restored here from its pinned refs (or unpacked
      // again), after which the Bundle's reconcile enqueues this Instance
      ctx.bundleQueue.add(s.bundle!.metadata.name);
      return STOP;
    }
    const msg = e instanceof ConvertError ? e.errors.join("; ") : (e as Error).message;
    return stop(s, "Warning", unpackedOk(s), {
      type: "Installed",
      status: "False",
      reason: e instanceof ConfigError ? "InvalidConfiguration" : "InvalidBundle",
      message: msg,
    });
  }
  const l = s.inst.metadata.labels ?? {};
  const labels = {
    ...Object.fromEntries(OWNER_LABELS.filter((k) => l[k] !== undefined).map((k) => [k, l[k]])),
    [LABEL_INSTANCE]: s.name,
    [LABEL_BUNDLE]: s.bundleName,
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
  const owner = {
    apiVersion: API_VERSION,
    kind: "Instance",
    name: s.name,
    uid: s.inst.metadata.uid!,
    blockOwnerDeletion: false,
  };
  for (const o of s.desired.objects)
    o.metadata = { ...o.metadata, labels: { ...(o.metadata.labels ?? {}), ...labels }, ownerReferences: [owner] };
};

/** operator-controller's owner labels on an Instance, which every object it installs carries too. */
const OWNER_LABELS = ["olm.operatorframework.io/owner-kind", "olm.operatorframework.io/owner-name"];

/** opcat's own objects are never part of a bundle. */
const protectedObjects: InstanceStep = (ctx, s) => {
  const forbidden = s.desired!.objects.map((o) => protectedReason(ctx.protectedSet, o)).filter((x) => x !== undefined);
  if (forbidden.length === 0) return;
  return stop(s, "Warning", unpackedOk(s), {
    type: "Installed",
    status: "False",
    reason: "ProtectedObject",
    message: `${listed(forbidden)}: a bundle may not create, change or delete opcat's own objects`,
  });
};

/**
 * A bundle's CRDs define kinds only in groups that are neither built-in nor opcat's: a CRD claiming
 * `rbac.authorization.k8s.io` `ClusterRoleBinding` made the dry runs skip the real ClusterRoleBinding
 * beside it (attack A6). Refused before any approval is asked for.
 */
const crdGroups: InstanceStep = async (ctx, s) => {
  const crds = s.desired!.objects.filter((o) => o.kind === "CustomResourceDefinition");
  if (crds.length === 0) return;
  const served = (s.served = await servedBuiltInGroups(ctx.client));
  const bad = crds.map((c) => crdGroupProblem(c, served)).filter((x) => x !== undefined);
  if (bad.length === 0) return;
  return stop(s, "Warning", unpackedOk(s), {
    type: "Installed",
    status: "False",
    reason: "ForbiddenAPIGroup",
    message:
      `${listed(bad)}: a bundle may define kinds only in API groups of its own, ` +
      "never in a built-in group or opcat's",
  });
};

/** A signed decision naming this generation, this Bundle and this content (a new one committed). */
const approval: InstanceStep = async (ctx, s) => {
  const b = s.bundle!;
  const subject: ApprovalSubject = {
    instanceUid: s.inst.metadata.uid!,
    generation: s.generation,
    bundle: { name: s.bundleName, uid: b.metadata.uid!, generation: b.metadata.generation ?? 0 },
    digest: s.digest!,
  };
  const recorded = s.status.approval;
  const mismatch = approvalMismatch(ctx.key, recorded, subject);
  if (mismatch === undefined) {
    s.approved = approvalCondition(recorded!);
    return;
  }
  const d = await decide(ctx, {
    inst: s.inst,
    bundle: b,
    pc: s.pc!,
    desired: s.desired!,
    subject,
    recorded,
    mismatch,
    served: s.served,
    reads: s.reads,
  });
  if (!d.approval) {
    s.status = { ...s.status, contentDigest: subject.digest };
    const waits = stop(s, "Normal", unpackedOk(s), d.condition);
    return d.retry ? retry(waits) : waits;
  }
  s.approved = d.condition;
  s.dryRun = d.condition.reason === "UserPermission";
  s.status = { ...s.status, approval: d.approval };
  conditions(s, unpackedOk(s), d.condition);
  s.status = { ...s.status, observedGeneration: s.generation };
  if (!(await commit(ctx, s))) return STOP; // the Instance is gone
};

/** sha256 of the desired objects, computed once per pass and only when a pass compares or records it. */
const renderedOf = (s: InstanceState): string =>
  (s.rendered ??= createHash("sha256").update(JSON.stringify(s.desired!.objects)).digest("hex"));

/**
 * Nothing to apply: this process applied this generation's Bundle, the record has no pivot pending,
 * and the objects it would apply are the ones the last install applied (same Bundle, content digest
 * and rendered objects), as operator-controller's applier skips an unchanged release. A pass that
 * only follows a status write (its own, the availability controller's) then costs no request; a new
 * process, or a resync (a deleted object), applies again ({@link RukpakContext.appliedHere}).
 */
const unchanged: InstanceStep = async (ctx, s) => {
  if (ctx.appliedHere.get(s.name) !== s.inst.metadata.uid) return;
  const st = s.status;
  if (findCondition(st.conditions, "Installed")?.status !== "True" || st.observedGeneration !== s.generation) return;
  if (st.activeBundle !== s.bundleName) return;
  const { record } = await ctx.records.read(s.inst);
  if (!record || record.pending || record.bundle !== s.bundleName || record.digest !== s.digest) return;
  if (record.rendered !== renderedOf(s)) return;
  s.target = record.applied;
  s.previous = s.bundleName;
  return installed(ctx, s);
};

/** CRD upgrade safety, before anything changes (unless the Instance says None). */
const crdSafety: InstanceStep = async (ctx, s) => {
  const unsafe =
    s.inst.spec.crdUpgradeSafety === "None" ? [] : await unsafeCrdChanges(ctx.client, s.desired!.objects, s.reads);
  if (unsafe.length === 0) return;
  // the stored custom objects may change (or the CRD go): tried again with backoff
  return retry(
    stop(s, "Warning", unpackedOk(s), s.approved!, {
      type: "Installed",
      status: "False",
      reason: "UnsafeCRDUpgrade",
      message: unsafe.join("\n"),
    }),
  );
};

/** Never adopt: an object that exists and is not this Instance's (by the controller's own record). */
const noCollision: InstanceStep = async (ctx, s) => {
  const { record, version } = await ctx.records.read(s.inst);
  s.record = record;
  s.version = version;
  const found = await collisions(ctx.client, s.inst, record, s.desired!.objects, s.reads);
  if (found.length === 0) return;
  // the object in the way may go (the garbage collector removing a deleted Instance's objects, an
  // admin): nothing watched brings the Instance back, so it is tried again with backoff
  return retry(
    stop(s, "Warning", unpackedOk(s), s.approved!, {
      type: "Installed",
      status: "False",
      reason: "ObjectCollision",
      message: `${listed(found)}: an object has one owner, and opcat never adopts an object it did not create`,
    }),
  );
};

/**
 * The pass works from the informer cache, which may not have seen the Instance's deletion or its
 * latest spec yet: the API server is asked before its objects are made (they would otherwise
 * outlive it until the garbage collector notices their owner is gone). A newer generation than the
 * one this pass decided on stops it; its update event brings the next pass.
 */
const alive: InstanceStep = async (ctx, s) => {
  const live = await ctx.client.getLive(API_VERSION, "Instance", s.name, { uid: s.inst.metadata.uid });
  if (!live || (live.metadata.generation ?? 0) !== s.generation) return STOP;
};

/** The pivot, as a transaction: the target set is recorded before anything is applied. */
const pivot: InstanceStep = async (ctx, s) => {
  const record = s.record;
  s.target = s.desired!.objects.map(refOf);
  s.before = [...(record?.applied ?? []), ...(record?.pending ?? [])];
  s.record = {
    instance: s.name,
    uid: s.inst.metadata.uid!,
    applied: record?.applied ?? [],
    pending: s.target,
    bundle: s.bundleName,
    digest: s.digest,
    namespaces: record?.namespaces ?? [],
  };
  s.version = await ctx.records.write(s.inst, s.record, s.version);
  s.previous = s.status.activeBundle;
  if (findCondition(s.status.conditions, "Installed")?.status !== "True" || s.previous === s.bundleName) return;
  conditions(s, unpackedOk(s), s.approved!, {
    type: "Installed",
    status: "False",
    reason: "Upgrading",
    message: `applying bundle ${s.bundleName} (from ${s.previous})`,
  });
  if (!(await commit(ctx, s))) return STOP; // the Instance is gone
};

/** Every object applied (namespaces the controller made recorded); a failure is written and retried. */
const applyObjects: InstanceStep = async (ctx, s) => {
  const record = s.record!;
  try {
    const made = await install(ctx.client, s.desired!, fieldManagerFor(s.name), record.namespaces ?? [], {
      served: s.served,
      dryRun: s.dryRun,
    });
    if (made.length > 0) {
      s.record = { ...record, namespaces: [...(record.namespaces ?? []), ...made] };
      s.version = await ctx.records.write(s.inst, s.record, s.version);
    }
  } catch (e) {
    const msg = e instanceof KubeApiError ? `${e.reason}: ${e.message}` : (e as Error).message;
    const active = s.status.activeBundle;
    conditions(s, {
      type: "Installed",
      status: "False",
      reason: active && active !== s.bundleName ? "UpgradeFailed" : "InstallFailed",
      message: msg,
    });
    s.status = { ...s.status, observedGeneration: s.generation };
    await commit(ctx, s).catch(() => undefined);
    ctx.events.emit(s.inst, "Warning", "InstallFailed", msg);
    throw e;
  }
};

/** What the new bundle no longer has goes (only objects in the record still owned by the Instance). */
const pruneObjects: InstanceStep = async (ctx, s) => {
  await prune(ctx.client, s.inst, s.before!, s.target!, s.reads);
  s.record = { ...s.record!, applied: s.target!, pending: undefined, rendered: renderedOf(s) };
  await ctx.records.write(s.inst, s.record, s.version);
  ctx.appliedHere.set(s.name, s.inst.metadata.uid!);
};

/** Older Bundles this Instance pivoted from are marked Replaced (the Bundle controller's status kept). */
const replaced: InstanceStep = async (ctx, s) => {
  const c: NewCondition = {
    type: "Replaced",
    status: "True",
    reason: "Replaced",
    message: `replaced by ${s.bundleName} in instance ${s.name}`,
  };
  for (const b of ctx.bundles.list()) {
    if (b.metadata.name === s.bundleName || !labelsMatch(s.inst.spec.selector, b.metadata.labels)) continue;
    if (findCondition(b.status?.conditions, "Replaced")?.status === "True") continue;
    await writeStatus<Bundle>(ctx.client, {
      apiVersion: API_VERSION,
      kind: "Bundle",
      name: b.metadata.name,
      uid: b.metadata.uid,
      cached: b,
      next: (fresh) => ({ ...(fresh.status ?? {}), conditions: setCondition(fresh.status?.conditions, c).conditions }),
    });
  }
};

/** Installed: the active Bundle, its objects, and an Event when the Bundle is new. */
const installed: InstanceStep = (_ctx, s) => {
  const msg = `Instantiated bundle ${s.bundleName} successfully`;
  const ns = s.desired!.installNamespace;
  s.status = { ...s.status, activeBundle: s.bundleName, ...(ns ? { installNamespace: ns } : {}), objects: s.target };
  s.observe = true;
  const conditions = [
    unpackedOk(s),
    s.approved!,
    { type: "Installed", status: "True" as const, reason: "InstallationSucceeded", message: msg },
  ];
  if (s.previous === s.bundleName) return { stop: true, conditions };
  const event = s.previous
    ? { type: "Normal" as const, reason: "Upgraded", message: `${msg} (from ${s.previous})` }
    : { type: "Normal" as const, reason: "Installed", message: msg };
  return { stop: true, conditions, event };
};

const INSTANCE_STEPS: [string, InstanceStep][] = [
  ["signature", signature],
  ["bundle", bundle],
  ["unpacked", unpacked],
  ["content", content],
  ["protected", protectedObjects],
  ["crdGroups", crdGroups],
  ["approval", approval],
  ["unchanged", unchanged],
  ["crdSafety", crdSafety],
  ["collisions", noCollision],
  ["alive", alive],
  ["pivot", pivot],
  ["apply", applyObjects],
  ["prune", pruneObjects],
  ["replaced", replaced],
  ["installed", installed],
];

/** The steps of an Instance's reconcile, in order. */
export function instanceSteps(ctx: RukpakContext): Step<InstanceState>[] {
  return INSTANCE_STEPS.map(([name, run]) => ({ name, run: (s: InstanceState) => run(ctx, s) }));
}

/**
 * One pass over an Instance, from the informer cache (the API server is asked before anything is
 * made on its behalf, and a status written from a stale copy is a conflict, tried again): the
 * steps, then the status written once (and the Event), by the one reconcile wrapper.
 */
export async function reconcileInstance(
  ctx: RukpakContext,
  steps: readonly Step<InstanceState>[],
  name: string,
): Promise<Result> {
  return reconcileObject<Instance, InstanceState>(
    {
      ...INSTANCE_STATUS,
      ...passBy("instance", ctx.client, ctx.events, ctx.log),
      get: (key) => {
        const cached = liveOnly(ctx.instances.get(key));
        if (!cached) return undefined;
        const inst = freshest(cached);
        return inst.spec.bundle.spec && !ctx.ours(inst.spec.bundle.spec.class) ? undefined : inst;
      },
      state: (inst, key) => ({
        ...workingCopy(inst),
        name: key,
        inst,
        bundleName: inst.spec.bundle.name,
        reads: new Map(),
      }),
      steps,
      // an approval still awaited is announced on every pass (as before the status says it)
      eventWhen: "kept",
    },
    name,
  );
}
