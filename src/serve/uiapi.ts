/**
 * The web UI of `opcat serve` (issue 18): its static assets (built by Vite into dist/ui) and the
 * JSON endpoints it reads, all derived from the store's current revisions:
 *
 *   GET /                                               the UI (index.html); GET /assets/*  its files
 *   GET /ui/api/catalogs                                catalogs served, with counts
 *   GET /ui/api/catalogs/<c>/packages                   package summaries (search data)
 *   GET /ui/api/catalogs/<c>/packages/<p>               every blob of one package
 *   GET /ui/api/catalogs/<c>/packages/<p>/icon          the package icon (image types only)
 *   GET /ui/api/catalogs/<c>/packages/<p>/mermaid?channel=&minimumEdge=
 *                                                       opm's render-graph Mermaid text (src/fbc/mermaid.ts)
 *   GET /ui/api/catalogs/<c>/packages/<p>/graph?channel=&layout=1&hide=  the upgrade graph (no channel:
 *                                                       the default channel; * or empty: all): bundles and
 *                                                       replaces/skips/skipRange edges; with layout=1 also
 *                                                       positions and edge paths (graphlayout.ts), without
 *                                                       the hidden edge kinds
 *   GET /ui/api/config                                   what this server offers: {cluster: boolean}
 *   GET|POST /ui/api/cluster/…                           the cluster pages (clusterui.ts), with --kubeconfig
 *   GET /ui/api/catalogs/<c>/changes                     what the last reload changed (graph?compare=previous draws it)
 *   POST /ui/api/render-template {template, catalog?}   renders a basic/semver/graph template with the
 *                                                       catalog as the (offline) --reuse source
 *
 * Every answer carries a strict Content-Security-Policy (scripts and styles from this origin only,
 * no inline code, no framing), `X-Content-Type-Options: nosniff` and no-referrer. Summaries are
 * computed once per revision. Errors are JSON `{"error": {"code", "message"}}` like the resolver API.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import { renderMermaid } from "../fbc/mermaid.js";
import { catalogValues } from "../fbc/write.js";
import { catalogTagLister } from "../template/graph/discover.js";
import { renderedSource } from "../template/source/imagesource.js";
import { renderTemplate } from "../template/index.js";
import { reuseSource } from "../template/source/reuse.js";
import { SemverError, SemverPanic, tryParseRange, tryParseVersion, type Version } from "../semver/index.js";
import type { ClusterUi, ClusterUiOptions } from "./clusterui.js";
import { GraphLayouter } from "./graphlayout.js";
import type { CatalogRevision } from "./revision.js";
import type { CatalogStore } from "./store.js";
import type {
  UiBlob,
  UiCatalogChanges,
  UiCatalogSummary,
  UiGraph,
  UiGraphDiff,
  UiGraphEdge,
  UiGraphNode,
  UiPackageDetail,
  UiPackageChange,
  UiPackageList,
  UiPackageSummary,
  UiRenderAnswer,
  UiRenderRequest,
} from "./uitypes.js";

export const UI_API_PREFIX = "/ui/api/";

/** The policy sent with every UI answer: nothing inline, nothing from elsewhere. */
export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src " +
  "'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Icon media types served as-is (anything else is refused: a package icon is catalog data, not trusted). */
const ICON_TYPES = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/svg+xml",
  "image/webp",
  "image/bmp",
  "image/x-icon",
  "image/vnd.microsoft.icon",
]);

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

export interface UiOptions {
  /** Cluster pages (Operators, Instances, approvals) from this kubeconfig; none without it. */
  cluster?: ClusterUiOptions;
  /** Directory of the built UI (default: dist/ui of this package). */
  assetsDir?: string;
  /** Largest template accepted by POST /ui/api/render-template, in bytes (default 1 MiB). */
  maxRequestBytes?: number;
  /** Receives one entry per 500 answer with the error behind it (the client only reads "internal error"). */
  errorLog?: (entry: Record<string, unknown>) => void;
}

/** dist/ui, found from this module in both src/serve (tests) and dist/serve (the package). */
export function defaultUiAssetsDir(): string {
  return fileURLToPath(new URL("../../dist/ui/", import.meta.url));
}

class UiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
}

/** What the UI needs of one revision, computed on first use. */
interface Derived {
  list?: UiPackageList;
  catalog?: UiCatalogSummary;
  /** Package content hashes (for the diff of two revisions). */
  digests?: Map<string, string>;
  /** The changes against the revision this one replaced. */
  changes?: { from: CatalogRevision; value: UiCatalogChanges };
  /** Graphs (laid out or not) by package, channel and hidden edge kinds; the oldest go first past GRAPH_CACHE. */
  graphs?: Map<string, Promise<UiGraph>>;
}
const GRAPH_CACHE = 256;
const EDGE_KINDS = new Set<UiGraphEdge["kind"]>(["replaces", "skips", "skipRange"]);
const derived = new WeakMap<CatalogRevision, Derived>();

