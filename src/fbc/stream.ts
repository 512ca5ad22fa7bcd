/**
 * Splitting one file (or standard input) into blobs exactly as opm's loader does with
 * apimachinery's YAMLOrJSONDecoder: a stream that starts with `{` is read as concatenated JSON
 * objects (and falls back to YAML after at most one good object), anything else as YAML
 * documents separated by `---` lines. Each blob comes out as a parsed JSON value with the line it
 * starts on; each failure as a located error carrying opm's message.
 */
import { parseGoYamlDocument } from "../yaml/index.js";
import { encodeSortedCompact, indentCompactJson } from "../gojson/encode.js";
import { hasJsonPrefix, isGoSpace } from "../gojson/unicode.js";
import {
  findJsonValueEnd,
  goJsonSyntaxError,
  MAX_NESTING_DEPTH,
  scanJsonContainer,
  type ScannedValue,
} from "../gojson/scan.js";
import type { JsonValue } from "./types.js";
import { goJsonKind, goUnmarshalTypeError } from "../gojson/unmarshal.js";

export interface StreamBlob {
  kind: "blob";
  value: JsonValue;
  /** 1-based line where the blob starts. */
  line: number;
  /** 0-based index in the stream. */
  index: number;
  /** Whether the blob came from a YAML document (opm then prefixes Meta errors). */
  yaml: boolean;
  /** The blob's text (JSON object text, or the YAML document), for error reports. */
}

export interface StreamFailure {
  kind: "error";
  /** Machine code: FBC_YAML_SYNTAX, FBC_JSON_SYNTAX, FBC_YAML_SEPARATOR. */
  code: string;
  /** opm's error text. */
  message: string;
  line: number;
  index: number;
  /** When true, the rest of the stream could not be read. */
  fatal: boolean;
}

export type StreamItem = StreamBlob | StreamFailure;

/** The first non-space character within the first 4096 bytes is `{`. */
export function looksLikeJson(text: string): boolean {
  return hasJsonPrefix(text, 4096);
}

class LineCounter {
  private pos = 0;
  private line = 1;
  constructor(private readonly text: string) {}
  /** 1-based line of offset `off` (offsets must not decrease between calls). */
  at(off: number): number {
    if (off < this.pos) {
      this.pos = 0;
      this.line = 1;
    }
    let i = this.text.indexOf("\n", this.pos);
    while (i !== -1 && i < off) {
      this.line++;
      i = this.text.indexOf("\n", i + 1);
    }
    this.pos = off;
    return this.line;
  }
}

/** Decodes the whole stream; items come in stream order. Never throws for bad input. */
export function decodeStream(text: string): StreamItem[] {
  const out: StreamItem[] = [];
  forEachStreamItem(text, (item) => {
    out.push(item);
  });
  return out;
}

/**
 * {@link decodeStream} handing each item to `emit` as soon as it is parsed, so that a caller that
 * converts blobs into something else (the loader) lets each parsed blob die young instead of
 * keeping every blob of the file alive until the whole file is parsed.
 */
export function forEachStreamItem(text: string, emit: (item: StreamItem) => void): void {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let index = 0;
  if (looksLikeJson(text)) {
    const lines = new LineCounter(text);
    const scanned: ScannedValue = { end: 0, newlines: 0 };
    // Lines are counted by the scanner while it finds each value's end (no second pass).
    let line = 1;
    let pos = 0;
    let count = 0;
    for (;;) {
      let start = pos;
      while (start < text.length) {
        const c = text.charCodeAt(start);
        if (c === 0x0a) line++;
        else if (c !== 0x20 && c !== 0x09 && c !== 0x0d) break;
        start++;
      }
      if (start >= text.length) return;
      const first = text.charCodeAt(start);
      let end: number;
      let valueLines = 0;
      if (first === 0x7b || first === 0x5b) {
        scanJsonContainer(text, start, scanned);
        end = scanned.end;
        valueLines = scanned.newlines;
      } else {
        end = findJsonValueEnd(text, start);
      }
      let value: JsonValue | undefined;
      let failure: string | undefined;
      if (end >= 0 && (scanned.deepest ?? 0) > MAX_NESTING_DEPTH && (first === 0x7b || first === 0x5b)) {
        failure = jsonFailure(text, start); // Go refuses nesting deeper than 10000
      } else if (end >= 0) {
        try {
          value = JSON.parse(text.slice(start, end)) as JsonValue;
        } catch {
          failure = jsonFailure(text, start);
        }
      } else {
        failure = jsonFailure(text, start);
      }
      if (failure === undefined) {
        emit({ kind: "blob", value: value as JsonValue, line, index: index++, yaml: false });
        line += valueLines;
        count++;
        pos = end;
        continue;
      }
      if (count > 1) {
        emit({ kind: "error", code: "FBC_JSON_SYNTAX", message: failure, line: lines.at(start), index, fatal: true });
        return;
      }
      // Ambiguous stream: opm retries the rest as YAML, reporting the JSON error if YAML fails too.
      const yamlFrom = consumeWhitespaceLine(text, pos);
      const rest: StreamItem[] = [];
      decodeYaml(text, yamlFrom, (item) => rest.push(item), index, lines.at(yamlFrom));
      if (rest.length > 0 && rest[0].kind === "error") {
        rest[0] = { ...rest[0], code: "FBC_JSON_SYNTAX", message: failure, line: lines.at(start) };
      }
      for (const item of rest) emit(item);
      return;
    }
  }
  decodeYaml(text, 0, emit, index, 1);
}

