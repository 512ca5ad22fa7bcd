/**
 * The serve action (`opcat serve`): builds the catalog store from catalog directories and catalog
 * images, starts catalogd's HTTP API (with the resolver API and the web UI) and opm's gRPC registry
 * API, starts watching and polling, and returns a handle whose `close` shuts everything down. It
 * prints nothing (store and image events go to a callback) and chooses no exit code: failures are
 * OpcatErrors whose `kind` the caller maps.
 *
 * The store and the catalog argument rules load with this module (the CLI imports it when serve
 * runs); the servers (grpc-js, protobufjs) and the image client load when an action needs them.
 */
import { existsSync } from "node:fs";
import { OpcatError, problemsKind } from "../errors/index.js";
import type { PullOptions } from "../image/index.js";
import type { HttpServerHandle } from "../serve/http.js";
import type { GrpcServerHandle } from "../serve/grpc.js";
import type { ResolverApiOptions } from "../web/resolveapi.js";
import type { UiOptions } from "../web/uiapi.js";
import type { ImageCatalog, ImageSourceEvent } from "../serve/imagesource.js";
import { isImageArgument, parseImageCatalogArg } from "../serve/imageargs.js";
import { CatalogStore, parseCatalogArg, type StoreEvent } from "../serve/store.js";

/** A served catalog: a directory, or an image reference (`image`). */
export interface ServeCatalog {
  name: string;
  source: string;
  image: boolean;
}

/** A catalog argument: `[name=]<dir>` or `[name=]<image-ref>` (see isImageArgument). */
export function parseServeCatalogArg(arg: string): ServeCatalog {
  const eq = arg.indexOf("=");
  const named = eq > 0 && !arg.slice(0, eq).includes("/") && !arg.slice(0, eq).includes(":");
  if (isImageArgument(named ? arg.slice(eq + 1) : arg, existsSync)) {
    const { name, ref } = parseImageCatalogArg(arg);
    return { name, source: ref, image: true };
  }
  return { ...parseCatalogArg(arg), image: false };
}

/** What happened while serving: a catalog (re)load or watch problem, a catalog image's news, a cache warning. */
export type ServeEvent =
  | { source: "store"; event: StoreEvent }
  | { source: "image"; event: ImageSourceEvent }
  | { source: "cache"; warning: string };

/** How the catalogs are loaded (shared by serving and `--cache-only`). */
export interface ServeCatalogOptions {
  catalogs: ServeCatalog[];
  /** Image access for the catalog images. */
  pull?: PullOptions;
  /** Re-resolve the catalog images' references this often (ms). */
  pollIntervalMs?: number;
  /** Reload a catalog directory when its files change. */
  watch?: boolean;
  /** Keep each catalog directory's revision index in `<dir>/serve-index/` (src/serve/revindex.ts). */
  cache?: { dir: string; enforceIntegrity: boolean };
  onEvent?: (e: ServeEvent) => void;
}

export interface ServeActionOptions extends ServeCatalogOptions {
  /** Where catalogd's HTTP API listens; absent: no HTTP. */
  http?: { host: string; port: number };
  /** Where opm's gRPC registry API listens; absent: no gRPC. */
  grpc?: { host: string; port: number };
  /** The catalog answered over gRPC (default: the first one). */
  grpcCatalog?: string;
  /** The resolver API's options, or false to leave it out. */
  resolver: ResolverApiOptions | false;
  /** The web UI's options, or false to leave it out. */
  ui: UiOptions | false;
  /** Called with one JSON line per request. */
  accessLog?: (line: string) => void;
  /** Called with one entry per HTTP 500 answer, with the error behind it. */
  errorLog?: (entry: Record<string, unknown>) => void;
}

/** A running serve. */
export interface ServeHandle {
  /** The served catalogs' names. */
  catalogs: string[];
  /** The bound addresses (useful with port 0). */
  addresses: { http?: { address: string; port: number }; grpc?: { host: string; port: number } };
  /** Lets running requests finish (up to `graceMs`), then stops the servers, polling and watching. */
  close(graceMs: number): Promise<void>;
}

interface Loaded {
  store: CatalogStore;
  images: ImageCatalog[];
  failed: boolean;
  /** A failure was a file the system refused to read (IO_ERROR). */
  unreadable: boolean;
}

