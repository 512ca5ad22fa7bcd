/**
 * A deppy-like constraint layer over the CDCL {@link Solver}: boolean variables with identifiers,
 * constraints on them, and a search for the *preferred* solution.
 *
 * Encoding: every applied constraint gets its own selector literal `m` with clauses `m → C`, and
 * all selectors are passed as assumptions, so a failed-assumption core is a set of applied
 * constraints (deppy assumes the constraint literal itself; a selector per application keeps two
 * applications that encode alike apart).
 *
 * The answer is defined independently of the SAT engine (and of how strong its propagation is):
 * 1. **Picks** — the preference search of deppy (`solver/search.go`), made exact: a queue of
 *    choices starts with one single-candidate choice per anchor (a variable with a `mandatory`
 *    constraint), in input order. Choices are taken from the front; a choice with a candidate that
 *    is already picked is satisfied; otherwise its first candidate (in the dependency's order) that
 *    is consistent with all constraints and all earlier picks is picked, and one choice per
 *    dependency list of the picked variable is appended at the back. So the picks are the
 *    lexicographically first consistent sequence, breadth first from the anchors. (deppy screens
 *    candidates by unit propagation alone and backtracks chronologically, which can leave a choice
 *    exhausted and make its result depend on the encoding; here every pick is verified.)
 * 2. **Fewest extras** — among models where every picked variable is selected, those selecting the
 *    fewest other variables (non-zero only when compound constraints force selections).
 * 3. **Tie-break** — among those, the lexicographically first in input order, preferring a
 *    variable selected over not selected.
 * Unsatisfiable inputs yield a minimal set of applied constraints: removing any one of them leaves
 * a satisfiable set.
 */
import { goQuote } from "../../gojson/fmt.js";
import { Totalizer } from "./card.js";
import { Solver } from "./solver.js";

interface Describable {
  /** The sentence for this constraint applied to the variable `subject`. */
  describe(subject: string): string;
}

/** The subject must be selected. Makes the subject an anchor of the search. */
export interface MandatoryConstraint extends Describable {
  readonly kind: "mandatory";
}
/** The subject must not be selected. */
export interface ProhibitedConstraint extends Describable {
  readonly kind: "prohibited";
}
/** If the subject is selected, one of `ids` must be; earlier ids are preferred. */
export interface DependencyConstraint extends Describable {
  readonly kind: "dependency";
  readonly ids: readonly string[];
}
/** The subject and `id` are not both selected. */
export interface ConflictConstraint extends Describable {
  readonly kind: "conflict";
  readonly id: string;
}
/** At most `n` of `ids` are selected (the subject itself is not involved). */
export interface AtMostConstraint extends Describable {
  readonly kind: "atMost";
  readonly n: number;
  readonly ids: readonly string[];
}
/** All of `constraints` hold (on the same subject). Its dependency lists drive the search. */
export interface AndConstraint extends Describable {
  readonly kind: "and";
  readonly constraints: readonly Constraint[];
}
/** At least one of `constraints` holds. */
export interface OrConstraint extends Describable {
  readonly kind: "or";
  readonly constraints: readonly Constraint[];
}
/** `constraint` does not hold. */
export interface NotConstraint extends Describable {
  readonly kind: "not";
  readonly constraint: Constraint;
}
/** `constraint` with another sentence (deppy's UserFriendlyConstraint, OLM's PrettyConstraint). */
export interface MessageConstraint extends Describable {
  readonly kind: "message";
  readonly constraint: Constraint;
}

/** A constraint on a variable (its subject). */
export type Constraint =
  | MandatoryConstraint
  | ProhibitedConstraint
  | DependencyConstraint
  | ConflictConstraint
  | AtMostConstraint
  | AndConstraint
  | OrConstraint
  | NotConstraint
  | MessageConstraint;

/** A boolean "this is in the solution", with an identifier unique within one {@link solve} call. */
export interface Variable {
  readonly id: string;
  readonly constraints: readonly Constraint[];
}

/** Builds a {@link Variable}. */
export function variable(id: string, ...constraints: Constraint[]): Variable {
  return { id, constraints };
}

/** `<S> is mandatory`. */
export function mandatory(): MandatoryConstraint {
  return { kind: "mandatory", describe: (s) => `${s} is mandatory` };
}

