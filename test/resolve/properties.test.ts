/**
 * Random catalogs and inputs: every solution satisfies every constraint (independent checker),
 * answers are deterministic, and a single failing input really has no solution (brute force).
 */
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
  fc
    .record({
      provides: fc.subarray(GVKS, { maxLength: 1 }),
      requires: fc.subarray(GVKS, { maxLength: 1 }),
      requiresPackage: fc.option(
        fc.tuple(
          fc.constantFrom(...PKGS.filter((p) => p !== pkg)),
          fc.constantFrom(">=1.0.0", "<2.0.0", ">=2.0.0", "1.0.0 || 3.0.0"),
        ),
        { nil: undefined },
      ),
    })
    .map(
      (r): B => ({
        name: `${pkg}.v${i + 1}`,
        version: `${i + 1}.0.0`,
        replaces: i > 0 ? `${pkg}.v${i}` : undefined,
        provides: r.provides,
        requires: r.requires.filter((g) => !r.provides.includes(g)),
        requiresPackage: r.requiresPackage ? [r.requiresPackage] : undefined,
      }),
    );

const specArb: fc.Arbitrary<Spec> = fc
  .tuple(
    ...PKGS.map((p) =>
      fc
        .integer({ min: 1, max: 3 })
        .chain((n) =>
          fc.tuple(...Array.from({ length: n }, (_, i) => bundleArb(p, i))).map((bundles): P => ({ name: p, bundles })),
        ),
    ),
  )
  .chain((pkgs) =>
    fc.record({
      pkgs: fc.constant(pkgs),
      inputs: fc.array(
        fc.record({
          pkg: fc.constantFrom(...PKGS),
          range: fc.option(fc.constantFrom(">=2.0.0", "<3.0.0", "1.0.0"), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  );

function toRequest(spec: Spec) {
  const set = new CatalogSet([catalog("c", spec.pkgs)]);
  const inputs = spec.inputs.map(
    (inp, i): Input => ({
      name: `in${i}`,
      inputClass: "subscription",
      constraints: [
        { type: "olm.catalog", value: { package: inp.pkg } },
        ...(inp.range ? [{ type: "olm.packageVersion", value: { package: inp.pkg, version: inp.range } }] : []),
      ],
    }),
  );
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
  for (const g of GVKS)
    if (new Set(sel.filter((b) => b.provides?.includes(g)).map((b) => b.pkg)).size > 1) return false;
  for (const b of sel) {
    for (const g of b.requires ?? []) if (!sel.some((x) => x.provides?.includes(g))) return false;
    for (const [p, r] of b.requiresPackage ?? [])
      if (!sel.some((x) => x.pkg === p && inRange(r, x.version))) return false;
  }
  for (const inp of inputs)
    if (!sel.some((x) => x.pkg === inp.pkg && (!inp.range || inRange(inp.range, x.version)))) return false;
  return true;
}

function check(spec: Spec, rs: ResolveSet): void {
  const chosen = new Set(rs.bundles.map((b) => b.name));
  const ok = spec.inputs.filter((_, i) => rs.inputs[i].conditions.length === 0);
  assert.ok(valid(spec, chosen, ok), `invalid selection ${[...chosen].join(",")}`);
  for (const st of rs.inputs) {
    for (const c of st.conditions)
      assert.doesNotMatch(c.message, /is mandatory|permits at most|requires at least one of/);
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

// Seed 004: operand and related-image entries as variables. Bundles support / require operands
// (x, y) and require related images (r); Inputs may ask for an operand version.
const OP_RANGES = [">=1.0.0 <2.0.0", ">=2.0.0", "1.0.0", ">=0.0.0"];
const OP_PKGS = ["q0", "q1", "q2"];
type Ref = {
  type: "olm.operand.supported" | "olm.operand.required" | "olm.relatedImageBundle";
  name: string;
  version: string;
};
interface OpSpec {
  pkgs: (P & { refs: Ref[][] })[];
  entries: { schema: "olm.operand" | "olm.relatedimages"; name: string; version: string }[];
  inputs: { pkg: string; operand?: { name: string; version: string } }[];
}

const refArb: fc.Arbitrary<Ref> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("olm.operand.supported" as const),
      name: fc.constantFrom("x", "y"),
      version: fc.constantFrom(...OP_RANGES),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("olm.operand.required" as const),
      name: fc.constantFrom("x", "y"),
      version: fc.constantFrom(...OP_RANGES),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("olm.relatedImageBundle" as const),
      name: fc.constant("r"),
      version: fc.constantFrom(...OP_RANGES),
    }),
  },
);
const ALL_ENTRIES: OpSpec["entries"] = [
  { schema: "olm.operand", name: "x", version: "1.0.0" },
  { schema: "olm.operand", name: "x", version: "2.0.0" },
  { schema: "olm.operand", name: "y", version: "1.0.0" },
  { schema: "olm.relatedimages", name: "r", version: "1.0.0" },
  { schema: "olm.relatedimages", name: "r", version: "2.0.0" },
];
const opSpecArb: fc.Arbitrary<OpSpec> = fc.record({
  pkgs: fc.tuple(
    ...OP_PKGS.map((p) =>
      fc.array(fc.array(refArb, { maxLength: 3 }), { minLength: 1, maxLength: 3 }).map((refs) => ({
        name: p,
        refs,
        bundles: refs.map(
          (r, i): B => ({
            name: `${p}.v${i + 1}`,
            version: `${i + 1}.0.0`,
            replaces: i > 0 ? `${p}.v${i}` : undefined,
            extra: r.map((x) => ({ type: x.type, value: { name: x.name, version: x.version } })),
          }),
        ),
      })),
    ),
  ),
  entries: fc.subarray(ALL_ENTRIES, { minLength: 3 }),
  inputs: fc.array(
    fc.record({
      pkg: fc.constantFrom(...OP_PKGS),
      operand: fc.option(fc.record({ name: fc.constantFrom("x", "y"), version: fc.constantFrom(...OP_RANGES) }), {
        nil: undefined,
      }),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});

function opRequest(spec: OpSpec) {
  const blobs = spec.entries.map((e) =>
    e.schema === "olm.operand"
      ? {
          schema: e.schema,
          name: e.name,
          version: e.version,
          images: [{ name: e.name, image: `quay.io/op/${e.name}:${e.version}` }],
        }
      : {
          schema: e.schema,
          name: e.name,
          version: e.version,
          relatedImages: [{ name: e.name, image: `quay.io/rel/${e.name}:${e.version}` }],
        },
  );
  const set = new CatalogSet([catalog("c", spec.pkgs, 0, blobs)]);
  const inputs = spec.inputs.map(
    (inp, i): Input => ({
      name: `in${i}`,
      inputClass: "subscription",
      constraints: [
        { type: "olm.catalog", value: { package: inp.pkg } },
        ...(inp.operand ? [{ type: "olm.operand", value: inp.operand }] : []),
      ],
    }),
  );
  return { set, inputs };
}

/** Independent checker: uniqueness, requirements, management of operands, and the inputs. */
function opValid(spec: OpSpec, bundles: Set<string>, entries: Set<string>, inputs: OpSpec["inputs"]): boolean {
  const all = spec.pkgs.flatMap((p) => p.bundles.map((b, i) => ({ name: b.name, pkg: p.name, refs: p.refs[i] })));
  const sel = all.filter((b) => bundles.has(b.name));
  if (new Set(sel.map((b) => b.pkg)).size !== sel.length) return false;
  const ent = spec.entries.filter((e) => entries.has(`${e.schema} ${e.name} ${e.version}`));
  if (ent.filter((e) => e.schema === "olm.relatedimages").length > 1) return false;
  const supports = (b: (typeof all)[number], e: OpSpec["entries"][number]) =>
    b.refs.some((r) => r.type === "olm.operand.supported" && r.name === e.name && inRange(r.version, e.version));
  for (const b of sel) {
    for (const r of b.refs) {
      if (r.type === "olm.operand.supported") continue;
      const schema = r.type === "olm.relatedImageBundle" ? "olm.relatedimages" : "olm.operand";
      if (!ent.some((e) => e.schema === schema && e.name === r.name && inRange(r.version, e.version))) return false;
    }
  }
  for (const e of ent) if (e.schema === "olm.operand" && !sel.some((b) => supports(b, e))) return false;
  for (const inp of inputs) {
    const b = sel.find((x) => x.pkg === inp.pkg);
    if (!b) return false;
    if (inp.operand) {
      const o = inp.operand;
      if (
        !ent.some(
          (e) => e.schema === "olm.operand" && e.name === o.name && inRange(o.version, e.version) && supports(b, e),
        )
      )
        return false;
    }
  }
  return true;
}

const entryKey = (o: { schema: string; name: string; version: string }) => `${o.schema} ${o.name} ${o.version}`;

test("operand variables: every solution satisfies every seed 004 constraint; deterministic", () => {
  fc.assert(
    fc.property(opSpecArb, (spec) => {
      const { set, inputs } = opRequest(spec);
      const rs = resolve({ catalogs: set, inputs });
      const ok = spec.inputs.filter((_, i) => rs.inputs[i].conditions.length === 0);
      const bundles = new Set(rs.bundles.map((b) => b.name));
      const entries = new Set(rs.operands.map(entryKey));
      assert.ok(opValid(spec, bundles, entries, ok), `invalid selection ${[...bundles, ...entries].join(", ")}`);
      // Every chosen entry is needed: required by a chosen bundle or requested by an input.
      for (const o of rs.operands) assert.ok(o.requiredBy.length + o.requestedBy.length > 0, entryKey(o));
      for (const st of rs.inputs)
        for (const c of st.conditions)
          assert.doesNotMatch(c.message, /is mandatory|permits at most|requires at least one of/);
      assert.equal(JSON.stringify(resolve({ catalogs: opRequest(spec).set, inputs })), JSON.stringify(rs));
    }),
    { numRuns: 200 },
  );
});

test(
  "operand variables: a single input that fails really " + "has no solution (brute force over bundles and entries)",
  () => {
    fc.assert(
      fc.property(opSpecArb, (spec) => {
        const one = { ...spec, inputs: spec.inputs.slice(0, 1) };
        const { set, inputs } = opRequest(one);
        const rs = resolve({ catalogs: set, inputs });
        if (rs.resolved) return;
        const names = one.pkgs.flatMap((p) => p.bundles.map((b) => b.name));
        const keys = one.entries.map(entryKey);
        const n = names.length + keys.length;
        for (let mask = 0; mask < 1 << n; mask++) {
          const bundles = new Set(names.filter((_, i) => mask & (1 << i)));
          const entries = new Set(keys.filter((_, i) => mask & (1 << (names.length + i))));
          assert.ok(
            !opValid(one, bundles, entries, one.inputs),
            `resolver failed but {${[...bundles, ...entries].join(", ")}} is a solution`,
          );
        }
      }),
      { numRuns: 150 },
    );
  },
);
