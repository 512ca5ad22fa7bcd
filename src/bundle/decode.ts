/**
 * Reading one file of a registry+v1 bundle the way opm does: apimachinery's
 * `yaml.NewYAMLOrJSONDecoder(r, 30)` (pkg/util/yaml/decoder.go) decoding only the first document,
 * and the few Go `encoding/json` struct decodes opm applies to the result.
 *
 * * JSON or YAML (the stream sniffing and YAML document splitting are src/yaml/stream.ts, shared with
 *   the catalog loader): a stream whose first non-space character within its first 30 bytes is `{` is read
 *   as JSON (one value, Go's `json.Decoder`); if that fails it is re-read as YAML and the JSON error
 *   is kept when YAML fails too. Anything else is YAML: lines are split into documents at lines
 *   starting with `---` (a separator followed by anything but a comment is an error), and the first
 *   non-empty document goes through sigs.k8s.io/yaml (YAMLToJSON: YAML 1.1, then compact JSON with
 *   sorted keys and HTML escaping).
 * * A decoded value is a {@link GoNode}: the value plus the exact text Go's `json.RawMessage` would
 *   hold for it — the verbatim bytes of a JSON file, or the YAMLToJSON encoding for YAML.
 */
import { compareUtf8, formatGoFloat, quoteGoString } from "../gojson/encode.js";
import { findJsonValueEnd, goJsonSyntaxError, skipJsonSpace } from "../gojson/scan.js";
import { GO_STRING, goDecode } from "../gojson/structdecode.js";
import type { JsonObject, JsonValue } from "../fbc/types.js";
import {
  consumeWhitespaceLine,
  firstYamlDocument,
  guessJsonStream,
  jsonFailure,
  parseGoYamlDocument,
} from "../yaml/index.js";
import { goJsonKind } from "../gojson/unmarshal.js";

/** A decoded JSON value and the raw JSON text Go keeps for it (`json.RawMessage`). */
export interface GoNode {
  readonly value: JsonValue;
  /** Object members in the order Go's decoder meets them (file order for JSON, sorted for YAML). */
  readonly entries?: readonly (readonly [string, GoNode])[];
  readonly items?: readonly GoNode[];
  /** True when the value came from YAML (sigs.k8s.io/yaml then turns numbers/bools into strings for string fields). */
  readonly fromYaml: boolean;
  /** The raw JSON text (verbatim for JSON input, compact sorted HTML-escaped for YAML input). */
  raw(): string;
}

export type DecodeResult = { ok: true; node: GoNode; yamlFallback?: () => DecodeResult } | { ok: false; error: string };

/** opm's bundle reader sniffs the first 30 bytes for JSON (`NewYAMLOrJSONDecoder(r, 30)`). */
const PEEK = 30;

/** sigs.k8s.io/yaml.Unmarshal of one document (YAMLToJSON, then the JSON decoder). */
function decodeYamlDoc(doc: string): DecodeResult {
  let value: JsonValue;
  try {
    value = parseGoYamlDocument(doc);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  return { ok: true, node: yamlNode(value) };
}

/**
 * Decodes the first document of a file as opm's `decodeFileFS` does. `{ok: false}` carries the
 * decoder's error text (opm logs it as a warning and skips the file); an empty stream is `EOF`.
 */
export function decodeFirstDocument(text: string): DecodeResult {
  let jsonError: string | undefined;
  let yamlText = text;
  if (guessJsonStream(text, PEEK)) {
    const start = skipJsonSpace(text, 0);
    const syn = goJsonSyntaxError(text, start);
    if (syn === undefined) {
      const end = findJsonValueEnd(text, start);
      // When decoding into the target type fails, the decoder rewinds and reads the stream as YAML.
      const yamlFallback = (): DecodeResult => {
        const first = firstYamlDocument(text.slice(consumeWhitespaceLine(text, 0)));
        return "error" in first ? { ok: false, error: first.error } : decodeYamlDoc(first.doc);
      };
      return { ok: true, node: new JsonParser(text.slice(start, end)).parse(), yamlFallback };
    }
    jsonError = jsonFailure(text, start, syn);
    // The decoder rewinds and reads the stream again as YAML (whitespace up to the first newline eaten).
    yamlText = text.slice(consumeWhitespaceLine(text, 0));
  }
  const first = firstYamlDocument(yamlText);
  if ("error" in first) return { ok: false, error: jsonError ?? first.error };
  if (first.doc.length === 0) return { ok: false, error: jsonError ?? "EOF" };
  const res = decodeYamlDoc(first.doc);
  if (!res.ok && jsonError !== undefined) return { ok: false, error: jsonError };
  return res;
}

// ---------------------------------------------------------------------------------------------
// Nodes

/** Go's json.Marshal of a decoded value: keys sorted, compact, HTML escaping on. */
export function encodeGoJson(v: JsonValue): string {
  switch (typeof v) {
    case "string":
      return quoteGoString(v, true);
    case "number":
      return formatGoFloat(v);
    case "boolean":
      return v ? "true" : "false";
    default: {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        let s = "[";
        for (let i = 0; i < v.length; i++) s += (i > 0 ? "," : "") + encodeGoJson(v[i]);
        return s + "]";
      }
      const keys = Object.keys(v);
      if (keys.length > 1) keys.sort(compareUtf8);
      let s = "{";
      for (let i = 0; i < keys.length; i++)
        s += (i > 0 ? "," : "") + quoteGoString(keys[i], true) + ":" + encodeGoJson(v[keys[i]]);
      return s + "}";
    }
  }
}

