/**
 * Running opcat's cluster controllers: `opcat cluster run` from a laptop or a test (webhooks served
 * on 127.0.0.1, registered by URL) and, with the manifests of `opcat cluster manifests`, inside the
 * cluster (webhooks behind a Service). The APIs and default classes are applied at start (server-side
 * apply, idempotent), the webhooks get a CA made at start, and with leader election only one of
 * several processes acts.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { KubeClient, type ConnectOptions, type KubeObject } from "./kube/client.js";
import { makeServingCerts } from "./kube/certs.js";
import { findCondition, type Condition } from "./kube/conditions.js";
import { LeaderElector } from "./kube/leader.js";
import { defaultProvisionerClasses, rukpakCrdObjects } from "./rukpak/api.js";
import { RukpakController } from "./rukpak/controller.js";
import type { ContentLimits } from "./rukpak/content.js";
import { AvailabilityController } from "./rukpak/availability.js";
import { defaultInputClasses, resolvesetProvisionerClass } from "./deppy/api.js";
import { CatalogController } from "./catalogd/catalogs.js";
import { DeppyController } from "./deppy/resolver.js";
import { clusterVersions } from "./deppy/inventory.js";
import { ResolvesetProvisioner } from "./deppy/resolveset.js";
import { OperatorController } from "./operators/operator.js";
import { deppyCrdObjects } from "./manifests.js";
import {
  AdmissionHandler,
  registerWebhooks,
  serveWebhooks,
  WEBHOOK_CONFIG_NAME,
  type WebhookServer,
  type WebhookTarget,
} from "./rukpak/webhook.js";
import type { PullOptions } from "../image/index.js";
import { defaultCacheDir } from "../image/index.js";
import { loadSigningKey, ownUser, type SigningKey } from "./rukpak/trust.js";
import { DEFAULT_NAMESPACE, LEADER_LABEL } from "./kube/names.js";
import { olmAdmissionPolicies, olmCrdObjects } from "./olm/api.js";
import { clusterExtensionProvisionerClass, ExtensionController } from "./olm/extension.js";
import { SharedCaches } from "./runtime/caches.js";
import { STEP_STOPS } from "./runtime/steps.js";
import { loadSharedCerts, type SharedCerts } from "./servingcert.js";
import { serveHealth, type HealthServer, type MetricFamily } from "./health.js";
import { memoryMetrics } from "../serve/metrics.js";
import { DURATION_BUCKETS, type WorkQueue } from "./kube/queue.js";

export interface RunOptions extends ConnectOptions {
  /** Content store and image cache root (default: <opcat cache>/cluster). */
  stateDir?: string;
  pull?: PullOptions;
  /** Bounds of unpacking Bundles for every class (a ProvisionerClass's parameters win; docs/cluster.md). */
  limits?: ContentLimits;
  /** Apply the CRDs and default ProvisionerClasses at start (default true). */
  installApis?: boolean;
  /** Serve and register the admission webhooks (default true). */
  webhooks?: boolean;
  /** Where the webhook server listens (default 127.0.0.1:0). */
  webhookHost?: string;
  webhookPort?: number;
  /** In the cluster: register the webhooks through this Service instead of by URL. */
  webhookService?: { namespace: string; name: string; port: number };
  /** Name of the webhook configurations (default `opcat-rukpak`). */
  webhookName?: string;
  /** Extra DNS names / IPs for the webhook certificate. */
  webhookHosts?: string[];
  /** Leader election on a Lease in this namespace (default: off). */
  leaderElectionNamespace?: string;
  identity?: string;
  /** Run Deppy (ClusterCatalogs, Inputs, resolvesets) and the Operator API too (default true). */
  deppy?: boolean;
  /** Namespace for resolveset ConfigMaps and Events about cluster-scoped objects (default opcat-system). */
  namespace?: string;
  /** Where the ClusterCatalog HTTP server listens (default 127.0.0.1, a free port). */
  catalogHost?: string;
  catalogPort?: number;
  /** host:port written into ClusterCatalogs' status.urls.base (in the cluster: the catalogd Service). */
  catalogAdvertise?: string;
  /** The time one resolution may take in its worker thread (default 60 s). */
  resolutionBudgetMs?: number;
  /** Serve /healthz, /readyz and /metrics over plain HTTP on this port (default: not served). */
  healthPort?: number;
  healthHost?: string;
  /**
   * Called when this replica lost its leader lease (not when it is stopped) after its controllers
   * stopped; it campaigns no more (`cluster run` exits 1 so that the Pod restarts).
   */
  onLeaseLost?: () => void;
  /** How often a replica re-reads the shared webhook certificate (default 5 minutes). */
  certCheckMs?: number;
  /**
   * Report Available/Progressing on installed Instances from their workloads (default false; the
   * manifests turn it on: it writes Instance status whenever a workload changes).
   */
  availability?: boolean;
  log?: (msg: string) => void;
}

