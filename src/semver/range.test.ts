import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import {
  SemverError,
  SemverPanic,
  type Version,
  parseRange,
  parseVersion,
  tryParseRange,
  type Range,
} from "./index.js";

interface RangeFile {
  probes: string[];
  ranges: { range: string; err?: string; res?: string }[];
}

const golden = JSON.parse(readFileSync(new URL("./testdata/ranges.json", import.meta.url), "utf8")) as RangeFile;

function evalChar(r: Range, v: Version): string {
  try {
    return r(v) ? "1" : "0";
  } catch (e) {
    if (e instanceof SemverPanic) return "p";
    throw e;
  }
}

test("ParseRange matches blang/semver v4.0.0 golden vectors", () => {
  const probes = golden.probes.map(parseVersion);
  let ok = 0;
  let failed = 0;
  for (const vec of golden.ranges) {
    const r = tryParseRange(vec.range);
    const where = JSON.stringify(vec.range);
    if (vec.err !== undefined) {
      assert.ok(r instanceof SemverError, `${where}: expected error ${vec.err}`);
      assert.equal(r.message, vec.err, where);
      failed++;
    } else {
      assert.ok(!(r instanceof SemverError), `${where}: unexpected error ${String(r)}`);
      assert.equal(probes.map((v) => evalChar(r, v)).join(""), vec.res, where);
      ok++;
    }
  }
  assert.ok(ok > 2000 && failed > 2000, `ok=${ok} failed=${failed}`);
});

function sat(range: string, version: string): boolean {
  return parseRange(range)(parseVersion(version));
}

test("documented quirks", () => {
  // No npm-style pre-release exclusion.
  assert.ok(sat("<1.0.0", "1.0.0-alpha"));
  assert.ok(sat(">=4.1.0 <4.2.0", "4.1.5-rc.1"));
  // Wildcards.
  assert.ok(sat("1.2.x", "1.2.9") && !sat("1.2.x", "1.3.0"));
  assert.ok(sat("<=1.x", "1.99.0") && !sat("<=1.x", "2.0.0") && sat("1.x", "2.0.0-rc"));
  assert.ok(!sat(">1.x.x", "1.0.5") && sat(">1.x.x", "1.1.0"));
  assert.ok(!sat("!=1.x", "0.1.0") && !sat("!=1.x", "3.0.0"));
  // Unknown operators in front of a wildcard are dropped.
  assert.ok(sat("~1.2.x", "1.2.0") && !sat("~1.2.x", "1.2.1"));
  // Space after an operator joins, one-byte tokens vanish, AND binds tighter than OR.
  assert.ok(sat(">= 1.0.0", "1.0.0"));
  assert.ok(sat(">1.0.0 a <2.0.0", "1.5.0"));
  assert.ok(sat(">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "3.1.1") && !sat(">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "4.2.1"));
  // Build metadata ignored.
  assert.ok(sat("=1.0.0+a", "1.0.0+b"));
});

test("documented error texts", () => {
  const err = (s: string) => {
    const r = tryParseRange(s);
    assert.ok(r instanceof SemverError, s);
    return r.message;
  };
  assert.equal(err("1.0.0-xyz"), 'Could not get version from string: "<"');
  assert.equal(err(""), "Last element in range is '||'");
  assert.equal(err("   "), "Last element in range is '||'");
  assert.equal(err("|| 1.0.0"), "First element in range is '||'");
  assert.equal(err("1.0.0 ||"), "Last element in range is '||'");
  assert.equal(
    err(">1.00.1"),
    'Could not parse Range ">1.00.1": Could not parse version "1.00.1" ' +
      'in ">1.00.1": Minor number must not contain leading zeroes "00"',
  );
  assert.equal(err("~1.0.0"), 'Could not parse Range "~1.0.0": Could not parse comparator "~" in "~1.0.0"');
  assert.equal(
    err("1.0"),
    'Could not parse Range "1.0": Could not parse version "1.0" in "1.0": No Major.Minor.Patch elements found',
  );
  assert.throws(() => parseRange("abc"), { name: "SemverError", message: 'Could not get version from string: "abc"' });
});

