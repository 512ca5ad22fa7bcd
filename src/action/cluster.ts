/**
 * Cluster actions: what `opcat cluster manifests|image|run` and `opcat instance list|describe|approve`
 * do, apart from their flags and their printing. They print nothing and choose no exit code: failures
 * are OpcatErrors whose `kind` the caller maps (API refusals are `invalid`, an unreachable API server
 * or a bad flag value `usage`).
 *
 * The cluster library is imported when an action runs, so that importing this module stays cheap.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OpcatError } from "../errors/index.js";
import type { KubeClient, KubeObject } from "../cluster/kube/client.js";
import type { Bundle, Instance } from "../cluster/rukpak/api.js";
import type { RunningControllers, RunOptions } from "../cluster/run.js";
import type { PullOptions } from "../image/index.js";

/** Which cluster: a kubeconfig file and context (defaults: $KUBECONFIG, ~/.kube/config or in-cluster). */
export interface ClusterTarget {
  kubeconfig?: string;
  context?: string;
}

/** A client of the target cluster; a kubeconfig that cannot be loaded is a usage error. */
export async function connectCluster(t: ClusterTarget): Promise<KubeClient> {
  const { KubeClient } = await import("../cluster/kube/client.js");
  try {
    return KubeClient.connect({ kubeconfig: t.kubeconfig, context: t.context });
  } catch (e) {
    throw new OpcatError("CLUSTER_KUBECONFIG", `cannot load the kubeconfig: ${(e as Error).message}`, {
      kind: "usage",
    });
  }
}

/** API errors as opcat errors: refusals (403/422/409/404) are `invalid` with the server's message, the rest `usage`. */
export function clusterFailure(e: unknown, what: string): never {
  if (e instanceof Error && e.name === "ApprovalError")
    throw new OpcatError("CLUSTER_APPROVAL", `${what}: ${e.message}`, { kind: "invalid" });
  if (e instanceof Error && e.name === "KubeApiError") {
    const k = e as Error & { status: number; reason: string };
    const invalid = k.status === 403 || k.status === 422 || k.status === 409 || k.status === 404;
    throw new OpcatError(`CLUSTER_${k.reason.toUpperCase() || k.status}`, `${what}: ${k.message}`, {
      kind: invalid ? "invalid" : "usage",
    });
  }
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ETIMEDOUT" || code === "ECONNRESET") {
    throw new OpcatError("CLUSTER_UNREACHABLE", `${what}: the API server cannot be reached (${code})`, {
      kind: "usage",
    });
  }
  throw e;
}

/** Objects as a `kubectl apply -f` document: a JSON List, or YAML documents as Go writes them. */
export async function formatObjects(objs: KubeObject[], format: "yaml" | "json"): Promise<string> {
  if (format === "json") return JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }, null, 2) + "\n";
  const { toGoYaml } = await import("../yaml/index.js");
  return objs.map((o) => toGoYaml(o as unknown as Parameters<typeof toGoYaml>[0])).join("---\n");
}

/** `cluster manifests`: what running opcat in a cluster needs (--local: the APIs and classes only). */
export async function clusterManifestsAction(o: {
  local: boolean;
  crdsOnly?: boolean;
  namespace: string;
  image?: string;
  /** A registries.conf file shipped as a ConfigMap. */
  registriesConfFile?: string;
}): Promise<KubeObject[]> {
  let registriesConf: string | undefined;
  if (o.registriesConfFile !== undefined) {
    try {
      registriesConf = readFileSync(o.registriesConfFile, "utf8");
    } catch (e) {
      throw new OpcatError(
        "USAGE_REGISTRIES_CONF",
        `--registries-conf ${o.registriesConfFile}: ${(e as Error).message}`,
        {
          kind: "usage",
        },
      );
    }
  }
  const { clusterManifests } = await import("../cluster/manifests.js");
  return clusterManifests({
    local: o.local,
    crdsOnly: o.crdsOnly,
    namespace: o.namespace,
    image: o.image,
    registriesConf,
  });
}