/** Every controller of one process, started and stopped together (under one leader lease). */
export class ControllerSet {
  /** Available/Progressing of installed Instances from their workloads (src/cluster/rukpak/availability.ts). */
  availability?: AvailabilityController;

  constructor(
    readonly rukpak: RukpakController,
    readonly catalogs?: CatalogController,
    readonly deppy?: DeppyController,
    readonly resolvesets?: ResolvesetProvisioner,
    readonly operators?: OperatorController,
    readonly extensions?: ExtensionController,
  ) {}

  async start(): Promise<void> {
    await this.rukpak.start();
    await this.catalogs?.start();
    await this.resolvesets?.start();
    await this.deppy?.start();
    await this.operators?.start();
    await this.availability?.start();
    await this.extensions?.start();
  }

  async stop(): Promise<void> {
    await this.extensions?.stop();
    await this.availability?.stop();
    await this.operators?.stop();
    await this.deppy?.stop();
    await this.resolvesets?.stop();
    await this.catalogs?.stop();
    await this.rukpak.stop();
  }
}

export interface RunningControllers {
  client: KubeClient;
  controller: RukpakController;
  controllers: ControllerSet;
  webhook?: WebhookServer;
  elector?: LeaderElector;
  health?: HealthServer;
  stop(): Promise<void>;
}

