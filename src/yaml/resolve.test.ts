import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { formatGoFloat, isBase60Float, isGoTimestamp, resolvePlain } from "./index.js";

test("resolvePlain follows go-yaml v2 resolve()", () => {
  const cases: [string, string, unknown][] = [
    ["", "null", null],
    ["~", "null", null],
    ["Null", "null", null],
    ["nULL", "str", null],
    ["y", "bool", true],
    ["Yes", "bool", true],
    ["ON", "bool", true],
    ["n", "bool", false],
    ["off", "bool", false],
    ["0777", "int", 511],
    ["0o17", "int", 15],
    ["0x1F", "int", 31],
    ["0b101", "int", 5],
    ["-0b101", "int", -5],
    ["1_000", "int", 1000],
    ["+12", "int", 12],
    ["08", "float", 8],
    ["1.0", "float", 1],
    [".5", "float", 0.5],
    ["1.", "float", 1],
    ["1e3", "float", 1000],
    ["1e400", "str", null],
    ["1e-400", "float", 0],
    ["._5", "str", null],
    ["9223372036854775808", "int", 9223372036854775808],
    ["18446744073709551616", "float", 18446744073709551616],
    [".inf", "float", Infinity],
    ["-.Inf", "float", -Infinity],
    ["<<", "str", null],
    ["2001-12-14", "timestamp", "2001-12-14"],
    ["1:20", "str", null],
    ["0x", "str", null],
    ["-", "str", null],
    [".1_0", "float", 0.1],
    [".5_", "str", null],
    ["0x1p-2", "str", null],
  ];
  for (const [s, kind, value] of cases) {
    const r = resolvePlain(s);
    assert.equal(r.kind, kind, s);
    if (kind !== "str") assert.equal(r.value, value, s);
  }
  assert.equal(resolvePlain("9223372036854775808").goType, "uint64");
  assert.equal(resolvePlain("-9223372036854775808").goType, "int");
  assert.ok(Number.isNaN(resolvePlain(".nan").value));
});

test("timestamps as Go's time.Parse accepts them", () => {
  for (const s of [
    "2001-12-14",
    "2001-1-2",
    "2001-12-14T21:59:43.10-05:00",
    "2001-12-14t21:59:43Z",
    "2001-12-14 21:59:43.10",
    "2001-12-14   1:2:3",
    "2000-02-29",
    "2001-12-14T21:59:43,5+24:00",
  ]) {
    assert.equal(isGoTimestamp(s), true, s);
  }
  for (const s of [
    "2001-13-14",
    "2001-02-29",
    "2001-12-14T21:59:43",
    "2001-12-14 24:00:00",
    "2001-012-14",
    "01-12-14",
    "2001-12-14x",
    "2001-12-14T21:59:43.10-0500",
    "2001-12-14T21:59:43+25:00",
  ]) {
    assert.equal(isGoTimestamp(s), false, s);
  }
});

test("base-60 detection", () => {
  assert.equal(isBase60Float("1:20"), true);
  assert.equal(isBase60Float("190:20:30.5"), true);
  assert.equal(isBase60Float("1:60"), false);
  assert.equal(isBase60Float("a:20"), false);
});

test("formatGoFloat is strconv.FormatFloat(f, 'g', -1, 64)", () => {
  const cases: [number, string][] = [
    [1.5, "1.5"],
    [1e21, "1e+21"],
    [1e20, "1e+20"],
    [123456, "123456"],
    [1234567, "1.234567e+06"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [5e-324, "5e-324"],
    [-2.5e-7, "-2.5e-07"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [100000.5, "100000.5"],
  ];
  for (const [f, s] of cases) assert.equal(formatGoFloat(f), s);
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (f) => {
      assert.equal(Number(formatGoFloat(f)), f);
    }),
  );
});
