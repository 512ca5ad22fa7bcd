/**
 * The controller runtime every opcat controller is built on (after controller-runtime's builder,
 * Reconciler/Result and manager.Runnable): `defineController` wires informers for the primary kind
 * (`for`), for kinds it owns (`owns`: an event on an owned object enqueues its owner) and for
 * anything else it watches (`watches`: a map from an object to the keys to reconcile), one work
 * queue with per-key exponential backoff, and an Event recorder; `reconcile(key, ctx)` returns a
 * `Result`. Start and stop are the same for every controller, so a Manager runs them together. A
 * reconcile of one object is the one wrapper of `reconcile.ts` (`reconcileObject`: cache, steps, one
 * status write, Event, Result).
 */
import type { KubeServer, KubeObject } from "../kube/client.js";
import { EventRecorder } from "../kube/events.js";
import { Informer, type InformerEvent, type InformerOptions } from "../kube/informer.js";
import { WorkQueue } from "../kube/queue.js";
import type { SharedCaches } from "./caches.js";

/** What a reconcile asks of the queue: nothing (done until the next event), or another pass later. */
export interface Result {
  requeueAfter?: number;
}

/**
 * One kind a controller caches: apiVersion, kind and list options (namespace, label selector), or a
 * cache shared with other controllers of one process (`informer`: started and stopped with each of them).
 */
export interface KindSource {
  apiVersion: string;
  kind: string;
  options?: Omit<InformerOptions, "onError">;
  informer?: Informer;
}

export interface ControllerContext<T extends KubeObject> {
  client: KubeServer;
  /** The cache of the primary kind (reads that a cache can answer never go to the API server). */
  primary: Informer<T>;
  /** Caches of owned and watched kinds, by `apiVersion/kind`. */
  caches: ReadonlyMap<string, Informer>;
  events: EventRecorder;
  log: (m: string) => void;
  /** Enqueues a key of this controller (e.g. from a callback the controller registered elsewhere). */
  enqueue: (key: string) => void;
}

export interface ControllerSpec<T extends KubeObject> {
  /** A name for logs, Events' reporting component and metrics. */
  name: string;
  /**
   * The process's caches (`caches.ts`): every kind without its own `informer` is taken from them, one
   * informer per kind and options however many controllers watch it (default: informers of its own).
   */
  caches?: SharedCaches;
  /** Events' reporting component (default `opcat-<name>`), e.g. one shared by the controllers of a group. */
  component?: string;
  for: KindSource & {
    /** Which primary events enqueue the object (default: all; e.g. skip status-only updates). */
    filter?: (event: InformerEvent, obj: T, old?: T) => boolean;
  };
  /** Kinds whose objects name a primary object as owner (ownerReferences, by kind): they enqueue it. */
  owns?: KindSource[];
  /** Other kinds: `map` says which primary keys an event on one of their objects enqueues. */
  watches?: (KindSource & {
    map: (obj: KubeObject, event: InformerEvent, old?: KubeObject) => Iterable<string>;
  })[];
  reconcile: (key: string, ctx: ControllerContext<T>) => Promise<Result | void>;
  /** Keys processed at once (default 2). */
  concurrency?: number;
  /** Retry backoff of a failing key (default 500 ms doubling to 60 s: ≤ 1 request per second after a minute). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

/** A controller built by {@link defineController}: a Runnable with its informers, queue and recorder. */
export class Controller<T extends KubeObject = KubeObject> {
  readonly primary: Informer<T>;
  readonly caches = new Map<string, Informer>();
  readonly queue: WorkQueue;
  readonly events: EventRecorder;
  readonly context: ControllerContext<T>;
  /** Reconciles run and failed, for metrics and tests. */
  readonly stats = { reconciles: 0, errors: 0, ms: 0 };
  #running: Promise<unknown> | undefined;

