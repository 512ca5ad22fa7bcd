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
 */
import { byteCompare } from "../fbc/model.js";
import type { JsonValue, Property } from "../fbc/types.js";
import { RawJson } from "../fbc/rawjson.js";
import { packageVersionMatcher, SemverError, type Range, type Version } from "../semver/index.js";
import {
  atMost,
  dependency,
  formatSearchPosition,
  mandatory,
  prohibited,
  solve,
  variable,
  withMessage,
  type Constraint,
  type Variable,
} from "./sat/index.js";
import {
  clusterFacts,
  gvkKey,
  isDeprecated,
  operandRefs,
  tolerant,
  upgradesFrom,
  type CatalogSet,
  type Entity,
} from "./catalog.js";
import {
  entryText,
  parseOperandRange,
  SCHEMA_OPERAND,
  SCHEMA_RELATED_IMAGES,
  type OperandEntry,
  type OperandImage,
  type OperandReference,
} from "./operands.js";
import {
  DEFAULT_INPUT_CLASSES,
  type ClusterDescription,
  type Input,
  type InputClass,
  type InputClassParameters,
  type InstalledOperator,
} from "./inputs.js";
import { compileCel, dependenciesOf, matching, type Predicate } from "./predicates.js";
import { because, bySemver, explainUnsat, listText, offering } from "./explain.js";
import { parseProperties, PROPERTY_RELATED_IMAGE_BUNDLE } from "../fbc/properties.js";

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
  /** Operand / related-image entries installed for this instance (docs/operands.md); absent when none. */
  operands?: OperandInstanceReference[];
  conditions: Condition[];
}

/** An operand or related-image entry an instance uses, and the constraints it meets. */
export interface OperandInstanceReference {
  schema: OperandEntry["schema"];
  name: string;
  version: string;
  catalog: string;
  meets: JsonValue[];
}

/**
 * An operand (`olm.operand`) or related-image (`olm.relatedimages`) entry of the resolveset
 * (docs/operands.md): installed beside the bundles that need it, with its images.
 */
export interface ResolvedOperand {
  schema: OperandEntry["schema"];
  name: string;
  version: string;
  /** The package the entry is scoped to ("" = any). */
  package: string;
  catalog: string;
  images: OperandImage[];
  /** Inputs that asked for it (an `olm.operand` input constraint). */
  requestedBy: string[];
  /** Bundles of the resolveset that require it (`olm.operand.required`, `olm.relatedImageBundle`). */
  requiredBy: string[];
  /** Bundles of the resolveset that manage it (`olm.operand.supported` covers it); operands only. */
  managedBy: string[];
  dryRun: boolean;
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

/** The answer: the resolveset (docs/cluster.md) with per-Input status. */
export interface ResolveSet {
  apiVersion: "deppy.io/v1";
  kind: "ResolveSet";
  /** True when every Input resolved. */
  resolved: boolean;
  /** True when every Input is a dry run (no Instance would be created). */
  dryRun: boolean;
  bundles: ResolvedBundle[];
  /** Operand and related-image entries chosen (docs/operands.md), by schema, name and version. */
  operands: ResolvedOperand[];
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
  /** `olm.operand` input constraints (docs/operands.md). */
  operandRequests: OperandRequest[];
  /** With operand requests: per candidate, per request, the entries it may use, preferred first. */
  operandChoices?: Map<Entity, OperandEntry[][]>;
}

/** An `olm.operand` input constraint: an operand the Input's operator must manage. */
interface OperandRequest {
  name: string;
  /** The version text ("" = any version). */
  version: string;
  range?: Range;
  meets: JsonValue;
}

interface Installed {
  op: InstalledOperator;
  entity: Entity;
  version?: Version;
  allowed: Set<string>;
  successors: Entity[];
}

const PARAM_DEFAULTS: InputClassParameters = {
  force: false,
  generateInputsForDependencies: false,
  dryRun: false,
  trace: false,
  constraints: [],
};

function maxVersion(a: Version | undefined, b: Version | undefined): Version | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.compare(b) >= 0 ? a : b;
}

function nextMinor(v: Version | undefined): Version | undefined {
  return v ? tolerant(`${v.major}.${v.minor + 1n}.0`) : undefined;
}

function virtualEntity(op: InstalledOperator): Entity {
  const version = op.version ? tolerant(op.version) : undefined;
  const props: Property[] = [
    { type: "olm.package", value: RawJson.fromValue({ packageName: op.package, version: op.version ?? "" }) },
  ];
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
    parsed: {
      packages: [{ packageName: op.package, version: op.version ?? "", release: "" }],
      packagesRequired: [],
      gvks: [],
      gvksRequired: [],
      bundleObjects: 0,
      csvMetadatas: [],
      channels: [],
      others: [],
    },
    provides: [],
    keys: ["pkg:" + op.package],
    virtual: true,
  };
}

/**
 * The installed bundle with the properties the cluster records for it (an edited `olm.properties`
 * annotation): a copy of the catalog's entity (or a virtual one) whose provided and required APIs
 * come from those properties. Undecodable properties leave the catalog's view in place.
 */