function derivedOf(rev: CatalogRevision): Derived {
  let d = derived.get(rev);
  if (!d) derived.set(rev, (d = {}));
  return d;
}

function blobs(rev: CatalogRevision, schema: string, pkg: string, name: string): UiBlob[] {
  const ids = rev.query(schema, pkg, name);
  const out: UiBlob[] = [];
  if (!ids) return out;
  for (const i of ids) out.push(JSON.parse(rev.line(i).toString("utf8")) as UiBlob);
  return out;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function props(b: UiBlob): { type: string; value: unknown }[] {
  return Array.isArray(b.properties) ? (b.properties as { type: string; value: unknown }[]) : [];
}

/** A graph of a revision, computed once (a failure is not kept); the oldest go first past GRAPH_CACHE. */
function cachedGraph(rev: CatalogRevision, key: string, make: () => Promise<UiGraph>): Promise<UiGraph> {
  const cache = (derivedOf(rev).graphs ??= new Map());
  let p = cache.get(key);
  if (!p) {
    p = make();
    if (cache.size >= GRAPH_CACHE) cache.delete(cache.keys().next().value as string);
    cache.set(key, p);
    const made = p;
    made.catch(() => cache.get(key) === made && cache.delete(key));
  }
  return p;
}

/** Package summaries of a revision (one pass over its package, channel, bundle and deprecation blobs). */
export function packageList(rev: CatalogRevision): UiPackageList {
  const d = derivedOf(rev);
  if (d.list) return d.list;
  const rows = new Map<
    string,
    UiPackageSummary & { apis: Set<string>; kw: Set<string>; versions: Map<string, string>; heads: Map<string, string> }
  >();
  for (const p of blobs(rev, "olm.package", "", "")) {
    const name = str(p.name);
    rows.set(name, {
      name,
      displayName: name,
      defaultChannel: str(p.defaultChannel),
      channels: [],
      bundles: 0,
      headVersion: "",
      provider: "",
      keywords: [],
      providedApis: [],
      hasIcon: typeof p.icon === "object" && p.icon !== null && typeof (p.icon as UiBlob).base64data === "string",
      deprecated: false,
      summary: str(p.description).split("\n")[0].slice(0, 300),
      apis: new Set(),
      kw: new Set(),
      versions: new Map(),
      heads: new Map(),
    });
  }
  for (const b of blobs(rev, "olm.bundle", "", "")) {
    const row = rows.get(str(b.package));
    if (!row) continue;
    row.bundles++;
    for (const p of props(b)) {
      const v = (p.value ?? {}) as Record<string, unknown>;
      if (p.type === "olm.package") row.versions.set(str(b.name), str(v.version));
      else if (p.type === "olm.gvk") row.apis.add(`${str(v.kind)}.${str(v.version)}.${str(v.group)}`);
      else if (p.type === "olm.csv.metadata") {
        if (Array.isArray(v.keywords)) for (const k of v.keywords) if (typeof k === "string" && k !== "") row.kw.add(k);
        const prov = v.provider as Record<string, unknown> | undefined;
        if (prov && str(prov.name)) row.provider = str(prov.name);
        if (str(v.displayName)) row.displayName = str(v.displayName);
        const ann = v.annotations as Record<string, unknown> | undefined;
        if (ann && str(ann.description)) row.summary = str(ann.description).slice(0, 300);
        for (const crd of ((v.customresourcedefinitions as Record<string, unknown> | undefined)?.owned as
          | Record<string, unknown>[]
          | undefined) ?? []) {
          if (str(crd.kind) && str(crd.name))
            row.apis.add(`${str(crd.kind)}.${str(crd.version)}.${str(crd.name).split(".").slice(1).join(".")}`);
        }
      }
    }
  }
  for (const c of blobs(rev, "olm.channel", "", "")) {
    const row = rows.get(str(c.package));
    if (!row) continue;
    row.channels.push(str(c.name));
    if (str(c.name) === row.defaultChannel) {
      const entries = Array.isArray(c.entries) ? (c.entries as UiBlob[]) : [];
      // the head: the entry no other entry replaces or skips
      const replaced = new Set<string>();
      for (const e of entries) {
        if (str(e.replaces)) replaced.add(str(e.replaces));
        if (Array.isArray(e.skips)) for (const s of e.skips) replaced.add(str(s));
      }
      const heads = entries.filter((e) => !replaced.has(str(e.name)));
      if (heads.length === 1) row.headVersion = row.versions.get(str(heads[0].name)) ?? "";
    }
  }
  for (const dep of blobs(rev, "olm.deprecations", "", "")) {
    const row = rows.get(str(dep.package));
    if (!row || !Array.isArray(dep.entries)) continue;
    for (const e of dep.entries as UiBlob[]) {
      const ref = (e.reference ?? {}) as UiBlob;
      if (str(ref.schema) === "olm.package") row.deprecated = true;
    }
  }
  const packages: UiPackageSummary[] = [...rows.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ apis, kw, versions: _v, heads: _h, ...row }) => ({
      ...row,
      channels: row.channels.sort(),
      keywords: [...kw].sort(),
      providedApis: [...apis].sort(),
    }));
  d.list = { catalog: rev.catalog, revision: rev.serial, packages };
  return d.list;
}

