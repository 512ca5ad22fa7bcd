/**
 * Operator condition types and reasons: what users `kubectl wait` on and alert on. Each one is
 * documented in docs/cluster.md ("Conditions and reasons"); test/reasons.test.ts checks both ways.
 */
import type { ConditionOf, ValueOf } from "../kube/conditions.js";

export const Type = {
  Available: "Available",
  Installed: "Installed",
  UpdateAvailable: "UpdateAvailable",
} as const;

export const Reason = {
  AwaitingApproval: "AwaitingApproval",
  CrossChannelUpdateFound: "CrossChannelUpdateFound",
  DryRun: "DryRun",
  InvalidSpec: "InvalidSpec",
  NameConflict: "NameConflict",
  NoUpdateFound: "NoUpdateFound",
  Pending: "Pending",
  ResolutionFailed: "ResolutionFailed",
  UpdateFound: "UpdateFound",
  WorkloadsAvailable: "WorkloadsAvailable",
} as const;

export type ConditionType = ValueOf<typeof Type>;
export type ConditionReason = ValueOf<typeof Reason>;
/** A condition this group writes: its type and reason are declared above. */
export type GroupCondition = ConditionOf<typeof Type, typeof Reason>;