export async function waitForCrds(client: KubeClient, names: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await client.get<KubeObject & { status?: { conditions?: Condition[] } }>(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        name,
      );
      if (findCondition(crd.status?.conditions, "Established")?.status === "True") break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} did not become Established`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The next minor release after a version text such as v1.35.4 ("1.36"). */
export function nextMinor(v: string | undefined): string | undefined {
  const m = /(\d+)\.(\d+)/.exec(v ?? "");
  return m ? `${m[1]}.${Number(m[2]) + 1}` : undefined;
}

/**
 * Applies opcat's CRDs and the default ProvisionerClasses (and, with `deppy`, the Deppy and
 * Operator CRDs, the default InputClasses, dry-run-next set to the cluster's next minor release,
 * and the deppy.resolveset class), waiting until the CRDs are Established.
 */
export async function installApis(client: KubeClient, opts: { deppy?: boolean } = {}): Promise<void> {
  const crds = [...rukpakCrdObjects(), ...(opts.deppy === false ? [] : [...deppyCrdObjects(), ...olmCrdObjects()])];
  for (const c of crds) await client.apply(c);
  await waitForCrds(
    client,
    crds.map((c) => c.metadata.name),
  );
  for (const pc of defaultProvisionerClasses()) await client.apply(pc);
  if (opts.deppy === false) return;
  await client.apply(resolvesetProvisionerClass());
  await client.apply(clusterExtensionProvisionerClass());
  for (const p of olmAdmissionPolicies()) await client.apply(p);
  const versions = await clusterVersions(client);
  for (const ic of defaultInputClasses({ kube: nextMinor(versions.kube), ocp: nextMinor(versions.ocp) }))
    await client.apply(ic);
}

export async function runControllers(opts: RunOptions = {}): Promise<RunningControllers> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`));
  const client = KubeClient.connect(opts);
  const stateDir = opts.stateDir ?? join(defaultCacheDir(), "cluster");
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  if (opts.installApis !== false) await installApis(client, { deppy: opts.deppy });
  // the key that signs requesters and approvals: shared by every replica, readable by opcat only
  const key = await loadSigningKey(client, namespace);
  const me = await client.whoami();
  const self = me.username;
  // the controllers' own writes carry their mark (trust.ts ownUser): what they make for their own
  // purposes is never taken for what a person using the same credentials made, and is judged as nobody
  const own = client.impersonating(ownUser(me));
  const served = opts.webhooks !== false ? await startWebhooks(client, key, self, namespace, opts, log) : undefined;
  const webhook = served?.webhook;
  const catalogCerts = served?.catalogCerts;
  const pull = { cacheDir: join(stateDir, "images"), ...opts.pull };
  const crdNames = [...rukpakCrdObjects(), ...deppyCrdObjects(), ...olmCrdObjects()].map((c) => c.metadata.name);
  // one informer per kind and options for every controller of the process (one watch, one copy in memory)
  const caches = new SharedCaches(own, log);
  const controller = new RukpakController({
    caches,
    client: own,
    stateDir: join(stateDir, "bundles"),
    pull,
    log,
    key,
    self,
    namespace,
    protectedCrds: crdNames,
    protectedNames: [
      opts.webhookName ?? WEBHOOK_CONFIG_NAME,
      "opcat-rukpak",
      "rukpak-approver",
      "rukpak-class-user",
      "clusterextension-serviceaccount-deprecated",
    ],
    limits: opts.limits,
  });
  let controllers = new ControllerSet(controller);
  if (opts.deppy !== false) {
    const catalogs = new CatalogController({
      caches,
      client: own,
      stateDir: join(stateDir, "catalogs"),
      pull,
      host: opts.catalogHost,
      port: opts.catalogPort,
      advertise: opts.catalogAdvertise,
      tls: catalogCerts,
      log,
    });
    if (catalogCerts) served?.onRotate.push((c) => catalogs.setCerts(c));
    const deppy = new DeppyController({
      caches,
      client: own,
      catalogs,
      namespace,
      log,
      key,
      self,
      resolutionBudgetMs: opts.resolutionBudgetMs,
    });
    const bundleStore = join(stateDir, "bundles");
    const records = controller.records; // Android's baseline: the install records
    const resolvesets = new ResolvesetProvisioner({
      caches,
      client: own,
      bundleStore,
      log,
      key,
      self,
      namespace,
      records,
    });
    const operators = new OperatorController({ caches, client: own, deppy, log, key, self });
    const extensions = new ExtensionController({ caches, client: own, catalogs, key, log });
    controllers = new ControllerSet(controller, catalogs, deppy, resolvesets, operators, extensions);
  }
  if (opts.availability) controllers.availability = new AvailabilityController({ caches, client: own, log });
  let elector: LeaderElector | undefined;
  let shuttingDown = false;
  if (opts.leaderElectionNamespace) {
    elector = new LeaderElector(client, {
      namespace: opts.leaderElectionNamespace,
      name: "opcat-rukpak",
      identity: opts.identity ?? `${hostname()}-${process.pid}`,
      onStartedLeading: () => {
        log("leading: starting the controllers");
        controllers.start().then(
          () => labelLeaderPod(client, true, log),
          (e) => log(`controller: ${(e as Error).message}`),
        );
      },
      onStoppedLeading: () => {
        log("lost the lease: stopping");
        void labelLeaderPod(client, false, log);
        const stopped = controllers.stop();
        if (shuttingDown) return;
        // informers do not start again once stopped: as controller-runtime, a replica that lost its
        // lease campaigns no more; `cluster run` exits so that a new process (a restarted Pod) does
        void stopped.then(async () => {
          await elector?.stop();
          log("lost the lease: the controllers stopped; this process no longer campaigns");
          opts.onLeaseLost?.();
        });
      },
      onError: (e) => log(`leader election: ${(e as Error).message}`),
    });
    elector.start();
  } else {
    await controllers.start();
    log("controllers started");
  }
  let health: HealthServer | undefined;
  if (opts.healthPort !== undefined) {
    const set = controllers;
    health = await serveHealth({
      host: opts.healthHost ?? "127.0.0.1",
      port: opts.healthPort,
      // the APIs are installed and the webhooks served (every replica serves them, leader or not)
      ready: () => true,
      metrics: () => controllerMetrics(client, set, elector),
    });
    log(`health and metrics served on ${opts.healthHost ?? "127.0.0.1"}:${health.port}`);
  }
  return {
    client,
    controller,
    controllers,
    webhook,
    elector,
    health,
    async stop() {
      shuttingDown = true;
      if (served?.certTimer) clearInterval(served.certTimer);
      await health?.close();
      // the controllers stop (their passes in flight end) before the Lease is released, as
      // controller-runtime releases it after its runnables stop: released first, another replica
      // would lead within a second while this one still acts
      await controllers.stop();
      await elector?.stop();
      logTotals(client, controllers, log);
      // the webhook configurations stay: they fail closed, so that while no controller serves them
      // nobody creates or changes Bundles and Instances unseen (docs/security.md)
      await webhook?.close();
      client.close();
    },
  };
}

