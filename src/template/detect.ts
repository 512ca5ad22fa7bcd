/**
 * Template types and schema auto-detection (operator-registry alpha/template/registry.go and
 * schema.go): the schema of the first document picks the template.
 */
import { OpcatError } from "../errors/index.js";
import { firstStreamDocument } from "./document.js";
import { goDecode, type GoType } from "../gojson/structdecode.js";

export const SCHEMA_BASIC = "olm.template.basic";
export const SCHEMA_SEMVER = "olm.semver";
export const SCHEMA_SUBSTITUTES = "olm.template.substitutes";
/** opcat's graph template (the "comprehensive template", docs/templates.md#graph-template; not in opm). */
export const SCHEMA_GRAPH = "olm.template.graph";
/** The schema of its first sketch, read as the graph template. */
export const SCHEMA_GRAPH_ALIAS = "olm.template.goodstuff";

/** Registered template schemas, as opm registers them. */
export const TEMPLATE_SCHEMAS: readonly string[] = Object.freeze([SCHEMA_BASIC, SCHEMA_SEMVER, SCHEMA_SUBSTITUTES]);

/** Template schemas opcat adds to opm's (detected and rendered, but not listed in opm's error texts). */
export const EXTRA_TEMPLATE_SCHEMAS: readonly string[] = Object.freeze([SCHEMA_GRAPH]);

/** A template's type: the last dot-separated segment of its schema (`olm.semver` → `semver`). */
export function typeFromSchema(schema: string): string {
  return schema.slice(schema.lastIndexOf(".") + 1);
}

/** Supported types in sorted order: basic, semver, substitutes. */
export const TEMPLATE_TYPES: readonly string[] = Object.freeze(TEMPLATE_SCHEMAS.map(typeFromSchema).sort());

/** Every type opcat renders: opm's plus the extra ones (`graph`), sorted. */
export const ALL_TEMPLATE_TYPES: readonly string[] = Object.freeze(
  [...TEMPLATE_SCHEMAS, ...EXTRA_TEMPLATE_SCHEMAS].map(typeFromSchema).sort(),
);

const SCHEMA_PROBE: GoType = {
  kind: "struct",
  goName: 'struct { Schema string "json:\\"schema\\"" }',
  shortName: "",
  fields: [{ json: "schema", type: { kind: "string", goName: "string" } }],
};

function detectError(code: string, detail: string): OpcatError {
  return new OpcatError(code, `auto-detecting template type: ${detail}`, { kind: "invalid" });
}

/**
 * The `schema` of the first YAML/JSON document of a template (matched case-insensitively as Go's
 * JSON decoding does), if it is a registered template schema. Errors carry opm's texts:
 * `auto-detecting template type: decoding template input: <err>` (empty input: `EOF`),
 * `…: unmarshalling template schema: <err>`, `…: template input missing required 'schema' field`,
 * `…: unknown template schema: <schema>`. The graph template's alias schema gives SCHEMA_GRAPH.
 */
export function detectTemplateSchema(text: string): string {
  const doc = firstStreamDocument(text);
  if (doc.kind === "eof") throw detectError("TEMPLATE_DECODE", "decoding template input: EOF");
  if (doc.kind === "error") throw detectError("TEMPLATE_DECODE", `decoding template input: ${doc.message}`);
  if (doc.kind === "empty")
    throw detectError("TEMPLATE_DECODE", "unmarshalling template schema: unexpected end of JSON input");
  const r = goDecode(doc.value, SCHEMA_PROBE);
  if (!r.ok) throw detectError("TEMPLATE_DECODE", `unmarshalling template schema: ${r.error}`);
  const schema = (r.value as { schema: string }).schema;
  if (schema === "") throw detectError("TEMPLATE_MISSING_SCHEMA", "template input missing required 'schema' field");
  if (schema === SCHEMA_GRAPH_ALIAS) return SCHEMA_GRAPH;
  if (!TEMPLATE_SCHEMAS.includes(schema) && !EXTRA_TEMPLATE_SCHEMAS.includes(schema))
    throw detectError("TEMPLATE_UNKNOWN_SCHEMA", `unknown template schema: ${schema}`);
  return schema;
}
