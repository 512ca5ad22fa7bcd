// A port of the parts of go-yaml v2's encoder (encode.go) and libyaml emitter (emitterc.go) that
// sigs.k8s.io/yaml JSONToYAML exercises: block mappings/sequences, `[]`/`{}`, and scalar analysis,
// style selection and writing (plain, single-quoted, double-quoted, literal) with best_indent 2,
// best_width 80 and unicode output enabled.

import { GoYamlError } from "./errors.js";
import { formatGoFloat, isBase60Float, resolvePlain } from "./resolve.js";
import { sortGoKeys } from "./sort.js";

/** A JSON value as produced by JSON.parse (declared once, in src/gojson/value.ts). */
import type { JsonValue } from "../gojson/value.js";

export type { JsonValue };

const BEST_INDENT = 2;
const BEST_WIDTH = 80;

const PLAIN = 1;
const SINGLE = 2;
const DOUBLE = 3;
const LITERAL = 4;

// Scalar analysis flags (yaml_emitter_analyze_scalar).
const MULTILINE = 1;
const BLOCK_PLAIN_ALLOWED = 2;
const SINGLE_QUOTED_ALLOWED = 4;
const BLOCK_ALLOWED = 8;
/** The text holds a character that Go's json.Marshal leaves raw but go-yaml's reader rejects. */
const CONTROL = 16;

const CONTROL_ERROR = "yaml: control characters are not allowed";

function isPrintable(c: number): boolean {
  return (
    c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff)
  );
}

function isBreak(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
}

function isBlankZ(c: number): boolean {
  return c === 0x20 || c === 0x09 || isBreak(c) || c === 0;
}

/**
 * A word: an alphanumeric first character (no indicator can start it), then only characters that
 * set no flag anywhere (no space, break, `:`, `#` or unprintable character). Base64 icons are words,
 * so their analysis is one native regular-expression test instead of a loop over every character.
 */
const WORD = /^[A-Za-z0-9][A-Za-z0-9+/=._-]*$/;

/** yaml_emitter_analyze_scalar for a block context (flow_level 0), returning the flag set. */
export function analyzeScalar(s: string): number {
  if (s.length > 0 && WORD.test(s)) return BLOCK_PLAIN_ALLOWED | SINGLE_QUOTED_ALLOWED | BLOCK_ALLOWED;
  return analyzeScalarChars(s);
}

/** analyzeScalar character by character, as libyaml does (exported for the test of the fast path). */
export function analyzeScalarChars(s: string): number {
  const len = s.length;
  if (len === 0) return BLOCK_PLAIN_ALLOWED | SINGLE_QUOTED_ALLOWED;
  let blockIndicators = false;
  let lineBreaks = false;
  let special = false;
  let control = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  let precededByWhitespace = true;

  if (len >= 3) {
    const c0 = s.charCodeAt(0);
    if ((c0 === 45 || c0 === 46) && s.charCodeAt(1) === c0 && s.charCodeAt(2) === c0) blockIndicators = true;
  }
  for (let i = 0; i < len; ) {
    let c = s.charCodeAt(i);
    let w = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        w = 2;
      }
    }
    const next = i + w < len ? s.charCodeAt(i + w) : -1;
    const followedByWhitespace = next === -1 || next === 0x20 || next === 0x09;
    if (i === 0) {
      switch (c) {
        case 35:
        case 44:
        case 91:
        case 93:
        case 123:
        case 125:
        case 38:
        case 42:
        case 33:
        case 124:
        case 62:
        case 39:
        case 34:
        case 37:
        case 64:
        case 96:
          blockIndicators = true;
          break;
        case 63:
        case 58:
          if (followedByWhitespace) blockIndicators = true;
          break;
        case 45:
          if (followedByWhitespace) blockIndicators = true;
          break;
      }
    } else {
      if (c === 58) {
        if (followedByWhitespace) blockIndicators = true;
      } else if (c === 35) {
        if (precededByWhitespace) blockIndicators = true;
      }
    }
    if (!isPrintable(c)) {
      special = true;
      if ((c >= 0x7f && c <= 0x9f && c !== 0x85) || c === 0xfffe || c === 0xffff) control = true;
    }
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i + w === len) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i + w === len) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankZ(c);
    i += w;
  }
  let blockPlain = true;
  let single = true;
  let block = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlain = false;
  if (trailingSpace) block = false;
  if (breakSpace) {
    blockPlain = false;
    single = false;
  }
  if (spaceBreak || special) {
    blockPlain = false;
    single = false;
    block = false;
  }
  if (lineBreaks) blockPlain = false;
  if (blockIndicators) blockPlain = false;
  return (
    (control ? CONTROL : 0) |
    (lineBreaks ? MULTILINE : 0) |
    (blockPlain ? BLOCK_PLAIN_ALLOWED : 0) |
    (single ? SINGLE_QUOTED_ALLOWED : 0) |
    (block ? BLOCK_ALLOWED : 0)
  );
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

