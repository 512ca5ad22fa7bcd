import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compareUtf8, encodeSortedCompact, formatGoFloat, indentCompactJson, quoteGoString } from "./encode.js";
import { goFloatV } from "./float.js";
import { goQuote, goT, goV } from "./fmt.js";
import { findJsonValueEnd, goJsonSyntaxError } from "./scan.js";
import { foldFieldName } from "./unicode.js";

test("quoteGoString escapes like encoding/json with HTML escaping off", () => {
  assert.equal(quoteGoString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(quoteGoString("\n\r\t\b\f\u0001\u001f"), '"\\n\\r\\t\\b\\f\\u0001\\u001f"');
  assert.equal(quoteGoString("<a&b>"), '"<a&b>"');
  assert.equal(quoteGoString("<a&b>", true), '"\\u003ca\\u0026b\\u003e"');
  assert.equal(quoteGoString("x\u2028y\u2029"), '"x\\u2028y\\u2029"');
  assert.equal(quoteGoString("lone \ud800 surrogate"), '"lone \ufffd surrogate"');
  assert.equal(quoteGoString("pair \ud83d\ude00"), '"pair \ud83d\ude00"');
  assert.equal(quoteGoString("literal \\ud800 text"), '"literal \\\\ud800 text"');
});

test("formatGoFloat matches Go's float64 encoding", () => {
  const cases: [number, string][] = [
    [1, "1"],
    [1.5, "1.5"],
    [-0, "-0"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [1e-7, "1e-7"],
    [0.000001, "0.000001"],
    [12345678901234567890, "12345678901234567000"],
    [1.2345e-10, "1.2345e-10"],
  ];
  for (const [n, s] of cases) assert.equal(formatGoFloat(n), s, String(n));
});

test("goFloatV formats like fmt %v", () => {
  assert.equal(goFloatV(1), "1");
  assert.equal(goFloatV(1e21), "1e+21");
  // fmt's %v of a float64 is strconv.FormatFloat(f, 'g', -1, 64): %e from exponent 6 (Go oracle: testdata/float.json).
  assert.equal(goFloatV(1e20), "1e+20");
  assert.equal(goFloatV(1e6), "1e+06");
  assert.equal(goFloatV(123456), "123456");
  assert.equal(goFloatV(0.00001), "1e-05");
  assert.equal(goFloatV(0.0001), "0.0001");
  assert.equal(goFloatV(-2.5e-7), "-2.5e-07");
  assert.equal(goV({ b: [1, "x"], a: null }), "map[a:<nil> b:[1 x]]");
  assert.equal(goT(5), "%!t(float64=5)");
  assert.equal(goT(true), "true");
  assert.equal(goT(null), "%!t(<nil>)");
  assert.equal(goT(["a"]), "%!t([]interface {}=[a])");
});

test("goQuote matches strconv.Quote", () => {
  assert.equal(goQuote('a"b'), '"a\\"b"');
  assert.equal(goQuote("tab\there"), '"tab\\there"');
  assert.equal(goQuote("\u0000\u007f"), '"\\x00\\x7f"');
  assert.equal(goQuote("é ☃"), '"é ☃"');
  assert.equal(goQuote("\u00a0"), '"\\u00a0"');
});

test("compareUtf8 orders by UTF-8 bytes, not UTF-16 units", () => {
  assert.ok(compareUtf8("\uffff", "\ud83d\ude00") < 0); // U+FFFF < U+1F600 in UTF-8
  assert.ok("\uffff" > "\ud83d\ude00"); // but not in UTF-16
  assert.ok(compareUtf8("a", "b") < 0);
  assert.ok(compareUtf8("ab", "a") > 0);
  assert.equal(compareUtf8("x", "x"), 0);
  fc.assert(
    fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
      const byBytes = Buffer.compare(Buffer.from(a), Buffer.from(b));
      return Math.sign(compareUtf8(a, b)) === byBytes;
    }),
  );
});

test("encodeSortedCompact sorts keys at every level and keeps arrays in order", () => {
  assert.equal(
    encodeSortedCompact({ b: 1, a: { d: [3, 2], c: null }, "10": true, "9": "x" }),
    '{"10":true,"9":"x","a":{"c":null,"d":[3,2]},"b":1}',
  );
});

test("indentCompactJson matches json.Indent with four spaces", () => {
  assert.equal(indentCompactJson("{}", "    "), "{}");
  assert.equal(indentCompactJson("[]", "    "), "[]");
  assert.equal(
    indentCompactJson('{"a":[],"b":{},"c":[1,{"d":"x,y:{z}"}]}', "    "),
    '{\n    "a": [],\n    "b": {},\n    "c": [\n        1,\n        {\n            "d": "x,y:{z}"\n        }\n    ]\n}',
  );
  assert.equal(indentCompactJson('"s"', "    "), '"s"');
  assert.equal(indentCompactJson('{"q":"a\\"b"}', "  "), '{\n  "q": "a\\"b"\n}');
  // a string ending in escaped backslashes: the quote after an even run of them closes it
  assert.equal(indentCompactJson('{"q":"a\\\\","r":"\\\\\\""}', "  "), '{\n  "q": "a\\\\",\n  "r": "\\\\\\""\n}');
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const compact = JSON.stringify(v);
      return indentCompactJson(compact, "    ") === JSON.stringify(v, null, 4);
    }),
  );
});

test("findJsonValueEnd finds value boundaries in a stream", () => {
  const s = '{"a":"}"} {"b":[1,2]}[3]"x\\"y" 12 ';
  assert.equal(findJsonValueEnd(s, 0), 9);
  assert.equal(findJsonValueEnd(s, 10), 21);
  assert.equal(findJsonValueEnd(s, 21), 24);
  assert.equal(findJsonValueEnd(s, 24), 30);
  assert.equal(findJsonValueEnd(s, 31), 33);
  assert.equal(findJsonValueEnd('{"a":1', 0), -1);
});