/** Go's decoder error for the value at `start`: a syntax error (offset counted from the stream start) or EOF. */
function jsonFailure(text: string, start: number): string {
  const syn = goJsonSyntaxError(text, start);
  if (!syn || syn.eof) return "unexpected EOF";
  return `json: offset ${Buffer.byteLength(text.slice(0, start)) + syn.offset}: ${syn.message}`;
}

/** apimachinery consumeWhitespace: eat whitespace up to and including the first newline. */
function consumeWhitespaceLine(text: string, pos: number): number {
  let i = pos;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (!isGoSpace(c)) return i;
    i++;
    if (c === 0x0a) return i;
  }
  return i;
}

/**
 * YAML mode: documents are split at lines starting with `---` (the rest of such a line may only be
 * blank or a comment), empty documents are skipped, each document is converted as sigs.k8s.io/yaml
 * does.
 */
function decodeYaml(
  text: string,
  from: number,
  emit: (item: StreamItem) => void,
  index: number,
  firstLine: number,
): void {
  if (text.includes("\r")) {
    // bufio.ReadLine drops the `\r` of `\r\n` line ends.
    const head = text.slice(0, from);
    text = head + text.slice(from).replace(/\r\n/g, "\n");
  }
  const n = text.length;
  let line = firstLine;
  let docStart = from;
  let docLine = line;
  let pos = from;
  const flush = (end: number): boolean => {
    if (end > docStart) {
      const doc = text.slice(docStart, end);
      try {
        const value = parseGoYamlDocument(doc);
        emit({ kind: "blob", value, line: docLine, index: index++, yaml: true });
      } catch (e) {
        emit({
          kind: "error",
          code: "FBC_YAML_SYNTAX",
          message: (e as Error).message,
          line: clampLine(doc, docLine, (e as { line?: number }).line),
          index: index++,
          fatal: false,
        });
      }
    }
    return true;
  };
  while (pos < n) {
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = n;
    if (text.startsWith("---", pos)) {
      const rest = text.slice(pos + 3, eol).trim();
      if (rest.length > 0 && rest[0] !== "#") {
        flush(pos);
        emit({
          kind: "error",
          code: "FBC_YAML_SEPARATOR",
          message: `invalid Yaml document separator: ${rest}`,
          line,
          index,
          fatal: true,
        });
        return;
      }
      flush(pos);
      docStart = eol + 1;
      docLine = line + 1;
    }
    pos = eol + 1;
    line++;
    if (eol === n) break;
    // fast path: jump to the next line that starts with '---'
    const next = text.indexOf("\n---", pos - 1);
    if (next < 0) {
      pos = n;
      break;
    }
    if (next + 1 > pos) {
      line += countNewlines(text, pos, next + 1);
      pos = next + 1;
    }
  }
  flush(n);
}

/** The file line of a 1-based line inside a document, kept within the document's own lines. */
function clampLine(doc: string, docLine: number, line: number | undefined): number {
  if (typeof line !== "number" || line < 1) return docLine;
  let lines = countNewlines(doc, 0, doc.length);
  if (!doc.endsWith("\n")) lines++;
  return docLine + Math.min(line, Math.max(lines, 1)) - 1;
}

function countNewlines(text: string, from: number, to: number): number {
  let c = 0;
  let i = text.indexOf("\n", from);
  while (i !== -1 && i < to) {
    c++;
    i = text.indexOf("\n", i + 1);
  }
  return c;
}

/** opm's pretty JSON error for a top-level value that is not an object (pkg/prettyunmarshaler). */
export function notAnObjectMessage(value: JsonValue, rawText: string | undefined, yaml: boolean): string {
  const kind = goJsonKind(value); // never "object" here
  const data =
    rawText ??
    encodeSortedCompact(value).replace(/[<>&]/g, (c) => (c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026"));
  const base = goUnmarshalTypeError(kind, "map[string]interface {}");
  const offset = kind === "array" ? 1 : Buffer.byteLength(data);
  const marker = " <==";
  const pretty = indentCompactJson(data, "    ");
  let msg: string;
  if (offset === Buffer.byteLength(data))
    msg = `${base} at offset ${offset} (indicated by${marker})\n${pretty}${marker}`;
  else msg = `${base} at offset ${offset} (indicated by${marker})\n${pretty.slice(0, 1)}${marker} ${pretty.slice(1)}`;
  return yaml ? `error unmarshaling JSON: while decoding JSON: ${msg}` : msg;
}