function overriddenEntity(op: InstalledOperator, base: Entity | undefined, warnings: string[]): Entity {
  const props: Property[] = (op.properties ?? []).map((p) => ({ type: p.type, value: RawJson.fromValue(p.value) }));
  let parsed;
  try {
    parsed = parseProperties(props);
  } catch (e) {
    warnings.push(
      `installed bundle ${op.bundle}: its recorded properties do ` +
        `not decode (${(e as Error).message}); the catalog's are used`,
    );
    return base ?? virtualEntity(op);
  }
  const v = virtualEntity(op);
  const provides = [...new Set(parsed.gvks.map(gvkKey))];
  return {
    ...(base ?? v),
    id: `${op.bundle} (installed)`,
    properties: props,
    parsed,
    provides,
    keys: ["pkg:" + op.package, ...provides.map((g) => "gvk:" + g)],
    virtual: true,
    rank: Number.MAX_SAFE_INTEGER,
    ordinal: Number.MAX_SAFE_INTEGER,
  };
}

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

/** The request's InputClasses (defaults overridden by name) and the described cluster's versions. */
interface Settings {
  classes: Map<string, InputClassParameters>;
  kube?: Version;
  ocp?: Version;
  /** The resolution's warnings so far (the catalog set's first); later phases append. */
  warnings: string[];
}

function readSettings(req: ResolveRequest): Settings {
  const classes = new Map<string, InputClassParameters>();
  for (const c of DEFAULT_INPUT_CLASSES) classes.set(c.name, c.parameters);
  for (const c of req.classes ?? []) classes.set(c.name, c.parameters);
  const kube = req.cluster?.kubernetesVersion ? tolerant(req.cluster.kubernetesVersion) : undefined;
  const ocp = req.cluster?.openshiftVersion ? tolerant(req.cluster.openshiftVersion) : undefined;
  const warnings = [...req.catalogs.warnings];
  if (req.cluster?.kubernetesVersion && !kube)
    warnings.push(
      `cluster Kubernetes version ${JSON.stringify(req.cluster.kubernetesVersion)} is not a version; ignored`,
    );
  if (req.cluster?.openshiftVersion && !ocp)
    warnings.push(
      `cluster OpenShift version ${JSON.stringify(req.cluster.openshiftVersion)} is not a version; ignored`,
    );
  return { classes, kube, ocp, warnings };
}

/** The installed operators by package, and which entities they allow (stay or upgrade along edges). */
interface InstalledOperators {
  byPackage: Map<string, Installed>;
  /** False for a bundle of an installed package that is neither the installed one nor an upgrade of it. */
  allowed: (e: Entity) => boolean;
}

function gatherInstalled(set: CatalogSet, ops: readonly InstalledOperator[], warnings: string[]): InstalledOperators {
  const installed = new Map<string, Installed>();
  for (const op of ops) {
    if (installed.has(op.package)) {
      warnings.push(`installed package ${op.package} is listed more than once; the first entry is used`);
      continue;
    }
    const found = set.byName(op.bundle).filter((e) => e.package === op.package);
    const fromCatalog = found.find((e) => e.catalog === op.catalog) ?? found[0];
    const entity = op.properties ? overriddenEntity(op, fromCatalog, warnings) : (fromCatalog ?? virtualEntity(op));
    const version = entity.version ?? (op.version ? tolerant(op.version) : undefined);
    const successors = set.byPackage(op.package).filter((e) => upgradesFrom(e, op.bundle, version));
    // with recorded properties the installed bundle is the overridden entity, not the catalog's copy
    installed.set(op.package, {
      op,
      entity,
      version,
      successors,
      allowed: new Set([...(entity.virtual ? [] : [op.bundle]), ...successors.map((e) => e.name)]),
    });
  }
  const allowed = (e: Entity): boolean => {
    const i = installed.get(e.package);
    return !i || (e.virtual ? e === i.entity : i.allowed.has(e.name));
  };
  return { byPackage: installed, allowed };
}

/** The units to solve, the forced Inputs (resolved without solving) and every Input's status. */
interface Units {
  /** One per Input (not forced, not failed), then one per installed package no Input covers. */
  units: Unit[];
  forced: { unit: Unit; input: Input }[];
  /** The status of each Input's unit (failed and forced ones included). */
  statusOf: Map<Unit, InputStatus>;
  /** Every Input's status, in request order. */
  statuses: InputStatus[];
}

