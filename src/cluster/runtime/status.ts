/**
 * Writing an object's status, one policy for every controller: start from the cache's copy (an
 * unchanged status then costs no request), compute the status from the object as it is, write only
 * when it differs, and on a Conflict read the object again and recompute — at most five times, then
 * the pass is tried again with the work queue's backoff ({@link RetryLater}). An object that is gone,
 * or was replaced by another of the same name, gets nothing.
 */
import { isConflict, isNotFound, type KubeApi, type KubeObject } from "../kube/client.js";
import { sameJson } from "../kube/json.js";
import { RetryLater } from "./steps.js";

export type StatusOf<O> = O extends { status?: infer S } ? S : never;

export interface StatusWrite<O extends KubeObject> {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** The object's uid when the write is for that object only (a re-created one is left alone). */
  uid?: string;
  /** The cache's copy, tried first; absent: read from the API server. */
  cached?: O;
  /** The status to write, from the object as it is now. */
  next: (fresh: O) => StatusOf<O>;
}

/** How a write ended: written, nothing to change, or no such object. */
export type StatusWriteResult = "written" | "unchanged" | "gone";

export const STATUS_WRITE_ATTEMPTS = 5;

export async function writeStatus<O extends KubeObject & { status?: unknown }>(
  client: Pick<KubeApi, "tryGet" | "replace">,
  w: StatusWrite<O>,
): Promise<StatusWriteResult> {
  for (let attempt = 0; attempt < STATUS_WRITE_ATTEMPTS; attempt++) {
    const fresh =
      (attempt === 0 ? w.cached : undefined) ?? (await client.tryGet<O>(w.apiVersion, w.kind, w.name, w.namespace));
    if (!fresh || (w.uid !== undefined && fresh.metadata.uid !== w.uid)) return "gone";
    const status = w.next(fresh);
    if (sameJson(status, fresh.status ?? {})) return "unchanged";
    try {
      await client.replace<O>({ ...fresh, status }, { subresource: "status" });
      return "written";
    } catch (e) {
      if (isNotFound(e)) return "gone";
      if (!isConflict(e)) throw e;
    }
  }
  throw new RetryLater(
    `${w.kind} ${w.name}: status not written after ${STATUS_WRITE_ATTEMPTS} conflicting writes; tried again later`,
  );
}
