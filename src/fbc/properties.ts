/**
 * Typed views of bundle properties (opm's alpha/property.Parse): the known `olm.*` types decoded
 * into their Go struct shapes, everything else kept verbatim.
 */
import { goQuote } from "../gojson/fmt.js";
import { foldFieldName } from "../gojson/unicode.js";
import { parseConstraint, type Constraint } from "./constraint.js";
import { DecodeError, decodePropertyValue } from "./decode.js";
import type { JsonObject, JsonValue, Property } from "./types.js";

export const PROPERTY_PACKAGE = "olm.package";
export const PROPERTY_PACKAGE_REQUIRED = "olm.package.required";
export const PROPERTY_GVK = "olm.gvk";
export const PROPERTY_GVK_REQUIRED = "olm.gvk.required";
export const PROPERTY_BUNDLE_OBJECT = "olm.bundle.object";
export const PROPERTY_CSV_METADATA = "olm.csv.metadata";
export const PROPERTY_CONSTRAINT = "olm.constraint";
export const PROPERTY_CHANNEL = "olm.channel";
/** Operand versioning (docs/operands.md, an opcat extension; opm keeps these as unknown properties). */
export const PROPERTY_OPERAND_SUPPORTED = "olm.operand.supported";
export const PROPERTY_OPERAND_REQUIRED = "olm.operand.required";
export const PROPERTY_RELATED_IMAGE_BUNDLE = "olm.relatedImageBundle";

export interface PackageProperty {
  packageName: string;
  version: string;
  release: string;
}
export interface PackageRequiredProperty {
  packageName: string;
  versionRange: string;
}
export interface GVKProperty {
  group: string;
  kind: string;
  version: string;
}

/**
 * The value of `olm.operand.supported`, `olm.operand.required` and `olm.relatedImageBundle`
 * (docs/operands.md): an operand or related-image entry name and a blang version range. Decoded and
 * checked by src/fbc/operands.ts; {@link parseProperties} keeps these in `others`, as opm does.
 */
export interface OperandReferenceProperty {
  name: string;
  version: string;
}

/** Read-only: empty lists are shared between results. */
export interface ParsedProperties {
  packages: readonly PackageProperty[];
  packagesRequired: readonly PackageRequiredProperty[];
  gvks: readonly GVKProperty[];
  gvksRequired: readonly GVKProperty[];
  /** Number of `olm.bundle.object` properties. */
  bundleObjects: number;
  csvMetadatas: readonly JsonObject[];
  channels: readonly { channelName: string }[];
  others: readonly Property[];
}

/** A property that does not decode: `parse property[<i>] of type "<t>": <err>`. */
export class PropertyParseError extends Error {
  constructor(
    readonly index: number,
    readonly type: string,
    readonly reason: string,
  ) {
    super(`parse property[${index}] of type ${goQuote(type)}: ${reason}`);
    this.name = "PropertyParseError";
  }
}

const s = (v: unknown): string => (typeof v === "string" ? v : "");

interface FlatFields {
  exact: ReadonlySet<string>;
  folded: ReadonlySet<string>;
}
const flatFields = (...names: string[]): FlatFields => ({
  exact: new Set(names),
  folded: new Set(names.map(foldFieldName)),
});
const PACKAGE_FIELDS = flatFields("packageName", "version", "release");
const GVK_FIELDS = flatFields("group", "kind", "version");

/**
 * True when `v` is an object whose keys that name a field are spelled exactly as the field and hold
 * a string or null: then reading them directly gives what Go's decoder gives (other keys are
 * ignored by both). Anything else goes through decodePropertyValue for Go's exact result or error.
 */
function flatStrings(v: JsonValue, f: FlatFields): v is JsonObject {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  for (const k in v) {
    if (f.exact.has(k)) {
      const x = v[k];
      if (typeof x !== "string" && x !== null) return false;
    } else if (f.folded.has(foldFieldName(k))) return false;
  }
  return true;
}

function onlyKey(v: JsonObject, key: string): boolean {
  let n = 0;
  for (const k in v) if (k !== key || ++n > 1) return false;
  return n === 1;
}

// Most bundles have only olm.package, olm.gvk and olm.bundle.object properties: the other lists
// start as this shared, frozen empty array and get their own array on their first element (five
// fewer allocations per bundle). Callers never mutate the lists.
const NONE = Object.freeze([]) as unknown as never[];

function append<T>(list: readonly T[], x: T): readonly T[] {
  if (list === NONE) return [x];
  (list as T[]).push(x);
  return list;
}