const HEX = "0123456789ABCDEF";

function escapeFor(v: number): string {
  switch (v) {
    case 0x00:
      return "\\0";
    case 0x07:
      return "\\a";
    case 0x08:
      return "\\b";
    case 0x09:
      return "\\t";
    case 0x0a:
      return "\\n";
    case 0x0b:
      return "\\v";
    case 0x0c:
      return "\\f";
    case 0x0d:
      return "\\r";
    case 0x1b:
      return "\\e";
    case 0x22:
      return '\\"';
    case 0x5c:
      return "\\\\";
    case 0x85:
      return "\\N";
    case 0xa0:
      return "\\_";
    case 0x2028:
      return "\\L";
    case 0x2029:
      return "\\P";
  }
  let w: number;
  let out: string;
  if (v <= 0xff) {
    out = "\\x";
    w = 2;
  } else if (v <= 0xffff) {
    out = "\\u";
    w = 4;
  } else {
    out = "\\U";
    w = 8;
  }
  for (let k = (w - 1) * 4; k >= 0; k -= 4) out += HEX[(v >> k) & 0x0f];
  return out;
}

/** Replaces lone UTF-16 surrogates by U+FFFD (Go strings are UTF-8: json.Marshal writes U+FFFD). */
function wellFormed(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++;
          continue;
        }
      }
      return s.slice(0, i) + "\ufffd" + wellFormed(s.slice(i + 1));
    }
  }
  return s;
}

/**
 * What go-yaml's double-quoted scanner makes of a string value that Go's json.Marshal wrote: every
 * character survives except U+0085 (NEL), which json.Marshal leaves raw and YAML treats as a line
 * break inside the quoted scalar: blanks before it are dropped, blanks and breaks after it are
 * consumed, and a run of k breaks becomes " " (k = 1) or k-1 newlines.
 */
function goJsonRoundTrip(s: string): string {
  s = wellFormed(s);
  if (s.indexOf("\u0085") < 0) return s;
  let out = "";
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 0x20) {
      let j = i;
      while (j < n && s.charCodeAt(j) === 0x20) j++;
      if (j < n && s.charCodeAt(j) === 0x85) {
        i = j; // blanks before a break are dropped
        continue;
      }
      out += s.slice(i, j);
      i = j;
    } else if (c === 0x85) {
      let breaks = 0;
      while (i < n && (s.charCodeAt(i) === 0x85 || s.charCodeAt(i) === 0x20)) {
        if (s.charCodeAt(i) === 0x85) breaks++;
        i++;
      }
      out += breaks === 1 ? " " : "\n".repeat(breaks - 1);
    } else {
      out += s[i];
      i++;
    }
  }
  return out;
}

/** Go's strconv formatting of a JSON number after go-yaml v2 resolved its JSON text. */
function formatNumber(n: number): string {
  if (!Number.isFinite(n)) throw new GoYamlError(`json: unsupported value: ${n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN"}`);
  const text = String(n);
  const r = resolvePlain(text);
  if (r.kind === "int") return r.decimal as string;
  return formatGoFloat(n);
}

class Emitter {
  out = "";
  column = 0;
  whitespace = true;
  indention = true;
  indent = -1;
  pendingError: string | undefined;

  putBreak(): void {
    this.out += "\n";
    this.column = 0;
  }

  writeIndent(): void {
    const indent = this.indent < 0 ? 0 : this.indent;
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    if (this.column < indent) {
      this.out += " ".repeat(indent - this.column);
      this.column = indent;
    }
    this.whitespace = true;
    this.indention = true;
  }