interface ServedWebhooks {
  webhook: WebhookServer;
  /** Re-reads the shared certificate (behind a Service). */
  certTimer?: NodeJS.Timeout;
  /** In the cluster: the certificate the catalogd Service serves too (covering its names). */
  catalogCerts?: SharedCerts;
  /** Called with a rotated shared certificate (the catalog server takes it). */
  onRotate: ((c: SharedCerts) => void)[];
}

/**
 * Serves and registers the admission webhooks. Behind a Service (several replicas): one CA and
 * certificate for all, kept in a Secret and re-read, covering the catalogd Service's names too; from a
 * laptop: a CA made at start.
 */
async function startWebhooks(
  client: KubeClient,
  key: SigningKey,
  self: string,
  namespace: string,
  opts: RunOptions,
  log: (m: string) => void,
): Promise<ServedWebhooks> {
  const host = opts.webhookHost ?? "127.0.0.1";
  const svc = opts.webhookService;
  const hosts = [
    host === "0.0.0.0" ? "127.0.0.1" : host,
    "localhost",
    ...(svc ? [`${svc.name}.${svc.namespace}.svc`, `${svc.name}.${svc.namespace}.svc.cluster.local`] : []),
    ...(svc ? catalogServiceNames(opts.catalogAdvertise) : []),
    ...(opts.webhookHosts ?? []),
  ];
  let shared: SharedCerts | undefined = svc ? await loadSharedCerts(client, namespace, hosts) : undefined;
  const certs = shared ?? makeServingCerts(hosts);
  const webhook = await serveWebhooks(new AdmissionHandler(client, key, self), certs, host, opts.webhookPort ?? 0);
  const target: WebhookTarget = svc ? { service: svc } : { url: `https://${hosts[0]}:${webhook.port}` };
  await registerWebhooks(client, target, shared?.caBundle ?? certs.caCert, opts.webhookName);
  log(`webhooks served on ${host}:${webhook.port}`);
  const out: ServedWebhooks = { webhook, onRotate: [] };
  if (!shared) return out;
  if (catalogServiceNames(opts.catalogAdvertise).length > 0) out.catalogCerts = shared;
  // another replica may rotate the certificate: serve and register what the Secret holds
  out.certTimer = setInterval(() => {
    loadSharedCerts(client, namespace, hosts)
      .then(async (next) => {
        if (next.version === shared?.version) return;
        shared = next;
        webhook.setCerts(next);
        for (const f of out.onRotate) f(next);
        await registerWebhooks(client, target, next.caBundle, opts.webhookName);
        log("webhook certificate reloaded from its Secret");
      })
      .catch((e) => log(`webhook certificate: ${(e as Error).message}`));
  }, opts.certCheckMs ?? 300_000);
  out.certTimer.unref();
  return out;
}

/** What a process did, logged when it stops: resolutions, reconciles per controller, API requests. */
function logTotals(client: KubeClient, controllers: ControllerSet, log: (m: string) => void): void {
  if (controllers.deppy)
    log(
      `deppy: ${controllers.deppy.resolutions} resolutions, ` +
        `${controllers.deppy.resolveMs.toFixed(0)} ms in the resolver`,
    );
  const queues = controllerMetrics(client, controllers).find((f) => f.name === "opcat_reconciles_total");
  log(`reconciles: ${(queues?.samples ?? []).map(([l, n]) => `${l.controller} ${n}`).join(", ")}`);
  const most = Object.entries(client.stats.byResource)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, n]) => `${k} ${n}`);
  const verbs = Object.entries(client.stats.byVerb).map(([v, n]) => `${v} ${n}`);
  log(`api requests: ${client.stats.total} (${verbs.join(", ")}); most: ${most.join(", ")}`);
}

/**
 * The names a catalogd Service is reached by, from `--catalog-advertise` (`name.namespace.svc[:port]`):
 * that name and its `.cluster.local` form; none for an address that is not a Service's.
 */
