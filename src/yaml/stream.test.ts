// The YAML-or-JSON stream reader against apimachinery's NewYAMLOrJSONDecoder (scripts/oracle/yamlstream).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { decodeStream, firstYamlDocument, type JsonValue } from "./index.js";

interface Vector {
  input: string;
  size: number;
  items: ({ value: JsonValue } | { error: string })[];
}

const vectors = JSON.parse(readFileSync(new URL("./testdata/stream.json", import.meta.url), "utf8")) as Vector[];

/** Go's results up to the first error, empty values (a null or empty document) left out. */
function goItems(v: Vector): ({ value: JsonValue } | { error: string })[] {
  return v.items.filter((i) => !("value" in i) || (i.value !== "<empty>" && i.value !== null));
}

test("the catalog reader (4096-byte sniff) decodes each stream as apimachinery does", () => {
  let n = 0;
  for (const v of vectors.filter((x) => x.size === 4096)) {
    const ours: ({ value: JsonValue } | { error: string })[] = [];
    for (const item of decodeStream(v.input, v.size)) {
      if (item.kind === "error") {
        ours.push({ error: item.message });
        break;
      }
      if (item.value !== null) ours.push({ value: item.value });
    }
    assert.deepEqual(ours, goItems(v), JSON.stringify(v.input));
    n++;
  }
  assert.ok(n > 40);
});

test("firstYamlDocument: a separator opening the stream stays in the first document", () => {
  assert.deepEqual(firstYamlDocument("---\na: 1\n---\nb: 2\n"), { doc: "---\na: 1\n" });
  assert.deepEqual(firstYamlDocument("a: 1"), { doc: "a: 1\n" });
  assert.deepEqual(firstYamlDocument("a: 1\r\n--- x\n"), { error: "invalid Yaml document separator: x" });
  assert.deepEqual(firstYamlDocument(""), { doc: "" });
});
