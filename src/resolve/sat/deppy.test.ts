import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AppliedConstraint,
  and,
  atMost,
  conflict,
  dependency,
  formatSearchPosition,
  mandatory,
  not,
  notSatisfiableMessage,
  or,
  prohibited,
  solve,
  variable as v,
  withMessage,
  type Constraint,
  type SearchPosition,
  type SolveResult,
  type Variable,
} from "./index.js";
import { solveWith } from "./deppy.js";

function selected(r: SolveResult): string[] {
  if ("selected" in r) return r.selected;
  assert.fail(`expected a solution, got ${JSON.stringify("unsat" in r ? r.unsat.map(String) : r)}`);
}

function unsat(r: SolveResult): string[] {
  if ("unsat" in r) return r.unsat.map(String);
  assert.fail(`expected unsat, got ${JSON.stringify(r)}`);
}

// ---------------------------------------------------------------- deppy's own cases (solve_test.go)

const deppyCases: { name: string; vars: Variable[]; installed?: string[]; unsat?: string[] }[] = [
  { name: "no variables", vars: [], installed: [] },
  { name: "unnecessary variable is not installed", vars: [v("a")], installed: [] },
  { name: "single mandatory variable is installed", vars: [v("a", mandatory())], installed: ["a"] },
  {
    name: "both mandatory and prohibited produce error",
    vars: [v("a", mandatory(), prohibited())],
    unsat: ["a is mandatory", "a is prohibited"],
  },
  { name: "dependency is installed", vars: [v("a"), v("b", mandatory(), dependency("a"))], installed: ["a", "b"] },
  {
    name: "transitive dependency is installed",
    vars: [v("a"), v("b", dependency("a")), v("c", mandatory(), dependency("b"))],
    installed: ["a", "b", "c"],
  },
  {
    name: "both dependencies are installed",
    vars: [v("a"), v("b"), v("c", mandatory(), dependency("a"), dependency("b"))],
    installed: ["a", "b", "c"],
  },
  {
    name: "solution with first dependency is selected",
    vars: [v("a"), v("b", conflict("a")), v("c", mandatory(), dependency("a", "b"))],
    installed: ["a", "c"],
  },
  {
    name: "solution with only first dependency is selected",
    vars: [v("a"), v("b"), v("c", mandatory(), dependency("a", "b"))],
    installed: ["a", "c"],
  },
  {
    name: "solution with first dependency is selected (reverse)",
    vars: [v("a"), v("b", conflict("a")), v("c", mandatory(), dependency("b", "a"))],
    installed: ["b", "c"],
  },
  {
    name: "two mandatory but conflicting packages",
    vars: [v("a", mandatory()), v("b", mandatory(), conflict("a"))],
    unsat: ["a is mandatory", "b is mandatory", "b conflicts with a"],
  },
  {
    name: "irrelevant dependencies don't influence search order",
    vars: [v("a", dependency("x", "y")), v("b", mandatory(), dependency("y", "x")), v("x"), v("y")],
    installed: ["b", "y"],
  },
  {
    name: "cardinality constraint prevents resolution",
    vars: [v("a", mandatory(), dependency("x", "y"), atMost(1, "x", "y")), v("x", mandatory()), v("y", mandatory())],
    unsat: ["a permits at most 1 of x, y", "x is mandatory", "y is mandatory"],
  },
  {
    name: "cardinality constraint forces alternative",
    vars: [
      v("a", mandatory(), dependency("x", "y"), atMost(1, "x", "y")),
      v("b", mandatory(), dependency("y")),
      v("x"),
      v("y"),
    ],
    installed: ["a", "b", "y"],
  },
  {
    name: "two dependencies satisfied by one variable",
    vars: [
      v("a", mandatory(), dependency("y", "z", "m")),
      v("b", mandatory(), dependency("x", "y")),
      v("x"),
      v("y"),
      v("z"),
      v("m"),
    ],
    installed: ["a", "b", "y"],
  },
  {
    name: "result size larger than minimum due to preference",
    vars: [v("a", mandatory(), dependency("x", "y")), v("b", mandatory(), dependency("y")), v("x"), v("y")],
    installed: ["a", "b", "x", "y"],
  },
  {
    name: "only the least preferable choice is acceptable",
    vars: [
      v("a", mandatory(), dependency("a1", "a2")),
      v("a1", conflict("c1"), conflict("c2")),
      v("a2", conflict("c1")),
      v("b", mandatory(), dependency("b1", "b2")),
      v("b1", conflict("c1"), conflict("c2")),
      v("b2", conflict("c1")),
      v("c", mandatory(), dependency("c1", "c2")),
      v("c1"),
      v("c2"),
    ],
    installed: ["a", "a2", "b", "b2", "c", "c2"],
  },
  {
    name: "preferences respected with multiple dependencies per variable",
    vars: [v("a", mandatory(), dependency("x1", "x2"), dependency("y1", "y2")), v("x1"), v("x2"), v("y1"), v("y2")],
    installed: ["a", "x1", "y1"],
  },
];

