import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Solver, Totalizer } from "./index.js";

type Cnf = number[][];

/** Independent evaluator: does `model` (index v → boolean) satisfy every clause? */
function satisfies(cnf: Cnf, model: (v: number) => boolean): boolean {
  return cnf.every((cl) => cl.some((l) => (l > 0 ? model(l) : !model(-l))));
}

/** Brute-force: some assignment of vars 1..n satisfies cnf plus the unit clauses `units`. */
function bruteSat(n: number, cnf: Cnf, units: readonly number[] = []): boolean {
  const all = cnf.concat(units.map((u) => [u]));
  for (let mask = 0; mask < 1 << n; mask++) {
    if (satisfies(all, (v) => ((mask >> (v - 1)) & 1) === 1)) return true;
  }
  return false;
}

function load(n: number, cnf: Cnf): Solver {
  const s = new Solver();
  for (let i = 0; i < n; i++) s.newVar();
  for (const cl of cnf) s.addClause(cl);
  return s;
}

function pigeonhole(pigeons: number, holes: number): { n: number; cnf: Cnf } {
  const v = (p: number, h: number) => p * holes + h + 1;
  const cnf: Cnf = [];
  for (let p = 0; p < pigeons; p++) cnf.push(Array.from({ length: holes }, (_, h) => v(p, h)));
  for (let h = 0; h < holes; h++) {
    for (let p = 0; p < pigeons; p++) for (let q = p + 1; q < pigeons; q++) cnf.push([-v(p, h), -v(q, h)]);
  }
  return { n: pigeons * holes, cnf };
}

const cnfArb = (maxVars: number, maxClauses: number) =>
  fc.integer({ min: 1, max: maxVars }).chain((n) =>
    fc.record({
      n: fc.constant(n),
      cnf: fc.array(
        fc.array(
          fc.tuple(fc.integer({ min: 1, max: n }), fc.boolean()).map(([v, neg]) => (neg ? -v : v)),
          { minLength: 1, maxLength: 4 },
        ),
        { maxLength: maxClauses },
      ),
      assumptions: fc.array(
        fc.tuple(fc.integer({ min: 1, max: n }), fc.boolean()).map(([v, neg]) => (neg ? -v : v)),
        { maxLength: 5 },
      ),
    }),
  );

test("solver: tiny SAT and UNSAT", () => {
  const s = new Solver();
  const a = s.newVar();
  const b = s.newVar();
  assert.equal(s.addClause([a, b]), true);
  assert.equal(s.addClause([-a, b]), true);
  assert.equal(s.solve(), 1);
  assert.equal(s.value(b), true);
  assert.equal(s.value(-b), false);
  assert.equal(s.addClause([-b]), false);
  assert.equal(s.solve(), -1);
  assert.deepEqual(s.why(), []);
});

test("solver: empty clause and tautologies", () => {
  const s = new Solver();
  const a = s.newVar();
  assert.equal(s.addClause([a, -a]), true);
  assert.equal(s.numClauses, 0);
  assert.equal(s.solve(), 1);
  assert.equal(s.addClause([]), false);
  assert.equal(s.solve(), -1);
  assert.throws(() => s.addClause([7]), RangeError);
  assert.throws(() => s.assume(0), RangeError);
});

test("solver: pigeonhole PHP(n+1, n) is UNSAT and PHP(n, n) is SAT", () => {
  for (let h = 2; h <= 7; h++) {
    const u = pigeonhole(h + 1, h);
    assert.equal(load(u.n, u.cnf).solve(), -1, `PHP(${h + 1},${h})`);
    const sat = pigeonhole(h, h);
    const s = load(sat.n, sat.cnf);
    assert.equal(s.solve(), 1, `PHP(${h},${h})`);
    assert.ok(satisfies(sat.cnf, (v) => s.value(v)));
  }
});

test("solver: assumptions give a failed-assumption core and are dropped after solve", () => {
  const s = new Solver();
  const [a, b, c, d] = [s.newVar(), s.newVar(), s.newVar(), s.newVar()];
  s.addClause([-a, -b]); // not both a and b
  s.addClause([-c, d]);
  s.assume([c, a, d, b]);
  assert.equal(s.solve(), -1);
  assert.deepEqual(new Set(s.why()), new Set([a, b]));
  assert.equal(s.solve(), 1); // assumptions were consumed
  s.assume([a, -a]);
  assert.equal(s.solve(), -1);
  assert.deepEqual(new Set(s.why()), new Set([a, -a]));
});

test("solver: incremental clause addition between solves", () => {
  const s = new Solver();
  const xs = Array.from({ length: 6 }, () => s.newVar());
  s.addClause(xs);
  const seen: number[] = [];
  // Enumerate all models with exactly-one via blocking clauses.
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) s.addClause([-xs[i], -xs[j]]);
  }
  while (s.solve() === 1) {
    const on = xs.filter((x) => s.value(x));
    assert.equal(on.length, 1);
    seen.push(on[0]);
    s.addClause([-on[0]]);
  }
  assert.deepEqual(
    seen.slice().sort((a, b) => a - b),
    xs,
  );
});

