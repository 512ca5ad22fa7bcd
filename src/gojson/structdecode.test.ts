/**
 * goUnmarshal and goDecode on the points the Go oracle (src/bundle/structdecode.test.ts) does not
 * single out: absent vs null vs zero through pointers, int ranges, embedded fields in error paths,
 * custom UnmarshalJSON methods, DisallowUnknownFields, slices decoded again into their capacity.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  GO_BOOL,
  GO_INT32,
  GO_STRING,
  goDecode,
  goPtr,
  goSlice,
  goSliceItems,
  goStruct,
  goUnmarshal,
  type GoType,
} from "./structdecode.js";

const S = goStruct("pkg.S", [
  ["msg", goPtr(GO_STRING)],
  ["n", GO_INT32],
  [
    "list",
    goSlice(
      goStruct("pkg.Item", [
        ["a", GO_STRING],
        ["b", GO_STRING],
      ]),
    ),
  ],
  ["apiGroups", goSlice(GO_STRING), "Rule"],
]);

test("a pointer keeps absent, null and an explicit zero value apart", () => {
  const u = (text: string) => goUnmarshal(text, S);
  assert.deepEqual(u("{}"), { ok: true, value: {} });
  assert.deepEqual(u('{"msg":null}'), { ok: true, value: { msg: undefined } });
  assert.deepEqual(u('{"msg":""}'), { ok: true, value: { msg: "" } });
  const d = (v: Record<string, unknown>) => (goDecode(v as never, S) as { value: Record<string, unknown> }).value.msg;
  assert.equal(d({}), null);
  assert.equal(d({ msg: null }), null);
  assert.equal(d({ msg: "" }), "");
});

test("ints: range and literal in the error, as strconv.ParseInt sees them", () => {
  assert.deepEqual(goUnmarshal('{"n":2147483647}', S), { ok: true, value: { n: 2147483647 } });
  assert.equal(
    (goUnmarshal('{"n":2147483648}', S) as { error: string }).error,
    "json: cannot unmarshal number 2147483648 into Go struct field S.n of type int32",
  );
  assert.equal(
    (goUnmarshal('{"n":1e3}', S) as { error: string }).error,
    "json: cannot unmarshal number 1e3 into Go struct field S.n of type int32",
  );
  // goDecode reads numbers as json.Marshal wrote them.
  assert.deepEqual(goDecode({ n: 1000 }, S), { ok: true, value: { msg: null, n: 1000, list: null, apiGroups: null } });
});

test("an embedded struct's Go name precedes a promoted field in the error path", () => {
  assert.equal(
    (goUnmarshal('{"apiGroups":"x"}', S) as { error: string }).error,
    "json: cannot unmarshal string into Go struct field S.Rule.apiGroups of type []string",
  );
  assert.equal(
    (goDecode({ apiGroups: "x" }, S) as { error: string }).error,
    "json: cannot unmarshal string into Go struct field S.Rule.apiGroups of type []string",
  );
});

test("a repeated key decodes again into the slice's elements within its length", () => {
  const r = goUnmarshal('{"list":[{"a":"1","b":"2"},{"a":"3"}],"list":[{"a":"x"}]}', S);
  assert.ok(r.ok);
  const list = (r.value as { list: unknown }).list;
  assert.deepEqual(goSliceItems(list), [{ a: "x", b: "2" }]);
});

test("the first type error is kept while decoding goes on; the partial value comes with it", () => {
  const r = goUnmarshal('{"list":[{"a":1},{"a":"ok"}],"n":"x"}', S);
  assert.equal(r.ok, false);
  assert.equal(
    (r as { error: string }).error,
    "json: cannot unmarshal number into Go struct field Item.list.a of type string",
  );
  assert.deepEqual(goSliceItems((r as { value: { list: unknown } }).value.list), [{ a: undefined }, { a: "ok" }]);
});

test("custom UnmarshalJSON methods get the raw text; their errors stop decoding", () => {
  const seen: string[] = [];
  const T: GoType = {
    kind: "custom",
    goName: "pkg.T",
    unmarshal: (raw, d) => {
      seen.push(raw);
      if (d.unmarshalString(raw) === "bad") d.abort("bad value");
    },
  };
  const W = goStruct("pkg.W", [
    ["t", T],
    ["n", GO_INT32],
  ]);
  assert.deepEqual(goUnmarshal('{"n":"x","t": "ok"}', W).ok, false);
  assert.deepEqual(seen, ['"ok"']);
  assert.deepEqual(goUnmarshal('{"n":"x","t":"bad"}', W), { ok: false, error: "bad value" });
  assert.deepEqual(goUnmarshal('{"t":5}', W), {
    ok: false,
    error: "json: cannot unmarshal number into Go struct field W.t of type string",
    offset: 1, // the Offset inside the raw text the method decoded, as Go reports it
  });
});

test("goDecode: unknown fields under DisallowUnknownFields, YAML scalars coerced into strings", () => {
  assert.deepEqual(goDecode({ zz: 1 }, S, { disallowUnknownFields: true }), {
    ok: false,
    error: 'json: unknown field "zz"',
    value: { msg: null, n: 0, list: null, apiGroups: null },
  });
  const Y = goStruct("pkg.Y", [["s", GO_STRING]]);
  for (const [v, want] of [
    [true, "true"],
    [12, "12"],
    [2 ** 63, "9223372036854775808"],
    [2 ** 64, "1.8446744e+19"],
    [1.5, "1.5"],
    [0.1, "0.1"],
  ] as const)
    assert.deepEqual(goDecode({ s: v }, Y, { coerceStrings: true }), { ok: true, value: { s: want } }, String(v));
});

test("goUnmarshal: anything but space after a complete literal is Go's 'after top-level value' error", () => {
  // texts and errors from json.Unmarshal (Go 1.26) into a bool and into interface{}
  const cases: [string, string][] = [
    ["true{", "invalid character '{' after top-level value"],
    ['1"x"', "invalid character '\"' after top-level value"],
    ["null:", "invalid character ':' after top-level value"],
    ["false[1]", "invalid character '[' after top-level value"],
    ["12 }", "invalid character '}' after top-level value"],
    ['"a"{', "invalid character '{' after top-level value"],
  ];
  for (const [text, error] of cases) {
    const r = goUnmarshal(text, GO_BOOL);
    assert.equal(r.ok, false, text);
    if (!r.ok) assert.equal(r.error, error, text);
  }
  assert.deepEqual(goUnmarshal(" true \n", GO_BOOL), { ok: true, value: true });
});