test("an empty OR group panics only when reached, like Go's nil Range", () => {
  const r = parseRange("1.0.0 || || 2.0.0");
  assert.ok(r(parseVersion("1.0.0")));
  assert.throws(() => r(parseVersion("2.0.0")), SemverPanic);
});

// ---- properties ----

const small = fc.integer({ min: 0, max: 4 });
const versionArb = fc
  .record({
    major: small,
    minor: small,
    patch: small,
    pre: fc.option(fc.constantFrom("0", "1", "alpha", "beta.2", "rc.1"), { nil: undefined }),
  })
  .map(({ major, minor, patch, pre }) => `${major}.${minor}.${patch}${pre === undefined ? "" : "-" + pre}`);

test("property: simple comparators agree with Version.compare", () => {
  fc.assert(
    fc.property(versionArb, versionArb, fc.constantFrom("", "=", "==", "!", "!=", "<", "<=", ">", ">="), (a, b, op) => {
      const c = parseVersion(b).compare(parseVersion(a));
      const want = {
        "": c === 0,
        "=": c === 0,
        "==": c === 0,
        "!": c !== 0,
        "!=": c !== 0,
        "<": c < 0,
        "<=": c <= 0,
        ">": c > 0,
        ">=": c >= 0,
      }[op];
      assert.equal(sat(op + a, b), want);
      // A space is joined only after '<', '>' or '='; "! 1.0.0" drops the one-byte "!" token.
      if (/[<>=]$/.test(op)) assert.equal(sat(op + " " + a, b), want);
      else if (op === "!") assert.equal(sat("! " + a, b), c === 0);
    }),
    { numRuns: 2000 },
  );
});

test("property: AND is conjunction, OR is disjunction", () => {
  const comp = fc.tuple(fc.constantFrom("<", "<=", ">", ">=", "!=", "="), versionArb).map(([o, v]) => o + v);
  fc.assert(
    fc.property(comp, comp, comp, versionArb, (x, y, z, v) => {
      const vx = sat(x, v);
      const vy = sat(y, v);
      const vz = sat(z, v);
      assert.equal(sat(`${x} ${y}`, v), vx && vy);
      assert.equal(sat(`${x} || ${y}`, v), vx || vy);
      assert.equal(sat(`${x} ${y} || ${z}`, v), (vx && vy) || vz);
    }),
    { numRuns: 2000 },
  );
});

test("property: N.M.x is >=N.M.0 <N.(M+1).0 and N.x is >=N.0.0 <(N+1).0.0", () => {
  fc.assert(
    fc.property(small, small, versionArb, (n, m, v) => {
      assert.equal(sat(`${n}.${m}.x`, v), sat(`>=${n}.${m}.0 <${n}.${m + 1}.0`, v));
      assert.equal(sat(`${n}.x`, v), sat(`>=${n}.0.0 <${n + 1}.0.0`, v));
    }),
    { numRuns: 1000 },
  );
});

test("property: tryParseRange never throws", () => {
  const fragment = fc.constantFrom(
    "1",
    "0",
    "2",
    ".",
    "x",
    "X",
    "-",
    "+",
    " ",
    "  ",
    "||",
    "|",
    "<",
    ">",
    "=",
    "!",
    "~",
    "^",
    "alpha",
    "01",
    "é",
    "18446744073709551616",
    "\t",
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.array(fragment, { maxLength: 16 }).map((a) => a.join("")),
      ),
      (s) => {
        const r = tryParseRange(s);
        if (r instanceof SemverError) assert.throws(() => parseRange(s), { message: r.message });
        else assert.equal(typeof r, "function");
      },
    ),
    { numRuns: 3000 },
  );
});