/** `<S> is prohibited`. */
export function prohibited(): ProhibitedConstraint {
  return { kind: "prohibited", describe: (s) => `${s} is prohibited` };
}

/** `<S> requires at least one of <a>, <b>`; earlier ids have higher preference. */
export function dependency(...ids: string[]): DependencyConstraint {
  return {
    kind: "dependency",
    ids,
    describe: (s) =>
      ids.length === 0
        ? `${s} has a dependency without any candidates to satisfy it`
        : `${s} requires at least one of ${ids.join(", ")}`,
  };
}

/** `<S> conflicts with <id>`. */
export function conflict(id: string): ConflictConstraint {
  return { kind: "conflict", id, describe: (s) => `${s} conflicts with ${id}` };
}

/** `<S> permits at most <n> of <a>, <b>`. A repeated id counts twice. */
export function atMost(n: number, ...ids: string[]): AtMostConstraint {
  if (!Number.isSafeInteger(n)) throw new RangeError(`atMost: n must be an integer, got ${n}`);
  return { kind: "atMost", n, ids, describe: (s) => `${s} permits at most ${n} of ${ids.join(", ")}` };
}

function group(subject: string, cs: readonly Constraint[], word: string, empty: string): string {
  if (cs.length === 0) return `${subject} ${empty}`;
  if (cs.length === 1) return cs[0].describe(subject);
  return cs.map((c) => `(${c.describe(subject)})`).join(` ${word} `);
}

/** All of `constraints` hold. */
export function and(...constraints: Constraint[]): AndConstraint {
  return { kind: "and", constraints, describe: (s) => group(s, constraints, "and", "has no requirement") };
}

/** At least one of `constraints` holds. */
export function or(...constraints: Constraint[]): OrConstraint {
  return { kind: "or", constraints, describe: (s) => group(s, constraints, "or", "has an empty alternative") };
}

/** `constraint` does not hold. */
export function not(constraint: Constraint): NotConstraint {
  return { kind: "not", constraint, describe: (s) => `it is not the case that ${constraint.describe(s)}` };
}

/** `constraint`, explained by `message` (a fixed sentence or one built from the subject). */
export function withMessage(
  constraint: Constraint,
  message: string | ((subject: string) => string),
): MessageConstraint {
  return { kind: "message", constraint, describe: typeof message === "string" ? () => message : message };
}

/** A constraint together with the variable it is applied to. */
export class AppliedConstraint {
  constructor(
    readonly variable: Variable,
    readonly constraint: Constraint,
  ) {}

  /** The constraint's sentence for its variable, e.g. `a requires at least one of x, y`. */
  toString(): string {
    return this.constraint.describe(this.variable.id);
  }
}

/** deppy's NotSatisfiable error text: `constraints not satisfiable:` then one constraint a line. */
export function notSatisfiableMessage(applied: readonly AppliedConstraint[]): string {
  const msg = "constraints not satisfiable";
  return applied.length === 0 ? msg : `${msg}:\n${applied.map(String).join("\n")}`;
}

/** Where the search is when it backtracks (deppy's SearchPosition). */
export interface SearchPosition {
  /** Identifiers of the variables guessed so far, in guess order. */
  readonly assumptions: readonly string[];
  /** Applied constraints involved in the failure (not necessarily minimal). */
  readonly conflicts: readonly AppliedConstraint[];
}

/** deppy's LoggingTracer text for one position. */
export function formatSearchPosition(p: SearchPosition): string {
  let out = "---\nAssumptions:\n";
  for (const a of p.assumptions) out += `- ${a}\n`;
  out += "Conflicts:\n";
  for (const c of p.conflicts) out += `- ${c.toString()}\n`;
  return out;
}

/** Options for {@link solve}. */
export interface SolveOptions {
  /**
   * Called each time the preference search rejects a candidate: when unit propagation refutes it,
   * or when the verification solve finds an earlier pick inconsistent (deppy calls its tracer at
   * each backtrack). `assumptions` ends with the rejected candidate.
   */
  trace?: (position: SearchPosition) => void;
}

/**
 * The outcome of {@link solve}: the selected identifiers (input order), or a minimal unsatisfiable
 * set of applied constraints (input order), or an input error with deppy's message
 * (`duplicate identifier "x" in input`, `1 errors encountered: variable "y" referenced but not provided`).
 */
