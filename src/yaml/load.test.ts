import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { GoYamlError, parseGoYamlDocument, type JsonValue } from "./index.js";

interface LoadVector {
  yaml: string;
  json?: string;
  err?: string;
}

const vectors = JSON.parse(readFileSync(new URL("./testdata/load.json", import.meta.url), "utf8")) as LoadVector[];

/** JSON.stringify, or (for values nested deeper than it can go) the same text built without recursion. */
function toJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  const out: string[] = [];
  const stack: ({ raw: string } | { val: unknown })[] = [{ val: v }];
  for (let it = stack.pop(); it !== undefined; it = stack.pop()) {
    if ("raw" in it) {
      out.push(it.raw);
      continue;
    }
    const x = it.val;
    if (Array.isArray(x)) {
      stack.push({ raw: "]" });
      for (let i = x.length - 1; i >= 0; i--) {
        stack.push({ val: x[i] });
        if (i > 0) stack.push({ raw: "," });
      }
      stack.push({ raw: "[" });
    } else if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      const ks = Object.keys(o);
      stack.push({ raw: "}" });
      for (let i = ks.length - 1; i >= 0; i--) {
        stack.push({ val: o[ks[i]] });
        stack.push({ raw: JSON.stringify(ks[i]) + ":" });
        if (i > 0) stack.push({ raw: "," });
      }
      stack.push({ raw: "{" });
    } else {
      out.push(JSON.stringify(x));
    }
  }
  return out.join("");
}

function run(yaml: string): { json?: string; err?: string } {
  try {
    return { json: toJson(parseGoYamlDocument(yaml)) };
  } catch (e) {
    assert.ok(e instanceof GoYamlError, `not a GoYamlError: ${String(e)}`);
    return { err: e.message };
  }
}

test("parseGoYamlDocument matches sigs.k8s.io/yaml YAMLToJSON on the oracle vectors", () => {
  assert.ok(vectors.length > 4000, `only ${vectors.length} vectors`);
  const report: string[] = [];
  let failures = 0;
  let checked = 0;
  for (const v of vectors) {
    const got = run(v.yaml);
    checked++;
    const ok = v.err !== undefined ? got.err === v.err : got.json === JSON.stringify(JSON.parse(v.json as string));
    if (!ok) {
      failures++;
      if (report.length < 5)
        report.push(`${JSON.stringify(v.yaml).slice(0, 200)}\n  go: ${v.err ?? v.json}\n  ts: ${got.err ?? got.json}`);
    }
  }
  assert.ok(checked > 4000);
  assert.equal(failures, 0, report.join("\n"));
});

test("a lone `-` in a flow collection is a plain scalar, as in libyaml", () => {
  assert.deepEqual(run("[-]\n"), { json: '["-"]' });
  assert.deepEqual(run("{a: -}\n"), { json: '{"a":"-"}' });
});

test("YAML 1.1 typing of values and keys", () => {
  const doc = [
    "y: yes",
    "n: off",
    "on: 1",
    "oct: 0777",
    "o2: 0o17",
    "hex: 0x1F",
    "bin: 0b101",
    "under: 1_000",
    "f: 1.",
    "e: 1e3",
    "neg0: -0",
    "ts: 2001-12-14",
    "b60: 1:20",
    "nul: ~",
    "empty:",
    "big: 12345678901234567890",
    "1: int key",
    "1.5: float key",
    "0.1234567891: f32 key",
    "str: !!str 12",
    "fl: !!float 1",
    "bin64: !!binary aGVsbG8=",
    "custom: !foo bar",
    "",
  ].join("\n");
  assert.deepEqual(parseGoYamlDocument(doc), {
    "0.12345679": "f32 key",
    "1": "int key",
    "1.5": "float key",
    b60: "1:20",
    big: 12345678901234567890,
    bin: 5,
    bin64: "hello",
    custom: "bar",
    e: 1000,
    empty: null,
    f: 1,
    false: false,
    fl: 1,
    hex: 31,
    neg0: 0,
    nul: null,
    o2: 15,
    oct: 511,
    str: "12",
    true: 1,
    ts: "2001-12-14",
    under: 1000,
  } as JsonValue);
  assert.equal(JSON.stringify(parseGoYamlDocument("y: 1\n")), '{"true":1}');
});

test("anchors, aliases and merges follow go-yaml v2's order rules", () => {
  assert.deepEqual(parseGoYamlDocument("a: &x {p: 1}\nb: *x\n"), { a: { p: 1 }, b: { p: 1 } });
  // Explicit keys after `<<` win; keys before it are overridden by the merge; earlier list items win.
  assert.deepEqual(parseGoYamlDocument("d:\n  w: 3\n  <<: {w: 4, z: 5}\n"), { d: { w: 4, z: 5 } });
  assert.deepEqual(parseGoYamlDocument("d:\n  <<: {w: 4, z: 5}\n  w: 3\n"), { d: { w: 3, z: 5 } });
  assert.deepEqual(parseGoYamlDocument("d:\n  <<: [{a: 1}, {a: 2, b: 2}]\n"), { d: { a: 1, b: 2 } });
  assert.deepEqual(parseGoYamlDocument("a: 1\na: 2\n"), { a: 2 });
  assert.deepEqual(parseGoYamlDocument("__proto__: 1\n"), JSON.parse('{"__proto__":1}'));
});

