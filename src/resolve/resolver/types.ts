/**
 * The resolver's public types: the request ({@link ResolveRequest}) and the answer, a resolveset
 * ({@link ResolveSet}: bundles, operand entries, per-Input and per-installed-operator status).
 */
import type { JsonValue } from "../../fbc/types.js";
import type { CatalogSet } from "../catalog.js";
import type { ClusterDescription, Input, InputClass, InstalledOperator } from "../inputs.js";
import type { OperandEntry, OperandImage } from "../operands.js";

export interface ResolveRequest {
  catalogs: CatalogSet;
  inputs: readonly Input[];
  /** User-defined InputClasses (they override defaults of the same name). */
  classes?: readonly InputClass[];
  installed?: readonly InstalledOperator[];
  cluster?: ClusterDescription;
  /** Record the search trace for every Input (as if every class had `trace: true`). */
  trace?: boolean;
}

export interface Condition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
}

/** Another instance this one depends on or satisfies, and the constraints it meets. */
export interface InstanceReference {
  kind: "Instance";
  name: string;
  meets: JsonValue[];
}

export interface InstanceStatus {
  name: string;
  package: string;
  version: string;
  catalog: string;
  satisfies: InstanceReference[];
  dependencies: InstanceReference[];
  /** Operand / related-image entries installed for this instance (docs/operands.md); absent when none. */
  operands?: OperandInstanceReference[];
  conditions: Condition[];
}

/** An operand or related-image entry an instance uses, and the constraints it meets. */
export interface OperandInstanceReference {
  schema: OperandEntry["schema"];
  name: string;
  version: string;
  catalog: string;
  meets: JsonValue[];
}

/**
 * An operand (`olm.operand`) or related-image (`olm.relatedimages`) entry of the resolveset
 * (docs/operands.md): installed beside the bundles that need it, with its images.
 */
export interface ResolvedOperand {
  schema: OperandEntry["schema"];
  name: string;
  version: string;
  /** The package the entry is scoped to ("" = any). */
  package: string;
  catalog: string;
  images: OperandImage[];
  /** Inputs that asked for it (an `olm.operand` input constraint). */
  requestedBy: string[];
  /** Bundles of the resolveset that require it (`olm.operand.required`, `olm.relatedImageBundle`). */
  requiredBy: string[];
  /** Bundles of the resolveset that manage it (`olm.operand.supported` covers it); operands only. */
  managedBy: string[];
  dryRun: boolean;
}

export interface InputStatus {
  name: string;
  inputClass: string;
  dryRun: boolean;
  instances: InstanceStatus[];
  conditions: Condition[];
}

/** A bundle of the resolveset. */
export interface ResolvedBundle {
  schema: "olm.bundle";
  name: string;
  package: string;
  version: string;
  image: string;
  catalog: string;
  channel: string;
  /** `install`, `upgrade` (from `pivotFrom`), `unchanged` (installed, stays) or `force` (force class). */
  action: "install" | "upgrade" | "unchanged" | "force";
  pivotFrom?: string;
  /** Inputs that asked for it. */
  requestedBy: string[];
  /** Bundles of the resolveset that depend on it. */
  dependencyOf: string[];
  dryRun: boolean;
  relatedImages: { name: string; image: string }[];
  properties: { type: string; value: JsonValue }[];
}

export interface UpdateOptions {
  catalog: string;
  package: string;
  channel: string;
  options: string[];
}

export interface InstalledStatus {
  package: string;
  bundle: string;
  version: string;
  updates: UpdateOptions[];
  conditions: Condition[];
}

/** The answer: the resolveset (docs/cluster.md) with per-Input status. */
export interface ResolveSet {
  apiVersion: "deppy.io/v1";
  kind: "ResolveSet";
  /** True when every Input resolved. */
  resolved: boolean;
  /** True when every Input is a dry run (no Instance would be created). */
  dryRun: boolean;
  bundles: ResolvedBundle[];
  /** Operand and related-image entries chosen (docs/operands.md), by schema, name and version. */
  operands: ResolvedOperand[];
  inputs: InputStatus[];
  /** Inputs for dependencies, for classes with `generateInputsForDependencies`. */
  generatedInputs: Input[];
  installed: InstalledStatus[];
  warnings: string[];
  trace?: string[];
}
