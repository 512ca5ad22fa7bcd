/**
 * A controller work queue: keys, not objects. A key added while it waits is queued once; a key
 * added while it is being processed is processed again afterwards (never twice at once); a failed
 * key is retried with a per-key exponential backoff until it succeeds or is forgotten.
 */

/** Exponential backoff: `base` doubling up to `max`. */
export class Backoff {
  private n = 0;
  constructor(
    readonly base: number,
    readonly max: number,
  ) {}
  next(): number {
    const d = Math.min(this.max, this.base * 2 ** this.n);
    this.n = Math.min(this.n + 1, 30);
    return d;
  }
  reset(): void {
    this.n = 0;
  }
  /** Waits the next delay; resolves early when the signal aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    const d = this.next();
    return new Promise((resolve) => {
      const t = setTimeout(done, d);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}

export interface QueueOptions {
  /** Keys processed at once (default 4). */
  concurrency?: number;
  /** Retry backoff per key: first delay and cap in ms (default 50 ms → 60 s). */
  baseDelay?: number;
  maxDelay?: number;
  /** Called when processing a key fails (after which it is retried). */
  onError?: (key: string, e: unknown, attempt: number) => void;
}

export type Reconcile = (key: string) => Promise<{ requeueAfter?: number } | void>;

export class WorkQueue {
  private queue: string[] = [];
  private queued = new Set<string>();
  private processing = new Set<string>();
  private dirty = new Set<string>();
  private failures = new Map<string, number>();
  private timers = new Map<string, NodeJS.Timeout>();
  private wake: (() => void) | undefined;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly baseDelay: number;
  private readonly maxDelay: number;
  /** Reconciles run, for benchmarks and tests. */
  processed = 0;

  constructor(private readonly opts: QueueOptions = {}) {
    this.concurrency = opts.concurrency ?? 4;
    this.baseDelay = opts.baseDelay ?? 50;
    this.maxDelay = opts.maxDelay ?? 60_000;
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.wake?.();
  }

  /** Adds the key after `ms` (replacing an earlier pending delayed add of it). */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.add(key);
      }, ms),
    );
  }

  /** Adds the key after its next backoff delay. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const d = Math.min(this.maxDelay, this.baseDelay * 2 ** n);
    this.addAfter(key, d);
    return d;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  get length(): number {
    return this.queue.length;
  }

  /** Resolves when nothing is queued, processing or waiting on a timer. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.processing.size === 0 && this.timers.size === 0;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.wake?.();
  }

  /** Runs `reconcile` for queued keys until stopped. */
  async run(reconcile: Reconcile): Promise<void> {
    const workers: Promise<void>[] = [];
    for (let i = 0; i < this.concurrency; i++) workers.push(this.worker(reconcile));
    await Promise.all(workers);
  }

  private async worker(reconcile: Reconcile): Promise<void> {
    while (!this.stopped) {
      const key = this.queue.shift();
      if (key === undefined) {
        await new Promise<void>((r) => {
          const prev = this.wake;
          this.wake = () => {
            this.wake = undefined;
            prev?.();
            r();
          };
        });
        continue;
      }
      this.queued.delete(key);
      this.processing.add(key);
      try {
        const res = await reconcile(key);
        this.forget(key);
        if (res && res.requeueAfter !== undefined) this.addAfter(key, res.requeueAfter);
      } catch (e) {
        const attempt = (this.failures.get(key) ?? 0) + 1;
        this.opts.onError?.(key, e, attempt);
        this.addRateLimited(key);
      } finally {
        this.processed++;
        this.processing.delete(key);
        if (this.dirty.delete(key)) this.add(key);
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }
}
