/**
 * Operand versioning (docs/operands.md): the catalog schemas `olm.operand` and `olm.relatedimages`, and the
 * bundle properties `olm.operand.supported`, `olm.operand.required` and `olm.relatedImageBundle`,
 * as typed values with strict decoding.
 *
 * For opm these blobs are "other" blobs and these properties unknown properties: opm loads, renders
 * and validates them without looking inside. Checking them is an opcat extension that applies only
 * to blobs of these two schemas and bundle properties of these three types (docs/operands.md);
 * everything opm writes (render, migrate, serve) is unchanged.
 *
 * Shapes (field names as docs/operands.md gives them):
 * ```
 * {"schema": "olm.operand", "name": "etcd", "version": "3.1.1", "package": "etcd",   // package optional
 *  "images": [{"name": "etcd", "image": "quay.io/coreos/etcd@sha256:…"}]}
 * {"schema": "olm.relatedimages", "name": "etcdoperator-related", "version": "0.9.0",
 *  "relatedImages": [{"name": "etcd-stable", "image": "quay.io/coreos/etcd-operator@sha256:…"}]}
 * {"type": "olm.operand.supported" | "olm.operand.required" | "olm.relatedImageBundle",
 *  "value": {"name": "etcd", "version": ">= 2.1.0 < 3.0.0"}}                        // blang range
 * ```
 */
import { goQuote } from "../gojson/fmt.js";
import { problem, type Problem } from "../errors/index.js";
import {
  PROPERTY_OPERAND_REQUIRED,
  PROPERTY_OPERAND_SUPPORTED,
  PROPERTY_RELATED_IMAGE_BUNDLE,
  type OperandReferenceProperty,
} from "./properties.js";
import type { Bundle, JsonValue, Location, Meta, Property } from "./types.js";
import { validatePullSpec } from "../reference/reference.js";
import { SemverError, SemverPanic, tryParseRange, tryParseVersion, type Range, type Version } from "../semver/index.js";

export const SCHEMA_OPERAND = "olm.operand";
export const SCHEMA_RELATED_IMAGES = "olm.relatedimages";

/** The operand property types that take part in resolution. */
export const OPERAND_PROPERTY_TYPES: readonly string[] = [
  PROPERTY_OPERAND_SUPPORTED,
  PROPERTY_OPERAND_REQUIRED,
  PROPERTY_RELATED_IMAGE_BUNDLE,
];

/** One image of an operand or related-image entry. */
export interface OperandImage {
  name: string;
  image: string;
}

/** A decoded `olm.operand` or `olm.relatedimages` blob. */
export interface OperandBlob {
  schema: typeof SCHEMA_OPERAND | typeof SCHEMA_RELATED_IMAGES;
  name: string;
  /** Strict semver text, as written. */
  version: string;
  /** `olm.operand` only: the package whose bundles may use the entry ("" = any package). */
  package: string;
  /** `images` of an `olm.operand`, `relatedImages` of an `olm.relatedimages`. */
  images: OperandImage[];
  loc?: Location;
}

/** A decoded operand bundle property with its parsed range. */
export interface OperandReference extends OperandReferenceProperty {
  type: string;
  range: Range;
}

