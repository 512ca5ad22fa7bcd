import { test } from "node:test";
import assert from "node:assert/strict";
import { inputFor } from "./operator.js";
import type { Operator } from "./api.js";

test("an Operator becomes an Input as seed 002 describes", () => {
  const op = {
    metadata: { name: "plumbus" },
    spec: {
      catalog: { name: "community", namespace: "my-ns", package: "plumbus", channel: "stable" },
      version: ">2.0.0 <3.0.0",
      constraints: [{ type: "olm.cel", value: "true" }],
    },
  } as unknown as Operator;
  assert.deepEqual(inputFor(op), {
    inputClass: "subscription",
    constraints: [
      { type: "olm.catalog", value: { name: "community", namespace: "my-ns", package: "plumbus", channel: "stable" } },
      { type: "olm.packageVersion", value: { package: "plumbus", version: ">2.0.0 <3.0.0" } },
      { type: "olm.cel", value: "true" },
    ],
  });
});
