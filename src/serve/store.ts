/**
 * Several named catalogs, each served from an immutable revision. A reload builds a complete new
 * revision off to the side and swaps it in with one assignment; until then, and for good if the new
 * content is invalid, the previous revision keeps being served and the reason is kept and reported.
 */
import { readdirSync, realpathSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Problem } from "../errors/index.js";
import { CatalogRevision, type RevisionCacheOptions, type RevisionFilesOptions } from "./revision.js";
import { treeEntries } from "./revindex.js";

/** What a load or reload did. */
export type ReloadOutcome =
  | { status: "loaded"; catalog: string; revision: CatalogRevision }
  | { status: "unchanged"; catalog: string; revision: CatalogRevision }
  /** The content was invalid or unreadable; `serving` is the revision still served, if any. */
  | { status: "failed"; catalog: string; problems: Problem[]; serving?: CatalogRevision };

/** Events a store reports (for logs). */
export type StoreEvent = ReloadOutcome | { status: "watch-error"; catalog: string; error: string };

export interface CatalogStoreOptions {
  /** Apply opm serve's custom-schema name rule so the catalog can be served over gRPC. Default true. */
  checkMetaKeys?: boolean;
  /** Build each revision's gRPC registry index (default true; `false`: HTTP only, less memory). */
  grpc?: boolean;
  /**
   * Serve content that parses but fails validation, with its problems in the revision's
   * `validationProblems` (`report`, HTTP-only stores: catalogd's behaviour), or refuse it (`refuse`,
   * the default: opm serve's). See LoadRevisionOptions.validation.
   */
  validation?: "refuse" | "report";
  /**
   * Build one revision at a time (default false: catalogs load side by side). A load's transient
   * memory is several times its catalog's size; one at a time, a process's peak is that of the
   * largest catalog, not of all of them (the cluster's catalogs).
   */
  oneLoadAtATime?: boolean;
  /** Called after every load, reload and watch problem. */
  onEvent?: (e: StoreEvent) => void;
  /** Debounce delay of `watch` in milliseconds. Default 300. */
  watchDebounceMs?: number;
  /**
   * `watch` also polls each catalog's path this often (ms; default 1000): a directory replaced
   * (`rm -rf` + copy, `mv` + recreate) or a symlink swapped (`ln -sfn`, how ConfigMap volumes and
   * GitOps checkouts update) leaves inotify watching the old inode; the poll sees the new one
   * (resolved path, inode, and every file's size and mtime), watches it and reloads.
   */
  watchPollMs?: number;
  /**
   * Keep the revision a reload replaced (one per catalog), for the web UI's diff of the last change.
   * It stays in memory until the next successful reload. Default false.
   */
  keepPrevious?: boolean;
  /**
   * Persisted revision indexes (`serve --cache-dir`): each catalog starts from its index when that is
   * valid, and every build writes one. `enforceIntegrity` applies to each catalog's first load only
   * (a reload after a change rebuilds the index).
   */
  cache?: RevisionCacheOptions;
  /**
   * Keep each HTTP-only revision's served bytes in a file in this directory rather than in memory
   * (`grpc: false`; see LoadRevisionOptions.files): the cluster's catalogs.
   */
  files?: RevisionFilesOptions;
}

interface Entry {
  readonly name: string;
  /** Where the served revision was loaded from (replaced by a successful `reload(name, source)`). */
  source: string;
  /** A source to load next instead of `source` (see `reload`). */
  nextSource?: string;
  /** Whether `watch` watches this catalog. */
  watchable: boolean;
  /** Whether the persisted index (`cache`) is used for this catalog. */
  indexed: boolean;
  current?: CatalogRevision;
  /** The revision `current` replaced (with keepPrevious). */
  previous?: CatalogRevision;
  lastError?: Problem[];
  serial: number;
  /** The reload in progress, if any; further requests are folded into one follow-up reload. */
  running?: Promise<ReloadOutcome>;
  again: boolean;
  watcher?: TreeWatcher;
  timer?: NodeJS.Timeout;
  poll?: NodeJS.Timeout;
  signature?: string;
}

/** What a catalog path currently is: its resolved location, inode, and each file's size and mtime. */
export function treeSignature(source: string): string {
  let real: string;
  try {
    real = realpathSync(source);
  } catch {
    return "missing";
  }
  const parts = treeEntries(real).map(
    ({ rel, st }) => `${rel}\0${st.ino}\0${st.isDirectory() ? "d" : `${st.size}\0${st.mtimeMs}`}`,
  );
  return `${real}\n${parts.join("\n")}`;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * k8s.io/apimachinery IsDNS1123Subdomain: catalogd requires catalog names (a URL path segment) to
 * be DNS-1123 subdomains. Returns the error texts (empty when valid).
 */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push("must be no more than 253 characters");
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or " +
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex " +
        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return errs;
}