/** `cluster image`: opcat's own image, written to an OCI layout or pushed; where it went and what it weighs. */
export async function clusterImageAction(o: {
  tag: string;
  push?: boolean;
  nodeBinary?: string;
  access: () => Promise<PullOptions>;
}): Promise<{ where: string; bytes: number; nodeVersion: string }> {
  if (o.push && o.tag.startsWith("oci:"))
    throw new OpcatError("USAGE_PUSH_OCI", `--push with --tag ${o.tag}: an oci: layout is written locally`, {
      kind: "usage",
    });
  const { buildOpcatImage, outputImage } = await import("../image/index.js");
  const img = buildOpcatImage({ nodeBinary: o.nodeBinary });
  const where = await outputImage(img, o.tag, { ...(await o.access()), push: o.push });
  return { where, bytes: img.layer.length + img.config.length + img.manifest.length, nodeVersion: img.nodeVersion };
}

/** `cluster run`'s flags as given (strings where a number is parsed here). */
export interface ClusterRunFlags extends ClusterTarget {
  stateDir?: string;
  cacheDir?: string;
  webhookName: string;
  webhookHost: string;
  webhookPort: string;
  webhookService?: string;
  webhooks: boolean;
  install: boolean;
  leaderElectNamespace?: string;
  deppy: boolean;
  namespace: string;
  catalogHost: string;
  catalogPort: string;
  resolutionBudget: string;
  healthPort?: string;
  healthHost: string;
  availability: boolean;
  catalogAdvertise?: string;
  leaderElectIdentity?: string;
}

/** A port flag's value, or a usage error naming the flag. */
function portOf(flag: string, code: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new OpcatError(code, `--${flag} ${value}: not a port`, { kind: "usage" });
  return n;
}

/** `--webhook-service <namespace>/<name>:<port>`. */
function serviceOf(v: string | undefined): RunOptions["webhookService"] {
  if (!v) return undefined;
  const m = /^([^/]+)\/([^:]+):(\d+)$/.exec(v);
  if (!m)
    throw new OpcatError(
      "USAGE_WEBHOOK_SERVICE",
      `--webhook-service ${JSON.stringify(v)}: expected <namespace>/<name>:<port>`,
      { kind: "usage" },
    );
  return { namespace: m[1], name: m[2], port: Number(m[3]) };
}

/**
 * The controllers' options from `cluster run`'s flags (every value checked; a bad one is a usage error);
 * the state directory defaults to `cluster` in the image cache (`defaultCacheDir`).
 */
export function clusterRunOptions(o: ClusterRunFlags, pull: PullOptions, defaultCacheDir: string): RunOptions {
  const budget = Number(o.resolutionBudget);
  if (!(budget > 0))
    throw new OpcatError(
      "USAGE_RESOLUTION_BUDGET",
      `--resolution-budget ${o.resolutionBudget}: expected a positive number of seconds`,
      { kind: "usage" },
    );
  const webhookService = serviceOf(o.webhookService);
  const webhookPort = portOf("webhook-port", "USAGE_WEBHOOK_PORT", o.webhookPort);
  const catalogPort = portOf("catalog-port", "USAGE_CATALOG_PORT", o.catalogPort);
  const healthPort = o.healthPort === undefined ? undefined : portOf("health-port", "USAGE_HEALTH_PORT", o.healthPort);
  return {
    kubeconfig: o.kubeconfig,
    context: o.context,
    stateDir: o.stateDir ?? join(o.cacheDir ?? defaultCacheDir, "cluster"),
    pull,
    installApis: o.install,
    webhooks: o.webhooks,
    webhookHost: o.webhookHost,
    webhookPort,
    webhookService,
    webhookName: o.webhookName,
    leaderElectionNamespace: o.leaderElectNamespace,
    deppy: o.deppy,
    namespace: o.namespace,
    catalogHost: o.catalogHost,
    catalogPort,
    resolutionBudgetMs: budget * 1000,
    healthPort,
    healthHost: o.healthHost,
    availability: o.availability,
    catalogAdvertise: o.catalogAdvertise,
    identity: o.leaderElectIdentity ?? process.env.POD_NAME,
  };
}

