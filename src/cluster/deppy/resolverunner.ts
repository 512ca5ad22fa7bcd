/**
 * Runs Deppy's resolutions in a worker thread (resolveworker.ts), one at a time, each within a
 * budget: the controllers' event loop (admission webhooks, watches, the other controllers) keeps
 * answering while a large catalog is resolved, and a resolution that runs out of its budget has the
 * worker stopped (a fresh one takes the next) and fails with {@link ResolutionBudgetError}. A catalog
 * revision's content is given to the worker once; the worker keeps its model until it is no longer served.
 * A revision whose lines are in a file is given as that file's open descriptor and range: the worker
 * reads and slims the lines a piece at a time, and no copy of the catalog is made in either thread.
 */
import { Worker } from "node:worker_threads";
import type { ResolveRequest, ResolveSet } from "../../resolve/index.js";

/** A resolution request without its catalogs (the runner sends those by revision). */
export type RunnerResolveRequest = Omit<ResolveRequest, "catalogs">;

/** Where a revision's JSON Lines are in an open file (descriptors are the process's, shared by its threads). */
export interface RunnerFileRange {
  fd: number;
  start: number;
  length: number;
}

export interface RunnerCatalog {
  name: string;
  priority: number;
  digest: string;
  /** The revision's content as JSON lines, sent only when the worker does not hold it yet. */
  jsonl?: Uint8Array;
  /** Or where the worker reads them itself (only when it does not hold the revision yet). */
  file?: RunnerFileRange;
}

export interface RunnerRequest {
  id: number;
  catalogs: RunnerCatalog[];
  request: RunnerResolveRequest;
}

/** From the worker: the catalogs are loaded (the budget starts), the answer, or a failure. */
export type RunnerReply =
  | { id: number; ready: true }
  | { id: number; result: ResolveSet }
  | { id: number; error: string };

/** A resolution that needed more than its budget (the worker was stopped). */
export class ResolutionBudgetError extends Error {
  constructor(readonly budgetMs: number) {
    super(
      `the resolution needed more than its budget of ${budgetMs / 1000}s and was stopped; ` +
        "narrow the Inputs' constraints or the catalogs, or raise --resolution-budget",
    );
    this.name = "ResolutionBudgetError";
  }
}

export const DEFAULT_RESOLUTION_BUDGET_MS = 60_000;

/**
 * A catalog's content for the worker: its bytes, or the file range holding them with the object that
 * keeps the descriptor open (held until the worker has read them).
 */
export type CatalogContent = Uint8Array | { file: RunnerFileRange; holder: object };

/** A catalog to resolve over: its content, or a function giving it. */
export type ContentCatalog = Omit<RunnerCatalog, "jsonl" | "file"> & {
  jsonl: Uint8Array | (() => CatalogContent);
};

interface Job {
  id: number;
  catalogs: ContentCatalog[];
  request: RunnerResolveRequest;
  resolve: (r: ResolveSet) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  /** What keeps the files the worker reads open, until it has read them. */
  holders?: object[];
}

export class ResolverRunner {
  readonly #budgetMs: number;
  #worker: Worker | undefined;
  /** Digests the current worker holds. */
  #sent = new Set<string>();
  #queue: Job[] = [];
  #current: Job | undefined;
  #next = 1;
  #closed = false;

  constructor(opts: { budgetMs?: number } = {}) {
    this.#budgetMs = opts.budgetMs ?? DEFAULT_RESOLUTION_BUDGET_MS;
  }

  /** True while a resolution runs in the worker. */
  get busy(): boolean {
    return this.#current !== undefined;
  }

  /**
   * Resolves `request` over `catalogs` in the worker, within the budget. Each catalog comes with its
   * content, or a function reading it (called only when the worker does not hold that revision yet:
   * a revision whose bytes are in a file is not read for every resolution).
   */
  resolve(catalogs: readonly ContentCatalog[], request: RunnerResolveRequest): Promise<ResolveSet> {
    if (this.#closed) return Promise.reject(new Error("the resolver is stopped"));
    return new Promise<ResolveSet>((resolve, reject) => {
      this.#queue.push({ id: this.#next++, catalogs: catalogs.map((c) => ({ ...c })), request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#current || this.#closed) return;
    const job = this.#queue.shift();
    if (!job) return;
    this.#current = job;
    const w = this.#start();
    // content only for revisions the worker does not hold
    let catalogs: RunnerCatalog[];
    const held = new Set(this.#sent);
    const holders: object[] = [];
    try {
      catalogs = job.catalogs.map(({ name, priority, digest, jsonl }) => {
        if (held.has(digest)) return { name, priority, digest };
        held.add(digest);
        const content = typeof jsonl === "function" ? jsonl() : jsonl;
        if (content instanceof Uint8Array) return { name, priority, digest, jsonl: content };
        holders.push(content.holder);
        return { name, priority, digest, file: content.file };
      });
    } catch (e) {
      // a revision's file could not be read: this resolution fails, the next one is tried
      this.#current = undefined;
      job.reject(e as Error);
      this.#pump();
      return;
    }
    this.#sent = new Set(catalogs.map((c) => c.digest));
    job.holders = holders;
    w.postMessage({ id: job.id, catalogs, request: job.request } satisfies RunnerRequest);
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // the compiled worker beside this module (dist), or the source under tsx (tests)
    const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
    const w = new Worker(new URL(`./resolveworker${ext}`, import.meta.url));
    w.unref();
    this.#sent = new Set();
    w.on("message", (m: RunnerReply) => {
      const job = this.#current;
      if (!job || job.id !== m.id) return;
      if ("ready" in m) {
        job.holders = undefined; // the worker has read the catalogs' files
        job.timer = setTimeout(() => this.#overBudget(job), this.#budgetMs);
        return;
      }
      clearTimeout(job.timer);
      this.#current = undefined;
      if ("result" in m) job.resolve(m.result);
      else job.reject(new Error(m.error));
      this.#pump();
    });
    w.on("error", (e) => this.#lost(e));
    w.on("exit", (code) => {
      if (this.#worker === w) this.#lost(new Error(`the resolver's worker exited (${code})`));
    });
    this.#worker = w;
    return w;
  }

  #overBudget(job: Job): void {
    if (this.#current !== job) return;
    const w = this.#worker;
    this.#worker = undefined;
    this.#current = undefined;
    void w?.terminate();
    job.reject(new ResolutionBudgetError(this.#budgetMs));
    this.#pump();
  }

  #lost(e: Error): void {
    this.#worker = undefined;
    const job = this.#current;
    this.#current = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(e);
    }
    this.#pump();
  }

  /**
   * Stops an idle worker and the catalog models it holds (nothing to resolve for now); the next
   * resolution starts a fresh one, sent its catalogs again.
   */
  async release(): Promise<void> {
    const w = this.#worker;
    if (!w || this.#current || this.#queue.length > 0) return;
    this.#worker = undefined;
    this.#sent = new Set();
    await w.terminate();
  }

  /** Stops the worker; pending resolutions fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#worker;
    this.#worker = undefined;
    const err = new Error("the resolver is stopped");
    for (const j of [...(this.#current ? [this.#current] : []), ...this.#queue.splice(0)]) {
      clearTimeout(j.timer);
      j.reject(err);
    }
    this.#current = undefined;
    await w?.terminate();
  }
}
