/**
 * operator-controller's `ClusterExtension` (`olm.operatorframework.io/v1`, cluster-scoped) as
 * operator-controller v1.11 serves it: the same fields, validations (CEL rules included), defaults
 * and printer columns as its experimental CRD, so that existing YAML applies unchanged, and its field
 * descriptions (descriptions.ts) so that `kubectl explain` reads the same. Declared once as a typed
 * schema (../schema.ts), from which the CRD and the TypeScript types come.
 * `scripts/oracle/olmv1-api/gen.ts --check` compares the CRD with upstream's.
 */
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { arr, enumOf, int, obj, str, type CrdDefinition, type Infer, type Schema } from "../kube/schema.js";
import { deploymentConfigSchema } from "../rukpak/render/config.js";
import { clusterExtensionDescriptions } from "../upstream/descriptions.js";
import { describedCrd, upstreamConditionsSchema, upstreamLabelSelectorSchema } from "../upstream/schema.js";

export const OLM_GROUP = "olm.operatorframework.io";
export const OLM_API_VERSION = `${OLM_GROUP}/v1`;

/** Labels operator-controller puts on every object it installs (and opcat too). */
export const LABEL_OWNER_KIND = "olm.operatorframework.io/owner-kind";
export const LABEL_OWNER_NAME = "olm.operatorframework.io/owner-name";

const DNS1123_SUBDOMAIN =
  String.raw`self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?` + String.raw`(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")`;
const DNS1123_SUBDOMAIN_MESSAGE =
  "must be a valid DNS1123 subdomain. It must contain only lowercase alphanumeric characters, hyphens (-) " +
  "or periods (.), start and end with an alphanumeric character, and be no longer than 253 characters";

/** Upstream's rule for `version` (a Masterminds range), as its CRD has it (quirks included). */
const VERSION_PART =
  String.raw`(v?(0|[1-9]\\d*|[x|X|\\*])(\\.(0|[1-9]\\d*|x|X|\\*]))?(\\.(0|[1-9]\\d*|x|X|\\*))?` +
  String.raw`(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?)`;
const VERSION_PART_2 =
  String.raw`(v?(0|[1-9]\\d*|x|X|\\*])(\\.(0|[1-9]\\d*|x|X|\\*))?(\\.(0|[1-9]\\d*|x|X|\\*]))?` +
  String.raw`(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?)`;
const OPS = String.raw`(=||!=|>|<|>=|=>|<=|=<|~|~>|\\^)`;
export const VERSION_RULE =
  String.raw`self.matches("^(\\s*` +
  OPS +
  String.raw`\\s*` +
  VERSION_PART +
  String.raw`\\s*)((?:\\s+|,\\s*|\\s*\\|\\|\\s*)` +
  OPS +
  String.raw`\\s*` +
  VERSION_PART_2 +
  String.raw`\\s*)*$")`;

const BUNDLE_VERSION_RULE =
  String.raw`self.matches("^([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([-0-9A-Za-z]+(\\.[-0-9A-Za-z]+)*))?` +
  String.raw`(\\+([-0-9A-Za-z]+(-\\.[-0-9A-Za-z]+)*))?")`;
const RELEASE_RULE =
  String.raw`self.matches("^$|^(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)` +
  String.raw`(\\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*$")`;

export const upgradeConstraintPolicies = ["CatalogProvided", "SelfCertified"] as const;
export type UpgradeConstraintPolicy = (typeof upgradeConstraintPolicies)[number];

export const catalogFilterSchema = obj(
  {
    channels: arr(
      str({
        maxLength: 253,
        "x-kubernetes-validations": [
          { message: "channels entries must be valid DNS1123 subdomains", rule: DNS1123_SUBDOMAIN },
        ],
      }),
      { maxItems: 256 },
    ),
    packageName: str({
      maxLength: 253,
      "x-kubernetes-validations": [
        { message: "packageName is immutable", rule: "self == oldSelf" },
        { message: `packageName ${DNS1123_SUBDOMAIN_MESSAGE}`, rule: DNS1123_SUBDOMAIN },
      ],
    }),
    selector: upstreamLabelSelectorSchema,
    upgradeConstraintPolicy: enumOf(upgradeConstraintPolicies, { default: "CatalogProvided" }),
    version: str({
      maxLength: 64,
      "x-kubernetes-validations": [{ message: "invalid version expression", rule: VERSION_RULE }],
    }),
  },
  ["packageName"],
);

/**
 * A schema whose unknown fields the API server keeps (not prunes): the controller then reports them as
 * upstream does (`unknown field "selector"`), where pruning would drop them silently.
 */
function keepingUnknownFields<T>(s: Schema<T>): Schema<T> {
  return { openapi: { ...s.openapi, "x-kubernetes-preserve-unknown-fields": true } };
}

/**
 * `inline`: any JSON object with at least one property, as upstream's; opcat types its `deploymentConfig`
 * (upstream's registry+v1 bundle configuration schema, ../rukpak/render/config.ts) so that the API
 * server refuses a wrongly typed one at once.
 */
const inlineConfig = obj({ deploymentConfig: keepingUnknownFields(deploymentConfigSchema) }, [], {
  minProperties: 1,
  "x-kubernetes-preserve-unknown-fields": true,
});