export type SolveResult =
  | { readonly selected: string[] }
  | { readonly unsat: AppliedConstraint[] }
  | { readonly error: string };

function isAnchor(c: Constraint): boolean {
  switch (c.kind) {
    case "mandatory":
      return true;
    case "message":
      return isAnchor(c.constraint);
    case "and":
      return c.constraints.some(isAnchor);
    default:
      return false;
  }
}

/** Calls `f` for every identifier a constraint references, in encoding order. */
function forEachRef(c: Constraint, f: (id: string) => void): void {
  switch (c.kind) {
    case "dependency":
    case "atMost":
      for (const id of c.ids) f(id);
      return;
    case "conflict":
      f(c.id);
      return;
    case "and":
    case "or":
      for (const x of c.constraints) forEachRef(x, f);
      return;
    case "not":
    case "message":
      forEachRef(c.constraint, f);
      return;
    default:
      return;
  }
}

/** The preference-ordered candidate lists a constraint adds to the search (deppy's Order()). */
function collectOrders(c: Constraint, index: ReadonlyMap<string, number>, out: number[][]): void {
  switch (c.kind) {
    case "dependency":
      if (c.ids.length > 0) out.push(c.ids.map((id) => index.get(id) as number));
      return;
    case "and":
      for (const x of c.constraints) collectOrders(x, index, out);
      return;
    case "message":
      collectOrders(c.constraint, index, out);
      return;
    default:
      return;
  }
}

class Encoder {
  constructor(
    readonly s: Solver,
    readonly index: ReadonlyMap<string, number>,
  ) {}

  lit(id: string): number {
    return (this.index.get(id) as number) + 1; // variable i is solver variable i+1
  }

  /** Adds clauses for `m → c(subject)`. */
  top(c: Constraint, subject: number, m: number): void {
    const s = this.s;
    switch (c.kind) {
      case "mandatory":
        s.addClause([-m, subject]);
        return;
      case "prohibited":
        s.addClause([-m, -subject]);
        return;
      case "dependency":
        s.addClause([-m, -subject, ...c.ids.map((id) => this.lit(id))]);
        return;
      case "conflict":
        s.addClause([-m, -subject, -this.lit(c.id)]);
        return;
      case "atMost":
        if (c.n >= c.ids.length) return;
        if (c.n < 0) {
          s.addClause([-m]);
          return;
        }
        s.addClause([
          -m,
          new Totalizer(
            s,
            c.ids.map((id) => this.lit(id)),
            c.n + 1,
          ).atMost(c.n),
        ]);
        return;
      case "message":
        this.top(c.constraint, subject, m);
        return;
      default:
        s.addClause([-m, this.gate(c, subject)]);
    }
  }

  /** A literal equivalent to `c(subject)`. */
  gate(c: Constraint, subject: number): number {
    const s = this.s;
    switch (c.kind) {
      case "mandatory":
        return subject;
      case "prohibited":
        return -subject;
      case "dependency":
        return this.or([-subject, ...c.ids.map((id) => this.lit(id))]);
      case "conflict":
        return this.or([-subject, -this.lit(c.id)]);
      case "atMost":
        if (c.n >= c.ids.length) return s.trueLit();
        if (c.n < 0) return -s.trueLit();
        return new Totalizer(
          s,
          c.ids.map((id) => this.lit(id)),
          c.n + 1,
          true,
        ).atMost(c.n);
      case "and":
        return -this.or(c.constraints.map((x) => -this.gate(x, subject)));
      case "or":
        return this.or(c.constraints.map((x) => this.gate(x, subject)));
      case "not":
        return -this.gate(c.constraint, subject);
      case "message":
        return this.gate(c.constraint, subject);
    }
  }

  private or(ls: readonly number[]): number {
    if (ls.length === 0) return -this.s.trueLit();
    if (ls.length === 1) return ls[0];
    const g = this.s.newVar();
    this.s.addClause([-g, ...ls]);
    for (const l of ls) this.s.addClause([g, -l]);
    return g;
  }
}

/**
 * Finds the preferred selection satisfying every constraint of `variables` (see the module
 * comment for the exact definition), or explains why there is none. Deterministic: the same
 * input gives the same output.
 */
export function solve(variables: readonly Variable[], options: SolveOptions = {}): SolveResult {
  return solveWith(variables, options, true);
}

