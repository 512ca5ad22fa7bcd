/**
 * The RukPak APIs (docs/cluster.md; group `rukpak.io`, version v1): ProvisionerClass, Bundle and
 * Instance, each declared once as a typed schema (see ../schema.ts) from which both the CRD and the
 * TypeScript types come.
 */
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import type { ApprovalRecord } from "./trust.js";
import {
  arr,
  conditionsSchema,
  crdObject,
  enumOf,
  freeform,
  int,
  labelSelectorSchema,
  obj,
  str,
  type CrdDefinition,
  type Infer,
} from "../kube/schema.js";

export const GROUP = "rukpak.io";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Provisioner ids. */
export const OPERATOR_PROVISIONER = "operators.coreos.com/operators";
export const PLAIN_PROVISIONER = "rukpak.io/plain";

/** Labels and annotations opcat's provisioners write. */
export const LABEL_INSTANCE = "rukpak.io/instance";
export const LABEL_BUNDLE = "rukpak.io/bundle";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
/**
 * A Bundle's resolution properties and constraints, one `{"<type>": <value>}` per line: written by
 * Deppy's resolveset provisioner, read by its resolver, editable by users (the one change of a
 * controller-made Bundle the webhook allows).
 */
export const ANNOTATION_PROPERTIES = "olm.properties";
export const MANAGED_BY = "opcat";
/**
 * The identity of the user who created or last changed the spec of a
 * Bundle/Instance (JSON {username, groups}); written by the admission webhook only.
 */
export const ANNOTATION_REQUESTER = "rukpak.io/requester";
/** On Bundles: the provisioner removes the unpacked content from its store before the Bundle goes. */
export const FINALIZER_CONTENT = "rukpak.io/delete-cached-content";

const dnsLabel = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

export const provisionerClassFields = {
  provisioner: str({
    description: "the unique id of the provisioner that acts on objects naming this class",
    minLength: 1,
  }),
  parameters: freeform({
    description: "provisioner-specific settings, e.g. approval: AllowAll | DenyAll | UserPermission",
  }),
};

export const volumeMountSchema = obj(
  {
    mountPath: str({
      description:
        "where the ConfigMap's keys appear as files; file://<path> refs are read relative to the mount paths",
      pattern: "^/",
    }),
    configMap: obj({ name: str({ minLength: 1 }), namespace: str({ minLength: 1 }) }, ["name", "namespace"]),
  },
  ["mountPath", "configMap"],
);

export const bundleSpecSchema = obj(
  {
    class: str({
      description: "the ProvisionerClass that unpacks this bundle",
      minLength: 1,
      pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
    }),
    refs: arr(str({ pattern: "^(docker://|file://|https://).+" }), {
      minItems: 1,
      description:
        "where the content is: docker://<image> (pulled by the provisioner), " +
        "file://<path> (from volumeMounts), https://<url> (a .tar.gz; needs a digest)",
    }),
    volumeMounts: arr(volumeMountSchema),
    pullSecrets: arr(obj({ name: str(), namespace: str() }, ["name", "namespace"]), {
      description: "docker config Secrets for private registries",
    }),
    digest: str({
      description: "sha256:<hex> of an https:// tarball (required for https refs)",
      pattern: "^sha256:[a-f0-9]{64}$",
    }),
  },
  ["class", "refs"],
);
export type BundleSpec = Infer<typeof bundleSpecSchema>;

export const unpackedStates = ["NotStarted", "InProgress", "Done", "Failed"] as const;
export type UnpackedState = (typeof unpackedStates)[number];

export const objectRefSchema = obj({ apiVersion: str(), kind: str(), name: str(), namespace: str() }, [
  "apiVersion",
  "kind",
  "name",
]);
export type ObjectRef = Infer<typeof objectRefSchema>;

export const bundleStatusSchema = obj({
  unpacked: enumOf(unpackedStates),
  reason: str(),
  message: str(),
  digest: str({ description: "content digest of the unpacked bundle (sha256 of its objects)" }),
  resolvedRefs: arr(str(), { description: "refs pinned to what was unpacked (image digests)" }),
  format: str({ description: "registry+v1 or plain" }),
  objects: arr(str(), { description: "the unpacked objects, as /objects/<kind>/<namespace>/<name>" }),
  conditions: conditionsSchema,
  observedGeneration: int(),
});

export const instanceSpecSchema = obj(
  {
    selector: labelSelectorSchema,
    bundle: obj(
      {
        name: str({ minLength: 1 }),
        spec: bundleSpecSchema,
      },
      ["name"],
    ),
    installNamespace: str({
      pattern: dnsLabel,
      maxLength: 63,
      description: "namespace for the operator (default: the CSV's suggested namespace, else <package>-system)",
    }),
    watchNamespaces: arr(str(), { description: 'target namespaces ([] or [""]: all namespaces)' }),
    config: freeform({
      description:
        "operator-controller's registry+v1 bundle configuration (a ClusterExtension's config.inline: " +
        "watchNamespace, deploymentConfig), checked against the bundle's install modes by upstream's rules; " +
        "set, it replaces watchNamespaces",
    }),
    crdUpgradeSafety: enumOf(["Strict", "None"] as const, {
      description: "Strict (default): unsafe CRD changes are refused; None: the check is skipped (data may be lost)",
    }),
  },
  ["bundle"],
);
export type InstanceSpec = Infer<typeof instanceSpecSchema>;

