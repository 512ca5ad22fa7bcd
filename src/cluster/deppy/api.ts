/**
 * The Deppy and Operator APIs on the cluster (docs/cluster.md), each declared once as a typed schema (see
 * ../schema.ts): `ClusterCatalog` (catalogd's cluster-scoped catalog, the design's open "CatalogSource
 * … cluster scoped?"), `Input` and `InputClass` (group `deppy.io`), and the porcelain `Operator`
 * (`operators.coreos.com/v1`). Also the default InputClasses and the `deppy.resolveset`
 * ProvisionerClass with their exact parameters (docs/cluster.md).
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "../client.js";
import type { Condition } from "../conditions.js";
import {
  arr,
  bool,
  conditionsSchema,
  crdObject,
  freeform,
  enumOf,
  int,
  obj,
  str,
  type CrdDefinition,
  type Infer,
} from "../schema.js";
import { describedCrd, upstreamConditionsSchema } from "../olm/api.js";
import { clusterCatalogDescriptions } from "../olm/descriptions.js";
import {
  API_VERSION as RUKPAK_API_VERSION,
  bundleSpecSchema,
  objectRefSchema,
  type ProvisionerClass,
} from "../rukpak/api.js";

export const DEPPY_GROUP = "deppy.io";
export const DEPPY_API_VERSION = `${DEPPY_GROUP}/v1`;
export const CATALOG_GROUP = "olm.operatorframework.io";
export const CATALOG_API_VERSION = `${CATALOG_GROUP}/v1`;
export const OPERATOR_GROUP = "operators.coreos.com";
export const OPERATOR_API_VERSION = `${OPERATOR_GROUP}/v1`;

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
/** The properties and constraints the resolver used, one `{"<type>": <value>}` per line; editable. */
export const ANNOTATION_PROPERTIES = "olm.properties";
/** The hash of the olm.properties annotation as the provisioner wrote it: a different text was edited by a user. */
export const ANNOTATION_PROPERTIES_HASH = "deppy.io/properties-hash";
export function propertiesHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
/** The Operator that owns an object: `operators.coreos.com/<operator name>: ""`. */
export const operatorLabel = (name: string): string => `operators.coreos.com/${name}`;

const constraintSchema = obj(
  { type: str({ minLength: 1 }), value: freeform({ description: "the constraint's value (any JSON)" }) },
  ["type"],
);
// `value` may be a string, number or object: preserve it as it is
(constraintSchema.openapi.properties!.value as Record<string, unknown>) = {
  "x-kubernetes-preserve-unknown-fields": true,
  description: "the constraint's value (any JSON)",
};
export type ConstraintSpec = { type: string; value?: unknown };

// ---------------------------------------------------------------- ClusterCatalog

// catalogd's CEL rules (operator-controller v1.11), exactly as its CRD has them
const IMAGE_REF_RULES = [
  {
    message:
      "must start with a valid domain. valid domains must be alphanumeric characters (l" +
      'owercase and uppercase) separated by the "." character.',
    rule:
      "self.matches('^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])((\\\\.([a-zA-Z0-9" +
      "]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(:[0-9]+)?\\\\b')",
  },
  {
    message:
      "a valid name is required. valid names must contain lowercase alphanumeric charac" +
      'ters separated only by the ".", "_", "__", "-" characters.',
    rule:
      "self.find('(\\\\/[a-z0-9]+((([._]|__|[-]*)[a-z0-9]+)+)?((\\\\/[a-z0-9]+((([._]|__|[-" +
      ']*)[a-z0-9]+)+)?)+)?)\') != ""',
  },
  {
    message: "must end with a digest or a tag",
    rule: "self.find('(@.*:)') != \"\" || self.find(':.*$') != \"\"",
  },
  {
    message: "tag is invalid. the tag must not be more than 127 characters",
    rule:
      "self.find('(@.*:)') == \"\" ? (self.find(':.*$') != \"\" ? self.find(':.*$').substri" +
      "ng(1).size() <= 127 : true) : true",
  },
  {
    message:
      'tag is invalid. valid tags must begin with a word character (alphanumeric + "_")' +
      ' followed by word characters or ".", and "-" characters',
    rule:
      "self.find('(@.*:)') == \"\" ? (self.find(':.*$') != \"\" ? self.find(':.*$').matches" +
      "(':[\\\\w][\\\\w.-]*$') : true) : true",
  },
  {
    message:
      "digest algorithm is not valid. valid algorithms must start with an uppercase or " +
      "lowercase alpha character followed by alphanumeric characters and may contain th" +
      'e "-", "_", "+", and "." characters.',
    rule:
      "self.find('(@.*:)') != \"\" ? self.find('(@.*:)').matches('(@[A-Za-z][A-Za-z0-9]*(" +
      "[-_+.][A-Za-z][A-Za-z0-9]*)*[:])') : true",
  },
  {
    message: "digest is not valid. the encoded string must be at least 32 characters",
    rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').substring(1).size() >= 32 : true",
  },
  {
    message: "digest is not valid. the encoded string must only contain hex characters (A-F, a-f, 0-9)",
    rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').matches(':[0-9A-Fa-f]*$') : true",
  },
];

