/**
 * Serving catalog images: `[name=]<image-ref>` is pulled, checked to be a catalog image (its
 * `operators.operatorframework.io.index.configs.v1` label) and the catalog directory it names is
 * served from a {@link CatalogStore}. With a poll interval the reference's manifest digest is
 * re-resolved cheaply (one HEAD of the manifest; an OCI layout's index.json); only a new digest is
 * pulled (by that digest, so the content matches what was seen), unpacked into a private directory
 * and loaded off to the side, then swapped in atomically. Until then, and for good when the new
 * image is not a valid catalog, the previous revision stays served. Trees of replaced revisions are
 * removed. A digest-pinned reference never changes and is not polled.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { OpcatError, type Problem } from "../errors/index.js";
import { parseGoDuration } from "../gojson/duration.js";
import { goQuote } from "../gojson/fmt.js";

export { parseGoDuration };
export { imageCatalogName, isImageArgument, parseImageCatalogArg } from "./imageargs.js";
import { ImageError, errText } from "../image/errors.js";
import { MANIFEST_ACCEPT } from "../image/manifest.js";
import { defaultCacheDir } from "../image/access.js";
import { getImage, parseImageRef, unpackImage, type PullOptions, type PulledImage } from "../image/pull.js";
import type { ImageReference } from "../reference/reference.js";
import { RegistryClient } from "../image/registry.js";
import { classifyImage } from "../image/classify.js";
import { parseLayoutRef, resolveLayoutRef, type LayoutRef } from "../image/store.js";
import { cleanEntryPath } from "../image/unpack.js";
import { dns1123SubdomainErrors, type CatalogStore, type ReloadOutcome } from "./store.js";

/** What happened to a served catalog image (one structured log line each). */
export interface ImageSourceEvent {
  catalog: string;
  /** The image reference as given. */
  ref: string;
  /**
   * - `loaded`: the first revision was loaded at start.
   * - `polling`: polling started (`reason` gives the interval).
   * - `not-polled`: the reference is pinned by digest, so it is never polled.
   * - `unchanged`: the reference still resolves to the served digest; nothing was downloaded.
   * - `skipped`: it resolves to a digest that already failed to load; not tried again.
   * - `updating`: a new digest was seen; it is being pulled and loaded (the old one is served).
   * - `updated`: the new revision is served.
   * - `same-content`: the new image holds the same catalog; the served revision stays.
   * - `update-failed`: the new image could not be pulled, unpacked or loaded (`reason`, `problems`);
   *   the previous revision stays served.
   * - `poll-failed`: the reference could not be resolved (registry unreachable, tag gone…).
   */
  outcome:
    | "loaded"
    | "polling"
    | "not-polled"
    | "unchanged"
    | "skipped"
    | "updating"
    | "updated"
    | "same-content"
    | "update-failed"
    | "poll-failed";
  /** Digest served before this event (the manifest or index digest the reference resolved to). */
  oldDigest?: string;
  /** Digest the reference resolves to now. */
  newDigest?: string;
  /** Serial of the revision served after this event. */
  revision?: number;
  reason?: string;
  problems?: Problem[];
}

export interface ImageCatalogOptions extends PullOptions {
  /** Poll the reference every this many milliseconds (see {@link ImageCatalog.startPolling}). */
  pollIntervalMs?: number;
  /** Where the unpacked trees live (default `<cacheDir>/serve`); a private subdirectory is made in it. */
  workDir?: string;
  onEvent?: (e: ImageSourceEvent) => void;
}

type Target = { kind: "registry"; named: ImageReference } | { kind: "layout"; layout: LayoutRef };

function wrap(e: unknown, prefix: string): OpcatError {
  if (e instanceof ImageError)
    return new ImageError(e.code, `${prefix}: ${e.message}`, { status: e.status, cause: e, kind: e.kind });
  if (e instanceof OpcatError) return new OpcatError(e.code, `${prefix}: ${e.message}`, { kind: e.kind, cause: e });
  return new ImageError("IO_ERROR", `${prefix}: ${errText(e)}`, { cause: e });
}

