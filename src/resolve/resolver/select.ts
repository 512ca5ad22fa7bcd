/**
 * Solving a group and recording what it selected ({@link Selection}: the chosen bundles and entries,
 * each unit's choice, dependency edges, entry uses), or its failure on the group's Inputs.
 */
import type { JsonValue } from "../../fbc/types.js";
import { formatSearchPosition, solve, type Variable } from "../sat/index.js";
import type { Entity } from "../catalog.js";
import { SCHEMA_OPERAND, type OperandEntry } from "../operands.js";
import type { Predicate } from "../predicates.js";
import { explainUnsat, listText } from "../explain.js";
import type { Condition, InputStatus, InstanceReference, InstanceStatus } from "./types.js";
import type { Candidates, Group } from "./candidates.js";
import { viaId, type Unit } from "./units.js";

/** A dependency edge between two selected bundles, and the constraint it meets. */
export interface Edge {
  from: Entity;
  to: Entity;
  meets: JsonValue;
}

/** Operands (docs/operands.md): an entry required by a bundle or requested by a unit (through its bundle). */
export interface EntryUse {
  entry: OperandEntry;
  by?: Entity;
  unit?: Unit;
  meets: JsonValue;
}

/** What the solved groups selected, accumulated group by group. */
export interface Selection {
  /** Selected bundle → the units of its group. */
  selected: Map<Entity, Unit[]>;
  selectedEntries: Map<OperandEntry, Unit[]>;
  edges: Edge[];
  entryUses: EntryUse[];
  /** The bundle chosen for each unit. */
  chosenBy: Map<Unit, Entity>;
}

export function emptySelection(): Selection {
  return { selected: new Map(), selectedEntries: new Map(), edges: [], entryUses: [], chosenBy: new Map() };
}

/**
 * Solves one group (appending to `trace` when given) and records the outcome: the selection, or
 * a ResolutionFailed condition (with missing dependencies of the first candidate) on its Inputs.
 */
export function solveGroup(
  group: Group,
  vars: Variable[],
  trace: string[] | undefined,
  candidates: Candidates,
  statusOf: Map<Unit, InputStatus>,
  selection: Selection,
): void {
  const res = solve(vars, trace ? { trace: (p) => trace.push(formatSearchPosition(p)) } : {});
  if ("error" in res) throw new Error(`resolver: ${res.error}`);
  if ("unsat" in res) {
    const message = explainUnsat(res.unsat);
    for (const u of group.units) {
      const st = statusOf.get(u);
      if (!st) continue;
      st.conditions.push({ type: "ResolutionFailed", status: "True", reason: "ConstraintsNotSatisfiable", message });
      const first = u.candidates[0];
      if (first) {
        const missing = dependenciesMissing(first, candidates.dependencies(first));
        if (missing) st.instances.push(instanceOf(first, [], [], [missing]));
      }
    }
    return;
  }
  recordSelection(group, new Set(res.selected), candidates, selection);
}

/** Records a solved group's chosen bundles and entries, the units' choices, edges and entry uses. */
function recordSelection(group: Group, sel: Set<string>, candidates: Candidates, selection: Selection): void {
  const { edges, entryUses } = selection;
  for (const e of group.entities) if (sel.has(e.id)) selection.selected.set(e, group.units);
  for (const o of group.entries) if (sel.has(o.id)) selection.selectedEntries.set(o, group.units);
  for (const u of group.units) {
    const c = u.operandChoices
      ? u.candidates.find((x) => sel.has(viaId(u, x)))
      : u.candidates.find((x) => sel.has(x.id));
    if (!c) continue;
    selection.chosenBy.set(u, c);
    const per = u.operandChoices?.get(c) ?? [];
    u.operandRequests.forEach((r, ri) => {
      const o = (per[ri] ?? []).find((x) => sel.has(x.id));
      if (o) entryUses.push({ entry: o, by: c, unit: u, meets: r.meets });
    });
  }
  for (const e of group.entities) {
    if (!sel.has(e.id)) continue;
    for (const { pred, cands } of candidates.dependencies(e)) {
      const to = cands.find((x) => sel.has(x.id));
      if (to) edges.push({ from: e, to, meets: pred.meets });
    }
    for (const { ref, cands } of candidates.required(e)) {
      const o = cands.find((x) => sel.has(x.id));
      if (!o) continue;
      const meets: JsonValue = { [ref.type]: { name: ref.name, version: ref.version } };
      entryUses.push({ entry: o, by: e, meets });
      // The operator managing a required operand is a dependency of the requiring bundle.
      const to = o.schema === SCHEMA_OPERAND ? candidates.supporters(o).find((x) => sel.has(x.id)) : undefined;
      if (to && to !== e) edges.push({ from: e, to, meets });
    }
  }
}

export function instanceOf(
  e: Entity,
  deps: InstanceReference[],
  sats: InstanceReference[],
  conditions: Condition[],
): InstanceStatus {
  return {
    name: e.name,
    package: e.package,
    version: e.versionText,
    catalog: e.catalog,
    satisfies: sats,
    dependencies: deps,
    conditions,
  };
}

function dependenciesMissing(e: Entity, deps: { pred: Predicate; cands: Entity[] }[]): Condition | undefined {
  if (deps.length === 0) return undefined;
  const met = deps.filter((d) => d.cands.length > 0);
  if (met.length === deps.length) return undefined;
  const texts = deps.map((d) => d.pred.text);
  const missing = deps.filter((d) => d.cands.length === 0).map((d) => d.pred.failureMessage ?? d.pred.text);
  const sat =
    met.length > 0
      ? `${listText(met.map((d) => d.pred.text))} can be satisfied by ` +
        `${listText([...new Set(met.flatMap((d) => d.cands.map((c) => c.name)))])}, but `
      : "";
  return {
    type: "DependenciesMissing",
    status: "True",
    reason: `Only ${met.length}/${deps.length} dependency constraints are met.`,
    message:
      `${e.name} has the following constraints: ${texts.join("; ")}. ` +
      `${sat}no bundle satisfies ${listText(missing)}`,
  };
}
