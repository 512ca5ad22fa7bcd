/**
 * Surgical text edits of YAML/JSON templates for `add-bundle`: the file is parsed with the `yaml`
 * package (eemeli) only to locate nodes by their source ranges, and every change is an insertion
 * or a small replacement in the original text. Whatever is not edited — comments, quoting, key
 * order, line wrapping, blank lines — stays byte for byte as the author wrote it, which a
 * re-serialisation of the whole document (Document.toString) cannot promise.
 *
 * New content follows the file's style: a new item of an existing sequence is indented like its
 * last sibling; new nested sequences follow the file's detected "indented or not" sequence style
 * and mapping indentation; JSON gets the detected indentation unit (or stays compact).
 */
import {
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from "../../yaml/edit.js";
import { goFoldEqual } from "../../gojson/unicode.js";

/** A value written into a template: strings, lists and string-keyed objects (insertion order kept). */
export type EditValue = string | EditValue[] | { [key: string]: EditValue };

/** One YAML document or JSON value of the file, parsed on first use. */
export interface SourceDoc {
  /** Offset of the document's text in the file: node ranges are relative to it. */
  readonly base: number;
  /** The document's text. */
  readonly text: string;
  /** The document's `schema`, read without parsing it (top-level key), when it is a plain string. */
  readonly schemaHint: string | undefined;
  /** The parsed document (parsed once, on first access). */
  readonly doc: Document.Parsed;
  /** Whether `doc` was parsed already. */
  readonly parsed: boolean;
}

export interface FileStyle {
  /** The file is JSON (a single value or a stream of values) rather than YAML. */
  json: boolean;
  /** YAML: block sequences under a key are indented below it (`key:\n  - a`) rather than level with it. */
  indentSeq: boolean;
  /** Indentation unit: of nested YAML mappings, or of pretty-printed JSON ("" = compact JSON). */
  unit: string;
  /**
   * YAML: the width past which the file's writer moved a long plain value to its own line
   * (`key: ⏎ value`, as ruamel.yaml — the community pipeline's writer — does past 80 columns); 0 when
   * the file shows no such wrapping.
   */
  wrap: number;
}

export interface EditableFile {
  text: string;
  json: boolean;
  /** The non-empty documents (at least one). */
  docs: SourceDoc[];
  /** The file's style, detected (on first use) from the documents parsed by then. */
  readonly style: FileStyle;
}

type Collection = YAMLMap<unknown, unknown> | YAMLSeq<unknown>;

/** Offset just past the last character of a JSON value starting at `i` (strings and nesting aware). */
function scanJsonValue(text: string, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      if (depth === 0) return i + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth <= 0) return i + 1;
    } else if (depth === 0 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x2c)) return i;
  }
  return i;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff;
}

/** Column of an offset (characters since the start of its line). */
export function columnOf(text: string, off: number): number {
  return off - (text.lastIndexOf("\n", off - 1) + 1);
}

const YAML_SCHEMA = /^schema:[ \t]*(["']?)([^"'\s#]+)\1[ \t]*(?:#.*)?$/m;
const JSON_SCHEMA = /"schema"\s*:\s*"([^"\\]*)"/;
/** A document marker line: `---` or `...` at column 0. */
const MARKER = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;

class LazyDoc implements SourceDoc {
  private parsedDoc: Document.Parsed | undefined;
  private hint: string | undefined | null = null;

  constructor(
    readonly base: number,
    readonly text: string,
    private readonly json: boolean,
  ) {}

  get doc(): Document.Parsed {
    this.parsedDoc ??= parseDocument(this.text, { version: "1.1" });
    return this.parsedDoc;
  }

  get parsed(): boolean {
    return this.parsedDoc !== undefined;
  }

  get schemaHint(): string | undefined {
    if (this.hint === null)
      this.hint = (this.json ? JSON_SCHEMA.exec(this.text)?.[1] : YAML_SCHEMA.exec(this.text)?.[2]) ?? undefined;
    return this.hint;
  }

  /** Whether the document holds nothing but comments and blank lines (or only a marker). */
  isBlank(): boolean {
    for (const raw of this.text.split("\n")) {
      const l = raw.trim();
      if (l === "" || l.startsWith("#") || l === "---" || l === "..." || l.startsWith("%")) continue;
      if (l.startsWith("--- #")) continue;
      return false;
    }
    return true;
  }
}