/** What a problem found here is: a code, the sentence and a hint. */
interface Finding {
  code: string;
  message: string;
  hint?: string;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const FIELDS: Record<string, readonly string[]> = {
  [SCHEMA_OPERAND]: ["schema", "name", "version", "package", "images"],
  [SCHEMA_RELATED_IMAGES]: ["schema", "name", "version", "relatedImages"],
};

type Obj = { [k: string]: JsonValue };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

function kindOf(v: JsonValue | undefined): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** blang's range error for `s`, or the range. */
export function parseOperandRange(s: string): Range | string {
  try {
    const r = tryParseRange(s);
    return r instanceof SemverError ? r.message : r;
  } catch (e) {
    if (e instanceof SemverPanic) return e.message;
    throw e;
  }
}

/**
 * Decodes an `olm.operand` / `olm.relatedimages` blob strictly: every finding, or the typed blob
 * when there is none. Rules: only the documented fields; `name` a lowercase RFC 1123 subdomain;
 * `version` strict semver; `package` (olm.operand) a string; a non-empty image list whose entries
 * have exactly a unique non-empty `name` and a valid non-empty `image` pull spec.
 */
export function decodeOperandBlob(
  schema: string,
  value: JsonValue,
  loc?: Location,
): { blob?: OperandBlob; findings: Finding[] } {
  const findings: Finding[] = [];
  const what = (name: string): string => `${schema} ${goQuote(name)}`;
  if (!isObj(value))
    return { findings: [{ code: "FBC_OPERAND_FIELD_INVALID", message: `${schema} blob must be an object` }] };
  const allowed = FIELDS[schema];
  if (!allowed)
    return { findings: [{ code: "FBC_OPERAND_FIELD_INVALID", message: `unknown operand schema ${goQuote(schema)}` }] };
  const name = typeof value.name === "string" ? value.name : "";
  const id = what(name);
  for (const k of Object.keys(value).sort()) {
    if (!allowed.includes(k))
      findings.push({
        code: "FBC_OPERAND_FIELD_INVALID",
        message: `${id}: unknown field ${goQuote(k)}`,
        hint: `${schema} blobs have the fields ${allowed.join(", ")}`,
      });
  }
  if (typeof value.name !== "string" || value.name === "") {
    findings.push({
      code: "FBC_OPERAND_NAME_INVALID",
      message: `${schema} blob has no name (name is ${kindOf(value.name)})`,
      hint: 'set "name", e.g. "etcd"',
    });
  } else if (!NAME.test(name) || name.length > 253) {
    findings.push({
      code: "FBC_OPERAND_NAME_INVALID",
      message:
        `${id}: invalid name: must be a lowercase RFC 1123 subdomain (lower case alphanumeric ` +
        `characters, '-' or '.', starting and ending with an alphanumeric character)`,
    });
  }
  const version = typeof value.version === "string" ? value.version : "";
  if (typeof value.version !== "string") {
    findings.push({
      code: "FBC_OPERAND_VERSION_INVALID",
      message: `${id}: version must be a string, got ${kindOf(value.version)}`,
      hint: 'set "version" to a semver version, e.g. "3.1.1"',
    });
  } else {
    const v = tryParseVersion(version);
    if (v instanceof SemverError)
      findings.push({
        code: "FBC_OPERAND_VERSION_INVALID",
        message: `${id}: error parsing version ${goQuote(version)}: ${v.message}`,
        hint: "versions must be strict semver: MAJOR.MINOR.PATCH[-pre][+build], no leading v",
      });
  }
  let pkg = "";
  if (schema === SCHEMA_OPERAND && value.package !== undefined) {
    if (typeof value.package !== "string")
      findings.push({
        code: "FBC_OPERAND_FIELD_INVALID",
        message: `${id}: package must be a string, got ${kindOf(value.package)}`,
      });
    else pkg = value.package;
  }
  const listKey = schema === SCHEMA_OPERAND ? "images" : "relatedImages";
  const list = value[listKey];
  const images: OperandImage[] = [];
  if (!Array.isArray(list) || list.length === 0) {
    findings.push({
      code: "FBC_OPERAND_IMAGE_INVALID",
      message:
        `${id}: ${listKey} must be a non-empty list, got ` + `${Array.isArray(list) ? "an empty list" : kindOf(list)}`,
      hint: `list the entry's images as ${listKey}: [{name, image}]`,
    });
  } else {
    const seen = new Set<string>();
    list.forEach((it, i) => {
      const at = `${id}: ${listKey}[${i}]`;
      if (!isObj(it)) {
        findings.push({
          code: "FBC_OPERAND_IMAGE_INVALID",
          message: `${at} must be an object with name and image, got ${kindOf(it)}`,
        });
        return;
      }
      for (const k of Object.keys(it).sort())
        if (k !== "name" && k !== "image")
          findings.push({
            code: "FBC_OPERAND_FIELD_INVALID",
            message: `${at}: unknown field ${goQuote(k)}`,
            hint: "an image entry has the fields name and image",
          });
      const n = it.name;
      const img = it.image;
      if (typeof n !== "string" || n === "") {
        findings.push({ code: "FBC_OPERAND_IMAGE_INVALID", message: `${at}.name must be a non-empty string` });
        return;
      }
      if (seen.has(n)) {
        findings.push({
          code: "FBC_OPERAND_IMAGE_DUPLICATE",
          message: `${at}: duplicate image name ${goQuote(n)}`,
          hint: "image names must be unique within an entry",
        });
        return;
      }
      seen.add(n);
      if (typeof img !== "string" || img === "") {
        findings.push({ code: "FBC_OPERAND_IMAGE_INVALID", message: `${at}.image must be a non-empty string` });
        return;
      }
      const err = validatePullSpec(img);
      if (err !== undefined) {
        findings.push({
          code: "FBC_OPERAND_IMAGE_INVALID",
          message: `${at}.image: invalid image pull spec ${goQuote(img)}: ${err}`,
        });
        return;
      }
      images.push({ name: n, image: img });
    });
  }
  if (findings.length > 0) return { findings };
  const blob: OperandBlob = { schema: schema as OperandBlob["schema"], name, version, package: pkg, images };
  if (loc) blob.loc = loc;
  return { blob, findings };
}

/** The `<type> value` part of property messages. */
function propWhere(b: Pick<Bundle, "package" | "name">, i: number, type: string): string {
  return `package ${goQuote(b.package)} bundle ${goQuote(b.name)} property[${i}] ${type}`;
}

/**
 * Decodes one operand property value: exactly `{name, version}`, a non-empty name and a blang
 * range (an exact version is the range `=version`). The reference or the finding.
 */
export function decodeOperandReference(p: Property): OperandReference | Finding {
  let v: JsonValue;
  try {
    v = p.value.value;
  } catch {
    return { code: "FBC_OPERAND_PROPERTY_INVALID", message: "value is missing" };
  }
  if (!isObj(v))
    return {
      code: "FBC_OPERAND_PROPERTY_INVALID",
      message: `value must be an object with name and version, got ${kindOf(v)}`,
    };
  for (const k of Object.keys(v).sort())
    if (k !== "name" && k !== "version")
      return {
        code: "FBC_OPERAND_PROPERTY_INVALID",
        message: `unknown field ${goQuote(k)} (the value has the fields name and version)`,
      };
  if (typeof v.name !== "string" || v.name === "")
    return { code: "FBC_OPERAND_PROPERTY_INVALID", message: "name must be a non-empty string" };
  if (typeof v.version !== "string" || v.version.trim() === "")
    return {
      code: "FBC_OPERAND_PROPERTY_INVALID",
      message: 'version must be a non-empty version or version range, e.g. ">=2.1.0 <3.0.0"',
    };
  const r = parseOperandRange(v.version);
  if (typeof r === "string")
    return { code: "FBC_OPERAND_PROPERTY_INVALID", message: `invalid version range ${goQuote(v.version)}: ${r}` };
  return { type: p.type, name: v.name, version: v.version, range: r };
}

const OPERAND_PROPERTY_TYPE_SET: ReadonlySet<string> = new Set(OPERAND_PROPERTY_TYPES);

/** The decoded operand properties of a bundle; undecodable ones are left out (validation reports them). */
export function operandReferencesOf(props: readonly Property[]): OperandReference[] {
  const out: OperandReference[] = [];
  for (const p of props) {
    if (!OPERAND_PROPERTY_TYPES.includes(p.type)) continue;
    const r = decodeOperandReference(p);
    if ("range" in r) out.push(r);
  }
  return out;
}

/**
 * The opcat extension checks of a catalog's operand content: every `olm.operand` and
 * `olm.relatedimages` blob (strict decoding, one entry per schema, package, name and version) and
 * every operand property of every bundle. Problems carry the blob's location.
 */
export function operandProblems(others: readonly Meta[], bundles: readonly Bundle[]): Problem[] {
  const out: Problem[] = [];
  const first = new Map<string, Location | undefined>();
  for (const m of others) {
    if (m.schema !== SCHEMA_OPERAND && m.schema !== SCHEMA_RELATED_IMAGES) continue;
    const blobRef = {
      schema: m.schema,
      ...(m.package ? { package: m.package } : {}),
      ...(m.name ? { name: m.name } : {}),
    };
    const { blob, findings } = decodeOperandBlob(m.schema, m.blob.value, m.loc);
    for (const f of findings) out.push(problem(f.code, f.message, { loc: m.loc, blob: blobRef, hint: f.hint }));
    if (!blob) continue;
    const key =
      `${blob.schema}\0${blob.package}\0${blob.name}\0` + `${(tryParseVersion(blob.version) as Version).toString()}`;
    if (first.has(key)) {
      const at = first.get(key);
      out.push(
        problem(
          "FBC_OPERAND_DUPLICATE",
          `duplicate ${blob.schema} ${goQuote(blob.name)} version ` +
            `${goQuote(blob.version)}${blob.package ? ` for package ${goQuote(blob.package)}` : ""}`,
          {
            loc: m.loc,
            blob: blobRef,
            hint: at
              ? `the entry is already defined at ${at.file}:${at.line}; give ` +
                `each version one blob (another catalog may redefine it)`
              : undefined,
          },
        ),
      );
    } else first.set(key, m.loc);
  }
  for (const b of bundles) {
    const props = b.properties;
    for (let i = 0; i < props.length; i++) {
      const p = props[i];
      if (!OPERAND_PROPERTY_TYPE_SET.has(p.type)) continue;
      const r = decodeOperandReference(p);
      if ("range" in r) continue;
      out.push(
        problem(r.code, `${propWhere(b, i, p.type)}: ${r.message}`, {
          loc: b.loc,
          blob: { schema: "olm.bundle", package: b.package, name: b.name },
          hint: r.hint ?? 'the value is {"name": <operand name>, "version": <version or range>}',
        }),
      );
    }
  }
  return out;
}