/** A catalog served from an image reference (create with {@link addImageCatalog}). */
export class ImageCatalog {
  readonly name: string;
  readonly ref: string;
  /** True when the reference names a digest: it is never polled. */
  readonly pinned: boolean;
  readonly #store: CatalogStore;
  readonly #target: Target;
  readonly #opts: ImageCatalogOptions;
  readonly #client: RegistryClient | undefined;
  readonly #ownClient: boolean;
  readonly #workDir: string;
  #digest: string | undefined;
  #dir: string | undefined;
  #failedDigest: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<ImageSourceEvent> | undefined;
  /** Increments when polling stops or starts again, so that an older polling loop ends. */
  #loop = 0;
  #closed = false;

  /** @internal use {@link addImageCatalog}. */
  constructor(store: CatalogStore, name: string, ref: string, target: Target, opts: ImageCatalogOptions) {
    this.#store = store;
    this.name = name;
    this.ref = ref;
    this.#target = target;
    this.#opts = opts;
    this.pinned = target.kind === "registry" && target.named.digest !== undefined;
    if (target.kind === "registry") {
      this.#ownClient = opts.client === undefined;
      this.#client = opts.client ?? new RegistryClient(opts);
    } else this.#ownClient = false;
    const base = opts.workDir ?? join(opts.cacheDir ?? defaultCacheDir(opts.env), "serve");
    mkdirSync(base, { recursive: true });
    this.#workDir = mkdtempSync(join(base, `${name}-`));
  }

  /** The manifest (or index) digest of the served image. */
  get digest(): string | undefined {
    return this.#digest;
  }

  /** The unpacked catalog directory of the served image. */
  get directory(): string | undefined {
    return this.#dir;
  }

