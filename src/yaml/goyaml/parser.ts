// A port of go-yaml v2's libyaml parser (parserc.go, event structures of yamlh.go) and of the part of
// decode.go's `parser` that reads the first document of the stream into events and turns a libyaml error
// into its message (parser.fail), from go.yaml.in/yaml/v2 v2.4.4 (= gopkg.in/yaml.v2 v2.4.0).
// Function names follow the Go source. Marks are reduced to lines (all an error message shows).

import {
  Scanner,
  type Token,
  yaml_ALIAS_TOKEN,
  yaml_ANCHOR_TOKEN,
  yaml_BLOCK_END_TOKEN,
  yaml_BLOCK_ENTRY_TOKEN,
  yaml_BLOCK_MAPPING_START_TOKEN,
  yaml_BLOCK_SEQUENCE_START_TOKEN,
  yaml_DOCUMENT_END_TOKEN,
  yaml_DOCUMENT_START_TOKEN,
  yaml_FLOW_ENTRY_TOKEN,
  yaml_FLOW_MAPPING_END_TOKEN,
  yaml_FLOW_MAPPING_START_TOKEN,
  yaml_FLOW_SEQUENCE_END_TOKEN,
  yaml_FLOW_SEQUENCE_START_TOKEN,
  yaml_KEY_TOKEN,
  yaml_PARSER_ERROR,
  yaml_PLAIN_SCALAR_STYLE,
  yaml_SCALAR_TOKEN,
  yaml_SCANNER_ERROR,
  yaml_STREAM_END_TOKEN,
  yaml_STREAM_START_TOKEN,
  yaml_TAG_DIRECTIVE_TOKEN,
  yaml_TAG_TOKEN,
  yaml_VALUE_TOKEN,
  yaml_VERSION_DIRECTIVE_TOKEN,
  YamlSyntaxError,
} from "./scanner.js";

export const yaml_NO_EVENT = 0;
export const yaml_STREAM_START_EVENT = 1;
export const yaml_STREAM_END_EVENT = 2;
export const yaml_DOCUMENT_START_EVENT = 3;
export const yaml_DOCUMENT_END_EVENT = 4;
export const yaml_ALIAS_EVENT = 5;
export const yaml_SCALAR_EVENT = 6;
export const yaml_SEQUENCE_START_EVENT = 7;
export const yaml_SEQUENCE_END_EVENT = 8;
export const yaml_MAPPING_START_EVENT = 9;
export const yaml_MAPPING_END_EVENT = 10;

/** yaml_event_t, without marks and stream/document details. */
export class YamlEvent {
  constructor(
    readonly typ: number,
    /** Anchor name (alias name for an alias event); "" when none. */
    readonly anchor: string,
    /** Resolved tag (handle replaced by its prefix); "" when none. */
    readonly tag: string,
    readonly value: string,
    /** Scalars: plain_implicit; collections: implicit. */
    readonly implicit: boolean,
    readonly style: number,
    /** 0-based line of the event's start mark (node events; go-yaml's node.line). */
    readonly line = 0,
  ) {}
}

const SEQUENCE_END = new YamlEvent(yaml_SEQUENCE_END_EVENT, "", "", "", false, 0);
const MAPPING_END = new YamlEvent(yaml_MAPPING_END_EVENT, "", "", "", false, 0);
/** yaml_parser_process_empty_scalar at a mark on `line`. */
function emptyScalar(line: number): YamlEvent {
  return new YamlEvent(yaml_SCALAR_EVENT, "", "", "", true, yaml_PLAIN_SCALAR_STYLE, line);
}