  constructor(
    readonly client: KubeServer,
    readonly spec: ControllerSpec<T>,
    readonly log: (m: string) => void = () => {},
  ) {
    const onError = (e: unknown) => log(`${spec.name} watch: ${(e as Error).message}`);
    this.primary = this.informerFor(spec.for, onError) as unknown as Informer<T>;
    this.queue = new WorkQueue({
      concurrency: spec.concurrency ?? 2,
      baseDelay: spec.baseDelayMs ?? 500,
      maxDelay: spec.maxDelayMs ?? 60_000,
      onError: (key, e, attempt) => log(`${spec.name} ${key}: attempt ${attempt} failed: ${(e as Error).message}`),
    });
    this.events = new EventRecorder(client, spec.component ?? `opcat-${spec.name}`);
    const enqueue = (key: string) => this.queue.add(key);
    this.primary.on((ev, o, old) => {
      if (!spec.for.filter || spec.for.filter(ev, o, old)) enqueue(o.metadata.name);
    });
    for (const s of spec.owns ?? []) {
      const inf = this.cache(s, onError);
      inf.on((_ev, o) => {
        for (const r of o.metadata.ownerReferences ?? [])
          if (r.kind === spec.for.kind && r.apiVersion === spec.for.apiVersion) enqueue(r.name);
      });
    }
    for (const w of spec.watches ?? []) {
      const inf = this.cache(w, onError);
      inf.on((ev, o, old) => {
        for (const k of w.map(o, ev, old)) enqueue(k);
      });
    }
    this.context = { client, primary: this.primary, caches: this.caches, events: this.events, log, enqueue };
  }

  /** The cache of an owned or watched kind (typed by the caller). */
  cacheOf<U extends KubeObject>(apiVersion: string, kind: string): Informer<U> {
    const inf = this.caches.get(kindKey(apiVersion, kind));
    if (!inf) throw new Error(`controller ${this.spec.name} caches no ${kind} (${apiVersion})`);
    return inf as unknown as Informer<U>;
  }

  /** One cache per kind and options, shared by `owns` and `watches` of this controller. */
  private cache(s: KindSource, onError: (e: unknown) => void): Informer {
    const k = `${kindKey(s.apiVersion, s.kind)}${s.options ? JSON.stringify(s.options) : ""}`;
    let inf = this.caches.get(k);
    if (!inf) {
      inf = this.informerFor(s, onError);
      this.caches.set(k, inf);
      if (!this.caches.has(kindKey(s.apiVersion, s.kind))) this.caches.set(kindKey(s.apiVersion, s.kind), inf);
    }
    return inf;
  }

  /** A source's informer: its own `informer`, else the process's shared one, else a new one. */
  private informerFor(s: KindSource, onError: (e: unknown) => void): Informer {
    if (s.informer) return s.informer;
    const { namespace, labelSelector, ...rest } = s.options ?? {};
    // only plain list options are shared (a resume point or a backoff of its own makes an informer of its own)
    if (this.spec.caches && Object.keys(rest).length === 0)
      return this.spec.caches.informer(s.apiVersion, s.kind, { namespace, labelSelector });
    return new Informer(this.client, s.apiVersion, s.kind, { ...s.options, onError });
  }

  /** Fills every cache, then starts the workers. */
  async start(): Promise<void> {
    await Promise.all([this.primary, ...new Set(this.caches.values())].map((i) => i.start()));
    this.#running = this.queue.run(async (key) => {
      const t0 = performance.now();
      this.stats.reconciles++;
      try {
        return await this.spec.reconcile(key, this.context);
      } catch (e) {
        this.stats.errors++;
        throw e;
      } finally {
        this.stats.ms += performance.now() - t0;
      }
    });
  }

  async stop(): Promise<void> {
    this.primary.stop();
    for (const i of new Set(this.caches.values())) i.stop();
    this.queue.stop();
    await this.#running;
  }
}

export function defineController<T extends KubeObject>(
  client: KubeServer,
  spec: ControllerSpec<T>,
  log?: (m: string) => void,
): Controller<T> {
  return new Controller<T>(client, spec, log);
}