/** Creates the store and adds every catalog; refuses invalid content that no watch or poll may fix. */
async function loadCatalogs(opts: ServeCatalogOptions, checkMetaKeys: boolean, keepPrevious: boolean): Promise<Loaded> {
  const onEvent = opts.onEvent;
  // the image client loads only when a catalog is an image
  const IS = opts.catalogs.some((c) => c.image) ? await import("../serve/imagesource.js") : undefined;
  // with a cache directory, each catalog directory's revision index is kept there (src/serve/revindex.ts)
  const cache =
    opts.cache !== undefined
      ? { ...opts.cache, onWarning: (warning: string) => onEvent?.({ source: "cache", warning }) }
      : undefined;
  // the web UI shows what the last reload changed: the replaced revision is kept until the next one
  const store = new CatalogStore({
    checkMetaKeys,
    onEvent: (event) => onEvent?.({ source: "store", event }),
    keepPrevious,
    cache,
  });
  const images: ImageCatalog[] = [];
  let failed = false;
  // a file the system refused to read (permission, a symlink loop): an I/O error, exit 2
  let unreadable = false;
  for (const c of opts.catalogs) {
    let out;
    if (c.image && IS) {
      try {
        const added = await IS.addImageCatalog(store, c.name, c.source, {
          ...opts.pull,
          pollIntervalMs: opts.pollIntervalMs,
          onEvent: (event) => onEvent?.({ source: "image", event }),
        });
        images.push(added.catalog);
        out = added.outcome;
      } catch (e) {
        await Promise.all(images.map((i) => i.close()));
        throw e;
      }
    } else {
      try {
        out = await store.add(c.name, c.source);
      } catch (e) {
        await Promise.all(images.map((i) => i.close()));
        throw new OpcatError("USAGE_SERVE", (e as Error).message, { kind: "usage" });
      }
    }
    if (out.status === "failed") {
      failed = true;
      if (problemsKind(out.problems) === "io") unreadable = true;
    }
  }
  // Like opm serve, refuse to start with invalid content unless watching or polling may fix it later.
  if (failed && !opts.watch && opts.pollIntervalMs === undefined) {
    await Promise.all(images.map((i) => i.close()));
    throw new OpcatError("SERVE_INVALID_CATALOG", "a catalog is invalid (see above); nothing served", {
      kind: unreadable ? "io" : "invalid",
      problems: [],
    });
  }
  return { store, images, failed, unreadable };
}

export interface ServeCacheOptions extends ServeCatalogOptions {
  /** Apply opm serve's custom-schema name rule for gRPC (default true; false when gRPC would not be served). */
  checkMetaKeys?: boolean;
}

/**
 * `serve --cache-only` (opm's): loads and validates the catalogs, writes their serve indexes (with
 * `cache`), then closes; returns the catalogs' names.
 */
export async function buildServeCacheAction(opts: ServeCacheOptions): Promise<{ catalogs: string[] }> {
  const { store, images, failed, unreadable } = await loadCatalogs(opts, opts.checkMetaKeys !== false, false);
  await Promise.all(images.map((i) => i.close()));
  await store.close();
  if (failed)
    throw new OpcatError("SERVE_INVALID_CATALOG", "a catalog is invalid (see above)", {
      kind: unreadable ? "io" : "invalid",
      problems: [],
    });
  return { catalogs: store.names() };
}

/** `serve`: loads the catalogs, starts the servers, watching and polling; returns once serving. */
export async function startServeAction(opts: ServeActionOptions): Promise<ServeHandle> {
  // the HTTP and gRPC servers (grpc-js, protobufjs) load when serve runs, not for every command
  const [{ startGrpcServer }, { startHttpServer }, { webMounts }] = await Promise.all([
    import("../serve/grpc.js"),
    import("../serve/http.js"),
    import("../web/mount.js"),
  ]);
  const { store, images } = await loadCatalogs(
    opts,
    opts.grpc !== undefined,
    opts.http !== undefined && opts.ui !== false,
  );
  let http: HttpServerHandle | undefined;
  let grpc: GrpcServerHandle | undefined;
  try {
    if (opts.http)
      http = await startHttpServer(store, {
        ...opts.http,
        accessLog: opts.accessLog,
        errorLog: opts.errorLog,
        mounts: webMounts(store, { resolver: opts.resolver, ui: opts.ui, errorLog: opts.errorLog }),
      });
    if (opts.grpc)
      grpc = await startGrpcServer(store, { ...opts.grpc, catalog: opts.grpcCatalog, accessLog: opts.accessLog });
  } catch (e) {
    await http?.close(0);
    await Promise.all(images.map((i) => i.close()));
    await store.close();
    throw new OpcatError("SERVE_LISTEN", `cannot listen: ${(e as Error).message}`, { kind: "usage" });
  }
  if (opts.watch) store.watch();
  for (const i of images) i.startPolling();
  const grpcHost = opts.grpc?.host;
  return {
    catalogs: store.names(),
    addresses: {
      http: http ? { address: http.address.address, port: http.address.port } : undefined,
      grpc: grpc && grpcHost !== undefined ? { host: grpcHost, port: grpc.port } : undefined,
    },
    close: async (graceMs) => {
      await Promise.all([http?.close(graceMs), grpc?.close(graceMs), ...images.map((i) => i.close()), store.close()]);
    },
  };
}
