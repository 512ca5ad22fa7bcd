/**
 * Bundle and Instance condition types and reasons: what users `kubectl wait` on and alert on. Each one is
 * documented in docs/cluster.md ("Conditions and reasons"); test/reasons.test.ts checks both ways.
 */
import type { ConditionOf, ValueOf } from "../kube/conditions.js";

export const Type = {
  Approved: "Approved",
  Available: "Available",
  Installed: "Installed",
  Progressing: "Progressing",
  Replaced: "Replaced",
  Unpacked: "Unpacked",
} as const;

export const Reason = {
  Aborted: "Aborted",
  AllowAll: "AllowAll",
  ApprovalNotSigned: "ApprovalNotSigned",
  ApprovedByUser: "ApprovedByUser",
  Available: "Available",
  AwaitingApproval: "AwaitingApproval",
  BundleNotFound: "BundleNotFound",
  BundleSpecConflict: "BundleSpecConflict",
  ClassNotPermitted: "ClassNotPermitted",
  ConfigMapNotReadable: "ConfigMapNotReadable",
  ContainerNotReady: "ContainerNotReady",
  ContentMissing: "ContentMissing",
  ContentTooLarge: "ContentTooLarge",
  DeniedByUser: "DeniedByUser",
  DigestMismatch: "DigestMismatch",
  DigestRequired: "DigestRequired",
  DryRunFailed: "DryRunFailed",
  FetchFailed: "FetchFailed",
  ForbiddenAPIGroup: "ForbiddenAPIGroup",
  InstallFailed: "InstallFailed",
  InstallationSucceeded: "InstallationSucceeded",
  Installed: "Installed",
  InsufficientPermissions: "InsufficientPermissions",
  InvalidBundle: "InvalidBundle",
  InvalidConfiguration: "InvalidConfiguration",
  InvalidContent: "InvalidContent",
  InvalidRef: "InvalidRef",
  NoWorkloads: "NoWorkloads",
  ObjectCollision: "ObjectCollision",
  ObjectTooLarge: "ObjectTooLarge",
  ProgressDeadlineExceeded: "ProgressDeadlineExceeded",
  ProtectedObject: "ProtectedObject",
  PullFailed: "PullFailed",
  PullSecretInvalid: "PullSecretInvalid",
  PullSecretNotReadable: "PullSecretNotReadable",
  PullTimeout: "PullTimeout",
  Replaced: "Replaced",
  RequesterUnverified: "RequesterUnverified",
  RollingOut: "RollingOut",
  RolloutComplete: "RolloutComplete",
  UnpackFailed: "UnpackFailed",
  UnpackPending: "UnpackPending",
  UnpackSuccessful: "UnpackSuccessful",
  Unpacked: "Unpacked",
  Unpacking: "Unpacking",
  UnsafeCRDUpgrade: "UnsafeCRDUpgrade",
  Unschedulable: "Unschedulable",
  UpgradeFailed: "UpgradeFailed",
  Upgraded: "Upgraded",
  Upgrading: "Upgrading",
  UserPermission: "UserPermission",
  WorkloadsAvailable: "WorkloadsAvailable",
  WorkloadsUnavailable: "WorkloadsUnavailable",
} as const;

export type ConditionType = ValueOf<typeof Type>;
export type ConditionReason = ValueOf<typeof Reason>;
/** A condition this group writes: its type and reason are declared above. */
export type GroupCondition = ConditionOf<typeof Type, typeof Reason>;
