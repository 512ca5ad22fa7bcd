/**
 * ClusterCatalogs on the cluster: each one's image is pulled with opcat's registry client, polled
 * for new digests, loaded and validated, and served through opcat's catalogd-compatible HTTP API
 * (`{status.urls.base}/api/v1/all`). A new image that cannot be pulled or is not a valid catalog
 * leaves the previous content served, and the status says why. Listeners (the resolver) hear of
 * every change of served content.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient } from "../client.js";
import { isConflict, isNotFound } from "../client.js";
import { setCondition, type NewCondition } from "../conditions.js";
import { EventRecorder } from "../events.js";
import { Informer } from "../informer.js";
import { WorkQueue } from "../queue.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../finalizers.js";
import type { PullOptions } from "../../image/index.js";
import {
  addImageCatalog,
  CatalogStore,
  startHttpServer,
  type HttpServerHandle,
  type ImageCatalog,
  type ImageSourceEvent,
  type ServerCerts,
} from "../../serve/index.js";
import type { CatalogRevision } from "../../serve/index.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "./api.js";

const FINALIZER = "olm.operatorframework.io/delete-server-cache";

export interface CatalogControllerOptions {
  client: KubeClient;
  /** Where unpacked catalog images live. */
  stateDir: string;
  pull?: PullOptions;
  /** The catalog HTTP server's address (default 127.0.0.1, a free port). */
  host?: string;
  port?: number;
  /** The host name written into status.urls.base (default: host:port as bound). */
  advertise?: string;
  /**
   * Serve the catalogs over HTTPS with this certificate (in the cluster: the one the webhooks serve,
   * covering the catalogd Service's names), as catalogd does; default plain HTTP (a laptop).
   */
  tls?: ServerCerts;
  log?: (msg: string) => void;
}

interface Served {
  ref: string;
  generation: number;
  catalog: ImageCatalog;
  pollMs?: number;
}

/** A served catalog as the resolver sees it. */
export interface ServedCatalog {
  name: string;
  priority: number;
  revision: CatalogRevision;
  digest?: string;
}

export class CatalogController {
  readonly store = new CatalogStore();
  readonly catalogs: Informer<ClusterCatalog>;
  readonly queue: WorkQueue;
  readonly events: EventRecorder;
  private http: HttpServerHandle | undefined;
  private readonly served = new Map<string, Served>();
  /** ClusterCatalogs whose first pull was tried (served or failed). */
  private readonly attempted = new Set<string>();
  private readonly listeners: (() => void)[] = [];
  private readonly log: (m: string) => void;
  private running: Promise<unknown> | undefined;
  /** The ClusterCatalog cache is filled. */
  synced = false;

  constructor(private readonly opts: CatalogControllerOptions) {
    this.log = opts.log ?? (() => {});
    this.catalogs = new Informer<ClusterCatalog>(opts.client, CATALOG_API_VERSION, "ClusterCatalog", {
      onError: (e) => this.log(`watch clustercatalogs: ${(e as Error).message}`),
    });
    this.queue = new WorkQueue({
      concurrency: 2,
      baseDelay: 500,
      maxDelay: 60_000,
      onError: (k, e, n) => this.log(`clustercatalog ${k}: attempt ${n} failed: ${(e as Error).message}`),
    });
    this.events = new EventRecorder(opts.client, "opcat-catalogd");
    this.catalogs.on((ev, c, old) => {
      this.queue.add(c.metadata.name);
      // a priority change alone changes resolution
      if (ev !== "update" || old?.spec.priority !== c.spec.priority) this.changed();
    });
  }

  /** Called whenever served content (or a priority) changes. */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private changed(): void {
    for (const f of this.listeners) f();
  }

  /** The base URL of the catalog HTTP server. */
  get baseUrl(): string {
    const a = this.http?.address;
    const scheme = this.opts.tls ? "https" : "http";
    return `${scheme}://${this.opts.advertise ?? `${a?.address ?? "127.0.0.1"}:${a?.port ?? 0}`}`;
  }

  async start(): Promise<void> {
    mkdirSync(this.opts.stateDir, { recursive: true });
    this.http = await startHttpServer(this.store, {
      host: this.opts.host ?? "127.0.0.1",
      port: this.opts.port ?? 0,
      resolver: false,
      tls: this.opts.tls,
    });
    this.log(`catalogs served on ${this.baseUrl}`);
    await this.catalogs.start();
    this.running = this.queue.run((k) => this.reconcile(k));
    this.synced = true;
  }

  /** A rotated certificate: new connections are served with it. */
  setCerts(certs: ServerCerts): void {
    this.http?.setCerts(certs);
  }

