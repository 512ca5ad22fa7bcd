/**
 * Writing an object's status, one policy for every controller: start from the cache's copy (an
 * unchanged status then costs no request), compute the status from the object as it is, write only
 * when it differs, and on a Conflict read the object again and recompute — at most five times, then
 * the pass is tried again with the work queue's backoff ({@link RetryLater}). An object that is gone,
 * or was replaced by another of the same name, gets nothing.
 *
 * Two ways to write: {@link writeStatus} PUTs the whole status (the object's own controller, keeping
 * what others wrote through {@link changedOnTop}); {@link applyConditions} applies only the conditions
 * a second controller owns, by server-side apply with its own field manager (the CRDs declare
 * conditions a map list keyed by type, so the API server merges them with the others'). A PUT that
 * keeps such a condition as it is leaves it owned by its applier.
 */
import { isConflict, isNotFound, type KubeApi, type KubeObject } from "../kube/client.js";
import { findCondition, type Condition } from "../kube/conditions.js";
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
  /**
   * The status to write, from the object as it is now. It may throw to give the write up (the pass
   * decided on something the object no longer says): the error ends the write.
   */
  next: (fresh: O) => StatusOf<O>;
  /** Called with the object as the API server returned it after the write. */
  written?: (o: O) => void;
}

/** How a write ended: written, nothing to change, or no such object. */
export type StatusWriteResult = "written" | "unchanged" | "gone";

export const STATUS_WRITE_ATTEMPTS = 5;

export async function writeStatus<O extends KubeObject & { status?: unknown }>(
  client: Pick<KubeApi, "tryGet" | "replace">,
  w: StatusWrite<O>,
): Promise<StatusWriteResult> {
  return writeLoop(client, w, (fresh) => {
    const status = w.next(fresh);
    if (sameJson(status, fresh.status ?? {})) return undefined;
    return () => client.replace<O>({ ...fresh, status }, { subresource: "status" });
  });
}

type WithConditions = KubeObject & { status?: { conditions?: Condition[] } };

/** A write of the conditions one field manager owns (see the module comment). */
export interface ConditionsApply<O extends WithConditions> extends Omit<StatusWrite<O>, "next"> {
  /** The field manager that owns the conditions (a controller's own: `opcat-availability`). */
  fieldManager: string;
  /**
   * The conditions to apply, from the object as it is now: every one the manager owns, each time (one
   * it no longer applies is removed); undefined: nothing to write (what it applied before stays). It
   * may throw to give the write up.
   */
  conditions: (fresh: O) => Condition[] | undefined;
}

/**
 * Applies a manager's conditions to the status subresource by server-side apply (forced, as a controller
 * does for the fields it alone manages), only when one differs from the object's; with the
 * resourceVersion it read as a precondition, so that a Conflict reads again and recomputes as
 * {@link writeStatus} does.
 */
export async function applyConditions<O extends WithConditions>(
  client: Pick<KubeApi, "tryGet" | "apply">,
  w: ConditionsApply<O>,
): Promise<StatusWriteResult> {
  return writeLoop(client, w, (fresh) => {
    const conditions = w.conditions(fresh);
    if (!conditions?.some((c) => !sameJson(c, findCondition(fresh.status?.conditions, c.type)))) return undefined;
    const { name, namespace, resourceVersion } = fresh.metadata;
    const applied = { apiVersion: w.apiVersion, kind: w.kind, metadata: { name, namespace, resourceVersion } };
    return () =>
      client.apply<O>({ ...applied, status: { conditions } } as O, {
        subresource: "status",
        fieldManager: w.fieldManager,
        force: true,
      });
  });
}

/**
 * The policy both writes share: the cache's copy first, then fresh reads on a Conflict, up to
 * {@link STATUS_WRITE_ATTEMPTS}; `write` gives the request to send from the object as it is now
 * (undefined: nothing to change).
 */
async function writeLoop<O extends KubeObject>(
  client: Pick<KubeApi, "tryGet">,
  w: Omit<StatusWrite<O>, "next">,
  write: (fresh: O) => (() => Promise<O>) | undefined,
): Promise<StatusWriteResult> {
  for (let attempt = 0; attempt < STATUS_WRITE_ATTEMPTS; attempt++) {
    const fresh =
      (attempt === 0 ? w.cached : undefined) ?? (await client.tryGet<O>(w.apiVersion, w.kind, w.name, w.namespace));
    if (!fresh || (w.uid !== undefined && fresh.metadata.uid !== w.uid)) return "gone";
    const send = write(fresh);
    if (!send) return "unchanged";
    try {
      const out = await send();
      w.written?.(out);
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

/**
 * What a pass changed in a status (`working`, from `base`), set on top of the status as it is now
 * (`fresh`): fields it set or removed, conditions by type; whatever another writer wrote meanwhile
 * (its own conditions, say) stays. With `fresh` equal to `base`, exactly `working`.
 */
export function changedOnTop<S extends { conditions?: Condition[] }>(base: S, working: S, fresh: S): S {
  if (sameJson(fresh, base)) return working;
  const out: Record<string, unknown> = { ...fresh };
  const b = base as Record<string, unknown>;
  const w = working as Record<string, unknown>;
  for (const k of new Set([...Object.keys(b), ...Object.keys(w)])) {
    if (k === "conditions" || sameJson(b[k], w[k])) continue;
    if (w[k] === undefined) delete out[k];
    else out[k] = w[k];
  }
  let conditions = [...(fresh.conditions ?? [])];
  for (const c of working.conditions ?? []) {
    if (
      sameJson(
        c,
        base.conditions?.find((x) => x.type === c.type),
      )
    )
      continue;
    const i = conditions.findIndex((x) => x.type === c.type);
    if (i < 0) conditions.push(c);
    else conditions[i] = c;
  }
  const kept = new Set((working.conditions ?? []).map((c) => c.type));
  const dropped = (base.conditions ?? []).filter((c) => !kept.has(c.type)).map((c) => c.type);
  conditions = conditions.filter((c) => !dropped.includes(c.type));
  if (conditions.length > 0 || fresh.conditions) out.conditions = conditions;
  return out as S;
}
