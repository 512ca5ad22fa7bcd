/**
 * The catalogs page and the package list: summaries computed once per revision, searched and paged on
 * the server (a catalog of 100,000 packages sends the browser only the rows it shows).
 */
import type { CatalogRevision } from "../../serve/revision.js";
import { HttpError, sendJson } from "../http.js";
import type { UiBlob, UiCatalogSummary, UiPackageList, UiPackageSearchField, UiPackageSummary } from "../uitypes.js";
import { servedRevision, type UiContext, type UiRequest } from "./context.js";
import { blobs, derivedOf, props, str } from "./derived.js";

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
      summary: firstLine(str(p.description)).slice(0, 300),
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
        if (ann && str(ann.description)) row.summary = firstLine(str(ann.description)).slice(0, 300);
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
  const bundles = packages.reduce((n, p) => n + p.bundles, 0);
  const total = packages.length;
  d.list = { catalog: rev.catalog, revision: rev.serial, total, matched: total, bundles, offset: 0, packages };
  return d.list;
}

/** The first line of `s` (without splitting a description of megabytes into lines). */
/**
 * A package description's summary (Markdown, rendered inline by the UI): its first line of text, past blank
 * lines and headings ("## Overview"); the first heading's text when there is nothing else.
 */
function firstLine(s: string): string {
  let heading = "";
  for (const line of s.split("\n", 50)) {
    const t = line.trim();
    if (t === "") continue;
    const h = /^#{1,6}\s+(.*?)\s*#*$/.exec(t);
    if (!h) return t;
    heading ||= h[1];
  }
  return heading;
}

const FIELDS: readonly UiPackageSearchField[] = ["all", "name", "keyword", "api"];

/** What the search looks in, lower-cased once per revision: one string per field and package. */
interface SearchIndex {
  name: string[];
  keyword: string[];
  api: string[];
  provider: string[];
  /** The last queries' matches (package indexes), newest last. */
  recent: Map<string, Uint32Array>;
}

const searchIndexes = new WeakMap<UiPackageList, SearchIndex>();
const RECENT_QUERIES = 16;

function searchIndex(list: UiPackageList): SearchIndex {
  let ix = searchIndexes.get(list);
  if (ix) return ix;
  // NUL separates the values of a field, so that a search never matches across two of them
  const low = (xs: readonly string[]): string => xs.join("\u0000").toLowerCase();
  ix = {
    name: list.packages.map((p) => low([p.name, p.displayName])),
    keyword: list.packages.map((p) => low(p.keywords)),
    api: list.packages.map((p) => low(p.providedApis)),
    provider: list.packages.map((p) => p.provider.toLowerCase()),
    recent: new Map(),
  };
  searchIndexes.set(list, ix);
  return ix;
}

/**
 * Indexes of the packages matching `q` (case-insensitive substring) in `field`: `all` looks in the
 * name, display name, keywords, provided APIs and provider.
 */
export function searchPackages(list: UiPackageList, q: string, field: UiPackageSearchField): Uint32Array {
  const ix = searchIndex(list);
  const key = `${field}\u0000${q}`;
  const hit = ix.recent.get(key);
  if (hit) {
    ix.recent.delete(key);
    ix.recent.set(key, hit);
    return hit;
  }
  const needle = q.toLowerCase();
  const fields =
    field === "all" ? [ix.name, ix.keyword, ix.api, ix.provider] : [field === "name" ? ix.name : ix[field]];
  const out: number[] = [];
  for (let i = 0; i < list.packages.length; i++) if (fields.some((f) => f[i].includes(needle))) out.push(i);
  const found = Uint32Array.from(out);
  ix.recent.set(key, found);
  if (ix.recent.size > RECENT_QUERIES) ix.recent.delete(ix.recent.keys().next().value as string);
  return found;
}

function intParam(params: URLSearchParams, name: string, max: number): number | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  const n = /^\d{1,9}$/.test(v) ? Number(v) : NaN;
  if (!(n <= max))
    throw new HttpError(400, "SERVE_UI_BAD_REQUEST", `${name} must be a whole number from 0 to ${max}, not ${v}`);
  return n;
}

/** The package list answer for a search (`q`, `in`) and a page (`offset`, `limit`). */
export function packagePage(list: UiPackageList, params: URLSearchParams): UiPackageList {
  const q = params.get("q") ?? "";
  const field = (params.get("in") ?? "all") as UiPackageSearchField;
  if (!FIELDS.includes(field))
    throw new HttpError(400, "SERVE_UI_BAD_REQUEST", `in must be one of ${FIELDS.join(", ")}, not ${field}`);
  const offset = intParam(params, "offset", 1e9) ?? 0;
  const limit = intParam(params, "limit", 1e9);
  if (q === "" && offset === 0 && limit === undefined) return list;
  let rows: UiPackageSummary[];
  let matched: number;
  let bundles: number;
  if (q === "") {
    rows = list.packages.slice(offset, limit === undefined ? undefined : offset + limit);
    matched = list.total;
    bundles = list.bundles;
  } else {
    const found = searchPackages(list, q, field);
    const end = limit === undefined ? found.length : Math.min(found.length, offset + limit);
    rows = [];
    for (let i = offset; i < end; i++) rows.push(list.packages[found[i]]);
    matched = found.length;
    bundles = 0;
    for (const i of found) bundles += list.packages[i].bundles;
  }
  return {
    catalog: list.catalog,
    revision: list.revision,
    total: list.total,
    matched,
    bundles,
    offset,
    packages: rows,
  };
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
    bundles: list.bundles,
    ready: true,
    previousRevision: 0,
  };
  return d.catalog;
}

/** GET /ui/api/catalogs: every catalog served, with counts. */
export function catalogsView(ctx: UiContext, r: UiRequest): void {
  const out: UiCatalogSummary[] = ctx.store.names().map((n) => ({
    ...catalogSummary(n, ctx.store.get(n)),
    previousRevision: ctx.store.previous(n)?.serial ?? 0,
  }));
  sendJson(r.res, 200, out);
}

/**
 * GET /ui/api/catalogs/<c>/packages[?q=&in=&offset=&limit=]: the package summaries matching the
 * search, one page of them.
 */
export function packagesView(ctx: UiContext, r: UiRequest): void {
  sendJson(r.res, 200, packagePage(packageList(servedRevision(ctx, r.parts[1])), r.params));
}