export function catalogServiceNames(advertise: string | undefined): string[] {
  const host = advertise?.replace(/:\d+$/, "");
  if (!host?.endsWith(".svc")) return [];
  return [host, `${host}.cluster.local`];
}

/**
 * The metrics of /metrics: API requests per verb, leadership, and per controller its queue depth,
 * reconciles, failed reconciles and a histogram of reconcile durations.
 */
export function controllerMetrics(client: KubeClient, set: ControllerSet, elector?: LeaderElector): MetricFamily[] {
  const queues: [string, WorkQueue | undefined][] = [
    ["bundle", set.rukpak.bundleQueue],
    ["instance", set.rukpak.instanceQueue],
    ["clustercatalog", set.catalogs?.queue],
    ["input", set.deppy?.queue],
    ["resolveset", set.resolvesets?.queue],
    ["resolveset-bundle", set.resolvesets?.bundleController.queue],
    ["operator", set.operators?.queue],
    ["availability", set.availability?.queue],
    ["clusterextension", set.extensions?.queue],
  ];
  const live = queues.filter((q): q is [string, WorkQueue] => q[1] !== undefined);
  return [
    ...memoryMetrics(),
    {
      name: "opcat_api_requests_total",
      help: "Requests to the Kubernetes API server, by verb.",
      type: "counter",
      samples: Object.entries(client.stats.byVerb).map(([verb, n]) => [{ verb }, n]),
    },
    {
      name: "opcat_api_requests_by_resource_total",
      help: "Requests to the Kubernetes API server, by verb and resource (e.g. PUT instances/status).",
      type: "counter",
      samples: Object.entries(client.stats.byResource).map(([request, n]) => [{ request }, n]),
    },
    {
      name: "opcat_leader",
      help: "1 while this replica holds the leader Lease (or runs without leader election).",
      type: "gauge",
      samples: [[{}, elector ? (elector.isLeader ? 1 : 0) : 1]],
    },
    {
      name: "opcat_reconcile_stops_total",
      help: 'Reconcile passes by controller and the step that ended them ("completed": every step ran).',
      type: "counter",
      samples: STEP_STOPS.entries().map(([controller, step, n]) => [{ controller, step }, n]),
    },
    {
      name: "opcat_reconciles_total",
      help: "Keys reconciled, by controller.",
      type: "counter",
      samples: live.map(([controller, q]) => [{ controller }, q.processed]),
    },
    {
      name: "opcat_reconcile_errors_total",
      help: "Reconciles that failed (each is retried with backoff), by controller.",
      type: "counter",
      samples: live.map(([controller, q]) => [{ controller }, q.errors]),
    },
    {
      name: "opcat_reconcile_duration_seconds",
      help: "How long reconciles took, by controller.",
      type: "histogram",
      samples: live.flatMap(([controller, q]) => durationSamples(controller, q)),
    },
    {
      name: "opcat_queue_depth",
      help: "Keys waiting in a controller's work queue.",
      type: "gauge",
      samples: live.map(([controller, q]) => [{ controller }, q.length]),
    },
  ];
}

/** A controller's reconcile durations as a Prometheus histogram's series (cumulative buckets, sum, count). */
function durationSamples(controller: string, q: WorkQueue): MetricFamily["samples"] {
  const h = q.durations;
  const out: MetricFamily["samples"] = [];
  let cumulative = 0;
  DURATION_BUCKETS.forEach((le, i) => {
    cumulative += h.counts[i];
    out.push([{ controller, le: String(le) }, cumulative, "_bucket"]);
  });
  out.push([{ controller, le: "+Inf" }, h.count, "_bucket"]);
  out.push([{ controller }, h.sum, "_sum"], [{ controller }, h.count, "_count"]);
  return out;
}

/**
 * In a Pod (POD_NAME and POD_NAMESPACE set by the manifests): marks this Pod as the leader, or no longer,
 * with the label the catalogd Service selects (only the leader serves catalogs).
 */
async function labelLeaderPod(client: KubeClient, leading: boolean, log: (m: string) => void): Promise<void> {
  const name = process.env.POD_NAME;
  const namespace = process.env.POD_NAMESPACE;
  if (!name || !namespace) return;
  await client
    .mergePatch("v1", "Pod", name, { metadata: { labels: { [LEADER_LABEL]: leading ? "true" : null } } }, { namespace })
    .catch((e) => log(`labelling the leader Pod: ${(e as Error).message}`));
}
