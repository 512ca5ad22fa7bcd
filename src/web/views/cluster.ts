/**
 * The cluster pages (with --kubeconfig): GET /ui/api/cluster (the cluster), …/operators, …/instances,
 * …/instances/<name>, and POST …/instances/<name>/approve|deny, answered by clusterui.ts.
 */
import type { IncomingMessage } from "node:http";
import { processMemory } from "../../serve/metrics.js";
import type { UiStatus } from "../uitypes.js";
import { HttpError, sendJson } from "../http.js";
import type { UiContext, UiRequest } from "./context.js";

async function clusterAnswer(ctx: UiContext, req: IncomingMessage, method: string, parts: string[]): Promise<unknown> {
  if (!ctx.cluster)
    throw new HttpError(404, "SERVE_UI_NO_CLUSTER", "this server shows no cluster: start it with --kubeconfig <file>");
  const { ui, failure } = await ctx.clusterUi();
  const get = method === "GET" || method === "HEAD";
  try {
    if (parts.length === 0 && get) return await ui.info();
    if (parts.length === 1 && parts[0] === "operators" && get) return await ui.operators();
    if (parts.length === 1 && parts[0] === "instances" && get) return await ui.instances();
    if (parts.length === 2 && parts[0] === "instances" && get) return await ui.instance(parts[1]);
    if (parts.length === 3 && parts[0] === "instances" && (parts[2] === "approve" || parts[2] === "deny")) {
      if (method !== "POST") throw new HttpError(405, "SERVE_UI_METHOD", "use POST");
      return await ui.decide(req, parts[1], parts[2] === "deny");
    }
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw failure(e);
  }
  throw new HttpError(404, "SERVE_UI_NOT_FOUND", `no UI API at /ui/api/cluster/${parts.join("/")}`);
}

/** GET|POST /ui/api/cluster/… */
export async function clusterView(ctx: UiContext, r: UiRequest): Promise<void> {
  sendJson(r.res, 200, await clusterAnswer(ctx, r.req, r.method, r.parts.slice(1)));
}

/** GET /ui/api/config: what this server offers. */
export function configView(ctx: UiContext, r: UiRequest): void {
  sendJson(r.res, 200, { cluster: ctx.cluster !== undefined });
}

/** GET /ui/api/status: the server's memory now (the UI's status line; /metrics has the same numbers). */
export function statusView(_ctx: UiContext, r: UiRequest): void {
  const status: UiStatus = { memory: processMemory() };
  sendJson(r.res, 200, status);
}
