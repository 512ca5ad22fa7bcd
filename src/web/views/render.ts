/** The template page: POST /ui/api/render-template renders a template against a served catalog, offline. */
import type { IncomingMessage } from "node:http";
import { OpcatError } from "../../errors/index.js";
import { loadText } from "../../fbc/load.js";
import { renderMermaid } from "../../fbc/mermaid.js";
import { catalogValues } from "../../fbc/write.js";
import { catalogTagLister } from "../../template/graph/discover.js";
import { renderTemplate } from "../../template/index.js";
import { renderedSource } from "../../template/source/imagesource.js";
import { reuseSource } from "../../template/source/reuse.js";
import { HttpError, readBody, sendJson } from "../http.js";
import type { UiBlob, UiPackageDetail, UiRenderAnswer, UiRenderRequest } from "../uitypes.js";
import type { UiContext, UiRequest } from "./context.js";
import { str } from "./derived.js";
import { graphDiff } from "./graph.js";
import { packageDetail } from "./package.js";

const tooLarge = (max: number) => (): HttpError =>
  new HttpError(413, "SERVE_UI_TOO_LARGE", `the request body is larger than ${max} bytes`);

/**
 * Renders `{template, catalog?}` (basic, semver or graph) with the catalog as the offline `--reuse`
 * source: the blobs, the Mermaid graph and what they change against the served packages.
 */
async function renderAnswer(ctx: UiContext, req: IncomingMessage): Promise<UiRenderAnswer> {
  if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? "")))
    throw new HttpError(415, "SERVE_UI_MEDIA_TYPE", "send the request as application/json");
  const raw = await readBody(req, ctx.maxRequestBytes, tooLarge(ctx.maxRequestBytes));
  let body: UiRenderRequest;
  try {
    body = JSON.parse(raw) as UiRenderRequest;
  } catch (e) {
    throw new HttpError(400, "SERVE_UI_BAD_REQUEST", `the request body is not JSON: ${(e as Error).message}`);
  }
  if (typeof body !== "object" || body === null || typeof body.template !== "string")
    throw new HttpError(400, "SERVE_UI_BAD_REQUEST", 'the request needs "template": the template text (YAML or JSON)');
  const name = body.catalog ?? ctx.store.names()[0];
  const rev = name === undefined ? undefined : ctx.store.get(name);
  if (!rev) throw new HttpError(404, "SERVE_UI_NOT_FOUND", `no catalog ${JSON.stringify(name ?? "")} is served`);
  const reused = loadText(rev.jsonl.toString("utf8"), `${rev.catalog}.jsonl`).config;
  // offline: the catalog answers every reference (tags too); nothing is pulled from a registry
  const src = renderedSource(reuseSource(reused, { reuseTags: true }));
  let cfg;
  try {
    cfg = await renderTemplate(body.template, src, { tags: catalogTagLister(reused) });
  } catch (e) {
    if (e instanceof OpcatError) throw new HttpError(422, e.code, e.message);
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

/** POST /ui/api/render-template */
export async function renderView(ctx: UiContext, r: UiRequest): Promise<void> {
  sendJson(r.res, 200, await renderAnswer(ctx, r.req));
}
