// A port of go-yaml v2's libyaml scanner: scannerc.go, the parts of readerc.go that matter for a
// JavaScript string input, and the token structures of yamlh.go / yamlprivateh.go, from
// go.yaml.in/yaml/v2 v2.4.4 (the same files as gopkg.in/yaml.v2 v2.4.0 and go.yaml.in/yaml/v2 v2.4.3).
// Function names follow the Go source (yaml_parser_fetch_next_token, …) so the two can be read side by side.
//
// Differences of representation (not of behaviour):
// * The input is a JS string, not bytes. Positions are UTF-16 indexes; marks keep `line` and the index
//   of the line start; a mark's column and index (counted in characters by Go) are derived from them,
//   correcting for surrogate pairs when the text has any.
// * readerc.go decodes the input in 512-byte chunks, and some behaviour depends on that: a character
//   that is not allowed ("control characters are not allowed") is reported when the chunk holding it is
//   decoded (so not at all if the first document ends before), and is_bom() looks at the first character
//   of the reader's buffer, not at the current one. When the text has neither kind of character (the
//   usual case) the chunking is unobservable and skipped; otherwise it is emulated exactly (slow path).
// * Scalar values are built from slices of the text instead of byte-by-byte appends.
// * Errors are thrown (YamlSyntaxError) instead of being returned as false with parser.error set.

export const yaml_NO_TOKEN = 0;
export const yaml_STREAM_START_TOKEN = 1;
export const yaml_STREAM_END_TOKEN = 2;
export const yaml_VERSION_DIRECTIVE_TOKEN = 3;
export const yaml_TAG_DIRECTIVE_TOKEN = 4;
export const yaml_DOCUMENT_START_TOKEN = 5;
export const yaml_DOCUMENT_END_TOKEN = 6;
export const yaml_BLOCK_SEQUENCE_START_TOKEN = 7;
export const yaml_BLOCK_MAPPING_START_TOKEN = 8;
export const yaml_BLOCK_END_TOKEN = 9;
export const yaml_FLOW_SEQUENCE_START_TOKEN = 10;
export const yaml_FLOW_SEQUENCE_END_TOKEN = 11;
export const yaml_FLOW_MAPPING_START_TOKEN = 12;
export const yaml_FLOW_MAPPING_END_TOKEN = 13;
export const yaml_BLOCK_ENTRY_TOKEN = 14;
export const yaml_FLOW_ENTRY_TOKEN = 15;
export const yaml_KEY_TOKEN = 16;
export const yaml_VALUE_TOKEN = 17;
export const yaml_ALIAS_TOKEN = 18;
export const yaml_ANCHOR_TOKEN = 19;
export const yaml_TAG_TOKEN = 20;
export const yaml_SCALAR_TOKEN = 21;

export const yaml_ANY_SCALAR_STYLE = 0;
export const yaml_PLAIN_SCALAR_STYLE = 1;
export const yaml_SINGLE_QUOTED_SCALAR_STYLE = 2;
export const yaml_DOUBLE_QUOTED_SCALAR_STYLE = 3;
export const yaml_LITERAL_SCALAR_STYLE = 4;
export const yaml_FOLDED_SCALAR_STYLE = 5;

/** yaml_error_type_t (the kinds that can occur while parsing). */
export const yaml_READER_ERROR = 2;
export const yaml_SCANNER_ERROR = 3;
export const yaml_PARSER_ERROR = 4;

/** parser.error / problem / problem_mark / context_mark, thrown instead of returned. Lines are 0-based. */
export class YamlSyntaxError {
  constructor(
    readonly error: number,
    readonly problem: string,
    readonly problemLine: number,
    readonly contextLine: number,
  ) {}
}

/** yaml_token_t (marks reduced to the start line, the only part that reaches an error message). */
export class Token {
  /** Scalar value, anchor/alias name, tag handle, or %TAG handle. */
  value = "";
  /** Tag suffix, or %TAG prefix. */
  suffix = "";
  style = 0;
  major = 0;
  minor = 0;
  constructor(
    public typ: number,
    public line: number,
  ) {}
}

/** yaml_simple_key_t (the mark as position, line and line start). */
class SimpleKey {
  possible = false;
  required = false;
  token_number = 0;
  pos = 0;
  line = 0;
  lineStart = 0;
}

const max_flow_level = 10000;
const max_indents = 10000;
const input_raw_buffer_size = 512;