// yaml_parser_state_t
const yaml_PARSE_STREAM_START_STATE = 0;
const yaml_PARSE_IMPLICIT_DOCUMENT_START_STATE = 1;
const yaml_PARSE_DOCUMENT_START_STATE = 2;
const yaml_PARSE_DOCUMENT_CONTENT_STATE = 3;
const yaml_PARSE_DOCUMENT_END_STATE = 4;
const yaml_PARSE_BLOCK_NODE_STATE = 5;
const yaml_PARSE_BLOCK_NODE_OR_INDENTLESS_SEQUENCE_STATE = 6;
const yaml_PARSE_FLOW_NODE_STATE = 7;
const yaml_PARSE_BLOCK_SEQUENCE_FIRST_ENTRY_STATE = 8;
const yaml_PARSE_BLOCK_SEQUENCE_ENTRY_STATE = 9;
const yaml_PARSE_INDENTLESS_SEQUENCE_ENTRY_STATE = 10;
const yaml_PARSE_BLOCK_MAPPING_FIRST_KEY_STATE = 11;
const yaml_PARSE_BLOCK_MAPPING_KEY_STATE = 12;
const yaml_PARSE_BLOCK_MAPPING_VALUE_STATE = 13;
const yaml_PARSE_FLOW_SEQUENCE_FIRST_ENTRY_STATE = 14;
const yaml_PARSE_FLOW_SEQUENCE_ENTRY_STATE = 15;
const yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_KEY_STATE = 16;
const yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_VALUE_STATE = 17;
const yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_END_STATE = 18;
const yaml_PARSE_FLOW_MAPPING_FIRST_KEY_STATE = 19;
const yaml_PARSE_FLOW_MAPPING_KEY_STATE = 20;
const yaml_PARSE_FLOW_MAPPING_VALUE_STATE = 21;
const yaml_PARSE_FLOW_MAPPING_EMPTY_VALUE_STATE = 22;
const yaml_PARSE_END_STATE = 23;

interface TagDirective {
  handle: string;
  prefix: string;
}

const default_tag_directives: TagDirective[] = [
  { handle: "!", prefix: "!" },
  { handle: "!!", prefix: "tag:yaml.org,2002:" },
];

function parser_error(problem: string, problemLine: number): YamlSyntaxError {
  return new YamlSyntaxError(yaml_PARSER_ERROR, problem, problemLine, 0);
}

function parser_error_context(context: string, contextLine: number, problem: string, problemLine: number) {
  void context;
  return new YamlSyntaxError(yaml_PARSER_ERROR, problem, problemLine, contextLine);
}

export class Parser {
  private readonly scanner: Scanner;
  private state = yaml_PARSE_STREAM_START_STATE;
  private states: number[] = [];
  /** parser.marks (lines) */
  private marks: number[] = [];
  private tag_directives: TagDirective[] = [];
  stream_end_produced = false;

  constructor(text: string) {
    this.scanner = new Scanner(text);
  }

  /** yaml_parser_parse (throws YamlSyntaxError; returns null where Go returns an empty event) */
  parse(): YamlEvent | null {
    if (this.scanner.stream_end_produced || this.state === yaml_PARSE_END_STATE) return null;
    return this.state_machine();
  }

  private pop_state(): void {
    this.state = this.states.pop() as number;
  }

