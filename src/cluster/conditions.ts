/**
 * metav1.Condition semantics (apimachinery's meta.SetStatusCondition): one condition per type;
 * lastTransitionTime changes only when the status changes; reason, message and
 * observedGeneration are updated in place.
 */

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type NewCondition = Omit<Condition, "lastTransitionTime"> & { lastTransitionTime?: string };

/** Kubernetes' RFC 3339 time without fractional seconds. */
export function now(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Returns a new list with `c` set (does not mutate `conds`); `changed` says whether anything differs. */
export function setCondition(
  conds: readonly Condition[] | undefined,
  c: NewCondition,
  at = now(),
): { conditions: Condition[]; changed: boolean } {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  if (i < 0) {
    list.push({ ...c, lastTransitionTime: c.lastTransitionTime ?? at });
    return { conditions: list, changed: true };
  }
  const old = list[i];
  const next: Condition = {
    ...old,
    status: c.status,
    reason: c.reason,
    message: c.message,
    observedGeneration: c.observedGeneration ?? old.observedGeneration,
    lastTransitionTime: old.status !== c.status ? (c.lastTransitionTime ?? at) : old.lastTransitionTime,
  };
  const changed =
    next.status !== old.status ||
    next.reason !== old.reason ||
    next.message !== old.message ||
    next.observedGeneration !== old.observedGeneration;
  list[i] = next;
  return { conditions: list, changed };
}

export function findCondition(conds: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conds, type)?.status === "True";
}
