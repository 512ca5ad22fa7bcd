/**
 * The resolver's unit model: a unit is what one mandatory variable stands for (an Input, or an
 * installed package no Input covers) with its candidate bundles in preference order. Here too are
 * what units are built from (the request's settings, the installed operators with their virtual or
 * overridden entities), the preference orders of bundles and operand entries, and variable names.
 */
import { byteCompare } from "../../fbc/model.js";
import type { JsonValue, Property } from "../../fbc/types.js";
import { RawJson } from "../../fbc/rawjson.js";
import { parseProperties } from "../../fbc/properties.js";
import type { Range, Version } from "../../semver/index.js";
import { gvkKey, tolerant, upgradesFrom, type CatalogSet, type Entity } from "../catalog.js";
import type { OperandEntry } from "../operands.js";
import { DEFAULT_INPUT_CLASSES, type Input, type InputClassParameters, type InstalledOperator } from "../inputs.js";
import type { InputStatus, ResolveRequest } from "./types.js";

export interface Unit {
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
export interface OperandRequest {
  name: string;
  /** The version text ("" = any version). */
  version: string;
  range?: Range;
  meets: JsonValue;
}

export interface Installed {
  op: InstalledOperator;
  entity: Entity;
  version?: Version;
  allowed: Set<string>;
  successors: Entity[];
}

export const PARAM_DEFAULTS: InputClassParameters = {
  force: false,
  generateInputsForDependencies: false,
  dryRun: false,
  trace: false,
  constraints: [],
};

export function maxVersion(a: Version | undefined, b: Version | undefined): Version | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.compare(b) >= 0 ? a : b;
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

/** The request's InputClasses (defaults overridden by name) and the described cluster's versions. */
export interface Settings {
  classes: Map<string, InputClassParameters>;
  kube?: Version;
  ocp?: Version;
  /** The resolution's warnings so far (the catalog set's first); later phases append. */
  warnings: string[];
}

export function readSettings(req: ResolveRequest): Settings {
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
export interface InstalledOperators {
  byPackage: Map<string, Installed>;
  /** False for a bundle of an installed package that is neither the installed one nor an upgrade of it. */
  allowed: (e: Entity) => boolean;
}

export function gatherInstalled(
  set: CatalogSet,
  ops: readonly InstalledOperator[],
  warnings: string[],
): InstalledOperators {
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
export interface Units {
  /** One per Input (not forced, not failed), then one per installed package no Input covers. */
  units: Unit[];
  forced: { unit: Unit; input: Input }[];
  /** The status of each Input's unit (failed and forced ones included). */
  statusOf: Map<Unit, InputStatus>;
  /** Every Input's status, in request order. */
  statuses: InputStatus[];
}

export function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/**
 * Catalog priority, catalog name, default channel, package name,
 * then channel order (or version ascending when minimal).
 */
export function preferenceOrder(
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

/** Operand entries in preference order: newest first (lowest first when minimal), catalog priority breaking ties. */
export function orderEntries(list: readonly OperandEntry[], minimal: boolean): OperandEntry[] {
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

/** The variable "input `u` is met by `c`" (inputs with operand requests). */
export function viaId(u: Unit, c: Entity): string {
  return `input ${u.name} via ${c.id}`;
}