/**
 * Splits a template or FBC file into documents for editing: a YAML stream (split at its `---`/`...`
 * marker lines) or, when the first character is `{` or `[`, concatenated JSON values. Documents are
 * parsed (YAML 1.1 scalars, as go-yaml v2 reads them) only when used, so a large catalog costs one
 * fast scan plus the documents an edit touches. Returns the first document's parse error instead
 * when it does not parse.
 */
export function parseEditable(text: string): EditableFile | { error: string } {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  const json = text[i] === "{" || text[i] === "[";
  const docs: LazyDoc[] = [];
  if (json) {
    while (i < text.length) {
      const end = scanJsonValue(text, i);
      docs.push(new LazyDoc(i, text.slice(i, end), true));
      i = end;
      while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    }
  } else {
    const starts = [0];
    for (const m of text.matchAll(MARKER)) if (m.index > 0) starts.push(m.index);
    starts.push(text.length);
    for (let k = 0; k + 1 < starts.length; k++) {
      const d = new LazyDoc(starts[k], text.slice(starts[k], starts[k + 1]), false);
      if (!d.isBlank()) docs.push(d);
    }
  }
  if (docs.length === 0) docs.push(new LazyDoc(0, text, json));
  const first = docs[0].doc;
  if (first.errors.length > 0) return { error: first.errors[0].message };
  let style: FileStyle | undefined;
  return {
    text,
    json,
    docs,
    get style(): FileStyle {
      style ??= detectStyle(text, docs, json);
      return style;
    },
  };
}

function detectStyle(text: string, docs: SourceDoc[], json: boolean): FileStyle {
  if (json) {
    const first = docs[0];
    const start = first.base;
    const nl = text.indexOf("\n", start);
    const end = first.base + first.text.length;
    if (nl < 0 || nl >= end) return { json, indentSeq: true, unit: "", wrap: 0 };
    let j = nl + 1;
    while (j < end && (text[j] === " " || text[j] === "\t")) j++;
    const unit = text.slice(nl + 1, j);
    return { json, indentSeq: true, unit: unit === "" ? "  " : unit, wrap: 0 };
  }
  let indentSeq: boolean | undefined;
  let unit: string | undefined;
  const visit = (sd: SourceDoc, n: unknown, depth: number): void => {
    if ((indentSeq !== undefined && unit !== undefined) || depth > 50) return;
    const t = sd.text;
    if (isMap(n)) {
      for (const p of n.items) {
        const k = p.key as Node | null;
        const v = p.value as Node | null;
        if (k?.range && v?.range && !(v as Collection).flow) {
          const kc = columnOf(t, k.range[0]);
          if (isSeq(v) && v.items.length > 0 && indentSeq === undefined) {
            const item = v.items[0] as Node | null;
            if (item?.range) {
              const dash = dashBefore(t, item.range[0]);
              if (dash >= 0) indentSeq = columnOf(t, dash) > kc;
            }
          } else if (isMap(v) && v.items.length > 0 && unit === undefined) {
            const vc = columnOf(t, v.range[0]);
            if (vc > kc && t.lastIndexOf("\n", v.range[0]) > k.range[0]) unit = " ".repeat(vc - kc);
          }
        }
        visit(sd, v, depth + 1);
      }
    } else if (isSeq(n)) {
      for (const it of n.items) visit(sd, it, depth + 1);
    }
  };
  // Only documents parsed already (the ones the edit touches, and the
  // first): a large catalog is not parsed for its style.
  for (const d of docs) if (d === docs[0] || d.parsed) visit(d, d.doc.contents, 0);
  // Without evidence, sequences are level with their key, as go-yaml
  // (opm) and ruamel.yaml (the community pipeline) write them.
  return { json, indentSeq: indentSeq ?? false, unit: unit ?? "  ", wrap: WRAPPED_VALUE.test(text) ? 80 : 0 };
}