test("goJsonSyntaxError gives Go's messages", () => {
  const cases: [string, string | undefined][] = [
    ['{"a":1}', undefined],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
    ["{a:1}", "invalid character 'a' looking for beginning of object key string"],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ['{"a":[1,]}', "invalid character ']' looking for beginning of value"],
    ['{"a":[1 2]}', "invalid character '2' after array element"],
    ['{"a":tru}', "invalid character '}' in literal true (expecting 'e')"],
    ['{"a":-x}', "invalid character 'x' in numeric literal"],
    ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
    ['{"a":1e}', "invalid character '}' in exponent of numeric literal"],
    ['{"a":"\\q"}', "invalid character 'q' in string escape code"],
    ['{"a":"\\u12x4"}', "invalid character 'x' in \\u hexadecimal character escape"],
    ['{"a":"x\ny"}', "invalid character '\\n' in string literal"],
    ['{"a":{}, "b":[[]], "c":{"d":{}}}', undefined],
    ['{"a":1', "unexpected EOF"],
  ];
  for (const [text, want] of cases) {
    const got = goJsonSyntaxError(text, 0);
    assert.equal(got?.message, want, text);
  }
  assert.equal(goJsonSyntaxError('{"a" 1}', 0)?.offset, 6);
  fc.assert(fc.property(fc.jsonValue(), (v) => goJsonSyntaxError(JSON.stringify(v), 0) === undefined));
});

test("foldFieldName: a member name matches an ASCII field name exactly when Go's bytes.EqualFold says so", () => {
  assert.equal(foldFieldName("relatedImages"), "relatedimages");
  assert.equal(foldFieldName("propertie\u017f"), "properties");
  assert.equal(foldFieldName("\u212aind"), "kind");
  assert.equal(foldFieldName("\u0131con"), "\u0131con"); // dotless i folds with nothing (Go: no match for "icon")
  assert.equal(foldFieldName("\u00c9A"), "\u00c9a");
  // Reference: simple case folding orbits of ASCII letters (s ~ S ~ ſ, k ~ K ~ K, others by ASCII case).
  const orbit = (c: string): string[] => {
    const l = c.toLowerCase();
    if (l === "s") return ["s", "S", "\u017f"];
    if (l === "k") return ["k", "K", "\u212a"];
    return /[a-z]/.test(l) ? [l, l.toUpperCase()] : [c];
  };
  const equalFold = (member: string, field: string): boolean => {
    const m = [...member];
    return m.length === field.length && m.every((c, i) => orbit(field[i]).includes(c));
  };
  const field = fc.stringMatching(/^[a-zA-Z_]{1,6}$/);
  const member = fc
    .array(fc.constantFrom("a", "A", "s", "S", "\u017f", "k", "K", "\u212a", "\u0131", "\u00e9", "_", "i", "I"), {
      minLength: 1,
      maxLength: 6,
    })
    .map((a) => a.join(""));
  fc.assert(
    fc.property(member, field, (m, f) => {
      assert.equal(foldFieldName(m) === foldFieldName(f), equalFold(m, f));
    }),
    { numRuns: 5000 },
  );
  // Members derived from the field itself, so that matches are frequent.
  fc.assert(
    fc.property(field, fc.array(fc.nat(), { minLength: 6, maxLength: 6 }), (f, picks) => {
      const m = [...f]
        .map((c, i) => {
          const o = orbit(c);
          return o[picks[i] % o.length];
        })
        .join("");
      assert.equal(foldFieldName(m), foldFieldName(f));
    }),
    { numRuns: 2000 },
  );
});

test("goErrnoText / goPathError print Go's syscall texts", async () => {
  const { goErrnoText, goPathError } = await import("./goerrno.js");
  const { readFileSync } = await import("node:fs");
  let err: unknown;
  try {
    readFileSync("/nonexistent/opcat-test");
  } catch (e) {
    err = e;
  }
  assert.equal(
    goPathError("open", "/nonexistent/opcat-test", err),
    "open /nonexistent/opcat-test: no such file or directory",
  );
  assert.equal(goErrnoText(Object.assign(new Error("x"), { code: "EISDIR" })), "is a directory");
  assert.equal(goErrnoText(Object.assign(new Error("x"), { code: "EACCES" })), "permission denied");
  assert.equal(goErrnoText(Object.assign(new Error("x"), { code: "ENOTDIR" })), "not a directory");
  assert.equal(goErrnoText(Object.assign(new Error("other"), { code: "EWHATEVER" })), "other");
  assert.equal(goErrnoText(Object.assign(new Error("proto"), { code: "toString" })), "proto");
});

test("goUnmarshalTypeError builds (*json.UnmarshalTypeError).Error()", async () => {
  const { goJsonKind, goUnmarshalTypeError, parseGoValueTypeError } = await import("./unmarshal.js");
  assert.equal(
    goUnmarshalTypeError(goJsonKind(5), "string", { struct: "RelatedImage", field: "name" }),
    "json: cannot unmarshal number into Go struct field RelatedImage.name of type string",
  );
  assert.equal(
    goUnmarshalTypeError(goJsonKind([]), "declcfg.RelatedImage"),
    "json: cannot unmarshal array into Go value of type declcfg.RelatedImage",
  );
  assert.deepEqual(parseGoValueTypeError("json: cannot unmarshal bool into Go value of type []string"), {
    value: "bool",
    goType: "[]string",
  });
  assert.deepEqual(
    [null, true, 1, "s", [], {}].map((v) => goJsonKind(v)),
    ["null", "bool", "number", "string", "array", "object"],
  );
});
