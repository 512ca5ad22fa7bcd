/**
 * The basic template (`olm.template.basic`, operator-registry alpha/template/basic/basic.go): FBC
 * blobs whose `olm.bundle` entries name only an image; each is replaced by the rendered bundle.
 */
import { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import { notAnObjectMessage } from "../fbc/stream.js";
import { encodeSortedCompact } from "../gojson/encode.js";
import { goQuote } from "../gojson/fmt.js";
import type { Bundle, DeclarativeConfig, JsonValue } from "../fbc/types.js";
import { SCHEMA_BASIC } from "./detect.js";
import { firstStreamDocument } from "./document.js";
import { goDecode, type GoType } from "../gojson/structdecode.js";
import type { BundleSource } from "./source/source.js";

const BASIC_TEMPLATE_DATA: GoType = {
  kind: "struct",
  goName: "basic.BasicTemplateData",
  shortName: "BasicTemplateData",
  fields: [
    { json: "schema", type: { kind: "string", goName: "string" } },
    {
      json: "entries",
      type: { kind: "slice", goName: "[]*declcfg.Meta", elem: { kind: "custom", goName: "*declcfg.Meta" } },
    },
  ],
};

/** Problems the loader reports while reading a blob as declcfg.Meta (before typed decoding). */
const META_CODES = new Set(["FBC_DUPLICATE_KEYS", "FBC_RESERVED_KEY_TYPE", "FBC_NOT_AN_OBJECT"]);

function fail(code: string, message: string): OpcatError {
  return new OpcatError(code, message, { kind: "invalid" });
}

/** Parses the template and builds its DeclarativeConfig (LoadSlice), bundles still unrendered. */
function parseBasic(text: string): DeclarativeConfig {
  return parseEntriesTemplate(text, BASIC_TEMPLATE_DATA, SCHEMA_BASIC).cfg;
}

/**
 * Reads a template whose `entries` are FBC blobs (basic, substitutes) as opm does: the first
 * YAML/JSON document decoded leniently into `type` (which must have an `entries` field of
 * `*declcfg.Meta` elements), the schema checked, the entries loaded (LoadSlice). Decoding and schema
 * errors have codes TEMPLATE_DECODE/TEMPLATE_SCHEMA; loader problems keep the loader's code.
 */
export function parseEntriesTemplate(
  text: string,
  type: GoType,
  expectedSchema: string,
): { cfg: DeclarativeConfig; value: Record<string, unknown> } {
  const doc = firstStreamDocument(text);
  if (doc.kind === "eof") throw fail("TEMPLATE_DECODE", "decoding template schema: EOF");
  if (doc.kind === "error") throw fail("TEMPLATE_DECODE", `decoding template schema: ${doc.message}`);
  if (doc.kind === "empty") throw fail("TEMPLATE_DECODE", "unmarshalling template: unexpected end of JSON input");

  // Entries are read as declcfg.Meta by the loader: non-objects, duplicate keys and non-string
  // reserved keys fail while unmarshalling (first one aborts); the rest fail in LoadSlice.
  const objects: JsonValue[] = [];
  const entryOfBlob: number[] = [];
  let entryIndex = 0;
  const r = goDecode(doc.value, type, {
    custom: (v) => {
      const i = entryIndex++;
      if (v === null) return undefined;
      if (typeof v !== "object" || Array.isArray(v)) return notAnObjectMessage(v, undefined, false);
      objects.push(v);
      entryOfBlob.push(i);
      return undefined;
    },
  });
  // A null entry makes opm crash (nil pointer); report it instead.
  const entries = r.ok ? ((r.value as { entries: JsonValue[] | null }).entries ?? []) : [];
  const loaded = loadText(objects.map((o) => encodeSortedCompact(o)).join("\n"), "-");
  const byEntry = new Map<number, (typeof loaded.problems)[number]>();
  for (const p of loaded.problems) {
    const i = p.loc ? entryOfBlob[p.loc.index] : undefined;
    if (i !== undefined && !byEntry.has(i)) byEntry.set(i, p);
  }
  if (!r.ok) {
    // A Meta error met before the aborting one would have aborted first.
    for (const [i, p] of [...byEntry].sort((a, b) => a[0] - b[0])) {
      if (i < entryIndex && META_CODES.has(p.code))
        throw fail("TEMPLATE_DECODE", `unmarshalling template: ${p.message}`);
    }
    throw fail("TEMPLATE_DECODE", `unmarshalling template: ${r.error}`);
  }
  const sorted = [...byEntry].sort((a, b) => a[0] - b[0]);
  for (const [, p] of sorted)
    if (META_CODES.has(p.code)) throw fail("TEMPLATE_DECODE", `unmarshalling template: ${p.message}`);
  const schema = (r.value as { schema: string }).schema;
  if (schema !== expectedSchema)
    throw fail(
      "TEMPLATE_SCHEMA",
      `template has unknown schema (${goQuote(schema)}), should be ${goQuote(expectedSchema)}`,
    );
  if (entries.some((e) => e === null)) throw fail("TEMPLATE_DECODE", "unmarshalling template: an entry is null");
  if (sorted.length > 0) throw new OpcatError(sorted[0][1].code, sorted[0][1].message, { kind: "invalid" });

  const cfg = loaded.config;
  for (const list of [cfg.packages, cfg.channels, cfg.bundles, cfg.deprecations, cfg.others])
    for (const b of list) delete b.loc;
  return { cfg, value: r.value as Record<string, unknown> };
}

/** opm's isBundleTemplate: a schema and an image, and no package, properties or related images. */
function isBundleTemplate(b: Bundle): boolean {
  return (
    b.schema !== "" && b.image !== "" && b.package === "" && b.properties.length === 0 && b.relatedImages.length === 0
  );
}

/**
 * Renders a basic template: every `olm.bundle` entry (which may carry only `schema`, `image` and a
 * discarded `name`) is replaced, in order, by the bundle `src` renders from its image; packages,
 * channels, deprecations and other blobs pass through. Nothing is validated. Errors are opm's
 * (`decoding template schema: …`, `unmarshalling template: …`, `template has unknown schema (…)`,
 * `unexpected fields present in basic template bundle`, loader errors, or the source's error).
 */
export async function renderBasicTemplate(text: string, src: BundleSource): Promise<DeclarativeConfig> {
  const cfg = parseBasic(text);
  const out: Bundle[] = [];
  if (src.prefetch) {
    const bad = cfg.bundles.findIndex((b) => !isBundleTemplate(b));
    src.prefetch(cfg.bundles.slice(0, bad < 0 ? undefined : bad).map((b) => b.image));
  }
  for (const b of cfg.bundles) {
    if (!isBundleTemplate(b))
      throw fail("TEMPLATE_BUNDLE_FIELDS", "unexpected fields present in basic template bundle");
    out.push(await src.render(b.image));
  }
  cfg.bundles = out;
  return cfg;
}