/** A `key: ` line ending in a space whose plain value continues, more indented, on the next line. */
const WRAPPED_VALUE = /^( *)(?:- )?[A-Za-z_][\w.-]*: \n\1 +[^\s#'"\-[{]/m;

/** Offset of the `-` indicator of a block sequence item whose node starts at `off`, or -1. */
function dashBefore(text: string, off: number): number {
  let j = off - 1;
  while (j >= 0 && (text[j] === " " || text[j] === "\t")) j--;
  return j >= 0 && text[j] === "-" ? j : -1;
}

const YAML11_SPECIAL =
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|<<|=)$/;
const NUMBERISH = /^[-+]?(?:\.?[0-9]|\.(?:inf|Inf|INF|nan|NaN|NAN)$)|^0[xob]|^[0-9][0-9_:]*$/;

/** A string as a YAML scalar: plain when YAML 1.1 and 1.2 both read it back as that string, else single-quoted. */
export function yamlScalar(s: string): string {
  const plain =
    s !== "" &&
    /^[A-Za-z0-9_./][A-Za-z0-9_./@:+\-=~]*$/.test(s) &&
    !s.endsWith(":") &&
    !YAML11_SPECIAL.test(s) &&
    !NUMBERISH.test(s) &&
    !/^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/.test(s);
  return plain ? s : `'${s.replace(/'/g, "''")}'`;
}

/** Lines of a block mapping at column `col` (no trailing newline). */
function blockMapLines(obj: { [key: string]: EditValue }, col: number, style: FileStyle): string[] {
  const pad = " ".repeat(col);
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = yamlScalar(k);
    if (typeof v === "string") {
      const line = `${pad}${key}: ${yamlScalar(v)}`;
      // Long values go on their own line where the file's writer did so.
      if (style.wrap > 0 && line.length > style.wrap)
        out.push(`${pad}${key}: `, `${" ".repeat(col + style.unit.length)}${yamlScalar(v)}`);
      else out.push(line);
    } else if (Array.isArray(v)) {
      if (v.length === 0) out.push(`${pad}${key}: []`);
      else out.push(`${pad}${key}:`, ...blockSeqLines(v, col + (style.indentSeq ? style.unit.length : 0), style));
    } else if (Object.keys(v).length === 0) out.push(`${pad}${key}: {}`);
    else out.push(`${pad}${key}:`, ...blockMapLines(v, col + style.unit.length, style));
  }
  return out;
}

/** Lines of a block sequence whose dashes are at column `dash` (content two columns further). */
function blockSeqLines(items: EditValue[], dash: number, style: FileStyle, contentCol = dash + 2): string[] {
  const out: string[] = [];
  for (const it of items) out.push(...blockItemLines(it, dash, contentCol, style));
  return out;
}

function blockItemLines(it: EditValue, dash: number, contentCol: number, style: FileStyle): string[] {
  const lead = " ".repeat(dash) + "-" + " ".repeat(Math.max(1, contentCol - dash - 1));
  if (typeof it === "string") return [lead + yamlScalar(it)];
  if (Array.isArray(it) || Object.keys(it).length === 0) return [lead + JSON.stringify(it)];
  const lines = blockMapLines(it, contentCol, style);
  lines[0] = lead + lines[0].slice(contentCol);
  return lines;
}

/** JSON text of a value, its continuation lines indented by `indent` (pretty when `unit` is non-empty). */
function jsonText(v: EditValue, unit: string, indent: string): string {
  const s = JSON.stringify(v, null, unit === "" ? undefined : unit);
  return unit === "" ? s : s.replace(/\n/g, "\n" + indent);
}

function leadingWhitespace(text: string, off: number): string {
  const ls = text.lastIndexOf("\n", off - 1) + 1;
  let j = ls;
  while (text[j] === " " || text[j] === "\t") j++;
  return text.slice(ls, j);
}

interface Edit {
  start: number;
  end: number;
  insert: string;
  seq: number;
}

/** Edits collected against one text, applied together. Overlapping edits are a programming error. */
export class TextEdits {
  private readonly edits: Edit[] = [];
  /** Items for empty flow sequences (`[]`), written as one replacement when the edits are applied. */
  private readonly emptyFlow = new Map<YAMLSeq<unknown>, { sd: SourceDoc; values: EditValue[] }>();
  private materialized = false;

  constructor(private readonly file: EditableFile) {}

  get text(): string {
    return this.file.text;
  }