// Character classes of yamlprivateh.go, on UTF-16 code units (NUL stands for the end of the input).
function is_break(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
}
function is_breakz(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0 || c === 0x85 || c === 0x2028 || c === 0x2029;
}
function is_blankz(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0 || c === 0x85 || c === 0x2028 || c === 0x2029;
}
function is_blank(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
function is_alpha(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d;
}
function is_digit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function is_hex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
function as_hex(c: number): number {
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return c - 0x30;
}
/** The characters a plain scalar cannot start with (yaml_parser_fetch_next_token's long condition). */
function is_indicator(c: number): boolean {
  switch (c) {
    case 0x2d: // -
    case 0x3f: // ?
    case 0x3a: // :
    case 0x2c: // ,
    case 0x5b: // [
    case 0x5d: // ]
    case 0x7b: // {
    case 0x7d: // }
    case 0x23: // #
    case 0x26: // &
    case 0x2a: // *
    case 0x21: // !
    case 0x7c: // |
    case 0x3e: // >
    case 0x27: // '
    case 0x22: // "
    case 0x25: // %
    case 0x40: // @
    case 0x60: // `
      return true;
  }
  return false;
}
/** The characters that end a plain scalar in the flow context: ',', '?', '[', ']', '{', '}'. */
function is_flow_indicator(c: number): boolean {
  return c === 0x2c || c === 0x3f || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d;
}
/** Characters of a tag URI (yaml_parser_scan_tag_uri) other than alphanumerics, '-', '_' and '%'. */
function is_uri_char(c: number): boolean {
  switch (c) {
    case 0x3b: // ;
    case 0x2f: // /
    case 0x3f: // ?
    case 0x3a: // :
    case 0x40: // @
    case 0x26: // &
    case 0x3d: // =
    case 0x2b: // +
    case 0x24: // $
    case 0x2c: // ,
    case 0x2e: // .
    case 0x21: // !
    case 0x7e: // ~
    case 0x2a: // *
    case 0x27: // '
    case 0x28: // (
    case 0x29: // )
    case 0x5b: // [
    case 0x5d: // ]
      return true;
  }
  return false;
}

/**
 * readerc.go's allowed range: #x9 | #xA | #xD | [#x20-#x7E] | #x85 |
 * [#xA0-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
 */
function allowed(cp: number): boolean {
  return (
    cp === 0x09 ||
    cp === 0x0a ||
    cp === 0x0d ||
    (cp >= 0x20 && cp <= 0x7e) ||
    cp === 0x85 ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * Characters that need the reader emulation (not allowed, or U+FEFF), surrogates (column counting), and the
 * line breaks other than LF (which the fast path of scan_block_scalar does not handle): one pass over the text.
 */
const SPECIAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]/;

/** Tests set `fast` to false to compare the fast paths (scan_literal_block_lines) with the general code. */
export const scannerFastPaths = { fast: true };

/** `\n` followed by 1 to n spaces, by n (scan_block_scalar's fast path). */
const indentRes: RegExp[] = [];
function indentRe(n: number): RegExp {
  let re = indentRes[n];
  if (re === undefined) {
    re = new RegExp(`\n {1,${n}}`, "g");
    if (n < 256) indentRes[n] = re;
  }
  return re;
}

const NUL_PAD = "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

export class Scanner {
  /** The text followed by NULs (Go's buffer reads NUL past the end of the input). */
  private src: string;
  readonly len: number;

  // parser.mark: position, line, and where the line starts (column and index are derived).
  pos = 0;
  line = 0;
  lineStart = 0;

  /** Sorted positions of surrogate pairs (characters that Go counts once), or undefined if none. */
  private astral: number[] | undefined;

  // Reader emulation (slow path only; in the fast path `thresh` is Infinity).
  /** A cache(n) request with pos + n > thresh must look at the reader. */
  private thresh = Infinity;
  private slow = false;
  /** The text has no CR, NEL, LS or PS: every line break is LF (or the text is read by the slow path). */
  private lfOnly = true;
  /** Index of the first character of the reader's buffer (is_bom looks there); -1 when unused. */
  private bufStart = -1;
  private decEnd = 0;
  private decEndByte = 0;
  private rawStartByte = 0;
  private rawEndByte = 0;
  private totalBytes = 0;
  private eof = false;
  private nuls = 0;
  private encodingKnown = false;
  private bomBytes = 0;

  // Scanner state (yaml_parser_t).
  stream_start_produced = false;
  stream_end_produced = false;
  flow_level = 0;
  tokens: Token[] = [];
  tokens_head = 0;
  tokens_tail = 0;
  private free_tokens: Token[] = [];
  tokens_parsed = 0;
  token_available = false;
  indent = 0;
  indents: number[] = [];
  simple_key_allowed = false;
  simple_keys: SimpleKey[] = [];
  /** parser.simple_keys_by_tok (a Go map) as two small parallel arrays: token number → simple_keys index. */
  private sk_tok: number[] = [];
  private sk_idx: number[] = [];
  private sk_n = 0;
  /** The indentation determined by scan_block_scalar_breaks (an out parameter in Go). */
  private block_indent = 0;

  constructor(text: string) {
    // yaml_parser_determine_encoding skips a UTF-8 BOM at the start of the input; newParser reads "" as "\n".
    if (text.length === 0) text = "\n";
    if (text.charCodeAt(0) === 0xfeff) {
      text = text.slice(1);
      this.bomBytes = 3;
    }
    this.len = text.length;
    this.src = text + NUL_PAD;
    const m = SPECIAL.exec(text);
    if (m !== null) {
      // Go receives the text as UTF-8: a lone surrogate can only have been U+FFFD (which the reader allows).
      const wf = text as unknown as { isWellFormed(): boolean; toWellFormed(): string }; // ES2024
      if (!wf.isWellFormed()) {
        text = wf.toWellFormed();
        this.src = text + NUL_PAD;
      }
      this.prepareSlowPath(text, m.index);
    }
  }

  /** Finds surrogate pairs, line breaks other than LF, and whether the reader must be emulated. */
  private prepareSlowPath(text: string, from: number): void {
    const astral: number[] = [];
    let slow = false;
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029) {
        this.lfOnly = false;
      } else if (c >= 0xd800 && c <= 0xdbff) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          astral.push(i);
          i++;
        }
      } else if (c === 0xfeff || (c < 0xd800 && !allowed(c)) || c === 0xfffe || c === 0xffff) {
        slow = true;
      }
    }
    if (astral.length > 0) this.astral = astral;
    if (slow) {
      this.slow = true;
      this.thresh = -Infinity;
      this.totalBytes = this.bomBytes + Buffer.byteLength(text, "utf8");
    }
  }

  // ---- marks

  /** Number of characters (as Go counts them) between positions a <= b. */
  private chars(a: number, b: number): number {
    const astral = this.astral;
    if (astral === undefined) return b - a;
    return b - a - (lowerBound(astral, b) - lowerBound(astral, a));
  }

  /** parser.mark.column */
  column(): number {
    return this.astral === undefined ? this.pos - this.lineStart : this.chars(this.lineStart, this.pos);
  }

  // ---- readerc.go (slow path)

  /**
   * if parser.unread < length && !yaml_parser_update_buffer(parser,
   * length) — call only when pos + length > thresh.
   */
  private update_buffer(length: number): void {
    if (!this.slow) return;
    let unread = this.chars(this.pos, this.decEnd) + this.nuls;
    if (unread >= length) {
      this.setThresh();
      return;
    }
    if (!this.encodingKnown) {
      // yaml_parser_determine_encoding
      while (!this.eof && this.rawEndByte - this.rawStartByte < 3) this.update_raw_buffer();
      this.decEndByte = this.bomBytes;
      this.encodingKnown = true;
    }
    // Move the unread characters to the beginning of the buffer.
    this.bufStart = this.pos;
    let first = true;
    const src = this.src;
    while (unread < length) {
      if (!first || this.decEndByte === this.rawEndByte) this.update_raw_buffer();
      first = false;
      let i = this.decEnd;
      let b = this.decEndByte;
      while (i < this.len) {
        const c = src.charCodeAt(i);
        let cp = c;
        let units = 1;
        let w: number;
        if (c < 0x80) w = 1;
        else if (c < 0x800) w = 2;
        else if (c >= 0xd800 && c <= 0xdbff && (src.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
          w = 4;
          units = 2;
          cp = 0x10000;
        } else {
          w = 3;
          if (c >= 0xd800 && c <= 0xdfff) cp = 0xfffd; // a lone surrogate, U+FFFD once encoded
        }
        if (b + w > this.rawEndByte) break;
        if (!allowed(cp)) throw new YamlSyntaxError(yaml_READER_ERROR, "control characters are not allowed", 0, 0);
        i += units;
        b += w;
        unread++;
      }
      this.decEnd = i;
      this.decEndByte = b;
      if (this.eof) {
        this.nuls++;
        unread++;
        break;
      }
    }
    this.setThresh();
  }

  private setThresh(): void {
    // cache(n) asks for at most 8 characters; with surrogate pairs 8 characters can take 16 positions.
    this.thresh = this.decEnd - 16;
  }

  /** yaml_parser_update_raw_buffer with the string read handler. */
  private update_raw_buffer(): void {
    if (this.decEndByte === this.rawStartByte && this.rawEndByte - this.rawStartByte === input_raw_buffer_size) return;
    if (this.eof) return;
    this.rawStartByte = this.decEndByte;
    if (this.rawEndByte === this.totalBytes) {
      this.eof = true;
      return;
    }
    this.rawEndByte = Math.min(this.decEndByte + input_raw_buffer_size, this.totalBytes);
  }

  // ---- scannerc.go

  /** skip */
  private skip(): void {
    const c = this.src.charCodeAt(this.pos);
    this.pos += c >= 0xd800 && c <= 0xdbff && (this.src.charCodeAt(this.pos + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }

  /** skip_line */
  private skip_line(): void {
    const c = this.src.charCodeAt(this.pos);
    if (c === 0x0d && this.src.charCodeAt(this.pos + 1) === 0x0a) {
      this.pos += 2;
      this.line++;
      this.lineStart = this.pos;
    } else if (is_break(c)) {
      this.pos++;
      this.line++;
      this.lineStart = this.pos;
    }
  }

  /** read_line: consumes a line break and returns what it contributes to a scalar. */
  private read_line(): string {
    const c = this.src.charCodeAt(this.pos);
    let s: string;
    if (c === 0x0d && this.src.charCodeAt(this.pos + 1) === 0x0a) {
      this.pos += 2;
      s = "\n";
    } else if (c === 0x0d || c === 0x0a || c === 0x85) {
      this.pos++;
      s = "\n";
    } else if (c === 0x2028 || c === 0x2029) {
      this.pos++;
      s = c === 0x2028 ? "\u2028" : "\u2029";
    } else {
      return "";
    }
    this.line++;
    this.lineStart = this.pos;
    return s;
  }

  private cache(n: number): void {
    if (this.pos + n > this.thresh) this.update_buffer(n);
  }

  private scanner_error(context: string, contextLine: number, problem: string): YamlSyntaxError {
    void context;
    return new YamlSyntaxError(yaml_SCANNER_ERROR, problem, this.line, contextLine);
  }

  /** A token object: a fresh one, or one the parser has consumed (skip_token) and will not read again. */
  private new_token(typ: number, line: number): Token {
    const t = this.free_tokens.pop();
    if (t === undefined) return new Token(typ, line);
    t.typ = typ;
    t.line = line;
    t.value = "";
    t.suffix = "";
    t.style = 0;
    t.major = 0;
    t.minor = 0;
    return t;
  }

  /** yaml_insert_token (the queue is tokens[tokens_head, tokens_tail)) */
  private insert_token(pos: number, token: Token): void {
    const tokens = this.tokens;
    // Check if we can move the queue at the beginning of the buffer.
    if (this.tokens_head === this.tokens_tail) {
      this.tokens_head = 0;
      this.tokens_tail = 0;
    } else if (this.tokens_head > 1024) {
      tokens.copyWithin(0, this.tokens_head, this.tokens_tail);
      this.tokens_tail -= this.tokens_head;
      this.tokens_head = 0;
    }
    let j = this.tokens_tail++;
    if (pos >= 0) {
      const at = this.tokens_head + pos;
      for (; j > at; j--) tokens[j] = tokens[j - 1];
    }
    tokens[j] = token;
  }

  /** peek_token (parserc.go) */
  peek_token(): Token {
    if (!this.token_available) this.fetch_more_tokens();
    return this.tokens[this.tokens_head];
  }

  /** skip_token (parserc.go) */
  skip_token(): void {
    this.token_available = false;
    this.tokens_parsed++;
    const t = this.tokens[this.tokens_head];
    this.stream_end_produced = t.typ === yaml_STREAM_END_TOKEN;
    this.tokens_head++;
    // The parser reads a skipped token at most until its next peek_token; then the object can be reused.
    if (this.free_tokens.length < 64) this.free_tokens.push(t);
  }

  private sk_get(tok: number): number {
    const t = this.sk_tok;
    for (let i = 0; i < this.sk_n; i++) if (t[i] === tok) return this.sk_idx[i];
    return -1;
  }

  /** Removes entry i (the order of the entries does not matter). */
  private sk_remove_at(i: number): void {
    const last = --this.sk_n;
    this.sk_tok[i] = this.sk_tok[last];
    this.sk_idx[i] = this.sk_idx[last];
  }

  private sk_set(tok: number, idx: number): void {
    const t = this.sk_tok;
    // entries for tokens already parsed can never be looked up again
    for (let i = this.sk_n - 1; i >= 0; i--) if (t[i] === tok || t[i] < this.tokens_parsed) this.sk_remove_at(i);
    t[this.sk_n] = tok;
    this.sk_idx[this.sk_n] = idx;
    this.sk_n++;
  }

  private sk_delete(tok: number): void {
    const t = this.sk_tok;
    for (let i = 0; i < this.sk_n; i++) {
      if (t[i] === tok) {
        this.sk_remove_at(i);
        return;
      }
    }
  }

  /** yaml_parser_fetch_more_tokens */
  private fetch_more_tokens(): void {
    for (;;) {
      // [Go] The comment parsing logic requires a lookahead of two tokens so that foot comments may be
      // parsed in time of associating them with the tokens that are parsed before them. (v2: one token)
      if (this.tokens_head !== this.tokens_tail) {
        const head_tok_idx = this.sk_get(this.tokens_parsed);
        if (head_tok_idx < 0) break;
        const sk = this.simple_keys[head_tok_idx];
        if (sk === undefined) throw new Error("yaml: internal error: stale simple key index");
        if (!this.simple_key_is_valid(sk)) break;
      }
      this.fetch_next_token();
    }
    this.token_available = true;
  }

  /** yaml_parser_fetch_next_token */
  private fetch_next_token(): void {
    this.cache(1);
    if (!this.stream_start_produced) {
      this.fetch_stream_start();
      return;
    }
    this.scan_to_next_token();
    this.unroll_indent(this.column());
    this.cache(4);
    const src = this.src;
    const pos = this.pos;
    const c = src.charCodeAt(pos);
    if (c === 0 && pos >= this.len) {
      this.fetch_stream_end();
      return;
    }
    const col0 = pos === this.lineStart && this.column() === 0;
    if (col0 && c === 0x25 /* % */) {
      this.fetch_directive();
      return;
    }
    const c1 = src.charCodeAt(pos + 1);
    if (col0 && c === 0x2d && c1 === 0x2d && src.charCodeAt(pos + 2) === 0x2d && is_blankz(src.charCodeAt(pos + 3))) {
      this.fetch_document_indicator(yaml_DOCUMENT_START_TOKEN);
      return;
    }
    if (col0 && c === 0x2e && c1 === 0x2e && src.charCodeAt(pos + 2) === 0x2e && is_blankz(src.charCodeAt(pos + 3))) {
      this.fetch_document_indicator(yaml_DOCUMENT_END_TOKEN);
      return;
    }
    switch (c) {
      case 0x5b: // [
        this.fetch_flow_collection_start(yaml_FLOW_SEQUENCE_START_TOKEN);
        return;
      case 0x7b: // {
        this.fetch_flow_collection_start(yaml_FLOW_MAPPING_START_TOKEN);
        return;
      case 0x5d: // ]
        this.fetch_flow_collection_end(yaml_FLOW_SEQUENCE_END_TOKEN);
        return;
      case 0x7d: // }
        this.fetch_flow_collection_end(yaml_FLOW_MAPPING_END_TOKEN);
        return;
      case 0x2c: // ,
        this.fetch_flow_entry();
        return;
    }
    if (c === 0x2d && is_blankz(c1)) {
      this.fetch_block_entry();
      return;
    }
    if (c === 0x3f && (this.flow_level > 0 || is_blankz(c1))) {
      this.fetch_key();
      return;
    }
    if (c === 0x3a && (this.flow_level > 0 || is_blankz(c1))) {
      this.fetch_value();
      return;
    }
    switch (c) {
      case 0x2a: // *
        this.fetch_anchor(yaml_ALIAS_TOKEN);
        return;
      case 0x26: // &
        this.fetch_anchor(yaml_ANCHOR_TOKEN);
        return;
      case 0x21: // !
        this.fetch_tag();
        return;
      case 0x7c: // |
        if (this.flow_level === 0) {
          this.fetch_block_scalar(true);
          return;
        }
        break;
      case 0x3e: // >
        if (this.flow_level === 0) {
          this.fetch_block_scalar(false);
          return;
        }
        break;
      case 0x27: // '
        this.fetch_flow_scalar(true);
        return;
      case 0x22: // "
        this.fetch_flow_scalar(false);
        return;
    }
    if (
      !(is_blankz(c) || is_indicator(c)) ||
      (c === 0x2d && !is_blank(c1)) ||
      (this.flow_level === 0 && (c === 0x3f || c === 0x3a) && !is_blankz(c1))
    ) {
      this.fetch_plain_scalar();
      return;
    }
    throw this.scanner_error(
      "while scanning for the next token",
      this.line,
      "found character that cannot start any token",
    );
  }

  /** yaml_simple_key_is_valid (throws where Go returns ok == false) */
  private simple_key_is_valid(sk: SimpleKey): boolean {
    if (!sk.possible) return false;
    // [Go] this is the "simple_key.mark.index+1024 < parser.mark.index" check, in characters
    if (sk.line < this.line || (this.pos - sk.pos > 1024 && this.chars(sk.pos, this.pos) > 1024)) {
      if (sk.required) throw this.scanner_error("while scanning a simple key", sk.line, "could not find expected ':'");
      sk.possible = false;
      return false;
    }
    return true;
  }

  /** yaml_parser_save_simple_key */
  private save_simple_key(): void {
    // A simple key is required at the current position if the scanner is in the block context and the
    // current column coincides with the indentation level.
    const required = this.flow_level === 0 && this.indent === this.column();
    if (this.simple_key_allowed) {
      this.remove_simple_key();
      const sk = this.simple_keys[this.simple_keys.length - 1];
      sk.possible = true;
      sk.required = required;
      sk.token_number = this.tokens_parsed + (this.tokens_tail - this.tokens_head);
      sk.pos = this.pos;
      sk.line = this.line;
      sk.lineStart = this.lineStart;
      this.sk_set(sk.token_number, this.simple_keys.length - 1);
    }
  }

  /** yaml_parser_remove_simple_key */
  private remove_simple_key(): void {
    const sk = this.simple_keys[this.simple_keys.length - 1];
    if (sk.possible) {
      if (sk.required) throw this.scanner_error("while scanning a simple key", sk.line, "could not find expected ':'");
      sk.possible = false;
      this.sk_delete(sk.token_number);
    }
  }

  /** yaml_parser_increase_flow_level */
  private increase_flow_level(): void {
    const sk = new SimpleKey();
    sk.token_number = this.tokens_parsed + (this.tokens_tail - this.tokens_head);
    sk.pos = this.pos;
    sk.line = this.line;
    sk.lineStart = this.lineStart;
    this.simple_keys.push(sk);
    this.flow_level++;
    if (this.flow_level > max_flow_level) {
      throw this.scanner_error("while increasing flow level", sk.line, `exceeded max depth of ${max_flow_level}`);
    }
  }

  /** yaml_parser_decrease_flow_level */
  private decrease_flow_level(): void {
    if (this.flow_level > 0) {
      this.flow_level--;
      const last = this.simple_keys.length - 1;
      this.sk_delete(this.simple_keys[last].token_number);
      this.simple_keys.length = last;
    }
  }

  /** yaml_parser_roll_indent (mark reduced to its line) */
  private roll_indent(column: number, number: number, typ: number, markLine: number): void {
    if (this.flow_level > 0) return;
    if (this.indent < column) {
      this.indents.push(this.indent);
      this.indent = column;
      if (this.indents.length > max_indents) {
        throw this.scanner_error(
          "while increasing indent level",
          this.simple_keys[this.simple_keys.length - 1].line,
          `exceeded max depth of ${max_indents}`,
        );
      }
      const token = this.new_token(typ, markLine);
      if (number > -1) number -= this.tokens_parsed;
      this.insert_token(number, token);
    }
  }

  /** yaml_parser_unroll_indent */
  private unroll_indent(column: number): void {
    if (this.flow_level > 0) return;
    while (this.indent > column) {
      this.insert_token(-1, this.new_token(yaml_BLOCK_END_TOKEN, this.line));
      this.indent = this.indents.pop() as number;
    }
  }

  /** yaml_parser_fetch_stream_start */
  private fetch_stream_start(): void {
    this.indent = -1;
    this.simple_keys.push(new SimpleKey());
    this.simple_key_allowed = true;
    this.stream_start_produced = true;
    this.insert_token(-1, this.new_token(yaml_STREAM_START_TOKEN, this.line));
  }

  /** yaml_parser_fetch_stream_end */
  private fetch_stream_end(): void {
    // Force new line.
    if (this.column() !== 0) {
      this.lineStart = this.pos;
      this.line++;
    }
    this.unroll_indent(-1);
    this.remove_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.new_token(yaml_STREAM_END_TOKEN, this.line));
  }

  /** yaml_parser_fetch_directive */
  private fetch_directive(): void {
    this.unroll_indent(-1);
    this.remove_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.scan_directive());
  }

  /** yaml_parser_fetch_document_indicator */
  private fetch_document_indicator(typ: number): void {
    this.unroll_indent(-1);
    this.remove_simple_key();
    this.simple_key_allowed = false;
    const line = this.line;
    this.skip();
    this.skip();
    this.skip();
    this.insert_token(-1, this.new_token(typ, line));
  }

  /** yaml_parser_fetch_flow_collection_start */
  private fetch_flow_collection_start(typ: number): void {
    this.save_simple_key();
    this.increase_flow_level();
    this.simple_key_allowed = true;
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(typ, line));
  }

  /** yaml_parser_fetch_flow_collection_end */
  private fetch_flow_collection_end(typ: number): void {
    this.remove_simple_key();
    this.decrease_flow_level();
    this.simple_key_allowed = false;
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(typ, line));
  }

  /** yaml_parser_fetch_flow_entry */
  private fetch_flow_entry(): void {
    this.remove_simple_key();
    this.simple_key_allowed = true;
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(yaml_FLOW_ENTRY_TOKEN, line));
  }

  /** yaml_parser_fetch_block_entry */
  private fetch_block_entry(): void {
    if (this.flow_level === 0) {
      if (!this.simple_key_allowed) {
        throw this.scanner_error("", this.line, "block sequence entries are not allowed in this context");
      }
      this.roll_indent(this.column(), -1, yaml_BLOCK_SEQUENCE_START_TOKEN, this.line);
    }
    this.remove_simple_key();
    this.simple_key_allowed = true;
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(yaml_BLOCK_ENTRY_TOKEN, line));
  }

  /** yaml_parser_fetch_key */
  private fetch_key(): void {
    if (this.flow_level === 0) {
      if (!this.simple_key_allowed) {
        throw this.scanner_error("", this.line, "mapping keys are not allowed in this context");
      }
      this.roll_indent(this.column(), -1, yaml_BLOCK_MAPPING_START_TOKEN, this.line);
    }
    this.remove_simple_key();
    this.simple_key_allowed = this.flow_level === 0;
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(yaml_KEY_TOKEN, line));
  }

  /** yaml_parser_fetch_value */
  private fetch_value(): void {
    const simple_key = this.simple_keys[this.simple_keys.length - 1];
    if (this.simple_key_is_valid(simple_key)) {
      // Create the KEY token and insert it into the queue.
      this.insert_token(simple_key.token_number - this.tokens_parsed, this.new_token(yaml_KEY_TOKEN, simple_key.line));
      // In the block context, we may need to add the BLOCK-MAPPING-START token.
      const keyColumn =
        this.astral === undefined
          ? simple_key.pos - simple_key.lineStart
          : this.chars(simple_key.lineStart, simple_key.pos);
      this.roll_indent(keyColumn, simple_key.token_number, yaml_BLOCK_MAPPING_START_TOKEN, simple_key.line);
      simple_key.possible = false;
      this.sk_delete(simple_key.token_number);
      this.simple_key_allowed = false;
    } else {
      if (this.flow_level === 0) {
        if (!this.simple_key_allowed) {
          throw this.scanner_error("", this.line, "mapping values are not allowed in this context");
        }
        this.roll_indent(this.column(), -1, yaml_BLOCK_MAPPING_START_TOKEN, this.line);
      }
      this.simple_key_allowed = this.flow_level === 0;
    }
    const line = this.line;
    this.skip();
    this.insert_token(-1, this.new_token(yaml_VALUE_TOKEN, line));
  }

  /** yaml_parser_fetch_anchor */
  private fetch_anchor(typ: number): void {
    this.save_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.scan_anchor(typ));
  }

  /** yaml_parser_fetch_tag */
  private fetch_tag(): void {
    this.save_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.scan_tag());
  }

  /** yaml_parser_fetch_block_scalar */
  private fetch_block_scalar(literal: boolean): void {
    this.remove_simple_key();
    this.simple_key_allowed = true;
    this.insert_token(-1, this.scan_block_scalar(literal));
  }

  /** yaml_parser_fetch_flow_scalar */
  private fetch_flow_scalar(single: boolean): void {
    this.save_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.scan_flow_scalar(single));
  }

  /** yaml_parser_fetch_plain_scalar */
  private fetch_plain_scalar(): void {
    this.save_simple_key();
    this.simple_key_allowed = false;
    this.insert_token(-1, this.scan_plain_scalar());
  }

  /** yaml_parser_scan_to_next_token */
  private scan_to_next_token(): void {
    const src = this.src;
    for (;;) {
      this.cache(1);
      // Allow the BOM (is_bom looks at the start of the reader's buffer, see the header).
      if (this.bufStart >= 0 && this.column() === 0 && src.charCodeAt(this.bufStart) === 0xfeff) this.skip();
      this.cache(1);
      // Eat whitespaces: tabs are allowed in the flow context and after a token that cannot start a simple key.
      const tabs = this.flow_level > 0 || !this.simple_key_allowed;
      let p = this.pos;
      let c = src.charCodeAt(p);
      while (c === 0x20 || (tabs && c === 0x09)) {
        p++;
        if (p + 1 > this.thresh) {
          this.pos = p;
          this.update_buffer(1);
        }
        c = src.charCodeAt(p);
      }
      // Eat a comment until a line break.
      if (c === 0x23) {
        while (!is_breakz(c)) {
          p += c >= 0xd800 && c <= 0xdbff && (src.charCodeAt(p + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
          if (p + 1 > this.thresh) {
            this.pos = p;
            this.update_buffer(1);
          }
          c = src.charCodeAt(p);
        }
      }
      this.pos = p;
      if (is_break(c)) {
        this.cache(2);
        this.skip_line();
        // In the block context, a new line may start a simple key.
        if (this.flow_level === 0) this.simple_key_allowed = true;
      } else {
        break; // We have found a token.
      }
    }
  }

  /** yaml_parser_scan_directive */
  private scan_directive(): Token {
    const startLine = this.line;
    this.skip();
    const name = this.scan_directive_name(startLine);
    let token: Token;
    if (name === "YAML") {
      token = this.new_token(yaml_VERSION_DIRECTIVE_TOKEN, startLine);
      this.scan_version_directive_value(startLine, token);
    } else if (name === "TAG") {
      token = this.new_token(yaml_TAG_DIRECTIVE_TOKEN, startLine);
      this.scan_tag_directive_value(startLine, token);
    } else {
      throw this.scanner_error("while scanning a directive", startLine, "found unknown directive name");
    }
    const src = this.src;
    this.cache(1);
    while (is_blank(src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    if (src.charCodeAt(this.pos) === 0x23) {
      while (!is_breakz(src.charCodeAt(this.pos))) {
        this.skip();
        this.cache(1);
      }
    }
    if (!is_breakz(src.charCodeAt(this.pos))) {
      throw this.scanner_error("while scanning a directive", startLine, "did not find expected comment or line break");
    }
    if (is_break(src.charCodeAt(this.pos))) {
      this.cache(2);
      this.skip_line();
    }
    return token;
  }

  /** yaml_parser_scan_directive_name */
  private scan_directive_name(startLine: number): string {
    this.cache(1);
    const start = this.pos;
    while (is_alpha(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    if (this.pos === start) {
      throw this.scanner_error("while scanning a directive", startLine, "could not find expected directive name");
    }
    if (!is_blankz(this.src.charCodeAt(this.pos))) {
      throw this.scanner_error("while scanning a directive", startLine, "found unexpected non-alphabetical character");
    }
    return this.src.slice(start, this.pos);
  }

  /** yaml_parser_scan_version_directive_value */
  private scan_version_directive_value(startLine: number, token: Token): void {
    this.cache(1);
    while (is_blank(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    token.major = this.scan_version_directive_number(startLine);
    if (this.src.charCodeAt(this.pos) !== 0x2e) {
      throw this.scanner_error(
        "while scanning a %YAML directive",
        startLine,
        "did not find expected digit or '.' character",
      );
    }
    this.skip();
    token.minor = this.scan_version_directive_number(startLine);
  }

  /** yaml_parser_scan_version_directive_number */
  private scan_version_directive_number(startLine: number): number {
    const max_number_length = 2;
    this.cache(1);
    let value = 0;
    let length = 0;
    for (let c = this.src.charCodeAt(this.pos); is_digit(c); c = this.src.charCodeAt(this.pos)) {
      length++;
      if (length > max_number_length) {
        throw this.scanner_error("while scanning a %YAML directive", startLine, "found extremely long version number");
      }
      value = value * 10 + (c - 0x30);
      this.skip();
      this.cache(1);
    }
    if (length === 0) {
      throw this.scanner_error("while scanning a %YAML directive", startLine, "did not find expected version number");
    }
    return value;
  }

  /** yaml_parser_scan_tag_directive_value */
  private scan_tag_directive_value(startLine: number, token: Token): void {
    this.cache(1);
    while (is_blank(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    const handle = this.scan_tag_handle(true, startLine);
    this.cache(1);
    if (!is_blank(this.src.charCodeAt(this.pos))) {
      throw this.scanner_error("while scanning a %TAG directive", startLine, "did not find expected whitespace");
    }
    while (is_blank(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    const prefix = this.scan_tag_uri(true, "", startLine);
    this.cache(1);
    if (!is_blankz(this.src.charCodeAt(this.pos))) {
      throw this.scanner_error(
        "while scanning a %TAG directive",
        startLine,
        "did not find expected whitespace or line break",
      );
    }
    token.value = handle;
    token.suffix = prefix;
  }

  /** yaml_parser_scan_anchor */
  private scan_anchor(typ: number): Token {
    const startLine = this.line;
    this.skip();
    this.cache(1);
    const start = this.pos;
    while (is_alpha(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    const c = this.src.charCodeAt(this.pos);
    // Check if length of the anchor is greater than 0 and it is followed by a whitespace character or
    // one of the indicators: '?', ':', ',', ']', '}', '%', '@', '`'.
    if (
      this.pos === start ||
      !(
        is_blankz(c) ||
        c === 0x3f ||
        c === 0x3a ||
        c === 0x2c ||
        c === 0x5d ||
        c === 0x7d ||
        c === 0x25 ||
        c === 0x40 ||
        c === 0x60
      )
    ) {
      const context = typ === yaml_ANCHOR_TOKEN ? "while scanning an anchor" : "while scanning an alias";
      throw this.scanner_error(context, startLine, "did not find expected alphabetic or numeric character");
    }
    const token = this.new_token(typ, startLine);
    token.value = this.src.slice(start, this.pos);
    return token;
  }

  /** yaml_parser_scan_tag */
  private scan_tag(): Token {
    const startLine = this.line;
    let handle: string;
    let suffix: string;
    this.cache(2);
    if (this.src.charCodeAt(this.pos + 1) === 0x3c /* < */) {
      // Keep the handle as ''; eat '!<'.
      handle = "";
      this.skip();
      this.skip();
      suffix = this.scan_tag_uri(false, "", startLine);
      if (this.src.charCodeAt(this.pos) !== 0x3e) {
        throw this.scanner_error("while scanning a tag", startLine, "did not find the expected '>'");
      }
      this.skip();
    } else {
      // The tag has either the '!suffix' or the '!handle!suffix' form.
      handle = this.scan_tag_handle(false, startLine);
      if (handle.charCodeAt(0) === 0x21 && handle.length > 1 && handle.charCodeAt(handle.length - 1) === 0x21) {
        suffix = this.scan_tag_uri(false, "", startLine);
      } else {
        // It wasn't a handle after all. Scan the rest of the tag.
        suffix = this.scan_tag_uri(false, handle, startLine);
        handle = "!";
        // A special case: the '!' tag. Set the handle to '' and the suffix to '!'.
        if (suffix.length === 0) {
          suffix = handle;
          handle = "";
        }
      }
    }
    this.cache(1);
    if (!is_blankz(this.src.charCodeAt(this.pos))) {
      throw this.scanner_error("while scanning a tag", startLine, "did not find expected whitespace or line break");
    }
    const token = this.new_token(yaml_TAG_TOKEN, startLine);
    token.value = handle;
    token.suffix = suffix;
    return token;
  }

  /** yaml_parser_scan_tag_handle */
  private scan_tag_handle(directive: boolean, startLine: number): string {
    const context = directive ? "while parsing a %TAG directive" : "while parsing a tag";
    this.cache(1);
    if (this.src.charCodeAt(this.pos) !== 0x21) {
      throw this.scanner_error(context, startLine, "did not find expected '!'");
    }
    const start = this.pos;
    this.skip();
    this.cache(1);
    while (is_alpha(this.src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    if (this.src.charCodeAt(this.pos) === 0x21) {
      this.skip();
    } else if (directive && this.pos - start !== 1) {
      // It's either the '!' tag or not really a tag handle. If it's a %TAG directive, it's an error.
      throw this.scanner_error(context, startLine, "did not find expected '!'");
    }
    return this.src.slice(start, this.pos);
  }

  /** yaml_parser_scan_tag_uri (head: the tag handle read so far, of which all but the '!' belongs to the URI) */
  private scan_tag_uri(directive: boolean, head: string, startLine: number): string {
    let s = head.length > 1 ? head.slice(1) : "";
    let hasTag = head.length > 0;
    this.cache(1);
    let runStart = this.pos;
    for (;;) {
      const c = this.src.charCodeAt(this.pos);
      if (!(is_alpha(c) || is_uri_char(c) || c === 0x25)) break;
      if (c === 0x25) {
        s += this.src.slice(runStart, this.pos);
        s += this.scan_uri_escapes(directive, startLine);
        runStart = this.pos;
      } else {
        this.skip();
      }
      this.cache(1);
      hasTag = true;
    }
    s += this.src.slice(runStart, this.pos);
    if (!hasTag) {
      throw this.scanner_error(
        directive ? "while parsing a %TAG directive" : "while parsing a tag",
        startLine,
        "did not find expected tag URI",
      );
    }
    return s;
  }

  /** yaml_parser_scan_uri_escapes: one UTF-8 sequence of %XX escapes (bytes that are not UTF-8 become U+FFFD). */
  private scan_uri_escapes(directive: boolean, startLine: number): string {
    const context = directive ? "while parsing a %TAG directive" : "while parsing a tag";
    const bytes: number[] = [];
    const src = this.src;
    let w = 1024;
    while (w > 0) {
      this.cache(3);
      const p = this.pos;
      if (!(src.charCodeAt(p) === 0x25 && is_hex(src.charCodeAt(p + 1)) && is_hex(src.charCodeAt(p + 2)))) {
        throw this.scanner_error(context, startLine, "did not find URI escaped octet");
      }
      const octet = (as_hex(src.charCodeAt(p + 1)) << 4) + as_hex(src.charCodeAt(p + 2));
      if (w === 1024) {
        w =
          (octet & 0x80) === 0
            ? 1
            : (octet & 0xe0) === 0xc0
              ? 2
              : (octet & 0xf0) === 0xe0
                ? 3
                : (octet & 0xf8) === 0xf0
                  ? 4
                  : 0;
        if (w === 0) throw this.scanner_error(context, startLine, "found an incorrect leading UTF-8 octet");
      } else if ((octet & 0xc0) !== 0x80) {
        throw this.scanner_error(context, startLine, "found an incorrect trailing UTF-8 octet");
      }
      bytes.push(octet);
      this.skip();
      this.skip();
      this.skip();
      w--;
    }
    return Buffer.from(bytes).toString("utf8");
  }

  /** yaml_parser_scan_block_scalar */
  private scan_block_scalar(literal: boolean): Token {
    const src = this.src;
    const startLine = this.line;
    this.skip();
    this.cache(1);
    let chomping = 0;
    let increment = 0;
    let c = src.charCodeAt(this.pos);
    if (c === 0x2b || c === 0x2d) {
      chomping = c === 0x2b ? 1 : -1;
      this.skip();
      this.cache(1);
      c = src.charCodeAt(this.pos);
      if (is_digit(c)) {
        if (c === 0x30) {
          throw this.scanner_error(
            "while scanning a block scalar",
            startLine,
            "found an indentation indicator equal to 0",
          );
        }
        increment = c - 0x30;
        this.skip();
      }
    } else if (is_digit(c)) {
      if (c === 0x30) {
        throw this.scanner_error(
          "while scanning a block scalar",
          startLine,
          "found an indentation indicator equal to 0",
        );
      }
      increment = c - 0x30;
      this.skip();
      this.cache(1);
      c = src.charCodeAt(this.pos);
      if (c === 0x2b || c === 0x2d) {
        chomping = c === 0x2b ? 1 : -1;
        this.skip();
      }
    }
    // Eat whitespaces and comments to the end of the line.
    this.cache(1);
    while (is_blank(src.charCodeAt(this.pos))) {
      this.skip();
      this.cache(1);
    }
    if (src.charCodeAt(this.pos) === 0x23) {
      while (!is_breakz(src.charCodeAt(this.pos))) {
        this.skip();
        this.cache(1);
      }
    }
    if (!is_breakz(src.charCodeAt(this.pos))) {
      throw this.scanner_error(
        "while scanning a block scalar",
        startLine,
        "did not find expected comment or line break",
      );
    }
    if (is_break(src.charCodeAt(this.pos))) {
      this.cache(2);
      this.skip_line();
    }
    // Set the indentation level if it was specified.
    let indent = 0;
    if (increment > 0) indent = this.indent >= 0 ? this.indent + increment : increment;
    // Scan the leading line breaks and determine the indentation level if needed.
    let s = "";
    let leading_break = "";
    let trailing_breaks = "";
    trailing_breaks = this.scan_block_scalar_breaks(indent, startLine);
    indent = this.block_indent;
    if (literal && this.thresh === Infinity && this.astral === undefined && this.lfOnly && scannerFastPaths.fast) {
      return this.scan_literal_block_lines(indent, startLine, chomping, trailing_breaks);
    }
    this.cache(1);
    let leading_blank = false;
    let trailing_blank = false;
    while (this.column() === indent && !(src.charCodeAt(this.pos) === 0 && this.pos >= this.len)) {
      // We are at the beginning of a non-empty line.
      c = src.charCodeAt(this.pos);
      trailing_blank = is_blank(c);
      // Check if we need to fold the leading line break.
      if (!literal && !leading_blank && !trailing_blank && leading_break.charCodeAt(0) === 0x0a) {
        // Do we need to join the lines by space?
        if (trailing_breaks.length === 0) s += " ";
      } else {
        s += leading_break;
      }
      leading_break = "";
      s += trailing_breaks;
      trailing_breaks = "";
      leading_blank = is_blank(c);
      // Consume the current line.
      const start = this.pos;
      let p = this.pos;
      for (let d = src.charCodeAt(p); !is_breakz(d); d = src.charCodeAt(p)) {
        p += d >= 0xd800 && d <= 0xdbff && (src.charCodeAt(p + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
        if (p + 1 > this.thresh) {
          this.pos = p;
          this.update_buffer(1);
        }
      }
      this.pos = p;
      s += src.slice(start, p);
      this.cache(2);
      leading_break = this.read_line();
      // Eat the following indentation spaces and line breaks.
      trailing_breaks += this.scan_block_scalar_breaks(indent, startLine);
      indent = this.block_indent;
    }
    // Chomp the tail.
    if (chomping !== -1) s += leading_break;
    if (chomping === 1) s += trailing_breaks;
    const token = this.new_token(yaml_SCALAR_TOKEN, startLine);
    token.value = s;
    token.style = literal ? yaml_LITERAL_SCALAR_STYLE : yaml_FOLDED_SCALAR_STYLE;
    return token;
  }

  /**
   * The loop of yaml_parser_scan_block_scalar for a literal scalar, when the whole text is in memory
   * (no reader emulation), every character is one column and every line break is LF: the same lines are
   * consumed and the same errors raised, but the content lines are found with indexOf and the value is
   * one slice of the text with each line's indentation removed (`\n` and up to `indent` spaces become
   * `\n`: blank lines have at most `indent` spaces, content lines keep the spaces beyond it).
   */
  private scan_literal_block_lines(indent: number, startLine: number, chomping: number, breaks: string): Token {
    const src = this.src;
    const len = this.len;
    const first = this.pos;
    let last = first; // the end of the last content line
    let leading_break = "";
    let trailing = 0; // blank lines after the last content line
    let p = this.pos;
    while (p - this.lineStart === indent && p < len) {
      // Consume the current line (no NUL in the text: the padding has no LF either).
      let e = src.indexOf("\n", p);
      if (e < 0) e = len;
      last = e;
      trailing = 0;
      if (e >= len) {
        p = len;
        leading_break = "";
        break;
      }
      leading_break = "\n";
      p = e + 1;
      this.line++;
      this.lineStart = p;
      // Eat the following indentation spaces and line breaks (scan_block_scalar_breaks).
      for (;;) {
        const lim = p + indent;
        while (p < lim && src.charCodeAt(p) === 0x20) p++;
        const c = src.charCodeAt(p);
        if (p < lim && c === 0x09) {
          this.pos = p;
          throw this.scanner_error(
            "while scanning a block scalar",
            startLine,
            "found a tab character where an indentation space is expected",
          );
        }
        if (c !== 0x0a) break;
        trailing++;
        p++;
        this.line++;
        this.lineStart = p;
      }
    }
    this.pos = p;
    let s: string;
    if (last === first && p === first) {
      // No content line: the leading breaks are the trailing ones.
      s = chomping === 1 ? breaks : "";
    } else {
      s = breaks;
      if (last > first) s += src.slice(first, last).replace(indentRe(indent), "\n");
      // Chomp the tail.
      if (chomping !== -1) s += leading_break;
      if (chomping === 1 && trailing > 0) s += "\n".repeat(trailing);
    }
    const token = this.new_token(yaml_SCALAR_TOKEN, startLine);
    token.value = s;
    token.style = yaml_LITERAL_SCALAR_STYLE;
    return token;
  }

  /** yaml_parser_scan_block_scalar_breaks (returns the breaks read; the indentation goes to block_indent) */
  private scan_block_scalar_breaks(indent: number, startLine: number): string {
    const src = this.src;
    let breaks = "";
    let max_indent = 0;
    for (;;) {
      // Eat the indentation spaces.
      this.cache(1);
      while ((indent === 0 || this.column() < indent) && src.charCodeAt(this.pos) === 0x20) {
        this.skip();
        this.cache(1);
      }
      const column = this.column();
      if (column > max_indent) max_indent = column;
      // Check for a tab character messing the indentation.
      if ((indent === 0 || column < indent) && src.charCodeAt(this.pos) === 0x09) {
        throw this.scanner_error(
          "while scanning a block scalar",
          startLine,
          "found a tab character where an indentation space is expected",
        );
      }
      // Have we found a non-empty line?
      if (!is_break(src.charCodeAt(this.pos))) break;
      // Consume the line break.
      this.cache(2);
      breaks += this.read_line();
    }
    // Determine the indentation level if needed.
    if (indent === 0) {
      indent = max_indent;
      if (indent < this.indent + 1) indent = this.indent + 1;
      if (indent < 1) indent = 1;
    }
    this.block_indent = indent;
    return breaks;
  }

  /** yaml_parser_scan_flow_scalar */
  private scan_flow_scalar(single: boolean): Token {
    const src = this.src;
    const startLine = this.line;
    // Eat the left quote.
    this.skip();
    let s = "";
    let leading_break = "";
    let trailing_breaks = "";
    for (;;) {
      // Check that there are no document indicators at the beginning of the line.
      this.cache(4);
      let c = src.charCodeAt(this.pos);
      if (
        this.pos === this.lineStart &&
        this.column() === 0 &&
        ((c === 0x2d && src.charCodeAt(this.pos + 1) === 0x2d && src.charCodeAt(this.pos + 2) === 0x2d) ||
          (c === 0x2e && src.charCodeAt(this.pos + 1) === 0x2e && src.charCodeAt(this.pos + 2) === 0x2e)) &&
        is_blankz(src.charCodeAt(this.pos + 3))
      ) {
        throw this.scanner_error("while scanning a quoted scalar", startLine, "found unexpected document indicator");
      }
      // Check for EOF.
      if (c === 0 && this.pos >= this.len) {
        throw this.scanner_error("while scanning a quoted scalar", startLine, "found unexpected end of stream");
      }
      // Consume non-blank characters.
      let leading_blanks = false;
      let run = this.pos;
      while (!is_blankz(c)) {
        if (single && c === 0x27 && src.charCodeAt(this.pos + 1) === 0x27) {
          // It is an escaped single quote.
          s += src.slice(run, this.pos) + "'";
          this.pos += 2;
          run = this.pos;
        } else if (single ? c === 0x27 : c === 0x22) {
          // It is a right quote.
          break;
        } else if (!single && c === 0x5c && is_break(src.charCodeAt(this.pos + 1))) {
          // It is an escaped line break.
          s += src.slice(run, this.pos);
          this.cache(3);
          this.skip();
          this.skip_line();
          leading_blanks = true;
          run = this.pos;
          break;
        } else if (!single && c === 0x5c) {
          // It is an escape sequence.
          s += src.slice(run, this.pos);
          let code_length = 0;
          switch (src.charCodeAt(this.pos + 1)) {
            case 0x30: // 0
              s += "\0";
              break;
            case 0x61: // a
              s += "\x07";
              break;
            case 0x62: // b
              s += "\x08";
              break;
            case 0x74: // t
            case 0x09: // \t
              s += "\t";
              break;
            case 0x6e: // n
              s += "\n";
              break;
            case 0x76: // v
              s += "\x0b";
              break;
            case 0x66: // f
              s += "\x0c";
              break;
            case 0x72: // r
              s += "\r";
              break;
            case 0x65: // e
              s += "\x1b";
              break;
            case 0x20: // space
              s += " ";
              break;
            case 0x22: // "
              s += '"';
              break;
            case 0x27: // '
              s += "'";
              break;
            case 0x5c: // \
              s += "\\";
              break;
            case 0x4e: // N: NEL (#x85)
              s += "\u0085";
              break;
            case 0x5f: // _: #xA0
              s += "\u00a0";
              break;
            case 0x4c: // L: LS (#x2028)
              s += "\u2028";
              break;
            case 0x50: // P: PS (#x2029)
              s += "\u2029";
              break;
            case 0x78: // x
              code_length = 2;
              break;
            case 0x75: // u
              code_length = 4;
              break;
            case 0x55: // U
              code_length = 8;
              break;
            default:
              throw this.scanner_error("while parsing a quoted scalar", startLine, "found unknown escape character");
          }
          this.skip();
          this.skip();
          // Consume an arbitrary escape code.
          if (code_length > 0) {
            let value = 0;
            this.cache(code_length);
            for (let k = 0; k < code_length; k++) {
              const h = src.charCodeAt(this.pos + k);
              if (!is_hex(h)) {
                throw this.scanner_error(
                  "while parsing a quoted scalar",
                  startLine,
                  "did not find expected hexdecimal number",
                );
              }
              value = value * 16 + as_hex(h);
            }
            // Check the value and write the character.
            if ((value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) {
              throw this.scanner_error(
                "while parsing a quoted scalar",
                startLine,
                "found invalid Unicode character escape code",
              );
            }
            s += String.fromCodePoint(value);
            for (let k = 0; k < code_length; k++) this.skip();
          }
          run = this.pos;
        } else {
          // It is a non-escaped non-blank character.
          this.skip();
        }
        this.cache(2);
        c = src.charCodeAt(this.pos);
      }
      s += src.slice(run, this.pos);
      this.cache(1);
      c = src.charCodeAt(this.pos);
      // Check if we are at the end of the scalar.
      if (single ? c === 0x27 : c === 0x22) break;
      // Consume blank characters.
      let ws = this.pos;
      let wsEnd = this.pos;
      while (is_blank(c) || is_break(c)) {
        if (is_blank(c)) {
          // Consume a space or a tab character.
          this.skip();
          if (!leading_blanks) wsEnd = this.pos;
        } else {
          this.cache(2);
          // Check if it is a first line break.
          if (!leading_blanks) {
            ws = wsEnd = this.pos;
            leading_break = this.read_line();
            leading_blanks = true;
          } else {
            trailing_breaks += this.read_line();
          }
        }
        this.cache(1);
        c = src.charCodeAt(this.pos);
      }
      // Join the whitespaces or fold line breaks.
      if (leading_blanks) {
        // Do we need to fold line breaks?
        if (leading_break.charCodeAt(0) === 0x0a) {
          if (trailing_breaks.length === 0) s += " ";
          else s += trailing_breaks;
        } else {
          s += leading_break + trailing_breaks;
        }
        trailing_breaks = "";
        leading_break = "";
      } else {
        s += src.slice(ws, wsEnd);
      }
    }
    // Eat the right quote.
    this.skip();
    const token = this.new_token(yaml_SCALAR_TOKEN, startLine);
    token.value = s;
    token.style = single ? yaml_SINGLE_QUOTED_SCALAR_STYLE : yaml_DOUBLE_QUOTED_SCALAR_STYLE;
    return token;
  }

  /** yaml_parser_scan_plain_scalar */
  private scan_plain_scalar(): Token {
    const src = this.src;
    const flow = this.flow_level > 0;
    let s = "";
    let leading_break = "";
    let trailing_breaks = "";
    let leading_blanks = false;
    const indent = this.indent + 1;
    const startLine = this.line;
    // The text not yet appended to s: [run, runEnd) is verbatim (words and the blanks between them).
    let run = -1;
    let runEnd = -1;
    let p = this.pos;
    for (;;) {
      // Check for a document indicator.
      if (p + 4 > this.thresh) {
        this.pos = p;
        this.update_buffer(4);
      }
      let c = src.charCodeAt(p);
      if (
        p === this.lineStart &&
        (c === 0x2d || c === 0x2e) &&
        src.charCodeAt(p + 1) === c &&
        src.charCodeAt(p + 2) === c &&
        is_blankz(src.charCodeAt(p + 3))
      ) {
        break;
      }
      // Check for a comment.
      if (c === 0x23) break;
      // Consume non-blank characters.
      if (!is_blankz(c) && !(c === 0x3a && is_blankz(src.charCodeAt(p + 1))) && !(flow && is_flow_indicator(c))) {
        // Check if we need to join whitespaces and breaks (blanks between words stay in the verbatim run).
        if (leading_blanks) {
          if (run >= 0) s += src.slice(run, runEnd);
          // Do we need to fold line breaks?
          if (leading_break.charCodeAt(0) === 0x0a) {
            if (trailing_breaks.length === 0) s += " ";
            else s += trailing_breaks;
          } else {
            s += leading_break + trailing_breaks;
          }
          trailing_breaks = "";
          leading_break = "";
          leading_blanks = false;
          run = p;
        } else if (run < 0) {
          run = p;
        }
        // Copy the characters.
        for (;;) {
          if (c >= 0xd800 && c <= 0xdbff && (src.charCodeAt(p + 1) & 0xfc00) === 0xdc00) p += 2;
          else p++;
          if (p + 2 > this.thresh) {
            this.pos = p;
            this.update_buffer(2);
          }
          c = src.charCodeAt(p);
          if (c <= 0x20 || c === 0x3a || c === 0x85 || c === 0x2028 || c === 0x2029 || (flow && is_flow_indicator(c))) {
            if (is_blankz(c)) break;
            if (c === 0x3a) {
              if (is_blankz(src.charCodeAt(p + 1))) break;
            } else if (flow && is_flow_indicator(c)) {
              break;
            }
          }
        }
        runEnd = p;
      }
      // Is it the end?
      if (!(is_blank(c) || is_break(c))) break;
      this.pos = p;
      this.cache(1);
      // Consume blank characters.
      while (is_blank(c) || is_break(c)) {
        if (is_blank(c)) {
          // Check for tab characters that abuse indentation.
          if (leading_blanks && c === 0x09 && this.column() < indent) {
            throw this.scanner_error(
              "while scanning a plain scalar",
              startLine,
              "found a tab character that violates indentation",
            );
          }
          // Consume a space or a tab character (blanks after a word stay in the verbatim run).
          this.pos++;
        } else {
          this.cache(2);
          // Check if it is a first line break.
          if (!leading_blanks) {
            leading_break = this.read_line();
            leading_blanks = true;
          } else {
            trailing_breaks += this.read_line();
          }
        }
        this.cache(1);
        c = src.charCodeAt(this.pos);
      }
      p = this.pos;
      // Check indentation level.
      if (!flow && this.column() < indent) break;
    }
    this.pos = p;
    if (run >= 0) s += src.slice(run, runEnd);
    const token = this.new_token(yaml_SCALAR_TOKEN, startLine);
    token.value = s;
    token.style = yaml_PLAIN_SCALAR_STYLE;
    // Note that we change the 'simple_key_allowed' flag.
    if (leading_blanks) this.simple_key_allowed = true;
    return token;
  }
}

/** Index of the first element of the sorted array `a` that is >= x. */
function lowerBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