/**
 * `cluster run`: checks the flags, then the image access (`access`, in that order, so that a bad flag
 * value is reported first), and starts the controllers (stopped by the caller).
 */
export async function clusterRunAction(
  o: ClusterRunFlags,
  access: () => Promise<PullOptions>,
  onLeaseLost?: () => void,
): Promise<RunningControllers> {
  const { defaultCacheDir } = await import("../image/index.js");
  const opts = clusterRunOptions(o, {}, defaultCacheDir());
  opts.pull = await access();
  opts.onLeaseLost = onLeaseLost;
  const { runControllers } = await import("../cluster/run.js");
  return runControllers(opts).catch((e) => clusterFailure(e, "starting the controllers"));
}

async function withClient<T>(t: ClusterTarget, f: (c: KubeClient) => Promise<T>): Promise<T> {
  const client = await connectCluster(t);
  try {
    return await f(client);
  } finally {
    client.close();
  }
}

async function readInstance(client: KubeClient, name: string): Promise<Instance> {
  const { API_VERSION } = await import("../cluster/rukpak/api.js");
  return client
    .get<Instance>(API_VERSION, "Instance", name)
    .catch((e) => clusterFailure(e, `reading Instance ${name}`));
}

/** `instance list`: every Instance, and the table `kubectl get` would print of them. */
export async function instanceListAction(t: ClusterTarget): Promise<{ items: Instance[]; rows: string[][] }> {
  const { API_VERSION } = await import("../cluster/rukpak/api.js");
  const { findCondition } = await import("../cluster/kube/conditions.js");
  const condText = (i: Instance, type: string): string => {
    const c = findCondition(i.status?.conditions, type);
    return c ? `${c.status}${c.reason ? ` (${c.reason})` : ""}` : "-";
  };
  return withClient(t, async (client) => {
    const { items } = await client
      .list<Instance>(API_VERSION, "Instance")
      .catch((e) => clusterFailure(e, "listing Instances"));
    const rows = [
      ["NAME", "BUNDLE", "ACTIVE", "APPROVED", "INSTALLED"],
      ...items.map((i) => [
        i.metadata.name,
        i.spec.bundle.name,
        i.status?.activeBundle ?? "-",
        condText(i, "Approved"),
        condText(i, "Installed"),
      ]),
    ];
    return { items, rows };
  });
}

/** The objects the Instance's bundle becomes (unpacked with the user's own access) and what they grant. */
async function preview(client: KubeClient, inst: Instance, access: () => Promise<PullOptions>) {
  const { previewInstance } = await import("../cluster/rukpak/preview.js");
  return previewInstance(client, inst, await access());
}

/** What the controllers recorded of an Instance's bundle: the unpacked content, the objects installed. */
async function recordedLines(client: KubeClient, i: Instance): Promise<string[]> {
  const { API_VERSION } = await import("../cluster/rukpak/api.js");
  const got = await client.tryGet<Bundle>(API_VERSION, "Bundle", i.spec.bundle.name).catch((e: unknown) => e as Error);
  const b = got instanceof Error ? undefined : got;
  const st = b?.status;
  const out: string[] = ["Unpacked (as the controllers recorded it):"];
  if (got instanceof Error) out.push(`  cannot read Bundle ${i.spec.bundle.name}: ${got.message}`);
  else if (!st?.unpacked) out.push(`  nothing recorded${b ? "" : ` (no Bundle ${i.spec.bundle.name})`}`);
  else {
    out.push(`  State:    ${st.unpacked}${st.message ? ` (${st.message})` : ""}`);
    if (st.format) out.push(`  Format:   ${st.format}`);
    if (st.digest) out.push(`  Digest:   ${st.digest}`);
    for (const r of st.resolvedRefs ?? []) out.push(`  Source:   ${r}`);
    if (st.objects) {
      out.push(`  Objects (${st.objects.length}):`);
      for (const o of st.objects) out.push(`    ${o.replace(/^\/objects\/([^/]+)\//, "$1 ")}`);
    }
  }
  const installed = i.status?.objects;
  if (installed) {
    out.push(`Installed objects (${installed.length}):`);
    for (const o of installed) out.push(`  ${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`);
  }
  const perms = i.status?.permissions;
  if (perms) {
    out.push(`New permissions (${perms.length}):`);
    for (const p of perms) out.push(`  ${p}`);
  }
  return out;
}

