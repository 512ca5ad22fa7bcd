/** Calls to the server's UI API (/ui/api/…) and resolver API (/api/v1/…). */
import type {
  UiCatalogChanges,
  UiCatalogSummary,
  UiClusterInfo,
  UiInstance,
  UiInstanceDetail,
  UiOperator,
  UiErrorBody,
  UiGraph,
  UiPackageDetail,
  UiPackageList,
  UiPackageSearchField,
  UiRenderAnswer,
  UiRenderRequest,
  UiStatus,
} from "../web/uitypes.js";

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

async function answer<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiFailure(res.status, "UI_BAD_ANSWER", `${res.status} ${res.statusText}: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const err = (body as UiErrorBody).error;
    if (err && typeof err.message === "string") throw new ApiFailure(res.status, err.code, err.message, body);
  }
  return body as T;
}

const enc = encodeURIComponent;

export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { Accept: "application/json" } }));
}

export const api = {
  catalogs: () => getJson<UiCatalogSummary[]>("/ui/api/catalogs"),
  status: () => getJson<UiStatus>("/ui/api/status"),
  /** Package summaries: all of them, or those matching `q` (in `in`), `limit` of them from `offset`. */
  packages: (c: string, search: { q?: string; in?: UiPackageSearchField; offset?: number; limit?: number } = {}) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(search)) if (v !== undefined && v !== "") params.set(k, String(v));
    const qs = params.toString();
    return getJson<UiPackageList>(`/ui/api/catalogs/${enc(c)}/packages${qs ? `?${qs}` : ""}`);
  },
  pkg: (c: string, p: string) => getJson<UiPackageDetail>(`/ui/api/catalogs/${enc(c)}/packages/${enc(p)}`),
  /**
   * The graph laid out by the server, without the edge kinds in `hide` (comma-separated); `channel`
   * null: the package's default channel, "*": all channels.
   */
  graph: (c: string, p: string, channel: string | null, hide = "", compare = false) =>
    getJson<UiGraph>(
      `/ui/api/catalogs/${enc(c)}/packages/${enc(p)}/graph?layout=1` +
        `${channel === null ? "" : `&channel=${enc(channel)}`}` +
        `${hide ? `&hide=${enc(hide)}` : ""}${compare ? "&compare=previous" : ""}`,
    ),
  cluster: () => getJson<UiClusterInfo>("/ui/api/cluster"),
  operators: () => getJson<UiOperator[]>("/ui/api/cluster/operators"),
  instances: () => getJson<UiInstance[]>("/ui/api/cluster/instances"),
  instance: (name: string) => getJson<UiInstanceDetail>(`/ui/api/cluster/instances/${enc(name)}`),
  /** Approves or denies with the user's own bearer token (the server never uses its credentials for this). */
  async decide(name: string, deny: boolean, token: string): Promise<{ instance: UiInstance; by: string }> {
    const res = await fetch(`/ui/api/cluster/instances/${enc(name)}/${deny ? "deny" : "approve"}`, {
      method: "POST",
      headers: { Accept: "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    });
    const body = await answer<{ instance: UiInstance; by: string }>(res);
    if (!res.ok) throw new ApiFailure(res.status, "UI_BAD_ANSWER", `${res.status} ${res.statusText}`);
    return body;
  },
  /** What the last reload of the catalog changed. */
  changes: (c: string) => getJson<UiCatalogChanges>(`/ui/api/catalogs/${enc(c)}/changes`),
  iconUrl: (c: string, p: string) => `/ui/api/catalogs/${enc(c)}/packages/${enc(p)}/icon`,
  async mermaid(c: string, p: string, channel: string): Promise<string> {
    const res = await fetch(`/ui/api/catalogs/${enc(c)}/packages/${enc(p)}/mermaid?channel=${enc(channel)}`);
    if (!res.ok) await answer(res);
    return res.text();
  },
  async post<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiFailure(res.status, "UI_BAD_ANSWER", `${res.status} ${res.statusText}: ${text.slice(0, 200)}`);
    }
    return { status: res.status, body: parsed as T };
  },
  render: (req: UiRenderRequest) => api.post<UiRenderAnswer | UiErrorBody>("/ui/api/render-template", req),
};