  get style(): FileStyle {
    return this.file.style;
  }

  get size(): number {
    return this.edits.length + this.emptyFlow.size;
  }

  /** Turns the pending items of empty flow sequences into edits (once). */
  private materialize(): void {
    if (this.materialized) return;
    this.materialized = true;
    for (const [seq, { sd, values }] of this.emptyFlow) this.fillEmptyFlow(sd, seq, values);
  }

  private fillEmptyFlow(sd: SourceDoc, seq: YAMLSeq<unknown>, values: EditValue[]): void {
    const t = this.file.text;
    const st = this.file.style;
    const s0 = sd.base + seq.range![0];
    const close = t.lastIndexOf("]", sd.base + seq.range![1]);
    if (!st.json && !this.inFlowContext(sd, seq)) {
      // `key: []` in a block mapping becomes a block sequence.
      const keyCol = this.keyColumnOf(sd, seq);
      if (keyCol !== undefined) {
        const colon = t.lastIndexOf(":", s0);
        const lines = blockSeqLines(values, keyCol + (st.indentSeq ? st.unit.length : 0), st);
        this.add(colon + 1, close + 1, "\n" + lines.join("\n"));
        return;
      }
    }
    if (st.json && st.unit !== "") {
      const indent = leadingWhitespace(t, s0);
      const inner = values.map((v) => `${indent}${st.unit}${jsonText(v, st.unit, indent + st.unit)}`).join(",\n");
      this.add(s0, close + 1, `[\n${inner}\n${indent}]`);
    } else this.add(s0, close + 1, `[${values.map((v) => JSON.stringify(v)).join(", ")}]`);
  }

  private add(start: number, end: number, insert: string): void {
    this.edits.push({ start, end, insert, seq: this.edits.length });
  }

  /** Offset where a new line can start after `off` (end of the line containing `off - 1`). */
  private lineEndAfter(off: number): { at: number; prefix: string } {
    const t = this.file.text;
    if (off > 0 && t[off - 1] === "\n") return { at: off, prefix: "" };
    const nl = t.indexOf("\n", off);
    if (nl < 0) return { at: t.length, prefix: "\n" };
    return { at: nl + 1, prefix: "" };
  }

  /** Appends `value` as the last item of the sequence `seq` (of document `sd`). */
  appendToSeq(sd: SourceDoc, seq: YAMLSeq<unknown>, value: EditValue): void {
    const t = this.file.text;
    const st = this.file.style;
    const s0 = sd.base + seq.range![0];
    const items = seq.items as (Node | null)[];
    const last = items.length > 0 ? items[items.length - 1] : null;
    if (!seq.flow) {
      if (!last?.range) throw new Error("block sequence without items");
      const itemStart = sd.base + last.range[0];
      const dash = dashBefore(t, itemStart);
      const dashCol = dash >= 0 ? columnOf(t, dash) : columnOf(t, itemStart) - 2;
      const contentCol = isMap(last) || isScalar(last) ? columnOf(t, itemStart) : dashCol + 2;
      const lines = blockItemLines(value, dashCol, contentCol, st);
      const end = Math.max(sd.base + last.range[1], sd.base + seq.range![1]);
      const { at, prefix } = this.lineEndAfter(Math.min(end, t.length));
      this.add(at, at, prefix + lines.join("\n") + "\n");
      return;
    }
    // Flow sequence ([...]): JSON, or YAML flow style.
    if (!last?.range) {
      const pending = this.emptyFlow.get(seq);
      if (pending) pending.values.push(value);
      else this.emptyFlow.set(seq, { sd, values: [value] });
      return;
    }
    const lastEnd = sd.base + last.range[1];
    const lastStart = sd.base + last.range[0];
    const multiline = t.slice(s0, lastStart).includes("\n");
    if (multiline) {
      const indent = leadingWhitespace(t, lastStart);
      this.add(lastEnd, lastEnd, `,\n${indent}${jsonText(value, st.unit === "" ? "  " : st.unit, indent)}`);
    } else this.add(lastEnd, lastEnd, `${this.inlineSeparator(lastStart)}${JSON.stringify(value)}`);
  }

