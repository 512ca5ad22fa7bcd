/**
 * Locating JSON values in a stream of concatenated values, and Go's encoding/json syntax error
 * messages (`invalid character 'x' after object key`) for text that JSON.parse rejects.
 */

const WS = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** Index of the first non-JSON-whitespace character at or after `i`. */
export function skipJsonSpace(text: string, i: number): number {
  while (i < text.length && WS(text.charCodeAt(i))) i++;
  return i;
}

/**
 * The end of the JSON string whose opening quote is at `open`: the index after its closing quote,
 * or -1. Jumps from quote to quote (indexOf is far faster than a character loop on long strings
 * such as base64 manifests), checking that a quote is not escaped by an odd run of backslashes.
 */
export function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let k = q - 1;
    while (k > open && text.charCodeAt(k) === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** A value located in a stream, and the line feeds seen outside strings while scanning it. */
export interface ScannedValue {
  /** End (exclusive) of the value, or -1 if the text ends first. */
  end: number;
  /** Line feeds passed between `start` and `end` (outside strings, where JSON allows them). */
  newlines: number;
  /** The deepest nesting of objects and arrays seen. */
  deepest?: number;
}

/**
 * findJsonValueEnd for an object or array at `start`, also counting the line feeds inside it, so
 * that a stream reader learns each value's line without a second pass over the text. Line feeds
 * inside strings are invalid JSON (JSON.parse rejects such a value) and are not counted.
 */
/** encoding/json's maxNestingDepth. */
export const MAX_NESTING_DEPTH = 10000;

export function scanJsonContainer(text: string, start: number, out: ScannedValue): ScannedValue {
  const n = text.length;
  let depth = 0;
  let deepest = 0;
  let newlines = 0;
  for (let i = start; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const e = stringEnd(text, i);
      if (e < 0) break;
      i = e - 1;
    } else if (c === 0x0a) newlines++;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) {
        out.end = i + 1;
        out.newlines = newlines;
        out.deepest = deepest;
        return out;
      }
    }
  }
  out.end = -1;
  out.newlines = newlines;
  return out;
}

/**
 * The end (exclusive) of the JSON value that starts at `start` (a non-space character), found by
 * tracking nesting, strings and escapes only; -1 if the text ends first. The value's syntax is
 * not checked: JSON.parse does that.
 */
export function findJsonValueEnd(text: string, start: number): number {
  const n = text.length;
  const first = text.charCodeAt(start);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let i = start; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        const e = stringEnd(text, i);
        if (e < 0) return -1;
        i = e - 1;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  if (first === 0x22) {
    let i = start + 1;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d === 0x5c) i += 2;
      else if (d === 0x22) return i + 1;
      else i++;
    }
    return -1;
  }
  let i = start;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (WS(c) || c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2c || c === 0x7d || c === 0x5d || c === 0x3a) break;
    i++;
  }
  return i;
}

/** Go's quoteChar for syntax error messages. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const q = JSON.stringify(c);
  return "'" + q.slice(1, -1) + "'";
}

export interface GoJsonSyntaxError {
  /** Go's message, e.g. `invalid character '}' looking for beginning of object key string`. */
  message: string;
  /** Go's SyntaxError.Offset relative to `start`: bytes read including the offending one. */
  offset: number;
  /** True when the text ended inside the value (Go's decoder then says `unexpected EOF`). */
  eof: boolean;
}

/**
 * Runs Go's JSON scanner over the single value starting at `start` and returns the first syntax
 * error, or undefined if the value is well-formed. Offsets count UTF-8 bytes as Go does.
 */
