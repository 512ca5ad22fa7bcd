/**
 * Building the resolver's units: one per Input from its constraints and its InputClass's (where to
 * look, candidate filters, cluster versions, operand requests), kept to the upgrade graph unless
 * forced; then one per installed package no Input covers (stay, or move along upgrade edges).
 */
import type { JsonValue } from "../../fbc/types.js";
import { packageVersionMatcher, SemverError, type Range, type Version } from "../../semver/index.js";
import { operandRefs, tolerant, type CatalogSet, type Entity } from "../catalog.js";
import { parseOperandRange, SCHEMA_OPERAND, type OperandEntry } from "../operands.js";
import type { Input, InputClassParameters } from "../inputs.js";
import { compileCel } from "../predicates.js";
import { listText } from "../explain.js";
import type { InputStatus } from "./types.js";
import {
  maxVersion,
  orderEntries,
  PARAM_DEFAULTS,
  preferenceOrder,
  type Installed,
  type InstalledOperators,
  type OperandRequest,
  type Settings,
  type Unit,
  type Units,
} from "./units.js";

export function buildUnits(
  set: CatalogSet,
  inputs: readonly Input[],
  settings: Settings,
  installedOps: InstalledOperators,
): Units {
  const installed = installedOps.byPackage;
  const units: Unit[] = [];
  const forced: { unit: Unit; input: Input }[] = [];
  const inputStatus = new Map<Unit, InputStatus>();
  const statuses: InputStatus[] = [];
  for (const input of inputs) {
    const params = settings.classes.get(input.inputClass);
    const st: InputStatus = {
      name: input.name,
      inputClass: input.inputClass,
      dryRun: params?.dryRun ?? false,
      instances: [],
      conditions: [],
    };
    statuses.push(st);
    const unit = buildInputUnit(set, input, params, installed, installedOps.allowed, settings.kube, settings.ocp);
    inputStatus.set(unit, st);
    if (unit.failure) {
      st.conditions.push({ type: "ResolutionFailed", status: "True", ...unit.failure });
      continue;
    }
    if (unit.force) forced.push({ unit, input });
    else units.push(unit);
  }
  const covered = new Set<string>();
  for (const u of units) for (const e of u.candidates) covered.add(e.package);
  for (const f of forced) for (const e of f.unit.candidates) covered.add(e.package);
  for (const [pkg, inst] of installed) {
    if (covered.has(pkg)) continue;
    const ups = [...inst.successors].sort(preferenceOrder(undefined, false));
    const candidates = inst.op.subscribed ? [...ups, inst.entity] : [inst.entity, ...ups];
    units.push({
      kind: "installed",
      name: pkg,
      varId: `installed package ${pkg}`,
      candidates,
      params: { ...PARAM_DEFAULTS, dependencyPreference: inst.op.subscribed ? "newest" : "minimal" },
      cluster: { kube: settings.kube, ocp: settings.ocp },
      force: false,
      operandRequests: [],
    });
  }
  return { units, forced, statusOf: inputStatus, statuses };
}

function nextMinor(v: Version | undefined): Version | undefined {
  return v ? tolerant(`${v.major}.${v.minor + 1n}.0`) : undefined;
}

function obj(v: JsonValue): { [k: string]: JsonValue } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}
const sv = (v: JsonValue | undefined): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;

/** A candidate filter of an Input's constraint, and what to say when it leaves none. */
interface CandidateFilter {
  test: (e: Entity) => boolean;
  empty: (pkgText: string) => string;
  content: boolean;
}

/** Where an Input's constraints say to look (catalog, package, channel) and the filters of its candidates. */
interface InputScope {
  catalog?: string;
  pkg?: string;
  channel?: string;
  filters: CandidateFilter[];
}

const failure = (reason: string, message: string) => ({ reason, message });

/**
 * Applies one constraint of an Input (or its InputClass) to its scope and unit (cluster versions,
 * operand requests); returns why it is invalid, if it is.
 */
