/**
 * ClusterCatalogs on the cluster: each one's image is pulled with opcat's registry client, polled
 * for new digests, loaded, and served through opcat's catalogd-compatible HTTP API
 * (`{status.urls.base}/api/v1/all`). As catalogd, any FBC that parses is served as it is; what
 * `opcat validate` finds in it (no default channel, two channel heads, …) is reported in the
 * `Validated` condition, never a reason to refuse it. A new image that cannot be pulled or does not
 * parse leaves the previous content served, and the status says why. Listeners (the resolver) hear
 * of every change of served content.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { KubeServer } from "../kube/client.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller, type Result } from "../runtime/controller.js";
import { passBy, reconcileObject, workingCopy } from "../runtime/reconcile.js";
import { retryAfter, type Step, type StepOutcome, withConditions } from "../runtime/steps.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../kube/finalizers.js";
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
  client: KubeServer;
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
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
}

interface Served {
  ref: string;
  generation: number;
  catalog: ImageCatalog;
  pollMs?: number;
}

/** The working state of one pass over a ClusterCatalog. */
interface CatalogState {
  name: string;
  /** The ClusterCatalog as last read or written. */
  cc: ClusterCatalog;
  /** The image ref and poll interval of its spec. */
  ref: string;
  pollMs?: number;
  generation: number;
  /** The working copy of the status (what is written is computed from `found`). */
  status: NonNullable<ClusterCatalog["status"]>;
  /** What the pass found to write (its conditions, other status fields), written once at the end. */
  found?: { conds: NewCondition[]; extra: Partial<NonNullable<ClusterCatalog["status"]>> };
  /** Events, emitted once the status is written. */
  events: ["Normal" | "Warning", string, string][];
}

type CatalogStep = (s: CatalogState) => Promise<StepOutcome> | StepOutcome;

/** A served catalog as the resolver sees it. */
export interface ServedCatalog {
  name: string;
  priority: number;
  revision: CatalogRevision;
  digest?: string;
}

export class CatalogController {
  /**
   * Served over catalogd's HTTP API only: no gRPC registry index (about half a revision's memory);
   * catalogs are loaded one at a time (the peak of a load is several times its catalog); each
   * revision's served bytes live in a file under `<stateDir>/served`, only its tables in memory.
   */
  readonly store: CatalogStore;
  /** Built on the controller runtime: ClusterCatalogs, and the image sources' events. */
  readonly controller: Controller<ClusterCatalog>;
  readonly catalogs: Informer<ClusterCatalog>;
  readonly events: EventRecorder;
  private http: HttpServerHandle | undefined;
  private readonly served = new Map<string, Served>();
  /** ClusterCatalogs whose first pull was tried (served or failed). */
  private readonly attempted = new Set<string>();
  private readonly listeners: (() => void)[] = [];
  private readonly log: (m: string) => void;
  private readonly steps: Step<CatalogState>[];
  /** The ClusterCatalog cache is filled. */
  synced = false;

  constructor(private readonly opts: CatalogControllerOptions) {
    this.log = opts.log ?? (() => {});
    this.store = new CatalogStore({
      grpc: false,
      oneLoadAtATime: true,
      validation: "report",
      files: { dir: join(opts.stateDir, "served"), onWarning: this.log },
    });
    this.controller = defineController<ClusterCatalog>(
      opts.client,
      {
        name: "clustercatalog",
        component: "opcat-catalogd",
        caches: opts.caches,
        for: {
          apiVersion: CATALOG_API_VERSION,
          kind: "ClusterCatalog",
          filter: (ev, c, old) => {
            // a priority change alone changes resolution
            if (ev !== "update" || old?.spec.priority !== c.spec.priority) this.changed();
            return true;
          },
        },
        concurrency: 2,
        baseDelayMs: 500,
        maxDelayMs: 60_000,
        reconcile: (key) => this.reconcile(key),
      },
      this.log,
    );
    this.catalogs = this.controller.primary;
    this.events = this.controller.events;
    const steps: [string, CatalogStep][] = [
      ["deleted", (s) => this.deleted(s)],
      ["unavailable", (s) => this.unavailableStep(s)],
      ["finalizer", (s) => this.finalizer(s)],
      ["specChanged", (s) => this.specChanged(s)],
      ["newSource", (s) => this.newSource(s)],
      ["pull", (s) => this.pull(s)],
      ["status", (s) => this.status(s)],
    ];
    this.steps = steps.map(([name, run]) => ({ name, run }));
  }

