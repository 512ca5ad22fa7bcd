/**
 * The upgrade graph as a Mermaid flowchart, byte for byte as opm's `MermaidWriter.WriteChannels`
 * (operator-registry alpha/declcfg/write.go) writes it for `opm alpha render-graph` and
 * `opm alpha render-template -o mermaid`, quirks included (see opm-spec §4.6).
 */
import { compareUtf8 } from "../gojson/encode.js";
import { goQuote } from "../gojson/fmt.js";
import { SemverError, SemverPanic, tryParseRange, tryParseVersion, Version, type Range } from "../semver/index.js";
import { OpcatError } from "./errors.js";
import { parseProperties, PropertyParseError, PROPERTY_PACKAGE } from "./properties.js";
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, type Channel, type ChannelEntry, type DeclarativeConfig } from "./types.js";

export interface MermaidOptions {
  /** `--minimum-edge`: a bundle name; only edges at or above its version are drawn, in its package only. */
  minimumEdge?: string;
  /** `--package-name`: draw this package only. */
  packageName?: string;
  /** `--draw-v0-semantics`: mark skipped bundles and edges. Defaults to true (opm's library default). */
  drawV0Semantics?: boolean;
}

export interface MermaidResult {
  /** The graph text; every line ends with `\n`. */
  text: string;
  /**
   * What opm prints to standard error while drawing, one line each without the newline:
   * `warning: ignoring invalid SkipRange for package/edge "<pkg>"/"<bundle>": <err>`.
   */
  warnings: string[];
}

const ZERO_VERSION = new Version(0n, 0n, 0n);

/**
 * Renders the channels of `cfg` as opm's MermaidWriter does. `cfg` is not modified. Throws
 * {@link OpcatError} with opm's message for a bundle without exactly one valid `olm.package`
 * property (`GRAPH_BUNDLE_PROPERTIES`, `GRAPH_BUNDLE_PACKAGE_PROPERTY`, `GRAPH_BUNDLE_INVALID_VERSION`)
 * and for an unknown minimum edge (`GRAPH_UNKNOWN_MINIMUM_EDGE`).
 */