/**
 * {@link solve}, with candidate screening by unit propagation switchable off (`screen = false`
 * accepts every candidate optimistically and leaves all rejections to the verification; slower,
 * same answer). Not part of the public API: tests use it to exercise the verification path.
 */
export function solveWith(variables: readonly Variable[], options: SolveOptions, screen: boolean): SolveResult {
  const index = indexVariables(variables);
  if (typeof index === "string") return { error: index };
  const e = encode(variables, index);
  const picked = preferenceSearch(variables, index, e, options, screen);
  if (!(picked instanceof Uint8Array)) return picked;
  const { s, sel } = e;
  const n = variables.length;
  // Phase 2: fewest extras beyond the picks. Selectors and picks are fixed from now on.
  for (const m of sel) s.addClause([m]);
  const extras: number[] = [];
  for (let i = 0; i < n; i++) {
    if (picked[i]) s.addClause([i + 1]);
    else extras.push(i);
  }
  s.assume(extras.map((i) => -(i + 1)));
  if (s.solve() === 1) return { selected: pick(s, variables) };
  const model = lexicographicTieBreak(s, n, extras, fewestExtras(s, n, extras));
  const selected: string[] = [];
  for (let i = 0; i < n; i++) if (model[i]) selected.push(variables[i].id);
  return { selected };
}

/** Each variable's index by identifier, or the error of duplicate or dangling identifiers. */
function indexVariables(variables: readonly Variable[]): Map<string, number> | string {
  const index = new Map<string, number>();
  for (let i = 0; i < variables.length; i++) {
    const id = variables[i].id;
    if (index.has(id)) return `duplicate identifier ${goQuote(id)} in input`;
    index.set(id, i);
  }
  const errors: string[] = [];
  for (const v of variables) {
    for (const c of v.constraints) {
      forEachRef(c, (id) => {
        if (!index.has(id)) errors.push(`variable ${goQuote(id)} referenced but not provided`);
      });
    }
  }
  if (errors.length > 0) return `${errors.length} errors encountered: ${errors.join(", ")}`;
  return index;
}

/** The problem in the solver: variable i is literal i+1; each applied constraint has a selector literal. */
interface Encoded {
  s: Solver;
  applied: AppliedConstraint[];
  /** The selector literal of each applied constraint (assumed true while they are all in force). */
  sel: number[];
  /** The applied constraints a core of selector literals names, in input order. */
  conflictsOf: (core: readonly number[]) => AppliedConstraint[];
}

function encode(variables: readonly Variable[], index: Map<string, number>): Encoded {
  const n = variables.length;
  const s = new Solver();
  for (let i = 0; i < n; i++) s.newVar();
  s.trueLit();
  const enc = new Encoder(s, index);
  const applied: AppliedConstraint[] = [];
  const sel: number[] = [];
  const selOf = new Map<number, number>(); // selector variable → index in applied
  for (let i = 0; i < n; i++) {
    const v = variables[i];
    for (const c of v.constraints) {
      const m = s.newVar();
      selOf.set(m, applied.length);
      applied.push(new AppliedConstraint(v, c));
      sel.push(m);
      enc.top(c, i + 1, m);
    }
  }
  const conflictsOf = (core: readonly number[]): AppliedConstraint[] => {
    const ks: number[] = [];
    for (const l of core) {
      const k = l > 0 ? selOf.get(l) : undefined;
      if (k !== undefined) ks.push(k);
    }
    return ks.sort((a, b) => a - b).map((k) => applied[k]);
  };
  return { s, applied, sel, conflictsOf };
}

/** The search's record of its steps (see {@link preferenceSearch}). */
interface SearchSteps {
  /** The candidate lists, consumed in order; picks append their preference orders. */
  queue: (readonly number[])[];
  /** Per step: the candidate index to start from (after a rejection). */
  start: number[];
  /** Per step: the variable picked (-1: none), its index in the list, the queue's length then. */
  guess: number[];
  cand: number[];
  queueLen: number[];
  /** Per variable: picked (1) or not, and the step at which it was picked. */
  guessed: Uint8Array;
  stepOf: Int32Array;
}

/**
 * Phase 1, the preference search. Steps consume `queue` in order (breadth first); step t picks the
 * first candidate of queue[t] (from start[t]) that is consistent with the constraints and the
 * earlier picks. Candidates are screened by unit propagation only; one full solve at the end
 * verifies the picks, and if they are inconsistent the first bad pick is located with cores,
 * rejected, and the search resumes from that step. Returns the picks, or why nothing satisfies.
 */
