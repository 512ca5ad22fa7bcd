/**
 * A controller work queue: keys, not objects. A key added while it waits is queued once; a key
 * added while it is being processed is processed again afterwards (never twice at once); a failed
 * key is retried with a per-key exponential backoff until it succeeds or is forgotten. While a failed
 * key waits for its retry, adding it again (an informer event, often the failed pass's own status
 * write) does not run it sooner: only {@link WorkQueue.retryNow} (a spec change) or
 * {@link WorkQueue.drop} (a deletion) cut the backoff short.
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

/** controller-runtime's reconcile-time buckets (seconds), for a Prometheus histogram. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** Reconcile durations: cumulative-ready counts per bucket upper bound, their sum and count. */
export class DurationHistogram {
  /** Observations in each bucket of DURATION_BUCKETS (not cumulative), and above the last. */
  readonly counts: number[] = new Array(DURATION_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let i = DURATION_BUCKETS.findIndex((b) => seconds <= b);
    if (i < 0) i = DURATION_BUCKETS.length;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }
}

export type Reconcile = (key: string) => Promise<{ requeueAfter?: number } | void>;

export class WorkQueue {
  private queue: string[] = [];
  private queued = new Set<string>();
  private processing = new Set<string>();
  private dirty = new Set<string>();
  private failures = new Map<string, number>();
  private timers = new Map<string, NodeJS.Timeout>();
  /** Failed keys waiting for their backoff retry (their timer is in `timers`). */
  private backingOff = new Set<string>();
  private wake: (() => void) | undefined;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  private readonly concurrency: number;
  readonly baseDelay: number;
  readonly maxDelay: number;
  /** Reconciles run, for benchmarks, tests and metrics. */
  processed = 0;
  /** Reconciles that failed (and were retried with backoff). */
  errors = 0;
  /** How long reconciles took. */
  readonly durations = new DurationHistogram();

  constructor(private readonly opts: QueueOptions = {}) {
    this.concurrency = opts.concurrency ?? 4;
    this.baseDelay = opts.baseDelay ?? 50;
    this.maxDelay = opts.maxDelay ?? 60_000;
  }

  add(key: string): void {
    if (this.stopped) return;
    // a failed key waits for its retry: its timer adds it
    if (this.backingOff.has(key)) return;
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
    this.schedule(key, ms, false);
  }

  private schedule(key: string, ms: number, backoff: boolean): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    if (backoff) this.backingOff.add(key);
    else this.backingOff.delete(key);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.backingOff.delete(key);
        this.add(key);
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      }, ms),
    );
  }

  /** The next backoff delay of a key (counting this failure). */
  private nextDelay(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.maxDelay, this.baseDelay * 2 ** n);
  }

  /** Adds the key after its next backoff delay; until then, {@link add} does not run it sooner. */
  addRateLimited(key: string): number {
    if (this.stopped) return 0;
    const d = this.nextDelay(key);
    this.schedule(key, d, true);
    return d;
  }

  /** Forgets the key's failures (its next failure waits the first delay again). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Failures of a key since its last success (0 when it is not failing). */
  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** True while a failed key waits for its retry. */
  isBackingOff(key: string): boolean {
    return this.backingOff.has(key);
  }

  /** Cuts a failed key's backoff short (its object changed): forgets its failures and adds it now. */
  retryNow(key: string): void {
    this.cancel(key);
    this.add(key);
  }

  /** Forgets a key (its object is gone): no pending retry, no failures. A running pass is not stopped. */
  drop(key: string): void {
    this.cancel(key);
    this.dirty.delete(key);
    if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  private cancel(key: string): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
    this.backingOff.delete(key);
    this.failures.delete(key);
  }

  get length(): number {
    return this.queue.length;
  }

  /** True while a key is queued or being processed (a key waiting on a timer is neither). */
  get busy(): boolean {
    return this.queue.length > 0 || this.processing.size > 0;
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
    this.backingOff.clear();
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
      const started = performance.now();
      try {
        const res = await reconcile(key);
        this.forget(key);
        if (res && res.requeueAfter !== undefined) this.addAfter(key, res.requeueAfter);
      } catch (e) {
        const attempt = (this.failures.get(key) ?? 0) + 1;
        this.opts.onError?.(key, e, attempt);
        this.addRateLimited(key);
        this.errors++;
      } finally {
        this.processed++;
        this.durations.observe((performance.now() - started) / 1000);
        this.processing.delete(key);
        // added while it ran: again now, unless it failed (then its backoff retry covers it)
        if (this.dirty.delete(key)) this.add(key);
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }
}
