/**
 * The porcelain `Operator` API on the cluster (`operators.coreos.com/v1`, docs/cluster.md), declared once as
 * a typed schema (see ../schema.ts). Its controller is in operator.ts: it installs through a deppy.io Input
 * (../deppy/api.ts) or directly from a bundle.
 */
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { arr, conditionsSchema, int, obj, str, type CrdDefinition, type Infer } from "../kube/schema.js";
import { bundleSpecSchema } from "../rukpak/api.js";
import { constraintSchema } from "../deppy/api.js";

export const OPERATOR_GROUP = "operators.coreos.com";
export const OPERATOR_API_VERSION = `${OPERATOR_GROUP}/v1`;

/** The Operator that owns an object: `operators.coreos.com/<operator name>: ""`. */
export const operatorLabel = (name: string): string => `operators.coreos.com/${name}`;

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
