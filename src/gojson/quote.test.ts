import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { goQuote } from "./quote.js";
import { isGoDigit, isGoLetter, isGoPrint } from "./unicodetables.js";
import { goQuote as fmtGoQuote } from "./fmt.js";

interface Vectors {
  go: string;
  unicode: string;
  quoteRuns: [number, number, string][];
  classRuns: [number, number, string][];
  quotes: [string, string][];
}

// Written by scripts/oracle/unicode from Go's strconv and unicode packages.
const vectors = JSON.parse(readFileSync(new URL("./testdata/unicode.json", import.meta.url), "utf8")) as Vectors;

const hex = (cp: number, n: number) => cp.toString(16).padStart(n, "0");

/** What Go's strconv.Quote(string(r)) prints for a code point of the given shape. */
function expected(cp: number, shape: string): string {
  switch (shape) {
    case "raw":
      // Go's string(r) of a surrogate is U+FFFD; a lone surrogate in JS stands for the same.
      return `"${cp >= 0xd800 && cp <= 0xdfff ? "\ufffd" : String.fromCodePoint(cp)}"`;
    case "x":
      return `"\\x${hex(cp, 2)}"`;
    case "u":
      return `"\\u${hex(cp, 4)}"`;
    case "U":
      return `"\\U${hex(cp, 8)}"`;
    default:
      return shape;
  }
}

test("goQuote equals strconv.Quote on every code point U+0000..U+10FFFF (Go oracle)", () => {
  let next = 0;
  for (const [lo, hi, shape] of vectors.quoteRuns) {
    assert.equal(lo, next, "runs are contiguous");
    for (let cp = lo; cp <= hi; cp++) {
      const got = goQuote(String.fromCodePoint(cp));
      if (got !== expected(cp, shape)) assert.equal(got, expected(cp, shape), `U+${hex(cp, 4)}`);
    }
    next = hi + 1;
  }
  assert.equal(next, 0x110000);
});

test("goQuote equals strconv.Quote on whole strings (Go oracle)", () => {
  for (const [s, q] of vectors.quotes) assert.equal(goQuote(s), q, JSON.stringify(s));
  assert.equal(goQuote("lone \ud800 and \udfff"), '"lone \ufffd and \ufffd"');
});

test("isGoPrint / isGoLetter / isGoDigit follow Go's tables on every code point (Go oracle)", () => {
  let next = 0;
  for (const [lo, hi, cls] of vectors.classRuns) {
    assert.equal(lo, next);
    const p = cls.includes("p");
    const l = cls.includes("l");
    const d = cls.includes("d");
    for (let cp = lo; cp <= hi; cp++) {
      if (isGoPrint(cp) !== p || isGoLetter(cp) !== l || isGoDigit(cp) !== d)
        assert.fail(`U+${hex(cp, 4)}: want ${cls}`);
    }
    next = hi + 1;
  }
  assert.equal(next, 0x110000);
  // Unicode 16 added U+1C89 (a Cyrillic letter); Go 1.26 (Unicode 15.0.0) knows nothing of it.
  assert.equal(vectors.unicode, "15.0.0");
  assert.equal(isGoLetter(0x1c89), false);
  assert.equal(isGoPrint(0x1c89), false);
});

test("there is one strconv.Quote: fmt re-exports it", () => {
  assert.equal(fmtGoQuote, goQuote);
});