const IMAGE_RULES = [
  {
    message: "cannot specify pollIntervalMinutes while using digest-based image",
    rule: "self.ref.find('(@.*:)') != \"\" ? !has(self.pollIntervalMinutes) : true",
  },
];

const SOURCE_RULES = [
  {
    message: "image is required when source type is Image, and forbidden otherwise",
    rule: "has(self.type) && self.type == 'Image' ? has(self.image) : !has(self.image)",
  },
];

const RESOLVED_REF_RULES = [
  {
    message:
      "must start with a valid domain. valid domains must be alphanumeric characters (l" +
      'owercase and uppercase) separated by the "." character.',
    rule:
      "self.matches('^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])((\\\\.([a-zA-Z0-9" +
      "]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(:[0-9]+)?\\\\b')",
  },
  {
    message:
      "a valid name is required. valid names must contain lowercase alphanumeric charac" +
      'ters separated only by the ".", "_", "__", "-" characters.',
    rule:
      "self.find('(\\\\/[a-z0-9]+((([._]|__|[-]*)[a-z0-9]+)+)?((\\\\/[a-z0-9]+((([._]|__|[-" +
      ']*)[a-z0-9]+)+)?)+)?)\') != ""',
  },
  {
    message: "must end with a digest",
    rule: "self.find('(@.*:)') != \"\"",
  },
  {
    message:
      "digest algorithm is not valid. valid algorithms must start with an uppercase or " +
      "lowercase alpha character followed by alphanumeric characters and may contain th" +
      'e "-", "_", "+", and "." characters.',
    rule:
      "self.find('(@.*:)') != \"\" ? self.find('(@.*:)').matches('(@[A-Za-z][A-Za-z0-9]*(" +
      "[-_+.][A-Za-z][A-Za-z0-9]*)*[:])') : true",
  },
  {
    message: "digest is not valid. the encoded string must be at least 32 characters",
    rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').substring(1).size() >= 32 : true",
  },
  {
    message: "digest is not valid. the encoded string must only contain hex characters (A-F, a-f, 0-9)",
    rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').matches(':[0-9A-Fa-f]*$') : true",
  },
];

const RESOLVED_RULES = [
  {
    message: "image is required when source type is Image, and forbidden otherwise",
    rule: "has(self.type) && self.type == 'Image' ? has(self.image) : !has(self.image)",
  },
];

const URL_RULES = [
  {
    message: "must be a valid URL",
    rule: "isURL(self)",
  },
  {
    message: "scheme must be either http or https",
    rule: 'isURL(self) ? (url(self).getScheme() == "http" || url(self).getScheme() == "http' + 's") : true',
  },
];

export const clusterCatalogSpecSchema = obj(
  {
    availabilityMode: enumOf(["Unavailable", "Available"] as const, { default: "Available" }),
    priority: int({ default: 0, format: "int32", maximum: 2147483647, minimum: -2147483648 }),
    source: obj(
      {
        image: obj(
          {
            pollIntervalMinutes: int({ minimum: 1 }),
            ref: str({ maxLength: 1000, "x-kubernetes-validations": IMAGE_REF_RULES }),
          },
          ["ref"],
          { "x-kubernetes-validations": IMAGE_RULES },
        ),
        type: enumOf(["Image"] as const),
      },
      ["type"],
      { "x-kubernetes-validations": SOURCE_RULES },
    ),
  },
  ["source"],
);
export type ClusterCatalogSpec = Infer<typeof clusterCatalogSpecSchema>;

export const clusterCatalogStatusSchema = obj({
  conditions: upstreamConditionsSchema,
  lastUnpacked: str({ format: "date-time" }),
  resolvedSource: obj(
    {
      image: obj({ ref: str({ maxLength: 1000, "x-kubernetes-validations": RESOLVED_REF_RULES }) }, ["ref"]),
      type: enumOf(["Image"] as const),
    },
    ["image", "type"],
    { "x-kubernetes-validations": RESOLVED_RULES },
  ),
  urls: obj({ base: str({ maxLength: 525, "x-kubernetes-validations": URL_RULES }) }, ["base"]),
  // opcat's own (upstream has none): written with every status, so that an unchanged status is not rewritten
  observedGeneration: int(),
});

