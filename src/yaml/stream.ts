/**
 * The one port of apimachinery's YAML-or-JSON stream reading (k8s.io/apimachinery/pkg/util/yaml,
 * decoder.go), which opm uses for catalogs (`declcfg.LoadReader`, 4096-byte sniff), bundle manifests
 * (`NewYAMLOrJSONDecoder(r, 30)`, first document only) and template detection (first document only):
 *
 * * {@link guessJsonStream}: GuessJSONStream — the stream is JSON when its first non-space character
 *   (unicode.IsSpace) within the first `size` bytes is `{`.
 * * {@link forEachYamlDocument} / {@link firstYamlDocument}: NewYAMLReader — lines (bufio.ReadLine:
 *   `\r\n` reads as `\n`, every line gets a `\n`) are gathered into documents that end at a line
 *   starting with `---` (only blanks or a comment may follow, else `invalid Yaml document separator`).
 *   A separator line met while the document is still empty is kept in it; one that ends a document is
 *   consumed.
 * * {@link forEachStreamItem}: YAMLOrJSONDecoder.Decode in a loop — concatenated JSON values while
 *   the stream is JSON; after a failure with at most one value read, the rest (whitespace up to the
 *   first newline eaten) is read as YAML and the JSON error is reported if YAML fails too; each YAML
 *   document is converted as sigs.k8s.io/yaml does ({@link parseGoYamlDocument}). Items carry the
 *   1-based line they start on (the catalog loader's per-blob lines).
 */
import {
  findJsonValueEnd,
  goJsonSyntaxError,
  MAX_NESTING_DEPTH,
  scanJsonContainer,
  type ScannedValue,
} from "../gojson/scan.js";
import { goTrimSpace, isGoSpace } from "../gojson/unicode.js";
import type { JsonValue } from "./emit.js";
import { parseGoYamlDocument } from "./load.js";

export interface StreamBlob {
  kind: "blob";
  value: JsonValue;
  /** 1-based line where the blob starts. */
  line: number;
  /** 0-based index in the stream. */
  index: number;
  /** Whether the blob came from a YAML document (opm then prefixes Meta errors). */
  yaml: boolean;
}

export interface StreamFailure {
  kind: "error";
  /** Machine code (the catalog loader's): FBC_YAML_SYNTAX, FBC_JSON_SYNTAX, FBC_YAML_SEPARATOR. */
  code: string;
  /** opm's error text. */
  message: string;
  line: number;
  index: number;
  /** When true, the rest of the stream could not be read. */
  fatal: boolean;
  /**
   * A YAML syntax error's "line N" (go-yaml's, in the message) and the file line `start` where the
   * document it counts from begins.
   */
  inDocument?: { start: number; line: number };
}

export type StreamItem = StreamBlob | StreamFailure;

/** The sniff window opm's catalog loader (and template reader) gives NewYAMLOrJSONDecoder. */
const CATALOG_SNIFF_BYTES = 4096;

/**
 * GuessJSONStream: `{` is the first non-`unicode.IsSpace` character within the first `size` bytes
 * (UTF-8) of the stream.
 */
export function guessJsonStream(text: string, size: number): boolean {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes < size; ) {
    const cp = text.codePointAt(i) as number;
    const width = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    // A rune cut by the window decodes as RuneError, which is not a space.
    if (bytes + width > size) return false;
    if (!isGoSpace(cp)) return cp === 0x7b;
    bytes += width;
    i += cp > 0xffff ? 2 : 1;
  }
  return false;
}

/** A bad separator line: YAMLReader.Read's error and the line it is on. */
interface SeparatorError {
  message: string;
  line: number;
}

/**
 * YAMLReader.Read in a loop over `text` from offset `from` (a line start, on line `firstLine`):
 * each document's text (lines ending in `\n`), the line it starts on and whether its first line is
 * a separator kept in it (`opened`) go to `emit`, which may return false to stop. Returns the bad
 * separator that ended the stream, if any (the document being gathered then is lost, as in Go).
 */
