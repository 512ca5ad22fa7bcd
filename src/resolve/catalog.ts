/**
 * Catalog semantics for resolution: the bundles of one or more named catalogs (with priorities) as
 * entities, indexed by package, name and provided GVK, with OLM's preference orders (channel head
 * first down the replacement chain, default channel first, catalog priority) and upgrade edges.
 */
import { bundleCsvJsonOnce } from "../fbc/objects.js";
import { byteCompare, type Model, type ModelBundle, type ModelChannel, type ModelPackage } from "../fbc/model.js";
import { parseProperties, type GVKProperty, type ParsedProperties } from "../fbc/properties.js";
import type { Bundle, JsonObject, JsonValue, Meta, Property, RelatedImage } from "../fbc/types.js";
import {
  operandEntries,
  operandReferencesOf,
  SCHEMA_OPERAND,
  type OperandEntry,
  type OperandReference,
} from "./operands.js";
import {
  PROPERTY_OPERAND_REQUIRED,
  PROPERTY_OPERAND_SUPPORTED,
  PROPERTY_RELATED_IMAGE_BUNDLE,
} from "../fbc/properties.js";
import { SemverError, tryParseRange, tryParseTolerant, type Range, type Version } from "../semver/index.js";

/** A named catalog given to the resolver. Higher `priority` is preferred (default 0). */
export interface NamedCatalog {
  name: string;
  model: Model;
  priority?: number;
  /**
   * The catalog's blobs of other schemas (`DeclarativeConfig.others`): its `olm.operand` and
   * `olm.relatedimages` blobs become operand entries (docs/operands.md); other schemas are ignored.
   */
  others?: readonly Meta[];
}

/** A bundle's upgrade edges in one channel. */
export interface ChannelEdge {
  channel: string;
  replaces: string;
  skips: readonly string[];
  skipRange: string;
}

/** One bundle of one catalog (listed once however many channels contain it). */
export interface Entity {
  /** Unique within a {@link CatalogSet}: `<bundle> (<catalog>)`. */
  readonly id: string;
  readonly catalog: string;
  readonly priority: number;
  readonly package: string;
  readonly name: string;
  readonly version?: Version;
  readonly versionText: string;
  readonly image: string;
  readonly relatedImages: readonly RelatedImage[];
  readonly properties: readonly Property[];
  /** Channels containing the bundle, in catalog order, with their edges. */
  readonly channels: readonly ChannelEdge[];
  /** True when the bundle is in its package's default channel. */
  readonly inDefaultChannel: boolean;
  /** Position in its package's preference order within its catalog (0 = most preferred). */
  rank: number;
  /** Position in {@link CatalogSet.entities}. */
  ordinal: number;
  /** The FBC deprecation message of the bundle, if any. */
  readonly deprecation?: string;
  readonly parsed: ParsedProperties;
  /** Keys (`group/version/kind`) of the provided GVKs. */
  readonly provides: readonly string[];
  /** What the entity competes for (`pkg:<package>`, `gvk:<key>`): resolutions sharing one are solved together. */
  readonly keys: readonly string[];
  /** True for an installed bundle that none of the catalogs has. */
  readonly virtual?: boolean;
  /** The olm.bundle blob (absent for virtual entities). */
  readonly bundle?: Bundle;
}

/** `group/version/kind`. */
export function gvkKey(g: GVKProperty): string {
  return `${g.group}/${g.version}/${g.kind}`;
}

/** OLM's predicate text for a GVK: `providing an API with group: g, version: v, kind: k`. */
export function gvkText(g: GVKProperty): string {
  return `providing an API with group: ${g.group}, version: ${g.version}, kind: ${g.kind}`;
}

/**
 * OLM v0's `sortChannel`: walk `replaces` from the single head; bundles skipped by another bundle
 * are left out of the walk. Returns the chain or the error text OLM gives.
 */
