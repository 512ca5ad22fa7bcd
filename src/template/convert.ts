/**
 * `opcat template convert`: an existing catalog as a template that renders back to it.
 *
 * - basic: opm's `alpha convert-template basic` — every blob kept, each `olm.bundle` reduced to
 *   `{schema, image}`; blobs in opm's write order (package, channels, bundles, custom blobs,
 *   deprecations per package, then package-less custom blobs).
 * - graph: one graph template (docs/templates.md#graph-template) for one package, each channel's
 *   entries along its replaces chain, names it skips that are not its entries as tombstones before
 *   the entry that skips them, the first entry's edges as tail edges, later skipRanges in
 *   `skipRanges`. Catalogs whose graphs the
 *   template cannot express are refused (TEMPLATE_CONVERT_GRAPH) instead of converted lossily.
 */
import { OpcatError } from "../errors/index.js";
import { blobToCompactJson } from "../fbc/write.js";
import type { Bundle, Channel, DeclarativeConfig, Deprecation, JsonValue, Meta, Package } from "../fbc/types.js";
import { compareUtf8, encodeSortedCompact, indentCompactJson, quoteGoString } from "../gojson/encode.js";
import { goQuote } from "../gojson/fmt.js";
import { toGoYaml } from "../yaml/index.js";
import { SCHEMA_BASIC, SCHEMA_GRAPH } from "./detect.js";
import {
  checkGraphTemplate,
  formatGraphTemplate,
  graphChannel,
  type GraphDescription,
  type GraphTemplate,
} from "./graph/graph.js";

export type ConvertTarget = "basic" | "graph";

export interface ConvertOptions {
  to: ConvertTarget;
  /** Output format (default json). */
  output?: "json" | "yaml";
  /** Only this package (required for graph when the catalog has several). */
  package?: string;
}

function refuse(pkg: string, msg: string): OpcatError {
  return new OpcatError(
    "TEMPLATE_CONVERT_GRAPH",
    `package ${goQuote(pkg)} cannot be expressed as a graph template: ${msg}`,
    { kind: "invalid" },
  );
}

function packageError(msg: string): OpcatError {
  return new OpcatError("TEMPLATE_CONVERT_PACKAGE", msg, { kind: "invalid" });
}

interface Group {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  others: Meta[];
  deprecations: Deprecation[];
}

function groupOf(cfg: DeclarativeConfig): { names: string[]; groups: Map<string, Group>; root: Meta[] } {
  const groups = new Map<string, Group>();
  const g = (name: string): Group => {
    let x = groups.get(name);
    if (!x) groups.set(name, (x = { packages: [], channels: [], bundles: [], others: [], deprecations: [] }));
    return x;
  };
  const root: Meta[] = [];
  for (const p of cfg.packages) g(p.name).packages.push(p);
  for (const c of cfg.channels) g(c.package).channels.push(c);
  for (const b of cfg.bundles) g(b.package).bundles.push(b);
  for (const o of cfg.others) (o.package === "" ? root : g(o.package).others).push(o);
  for (const d of cfg.deprecations) g(d.package).deprecations.push(d);
  return { names: [...groups.keys()].sort(compareUtf8), groups, root };
}

const HTML_ESCAPES: Record<string, string> = { "<": "\\u003c", ">": "\\u003e", "&": "\\u0026" };

/**
 * The basic template (opm's convert-template basic) as compact JSON: `{"schema":"olm.template.basic",
 * "entries":[…]}`, each blob with its keys sorted (opm's Meta) except the `{schema, image}`
 * bundles, with `<`, `>`, `&` escaped as Go's json.Marshal does. With `pkg`, only that package's
 * blobs (TEMPLATE_CONVERT_PACKAGE when it has none).
 */
export function catalogToBasicTemplateJson(cfg: DeclarativeConfig, pkg?: string): string {
  const { names, groups, root } = groupOf(cfg);
  const parts: string[] = [];
  // opm keeps each blob as its Meta (keys sorted); a bundle becomes declcfg.Bundle{Schema, Image}.
  const sorted = (compact: string): string => encodeSortedCompact(JSON.parse(compact) as JsonValue);
  const bundleJson = (b: Bundle): string => `{"schema":${quoteGoString(b.schema)},"image":${quoteGoString(b.image)}}`;
  const emit = (gr: Group): void => {
    for (const p of gr.packages) parts.push(sorted(blobToCompactJson({ k: "package", v: p })));
    for (const c of [...gr.channels].sort((a, b) => compareUtf8(a.name, b.name)))
      parts.push(sorted(blobToCompactJson({ k: "channel", v: c })));
    for (const b of [...gr.bundles].sort((a, b) => compareUtf8(a.name, b.name))) parts.push(bundleJson(b));
    for (const o of [...gr.others].sort((a, b) => compareUtf8(a.schema, b.schema))) parts.push(o.blob.text);
    for (const d of gr.deprecations) parts.push(sorted(blobToCompactJson({ k: "deprecation", v: d })));
  };
  if (pkg !== undefined) {
    const gr = groups.get(pkg);
    if (!gr || pkg === "") throw packageError(`package ${goQuote(pkg)} not found in the catalog`);
    emit(gr);
  } else {
    for (const n of names) emit(groups.get(n) as Group);
    for (const o of root) parts.push(o.blob.text);
  }
  const compact = `{"schema":${JSON.stringify(SCHEMA_BASIC)},"entries":[${parts.join(",")}]}`;
  return compact.replace(/[<>&]/g, (c) => HTML_ESCAPES[c]);
}