  #emit(e: Omit<ImageSourceEvent, "catalog" | "ref">): ImageSourceEvent {
    const ev: ImageSourceEvent = { catalog: this.name, ref: this.ref, ...e };
    this.#opts.onEvent?.(ev);
    return ev;
  }

  /** The digest the reference resolves to now: one manifest HEAD (GET when the registry sends no digest), no blobs. */
  async resolveDigest(): Promise<string> {
    const t = this.#target;
    if (t.kind === "layout") return resolveLayoutRef(t.layout).digest;
    if (t.named.digest) return t.named.digest;
    const client = this.#client as RegistryClient;
    const tag = t.named.tag ?? "latest";
    const sources = client.sourcesFor(t.named.name, false);
    const errors: string[] = [];
    let last: unknown;
    for (const src of sources) {
      try {
        const what = `resolving ${src.host}/${src.repo}:${tag}`;
        const res = await client.send(src, {
          method: "HEAD",
          path: `/v2/${src.repo}/manifests/${tag}`,
          headers: { Accept: MANIFEST_ACCEPT },
          scope: `repository:${src.repo}:pull`,
          what,
        });
        res.resume();
        const d = String(res.headers["docker-content-digest"] ?? "");
        if (/^sha256:[a-f0-9]{64}$/.test(d)) return d;
        return (await client.getManifest(src, tag)).digest;
      } catch (e) {
        last = e;
        errors.push(errText(e));
      }
    }
    if (errors.length === 1) throw last;
    throw new ImageError("IMAGE_NOT_FOUND", errors.join("; ") || `${this.ref}: no source to resolve from`);
  }

  /**
   * Pulls the image at `digest`, checks it is a catalog image and
   * unpacks its catalog directory into a fresh private tree.
   */
  async #fetch(digest: string): Promise<string> {
    const t = this.#target;
    let img: PulledImage;
    try {
      img = await getImage(
        t.kind === "layout" ? this.ref : `${t.named.name}@${digest}`,
        this.#opts.client ? this.#opts : { ...this.#opts, client: this.#client },
      );
    } catch (e) {
      throw wrap(e, `failed to pull image ${goQuote(this.ref)}`);
    }
    const c = classifyImage({ ref: this.ref, labels: img.labels });
    if (c.kind !== "catalog-image")
      throw new OpcatError("RENDER_NOT_ALLOWED", "cannot render bundle image: not allowed", { kind: "usage" });
    const d = cleanEntryPath(c.configsDir, "configs label");
    const dest = mkdtempSync(join(this.#workDir, "rev-"));
    try {
      const root = await unpackImage(img, { cacheDir: dest, only: d === "" ? undefined : [d] });
      return join(root, d);
    } catch (e) {
      rmSync(dest, { recursive: true, force: true });
      throw wrap(e, `failed to unpack image ${goQuote(this.ref)}`);
    }
  }

  /** The private tree holding `dir` (`<workDir>/rev-XXXX`). */
  #treeOf(dir: string): string {
    const rel = dir.slice(this.#workDir.length + 1);
    return join(this.#workDir, rel.split("/")[0]);
  }

  #remove(dir: string | undefined): void {
    if (dir?.startsWith(this.#workDir + "/")) rmSync(this.#treeOf(dir), { recursive: true, force: true });
  }

  /** The first load (registers the catalog in the store). */
  async init(): Promise<ReloadOutcome> {
    let digest: string;
    try {
      digest = await this.resolveDigest();
    } catch (e) {
      throw wrap(e, `failed to pull image ${goQuote(this.ref)}`);
    }
    const dir = await this.#fetch(digest);
    // each image revision is unpacked to a directory of its own: an index of it would never be read again
    const out = await this.#store.add(this.name, dir, { watch: false, index: false });
    this.#digest = digest;
    this.#dir = dir;
    if (out.status === "failed") {
      this.#failedDigest = digest;
      this.#emit({
        outcome: "update-failed",
        newDigest: digest,
        reason: out.problems[0]?.message ?? "invalid catalog",
        problems: out.problems,
      });
    } else this.#emit({ outcome: "loaded", newDigest: digest, revision: out.revision.serial });
    return out;
  }

  /**
   * Checks the reference once and, when its digest changed, pulls, loads and swaps in the new
   * image (a poll already running is shared). Never throws: every outcome is returned and emitted.
   */
  poll(): Promise<ImageSourceEvent> {
    if (!this.#polling) {
      this.#polling = this.#pollOnce().finally(() => {
        this.#polling = undefined;
      });
    }
    return this.#polling;
  }

  async #pollOnce(): Promise<ImageSourceEvent> {
    const old = this.#digest;
    if (this.pinned)
      return this.#emit({ outcome: "not-polled", oldDigest: old, reason: "the reference is pinned by digest" });
    let digest: string;
    try {
      digest = await this.resolveDigest();
    } catch (e) {
      return this.#emit({
        outcome: "poll-failed",
        oldDigest: old,
        reason: errText(e),
        revision: this.#store.get(this.name)?.serial,
      });
    }
    const served = this.#store.get(this.name);
    if (digest === old && served)
      return this.#emit({ outcome: "unchanged", oldDigest: old, newDigest: digest, revision: served.serial });
    if (digest === this.#failedDigest)
      return this.#emit({
        outcome: "skipped",
        oldDigest: old,
        newDigest: digest,
        reason: "this digest failed to load before",
        revision: served?.serial,
      });
    this.#emit({ outcome: "updating", oldDigest: old, newDigest: digest, revision: served?.serial });
    let dir: string;
    try {
      dir = await this.#fetch(digest);
    } catch (e) {
      // Pull and unpack errors (ImageError) may pass; a wrong kind of image does not.
      if (!(e instanceof ImageError)) this.#failedDigest = digest;
      return this.#emit({
        outcome: "update-failed",
        oldDigest: old,
        newDigest: digest,
        reason: errText(e),
        revision: this.#store.get(this.name)?.serial,
      });
    }
    if (this.#closed) {
      this.#remove(dir);
      return this.#emit({ outcome: "update-failed", oldDigest: old, newDigest: digest, reason: "closed" });
    }
    const out = await this.#store.reload(this.name, dir);
    if (out.status === "failed") {
      this.#failedDigest = digest;
      this.#remove(dir);
      return this.#emit({
        outcome: "update-failed",
        oldDigest: old,
        newDigest: digest,
        reason: out.problems[0]?.message ?? "invalid catalog",
        problems: out.problems,
        revision: out.serving?.serial,
      });
    }
    const previous = this.#dir;
    this.#digest = digest;
    this.#dir = dir;
    this.#failedDigest = undefined;
    if (previous !== dir) this.#remove(previous);
    return this.#emit({
      outcome: out.status === "loaded" ? "updated" : "same-content",
      oldDigest: old,
      newDigest: digest,
      revision: out.revision.serial,
    });
  }

  /**
   * Polls every `intervalMs` (default: the `pollIntervalMs` option) until
   * {@link close}; a pinned reference is not polled (said by a `not-polled` event).
   */
  startPolling(intervalMs = this.#opts.pollIntervalMs): void {
    if (intervalMs === undefined || this.#timer || this.#closed) return;
    if (this.pinned) {
      this.#emit({ outcome: "not-polled", oldDigest: this.#digest, reason: "the reference is pinned by digest" });
      return;
    }
    this.#emit({ outcome: "polling", oldDigest: this.#digest, reason: `every ${intervalMs} ms` });
    const loop = ++this.#loop;
    const tick = (): void => {
      this.#timer = setTimeout(() => {
        void this.poll().then(() => {
          if (!this.#closed && loop === this.#loop) tick();
        });
      }, intervalMs);
      this.#timer.unref();
    };
    tick();
  }

  /** Stops polling (a poll in progress finishes); {@link startPolling} may start it again. */
  stopPolling(): void {
    this.#loop++;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops polling, waits for a poll in progress and removes the unpacked trees. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#polling;
    if (this.#ownClient) this.#client?.close();
    rmSync(this.#workDir, { recursive: true, force: true });
  }
}

/**
 * Pulls catalog image `ref` and registers it in `store` as `name`. Throws (opm's messages) when the
 * reference is bad, cannot be pulled or is not a catalog image, or the name is invalid or taken; a
 * catalog image whose content is invalid is registered but not served (see the outcome), so a
 * later poll can fix it. Call `startPolling()` to follow the reference, `close()` when done.
 */
export async function addImageCatalog(
  store: CatalogStore,
  name: string,
  ref: string,
  opts: ImageCatalogOptions = {},
): Promise<{ catalog: ImageCatalog; outcome: ReloadOutcome }> {
  const errs = dns1123SubdomainErrors(name);
  if (errs.length > 0)
    throw new OpcatError(
      "SERVE_CATALOG_NAME",
      `invalid catalog name ${JSON.stringify(name)}: ${errs.join("; ")} (choose one with name=<image>)`,
      { kind: "usage" },
    );
  if (store.names().includes(name))
    throw new OpcatError("SERVE_CATALOG_NAME", `catalog ${JSON.stringify(name)} is already registered`, {
      kind: "usage",
    });
  let target: Target;
  try {
    const layout = parseLayoutRef(ref);
    target = layout ? { kind: "layout", layout } : { kind: "registry", named: parseImageRef(ref) };
  } catch (e) {
    throw wrap(e, `failed to pull image ${goQuote(ref)}`);
  }
  const catalog = new ImageCatalog(store, name, ref, target, opts);
  try {
    const outcome = await catalog.init();
    return { catalog, outcome };
  } catch (e) {
    await catalog.close();
    throw e;
  }
}
