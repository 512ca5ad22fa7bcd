/**
 * A small incremental CDCL SAT solver (MiniSat lineage) with the interface deppy needs from gini:
 * clauses added between solves, assumptions with a failed-assumption core (`why`), and scoped
 * propagation-only tests (`test`/`untest`).
 *
 * Literals are DIMACS-style integers: variable `v` (1-based, from {@link Solver.newVar}) is the
 * positive literal `v`, its negation `-v`. Internally a literal is `2v` (positive) or `2v+1`
 * (negative). The search is deterministic: there is no randomness, heap ties go to the lower
 * variable, and the same sequence of calls gives the same answers.
 *
 * Engine: two watched literals with blocking literals, first-UIP learning with recursive clause
 * minimisation, VSIDS with phase saving (initial phase: false), Luby restarts (unit 100 conflicts)
 * that keep the assumption levels, and LBD/activity-based learnt clause reduction.
 */

/** Outcome of {@link Solver.solve} / {@link Solver.test}: 1 satisfiable, -1 unsatisfiable, 0 unknown. */
export type Outcome = 1 | 0 | -1;

/** Satisfiable. */
export const SAT = 1 as const;
/** Unsatisfiable. */
export const UNSAT = -1 as const;
/** Not decided (only {@link Solver.test} returns it: propagation left variables unassigned). */
export const UNKNOWN = 0 as const;

// Clause layout in the arena: [size, flags, activity(f32 bits), lit0, lit1, ...].
const HDR = 3;
const F_LEARNT = 1;
const F_DELETED = 2;
const LBD_SHIFT = 2;

interface Scope {
  /** Decision level before this scope's first assumption. */
  level: number;
  /** Length of the scope assumption list before this scope. */
  start: number;
  /** Outcome of the propagation when the scope was pushed. */
  result: Outcome;
  /** Pushed while an enclosing scope was already in conflict: nothing to undo. */
  dummy: boolean;
}

function luby(y: number, x: number): number {
  let size = 1;
  let seq = 0;
  while (size < x + 1) {
    seq++;
    size = 2 * size + 1;
  }
  while (size - 1 !== x) {
    size = (size - 1) >> 1;
    seq--;
    x = x % size;
  }
  return Math.pow(y, seq);
}

/** Counters, for benchmarks and curiosity. */
export interface SolverStats {
  conflicts: number;
  decisions: number;
  propagations: number;
  solves: number;
}

/** An incremental CDCL SAT solver. See the module comment for the literal convention. */
export class Solver {
  private nVars = 0;
  private cap = 0;
  // Per literal (index 2v / 2v+1): 1 true, -1 false, 0 unassigned.
  private val = new Int8Array(0);
  // Per variable.
  private level = new Int32Array(0);
  private reason = new Int32Array(0);
  private activity = new Float64Array(0);
  private phase = new Uint8Array(0);
  private seen = new Uint8Array(0);
  private heap = new Int32Array(0);
  private heapIdx = new Int32Array(0);
  private heapLen = 0;
  private trail = new Int32Array(0);
  private trailLen = 0;
  private qhead = 0;
  private trailLim: number[] = [];
  private levelStamp = new Int32Array(0);
  private stampCounter = 0;
  private watches: number[][] = [[], []]; // indexed by internal literal; variable 0 is unused

  private mem = new Int32Array(1024);
  private memF = new Float32Array(this.mem.buffer);
  private memLen = 0;
  private wasted = 0;
  private clauses: number[] = [];
  private learnts: number[] = [];

  private varInc = 1;
  private claInc = 1;
  private ok = true;
  private nextReduce = 2000;
  private nReduces = 0;

  private pending: number[] = [];
  private scopeAssumps: number[] = [];
  private scopes: Scope[] = [];
  /** Index of the lowest scope whose propagation failed, or -1. */
  private conflictScope = -1;
  private model = new Int8Array(0);
  private core: number[] = [];
  private trueVar = 0;
  private analyzeStack: number[] = [];
  private toClear: number[] = [];

  /** Search counters. */
  readonly stats: SolverStats = { conflicts: 0, decisions: 0, propagations: 0, solves: 0 };

  /** Number of variables created so far. */
  get numVars(): number {
    return this.nVars;
  }