function applyConstraint(
  c: { type: string; value: JsonValue },
  inputName: string,
  scope: InputScope,
  unit: Unit,
): { reason: string; message: string } | undefined {
  const v = c.value;
  const where = `referenced by input ${inputName}`;
  switch (c.type) {
    case "olm.catalog": {
      const o = obj(v);
      if (!o)
        return failure(
          "InvalidConstraint",
          `input ${inputName}: olm.catalog needs an object value with name, package and channel`,
        );
      scope.catalog = sv(o.name) || scope.catalog;
      scope.pkg = sv(o.package) || sv(o.packageName) || scope.pkg;
      scope.channel = sv(o.channel) || scope.channel;
      return undefined;
    }
    case "olm.packageVersion": {
      const o = obj(v);
      const p = o ? sv(o.package) || sv(o.packageName) : undefined;
      const ver = o ? sv(o.version) : undefined;
      if (!o || !ver)
        return failure("InvalidConstraint", `input ${inputName}: olm.packageVersion needs package and version`);
      if (p && !scope.pkg) scope.pkg = p;
      const m = packageVersionMatcher(ver);
      if (m instanceof SemverError)
        return failure(
          "InvalidConstraint",
          `input ${inputName}: invalid version range ${JSON.stringify(ver)}: ${m.message}`,
        );
      scope.filters.push({
        test: (e) => (!p || e.package === p) && e.version !== undefined && m.test(e.version),
        empty: (pt) =>
          m.kind === "exact"
            ? `no operators found with version ${ver} in ${pt} ${where}`
            : `no operators found with version in range ${ver} in ${pt} ${where}`,
        content: true,
      });
      return undefined;
    }
    case "olm.name": {
      const n = sv(v) ?? sv(obj(v)?.name);
      if (!n) return failure("InvalidConstraint", `input ${inputName}: olm.name needs a bundle name`);
      scope.filters.push({
        test: (e) => e.name === n,
        empty: (pt) => `no operators found with name ${n} in ${pt} ${where}`,
        content: true,
      });
      return undefined;
    }
    case "olm.cel": {
      const rule = sv(v) ?? sv(obj(v)?.rule);
      if (!rule) return failure("InvalidConstraint", `input ${inputName}: olm.cel needs a rule`);
      const prog = compileCel(rule);
      if ("error" in prog)
        return failure("InvalidConstraint", `input ${inputName}: olm.cel rule ${JSON.stringify(rule)}: ${prog.error}`);
      scope.filters.push({
        test: prog.test,
        empty: (pt) => `no operators in ${pt} satisfy the CEL rule ${JSON.stringify(rule)} of input ${inputName}`,
        content: true,
      });
      return undefined;
    }
    case "olm.operand": {
      // docs/operands.md: {name, version?}: the Input's operator must manage this operand, and an
      // olm.operand entry in the range is installed with it.
      const o = obj(v);
      const n = o ? sv(o.name) : sv(v);
      if (!n)
        return failure(
          "InvalidConstraint",
          `input ${inputName}: olm.operand needs an operand name, e.g. {name: etcd, version: ">=3.0.0"}`,
        );
      const ver = o ? (sv(o.version) ?? "") : "";
      let range: Range | undefined;
      if (ver.trim() !== "") {
        const r = parseOperandRange(ver);
        if (typeof r === "string")
          return failure(
            "InvalidConstraint",
            `input ${inputName}: olm.operand ${n}: invalid version range ${JSON.stringify(ver)}: ${r}`,
          );
        range = r;
      }
      unit.operandRequests.push({
        name: n,
        version: ver,
        range,
        meets: { "olm.operand": ver ? { name: n, version: ver } : { name: n } },
      });
      return undefined;
    }
    case "olm.rego":
      return failure(
        "UnsupportedConstraint",
        `input ${inputName}: olm.rego constraints are not supported (opcat does ` +
          `not evaluate Rego); express the query as an olm.cel rule over properties`,
      );
    case "minKubeVersion":
    case "minOCPVersion": {
      const t = (sv(v) ?? "").replace(/^\s*>=?\s*/, "");
      const ver = tolerant(t);
      if (!ver)
        return failure("InvalidConstraint", `input ${inputName}: ${c.type} needs a version, got ${JSON.stringify(v)}`);
      if (c.type === "minKubeVersion") unit.cluster.kube = maxVersion(unit.cluster.kube, ver);
      else unit.cluster.ocp = maxVersion(unit.cluster.ocp, ver);
      return undefined;
    }
    case "olm.cluster.nextMinor":
      unit.cluster.kube = nextMinor(unit.cluster.kube);
      unit.cluster.ocp = nextMinor(unit.cluster.ocp);
      return undefined;
    default:
      return failure("InvalidConstraint", `input ${inputName}: unknown constraint type ${JSON.stringify(c.type)}`);
  }
}

