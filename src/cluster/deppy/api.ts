/**
 * The Deppy API on the cluster (group `deppy.io`, docs/cluster.md), each declared once as a typed schema (see
 * ../schema.ts): `Input` and `InputClass`, the constraint schema they share with the Operator API
 * (../operators/api.ts), the labels and annotations of what the resolver and the resolveset provisioner write.
 * Also the default InputClasses and the `deppy.resolveset` ProvisionerClass with their exact parameters
 * (docs/cluster.md).
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import {
  arr,
  bool,
  conditionsSchema,
  freeform,
  int,
  obj,
  str,
  type CrdDefinition,
  type Infer,
} from "../kube/schema.js";
import { API_VERSION as RUKPAK_API_VERSION, objectRefSchema, type ProvisionerClass } from "../rukpak/api.js";

export const DEPPY_GROUP = "deppy.io";
export const DEPPY_API_VERSION = `${DEPPY_GROUP}/v1`;

/** The provisioner of resolveset Bundles and Instances. */
export const RESOLVESET_PROVISIONER = "deppy.io/resolver";
/** The default class of resolveset Bundles (approval: Android). */
export const RESOLVESET_CLASS = "deppy.resolveset";

/** Labels and annotations of the objects the resolver and the resolveset provisioner write. */
export const LABEL_INPUT = "deppy.io/input";
export const LABEL_PACKAGE = "deppy.io/package";
export const LABEL_RESOLVESET = "deppy.io/resolveset";
export const LABEL_GENERATED_FOR = "deppy.io/generated-for";
export const ANNOTATION_VERSION = "deppy.io/version";
/**
 * The bundle's name in its catalog (the Bundle object may carry a suffix
 * when two catalogs ship different images under one name).
 */
export const ANNOTATION_BUNDLE = "deppy.io/bundle";
export const ANNOTATION_CATALOG = "deppy.io/catalog";
export const ANNOTATION_CHANNEL = "deppy.io/channel";
/** The properties and constraints the resolver used (declared with the Bundle API it annotates). */
export { ANNOTATION_PROPERTIES } from "../rukpak/api.js";
/** The hash of the olm.properties annotation as the provisioner wrote it: a different text was edited by a user. */
export const ANNOTATION_PROPERTIES_HASH = "deppy.io/properties-hash";
export function propertiesHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** A constraint of an Input, an InputClass or an Operator: `{type, value}`. */
export const constraintSchema = obj(
  { type: str({ minLength: 1 }), value: freeform({ description: "the constraint's value (any JSON)" }) },
  ["type"],
);
// `value` may be a string, number or object: preserve it as it is
(constraintSchema.openapi.properties!.value as Record<string, unknown>) = {
  "x-kubernetes-preserve-unknown-fields": true,
  description: "the constraint's value (any JSON)",
};
export type ConstraintSpec = { type: string; value?: unknown };

// ---------------------------------------------------------------- Input, InputClass

export const inputSpecSchema = obj(
  {
    inputClass: str({ description: "the InputClass (default subscription)" }),
    constraints: arr(constraintSchema, {
      description:
        "olm.catalog {name, namespace?, package, channel?}, " +
        "olm.packageVersion {package, version}, olm.name, olm.cel, olm.operand",
    }),
  },
  [],
);
export type InputSpec = Infer<typeof inputSpecSchema>;

const instanceRefSchema = obj({
  kind: str(),
  name: str(),
  apiVersion: str(),
  meets: arr(freeform()),
});

export const inputStatusSchema = obj({
  instances: arr(
    obj({
      name: str(),
      package: str(),
      version: str(),
      catalog: str(),
      satisfies: arr(instanceRefSchema),
      dependencies: arr(instanceRefSchema),
      conditions: conditionsSchema,
    }),
  ),
  resolveset: str({ description: "the resolveset Bundle of the last resolution" }),
  conditions: conditionsSchema,
  observedGeneration: int(),
});

export const inputCrd: CrdDefinition = {
  group: DEPPY_GROUP,
  version: "v1",
  kind: "Input",
  plural: "inputs",
  singular: "input",
  shortNames: ["in"],
  categories: ["deppy"],
  scope: "Cluster",
  description:
    "Constraints for the resolver (an installable): resolved continually into a deppy.resolveset Bundle and Instance.",
  fields: { spec: inputSpecSchema.openapi, status: inputStatusSchema.openapi },
  required: ["spec"],
  printerColumns: [
    { name: "Class", type: "string", jsonPath: ".spec.inputClass" },
    { name: "Resolved", type: "string", jsonPath: '.status.conditions[?(@.type=="Resolved")].status' },
    { name: "Resolveset", type: "string", jsonPath: ".status.resolveset" },
  ],
};