test("solver: test/untest scopes", () => {
  const s = new Solver();
  const [a, b, c, d] = [s.newVar(), s.newVar(), s.newVar(), s.newVar()];
  s.newVar(); // left open, so propagation alone does not decide
  s.addClause([-a, b]);
  s.addClause([-b, c]);
  s.addClause([-c, -d]);
  assert.equal(s.testDepth, 0);
  s.assume(a);
  assert.equal(s.test(), 0);
  assert.equal(s.testDepth, 1);
  s.assume(d);
  assert.equal(s.test(), -1);
  assert.deepEqual(new Set(s.why()), new Set([a, d]));
  assert.equal(s.testDepth, 2);
  // A solve inside a failed scope fails with the same core.
  assert.equal(s.solve(), -1);
  assert.equal(s.untest(), 0);
  // Inside scope {a}, solving sees a.
  assert.equal(s.solve(), 1);
  assert.ok(s.value(a) && s.value(b) && s.value(c) && !s.value(d));
  s.assume(-c);
  assert.equal(s.solve(), -1);
  assert.deepEqual(new Set(s.why()), new Set([a, -c]));
  assert.equal(s.untest(), 0);
  assert.equal(s.testDepth, 0);
  s.assume(d);
  assert.equal(s.solve(), 1);
  assert.ok(!s.value(a));
  assert.throws(() => s.untest(), /no test scope/);
  s.assume(a);
  s.test();
  assert.throws(() => s.addClause([a]), /test scope/);
  s.untest();
});

test("solver: test reports 1 when propagation assigns everything", () => {
  const s = new Solver();
  const [a, b] = [s.newVar(), s.newVar()];
  s.addClause([-a, b]);
  s.assume(a);
  assert.equal(s.test(), 1);
  assert.ok(s.value(a) && s.value(b));
  assert.equal(s.untest(), 0);
});

test("solver: learnt units inside scopes keep the scopes usable", () => {
  // Solving inside a scope learns clauses (even units) that may backjump below the scope levels.
  const u = pigeonhole(5, 4);
  const s = load(
    u.n + 1,
    u.cnf.map((cl) => [u.n + 1, ...cl]),
  );
  s.assume(-(u.n + 1));
  assert.equal(s.test(), 0);
  assert.equal(s.solve(), -1);
  assert.deepEqual(s.why(), [-(u.n + 1)]);
  assert.equal(s.untest(), 0);
  assert.equal(s.solve(), 1);
  assert.equal(s.value(u.n + 1), true);
});

test("solver: determinism — the same calls give the same models", () => {
  const run = () => {
    const s = new Solver();
    const n = 60;
    for (let i = 0; i < n; i++) s.newVar();
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n) + 1;
    for (let i = 0; i < 240; i++) s.addClause([rnd(), -rnd(), rnd() * (i % 2 ? 1 : -1)]);
    const out: string[] = [];
    for (let k = 0; k < 5; k++) {
      s.assume([rnd(), -rnd()]);
      const r = s.solve();
      out.push(
        r === 1 ? Array.from({ length: n }, (_, i) => (s.value(i + 1) ? "1" : "0")).join("") : `U${s.why().join(",")}`,
      );
    }
    return out;
  };
  assert.deepEqual(run(), run());
});

test("totalizer: atMost/atLeast agree with counting, bounded and exact", () => {
  for (let n = 1; n <= 6; n++) {
    const configs: [boolean, number][] = [
      [false, Math.min(n, 3)],
      [true, n],
      [true, Math.min(n, 2)],
    ];
    for (const [exact, bound] of configs) {
      const s = new Solver();
      const xs = Array.from({ length: n }, () => s.newVar());
      const tot = new Totalizer(s, xs, bound, exact);
      for (let mask = 0; mask < 1 << n; mask++) {
        const on = xs.map((_, i) => ((mask >> i) & 1) === 1);
        const count = on.filter(Boolean).length;
        const inputs = xs.map((x, i) => (on[i] ? x : -x));
        for (let k = 0; k <= n; k++) {
          const tag = `n=${n} bound=${bound} exact=${exact} mask=${mask} k=${k}`;
          if (k < tot.bound || k >= n) {
            s.assume(inputs);
            s.assume(tot.atMost(k));
            assert.equal(s.solve() === 1, count <= k, `atMost ${tag}`);
            if (exact) {
              s.assume(inputs);
              s.assume(-tot.atMost(k));
              assert.equal(s.solve() === 1, count > k, `¬atMost ${tag}`);
            }
          }
          if (exact && k <= tot.bound) {
            s.assume(inputs);
            s.assume(tot.atLeast(k));
            assert.equal(s.solve() === 1, count >= k, `atLeast ${tag}`);
            s.assume(inputs);
            s.assume(-tot.atLeast(k));
            assert.equal(s.solve() === 1, count < k, `¬atLeast ${tag}`);
          }
        }
      }
    }
  }
  const s = new Solver();
  const t = new Totalizer(s, [s.newVar(), s.newVar(), s.newVar()], 1);
  assert.throws(() => t.atMost(1), RangeError);
});