  writeIndicator(ind: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) {
      this.out += " ";
      this.column++;
    }
    this.out += ind;
    this.column += ind.length;
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  node(v: JsonValue, mappingContext: boolean): void {
    if (v === null) return this.simplePlain("null");
    switch (typeof v) {
      case "boolean":
        return this.simplePlain(v ? "true" : "false");
      case "number":
        return this.simplePlain(formatNumber(v));
      case "string":
        return this.stringNode(goJsonRoundTrip(v));
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return this.emptyFlow("[", "]");
      const saved = this.indent;
      const indentless = mappingContext && !this.indention;
      if (this.indent < 0) this.indent = 0;
      else if (!indentless) this.indent += BEST_INDENT;
      for (let i = 0; i < v.length; i++) {
        this.writeIndent();
        this.writeIndicator("-", true, false, true);
        this.node(v[i], false);
      }
      this.indent = saved;
      return;
    }
    const keys = Object.keys(v);
    if (keys.length === 0) return this.emptyFlow("{", "}");
    sortGoKeys(keys);
    const saved = this.indent;
    this.indent = this.indent < 0 ? 0 : this.indent + BEST_INDENT;
    for (const key of keys) {
      const k = this.goJsonKey(key);
      this.writeIndent();
      const flags = analyzeScalar(k);
      if ((flags & CONTROL) !== 0) throw new GoYamlError(CONTROL_ERROR);
      const simple = (flags & MULTILINE) === 0 && (k.length <= 42 || utf8Length(k) <= 128);
      if (simple) {
        this.scalar(k, this.stringStyle(k), flags, true);
        this.writeIndicator(":", false, false, false);
      } else {
        this.writeIndicator("?", true, false, true);
        this.scalar(k, this.stringStyle(k), flags, false);
        this.writeIndent();
        this.writeIndicator(":", true, false, true);
      }
      this.node(v[key], true);
    }
    this.indent = saved;
  }

  emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.writeIndicator(close, false, false, false);
  }

  /** A plain scalar that needs no analysis (null, booleans, numbers). */
  simplePlain(s: string): void {
    if (!this.whitespace) {
      this.out += " ";
      this.column++;
    }
    this.out += s;
    this.column += s.length;
    this.whitespace = false;
    this.indention = false;
  }

  /** encode.go stringv: the requested style. */
  stringStyle(s: string): number {
    if (s.indexOf("\n") >= 0) return LITERAL;
    const r = resolvePlain(s);
    if (r.kind === "str" && !isBase60Float(s)) return PLAIN;
    return DOUBLE;
  }

  stringNode(s: string): void {
    const flags = analyzeScalar(s);
    if ((flags & CONTROL) !== 0) throw new GoYamlError(CONTROL_ERROR);
    this.scalar(s, this.stringStyle(s), flags, false);
  }

  /** A map key as go-yaml re-reads it from Go's JSON (see goJsonRoundTrip). */
  goJsonKey(k: string): string {
    if (k.indexOf("\u0085") >= 0 && this.pendingError === undefined) {
      // go-yaml cannot read a flow-mapping key that spans lines. Reported after the whole value was
      // checked for control characters, which go-yaml's reader rejects first. The line number is approximate.
      this.pendingError = "yaml: line 1: did not find expected ',' or '}'";
    }
    return wellFormed(k);
  }

  /** yaml_emitter_select_scalar_style + increase_indent(flow) + process_scalar. */
  scalar(s: string, style: number, flags: number, simpleKey: boolean): void {
    if (simpleKey && (flags & MULTILINE) !== 0) style = DOUBLE;
    if (style === PLAIN) {
      if ((flags & BLOCK_PLAIN_ALLOWED) === 0) style = SINGLE;
      if (s.length === 0 && simpleKey) style = SINGLE;
    }
    if (style === SINGLE && (flags & SINGLE_QUOTED_ALLOWED) === 0) style = DOUBLE;
    if (style === LITERAL && ((flags & BLOCK_ALLOWED) === 0 || simpleKey)) style = DOUBLE;
    const saved = this.indent;
    this.indent = this.indent < 0 ? BEST_INDENT : this.indent + BEST_INDENT;
    const allowBreaks = !simpleKey;
    switch (style) {
      case PLAIN:
        this.writePlain(s, allowBreaks);
        break;
      case SINGLE:
        this.writeSingle(s, allowBreaks);
        break;
      case DOUBLE:
        this.writeDouble(s, allowBreaks);
        break;
      default:
        this.writeLiteral(s);
    }
    this.indent = saved;
  }

  writePlain(s: string, allowBreaks: boolean): void {
    if (!this.whitespace) {
      this.out += " ";
      this.column++;
    }
    const len = s.length;
    if (!allowBreaks || this.column + len <= BEST_WIDTH + 1 || s.indexOf(" ") < 0) {
      // No space can be reached at a column past best_width: write in one go.
      this.out += s;
      this.column += len;
    } else {
      let spaces = false;
      let start = 0; // start of the pending run not yet appended
      for (let i = 0; i < len; i++) {
        if (s.charCodeAt(i) === 0x20) {
          const col = this.column + (i - start);
          if (!spaces && col > BEST_WIDTH && s.charCodeAt(i + 1) !== 0x20) {
            this.out += s.slice(start, i);
            this.column = col;
            this.writeIndent();
            start = i + 1;
          }
          spaces = true;
        } else {
          spaces = false;
        }
      }
      this.out += s.slice(start);
      this.column += len - start;
    }
    this.whitespace = false;
    this.indention = false;
  }

  writeSingle(s: string, allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    const len = s.length;
    let spaces = false;
    let breaks = false;
    let start = 0;
    const flush = (i: number) => {
      if (i > start) {
        this.out += s.slice(start, i);
        this.column += i - start;
      }
    };
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x20) {
        if (
          allowBreaks &&
          !spaces &&
          this.column + (i - start) > BEST_WIDTH &&
          i > 0 &&
          i < len - 1 &&
          s.charCodeAt(i + 1) !== 0x20
        ) {
          flush(i);
          this.writeIndent();
          start = i + 1;
        }
        spaces = true;
      } else if (isBreak(c)) {
        flush(i);
        if (!breaks && c === 0x0a) this.putBreak();
        if (c === 0x0a) this.putBreak();
        else this.out += s[i];
        this.column = 0;
        start = i + 1;
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) {
          flush(i);
          start = i;
          this.writeIndent();
        }
        if (c === 0x27) {
          flush(i);
          this.out += "'";
          this.column++;
          start = i;
        }
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    flush(len);
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeDouble(s: string, allowBreaks: boolean): void {
    this.writeIndicator('"', true, false, false);
    const len = s.length;
    const bomStart = len > 0 && s.charCodeAt(0) === 0xfeff;
    let spaces = false;
    let start = 0;
    const flush = (i: number) => {
      if (i > start) {
        this.out += s.slice(start, i);
        this.column += i - start;
      }
    };
    for (let i = 0; i < len; i++) {
      let c = s.charCodeAt(i);
      let w = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          w = 2;
        }
      }
      if (bomStart || !isPrintable(c) || isBreak(c) || c === 0x22 || c === 0x5c) {
        flush(i);
        const e = escapeFor(c);
        this.out += e;
        this.column += e.length;
        i += w - 1;
        start = i + 1;
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.column + (i - start) > BEST_WIDTH && i > 0 && i < len - 1) {
          flush(i);
          this.writeIndent();
          if (s.charCodeAt(i + 1) === 0x20) {
            this.out += "\\";
            this.column++;
          }
          start = i + 1;
        }
        spaces = true;
      } else {
        spaces = false;
      }
    }
    flush(len);
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  writeLiteral(s: string): void {
    this.writeIndicator("|", true, false, false);
    // Block scalar hints.
    const c0 = s.charCodeAt(0);
    if (c0 === 0x20 || isBreak(c0)) this.writeIndicator(String(BEST_INDENT), false, false, false);
    const len = s.length;
    const last = s.charCodeAt(len - 1);
    let chomp = "";
    if (!isBreak(last)) chomp = "-";
    else if (len === 1) chomp = "+";
    else if (isBreak(s.charCodeAt(len - 2))) chomp = "+";
    if (chomp !== "") this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    let start = 0;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (isBreak(c)) {
        if (i > start) {
          this.out += s.slice(start, i);
          this.column += i - start;
        }
        this.out += c === 0x0a ? "\n" : s[i];
        this.column = 0;
        start = i + 1;
        this.indention = true;
        breaks = true;
      } else if (breaks) {
        this.writeIndent();
        this.indention = false;
        breaks = false;
      }
    }
    if (len > start) {
      this.out += s.slice(start);
      this.column += len - start;
    }
  }
}