/** Parses a `[name=]<dir>` command-line argument; the name defaults to the directory's base name. */
export function parseCatalogArg(arg: string): { name: string; source: string } {
  const eq = arg.indexOf("=");
  // A "=" inside a path (after a slash) is part of the path.
  if (eq > 0 && !arg.slice(0, eq).includes("/")) return { name: arg.slice(0, eq), source: arg.slice(eq + 1) };
  return { name: basename(resolve(arg)), source: arg };
}

/** Named catalogs with atomic reloads. */
export class CatalogStore {
  readonly #entries = new Map<string, Entry>();
  readonly #opts: CatalogStoreOptions;
  #closed = false;

  constructor(opts: CatalogStoreOptions = {}) {
    this.#opts = opts;
  }

  /**
   * Registers a catalog and loads it. Throws for an invalid or duplicate name; a catalog whose
   * content is invalid is registered but not served (the outcome says why). With `watch: false`
   * the catalog is left out of {@link watch} (its source is replaced by other means); with
   * `index: false` it keeps no persisted index (catalog images: each is unpacked to a new directory).
   */
  async add(name: string, source: string, opts: { watch?: boolean; index?: boolean } = {}): Promise<ReloadOutcome> {
    const errs = dns1123SubdomainErrors(name);
    if (errs.length > 0)
      throw new Error(
        `invalid catalog name ${JSON.stringify(name)}: ${errs.join("; ")} (choose one with name=<dir> or name=<image>)`,
      );
    if (this.#entries.has(name)) throw new Error(`catalog ${JSON.stringify(name)} is already registered`);
    this.#entries.set(name, {
      name,
      source,
      watchable: opts.watch ?? true,
      indexed: opts.index ?? true,
      serial: 0,
      again: false,
    });
    return this.reload(name);
  }

  /** Stops serving `name` (waits for a load in progress); false when it was not registered. */
  async remove(name: string): Promise<boolean> {
    const e = this.#entries.get(name);
    if (!e) return false;
    this.#entries.delete(name);
    e.watcher?.close();
    if (e.poll) clearInterval(e.poll);
    if (e.timer) clearTimeout(e.timer);
    await e.running?.catch(() => undefined);
    return true;
  }

  /** Catalog names in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The revision currently served for `name`, if any. */
  get(name: string): CatalogRevision | undefined {
    return this.#entries.get(name)?.current;
  }

  /** The revision the served one replaced, when the store keeps it (`keepPrevious`) and there was one. */
  previous(name: string): CatalogRevision | undefined {
    return this.#entries.get(name)?.previous;
  }

  /** The problems of the last failed load of `name` (cleared by a successful one). */
  lastError(name: string): Problem[] | undefined {
    return this.#entries.get(name)?.lastError;
  }

  /** True when every registered catalog has a served revision. */
  ready(): boolean {
    for (const e of this.#entries.values()) if (!e.current) return false;
    return this.#entries.size > 0;
  }

  /**
   * Rebuilds `name` from its source and swaps it in if valid and changed. Concurrent calls share the
   * running load, and one more load follows it so that the latest content is always picked up.
   * With `source`, the catalog is loaded from there instead, and that becomes its source only if
   * the load succeeds (catalog images: each image revision is unpacked into its own directory).
   */
  reload(name: string, source?: string): Promise<ReloadOutcome> {
    const e = this.#entries.get(name);
    if (!e) return Promise.reject(new Error(`unknown catalog ${JSON.stringify(name)}`));
    if (source !== undefined) e.nextSource = source;
    if (e.running) {
      e.again = true;
      return e.running;
    }
    const run = async (): Promise<ReloadOutcome> => {
      let outcome: ReloadOutcome;
      do {
        e.again = false;
        outcome = await this.#queued(() => this.#loadOnce(e));
        this.#opts.onEvent?.(outcome);
      } while (e.again && !this.#closed);
      return outcome;
    };
    e.running = run().finally(() => {
      e.running = undefined;
    });
    return e.running;
  }

  /** The last load queued (with oneLoadAtATime): the next one starts when it has ended. */
  #lastLoad: Promise<unknown> = Promise.resolve();

  #queued<T>(load: () => Promise<T>): Promise<T> {
    if (!this.#opts.oneLoadAtATime) return load();
    const next = this.#lastLoad.then(load, load);
    this.#lastLoad = next.catch(() => undefined);
    return next;
  }

  async #loadOnce(e: Entry): Promise<ReloadOutcome> {
    const source = e.nextSource ?? e.source;
    e.nextSource = undefined;
    const res = await CatalogRevision.load(source, {
      catalog: e.name,
      serial: e.serial + 1,
      previousLastModified: e.current?.lastModified,
      checkMetaKeys: this.#opts.checkMetaKeys,
      grpc: this.#opts.grpc,
      validation: this.#opts.validation,
      files: this.#opts.files,
      cache:
        e.indexed && this.#opts.cache
          ? {
              ...this.#opts.cache,
              enforceIntegrity: this.#opts.cache.enforceIntegrity === true && !e.current && e.serial === 0,
            }
          : undefined,
    });
    if (!res.ok) {
      e.lastError = res.problems;
      return { status: "failed", catalog: e.name, problems: res.problems, serving: e.current };
    }
    e.lastError = undefined;
    e.source = source;
    if (e.current && e.current.digest === res.revision.digest)
      return { status: "unchanged", catalog: e.name, revision: e.current };
    e.serial = res.revision.serial;
    if (this.#opts.keepPrevious) e.previous = e.current;
    e.current = res.revision; // the atomic swap
    return { status: "loaded", catalog: e.name, revision: res.revision };
  }

  /**
   * Watches every catalog's source (except those added with `watch:
   * false`) and reloads it (debounced) when files change.
   */
  watch(): void {
    for (const e of this.#entries.values()) {
      if (e.watcher || e.poll || !e.watchable) continue;
      this.#watchTree(e);
      e.signature = treeSignature(e.source);
      e.poll = setInterval(() => {
        if (this.#closed) return;
        const sig = treeSignature(e.source);
        if (sig === e.signature) return;
        e.signature = sig;
        // the path now names another tree (or changed unseen): watch what is there now, and reload
        e.watcher?.close();
        e.watcher = undefined;
        this.#watchTree(e);
        this.#schedule(e);
      }, this.#opts.watchPollMs ?? 1000);
      e.poll.unref();
    }
  }

  #watchTree(e: Entry): void {
    try {
      e.watcher = new TreeWatcher(
        e.source,
        () => this.#schedule(e),
        (err) => this.#opts.onEvent?.({ status: "watch-error", catalog: e.name, error: err.message }),
      );
    } catch (err) {
      this.#opts.onEvent?.({ status: "watch-error", catalog: e.name, error: (err as Error).message });
    }
  }

  #schedule(e: Entry): void {
    if (this.#closed) return;
    if (e.timer) clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = undefined;
      void this.reload(e.name);
    }, this.#opts.watchDebounceMs ?? 300);
    e.timer.unref();
  }

  /** Stops watching and waits for loads in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    const pending: Promise<unknown>[] = [];
    for (const e of this.#entries.values()) {
      e.watcher?.close();
      e.watcher = undefined;
      if (e.poll) clearInterval(e.poll);
      if (e.timer) clearTimeout(e.timer);
      if (e.running) pending.push(e.running.catch(() => undefined));
    }
    await Promise.all(pending);
  }
}

/**
 * Watches a directory tree (every directory with its own non-recursive watcher, new ones added as
 * they appear) or a single file (through its directory). Node 20's recursive `fs.watch` on Linux
 * watches files by inode and goes deaf to a file replaced by rename (how editors and Kubernetes
 * ConfigMap volumes update files); a directory watch sees every rename, create and write in it.
 */
class TreeWatcher {
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #onChange: () => void;
  readonly #onError: (err: Error) => void;
  readonly #root: string;
  #closed = false;

  constructor(source: string, onChange: () => void, onError: (err: Error) => void) {
    this.#onChange = onChange;
    this.#onError = onError;
    if (statSync(source).isDirectory()) {
      this.#root = source;
      this.#scan();
    } else {
      this.#root = "";
      const name = basename(source);
      this.#add(dirname(source), (f) => f === null || f === name);
    }
  }

  #add(dir: string, relevant: (file: string | null) => boolean = () => true): void {
    if (this.#watchers.has(dir)) return;
    const w = watch(dir, { persistent: false }, (_ev, file) => {
      if (!relevant(file)) return;
      if (this.#root !== "") this.#scan();
      this.#onChange();
    });
    w.on("error", (err) => {
      w.close();
      this.#watchers.delete(dir);
      if (!this.#closed && dir === (this.#root || dir)) this.#onError(err);
    });
    this.#watchers.set(dir, w);
  }

  /** Watches directories not watched yet; drops watchers of directories gone. */
  #scan(): void {
    if (this.#closed) return;
    const seen = new Set<string>();
    const walk = (dir: string): void => {
      seen.add(dir);
      this.#add(dir);
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const d of entries) if (d.isDirectory()) walk(join(dir, d.name));
    };
    walk(this.#root);
    for (const [dir, w] of this.#watchers) {
      if (!seen.has(dir)) {
        w.close();
        this.#watchers.delete(dir);
      }
    }
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }
}
