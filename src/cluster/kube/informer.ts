/**
 * A list+watch informer: keeps a cache of one resource's objects in step with the API server.
 * It lists once, then watches from the list's resourceVersion with bookmarks, resumes from the
 * last resourceVersion seen when a watch ends, lists again on 410 Gone (the version is too old),
 * and backs off and retries on any other error (e.g. the 429 a new CRD's resource answers while
 * its watch cache starts). Handlers see every change once, in order.
 */
import { isGone, type KubeObject, type WatchApi } from "./client.js";
import { Backoff } from "./queue.js";

export type InformerEvent = "add" | "update" | "delete";
export type InformerHandler<T> = (event: InformerEvent, obj: T, old?: T) => void;

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  /** Called for every error the informer recovers from (logged by controllers). */
  onError?: (e: unknown) => void;
  /** Backoff between failed list/watch attempts (default 100 ms doubling to 10 s). */
  backoff?: Backoff;
  /**
   * Resume from a resourceVersion remembered earlier instead of listing first (the cache starts
   * empty and fills from the watch); when the server no longer has that version (410 Gone) the
   * informer lists.
   */
  resourceVersion?: string;
}

export function objectKey(o: { metadata: { name: string; namespace?: string } }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly cache = new Map<string, T>();
  private handlers: InformerHandler<T>[] = [];
  private abort = new AbortController();
  private resourceVersion = "";
  private synced!: Promise<void>;
  private markSynced!: () => void;
  private running = false;
  /** True once the first list is in the cache. */
  hasSynced = false;
  /** Times the informer listed (1 + relists after 410 Gone), for tests and benchmarks. */
  lists = 0;
  /** 410 Gone answers seen (a watch from a version the server no longer has). */
  gone = 0;

  constructor(
    private readonly client: WatchApi,
    readonly apiVersion: string,
    readonly kind: string,
    private readonly opts: InformerOptions = {},
  ) {
    this.synced = new Promise((r) => {
      this.markSynced = () => {
        this.hasSynced = true;
        r();
      };
    });
  }

  on(handler: InformerHandler<T>): this {
    this.handlers.push(handler);
    return this;
  }

  /** Starts the list+watch loop; resolves once the first list is in the cache. */
  start(): Promise<void> {
    if (!this.running) {
      this.running = true;
      void this.loop();
    }
    return this.synced;
  }

  stop(): void {
    this.running = false;
    this.abort.abort();
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  private emit(event: InformerEvent, obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        h(event, obj, old);
      } catch (e) {
        this.opts.onError?.(e);
      }
    }
  }

  private async relist(): Promise<void> {
    const r = await this.client.list<T>(this.apiVersion, this.kind, {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
    });
    this.lists++;
    const seen = new Set<string>();
    for (const o of r.items) {
      const k = objectKey(o);
      seen.add(k);
      const old = this.cache.get(k);
      this.cache.set(k, o);
      if (!old) this.emit("add", o);
      else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit("update", o, old);
    }
    for (const [k, o] of this.cache) {
      if (!seen.has(k)) {
        this.cache.delete(k);
        this.emit("delete", o);
      }
    }
    this.resourceVersion = r.resourceVersion;
    this.markSynced();
  }

  private async loop(): Promise<void> {
    const backoff = this.opts.backoff ?? new Backoff(100, 10_000);
    let needList = !this.opts.resourceVersion;
    if (this.opts.resourceVersion) {
      this.resourceVersion = this.opts.resourceVersion;
      this.markSynced();
    }
    while (this.running) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const path = await this.client.path(this.apiVersion, this.kind, this.opts.namespace);
        await this.client.watch(
          path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            labelSelector: this.opts.labelSelector,
            timeoutSeconds: 300,
          },
          (ev) => {
            backoff.reset();
            const o = ev.object as T;
            if (o.metadata?.resourceVersion) this.resourceVersion = o.metadata.resourceVersion;
            if (ev.type === "BOOKMARK") return;
            o.apiVersion ??= this.apiVersion;
            o.kind ??= this.kind;
            const k = objectKey(o);
            const old = this.cache.get(k);
            if (ev.type === "DELETED") {
              this.cache.delete(k);
              this.emit("delete", o, old);
            } else {
              this.cache.set(k, o);
              this.emit(old ? "update" : "add", o, old);
            }
          },
          this.abort.signal,
        );
        // the server closed the watch (timeout): resume from the last resourceVersion
      } catch (e) {
        if (!this.running) return;
        if (isGone(e)) {
          this.gone++;
          needList = true;
          continue;
        }
        this.opts.onError?.(e);
        await backoff.wait(this.abort.signal);
      }
    }
  }
}