  /** `,` in compact JSON or where the items are written without a space, else `, `. */
  private inlineSeparator(itemStart: number): string {
    const st = this.file.style;
    return (st.json && st.unit === "") || this.file.text[itemStart - 1] === "," ? "," : ", ";
  }

  /** Adds `key: value` as the last pair of the mapping `map` (the key must be absent). */
  addToMap(sd: SourceDoc, map: YAMLMap<unknown, unknown>, key: string, value: EditValue): void {
    const t = this.file.text;
    const st = this.file.style;
    const pairs = map.items;
    const last = pairs.length > 0 ? pairs[pairs.length - 1] : undefined;
    if (!map.flow) {
      const firstKey = pairs[0]?.key as Node | undefined;
      if (!firstKey?.range || !last) throw new Error("block mapping without pairs");
      const col = columnOf(t, sd.base + firstKey.range[0]);
      const lines = blockMapLines({ [key]: value }, col, st);
      const lastNode = (last.value ?? last.key) as Node;
      const end = Math.max(sd.base + lastNode.range![1], sd.base + map.range![1]);
      const { at, prefix } = this.lineEndAfter(Math.min(end, t.length));
      this.add(at, at, prefix + lines.join("\n") + "\n");
      return;
    }
    const k = JSON.stringify(key);
    if (!last) {
      const s0 = sd.base + map.range![0];
      const close = t.lastIndexOf("}", sd.base + map.range![1]);
      this.add(s0, close + 1, `{${k}: ${JSON.stringify(value)}}`);
      return;
    }
    const lastEnd = sd.base + ((last.value ?? last.key) as Node).range![1];
    const lastStart = sd.base + (last.key as Node).range![0];
    if (t.slice(sd.base + map.range![0], lastStart).includes("\n")) {
      const indent = leadingWhitespace(t, lastStart);
      this.add(lastEnd, lastEnd, `,\n${indent}${k}: ${jsonText(value, st.unit === "" ? "  " : st.unit, indent)}`);
    } else
      this.add(
        lastEnd,
        lastEnd,
        `${this.inlineSeparator(lastStart)}${k}:${st.json && st.unit === "" ? "" : " "}${JSON.stringify(value)}`,
      );
  }

  /** Replaces the (null or empty) value of `pair` in `map` with `value`. */
  replaceNullValue(
    sd: SourceDoc,
    map: YAMLMap<unknown, unknown>,
    pair: Pair<unknown, unknown>,
    value: EditValue,
  ): void {
    const t = this.file.text;
    const st = this.file.style;
    const key = pair.key as Node;
    const v = pair.value as Node | null;
    const keyEnd = sd.base + key.range![1];
    const colon = t.indexOf(":", keyEnd);
    const vEnd = v?.range ? sd.base + v.range[1] : colon + 1;
    if (st.json || map.flow) {
      const vStart = v?.range ? sd.base + v.range[0] : colon + 1;
      this.add(vStart, vEnd, (v?.range ? "" : " ") + JSON.stringify(value));
      return;
    }
    const col = columnOf(t, sd.base + key.range![0]);
    let lines: string[];
    if (typeof value === "string") lines = [" " + yamlScalar(value)];
    else if (Array.isArray(value)) lines = ["", ...blockSeqLines(value, col + (st.indentSeq ? st.unit.length : 0), st)];
    else lines = ["", ...blockMapLines(value, col + st.unit.length, st)];
    this.add(colon + 1, Math.max(colon + 1, vEnd), lines.join("\n"));
  }

  /** Appends a whole document (already formatted, ending with a newline) at the end of the file. */
  appendDocument(docText: string): void {
    const t = this.file.text;
    this.add(t.length, t.length, (t === "" || t.endsWith("\n") ? "" : "\n") + docText);
  }

  private inFlowContext(sd: SourceDoc, target: Node): boolean {
    const path = findPath(sd.doc.contents as Node | null, target);
    return path?.slice(0, -1).some((n) => (n as Collection).flow === true) ?? false;
  }

  private keyColumnOf(sd: SourceDoc, target: Node): number | undefined {
    const parent = findParentPair(sd.doc.contents as Node | null, target);
    const k = parent?.key as Node | undefined;
    return k?.range ? columnOf(this.file.text, sd.base + k.range[0]) : undefined;
  }

