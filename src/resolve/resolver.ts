/**
 * The resolver: Inputs (seed 002) plus installed operators over a {@link CatalogSet}, encoded for
 * the SAT layer and answered as a resolveset.
 *
 * Encoding (OLM v0's, with seed 002's vocabulary):
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
 *   unless the Input's class has `force`.
 * Inputs that share no package or GVK (directly or through dependencies) are solved separately, so
 * one blocked operator never blocks an unrelated one.
 */
import { byteCompare } from "../fbc/model.js";
import type { JsonValue, Property } from "../fbc/types.js";
import { RawJson } from "../fbc/rawjson.js";
import { SemverError, tryParseRange, type Version } from "../semver/index.js";
import { atMost, dependency, formatSearchPosition, mandatory, prohibited, solve, variable, withMessage, type Constraint, type Variable } from "./sat/index.js";
import { maxOpenShiftVersionOf, minKubeVersionOf, tolerant, upgradesFrom, type CatalogSet, type Entity } from "./catalog.js";
import { DEFAULT_INPUT_CLASSES, type ClusterDescription, type Input, type InputClass, type InputClassParameters, type InstalledOperator } from "./inputs.js";
import { compileCel, dependenciesOf, matching, type Predicate } from "./predicates.js";

export interface ResolveRequest {
  catalogs: CatalogSet;
  inputs: readonly Input[];
  /** User-defined InputClasses (they override defaults of the same name). */
  classes?: readonly InputClass[];
  installed?: readonly InstalledOperator[];
  cluster?: ClusterDescription;
  /** Record the search trace for every Input (as if every class had `trace: true`). */
  trace?: boolean;
}

export interface Condition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
}

/** Another instance this one depends on or satisfies, and the constraints it meets. */
export interface InstanceReference {
  kind: "Instance";
  name: string;
  meets: JsonValue[];
}

export interface InstanceStatus {
  name: string;
  package: string;
  version: string;
  catalog: string;
  satisfies: InstanceReference[];
  dependencies: InstanceReference[];
  conditions: Condition[];
}

export interface InputStatus {
  name: string;
  inputClass: string;
  dryRun: boolean;
  instances: InstanceStatus[];
  conditions: Condition[];
}

/** A bundle of the resolveset. */
export interface ResolvedBundle {
  schema: "olm.bundle";
  name: string;
  package: string;
  version: string;
  image: string;
  catalog: string;
  channel: string;
  /** `install`, `upgrade` (from `pivotFrom`), `unchanged` (installed, stays) or `force` (force class). */
  action: "install" | "upgrade" | "unchanged" | "force";
  pivotFrom?: string;
  /** Inputs that asked for it. */
  requestedBy: string[];
  /** Bundles of the resolveset that depend on it. */
  dependencyOf: string[];
  dryRun: boolean;
  relatedImages: { name: string; image: string }[];
  properties: { type: string; value: JsonValue }[];
}

export interface UpdateOptions {
  catalog: string;
  package: string;
  channel: string;
  options: string[];
}

export interface InstalledStatus {
  package: string;
  bundle: string;
  version: string;
  updates: UpdateOptions[];
  conditions: Condition[];
}

/** The answer: seed 002's resolveset with per-Input status. */
export interface ResolveSet {
  apiVersion: "deppy.io/v1";
  kind: "ResolveSet";
  /** True when every Input resolved. */
  resolved: boolean;
  /** True when every Input is a dry run (no Instance would be created). */
  dryRun: boolean;
  bundles: ResolvedBundle[];
  inputs: InputStatus[];
  /** Inputs for dependencies, for classes with `generateInputsForDependencies`. */
  generatedInputs: Input[];
  installed: InstalledStatus[];
  warnings: string[];
  trace?: string[];
}

interface Unit {
  kind: "input" | "installed";
  name: string;
  varId: string;
  candidates: Entity[];
  emptyReason?: string;
  params: InputClassParameters;
  /** The input's channel, when it names one. */
  channel?: string;
  cluster: { kube?: Version; ocp?: Version };
  failure?: { reason: string; message: string };
  input?: Input;
  force: boolean;
}