  /** Number of problem (non-learnt) clauses stored; units and satisfied clauses are not stored. */
  get numClauses(): number {
    return this.clauses.length;
  }

  /** Number of open {@link test} scopes. */
  get testDepth(): number {
    return this.scopes.length;
  }

  /** Creates a fresh variable and returns its (positive) literal. */
  newVar(): number {
    const v = ++this.nVars;
    if (v >= this.cap) this.grow(Math.max(16, this.cap * 2, v + 1));
    this.reason[v] = -1;
    this.level[v] = 0;
    this.phase[v] = 1;
    this.heapIdx[v] = -1;
    this.watches.push([], []);
    this.heapInsert(v);
    return v;
  }

  /** A literal that is true in every model (one shared variable, created on first use). */
  trueLit(): number {
    if (this.trueVar === 0) {
      this.trueVar = this.newVar();
      this.addClause([this.trueVar]);
    }
    return this.trueVar;
  }

  private grow(n: number): void {
    const g8 = (a: Int8Array, len: number) => {
      const b = new Int8Array(len);
      b.set(a);
      return b;
    };
    const gu8 = (a: Uint8Array) => {
      const b = new Uint8Array(n);
      b.set(a);
      return b;
    };
    const g32 = (a: Int32Array, len: number) => {
      const b = new Int32Array(len);
      b.set(a);
      return b;
    };
    this.val = g8(this.val, 2 * n);
    this.level = g32(this.level, n);
    this.reason = g32(this.reason, n);
    const act = new Float64Array(n);
    act.set(this.activity);
    this.activity = act;
    this.phase = gu8(this.phase);
    this.seen = gu8(this.seen);
    this.heap = g32(this.heap, n);
    this.heapIdx = g32(this.heapIdx, n);
    this.trail = g32(this.trail, n);
    this.levelStamp = g32(this.levelStamp, Math.max(n + 1, this.levelStamp.length));
    this.cap = n;
  }

  private toInternal(l: number): number {
    const v = l < 0 ? -l : l;
    if (!Number.isInteger(l) || v === 0 || v > this.nVars) throw new RangeError(`invalid literal ${l}`);
    return l < 0 ? 2 * v + 1 : 2 * v;
  }