  get queue() {
    return this.controller.queue;
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
    // what an earlier process was killed with between writing a revision's file and opening it (never reused)
    rmSync(join(this.opts.stateDir, "served"), { recursive: true, force: true });
    this.http = await startHttpServer(this.store, {
      host: this.opts.host ?? "127.0.0.1",
      port: this.opts.port ?? 0,
      resolver: false,
      tls: this.opts.tls,
    });
    this.log(`catalogs served on ${this.baseUrl}`);
    await this.controller.start();
    this.synced = true;
  }

  /** A rotated certificate: new connections are served with it. */
  setCerts(certs: ServerCerts): void {
    this.http?.setCerts(certs);
  }

  async stop(): Promise<void> {
    await this.controller.stop();
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

  /** Records what the pass found, written once at its end ({@link statusOf}). */
  private found(
    s: CatalogState,
    conds: NewCondition[],
    extra: Partial<NonNullable<ClusterCatalog["status"]>> = {},
  ): void {
    s.found = { conds, extra };
  }

  /** A failure written as `conds`, then retried with the queue's backoff (retry-after). */
  private failed(s: CatalogState, conds: NewCondition[]): StepOutcome {
    this.found(s, conds);
    return retryAfter({ stop: true, conditions: conds });
  }

  private onImageEvent(name: string, e: ImageSourceEvent): void {
    if (e.outcome === "updated") {
      this.changed();
      this.queue.add(name);
    } else if (e.outcome === "update-failed" || e.outcome === "poll-failed") this.queue.add(name);
  }

  async reconcile(name: string): Promise<Result> {
    try {
      return await this.reconcileOnce(name);
    } finally {
      if (!this.attempted.has(name)) {
        this.attempted.add(name);
        this.changed();
      }
    }
  }

  /** Stops serving a catalog (its content removed). */
  private async unserve(name: string): Promise<void> {
    const cur = this.served.get(name);
    if (!cur) return;
    this.served.delete(name);
    await cur.catalog.close();
    await this.store.remove(name);
    this.changed();
  }

  /** availabilityMode Unavailable (catalogd's): nothing served, no finalizer, the status says so. */
  private async unavailableStep(s: CatalogState): Promise<StepOutcome> {
    const cc = s.cc;
    if (cc.spec.availabilityMode !== "Unavailable") return;
    await this.unserve(cc.metadata.name);
    if (hasFinalizer(cc, FINALIZER)) s.cc = await removeFinalizer(this.opts.client, cc, FINALIZER);
    const message = "Catalog availability mode is set to Unavailable";
    this.found(s, [
      { type: "Progressing", status: "True", reason: "Succeeded", message },
      { type: "Serving", status: "False", reason: "UserSpecifiedUnavailable", message },
    ]);
    return { stop: true };
  }

  /**
   * One pass over a ClusterCatalog (steps: deleted, unavailable, finalizer, specChanged, newSource,
   * pull, status) on the one reconcile wrapper (`runtime/reconcile.ts`): what the steps found is written
   * once at the end, then their Events; a gone ClusterCatalog is no longer served.
   */
  private async reconcileOnce(name: string): Promise<Result> {
    return reconcileObject<ClusterCatalog, CatalogState>(
      {
        ...passBy("clustercatalog", this.opts.client, this.events, this.log),
        apiVersion: CATALOG_API_VERSION,
        kind: "ClusterCatalog",
        get: async (key) => {
          const cc = this.catalogs.get(key);
          if (!cc) await this.unserve(key);
          return cc;
        },
        state: (cc, key) => {
          const image = cc.spec.source.image;
          return {
            name: key,
            cc,
            ref: image?.ref ?? "",
            pollMs: image?.pollIntervalMinutes ? image.pollIntervalMinutes * 60_000 : undefined,
            ...workingCopy(cc),
            events: [],
          };
        },
        steps: this.steps,
        object: (s) => s.cc,
        next: (s, fresh) => (s.found ? statusOf(fresh, s.found.conds, s.found.extra) : undefined),
        done: (s, write) => {
          if (write !== "gone") for (const e of s.events) this.events.emit(s.cc, ...e);
        },
      },
      name,
    );
  }

  /** Deleted or being deleted: nothing served, the finalizer removed. */
  private async deleted(s: CatalogState): Promise<StepOutcome> {
    const { cc } = s;
    if (!cc.metadata.deletionTimestamp) return;
    await this.unserve(s.name);
    if (hasFinalizer(cc, FINALIZER)) await removeFinalizer(this.opts.client, cc, FINALIZER);
    return { stop: true };
  }

  /** The served content's cache is removed when the ClusterCatalog goes. */
  private async finalizer(s: CatalogState): Promise<StepOutcome> {
    const cc = s.cc;
    if (!cc.spec.source.image) return { stop: true }; // the CRD requires it for type Image, the only type
    if (!hasFinalizer(cc, FINALIZER)) s.cc = await addFinalizer(this.opts.client, cc, FINALIZER);
  }

  /** The spec changed (interval, priority, anything): poll now, and follow the new interval. */
  private async specChanged(s: CatalogState): Promise<void> {
    const cur = this.served.get(s.name);
    if (!(cur && cur.ref === s.ref && cur.generation !== s.generation)) return;
    cur.generation = s.generation;
    if (cur.pollMs !== s.pollMs) {
      cur.catalog.stopPolling();
      cur.pollMs = s.pollMs;
      if (s.pollMs) cur.catalog.startPolling(s.pollMs);
    }
    await cur.catalog.poll();
  }

  /** A new source: tried on its own first; the old content stays served until the new one serves. */
  private async newSource(s: CatalogState): Promise<StepOutcome> {
    const { name, ref } = s;
    const cur = this.served.get(name);
    if (!cur || cur.ref === ref) return;
    const trial = new CatalogStore({ grpc: false, validation: "report" });
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
      if (!trial.get(name)) throw new Error(`${ref} is not a valid catalog: ${firstProblems(problems)}`);
    } catch (e) {
      const msg =
        `the new ref ${ref} cannot be served; ${cur.ref} (${cur.catalog.digest ?? "as pulled"}) stays ` +
        `served: ${(e as Error).message}`;
      if (this.queue.failuresOf(name) === 0) s.events.push(["Warning", "PullFailed", msg]);
      return this.failed(s, [{ type: "Progressing", status: "True", reason: "Retrying", message: msg }]);
    } finally {
      await trialCatalog?.close();
      await trial.close();
    }
    this.served.delete(name);
    await cur.catalog.close();
    await this.store.remove(name);
  }