function catalogSummary(name: string, rev: CatalogRevision | undefined): UiCatalogSummary {
  if (!rev)
    return {
      name,
      revision: 0,
      digest: "",
      lastModified: "",
      packages: 0,
      channels: 0,
      bundles: 0,
      ready: false,
      previousRevision: 0,
    };
  const d = derivedOf(rev);
  if (d.catalog) return d.catalog;
  const list = packageList(rev);
  d.catalog = {
    name,
    revision: rev.serial,
    digest: rev.digest,
    lastModified: rev.lastModified.toISOString(),
    packages: list.packages.length,
    channels: list.packages.reduce((n, p) => n + p.channels.length, 0),
    // distinct olm.bundle blobs (a bundle in three channels counts once), as on the package list
    bundles: list.packages.reduce((n, p) => n + p.bundles, 0),
    ready: true,
    previousRevision: 0,
  };
  return d.catalog;
}

/** Each package's blobs, hashed (to find the packages a reload changed without parsing them). */
function packageDigests(rev: CatalogRevision): Map<string, string> {
  const d = derivedOf(rev);
  if (d.digests) return d.digests;
  const out = new Map<string, string>();
  for (const p of blobs(rev, "olm.package", "", "")) {
    const name = str(p.name);
    const h = createHash("sha256");
    for (const i of rev.query("olm.package", "", name) ?? []) h.update(rev.line(i));
    for (const i of rev.query("", name, "") ?? []) h.update(rev.line(i));
    out.set(name, h.digest("hex"));
  }
  d.digests = out;
  return out;
}

/**
 * What `to` changed against `from`: packages added, removed, or
 * whose blobs differ, with their bundle and edge changes.
 */
export function catalogChanges(from: CatalogRevision, to: CatalogRevision): UiCatalogChanges {
  const d = derivedOf(to);
  if (d.changes?.from === from) return d.changes.value;
  const a = packageDigests(from);
  const b = packageDigests(to);
  const packages: UiPackageChange[] = [];
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    if (a.get(name) === b.get(name)) continue;
    const before = packageDetail(from, name);
    const after = packageDetail(to, name);
    const status = !before ? "added" : !after ? "removed" : "changed";
    // existing: in both revisions
    packages.push({ ...graphDiff(after, before), existing: status === "changed", status });
  }
  const rev = (r: CatalogRevision): UiCatalogChanges["from"] => ({
    revision: r.serial,
    digest: r.digest,
    lastModified: r.lastModified.toISOString(),
  });
  const value: UiCatalogChanges = { catalog: to.catalog, from: rev(from), to: rev(to), packages };
  d.changes = { from, value };
  return value;
}

/**
 * The union of two graphs of a package, what only `after` has
 * marked added and what only `before` has marked removed.
 */
export function graphUnion(before: UiGraph | undefined, after: UiGraph | undefined): UiGraph {
  const base = after ?? before;
  if (!base) throw new Error("graphUnion needs a graph");
  const nodes = new Map<string, UiGraphNode>();
  const edges = new Map<string, UiGraphEdge>();
  const key = (e: UiGraphEdge): string => `${e.from}\u0000${e.to}\u0000${e.kind}`;
  const beforeNames = new Set((before?.nodes ?? []).map((n) => n.name));
  for (const n of after?.nodes ?? []) nodes.set(n.name, beforeNames.has(n.name) ? n : { ...n, change: "added" });
  for (const n of before?.nodes ?? [])
    if (!nodes.has(n.name)) nodes.set(n.name, { ...n, heads: [], change: "removed" });
  const beforeKeys = new Set((before?.edges ?? []).map(key));
  for (const e of after?.edges ?? []) edges.set(key(e), beforeKeys.has(key(e)) ? e : { ...e, change: "added" });
  for (const e of before?.edges ?? []) if (!edges.has(key(e))) edges.set(key(e), { ...e, change: "removed" });
  return {
    ...base,
    nodes: [...nodes.values()],
    edges: [...edges.values()],
    warnings: [...new Set([...(after?.warnings ?? []), ...(before?.warnings ?? [])])],
  };
}

/** Every blob of one package (undefined when the revision has no such package). */
export function packageDetail(rev: CatalogRevision, pkg: string): UiPackageDetail | undefined {
  const head = blobs(rev, "olm.package", "", pkg);
  if (head.length === 0) return undefined;
  const channels: UiBlob[] = [];
  const bundles: UiBlob[] = [];
  const others: UiBlob[] = [];
  let deprecations: UiBlob | null = null;
  for (const b of blobs(rev, "", pkg, "")) {
    if (b.schema === "olm.channel") channels.push(b);
    else if (b.schema === "olm.bundle") bundles.push(b);
    else if (b.schema === "olm.deprecations") deprecations = b;
    else if (b.schema !== "olm.package") others.push(b);
  }
  return { catalog: rev.catalog, revision: rev.serial, package: head[0], channels, bundles, deprecations, others };
}

