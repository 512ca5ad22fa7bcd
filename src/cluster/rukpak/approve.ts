/**
 * Approving an Instance (`kubectl instance approve`, `opcat instance approve`): the user's own
 * credentials write the `Approved` condition for the Instance's current generation; the admission
 * webhook refuses it unless the user has the `approve` verb on that Instance.
 */
import type { KubeClient } from "../client.js";
import { setCondition } from "../conditions.js";
import { API_VERSION, type Instance } from "./api.js";

export async function approveInstance(
  client: KubeClient,
  name: string,
  opts: { deny?: boolean } = {},
): Promise<Instance> {
  const who = await client.whoami().catch(() => ({ username: "unknown user", groups: [] }));
  for (let attempt = 0; ; attempt++) {
    const inst = await client.get<Instance>(API_VERSION, "Instance", name);
    const gen = inst.metadata.generation ?? 0;
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
        { ...inst, status: { ...(inst.status ?? {}), conditions } },
        { subresource: "status" },
      );
    } catch (e) {
      if ((e as { status?: number }).status === 409 && attempt < 5) continue; // changed meanwhile: read again
      throw e;
    }
  }
}
