/**
 * A JSON value kept the way opm keeps `json.RawMessage`: as compact JSON text whose key order is
 * part of the data. Values read from catalog files carry sorted keys (opm normalises every blob it
 * loads); values built from Go structs carry the struct's field order. The text and the parsed
 * value are each computed lazily, so loading a catalog does not pay for re-encoding values that
 * are never written out.
 */
import { encodeSortedCompact } from "../gojson/encode.js";
import type { JsonValue } from "../gojson/value.js";

export class RawJson {
  #text: string | undefined;
  #value: JsonValue | undefined;
  #parsed: boolean;

  private constructor(text: string | undefined, value: JsonValue | undefined, parsed: boolean) {
    this.#text = text;
    this.#value = value;
    this.#parsed = parsed;
  }

  /** A value read from a catalog: its text is the sorted-key compact encoding. */
  static fromValue(value: JsonValue): RawJson {
    return new RawJson(undefined, value, true);
  }

  /** Exact compact JSON text (for example built in Go struct-field order). */
  static fromText(text: string): RawJson {
    return new RawJson(text, undefined, false);
  }

  /** A property whose `value` key was absent: opm keeps an empty raw message. */
  static missing(): RawJson {
    return new RawJson("", undefined, false);
  }

  /** True when the value was absent (empty raw text). */
  get isMissing(): boolean {
    return this.#text === "";
  }

  /** The compact JSON text (`""` when missing). */
  get text(): string {
    if (this.#text === undefined) this.#text = encodeSortedCompact(this.#value as JsonValue);
    return this.#text;
  }

  /**
   * The compact JSON text, like `text`, but not kept when it has to be encoded: for writers that use
   * each value's text once (render's output), so that a written catalog does not hold both forms.
   */
  get textOnce(): string {
    return this.#text ?? encodeSortedCompact(this.#value as JsonValue);
  }

  /** The parsed value. Throws a SyntaxError for a missing value. */
  get value(): JsonValue {
    if (!this.#parsed) {
      if (this.#text === "") throw new SyntaxError("unexpected end of JSON input");
      this.#value = JSON.parse(this.#text as string) as JsonValue;
      this.#parsed = true;
    }
    return this.#value as JsonValue;
  }

  toJSON(): JsonValue {
    return this.value;
  }
}