export const clusterExtensionSpecSchema = obj(
  {
    config: obj({ configType: enumOf(["Inline"] as const), inline: inlineConfig }, ["configType"], {
      "x-kubernetes-validations": [
        {
          message: "inline is required when configType is Inline, and forbidden otherwise",
          rule: "has(self.configType) && self.configType == 'Inline' ?has(self.inline) : !has(self.inline)",
        },
      ],
    }),
    install: obj(
      {
        preflight: obj(
          {
            crdUpgradeSafety: obj({ enforcement: enumOf(["None", "Strict"] as const) }, ["enforcement"]),
          },
          ["crdUpgradeSafety"],
          {
            "x-kubernetes-validations": [
              {
                message: "at least one of [crdUpgradeSafety] are required when preflight is specified",
                rule: "has(self.crdUpgradeSafety)",
              },
            ],
          },
        ),
      },
      [],
      {
        "x-kubernetes-validations": [
          {
            message: "at least one of [preflight] are required when install is specified",
            rule: "has(self.preflight)",
          },
        ],
      },
    ),
    namespace: str({
      maxLength: 63,
      "x-kubernetes-validations": [
        { message: "namespace is immutable", rule: "self == oldSelf" },
        { message: "namespace must be a valid DNS1123 label", rule: 'self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")' },
      ],
    }),
    progressDeadlineMinutes: int({ format: "int32", maximum: 720, minimum: 10 }),
    serviceAccount: obj(
      {
        name: str({
          maxLength: 253,
          minLength: 1,
          "x-kubernetes-validations": [
            { message: "name is immutable once set but may be cleared", rule: "self == oldSelf" },
            { message: `name ${DNS1123_SUBDOMAIN_MESSAGE}`, rule: DNS1123_SUBDOMAIN },
          ],
        }),
      },
      [],
      { minProperties: 1 },
    ),
    source: obj({ catalog: catalogFilterSchema, sourceType: enumOf(["Catalog"] as const) }, ["sourceType"], {
      "x-kubernetes-validations": [
        {
          message: "catalog is required when sourceType is Catalog, and forbidden otherwise",
          rule: "has(self.sourceType) && self.sourceType == 'Catalog' ? has(self.catalog) : !has(self.catalog)",
        },
      ],
    }),
  },
  ["namespace", "source"],
);
export type ClusterExtensionSpec = Infer<typeof clusterExtensionSpecSchema>;

export const bundleMetadataSchema = obj(
  {
    name: str({
      "x-kubernetes-validations": [{ message: `packageName ${DNS1123_SUBDOMAIN_MESSAGE}`, rule: DNS1123_SUBDOMAIN }],
    }),
    release: str({
      maxLength: 20,
      "x-kubernetes-validations": [
        {
          message:
            "release must be empty or consist of dot-separated identifiers " +
            "(numeric without leading zeros, or alphanumeric)",
          rule: RELEASE_RULE,
        },
      ],
    }),
    version: str({
      "x-kubernetes-validations": [{ message: "version must be well-formed semver", rule: BUNDLE_VERSION_RULE }],
    }),
  },
  ["name", "version"],
);
export type BundleMetadata = Infer<typeof bundleMetadataSchema>;

export const clusterExtensionStatusSchema = obj({
  activeRevisions: arr(obj({ conditions: upstreamConditionsSchema, name: str() }, ["name"]), {
    "x-kubernetes-list-map-keys": ["name"],
    "x-kubernetes-list-type": "map",
  }),
  conditions: upstreamConditionsSchema,
  install: obj({ bundle: bundleMetadataSchema }, ["bundle"]),
});

export const clusterExtensionCrd: CrdDefinition = {
  group: OLM_GROUP,
  version: "v1",
  kind: "ClusterExtension",
  plural: "clusterextensions",
  singular: "clusterextension",
  scope: "Cluster",
  description: clusterExtensionDescriptions[""] ?? "",
  fields: { spec: clusterExtensionSpecSchema.openapi, status: clusterExtensionStatusSchema.openapi },
  printerColumns: [
    { name: "Installed Bundle", type: "string", jsonPath: ".status.install.bundle.name" },
    { name: "Version", type: "string", jsonPath: ".status.install.bundle.version" },
    { name: "Installed", type: "string", jsonPath: ".status.conditions[?(@.type=='Installed')].status" },
    { name: "Progressing", type: "string", jsonPath: ".status.conditions[?(@.type=='Progressing')].status" },
  ],
};

/** The CRDs of operator-controller's API that opcat adds (ClusterCatalog lives in ../catalogd/api.ts). */
export function olmCrdObjects(): KubeObject[] {
  return [describedCrd(clusterExtensionCrd, clusterExtensionDescriptions)];
}

/**
 * operator-controller's admission policy: a ClusterExtension naming a service account is accepted
 * with a warning (the field is deprecated and ignored).
 */
export function olmAdmissionPolicies(): KubeObject[] {
  const name = "clusterextension-serviceaccount-deprecated";
  const labels = { "app.kubernetes.io/part-of": "opcat" };
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name, labels },
      spec: {
        failurePolicy: "Ignore",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [OLM_GROUP],
              apiVersions: ["v1"],
              operations: ["CREATE", "UPDATE"],
              resources: ["clusterextensions"],
            },
          ],
        },
        validations: [
          {
            expression:
              "!has(object.spec.serviceAccount) || !has(object.spec.serviceAccount.name) || " +
              "object.spec.serviceAccount.name == ''",
            message:
              "spec.serviceAccount is deprecated, ignored, and will be removed in a future release. " +
              "The operator-controller's cluster-admin service account is used for all cluster interactions.",
          },
        ],
      },
    } as KubeObject,
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name, labels },
      spec: { policyName: name, validationActions: ["Warn"] },
    } as KubeObject,
  ];
}

export interface ClusterExtensionStatus {
  conditions?: Condition[];
  install?: { bundle: BundleMetadata };
  activeRevisions?: { name: string; conditions?: Condition[] }[];
}

export interface ClusterExtension extends KubeObject {
  spec: ClusterExtensionSpec;
  status?: ClusterExtensionStatus;
}
