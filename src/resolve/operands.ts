/**
 * Operand versioning (docs/operands.md) as the resolver sees it: the `olm.operand` / `olm.relatedimages`
 * entries of a catalog as SAT candidates. Decoding and validation of the blobs and of the bundle
 * properties live in the FBC core (src/fbc/operands.ts) and are re-exported here.
 */
import { goQuote } from "../gojson/fmt.js";
import {
  decodeOperandBlob,
  SCHEMA_OPERAND,
  SCHEMA_RELATED_IMAGES,
  type OperandBlob,
  type OperandImage,
} from "../fbc/operands.js";
import type { Meta } from "../fbc/types.js";
import { tryParseVersion, type Version } from "../semver/index.js";

export {
  decodeOperandBlob,
  decodeOperandReference,
  operandProblems,
  operandReferencesOf,
  OPERAND_PROPERTY_TYPES,
  parseOperandRange,
  SCHEMA_OPERAND,
  SCHEMA_RELATED_IMAGES,
  type OperandBlob,
  type OperandImage,
  type OperandReference,
} from "../fbc/operands.js";

/** An operand or related-image entry of one catalog, as the resolver sees it. */
export interface OperandEntry {
  /** Unique within a catalog set: `olm.operand etcd 3.1.1 (<catalog>)`, `… for package p (…)`. */
  readonly id: string;
  readonly schema: OperandBlob["schema"];
  readonly catalog: string;
  readonly priority: number;
  readonly name: string;
  readonly package: string;
  readonly version: Version;
  readonly versionText: string;
  readonly images: readonly OperandImage[];
  /** Keys of what the entry competes for (see Entity.keys). */
  readonly keys: readonly string[];
  /** Position in the catalog set's entry list. */
  readonly ordinal: number;
}

/** `olm.operand etcd 3.1.1` / `olm.relatedimages etcdoperator-related 0.9.0`. */
export function entryText(e: Pick<OperandEntry, "schema" | "name" | "versionText">): string {
  return `${e.schema} ${e.name} ${e.versionText}`;
}

/** Builds the entries of one catalog's valid blobs (invalid ones are skipped with a warning). */
export function operandEntries(
  catalog: string,
  priority: number,
  others: readonly Meta[],
  start: number,
  warnings: string[],
): OperandEntry[] {
  const out: OperandEntry[] = [];
  const seen = new Set<string>();
  for (const m of others) {
    if (m.schema !== SCHEMA_OPERAND && m.schema !== SCHEMA_RELATED_IMAGES) continue;
    const { blob, findings } = decodeOperandBlob(m.schema, m.blob.value, m.loc);
    if (!blob) {
      warnings.push(`catalog ${catalog}: ${m.schema} ${goQuote(m.name)} ignored: ${findings[0]?.message ?? "invalid"}`);
      continue;
    }
    const version = tryParseVersion(blob.version) as Version;
    const versionText = version.toString();
    const id =
      `${blob.schema} ${blob.name} ` +
      `${versionText}${blob.package ? ` for package ${blob.package}` : ""} (${catalog})`;
    if (seen.has(id)) {
      warnings.push(
        `catalog ${catalog}: duplicate ${blob.schema} ${goQuote(blob.name)} version ${versionText} ignored`,
      );
      continue;
    }
    seen.add(id);
    // Related-image entries of one name share a configuration on the cluster: one version at most.
    const key =
      blob.schema === SCHEMA_OPERAND
        ? `operand:${blob.package}/${blob.name}/${versionText}`
        : `relatedimages:${blob.name}`;
    out.push({
      id,
      schema: blob.schema,
      catalog,
      priority,
      name: blob.name,
      package: blob.package,
      version,
      versionText,
      images: blob.images,
      keys: [key],
      ordinal: start + out.length,
    });
  }
  return out;
}