export function renderMermaid(cfg: DeclarativeConfig, opts: MermaidOptions = {}): MermaidResult {
  const minEdge = opts.minimumEdge ?? "";
  const pkgFilter = opts.packageName ?? "";
  const v0 = opts.drawV0Semantics ?? true;
  const warnings: string[] = [];

  // opm sorts cfg.Channels in place with the (unstable) sort.Slice; we sort a copy the same way.
  const channels = cfg.channels.slice();
  goSortSlice(channels, (a, b) => compareUtf8(a.name, b.name) < 0);

  const versions = bundleVersions(cfg);
  const versionOf = (name: string): Version => versions.get(name) ?? ZERO_VERSION;

  let minVersion = ZERO_VERSION;
  if (minEdge !== "") {
    const v = versions.get(minEdge);
    if (v === undefined) throw new OpcatError("GRAPH_UNKNOWN_MINIMUM_EDGE", `unknown minimum edge name: ${goQuote(minEdge)}`);
    minVersion = v;
  }

  let minEdgePackage = "";
  if (minEdge !== "") {
    search: for (const c of channels) {
      for (const ce of c.entries ?? []) {
        if (ce.name === minEdge) {
          minEdgePackage = c.package;
          break search;
        }
      }
    }
  }

  const depByPackage = new Set<string>();
  const depByChannel = new Set<string>();
  const depByBundle = new Set<string>();
  for (const d of cfg.deprecations) {
    for (const e of d.entries ?? []) {
      switch (e.reference.schema) {
        case SCHEMA_PACKAGE:
          depByPackage.add(d.package);
          break;
        case SCHEMA_CHANNEL:
          depByChannel.add(e.reference.name);
          break;
        case SCHEMA_BUNDLE:
          depByBundle.add(e.reference.name);
          break;
      }
    }
  }

  const filter: ChannelFilter = { minEdge, pkgFilter, minVersion, minEdgePackage, versionOf };
  const pkgs = new Map<string, string[]>();
  let deprecatedPackage = "";
  const deprecatedChannelIDs: string[] = [];
  const decorated = { deprecated: [] as string[], deprecatedskipped: [] as string[], skipped: [] as string[] };
  let linkID = 0;
  const skippedLinkIDs: number[] = [];

  for (const c of channels) {
    const fc = filterChannel(c, filter);
    if (fc === undefined) continue;
    let out = pkgs.get(c.package);
    if (out === undefined) {
      out = [];
      pkgs.set(c.package, out);
    }
    const channelID = `${fc.package}-${fc.name}`;
    out.push(`    %% channel ${goQuote(fc.name)}\n`, `    subgraph ${channelID}[${goQuote(fc.name)}]\n`);
    if (depByPackage.has(fc.package)) deprecatedPackage = fc.package;
    if (depByChannel.has(fc.name)) deprecatedChannelIDs.push(channelID);

    const sorted = fc.entries.slice();
    goSortSlice(sorted, (a, b) => versionOf(a.name).compare(versionOf(b.name)) > 0);

    const skipped = new Set<string>();
    for (const ce of sorted) {
      const entryID = `${channelID}-${ce.name}`;
      const entryNode = `${entryID}[${goQuote(ce.name)}]`;
      out.push(`      ${entryNode}\n`);

      const isDep = depByBundle.has(ce.name);
      const isSkipped = skipped.has(ce.name);
      if (isDep && isSkipped) decorated.deprecatedskipped.push(entryID);
      else if (isDep) decorated.deprecated.push(entryID);
      else if (isSkipped) decorated.skipped.push(entryID);

      for (const s of ce.skips) {
        out.push(`      ${channelID}-${s}[${goQuote(s)}]-- skip --> ${entryNode}\n`);
        if (v0) {
          if (skipped.has(s)) skippedLinkIDs.push(linkID);
          else skipped.add(s);
        }
        linkID++;
      }
      if (ce.skipRange.length > 0) {
        const r = tryParseRange(ce.skipRange);
        if (r instanceof SemverError) {
          warnings.push(`warning: ignoring invalid SkipRange for package/edge ${goQuote(c.package)}/${goQuote(ce.name)}: ${r.message}`);
        } else {
          for (const e of fc.entries) {
            if (!evalRange(r, versionOf(e.name), ce.skipRange)) continue;
            out.push(`      ${channelID}-${e.name}[${goQuote(e.name)}]-- "skipRange(${ce.skipRange})" --> ${entryNode}\n`);
            if (v0 && skipped.has(ce.name)) skippedLinkIDs.push(linkID);
            linkID++;
          }
        }
      }
      if (ce.replaces.length > 0) {
        out.push(`      ${channelID}-${ce.replaces}[${goQuote(ce.replaces)}]-- replace --> ${entryNode}\n`);
        if (v0 && skipped.has(ce.name)) skippedLinkIDs.push(linkID);
        linkID++;
      }
    }
    out.push("    end\n");
  }

  const parts: string[] = [
    "graph LR\n",
    "  classDef deprecated fill:#E8960F\n",
    "  classDef skipped stroke:#FF0000,stroke-width:4px\n",
    "  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n",
  ];
  for (const name of [...pkgs.keys()].sort(compareUtf8)) {
    parts.push(`  %% package ${goQuote(name)}\n`, `  subgraph ${goQuote(name)}\n`);
    for (const s of pkgs.get(name) as string[]) parts.push(s);
    parts.push("  end\n");
  }
  if (deprecatedPackage !== "") parts.push(`style ${deprecatedPackage} fill:#989695\n`);
  for (const id of deprecatedChannelIDs) parts.push(`style ${id} fill:#DCD0FF\n`);
  // Class keys in byte order: deprecated, deprecatedskipped, skipped.
  for (const key of ["deprecated", "deprecatedskipped", "skipped"] as const) {
    const ids = decorated[key];
    if (ids.length > 0) parts.push(`class ${ids.slice().sort(compareUtf8).join(",")} ${key}\n`);
  }
  if (skippedLinkIDs.length > 0) {
    parts.push(`linkStyle ${skippedLinkIDs.join(",")} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n`);
  }
  return { text: parts.join(""), warnings };
}

/** A channel reduced to what the graph draws (opm's filtered `Channel`). */
interface FilteredChannel {
  name: string;
  package: string;
  entries: ChannelEntry[];
}

interface ChannelFilter {
  minEdge: string;
  pkgFilter: string;
  minVersion: Version;
  minEdgePackage: string;
  versionOf: (name: string) => Version;
}

