/**
 * Input and Resolveset condition types and reasons: what users `kubectl wait` on and alert on. Each one is
 * documented in docs/cluster.md ("Conditions and reasons"); test/reasons.test.ts checks both ways.
 */
import type { ConditionOf, ValueOf } from "../kube/conditions.js";

export const Type = {
  DependenciesMissing: "DependenciesMissing",
  UpdateAvailable: "UpdateAvailable",
  Approved: "Approved",
  Installed: "Installed",
  OpenShiftVersionChecked: "OpenShiftVersionChecked",
  PropertiesOverridden: "PropertiesOverridden",
  ResolutionFailed: "ResolutionFailed",
  Resolved: "Resolved",
  Unpacked: "Unpacked",
  UpdateBlocked: "UpdateBlocked",
} as const;

export const Reason = {
  AllowAll: "AllowAll",
  AwaitingApproval: "AwaitingApproval",
  BundleConflict: "BundleConflict",
  ClusterVersionTooOld: "ClusterVersionTooOld",
  ConfigMapNotFound: "ConfigMapNotFound",
  ConfigMapNotReadable: "ConfigMapNotReadable",
  ConstraintsNotSatisfiable: "ConstraintsNotSatisfiable",
  CrossChannelUpdateFound: "CrossChannelUpdateFound",
  DeniedByUser: "DeniedByUser",
  DryRun: "DryRun",
  FileNotFound: "FileNotFound",
  InputClassNotFound: "InputClassNotFound",
  InstallationSucceeded: "InstallationSucceeded",
  Installed: "Installed",
  Installing: "Installing",
  InvalidAnnotation: "InvalidAnnotation",
  InvalidRef: "InvalidRef",
  InvalidResolveset: "InvalidResolveset",
  NewPermissions: "NewPermissions",
  NoClusterVersion: "NoClusterVersion",
  NoMatchingBundles: "NoMatchingBundles",
  NoMatchingClass: "NoMatchingClass",
  NoNewPermissions: "NoNewPermissions",
  NoUpdateFound: "NoUpdateFound",
  NotBlocked: "NotBlocked",
  PermissionsUnknown: "PermissionsUnknown",
  ResolutionBudgetExceeded: "ResolutionBudgetExceeded",
  ResolutionFailed: "ResolutionFailed",
  Resolved: "Resolved",
  ResolvesetApproved: "ResolvesetApproved",
  UnpackFailed: "UnpackFailed",
  UnpackPending: "UnpackPending",
  UnpackSuccessful: "UnpackSuccessful",
  UpdateBlocked: "UpdateBlocked",
  UpdateFound: "UpdateFound",
} as const;

export type ConditionType = ValueOf<typeof Type>;
export type ConditionReason = ValueOf<typeof Reason>;
/** A condition this group writes: its type and reason are declared above. */
export type GroupCondition = ConditionOf<typeof Type, typeof Reason>;

const TYPES = new Set<string>(Object.values(Type));
const REASONS = new Set<string>(Object.values(Reason));

/**
 * A condition the resolver (opcat/resolve) reported, as this group writes it: its type and reason are
 * among the declared ones, or it is left out (undefined) so that nothing undeclared reaches a status.
 */
export function fromResolver(c: {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}): GroupCondition | undefined {
  if (!TYPES.has(c.type) || !REASONS.has(c.reason)) return undefined;
  return { type: c.type as ConditionType, status: c.status, reason: c.reason as ConditionReason, message: c.message };
}
