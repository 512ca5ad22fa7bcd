/**
 * What the last reload of a catalog changed: packages added, removed or changed, with their bundle and
 * edge changes.
 */
import { createHash } from "node:crypto";
import type { CatalogRevision } from "../../serve/revision.js";
import { HttpError, sendJson } from "../http.js";
import type { UiCatalogChanges, UiPackageChange } from "../uitypes.js";
import { servedRevision, type UiContext, type UiRequest } from "./context.js";
import { blobs, derivedOf, str } from "./derived.js";
import { graphDiff } from "./graph.js";
import { packageDetail } from "./package.js";

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

/** GET /ui/api/catalogs/<c>/changes */
export function changesView(ctx: UiContext, r: UiRequest): void {
  const rev = servedRevision(ctx, r.parts[1]);
  const prev = ctx.store.previous(rev.catalog);
  if (!prev)
    throw new HttpError(
      404,
      "SERVE_UI_NO_PREVIOUS",
      `catalog ${JSON.stringify(rev.catalog)} has not been reloaded since the ` +
        `server started (or the server keeps no previous revision: the UI is off)`,
    );
  sendJson(r.res, 200, catalogChanges(prev, rev));
}
