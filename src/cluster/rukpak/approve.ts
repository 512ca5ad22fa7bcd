/**
 * Approving an Instance (`kubectl instance approve`, `opcat instance approve`): the user's own
 * credentials write a decision in `status.approval` naming the Instance generation, its Bundle (uid
 * and generation) and the digest of the Bundle's unpacked content, so that exactly that content is
 * installed and any change asks again. The admission webhook refuses it unless the user has the
 * `approve` verb on that Instance, and signs it for them (`by` is the user the API server saw).
 */
import type { KubeClient } from "../kube/client.js";
import { setCondition } from "../kube/conditions.js";
import { API_VERSION, type Bundle, type Instance } from "./api.js";
import type { ApprovalRecord } from "./trust.js";

export class ApprovalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApprovalError";
  }
}

export async function approveInstance(
  client: KubeClient,
  name: string,
  opts: {
    deny?: boolean /** The content digest the user reviewed (`--show`); refused when it differs. */;
    digest?: string;
  } = {},
): Promise<Instance> {
  const who = await client.whoami().catch(() => ({ username: "unknown user", groups: [] }));
  for (let attempt = 0; ; attempt++) {
    const inst = await client.get<Instance>(API_VERSION, "Instance", name);
    const gen = inst.metadata.generation ?? 0;
    const bundle = await client.tryGet<Bundle>(API_VERSION, "Bundle", inst.spec.bundle.name);
    const digest = bundle?.status?.digest;
    if (!bundle || !digest || bundle.status?.observedGeneration !== bundle.metadata.generation)
      throw new ApprovalError(
        `Bundle ${inst.spec.bundle.name} of Instance ${name} is not unpacked yet: ` +
          "an approval names the unpacked content; try again once it is",
      );
    if (opts.digest && opts.digest !== digest)
      throw new ApprovalError(
        `the content you reviewed (${opts.digest}) is not what Bundle ${bundle.metadata.name} holds ` +
          `(${digest}): review it again`,
      );
    // what the controller asks an approval to name (for a resolveset: its entries' content too)
    const named = inst.status?.contentDigest ?? digest;
    const approval: ApprovalRecord = {
      decision: opts.deny ? "Denied" : "Approved",
      reason: opts.deny ? "DeniedByUser" : "ApprovedByUser",
      by: who.username,
      generation: gen,
      bundle: { name: bundle.metadata.name, uid: bundle.metadata.uid!, generation: bundle.metadata.generation ?? 0 },
      digest: named,
    };
    const c = opts.deny
      ? {
          type: "Approved",
          status: "False" as const,
          reason: "DeniedByUser",
          message: `denied by ${who.username}`,
          observedGeneration: gen,
        }
      : {
          type: "Approved",
          status: "True" as const,
          reason: "ApprovedByUser",
          message: `approved by ${who.username} for bundle ${inst.spec.bundle.name}`,
          observedGeneration: gen,
        };
    const { conditions } = setCondition(inst.status?.conditions, c);
    try {
      return await client.replace<Instance>(
        { ...inst, status: { ...(inst.status ?? {}), approval, conditions } },
        { subresource: "status" },
      );
    } catch (e) {
      if ((e as { status?: number }).status === 409 && attempt < 5) continue; // changed meanwhile: read again
      throw e;
    }
  }
}
