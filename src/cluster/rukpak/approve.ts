/**
 * Approving an Instance (`kubectl instance approve`, `opcat instance approve`): the user's own
 * credentials write a decision in `status.approval` naming the Instance generation, its Bundle (uid
 * and generation) and the digest of the Bundle's unpacked content, so that exactly that content is
 * installed and any change asks again. The admission webhook refuses it unless the user has the
 * `approve` verb on that Instance, and signs it for them (`by` is the user the API server saw).
 */
import type { KubeServer } from "../kube/client.js";
import { setCondition } from "../kube/conditions.js";
import { RetryLater } from "../runtime/steps.js";
import { writeStatus } from "../runtime/status.js";
import { API_VERSION, type Bundle, type Instance, type InstanceStatus } from "./api.js";
import type { ApprovalRecord } from "./trust.js";

export class ApprovalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApprovalError";
  }
}

export async function approveInstance(
  client: KubeServer,
  name: string,
  opts: {
    deny?: boolean /** The content digest the user reviewed (`--show`); refused when it differs. */;
    digest?: string;
  } = {},
): Promise<Instance> {
  const who = await client.whoami().catch(() => ({ username: "unknown user", groups: [] }));
  const inst = await client.get<Instance>(API_VERSION, "Instance", name);
  const bundle = await unpackedBundleOf(client, inst, opts.digest);
  let done: Instance | undefined;
  const out = await writeStatus<Instance>(client, {
    apiVersion: API_VERSION,
    kind: "Instance",
    name,
    uid: inst.metadata.uid,
    cached: inst,
    next: (fresh) => {
      if (fresh.spec.bundle.name !== bundle.metadata.name)
        throw new ApprovalError(`Instance ${name} now names Bundle ${fresh.spec.bundle.name}: review it again`);
      done = fresh;
      return decided(fresh, bundle, who.username, opts.deny);
    },
    written: (o) => {
      done = o;
    },
  }).catch((e) => {
    if (e instanceof RetryLater) throw new ApprovalError(`Instance ${name} kept changing: try again`);
    throw e;
  });
  if (out === "gone" || !done) throw new ApprovalError(`Instance ${name} was deleted meanwhile`);
  return done;
}

/** The Instance's Bundle, unpacked (and holding the content the user reviewed, when they say which). */
async function unpackedBundleOf(client: KubeServer, inst: Instance, reviewed: string | undefined): Promise<Bundle> {
  const bundle = await client.tryGet<Bundle>(API_VERSION, "Bundle", inst.spec.bundle.name);
  const digest = bundle?.status?.digest;
  if (!bundle || !digest || bundle.status?.observedGeneration !== bundle.metadata.generation)
    throw new ApprovalError(
      `Bundle ${inst.spec.bundle.name} of Instance ${inst.metadata.name} is not unpacked yet: ` +
        "an approval names the unpacked content; try again once it is",
    );
  if (reviewed && reviewed !== digest)
    throw new ApprovalError(
      `the content you reviewed (${reviewed}) is not what Bundle ${bundle.metadata.name} holds ` +
        `(${digest}): review it again`,
    );
  return bundle;
}

/** The Instance's status with the user's decision (and its Approved condition). */
function decided(inst: Instance, bundle: Bundle, by: string, deny: boolean | undefined): InstanceStatus {
  const gen = inst.metadata.generation ?? 0;
  // what the controller asks an approval to name (for a resolveset: its entries' content too)
  const named = inst.status?.contentDigest ?? bundle.status!.digest!;
  const approval: ApprovalRecord = {
    decision: deny ? "Denied" : "Approved",
    reason: deny ? "DeniedByUser" : "ApprovedByUser",
    by,
    generation: gen,
    bundle: { name: bundle.metadata.name, uid: bundle.metadata.uid!, generation: bundle.metadata.generation ?? 0 },
    digest: named,
  };
  const c = deny
    ? { type: "Approved", status: "False" as const, reason: "DeniedByUser", message: `denied by ${by}` }
    : {
        type: "Approved",
        status: "True" as const,
        reason: "ApprovedByUser",
        message: `approved by ${by} for bundle ${inst.spec.bundle.name}`,
      };
  const { conditions } = setCondition(inst.status?.conditions, { ...c, observedGeneration: gen });
  return { ...(inst.status ?? {}), approval, conditions };
}
