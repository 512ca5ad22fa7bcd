/**
 * The resolveset Instance reconcile of the resolveset provisioner (`resolveset.ts`), as named steps
 * over a working copy of the status (`runtime/steps.ts`): the resolveset Bundle unpacked, its
 * entries read, one Bundle per entry (never one someone else made: `entryBundles`, `conflicts`), a
 * class for each (`classes`), every entry unpacked, the approval (a signed decision naming this
 * generation, the resolveset Bundle and every entry's content; committed before anything is made
 * from it), one Instance per package approved through the resolveset, and `Installed`. The status is
 * written once at the end (docs/security.md).
 */
import { createHash } from "node:crypto";
import { isConflict, type KubeServer, type KubeObject } from "../kube/client.js";
import { findCondition, setCondition } from "../kube/conditions.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer } from "../kube/informer.js";
import { writeStatus } from "../runtime/status.js";
import { stopWith, withConditions, type Step, type StepOutcome } from "../runtime/steps.js";
import { commitInstanceStatus } from "../rukpak/instance.js";
import {
  API_VERSION as RUKPAK_API_VERSION,
  type Bundle,
  type Instance,
  type InstanceStatus,
  type ProvisionerClass,
} from "../rukpak/api.js";
import {
  approvalCondition,
  approvalMismatch,
  madeBy,
  signApproval,
  type ApprovalRecord,
  type ApprovalSubject,
  type SigningKey,
} from "../rukpak/trust.js";
import { sameJson } from "../kube/json.js";
import { newPrivilegesInCluster } from "./android.js";
import {
  ANNOTATION_BUNDLE,
  ANNOTATION_CATALOG,
  ANNOTATION_CHANNEL,
  ANNOTATION_PROPERTIES,
  ANNOTATION_PROPERTIES_HASH,
  ANNOTATION_VERSION,
  LABEL_INPUT,
  LABEL_PACKAGE,
  propertiesHash,
} from "./api.js";
import { formatPropertiesAnnotation, type ResolvesetEntry } from "./resolvesetwriter.js";

export type ResolvesetApproval = "AllowAll" | "DenyAll" | "Android";

/** What the steps share: the client, the key, the caches, and the provisioner's own reads. */
export interface ResolvesetContext {
  client: KubeServer;
  key: SigningKey;
  self: string;
  bundles: Informer<Bundle>;
  instances: Informer<Instance>;
  events: EventRecorder;
  /** The entries of an unpacked resolveset Bundle, or why they cannot be read. */
  entriesOf(b: Bundle): Promise<{ entries: ResolvesetEntry[]; digest: string } | { reason: string; message: string }>;
  /** The objects an unpacked Bundle would install (undefined: unknown), what Android compares. */
  objectsOf(b: Bundle | undefined): Promise<KubeObject[] | undefined>;
  /**
   * What a package Instance last installed (its Bundle's name and objects), from the controllers'
   * own install record: Android's baseline. `{objects: []}` when nothing is installed; undefined when
   * the installed content cannot be read.
   */
  installedOf(i: Instance | undefined): Promise<{ bundle?: string; objects: KubeObject[] } | undefined>;
}

type Status = InstanceStatus & { permissions?: string[] };

/** The working state of one pass over a resolveset Instance. */
export interface ResolvesetState {
  name: string;
  generation: number;
  /** The Instance as last read or written (the base of the status write). */
  inst: Instance;
  status: Status;
  /** A stop with conditions: `observedGeneration` is written too. */
  observe?: boolean;
  pc: ProvisionerClass;
  rsName: string;
  rsBundle?: Bundle;
  entries: ResolvesetEntry[];
  digest: string;
  entryBundles: { e: ResolvesetEntry; b: Bundle | undefined }[];
  unmatched: string[];
  squatted: string[];
  /** The Unpacked condition once every entry is unpacked. */
  unpacked?: NewCondition;
  notReady: string[];
}

type ResolvesetStep = (ctx: ResolvesetContext, s: ResolvesetState) => Promise<StepOutcome> | StepOutcome;

/**
 * Which ProvisionerClass an entry's Bundle gets: `matchBundle`
 * (`.schema == <schema>` selectors) first, then `matchSchema`.
 */