for (const c of deppyCases) {
  test(`deppy case: ${c.name}`, () => {
    const r = solve(c.vars);
    if (c.installed) assert.deepEqual(selected(r), c.installed);
    else assert.deepEqual(unsat(r).sort(), (c.unsat as string[]).slice().sort());
  });
}

test("input errors use deppy's messages", () => {
  assert.deepEqual(solve([v("a"), v("a")]), { error: 'duplicate identifier "a" in input' });
  assert.deepEqual(solve([v("a", dependency("b", "c")), v("c", conflict("d"))]), {
    error: '2 errors encountered: variable "b" referenced but not provided, variable "d" referenced but not provided',
  });
});

test("constraint sentences", () => {
  const s = (c: Constraint) => new AppliedConstraint(v("X"), c).toString();
  assert.equal(s(mandatory()), "X is mandatory");
  assert.equal(s(prohibited()), "X is prohibited");
  assert.equal(s(dependency("Y", "Z")), "X requires at least one of Y, Z");
  assert.equal(s(dependency()), "X has a dependency without any candidates to satisfy it");
  assert.equal(s(conflict("Y")), "X conflicts with Y");
  assert.equal(s(atMost(1, "A", "B")), "X permits at most 1 of A, B");
  assert.equal(s(and(mandatory(), conflict("Y"))), "(X is mandatory) and (X conflicts with Y)");
  assert.equal(s(or(dependency("Y"), prohibited())), "(X requires at least one of Y) or (X is prohibited)");
  assert.equal(s(not(mandatory())), "it is not the case that X is mandatory");
  assert.equal(s(and(prohibited())), "X is prohibited");
  assert.equal(s(withMessage(mandatory(), "X was requested")), "X was requested");
  assert.equal(s(withMessage(mandatory(), (id) => `${id} is required by the user`)), "X is required by the user");
  assert.equal(notSatisfiableMessage([]), "constraints not satisfiable");
  assert.equal(
    notSatisfiableMessage([new AppliedConstraint(v("a"), mandatory()), new AppliedConstraint(v("b"), prohibited())]),
    "constraints not satisfiable:\na is mandatory\nb is prohibited",
  );
  assert.throws(() => atMost(1.5, "a"), RangeError);
});