/**
 * A manifest as opm holds it (`unstructured.Unstructured`, whose numbers are int64 when their JSON
 * text parses as an integer and float64 otherwise) encoded with json.Marshal. Decoders return
 * values whose negative zeros already follow that rule (see {@link zeroIntegers}).
 */
export function encodeUnstructured(v: JsonValue): string {
  return encodeGoJson(v);
}

/**
 * YAMLToJSON writes a float -0 as `-0`, which the unstructured decoder reads as the integer 0:
 * replaces every -0 in a YAML-derived value (in place) by 0.
 */
export function zeroIntegers(v: JsonValue): JsonValue {
  if (typeof v === "number") return Object.is(v, -0) ? 0 : v;
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++)
      if (typeof v[i] === "number" || (v[i] !== null && typeof v[i] === "object")) v[i] = zeroIntegers(v[i]);
    return v;
  }
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (typeof x === "number" || (x !== null && typeof x === "object")) v[k] = zeroIntegers(x);
  }
  return v;
}

function yamlNode(value: JsonValue): GoNode {
  return valueNode(value, true);
}

/**
 * The node of a value that Go reads from its json.Marshal encoding (keys sorted, HTML escaped):
 * YAMLToJSON output (`fromYaml`), or a manifest re-encoded from its unstructured map.
 */
export function valueNode(value: JsonValue, fromYaml = false): GoNode {
  let entries: [string, GoNode][] | undefined;
  let items: GoNode[] | undefined;
  if (Array.isArray(value)) items = value.map((x) => valueNode(x, fromYaml));
  else if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length > 1) keys.sort(compareUtf8);
    entries = keys.map((k) => [k, valueNode(value[k], fromYaml)]);
  }
  let raw: string | undefined;
  return { value, entries, items, fromYaml, raw: () => (raw ??= encodeGoJson(value)) };
}

/** The node of one syntactically valid JSON value (checked with goJsonSyntaxError first), keeping verbatim texts. */
export function parseJsonNode(text: string): GoNode {
  return new JsonParser(text).parse();
}

/** Parses one syntactically valid JSON value, keeping each value's verbatim text. */
class JsonParser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): GoNode {
    return this.value();
  }

  private ws(): void {
    this.i = skipJsonSpace(this.s, this.i);
  }

  private value(): GoNode {
    this.ws();
    const s = this.s;
    const start = this.i;
    const c = s[start];
    if (c === "{") {
      this.i++;
      const entries: [string, GoNode][] = [];
      const obj: JsonObject = {};
      this.ws();
      if (s[this.i] === "}") this.i++;
      else {
        for (;;) {
          this.ws();
          const kEnd = findJsonValueEnd(s, this.i);
          const key = JSON.parse(s.slice(this.i, kEnd)) as string;
          this.i = kEnd;
          this.ws();
          this.i++; // :
          const v = this.value();
          entries.push([key, v]);
          Object.defineProperty(obj, key, { value: v.value, enumerable: true, writable: true, configurable: true });
          this.ws();
          if (s[this.i++] === "}") break;
        }
      }
      return this.node(obj, start, entries, undefined);
    }
    if (c === "[") {
      this.i++;
      const items: GoNode[] = [];
      this.ws();
      if (s[this.i] === "]") this.i++;
      else {
        for (;;) {
          items.push(this.value());
          this.ws();
          if (s[this.i++] === "]") break;
        }
      }
      return this.node(
        items.map((x) => x.value),
        start,
        undefined,
        items,
      );
    }
    const end = findJsonValueEnd(s, start);
    this.i = end;
    let v = JSON.parse(s.slice(start, end)) as JsonValue;
    // The literal "-0" is an integer (0) to the unstructured decoder; "-0.0" stays a float -0.
    if (v === 0 && Object.is(v, -0) && end - start === 2) v = 0;
    return this.node(v, start, undefined, undefined);
  }

  private node(
    value: JsonValue,
    start: number,
    entries: [string, GoNode][] | undefined,
    items: GoNode[] | undefined,
  ): GoNode {
    const text = this.s.slice(start, this.i);
    return { value, entries, items, fromYaml: false, raw: () => text };
  }
}

// ---------------------------------------------------------------------------------------------
// Go encoding/json helpers over nodes (struct decoding is src/gojson/structdecode.ts)

/** Member `name` of a Go `map[string]…` (exact key; the last duplicate wins). */
export function mapField(node: GoNode, name: string): GoNode | undefined {
  if (!node.entries) return undefined;
  let found: GoNode | undefined;
  for (const [k, v] of node.entries) if (k === name) found = v;
  return found;
}

/**
 * A Go `string` field: the string, `""` for null/absent, or a type error. Numbers and booleans read
 * from YAML are first turned into strings by sigs.k8s.io/yaml (jsonTarget conversion): goDecode's rules.
 */
export function stringField(node: GoNode | undefined): { ok: true; value: string } | { ok: false; type: string } {
  if (node === undefined) return { ok: true, value: "" };
  const r = goDecode(node.value, GO_STRING, { coerceStrings: node.fromYaml });
  return r.ok ? { ok: true, value: r.value as string } : { ok: false, type: goJsonKind(node.value) };
}