interface Installed {
  op: InstalledOperator;
  entity: Entity;
  version?: Version;
  allowed: Set<string>;
  successors: Entity[];
}

const PARAM_DEFAULTS: InputClassParameters = { force: false, generateInputsForDependencies: false, dryRun: false, trace: false, constraints: [] };

function maxVersion(a: Version | undefined, b: Version | undefined): Version | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.compare(b) >= 0 ? a : b;
}

function nextMinor(v: Version | undefined): Version | undefined {
  return v ? tolerant(`${v.major}.${v.minor + 1n}.0`) : undefined;
}

function listText(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

function virtualEntity(op: InstalledOperator): Entity {
  const version = op.version ? tolerant(op.version) : undefined;
  const props: Property[] = [{ type: "olm.package", value: RawJson.fromValue({ packageName: op.package, version: op.version ?? "" }) }];
  return {
    id: `${op.bundle} (installed)`,
    catalog: "",
    priority: 0,
    package: op.package,
    name: op.bundle,
    version,
    versionText: version ? version.toString() : (op.version ?? ""),
    image: "",
    relatedImages: [],
    properties: props,
    channels: [],
    inDefaultChannel: false,
    rank: Number.MAX_SAFE_INTEGER,
    ordinal: Number.MAX_SAFE_INTEGER,
    parsed: { packages: [{ packageName: op.package, version: op.version ?? "", release: "" }], packagesRequired: [], gvks: [], gvksRequired: [], bundleObjects: 0, csvMetadatas: [], channels: [], others: [] },
    provides: [],
    virtual: true,
  };
}

/** Resolves the request. Never throws for bad inputs: problems are conditions in the result. */
export function resolve(req: ResolveRequest): ResolveSet {
  const set = req.catalogs;
  const classes = new Map<string, InputClassParameters>();
  for (const c of DEFAULT_INPUT_CLASSES) classes.set(c.name, c.parameters);
  for (const c of req.classes ?? []) classes.set(c.name, c.parameters);
  const baseKube = req.cluster?.kubernetesVersion ? tolerant(req.cluster.kubernetesVersion) : undefined;
  const baseOcp = req.cluster?.openshiftVersion ? tolerant(req.cluster.openshiftVersion) : undefined;
  const warnings = [...set.warnings];
  if (req.cluster?.kubernetesVersion && !baseKube) warnings.push(`cluster Kubernetes version ${JSON.stringify(req.cluster.kubernetesVersion)} is not a version; ignored`);
  if (req.cluster?.openshiftVersion && !baseOcp) warnings.push(`cluster OpenShift version ${JSON.stringify(req.cluster.openshiftVersion)} is not a version; ignored`);

  // Installed operators.
  const installed = new Map<string, Installed>();
  for (const op of req.installed ?? []) {
    if (installed.has(op.package)) {
      warnings.push(`installed package ${op.package} is listed more than once; the first entry is used`);
      continue;
    }
    const found = set.byName(op.bundle).filter((e) => e.package === op.package);
    const entity = found.find((e) => e.catalog === op.catalog) ?? found[0] ?? virtualEntity(op);
    const version = entity.version ?? (op.version ? tolerant(op.version) : undefined);
    const successors = set.byPackage(op.package).filter((e) => upgradesFrom(e, op.bundle, version));
    installed.set(op.package, { op, entity, version, successors, allowed: new Set([op.bundle, ...successors.map((e) => e.name)]) });
  }
  const allowed = (e: Entity): boolean => {
    const i = installed.get(e.package);
    return !i || (e.virtual ? e === i.entity : i.allowed.has(e.name));
  };

  // Units: one per Input, then one per installed package no Input covers.
  const units: Unit[] = [];
  const forced: { unit: Unit; input: Input }[] = [];
  const inputStatus = new Map<Unit, InputStatus>();
  const statuses: InputStatus[] = [];
  for (const input of req.inputs) {
    const params = classes.get(input.inputClass);
    const st: InputStatus = { name: input.name, inputClass: input.inputClass, dryRun: params?.dryRun ?? false, instances: [], conditions: [] };
    statuses.push(st);
    const unit = buildInputUnit(set, input, params, installed, allowed, baseKube, baseOcp);
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
      cluster: { kube: baseKube, ocp: baseOcp },
      force: false,
    });
  }

  // Reachability and grouping (union-find over units, joined by shared packages and GVKs).
  const parent = units.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };
  const owner = new Map<Entity, number>();
  const keyOwner = new Map<string, number>();
  const order: Entity[] = [];
  const depCands = new Map<Entity, { pred: Predicate; cands: Entity[] }[]>();
  const prefOf = new Map<Entity, "newest" | "minimal">();
  const candidatesFor = (e: Entity): { pred: Predicate; cands: Entity[] }[] => {
    let l = depCands.get(e);
    if (l) return l;
    const minimal = prefOf.get(e) === "minimal";
    l = dependenciesOf(e).map((pred) => {
      const cands = matching(set, pred).filter(allowed);
      for (const i of installed.values()) if (i.entity.virtual && pred.test(i.entity)) cands.push(i.entity);
      const inst = (x: Entity): boolean => installed.get(x.package)?.entity.name === x.name;
      cands.sort((a, b) => Number(inst(b)) - Number(inst(a)) || Number(b.catalog === e.catalog) - Number(a.catalog === e.catalog) || preferenceOrder(undefined, minimal)(a, b));
      return { pred, cands };
    });
    depCands.set(e, l);
    return l;
  };
  units.forEach((u, ui) => {
    const queue: Entity[] = [...u.candidates];
    for (let qi = 0; qi < queue.length; qi++) {
      const e = queue[qi];
      const o = owner.get(e);
      if (o !== undefined) {
        union(ui, o);
        continue;
      }
      owner.set(e, ui);
      order.push(e);
      if (!prefOf.has(e)) prefOf.set(e, u.params.dependencyPreference ?? "newest");
      for (const k of ["pkg:" + e.package, ...e.provides.map((g) => "gvk:" + g)]) {
        const ko = keyOwner.get(k);
        if (ko === undefined) keyOwner.set(k, ui);
        else union(ui, ko);
      }
      for (const d of candidatesFor(e)) for (const c of d.cands) queue.push(c);
    }
  });

  const traceAll = req.trace === true;
  const trace: string[] = [];
  const selectedAll = new Map<Entity, Unit[]>(); // selected entity → units of its group
  const edges: { from: Entity; to: Entity; meets: JsonValue }[] = [];
  const chosenBy = new Map<Unit, Entity>();
  const groups = new Map<number, number[]>();
  units.forEach((_, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(i);
    else groups.set(r, [i]);
  });

  for (const idxs of groups.values()) {
    const gUnits = idxs.map((i) => units[i]);
    const inGroup = new Set(idxs);
    const ents = order.filter((e) => inGroup.has(owner.get(e) as number));
    let kube: Version | undefined;
    let ocp: Version | undefined;
    for (const u of gUnits) {
      kube = maxVersion(kube, u.cluster.kube);
      ocp = maxVersion(ocp, u.cluster.ocp);
    }
    const vars: Variable[] = [];
    for (const u of gUnits) {
      const names = u.candidates.map((c) => c.id);
      const dep =
        u.candidates.length === 0
          ? withMessage(dependency(), u.emptyReason ?? `no bundle matches ${u.kind} ${u.name}`)
          : withMessage(dependency(...names), u.kind === "input" ? `input ${u.name} can be satisfied only by ${listText(names)}` : `installed operator ${u.name} can only stay at ${u.candidates.find((c) => installed.get(u.name)?.entity === c)?.id ?? "?"} or move along its upgrade edges to ${listText(names.filter((n) => n !== installed.get(u.name)?.entity.id)) || "nothing"}`);
      vars.push(variable(u.varId, withMessage(mandatory(), u.kind === "input" ? `input ${u.name} is requested` : `${installed.get(u.name)?.entity.name} is installed`), dep));
    }
    const byPkg = new Map<string, Entity[]>();
    const byGvk = new Map<string, Entity[]>();
    for (const e of ents) {
      const cs: Constraint[] = [];
      if (!e.virtual) {
        const mk = minKubeVersionOf(e);
        const mkv = mk ? tolerant(mk) : undefined;
        if (kube && mkv && mkv.compare(kube) > 0) cs.push(withMessage(prohibited(), `${e.id} requires Kubernetes ${mk} or newer but the cluster runs ${kube.toString()}`));
        const mo = maxOpenShiftVersionOf(e);
        const mov = mo ? tolerant(mo) : undefined;
        if (ocp && mov && (ocp.major > mov.major || (ocp.major === mov.major && ocp.minor > mov.minor))) {
          cs.push(withMessage(prohibited(), `${e.id} supports OpenShift up to ${mo} but the cluster runs ${ocp.major}.${ocp.minor}`));
        }
        if (e.parsed.others.some((p) => p.type === "olm.deprecated")) cs.push(withMessage(prohibited(), `${e.id} is deprecated`));
      }
      for (const { pred, cands } of candidatesFor(e)) {
        const ids = cands.map((c) => c.id);
        const text = `${e.id} requires an operator ${pred.text}`;
        if (ids.length === 0) {
          const why = pred.error ? ` (${pred.error})` : pred.failureMessage ? `: ${pred.failureMessage}` : "";
          cs.push(withMessage(dependency(), `${text}, but no bundle in the catalogs satisfies it${why}`));
        } else cs.push(withMessage(dependency(...ids), `${text}, satisfied only by ${listText(ids)}`));
      }
      vars.push(variable(e.id, ...cs));
      push(byPkg, e.package, e);
      for (const g of e.provides) push(byGvk, g, e);
    }
    for (const [p, l] of byPkg) {
      if (l.length < 2) continue;
      const ids = l.map((e) => e.id);
      vars.push(variable(`package ${p} uniqueness`, withMessage(mandatory(), `there can be only one operator from package ${p}`), withMessage(atMost(1, ...ids), `${listText(ids)} originate from package ${p}, and only one of them can be installed`)));
    }
    for (const [g, l] of byGvk) {
      if (l.length < 2 || new Set(l.map((e) => e.package)).size < 2) continue;
      const ids = l.map((e) => e.id);
      const [group, version, kind] = g.split("/");
      const gt = `${kind} (${group}/${version})`;
      vars.push(variable(`${gt} uniqueness`, withMessage(mandatory(), `there can be only one provider of ${gt}`), withMessage(atMost(1, ...ids), `${listText(ids)} provide ${gt}, and there can be only one provider of it`)));
    }
    const wantTrace = traceAll || gUnits.some((u) => u.params.trace);
    const res = solve(vars, wantTrace ? { trace: (p) => trace.push(formatSearchPosition(p)) } : {});
    if ("error" in res) throw new Error(`resolver: ${res.error}`);
    if ("unsat" in res) {
      const message = `unable to find a solution that matches the constraints: ${res.unsat.map(String).join("; ")}`;
      for (const u of gUnits) {
        const st = inputStatus.get(u);
        if (!st) continue;
        st.conditions.push({ type: "ResolutionFailed", status: "True", reason: "ConstraintsNotSatisfiable", message });
        const first = u.candidates[0];
        if (first) {
          const missing = dependenciesMissing(first, candidatesFor(first));
          if (missing) st.instances.push(instanceOf(first, [], [], [missing]));
        }
      }
      continue;
    }
    const sel = new Set(res.selected);
    for (const e of ents) if (sel.has(e.id)) selectedAll.set(e, gUnits);
    for (const u of gUnits) {
      const c = u.candidates.find((x) => sel.has(x.id));
      if (c) chosenBy.set(u, c);
    }
    for (const e of ents) {
      if (!sel.has(e.id)) continue;
      for (const { pred, cands } of candidatesFor(e)) {
        const to = cands.find((x) => sel.has(x.id));
        if (to) edges.push({ from: e, to, meets: pred.meets });
      }
    }
  }

  const refs = (pairs: { other: Entity; meets: JsonValue }[]): InstanceReference[] => {
    const m = new Map<string, InstanceReference>();
    for (const p of pairs) {
      const r = m.get(p.other.name) ?? { kind: "Instance" as const, name: p.other.name, meets: [] };
      r.meets.push(p.meets);
      m.set(p.other.name, r);
    }
    return [...m.values()];
  };

  // Resolved inputs.
  const requested = new Map<Entity, string[]>();
  for (const [u, e] of chosenBy) {
    if (u.kind === "input") push(requested, e, u.name);
    const st = inputStatus.get(u);
    if (!st) continue;
    st.instances.push(
      instanceOf(
        e,
        refs(edges.filter((x) => x.from === e).map((x) => ({ other: x.to, meets: x.meets }))),
        refs(edges.filter((x) => x.to === e).map((x) => ({ other: x.from, meets: x.meets }))),
        [],
      ),
    );
  }

  const bundles: ResolvedBundle[] = [];
  const channelFor = (e: Entity): string => {
    for (const [u, c] of chosenBy) if (c === e && u.channel && e.channels.some((ch) => ch.channel === u.channel)) return u.channel;
    const inst = installed.get(e.package);
    if (inst?.op.channel && e.channels.some((ch) => ch.channel === inst.op.channel)) return inst.op.channel;
    const def = e.catalog ? set.defaultChannel(e.catalog, e.package) : "";
    return e.channels.find((c) => c.channel === def)?.channel ?? e.channels[0]?.channel ?? "";
  };
  const toBundle = (e: Entity, action: ResolvedBundle["action"], dryRun: boolean, pivotFrom?: string): ResolvedBundle => {
    const b: ResolvedBundle = {
      schema: "olm.bundle",
      name: e.name,
      package: e.package,
      version: e.versionText,
      image: e.image,
      catalog: e.catalog,
      channel: channelFor(e),
      action,
      requestedBy: requested.get(e) ?? [],
      dependencyOf: [...new Set(edges.filter((x) => x.to === e).map((x) => x.from.name))],
      dryRun,
      relatedImages: e.relatedImages.map((r) => ({ name: r.name, image: r.image })),
      properties: e.properties.filter((p) => p.type !== "olm.bundle.object" && !p.value.isMissing).map((p) => ({ type: p.type, value: p.value.value })),
    };
    if (pivotFrom) b.pivotFrom = pivotFrom;
    return b;
  };
  for (const [e, gUnits] of selectedAll) {
    const inst = installed.get(e.package);
    const dry = gUnits.some((u) => u.kind === "input") && gUnits.every((u) => u.kind !== "input" || u.params.dryRun);
    if (inst && inst.entity.name === e.name) bundles.push(toBundle(e, "unchanged", dry));
    else if (inst) bundles.push(toBundle(e, "upgrade", dry, inst.entity.name));
    else bundles.push(toBundle(e, "install", dry));
  }
  for (const { unit, input } of forced) {
    const st = inputStatus.get(unit) as InputStatus;
    for (const e of unit.candidates) {
      const inst = installed.get(e.package);
      requested.set(e, [...(requested.get(e) ?? []), input.name]);
      bundles.push(toBundle(e, "force", unit.params.dryRun, inst && inst.entity.name !== e.name ? inst.entity.name : undefined));
      st.instances.push(instanceOf(e, [], [], []));
    }
  }

  // Generated inputs for dependencies.
  const generated: Input[] = [];
  const genNames = new Set(req.inputs.map((i) => i.name));
  for (const [e, gUnits] of selectedAll) {
    if (requested.has(e) || e.virtual) continue;
    if (!gUnits.some((u) => u.kind === "input" && u.params.generateInputsForDependencies)) continue;
    if (installed.get(e.package)?.op.subscribed) continue;
    let name = e.package;
    for (let i = 2; genNames.has(name); i++) name = `${e.package}-${i}`;
    genNames.add(name);
    generated.push({ name, inputClass: "subscription", constraints: [{ type: "olm.catalog", value: { name: e.catalog, package: e.package, channel: channelFor(e) } }] });
  }

  // Update options per installed operator.
  const installedStatus: InstalledStatus[] = [];
  for (const [pkg, inst] of installed) {
    const channel = inst.op.channel ?? (inst.entity.catalog ? set.defaultChannel(inst.entity.catalog, pkg) : "");
    const buckets = new Map<string, UpdateOptions>();
    const sorted = [...inst.successors].sort((a, b) => (a.version && b.version ? b.version.compare(a.version) : 0) || byteCompare(a.name, b.name));
    for (const e of sorted) {
      for (const ch of e.channels) {
        if (!upgradesFrom(e, inst.entity.name, inst.version, ch.channel)) continue;
        const k = `${e.catalog}\0${ch.channel}`;
        const b = buckets.get(k) ?? { catalog: e.catalog, package: pkg, channel: ch.channel, options: [] };
        if (!b.options.includes(e.name)) b.options.push(e.name);
        buckets.set(k, b);
      }
    }
    const updates = [...buckets.values()].sort((a, b) => Number(b.channel === channel && b.catalog === inst.entity.catalog) - Number(a.channel === channel && a.catalog === inst.entity.catalog) || set.priorityOf(b.catalog) - set.priorityOf(a.catalog) || byteCompare(a.catalog, b.catalog) || byteCompare(a.channel, b.channel));
    const same = updates.find((u) => u.channel === channel && (u.catalog === inst.entity.catalog || inst.entity.virtual));
    const conditions: Condition[] = [];
    if (same) conditions.push({ type: "UpdateAvailable", status: "True", reason: "UpdateFound", message: `updates are available in channel ${channel} of catalog ${same.catalog}: ${same.options.join(", ")}` });
    else if (updates.length > 0) conditions.push({ type: "UpdateAvailable", status: "True", reason: "CrossChannelUpdateFound", message: "updates have been found that require a change in the operator spec to apply" });
    else conditions.push({ type: "UpdateAvailable", status: "False", reason: "NoUpdateFound", message: `no bundle in the catalogs upgrades from ${inst.entity.name}` });
    installedStatus.push({ package: pkg, bundle: inst.entity.name, version: inst.entity.versionText, updates, conditions });
  }

  bundles.sort((a, b) => byteCompare(a.package, b.package) || byteCompare(a.name, b.name) || byteCompare(a.catalog, b.catalog));
  const out: ResolveSet = {
    apiVersion: "deppy.io/v1",
    kind: "ResolveSet",
    resolved: statuses.every((s) => !s.conditions.some((c) => c.type === "ResolutionFailed" && c.status === "True")),
    dryRun: statuses.length > 0 && statuses.every((s) => s.dryRun),
    bundles,
    inputs: statuses,
    generatedInputs: generated,
    installed: installedStatus,
    warnings,
  };
  if (traceAll || units.some((u) => u.params.trace) || forced.some((f) => f.unit.params.trace)) out.trace = trace;
  return out;
}