  /** yaml_parser_state_machine */
  private state_machine(): YamlEvent {
    switch (this.state) {
      case yaml_PARSE_STREAM_START_STATE:
        return this.parse_stream_start();
      case yaml_PARSE_IMPLICIT_DOCUMENT_START_STATE:
        return this.parse_document_start(true);
      case yaml_PARSE_DOCUMENT_START_STATE:
        return this.parse_document_start(false);
      case yaml_PARSE_DOCUMENT_CONTENT_STATE:
        return this.parse_document_content();
      case yaml_PARSE_DOCUMENT_END_STATE:
        return this.parse_document_end();
      case yaml_PARSE_BLOCK_NODE_STATE:
        return this.parse_node(true, false);
      case yaml_PARSE_BLOCK_NODE_OR_INDENTLESS_SEQUENCE_STATE:
        return this.parse_node(true, true);
      case yaml_PARSE_FLOW_NODE_STATE:
        return this.parse_node(false, false);
      case yaml_PARSE_BLOCK_SEQUENCE_FIRST_ENTRY_STATE:
        return this.parse_block_sequence_entry(true);
      case yaml_PARSE_BLOCK_SEQUENCE_ENTRY_STATE:
        return this.parse_block_sequence_entry(false);
      case yaml_PARSE_INDENTLESS_SEQUENCE_ENTRY_STATE:
        return this.parse_indentless_sequence_entry();
      case yaml_PARSE_BLOCK_MAPPING_FIRST_KEY_STATE:
        return this.parse_block_mapping_key(true);
      case yaml_PARSE_BLOCK_MAPPING_KEY_STATE:
        return this.parse_block_mapping_key(false);
      case yaml_PARSE_BLOCK_MAPPING_VALUE_STATE:
        return this.parse_block_mapping_value();
      case yaml_PARSE_FLOW_SEQUENCE_FIRST_ENTRY_STATE:
        return this.parse_flow_sequence_entry(true);
      case yaml_PARSE_FLOW_SEQUENCE_ENTRY_STATE:
        return this.parse_flow_sequence_entry(false);
      case yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_KEY_STATE:
        return this.parse_flow_sequence_entry_mapping_key();
      case yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_VALUE_STATE:
        return this.parse_flow_sequence_entry_mapping_value();
      case yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_END_STATE:
        return this.parse_flow_sequence_entry_mapping_end();
      case yaml_PARSE_FLOW_MAPPING_FIRST_KEY_STATE:
        return this.parse_flow_mapping_key(true);
      case yaml_PARSE_FLOW_MAPPING_KEY_STATE:
        return this.parse_flow_mapping_key(false);
      case yaml_PARSE_FLOW_MAPPING_VALUE_STATE:
        return this.parse_flow_mapping_value(false);
      case yaml_PARSE_FLOW_MAPPING_EMPTY_VALUE_STATE:
        return this.parse_flow_mapping_value(true);
      default:
        throw new Error("invalid parser state");
    }
  }

  /** yaml_parser_parse_stream_start */
  private parse_stream_start(): YamlEvent {
    const token = this.scanner.peek_token();
    if (token.typ !== yaml_STREAM_START_TOKEN) throw parser_error("did not find expected <stream-start>", token.line);
    this.state = yaml_PARSE_IMPLICIT_DOCUMENT_START_STATE;
    this.scanner.skip_token();
    return new YamlEvent(yaml_STREAM_START_EVENT, "", "", "", false, 0);
  }

  /** yaml_parser_parse_document_start */
  private parse_document_start(implicit: boolean): YamlEvent {
    const sc = this.scanner;
    let token = sc.peek_token();
    // Parse extra document end indicators.
    if (!implicit) {
      while (token.typ === yaml_DOCUMENT_END_TOKEN) {
        sc.skip_token();
        token = sc.peek_token();
      }
    }
    if (
      implicit &&
      token.typ !== yaml_VERSION_DIRECTIVE_TOKEN &&
      token.typ !== yaml_TAG_DIRECTIVE_TOKEN &&
      token.typ !== yaml_DOCUMENT_START_TOKEN &&
      token.typ !== yaml_STREAM_END_TOKEN
    ) {
      // Parse an implicit document.
      this.process_directives();
      this.states.push(yaml_PARSE_DOCUMENT_END_STATE);
      this.state = yaml_PARSE_BLOCK_NODE_STATE;
      return new YamlEvent(yaml_DOCUMENT_START_EVENT, "", "", "", true, 0);
    }
    if (token.typ !== yaml_STREAM_END_TOKEN) {
      // Parse an explicit document.
      this.process_directives();
      token = sc.peek_token();
      if (token.typ !== yaml_DOCUMENT_START_TOKEN) {
        throw parser_error("did not find expected <document start>", token.line);
      }
      this.states.push(yaml_PARSE_DOCUMENT_END_STATE);
      this.state = yaml_PARSE_DOCUMENT_CONTENT_STATE;
      sc.skip_token();
      return new YamlEvent(yaml_DOCUMENT_START_EVENT, "", "", "", false, 0);
    }
    // Parse the stream end.
    this.state = yaml_PARSE_END_STATE;
    sc.skip_token();
    return new YamlEvent(yaml_STREAM_END_EVENT, "", "", "", false, 0);
  }

