/**
 * The operator-registry pkg/registry types opm decodes a bundle directory's files into, and the
 * local types of ClusterServiceVersion.GetOperatorImages, described for src/gojson's struct decoder.
 */
import { GO_RAW, GO_STRING, goPtr, goSlice, goStruct, type GoStructType } from "../gojson/structdecode.js";

const STR = GO_STRING;

/** registry.Property and registry.Dependency (`{type, value json.RawMessage}`). */
export const GO_REGISTRY_PROPERTY = goStruct("registry.Property", [
  ["type", STR],
  ["value", GO_RAW],
]);
export const GO_REGISTRY_DEPENDENCY = goStruct("registry.Dependency", [
  ["type", STR],
  ["value", GO_RAW],
]);
export const GO_PROPERTIES_FILE = goStruct("registry.PropertiesFile", [["properties", goSlice(GO_REGISTRY_PROPERTY)]]);
export const GO_DEPENDENCIES_FILE = goStruct("registry.DependenciesFile", [
  ["dependencies", goSlice(GO_REGISTRY_DEPENDENCY)],
]);
export const GO_ANNOTATIONS = goStruct("registry.Annotations", [
  ["operators.operatorframework.io.bundle.package.v1", STR],
  ["operators.operatorframework.io.bundle.channels.v1", STR],
  ["operators.operatorframework.io.bundle.channel.default.v1", STR],
]);
export const GO_ANNOTATIONS_FILE = goStruct("registry.AnnotationsFile", [["annotations", GO_ANNOTATIONS]]);

/** k8s.io/api core/v1 Container, only the field opm reads (the other fields are never type-checked here). */
const GO_CONTAINER = goStruct("v1.Container", [
  ["name", STR],
  ["image", STR],
]);
/**
 * The path from apps/v1 DeploymentSpec to the containers' images (the subset of the Kubernetes
 * types that GetOperatorImages reads; other fields are ignored, not type-checked).
 */
const GO_DEPLOYMENT_SPEC = goStruct("v1.DeploymentSpec", [
  [
    "template",
    goStruct("v1.PodTemplateSpec", [
      [
        "spec",
        goStruct("v1.PodSpec", [
          ["containers", goSlice(GO_CONTAINER)],
          ["initContainers", goSlice(GO_CONTAINER)],
        ]),
      ],
    ]),
  ],
]);
const GO_DEP = goStruct("registry.dep", [
  ["Name", STR],
  ["Spec", GO_DEPLOYMENT_SPEC],
]);
/** GetOperatorImages's `csvSpec{Install strategy}` (pkg/registry/csv.go). */
export const GO_CSV_SPEC = goStruct("registry.csvSpec", [
  [
    "Install",
    goStruct("registry.strategy", [
      ["strategy", STR],
      ["spec", goStruct("registry.strategySpec", [["Deployments", goSlice(GO_DEP)]])],
    ]),
  ],
]);

export const GO_DEFINITION_KEY = goStruct("registry.DefinitionKey", [
  ["group", STR],
  ["kind", STR],
  ["name", STR],
  ["version", STR],
]);
/**
 * The anonymous `struct{Owned, Required []*DefinitionKey}` of
 * csv.GetCustomResourceDefintions / GetApiServiceDefinitions.
 */
export const GO_OWNED_REQUIRED: GoStructType = {
  kind: "struct",
  goName:
    'struct { Owned []*registry.DefinitionKey "json:\\"owned\\""; ' +
    'Required []*registry.DefinitionKey "json:\\"required\\"" }',
  shortName: "",
  fields: [
    { json: "owned", type: goSlice(goPtr(GO_DEFINITION_KEY)) },
    { json: "required", type: goSlice(goPtr(GO_DEFINITION_KEY)) },
  ],
};

/**
 * apiextensions v1 / v1beta1 CustomResourceDefinition, the fields opm reads (group, names, versions,
 * and v1beta1's single version); the other fields are ignored, not type-checked.
 */
function crdType(version: "v1" | "v1beta1"): GoStructType {
  const names = goStruct(`${version}.CustomResourceDefinitionNames`, [
    ["plural", STR],
    ["kind", STR],
  ]);
  const crdVersion = goStruct(`${version}.CustomResourceDefinitionVersion`, [["name", STR]]);
  const spec = goStruct(`${version}.CustomResourceDefinitionSpec`, [
    ["group", STR],
    ["names", names],
    ...(version === "v1beta1" ? [["version", STR] as const] : []),
    ["versions", goSlice(crdVersion)],
  ]);
  return goStruct(`${version}.CustomResourceDefinition`, [["spec", spec]]);
}
export const GO_CRD = { v1: crdType("v1"), v1beta1: crdType("v1beta1") } as const;
