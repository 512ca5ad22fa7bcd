/**
 * The Go types opm decodes catalog blobs and property values into (operator-registry
 * alpha/declcfg and alpha/property), described once for src/gojson's struct decoder. decode.ts
 * builds its fast path from these descriptions; a property test holds it equal to goDecode.
 */
import {
  GO_BYTES,
  GO_RAW,
  GO_STRING,
  GO_STRING_MAP,
  GO_STRINGS,
  goPtr,
  goSlice,
  goStruct,
  type GoStructType,
  type GoType,
} from "../gojson/structdecode.js";

const STR = GO_STRING;

export const GO_PROPERTY = goStruct("property.Property", [
  ["type", STR],
  ["value", GO_RAW],
]);
const PROPERTIES = goSlice(GO_PROPERTY);

export const GO_ICON = goStruct("declcfg.Icon", [
  ["base64data", GO_BYTES],
  ["mediatype", STR],
]);
export const GO_PACKAGE = goStruct("declcfg.Package", [
  ["schema", STR],
  ["name", STR],
  ["defaultChannel", STR],
  ["icon", goPtr(GO_ICON)],
  ["description", STR],
  ["properties", PROPERTIES],
]);
export const GO_CHANNEL_ENTRY = goStruct("declcfg.ChannelEntry", [
  ["name", STR],
  ["replaces", STR],
  ["skips", GO_STRINGS],
  ["skipRange", STR],
]);
export const GO_CHANNEL = goStruct("declcfg.Channel", [
  ["schema", STR],
  ["name", STR],
  ["package", STR],
  ["entries", goSlice(GO_CHANNEL_ENTRY)],
  ["properties", PROPERTIES],
]);
export const GO_RELATED_IMAGE = goStruct("declcfg.RelatedImage", [
  ["name", STR],
  ["image", STR],
]);
export const GO_BUNDLE = goStruct("declcfg.Bundle", [
  ["schema", STR],
  ["name", STR],
  ["package", STR],
  ["image", STR],
  ["properties", PROPERTIES],
  ["relatedImages", goSlice(GO_RELATED_IMAGE)],
]);
export const GO_PACKAGE_SCOPED_REFERENCE = goStruct("declcfg.PackageScopedReference", [
  ["schema", STR],
  ["name", STR],
]);
export const GO_DEPRECATION_ENTRY = goStruct("declcfg.DeprecationEntry", [
  ["reference", GO_PACKAGE_SCOPED_REFERENCE],
  ["message", STR],
]);
export const GO_DEPRECATION = goStruct("declcfg.Deprecation", [
  ["schema", STR],
  ["package", STR],
  ["entries", goSlice(GO_DEPRECATION_ENTRY)],
]);

export const GO_PROPERTY_GVK = goStruct("property.GVK", [
  ["group", STR],
  ["kind", STR],
  ["version", STR],
]);
export const GO_PROPERTY_PACKAGE = goStruct("property.Package", [
  ["packageName", STR],
  ["version", STR],
  ["release", STR],
]);
export const GO_PROPERTY_BUNDLE_OBJECT = goStruct("property.BundleObject", [["data", GO_BYTES]]);

const opaque = (goName: string): GoType => ({ kind: "opaque", goName });

/** Go structs of the known property types (alpha/property/property.go), keyed by property type. */
export const GO_PROPERTY_TYPES: ReadonlyMap<string, GoStructType> = new Map([
  ["olm.package", GO_PROPERTY_PACKAGE],
  [
    "olm.package.required",
    goStruct("property.PackageRequired", [
      ["packageName", STR],
      ["versionRange", STR],
    ]),
  ],
  ["olm.gvk", GO_PROPERTY_GVK],
  [
    "olm.gvk.required",
    goStruct("property.GVKRequired", [
      ["group", STR],
      ["kind", STR],
      ["version", STR],
    ]),
  ],
  ["olm.bundle.object", GO_PROPERTY_BUNDLE_OBJECT],
  [
    "olm.csv.metadata",
    // Nested v1alpha1 structs are checked for their JSON kind only.
    goStruct("property.CSVMetadata", [
      ["annotations", GO_STRING_MAP],
      ["apiServiceDefinitions", opaque("v1alpha1.APIServiceDefinitions")],
      ["crdDescriptions", opaque("v1alpha1.CustomResourceDefinitions")],
      ["description", STR],
      ["displayName", STR],
      ["installModes", goSlice(opaque("v1alpha1.InstallMode"))],
      ["keywords", GO_STRINGS],
      ["labels", GO_STRING_MAP],
      ["links", goSlice(opaque("v1alpha1.AppLink"))],
      ["maintainers", goSlice(opaque("v1alpha1.Maintainer"))],
      ["maturity", STR],
      ["minKubeVersion", STR],
      ["nativeAPIs", goSlice(opaque("v1.GroupVersionKind"))],
      ["provider", opaque("v1alpha1.AppLink")],
    ]),
  ],
  ["olm.channel", goStruct("property.Channel", [["channelName", STR]])],
]);