/**
 * `instance describe`: an Instance, its conditions and what the controllers unpacked and installed; with
 * `pull`, also what it would create and which permissions it grants, from the bundle unpacked here.
 */
export async function instanceDescribeAction(
  t: ClusterTarget,
  name: string,
  access: () => Promise<PullOptions>,
  o: { pull?: boolean } = {},
): Promise<string[]> {
  const { formatRule } = await import("../cluster/rukpak/permissions.js");
  return withClient(t, async (client) => {
    const i = await readInstance(client, name);
    const out: string[] = [
      `Name:          ${name}`,
      `Bundle:        ${i.spec.bundle.name}`,
      `Active bundle: ${i.status?.activeBundle ?? "-"}`,
    ];
    if (i.spec.bundle.spec)
      out.push(`Class:         ${i.spec.bundle.spec.class}`, `Refs:          ${i.spec.bundle.spec.refs.join(", ")}`);
    out.push("Conditions:");
    for (const c of i.status?.conditions ?? []) out.push(`  ${c.type}=${c.status} ${c.reason}: ${c.message}`);
    out.push(...(await recordedLines(client, i)));
    if (!o.pull) {
      out.push("(--pull unpacks the bundle here to list what it would create and which permissions it grants)");
      return out;
    }
    const p = await preview(client, i, access);
    if (p.error) out.push(`Would create:  (cannot tell: ${p.error})`);
    else {
      out.push(`Would create (${p.objects.length} objects):`);
      for (const x of p.objects)
        out.push(`  ${x.kind} ${x.metadata.namespace ? `${x.metadata.namespace}/` : ""}${x.metadata.name}`);
      out.push(`Permissions granted (${p.rules.length} rules):`);
      for (const r of p.rules) out.push(`  ${formatRule(r)}`);
    }
    return out;
  });
}

/**
 * `instance approve` (or `--deny`): with `show`, first the lines telling what is approved (a resolveset's
 * new permissions, or what the bundle grants, whose content digest the approval then names).
 */
export async function instanceApproveAction(
  t: ClusterTarget,
  name: string,
  o: { show: boolean; deny: boolean; access: () => Promise<PullOptions>; onShow: (line: string) => void },
): Promise<{ generation: number }> {
  const { approveInstance } = await import("../cluster/rukpak/approve.js");
  const { formatRule } = await import("../cluster/rukpak/permissions.js");
  return withClient(t, async (client) => {
    let reviewed: string | undefined;
    if (o.show) {
      const i = await readInstance(client, name);
      if (i.status?.permissions) {
        // a resolveset Instance (approval: Android): the permissions its bundles add to what is installed
        if (i.status.permissions.length === 0) o.onShow("new permissions: none");
        for (const p of i.status.permissions) o.onShow(`new permission: ${p}`);
      } else {
        const p = await preview(client, i, o.access);
        if (p.error) o.onShow(`cannot show the content: ${p.error}`);
        else {
          for (const r of p.rules) o.onShow(`grants: ${formatRule(r)}`);
          reviewed = p.digest;
        }
      }
    }
    const done = await approveInstance(client, name, { deny: o.deny, digest: reviewed }).catch((e) =>
      clusterFailure(e, `${o.deny ? "denying" : "approving"} Instance ${name}`),
    );
    return { generation: done.metadata.generation ?? 0 };
  });
}
