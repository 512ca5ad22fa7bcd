/**
 * The File-Based Catalog data model: one TypeScript type per FBC schema, mirroring opm's
 * `declcfg` structs (operator-registry alpha/declcfg/declcfg.go) field for field, plus the
 * source location every blob was read from.
 */
import type { RawJson } from "./rawjson.js";

export const SCHEMA_PACKAGE = "olm.package";
export const SCHEMA_CHANNEL = "olm.channel";
export const SCHEMA_BUNDLE = "olm.bundle";
export const SCHEMA_DEPRECATIONS = "olm.deprecations";

/** A JSON value as produced by `JSON.parse` (declared once, in src/gojson/value.ts). */
import type { JsonObject, JsonValue } from "../gojson/value.js";

export type { JsonObject, JsonValue };

/** Where a blob came from (declared in the leaf src/errors, with the problems that point at it). */
import type { Location } from "../errors/index.js";

export type { Location };

/** A bundle, package or channel property: `{type, value}` with the value kept as raw JSON like opm does. */
export interface Property {
  type: string;
  value: RawJson;
}

export interface Icon {
  /** Decoded icon bytes; `null` when the blob had an icon without `base64data` (written back as `null`). */
  base64data: Uint8Array | null;
  mediatype: string;
}

export interface Package {
  schema: string;
  name: string;
  defaultChannel: string;
  icon?: Icon;
  description: string;
  properties: Property[];
  loc?: Location;
}

export interface ChannelEntry {
  name: string;
  replaces: string;
  skips: string[];
  skipRange: string;
}

export interface Channel {
  schema: string;
  name: string;
  package: string;
  /** `null` when the blob had no `entries` (opm writes it back as `null`). */
  entries: ChannelEntry[] | null;
  properties: Property[];
  loc?: Location;
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface Bundle {
  schema: string;
  name: string;
  package: string;
  image: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  loc?: Location;
}

export interface PackageScopedReference {
  schema: string;
  name: string;
}

export interface DeprecationEntry {
  reference: PackageScopedReference;
  message: string;
}

export interface Deprecation {
  schema: string;
  package: string;
  /** `null` when the blob had no `entries`. */
  entries: DeprecationEntry[] | null;
  loc?: Location;
}

/** Any blob whose schema is not one of the four OLM schemas, kept verbatim (normalised). */
export interface Meta {
  schema: string;
  package: string;
  name: string;
  /** The whole blob, normalised as opm does (keys sorted, compact). */
  blob: RawJson;
  loc?: Location;
}

/** A whole catalog: opm's `DeclarativeConfig`. */
export interface DeclarativeConfig {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  deprecations: Deprecation[];
  others: Meta[];
}

export function emptyConfig(): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
}

/** Appends every blob of `src` to `dst` (opm's `DeclarativeConfig.Merge`). */
export function mergeConfigs(dst: DeclarativeConfig, src: DeclarativeConfig): DeclarativeConfig {
  dst.packages.push(...src.packages);
  dst.channels.push(...src.channels);
  dst.bundles.push(...src.bundles);
  dst.deprecations.push(...src.deprecations);
  dst.others.push(...src.others);
  return dst;
}