/** opm's `property.Parse`; throws PropertyParseError at the first property that does not decode. */
export function parseProperties(props: readonly Property[]): ParsedProperties {
  const out: ParsedProperties = {
    packages: NONE,
    packagesRequired: NONE,
    gvks: NONE,
    gvksRequired: NONE,
    bundleObjects: 0,
    csvMetadatas: NONE,
    channels: NONE,
    others: NONE,
  };
  for (let i = 0; i < props.length; i++) {
    const p = props[i];
    if (p.value.isMissing) throw new PropertyParseError(i, p.type, "unexpected end of JSON input");
    if (p.type === PROPERTY_BUNDLE_OBJECT) {
      // The manifest itself is only needed on demand (objects.ts); its base64 is checked by the loader.
      const v = p.value.value;
      if (
        v !== null &&
        typeof v === "object" &&
        !Array.isArray(v) &&
        typeof v.data === "string" &&
        onlyKey(v, "data")
      ) {
        out.bundleObjects++;
        continue;
      }
    } else if (p.type === PROPERTY_PACKAGE) {
      // The common cases, read directly: every key spelled as its field, strings or null.
      const v = p.value.value;
      if (flatStrings(v, PACKAGE_FIELDS)) {
        out.packages = append(out.packages, {
          packageName: s(v.packageName),
          version: s(v.version),
          release: s(v.release),
        });
        continue;
      }
    } else if (p.type === PROPERTY_GVK) {
      const v = p.value.value;
      if (flatStrings(v, GVK_FIELDS)) {
        out.gvks = append(out.gvks, { group: s(v.group), kind: s(v.kind), version: s(v.version) });
        continue;
      }
    }
    parseSlow(out, p, i);
  }
  return out;
}

/**
 * Any property the fast paths above did not take: decoded exactly as Go's decoder would (or its
 * error). Kept out of parseProperties so that the hot function stays small and quick to optimise.
 */
function parseSlow(out: ParsedProperties, p: Property, i: number): void {
  let d: Record<string, unknown>;
  try {
    d = decodePropertyValue(p.type, p.value.value);
  } catch (e) {
    if (e instanceof DecodeError) throw new PropertyParseError(i, p.type, e.message);
    throw e;
  }
  switch (p.type) {
    case PROPERTY_PACKAGE:
      out.packages = append(out.packages, {
        packageName: s(d.packageName),
        version: s(d.version),
        release: s(d.release),
      });
      break;
    case PROPERTY_PACKAGE_REQUIRED:
      out.packagesRequired = append(out.packagesRequired, {
        packageName: s(d.packageName),
        versionRange: s(d.versionRange),
      });
      break;
    case PROPERTY_GVK:
      out.gvks = append(out.gvks, { group: s(d.group), kind: s(d.kind), version: s(d.version) });
      break;
    case PROPERTY_GVK_REQUIRED:
      out.gvksRequired = append(out.gvksRequired, { group: s(d.group), kind: s(d.kind), version: s(d.version) });
      break;
    case PROPERTY_BUNDLE_OBJECT:
      out.bundleObjects++;
      break;
    case PROPERTY_CSV_METADATA:
      out.csvMetadatas = append(out.csvMetadatas, p.value.value as JsonObject);
      break;
    case PROPERTY_CHANNEL:
      out.channels = append(out.channels, { channelName: s(d.channelName) });
      break;
    default:
      out.others = append(out.others, p);
  }
}

/** The single `olm.package` property value of a bundle's properties, or undefined (none, several, or undecodable). */
export function packageProperty(props: readonly Property[]): PackageProperty | undefined {
  let found: PackageProperty | undefined;
  for (const p of props) {
    if (p.type !== PROPERTY_PACKAGE) continue;
    if (found) return undefined;
    try {
      const d = decodePropertyValue(p.type, p.value.value);
      found = { packageName: s(d.packageName), version: s(d.version), release: s(d.release) };
    } catch {
      return undefined;
    }
  }
  return found;
}

/** The `olm.csv.metadata` value (opm's property.CSVMetadata; nested v1alpha1 shapes kept as JSON). */
export interface CSVMetadata {
  annotations?: Record<string, string>;
  apiServiceDefinitions: { owned?: JsonObject[]; required?: JsonObject[] };
  crdDescriptions: { owned?: JsonObject[]; required?: JsonObject[] };
  description?: string;
  displayName?: string;
  installModes?: { type: string; supported: boolean }[];
  keywords?: string[];
  labels?: Record<string, string>;
  links?: { name?: string; url?: string }[];
  maintainers?: { name?: string; email?: string }[];
  maturity?: string;
  minKubeVersion?: string;
  nativeAPIs?: { group: string; version: string; kind: string }[];
  provider: { name?: string; url?: string };
}

/** The typed `olm.csv.metadata` values of a bundle's properties. */
export function csvMetadataOf(props: readonly Property[]): CSVMetadata[] {
  return props
    .filter((p) => p.type === PROPERTY_CSV_METADATA && !p.value.isMissing)
    .map((p) => p.value.value as unknown as CSVMetadata);
}

/** The `olm.constraint` properties of a bundle, parsed (throws ConstraintParseError with Go's message). */
export function constraintsOf(props: readonly Property[]): Constraint[] {
  return props.filter((p) => p.type === PROPERTY_CONSTRAINT).map((p) => parseConstraint(p.value.text));
}
