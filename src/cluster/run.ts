/**
 * Running opcat's cluster controllers: `opcat cluster run` from a laptop or a test (webhooks served
 * on 127.0.0.1, registered by URL) and, with the manifests of `opcat cluster manifests`, inside the
 * cluster (webhooks behind a Service). The APIs and default classes are applied at start (server-side
 * apply, idempotent), the webhooks get a CA made at start, and with leader election only one of
 * several processes acts.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { KubeClient, type ConnectOptions, type KubeObject } from "./client.js";
import { makeServingCerts } from "./certs.js";
import { findCondition, type Condition } from "./conditions.js";
import { LeaderElector } from "./leader.js";
import { defaultProvisionerClasses, rukpakCrdObjects } from "./rukpak/api.js";
import { RukpakController } from "./rukpak/controller.js";
import type { ContentLimits } from "./rukpak/content.js";
import { defaultInputClasses, deppyCrdObjects, resolvesetProvisionerClass } from "./deppy/api.js";
import { CatalogController } from "./deppy/catalogs.js";
import { DeppyController } from "./deppy/resolver.js";
import { ResolvesetProvisioner } from "./deppy/resolveset.js";
import { OperatorController } from "./deppy/operator.js";
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
import { loadSigningKey } from "./rukpak/trust.js";
import { DEFAULT_NAMESPACE } from "./names.js";
import { olmAdmissionPolicies, olmCrdObjects } from "./olm/api.js";
import { clusterExtensionProvisionerClass, ExtensionController } from "./olm/extension.js";
import { SharedCaches } from "./runtime/caches.js";

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
  /** The time one resolution may take in its worker thread (default 60 s). */
  resolutionBudgetMs?: number;
  log?: (msg: string) => void;
}

/** Every controller of one process, started and stopped together (under one leader lease). */
export class ControllerSet {
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
    await this.extensions?.start();
  }

  async stop(): Promise<void> {
    await this.extensions?.stop();
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
  const v = await client
    .request<{ gitVersion?: string }>("GET", "/version")
    .catch(() => ({}) as { gitVersion?: string });
  const cv = await client
    .tryGet<KubeObject & { status?: { desired?: { version?: string } } }>(
      "config.openshift.io/v1",
      "ClusterVersion",
      "version",
    )
    .catch(() => undefined);
  for (const ic of defaultInputClasses({ kube: nextMinor(v.gitVersion), ocp: nextMinor(cv?.status?.desired?.version) }))
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
  const self = (await client.whoami()).username;
  let webhook: WebhookServer | undefined;
  if (opts.webhooks !== false) {
    const host = opts.webhookHost ?? "127.0.0.1";
    const svc = opts.webhookService;
    const hosts = [
      host === "0.0.0.0" ? "127.0.0.1" : host,
      "localhost",
      ...(svc ? [`${svc.name}.${svc.namespace}.svc`, `${svc.name}.${svc.namespace}.svc.cluster.local`] : []),
      ...(opts.webhookHosts ?? []),
    ];
    const certs = makeServingCerts(hosts);
    webhook = await serveWebhooks(new AdmissionHandler(client, key), certs, host, opts.webhookPort ?? 0);
    const target: WebhookTarget = svc ? { service: svc } : { url: `https://${hosts[0]}:${webhook.port}` };
    await registerWebhooks(client, target, certs.caCert, opts.webhookName);
    log(`webhooks served on ${host}:${webhook.port}`);
  }
  const pull = { cacheDir: join(stateDir, "images"), ...opts.pull };
  const crdNames = [...rukpakCrdObjects(), ...deppyCrdObjects(), ...olmCrdObjects()].map((c) => c.metadata.name);
  // one informer per kind and options for every controller of the process (one watch, one copy in memory)
  const caches = new SharedCaches(client, log);
  const controller = new RukpakController({
    caches,
    client,
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
      client,
      stateDir: join(stateDir, "catalogs"),
      pull,
      host: opts.catalogHost,
      port: opts.catalogPort,
      log,
    });
    const deppy = new DeppyController({
      caches,
      client,
      catalogs,
      namespace,
      log,
      key,
      self,
      resolutionBudgetMs: opts.resolutionBudgetMs,
    });
    const bundleStore = join(stateDir, "bundles");
    const resolvesets = new ResolvesetProvisioner({ caches, client, bundleStore, log, key, self });
    const operators = new OperatorController({ caches, client, deppy, log });
    const extensions = new ExtensionController({
      caches,
      client,
      catalogs,
      key,
      log,
      resync: (i) => controller.instanceQueue.add(i),
    });
    controllers = new ControllerSet(controller, catalogs, deppy, resolvesets, operators, extensions);
  }
  let elector: LeaderElector | undefined;
  if (opts.leaderElectionNamespace) {
    elector = new LeaderElector(client, {
      namespace: opts.leaderElectionNamespace,
      name: "opcat-rukpak",
      identity: opts.identity ?? `${hostname()}-${process.pid}`,
      onStartedLeading: () => {
        log("leading: starting the controllers");
        controllers.start().catch((e) => log(`controller: ${(e as Error).message}`));
      },
      onStoppedLeading: () => {
        log("lost the lease: stopping");
        void controllers.stop();
      },
      onError: (e) => log(`leader election: ${(e as Error).message}`),
    });
    elector.start();
  } else {
    await controllers.start();
    log("controllers started");
  }
  return {
    client,
    controller,
    controllers,
    webhook,
    elector,
    async stop() {
      await elector?.stop();
      await controllers.stop();
      if (controllers.deppy)
        log(
          `deppy: ${controllers.deppy.resolutions} resolutions, ` +
            `${controllers.deppy.resolveMs.toFixed(0)} ms in the resolver`,
        );
      log(
        `api requests: ${client.stats.total} (${Object.entries(client.stats.byVerb)
          .map(([v, n]) => `${v} ${n}`)
          .join(", ")})`,
      );
      // the webhook configurations stay: they fail closed, so that while no controller serves them
      // nobody creates or changes Bundles and Instances unseen (docs/security.md)
      await webhook?.close();
      client.close();
    },
  };
}