test("compound constraints", () => {
  // or: a needs x or (conflicts with y); x is prohibited → a must not be with y.
  assert.deepEqual(
    selected(solve([v("a", mandatory(), or(dependency("x"), conflict("y"))), v("x", prohibited()), v("y")])),
    ["a"],
  );
  assert.deepEqual(
    unsat(solve([v("a", mandatory(), or(dependency("x"), conflict("y"))), v("x", prohibited()), v("y", mandatory())])),
    ["a is mandatory", "(a requires at least one of x) or (a conflicts with y)", "x is prohibited", "y is mandatory"],
  );
  // not(atMost(1, ...)): at least 2 of x, y, z — the search prefers none, minimisation picks the first two.
  assert.deepEqual(selected(solve([v("a", mandatory(), not(atMost(1, "x", "y", "z"))), v("x"), v("y"), v("z")])), [
    "a",
    "x",
    "y",
  ]);
  // and(mandatory, dependency) is an anchor whose dependency list drives the search.
  assert.deepEqual(selected(solve([v("a", and(mandatory(), dependency("y", "x"))), v("x"), v("y")])), ["a", "y"]);
  // not(mandatory) is prohibition.
  assert.deepEqual(unsat(solve([v("a", mandatory(), not(mandatory()))])), [
    "a is mandatory",
    "it is not the case that a is mandatory",
  ]);
  // Degenerate forms.
  assert.deepEqual(unsat(solve([v("a", or())])), ["a has an empty alternative"]);
  assert.deepEqual(selected(solve([v("a", mandatory(), and())])), ["a"]);
  assert.deepEqual(unsat(solve([v("a", atMost(-1))])), ["a permits at most -1 of "]);
  assert.deepEqual(unsat(solve([v("a", mandatory(), dependency())])), [
    "a is mandatory",
    "a has a dependency without any candidates to satisfy it",
  ]);
  assert.deepEqual(selected(solve([v("a", mandatory(), withMessage(dependency("b"), "a needs b")), v("b")])), [
    "a",
    "b",
  ]);
});

test("extras are minimised, then tie-broken towards earlier variables", () => {
  // Nothing guesses x/y/z, but some must be selected: exactly one of them suffices.
  const vars = [v("a", mandatory(), or(dependency("z"), dependency("y"), dependency("x"))), v("x"), v("y"), v("z")];
  assert.deepEqual(selected(solve(vars)), ["a", "x"]);
  // A prohibited choice forces the dependency's later candidate.
  assert.deepEqual(selected(solve([v("a", mandatory(), dependency("b", "c")), v("b", prohibited()), v("c")])), [
    "a",
    "c",
  ]);
});

test("trace reports each backtrack with deppy's LoggingTracer layout", () => {
  const positions: SearchPosition[] = [];
  const r = solve([v("a", mandatory(), dependency("b", "c")), v("b", conflict("d")), v("c"), v("d", mandatory())], {
    trace: (p) => positions.push(p),
  });
  assert.deepEqual(selected(r), ["a", "c", "d"]);
  assert.ok(positions.length >= 1);
  assert.deepEqual(positions[0].assumptions, ["a", "d", "b"]);
  assert.equal(
    formatSearchPosition(positions[0]),
    "---\nAssumptions:\n- a\n- d\n- b\nConflicts:\n" + positions[0].conflicts.map((c) => `- ${c}\n`).join(""),
  );
  assert.ok(positions[0].conflicts.map(String).includes("b conflicts with d"));
});

test("OLM-shaped: required package, bundle versions, package uniqueness", () => {
  const vars: Variable[] = [
    v("required package foo", mandatory(), dependency("foo.v3", "foo.v2", "foo.v1")),
    v("foo.v3", dependency("bar.v2")),
    v("foo.v2", dependency("bar.v1", "bar.v2")),
    v("foo.v1"),
    v("bar.v2", conflict("baz.v1")),
    v("bar.v1"),
    v("baz.v1"),
    v("required package baz", mandatory(), dependency("baz.v1")),
    v("foo package uniqueness", mandatory(), atMost(1, "foo.v3", "foo.v2", "foo.v1")),
    v("bar package uniqueness", mandatory(), atMost(1, "bar.v2", "bar.v1")),
  ];
  assert.deepEqual(selected(solve(vars)), [
    "required package foo",
    "foo.v2",
    "bar.v1",
    "baz.v1",
    "required package baz",
    "foo package uniqueness",
    "bar package uniqueness",
  ]);
});

// ---------------------------------------------------------------- properties against brute force

type Assign = (i: number) => boolean;

/** Independent semantics of a constraint on subject `s` under an assignment. */
function holds(c: Constraint, s: number, a: Assign, idx: Map<string, number>): boolean {
  const at = (id: string) => a(idx.get(id) as number);
  switch (c.kind) {
    case "mandatory":
      return a(s);
    case "prohibited":
      return !a(s);
    case "dependency":
      return !a(s) || c.ids.some(at);
    case "conflict":
      return !(a(s) && at(c.id));
    case "atMost":
      return c.ids.filter(at).length <= c.n;
    case "and":
      return c.constraints.every((x) => holds(x, s, a, idx));
    case "or":
      return c.constraints.some((x) => holds(x, s, a, idx));
    case "not":
      return !holds(c.constraint, s, a, idx);
    case "message":
      return holds(c.constraint, s, a, idx);
  }
}