  async stop(): Promise<void> {
    this.catalogs.stop();
    this.queue.stop();
    await this.running;
    for (const s of this.served.values()) await s.catalog.close();
    this.served.clear();
    await this.store.close();
    await this.http?.close(1000);
  }

  /**
   * True once every ClusterCatalog has been tried at least once: resolving before that would see
   * installed operators' catalogs as missing.
   */
  settled(): boolean {
    return (
      this.synced &&
      this.catalogs.list().every((c) => c.metadata.deletionTimestamp || this.attempted.has(c.metadata.name))
    );
  }

  /** Every catalog with served content, for the resolver. */
  servedCatalogs(): ServedCatalog[] {
    const out: ServedCatalog[] = [];
    for (const [name, s] of this.served) {
      const revision = this.store.get(name);
      const cc = this.catalogs.get(name);
      if (revision && cc && !cc.metadata.deletionTimestamp)
        out.push({ name, priority: cc.spec.priority ?? 0, revision, digest: s.catalog.digest });
    }
    return out;
  }

  private async setStatus(
    cc: ClusterCatalog,
    conds: NewCondition[],
    extra: Partial<NonNullable<ClusterCatalog["status"]>> = {},
  ): Promise<void> {
    const fresh =
      (await this.opts.client.tryGet<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", cc.metadata.name)) ?? cc;
    const st = { ...(fresh.status ?? {}) };
    let list = st.conditions ?? [];
    for (const c of conds)
      list = setCondition(list, { observedGeneration: fresh.metadata.generation ?? 0, ...c }).conditions;
    const next = { ...st, ...extra, conditions: list, observedGeneration: fresh.metadata.generation ?? 0 };
    if (JSON.stringify(next) === JSON.stringify(fresh.status ?? {})) return;
    await this.opts.client
      .replace<ClusterCatalog>({ ...fresh, status: next }, { subresource: "status" })
      .catch((e) => (isConflict(e) ? Promise.reject(e) : isNotFound(e) ? undefined : Promise.reject(e)));
  }

  private onImageEvent(name: string, e: ImageSourceEvent): void {
    if (e.outcome === "updated") {
      this.changed();
      this.queue.add(name);
    } else if (e.outcome === "update-failed" || e.outcome === "poll-failed") this.queue.add(name);
  }

  async reconcile(name: string): Promise<void> {
    try {
      await this.reconcileOnce(name);
    } finally {
      if (!this.attempted.has(name)) {
        this.attempted.add(name);
        this.changed();
      }
    }
  }

  /** availabilityMode Unavailable (catalogd's): nothing served, no finalizer, the status says so. */
  private async unavailable(cc: ClusterCatalog): Promise<void> {
    const name = cc.metadata.name;
    const cur = this.served.get(name);
    if (cur) {
      this.served.delete(name);
      await cur.catalog.close();
      await this.store.remove(name);
      this.changed();
    }
    if (hasFinalizer(cc, FINALIZER)) await removeFinalizer(this.opts.client, cc, FINALIZER);
    const message = "Catalog availability mode is set to Unavailable";
    await this.setStatus(cc, [
      { type: "Progressing", status: "True", reason: "Succeeded", message },
      { type: "Serving", status: "False", reason: "UserSpecifiedUnavailable", message },
    ]);
  }

  private async reconcileOnce(name: string): Promise<void> {
    const cc = this.catalogs.get(name);
    const cur = this.served.get(name);
    if (!cc || cc.metadata.deletionTimestamp) {
      if (cur) {
        this.served.delete(name);
        await cur.catalog.close();
        await this.store.remove(name);
        this.changed();
      }
      if (cc && hasFinalizer(cc, FINALIZER)) await removeFinalizer(this.opts.client, cc, FINALIZER);
      return;
    }
    if (cc.spec.availabilityMode === "Unavailable") return this.unavailable(cc);
    const image = cc.spec.source.image;
    if (!image) return; // the CRD requires it for type Image, the only type
    if (!hasFinalizer(cc, FINALIZER)) await addFinalizer(this.opts.client, cc, FINALIZER);
    const ref = image.ref;
    const pollMs = image.pollIntervalMinutes ? image.pollIntervalMinutes * 60_000 : undefined;
    const gen = cc.metadata.generation ?? 0;
    if (cur && cur.ref === ref && cur.generation !== gen) {
      // the spec changed (interval, priority, anything): poll now, and follow the new interval
      cur.generation = gen;
      if (cur.pollMs !== pollMs) {
        cur.catalog.stopPolling();
        cur.pollMs = pollMs;
        if (pollMs) cur.catalog.startPolling(pollMs);
      }
      await cur.catalog.poll();
    }
    if (cur && cur.ref !== ref) {
      // a new source: tried on its own first; the old content stays served until the new one serves
      const trial = new CatalogStore();
      let trialCatalog: ImageCatalog | undefined;
      try {
        trialCatalog = (
          await addImageCatalog(trial, name, ref, {
            ...this.opts.pull,
            workDir: join(this.opts.stateDir, "trial"),
            cacheDir: this.opts.pull?.cacheDir ?? join(this.opts.stateDir, "images"),
          })
        ).catalog;
        const problems = trial.lastError(name);
        if (!trial.get(name))
          throw new Error(
            `${ref} is not a valid catalog: ${(problems ?? [])
              .slice(0, 5)
              .map((p) => p.message)
              .join("; ")}`,
          );
      } catch (e) {
        const msg =
          `the new ref ${ref} cannot be served; ${cur.ref} (${cur.catalog.digest ?? "as pulled"}) stays ` +
          `served: ${(e as Error).message}`;
        if (this.queue.failuresOf(name) === 0) this.events.emit(cc, "Warning", "PullFailed", msg);
        await this.setStatus(cc, [{ type: "Progressing", status: "True", reason: "Retrying", message: msg }]);
        throw e; // retried with backoff
      } finally {
        await trialCatalog?.close();
        await trial.close();
      }
      this.served.delete(name);
      await cur.catalog.close();
      await this.store.remove(name);
    }
    let s = this.served.get(name);
    if (!s) {
      // the first attempt says what it does; retries leave the failure's status as it is until the outcome changes
      if (this.queue.failuresOf(name) === 0)
        await this.setStatus(cc, [
          { type: "Progressing", status: "True", reason: "Retrying", message: `pulling ${ref}` },
        ]);
      try {
        const { catalog } = await addImageCatalog(this.store, name, ref, {
          ...this.opts.pull,
          workDir: join(this.opts.stateDir, "catalogs"),
          cacheDir: this.opts.pull?.cacheDir ?? join(this.opts.stateDir, "images"),
          onEvent: (e) => this.onImageEvent(name, e),
        });
        s = { ref, generation: gen, catalog, pollMs };
        this.served.set(name, s);
        if (pollMs) catalog.startPolling(pollMs);
        if (this.store.get(name)) this.changed();
      } catch (e) {
        const msg = (e as Error).message;
        await this.setStatus(cc, [
          { type: "Progressing", status: "True", reason: "Retrying", message: msg },
          { type: "Serving", status: "False", reason: "Unavailable", message: `nothing is served: ${msg}` },
        ]);
        if (this.queue.failuresOf(name) === 0) this.events.emit(cc, "Warning", "PullFailed", msg);
        throw e; // retried with backoff
      }
    }
    const rev = this.store.get(name);
    const problems = this.store.lastError(name);
    const digest = s.catalog.digest;
    const base = `${this.baseUrl}/catalogs/${name}`;
    if (rev) {
      const conds: NewCondition[] = [
        {
          type: "Serving",
          status: "True",
          reason: "Available",
          message: "Serving desired content from resolved source",
        },
      ];
      if (problems?.length) {
        const msg = `the latest image of ${ref} is not a valid catalog; the previous content stays served: ${problems
          .slice(0, 5)
          .map((p) => p.message)
          .join("; ")}`;
        conds.push({ type: "Progressing", status: "True", reason: "Retrying", message: msg });
        this.events.emit(cc, "Warning", "InvalidCatalog", msg);
      } else
        conds.push({
          type: "Progressing",
          status: pollMs ? "True" : "False",
          reason: "Succeeded",
          message: pollMs ? `polling ${ref} every ${pollMs / 60_000} min` : `unpacked ${digest ?? ref}`,
        });
      await this.setStatus(cc, conds, {
        resolvedSource: {
          type: "Image",
          image: { ref: digest ? `${ref.split("@")[0].replace(/:[^/:]+$/, "")}@${digest}` : ref },
        },
        urls: { base },
        lastUnpacked: rev.lastModified.toISOString().replace(/\.\d{3}Z$/, "Z"),
      });
    } else {
      const msg = `${ref} is not a valid catalog: ${(problems ?? [])
        .slice(0, 5)
        .map((p) => p.message)
        .join("; ")}`;
      await this.setStatus(cc, [
        { type: "Serving", status: "False", reason: "Unavailable", message: msg },
        { type: "Progressing", status: "True", reason: "Retrying", message: msg },
      ]);
      this.events.emit(cc, "Warning", "InvalidCatalog", msg);
    }
  }
}
