// parseGoYamlDocument(text, { strict: true }) against sigs.k8s.io/yaml.UnmarshalStrict (scripts/oracle/yamlstrict).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseGoYamlDocument } from "./index.js";

const vectors = JSON.parse(readFileSync(new URL("./testdata/strict.json", import.meta.url), "utf8")) as {
  input: string;
  error?: string;
  value?: string;
}[];

test("strict mode reports duplicate keys as yaml.UnmarshalStrict does", () => {
  for (const v of vectors) {
    let ours: { error: string } | { value: unknown };
    try {
      ours = { value: parseGoYamlDocument(v.input, { strict: true }) };
    } catch (e) {
      ours = { error: (e as Error).message };
    }
    assert.deepEqual(
      ours,
      v.error !== undefined ? { error: v.error } : { value: JSON.parse(v.value as string) },
      v.input,
    );
  }
});

test("without strict mode a repeated key keeps its last value", () => {
  assert.deepEqual(parseGoYamlDocument("a: 1\na: 2\n"), { a: 2 });
});