export interface InputStatusInstance {
  name: string;
  package?: string;
  version?: string;
  catalog?: string;
  satisfies?: { kind: string; name: string; apiVersion: string; meets: unknown[] }[];
  dependencies?: { kind: string; name: string; apiVersion: string; meets: unknown[] }[];
  conditions?: Condition[];
}

export interface Input extends KubeObject {
  spec: { inputClass?: string; constraints?: ConstraintSpec[] };
  status?: {
    instances?: InputStatusInstance[];
    resolveset?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  };
}

export const inputClassParametersSchema = obj({
  force: bool({ description: "install every matching entry directly; the resolver is not engaged" }),
  generateInputsForDependencies: bool({
    description: "dependencies get Inputs of their own (kept up to date independently)",
  }),
  dryRun: bool({ description: "write the resolveset Bundle but no Instance" }),
  trace: bool({ description: "the resolveset carries the resolver's trace" }),
  dependencyPreference: str({
    enum: ["newest", "minimal"],
    description: "opcat: prefer the newest (default) or the lowest satisfying dependency versions",
  }),
  constraints: arr(constraintSchema, {
    description: "added to every Input of the class (minKubeVersion, minOCPVersion, …)",
  }),
});

export const inputClassCrd: CrdDefinition = {
  group: DEPPY_GROUP,
  version: "v1",
  kind: "InputClass",
  plural: "inputclasses",
  singular: "inputclass",
  categories: ["deppy"],
  scope: "Cluster",
  description: "A configuration for Inputs (force, generateInputsForDependencies, dryRun, trace, class constraints).",
  fields: { parameters: inputClassParametersSchema.openapi },
  status: false,
  printerColumns: [
    { name: "Force", type: "boolean", jsonPath: ".parameters.force" },
    { name: "DryRun", type: "boolean", jsonPath: ".parameters.dryRun" },
  ],
};

export interface InputClass extends KubeObject {
  parameters?: {
    force?: boolean;
    generateInputsForDependencies?: boolean;
    dryRun?: boolean;
    trace?: boolean;
    dependencyPreference?: "newest" | "minimal";
    constraints?: ConstraintSpec[];
  };
}

const seedConstraints = (kube: string, ocp: string): ConstraintSpec[] => [
  { type: "minKubeVersion", value: `>= ${kube}` },
  { type: "minOCPVersion", value: `>= ${ocp}` },
];

/**
 * The default InputClasses (docs/cluster.md) with their parameters (minimal-version: see below).
 * `dry-run-next`'s constraints are the next minor release of the cluster's Kubernetes (and OpenShift)
 * version, computed by the controller; 1.21 / 4.8 (the design's) are used when the cluster's version is
 * not known.
 */
export function defaultInputClasses(next?: { kube?: string; ocp?: string }): InputClass[] {
  const mk = (name: string, p: InputClass["parameters"]): InputClass => ({
    apiVersion: DEPPY_API_VERSION,
    kind: "InputClass",
    metadata: { name },
    parameters: p,
  });
  return [
    mk("subscription", {
      force: false,
      generateInputsForDependencies: true,
      dryRun: false,
      trace: false,
      constraints: seedConstraints("1.20", "4.7"),
    }),
    mk("force", {
      force: true,
      generateInputsForDependencies: false,
      dryRun: false,
      trace: false,
      constraints: seedConstraints("1.20", "4.7"),
    }),
    // The design lists force: true here, but its user stories for minimal-version install the
    // operator's dependencies and update them only when the operator needs newer ones, which needs
    // the resolver: opcat resolves with the minimal dependency preference (docs/cluster.md).
    mk("minimal-version", {
      force: false,
      generateInputsForDependencies: false,
      dryRun: false,
      trace: false,
      dependencyPreference: "minimal",
      constraints: seedConstraints("1.20", "4.7"),
    }),
    mk("dry-run", {
      force: false,
      generateInputsForDependencies: false,
      dryRun: true,
      trace: false,
      constraints: seedConstraints("1.20", "4.7"),
    }),
    mk("dry-run-next", {
      force: false,
      generateInputsForDependencies: false,
      dryRun: true,
      trace: false,
      constraints: seedConstraints(next?.kube ?? "1.21", next?.ocp ?? "4.8"),
    }),
  ];
}

/**
 * The default resolveset ProvisionerClass (docs/cluster.md: approval
 * Android; olm.bundle entries become olm.bundle Bundles).
 */
export function resolvesetProvisionerClass(): ProvisionerClass {
  return {
    apiVersion: RUKPAK_API_VERSION,
    kind: "ProvisionerClass",
    metadata: { name: RESOLVESET_CLASS },
    provisioner: RESOLVESET_PROVISIONER,
    parameters: {
      approval: "Android",
      matchBundle: [{ selector: ".schema == olm.bundle", class: "olm.bundle" }],
      matchSchema: [{ schema: "olm.bundle", class: "olm.bundle" }],
    },
  };
}

export { objectRefSchema };
