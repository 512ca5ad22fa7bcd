/** Random catalogs and inputs: every solution satisfies every constraint (independent checker), answers are deterministic, and a single failing input really has no solution (brute force). */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CatalogSet, resolve, type Input, type ResolveSet } from "../../src/resolve/index.js";
import { tryParseRange, parseVersion, SemverError } from "../../src/semver/index.js";
import { catalog, type B, type P } from "./helpers.js";

const GVKS = ["a.io/v1/A", "b.io/v1/B", "c.io/v1/C"];
const PKGS = ["p0", "p1", "p2", "p3"];

interface Spec {
  pkgs: P[];
  inputs: { pkg: string; range?: string }[];
}

const bundleArb = (pkg: string, i: number) =>
  fc.record({
    provides: fc.subarray(GVKS, { maxLength: 1 }),
    requires: fc.subarray(GVKS, { maxLength: 1 }),
    requiresPackage: fc.option(fc.tuple(fc.constantFrom(...PKGS.filter((p) => p !== pkg)), fc.constantFrom(">=1.0.0", "<2.0.0", ">=2.0.0", "1.0.0 || 3.0.0")), { nil: undefined }),
  }).map((r): B => ({
    name: `${pkg}.v${i + 1}`,
    version: `${i + 1}.0.0`,
    replaces: i > 0 ? `${pkg}.v${i}` : undefined,
    provides: r.provides,
    requires: r.requires.filter((g) => !r.provides.includes(g)),
    requiresPackage: r.requiresPackage ? [r.requiresPackage] : undefined,
  }));

const specArb: fc.Arbitrary<Spec> = fc
  .tuple(...PKGS.map((p) => fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => bundleArb(p, i))).map((bundles): P => ({ name: p, bundles })))))
  .chain((pkgs) =>
    fc.record({
      pkgs: fc.constant(pkgs),
      inputs: fc.array(fc.record({ pkg: fc.constantFrom(...PKGS), range: fc.option(fc.constantFrom(">=2.0.0", "<3.0.0", "1.0.0"), { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
    }),
  );

function toRequest(spec: Spec) {
  const set = new CatalogSet([catalog("c", spec.pkgs)]);
  const inputs = spec.inputs.map((inp, i): Input => ({
    name: `in${i}`,
    inputClass: "subscription",
    constraints: [
      { type: "olm.catalog", value: { package: inp.pkg } },
      ...(inp.range ? [{ type: "olm.packageVersion", value: { package: inp.pkg, version: inp.range } }] : []),
    ],
  }));
  return { set, inputs };
}

const inRange = (range: string, v: string): boolean => {
  const r = tryParseRange(range);
  return !(r instanceof SemverError) && r(parseVersion(v));
};

/** True when `chosen` (bundle names) satisfies uniqueness, dependencies and the given inputs. */
function valid(spec: Spec, chosen: Set<string>, inputs: Spec["inputs"]): boolean {
  const all = spec.pkgs.flatMap((p) => p.bundles.map((b) => ({ ...b, pkg: p.name })));
  const sel = all.filter((b) => chosen.has(b.name));
  const pk = new Set<string>();
  for (const b of sel) {
    if (pk.has(b.pkg)) return false;
    pk.add(b.pkg);
  }
  for (const g of GVKS) if (new Set(sel.filter((b) => b.provides?.includes(g)).map((b) => b.pkg)).size > 1) return false;
  for (const b of sel) {
    for (const g of b.requires ?? []) if (!sel.some((x) => x.provides?.includes(g))) return false;
    for (const [p, r] of b.requiresPackage ?? []) if (!sel.some((x) => x.pkg === p && inRange(r, x.version))) return false;
  }
  for (const inp of inputs) if (!sel.some((x) => x.pkg === inp.pkg && (!inp.range || inRange(inp.range, x.version)))) return false;
  return true;
}

function check(spec: Spec, rs: ResolveSet): void {
  const chosen = new Set(rs.bundles.map((b) => b.name));
  const ok = spec.inputs.filter((_, i) => rs.inputs[i].conditions.length === 0);
  assert.ok(valid(spec, chosen, ok), `invalid selection ${[...chosen].join(",")}`);
  for (const st of rs.inputs) {
    for (const c of st.conditions) assert.doesNotMatch(c.message, /is mandatory|permits at most|requires at least one of/);
  }
}

test("every solution satisfies every constraint; same input, same output", () => {
  fc.assert(
    fc.property(specArb, (spec) => {
      const { set, inputs } = toRequest(spec);
      const rs = resolve({ catalogs: set, inputs });
      check(spec, rs);
      assert.equal(JSON.stringify(resolve({ catalogs: toRequest(spec).set, inputs })), JSON.stringify(rs));
    }),
    { numRuns: 200 },
  );
});

test("a single input that fails really has no solution", () => {
  fc.assert(
    fc.property(specArb, (spec) => {
      const one = { ...spec, inputs: spec.inputs.slice(0, 1) };
      const { set, inputs } = toRequest(one);
      const rs = resolve({ catalogs: set, inputs });
      if (rs.resolved) return;
      const names = one.pkgs.flatMap((p) => p.bundles.map((b) => b.name));
      for (let mask = 0; mask < 1 << names.length; mask++) {
        const chosen = new Set(names.filter((_, i) => mask & (1 << i)));
        assert.ok(!valid(one, chosen, one.inputs), `resolver failed but {${[...chosen].join(",")}} is a solution`);
      }
    }),
    { numRuns: 150 },
  );
});
