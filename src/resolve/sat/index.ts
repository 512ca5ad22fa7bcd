/**
 * SAT core of the dependency resolver: an incremental CDCL solver with assumptions, failed-
 * assumption cores and scoped propagation tests, a totalizer cardinality encoder, and a deppy-like
 * constraint layer that finds the preferred solution or a minimal explanation of failure.
 */
export { Solver, SAT, UNSAT, UNKNOWN, type Outcome, type SolverStats } from "./solver.js";
export { Totalizer } from "./card.js";
export {
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
  variable,
  withMessage,
  type AndConstraint,
  type AtMostConstraint,
  type ConflictConstraint,
  type Constraint,
  type DependencyConstraint,
  type MandatoryConstraint,
  type MessageConstraint,
  type NotConstraint,
  type OrConstraint,
  type ProhibitedConstraint,
  type SearchPosition,
  type SolveOptions,
  type SolveResult,
  type Variable,
} from "./deppy.js";
