/**
 * ClusterExtension condition types and reasons: what users `kubectl wait` on and alert on. Each one is
 * documented in docs/cluster.md ("Conditions and reasons"); test/reasons.test.ts checks both ways.
 */
import type { ConditionOf, ValueOf } from "../kube/conditions.js";

export const Type = {
  BundleDeprecated: "BundleDeprecated",
  ChannelDeprecated: "ChannelDeprecated",
  Deprecated: "Deprecated",
  Installed: "Installed",
  PackageDeprecated: "PackageDeprecated",
  Progressing: "Progressing",
} as const;

export const Reason = {
  Absent: "Absent",
  Blocked: "Blocked",
  Deprecated: "Deprecated",
  DeprecationStatusUnknown: "DeprecationStatusUnknown",
  Failed: "Failed",
  InvalidConfiguration: "InvalidConfiguration",
  NotDeprecated: "NotDeprecated",
  ProgressDeadlineExceeded: "ProgressDeadlineExceeded",
  Retrying: "Retrying",
  RollingOut: "RollingOut",
  Succeeded: "Succeeded",
  Upgrading: "Upgrading",
} as const;

export type ConditionType = ValueOf<typeof Type>;
export type ConditionReason = ValueOf<typeof Reason>;
/** A condition this group writes: its type and reason are declared above. */
export type GroupCondition = ConditionOf<typeof Type, typeof Reason>;
