import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { listCatalogFiles, loadCatalog, loadText } from "./load.js";
import { OpcatError } from "../errors/index.js";

const pkg = (name: string) => `{"schema":"olm.package","name":"${name}","defaultChannel":"stable"}`;

function problemsOf(text: string) {
  return loadText(text, "f.yaml").problems.map((p) => ({ code: p.code, message: p.message, line: p.loc?.line }));
}

test("JSON streams: concatenated objects with or without whitespace", () => {
  const r = loadText(`${pkg("a")}${pkg("b")}\n\n  ${pkg("c")}`, "x.json");
  assert.deepEqual(r.problems, []);
  assert.deepEqual(
    r.config.packages.map((p) => p.name),
    ["a", "b", "c"],
  );
  assert.deepEqual(
    r.config.packages.map((p) => p.loc?.line),
    [1, 1, 3],
  );
});

test("JSON Lines loaded a line at a time from where each starts: the same blobs and locations as whole", () => {
  const lines = [
    pkg("a"),
    '{"schema":"olm.channel","package":"a","name":"stable","entries":[]}',
    pkg("b"),
    "",
    '{"hello":"world"}',
  ];
  const text = `${lines.join("\n")}\n`;
  const whole = loadText(text, "c.jsonl");
  assert.equal(whole.problems[0]?.loc?.line, 5); // a blob without schema, located
  const byLine = loadText("", "c.jsonl");
  const from = { line: 0, index: 0 };
  for (const l of text.split("\n")) {
    loadText(l, "c.jsonl", byLine, undefined, undefined, from);
    from.line++;
    if (l !== "") from.index++;
  }
  assert.deepEqual(byLine.config, whole.config);
  assert.deepEqual(byLine.problems, whole.problems);
});

test("a JSON stream switches to YAML after its first object, not after two", () => {
  const ok = loadText(`${pkg("a")}\n---\nschema: olm.package\nname: b\n`, "x");
  assert.deepEqual(ok.problems, []);
  assert.deepEqual(
    ok.config.packages.map((p) => [p.name, p.loc?.line]),
    [
      ["a", 1],
      ["b", 3],
    ],
  );
  const bad = loadText(`${pkg("a")}\n${pkg("b")}\n---\nschema: olm.package\nname: c\n`, "x");
  assert.equal(bad.problems.length, 1);
  // opm (apimachinery) reports encoding/json's own error after two or more values: no offset
  assert.equal(bad.problems[0].message, "invalid character '-' in numeric literal");
  assert.equal(bad.problems[0].loc?.line, 3);
});

test("non-JSON in a {-file is retried as YAML", () => {
  const r = loadText(`{"schema": "olm.package", "name": "foo",}`, "x");
  assert.deepEqual(r.problems, []);
  assert.equal(r.config.packages[0].name, "foo");
  const r2 = loadText(`{"schema": "olm.package", "name": foo}`, "x");
  assert.equal(r2.config.packages[0].name, "foo");
});

test("when both JSON and YAML fail, the JSON error is reported", () => {
  const r = loadText(`{"schema": "olm.package", "name": "foo" "x": [}`, "x");
  assert.equal(r.problems.length, 1);
  assert.equal(r.problems[0].code, "FBC_JSON_SYNTAX");
  assert.equal(r.problems[0].message, "json: offset 41: invalid character '\"' after object key:value pair");
});

test("YAML document separators", () => {
  assert.deepEqual(problemsOf("---\n---\nschema: olm.package\nname: a\n---\n"), []);
  assert.deepEqual(problemsOf("schema: olm.package\nname: a\n--- foo\nschema: olm.package\nname: b\n"), [
    { code: "FBC_YAML_SEPARATOR", message: "invalid Yaml document separator: foo", line: 3 },
  ]);
  assert.deepEqual(problemsOf("--- # comment\nschema: olm.package\nname: a\n"), []);
  assert.equal(
    loadText("schema: olm.package\nname: a\r\n---\r\nschema: olm.package\r\nname: b\r\n", "x").config.packages.length,
    2,
  );
});