  /**
   * Adds a clause (a disjunction of literals). Only allowed outside {@link test} scopes.
   * Returns false once the clause set is known to be unsatisfiable without assumptions.
   */
  addClause(lits: readonly number[]): boolean {
    if (this.scopes.length > 0) throw new Error("addClause: not allowed inside a test scope");
    const ps: number[] = [];
    for (const l of lits) ps.push(this.toInternal(l));
    if (!this.ok) return false;
    this.cancelUntil(0);
    sortInts(ps);
    let j = 0;
    let prev = -1;
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i];
      const v = this.val[p];
      if (v === 1 || p === (prev ^ 1)) return true; // satisfied or tautology
      if (v === -1 || p === prev) continue;
      ps[j++] = p;
      prev = p;
    }
    ps.length = j;
    if (j === 0) {
      this.ok = false;
      return false;
    }
    if (j === 1) {
      this.enqueue(ps[0], -1);
      if (this.propagate() !== -1) this.ok = false;
      return this.ok;
    }
    const cr = this.alloc(ps, false);
    this.clauses.push(cr);
    this.attach(cr);
    return true;
  }

  /** Adds assumptions for the next {@link solve} or {@link test} call. */
  assume(lits: number | readonly number[]): void {
    if (typeof lits === "number") this.pending.push(this.toInternal(lits));
    else for (const l of lits) this.pending.push(this.toInternal(l));
  }

  /**
   * Decides satisfiability under the open test scopes' assumptions and the pending assumptions
   * (which are then cleared). After SAT, {@link value} reads the model; after UNSAT, {@link why}
   * lists the failed assumptions.
   */
  solve(): 1 | -1 {
    this.stats.solves++;
    const pending = this.pending;
    this.pending = [];
    this.core = [];
    if (!this.ok) return -1;
    if (this.conflictScope >= 0) {
      this.core = this.scopeCore;
      return -1;
    }
    const assumps = this.scopeAssumps.length === 0 ? pending : this.scopeAssumps.concat(pending);
    const k = this.scopeAssumps.length;
    let curr = 0;
    let result: 1 | -1 | 0 = 0;
    while (result === 0) {
      const nof = luby(2, curr++) * 100;
      result = this.search(nof, assumps);
    }
    if (result === 1) this.saveModel();
    if (this.decisionLevel() > k) this.cancelUntil(k);
    if (this.decisionLevel() < k || !this.ok) this.rebuildScopes();
    return result;
  }

  /**
   * Pushes a new scope holding the pending assumptions and runs unit propagation only.
   * Returns -1 on a conflict (then {@link why} names the assumptions involved), 1 when every
   * variable is assigned without conflict (the assignment is a model), otherwise 0.
   */
  test(): Outcome {
    const pending = this.pending;
    this.pending = [];
    const scope: Scope = { level: this.decisionLevel(), start: this.scopeAssumps.length, result: 0, dummy: false };
    this.scopes.push(scope);
    if (!this.ok || this.conflictScope >= 0) {
      scope.dummy = this.conflictScope >= 0 || !this.ok;
      scope.result = -1;
      for (const p of pending) this.scopeAssumps.push(p);
      if (this.conflictScope < 0) this.conflictScope = this.scopes.length - 1;
      this.core = this.ok ? this.scopeCore : [];
      return -1;
    }
    this.core = [];
    const r = this.pushAssumptions(pending, 0);
    scope.result = r;
    if (r === -1) this.conflictScope = this.scopes.length - 1;
    else if (r === 1) this.saveModel();
    return r;
  }

  /** Pops the innermost {@link test} scope; returns the outcome recorded for the scope now on top. */
  untest(): Outcome {
    const scope = this.scopes.pop();
    if (scope === undefined) throw new Error("untest: no test scope");
    if (!scope.dummy) this.cancelUntil(scope.level);
    this.scopeAssumps.length = scope.start;
    if (this.conflictScope >= this.scopes.length) this.conflictScope = -1;
    this.pending = [];
    if (!this.ok) return -1;
    if (this.scopes.length === 0) return 0;
    const top = this.scopes[this.scopes.length - 1];
    if (top.result === -1) return -1;
    return this.trailLen === this.nVars ? 1 : 0;
  }

  /** Value of a literal in the last model (after SAT from {@link solve}, or 1 from {@link test}). */
  value(lit: number): boolean {
    const v = lit < 0 ? -lit : lit;
    const b = v < this.model.length && this.model[v] === 1;
    return lit < 0 ? !b : b;
  }

  /** After an unsatisfiable {@link solve} or {@link test}: the assumptions that were involved. */
  why(): number[] {
    return this.core.map((p) => (p & 1 ? -(p >> 1) : p >> 1));
  }

  // ---------------------------------------------------------------- scopes

  private scopeCore: number[] = [];

  /** Decides each assumption on its own level, propagating after each. */
  private pushAssumptions(lits: readonly number[], from: number): Outcome {
    for (let i = from; i < lits.length; i++) {
      const p = lits[i];
      this.scopeAssumps.push(p);
      this.newDecisionLevel();
      const v = this.val[p];
      if (v === 1) continue;
      if (v === -1) {
        for (let k = i + 1; k < lits.length; k++) this.scopeAssumps.push(lits[k]);
        this.core = this.scopeCore = this.analyzeFinal(p);
        return -1;
      }
      this.enqueue(p, -1);
      const confl = this.propagate();
      if (confl !== -1) {
        for (let k = i + 1; k < lits.length; k++) this.scopeAssumps.push(lits[k]);
        this.core = this.scopeCore = this.conflictCore(confl);
        return -1;
      }
    }
    return this.trailLen === this.nVars ? 1 : 0;
  }

  /** Re-establishes the scope levels after a solve backtracked below them. */
  private rebuildScopes(): void {
    const all = this.scopeAssumps;
    this.cancelUntil(0);
    this.scopeAssumps = [];
    const saved = this.core;
    for (let s = 0; s < this.scopes.length; s++) {
      const sc = this.scopes[s];
      const end = s + 1 < this.scopes.length ? this.scopes[s + 1].start : all.length;
      sc.level = this.decisionLevel();
      if (!this.ok) {
        sc.result = -1;
        sc.dummy = s > 0;
        if (this.conflictScope < 0) this.conflictScope = s;
        for (let i = sc.start; i < end; i++) this.scopeAssumps.push(all[i]);
        continue;
      }
      if (this.conflictScope >= 0) {
        sc.result = -1;
        sc.dummy = true;
        for (let i = sc.start; i < end; i++) this.scopeAssumps.push(all[i]);
        continue;
      }
      const r = this.pushAssumptions(all.slice(sc.start, end), 0);
      if (r === -1) {
        sc.result = -1;
        this.conflictScope = s;
      }
    }
    this.core = saved;
  }

  // ---------------------------------------------------------------- clause arena

  private alloc(lits: readonly number[], learnt: boolean): number {
    const need = HDR + lits.length;
    if (this.memLen + need > this.mem.length) {
      let n = this.mem.length * 2;
      while (this.memLen + need > n) n *= 2;
      const m = new Int32Array(n);
      m.set(this.mem.subarray(0, this.memLen));
      this.mem = m;
      this.memF = new Float32Array(m.buffer);
    }
    const cr = this.memLen;
    this.mem[cr] = lits.length;
    this.mem[cr + 1] = learnt ? F_LEARNT : 0;
    this.memF[cr + 2] = 0;
    for (let i = 0; i < lits.length; i++) this.mem[cr + HDR + i] = lits[i];
    this.memLen += need;
    return cr;
  }

  private attach(cr: number): void {
    const c0 = this.mem[cr + HDR];
    const c1 = this.mem[cr + HDR + 1];
    this.watches[c0].push(cr, c1);
    this.watches[c1].push(cr, c0);
  }

  // ---------------------------------------------------------------- assignment

  private decisionLevel(): number {
    return this.trailLim.length;
  }

  private newDecisionLevel(): void {
    this.trailLim.push(this.trailLen);
  }

  private enqueue(p: number, from: number): void {
    const v = p >> 1;
    this.val[p] = 1;
    this.val[p ^ 1] = -1;
    this.level[v] = this.trailLim.length;
    this.reason[v] = from;
    this.trail[this.trailLen++] = p;
  }

  private cancelUntil(lvl: number): void {
    if (this.trailLim.length <= lvl) return;
    const stop = this.trailLim[lvl];
    for (let i = this.trailLen - 1; i >= stop; i--) {
      const p = this.trail[i];
      const v = p >> 1;
      this.val[p] = 0;
      this.val[p ^ 1] = 0;
      this.reason[v] = -1;
      this.phase[v] = p & 1;
      if (this.heapIdx[v] < 0) this.heapInsert(v);
    }
    this.trailLen = stop;
    this.qhead = stop;
    this.trailLim.length = lvl;
  }

  /** Unit propagation; returns a conflicting clause reference or -1. */
  private propagate(): number {
    const mem = this.mem;
    const val = this.val;
    const watches = this.watches;
    let confl = -1;
    let props = 0;
    while (this.qhead < this.trailLen) {
      const p = this.trail[this.qhead++];
      const falseLit = p ^ 1;
      const ws = watches[falseLit];
      const n = ws.length;
      let i = 0;
      let j = 0;
      props++;
      while (i < n) {
        const cr = ws[i];
        const blocker = ws[i + 1];
        i += 2;
        if (val[blocker] === 1) {
          ws[j++] = cr;
          ws[j++] = blocker;
          continue;
        }
        const base = cr + HDR;
        if (mem[base] === falseLit) {
          mem[base] = mem[base + 1];
          mem[base + 1] = falseLit;
        }
        const first = mem[base];
        if (first !== blocker && val[first] === 1) {
          ws[j++] = cr;
          ws[j++] = first;
          continue;
        }
        const size = mem[cr];
        let moved = false;
        for (let k = 2; k < size; k++) {
          const l = mem[base + k];
          if (val[l] !== -1) {
            mem[base + 1] = l;
            mem[base + k] = falseLit;
            watches[l].push(cr, first);
            moved = true;
            break;
          }
        }
        if (moved) continue;
        ws[j++] = cr;
        ws[j++] = first;
        if (val[first] === -1) {
          confl = cr;
          while (i < n) ws[j++] = ws[i++];
          this.qhead = this.trailLen;
        } else {
          this.enqueue(first, cr);
        }
      }
      ws.length = j;
      if (confl !== -1) break;
    }
    this.stats.propagations += props;
    return confl;
  }

  // ---------------------------------------------------------------- VSIDS heap

  private heapLess(a: number, b: number): boolean {
    const x = this.activity[a];
    const y = this.activity[b];
    return x > y || (x === y && a < b);
  }

  private heapUp(i: number): void {
    const heap = this.heap;
    const v = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pv = heap[parent];
      if (!this.heapLess(v, pv)) break;
      heap[i] = pv;
      this.heapIdx[pv] = i;
      i = parent;
    }
    heap[i] = v;
    this.heapIdx[v] = i;
  }

  private heapDown(i: number): void {
    const heap = this.heap;
    const v = heap[i];
    const n = this.heapLen;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.heapLess(heap[child + 1], heap[child])) child++;
      const cv = heap[child];
      if (!this.heapLess(cv, v)) break;
      heap[i] = cv;
      this.heapIdx[cv] = i;
      i = child;
    }
    heap[i] = v;
    this.heapIdx[v] = i;
  }

  private heapInsert(v: number): void {
    const i = this.heapLen++;
    this.heap[i] = v;
    this.heapIdx[v] = i;
    this.heapUp(i);
  }

  private heapPop(): number {
    const v = this.heap[0];
    this.heapIdx[v] = -1;
    const last = this.heap[--this.heapLen];
    if (this.heapLen > 0) {
      this.heap[0] = last;
      this.heapIdx[last] = 0;
      this.heapDown(0);
    }
    return v;
  }

  private bumpVar(v: number): void {
    if ((this.activity[v] += this.varInc) > 1e100) {
      for (let i = 1; i <= this.nVars; i++) this.activity[i] *= 1e-100;
      this.varInc *= 1e-100;
    }
    const i = this.heapIdx[v];
    if (i >= 0) this.heapUp(i);
  }

  private bumpClause(cr: number): void {
    if ((this.memF[cr + 2] += this.claInc) > 1e20) {
      for (const c of this.learnts) this.memF[c + 2] *= 1e-20;
      this.claInc *= 1e-20;
    }
  }

  // ---------------------------------------------------------------- conflict analysis

  private abstractLevel(v: number): number {
    return 1 << (this.level[v] & 31);
  }

  /** First-UIP analysis; fills `out` (asserting literal first) and returns the backjump level. */
  private analyze(confl: number, out: number[]): number {
    const mem = this.mem;
    const seen = this.seen;
    const dl = this.decisionLevel();
    let pathC = 0;
    let p = -1;
    let index = this.trailLen - 1;
    out.length = 0;
    out.push(0);
    do {
      if (mem[confl + 1] & F_LEARNT) this.bumpClause(confl);
      const size = mem[confl];
      for (let k = p === -1 ? 0 : 1; k < size; k++) {
        const q = mem[confl + HDR + k];
        const v = q >> 1;
        if (!seen[v] && this.level[v] > 0) {
          this.bumpVar(v);
          seen[v] = 1;
          if (this.level[v] >= dl) pathC++;
          else out.push(q);
        }
      }
      while (!seen[this.trail[index] >> 1]) index--;
      p = this.trail[index--];
      confl = this.reason[p >> 1];
      seen[p >> 1] = 0;
      pathC--;
    } while (pathC > 0);
    out[0] = p ^ 1;

    // Recursive minimisation.
    const toClear = this.toClear;
    toClear.length = 0;
    for (let i = 1; i < out.length; i++) toClear.push(out[i]);
    let abs = 0;
    for (let i = 1; i < out.length; i++) abs |= this.abstractLevel(out[i] >> 1);
    let j = 1;
    for (let i = 1; i < out.length; i++) {
      const v = out[i] >> 1;
      if (this.reason[v] === -1 || !this.litRedundant(out[i], abs)) out[j++] = out[i];
    }
    out.length = j;
    for (const l of toClear) seen[l >> 1] = 0;

    if (out.length === 1) return 0;
    let maxI = 1;
    for (let i = 2; i < out.length; i++) if (this.level[out[i] >> 1] > this.level[out[maxI] >> 1]) maxI = i;
    const t = out[maxI];
    out[maxI] = out[1];
    out[1] = t;
    return this.level[t >> 1];
  }

  private litRedundant(p: number, abs: number): boolean {
    const mem = this.mem;
    const seen = this.seen;
    const stack = this.analyzeStack;
    const toClear = this.toClear;
    stack.length = 0;
    stack.push(p);
    const top = toClear.length;
    while (stack.length > 0) {
      const q = stack.pop() as number;
      const cr = this.reason[q >> 1];
      const size = mem[cr];
      for (let k = 1; k < size; k++) {
        const l = mem[cr + HDR + k];
        const v = l >> 1;
        if (!seen[v] && this.level[v] > 0) {
          if (this.reason[v] !== -1 && (this.abstractLevel(v) & abs) !== 0) {
            seen[v] = 1;
            stack.push(l);
            toClear.push(l);
          } else {
            for (let i = top; i < toClear.length; i++) seen[toClear[i] >> 1] = 0;
            toClear.length = top;
            return false;
          }
        }
      }
    }
    return true;
  }

  private computeLbd(lits: readonly number[]): number {
    const stamp = ++this.stampCounter;
    let n = 0;
    for (const l of lits) {
      const lv = this.level[l >> 1];
      if (lv >= this.levelStamp.length) {
        const b = new Int32Array(Math.max(lv + 1, this.levelStamp.length * 2));
        b.set(this.levelStamp);
        this.levelStamp = b;
      }
      if (this.levelStamp[lv] !== stamp) {
        this.levelStamp[lv] = stamp;
        n++;
      }
    }
    return n;
  }

  /** Assumptions responsible for assumption `p` being false (p included). */
  private analyzeFinal(p: number): number[] {
    const out = [p];
    if (this.decisionLevel() === 0 || this.level[p >> 1] === 0) return out;
    this.seen[p >> 1] = 1;
    this.collectDecisions(out);
    return out;
  }

  /** Assumptions responsible for a propagation conflict on clause `cr`. */
  private conflictCore(cr: number): number[] {
    const out: number[] = [];
    const size = this.mem[cr];
    for (let k = 0; k < size; k++) {
      const v = this.mem[cr + HDR + k] >> 1;
      if (this.level[v] > 0) this.seen[v] = 1;
    }
    this.collectDecisions(out);
    return out;
  }

  private collectDecisions(out: number[]): void {
    const seen = this.seen;
    const stop = this.trailLim.length > 0 ? this.trailLim[0] : this.trailLen;
    for (let i = this.trailLen - 1; i >= stop; i--) {
      const q = this.trail[i];
      const x = q >> 1;
      if (!seen[x]) continue;
      const cr = this.reason[x];
      if (cr === -1) {
        out.push(q);
      } else {
        const size = this.mem[cr];
        for (let k = 1; k < size; k++) {
          const v = this.mem[cr + HDR + k] >> 1;
          if (this.level[v] > 0) seen[v] = 1;
        }
      }
      seen[x] = 0;
    }
    for (let i = 0; i < out.length; i++) seen[out[i] >> 1] = 0;
  }

  // ---------------------------------------------------------------- search

  private pickBranch(): number {
    while (this.heapLen > 0) {
      const v = this.heapPop();
      if (this.val[2 * v] === 0) return 2 * v + this.phase[v];
    }
    return -1;
  }

  private search(nofConflicts: number, assumps: readonly number[]): 1 | -1 | 0 {
    let conflictC = 0;
    const learnt: number[] = [];
    for (;;) {
      const confl = this.propagate();
      if (confl !== -1) {
        this.stats.conflicts++;
        conflictC++;
        if (this.decisionLevel() === 0) {
          this.ok = false;
          this.core = [];
          return -1;
        }
        const bt = this.analyze(confl, learnt);
        this.cancelUntil(bt);
        if (learnt.length === 1) {
          this.enqueue(learnt[0], -1);
        } else {
          const cr = this.alloc(learnt, true);
          this.mem[cr + 1] |= this.computeLbd(learnt) << LBD_SHIFT;
          this.learnts.push(cr);
          this.attach(cr);
          this.bumpClause(cr);
          this.enqueue(learnt[0], cr);
        }
        this.varInc *= 1 / 0.95;
        this.claInc *= 1 / 0.999;
        continue;
      }
      if (conflictC >= nofConflicts) {
        this.cancelUntil(Math.min(this.decisionLevel(), assumps.length));
        return 0;
      }
      if (this.stats.conflicts >= this.nextReduce) {
        this.nReduces++;
        this.nextReduce = this.stats.conflicts + 2000 + 300 * this.nReduces;
        this.reduceDb();
      }
      let next = -1;
      while (this.decisionLevel() < assumps.length) {
        const p = assumps[this.decisionLevel()];
        const v = this.val[p];
        if (v === 1) {
          this.newDecisionLevel();
        } else if (v === -1) {
          this.core = this.analyzeFinal(p);
          return -1;
        } else {
          next = p;
          break;
        }
      }
      if (next === -1) {
        next = this.pickBranch();
        if (next === -1) return 1;
        this.stats.decisions++;
      }
      this.newDecisionLevel();
      this.enqueue(next, -1);
    }
  }

  private locked(cr: number): boolean {
    const c0 = this.mem[cr + HDR];
    return this.val[c0] === 1 && this.reason[c0 >> 1] === cr;
  }

  private reduceDb(): void {
    const mem = this.mem;
    const memF = this.memF;
    const cand: number[] = [];
    const keep: number[] = [];
    for (const cr of this.learnts) {
      const lbd = mem[cr + 1] >> LBD_SHIFT;
      if (mem[cr] <= 2 || lbd <= 2 || this.locked(cr)) keep.push(cr);
      else cand.push(cr);
    }
    cand.sort((a, b) => {
      const la = mem[a + 1] >> LBD_SHIFT;
      const lb = mem[b + 1] >> LBD_SHIFT;
      if (la !== lb) return lb - la;
      const d = memF[a + 2] - memF[b + 2];
      return d !== 0 ? d : a - b;
    });
    const del = cand.length >> 1;
    for (let i = 0; i < del; i++) {
      const cr = cand[i];
      mem[cr + 1] |= F_DELETED;
      this.wasted += HDR + mem[cr];
    }
    for (let i = del; i < cand.length; i++) keep.push(cand[i]);
    keep.sort((a, b) => a - b);
    this.learnts = keep;
    for (const ws of this.watches) {
      let j = 0;
      for (let i = 0; i < ws.length; i += 2) {
        if (mem[ws[i] + 1] & F_DELETED) continue;
        ws[j++] = ws[i];
        ws[j++] = ws[i + 1];
      }
      ws.length = j;
    }
    if (this.wasted * 2 > this.memLen) this.compact();
  }

  /** Moves live clauses to a fresh arena, remapping reasons and watches. */
  private compact(): void {
    const old = this.mem;
    const oldF = this.memF;
    const m = new Int32Array(Math.max(1024, this.memLen - this.wasted + 1024));
    const mf = new Float32Array(m.buffer);
    const map = new Map<number, number>();
    let len = 0;
    const move = (cr: number): number => {
      const n = HDR + old[cr];
      m.set(old.subarray(cr, cr + n), len);
      mf[len + 2] = oldF[cr + 2];
      map.set(cr, len);
      const r = len;
      len += n;
      return r;
    };
    // Keep allocation order so the search is independent of when compaction happens.
    const live = this.clauses.concat(this.learnts).sort((a, b) => a - b);
    for (const cr of live) move(cr);
    this.clauses = this.clauses.map((c) => map.get(c) as number);
    this.learnts = this.learnts.map((c) => map.get(c) as number);
    for (let i = 0; i < this.trailLen; i++) {
      const v = this.trail[i] >> 1;
      const r = this.reason[v];
      if (r !== -1) this.reason[v] = map.get(r) as number;
    }
    for (const ws of this.watches) {
      for (let i = 0; i < ws.length; i += 2) ws[i] = map.get(ws[i]) as number;
    }
    this.mem = m;
    this.memF = mf;
    this.memLen = len;
    this.wasted = 0;
  }

  private saveModel(): void {
    const m = this.model.length > this.nVars ? this.model : new Int8Array(this.cap);
    for (let v = 1; v <= this.nVars; v++) m[v] = this.val[2 * v];
    this.model = m;
  }
}

/** Ascending numeric sort; short arrays (nearly all clauses) by insertion, without allocating. */
function sortInts(a: number[]): void {
  if (a.length > 24) {
    a.sort((x, y) => x - y);
    return;
  }
  for (let i = 1; i < a.length; i++) {
    const x = a[i];
    let j = i - 1;
    while (j >= 0 && a[j] > x) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
}
