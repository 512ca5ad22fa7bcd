import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { goQuote } from "../gojson/quote.js";
import { goQuote as semverGoQuote } from "./gostr.js";
import {
  SemverError,
  Version,
  compareVersions,
  newPRVersion,
  parseTolerant,
  parseVersion,
  prVersionToString,
  tryParseTolerant,
  tryParseVersion,
  type PRVersion,
} from "./index.js";

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./testdata/${name}`, import.meta.url), "utf8")) as T;
}

interface VersionVec {
  in: string;
  err?: string;
  out?: string;
  nums?: [string, string, string];
  pre?: string[];
  build?: string[];
}

function describe(v: Version): Omit<VersionVec, "in" | "err"> {
  const d: Omit<VersionVec, "in" | "err"> = {
    out: v.toString(),
    nums: [v.major.toString(), v.minor.toString(), v.patch.toString()],
  };
  if (v.pre.length > 0) d.pre = v.pre.map((p) => (p.isNum ? `n:${p.num}` : `a:${p.str}`));
  if (v.build.length > 0) d.build = [...v.build];
  return d;
}

function checkVectors(file: string, parse: (s: string) => Version | SemverError): number {
  const vecs = load<VersionVec[]>(file);
  assert.ok(vecs.length > 1000);
  for (const vec of vecs) {
    const got = parse(vec.in);
    if (vec.err !== undefined) {
      assert.ok(got instanceof SemverError, `${JSON.stringify(vec.in)}: expected error ${vec.err}, got ${got}`);
      assert.equal(got.message, vec.err, JSON.stringify(vec.in));
    } else {
      assert.ok(got instanceof Version, `${JSON.stringify(vec.in)}: unexpected error ${String(got)}`);
      const { in: _in, ...want } = vec;
      assert.deepEqual(describe(got), want, JSON.stringify(vec.in));
    }
  }
  return vecs.length;
}

test("Parse matches blang/semver v4.0.0 golden vectors", () => {
  checkVectors("versions.json", tryParseVersion);
});

test("ParseTolerant matches blang/semver v4.0.0 golden vectors", () => {
  checkVectors("tolerant.json", tryParseTolerant);
});

test("NewPRVersion matches blang/semver v4.0.0 golden vectors", () => {
  const vecs = load<{ in: string; err?: string; out?: string; isNum?: boolean }[]>("prversions.json");
  for (const vec of vecs) {
    if (vec.err !== undefined) {
      assert.throws(
        () => newPRVersion(vec.in),
        (e: unknown) => e instanceof SemverError && e.message === vec.err,
      );
    } else {
      const p = newPRVersion(vec.in);
      assert.equal(prVersionToString(p), vec.out);
      assert.equal(p.isNum, vec.isNum === true);
    }
  }
});

test("Compare matches blang/semver v4.0.0 golden vectors", () => {
  const file = load<{ versions: string[]; matrix: string[]; pairs: [string, string, string][] }>("compare.json");
  const vs = file.versions.map(parseVersion);
  const sym = (c: number) => (c < 0 ? "<" : c > 0 ? ">" : "=");
  for (let i = 0; i < vs.length; i++) {
    let row = "";
    for (let j = 0; j < vs.length; j++) row += sym(vs[i].compare(vs[j]));
    assert.equal(row, file.matrix[i], `row of ${file.versions[i]}`);
  }
  for (const [a, b, want] of file.pairs) {
    assert.equal(sym(compareVersions(parseVersion(a), parseVersion(b))), want, `${a} vs ${b}`);
  }
});

test("throwing variants throw SemverError with blang's text", () => {
  assert.throws(() => parseVersion(""), { name: "SemverError", message: "Version string empty" });
  assert.throws(() => parseVersion("1.2"), { message: "No Major.Minor.Patch elements found" });
  assert.throws(() => parseVersion("1.2.3-01"), {
    message: 'Numeric PreRelease version must not contain leading zeroes "01"',
  });
  assert.throws(() => parseVersion("18446744073709551616.0.0"), {
    message: 'strconv.ParseUint: parsing "18446744073709551616": value out of range',
  });
  assert.throws(() => parseVersion("1..0"), { message: 'strconv.ParseUint: parsing "": invalid syntax' });
  assert.throws(() => parseTolerant("1.2-beta"), {
    message: "Short version cannot contain PreRelease/Build meta data",
  });
  assert.equal(parseTolerant(" v01.02 ").toString(), "1.2.0");
  assert.equal(parseVersion("18446744073709551615.0.0").major, 18446744073709551615n);
});

test("helpers and blang field conventions", () => {
  const a = parseVersion("1.2.3-alpha.10+b.1");
  const b = parseVersion("1.2.3-alpha.10+other");
  assert.ok(a.equals(b) && a.lte(b) && a.gte(b) && !a.lt(b) && !a.gt(b));
  assert.equal(a.finalizeVersion(), "1.2.3");
  assert.deepEqual(a.pre, [
    { str: "alpha", num: 0n, isNum: false },
    { str: "", num: 10n, isNum: true },
  ]);
  assert.deepEqual(a.build, ["b", "1"]);
  const c = parseVersion("1.2.3");
  assert.ok(a.lt(c) && c.gt(a));
  assert.equal(new Version(1n, 0n, 0n).toString(), "1.0.0");
});

// ---- properties ----

const numArb = fc.oneof(fc.bigInt({ min: 0n, max: 20n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }));
const alphaIdArb = fc.stringMatching(/^[0-9A-Za-z-]{1,8}$/).filter((s) => !/^[0-9]+$/.test(s));
const prArb: fc.Arbitrary<PRVersion> = fc.oneof(
  numArb.map((num) => ({ str: "", num, isNum: true })),
  alphaIdArb.map((str) => ({ str, num: 0n, isNum: false })),
);
const buildArb = fc.stringMatching(/^[0-9A-Za-z-]{1,8}$/);
const versionArb = fc
  .record({
    major: numArb,
    minor: numArb,
    patch: numArb,
    pre: fc.array(prArb, { maxLength: 4 }),
    build: fc.array(buildArb, { maxLength: 3 }),
  })
  .map((r) => new Version(r.major, r.minor, r.patch, r.pre, r.build));

test("property: parse(toString(v)) reproduces v and toString round-trips", () => {
  fc.assert(
    fc.property(versionArb, (v) => {
      const s = v.toString();
      const p = parseVersion(s);
      assert.deepEqual(p, v);
      assert.equal(p.toString(), s);
      assert.equal(parseTolerant(s).toString(), s);
      // A parsed version keeps its input as its text: that must be what formatting gives.
      assert.equal(new Version(p.major, p.minor, p.patch, p.pre, p.build).toString(), s);
    }),
    { numRuns: 2000 },
  );
});

test("property: any string that parses strictly is its own canonical text", () => {
  // Near-versions: numbers (some with leading zeroes or too big), separators, identifiers.
  const num = fc.constantFrom("0", "1", "01", "00", "9", "42", "18446744073709551615", "18446744073709551616", "", "a");
  const sep = fc.constantFrom(".", ".", ".", "-", "+", "..", "");
  const ident = fc.constantFrom("0", "01", "1", "alpha", "Z-9", "-", "", "0a", "a.b", "1.0");
  const tail = fc
    .array(
      fc.tuple(fc.constantFrom("-", "+", ".", "+", "-"), ident).map(([a, b]) => a + b),
      { maxLength: 4 },
    )
    .map((a) => a.join(""));
  const near = fc.tuple(num, sep, num, sep, num, tail).map((a) => a.join(""));
  let parsed = 0;
  fc.assert(
    fc.property(near, (s) => {
      const p = tryParseVersion(s);
      if (p instanceof SemverError) return;
      parsed++;
      assert.equal(new Version(p.major, p.minor, p.patch, p.pre, p.build).toString(), s);
    }),
    { numRuns: 20000 },
  );
  assert.ok(parsed > 50, `only ${parsed} generated strings parsed`);
});

test("property: compare is a total order, antisymmetric and ignores build metadata", () => {
  fc.assert(
    fc.property(versionArb, versionArb, versionArb, (a, b, c) => {
      assert.equal(a.compare(a), 0);
      assert.equal(a.compare(b), -b.compare(a) || 0);
      if (a.compare(b) <= 0 && b.compare(c) <= 0) assert.ok(a.compare(c) <= 0);
      if (a.compare(b) === 0) assert.equal(a.compare(c), b.compare(c));
      const noBuild = new Version(a.major, a.minor, a.patch, a.pre);
      assert.equal(a.compare(noBuild), 0);
    }),
    { numRuns: 3000 },
  );
});

test("property: sorting is consistent with pairwise compare and with reparsed strings", () => {
  fc.assert(
    fc.property(fc.array(versionArb, { maxLength: 20 }), (vs) => {
      const sorted = [...vs].sort(compareVersions);
      for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i - 1].lte(sorted[i]));
      const reparsed = sorted.map((v) => parseVersion(v.toString()));
      for (let i = 0; i < sorted.length; i++) assert.equal(reparsed[i].compare(sorted[i]), 0);
    }),
    { numRuns: 500 },
  );
});

test("property: tryParseVersion never throws and agrees with parseVersion", () => {
  const fragment = fc.constantFrom("0", "1", "01", "9", ".", "-", "+", "x", "a", " ", "é", "18446744073709551616", "");
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.array(fragment, { maxLength: 12 }).map((a) => a.join("")),
      ),
      (s) => {
        const r = tryParseVersion(s);
        if (r instanceof SemverError) assert.throws(() => parseVersion(s), { message: r.message });
        else assert.equal(parseVersion(s).toString(), r.toString());
      },
    ),
    { numRuns: 3000 },
  );
});

test("semver quotes with the one strconv.Quote (src/gojson/quote.ts, Go's Unicode tables)", () => {
  assert.equal(semverGoQuote, goQuote);
  assert.equal(semverGoQuote("\u1c89"), '"\\u1c89"'); // unassigned in Go 1.26's Unicode 15.0.0
});
