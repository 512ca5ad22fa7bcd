/**
 * What a resolution reaches: the memoised candidates of bundles' dependencies and required operand
 * entries and of entries' supporting bundles ({@link Candidates}), and the grouping of units that
 * reach a shared bundle, entry, package or GVK into groups solved together ({@link groupUnits}).
 */
import { operandRefs, type CatalogSet, type Entity } from "../catalog.js";
import { SCHEMA_OPERAND, SCHEMA_RELATED_IMAGES, type OperandEntry, type OperandReference } from "../operands.js";
import { dependenciesOf, matching, type Predicate } from "../predicates.js";
import { PROPERTY_RELATED_IMAGE_BUNDLE } from "../../fbc/properties.js";
import { orderEntries, preferenceOrder, type InstalledOperators, type Unit } from "./units.js";

/**
 * A bundle dependency (`olm.gvk.required`, `olm.package.required`,
 * `olm.constraint`) and its candidates, preferred first.
 */
export interface DependencyCandidates {
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
export class Candidates {
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
export interface Group {
  units: Unit[];
  entities: Entity[];
  entries: OperandEntry[];
}

/**
 * Reachability and grouping: walks from every unit's candidates through dependencies, required
 * entries and supporters, joining units (union-find) that reach a shared bundle, entry, package or
 * GVK. Groups come in the order of their first unit.
 */
export function groupUnits(units: readonly Unit[], candidates: Candidates): Group[] {
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

function isEntry(n: Entity | OperandEntry): n is OperandEntry {
  return (n as OperandEntry).schema !== undefined;
}
