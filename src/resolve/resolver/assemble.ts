/**
 * The resolveset from what the solved groups selected: Input instances, bundles (selected, then
 * forced), operand entries, generated Inputs and the installed operators' update options.
 */
import { byteCompare } from "../../fbc/model.js";
import type { JsonValue } from "../../fbc/types.js";
import { upgradesFrom, type CatalogSet, type Entity } from "../catalog.js";
import { SCHEMA_OPERAND, type OperandEntry } from "../operands.js";
import type { Input } from "../inputs.js";
import type {
  Condition,
  InputStatus,
  InstalledStatus,
  InstanceReference,
  OperandInstanceReference,
  ResolvedBundle,
  ResolvedOperand,
  ResolveSet,
  UpdateOptions,
} from "./types.js";
import { instanceOf, type EntryUse, type Selection } from "./select.js";
import { push, type Installed, type InstalledOperators, type Settings, type Unit, type Units } from "./units.js";

/**
 * The resolveset from the selection: Input instances, bundles (selected, then forced), operand
 * entries, generated Inputs and installed operators' update options. Sets no trace.
 */
export function assembleResolveSet(
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