test("property: SAT answers are models, UNSAT agrees with brute force, cores are sound", () => {
  fc.assert(
    fc.property(cnfArb(14, 60), ({ n, cnf, assumptions }) => {
      const s = load(n, cnf);
      const r = s.solve();
      assert.equal(r === 1, bruteSat(n, cnf));
      if (r === 1) assert.ok(satisfies(cnf, (v) => s.value(v)));
      s.assume(assumptions);
      const ra = s.solve();
      assert.equal(ra === 1, bruteSat(n, cnf, assumptions));
      if (ra === 1) {
        assert.ok(satisfies(cnf, (v) => s.value(v)));
        for (const a of assumptions) assert.ok(s.value(a));
      } else {
        const core = s.why();
        for (const l of core) assert.ok(assumptions.includes(l));
        assert.equal(bruteSat(n, cnf, core), false);
      }
    }),
    { numRuns: 400, seed: 2002 },
  );
});

test("property: scopes behave like their assumptions", () => {
  fc.assert(
    fc.property(
      cnfArb(10, 40),
      fc.array(
        fc.array(
          fc.integer({ min: -10, max: 10 }).filter((x) => x !== 0),
          { maxLength: 3 },
        ),
        { maxLength: 4 },
      ),
      ({ n, cnf, assumptions }, groups) => {
        const s = load(n, cnf);
        const fix = (l: number) => (l > 0 ? ((l - 1) % n) + 1 : -(((-l - 1) % n) + 1));
        const stack: number[] = [];
        let failed = false;
        for (const g0 of groups) {
          const g = g0.map(fix);
          s.assume(g);
          stack.push(...g);
          const t = s.test();
          const truth = bruteSat(n, cnf, stack);
          if (t === -1) {
            assert.equal(truth, false);
            failed = true;
            assert.equal(bruteSat(n, cnf, s.why()), false);
          } else {
            assert.equal(failed, false);
          }
          if (t === 1) assert.ok(satisfies(cnf, (v) => s.value(v)));
          s.assume(assumptions);
          const r = s.solve();
          assert.equal(r === 1, truth && bruteSat(n, cnf, stack.concat(assumptions)));
          if (r === 1) for (const l of stack.concat(assumptions)) assert.ok(s.value(l));
        }
        while (s.testDepth > 0) s.untest();
        assert.equal(s.solve() === 1, bruteSat(n, cnf));
      },
    ),
    { numRuns: 300, seed: 77 },
  );
});

test("property: random 3-SAT near the threshold agrees with brute force", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.integer({ min: 1, max: 14 }),
          fc.integer({ min: 1, max: 14 }),
          fc.integer({ min: 1, max: 14 }),
          fc.integer({ min: 0, max: 7 }),
        ),
        {
          minLength: 55,
          maxLength: 65,
        },
      ),
      (raw) => {
        const cnf = raw.map(([a, b, c, signs]) => [signs & 1 ? -a : a, signs & 2 ? -b : b, signs & 4 ? -c : c]);
        const s = load(14, cnf);
        const r = s.solve();
        assert.equal(r === 1, bruteSat(14, cnf));
        if (r === 1) assert.ok(satisfies(cnf, (v) => s.value(v)));
      },
    ),
    { numRuns: 60, seed: 426 },
  );
});

test("scoped and incremental solving agrees with fresh solvers on a larger random instance", () => {
  let seed = 99;
  const rnd = (m: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % m;
  };
  const n = 150;
  const lit = () => (rnd(n) + 1) * (rnd(2) ? 1 : -1);
  const cnf: Cnf = Array.from({ length: Math.round(n * 4.0) }, () => [lit(), lit(), lit()]);
  const s = load(n, cnf);
  const fresh = (units: readonly number[]) => {
    const f = load(n, cnf.concat(units.map((u) => [u])));
    return f.solve();
  };
  const scope: number[] = [];
  for (let round = 0; round < 4; round++) {
    const add = [lit(), lit()];
    s.assume(add);
    scope.push(...add);
    const t = s.test();
    for (let k = 0; k < 4; k++) {
      const extra = [lit(), lit(), lit()];
      s.assume(extra);
      const r = s.solve();
      assert.equal(r, fresh(scope.concat(extra)), `round ${round} query ${k}`);
      if (r === 1) {
        assert.ok(satisfies(cnf, (v) => s.value(v)));
        for (const l of scope.concat(extra)) assert.ok(s.value(l));
      } else {
        assert.equal(fresh(s.why()), -1);
      }
      if (t === -1) assert.equal(r, -1);
    }
  }
  while (s.testDepth > 0) s.untest();
  assert.equal(s.solve(), fresh([]));
  assert.ok(s.stats.conflicts > 0);
});