function forEachYamlDocument(
  text: string,
  from: number,
  firstLine: number,
  emit: (doc: string, line: number, opened: boolean) => boolean | void,
): SeparatorError | undefined {
  if (text.includes("\r", from)) {
    // bufio.ReadLine drops the `\r` of `\r\n` line ends.
    text = text.slice(0, from) + text.slice(from).replace(/\r\n/g, "\n");
  }
  const n = text.length;
  let line = firstLine;
  let docStart = from;
  let docLine = firstLine;
  let opened = false;
  let pos = from;
  while (pos < n) {
    // pos is at the start of `line`
    if (text.startsWith("---", pos)) {
      let eol = text.indexOf("\n", pos);
      if (eol < 0) eol = n;
      const rest = goTrimSpace(text.slice(pos + 3, eol));
      if (rest.length > 0 && rest[0] !== "#") return { message: `invalid Yaml document separator: ${rest}`, line };
      if (pos > docStart) {
        if (emit(text.slice(docStart, pos), docLine, opened) === false) return undefined;
        docStart = eol + 1;
        docLine = line + 1;
        opened = false;
      } else if (eol === n) {
        return undefined;
      } else {
        opened = true; // a separator opening an empty document stays in it
      }
    }
    // fast path: jump to the next line that starts with '---'
    const next = text.indexOf("\n---", pos);
    if (next < 0) break;
    line += countNewlines(text, pos, next + 1);
    pos = next + 1;
  }
  if (docStart < n) {
    const doc = text.slice(docStart);
    emit(doc.endsWith("\n") ? doc : doc + "\n", docLine, opened);
  }
  return undefined;
}

/**
 * The first document YAMLReader.Read returns (`""` when the stream has none), or its error for a
 * bad separator line.
 */
export function firstYamlDocument(text: string): { doc: string } | { error: string } {
  let first = "";
  const err = forEachYamlDocument(text, 0, 1, (doc) => {
    first = doc;
    return false;
  });
  return err !== undefined ? { error: err.message } : { doc: first };
}

/**
 * YAMLOrJSONDecoder.consumeWhitespace after a failed JSON decode: eats whitespace up to and
 * including the first newline; returns the offset where YAML reading starts.
 */
export function consumeWhitespaceLine(text: string, pos: number): number {
  let i = pos;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (!isGoSpace(c)) return i;
    i++;
    if (c === 0x0a) return i;
  }
  return i;
}

/** Decodes the whole stream; items come in stream order. Never throws for bad input. */
export function decodeStream(text: string, sniffBytes = CATALOG_SNIFF_BYTES): StreamItem[] {
  const out: StreamItem[] = [];
  forEachStreamItem(
    text,
    (item) => {
      out.push(item);
    },
    sniffBytes,
  );
  return out;
}

/** The first item of the stream (what one YAMLOrJSONDecoder.Decode gives), or undefined at EOF. */
export function firstStreamItem(text: string, sniffBytes = CATALOG_SNIFF_BYTES): StreamItem | undefined {
  let first: StreamItem | undefined;
  forEachStreamItem(
    text,
    (item) => {
      first = item;
      return false;
    },
    sniffBytes,
  );
  return first;
}

/**
 * {@link decodeStream} handing each item to `emit` as soon as it is parsed, so that a caller that
 * converts blobs into something else (the loader) lets each parsed blob die young instead of
 * keeping every blob of the file alive until the whole file is parsed. `emit` may return false to
 * stop reading.
 */
