import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { scannerFastPaths } from "./goyaml/scanner.js";
import { parseGoYamlDocument } from "./index.js";

/** The value, or the error message and line, of a document. */
function outcome(doc: string): unknown {
  try {
    return { value: parseGoYamlDocument(doc) };
  } catch (e) {
    return { error: (e as Error).message, line: (e as { line?: number }).line };
  }
}

function general(doc: string): unknown {
  scannerFastPaths.fast = false;
  try {
    return outcome(doc);
  } finally {
    scannerFastPaths.fast = true;
  }
}

// Block scalars: header (chomping, indentation indicator, comment), lines of varied indentation (blank lines
// shorter or longer than the indentation, tabs, content that looks like YAML), what follows the scalar.
const indentation = fc.constantFrom("", " ", "  ", "   ", "    ", "     ", "\t", "  \t", " \t ");
const content = fc.constantFrom("", "a", "b c", "- x", "k: v", "# not a comment", "  x", "\tx", "é中", "😀", "\r");
const line = fc.tuple(indentation, content).map(([i, c]) => i + c);
const header = fc.tuple(
  fc.constantFrom("|", ">"),
  fc.constantFrom("", "-", "+", "1", "2", "-2", "2+", "0"),
  fc.constantFrom("", " ", " # c", "x"),
);
const blockDoc = fc
  .tuple(
    fc.constantFrom("k: ", "- ", "", "a:\n  b: "),
    header,
    fc.array(line, { maxLength: 8 }),
    fc.constantFrom("", "\n", "\nnext: 1\n", "\n  - y\n", "\n\n"),
  )
  .map(([pre, [style, ind, after], lines, post]) => `${pre}${style}${ind}${after}\n${lines.join("\n")}${post}`);

test("literal block scalars: the fast path agrees with the general scanner", () => {
  fc.assert(
    fc.property(blockDoc, (doc) => {
      assert.deepEqual(outcome(doc), general(doc), JSON.stringify(doc));
    }),
    { numRuns: 3000 },
  );
});