/** The Mermaid text opm's `alpha render-graph` prints for one package (optionally one channel). */
export function packageMermaid(
  rev: CatalogRevision,
  pkg: string,
  channel: string,
  minimumEdge: string,
): string | undefined {
  const ids = rev.query("", pkg, "");
  const pkgIds = rev.query("olm.package", "", pkg);
  if (!pkgIds || pkgIds.length === 0 || !ids) return undefined;
  let text = "";
  for (const i of pkgIds) text += rev.line(i).toString("utf8");
  for (const i of ids) text += rev.line(i).toString("utf8");
  const cfg = loadText(text, `${rev.catalog}.jsonl`).config;
  if (channel !== "") {
    cfg.channels = cfg.channels.filter((c) => c.name === channel);
    if (cfg.channels.length === 0)
      throw new UiError(
        404,
        "SERVE_UI_NOT_FOUND",
        `package ${JSON.stringify(pkg)} has no channel ${JSON.stringify(channel)}`,
      );
  }
  try {
    // drawn as `opcat render-graph --package-name <pkg>` draws it (no --draw-v0-semantics)
    return renderMermaid(cfg, { packageName: pkg, minimumEdge: minimumEdge || undefined, drawV0Semantics: false }).text;
  } catch (e) {
    if (e instanceof OpcatError) throw new UiError(400, e.code, e.message);
    throw e;
  }
}

/**
 * The upgrade graph of a package (all channels, or one): one node per bundle in a channel, an edge
 * from every bundle a channel entry replaces, skips or whose version its skipRange covers (as opm's
 * render-graph draws them). Heads are the entries nothing in their channel replaces or skips.
 */
export function packageGraph(detail: UiPackageDetail, channel: string): UiGraph {
  const versions = new Map<string, string>();
  const parsed = new Map<string, Version | null>();
  for (const b of detail.bundles) {
    for (const p of props(b))
      if (p.type === "olm.package" && !versions.has(str(b.name)))
        versions.set(str(b.name), str((p.value as UiBlob | null)?.version));
  }
  const parse = (name: string): Version | null => {
    let v = parsed.get(name);
    if (v === undefined) {
      const t = tryParseVersion(versions.get(name) ?? "");
      parsed.set(name, (v = t instanceof SemverError ? null : t));
    }
    return v;
  };
  const depBundles = new Set<string>();
  const depChannels = new Set<string>();
  let pkgDeprecated = false;
  for (const e of (detail.deprecations?.entries as UiBlob[] | undefined) ?? []) {
    const ref = (e.reference ?? {}) as UiBlob;
    if (ref.schema === "olm.bundle") depBundles.add(str(ref.name));
    else if (ref.schema === "olm.channel") depChannels.add(str(ref.name));
    else if (ref.schema === "olm.package") pkgDeprecated = true;
  }
  const nodes = new Map<string, UiGraphNode>();
  const edges: UiGraphEdge[] = [];
  const warnings: string[] = [];
  const channels = detail.channels.filter((c) => channel === "" || c.name === channel);
  if (channels.length === 0 && channel !== "")
    throw new UiError(
      404,
      "SERVE_UI_NOT_FOUND",
      `package ${JSON.stringify(str(detail.package.name))} has no channel ${JSON.stringify(channel)}`,
    );
  const node = (name: string, ch: string): UiGraphNode => {
    let n = nodes.get(name);
    if (!n)
      nodes.set(
        name,
        (n = {
          name,
          version: versions.get(name) ?? "",
          channels: [],
          heads: [],
          deprecated: depBundles.has(name),
          inCatalog: versions.has(name),
        }),
      );
    if (ch !== "" && !n.channels.includes(ch)) n.channels.push(ch);
    return n;
  };
  const byKey = new Map<string, UiGraphEdge>();
  const edge = (from: string, to: string, kind: UiGraphEdge["kind"], ch: string, label = ""): void => {
    const key = `${from}\u0000${to}\u0000${kind}`;
    const existing = byKey.get(key);
    if (existing) {
      if (!existing.channels.includes(ch)) existing.channels.push(ch);
      return;
    }
    const e: UiGraphEdge = { from, to, kind, channels: [ch], ...(label ? { label } : {}) };
    byKey.set(key, e);
    edges.push(e);
  };
  for (const c of channels) {
    const ch = str(c.name);
    const entries = Array.isArray(c.entries) ? (c.entries as UiBlob[]) : [];
    const replaced = new Set<string>();
    for (const e of entries) node(str(e.name), ch);
    for (const e of entries) {
      const to = str(e.name);
      if (str(e.replaces)) {
        replaced.add(str(e.replaces));
        node(str(e.replaces), "");
        edge(str(e.replaces), to, "replaces", ch);
      }
      for (const sk of Array.isArray(e.skips) ? e.skips : []) {
        replaced.add(str(sk));
        node(str(sk), "");
        edge(str(sk), to, "skips", ch);
      }
      const sr = str(e.skipRange);
      if (sr) {
        const r = tryParseRange(sr);
        if (r instanceof SemverError) {
          warnings.push(`ignoring invalid skipRange ${JSON.stringify(sr)} of ${JSON.stringify(to)}: ${r.message}`);
          continue;
        }
        for (const other of entries) {
          const v = parse(str(other.name));
          if (!v || str(other.name) === to) continue;
          let hit = false;
          try {
            hit = r(v);
          } catch (err) {
            if (!(err instanceof SemverPanic)) throw err;
          }
          if (hit) edge(str(other.name), to, "skipRange", ch, sr);
        }
      }
    }
    for (const e of entries) if (!replaced.has(str(e.name))) node(str(e.name), ch).heads.push(ch);
  }
  return {
    package: str(detail.package.name),
    defaultChannel: str(detail.package.defaultChannel),
    channel,
    channels: detail.channels.map((c) => str(c.name)).sort(),
    deprecatedPackage: pkgDeprecated,
    deprecatedChannels: [...depChannels].filter((c) => channels.some((x) => x.name === c)),
    nodes: [...nodes.values()],
    edges,
    warnings,
  };
}