/** Builds the unit of one Input: candidate bundles in preference order, or why there are none. */
function buildInputUnit(
  set: CatalogSet,
  input: Input,
  params: InputClassParameters | undefined,
  installed: Map<string, Installed>,
  allowed: (e: Entity) => boolean,
  baseKube: Version | undefined,
  baseOcp: Version | undefined,
): Unit {
  const unit: Unit = {
    kind: "input",
    name: input.name,
    varId: `input ${input.name}`,
    candidates: [],
    params: params ?? PARAM_DEFAULTS,
    cluster: { kube: baseKube, ocp: baseOcp },
    input,
    force: params?.force ?? false,
    operandRequests: [],
  };
  if (!params) {
    unit.failure = failure(
      "UnknownInputClass",
      `input ${input.name} references InputClass ${JSON.stringify(input.inputClass)}, which does not exist`,
    );
    return unit;
  }
  const scope: InputScope = { filters: [] };
  for (const c of [...params.constraints, ...input.constraints]) {
    const bad = applyConstraint(c, input.name, scope, unit);
    if (bad) {
      unit.failure = bad;
      return unit;
    }
  }
  unit.channel = scope.channel;
  const where = `referenced by input ${input.name}`;
  const found = candidatesInScope(set, scope, where);
  if ("empty" in found) return withEmpty(unit, found.empty);
  let list = [...found.cands];
  if (!unit.force) {
    const kept = upgradeCandidates(list, scope.filters, installed, allowed);
    if (kept.length === 0) return withEmpty(unit, notUpgradeable(input.name, list, installed));
    list = kept;
  }
  list.sort(preferenceOrder(found.rank, false));
  // The installed bundle is the least preferred option ("stay where you are").
  const instNames = new Set([...installed.values()].map((i) => i.entity.name));
  const isInstalled = (e: Entity) => instNames.has(e.name) && installed.get(e.package)?.entity.name === e.name;
  list = [...list.filter((e) => !isInstalled(e)), ...list.filter(isInstalled)];
  if (unit.operandRequests.length > 0) {
    const choices = operandChoices(set, unit, list);
    if (choices.size === 0) return withEmpty(unit, operandMismatch(set, input.name, unit.operandRequests, list));
    unit.operandChoices = choices;
    list = list.filter((e) => choices.has(e));
  }
  unit.candidates = list;
  return unit;
}

/** The entities an Input's scope and filters leave (with their rank in its channel), or why none. */
function candidatesInScope(
  set: CatalogSet,
  scope: InputScope,
  where: string,
): { cands: readonly Entity[]; rank?: Map<Entity, number> } | { empty: string } {
  const { catalog, pkg, channel } = scope;
  let cands: readonly Entity[];
  let pt = "the catalogs";
  if (pkg) {
    cands = set.byPackage(pkg);
    pt = `package ${pkg}`;
    if (cands.length === 0) return { empty: `no operators found in package ${pkg} in the catalogs ${where}` };
  } else cands = set.entities;
  if (catalog) {
    if (!set.hasCatalog(catalog))
      return { empty: `no operators found from catalog ${catalog} ${where} (no catalog of that name was given)` };
    cands = cands.filter((e) => e.catalog === catalog);
    if (cands.length === 0) return { empty: `no operators found in ${pt} in catalog ${catalog} ${where}` };
    pt += ` in catalog ${catalog}`;
  }
  let rank: Map<Entity, number> | undefined;
  if (channel) {
    cands = cands.filter((e) => e.channels.some((c) => c.channel === channel));
    if (cands.length === 0) return { empty: `no operators found in channel ${channel} of ${pt} ${where}` };
    pt = `channel ${channel} of ${pt}`;
    rank = new Map();
    for (const e of cands) {
      const list = set.channel(e.catalog, e.package, channel) ?? [];
      rank.set(e, list.indexOf(e));
    }
  }
  for (const f of scope.filters) {
    cands = cands.filter(f.test);
    if (cands.length === 0) return { empty: f.empty(pt) };
  }
  return { cands, rank };
}