function preferenceSearch(
  variables: readonly Variable[],
  index: Map<string, number>,
  e: Encoded,
  options: SolveOptions,
  screen: boolean,
): Uint8Array | SolveResult {
  const { s, sel } = e;
  const n = variables.length;
  const anchors: number[] = [];
  const orders: number[][][] = [];
  for (let i = 0; i < n; i++) {
    const cs = variables[i].constraints;
    if (cs.some(isAnchor)) anchors.push(i);
    const o: number[][] = [];
    for (const c of cs) collectOrders(c, index, o);
    orders.push(o);
  }
  const st: SearchSteps = {
    queue: anchors.map((a) => [a]),
    start: [],
    guess: [],
    cand: [],
    queueLen: [],
    guessed: new Uint8Array(n),
    stepOf: new Int32Array(n),
  };
  const trace = options.trace;
  const position = (upTo: number, extra: number): SearchPosition => {
    const assumptions: string[] = [];
    for (let t = 0; t < upTo; t++) if (st.guess[t] >= 0) assumptions.push(variables[st.guess[t]].id);
    if (extra >= 0) assumptions.push(variables[extra].id);
    return { assumptions, conflicts: e.conflictsOf(s.why()) };
  };
  const unsat = (): SolveResult => {
    while (s.testDepth > 0) s.untest();
    s.assume(sel);
    s.solve();
    return { unsat: minimalCore(s, sel, e.applied, e.conflictsOf) };
  };
  const assumePicksBefore = (bad: number, inclusive = false) => {
    s.assume(sel);
    for (let t = 0; t < bad + (inclusive ? 1 : 0); t++) if (st.guess[t] >= 0) s.assume(st.guess[t] + 1);
  };
  s.assume(sel);
  if (s.test() === -1) return unsat();
  let head = 0;
  for (;;) {
    head = pickCandidates(s, st, orders, head, screen, trace ? (t, z) => trace(position(t, z)) : undefined);
    if (s.solve() === 1) break;
    // The picks are inconsistent. The failed-assumption core names picks; the latest of them
    // bounds the first bad step. Walk down with cores until the prefix before it is consistent.
    const lastPickIn = (core: readonly number[]): number => {
      let last = -1;
      for (const l of core) if (l > 0 && l <= n && st.guessed[l - 1]) last = Math.max(last, st.stepOf[l - 1]);
      return last;
    };
    let bad = lastPickIn(s.why());
    while (s.testDepth > 0) s.untest();
    for (;;) {
      if (bad < 0) return unsat(); // no pick involved: the constraints alone are unsatisfiable
      assumePicksBefore(bad);
      if (s.solve() === 1) break;
      bad = lastPickIn(s.why());
    }
    if (trace) {
      assumePicksBefore(bad, true);
      s.solve();
      trace(position(bad, st.guess[bad]));
    }
    for (let t = bad; t < head; t++) if (st.guess[t] >= 0) st.guessed[st.guess[t]] = 0;
    st.start.length = bad + 1;
    st.start[bad] = st.cand[bad] + 1;
    st.queue.length = st.queueLen[bad];
    head = bad;
    assumePicksBefore(bad);
    s.test();
  }
  while (s.testDepth > 0) s.untest();
  return st.guessed;
}

/** Runs the search's steps from `head` to the end of the queue; returns the new head. */
function pickCandidates(
  s: Solver,
  st: SearchSteps,
  orders: number[][][],
  head: number,
  screen: boolean,
  rejected?: (step: number, candidate: number) => void,
): number {
  while (head < st.queue.length) {
    const t = head++;
    const c = st.queue[t];
    st.queueLen[t] = st.queue.length;
    st.guess[t] = -1;
    st.cand[t] = -1;
    if (c.some((x) => st.guessed[x] === 1)) continue;
    for (let k = st.start[t] ?? 0; k < c.length; k++) {
      const z = c[k];
      s.assume(z + 1);
      if (s.test() === -1 && screen) {
        rejected?.(t, z);
        s.untest();
        continue;
      }
      st.guess[t] = z;
      st.cand[t] = k;
      st.stepOf[z] = t;
      st.guessed[z] = 1;
      for (const list of orders[z]) st.queue.push(list);
      break;
    }
  }
  return head;
}

