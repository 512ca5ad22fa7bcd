/**
 * Bundle sources that render images the way opm's templates do: each reference goes through opm's
 * `render` restricted to bundle images (`action.Render{AllowedRefMask: RefBundleImage, Migrations}`),
 * then the per-reference post-processing of `Render.Run` (bundle objects moved to the end of the
 * properties, related images sorted, migrations). Sources compose: `--reuse` answers what it can
 * and the rest is pulled.
 */
import { OpcatError } from "../../errors/index.js";
import { bundleCsvJson } from "../../fbc/objects.js";
import { normalizeForRender } from "../../fbc/render.js";
import type { Bundle } from "../../fbc/types.js";
import { renderReference } from "../../action/reference.js";
import type { PullOptions } from "../../image/index.js";
import { copyRenderedBundle, type BundleSource, type RenderedBundle } from "./source.js";
import { REUSABLE_TAGS } from "./reuse.js";

/** Options of {@link imageSource}. */
export interface ImageSourceOptions extends PullOptions {
  /** Images pulled and rendered at once (default 4). */
  parallel?: number;
  /** Called once per distinct reference when its rendering starts and ends (for a progress display). */
  onImage?: (event: { ref: string; state: "start" | "done" | "failed"; done: number; total: number }) => void;
}

/** A semaphore-bounded runner. */
function limiter(limit: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: (() => void)[] = [];
  const release = (): void => {
    active--;
    const next = queue.shift();
    if (next) next();
  };
  return <T>(fn: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const run = (): void => {
        active++;
        fn().then(
          (v) => {
            release();
            resolve(v);
          },
          (e: unknown) => {
            release();
            reject(e);
          },
        );
      };
      if (active < limit) run();
      else queue.push(run);
    });
}

/**
 * A BundleSource that pulls each bundle image (registry reference, or `oci:<dir>[:tag]`) into the
 * image cache, unpacks it and renders it as opm does; the bundle's `image` is the reference exactly
 * as given. Local paths and catalog images are refused with opm's errors
 * (`cannot render bundle directory "<ref>": not allowed`, `cannot render declarative config image:
 * not allowed`, …); every error is prefixed `render reference "<ref>": `.
 *
 * Each distinct reference is rendered once per source (later calls get a copy of the first
 * result, or its error); at most `parallel` references are pulled at once. `prefetch` starts
 * renders ahead of the calls that will await them. The result is not post-processed: wrap the
 * source with {@link renderedSource} for opm's per-reference normalisation and migrations.
 */
export function imageSource(opts: ImageSourceOptions = {}): BundleSource {
  const { parallel, onImage, ...pull } = opts;
  const run = limiter(Math.max(1, parallel ?? 4));
  const started = new Map<string, Promise<RenderedBundle>>();
  let done = 0;
  const start = (ref: string): Promise<RenderedBundle> => {
    let p = started.get(ref);
    if (p) return p;
    p = run(async () => {
      onImage?.({ ref, state: "start", done, total: started.size });
      try {
        const cfg = await renderReference(ref, { ...pull, allow: ["bundle-image"] });
        // A bundle image always renders to exactly one bundle (catalog images are refused).
        const b: RenderedBundle = cfg.bundles[0];
        // opm keeps the CSV in memory (Bundle.CsvJSON) even after a migration drops the objects.
        b.csvJson = bundleCsvJson(b);
        done++;
        onImage?.({ ref, state: "done", done, total: started.size });
        return b;
      } catch (e) {
        done++;
        onImage?.({ ref, state: "failed", done, total: started.size });
        throw e;
      }
    });
    // A prefetched render nobody awaits must not become an unhandled rejection.
    p.catch(() => undefined);
    started.set(ref, p);
    return p;
  };
  return {
    render: (image: string): Promise<RenderedBundle> => start(image).then(copyRenderedBundle),
    prefetch: (images: readonly string[]): void => {
      for (const i of images) start(i);
    },
  };
}

/** Error codes of a source that cannot answer a reference (so that another source may). */
const MISS_CODES = new Set(["TEMPLATE_REUSE_TAG", "TEMPLATE_REUSE_NOT_FOUND", "IMAGE_PULL_UNAVAILABLE"]);

/**
 * Asks `primary` first and `fallback` when the primary cannot answer (a reused catalog without the
 * image, or a tag reference reuse does not trust); any other error of the primary is final.
 * `prefetch` prefetches through the fallback what the primary misses.
 */
/**
 * The fallback's failure for a tag reference that the reused catalog has: says that `--reuse-tags`
 * takes it from there (a disconnected user otherwise only reads "getaddrinfo ENOTFOUND quay.io").
 */
function withReuseTagsHint(primary: Error, failure: unknown): unknown {
  if (!REUSABLE_TAGS.has(primary) || !(failure instanceof OpcatError)) return failure;
  return new OpcatError(
    failure.code,
    `${failure.message}; the reused catalog has this tag reference: add --reuse-tags to take it from there ` +
      "(a tag may have moved since the catalog was rendered)",
    { kind: failure.kind, cause: failure },
  );
}

export function fallbackSource(primary: BundleSource, fallback: BundleSource): BundleSource {
  const isMiss = (e: unknown): boolean => e instanceof OpcatError && MISS_CODES.has(e.code);
  return {
    render: (image: string): Promise<RenderedBundle> =>
      primary.render(image).catch((e: unknown) => {
        if (!isMiss(e)) return Promise.reject(e);
        return fallback.render(image).catch((f: unknown) => Promise.reject(withReuseTagsHint(e as Error, f)));
      }),
    prefetch: (images: readonly string[]): void => {
      primary.prefetch?.(images);
      for (const i of images) {
        primary.render(i).then(
          () => undefined,
          (e: unknown) => {
            if (isMiss(e)) fallback.prefetch?.([i]);
          },
        );
      }
    },
  };
}

/** Options of {@link renderedSource}. */
export interface RenderedSourceOptions {
  /** The last migration to run on each rendered bundle (`--migrate-level`); none by default. */
  migrateLevel?: string;
}

/**
 * opm's `Render.Run` post-processing applied to every bundle `src` returns, as the templates get
 * it: `olm.bundle.object`/`olm.csv.metadata` moved to the end of the properties, related images
 * sorted by image, then the migrations up to `migrateLevel` (errors `migrate: …`). The bundle is
 * changed in place (sources return copies).
 */
export function renderedSource(src: BundleSource, opts: RenderedSourceOptions = {}): BundleSource {
  return {
    render: async (image: string): Promise<RenderedBundle> => {
      const b = await src.render(image);
      normalizeForRender(
        { packages: [], channels: [], bundles: [b as Bundle], deprecations: [], others: [] },
        { migrateLevel: opts.migrateLevel },
      );
      return b;
    },
    prefetch: src.prefetch ? (images: readonly string[]): void => src.prefetch?.(images) : undefined,
  };
}