export function sortChannel(pkg: string, ch: ModelChannel): { chain: ModelBundle[] } | { error: string } {
  const byName = new Map<string, ModelBundle>();
  for (const b of ch.bundles.values()) byName.set(b.name, b);
  const replacedBy = new Set<string>();
  const skipped = new Set<string>();
  for (const b of byName.values()) {
    if (b.replaces && byName.has(b.replaces)) replacedBy.add(b.replaces);
    for (const s of b.skips) {
      if (s !== b.name && byName.has(s)) {
        replacedBy.add(s);
        skipped.add(s);
      }
    }
  }
  const heads = [...byName.values()].filter((b) => !replacedBy.has(b.name));
  if (heads.length === 0)
    return {
      error:
        `no channel heads (entries not replaced by another ` +
        `entry) found in channel "${ch.name}" of package "${pkg}"`,
    };
  const chains: ModelBundle[][] = [];
  for (const head of heads) {
    const chain: ModelBundle[] = [];
    const visited = new Set<string>();
    let cur: ModelBundle | undefined = head;
    while (cur) {
      visited.add(cur.name);
      if (!skipped.has(cur.name)) chain.push(cur);
      const next: ModelBundle | undefined = cur.replaces ? byName.get(cur.replaces) : undefined;
      if (next && visited.has(next.name)) {
        return {
          error:
            `a cycle exists in the chain of replacement beginning with ` +
            `"${head.name}" in channel "${ch.name}" of package "${pkg}"`,
        };
      }
      cur = next;
    }
    chains.push(chain);
  }
  if (chains.length > 1) {
    const desc = chains.map((c) => `${c[0]?.name ?? ""}...${c[c.length - 1]?.name ?? ""}`).join(", ");
    return {
      error:
        `a unique replacement chain within a channel is required to determine the ` +
        `relative order between channel entries, but ${chains.length} replacement ` +
        `chains were found in channel "${ch.name}" of package "${pkg}": ${desc}`,
    };
  }
  return { chain: chains[0] };
}

function byVersionDesc(a: { version?: Version; name: string }, b: { version?: Version; name: string }): number {
  if (a.version && b.version) {
    const c = b.version.compare(a.version);
    if (c !== 0) return c;
  } else if (a.version || b.version) return a.version ? -1 : 1;
  return byteCompare(a.name, b.name);
}

/**
 * The preference order of one channel: the replacement chain from the head, then the bundles the
 * chain leaves out (skipped or off-chain) by version, highest first. When the channel has no
 * unique chain, the whole channel by version and the error text as a warning.
 */
export function channelOrder(pkg: string, ch: ModelChannel): { order: ModelBundle[]; warning?: string } {
  const r = sortChannel(pkg, ch);
  const all = [...ch.bundles.values()].filter((b) => b.source);
  if ("error" in r) return { order: all.sort(byVersionDesc), warning: r.error };
  const inChain = new Set(r.chain.map((b) => b.name));
  const rest = all.filter((b) => !inChain.has(b.name)).sort(byVersionDesc);
  return { order: [...r.chain.filter((b) => b.source), ...rest] };
}

/** The entities of several catalogs, with the indexes the resolver needs. */
export class CatalogSet {
  /** Every entity: catalogs by priority (highest first) then name; inside, packages by name, then preference. */
  readonly entities: Entity[] = [];
  readonly catalogs: { name: string; priority: number }[] = [];
  /** Channel-order problems found while ordering (the channels are then ordered by version). */
  readonly warnings: string[] = [];
  readonly #byPackage = new Map<string, Entity[]>();
  readonly #byName = new Map<string, Entity[]>();
  readonly #byGvk = new Map<string, Entity[]>();
  readonly #channelOrders = new Map<string, Entity[]>();
  readonly #defaultChannel = new Map<string, string>();
  readonly #byId = new Map<string, Entity>();
  /** Operand and related-image entries (docs/operands.md) of every catalog, in catalog order. */
  readonly operandEntries: OperandEntry[] = [];
  readonly #entriesByName = new Map<string, OperandEntry[]>();
  readonly #supporters = new Map<string, Entity[]>();
  readonly #supportersOf = new Map<OperandEntry, readonly Entity[]>();