function buildUnits(
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

/**
 * A bundle dependency (`olm.gvk.required`, `olm.package.required`,
 * `olm.constraint`) and its candidates, preferred first.
 */
interface DependencyCandidates {
  pred: Predicate;
  cands: Entity[];
}

/** A required operand or related-image entry (docs/operands.md) and its candidates, preferred first. */
interface RequiredEntryCandidates {
  ref: OperandReference;
  cands: OperandEntry[];
}

/**
 * The candidates of everything a resolution reaches, memoised: a bundle's dependencies and
 * required entries, an operand entry's supporting bundles. The preference (newest or minimal)
 * of a bundle or entry is the one of the first unit that reaches it ({@link groupUnits} sets it).
 */
class Candidates {
  readonly prefOf = new Map<Entity, "newest" | "minimal">();
  readonly entryPref = new Map<OperandEntry, "newest" | "minimal">();
  private readonly depCands = new Map<Entity, DependencyCandidates[]>();
  private readonly reqCands = new Map<Entity, RequiredEntryCandidates[]>();
  private readonly supCands = new Map<OperandEntry, Entity[]>();

  constructor(
    private readonly set: CatalogSet,
    private readonly installed: InstalledOperators,
  ) {}

  private isInstalled(x: Entity): boolean {
    return this.installed.byPackage.get(x.package)?.entity.name === x.name;
  }

  /** The bundle's dependencies: installed first, then its own catalog, then preference order. */
  dependencies(e: Entity): DependencyCandidates[] {
    let l = this.depCands.get(e);
    if (l) return l;
    const minimal = this.prefOf.get(e) === "minimal";
    l = dependenciesOf(e).map((pred) => {
      const cands = matching(this.set, pred).filter(this.installed.allowed);
      for (const i of this.installed.byPackage.values())
        if (i.entity.virtual && pred.test(i.entity)) cands.push(i.entity);
      cands.sort(
        (a, b) =>
          Number(this.isInstalled(b)) - Number(this.isInstalled(a)) ||
          Number(b.catalog === e.catalog) - Number(a.catalog === e.catalog) ||
          preferenceOrder(undefined, minimal)(a, b),
      );
      return { pred, cands };
    });
    this.depCands.set(e, l);
    return l;
  }

  /** Operands (docs/operands.md): the entries the bundle requires (`olm.operand.required`, `olm.relatedImageBundle`) */
  required(e: Entity): RequiredEntryCandidates[] {
    let l = this.reqCands.get(e);
    if (l) return l;
    const minimal = this.prefOf.get(e) === "minimal";
    l = operandRefs(e).required.map((ref) => {
      const schema = ref.type === PROPERTY_RELATED_IMAGE_BUNDLE ? SCHEMA_RELATED_IMAGES : SCHEMA_OPERAND;
      return {
        ref,
        cands: orderEntries(
          this.set
            .operands(schema, ref.name)
            .filter((o) => ref.range(o.version) && (o.package === "" || o.package === e.package)),
          minimal,
        ),
      };
    });
    this.reqCands.set(e, l);
    return l;
  }

  /** Operands (docs/operands.md): the bundles that may manage an `olm.operand` entry (`olm.operand.supported`). */
  supporters(o: OperandEntry): Entity[] {
    let l = this.supCands.get(o);
    if (l) return l;
    const minimal = this.entryPref.get(o) === "minimal";
    l = this.set.supportersOf(o).filter(this.installed.allowed);
    l.sort(
      (a, b) =>
        Number(this.isInstalled(b)) - Number(this.isInstalled(a)) ||
        Number(b.catalog === o.catalog) - Number(a.catalog === o.catalog) ||
        preferenceOrder(undefined, minimal)(a, b),
    );
    this.supCands.set(o, l);
    return l;
  }
}

/** Units solved together, with the bundles and entries they reach (in reaching order). */
interface Group {
  units: Unit[];
  entities: Entity[];
  entries: OperandEntry[];
}

/**
 * Reachability and grouping: walks from every unit's candidates through dependencies, required
 * entries and supporters, joining units (union-find) that reach a shared bundle, entry, package or
 * GVK. Groups come in the order of their first unit.
 */
function groupUnits(units: readonly Unit[], candidates: Candidates): Group[] {
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
  const entryOwner = new Map<OperandEntry, number>();
  const entryOrder: OperandEntry[] = [];
  units.forEach((u, ui) => {
    const pref = u.params.dependencyPreference ?? "newest";
    const queue: (Entity | OperandEntry)[] = [...u.candidates];
    if (u.operandChoices) for (const per of u.operandChoices.values()) for (const l of per) queue.push(...l);
    for (let qi = 0; qi < queue.length; qi++) {
      const n = queue[qi];
      if (isEntry(n)) {
        const o = entryOwner.get(n);
        if (o !== undefined) {
          union(ui, o);
          continue;
        }
        entryOwner.set(n, ui);
        entryOrder.push(n);
        if (!candidates.entryPref.has(n)) candidates.entryPref.set(n, pref);
        for (const k of n.keys) {
          const ko = keyOwner.get(k);
          if (ko === undefined) keyOwner.set(k, ui);
          else union(ui, ko);
        }
        for (const c of candidates.supporters(n)) queue.push(c);
        continue;
      }
      const e = n;
      const o = owner.get(e);
      if (o !== undefined) {
        union(ui, o);
        continue;
      }
      owner.set(e, ui);
      order.push(e);
      if (!candidates.prefOf.has(e)) candidates.prefOf.set(e, pref);
      for (const k of e.keys) {
        const ko = keyOwner.get(k);
        if (ko === undefined) keyOwner.set(k, ui);
        else union(ui, ko);
      }
      for (const d of candidates.dependencies(e)) for (const c of d.cands) queue.push(c);
      for (const r of candidates.required(e)) for (const c of r.cands) queue.push(c);
    }
  });
  const byRoot = new Map<number, number[]>();
  units.forEach((_, i) => {
    const r = find(i);
    const g = byRoot.get(r);
    if (g) g.push(i);
    else byRoot.set(r, [i]);
  });
  return [...byRoot.values()].map((idxs) => {
    const inGroup = new Set(idxs);
    return {
      units: idxs.map((i) => units[i]),
      entities: order.filter((e) => inGroup.has(owner.get(e) as number)),
      entries: entryOrder.filter((o) => inGroup.has(entryOwner.get(o) as number)),
    };
  });
}

/**
 * The SAT encoding of one group: its units' variables (with "input via bundle" variables for
 * operand requests), one variable per bundle (cluster limits, deprecation, dependencies, required
 * entries) and per entry (supporting bundles), then the uniqueness variables (per entry key,
 * package, and GVK provided by several packages).
 */
function encodeGroup(
  group: Group,
  candidates: Candidates,
  installedOps: InstalledOperators,
  set: CatalogSet,
): Variable[] {
  const installed = installedOps.byPackage;
  let kube: Version | undefined;
  let ocp: Version | undefined;
  for (const u of group.units) {
    kube = maxVersion(kube, u.cluster.kube);
    ocp = maxVersion(ocp, u.cluster.ocp);
  }
  const vars: Variable[] = [];
  const aux: Variable[] = [];
  for (const u of group.units) {
    const names = u.candidates.map((c) => c.id);
    // the sentences list candidates in semver order; the dependency keeps the preference order
    const sorted = bySemver(u.candidates).map((c) => c.id);
    if (u.operandChoices && u.candidates.length > 0) {
      // One variable per candidate: "the input is met by this bundle with these operands".
      const vias = u.candidates.map((c) => viaId(u, c));
      vars.push(
        variable(
          u.varId,
          withMessage(mandatory(), `input ${u.name} is requested`),
          offeringOf(
            u,
            withMessage(
              dependency(...vias),
              `input ${u.name} can be satisfied only by ${listText(sorted)}, each managing the operands it asks for`,
            ),
          ),
        ),
      );
      u.candidates.forEach((c, ci) => {
        const per = u.operandChoices?.get(c) ?? [];
        const cs: Constraint[] = [withMessage(dependency(c.id), `input ${u.name} through ${c.id} installs it`)];
        u.operandRequests.forEach((r, ri) => {
          const ids = (per[ri] ?? []).map((o) => o.id);
          cs.push(
            withMessage(
              dependency(...ids),
              `input ${u.name} asks for operand ${r.name}${r.version ? ` in version range ${r.version}` : ""}, ` +
                `which ${c.id} manages only as ${listText(ids)}`,
            ),
          );
        });
        aux.push(variable(vias[ci], ...cs));
      });
      continue;
    }
    const dep =
      u.candidates.length === 0
        ? withMessage(dependency(), u.emptyReason ?? `no bundle matches ${u.kind} ${u.name}`)
        : offeringOf(
            u,
            withMessage(
              dependency(...names),
              u.kind === "input"
                ? `input ${u.name} can be satisfied only by ${listText(sorted)}`
                : `installed operator ${u.name} can only stay at ` +
                    `${u.candidates.find((c) => installed.get(u.name)?.entity === c)?.id ?? "?"} ` +
                    `or move along its upgrade edges to ` +
                    `${listText(sorted.filter((n) => n !== installed.get(u.name)?.entity.id)) || "nothing"}`,
            ),
          );
    vars.push(
      variable(
        u.varId,
        withMessage(
          mandatory(),
          u.kind === "input" ? `input ${u.name} is requested` : `${installed.get(u.name)?.entity.name} is installed`,
        ),
        dep,
      ),
    );
  }
  vars.push(...aux);
  const byPkg = new Map<string, Entity[]>();
  const byGvk = new Map<string, Entity[]>();
  for (const e of group.entities) {
    const cs = [...clusterConstraints(e, kube, ocp), ...dependencyConstraints(e, candidates, set)];
    vars.push(variable(e.id, ...cs));
    push(byPkg, e.package, e);
    for (const g of e.provides) push(byGvk, g, e);
  }
  const byEntryKey = new Map<string, OperandEntry[]>();
  for (const o of group.entries) {
    const cs: Constraint[] = [];
    if (o.schema === SCHEMA_OPERAND) {
      const ids = candidates.supporters(o).map((c) => c.id);
      cs.push(
        ids.length === 0
          ? withMessage(
              dependency(),
              `${o.id} needs an operator that manages it, but no bundle in the catalogs supports ${o.name} ` +
                `${o.versionText} (olm.operand.supported)${o.package ? ` in package ${o.package}` : ""}`,
            )
          : withMessage(
              dependency(...ids),
              `${o.id} must be managed by an operator supporting ${o.name} ${o.versionText}: ${listText(ids)}`,
            ),
      );
    }
    vars.push(variable(o.id, ...cs));
    for (const k of o.keys) push(byEntryKey, k, o);
  }
  vars.push(...uniquenessVariables(byEntryKey, byPkg, byGvk));
  return vars;
}

/** `c`, recorded as listing the candidates of the unit (for the explanation of a failure). */
const offeringOf = (u: Unit, c: Constraint): Constraint =>
  offering(c, u.kind === "input" ? `input ${u.name}` : `installed operator ${u.name}`, u.candidates);

/** Prohibitions of a catalog bundle: a cluster too old (minKubeVersion) or new (maxOpenShiftVersion), deprecation. */
function clusterConstraints(e: Entity, kube: Version | undefined, ocp: Version | undefined): Constraint[] {
  if (e.virtual) return [];
  const cs: Constraint[] = [];
  // The facts (a CSV may have to be decoded) are only derived when a cluster is described.
  const f = kube || ocp ? clusterFacts(e) : undefined;
  const mkv = kube ? f?.minKube : undefined;
  if (kube && mkv && mkv.compare(kube) > 0)
    cs.push(
      because(
        prohibited(),
        e,
        `requires Kubernetes ${f?.minKubeVersion} or newer but the cluster runs ${kube.toString()}`,
        {
          fix: "upgrade the cluster",
          orElse: `ask for a version of ${e.package} that supports Kubernetes ${kube.toString()}`,
        },
      ),
    );
  const mov = ocp ? f?.maxOpenShift : undefined;
  if (ocp && mov && (ocp.major > mov.major || (ocp.major === mov.major && ocp.minor > mov.minor))) {
    const runs = `${ocp.major}.${ocp.minor}`;
    cs.push(
      because(prohibited(), e, `supports OpenShift up to ${f?.maxOpenShiftVersion} but the cluster runs ${runs}`, {
        orElse: `ask for a version of ${e.package} that supports OpenShift ${runs}`,
      }),
    );
  }
  if (isDeprecated(e))
    cs.push(
      because(prohibited(), e, "is deprecated", { orElse: `ask for another version or channel of ${e.package}` }),
    );
  return cs;
}

/** A bundle's dependencies on operators (required GVKs, packages, olm.constraint) and on operand entries. */
function dependencyConstraints(e: Entity, candidates: Candidates, set: CatalogSet): Constraint[] {
  const cs: Constraint[] = [];
  for (const { pred, cands } of candidates.dependencies(e)) {
    const ids = cands.map((c) => c.id);
    const text = `requires an operator ${pred.text}`;
    if (ids.length === 0) {
      const why = pred.error ? ` (${pred.error})` : pred.failureMessage ? `: ${pred.failureMessage}` : "";
      const fix = {
        fix: "add a catalog with an operator that satisfies it",
        orElse: `ask for another version of ${e.package}`,
      };
      cs.push(because(dependency(), e, `${text}, but no bundle in the catalogs satisfies it${why}`, fix));
    } else cs.push(because(dependency(...ids), e, `${text}, satisfied only by ${listText(ids)}`));
  }
  for (const { ref, cands } of candidates.required(e)) {
    const ids = cands.map((c) => c.id);
    const what = ref.type === PROPERTY_RELATED_IMAGE_BUNDLE ? `the related images ${ref.name}` : `operand ${ref.name}`;
    const text = `requires ${what} in version range ${ref.version} (${ref.type})`;
    if (ids.length === 0) {
      const schema = ref.type === PROPERTY_RELATED_IMAGE_BUNDLE ? SCHEMA_RELATED_IMAGES : SCHEMA_OPERAND;
      const have = set.operands(schema, ref.name).filter((o) => o.package === "" || o.package === e.package);
      const versions = [...new Set(have.map((o) => o.versionText))];
      const had = versions.length > 0 ? ` (the catalogs have ${listText(versions)})` : "";
      const fix = {
        fix: `add a catalog with a matching ${schema} entry`,
        orElse: `ask for another version of ${e.package}`,
      };
      cs.push(because(dependency(), e, `${text}, but no ${schema} entry in the catalogs matches it${had}`, fix));
    } else cs.push(because(dependency(...ids), e, `${text}, satisfied only by ${listText(ids)}`));
  }
  return cs;
}

/** At most one version per related-image name or operand version key, one bundle per package, one provider per GVK. */
function uniquenessVariables(
  byEntryKey: Map<string, OperandEntry[]>,
  byPkg: Map<string, Entity[]>,
  byGvk: Map<string, Entity[]>,
): Variable[] {
  const vars: Variable[] = [];
  for (const l of byEntryKey.values()) {
    if (l.length < 2) continue;
    const ids = l.map((o) => o.id);
    const o = l[0];
    if (o.schema === SCHEMA_RELATED_IMAGES) {
      vars.push(
        variable(
          `${o.schema} ${o.name} uniqueness`,
          withMessage(mandatory(), `there can be only one version of the related images ${o.name}`),
          withMessage(
            atMost(1, ...ids),
            `${listText(ids)} are versions of the related images ${o.name}, and only one of them can be installed`,
          ),
        ),
      );
    } else {
      vars.push(
        variable(
          `${entryText(o)}${o.package ? ` for package ${o.package}` : ""} uniqueness`,
          withMessage(mandatory(), `there can be only one ${entryText(o)}`),
          withMessage(
            atMost(1, ...ids),
            `${listText(ids)} are the same operand version from ` +
              `different catalogs, and only one of them can be installed`,
          ),
        ),
      );
    }
  }
  for (const [p, l] of byPkg) {
    if (l.length < 2) continue;
    const ids = l.map((e) => e.id);
    vars.push(
      variable(
        `package ${p} uniqueness`,
        withMessage(mandatory(), `there can be only one operator from package ${p}`),
        withMessage(
          atMost(1, ...ids),
          `${listText(bySemver(l).map((e) => e.id))} originate from package ${p}, and only one of them can be ` +
            `installed (to fix: ask for one version of ${p})`,
        ),
      ),
    );
  }
  for (const [g, l] of byGvk) {
    if (l.length < 2 || new Set(l.map((e) => e.package)).size < 2) continue;
    const ids = l.map((e) => e.id);
    const [group, version, kind] = g.split("/");
    const gt = `${kind} (${group}/${version})`;
    vars.push(
      variable(
        `${gt} uniqueness`,
        withMessage(mandatory(), `there can be only one provider of ${gt}`),
        withMessage(
          atMost(1, ...ids),
          `${listText(bySemver(l).map((e) => e.id))} provide ${gt}, and there can be only one provider of it ` +
            `(to fix: ask for only one of the packages ${listText([...new Set(l.map((e) => e.package))].sort())})`,
        ),
      ),
    );
  }
  return vars;
}

/** A dependency edge between two selected bundles, and the constraint it meets. */
interface Edge {
  from: Entity;
  to: Entity;
  meets: JsonValue;
}

/** Operands (docs/operands.md): an entry required by a bundle or requested by a unit (through its bundle). */
interface EntryUse {
  entry: OperandEntry;
  by?: Entity;
  unit?: Unit;
  meets: JsonValue;
}

/** What the solved groups selected, accumulated group by group. */
interface Selection {
  /** Selected bundle → the units of its group. */
  selected: Map<Entity, Unit[]>;
  selectedEntries: Map<OperandEntry, Unit[]>;
  edges: Edge[];
  entryUses: EntryUse[];
  /** The bundle chosen for each unit. */
  chosenBy: Map<Unit, Entity>;
}

function emptySelection(): Selection {
  return { selected: new Map(), selectedEntries: new Map(), edges: [], entryUses: [], chosenBy: new Map() };
}

/**
 * Solves one group (appending to `trace` when given) and records the outcome: the selection, or
 * a ResolutionFailed condition (with missing dependencies of the first candidate) on its Inputs.
 */
function solveGroup(
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

/**
 * The resolveset from the selection: Input instances, bundles (selected, then forced), operand
 * entries, generated Inputs and installed operators' update options. Sets no trace.
 */
function assembleResolveSet(
  set: CatalogSet,
  inputs: readonly Input[],
  settings: Settings,
  installedOps: InstalledOperators,
  units: Units,
  selection: Selection,
): ResolveSet {
  const requested = assembleInstances(selection, units.statusOf);
  const channelFor = (e: Entity): string => channelOf(e, set, installedOps.byPackage, selection.chosenBy);
  const { bundles, forcedEntries } = assembleBundles(installedOps, units, selection, requested, channelFor);
  const operands = assembleOperands(set, units.forced, selection, forcedEntries);
  const generated = generateInputs(inputs, installedOps, selection, requested, channelFor);
  const installedStatus = installedStatuses(set, installedOps);
  bundles.sort(
    (a, b) => byteCompare(a.package, b.package) || byteCompare(a.name, b.name) || byteCompare(a.catalog, b.catalog),
  );
  const statuses = units.statuses;
  return {
    apiVersion: "deppy.io/v1",
    kind: "ResolveSet",
    resolved: statuses.every((s) => !s.conditions.some((c) => c.type === "ResolutionFailed" && c.status === "True")),
    dryRun: statuses.length > 0 && statuses.every((s) => s.dryRun),
    bundles,
    operands,
    inputs: statuses,
    generatedInputs: generated,
    installed: installedStatus,
    warnings: settings.warnings,
  };
}

/** References to other instances, one per name, with every constraint met. */
function instanceRefs(pairs: { other: Entity; meets: JsonValue }[]): InstanceReference[] {
  const m = new Map<string, InstanceReference>();
  for (const p of pairs) {
    const r = m.get(p.other.name) ?? { kind: "Instance" as const, name: p.other.name, meets: [] };
    r.meets.push(p.meets);
    m.set(p.other.name, r);
  }
  return [...m.values()];
}

/** The entries bundle `e` uses: required by it, or requested by unit `u` through it. */
function operandRefsOf(entryUses: readonly EntryUse[], e: Entity, u: Unit | undefined): OperandInstanceReference[] {
  const m = new Map<OperandEntry, OperandInstanceReference>();
  for (const x of entryUses) {
    if (x.by !== e || (x.unit !== undefined && x.unit !== u)) continue;
    const r = m.get(x.entry) ?? {
      schema: x.entry.schema,
      name: x.entry.name,
      version: x.entry.versionText,
      catalog: x.entry.catalog,
      meets: [],
    };
    r.meets.push(x.meets);
    m.set(x.entry, r);
  }
  return [...m.values()];
}

/** The instance of each resolved Input; returns the Inputs requesting each chosen bundle. */
function assembleInstances(selection: Selection, statusOf: Map<Unit, InputStatus>): Map<Entity, string[]> {
  const { edges } = selection;
  const requested = new Map<Entity, string[]>();
  for (const [u, e] of selection.chosenBy) {
    if (u.kind === "input") push(requested, e, u.name);
    const st = statusOf.get(u);
    if (!st) continue;
    const inst = instanceOf(
      e,
      instanceRefs(edges.filter((x) => x.from === e).map((x) => ({ other: x.to, meets: x.meets }))),
      instanceRefs(edges.filter((x) => x.to === e).map((x) => ({ other: x.from, meets: x.meets }))),
      [],
    );
    const ops = operandRefsOf(selection.entryUses, e, u);
    if (ops.length > 0) inst.operands = ops;
    st.instances.push(inst);
  }
  return requested;
}

/** The channel of a resolved bundle: the Input's, the installed operator's, the default, or its first. */
function channelOf(e: Entity, set: CatalogSet, installed: Map<string, Installed>, chosenBy: Map<Unit, Entity>): string {
  for (const [u, c] of chosenBy)
    if (c === e && u.channel && e.channels.some((ch) => ch.channel === u.channel)) return u.channel;
  const inst = installed.get(e.package);
  if (inst?.op.channel && e.channels.some((ch) => ch.channel === inst.op.channel)) return inst.op.channel;
  const def = e.catalog ? set.defaultChannel(e.catalog, e.package) : "";
  return e.channels.find((c) => c.channel === def)?.channel ?? e.channels[0]?.channel ?? "";
}

/**
 * The bundles of the resolveset: the selected ones (install, upgrade or unchanged), then every
 * candidate of the forced Inputs (with their instances and the operands they ask for, which
 * `selection.entryUses` receives). Returns the forced entries with their dry-run flag.
 */
function assembleBundles(
  installedOps: InstalledOperators,
  units: Units,
  selection: Selection,
  requested: Map<Entity, string[]>,
  channelFor: (e: Entity) => string,
): { bundles: ResolvedBundle[]; forcedEntries: Map<OperandEntry, boolean> } {
  const installed = installedOps.byPackage;
  const { edges, entryUses } = selection;
  const bundles: ResolvedBundle[] = [];
  const toBundle = (
    e: Entity,
    action: ResolvedBundle["action"],
    dryRun: boolean,
    pivotFrom?: string,
  ): ResolvedBundle => {
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
      properties: e.properties
        .filter((p) => p.type !== "olm.bundle.object" && !p.value.isMissing)
        .map((p) => ({ type: p.type, value: p.value.value })),
    };
    if (pivotFrom) b.pivotFrom = pivotFrom;
    return b;
  };
  for (const [e, gUnits] of selection.selected) {
    const inst = installed.get(e.package);
    if (inst && inst.entity.name === e.name) bundles.push(toBundle(e, "unchanged", groupDryRun(gUnits)));
    else if (inst) bundles.push(toBundle(e, "upgrade", groupDryRun(gUnits), inst.entity.name));
    else bundles.push(toBundle(e, "install", groupDryRun(gUnits)));
  }
  const forcedEntries = new Map<OperandEntry, boolean>(); // entry → dry run
  for (const { unit, input } of units.forced) {
    const st = units.statusOf.get(unit) as InputStatus;
    for (const e of unit.candidates) {
      const inst = installed.get(e.package);
      requested.set(e, [...(requested.get(e) ?? []), input.name]);
      bundles.push(
        toBundle(e, "force", unit.params.dryRun, inst && inst.entity.name !== e.name ? inst.entity.name : undefined),
      );
      // Force resolves no dependencies, but installs the operands the Input asks for (newest compatible).
      const per = unit.operandChoices?.get(e) ?? [];
      unit.operandRequests.forEach((r, ri) => {
        const o = per[ri]?.[0];
        if (!o) return;
        entryUses.push({ entry: o, by: e, unit, meets: r.meets });
        forcedEntries.set(o, (forcedEntries.get(o) ?? true) && unit.params.dryRun);
      });
      const is = instanceOf(e, [], [], []);
      const ops = operandRefsOf(entryUses, e, unit);
      if (ops.length > 0) is.operands = ops;
      st.instances.push(is);
    }
  }
  return { bundles, forcedEntries };
}

/** A selection is a dry run when its group has Inputs and every one of them is a dry run. */
function groupDryRun(gUnits: readonly Unit[]): boolean {
  return gUnits.some((u) => u.kind === "input") && gUnits.every((u) => u.kind !== "input" || u.params.dryRun);
}

/** Operands (docs/operands.md): the operand and related-image entries of the resolveset, by schema, name, version. */
function assembleOperands(
  set: CatalogSet,
  forced: Units["forced"],
  selection: Selection,
  forcedEntries: Map<OperandEntry, boolean>,
): ResolvedOperand[] {
  const operands: ResolvedOperand[] = [];
  const chosen = new Set<Entity>(selection.selected.keys());
  for (const f of forced) for (const e of f.unit.candidates) chosen.add(e);
  const entryDry = new Map<OperandEntry, boolean>(forcedEntries);
  for (const [o, gUnits] of selection.selectedEntries) entryDry.set(o, groupDryRun(gUnits));
  const entryList = [...entryDry.keys()].sort(
    (a, b) =>
      byteCompare(a.schema, b.schema) ||
      byteCompare(a.name, b.name) ||
      a.version.compare(b.version) ||
      byteCompare(a.versionText, b.versionText) ||
      byteCompare(a.package, b.package) ||
      byteCompare(a.catalog, b.catalog),
  );
  for (const o of entryList) {
    const dryRun = entryDry.get(o) === true;
    const uses = selection.entryUses.filter((x) => x.entry === o);
    const managedBy =
      o.schema === SCHEMA_OPERAND
        ? [
            ...new Set(
              set
                .supportersOf(o)
                .filter((e) => chosen.has(e))
                .map((e) => e.name),
            ),
          ]
        : [];
    operands.push({
      schema: o.schema,
      name: o.name,
      version: o.versionText,
      package: o.package,
      catalog: o.catalog,
      images: o.images.map((i) => ({ name: i.name, image: i.image })),
      requestedBy: [...new Set(uses.filter((x) => x.unit?.kind === "input").map((x) => x.unit?.name as string))],
      requiredBy: [...new Set(uses.filter((x) => x.unit === undefined && x.by).map((x) => (x.by as Entity).name))],
      managedBy,
      dryRun,
    });
  }
  return operands;
}

/** Inputs for the selected dependencies of classes with `generateInputsForDependencies`. */
function generateInputs(
  inputs: readonly Input[],
  installedOps: InstalledOperators,
  selection: Selection,
  requested: Map<Entity, string[]>,
  channelFor: (e: Entity) => string,
): Input[] {
  const generated: Input[] = [];
  const genNames = new Set(inputs.map((i) => i.name));
  for (const [e, gUnits] of selection.selected) {
    if (requested.has(e) || e.virtual) continue;
    if (!gUnits.some((u) => u.kind === "input" && u.params.generateInputsForDependencies)) continue;
    if (installedOps.byPackage.get(e.package)?.op.subscribed) continue;
    let name = e.package;
    for (let i = 2; genNames.has(name); i++) name = `${e.package}-${i}`;
    genNames.add(name);
    generated.push({
      name,
      inputClass: "subscription",
      constraints: [{ type: "olm.catalog", value: { name: e.catalog, package: e.package, channel: channelFor(e) } }],
    });
  }
  return generated;
}

/** Update options per installed operator, by channel and catalog, with an UpdateAvailable condition. */
function installedStatuses(set: CatalogSet, installedOps: InstalledOperators): InstalledStatus[] {
  const installedStatus: InstalledStatus[] = [];
  for (const [pkg, inst] of installedOps.byPackage) {
    const channel = inst.op.channel ?? (inst.entity.catalog ? set.defaultChannel(inst.entity.catalog, pkg) : "");
    const buckets = new Map<string, UpdateOptions>();
    const sorted = [...inst.successors].sort(
      (a, b) => (a.version && b.version ? b.version.compare(a.version) : 0) || byteCompare(a.name, b.name),
    );
    for (const e of sorted) {
      for (const ch of e.channels) {
        if (!upgradesFrom(e, inst.entity.name, inst.version, ch.channel)) continue;
        const k = `${e.catalog}\0${ch.channel}`;
        const b = buckets.get(k) ?? { catalog: e.catalog, package: pkg, channel: ch.channel, options: [] };
        if (!b.options.includes(e.name)) b.options.push(e.name);
        buckets.set(k, b);
      }
    }
    const updates = [...buckets.values()].sort(
      (a, b) =>
        Number(b.channel === channel && b.catalog === inst.entity.catalog) -
          Number(a.channel === channel && a.catalog === inst.entity.catalog) ||
        set.priorityOf(b.catalog) - set.priorityOf(a.catalog) ||
        byteCompare(a.catalog, b.catalog) ||
        byteCompare(a.channel, b.channel),
    );
    const same = updates.find(
      (u) => u.channel === channel && (u.catalog === inst.entity.catalog || inst.entity.virtual),
    );
    const conditions: Condition[] = [];
    if (same)
      conditions.push({
        type: "UpdateAvailable",
        status: "True",
        reason: "UpdateFound",
        message: `updates are available in channel ${channel} of catalog ${same.catalog}: ${same.options.join(", ")}`,
      });
    else if (updates.length > 0)
      conditions.push({
        type: "UpdateAvailable",
        status: "True",
        reason: "CrossChannelUpdateFound",
        message: "updates have been found that require a change in the operator spec to apply",
      });
    else
      conditions.push({
        type: "UpdateAvailable",
        status: "False",
        reason: "NoUpdateFound",
        message: `no bundle in the catalogs upgrades from ${inst.entity.name}`,
      });
    installedStatus.push({
      package: pkg,
      bundle: inst.entity.name,
      version: inst.entity.versionText,
      updates,
      conditions,
    });
  }
  return installedStatus;
}

function instanceOf(
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

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/**
 * Catalog priority, catalog name, default channel, package name,
 * then channel order (or version ascending when minimal).
 */
function preferenceOrder(
  channelRank: Map<Entity, number> | undefined,
  minimal: boolean,
): (a: Entity, b: Entity) => number {
  return (a, b) => {
    if (a.virtual !== b.virtual) return a.virtual ? 1 : -1;
    const c = b.priority - a.priority || byteCompare(a.catalog, b.catalog);
    if (c !== 0) return c;
    if (a.package !== b.package)
      return Number(b.inDefaultChannel) - Number(a.inDefaultChannel) || byteCompare(a.package, b.package);
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

/** Operand entries in preference order: newest first (lowest first when minimal), catalog priority breaking ties. */
function orderEntries(list: readonly OperandEntry[], minimal: boolean): OperandEntry[] {
  if (!minimal) return [...list]; // CatalogSet.operands is already newest first
  return [...list].sort(
    (a, b) =>
      a.version.compare(b.version) ||
      b.priority - a.priority ||
      byteCompare(a.catalog, b.catalog) ||
      byteCompare(b.package, a.package) ||
      a.ordinal - b.ordinal,
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

function isEntry(n: Entity | OperandEntry): n is OperandEntry {
  return (n as OperandEntry).schema !== undefined;
}

/** The variable "input `u` is met by `c`" (inputs with operand requests). */
function viaId(u: Unit, c: Entity): string {
  return `input ${u.name} via ${c.id}`;
}