export function classForEntry(pc: ProvisionerClass, e: { schema: string }): string | undefined {
  const p = pc.parameters ?? {};
  for (const m of (p.matchBundle as { selector?: string; class?: string }[] | undefined) ?? []) {
    const sel = /^\s*\.schema\s*==\s*"?([^"\s]+)"?\s*$/.exec(m.selector ?? "");
    if (sel && sel[1] === e.schema && m.class) return m.class;
  }
  for (const m of (p.matchSchema as { schema?: string; class?: string }[] | undefined) ?? [])
    if (m.schema === e.schema && m.class) return m.class;
  return undefined;
}

export function resolvesetApprovalOf(pc: ProvisionerClass | undefined): ResolvesetApproval {
  const a = pc?.parameters?.approval;
  return a === "AllowAll" || a === "DenyAll" ? a : "Android";
}

const madeBySelf = (ctx: ResolvesetContext, o: KubeObject): boolean => madeBy(ctx.key, ctx.self, o);

/** {@link stopWith} with this group's declared condition types and reasons. */
const stop: (s: { observe?: boolean }, event: "Normal" | "Warning" | undefined, ...cs: NewCondition[]) => StepOutcome =
  stopWith;

/**
 * Writes the working status now (when it changed; false: the Instance is gone). What the pass changed
 * goes on top of the Instance as it is, but a user's approval written meanwhile is never overwritten:
 * the pass is tried again with what they wrote (`commitInstanceStatus`).
 */
export const commit = (ctx: ResolvesetContext, s: ResolvesetState): Promise<boolean> =>
  commitInstanceStatus(ctx.client, s);

/** The resolveset Bundle, unpacked. */
const unpacked: ResolvesetStep = (_ctx, s) => {
  if (s.rsBundle?.status?.unpacked === "Done") return;
  const failed = s.rsBundle?.status?.unpacked === "Failed";
  return stop(s, undefined, {
    type: "Unpacked",
    status: "False",
    reason: failed ? "UnpackFailed" : "UnpackPending",
    message: failed
      ? `resolveset ${s.rsName}: ${s.rsBundle?.status?.message}`
      : `waiting for resolveset Bundle ${s.rsName}`,
  });
};

/** Its entries (a failure to read them is retried with backoff). */
const entries: ResolvesetStep = async (ctx, s) => {
  const r = await ctx.entriesOf(s.rsBundle!);
  if (!("entries" in r)) throw new Error(r.message);
  s.entries = r.entries;
  s.digest = r.digest;
};

/** An installed bundle the catalogs no longer have: its Bundle is kept. */
function keptBundle(ctx: ResolvesetContext, e: ResolvesetEntry): Bundle | undefined {
  return ctx.bundles
    .list()
    .find(
      (x) =>
        madeBySelf(ctx, x) &&
        x.metadata.labels?.[LABEL_PACKAGE] === e.package &&
        (x.metadata.annotations?.[ANNOTATION_BUNDLE] ?? x.metadata.name) === e.name,
    );
}

/** A new entry Bundle (made meanwhile: taken only when the controllers made it with this spec). */
async function createEntryBundle(
  ctx: ResolvesetContext,
  e: ResolvesetEntry,
  bname: string,
  spec: Bundle["spec"],
  owner: NonNullable<KubeObject["metadata"]["ownerReferences"]>[number],
  mine: (x: Bundle | undefined) => boolean,
): Promise<Bundle> {
  const props = formatPropertiesAnnotation(e.properties);
  return ctx.client
    .create<Bundle>({
      apiVersion: RUKPAK_API_VERSION,
      kind: "Bundle",
      metadata: {
        name: bname,
        labels: { [LABEL_PACKAGE]: e.package },
        ownerReferences: [owner],
        annotations: {
          [ANNOTATION_BUNDLE]: e.name,
          [ANNOTATION_VERSION]: e.version,
          [ANNOTATION_CATALOG]: e.catalog,
          [ANNOTATION_CHANNEL]: e.channel,
          [ANNOTATION_PROPERTIES]: props,
          [ANNOTATION_PROPERTIES_HASH]: propertiesHash(props),
        },
      },
      spec,
    })
    .catch(async (err) => {
      if (!isConflict(err)) return Promise.reject(err);
      const made = await ctx.client.get<Bundle>(RUKPAK_API_VERSION, "Bundle", bname);
      if (!mine(made)) throw new Error(`Bundle ${bname} was made meanwhile by someone else`);
      return made;
    });
}