  constructor(catalogs: readonly NamedCatalog[]) {
    const seen = new Set<string>();
    for (const c of catalogs) {
      if (seen.has(c.name)) throw new Error(`duplicate catalog name "${c.name}"`);
      seen.add(c.name);
    }
    const sorted = [...catalogs].sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0) || byteCompare(a.name, b.name));
    for (const c of sorted) {
      this.catalogs.push({ name: c.name, priority: c.priority ?? 0 });
      const pkgs = [...c.model.values()].sort((a, b) => byteCompare(a.name, b.name));
      for (const p of pkgs) this.#addPackage(c.name, c.priority ?? 0, p);
      for (const o of operandEntries(
        c.name,
        c.priority ?? 0,
        c.others ?? [],
        this.operandEntries.length,
        this.warnings,
      )) {
        this.operandEntries.push(o);
        push(this.#entriesByName, `${o.schema}\0${o.name}`, o);
      }
    }
    // Newest first; for one version, the higher-priority catalog first (an entry redefined in a
    // preferred catalog, e.g. with a patched digest, wins), then scoped entries before global ones.
    for (const l of this.#entriesByName.values()) {
      l.sort(
        (a, b) =>
          b.version.compare(a.version) ||
          b.priority - a.priority ||
          byteCompare(a.catalog, b.catalog) ||
          byteCompare(b.package, a.package) ||
          a.ordinal - b.ordinal,
      );
    }
    for (const e of this.entities) for (const r of operandRefs(e).supported) push(this.#supporters, r.name, e);
  }

  /** The entries of one schema and name, newest first (see the constructor for ties). */
  operands(schema: OperandEntry["schema"], name: string): readonly OperandEntry[] {
    return this.#entriesByName.get(`${schema}\0${name}`) ?? [];
  }

  /**
   * Bundles (in catalog order) whose `olm.operand.supported` covers
   * an `olm.operand` entry's version and package scope.
   */
  supportersOf(o: OperandEntry): readonly Entity[] {
    let l = this.#supportersOf.get(o);
    if (!l) {
      l = o.schema !== SCHEMA_OPERAND ? [] : (this.#supporters.get(o.name) ?? []).filter((e) => supports(e, o));
      this.#supportersOf.set(o, l);
    }
    return l;
  }

  #addPackage(catalog: string, priority: number, p: ModelPackage): void {
    const def = p.defaultChannel?.name ?? "";
    this.#defaultChannel.set(catalog + "\0" + p.name, def);
    const channels = [...p.channels.values()].sort((a, b) =>
      a.name === def ? -1 : b.name === def ? 1 : byteCompare(a.name, b.name),
    );
    const entityOf = new Map<string, Entity & { channels: ChannelEdge[] }>();
    const pkgOrder: Entity[] = [];
    const inOrder = new Set<Entity>();
    // Entities in channel-name order of first appearance; edges collected from every channel.
    for (const ch of [...p.channels.values()]) {
      for (const b of ch.bundles.values()) {
        if (!b.source) continue;
        let e = entityOf.get(b.name);
        if (!e) {
          let parsed: ParsedProperties;
          try {
            parsed = b.parsed ?? parseProperties(b.properties);
          } catch {
            continue;
          }
          const dupName = (this.#byName.get(b.name) ?? []).some((x) => x.catalog === catalog);
          const id = dupName ? `${b.name} (${catalog}, package ${p.name})` : `${b.name} (${catalog})`;
          e = {
            id,
            catalog,
            priority,
            package: p.name,
            name: b.name,
            version: b.version,
            versionText: b.version ? b.version.toString() : "",
            image: b.image,
            relatedImages: b.relatedImages,
            properties: b.properties,
            channels: [],
            inDefaultChannel: false,
            rank: 0,
            ordinal: 0,
            deprecation: b.deprecation?.message,
            parsed,
            provides: [],
            keys: [],
            bundle: b.source,
          };
          const provides = [...new Set(parsed.gvks.map(gvkKey))];
          (e as { provides: readonly string[] }).provides = provides;
          (e as { keys: readonly string[] }).keys = ["pkg:" + p.name, ...provides.map((g) => "gvk:" + g)];
          entityOf.set(b.name, e);
          push(this.#byName, b.name, e);
          for (const k of e.provides) push(this.#byGvk, k, e);
        }
        e.channels.push({ channel: ch.name, replaces: b.replaces, skips: b.skips, skipRange: b.skipRange });
        if (ch.name === def) (e as { inDefaultChannel: boolean }).inDefaultChannel = true;
      }
    }
    for (const ch of channels) {
      const { order, warning } = channelOrder(p.name, ch);
      if (warning) this.warnings.push(`catalog ${catalog}: ${warning}`);
      const list: Entity[] = [];
      for (const b of order) {
        const e = entityOf.get(b.name);
        if (!e) continue;
        list.push(e);
        if (!inOrder.has(e)) {
          inOrder.add(e);
          pkgOrder.push(e);
        }
      }
      this.#channelOrders.set(`${catalog}\0${p.name}\0${ch.name}`, list);
    }
    pkgOrder.forEach((e, i) => (e.rank = i));
    for (const e of pkgOrder) {
      e.ordinal = this.entities.length;
      this.entities.push(e);
      this.#byId.set(e.id, e);
      push(this.#byPackage, p.name, e);
    }
  }

  /** Entities of a package in every catalog, in catalog-priority then preference order. */
  byPackage(pkg: string): readonly Entity[] {
    return this.#byPackage.get(pkg) ?? [];
  }
  /** Entities with that bundle name in every catalog. */
  byName(name: string): readonly Entity[] {
    return this.#byName.get(name) ?? [];
  }
  /** Entities providing a GVK (key `group/version/kind`). */
  byGvk(key: string): readonly Entity[] {
    return this.#byGvk.get(key) ?? [];
  }
  byId(id: string): Entity | undefined {
    return this.#byId.get(id);
  }
  /** A channel's entities, head first. Undefined when the catalog has no such channel. */
  channel(catalog: string, pkg: string, channel: string): readonly Entity[] | undefined {
    return this.#channelOrders.get(`${catalog}\0${pkg}\0${channel}`);
  }
  /** The default channel of a package in a catalog ("" when unknown). */
  defaultChannel(catalog: string, pkg: string): string {
    return this.#defaultChannel.get(catalog + "\0" + pkg) ?? "";
  }
  hasCatalog(name: string): boolean {
    return this.catalogs.some((c) => c.name === name);
  }
  priorityOf(catalog: string): number {
    return this.catalogs.find((c) => c.name === catalog)?.priority ?? 0;
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

const rangeCache = new Map<string, Range | null>();
/** A blang range, parsed once; null when it does not parse (OLM ignores such skipRanges). */
export function cachedRange(s: string): Range | null {
  let r = rangeCache.get(s);
  if (r === undefined) {
    const p = tryParseRange(s);
    r = p instanceof SemverError ? null : p;
    rangeCache.set(s, r);
  }
  return r;
}

/** True when `e` has an upgrade edge from the bundle `name` at `version` (in `channel` when given). */
export function upgradesFrom(e: Entity, name: string, version: Version | undefined, channel?: string): boolean {
  if (e.name === name) return false;
  for (const c of e.channels) {
    if (channel !== undefined && c.channel !== channel) continue;
    if (c.replaces === name || c.skips.includes(name)) return true;
    if (c.skipRange && version) {
      const r = cachedRange(c.skipRange);
      if (r?.(version)) return true;
    }
  }
  return false;
}

/** What the resolver checks against the described cluster, derived once per entity. */
export interface ClusterFacts {
  /** `olm.csv.metadata` minKubeVersion, else the CSV's ("" when none). */
  readonly minKubeVersion: string;
  readonly minKube?: Version;
  /** The `olm.maxOpenShiftVersion` property value ("" when absent). */
  readonly maxOpenShiftVersion: string;
  readonly maxOpenShift?: Version;
  /** The bundle carries an `olm.deprecated` property. */
  readonly deprecated: boolean;
}

const factsCache = new WeakMap<Entity, ClusterFacts>();

/**
 * The entity's {@link ClusterFacts}, computed on first use and kept: the CSV fallback for
 * minKubeVersion decodes and parses a whole manifest, which must not happen on every resolution.
 */
export function clusterFacts(e: Entity): ClusterFacts {
  let f = factsCache.get(e);
  if (f) return f;
  const mk = e.virtual ? "" : computeMinKube(e);
  const mo = e.virtual ? "" : computeMaxOpenShift(e);
  f = {
    minKubeVersion: mk,
    minKube: mk ? tolerant(mk) : undefined,
    maxOpenShiftVersion: mo,
    maxOpenShift: mo ? tolerant(mo) : undefined,
    deprecated: isDeprecated(e),
  };
  factsCache.set(e, f);
  return f;
}

/** True when the bundle carries an `olm.deprecated` property (cheap: no decoding). */
export function isDeprecated(e: Entity): boolean {
  if (e.virtual) return false;
  for (const p of e.parsed.others) if (p.type === "olm.deprecated") return true;
  return false;
}

/** The bundle's minimum Kubernetes version: `olm.csv.metadata` minKubeVersion, else the CSV's. */
export function minKubeVersionOf(e: Entity): string {
  return clusterFacts(e).minKubeVersion;
}

/** The `olm.maxOpenShiftVersion` property value ("" when absent; several → the first). */
export function maxOpenShiftVersionOf(e: Entity): string {
  return clusterFacts(e).maxOpenShiftVersion;
}

function computeMinKube(e: Entity): string {
  for (const m of e.parsed.csvMetadatas) {
    const v = (m as JsonObject).minKubeVersion;
    if (typeof v === "string" && v !== "") return v;
  }
  if (e.parsed.bundleObjects > 0 && e.bundle) {
    try {
      const csv = JSON.parse(bundleCsvJsonOnce(e.bundle)) as {
        spec?: { minKubeVersion?: unknown };
      };
      if (typeof csv?.spec?.minKubeVersion === "string") return csv.spec.minKubeVersion;
    } catch {
      return "";
    }
  }
  return "";
}

function computeMaxOpenShift(e: Entity): string {
  for (const p of e.parsed.others) {
    if (p.type !== "olm.maxOpenShiftVersion") continue;
    let v: JsonValue;
    try {
      v = p.value.value;
    } catch {
      return "";
    }
    if (typeof v === "number") return String(v);
    if (typeof v === "string") return v.replace(/^"|"$/g, "");
  }
  return "";
}

/** Tolerant semver parse, undefined on failure. */
export function tolerant(s: string): Version | undefined {
  const v = tryParseTolerant(s);
  return v instanceof SemverError ? undefined : v;
}

/** A bundle's operand properties (docs/operands.md), decoded (undecodable ones left out; validation reports them). */
export interface OperandRefs {
  /** `olm.operand.supported`: operand versions the operator can manage. */
  readonly supported: readonly OperandReference[];
  /** `olm.operand.required` and `olm.relatedImageBundle`: entries that must be installed with it. */
  readonly required: readonly OperandReference[];
}

const NO_REFS: OperandRefs = { supported: [], required: [] };
const refsCache = new WeakMap<Entity, OperandRefs>();

/** The entity's {@link OperandRefs}, decoded once. */
export function operandRefs(e: Entity): OperandRefs {
  let r = refsCache.get(e);
  if (r) return r;
  let any = false;
  for (const p of e.parsed.others) {
    if (
      p.type === PROPERTY_OPERAND_SUPPORTED ||
      p.type === PROPERTY_OPERAND_REQUIRED ||
      p.type === PROPERTY_RELATED_IMAGE_BUNDLE
    )
      any = true;
  }
  if (!any) r = NO_REFS;
  else {
    const all = operandReferencesOf(e.parsed.others);
    r = {
      supported: all.filter((x) => x.type === PROPERTY_OPERAND_SUPPORTED),
      required: all.filter((x) => x.type !== PROPERTY_OPERAND_SUPPORTED),
    };
  }
  refsCache.set(e, r);
  return r;
}

/**
 * True when `e` may manage the operand entry: a supported range of that
 * name holds its version, and its package scope allows `e`.
 */
export function supports(e: Entity, o: OperandEntry): boolean {
  if (o.package !== "" && o.package !== e.package) return false;
  for (const r of operandRefs(e).supported) if (r.name === o.name && r.range(o.version)) return true;
  return false;
}