/** What a rendered package changes against the served one (bundles and edges over all channels). */
export function graphDiff(rendered: UiPackageDetail | undefined, current: UiPackageDetail | undefined): UiGraphDiff {
  const edgeKeys = (d: UiPackageDetail | undefined): Set<string> =>
    new Set(d ? packageGraph(d, "").edges.map((e) => `${e.from} → ${e.to} (${e.kind})`) : []);
  const bundleNames = (d: UiPackageDetail | undefined): Set<string> =>
    new Set(d ? d.bundles.map((b) => str(b.name)) : []);
  const nb = bundleNames(rendered);
  const ob = bundleNames(current);
  const ne = edgeKeys(rendered);
  const oe = edgeKeys(current);
  const minus = (a: Set<string>, b: Set<string>): string[] => [...a].filter((x) => !b.has(x)).sort();
  return {
    package: str((rendered ?? current)?.package.name),
    existing: current !== undefined,
    addedBundles: minus(nb, ob),
    removedBundles: minus(ob, nb),
    addedEdges: minus(ne, oe),
    removedEdges: minus(oe, ne),
  };
}

/** The UI's routes; `handle` answers them and returns false for any other path. */
export class UiHandler {
  readonly #store: CatalogStore;
  readonly #dir: string;
  readonly #max: number;
  readonly #assets = new Map<string, Asset | null>();
  readonly #layouter = new GraphLayouter();
  #warmed = false;
  readonly #clusterOpts: ClusterUiOptions | undefined;
  readonly #errorLog: ((entry: Record<string, unknown>) => void) | undefined;
  // the Kubernetes client loads with the first cluster request, not with serve
  #cluster:
    | Promise<{ ui: ClusterUi; failure: (e: unknown) => { status: number; code: string; message: string } }>
    | undefined;

  constructor(store: CatalogStore, opts: UiOptions = {}) {
    this.#store = store;
    this.#dir = opts.assetsDir ?? defaultUiAssetsDir();
    this.#max = opts.maxRequestBytes ?? 1024 * 1024;
    this.#clusterOpts = opts.cluster;
    this.#errorLog = opts.errorLog;
  }

