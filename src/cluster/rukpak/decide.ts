/**
 * An Instance's approval by its class's policy (docs/security.md): a signed decision naming this
 * generation, this Bundle and this content, or the condition saying what the Instance waits for. The
 * requesters are whom the Instance is judged as and whoever last shaped a Bundle the controllers did
 * not make; `UserPermission` asks the API server, impersonating each of them, for a dry run of every
 * object (missing namespaces made first when a dry run says the requester could make them).
 */
import { isConflict, isNotFound, type KubeServer } from "../kube/client.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import { GROUP, type Bundle, type Instance, type ProvisionerClass } from "./api.js";
import {
  approvalOf,
  fieldManagerFor,
  judgedAs,
  listed,
  madeBySelf,
  neededNamespaces,
  type RukpakContext,
} from "./context.js";
import { canI, dryRunAs, type Requester } from "./permissions.js";
import type { DesiredContent } from "./provisioner.js";
import { readInPass, type PassReads } from "./reads.js";
import { refKey, refOf, type RecordStore } from "./record.js";
import { isOwn, signApproval, verifiedRequester, type ApprovalRecord, type ApprovalSubject } from "./trust.js";

export interface Decision {
  approval?: ApprovalRecord;
  condition: NewCondition;
  /** Not a refusal: the API server failed the dry run for another reason; try again with backoff. */
  retry?: boolean;
}

/** What a decision is about. */
export interface DecisionInput {
  inst: Instance;
  bundle: Bundle;
  pc: ProvisionerClass;
  desired: DesiredContent;
  subject: ApprovalSubject;
  recorded: ApprovalRecord | undefined;
  /** Why the recorded approval (if any) does not count. */
  mismatch: string;
  /** The pass's answer of servedBuiltInGroups (asked once per pass), when its objects have CRDs. */
  served?: ReadonlySet<string>;
  /** The pass's reads of the objects (the dry run's, reused by its collision check). */
  reads?: PassReads;
}

const waiting = (reason: NewCondition["reason"], message: string): Decision => ({
  condition: { type: "Approved", status: "False", reason, message },
});

function approve(
  ctx: RukpakContext,
  subject: ApprovalSubject,
  reason: NewCondition["reason"],
  by: string,
  message: string,
): Decision {
  return {
    approval: signApproval(ctx.key, subject.instanceUid, {
      decision: "Approved",
      reason,
      by,
      generation: subject.generation,
      bundle: subject.bundle,
      digest: subject.digest,
    }),
    condition: { type: "Approved", status: "True", reason, message },
  };
}

/**
 * Who asked: the Instance's creator (for an Instance the controllers made for an Operator or a
 * ClusterExtension, that object's creator), and whoever last shaped a Bundle they did not make.
 */
async function requestersOf(ctx: RukpakContext, inst: Instance, bundle: Bundle): Promise<Requester[] | Decision> {
  const name = inst.metadata.name;
  const who = await judgedAs(ctx, inst);
  if (!who)
    return waiting(
      "RequesterUnverified",
      isOwn(verifiedRequester(ctx.key, inst), ctx.self)
        ? "made by opcat's controllers for no user (an object of another Instance's bundle, or a resolveset's " +
            `package), so nobody's rights can approve it; approve it with kubectl instance approve ${name}`
        : "who created or last changed this Instance cannot be verified (written while opcat's admission " +
            `webhook was not serving, or the record was altered); approve it with kubectl instance approve ${name}`,
    );
  const requesters = [who];
  if (!madeBySelf(ctx, bundle)) {
    const shaper = verifiedRequester(ctx.key, bundle);
    if (!shaper)
      return waiting(
        "RequesterUnverified",
        `who created or last changed Bundle ${bundle.metadata.name} cannot be verified; ` +
          `approve it with kubectl instance approve ${name}`,
      );
    if (shaper.username !== who.username) requesters.push(shaper);
  }
  return requesters;
}

/** The class: the Instance may name a Bundle made later, so `use` is checked here as well. */
async function classRefusal(ctx: RukpakContext, requesters: Requester[], pc: ProvisionerClass) {
  for (const r of requesters) {
    const check = { verb: "use", group: GROUP, resource: "provisionerclasses", name: pc.metadata.name };
    if (!(await canI(ctx.client, r, check)))
      return waiting(
        "ClassNotPermitted",
        `${r.username} may not use ProvisionerClass ${JSON.stringify(pc.metadata.name)} ` +
          `(the "use" verb on provisionerclasses.${GROUP})`,
      );
  }
  return undefined;
}

