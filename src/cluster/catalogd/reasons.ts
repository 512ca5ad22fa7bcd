/**
 * ClusterCatalog condition types and reasons: what users `kubectl wait` on and alert on. Each one is
 * documented in docs/cluster.md ("Conditions and reasons"); test/reasons.test.ts checks both ways.
 */
import type { ConditionOf, ValueOf } from "../kube/conditions.js";

export const Type = {
  Progressing: "Progressing",
  Serving: "Serving",
  Validated: "Validated",
} as const;

export const Reason = {
  Available: "Available",
  Invalid: "Invalid",
  InvalidCatalog: "InvalidCatalog",
  PullFailed: "PullFailed",
  Retrying: "Retrying",
  Succeeded: "Succeeded",
  Unavailable: "Unavailable",
  UserSpecifiedUnavailable: "UserSpecifiedUnavailable",
  Valid: "Valid",
} as const;

export type ConditionType = ValueOf<typeof Type>;
export type ConditionReason = ValueOf<typeof Reason>;
/** A condition this group writes: its type and reason are declared above. */
export type GroupCondition = ConditionOf<typeof Type, typeof Reason>;