test("comment-only and blank YAML documents are fatal as in opm", () => {
  assert.deepEqual(problemsOf("# header\n---\nschema: olm.package\nname: a\n"), [
    { code: "FBC_MISSING_SCHEMA", message: "object '' is missing root schema field", line: 1 },
  ]);
  assert.deepEqual(problemsOf(""), []);
  assert.deepEqual(problemsOf("\n\n"), [
    { code: "FBC_MISSING_SCHEMA", message: "object '' is missing root schema field", line: 1 },
  ]);
});

test("a blob without schema", () => {
  assert.deepEqual(problemsOf('{"hello":"world"}'), [
    { code: "FBC_MISSING_SCHEMA", message: `object '{"hello":"world"}\n' is missing root schema field`, line: 1 },
  ]);
});

test("a stray Markdown file fails with opm's pretty error", () => {
  const p = problemsOf("hello world\n");
  assert.equal(p.length, 1);
  assert.equal(p[0].code, "FBC_NOT_AN_OBJECT");
  assert.equal(
    p[0].message,
    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go " +
      'value of type map[string]interface {} at offset 13 (indicated by <==)\n"hello world" <==',
  );
  const arr = problemsOf("- a\n- b\n");
  assert.equal(
    arr[0].message,
    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of " +
      'type map[string]interface {} at offset 1 (indicated by <==)\n[ <== \n    "a",\n    "b"\n]',
  );
});

test("reserved keys are case-insensitive; case-duplicates are an error", () => {
  const r = loadText("Schema: olm.package\nNAME: a\n", "x");
  assert.deepEqual(r.problems, []);
  assert.equal(r.config.packages[0].name, "a");
  assert.deepEqual(problemsOf('{"schema":"olm.package","name":"a","Name":"b"}'), [
    { code: "FBC_DUPLICATE_KEYS", message: 'duplicate keys for key "name": [Name name]', line: 1 },
  ]);
  assert.deepEqual(problemsOf('{"schema":"olm.package","name":"a","Name":"b","foo":1,"FOO":2}'), [
    {
      code: "FBC_DUPLICATE_KEYS",
      message: '[duplicate keys for key "foo": [FOO foo], duplicate keys for key "name": [Name name]]',
      line: 1,
    },
  ]);
  // Known mixed-case keys take a shortcut; their lower-case and upper-case twins must still collide.
  for (const [a, b] of [
    ["relatedImages", "relatedimages"],
    ["skipRange", "SKIPRANGE"],
    ["defaultChannel", "defaultchannel"],
  ]) {
    const sorted = [a, b].sort();
    assert.deepEqual(problemsOf(`{"schema":"olm.bundle","name":"a","${a}":[],"${b}":[]}`), [
      {
        code: "FBC_DUPLICATE_KEYS",
        message: `duplicate keys for key "${a.toLowerCase()}": [${sorted.join(" ")}]`,
        line: 1,
      },
    ]);
  }
  assert.deepEqual(problemsOf('{"schema":5}'), [
    {
      code: "FBC_RESERVED_KEY_TYPE",
      message: 'expected value for key "schema" to be a string, got %!t(float64=5): 5',
      line: 1,
    },
  ]);
  assert.deepEqual(problemsOf("schema: olm.package\nname: [a]\n"), [
    {
      code: "FBC_RESERVED_KEY_TYPE",
      message:
        "error unmarshaling JSON: while decoding JSON: expected value " +
        'for key "name" to be a string, got %!t([]interface {}=[a]): [a]',
      line: 1,
    },
  ]);
});

test("routing: custom schemas are kept, typed blobs decoded", () => {
  const r = loadText(
    [
      "schema: olm.package\nname: a\ndefaultChannel: s\nunknown: dropped",
      "schema: olm.channel\npackage: a\nname: s\nentries:\n- name: a.v1",
      "schema: olm.bundle\npackage: a\nname: a.v1\nimage: x\nproperties:\n" +
        "- type: olm.package\n  value: {packageName: a, version: 1.0.0}",
      "schema: olm.deprecations\npackage: a\nentries: []",
      "schema: my.custom\npackage: a\nz: 1\nb: [true]",
    ].join("\n---\n"),
    "x",
  );
  assert.deepEqual(r.problems, []);
  assert.equal(r.config.packages.length, 1);
  assert.equal(r.config.channels[0].entries?.[0].name, "a.v1");
  assert.equal(r.config.bundles[0].properties[0].value.text, '{"packageName":"a","version":"1.0.0"}');
  assert.equal(r.config.deprecations.length, 1);
  assert.equal(r.config.others[0].blob.text, '{"b":[true],"package":"a","schema":"my.custom","z":1}');
  assert.deepEqual(r.config.bundles[0].loc, { file: "x", line: 12, index: 2 });
});