/** opm's `filterChannel`: undefined when the channel is not drawn. */
function filterChannel(c: Channel, f: ChannelFilter): FilteredChannel | undefined {
  // Without filters the channel is drawn as it is, even with no entries.
  if (f.minEdge === "" && f.pkgFilter === "") return { name: c.name, package: c.package, entries: c.entries ?? [] };
  if (f.pkgFilter !== "" && c.package !== f.pkgFilter) return undefined;
  if (f.minEdgePackage !== "" && c.package !== f.minEdgePackage) return undefined;

  const entries: ChannelEntry[] = [];
  for (const ce of c.entries ?? []) {
    const hadEdges = ce.replaces.length > 0 || ce.skips.length > 0 || ce.skipRange.length > 0;
    if (f.minEdge === "") {
      entries.push({ name: ce.name, replaces: ce.replaces, skips: ce.skips, skipRange: ce.skipRange });
      continue;
    }
    if (ce.name === f.minEdge) {
      // The floor itself is drawn without its (backward) edges.
      entries.push({ name: ce.name, replaces: "", skips: [], skipRange: "" });
      continue;
    }
    const out: ChannelEntry = { name: ce.name, replaces: "", skips: [], skipRange: "" };
    if (ce.replaces.length > 0 && f.versionOf(ce.replaces).gte(f.minVersion)) out.replaces = ce.replaces;
    for (const s of ce.skips) if (f.versionOf(s).gte(f.minVersion)) out.skips.push(s);
    if (ce.skipRange.length > 0) {
      const r = tryParseRange(ce.skipRange);
      // An unparsable range is simply not kept.
      if (!(r instanceof SemverError) && evalRange(r, f.minVersion, ce.skipRange)) out.skipRange = ce.skipRange;
    }
    if (out.replaces.length > 0 || out.skips.length > 0 || out.skipRange.length > 0) entries.push(out);
    else if (!hadEdges && f.versionOf(ce.name).gte(f.minVersion)) entries.push(out);
  }
  return entries.length > 0 ? { name: c.name, package: c.package, entries } : undefined;
}

/** Evaluates a range; where blang would crash (a nil OR group), opm panics: reported as an error. */
function evalRange(r: Range, v: Version, text: string): boolean {
  try {
    return r(v);
  } catch (e) {
    if (e instanceof SemverPanic) {
      throw new OpcatError("GRAPH_SKIPRANGE_PANIC", `skipRange ${goQuote(text)} cannot be evaluated (opm panics: ${e.message})`, {
        exitCode: 1,
      });
    }
    throw e;
  }
}

/** opm's `getBundleVersions`: the `olm.package` version of every bundle name (first occurrence wins). */
function bundleVersions(cfg: DeclarativeConfig): Map<string, Version> {
  const out = new Map<string, Version>();
  for (const b of cfg.bundles) {
    if (out.has(b.name)) continue;
    let packages;
    try {
      packages = parseProperties(b.properties).packages;
    } catch (e) {
      if (e instanceof PropertyParseError) {
        throw new OpcatError("GRAPH_BUNDLE_PROPERTIES", `parse properties for bundle ${goQuote(b.name)}: ${e.message}`, { exitCode: 1 });
      }
      throw e;
    }
    if (packages.length !== 1) {
      throw new OpcatError(
        "GRAPH_BUNDLE_PACKAGE_PROPERTY",
        `bundle ${goQuote(b.name)} has multiple ${goQuote(PROPERTY_PACKAGE)} properties, expected exactly 1`,
        { exitCode: 1 },
      );
    }
    const version = packages[0].version;
    const v = tryParseVersion(version);
    if (v instanceof SemverError) {
      throw new OpcatError("GRAPH_BUNDLE_INVALID_VERSION", `bundle ${goQuote(b.name)} has invalid version ${goQuote(version)}: ${v.message}`, {
        exitCode: 1,
      });
    }
    out.set(b.name, v);
  }
  return out;
}

/**
 * Go's `sort.Slice` (pattern-defeating quicksort, Go 1.19+), element for element: the same
 * comparisons and swaps, hence the same order of equal elements. Sorts `data` in place.
 */
export function goSortSlice<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const n = data.length;
  const s = new GoSorter(data, less);
  s.pdqsort(0, n, bitsLen(n));
}

function bitsLen(x: number): number {
  return x === 0 ? 0 : 32 - Math.clz32(x);
}

const UNKNOWN_HINT = 0;
const INCREASING_HINT = 1;
const DECREASING_HINT = 2;
const MASK64 = (1n << 64n) - 1n;

class GoSorter<T> {
  constructor(
    private readonly d: T[],
    private readonly lessFn: (a: T, b: T) => boolean,
  ) {}

  private less(i: number, j: number): boolean {
    return this.lessFn(this.d[i], this.d[j]);
  }

  private swap(i: number, j: number): void {
    const t = this.d[i];
    this.d[i] = this.d[j];
    this.d[j] = t;
  }