  /**
   * Nothing served yet: pulled and served (a failure is written, then retried with backoff). The status
   * is written once, with the outcome (the pull's, or the failure's, which stays until the outcome changes).
   */
  private async pull(s: CatalogState): Promise<StepOutcome> {
    const { name, ref, pollMs } = s;
    if (this.served.get(name)) return;
    try {
      const { catalog } = await addImageCatalog(this.store, name, ref, {
        ...this.opts.pull,
        workDir: join(this.opts.stateDir, "catalogs"),
        cacheDir: this.opts.pull?.cacheDir ?? join(this.opts.stateDir, "images"),
        onEvent: (e) => this.onImageEvent(name, e),
      });
      this.served.set(name, { ref, generation: s.generation, catalog, pollMs });
      if (pollMs) catalog.startPolling(pollMs);
      if (this.store.get(name)) this.changed();
    } catch (e) {
      const msg = (e as Error).message;
      if (this.queue.failuresOf(name) === 0) s.events.push(["Warning", "PullFailed", msg]);
      return this.failed(s, [
        { type: "Progressing", status: "True", reason: "Retrying", message: msg },
        { type: "Serving", status: "False", reason: "Unavailable", message: `nothing is served: ${msg}` },
      ]);
    }
  }

  /** Serving (or why not), the resolved source, the URL and when it was unpacked. */
  private async status(s: CatalogState): Promise<void> {
    const { name, ref } = s;
    const rev = this.store.get(name);
    const problems = this.store.lastError(name);
    if (!rev) {
      const msg = `${ref} is not a valid catalog: ${firstProblems(problems)}`;
      this.found(s, [
        { type: "Serving", status: "False", reason: "Unavailable", message: msg },
        { type: "Progressing", status: "True", reason: "Retrying", message: msg },
      ]);
      s.events.push(["Warning", "InvalidCatalog", msg]);
      return;
    }
    const digest = this.served.get(name)!.catalog.digest;
    const conds: NewCondition[] = [
      { type: "Serving", status: "True", reason: "Available", message: "Serving desired content from resolved source" },
    ];
    if (problems?.length) {
      const msg =
        `the latest image of ${ref} is not a valid catalog; the previous content stays served: ` +
        firstProblems(problems);
      conds.push({ type: "Progressing", status: "True", reason: "Retrying", message: msg });
      s.events.push(["Warning", "InvalidCatalog", msg]);
    }
    // catalogd's updateStatusProgressing: True/Succeeded once unpacked and stored, polling or not
    else
      conds.push({
        type: "Progressing",
        status: "True",
        reason: "Succeeded",
        message: "Successfully unpacked and stored content from resolved source",
      });
    conds.push(validatedCondition(rev));
    this.found(s, conds, {
      resolvedSource: {
        type: "Image",
        image: { ref: digest ? `${ref.split("@")[0].replace(/:[^/:]+$/, "")}@${digest}` : ref },
      },
      urls: { base: `${this.baseUrl}/catalogs/${name}` },
      lastUnpacked: rev.lastModified.toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
  }
}

/** The status from what a pass found, on top of the ClusterCatalog as it is now. */
function statusOf(
  fresh: ClusterCatalog,
  conds: NewCondition[],
  extra: Partial<NonNullable<ClusterCatalog["status"]>>,
): NonNullable<ClusterCatalog["status"]> {
  const gen = fresh.metadata.generation ?? 0;
  const list = withConditions(fresh.status ?? {}, gen, conds).conditions ?? [];
  return { ...(fresh.status ?? {}), ...extra, conditions: list, observedGeneration: gen };
}

/**
 * opcat's `Validated` condition (catalogd has none): whether the served content passes `opcat
 * validate` — its first problems and their count when not. Served either way, as catalogd does.
 */
export function validatedCondition(rev: CatalogRevision): NewCondition {
  const problems = rev.validationProblems;
  if (problems.length === 0)
    return { type: "Validated", status: "True", reason: "Valid", message: "the served content passes opcat validate" };
  const shown = Math.min(problems.length, 5);
  return {
    type: "Validated",
    status: "False",
    reason: "Invalid",
    message:
      `opcat validate finds ${problems.length} problem${problems.length === 1 ? "" : "s"} in the served content ` +
      `(served as it is, as catalogd does; packages resolve per ClusterExtension)` +
      `${shown < problems.length ? `; the first ${shown}` : ""}: ${firstProblems(problems)}`,
  };
}

/** The first five problems of a catalog that does not load, for a message. */
function firstProblems(problems: readonly { message: string }[] | undefined): string {
  return (problems ?? [])
    .slice(0, 5)
    .map((p) => p.message)
    .join("; ");
}