  /** yaml_parser_parse_document_content */
  private parse_document_content(): YamlEvent {
    const token = this.scanner.peek_token();
    if (
      token.typ === yaml_VERSION_DIRECTIVE_TOKEN ||
      token.typ === yaml_TAG_DIRECTIVE_TOKEN ||
      token.typ === yaml_DOCUMENT_START_TOKEN ||
      token.typ === yaml_DOCUMENT_END_TOKEN ||
      token.typ === yaml_STREAM_END_TOKEN
    ) {
      this.pop_state();
      return emptyScalar(token.line); // yaml_parser_process_empty_scalar
    }
    return this.parse_node(true, false);
  }

  /** yaml_parser_parse_document_end */
  private parse_document_end(): YamlEvent {
    const token = this.scanner.peek_token();
    let implicit = true;
    if (token.typ === yaml_DOCUMENT_END_TOKEN) {
      this.scanner.skip_token();
      implicit = false;
    }
    this.tag_directives = [];
    this.state = yaml_PARSE_DOCUMENT_START_STATE;
    return new YamlEvent(yaml_DOCUMENT_END_EVENT, "", "", "", implicit, 0);
  }

  /** yaml_parser_parse_node */
  private parse_node(block: boolean, indentless_sequence: boolean): YamlEvent {
    const sc = this.scanner;
    let token: Token = sc.peek_token();
    if (token.typ === yaml_ALIAS_TOKEN) {
      this.pop_state();
      sc.skip_token();
      return new YamlEvent(yaml_ALIAS_EVENT, token.value, "", "", false, 0, token.line);
    }
    const start_line = token.line;
    let tag_token = false;
    let tag_handle = "";
    let tag_suffix = "";
    let anchor = "";
    let tag_line = 0;
    if (token.typ === yaml_ANCHOR_TOKEN) {
      anchor = token.value;
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ === yaml_TAG_TOKEN) {
        tag_token = true;
        tag_handle = token.value;
        tag_suffix = token.suffix;
        tag_line = token.line;
        sc.skip_token();
        token = sc.peek_token();
      }
    } else if (token.typ === yaml_TAG_TOKEN) {
      tag_token = true;
      tag_handle = token.value;
      tag_suffix = token.suffix;
      tag_line = token.line;
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ === yaml_ANCHOR_TOKEN) {
        anchor = token.value;
        sc.skip_token();
        token = sc.peek_token();
      }
    }
    let tag = "";
    if (tag_token) {
      if (tag_handle.length === 0) {
        tag = tag_suffix;
      } else {
        for (const d of this.tag_directives) {
          if (d.handle === tag_handle) {
            tag = d.prefix + tag_suffix;
            break;
          }
        }
        if (tag.length === 0) {
          throw parser_error_context("while parsing a node", start_line, "found undefined tag handle", tag_line);
        }
      }
    }
    const implicit = tag.length === 0;
    if (indentless_sequence && token.typ === yaml_BLOCK_ENTRY_TOKEN) {
      this.state = yaml_PARSE_INDENTLESS_SEQUENCE_ENTRY_STATE;
      return new YamlEvent(yaml_SEQUENCE_START_EVENT, anchor, tag, "", implicit, 0, start_line);
    }
    if (token.typ === yaml_SCALAR_TOKEN) {
      const plain_implicit = (tag.length === 0 && token.style === yaml_PLAIN_SCALAR_STYLE) || tag === "!";
      this.pop_state();
      sc.skip_token();
      return new YamlEvent(yaml_SCALAR_EVENT, anchor, tag, token.value, plain_implicit, token.style, start_line);
    }
    if (token.typ === yaml_FLOW_SEQUENCE_START_TOKEN) {
      this.state = yaml_PARSE_FLOW_SEQUENCE_FIRST_ENTRY_STATE;
      return new YamlEvent(yaml_SEQUENCE_START_EVENT, anchor, tag, "", implicit, 0, start_line);
    }
    if (token.typ === yaml_FLOW_MAPPING_START_TOKEN) {
      this.state = yaml_PARSE_FLOW_MAPPING_FIRST_KEY_STATE;
      return new YamlEvent(yaml_MAPPING_START_EVENT, anchor, tag, "", implicit, 0, start_line);
    }
    if (block && token.typ === yaml_BLOCK_SEQUENCE_START_TOKEN) {
      this.state = yaml_PARSE_BLOCK_SEQUENCE_FIRST_ENTRY_STATE;
      return new YamlEvent(yaml_SEQUENCE_START_EVENT, anchor, tag, "", implicit, 0, start_line);
    }
    if (block && token.typ === yaml_BLOCK_MAPPING_START_TOKEN) {
      this.state = yaml_PARSE_BLOCK_MAPPING_FIRST_KEY_STATE;
      return new YamlEvent(yaml_MAPPING_START_EVENT, anchor, tag, "", implicit, 0, start_line);
    }
    if (anchor.length > 0 || tag.length > 0) {
      this.pop_state();
      return new YamlEvent(yaml_SCALAR_EVENT, anchor, tag, "", implicit, yaml_PLAIN_SCALAR_STYLE, start_line);
    }
    throw parser_error_context(
      block ? "while parsing a block node" : "while parsing a flow node",
      start_line,
      "did not find expected node content",
      token.line,
    );
  }

  /** yaml_parser_parse_block_sequence_entry */
  private parse_block_sequence_entry(first: boolean): YamlEvent {
    const sc = this.scanner;
    if (first) {
      this.marks.push(sc.peek_token().line);
      sc.skip_token();
    }
    let token = sc.peek_token();
    if (token.typ === yaml_BLOCK_ENTRY_TOKEN) {
      const mark = token.line;
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ !== yaml_BLOCK_ENTRY_TOKEN && token.typ !== yaml_BLOCK_END_TOKEN) {
        this.states.push(yaml_PARSE_BLOCK_SEQUENCE_ENTRY_STATE);
        return this.parse_node(true, false);
      }
      this.state = yaml_PARSE_BLOCK_SEQUENCE_ENTRY_STATE;
      return emptyScalar(mark);
    }
    if (token.typ === yaml_BLOCK_END_TOKEN) {
      this.pop_state();
      this.marks.pop();
      sc.skip_token();
      return SEQUENCE_END;
    }
    const context_line = this.marks.pop() as number;
    throw parser_error_context(
      "while parsing a block collection",
      context_line,
      "did not find expected '-' indicator",
      token.line,
    );
  }

  /** yaml_parser_parse_indentless_sequence_entry */
  private parse_indentless_sequence_entry(): YamlEvent {
    const sc = this.scanner;
    let token = sc.peek_token();
    if (token.typ === yaml_BLOCK_ENTRY_TOKEN) {
      const mark = token.line;
      sc.skip_token();
      token = sc.peek_token();
      if (
        token.typ !== yaml_BLOCK_ENTRY_TOKEN &&
        token.typ !== yaml_KEY_TOKEN &&
        token.typ !== yaml_VALUE_TOKEN &&
        token.typ !== yaml_BLOCK_END_TOKEN
      ) {
        this.states.push(yaml_PARSE_INDENTLESS_SEQUENCE_ENTRY_STATE);
        return this.parse_node(true, false);
      }
      this.state = yaml_PARSE_INDENTLESS_SEQUENCE_ENTRY_STATE;
      return emptyScalar(mark);
    }
    this.pop_state();
    return SEQUENCE_END;
  }

  /** yaml_parser_parse_block_mapping_key */
  private parse_block_mapping_key(first: boolean): YamlEvent {
    const sc = this.scanner;
    if (first) {
      this.marks.push(sc.peek_token().line);
      sc.skip_token();
    }
    let token = sc.peek_token();
    if (token.typ === yaml_KEY_TOKEN) {
      const mark = token.line;
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ !== yaml_KEY_TOKEN && token.typ !== yaml_VALUE_TOKEN && token.typ !== yaml_BLOCK_END_TOKEN) {
        this.states.push(yaml_PARSE_BLOCK_MAPPING_VALUE_STATE);
        return this.parse_node(true, true);
      }
      this.state = yaml_PARSE_BLOCK_MAPPING_VALUE_STATE;
      return emptyScalar(mark);
    }
    if (token.typ === yaml_BLOCK_END_TOKEN) {
      this.pop_state();
      this.marks.pop();
      sc.skip_token();
      return MAPPING_END;
    }
    const context_line = this.marks.pop() as number;
    throw parser_error_context("while parsing a block mapping", context_line, "did not find expected key", token.line);
  }

  /** yaml_parser_parse_block_mapping_value */
  private parse_block_mapping_value(): YamlEvent {
    const sc = this.scanner;
    let token = sc.peek_token();
    if (token.typ === yaml_VALUE_TOKEN) {
      const mark = token.line;
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ !== yaml_KEY_TOKEN && token.typ !== yaml_VALUE_TOKEN && token.typ !== yaml_BLOCK_END_TOKEN) {
        this.states.push(yaml_PARSE_BLOCK_MAPPING_KEY_STATE);
        return this.parse_node(true, true);
      }
      this.state = yaml_PARSE_BLOCK_MAPPING_KEY_STATE;
      return emptyScalar(mark);
    }
    this.state = yaml_PARSE_BLOCK_MAPPING_KEY_STATE;
    return emptyScalar(token.line);
  }

  /** yaml_parser_parse_flow_sequence_entry */
  private parse_flow_sequence_entry(first: boolean): YamlEvent {
    const sc = this.scanner;
    if (first) {
      this.marks.push(sc.peek_token().line);
      sc.skip_token();
    }
    let token = sc.peek_token();
    if (token.typ !== yaml_FLOW_SEQUENCE_END_TOKEN) {
      if (!first) {
        if (token.typ === yaml_FLOW_ENTRY_TOKEN) {
          sc.skip_token();
          token = sc.peek_token();
        } else {
          const context_line = this.marks.pop() as number;
          throw parser_error_context(
            "while parsing a flow sequence",
            context_line,
            "did not find expected ',' or ']'",
            token.line,
          );
        }
      }
      if (token.typ === yaml_KEY_TOKEN) {
        this.state = yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_KEY_STATE;
        sc.skip_token();
        return new YamlEvent(yaml_MAPPING_START_EVENT, "", "", "", true, 0);
      }
      if (token.typ !== yaml_FLOW_SEQUENCE_END_TOKEN) {
        this.states.push(yaml_PARSE_FLOW_SEQUENCE_ENTRY_STATE);
        return this.parse_node(false, false);
      }
    }
    this.pop_state();
    this.marks.pop();
    sc.skip_token();
    return SEQUENCE_END;
  }

  /** yaml_parser_parse_flow_sequence_entry_mapping_key */
  private parse_flow_sequence_entry_mapping_key(): YamlEvent {
    const sc = this.scanner;
    const token = sc.peek_token();
    if (
      token.typ !== yaml_VALUE_TOKEN &&
      token.typ !== yaml_FLOW_ENTRY_TOKEN &&
      token.typ !== yaml_FLOW_SEQUENCE_END_TOKEN
    ) {
      this.states.push(yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_VALUE_STATE);
      return this.parse_node(false, false);
    }
    const mark = token.line;
    sc.skip_token();
    this.state = yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_VALUE_STATE;
    return emptyScalar(mark);
  }

  /** yaml_parser_parse_flow_sequence_entry_mapping_value */
  private parse_flow_sequence_entry_mapping_value(): YamlEvent {
    const sc = this.scanner;
    const token = sc.peek_token();
    let mark = token.line;
    if (token.typ === yaml_VALUE_TOKEN) {
      sc.skip_token();
      const next = sc.peek_token();
      if (next.typ !== yaml_FLOW_ENTRY_TOKEN && next.typ !== yaml_FLOW_SEQUENCE_END_TOKEN) {
        this.states.push(yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_END_STATE);
        return this.parse_node(false, false);
      }
      mark = next.line;
    }
    this.state = yaml_PARSE_FLOW_SEQUENCE_ENTRY_MAPPING_END_STATE;
    return emptyScalar(mark);
  }

  /** yaml_parser_parse_flow_sequence_entry_mapping_end */
  private parse_flow_sequence_entry_mapping_end(): YamlEvent {
    this.scanner.peek_token();
    this.state = yaml_PARSE_FLOW_SEQUENCE_ENTRY_STATE;
    return MAPPING_END;
  }

  /** yaml_parser_parse_flow_mapping_key */
  private parse_flow_mapping_key(first: boolean): YamlEvent {
    const sc = this.scanner;
    if (first) {
      this.marks.push(sc.peek_token().line);
      sc.skip_token();
    }
    let token = sc.peek_token();
    if (token.typ !== yaml_FLOW_MAPPING_END_TOKEN) {
      if (!first) {
        if (token.typ === yaml_FLOW_ENTRY_TOKEN) {
          sc.skip_token();
          token = sc.peek_token();
        } else {
          const context_line = this.marks.pop() as number;
          throw parser_error_context(
            "while parsing a flow mapping",
            context_line,
            "did not find expected ',' or '}'",
            token.line,
          );
        }
      }
      if (token.typ === yaml_KEY_TOKEN) {
        sc.skip_token();
        token = sc.peek_token();
        if (
          token.typ !== yaml_VALUE_TOKEN &&
          token.typ !== yaml_FLOW_ENTRY_TOKEN &&
          token.typ !== yaml_FLOW_MAPPING_END_TOKEN
        ) {
          this.states.push(yaml_PARSE_FLOW_MAPPING_VALUE_STATE);
          return this.parse_node(false, false);
        }
        this.state = yaml_PARSE_FLOW_MAPPING_VALUE_STATE;
        return emptyScalar(token.line);
      }
      if (token.typ !== yaml_FLOW_MAPPING_END_TOKEN) {
        this.states.push(yaml_PARSE_FLOW_MAPPING_EMPTY_VALUE_STATE);
        return this.parse_node(false, false);
      }
    }
    this.pop_state();
    this.marks.pop();
    sc.skip_token();
    return MAPPING_END;
  }

  /** yaml_parser_parse_flow_mapping_value */
  private parse_flow_mapping_value(empty: boolean): YamlEvent {
    const sc = this.scanner;
    let token = sc.peek_token();
    if (empty) {
      this.state = yaml_PARSE_FLOW_MAPPING_KEY_STATE;
      return emptyScalar(token.line);
    }
    if (token.typ === yaml_VALUE_TOKEN) {
      sc.skip_token();
      token = sc.peek_token();
      if (token.typ !== yaml_FLOW_ENTRY_TOKEN && token.typ !== yaml_FLOW_MAPPING_END_TOKEN) {
        this.states.push(yaml_PARSE_FLOW_MAPPING_KEY_STATE);
        return this.parse_node(false, false);
      }
    }
    this.state = yaml_PARSE_FLOW_MAPPING_KEY_STATE;
    return emptyScalar(token.line);
  }

  /** yaml_parser_process_directives (the version and tag directives of the document are not kept) */
  private process_directives(): void {
    const sc = this.scanner;
    let version = false;
    let token = sc.peek_token();
    while (token.typ === yaml_VERSION_DIRECTIVE_TOKEN || token.typ === yaml_TAG_DIRECTIVE_TOKEN) {
      if (token.typ === yaml_VERSION_DIRECTIVE_TOKEN) {
        if (version) throw parser_error("found duplicate %YAML directive", token.line);
        if (token.major !== 1 || token.minor !== 1) throw parser_error("found incompatible YAML document", token.line);
        version = true;
      } else {
        this.append_tag_directive({ handle: token.value, prefix: token.suffix }, false, token.line);
      }
      sc.skip_token();
      token = sc.peek_token();
    }
    for (const d of default_tag_directives) this.append_tag_directive(d, true, token.line);
  }

  /** yaml_parser_append_tag_directive */
  private append_tag_directive(value: TagDirective, allow_duplicates: boolean, line: number): void {
    for (const d of this.tag_directives) {
      if (d.handle === value.handle) {
        if (allow_duplicates) return;
        throw parser_error("found duplicate %TAG directive", line);
      }
    }
    this.tag_directives.push(value);
  }
}