export function goJsonSyntaxError(text: string, start: number): GoJsonSyntaxError | undefined {
  type Ctx = "obj-key" | "obj-colon" | "obj-value-end" | "arr-value-end";
  const stack: Ctx[] = [];
  let i = start;
  let bytes = 0;
  const n = text.length;
  const err = (ch: string, context: string): GoJsonSyntaxError => ({
    message: `invalid character ${quoteChar(ch)} ${context}`,
    offset: bytes,
    eof: false,
  });
  const eof = (): GoJsonSyntaxError => ({ message: "unexpected EOF", offset: bytes, eof: true });
  const next = (): string | undefined => {
    if (i >= n) return undefined;
    const cp = text.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    return ch;
  };
  const peekSpace = (): string | undefined => {
    for (;;) {
      const ch = next();
      if (ch === undefined) return undefined;
      if (!WS(ch.charCodeAt(0))) return ch;
    }
  };
  const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= "0" && ch <= "9";

  // Returns the character after the value (already consumed) or undefined at EOF; or an error.
  const scanValue = (first: string): GoJsonSyntaxError | { after: string | undefined; container?: Ctx } => {
    switch (first) {
      case "{":
        return { after: undefined, container: "obj-key" };
      case "[":
        return { after: undefined, container: "arr-value-end" };
      case '"': {
        for (;;) {
          const ch = next();
          if (ch === undefined) return eof();
          if (ch === '"') return { after: next() };
          if (ch === "\\") {
            const e = next();
            if (e === undefined) return eof();
            if (e === "u") {
              for (let k = 0; k < 4; k++) {
                const h = next();
                if (h === undefined) return eof();
                if (!/^[0-9a-fA-F]$/.test(h)) return err(h, "in \\u hexadecimal character escape");
              }
            } else if (!'"\\/bfnrt'.includes(e)) return err(e, "in string escape code");
          } else if (ch.charCodeAt(0) < 0x20) return err(ch, "in string literal");
        }
      }
      case "t":
      case "f":
      case "n": {
        const word = first === "t" ? "true" : first === "f" ? "false" : "null";
        for (let k = 1; k < word.length; k++) {
          const ch = next();
          if (ch === undefined) return eof();
          if (ch !== word[k]) return err(ch, `in literal ${word} (expecting '${word[k]}')`);
        }
        return { after: next() };
      }
      default: {
        let ch: string | undefined = first;
        if (ch === "-") {
          ch = next();
          if (ch === undefined) return eof();
          if (!isDigit(ch)) return err(ch, "in numeric literal");
        }
        if (ch === "0") ch = next();
        else if (isDigit(ch)) {
          do ch = next();
          while (isDigit(ch));
        } else return err(ch as string, "looking for beginning of value");
        if (ch === ".") {
          ch = next();
          if (ch === undefined) return eof();
          if (!isDigit(ch)) return err(ch, "after decimal point in numeric literal");
          do ch = next();
          while (isDigit(ch));
        }
        if (ch === "e" || ch === "E") {
          ch = next();
          if (ch === "+" || ch === "-") ch = next();
          if (ch === undefined) return eof();
          if (!isDigit(ch)) return err(ch, "in exponent of numeric literal");
          do ch = next();
          while (isDigit(ch));
        }
        return { after: ch };
      }
    }
  };

  let ch = peekSpace();
  if (ch === undefined) return eof();
  for (;;) {
    const r = scanValue(ch as string);
    if ("message" in r) return r;
    if (r.container) {
      stack.push(r.container);
      // encoding/json's scanner: at most 10000 nested objects and arrays
      if (stack.length > MAX_NESTING_DEPTH) return err(ch as string, "exceeded max depth");
      const c = peekSpace();
      if (c === undefined) return eof();
      if (r.container === "obj-key") {
        if (c === "}") {
          stack.pop();
          if (stack.length === 0) return undefined;
          ch = next();
        } else if (c !== '"') return err(c, "looking for beginning of object key string");
        else {
          const k = scanValue('"');
          if ("message" in k) return k;
          let a = k.after;
          while (a !== undefined && WS(a.charCodeAt(0))) a = next();
          if (a === undefined) return eof();
          if (a !== ":") return err(a, "after object key");
          stack[stack.length - 1] = "obj-value-end";
          const v = peekSpace();
          if (v === undefined) return eof();
          ch = v;
          continue;
        }
      } else {
        if (c === "]") {
          stack.pop();
          if (stack.length === 0) return undefined;
          ch = next();
        } else {
          ch = c;
          continue;
        }
      }
    } else {
      ch = r.after;
    }
    // after a complete value: close containers / separators
    for (;;) {
      if (stack.length === 0) return undefined;
      while (ch !== undefined && WS(ch.charCodeAt(0))) ch = next();
      if (ch === undefined) return eof();
      const top = stack[stack.length - 1];
      if (top === "obj-value-end") {
        if (ch === ",") {
          const k = peekSpace();
          if (k === undefined) return eof();
          if (k !== '"') return err(k, "looking for beginning of object key string");
          const ks = scanValue('"');
          if ("message" in ks) return ks;
          let a = ks.after;
          while (a !== undefined && WS(a.charCodeAt(0))) a = next();
          if (a === undefined) return eof();
          if (a !== ":") return err(a, "after object key");
          const v = peekSpace();
          if (v === undefined) return eof();
          ch = v;
          break;
        }
        if (ch === "}") {
          stack.pop();
          ch = stack.length ? next() : undefined;
          if (stack.length === 0) return undefined;
          continue;
        }
        return err(ch, "after object key:value pair");
      }
      // array
      if (ch === ",") {
        const v = peekSpace();
        if (v === undefined) return eof();
        ch = v;
        break;
      }
      if (ch === "]") {
        stack.pop();
        ch = stack.length ? next() : undefined;
        if (stack.length === 0) return undefined;
        continue;
      }
      return err(ch, "after array element");
    }
  }
}