/**
 * Phase 2, core-guided: the fewest extras any model needs (the last solve, not satisfiable with
 * none, left its core). Relaxes the extras named in cores; raises the bound only when a core names none.
 */
function fewestExtras(s: Solver, n: number, extras: readonly number[]): number {
  const relaxed = new Uint8Array(n);
  let rel: number[] = [];
  let lb = 0;
  let tot: Totalizer | null = null;
  for (;;) {
    let grew = false;
    for (const l of s.why()) {
      if (l < 0 && -l <= n && !relaxed[-l - 1]) {
        relaxed[-l - 1] = 1;
        grew = true;
      }
    }
    if (grew) {
      rel = extras.filter((i) => relaxed[i]);
      tot = null;
    } else lb++;
    if (lb > rel.length) throw new Error("internal error: no model left while minimising extras");
    for (const i of extras) if (!relaxed[i]) s.assume(-(i + 1));
    if (lb === 0) s.assume(rel.map((i) => -(i + 1)));
    else if (lb < rel.length) {
      if (tot === null || tot.bound <= lb) {
        const bound = Math.min(rel.length, Math.max(lb + 1, 2 * (tot?.bound ?? 1)));
        tot = new Totalizer(
          s,
          rel.map((i) => i + 1),
          bound,
        );
      }
      s.assume(tot.atMost(lb));
    }
    if (s.solve() === 1) return lb;
  }
}

/**
 * Phase 3: lexicographic tie-break among the models with `opt` extras (prefer earlier extras
 * selected). Decisions are permanent, so they become unit clauses. Returns the model.
 */
function lexicographicTieBreak(s: Solver, n: number, extras: readonly number[], opt: number): Uint8Array {
  const bound = new Totalizer(
    s,
    extras.map((i) => i + 1),
    opt + 1,
  ).atMost(opt);
  s.addClause([bound]);
  let model = snapshot(s, n);
  let chosen = 0;
  let pos = 0;
  while (pos < extras.length && chosen < opt) {
    const v = extras[pos];
    if (model[v]) {
      s.addClause([v + 1]);
      chosen++;
      pos++;
      continue;
    }
    let end = pos;
    while (end < extras.length && !model[extras[end]]) end++;
    let seg = extras.slice(pos, end);
    let first = -1;
    let firstModel = model;
    while (seg.length > 0) {
      const act = s.newVar();
      s.addClause([-act, ...seg.map((i) => i + 1)]);
      s.assume(act);
      const r = s.solve();
      if (r === 1) firstModel = snapshot(s, n);
      s.addClause([-act]);
      if (r === -1) break;
      const j = seg.findIndex((i) => firstModel[i] === 1);
      first = seg[j];
      seg = seg.slice(0, j);
    }
    const stop = first < 0 ? end : extras.indexOf(first, pos);
    for (let k = pos; k < stop; k++) s.addClause([-(extras[k] + 1)]);
    if (first < 0) {
      pos = end;
    } else {
      s.addClause([first + 1]);
      chosen++;
      model = firstModel;
      pos = stop + 1;
    }
  }
  return model;
}

function snapshot(s: Solver, n: number): Uint8Array {
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) m[i] = s.value(i + 1) ? 1 : 0;
  return m;
}

function pick(s: Solver, variables: readonly Variable[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < variables.length; i++) if (s.value(i + 1)) out.push(variables[i].id);
  return out;
}

/**
 * Deletion-based shrinking of the failed-assumption core of the solve that just failed under the
 * selectors, until every member is necessary.
 */
function minimalCore(
  s: Solver,
  sel: readonly number[],
  applied: readonly AppliedConstraint[],
  conflictsOf: (core: readonly number[]) => AppliedConstraint[],
): AppliedConstraint[] {
  const pos = new Map<AppliedConstraint, number>();
  applied.forEach((a, k) => pos.set(a, k));
  const toKeys = (core: readonly number[]) => conflictsOf(core).map((a) => pos.get(a) as number);
  let core = toKeys(s.why());
  let i = 0;
  while (i < core.length) {
    const cand = core.filter((_, k) => k !== i);
    s.assume(cand.map((k) => sel[k]));
    if (s.solve() === -1) core = toKeys(s.why());
    else i++;
  }
  return core.map((k) => applied[k]);
}
