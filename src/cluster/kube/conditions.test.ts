/** Condition messages are safe to print on a terminal, whatever bytes they were built from. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { safeMessage, setCondition } from "./conditions.js";

test("escape sequences, carriage returns and bidi overrides are escaped; newlines and tabs stay", () => {
  assert.equal(
    safeMessage("a\u001b[31mred\r\nnext\tcol\u202eevil\u0085"),
    "a\\u001b[31mred\\u000d\nnext\tcol\\u202eevil\\u0085",
  );
  const { conditions } = setCondition([], { type: "Ready", status: "False", reason: "Failed", message: "x\u0007y" });
  assert.equal(conditions[0].message, "x\\u0007y");
});
