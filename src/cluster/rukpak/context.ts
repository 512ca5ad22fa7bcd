/**
 * What the RukPak controller's two reconciles (Bundles: `bundle.ts`, Instances: `instance.ts`) share:
 * the client, the signing key, the content store, the caches and queues, the install records, and
 * who a Bundle or Instance is judged as (its verified requester, never the controllers' own rights).
 */
import { createHash } from "node:crypto";
import type { KubeServer, KubeObject } from "../kube/client.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer } from "../kube/informer.js";
import type { WorkQueue } from "../kube/queue.js";
import type { PullOptions } from "../../image/index.js";
import { ANNOTATION_REQUESTER, API_VERSION, type Approval, type Bundle, type Instance } from "./api.js";
import type { ProvisionerClass } from "./api.js";
import type { ContentLimits } from "./content.js";
import type { Requester } from "./permissions.js";
import type { DesiredContent, ProvisionerRegistry } from "./provisioner.js";
import type { RecordStore } from "./record.js";
import { isOwn, madeBy, verifiedRequester, type ProtectedSet, type SigningKey } from "./trust.js";
import { sameJson } from "../kube/json.js";
import { isEmptySelector, selectorMatches } from "../kube/selector.js";

/** What the steps read of a cache (an {@link Informer}): one object by name, or all. */
export type ObjectCache<T extends KubeObject> = Pick<Informer<T>, "get" | "list">;

/** What the steps do with a work queue: add a key, ask how often it failed. */
export type QueueRef = Pick<WorkQueue, "add" | "failuresOf">;

export interface RukpakContext {
  client: KubeServer;
  /** Verifies requester signatures and signs approvals. */
  key: SigningKey;
  /** The controllers' own user name. */
  self?: string;
  /** Root of the content store. */
  stateDir: string;
  pull?: PullOptions;
  limits?: ContentLimits;
  log: (m: string) => void;
  records: RecordStore;
  protectedSet: ProtectedSet;
  provisioners: ProvisionerRegistry;
  bundles: ObjectCache<Bundle>;
  instances: ObjectCache<Instance>;
  events: Pick<EventRecorder, "emit">;
  bundleQueue: QueueRef;
  instanceQueue: QueueRef;
  /**
   * The Instances (name → uid) whose objects this process applied since it started or was last
   * asked to resync them: only their passes may skip an unchanged apply. A new process (a restart,
   * a failover) applies every Instance once, which puts right what changed while none ran.
   */
  appliedHere: Map<string, string>;
  /** The class when its provisioner is one this controller runs. */
  ours(className: string | undefined): ProvisionerClass | undefined;
}

const APPROVAL_DEFAULT: Approval = "UserPermission";

export function approvalOf(pc: ProvisionerClass | undefined): Approval {
  const a = pc?.parameters?.approval;
  return a === "AllowAll" || a === "DenyAll" || a === "UserPermission" ? a : APPROVAL_DEFAULT;
}

/**
 * Whether an Instance's bundle selector selects these labels: Kubernetes' matching, except that an
 * empty selector selects nothing here (an Instance never takes over every Bundle).
 */
export function labelsMatch(
  selector: Instance["spec"]["selector"],
  labels: Record<string, string> | undefined,
): boolean {
  return !isEmptySelector(selector) && selectorMatches(selector, labels);
}

/** The requester an annotation names, unverified (for display only: trust.ts verifies it). */
export function requesterOf(o: KubeObject): Requester | undefined {
  const raw = o.metadata.annotations?.[ANNOTATION_REQUESTER];
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Requester;
    return typeof r.username === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}

/** The namespaces the objects need: the install namespace and every object's. */
export function neededNamespaces(desired: DesiredContent): Set<string> {
  const needed = new Set<string>();
  if (desired.installNamespace) needed.add(desired.installNamespace);
  for (const o of desired.objects) if (o.metadata.namespace) needed.add(o.metadata.namespace);
  return needed;
}

/** `a; b; c; and N more` of a list of problems. */
export function listed(items: readonly string[], max = 10): string {
  return `${items.slice(0, max).join("; ")}${items.length > max ? `; and ${items.length - max} more` : ""}`;
}

/** The field manager of an Instance's objects (one per Instance, never the controllers' own). */
export function fieldManagerFor(instance: string): string {
  const m = `rukpak-instance-${instance}`;
  return m.length <= 128 ? m : `rukpak-instance-${createHash("sha256").update(instance).digest("hex").slice(0, 32)}`;
}

/** True when the controllers made `o` (its signed requester is their own identity). */
export function madeBySelf(ctx: RukpakContext, o: KubeObject): boolean {
  return madeBy(ctx.key, ctx.self, o);
}

/**
 * Whom an Instance is judged as: its verified requester, who created or last changed its spec (for an
 * Instance a ClusterExtension or an Operator made, their author, whom those controllers impersonate).
 * Nothing else: owner references, labels and annotations are anyone's to write. An Instance the
 * controllers made for their own purposes (an object of another Instance's bundle, a resolveset's
 * package) has no requester and waits for an approval: it is never judged with the controllers' rights.
 */
export async function judgedAs(ctx: RukpakContext, inst: Instance): Promise<Requester | undefined> {
  const who = verifiedRequester(ctx.key, inst);
  return isOwn(who, ctx.self) ? undefined : who;
}

/**
 * Whose rights a Bundle's content (ConfigMaps, pull Secrets) is read with: its verified requester.
 * A Bundle the controllers made (from an Instance's embedded spec, or an object of an Instance's
 * bundle) is read as whom the Instance it was made for is judged: the controllers set its owner
 * references when they make it (the applier replaces any a bundle ships), and the webhook lets
 * nobody else add one to what the controllers made — so on such a Bundle, and only there, the owner
 * reference is the controllers' own record. Several Instances judged as different users, or none: nobody.
 */
export async function contentRequesterOf(ctx: RukpakContext, b: Bundle): Promise<Requester | undefined> {
  const who = verifiedRequester(ctx.key, b);
  if (!isOwn(who, ctx.self)) return who;
  const judged: Requester[] = [];
  for (const ref of b.metadata.ownerReferences ?? []) {
    if (ref.kind !== "Instance" || ref.apiVersion !== API_VERSION) continue;
    const inst = ctx.instances.get(ref.name);
    const r = inst?.metadata.uid === ref.uid ? await judgedAs(ctx, inst) : undefined;
    if (!r) return undefined;
    judged.push(r);
  }
  return judged.length > 0 && judged.every((r) => sameJson(r, judged[0])) ? judged[0] : undefined;
}

/** True when Bundle `b` was made by the controllers for Instance `inst` (from its embedded spec). */
export function madeForInstance(ctx: RukpakContext, b: Bundle, inst: Instance): boolean {
  return (b.metadata.ownerReferences ?? []).some((o) => o.uid === inst.metadata.uid) && madeBySelf(ctx, b);
}

/**
 * For messages only (never for trust): true when a Bundle without a requester is one the controllers
 * made for their own purposes, not one made for an Instance whose own requester cannot be verified.
 */
export function madeForNobody(ctx: RukpakContext, b: Bundle): boolean {
  if (!madeBySelf(ctx, b)) return false;
  const owner = (b.metadata.ownerReferences ?? []).find((o) => o.kind === "Instance");
  const inst = owner ? ctx.instances.get(owner.name) : undefined;
  return !inst || madeBySelf(ctx, inst);
}