/**
 * Writes template JSON as opm's converter does: json.MarshalIndent with
 * four spaces plus a newline, or `---` + YAML plus a newline.
 */
function formatTemplateJson(compact: string, format: "json" | "yaml"): string {
  if (format === "json") return indentCompactJson(compact, "    ") + "\n";
  return "---\n" + toGoYaml(JSON.parse(compact) as JsonValue) + "\n";
}

/** The package to convert to a graph template: `pkg`, or the catalog's only package. */
function pickPackage(cfg: DeclarativeConfig, pkg: string | undefined): string {
  const names = [
    ...new Set([
      ...cfg.packages.map((p) => p.name),
      ...cfg.channels.map((c) => c.package),
      ...cfg.bundles.map((b) => b.package),
    ]),
  ].sort(compareUtf8);
  if (pkg !== undefined) {
    if (!names.includes(pkg) || pkg === "") throw packageError(`package ${goQuote(pkg)} not found in the catalog`);
    return pkg;
  }
  if (names.length === 0) throw packageError("the catalog has no package");
  if (names.length > 1)
    throw packageError(
      `the catalog has ${names.length} packages (${names.join(", ")}); ` +
        `a graph template holds one: choose it with --package`,
    );
  return names[0];
}

/** One channel as a graph description (entries along the replaces chain), or a refusal. */
function channelGraph(pkg: string, ch: Channel): GraphDescription {
  const where = `channel ${goQuote(ch.name)}`;
  if (ch.properties.length > 0) throw refuse(pkg, `${where} has properties, which a graph template does not carry`);
  const es = ch.entries ?? [];
  if (es.length === 0) throw refuse(pkg, `${where} has no entries`);
  const byName = new Map(es.map((e) => [e.name, e]));
  if (byName.size !== es.length) throw refuse(pkg, `${where} lists an entry twice`);
  const roots = es.filter((e) => !byName.has(e.replaces));
  const successor = new Map<string, string>();
  for (const e of es) {
    if (!byName.has(e.replaces)) continue;
    const other = successor.get(e.replaces);
    if (other !== undefined) {
      throw refuse(
        pkg,
        `${where}: ${goQuote(other)} and ${goQuote(e.name)} both replace ` +
          `${goQuote(e.replaces)} (a graph's entries form a single replaces chain)`,
      );
    }
    successor.set(e.replaces, e.name);
  }
  if (roots.length === 0) throw refuse(pkg, `${where}: its replaces edges form a cycle`);
  if (roots.length > 1) {
    const shown = roots.map((r) => r.name).sort(compareUtf8);
    throw refuse(
      pkg,
      `${where} has ${roots.length} entries that replace no entry of the channel ` +
        `(${shown.join(", ")}); a graph's entries form a single replaces chain`,
    );
  }
  const chain = [roots[0]];
  for (let n = successor.get(roots[0].name); n !== undefined; n = successor.get(n))
    chain.push(byName.get(n) as (typeof es)[number]);
  if (chain.length !== es.length)
    throw refuse(
      pkg,
      `${where}: some entries are on a replaces cycle outside the chain from ${goQuote(roots[0].name)}`,
    );

  const first = chain[0];
  for (const s of first.skips) {
    if (byName.has(s))
      throw refuse(
        pkg,
        `${where}: ${goQuote(first.name)} skips ${goQuote(s)}, which is also ` +
          `an entry of the channel (only names outside the graph can be skipped)`,
      );
  }
  const tailNames = new Set(first.skips);
  if (first.replaces !== "") tailNames.add(first.replaces);
  const skippedBy = new Map<string, string>();
  const entries: string[] = [first.name];
  const tombstones: string[] = [];
  const skipRanges: Record<string, string> = {};
  for (const e of chain.slice(1)) {
    if (e.skipRange !== "") skipRanges[e.name] = e.skipRange;
    for (const s of e.skips) {
      if (byName.has(s))
        throw refuse(
          pkg,
          `${where}: ${goQuote(e.name)} skips ${goQuote(s)}, which is also an entry ` +
            `of the channel (only tombstones, which are not entries, can be skipped)`,
        );
      if (tailNames.has(s))
        throw refuse(
          pkg,
          `${where}: ${goQuote(s)} is named by the first entry ` +
            `${goQuote(first.name)} and skipped by ${goQuote(e.name)}`,
        );
      const prev = skippedBy.get(s);
      if (prev !== undefined)
        throw refuse(
          pkg,
          `${where}: ${goQuote(s)} is skipped by both ${goQuote(prev)} ` +
            `and ${goQuote(e.name)} (a tombstone is skipped by one entry)`,
        );
      skippedBy.set(s, e.name);
      entries.push(s);
      tombstones.push(s);
    }
    entries.push(e.name);
  }
  const g: GraphDescription = { name: ch.name, entries };
  if (tombstones.length > 0) g.tombstones = tombstones;
  const tail: NonNullable<GraphDescription["tailEdges"]> = {};
  if (first.replaces !== "") tail.replaces = first.replaces;
  if (first.skips.length > 0) tail.skips = [...first.skips];
  if (first.skipRange !== "") tail.skipRange = first.skipRange;
  if (Object.keys(tail).length > 0) g.tailEdges = tail;
  if (Object.keys(skipRanges).length > 0) g.skipRanges = skipRanges;
  return g;
}

