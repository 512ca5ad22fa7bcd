/** The package page: every blob of a package, its Mermaid graph text (opm's render-graph) and its icon. */
import { OpcatError } from "../../errors/index.js";
import { loadText } from "../../fbc/load.js";
import { renderMermaid } from "../../fbc/mermaid.js";
import type { CatalogRevision } from "../../serve/revision.js";
import { HttpError, securityHeaders, sendJsonText } from "../http.js";
import type { UiBlob, UiPackageDetail } from "../uitypes.js";
import { noPackage, servedRevision, type UiContext, type UiRequest } from "./context.js";
import { blobs, str } from "./derived.js";

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

/**
 * The answer of GET /ui/api/catalogs/<c>/packages/<p> as JSON text: `packageDetail`'s value, made of
 * the revision's JSON lines as they are (no parsing, no encoding again: a package whose description
 * is 10 MB is sent as fast as its bytes are copied). Undefined when the revision has no such package.
 */
export function packageDetailJson(rev: CatalogRevision, pkg: string): Buffer | undefined {
  const head = rev.query("olm.package", "", pkg);
  if (!head || head.length === 0) return undefined;
  const of = (schema: string): Uint32Array => rev.query(schema, pkg, "") ?? new Uint32Array();
  const channels = of("olm.channel");
  const bundles = of("olm.bundle");
  const deprecations = of("olm.deprecations");
  const known = new Set([...channels, ...bundles, ...deprecations, ...of("olm.package")]);
  const others = (rev.query("", pkg, "") ?? new Uint32Array()).filter((i) => !known.has(i));
  const text = (i: number): Buffer => {
    const l = rev.line(i);
    return l[l.length - 1] === 0x0a ? l.subarray(0, l.length - 1) : l;
  };
  const parts: Buffer[] = [];
  const add = (s: string): void => void parts.push(Buffer.from(s));
  const list = (ids: Uint32Array): void => {
    add("[");
    ids.forEach((i, k) => {
      if (k > 0) add(",");
      parts.push(text(i));
    });
    add("]");
  };
  add(`{"catalog":${JSON.stringify(rev.catalog)},"revision":${rev.serial},"package":`);
  parts.push(text(head[0]));
  add(',"channels":');
  list(channels);
  add(',"bundles":');
  list(bundles);
  // the last one, as packageDetail takes it
  add(',"deprecations":');
  if (deprecations.length > 0) parts.push(text(deprecations[deprecations.length - 1]));
  else add("null");
  add(',"others":');
  list(others);
  add("}");
  return Buffer.concat(parts);
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
      throw new HttpError(
        404,
        "SERVE_UI_NOT_FOUND",
        `package ${JSON.stringify(pkg)} has no channel ${JSON.stringify(channel)}`,
      );
  }
  try {
    // drawn as `opcat render-graph --package-name <pkg>` draws it (no --draw-v0-semantics)
    return renderMermaid(cfg, { packageName: pkg, minimumEdge: minimumEdge || undefined, drawV0Semantics: false }).text;
  } catch (e) {
    if (e instanceof OpcatError) throw new HttpError(400, e.code, e.message);
    throw e;
  }
}

/** GET /ui/api/catalogs/<c>/packages/<p>: every blob of the package. */
export function packageView(ctx: UiContext, r: UiRequest): void {
  const rev = servedRevision(ctx, r.parts[1]);
  const detail = packageDetailJson(rev, r.parts[3]);
  if (!detail) throw noPackage(rev, r.parts[3]);
  sendJsonText(r.res, 200, detail);
}

/** GET /ui/api/catalogs/<c>/packages/<p>/mermaid?channel=&minimumEdge=: opm's render-graph text. */
export function mermaidView(ctx: UiContext, r: UiRequest): void {
  const rev = servedRevision(ctx, r.parts[1]);
  const pkg = r.parts[3];
  const text = packageMermaid(rev, pkg, r.params.get("channel") ?? "", r.params.get("minimumEdge") ?? "");
  if (text === undefined) throw noPackage(rev, pkg);
  const res = r.res;
  securityHeaders(res);
  const body = Buffer.from(text);
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.writeHead(200);
  res.end(r.method === "HEAD" ? undefined : body);
}

/** GET /ui/api/catalogs/<c>/packages/<p>/icon: the package icon, image types only, kept inert. */
export function iconView(ctx: UiContext, r: UiRequest): void {
  const rev = servedRevision(ctx, r.parts[1]);
  const pkg = r.parts[3];
  const p = blobs(rev, "olm.package", "", pkg)[0];
  if (!p) throw noPackage(rev, pkg);
  const icon = (p.icon ?? null) as UiBlob | null;
  const type = str(icon?.mediatype).toLowerCase().trim();
  if (!icon || typeof icon.base64data !== "string")
    throw new HttpError(404, "SERVE_UI_NOT_FOUND", `package ${JSON.stringify(pkg)} has no icon`);
  if (!ICON_TYPES.has(type))
    throw new HttpError(
      415,
      "SERVE_UI_ICON_TYPE",
      `package ${JSON.stringify(pkg)} has an icon of media type ` +
        `${JSON.stringify(type)}, which is not an image type the UI shows`,
    );
  const body = Buffer.from(icon.base64data, "base64");
  const res = r.res;
  securityHeaders(res);
  // an SVG icon may hold script: it is only ever shown through <img> (scripts never run there), and
  // this sandboxing policy keeps it inert even when opened directly
  res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", body.length);
  res.setHeader("Cache-Control", "no-cache");
  res.writeHead(200);
  res.end(r.method === "HEAD" ? undefined : body);
}
