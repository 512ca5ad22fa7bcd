/**
 * catalogd's API on the cluster (docs/cluster.md), declared once as a typed schema (see ../schema.ts):
 * `ClusterCatalog` (group `olm.operatorframework.io`), catalogd's cluster-scoped catalog, the design's open
 * "CatalogSource … cluster scoped?". Its controller and catalogd's HTTP serving are in catalogs.ts.
 */
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { enumOf, int, obj, str, type CrdDefinition, type Infer } from "../kube/schema.js";
import { clusterCatalogDescriptions } from "../upstream/descriptions.js";
import { describedCrd, upstreamConditionsSchema } from "../upstream/schema.js";

export const CATALOG_GROUP = "olm.operatorframework.io";
export const CATALOG_API_VERSION = `${CATALOG_GROUP}/v1`;

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

/** The ClusterCatalog CRD with catalogd's descriptions. */
export function clusterCatalogCrdObject(): KubeObject {
  return describedCrd(clusterCatalogCrd, clusterCatalogDescriptions);
}
