/**
 * The subset of Go's text/template that `opm render --alpha-image-ref-template` needs: literal
 * text and actions printing a field of the template data (`{{.Package}}`, `{{.Name}}`,
 * `{{.Version}}`, `{{.}}`), string literals, comments and `{{-`/`-}}` trimming. Errors read like
 * Go's (`template: image-ref-template:1: unclosed action`, `… can't evaluate field Foo in type …`);
 * other template features (functions, pipelines, control structures) are refused with
 * {@link TemplateError} rather than misread.
 */

/** The data opm passes to the template (alpha/action/render.go imageReferenceTemplateData). */
export interface ImageRefTemplateData {
  Package: string;
  Name: string;
  Version: string;
}

const DATA_FIELDS: readonly (keyof ImageRefTemplateData)[] = ["Package", "Name", "Version"];
const DATA_TYPE = "action.imageReferenceTemplateData";
const NAME = "image-ref-template";

/** A template parse or execution error with Go's message. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

type Piece = { text: string } | { field: string[]; pos: number; src: string } | { literal: string };

/** A parsed image reference template. */
export interface ImageRefTemplate {
  readonly source: string;
  execute(data: ImageRefTemplateData): string;
}

// Go builtins and keywords: valid in Go templates but not supported by this subset.
const GO_BUILTINS = new Set([
  "and",
  "call",
  "html",
  "index",
  "slice",
  "js",
  "len",
  "not",
  "or",
  "print",
  "printf",
  "println",
  "urlquery",
  "eq",
  "ge",
  "gt",
  "le",
  "lt",
  "ne",
]);
const GO_KEYWORDS = new Set([
  "if",
  "else",
  "end",
  "range",
  "with",
  "define",
  "template",
  "block",
  "break",
  "continue",
  "nil",
  "true",
  "false",
]);

function lineOf(src: string, pos: number): number {
  let n = 1;
  for (let i = 0; i < pos; i++) if (src.charCodeAt(i) === 0x0a) n++;
  return n;
}

function utf8Len(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** Parses a template as `template.New("image-ref-template").Parse(text)`; throws TemplateError. */
export function parseImageRefTemplate(src: string): ImageRefTemplate {
  const pieces: Piece[] = [];
  let i = 0;
  let pendingTrim = false;
  const err = (pos: number, msg: string): TemplateError =>
    new TemplateError(`template: ${NAME}:${lineOf(src, pos)}: ${msg}`);
  while (i <= src.length) {
    const open = src.indexOf("{{", i);
    let text = open < 0 ? src.slice(i) : src.slice(i, open);
    if (pendingTrim) text = text.replace(/^[ \t\r\n]+/, "");
    pendingTrim = false;
    if (open < 0) {
      if (text) pieces.push({ text });
      break;
    }
    let j = open + 2;
    // "{{- " trims the preceding text (the marker needs a following space).
    if (src[j] === "-" && /[ \t\r\n]/.test(src[j + 1] ?? "")) {
      text = text.replace(/[ \t\r\n]+$/, "");
      j += 2;
    }
    if (text) pieces.push({ text });
    // Comments: {{/* ... */}}
    const afterSpace = j + (src.slice(j).match(/^[ \t\r\n]*/)?.[0].length ?? 0);
    if (src.startsWith("/*", j) || (j !== open + 2 && src.startsWith("/*", afterSpace))) {
      const cstart = src.startsWith("/*", j) ? j : afterSpace;
      const cend = src.indexOf("*/", cstart + 2);
      if (cend < 0) throw err(open, "unclosed comment");
      let k = cend + 2;
      const trimMatch = src.slice(k).match(/^[ \t\r\n]+-}}/);
      if (trimMatch) {
        k += trimMatch[0].length;
        pendingTrim = true;
      } else if (src.startsWith("}}", k)) k += 2;
      else throw err(open, "comment ends before closing delimiter");
      i = k;
      continue;
    }
    // Find the closing delimiter, skipping quoted strings.
    let k = j;
    let close = -1;
    let trimAfter = false;
    while (k < src.length) {
      const c = src[k];
      if (c === '"' || c === "`") {
        const end = c === "`" ? src.indexOf("`", k + 1) : findQuoteEnd(src, k);
        if (end < 0) throw err(open, c === "`" ? "unterminated raw quoted string" : "unterminated quoted string");
        k = end + 1;
        continue;
      }
      if (/[ \t\r\n]/.test(c) && src.startsWith("-}}", k + 1)) {
        close = k;
        trimAfter = true;
        break;
      }
      if (src.startsWith("}}", k)) {
        close = k;
        break;
      }
      k++;
    }
    if (close < 0) throw err(open, "unclosed action");
    const body = src.slice(j, close);
    pieces.push(parseAction(body.trim(), j + (body.length - body.trimStart().length), src, err));
    i = trimAfter ? close + 4 : close + 2;
    // After "-}}" the following text loses its leading spaces.
    if (trimAfter) pendingTrim = true;
  }
  return {
    source: src,
    execute(data: ImageRefTemplateData): string {
      let out = "";
      for (const p of pieces) {
        if ("text" in p) out += p.text;
        else if ("literal" in p) out += p.literal;
        else out += evalField(p, data, src);
      }
      return out;
    },
  };
}

function findQuoteEnd(src: string, start: number): number {
  for (let k = start + 1; k < src.length; k++) {
    if (src[k] === "\\") k++;
    else if (src[k] === '"') return k;
    else if (src[k] === "\n") return -1;
  }
  return -1;
}

function parseAction(body: string, pos: number, src: string, err: (pos: number, msg: string) => TemplateError): Piece {
  if (body === "") throw err(pos, "missing value for command");
  if (body === ".") return { field: [], pos, src: "." };
  const fieldMatch = /^((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$/.exec(body);
  if (fieldMatch) return { field: body.slice(1).split("."), pos, src: body };
  if (/^"(?:[^"\\\n]|\\.)*"$/.test(body)) {
    try {
      return { literal: JSON.parse(body) as string };
    } catch {
      throw new TemplateError(`template: ${NAME}:${lineOf(src, pos)}: unsupported string literal ${body}`);
    }
  }
  if (/^`[^`]*`$/.test(body)) return { literal: body.slice(1, -1) };
  const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(body)?.[0];
  if (word !== undefined && !GO_BUILTINS.has(word) && !GO_KEYWORDS.has(word))
    throw err(pos, `function "${word}" not defined`);
  throw new TemplateError(
    `template: ${NAME}:${lineOf(src, pos)}: unsupported template action {{${body}}} ` +
      `(opcat supports {{.Package}}, {{.Name}}, {{.Version}} and string literals)`,
  );
}

function evalField(p: { field: string[]; pos: number; src: string }, data: ImageRefTemplateData, src: string): string {
  if (p.field.length === 0) return `{${data.Package} ${data.Name} ${data.Version}}`;
  const [first, ...rest] = p.field;
  // Go reports the position of the chain's last field token.
  const pos = p.pos + p.src.lastIndexOf(".");
  const at = (): string => {
    const lineStart = src.lastIndexOf("\n", pos - 1) + 1;
    return (
      `template: ${NAME}:${lineOf(src, pos)}:${utf8Len(src.slice(lineStart, pos))}: ` +
      `executing "${NAME}" at <${p.src}>`
    );
  };
  if (!(DATA_FIELDS as readonly string[]).includes(first))
    throw new TemplateError(`${at()}: can't evaluate field ${first} in type ${DATA_TYPE}`);
  if (rest.length > 0) throw new TemplateError(`${at()}: can't evaluate field ${rest[0]} in type string`);
  return data[first as keyof ImageRefTemplateData];
}