  /** Whether the built UI is present (`npm run build` writes it). */
  available(): boolean {
    return this.#asset("index.html") !== null;
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean {
    const method = req.method ?? "GET";
    if (path.startsWith(UI_API_PREFIX)) {
      // someone is using the UI: have the graph layout engine ready before a graph is asked for
      if (!this.#warmed) {
        this.#warmed = true;
        this.#layouter.warm();
      }
      this.#api(req, res, method, path.slice(UI_API_PREFIX.length), new URLSearchParams(query)).catch((e: unknown) => {
        if (e instanceof UiError) return sendJson(res, e.status, { error: { code: e.code, message: e.message } });
        this.#errorLog?.({
          level: "error",
          msg: "internal error",
          method,
          path,
          error: e instanceof Error ? (e.stack ?? e.message) : String(e),
        });
        if (!res.headersSent) sendJson(res, 500, { error: { code: "SERVE_UI_INTERNAL", message: "internal error" } });
        else res.destroy();
      });
      return true;
    }
    if (path === "/favicon.ico") {
      // the page declares its icon (an SVG under /assets/); browsers that still ask for this get "none"
      if (method !== "GET" && method !== "HEAD") return false;
      res.setHeader("Cache-Control", "public, max-age=86400");
      res.writeHead(204);
      res.end();
      return true;
    }
    const file =
      path === "/" || path === "/index.html"
        ? "index.html"
        : path.startsWith("/assets/") || path === "/favicon.svg"
          ? path.slice(1)
          : undefined;
    if (file === undefined) return false;
    if (method !== "GET" && method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      sendPlain(res, 405, "Method Not Allowed");
      return true;
    }
    const asset = this.#asset(file);
    if (!asset) {
      sendPlain(
        res,
        404,
        file === "index.html"
          ? "the web UI is not built: run `npm run build` (or start with --no-ui)"
          : "404 page not found",
      );
      return true;
    }
    securityHeaders(res);
    res.setHeader("Content-Type", asset.type);
    res.setHeader("ETag", asset.etag);
    res.setHeader("Cache-Control", file.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache");
    res.setHeader("Vary", "Accept-Encoding");
    if (req.headers["if-none-match"] === asset.etag) {
      res.writeHead(304);
      res.end();
      return true;
    }
    let body = asset.body;
    if (asset.gzip && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) {
      body = asset.gzip;
      res.setHeader("Content-Encoding", "gzip");
    }
    res.setHeader("Content-Length", body.length);
    res.writeHead(200);
    res.end(method === "HEAD" ? undefined : body);
    return true;
  }

  #asset(file: string): Asset | null {
    const hit = this.#assets.get(file);
    if (hit !== undefined) return hit;
    let asset: Asset | null = null;
    const full = normalize(join(this.#dir, file));
    if (full.startsWith(normalize(this.#dir + sep)) && !file.includes("..")) {
      try {
        if (statSync(full).isFile()) {
          const body = readFileSync(full);
          const type = MIME[extname(full)] ?? "application/octet-stream";
          const etag = `"${body.length.toString(36)}-${hashOf(body)}"`;
          asset = {
            body,
            type,
            etag,
            gzip: body.length > 1024 && !type.startsWith("image/png") ? gzipSync(body) : undefined,
          };
        }
      } catch {
        asset = null;
      }
    }
    // index.html is re-read while missing (a build may come later); everything else is cached once
    if (asset || file !== "index.html") this.#assets.set(file, asset);
    return asset;
  }

  async #api(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    rest: string,
    params: URLSearchParams,
  ): Promise<void> {
    const parts = rest.split("/").map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        throw new UiError(400, "SERVE_UI_BAD_REQUEST", `invalid path segment ${JSON.stringify(p)}`);
      }
    });
    if (parts[0] === "render-template" && parts.length === 1) {
      if (method !== "POST") throw new UiError(405, "SERVE_UI_METHOD", "use POST");
      return sendJson(res, 200, await this.#render(req));
    }
    if (parts[0] === "config" && parts.length === 1)
      return sendJson(res, 200, { cluster: this.#clusterOpts !== undefined });
    if (parts[0] === "cluster") return sendJson(res, 200, await this.#clusterApi(req, method, parts.slice(1)));
    if (method !== "GET" && method !== "HEAD") throw new UiError(405, "SERVE_UI_METHOD", "use GET");
    if (parts[0] !== "catalogs") throw new UiError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/${rest}`);
    if (parts.length === 1) {
      const out: UiCatalogSummary[] = this.#store.names().map((n) => ({
        ...catalogSummary(n, this.#store.get(n)),
        previousRevision: this.#store.previous(n)?.serial ?? 0,
      }));
      return sendJson(res, 200, out);
    }
    const rev = this.#store.get(parts[1]);
    if (!rev)
      throw new UiError(
        404,
        "SERVE_UI_NOT_FOUND",
        `no catalog ${JSON.stringify(parts[1])} is ` +
          `served${this.#store.names().includes(parts[1]) ? " (it has no valid content yet)" : ""}`,
      );
    if (parts.length === 3 && parts[2] === "packages") return sendJson(res, 200, packageList(rev));
    if (parts.length === 3 && parts[2] === "changes") {
      const prev = this.#store.previous(rev.catalog);
      if (!prev)
        throw new UiError(
          404,
          "SERVE_UI_NO_PREVIOUS",
          `catalog ${JSON.stringify(rev.catalog)} has not been reloaded since the ` +
            `server started (or the server keeps no previous revision: the UI is off)`,
        );
      return sendJson(res, 200, catalogChanges(prev, rev));
    }
    if (parts[2] !== "packages" || parts.length < 4 || parts.length > 5)
      throw new UiError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/${rest}`);
    const pkg = parts[3];
    const missing = (): UiError =>
      new UiError(
        404,
        "SERVE_UI_NOT_FOUND",
        `catalog ${JSON.stringify(rev.catalog)} has no package ${JSON.stringify(pkg)}`,
      );
    if (parts.length === 4) {
      const detail = packageDetail(rev, pkg);
      if (!detail) throw missing();
      return sendJson(res, 200, detail);
    }
    if (parts[4] === "graph") return sendJson(res, 200, await this.#graph(rev, pkg, params, missing));
    if (parts[4] === "mermaid") {
      const text = packageMermaid(rev, pkg, params.get("channel") ?? "", params.get("minimumEdge") ?? "");
      if (text === undefined) throw missing();
      securityHeaders(res);
      const body = Buffer.from(text);
      res.setHeader("Content-Type", "text/plain; charset=utf-8");
      res.setHeader("Content-Length", body.length);
      res.writeHead(200);
      res.end(method === "HEAD" ? undefined : body);
      return;
    }
    if (parts[4] === "icon") {
      const p = blobs(rev, "olm.package", "", pkg)[0];
      if (!p) throw missing();
      const icon = (p.icon ?? null) as UiBlob | null;
      const type = str(icon?.mediatype).toLowerCase().trim();
      if (!icon || typeof icon.base64data !== "string")
        throw new UiError(404, "SERVE_UI_NOT_FOUND", `package ${JSON.stringify(pkg)} has no icon`);
      if (!ICON_TYPES.has(type))
        throw new UiError(
          415,
          "SERVE_UI_ICON_TYPE",
          `package ${JSON.stringify(pkg)} has an icon of media type ` +
            `${JSON.stringify(type)}, which is not an image type the UI shows`,
        );
      const body = Buffer.from(icon.base64data, "base64");
      securityHeaders(res);
      // an SVG icon may hold script: it is only ever shown through <img> (scripts never run there), and
      // this sandboxing policy keeps it inert even when opened directly
      res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox");
      res.setHeader("Content-Type", type);
      res.setHeader("Content-Length", body.length);
      res.setHeader("Cache-Control", "no-cache");
      res.writeHead(200);
      res.end(method === "HEAD" ? undefined : body);
      return;
    }
    throw new UiError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/${rest}`);
  }

  async #clusterApi(req: IncomingMessage, method: string, parts: string[]): Promise<unknown> {
    if (!this.#clusterOpts)
      throw new UiError(404, "SERVE_UI_NO_CLUSTER", "this server shows no cluster: start it with --kubeconfig <file>");
    const opts = this.#clusterOpts;
    this.#cluster ??= import("./clusterui.js").then((m) => ({ ui: new m.ClusterUi(opts), failure: m.clusterFailure }));
    const { ui, failure } = await this.#cluster;
    const get = method === "GET" || method === "HEAD";
    try {
      if (parts.length === 0 && get) return await ui.info();
      if (parts.length === 1 && parts[0] === "operators" && get) return await ui.operators();
      if (parts.length === 1 && parts[0] === "instances" && get) return await ui.instances();
      if (parts.length === 2 && parts[0] === "instances" && get) return await ui.instance(parts[1]);
      if (parts.length === 3 && parts[0] === "instances" && (parts[2] === "approve" || parts[2] === "deny")) {
        if (method !== "POST") throw new UiError(405, "SERVE_UI_METHOD", "use POST");
        return await ui.decide(req, parts[1], parts[2] === "deny");
      }
    } catch (e) {
      if (e instanceof UiError) throw e;
      const f = failure(e);
      throw new UiError(f.status, f.code, f.message);
    }
    throw new UiError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/cluster/${parts.join("/")}`);
  }

  /** A package's graph, with its layout when asked (`layout=1`, `hide=` edge kinds), computed once per revision. */
  #graph(rev: CatalogRevision, pkg: string, params: URLSearchParams, missing: () => UiError): Promise<UiGraph> {
    // no channel: the package's default channel; "*" (or empty): all channels
    const asked = params.get("channel");
    let channel: string;
    if (asked === null) {
      const p = blobs(rev, "olm.package", "", pkg)[0];
      if (!p) throw missing();
      channel = str(p.defaultChannel);
    } else channel = asked === "*" ? "" : asked;
    const hide = (params.get("hide") ?? "").split(",").filter((k) => k !== "");
    for (const k of hide)
      if (!EDGE_KINDS.has(k as UiGraphEdge["kind"]))
        throw new UiError(
          400,
          "SERVE_UI_BAD_REQUEST",
          `hide: unknown edge kind ${JSON.stringify(k)} (replaces, skips or skipRange)`,
        );
    const hidden = new Set(hide.sort() as UiGraphEdge["kind"][]);
    // compare=previous: the union with the graph of the revision this one replaced, changes marked
    const compare = params.get("compare") === "previous";
    const prev = compare ? this.#store.previous(rev.catalog) : undefined;
    if (compare && !prev)
      throw new UiError(
        404,
        "SERVE_UI_NO_PREVIOUS",
        `catalog ${JSON.stringify(rev.catalog)} has not been reloaded since the server started`,
      );
    const base = `${pkg}\u0000${channel}\u0000${compare ? "previous" : ""}`;
    const plain = cachedGraph(rev, `${base}\u0000-`, async () => {
      if (!prev) {
        const detail = packageDetail(rev, pkg);
        if (!detail) throw missing();
        return packageGraph(detail, channel);
      }
      // either side may lack the package (added or removed) or the channel
      const side = (r: CatalogRevision): UiGraph | undefined => {
        const detail = packageDetail(r, pkg);
        if (!detail || (channel !== "" && !detail.channels.some((c) => c.name === channel))) return undefined;
        return packageGraph(detail, channel);
      };
      const before = side(prev);
      const after = side(rev);
      if (!before && !after) throw missing();
      return { ...graphUnion(before, after), compared: { from: prev.serial, to: rev.serial } };
    });
    if (params.get("layout") !== "1") return plain;
    return cachedGraph(rev, `${base}\u0000${[...hidden].join(",")}`, async () => {
      const g = await plain;
      return { ...g, layout: await this.#layouter.layout(g, hidden) };
    });
  }

  async #render(req: IncomingMessage): Promise<UiRenderAnswer> {
    if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? "")))
      throw new UiError(415, "SERVE_UI_MEDIA_TYPE", "send the request as application/json");
    const raw = await readBody(req, this.#max);
    let body: UiRenderRequest;
    try {
      body = JSON.parse(raw) as UiRenderRequest;
    } catch (e) {
      throw new UiError(400, "SERVE_UI_BAD_REQUEST", `the request body is not JSON: ${(e as Error).message}`);
    }
    if (typeof body !== "object" || body === null || typeof body.template !== "string")
      throw new UiError(400, "SERVE_UI_BAD_REQUEST", 'the request needs "template": the template text (YAML or JSON)');
    const name = body.catalog ?? this.#store.names()[0];
    const rev = name === undefined ? undefined : this.#store.get(name);
    if (!rev) throw new UiError(404, "SERVE_UI_NOT_FOUND", `no catalog ${JSON.stringify(name ?? "")} is served`);
    const reused = loadText(rev.jsonl.toString("utf8"), `${rev.catalog}.jsonl`).config;
    // offline: the catalog answers every reference (tags too); nothing is pulled from a registry
    const src = renderedSource(reuseSource(reused, { reuseTags: true }));
    let cfg;
    try {
      cfg = await renderTemplate(body.template, src, { tags: catalogTagLister(reused) });
    } catch (e) {
      if (e instanceof OpcatError) throw new UiError(422, e.code, e.message);
      throw e;
    }
    const out = [...catalogValues(cfg)] as UiBlob[];
    let mermaid = "";
    const warnings: string[] = [];
    try {
      const m = renderMermaid(cfg, { drawV0Semantics: false });
      mermaid = m.text;
      warnings.push(...m.warnings);
    } catch (e) {
      warnings.push(`graph: ${(e as Error).message}`);
    }
    const byPkg = new Map<string, UiPackageDetail>();
    for (const b of out) {
      const pkgName = b.schema === "olm.package" ? str(b.name) : str(b.package);
      if (pkgName === "") continue;
      let d = byPkg.get(pkgName);
      if (!d)
        byPkg.set(
          pkgName,
          (d = {
            catalog: "",
            revision: 0,
            package: { schema: "olm.package", name: pkgName },
            channels: [],
            bundles: [],
            deprecations: null,
            others: [],
          }),
        );
      if (b.schema === "olm.package") d.package = b;
      else if (b.schema === "olm.channel") d.channels.push(b);
      else if (b.schema === "olm.bundle") d.bundles.push(b);
      else if (b.schema === "olm.deprecations") d.deprecations = b;
    }
    const diff = [...byPkg.values()].map((d) => graphDiff(d, packageDetail(rev, str(d.package.name))));
    return { blobs: out, mermaid, warnings, diff };
  }
}

function securityHeaders(res: ServerResponse): void {
  res.setHeader("Content-Security-Policy", UI_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return void res.destroy();
  securityHeaders(res);
  const body = Buffer.from(JSON.stringify(value));
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Content-Length", body.length);
  if (status === 405) res.setHeader("Allow", "GET, HEAD, POST");
  res.writeHead(status);
  res.end(res.req.method === "HEAD" ? undefined : body);
}

function sendPlain(res: ServerResponse, status: number, text: string): void {
  securityHeaders(res);
  const body = Buffer.from(text + "\n");
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.writeHead(status);
  res.end(body);
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > max)
    return Promise.reject(new UiError(413, "SERVE_UI_TOO_LARGE", `the request body is larger than ${max} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const onData = (c: Buffer): void => {
      n += c.length;
      if (n > max) {
        req.off("data", onData);
        req.pause();
        reject(new UiError(413, "SERVE_UI_TOO_LARGE", `the request body is larger than ${max} bytes`));
        return;
      }
      chunks.push(c);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks, n).toString("utf8")));
    req.on("error", reject);
  });
}

function hashOf(b: Buffer): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) {
    h ^= b[i];
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}
