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

/**
 * A condition to set. The API groups narrow `type` and `reason` to their own constants
 * (`<group>/reasons.ts`), so a reason that is not declared (and documented) does not compile.
 */
export type NewCondition<T extends string = string, R extends string = string> = Omit<
  Condition,
  "lastTransitionTime" | "type" | "reason"
> & { type: T; reason: R; lastTransitionTime?: string };

/**
 * A reason copied from another object's condition or state (an Instance's, a Pod container's): it
 * is that object's contract, not this group's, and is passed on as it was read.
 */
export type Relayed = string & { readonly relayed: unique symbol };

/** Marks a reason read from another object as passed on unchanged (see {@link Relayed}). */
export function relayed(reason: string): Relayed {
  return reason as Relayed;
}

/** The union of an `as const` object's values (the constants of a `reasons.ts`). */
export type ValueOf<T> = T[keyof T];

/**
 * The conditions an API group writes, from its `Type` and `Reason` constants: a declared type, and a
 * declared reason or one relayed from another object.
 */
export type ConditionOf<Types extends Record<string, string>, Reasons extends Record<string, string>> = NewCondition<
  ValueOf<Types>,
  ValueOf<Reasons> | Relayed
>;

/** Kubernetes' RFC 3339 time without fractional seconds. */
export function now(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** metav1.Condition's limit on `message` (the API server refuses a longer one). */
export const MAX_CONDITION_MESSAGE = 32768;

/**
 * A message as it may be shown on a terminal: control characters but newline and tab (an escape
 * sequence, a carriage return that overwrites what `kubectl describe` printed), DEL, C1 controls and
 * bidirectional overrides are written as `\u` escapes. Applied to every condition and Event message.
 */
export function safeMessage(message: string): string {
  return message.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A message cut to fit a condition, saying how much was left out. */
export function fitMessage(message: string, max = MAX_CONDITION_MESSAGE): string {
  if (message.length <= max) return message;
  const tail = ` … (${message.length} characters; the rest left out)`;
  return message.slice(0, max - tail.length) + tail;
}

/**
 * Returns a new list with `c` set (does not mutate `conds`); `changed` says whether anything differs.
 * A message too long for a condition is cut (a status write with it would be refused, forever).
 */
export function setCondition(
  conds: readonly Condition[] | undefined,
  input: NewCondition,
  at = now(),
): { conditions: Condition[]; changed: boolean } {
  const message = safeMessage(input.message);
  const c = { ...input, message: message.length > MAX_CONDITION_MESSAGE ? fitMessage(message) : message };
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