test("typed decoding errors are prefixed like opm's", () => {
  assert.deepEqual(problemsOf('{"schema":"olm.package","name":"a","defaultChannel":{}}'), [
    {
      code: "FBC_DECODE",
      message:
        "parse package: json: cannot unmarshal object into Go struct field Package.defaultChannel of type string",
      line: 1,
    },
  ]);
  // reserved keys are checked first (Meta), as in opm
  assert.deepEqual(problemsOf('{"schema":"olm.package","name":{}}'), [
    {
      code: "FBC_RESERVED_KEY_TYPE",
      message: 'expected value for key "name" to be a string, got %!t(map[string]interface {}=map[]): map[]',
      line: 1,
    },
  ]);
  assert.deepEqual(problemsOf('{"schema":"olm.bundle","relatedImages":{}}'), [
    {
      code: "FBC_DECODE",
      message:
        "parse bundle: json: cannot unmarshal object into Go struct " +
        "field Bundle.relatedImages of type []declcfg.RelatedImage",
      line: 1,
    },
  ]);
});

test("bundle objects are checked while loading", () => {
  const b = (data: string) =>
    `{"schema":"olm.bundle","package":"p","name":"b","properties":[{"type":` +
    `"olm.bundle.object","value":{"data":${JSON.stringify(data)}}}]}`;
  assert.deepEqual(problemsOf(b(Buffer.from('{"kind":"X"}').toString("base64"))), []);
  assert.deepEqual(problemsOf(b(Buffer.from("kind: X\n").toString("base64"))), []);
  assert.deepEqual(problemsOf(b("abc*")), [
    {
      code: "FBC_BUNDLE_OBJECT",
      message:
        'read bundle objects: package "p", bundle "b": parse property at ' +
        "index 0 as bundle object: illegal base64 data at input byte 3",
      line: 1,
    },
  ]);
  const notYaml = problemsOf(b(Buffer.from("a: [b\n").toString("base64")));
  assert.equal(notYaml.length, 1);
  assert.match(
    notYaml[0].message,
    new RegExp(
      /^read bundle objects: package "p", bundle "b": convert bundle object /.source +
        /property at index 0 to JSON: error converting YAML to JSON: yaml: /.source,
    ),
  );
});

test("every problem is reported, not only the first", () => {
  const r = loadText('{"schema":"olm.package","name":{}}\n{"hello":1}\n{"schema":"olm.channel","entries":{}}', "x");
  assert.deepEqual(
    r.problems.map((p) => p.loc?.line),
    [1, 2, 3],
  );
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "opcat-load-"));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

test("directories: every file is read unless .indexignore excludes it (opm's load_test example)", async () => {
  const dir = tree({
    ".indexignore": "*\n!*.json\n!*.yaml\n*.clusterserviceversion.yaml\n",
    "README.md": "# not a catalog\n",
    "cockroachdb.json": pkg("cockroachdb"),
    "etcd.yaml": "schema: olm.package\nname: etcd\n",
    "etcd/etcd.clusterserviceversion.yaml": "kind: ClusterServiceVersion\n",
    "sub/.indexignore": "skip.json\n",
    "sub/skip.json": "not json",
    "sub/keep.json": pkg("keep"),
  });
  assert.deepEqual(listCatalogFiles(dir), ["cockroachdb.json", "etcd.yaml", "sub/keep.json"]);
  const r = await loadCatalog(dir);
  assert.deepEqual(r.problems, []);
  assert.deepEqual(
    r.config.packages.map((p) => [p.name, p.loc?.file]),
    [
      ["cockroachdb", "cockroachdb.json"],
      ["etcd", "etcd.yaml"],
      ["keep", "sub/keep.json"],
    ],
  );
});

test("directories: stray files fail with their location", async () => {
  const dir = tree({ "a/catalog.yaml": "schema: olm.package\nname: a\n", "a/README.md": "# Title\nSome text.\n" });
  const r = await loadCatalog(dir);
  assert.equal(r.problems.length, 1);
  assert.equal(r.problems[0].loc?.file, "a/README.md");
  assert.equal(r.problems[0].code, "FBC_NOT_AN_OBJECT");
});