/** Without force: the candidates the upgrade graph allows, plus an installed virtual bundle that matches. */
function upgradeCandidates(
  list: readonly Entity[],
  filters: readonly CandidateFilter[],
  installed: Map<string, Installed>,
  allowed: (e: Entity) => boolean,
): Entity[] {
  const kept = list.filter(allowed);
  for (const p of new Set(list.map((e) => e.package))) {
    const inst = installed.get(p);
    if (inst?.entity.virtual && filters.every((f) => f.test(inst.entity))) kept.push(inst.entity);
  }
  return kept;
}

/** Why none of an Input's candidates `before` is installed or upgrades from what is. */
function notUpgradeable(inputName: string, before: readonly Entity[], installed: Map<string, Installed>): string {
  const pkgs = new Set(before.map((e) => e.package));
  const insts = [...pkgs].map((p) => installed.get(p)).filter((x): x is Installed => x !== undefined);
  const names = before.slice(0, 5).map((e) => e.name);
  return (
    `input ${inputName} matches only ` +
    `${listText(names)}${before.length > 5 ? ` and ${before.length - 5} more` : ""}, none of ` +
    `which is installed or upgrades from the installed ${listText(insts.map((i) => i.entity.name))} ` +
    `(replaces, skips or skipRange); use an InputClass with force to leave the upgrade graph`
  );
}

/** The candidates that can manage every requested operand at a version some entry has, with those entries. */
function operandChoices(set: CatalogSet, unit: Unit, list: readonly Entity[]): Map<Entity, OperandEntry[][]> {
  const minimal = unit.params.dependencyPreference === "minimal";
  const choices = new Map<Entity, OperandEntry[][]>();
  for (const e of list) {
    const per = unit.operandRequests.map((r) =>
      orderEntries(
        set
          .operands(SCHEMA_OPERAND, r.name)
          .filter((o) => (!r.range || r.range(o.version)) && set.supportersOf(o).includes(e)),
        minimal,
      ),
    );
    if (per.every((l) => l.length > 0)) choices.set(e, per);
  }
  return choices;
}

/** Why no candidate of an Input can manage the operands it asks for, in one sentence. */
function operandMismatch(
  set: CatalogSet,
  inputName: string,
  reqs: readonly OperandRequest[],
  cands: readonly Entity[],
): string {
  const reqText = listText(reqs.map((r) => `operand ${r.name}${r.version ? ` in version range ${r.version}` : ""}`));
  for (const r of reqs) {
    const entries = set.operands(SCHEMA_OPERAND, r.name).filter((o) => !r.range || r.range(o.version));
    if (entries.length === 0) {
      const all = set.operands(SCHEMA_OPERAND, r.name);
      return (
        `input ${inputName} asks for ${reqText}, but the catalogs have no olm.operand ` +
        `entry ${r.name}${r.version ? ` in version range ${r.version}` : ""}` +
        `${all.length > 0 ? ` (they have ${listText([...new Set(all.map((o) => o.versionText))])})` : ""}`
      );
    }
  }
  const shown = cands.slice(0, 3).map((e) => {
    const sup = operandRefs(e).supported.filter((x) => reqs.some((r) => r.name === x.name));
    return sup.length === 0
      ? `${e.name} supports none of them`
      : `${e.name} supports ${listText(sup.map((x) => `${x.name} ${x.version}`))}`;
  });
  return (
    `input ${inputName} asks for ${reqText}, but none of its ${cands.length} candidate ` +
    `bundles supports ${reqs.length > 1 ? "all of them" : "it"} at a version the catalogs ` +
    `offer (olm.operand.supported): ${shown.join("; ")}${cands.length > 3 ? "; …" : ""}`
  );
}

function withEmpty(unit: Unit, reason: string): Unit {
  if (unit.force) {
    unit.failure = { reason: "NoMatchingBundles", message: reason };
    return unit;
  }
  unit.emptyReason = reason;
  return unit;
}