/**
 * The Bundle of an entry with an image: one per bundle name; the same name from another catalog with
 * another image gets its own. Only a Bundle the controllers made with exactly this spec is taken: one
 * someone else made under that name (other refs, mounts, secrets) is never adopted (`squatted` says so).
 */
async function entryBundle(
  ctx: ResolvesetContext,
  s: ResolvesetState,
  e: ResolvesetEntry & { image: string },
  cls: string,
): Promise<{ b: Bundle; squatted?: undefined } | { squatted: string }> {
  const ref = e.image.includes("://") ? e.image : `docker://${e.image}`;
  const mine = (x: Bundle | undefined) =>
    x !== undefined && madeBySelf(ctx, x) && sameJson(x.spec, { class: cls, refs: [ref] });
  const hashed = `${e.name}-${createHash("sha256").update(ref).digest("hex").slice(0, 8)}`;
  const read = (n: string) => ctx.bundles.get(n) ?? ctx.client.tryGet<Bundle>(RUKPAK_API_VERSION, "Bundle", n);
  let bname = e.name;
  let b = await read(bname);
  if (b && !mine(b)) {
    bname = hashed;
    b = await read(bname);
    if (b && !mine(b))
      return { squatted: `${e.name} (Bundles ${e.name} and ${hashed} exist and were not made by opcat for it)` };
  }
  const rsOwner = {
    apiVersion: RUKPAK_API_VERSION,
    kind: "Instance",
    name: s.name,
    uid: s.inst.metadata.uid!,
    blockOwnerDeletion: false,
  };
  if (b && !(b.metadata.ownerReferences ?? []).some((o) => o.uid === rsOwner.uid)) {
    // shared by several resolvesets: it goes when the last of them goes
    const shared = b;
    b = await ctx.client
      .mergePatch<Bundle>(RUKPAK_API_VERSION, "Bundle", b.metadata.name, {
        metadata: { ownerReferences: [...(b.metadata.ownerReferences ?? []), rsOwner] },
      })
      .catch(() => shared);
  }
  return { b: b ?? (await createEntryBundle(ctx, e, bname, { class: cls, refs: [ref] }, rsOwner, mine)) };
}

/** One Bundle per entry (unpacking is harmless, and Android approval needs the content). */
const entryBundles: ResolvesetStep = async (ctx, s) => {
  for (const e of s.entries) {
    const cls = classForEntry(s.pc, e);
    if (!cls) {
      s.unmatched.push(`${e.name} (schema ${e.schema})`);
      continue;
    }
    if (!e.image) {
      const kept = keptBundle(ctx, e);
      if (kept) s.entryBundles.push({ e, b: kept });
      else s.unmatched.push(`${e.name} (no image, and no Bundle of it on the cluster)`);
      continue;
    }
    const r = await entryBundle(ctx, s, e, cls);
    if (r.squatted !== undefined) s.squatted.push(r.squatted);
    else s.entryBundles.push({ e, b: r.b });
  }
};

/** Bundles of the entries' names that the controllers did not make: the owner must delete them. */
const conflicts: ResolvesetStep = (_ctx, s) => {
  if (s.squatted.length === 0) return;
  const msg = `${s.squatted.join(", ")}: delete those Bundles or ask their owner to`;
  return stop(s, "Warning", { type: "Installed", status: "False", reason: "BundleConflict", message: msg });
};

/** A class for every entry. */
const classes: ResolvesetStep = (_ctx, s) => {
  if (s.unmatched.length === 0) return;
  const msg =
    `no ProvisionerClass for ${s.unmatched.join(", ")}: add a matchBundle ` +
    `or matchSchema entry to ProvisionerClass ${s.pc.metadata.name}`;
  return stop(s, "Warning", { type: "Installed", status: "False", reason: "NoMatchingClass", message: msg });
};