function instanceOf(e: Entity, deps: InstanceReference[], sats: InstanceReference[], conditions: Condition[]): InstanceStatus {
  return { name: e.name, package: e.package, version: e.versionText, catalog: e.catalog, satisfies: sats, dependencies: deps, conditions };
}

function dependenciesMissing(e: Entity, deps: { pred: Predicate; cands: Entity[] }[]): Condition | undefined {
  if (deps.length === 0) return undefined;
  const met = deps.filter((d) => d.cands.length > 0);
  if (met.length === deps.length) return undefined;
  const texts = deps.map((d) => d.pred.text);
  const missing = deps.filter((d) => d.cands.length === 0).map((d) => d.pred.failureMessage ?? d.pred.text);
  const sat = met.length > 0 ? `${listText(met.map((d) => d.pred.text))} can be satisfied by ${listText([...new Set(met.flatMap((d) => d.cands.map((c) => c.name)))])}, but ` : "";
  return {
    type: "DependenciesMissing",
    status: "True",
    reason: `Only ${met.length}/${deps.length} dependency constraints are met.`,
    message: `${e.name} has the following constraints: ${texts.join("; ")}. ${sat}no bundle satisfies ${listText(missing)}`,
  };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** Catalog priority, catalog name, default channel, package name, then channel order (or version ascending when minimal). */
function preferenceOrder(channelRank: Map<Entity, number> | undefined, minimal: boolean): (a: Entity, b: Entity) => number {
  return (a, b) => {
    if (a.virtual !== b.virtual) return a.virtual ? 1 : -1;
    const c = b.priority - a.priority || byteCompare(a.catalog, b.catalog);
    if (c !== 0) return c;
    if (a.package !== b.package) return Number(b.inDefaultChannel) - Number(a.inDefaultChannel) || byteCompare(a.package, b.package);
    if (minimal && a.version && b.version) {
      const v = a.version.compare(b.version);
      if (v !== 0) return v;
    }
    const ra = channelRank?.get(a) ?? a.rank;
    const rb = channelRank?.get(b) ?? b.rank;
    return ra - rb;
  };
}

function obj(v: JsonValue): { [k: string]: JsonValue } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}
const sv = (v: JsonValue | undefined): string | undefined => (typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined);

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
  const unit: Unit = { kind: "input", name: input.name, varId: `input ${input.name}`, candidates: [], params: params ?? PARAM_DEFAULTS, cluster: { kube: baseKube, ocp: baseOcp }, input, force: params?.force ?? false };
  const fail = (reason: string, message: string): Unit => {
    unit.failure = { reason, message };
    return unit;
  };
  if (!params) return fail("UnknownInputClass", `input ${input.name} references InputClass ${JSON.stringify(input.inputClass)}, which does not exist`);
  let catalog: string | undefined;
  let pkg: string | undefined;
  let channel: string | undefined;
  const filters: { test: (e: Entity) => boolean; empty: (pkgText: string) => string; content: boolean }[] = [];
  const where = `referenced by input ${input.name}`;
  for (const c of [...params.constraints, ...input.constraints]) {
    const v = c.value;
    switch (c.type) {
      case "olm.catalog": {
        const o = obj(v);
        if (!o) return fail("InvalidConstraint", `input ${input.name}: olm.catalog needs an object value with name, package and channel`);
        catalog = sv(o.name) || catalog;
        pkg = sv(o.package) || sv(o.packageName) || pkg;
        channel = sv(o.channel) || channel;
        break;
      }
      case "olm.packageVersion": {
        const o = obj(v);
        const p = o ? sv(o.package) || sv(o.packageName) : undefined;
        const ver = o ? sv(o.version) : undefined;
        if (!o || !ver) return fail("InvalidConstraint", `input ${input.name}: olm.packageVersion needs package and version`);
        if (p && !pkg) pkg = p;
        const exact = /^\s*v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?\s*$/.test(ver) ? tolerant(ver.trim()) : undefined;
        if (exact) {
          filters.push({ test: (e) => (!p || e.package === p) && e.version !== undefined && e.version.compare(exact) === 0, empty: (pt) => `no operators found with version ${ver} in ${pt} ${where}`, content: true });
        } else {
          const r = tryParseRange(ver);
          if (r instanceof SemverError) return fail("InvalidConstraint", `input ${input.name}: invalid version range ${JSON.stringify(ver)}: ${r.message}`);
          filters.push({ test: (e) => (!p || e.package === p) && e.version !== undefined && r(e.version), empty: (pt) => `no operators found with version in range ${ver} in ${pt} ${where}`, content: true });
        }
        break;
      }
      case "olm.name": {
        const n = sv(v) ?? sv(obj(v)?.name);
        if (!n) return fail("InvalidConstraint", `input ${input.name}: olm.name needs a bundle name`);
        filters.push({ test: (e) => e.name === n, empty: (pt) => `no operators found with name ${n} in ${pt} ${where}`, content: true });
        break;
      }
      case "olm.cel": {
        const rule = sv(v) ?? sv(obj(v)?.rule);
        if (!rule) return fail("InvalidConstraint", `input ${input.name}: olm.cel needs a rule`);
        const prog = compileCel(rule);
        if ("error" in prog) return fail("InvalidConstraint", `input ${input.name}: olm.cel rule ${JSON.stringify(rule)}: ${prog.error}`);
        filters.push({ test: prog.test, empty: (pt) => `no operators in ${pt} satisfy the CEL rule ${JSON.stringify(rule)} of input ${input.name}`, content: true });
        break;
      }
      case "olm.rego":
        return fail("UnsupportedConstraint", `input ${input.name}: olm.rego constraints are not supported (opcat does not evaluate Rego); express the query as an olm.cel rule over properties`);
      case "minKubeVersion":
      case "minOCPVersion": {
        const t = (sv(v) ?? "").replace(/^\s*>=?\s*/, "");
        const ver = tolerant(t);
        if (!ver) return fail("InvalidConstraint", `input ${input.name}: ${c.type} needs a version, got ${JSON.stringify(v)}`);
        if (c.type === "minKubeVersion") unit.cluster.kube = maxVersion(unit.cluster.kube, ver);
        else unit.cluster.ocp = maxVersion(unit.cluster.ocp, ver);
        break;
      }
      case "olm.cluster.nextMinor":
        unit.cluster.kube = nextMinor(unit.cluster.kube);
        unit.cluster.ocp = nextMinor(unit.cluster.ocp);
        break;
      default:
        return fail("InvalidConstraint", `input ${input.name}: unknown constraint type ${JSON.stringify(c.type)}`);
    }
  }
  unit.channel = channel;
  let cands: readonly Entity[];
  let pt = "the catalogs";
  if (pkg) {
    cands = set.byPackage(pkg);
    pt = `package ${pkg}`;
    if (cands.length === 0) return withEmpty(unit, `no operators found in package ${pkg} in the catalogs ${where}`);
  } else cands = set.entities;
  if (catalog) {
    if (!set.hasCatalog(catalog)) return withEmpty(unit, `no operators found from catalog ${catalog} ${where} (no catalog of that name was given)`);
    cands = cands.filter((e) => e.catalog === catalog);
    if (cands.length === 0) return withEmpty(unit, `no operators found in ${pt} in catalog ${catalog} ${where}`);
    pt += ` in catalog ${catalog}`;
  }
  let rank: Map<Entity, number> | undefined;
  if (channel) {
    cands = cands.filter((e) => e.channels.some((c) => c.channel === channel));
    if (cands.length === 0) return withEmpty(unit, `no operators found in channel ${channel} of ${pt} ${where}`);
    pt = `channel ${channel} of ${pt}`;
    rank = new Map();
    for (const e of cands) {
      const list = set.channel(e.catalog, e.package, channel) ?? [];
      rank.set(e, list.indexOf(e));
    }
  }
  for (const f of filters) {
    cands = cands.filter(f.test);
    if (cands.length === 0) return withEmpty(unit, f.empty(pt));
  }
  let list = [...cands];
  if (!unit.force) {
    const before = list;
    list = list.filter(allowed);
    const pkgs = new Set(before.map((e) => e.package));
    for (const p of pkgs) {
      const inst = installed.get(p);
      if (!inst) continue;
      if (inst.entity.virtual && filters.every((f) => f.test(inst.entity))) list.push(inst.entity);
    }
    if (list.length === 0) {
      const insts = [...pkgs].map((p) => installed.get(p)).filter((x): x is Installed => x !== undefined);
      const names = before.slice(0, 5).map((e) => e.name);
      return withEmpty(
        unit,
        `input ${input.name} matches only ${listText(names)}${before.length > 5 ? ` and ${before.length - 5} more` : ""}, none of which is installed or upgrades from the installed ${listText(insts.map((i) => i.entity.name))} (replaces, skips or skipRange); use an InputClass with force to leave the upgrade graph`,
      );
    }
  }
  list.sort(preferenceOrder(rank, false));
  // The installed bundle is the least preferred option ("stay where you are").
  const instNames = new Set([...installed.values()].map((i) => i.entity.name));
  list = [...list.filter((e) => !instNames.has(e.name) || installed.get(e.package)?.entity.name !== e.name), ...list.filter((e) => instNames.has(e.name) && installed.get(e.package)?.entity.name === e.name)];
  unit.candidates = list;
  return unit;
}

function withEmpty(unit: Unit, reason: string): Unit {
  if (unit.force) {
    unit.failure = { reason: "NoMatchingBundles", message: reason };
    return unit;
  }
  unit.emptyReason = reason;
  return unit;
}