export function forEachStreamItem(
  text: string,
  emit: (item: StreamItem) => boolean | void,
  sniffBytes = CATALOG_SNIFF_BYTES,
): void {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let index = 0;
  if (guessJsonStream(text, sniffBytes)) {
    const scanned: ScannedValue = { end: 0, newlines: 0 };
    // Lines are counted by the scanner while it finds each value's end (no second pass): `line` is
    // the line of `start` below.
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
        if (emit({ kind: "blob", value: value as JsonValue, line, index: index++, yaml: false }) === false) return;
        line += valueLines;
        count++;
        pos = end;
        continue;
      }
      if (count > 1) {
        // After two or more values apimachinery returns encoding/json's own SyntaxError, whose text has
        // no offset (opm prints `invalid character …` alone there; checked against opm 4f9d6f22).
        const message = failure.replace(/^json: offset \d+: /, "");
        emit({ kind: "error", code: "FBC_JSON_SYNTAX", message, line, index, fatal: true });
        return;
      }
      // Ambiguous stream: opm retries the rest as YAML, reporting the JSON error if YAML fails too.
      const yamlFrom = consumeWhitespaceLine(text, pos);
      const jsonError = { message: failure, line };
      decodeYaml(text, yamlFrom, emit, index, 1 + countNewlines(text, 0, yamlFrom), jsonError);
      return;
    }
  }
  decodeYaml(text, 0, emit, index, 1, undefined);
}

/**
 * YAMLOrJSONDecoder's error for the JSON value at `start`: a syntax error (offset counted from the
 * stream start, leading whitespace included) or EOF. `syn`: the value's syntax error, when known.
 */
export function jsonFailure(text: string, start: number, syn = goJsonSyntaxError(text, start)): string {
  if (!syn || syn.eof) return "unexpected EOF";
  return `json: offset ${Buffer.byteLength(text.slice(0, start)) + syn.offset}: ${syn.message}`;
}

/**
 * YAML mode: each document converted as sigs.k8s.io/yaml does. `jsonError`: the JSON failure of an
 * ambiguous stream, which replaces the first YAML failure.
 */
function decodeYaml(
  text: string,
  from: number,
  emit: (item: StreamItem) => boolean | void,
  index: number,
  firstLine: number,
  jsonError: { message: string; line: number } | undefined,
): void {
  const failed = (item: StreamFailure): StreamFailure => {
    if (jsonError === undefined) return item;
    const replaced = { ...item, code: "FBC_JSON_SYNTAX", message: jsonError.message, line: jsonError.line };
    delete replaced.inDocument;
    jsonError = undefined;
    return replaced;
  };
  const strings = new Map<string, string>();
  const sep = forEachYamlDocument(text, from, firstLine, (doc, docLine, opened) => {
    // opcat's catalog convention: a document that is only its opening separator line is no blob
    // (Go decodes it as an empty value), and a blob's line is its first line after the separator.
    if (opened && doc.indexOf("\n") === doc.length - 1) return true;
    let item: StreamItem;
    try {
      const value = parseGoYamlDocument(doc, { strings });
      item = { kind: "blob", value, line: opened ? docLine + 1 : docLine, index: index++, yaml: true };
    } catch (e) {
      const message = (e as Error).message;
      const said = /\byaml: line (\d+):/.exec(message);
      item = failed({
        kind: "error",
        code: "FBC_YAML_SYNTAX",
        message,
        line: clampLine(doc, docLine, (e as { line?: number }).line),
        index: index++,
        fatal: false,
        ...(said ? { inDocument: { start: docLine, line: Number(said[1]) } } : {}),
      });
    }
    jsonError = undefined;
    return emit(item);
  });
  if (sep !== undefined) {
    emit(
      failed({
        kind: "error",
        code: "FBC_YAML_SEPARATOR",
        message: sep.message,
        line: sep.line,
        index,
        fatal: true,
      }),
    );
  }
}

/** The file line of a 1-based line inside a document (which ends in `\n`), kept within the document's own lines. */
function clampLine(doc: string, docLine: number, line: number | undefined): number {
  if (typeof line !== "number" || line < 1) return docLine;
  const lines = countNewlines(doc, 0, doc.length);
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