/** Every entry's Bundle unpacked (its current generation). */
const entriesUnpacked: ResolvesetStep = (_ctx, s) => {
  const failed = s.entryBundles.filter((x) => x.b?.status?.unpacked === "Failed");
  if (failed.length > 0) {
    const msg = failed.map((x) => `${x.e.name}: ${x.b?.status?.message ?? ""}`).join("; ");
    return stop(s, undefined, { type: "Unpacked", status: "False", reason: "UnpackFailed", message: msg });
  }
  const pending = s.entryBundles.filter(
    (x) => x.b?.status?.unpacked !== "Done" || x.b.status.observedGeneration !== x.b.metadata.generation,
  );
  if (pending.length > 0)
    return stop(s, undefined, {
      type: "Unpacked",
      status: "False",
      reason: "UnpackPending",
      message: `waiting for ${pending.map((x) => x.e.name).join(", ")} to be unpacked`,
    });
  const n = s.entryBundles.length;
  s.unpacked = {
    type: "Unpacked",
    status: "True",
    reason: "UnpackSuccessful",
    message: `unpacked ${n} bundle${n === 1 ? "" : "s"}: ${s.entryBundles.map((x) => x.e.name).join(", ")}`,
  };
};

/** What an approval names: this generation, the resolveset Bundle, and its and every entry's content. */
function approvalSubject(s: ResolvesetState): ApprovalSubject {
  const rs = s.rsBundle!;
  return {
    instanceUid: s.inst.metadata.uid!,
    generation: s.generation,
    bundle: { name: s.rsName, uid: rs.metadata.uid!, generation: rs.metadata.generation ?? 0 },
    // the resolveset and every entry's content: a moved tag under an entry asks again
    digest: `sha256:${createHash("sha256")
      .update(
        JSON.stringify([
          rs.status?.digest ?? s.digest,
          ...s.entryBundles.map(({ b }) => [
            b?.metadata.name,
            b?.metadata.uid,
            b?.metadata.generation,
            b?.status?.digest,
          ]),
        ]),
      )
      .digest("hex")}`,
  };
}

/** Android: approved when no entry needs a permission the bundle it replaces does not have. */
async function android(
  ctx: ResolvesetContext,
  s: ResolvesetState,
): Promise<{ c: NewCondition; permissions: string[] }> {
  const permissions: string[] = [];
  const unknown: string[] = [];
  for (const { e, b } of s.entryBundles) {
    const next = await ctx.objectsOf(b);
    // the baseline is what was installed after an approval, never a live Bundle or status field
    const base = await ctx.installedOf(ctx.instances.get(e.package));
    const activeName = base?.bundle;
    const current = base?.objects;
    if (!next || !current) {
      unknown.push(e.name);
      continue;
    }
    const change =
      activeName && activeName !== b?.metadata.name ? ` (replacing ${activeName})` : activeName ? "" : " (new install)";
    for (const p of await newPrivilegesInCluster(ctx.client, current, next))
      permissions.push(`${e.name}${change}: ${p}`);
  }
  const approved = (reason: NewCondition["reason"], message: string): NewCondition => ({
    type: "Approved",
    status: "True",
    reason,
    message,
  });
  if (unknown.length > 0)
    return {
      permissions,
      c: {
        type: "Approved",
        status: "False",
        reason: "PermissionsUnknown",
        message:
          `the permissions of ${unknown.join(", ")} could not be ` +
          `read; approve with kubectl instance approve ${s.name}`,
      },
    };
  if (permissions.length === 0)
    return {
      permissions,
      c: approved(
        "NoNewPermissions",
        "no bundle needs a permission the bundle it replaces does not have (approval: Android)",
      ),
    };
  const n = permissions.length;
  return {
    permissions,
    c: {
      type: "Approved",
      status: "False",
      reason: "NewPermissions",
      message:
        `${n} new permission${n === 1 ? "" : "s"} (approval: ` +
        `Android); review with kubectl instance approve --show ${s.name}: ` +
        `${permissions.slice(0, 10).join("; ")}` +
        `${n > 10 ? `; and ${n - 10} more` : ""}`,
    },
  };
}

/** The class's decision on a resolveset no recorded approval covers (a user's denial stands). */
async function decision(
  ctx: ResolvesetContext,
  s: ResolvesetState,
  mismatch: string,
): Promise<{ c: NewCondition; permissions?: string[] }> {
  const { name, pc } = s;
  if (s.inst.status?.approval && mismatch.startsWith("denied by "))
    return {
      c: {
        type: "Approved",
        status: "False",
        reason: "DeniedByUser",
        message: `${mismatch}; approve it with kubectl instance approve ${name}`,
      },
    };
  const policy = resolvesetApprovalOf(pc);
  if (policy === "AllowAll")
    return {
      c: {
        type: "Approved",
        status: "True",
        reason: "AllowAll",
        message: `approved by ProvisionerClass ${pc.metadata.name} (approval: AllowAll)`,
      },
    };
  if (policy === "DenyAll")
    return {
      c: {
        type: "Approved",
        status: "False",
        reason: "AwaitingApproval",
        message: `every change needs review (approval: DenyAll): kubectl instance approve ${name}`,
      },
    };
  return android(ctx, s);
}