interface Applied {
  s: number;
  c: Constraint;
}

function models(n: number, applied: readonly Applied[], idx: Map<string, number>): number[] {
  const out: number[] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const a: Assign = (i) => ((mask >> i) & 1) === 1;
    if (applied.every((x) => holds(x.c, x.s, a, idx))) out.push(mask);
  }
  return out;
}

function ordersOf(c: Constraint, idx: Map<string, number>): number[][] {
  switch (c.kind) {
    case "dependency":
      return c.ids.length > 0 ? [c.ids.map((id) => idx.get(id) as number)] : [];
    case "and":
      return c.constraints.flatMap((x) => ordersOf(x, idx));
    case "message":
      return ordersOf(c.constraint, idx);
    default:
      return [];
  }
}

function anchorOf(c: Constraint): boolean {
  return (
    c.kind === "mandatory" ||
    (c.kind === "and" && c.constraints.some(anchorOf)) ||
    (c.kind === "message" && anchorOf(c.constraint))
  );
}

/** Reference: picks by the exact preference search with a brute-force oracle, then min extras, then lex. */
function reference(vars: readonly Variable[]): string[] | null {
  const n = vars.length;
  const idx = new Map(vars.map((x, i) => [x.id, i]));
  const applied = vars.flatMap((x, i) => x.constraints.map((c) => ({ s: i, c })));
  const ms = models(n, applied, idx);
  if (ms.length === 0) return null;
  const consistent = (g: number) => ms.some((m) => (m & g) === g);
  const queue: number[][] = vars.map((x, i) => (x.constraints.some(anchorOf) ? [i] : [])).filter((q) => q.length > 0);
  let g = 0;
  for (let t = 0; t < queue.length; t++) {
    const c = queue[t];
    if (c.some((x) => (g >> x) & 1)) continue;
    const x = c.find((y) => consistent(g | (1 << y)));
    if (x === undefined) continue;
    g |= 1 << x;
    for (const cc of vars[x].constraints) queue.push(...ordersOf(cc, idx));
  }
  const pop = (m: number) => {
    let c = 0;
    for (let i = 0; i < n; i++) c += (m >> i) & 1;
    return c;
  };
  let best = -1;
  for (const m of ms) {
    if ((m & g) !== g) continue;
    if (best < 0 || pop(m) < pop(best)) best = m;
    else if (pop(m) === pop(best)) {
      // Lexicographic in input order, preferring selected.
      for (let i = 0; i < n; i++) {
        const a = (m >> i) & 1;
        const b = (best >> i) & 1;
        if (a !== b) {
          if (a) best = m;
          break;
        }
      }
    }
  }
  return vars.filter((_, i) => (best >> i) & 1).map((x) => x.id);
}

const deppyArb = fc.integer({ min: 1, max: 7 }).chain((n) => {
  const id = fc.integer({ min: 0, max: n - 1 }).map((i) => `v${i}`);
  const ids = fc.array(id, { minLength: 0, maxLength: 3 });
  const leaf: fc.Arbitrary<Constraint> = fc.oneof(
    { weight: 2, arbitrary: fc.constant(null).map(() => mandatory()) },
    { weight: 1, arbitrary: fc.constant(null).map(() => prohibited()) },
    { weight: 6, arbitrary: ids.map((xs) => dependency(...xs)) },
    { weight: 3, arbitrary: id.map((x) => conflict(x)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 2 }), fc.array(id, { minLength: 1, maxLength: 4 }))
        .map(([k, xs]) => atMost(k, ...xs)),
    },
  );
  const compound: fc.Arbitrary<Constraint> = fc.oneof(
    leaf,
    fc.array(leaf, { minLength: 1, maxLength: 3 }).map((cs) => and(...cs)),
    fc.array(leaf, { minLength: 1, maxLength: 3 }).map((cs) => or(...cs)),
    leaf.map((c) => not(c)),
  );
  const constraint = fc.oneof({ weight: 5, arbitrary: leaf }, { weight: 1, arbitrary: compound });
  return fc
    .array(fc.array(constraint, { maxLength: 3 }), { minLength: n, maxLength: n })
    .map((css) => css.map((cs, i) => v(`v${i}`, ...cs)));
});

