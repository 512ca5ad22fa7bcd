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
import { AdmissionHandler, registerWebhooks, serveWebhooks, unregisterWebhooks, type WebhookServer, type WebhookTarget } from "./rukpak/webhook.js";
import type { PullOptions } from "../image/index.js";
import { defaultCacheDir } from "../image/index.js";

export interface RunOptions extends ConnectOptions {
  /** Content store and image cache root (default: <opcat cache>/cluster). */
  stateDir?: string;
  pull?: PullOptions;
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
  log?: (msg: string) => void;
}

export interface RunningControllers {
  client: KubeClient;
  controller: RukpakController;
  webhook?: WebhookServer;
  elector?: LeaderElector;
  stop(): Promise<void>;
}

export async function waitForCrds(client: KubeClient, names: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await client.get<KubeObject & { status?: { conditions?: Condition[] } }>("apiextensions.k8s.io/v1", "CustomResourceDefinition", name);
      if (findCondition(crd.status?.conditions, "Established")?.status === "True") break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} did not become Established`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Applies opcat's CRDs and the default ProvisionerClasses, waiting until the CRDs are Established. */
export async function installApis(client: KubeClient): Promise<void> {
  const crds = rukpakCrdObjects();
  for (const c of crds) await client.apply(c);
  await waitForCrds(
    client,
    crds.map((c) => c.metadata.name),
  );
  for (const pc of defaultProvisionerClasses()) await client.apply(pc);
}

export async function runControllers(opts: RunOptions = {}): Promise<RunningControllers> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`));
  const client = KubeClient.connect(opts);
  const stateDir = opts.stateDir ?? join(defaultCacheDir(), "cluster");
  if (opts.installApis !== false) await installApis(client);
  let webhook: WebhookServer | undefined;
  let webhookUrl: string | undefined;
  if (opts.webhooks !== false) {
    const host = opts.webhookHost ?? "127.0.0.1";
    const svc = opts.webhookService;
    const hosts = [host === "0.0.0.0" ? "127.0.0.1" : host, "localhost", ...(svc ? [`${svc.name}.${svc.namespace}.svc`, `${svc.name}.${svc.namespace}.svc.cluster.local`] : []), ...(opts.webhookHosts ?? [])];
    const certs = makeServingCerts(hosts);
    webhook = await serveWebhooks(new AdmissionHandler(client), certs, host, opts.webhookPort ?? 0);
    const target: WebhookTarget = svc ? { service: svc } : { url: `https://${hosts[0]}:${webhook.port}` };
    await registerWebhooks(client, target, certs.caCert, opts.webhookName);
    if ("url" in target) webhookUrl = target.url;
    log(`webhooks served on ${host}:${webhook.port}`);
  }
  const controller = new RukpakController({ client, stateDir: join(stateDir, "bundles"), pull: { cacheDir: join(stateDir, "images"), ...opts.pull }, log });
  let elector: LeaderElector | undefined;
  if (opts.leaderElectionNamespace) {
    elector = new LeaderElector(client, {
      namespace: opts.leaderElectionNamespace,
      name: "opcat-rukpak",
      identity: opts.identity ?? `${hostname()}-${process.pid}`,
      onStartedLeading: () => {
        log("leading: starting the controllers");
        controller.start().catch((e) => log(`controller: ${(e as Error).message}`));
      },
      onStoppedLeading: () => {
        log("lost the lease: stopping");
        void controller.stop();
      },
      onError: (e) => log(`leader election: ${(e as Error).message}`),
    });
    elector.start();
  } else {
    await controller.start();
    log("controllers started");
  }
  return {
    client,
    controller,
    webhook,
    elector,
    async stop() {
      await elector?.stop();
      await controller.stop();
      log(`api requests: ${client.stats.total} (${Object.entries(client.stats.byVerb).map(([v, n]) => `${v} ${n}`).join(", ")})`);
      if (webhookUrl) await unregisterWebhooks(client, webhookUrl, opts.webhookName).catch((e) => log(`removing the webhook registration: ${(e as Error).message}`));
      await webhook?.close();
      client.close();
    },
  };
}