/**
 * Approval: a signed decision naming this generation, the resolveset Bundle and its content,
 * committed before any package Instance is made from it; without one the pass ends (an Event says why).
 */
const approval: ResolvesetStep = async (ctx, s) => {
  const subject = approvalSubject(s);
  const recorded = s.inst.status?.approval;
  const mismatch = approvalMismatch(ctx.key, recorded, subject);
  if (mismatch === undefined) {
    if (findCondition(s.inst.status?.conditions, "Approved")?.status !== "True") {
      s.status = withConditions(s.status, s.generation, [s.unpacked!, approvalCondition(recorded!)]);
      if (!(await commit(ctx, s))) return { stop: true };
    }
    return;
  }
  const { c, permissions } = await decision(ctx, s, mismatch);
  const signed: ApprovalRecord | undefined =
    c.status === "True"
      ? signApproval(ctx.key, subject.instanceUid, {
          decision: "Approved",
          reason: c.reason,
          by: c.reason === "AllowAll" ? `ProvisionerClass ${s.pc.metadata.name}` : "Android (no new permissions)",
          generation: s.generation,
          bundle: subject.bundle,
          digest: subject.digest,
        })
      : undefined;
  s.status = withConditions(
    {
      ...s.status,
      ...(permissions ? { permissions } : {}),
      ...(signed ? { approval: signed } : { contentDigest: subject.digest }),
    },
    s.generation,
    [s.unpacked!, c],
  );
  s.status.observedGeneration = s.generation;
  if (!(await commit(ctx, s))) return { stop: true };
  if (!signed) return { stop: true, event: { type: "Normal", reason: c.reason, message: c.message } };
};

/**
 * A package Instance approved through the resolveset needs no second review; the approval names its
 * generation, the entry's Bundle and that Bundle's content.
 */
async function approvePackageInstance(
  ctx: ResolvesetContext,
  s: ResolvesetState,
  applied: Instance,
  b: Bundle | undefined,
  bn: string,
): Promise<void> {
  if (!b?.metadata.uid || !b.status?.digest) return;
  const g = applied.metadata.generation ?? 0;
  const want: ApprovalSubject = {
    instanceUid: applied.metadata.uid!,
    generation: g,
    bundle: { name: bn, uid: b.metadata.uid, generation: b.metadata.generation ?? 0 },
    digest: b.status.digest,
  };
  // on top of the Instance as it is (the operator provisioner may write its status meanwhile)
  await writeStatus<Instance>(ctx.client, {
    apiVersion: RUKPAK_API_VERSION,
    kind: "Instance",
    name: applied.metadata.name,
    uid: applied.metadata.uid,
    cached: applied,
    next: (fresh) => {
      const st = fresh.status ?? {};
      // a new generation is another subject: the next pass (its event) approves that one
      if ((fresh.metadata.generation ?? 0) !== g || approvalMismatch(ctx.key, st.approval, want) === undefined)
        return st;
      const approval = signApproval(ctx.key, want.instanceUid, {
        decision: "Approved",
        reason: "ResolvesetApproved",
        by: `resolveset ${s.rsName} (Instance ${s.name})`,
        generation: g,
        bundle: want.bundle,
        digest: want.digest,
      });
      const conditions = setCondition(st.conditions, {
        type: "Approved",
        status: "True",
        reason: "ResolvesetApproved",
        message: `approved with resolveset ${s.rsName} (Instance ${s.name})`,
        observedGeneration: g,
      }).conditions;
      return { ...st, approval, conditions };
    },
  });
}

/**
 * The Instance of one entry's package (named after the package, selecting its Bundles, so that RukPak
 * pivots from the old version): "gone" when the resolveset went meanwhile, else what it waits for.
 */
