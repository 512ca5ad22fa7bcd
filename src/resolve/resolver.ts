/**
 * The resolver: Inputs (docs/cluster.md) plus installed operators over a {@link CatalogSet}, encoded for
 * the SAT layer and answered as a resolveset.
 *
 * Encoding (OLM v0's, with Deppy's vocabulary: docs/cluster.md):
 * - one variable per Input (`input <name>`): mandatory, depends on its candidates in preference
 *   order (catalog priority, default channel, channel head first down the replacement chain; an
 *   installed bundle last, "stay where you are");
 * - one variable per installed operator no Input covers (`installed package <p>`): mandatory,
 *   depends on the installed bundle first (or its upgrades first when `subscribed`);
 * - one variable per reachable bundle: a dependency per `olm.gvk.required`, `olm.package.required`
 *   and `olm.constraint` (candidates: installed first, then the dependent's own catalog, then
 *   catalog priority…), prohibited when the described cluster is too old (`minKubeVersion`) or too
 *   new (`olm.maxOpenShiftVersion`), or when the bundle carries `olm.deprecated`;
 * - at most one bundle per package and one provider per GVK;
 * - installed packages may only move along upgrade edges (replaces, skips, skipRange) or stay,
 *   unless the Input's class has `force`;
 * - operand versioning (docs/operands.md): one variable per reachable `olm.operand` / `olm.relatedimages`
 *   entry; a bundle depends on an entry per `olm.operand.required` / `olm.relatedImageBundle`
 *   (newest first), an operand entry on a bundle that supports it (`olm.operand.supported`), an
 *   Input with `olm.operand` constraints on "input via bundle" variables that tie the operand to
 *   the bundle managing it; at most one version per related-image name;
 * Inputs that share no package, GVK or entry (directly or through dependencies) are solved
 * separately, so one blocked operator never blocks an unrelated one.
 *
 * This file is the entry, {@link resolve}; its phases are in `resolver/`: `types.ts` (the request
 * and the resolveset), `units.ts` (the unit model, settings, installed operators, preference orders),
 * `buildunits.ts` (units from Inputs and installed packages), `candidates.ts` (reachability and
 * grouping), `encode.ts` (the SAT encoding), `select.ts` (solving, recording the selection) and
 * `assemble.ts` (the resolveset).
 */
import type { ResolveRequest, ResolveSet } from "./resolver/types.js";
import { readSettings, gatherInstalled } from "./resolver/units.js";
import { buildUnits } from "./resolver/buildunits.js";
import { Candidates, groupUnits } from "./resolver/candidates.js";
import { encodeGroup } from "./resolver/encode.js";
import { emptySelection, solveGroup } from "./resolver/select.js";
import { assembleResolveSet } from "./resolver/assemble.js";

export type {
  Condition,
  InputStatus,
  InstalledStatus,
  InstanceReference,
  InstanceStatus,
  OperandInstanceReference,
  ResolvedBundle,
  ResolvedOperand,
  ResolveRequest,
  ResolveSet,
  UpdateOptions,
} from "./resolver/types.js";

/**
 * Resolves the request. Never throws for bad inputs: problems are conditions in the result.
 *
 * The phases, in order: {@link readSettings} (classes, cluster versions), {@link gatherInstalled}
 * (installed operators, with virtual or overridden entities), {@link buildUnits} (one unit per
 * Input and per uncovered installed package, with their candidates), {@link groupUnits}
 * (reachability over {@link Candidates}, grouping units that share a package, GVK or entry),
 * then per group {@link encodeGroup} (the SAT variables and constraints) and {@link solveGroup}
 * (solving, recording the selection or the failure), and finally {@link assembleResolveSet}.
 */
export function resolve(req: ResolveRequest): ResolveSet {
  const settings = readSettings(req);
  const installed = gatherInstalled(req.catalogs, req.installed ?? [], settings.warnings);
  const units = buildUnits(req.catalogs, req.inputs, settings, installed);
  const candidates = new Candidates(req.catalogs, installed);
  const groups = groupUnits(units.units, candidates);
  const traceAll = req.trace === true;
  const trace: string[] = [];
  const selection = emptySelection();
  for (const group of groups) {
    const vars = encodeGroup(group, candidates, installed, req.catalogs);
    const wantTrace = traceAll || group.units.some((u) => u.params.trace);
    solveGroup(group, vars, wantTrace ? trace : undefined, candidates, units.statusOf, selection);
  }
  const out = assembleResolveSet(req.catalogs, req.inputs, settings, installed, units, selection);
  if (traceAll || units.units.some((u) => u.params.trace) || units.forced.some((f) => f.unit.params.trace))
    out.trace = trace;
  return out;
}
