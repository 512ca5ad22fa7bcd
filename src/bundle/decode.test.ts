/** The bundle file decoder: apimachinery's YAML-or-JSON first-document rules, raw JSON texts, templates. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { firstYamlDocument } from "../yaml/index.js";
import { goFormatFloatG } from "../gojson/float.js";
import { decodeFirstDocument, parseJsonNode, stringField } from "./decode.js";
import { parseImageRefTemplate, TemplateError } from "./template.js";
import type { JsonValue } from "../fbc/types.js";

/** strconv.FormatFloat(f, 'g', -1, 32), from src/gojson/float.ts. */
const formatFloat32 = (f: number): string => goFormatFloatG(f, 32);

test("formatFloat32 matches strconv.FormatFloat(f, 'g', -1, 32) (Go vectors)", () => {
  const vectors: [number, string][] = [
    [1.5, "1.5"],
    [0.1, "0.1"],
    [4.8, "4.8"],
    [1e6, "1e+06"],
    [123456.7, "123456.7"],
    [1e-5, "1e-05"],
    [0.0001, "0.0001"],
    [3.14159265358979, "3.1415927"],
    [16777217.5, "1.6777218e+07"],
    [-2.25, "-2.25"],
    [1e21, "1e+21"],
    [7e-10, "7e-10"],
  ];
  for (const [f, want] of vectors) assert.equal(formatFloat32(f), want, String(f));
});

test("YAML numbers and booleans become strings for string fields (sigs.k8s.io/yaml jsonTarget)", () => {
  const res = decodeFirstDocument("a: 123\nb: 4.8\nc: true\nd: [x]\n");
  assert.ok(res.ok);
  const get = (k: string) => stringField(res.node.entries?.find(([n]) => n === k)?.[1]);
  assert.deepEqual(get("a"), { ok: true, value: "123" });
  assert.deepEqual(get("b"), { ok: true, value: "4.8" });
  assert.deepEqual(get("c"), { ok: true, value: "true" });
  assert.deepEqual(get("d"), { ok: false, type: "array" });
  const json = decodeFirstDocument('{"a": 123}');
  assert.ok(json.ok);
  assert.deepEqual(stringField(json.node.entries?.[0][1]), { ok: false, type: "number" });
});

test("JSON detection looks at the first 30 bytes; broken JSON falls back to YAML", () => {
  const far = " ".repeat(30) + '{"kind": "A"}';
  const r1 = decodeFirstDocument(far);
  assert.ok(r1.ok && r1.node.fromYaml, "read as YAML (a flow mapping)");
  const r2 = decodeFirstDocument('{"kind": "A",}');
  assert.ok(r2.ok && r2.node.fromYaml, "a trailing comma is valid YAML flow syntax");
  const r3 = decodeFirstDocument('{"kind": ');
  assert.deepEqual(r3, { ok: false, error: "unexpected EOF" });
  assert.deepEqual(decodeFirstDocument(""), { ok: false, error: "EOF" });
  assert.deepEqual(decodeFirstDocument("---\n--- x\n"), { ok: false, error: "invalid Yaml document separator: x" });
});

test("property: the first YAML document is everything before the second separator line", () => {
  const line = fc.stringMatching(/^[a-z]{1,8}: [a-z0-9]{0,8}$/);
  fc.assert(
    fc.property(
      fc.array(line, { minLength: 1, maxLength: 5 }),
      fc.array(line, { maxLength: 5 }),
      fc.boolean(),
      (doc1, doc2, leading) => {
        const text = (leading ? "---\n" : "") + doc1.join("\n") + "\n---\n" + doc2.join("\n");
        const first = firstYamlDocument(text);
        assert.ok("doc" in first);
        assert.equal(first.doc, (leading ? "---\n" : "") + doc1.join("\n") + "\n");
      },
    ),
  );
});

test("property: JSON nodes keep each value's verbatim text and parse like JSON.parse", () => {
  const ws = fc.constantFrom("", " ", "\n  ", "\t");
  const json: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("1", "-0.5", "true", "null", '"a<b"', '"\\u003c"'),
      fc
        .tuple(fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,4}$/), tie("v"), ws, ws), { maxLength: 3 }))
        .map(([m]) => "{" + m.map(([k, v, a, b]) => `${a}"${k}"${b}:${a}${v}${b}`).join(",") + "}"),
      fc.array(fc.tuple(tie("v"), ws), { maxLength: 3 }).map((a) => "[" + a.map(([v, w]) => w + v + w).join(",") + "]"),
    ),
  })).v;
  fc.assert(
    fc.property(json, (text) => {
      const node = parseJsonNode(text);
      assert.equal(node.raw(), text);
      assert.deepEqual(node.value, JSON.parse(text) as JsonValue);
      for (const [, child] of node.entries ?? []) assert.deepEqual(JSON.parse(child.raw()), child.value);
    }),
  );
});

test("templates: text passes through; fields substitute; unsupported actions are refused, not misread", () => {
  const data = { Package: "p", Name: "p.v1", Version: "1.0.0" };
  fc.assert(
    fc.property(
      fc.string().filter((s) => !s.includes("{{") && !s.endsWith("{")),
      (s) => {
        assert.equal(parseImageRefTemplate(s).execute(data), s);
        assert.equal(parseImageRefTemplate(`${s}{{.Version}}`).execute(data), s + "1.0.0");
      },
    ),
  );
  assert.equal(parseImageRefTemplate("{{.}}").execute(data), "{p p.v1 1.0.0}");
  assert.equal(parseImageRefTemplate("a {{- .Name -}} b").execute(data), "ap.v1b");
  assert.throws(() => parseImageRefTemplate("{{if .Name}}x{{end}}"), TemplateError);
  assert.throws(() => parseImageRefTemplate("{{.Name | printf}}"), TemplateError);
});

test("decodeFirstDocument agrees with apimachinery's NewYAMLOrJSONDecoder(r, 30) (scripts/oracle/yamlstream)", () => {
  const vectors = JSON.parse(readFileSync(new URL("../yaml/testdata/stream.json", import.meta.url), "utf8")) as {
    input: string;
    size: number;
    items: ({ value: unknown } | { error: string })[];
  }[];
  for (const v of vectors.filter((x) => x.size === 30)) {
    const res = decodeFirstDocument(v.input);
    const go = v.items[0];
    const ours = res.ok ? { value: res.node.value } : res.error === "EOF" ? undefined : { error: res.error };
    const want = go && "value" in go && go.value === "<empty>" ? { value: null } : go;
    assert.deepEqual(ours, want, JSON.stringify(v.input));
  }
});