/** decode.go's parser.fail(): the message of a libyaml error ("yaml: line N: problem"). */
function failMessage(e: YamlSyntaxError): string {
  let line = 0;
  if (e.problemLine !== 0) {
    line = e.problemLine;
    // Scanner errors don't iterate line before returning error
    if (e.error === yaml_SCANNER_ERROR) line++;
  } else if (e.contextLine !== 0) {
    line = e.contextLine;
  }
  const where = line !== 0 ? `line ${line}: ` : "";
  return `yaml: ${where}${e.problem.length > 0 ? e.problem : "unknown problem parsing YAML content"}`;
}

/** A failure of decode.go's parser (failf): message without the "yaml: " prefix handling of fail(). */
export class ParseFailure {
  constructor(
    readonly message: string,
    /** 1-based line of the problem, when known. */
    readonly line?: number,
  ) {}
}

/**
 * The events of the first document of `text`, as decode.go's parser.parse() reads them for yaml.Unmarshal:
 * the root node's events (start to end), followed by nothing else. Whatever follows the document is never
 * parsed, except for the look-ahead libyaml needs to see that the document ended. An empty stream gives [].
 * Throws ParseFailure with go-yaml's message ("yaml: line N: …", "yaml: unknown anchor 'x' referenced").
 */
export function parseFirstDocument(text: string): YamlEvent[] {
  const p = new Parser(text);
  const events: YamlEvent[] = [];
  try {
    p.parse(); // p.init(): expect STREAM-START
    let ev = p.parse() as YamlEvent;
    if (ev.typ === yaml_STREAM_END_EVENT) return events;
    // p.document(): DOCUMENT-START, one node, DOCUMENT-END
    const anchors = new Set<string>();
    let depth = 0;
    do {
      ev = p.parse() as YamlEvent;
      switch (ev.typ) {
        case yaml_ALIAS_EVENT:
          if (!anchors.has(ev.anchor)) throw new ParseFailure(`yaml: unknown anchor '${ev.anchor}' referenced`);
          break;
        case yaml_SCALAR_EVENT:
          if (ev.anchor.length > 0) anchors.add(ev.anchor);
          break;
        case yaml_SEQUENCE_START_EVENT:
        case yaml_MAPPING_START_EVENT:
          if (ev.anchor.length > 0) anchors.add(ev.anchor);
          depth++;
          break;
        case yaml_SEQUENCE_END_EVENT:
        case yaml_MAPPING_END_EVENT:
          depth--;
          break;
      }
      events.push(ev);
    } while (depth > 0);
    p.parse(); // expect DOCUMENT-END
  } catch (e) {
    if (e instanceof YamlSyntaxError) {
      throw new ParseFailure(
        failMessage(e),
        e.error === yaml_SCANNER_ERROR || e.error === yaml_PARSER_ERROR ? e.problemLine + 1 : undefined,
      );
    }
    throw e;
  }
  return events;
}
