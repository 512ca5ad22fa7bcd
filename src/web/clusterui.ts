/**
 * The web UI's cluster pages (`opcat serve --kubeconfig F`): Operators with their status, update
 * options and components; Instances, and for one Instance what it would create and which
 * permissions it grants (what `opcat instance approve --show` prints); approve and deny.
 *
 *   GET  /ui/api/cluster                         the cluster, and who the server reads it as
 *   GET  /ui/api/cluster/operators               Operators (operators.coreos.com/v1)
 *   GET  /ui/api/cluster/instances               Instances (rukpak.io), with their Approved condition
 *   GET  /ui/api/cluster/instances/<name>        one Instance with its preview (objects, granted rules)
 *   POST /ui/api/cluster/instances/<name>/approve|deny   with `Authorization: Bearer <the user's token>`
 *
 * Reads use the server's kubeconfig. Approving and denying never do: they are sent to the API
 * server with the token the user gives in the page (kept in the browser's session storage), so
 * the admission webhook checks the user's own `approve` verb and the condition names the user. A
 * request without a token is refused; so is one from another origin (the token header cannot be
 * sent cross-origin without CORS, which this server never grants, and the Origin is checked too).
 */
import type { IncomingMessage } from "node:http";
import { KubeConfig } from "../cluster/kube/kubeconfig.js";
import { KubeApiError, KubeClient, type ConnectOptions } from "../cluster/kube/client.js";
import { findCondition } from "../cluster/kube/conditions.js";
import { OPERATOR_API_VERSION, type Operator } from "../cluster/operators/api.js";
import { API_VERSION, type Instance } from "../cluster/rukpak/api.js";
import { approveInstance } from "../cluster/rukpak/approve.js";
import { formatRule } from "../cluster/rukpak/permissions.js";
import { previewInstance } from "../cluster/rukpak/preview.js";
import type { PullOptions } from "../image/index.js";
import { HttpError } from "./http.js";
import type { UiClusterInfo, UiInstance, UiInstanceDetail, UiOperator } from "./uitypes.js";

export interface ClusterUiOptions extends ConnectOptions {
  /** Image access for unpacking an Instance's bundle to show what it would create. */
  pull?: PullOptions;
}

function instanceRow(i: Instance): UiInstance {
  const approved = findCondition(i.status?.conditions, "Approved");
  return {
    name: i.metadata.name,
    bundle: i.spec.bundle.name,
    class: i.spec.bundle.spec?.class ?? "",
    activeBundle: i.status?.activeBundle ?? "",
    generation: i.metadata.generation ?? 0,
    awaitingApproval:
      approved?.status === "False" &&
      approved.reason === "AwaitingApproval" &&
      approved.observedGeneration === i.metadata.generation,
    conditions: (i.status?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason ?? "",
      message: c.message ?? "",
    })),
  };
}

function operatorRow(o: Operator): UiOperator {
  return {
    name: o.metadata.name,
    package: o.spec.catalog?.package ?? "",
    channel: o.spec.catalog?.channel ?? "",
    installedBundle: o.status?.installedBundle ?? "",
    installedVersion: o.status?.installedVersion ?? "",
    conditions: (o.status?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason ?? "",
      message: c.message ?? "",
    })),
    updates: o.status?.updates ?? [],
    components: (o.status?.components?.refs ?? []).map((r) => ({
      kind: r.kind,
      name: r.name,
      namespace: r.namespace ?? "",
      ready: readiness(r.conditions),
    })),
  };
}

function readiness(cs: { type: string; status: string }[] | undefined): string {
  const c = cs?.find((x) => x.type === "Ready" || x.type === "Available" || x.type === "Established");
  return c ? `${c.type}=${c.status}` : "";
}

export class ClusterUi {
  readonly #opts: ClusterUiOptions;
  #client: KubeClient | undefined;

  constructor(opts: ClusterUiOptions) {
    this.#opts = opts;
  }

