/**
 * A catalog as the resolver reads it, without what it never reads: a bundle's `olm.bundle.object`
 * manifests (base64 CRDs and CSVs, nearly all of an older catalog's bytes) matter to resolution only
 * through the CSV's `spec.minKubeVersion` (catalog.ts, minKubeVersionOf), and a resolveset's entries
 * leave them out. Each bundle's manifests become one CSV carrying just that field (or none, when the
 * bundle has no CSV or its CSV names no version), so that a process holding catalogs for resolution
 * (the cluster's resolver worker) holds a fraction of them; every answer stays the same.
 */
import { csvJsonOfObjectValues } from "../fbc/objects.js";
import { PROPERTY_BUNDLE_OBJECT } from "../fbc/properties.js";
import type { JsonValue } from "../fbc/types.js";

interface LineBlob {
  schema?: unknown;
  properties?: { type?: unknown; value?: JsonValue }[];
}

/** The CSV's `spec.minKubeVersion` when it is a string (what the resolver reads), else undefined. */
function minKubeOfCsv(values: JsonValue[]): string | undefined {
  try {
    const csv = JSON.parse(csvJsonOfObjectValues(values)) as { spec?: { minKubeVersion?: unknown } } | null;
    const v = csv?.spec?.minKubeVersion;
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** One JSON line of a catalog, its bundle manifests reduced to what resolution reads (other lines as they are). */
export function slimLineForResolution(line: string): string {
  if (!line.includes(`"${PROPERTY_BUNDLE_OBJECT}"`)) return line;
  let blob: LineBlob;
  try {
    blob = JSON.parse(line) as LineBlob;
  } catch {
    return line;
  }
  if (blob === null || blob.schema !== "olm.bundle" || !Array.isArray(blob.properties)) return line;
  // rewritten only when JavaScript writes the blob back as it was (no number beyond double precision,
  // no escape written otherwise): the rest of the line is then the same after the rewrite
  if (JSON.stringify(blob) !== line) return line;
  const objects = blob.properties.filter((p) => p?.type === PROPERTY_BUNDLE_OBJECT);
  if (objects.length === 0) return line;
  const minKube = minKubeOfCsv(objects.map((p) => p.value ?? null));
  const csv =
    minKube === undefined
      ? undefined
      : {
          type: PROPERTY_BUNDLE_OBJECT,
          value: {
            data: Buffer.from(
              JSON.stringify({ kind: "ClusterServiceVersion", spec: { minKubeVersion: minKube } }),
            ).toString("base64"),
          },
        };
  const first = blob.properties.indexOf(objects[0]);
  const properties = blob.properties.filter((p) => p?.type !== PROPERTY_BUNDLE_OBJECT);
  if (csv) properties.splice(Math.min(first, properties.length), 0, csv);
  return JSON.stringify({ ...blob, properties });
}

/** A catalog's JSON Lines reduced for resolution (see the module comment). */
export function slimCatalogForResolution(jsonl: string): string {
  if (!jsonl.includes(`"${PROPERTY_BUNDLE_OBJECT}"`)) return jsonl;
  return jsonl.split("\n").map(slimLineForResolution).join("\n");
}

/**
 * The lines of a catalog's UTF-8 bytes read a piece at a time (a served revision's file), each reduced
 * as {@link slimLineForResolution} does, handed to `onLine` one after the other (the last one after the
 * last newline too, empty when the bytes end with one): the whole document is never held, only the line
 * being read. The pieces may be cut anywhere (within a line or a character), and a piece's memory may be
 * reused for the next one once it is handed over.
 */
export function forEachSlimLineForResolution(chunks: Iterable<Uint8Array>, onLine: (line: string) => void): void {
  // the start of a line whose end is in a later piece (copied: the piece may be reused)
  let carry: Buffer[] = [];
  let carried = 0;
  for (const chunk of chunks) {
    const piece = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let from = 0;
    for (let nl = piece.indexOf(10); nl >= 0; nl = piece.indexOf(10, from)) {
      const line =
        carried === 0
          ? piece.toString("utf8", from, nl)
          : Buffer.concat([...carry, piece.subarray(from, nl)], carried + nl - from).toString("utf8");
      carry = [];
      carried = 0;
      onLine(slimLineForResolution(line));
      from = nl + 1;
    }
    if (from < piece.length) {
      carry.push(Buffer.from(piece.subarray(from)));
      carried += piece.length - from;
    }
  }
  onLine(slimLineForResolution(Buffer.concat(carry, carried).toString("utf8")));
}

/** {@link slimCatalogForResolution} of a catalog's bytes read a piece at a time: the same text. */
export function slimCatalogChunksForResolution(chunks: Iterable<Uint8Array>): string {
  const out: string[] = [];
  forEachSlimLineForResolution(chunks, (line) => out.push(line));
  return out.join("\n");
}