function describe(vars: readonly Variable[]): string {
  return vars.map((x) => `${x.id}: ${x.constraints.map((c) => c.describe(x.id)).join("; ")}`).join("\n");
}

test("property: solutions satisfy every constraint and match the brute-force preferred model", () => {
  fc.assert(
    fc.property(deppyArb, (vars) => {
      const r = solve(vars);
      const ref = reference(vars);
      const idx = new Map(vars.map((x, i) => [x.id, i]));
      if (ref === null) {
        assert.ok("unsat" in r, describe(vars));
        return;
      }
      const got = selected(r);
      const on = new Set(got);
      const a: Assign = (i) => on.has(vars[i].id);
      for (let i = 0; i < vars.length; i++) {
        for (const c of vars[i].constraints) assert.ok(holds(c, i, a, idx), `${c.describe(vars[i].id)} violated`);
      }
      assert.deepEqual(got, ref, describe(vars));
    }),
    { numRuns: 1500, seed: 20020 },
  );
});

test("property: picks verified without propagation screening give the same answers", () => {
  // With screening off every candidate is accepted first and rejected only by the verification
  // solve (core-guided location of the first bad pick, then resumption), so this exercises it.
  fc.assert(
    fc.property(deppyArb, (vars) => {
      const norm = (r: SolveResult) => ("unsat" in r ? r.unsat.map(String) : r);
      assert.deepEqual(norm(solveWith(vars, {}, false)), norm(solve(vars)), describe(vars));
    }),
    { numRuns: 1000, seed: 31 },
  );
});

test("a pick that propagation cannot refute is repaired by the verification", () => {
  // x needs y1 or y2, both need z, z conflicts with x: picking x is inconsistent, but unit
  // propagation of x alone does not show it.
  const positions: SearchPosition[] = [];
  const vars = [
    v("r", mandatory(), dependency("x", "w")),
    v("x", dependency("y1", "y2")),
    v("y1", dependency("z")),
    v("y2", dependency("z")),
    v("z", conflict("x")),
    v("w"),
  ];
  assert.deepEqual(selected(solve(vars, { trace: (p) => positions.push(p) })), ["r", "w"]);
  assert.deepEqual(selected(solveWith(vars, {}, false)), ["r", "w"]);
  assert.deepEqual(positions.at(-1)?.assumptions, ["r", "x"]);
});

test("property: unsat explanations are minimal", () => {
  fc.assert(
    fc.property(deppyArb, (vars) => {
      const r = solve(vars);
      if (!("unsat" in r)) return;
      const idx = new Map(vars.map((x, i) => [x.id, i]));
      const applied = r.unsat.map((ac) => ({ s: idx.get(ac.variable.id) as number, c: ac.constraint }));
      assert.ok(applied.length > 0);
      assert.equal(models(vars.length, applied, idx).length, 0, "explanation is satisfiable");
      for (let k = 0; k < applied.length; k++) {
        const rest = applied.filter((_, j) => j !== k);
        assert.ok(models(vars.length, rest, idx).length > 0, `dropping ${r.unsat[k]} is still unsatisfiable`);
      }
      // Listed in input order, each an application that exists in the input.
      for (const ac of r.unsat) assert.ok(ac.variable.constraints.includes(ac.constraint));
    }),
    { numRuns: 1500, seed: 7 },
  );
});

test("property: same input, same output", () => {
  fc.assert(
    fc.property(deppyArb, (vars) => {
      const a = solve(vars);
      const b = solve(vars);
      const norm = (r: SolveResult) => ("unsat" in r ? r.unsat.map(String) : r);
      assert.deepEqual(norm(a), norm(b));
    }),
    { numRuns: 300, seed: 99 },
  );
});