  private insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
    }
  }

  private siftDown(lo: number, hi: number, first: number): void {
    let root = lo;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && this.less(first + child, first + child + 1)) child++;
      if (!this.less(first + root, first + child)) return;
      this.swap(first + root, first + child);
      root = child;
    }
  }

  private heapSort(a: number, b: number): void {
    const first = a;
    const hi = b - a;
    for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) this.siftDown(i, hi, first);
    for (let i = hi - 1; i >= 0; i--) {
      this.swap(first, first + i);
      this.siftDown(0, i, first);
    }
  }

  pdqsort(a: number, b: number, limit: number): void {
    const maxInsertion = 12;
    let wasBalanced = true;
    let wasPartitioned = true;
    for (;;) {
      const length = b - a;
      if (length <= maxInsertion) {
        this.insertionSort(a, b);
        return;
      }
      if (limit === 0) {
        this.heapSort(a, b);
        return;
      }
      if (!wasBalanced) {
        this.breakPatterns(a, b);
        limit--;
      }
      let [pivot, hint] = this.choosePivot(a, b);
      if (hint === DECREASING_HINT) {
        this.reverseRange(a, b);
        pivot = b - 1 - (pivot - a);
        hint = INCREASING_HINT;
      }
      if (wasBalanced && wasPartitioned && hint === INCREASING_HINT) {
        if (this.partialInsertionSort(a, b)) return;
      }
      if (a > 0 && !this.less(a - 1, pivot)) {
        a = this.partitionEqual(a, b, pivot);
        continue;
      }
      const [mid, alreadyPartitioned] = this.partition(a, b, pivot);
      wasPartitioned = alreadyPartitioned;
      const leftLen = mid - a;
      const rightLen = b - mid;
      const balanceThreshold = Math.trunc(length / 8);
      if (leftLen < rightLen) {
        wasBalanced = leftLen >= balanceThreshold;
        this.pdqsort(a, mid, limit);
        a = mid + 1;
      } else {
        wasBalanced = rightLen >= balanceThreshold;
        this.pdqsort(mid + 1, b, limit);
        b = mid;
      }
    }
  }

  private partition(a: number, b: number, pivot: number): [number, boolean] {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    while (i <= j && this.less(i, a)) i++;
    while (i <= j && !this.less(j, a)) j--;
    if (i > j) {
      this.swap(j, a);
      return [j, true];
    }
    this.swap(i, j);
    i++;
    j--;
    for (;;) {
      while (i <= j && this.less(i, a)) i++;
      while (i <= j && !this.less(j, a)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    this.swap(j, a);
    return [j, false];
  }

  private partitionEqual(a: number, b: number, pivot: number): number {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    for (;;) {
      while (i <= j && !this.less(a, i)) i++;
      while (i <= j && this.less(a, j)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    return i;
  }

  private partialInsertionSort(a: number, b: number): boolean {
    const maxSteps = 5;
    const shortestShifting = 50;
    let i = a + 1;
    for (let step = 0; step < maxSteps; step++) {
      while (i < b && !this.less(i, i - 1)) i++;
      if (i === b) return true;
      if (b - a < shortestShifting) return false;
      this.swap(i, i - 1);
      if (i - a >= 2) {
        for (let j = i - 1; j >= 1; j--) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
      if (b - i >= 2) {
        for (let j = i + 1; j < b; j++) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
    }
    return false;
  }

  private breakPatterns(a: number, b: number): void {
    const length = b - a;
    if (length < 8) return;
    let r = BigInt(length);
    const modulus = BigInt(1 << bitsLen(length));
    const base = a + Math.trunc(length / 4) * 2;
    for (let idx = base - 1; idx <= base + 1; idx++) {
      r ^= (r << 13n) & MASK64;
      r ^= r >> 7n;
      r ^= (r << 17n) & MASK64;
      let other = Number(r & (modulus - 1n));
      if (other >= length) other -= length;
      this.swap(idx, a + other);
    }
  }

  private choosePivot(a: number, b: number): [number, number] {
    const shortestNinther = 50;
    const maxSwaps = 4 * 3;
    const l = b - a;
    const swaps = { n: 0 };
    const q = Math.trunc(l / 4);
    let i = a + q;
    let j = a + q * 2;
    let k = a + q * 3;
    if (l >= 8) {
      if (l >= shortestNinther) {
        i = this.median(i - 1, i, i + 1, swaps);
        j = this.median(j - 1, j, j + 1, swaps);
        k = this.median(k - 1, k, k + 1, swaps);
      }
      j = this.median(i, j, k, swaps);
    }
    if (swaps.n === 0) return [j, INCREASING_HINT];
    if (swaps.n === maxSwaps) return [j, DECREASING_HINT];
    return [j, UNKNOWN_HINT];
  }

  private median(a: number, b: number, c: number, swaps: { n: number }): number {
    if (this.less(b, a)) {
      swaps.n++;
      [a, b] = [b, a];
    }
    if (this.less(c, b)) {
      swaps.n++;
      [b, c] = [c, b];
    }
    if (this.less(b, a)) {
      swaps.n++;
      [a, b] = [b, a];
    }
    return b;
  }

  private reverseRange(a: number, b: number): void {
    for (let i = a, j = b - 1; i < j; i++, j--) this.swap(i, j);
  }
}
