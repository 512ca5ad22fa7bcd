/**
 * The upgrade graph as a Mermaid flowchart, byte for byte as opm's `MermaidWriter.WriteChannels`
 * (operator-registry alpha/declcfg/write.go) writes it for `opm alpha render-graph` and
 * `opm alpha render-template -o mermaid`, quirks included (see opm-spec §4.6).
 */
import { compareUtf8 } from "../gojson/encode.js";
import { goSortSlice } from "../gojson/sort.js";
import { goQuote } from "../gojson/fmt.js";
import { SemverError, SemverPanic, tryParseRange, tryParseVersion, Version, type Range } from "../semver/index.js";
import { OpcatError } from "../errors/index.js";
import { parseProperties, PropertyParseError, PROPERTY_PACKAGE } from "./properties.js";
import {
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
} from "./types.js";

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
    if (v === undefined)
      throw new OpcatError("GRAPH_UNKNOWN_MINIMUM_EDGE", `unknown minimum edge name: ${goQuote(minEdge)}`);
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
          warnings.push(
            `warning: ignoring invalid SkipRange for package/edge ` +
              `${goQuote(c.package)}/${goQuote(ce.name)}: ${r.message}`,
          );
        } else {
          for (const e of fc.entries) {
            if (!evalRange(r, versionOf(e.name), ce.skipRange)) continue;
            out.push(
              `      ${channelID}-${e.name}[${goQuote(e.name)}]-- "skipRange(${ce.skipRange})" --> ${entryNode}\n`,
            );
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
      throw new OpcatError(
        "GRAPH_SKIPRANGE_PANIC",
        `skipRange ${goQuote(text)} cannot be evaluated (opm panics: ${e.message})`,
        {
          kind: "invalid",
        },
      );
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
        throw new OpcatError(
          "GRAPH_BUNDLE_PROPERTIES",
          `parse properties for bundle ${goQuote(b.name)}: ${e.message}`,
          { kind: "invalid" },
        );
      }
      throw e;
    }
    if (packages.length !== 1) {
      throw new OpcatError(
        "GRAPH_BUNDLE_PACKAGE_PROPERTY",
        `bundle ${goQuote(b.name)} has multiple ${goQuote(PROPERTY_PACKAGE)} properties, expected exactly 1`,
        { kind: "invalid" },
      );
    }
    const version = packages[0].version;
    const v = tryParseVersion(version);
    if (v instanceof SemverError) {
      throw new OpcatError(
        "GRAPH_BUNDLE_INVALID_VERSION",
        `bundle ${goQuote(b.name)} has invalid version ${goQuote(version)}: ${v.message}`,
        {
          kind: "invalid",
        },
      );
    }
    out.set(b.name, v);
  }
  return out;
}

export { goSortSlice };