  /** The server's own client (reads only). */
  #reader(): KubeClient {
    this.#client ??= KubeClient.connect(this.#opts);
    return this.#client;
  }

  /** A client for the API server of the server's kubeconfig, authenticated with the user's token only. */
  #asUser(token: string): KubeClient {
    // the cluster (server, CA) of the kubeconfig the reader already loaded; none of its credentials
    const cluster = this.#reader().config.getCurrentCluster();
    if (!cluster) throw new HttpError(500, "SERVE_UI_CLUSTER", "the kubeconfig has no current cluster");
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: "opcat-ui-user", token }],
      contexts: [{ name: "opcat-ui", cluster: cluster.name, user: "opcat-ui-user" }],
      currentContext: "opcat-ui",
    });
    return new KubeClient(kc, { fieldManager: "opcat-ui" });
  }

  async info(): Promise<UiClusterInfo> {
    const c = this.#reader();
    const who = await c.whoami().catch(() => ({ username: "", groups: [] }));
    return { server: c.server.toString(), readsAs: who.username };
  }

  async operators(): Promise<UiOperator[]> {
    const { items } = await this.#reader().list<Operator>(OPERATOR_API_VERSION, "Operator");
    return items.map(operatorRow).sort((a, b) => a.name.localeCompare(b.name));
  }

  async instances(): Promise<UiInstance[]> {
    const { items } = await this.#reader().list<Instance>(API_VERSION, "Instance");
    return items
      .map(instanceRow)
      .sort((a, b) => Number(b.awaitingApproval) - Number(a.awaitingApproval) || a.name.localeCompare(b.name));
  }

  async instance(name: string): Promise<UiInstanceDetail> {
    const c = this.#reader();
    const i = await c.get<Instance>(API_VERSION, "Instance", name);
    const row = instanceRow(i);
    // a resolveset Instance (approval: Android) lists the permissions its bundles add to what is installed
    if (i.status?.permissions) return { ...row, newPermissions: i.status.permissions, objects: [], grants: [] };
    const p = await previewInstance(c, i, this.#opts.pull ?? {});
    return {
      ...row,
      objects: p.objects.map((o) => ({ kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? "" })),
      grants: p.rules.map(formatRule),
      ...(p.error ? { previewError: p.error } : {}),
    };
  }

  /** Approves or denies with the user's own token (never the server's credentials). */
  async decide(req: IncomingMessage, name: string, deny: boolean): Promise<{ instance: UiInstance; by: string }> {
    const origin = req.headers.origin;
    if (
      origin !== undefined &&
      origin !== `http://${req.headers.host ?? ""}` &&
      origin !== `https://${req.headers.host ?? ""}`
    ) {
      throw new HttpError(403, "SERVE_UI_ORIGIN", `requests from ${origin} are not accepted`);
    }
    const m = /^Bearer\s+(\S+)$/.exec(String(req.headers.authorization ?? ""));
    if (!m) {
      throw new HttpError(
        401,
        "SERVE_UI_NEED_TOKEN",
        "approving acts with your own Kubernetes credentials: give your bearer token (e.g. `kubectl create " +
          "token <service-account>` or `oc whoami -t`); the server does not approve with its own rights",
      );
    }
    const user = this.#asUser(m[1]);
    try {
      const who = await user.whoami();
      const done = await approveInstance(user, name, { deny });
      return { instance: instanceRow(done), by: who.username };
    } finally {
      user.close();
    }
  }

  close(): void {
    this.#client?.close();
  }
}

/** The status and code a cluster failure is answered with. */
export function clusterFailure(e: unknown): HttpError {
  if (e instanceof HttpError) return e;
  // the approval cannot name the content yet (the Bundle is not unpacked): try again later
  if (e instanceof Error && e.name === "ApprovalError")
    return new HttpError(409, "SERVE_UI_CLUSTER_APPROVAL", e.message);
  if (e instanceof KubeApiError) {
    const status =
      e.status === 401 || e.status === 403 || e.status === 404 || e.status === 409 || e.status === 422 ? e.status : 502;
    return new HttpError(
      status,
      `SERVE_UI_CLUSTER_${e.reason ? e.reason.replace(/[^A-Za-z]/g, "").toUpperCase() || "ERROR" : "ERROR"}`,
      `the API server answered ${e.status}: ${e.message}`,
    );
  }
  return new HttpError(502, "SERVE_UI_CLUSTER", `cannot reach the API server: ${(e as Error).message}`);
}