/**
 * Exactly what sigs.k8s.io/yaml JSONToYAML returns for the JSON encoding of `value` (no leading
 * "---\n"): go-yaml v2 re-reads the JSON (so numbers become int/uint64/float64 by YAML 1.1 rules),
 * sorts map keys with its natural order and emits block YAML.
 *
 * Throws a GoYamlError with Go's message where Go fails: "json: unsupported value: NaN" (non-finite numbers),
 * "yaml: control characters are not allowed" (U+007F–U+009F except U+0085, U+FFFE, U+FFFF, which Go's
 * json.Marshal leaves raw and go-yaml's reader rejects), and "yaml: line 1: did not find expected ',' or '}'"
 * for a key containing U+0085 (the line number Go reports depends on the JSON text's field order, which a
 * value does not carry). Lone UTF-16 surrogates are written as U+FFFD, as Go's json.Marshal does. Nesting
 * deeper than a few thousand levels overflows the JS stack (RangeError).
 */
export function toGoYaml(value: JsonValue): string {
  const e = new Emitter();
  e.node(value, false);
  if (e.pendingError !== undefined) throw new GoYamlError(e.pendingError);
  // Document end: yaml_emitter_write_indent at indent 0.
  e.indent = -1;
  e.writeIndent();
  return e.out;
}