test("a lone surrogate reads as U+FFFD, as the UTF-8 text Go receives", () => {
  assert.deepEqual(parseGoYamlDocument("a: \ud83d\n"), { a: "\ufffd" });
});

test("documents without content are null", () => {
  assert.equal(parseGoYamlDocument(""), null);
  assert.equal(parseGoYamlDocument("# only a comment\n"), null);
  assert.equal(parseGoYamlDocument("\n\n"), null);
});

test("errors carry Go's messages", () => {
  const cases: [string, string][] = [
    ["a: [1\n", "yaml: line 1: did not find expected ',' or ']'"],
    ["a: {b: 1\n", "yaml: line 1: did not find expected ',' or '}'"],
    ["a: 'unterminated\n", "yaml: line 2: found unexpected end of stream"],
    ["a: b\n c: d\n", "yaml: line 2: mapping values are not allowed in this context"],
    ["a:\n  b: 1\n c: 2\n", "yaml: line 2: did not find expected key"],
    ["\ta: b\n", "yaml: found character that cannot start any token"],
    ["a: @x\n", "yaml: found character that cannot start any token"],
    ["- a\nb: c\n", "yaml: line 1: did not find expected '-' indicator"],
    ["k: -\n", "yaml: block sequence entries are not allowed in this context"],
    ["a: *unknown\n", "yaml: unknown anchor 'unknown' referenced"],
    ["x: .inf\n", "json: unsupported value: +Inf"],
    ["x: [.nan]\n", "json: unsupported value: NaN"],
    ["~: 1\n", "unsupported map key of type: %!s(<nil>), key: <nil>, value: 1"],
    ["x: !!int foo\n", "yaml: cannot decode !!str `foo` as a !!int"],
    ["d:\n  <<: 1\n", "yaml: map merge requires map or sequence of maps as the value"],
    // strings in %#v as strconv.Quote writes them (checked with the oracle)
    ['? a: "x\\u2029y"\n', 'yaml: invalid map key: map[interface {}]interface {}{"a":"x\\u2029y"}'],
    [
      '? {a: "\\u0001\\t\\U0001F600\\u00a0"}: 1\n',
      'yaml: invalid map key: map[interface {}]interface {}{"a":"\\x01\\t😀\\u00a0"}',
    ],
  ];
  for (const [yaml, msg] of cases) {
    assert.throws(
      () => parseGoYamlDocument(yaml),
      (e: unknown) => {
        assert.ok(e instanceof GoYamlError);
        assert.equal(e.message, "error converting YAML to JSON: " + msg);
        return true;
      },
      yaml,
    );
  }
  try {
    parseGoYamlDocument("a: 1\nb: [\n");
    assert.fail("no error");
  } catch (e) {
    assert.ok(e instanceof GoYamlError);
    assert.equal(typeof e.line, "number");
  }
});

/** Asserts that every vector of a testdata file gives Go's value or Go's error text, listing those that do not. */
function assertAllAgree(file: string): void {
  const vs = JSON.parse(readFileSync(new URL(`./testdata/${file}`, import.meta.url), "utf8")) as LoadVector[];
  const diffs: string[] = [];
  for (const v of vs) {
    const got = run(v.yaml);
    const ok = v.err !== undefined ? got.err === v.err : got.json === toJson(JSON.parse(v.json as string));
    if (!ok) diffs.push(`${JSON.stringify(v.yaml)}\n  go: ${v.err ?? v.json}\n  ts: ${got.err ?? got.json}`);
  }
  assert.equal(diffs.length, 0, `${diffs.length} of ${vs.length} differ from Go:\n${diffs.slice(0, 20).join("\n")}`);
}

test("random YAML-like text: every value and every error text is Go's", () => {
  assertAllAgree("load-fuzz.json");
});

test("broken documents (every error path of go-yaml's reader, scanner and parser): every error text is Go's", () => {
  // testdata/load-errors.json: scripts/oracle/yaml/gen-error-vectors.mjs
  assertAllAgree("load-errors.json");
});

/** A "billion laughs" document with `levels` levels of 9 aliases each. */
function bomb(levels: number): string {
  const n = "abcdefghij";
  let s = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let k = 1; k < levels; k++)
    s += `${n[k]}: &${n[k]} [${Array(9)
      .fill(`*${n[k - 1]}`)
      .join(",")}]\n`;
  return s + "schema: olm.package\nname: x\n";
}

test(
  "go-yaml v2's alias limit: alias bombs are refused with its " +
    "message, small aliasing is kept (levels checked against opm)",
  () => {
    // opm (go-yaml v2) accepts 3 levels and refuses 4 to 9 with "document contains excessive aliasing"
    const three = parseGoYamlDocument(bomb(3)) as { c: unknown[][] };
    assert.equal(three.c.length, 9);
    for (const levels of [4, 5, 6, 7, 9]) {
      assert.throws(
        () => parseGoYamlDocument(bomb(levels)),
        (e: unknown) =>
          e instanceof GoYamlError &&
          e.message === "error converting YAML to JSON: yaml: document contains excessive aliasing",
        `levels ${levels}`,
      );
    }
    // many aliases of a small node within a large document are fine (under 99% of the decode operations)
    const many = "x: &x 1\n" + Array.from({ length: 2000 }, (_, i) => `k${i}: *x`).join("\n") + "\n";
    assert.equal((parseGoYamlDocument(many) as Record<string, number>).k1999, 1);
  },
);