function sameEntries(a: Channel, b: Channel): boolean {
  const key = (c: Channel): string[] =>
    (c.entries ?? []).map((e) => JSON.stringify([e.name, e.replaces, e.skips, e.skipRange])).sort(compareUtf8);
  const x = key(a);
  const y = key(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * One package of a catalog as a graph template whose render (with the catalog's bundles) gives the
 * same package, channel and bundle blobs; channel entries come out in replaces-chain order.
 * Refuses (TEMPLATE_CONVERT_GRAPH) what the template cannot express: deprecations, custom blobs,
 * package or channel properties, an icon without data, bundles without image or sharing an image,
 * bundles in no channel, and channels whose entries are not one replaces chain, that skip their own
 * entries, or skip one name from two entries.
 */
export function catalogToGraphTemplate(cfg: DeclarativeConfig, pkg?: string): GraphTemplate {
  const name = pickPackage(cfg, pkg);
  const pkgs = cfg.packages.filter((p) => p.name === name);
  if (pkgs.length !== 1) throw refuse(name, `the catalog has ${pkgs.length} olm.package blobs for it`);
  const p = pkgs[0];
  if (cfg.deprecations.some((d) => d.package === name))
    throw refuse(
      name,
      "it has an olm.deprecations blob, which a graph template does not carry (convert --to basic keeps it)",
    );
  const other = cfg.others.find((o) => o.package === name);
  if (other)
    throw refuse(
      name,
      `it has a ${goQuote(other.schema)} blob, which a graph template does not carry (convert --to basic keeps it)`,
    );
  if (p.properties.length > 0)
    throw refuse(name, "its olm.package blob has properties, which a graph template does not carry");
  if (p.icon && p.icon.base64data === null) throw refuse(name, "its icon has no base64data");
  const channels = cfg.channels.filter((c) => c.package === name);
  if (channels.length === 0) throw refuse(name, "it has no channel");
  const graphs = channels.map((c) => channelGraph(name, c));
  const bundles = cfg.bundles.filter((b) => b.package === name).sort((a, b) => compareUtf8(a.name, b.name));
  const live = new Set(channels.flatMap((c) => (c.entries ?? []).map((e) => e.name)));
  const images = new Map<string, string>();
  for (const b of bundles) {
    if (!live.has(b.name)) throw refuse(name, `bundle ${goQuote(b.name)} is in no channel`);
    if (b.image === "") throw refuse(name, `bundle ${goQuote(b.name)} has no image to render it from`);
    const prev = images.get(b.image);
    if (prev !== undefined)
      throw refuse(name, `bundles ${goQuote(prev)} and ${goQuote(b.name)} have the same image ${goQuote(b.image)}`);
    images.set(b.image, b.name);
  }
  const t: GraphTemplate = {
    schema: SCHEMA_GRAPH,
    package: { name },
    bundles: { images: [...images.keys()] },
    graphs,
  };
  if (p.defaultChannel !== "") t.package.defaultChannel = p.defaultChannel;
  if (p.description !== "") t.package.description = p.description;
  if (p.icon)
    t.package.icon = {
      base64data: Buffer.from(p.icon.base64data as Uint8Array).toString("base64"),
      mediatype: p.icon.mediatype,
    };
  try {
    checkGraphTemplate(t);
  } catch (e) {
    if (e instanceof OpcatError) throw refuse(name, e.message);
    throw e;
  }
  // Self-check: what the template renders must be the channels we read.
  channels.forEach((c, i) => {
    if (!sameEntries(c, graphChannel(name, graphs[i])))
      throw refuse(name, `channel ${goQuote(c.name)} would not render back to the same entries`);
  });
  return t;
}

/** Converts a catalog to a template and formats it (see ConvertOptions). */
export function convertCatalog(cfg: DeclarativeConfig, opts: ConvertOptions): string {
  const format = opts.output ?? "json";
  if (opts.to === "basic") return formatTemplateJson(catalogToBasicTemplateJson(cfg, opts.package), format);
  return formatGraphTemplate(catalogToGraphTemplate(cfg, opts.package), format);
}