export const instanceStatusSchema = obj({
  activeBundle: str(),
  permissions: arr(str(), {
    description: "permissions the pending change would add (resolveset Instances with approval: Android)",
  }),
  installNamespace: str(),
  objects: arr(objectRefSchema),
  contentDigest: str({ description: "the content digest an approval of the current generation must name" }),
  approval: obj(
    {
      decision: enumOf(["Approved", "Denied"] as const),
      reason: str(),
      by: str(),
      generation: int(),
      bundle: obj({ name: str(), uid: str(), generation: int() }, ["name", "uid", "generation"]),
      digest: str(),
      signature: str(),
    },
    ["decision", "generation", "bundle", "digest"],
  ),
  conditions: conditionsSchema,
  observedGeneration: int(),
});

export const provisionerClassCrd: CrdDefinition = {
  group: GROUP,
  version: VERSION,
  kind: "ProvisionerClass",
  plural: "provisionerclasses",
  singular: "provisionerclass",
  shortNames: ["pc"],
  categories: ["rukpak"],
  scope: "Cluster",
  description:
    "A configuration of a provisioner (like a StorageClass): " +
    "objects naming it are handled by the provisioner with its id.",
  fields: Object.fromEntries(Object.entries(provisionerClassFields).map(([k, v]) => [k, v.openapi])),
  required: ["provisioner"],
  status: false,
  printerColumns: [
    { name: "Provisioner", type: "string", jsonPath: ".provisioner" },
    { name: "Approval", type: "string", jsonPath: ".parameters.approval" },
  ],
};

export const bundleCrd: CrdDefinition = {
  group: GROUP,
  version: VERSION,
  kind: "Bundle",
  plural: "bundles",
  singular: "bundle",
  shortNames: ["rb"],
  categories: ["rukpak"],
  scope: "Cluster",
  description:
    "Content that needs to be made available on the cluster (an image, " +
    "files from ConfigMaps, a tarball), unpacked by its class's provisioner.",
  fields: { spec: bundleSpecSchema.openapi, status: bundleStatusSchema.openapi },
  required: ["spec"],
  printerColumns: [
    { name: "Class", type: "string", jsonPath: ".spec.class" },
    { name: "Unpacked", type: "string", jsonPath: ".status.unpacked" },
    { name: "Ref", type: "string", jsonPath: ".spec.refs[0]", priority: 1 },
  ],
};

export const instanceCrd: CrdDefinition = {
  group: GROUP,
  version: VERSION,
  kind: "Instance",
  plural: "instances",
  singular: "instance",
  shortNames: ["inst"],
  categories: ["rukpak"],
  scope: "Cluster",
  description: "Makes a Bundle active on the cluster, pivoting from the older Bundles its selector matches.",
  fields: { spec: instanceSpecSchema.openapi, status: instanceStatusSchema.openapi },
  required: ["spec"],
  printerColumns: [
    { name: "Bundle", type: "string", jsonPath: ".spec.bundle.name" },
    { name: "Active", type: "string", jsonPath: ".status.activeBundle" },
    { name: "Approved", type: "string", jsonPath: '.status.conditions[?(@.type=="Approved")].status' },
    { name: "Installed", type: "string", jsonPath: '.status.conditions[?(@.type=="Installed")].status' },
  ],
};

export const rukpakCrds = [provisionerClassCrd, bundleCrd, instanceCrd];

export function rukpakCrdObjects(): KubeObject[] {
  return rukpakCrds.map((d) => crdObject(d) as unknown as KubeObject);
}

export interface ProvisionerClass extends KubeObject {
  provisioner: string;
  parameters?: Record<string, unknown>;
}

export interface BundleStatus {
  unpacked?: UnpackedState;
  reason?: string;
  message?: string;
  digest?: string;
  resolvedRefs?: string[];
  format?: string;
  objects?: string[];
  conditions?: Condition[];
  observedGeneration?: number;
}

export interface Bundle extends KubeObject {
  spec: BundleSpec;
  status?: BundleStatus;
}

export interface InstanceStatus {
  activeBundle?: string;
  permissions?: string[];
  installNamespace?: string;
  objects?: ObjectRef[];
  /** The content digest an approval must name (written by the controller while the Instance waits). */
  contentDigest?: string;
  /** The signed approval decision (see trust.ts): names the generation, the Bundle and the content. */
  approval?: ApprovalRecord;
  conditions?: Condition[];
  observedGeneration?: number;
}

export interface Instance extends KubeObject {
  spec: InstanceSpec;
  status?: InstanceStatus;
}

export type Approval = "AllowAll" | "DenyAll" | "UserPermission";

/** The default ProvisionerClasses (docs/cluster.md): `olm.bundle` (registry+v1, UserPermission) and `plain`. */
export function defaultProvisionerClasses(): ProvisionerClass[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "olm.bundle" },
      provisioner: OPERATOR_PROVISIONER,
      parameters: { approval: "UserPermission", maxObjectSize: "10mb" },
    },
    {
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "plain" },
      provisioner: PLAIN_PROVISIONER,
      parameters: { approval: "UserPermission" },
    },
  ];
}