test("a symlink to a directory is read as a file and reported", async () => {
  const dir = tree({ "real/catalog.yaml": "schema: olm.package\nname: a\n" });
  symlinkSync(join(dir, "real"), join(dir, "link"));
  const r = await loadCatalog(dir);
  assert.equal(r.problems.length, 1);
  assert.equal(r.problems[0].loc?.file, "link");
  assert.match(r.problems[0].message, /is a directory/);
});

test("a missing path is an I/O error with exit code 2", async () => {
  await assert.rejects(loadCatalog("/nonexistent/opcat"), (e: unknown) => e instanceof OpcatError && e.kind === "io");
});

test("property: the loader returns blobs or located problems for any text, never throws", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (text) => {
      const r = loadText(text, "fuzz");
      for (const p of r.problems) {
        assert.equal(typeof p.code, "string");
        assert.ok(p.loc && p.loc.line >= 1);
      }
      return true;
    }),
    { numRuns: 2000 },
  );
});

test("the fast base64 check agrees with Go's StdEncoding rules", async () => {
  const { decodeStdBase64Fast, decodeStdBase64Transient } = await import("./decode.js");
  const { goBase64ErrorOffset: base64ErrorOffset } = await import("../gojson/base64.js");
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\r\té\u0000.";
  const arb = fc.oneof(
    fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString("base64")),
    fc.array(fc.constantFrom(...alphabet.split("")), { maxLength: 24 }).map((a) => a.join("")),
    fc
      .tuple(fc.uint8Array({ minLength: 1, maxLength: 30 }), fc.nat(), fc.constantFrom(...alphabet.split("")))
      .map(([b, i, c]) => {
        const s = Buffer.from(b).toString("base64");
        const at = i % s.length;
        return s.slice(0, at) + c + s.slice(at + 1);
      }),
  );
  fc.assert(
    fc.property(arb, (s) => {
      const fast = decodeStdBase64Fast(s);
      const transient = decodeStdBase64Transient(s);
      assert.equal(transient === undefined, fast === undefined);
      if (fast === undefined || transient === undefined) return;
      assert.deepEqual([...transient], [...fast]);
      assert.equal(base64ErrorOffset(s), -1, `fast path accepted invalid ${JSON.stringify(s)}`);
      assert.deepEqual([...fast], [...Buffer.from(s, "base64")]);
    }),
    { numRuns: 3000 },
  );
  assert.notEqual(decodeStdBase64Fast(Buffer.from("hello world").toString("base64")), undefined);
});

test("decoded base64 kept by callers is never a view of the transient scratch buffer", async () => {
  const { decodeStdBase64, decodeStdBase64Fast, decodeStdBase64Transient } = await import("./decode.js");
  const kept = [decodeStdBase64("PHN2Zy8+"), decodeStdBase64Fast("PHN2Zy8+") as Buffer];
  decodeStdBase64Transient("eyJhcGlWZXJzaW9uIjoidjEifQ==");
  decodeStdBase64("eyJhcGlW");
  for (const k of kept) assert.equal(Buffer.from(k).toString(), "<svg/>");
});

test("YAML syntax errors: the hint turns go-yaml's line into a file line; .indexignore only without blobs", () => {
  // the error is in the second document: go-yaml says "line 3", counted from that document's first line (4)
  const [second] = loadText(
    "schema: olm.package\nname: x\n---\nschema: olm.package\nname: y\nfoo: [bar\n",
    "c.yaml",
  ).problems;
  assert.equal(second.code, "FBC_YAML_SYNTAX");
  assert.match(second.message, /yaml: line 3: /);
  assert.equal(second.loc?.line, 6);
  assert.equal(
    second.hint,
    'go-yaml\'s "line 3" counts from the start of the YAML document, which begins at line 4 of the file: ' +
      "it is line 6 of the file",
  );
  // in the first document the two counts agree: nothing to explain, and the file holds no blob at all
  const [only] = loadText("a: b\n  c: d: e\n", "notes.yaml").problems;
  assert.equal(only.code, "FBC_YAML_SYNTAX");
  assert.equal(
    only.hint,
    "if this file is not part of the catalog, exclude it with a .indexignore file (gitignore syntax)",
  );
});