/** UserPermission: the API server judges, as each requester, a dry run of every object. */
async function userPermission(ctx: RukpakContext, d: DecisionInput, requesters: Requester[]): Promise<Decision> {
  const name = d.inst.metadata.name;
  const refusals: string[] = [];
  const failures: string[] = [];
  for (const r of requesters) {
    const ns = await namespacesFor(ctx.client, ctx.records, d.inst, d.desired, r);
    for (const x of ns.refused) refusals.push(`${r.username} may not create Namespace ${JSON.stringify(x)}`);
    if (ns.refused.length > 0) continue;
    for (const x of await dryRunAs(ctx.client, r, d.desired.objects, fieldManagerFor(name), d.served, d.reads))
      if (x.denied) refusals.push(`${r.username} may not make ${x.object}: ${x.message}`);
      else failures.push(`${x.object}: ${x.message}`);
    for (const x of await deletionRefusals(ctx, d, r)) refusals.push(`${r.username} may not delete ${x}`);
  }
  if (refusals.length > 0) return waiting("InsufficientPermissions", listed(refusals, 20));
  // an immutable field, a conflict, an invalid object: a collision, not a question of rights, tried
  // again with backoff until it clears (operator-controller: Progressing=True, Retrying)
  if (failures.length > 0)
    return {
      ...waiting(
        "DryRunFailed",
        `the API server refused a dry run of the bundle's objects for a reason other than permissions: ` +
          `${listed([...new Set(failures)], 10)}; tried again until it clears`,
      ),
      retry: true,
    };
  return approve(
    ctx,
    d.subject,
    "UserPermission",
    requesters.map((r) => r.username).join(", "),
    `${requesters.map((r) => r.username).join(" and ")} may create every object of bundle ${d.bundle.metadata.name}`,
  );
}

/**
 * Deletion is judged like creation: what a pivot would prune (objects of the install record that the
 * new content no longer has, still there and still the Instance's) is deleted only when the requester
 * could delete it themselves — a `dryRun=All` DELETE as them. Returns the objects they may not delete.
 * What is read here is the pass's (`d.reads`): the prune deletes an object only as it was read then.
 */
async function deletionRefusals(ctx: RukpakContext, d: DecisionInput, r: Requester): Promise<string[]> {
  const { record } = await ctx.records.read(d.inst);
  if (!record) return [];
  const keep = new Set(d.desired.objects.map((o) => refKey(refOf(o))));
  const seen = new Set<string>();
  const refused: string[] = [];
  const as = ctx.client.impersonating(r);
  for (const ref of [...record.applied, ...(record.pending ?? [])]) {
    const k = refKey(ref);
    if (keep.has(k) || seen.has(k)) continue;
    seen.add(k);
    const live = await readInPass(ctx.client, ref, d.reads).catch(() => undefined);
    if (!live || !(live.metadata.ownerReferences ?? []).some((o) => o.uid === d.inst.metadata.uid)) continue;
    const path = await ctx.client.path(ref.apiVersion, ref.kind, ref.namespace, ref.name);
    await as.request("DELETE", path, { query: { dryRun: "All" } }).catch((e: Error) => {
      if (!isNotFound(e)) refused.push(`${describeRef(ref)} (which the new content no longer has): ${e.message}`);
    });
  }
  return refused;
}

function describeRef(r: { kind: string; name: string; namespace?: string }): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}

/**
 * A new decision by the class's policy when no recorded approval names this generation, Bundle and
 * content: a signed approval, or the condition saying what the Instance waits for.
 */
export async function decide(ctx: RukpakContext, d: DecisionInput): Promise<Decision> {
  const { inst, bundle, pc, recorded, mismatch } = d;
  const name = inst.metadata.name;
  // a denial of exactly this content stands until something changes
  if (recorded && mismatch.startsWith("denied by "))
    return waiting("DeniedByUser", `${mismatch}; change the Instance or approve it: kubectl instance approve ${name}`);
  const policy = approvalOf(pc);
  if (policy === "DenyAll")
    return waiting(
      "AwaitingApproval",
      `waiting for approval of bundle ${bundle.metadata.name}: kubectl instance approve ${name}` +
        (recorded ? ` (${mismatch})` : ""),
    );
  const requesters = await requestersOf(ctx, inst, bundle);
  if (!Array.isArray(requesters)) return requesters;
  const refused = await classRefusal(ctx, requesters, pc);
  if (refused) return refused;
  if (policy === "AllowAll")
    return approve(
      ctx,
      d.subject,
      "AllowAll",
      `ProvisionerClass ${pc.metadata.name}`,
      `approved by ProvisionerClass ${pc.metadata.name} (approval: AllowAll)`,
    );
  return userPermission(ctx, d, requesters);
}

/**
 * The namespaces the objects need that do not exist: each is created by the controller when the
 * requester may create it (a dry run as the requester), so that the dry run of what goes in it can
 * be judged; those the requester may not create are returned.
 */
async function namespacesFor(
  client: KubeServer,
  records: RecordStore,
  inst: Instance,
  desired: DesiredContent,
  r: Requester,
): Promise<{ refused: string[] }> {
  const made: string[] = [];
  const refused: string[] = [];
  for (const ns of neededNamespaces(desired)) {
    if (await client.tryGet("v1", "Namespace", ns)) continue;
    const nsObj = { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } };
    const ok = await client
      .impersonating(r)
      .request("POST", "/api/v1/namespaces", { body: nsObj, query: { dryRun: "All" } })
      .then(
        () => true,
        () => false,
      );
    if (!ok) refused.push(ns);
    else {
      await client.create(nsObj).catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
      made.push(ns);
    }
  }
  if (made.length > 0) {
    const { record, version } = await records.read(inst);
    await records.write(
      inst,
      {
        instance: inst.metadata.name,
        uid: inst.metadata.uid!,
        applied: record?.applied ?? [],
        ...(record?.pending ? { pending: record.pending } : {}),
        namespaces: [...(record?.namespaces ?? []), ...made],
      },
      version,
    );
  }
  return { refused };
}