async function packageInstance(
  ctx: ResolvesetContext,
  s: ResolvesetState,
  e: ResolvesetEntry,
  b: Bundle | undefined,
): Promise<"gone" | string | undefined> {
  const owner = {
    apiVersion: RUKPAK_API_VERSION,
    kind: "Instance",
    name: s.name,
    uid: s.inst.metadata.uid!,
    blockOwnerDeletion: false,
  };
  const bn = b?.metadata.name ?? e.name;
  // the cache's copy when it has one (a steady state costs no request); live when it has none: an
  // Instance the cache has not seen yet must not be taken for absent (it may be someone else's)
  const cur =
    ctx.instances.get(e.package) ?? (await ctx.client.tryGet<Instance>(RUKPAK_API_VERSION, "Instance", e.package));
  // an Instance of that name made (or changed) by someone else is never taken over
  if (cur && !madeBySelf(ctx, cur))
    return `${e.package} (Instance ${e.package} exists and was not made by opcat: delete it first)`;
  const owners = [...(cur?.metadata.ownerReferences ?? []).filter((o) => o.uid !== owner.uid), owner];
  let applied = cur;
  if (!cur || cur.spec.bundle.name !== bn || (cur.metadata.ownerReferences ?? []).every((o) => o.uid !== owner.uid)) {
    // asked again right before writing: the steps above took time, and a package Instance made
    // (or given this owner) for a resolveset being deleted would outlive it
    if (!(await ctx.client.getLive(RUKPAK_API_VERSION, "Instance", s.name, { uid: owner.uid }))) return "gone";
    const input = s.inst.metadata.labels?.[LABEL_INPUT] ?? "";
    applied = await ctx.client.apply<Instance>({
      apiVersion: RUKPAK_API_VERSION,
      kind: "Instance",
      metadata: {
        name: e.package,
        labels: { [LABEL_PACKAGE]: e.package, ...(input ? { [LABEL_INPUT]: input } : {}) },
        ownerReferences: owners,
      },
      spec: { selector: { matchLabels: { [LABEL_PACKAGE]: e.package } }, bundle: { name: bn } },
    });
  }
  if (applied) await approvePackageInstance(ctx, s, applied, b, bn);
  // installed yet? the cache's view (its next event brings this pass again)
  const now = ctx.instances.get(e.package) ?? applied;
  const ic = findCondition(now?.status?.conditions, "Installed");
  if (ic?.status === "True" && now?.status?.activeBundle === bn) return undefined;
  return `${e.package} (${ic && ic.status === "False" ? `${ic.reason}: ${ic.message}` : `installing ${bn}`})`;
}

/** One Instance per package; the pass ends without a write when the resolveset went meanwhile. */
const packageInstances: ResolvesetStep = async (ctx, s) => {
  for (const { e, b } of s.entryBundles) {
    const r = await packageInstance(ctx, s, e, b);
    if (r === "gone") return { stop: true };
    if (r) s.notReady.push(r);
  }
};

/** Installed once every package Instance has its entry's Bundle active (an Event when that is new). */
const installed: ResolvesetStep = (_ctx, s) => {
  if (s.notReady.length > 0)
    return stop(s, undefined, s.unpacked!, {
      type: "Installed",
      status: "False",
      reason: "Installing",
      message: `waiting for ${s.notReady.join(", ")}`,
    });
  const prev = s.inst.status?.activeBundle;
  const names = s.entryBundles.map((x) => x.e.name).join(", ");
  const msg = `Instantiated resolveset ${s.rsName}: ${names || "no bundles"}`;
  s.status = {
    ...s.status,
    activeBundle: s.rsName,
    objects: s.entryBundles.map((x) => ({ apiVersion: RUKPAK_API_VERSION, kind: "Instance", name: x.e.package })),
  };
  const c: NewCondition = { type: "Installed", status: "True", reason: "InstallationSucceeded", message: msg };
  s.observe = true;
  return {
    stop: true,
    conditions: [s.unpacked!, c],
    ...(prev === s.rsName ? {} : { event: { type: "Normal" as const, reason: "Installed", message: msg } }),
  };
};

export const RESOLVESET_STEPS: [string, ResolvesetStep][] = [
  ["unpacked", unpacked],
  ["entries", entries],
  ["entryBundles", entryBundles],
  ["conflicts", conflicts],
  ["classes", classes],
  ["entriesUnpacked", entriesUnpacked],
  ["approval", approval],
  ["packageInstances", packageInstances],
  ["installed", installed],
];

export function resolvesetSteps(ctx: ResolvesetContext): Step<ResolvesetState>[] {
  return RESOLVESET_STEPS.map(([name, run]) => ({ name, run: (s: ResolvesetState) => run(ctx, s) }));
}
