import type { Solver } from "./solver.js";

/**
 * A totalizer (Bailleux & Boufkhad) over some literals: output `k` is implied true when at least
 * `k` inputs are true. Built with a `bound`, it keeps only outputs 1..bound (O(n·bound) clauses),
 * which is all that "at most bound-1" needs. With `exact`, the converse clauses are added too, so
 * output `k` is *equivalent* to "at least k inputs are true" and {@link atMost}/{@link atLeast}
 * literals may be used under negation.
 */
export class Totalizer {
  /** The counted literals (duplicates count twice). */
  readonly inputs: readonly number[];
  /** Number of outputs kept. */
  readonly bound: number;
  /** Whether outputs are equivalences rather than implications. */
  readonly exact: boolean;
  private readonly outputs: number[];
  private readonly solver: Solver;

  constructor(solver: Solver, inputs: readonly number[], bound: number, exact = false) {
    this.solver = solver;
    solver.trueLit(); // created now: atMost/atLeast may be called inside test scopes
    this.inputs = inputs.slice();
    this.exact = exact;
    this.bound = Math.max(0, Math.min(bound, inputs.length));
    this.outputs = this.bound === 0 ? [] : this.build(0, inputs.length);
  }

  /**
   * A literal that, assumed or asserted true, enforces "at most k inputs are true" (and, with
   * `exact`, is equivalent to it). Needs k < bound unless k >= the number of inputs.
   */
  atMost(k: number): number {
    const t = this.solver.trueLit();
    if (k >= this.inputs.length) return t;
    if (k < 0) return -t;
    if (k >= this.bound) throw new RangeError(`atMost(${k}) needs a totalizer bound above ${k}, have ${this.bound}`);
    return -this.outputs[k];
  }

  /** A literal implied by "at least k inputs are true" (equivalent to it with `exact`). Needs k <= bound. */
  atLeast(k: number): number {
    const t = this.solver.trueLit();
    if (k <= 0) return t;
    if (k > this.inputs.length) return -t;
    if (k > this.bound)
      throw new RangeError(`atLeast(${k}) needs a totalizer bound of at least ${k}, have ${this.bound}`);
    return this.outputs[k - 1];
  }

  private build(lo: number, hi: number): number[] {
    if (hi - lo === 1) return [this.inputs[lo]];
    const mid = (lo + hi) >> 1;
    const a = this.build(lo, mid);
    const b = this.build(mid, hi);
    const p = Math.min(hi - lo, this.bound);
    const s = this.solver;
    const r: number[] = [];
    for (let i = 0; i < p; i++) r.push(s.newVar());
    const cl: number[] = [];
    // Upward: a_i ∧ b_j → r_{i+j}.
    for (let i = 0; i <= a.length; i++) {
      for (let j = 0; j <= b.length; j++) {
        const sum = i + j;
        if (sum === 0 || sum > p) continue;
        cl.length = 0;
        if (i > 0) cl.push(-a[i - 1]);
        if (j > 0) cl.push(-b[j - 1]);
        cl.push(r[sum - 1]);
        s.addClause(cl);
      }
    }
    if (this.exact) {
      // Downward: ¬a_{i+1} ∧ ¬b_{j+1} → ¬r_{i+j+1} (a missing a_{i+1} past the child's size is false).
      for (let i = 0; i <= a.length; i++) {
        for (let j = 0; j <= b.length; j++) {
          const sum = i + j + 1;
          if (sum > p) continue;
          cl.length = 0;
          if (i < a.length) cl.push(a[i]);
          if (j < b.length) cl.push(b[j]);
          cl.push(-r[sum - 1]);
          s.addClause(cl);
        }
      }
    }
    return r;
  }
}