export const clusterCatalogCrd: CrdDefinition = {
  group: CATALOG_GROUP,
  version: "v1",
  kind: "ClusterCatalog",
  plural: "clustercatalogs",
  singular: "clustercatalog",
  shortNames: ["clustercat"],
  categories: ["olm"],
  scope: "Cluster",
  description: clusterCatalogDescriptions[""] ?? "",
  fields: { spec: clusterCatalogSpecSchema.openapi, status: clusterCatalogStatusSchema.openapi },
  required: ["metadata", "spec"],
  // catalogd's columns; opcat's own only with -o wide
  printerColumns: [
    { name: "LastUnpacked", type: "date", jsonPath: ".status.lastUnpacked" },
    { name: "Serving", type: "string", jsonPath: '.status.conditions[?(@.type=="Serving")].status' },
    { name: "Image", type: "string", jsonPath: ".spec.source.image.ref", priority: 1 },
    { name: "Priority", type: "integer", jsonPath: ".spec.priority", priority: 1 },
    { name: "Digest", type: "string", jsonPath: ".status.resolvedSource.image.ref", priority: 1 },
  ],
};

export interface ClusterCatalog extends KubeObject {
  spec: ClusterCatalogSpec;
  status?: {
    resolvedSource?: { type?: string; image?: { ref?: string } };
    urls?: { base?: string };
    lastUnpacked?: string;
    conditions?: Condition[];
    observedGeneration?: number;
  };
}

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

// ---------------------------------------------------------------- Operator

export const operatorSpecSchema = obj({
  inputClass: str({ description: "the InputClass of the generated Input (default subscription)" }),
  catalog: obj(
    {
      name: str({ description: "a ClusterCatalog (empty: every catalog)" }),
      namespace: str(),
      package: str({ minLength: 1 }),
      channel: str(),
    },
    ["package"],
    { description: "becomes an olm.catalog constraint" },
  ),
  version: str({
    description: 'an exact version or a range (">2.0.0 <3.0.0"); becomes an olm.packageVersion constraint',
  }),
  constraints: arr(constraintSchema, { description: "more constraints for the Input" }),
  bundle: obj({ name: str({ minLength: 1 }), spec: bundleSpecSchema }, ["name", "spec"], {
    description: "install this bundle directly (no catalog, no resolver)",
  }),
  installNamespace: str({
    description: "namespace for the operator's objects (default: the CSV's suggested namespace, else <package>-system)",
  }),
});
export type OperatorSpec = Infer<typeof operatorSpecSchema>;

const componentRefSchema = obj({
  kind: str(),
  name: str(),
  namespace: str(),
  apiVersion: str(),
  conditions: arr(obj({ type: str(), status: str(), reason: str(), message: str(), lastTransitionTime: str() })),
});

export const operatorStatusSchema = obj({
  updates: arr(
    obj({
      options: arr(str()),
      catalogSourceRef: obj({ name: str(), namespace: str() }),
      package: str(),
      channel: str(),
    }),
  ),
  installedBundle: str(),
  installedVersion: str(),
  conditions: conditionsSchema,
  components: obj({
    matchLabels: { openapi: { type: "object", additionalProperties: { type: "string" } } },
    refs: arr(componentRefSchema),
  }),
  observedGeneration: int(),
});

export const operatorCrd: CrdDefinition = {
  group: OPERATOR_GROUP,
  version: "v1",
  kind: "Operator",
  plural: "operators",
  singular: "operator",
  categories: ["olm"],
  scope: "Cluster",
  description:
    "Install an operator from a catalog (through an Input) or " +
    "directly from a bundle, and see its components and updates.",
  fields: { spec: operatorSpecSchema.openapi, status: operatorStatusSchema.openapi },
  required: ["spec"],
  printerColumns: [
    { name: "Package", type: "string", jsonPath: ".spec.catalog.package" },
    { name: "Installed", type: "string", jsonPath: ".status.installedVersion" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Installed")].status' },
    { name: "Update", type: "string", jsonPath: '.status.conditions[?(@.type=="UpdateAvailable")].status' },
  ],
};

export interface ComponentRef {
  kind: string;
  name: string;
  namespace?: string;
  apiVersion: string;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
}

export interface OperatorUpdate {
  options: string[];
  catalogSourceRef: { name: string; namespace?: string };
  package: string;
  channel: string;
}

export interface Operator extends KubeObject {
  spec: OperatorSpec;
  status?: {
    updates?: OperatorUpdate[];
    installedBundle?: string;
    installedVersion?: string;
    conditions?: Condition[];
    components?: { matchLabels?: Record<string, string>; refs?: ComponentRef[] };
    observedGeneration?: number;
  };
}

export const deppyCrds = [clusterCatalogCrd, inputCrd, inputClassCrd, operatorCrd];

export function deppyCrdObjects(): KubeObject[] {
  return deppyCrds.map((d) =>
    d === clusterCatalogCrd ? describedCrd(d, clusterCatalogDescriptions) : (crdObject(d) as unknown as KubeObject),
  );
}

export { objectRefSchema };
