/** The catalogs page and the package list (search data): summaries computed once per revision. */
import type { CatalogRevision } from "../../serve/revision.js";
import { sendJson } from "../http.js";
import type { UiBlob, UiCatalogSummary, UiPackageList, UiPackageSummary } from "../uitypes.js";
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

/** GET /ui/api/catalogs: every catalog served, with counts. */
export function catalogsView(ctx: UiContext, r: UiRequest): void {
  const out: UiCatalogSummary[] = ctx.store.names().map((n) => ({
    ...catalogSummary(n, ctx.store.get(n)),
    previousRevision: ctx.store.previous(n)?.serial ?? 0,
  }));
  sendJson(r.res, 200, out);
}

/** GET /ui/api/catalogs/<c>/packages: the package summaries. */
export function packagesView(ctx: UiContext, r: UiRequest): void {
  sendJson(r.res, 200, packageList(servedRevision(ctx, r.parts[1])));
}