  /** The edited text. */
  apply(): string {
    this.materialize();
    const t = this.file.text;
    const sorted = [...this.edits].sort((a, b) => a.start - b.start || a.seq - b.seq);
    let out = "";
    let pos = 0;
    for (const e of sorted) {
      if (e.start < pos) throw new Error("overlapping template edits");
      out += t.slice(pos, e.start) + e.insert;
      pos = e.end;
    }
    return out + t.slice(pos);
  }

  /** The edits as unified-diff-like hunks (`@@ -line,count +line,count @@`, `-`/`+` lines). */
  diff(name: string): string {
    this.materialize();
    const t = this.file.text;
    const sorted = [...this.edits].sort((a, b) => a.start - b.start || a.seq - b.seq);
    let out = `--- ${name}\n+++ ${name}\n`;
    let shift = 0;
    for (const e of sorted) {
      const lineNo = countLines(t, e.start) + 1;
      const ls = t.lastIndexOf("\n", e.start - 1) + 1;
      let bl: string[];
      let al: string[];
      if (e.start === e.end && ls === e.start && (e.insert.endsWith("\n") || e.start === t.length)) {
        // A pure insertion of whole lines.
        bl = [];
        al = e.insert.replace(/\n$/, "").split("\n");
        if (al[0] === "" && e.start === t.length) al = al.slice(1);
        out += `@@ -${lineNo - 1},0 +${lineNo + shift},${al.length} @@\n`;
      } else {
        let le = t.indexOf("\n", e.end);
        if (le < 0) le = t.length;
        bl = t.slice(ls, le).split("\n");
        al = (t.slice(ls, e.start) + e.insert + t.slice(e.end, le)).split("\n");
        out += `@@ -${lineNo},${bl.length} +${lineNo + shift},${al.length} @@\n`;
      }
      for (const l of bl) out += `-${l}\n`;
      for (const l of al) out += `+${l}\n`;
      shift += al.length - bl.length;
    }
    return out;
  }
}

function countLines(t: string, end: number): number {
  let n = 0;
  for (let i = t.indexOf("\n"); i >= 0 && i < end; i = t.indexOf("\n", i + 1)) n++;
  return n;
}

function findPath(root: Node | null, target: Node): Node[] | undefined {
  if (!root) return undefined;
  if (root === target) return [root];
  if (isMap(root)) {
    for (const p of root.items) {
      const sub = findPath(p.value as Node | null, target);
      if (sub) return [root, ...sub];
    }
  } else if (isSeq(root)) {
    for (const it of root.items) {
      const sub = findPath(it as Node | null, target);
      if (sub) return [root, ...sub];
    }
  }
  return undefined;
}

function findParentPair(root: Node | null, target: Node): Pair<unknown, unknown> | undefined {
  if (!root) return undefined;
  if (isMap(root)) {
    for (const p of root.items) {
      if (p.value === target) return p;
      const sub = findParentPair(p.value as Node | null, target);
      if (sub) return sub;
    }
  } else if (isSeq(root)) {
    for (const it of root.items) {
      const sub = findParentPair(it as Node | null, target);
      if (sub) return sub;
    }
  }
  return undefined;
}

/** The pair of `map` whose key equals `name` (exactly first, then ignoring letter case as Go's JSON decoding does). */
export function findKey(map: unknown, name: string): Pair<unknown, unknown> | undefined {
  if (!isMap(map)) return undefined;
  let folded: Pair<unknown, unknown> | undefined;
  for (const p of map.items) {
    const k = isScalar(p.key) ? p.key.value : p.key;
    if (typeof k !== "string") continue;
    if (k === name) return p;
    if (folded === undefined && goFoldEqual(k, name)) folded = p;
  }
  return folded;
}

/** The string value of key `name` of `map` (case-insensitive), or undefined. */
export function stringAt(map: unknown, name: string): string | undefined {
  const p = findKey(map, name);
  return p && isScalar(p.value) && typeof p.value.value === "string" ? p.value.value : undefined;
}

/** A JSON-pointer token (`~` → `~0`, `/` → `~1`). */
export function pointerToken(s: string | number): string {
  return String(s).replace(/~/g, "~0").replace(/\//g, "~1");
}
