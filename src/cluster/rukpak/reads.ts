/**
 * What one pass over an Instance read of the objects it installs or prunes, and the key they are known
 * by (the install record's, `record.ts`). A leaf: it imports only the Kubernetes client's types.
 */
import type { KubeApi, KubeObject } from "../kube/client.js";

/** What names an object: its API version, kind, namespace and name (an install record's entry). */
export interface ObjectKey {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export function refKey(r: ObjectKey): string {
  return `${r.apiVersion}/${r.kind}/${r.namespace ?? ""}/${r.name}`;
}

/** The key of an object of a bundle (an install record's entry). */
export function refOf(o: KubeObject): ObjectKey {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  };
}

/**
 * What one pass read of the objects it installs, by {@link refKey} (undefined: it did not exist): the
 * requester's dry run reads an object to choose create or apply, CRD upgrade safety reads a CRD, and the
 * collision check of the same pass asks the same question, answered from here (docs/security.md: the
 * collision check sees the object as the API server had it in this pass, never a cache that may be
 * stale); the judgement of a pivot's deletions reads what the prune deletes (deleted only as read then:
 * uid and resourceVersion preconditions). Only answers are kept: a read that failed is asked again.
 */
export type PassReads = Map<string, KubeObject | undefined>;

/** An object as the API server has it (undefined: not there), read once per pass when `reads` is given. */
export async function readInPass(
  client: Pick<KubeApi, "tryGet">,
  r: ObjectKey,
  reads?: PassReads,
): Promise<KubeObject | undefined> {
  const k = refKey(r);
  if (reads?.has(k)) return reads.get(k);
  const cur = await client.tryGet(r.apiVersion, r.kind, r.name, r.namespace);
  reads?.set(k, cur);
  return cur;
}
