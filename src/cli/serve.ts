/**
 * `opcat serve [name=]<catalog-dir> …`: serves catalogs over catalogd's HTTP API and opm's gRPC
 * registry API until SIGINT/SIGTERM, then shuts down gracefully (running requests finish).
 * Flags → src/action/serve.ts (startServeAction, buildServeCacheAction) → JSON log lines on stderr.
 */
import { existsSync } from "node:fs";
import { type Command, Option } from "commander";
import { compareProblems, OpcatError, problemToJson } from "../errors/index.js";
import { reportProblems } from "./output.js";
import { parseGoDuration } from "../gojson/duration.js";
import type { StoreEvent } from "../serve/index.js";
import type { ImageSourceEvent } from "../serve/imagesource.js";
import type * as ALib from "../action/serve.js";
import type { ServeEvent } from "../action/serve.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { loadOnAction } from "./lazy.js";

// The serve action (with the store and the catalog argument rules): loaded when serve runs (loadOnAction below).
let A: typeof ALib;

/** The resolver API's default request body limit (web/resolveapi.ts; not imported: the servers load on use). */
const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

interface ServeOpts extends ImageAccessFlags {
  pollInterval?: string;
  http: string | false;
  grpc: string | false;
  grpcCatalog?: string;
  watch?: boolean;
  accessLog?: boolean;
  shutdownGrace: string;
  priority?: string[];
  maxRequestBytes: string;
  resolverBudget: string;
  resolverApi: boolean;
  port?: string;
  cacheOnly?: boolean;
  cacheEnforceIntegrity?: boolean;
  ui?: boolean;
  kubeconfig?: string;
  context?: string;
}

/** `host:port` → parts; `:port` and a bare port mean 127.0.0.1. */
export function parseListenAddress(s: string, flag: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(s) ?? (/^\d+$/.test(s) ? [s, undefined, "", s] : null);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535))
    throw new OpcatError("USAGE_LISTEN", `invalid ${flag} address ${JSON.stringify(s)}: expected host:port`, {
      kind: "usage",
    });
  return { host: m[1] ?? (m[2] || "127.0.0.1"), port };
}

function reportImageEvent(e: ImageSourceEvent): void {
  const level =
    e.outcome === "update-failed" || e.outcome === "poll-failed"
      ? "error"
      : e.outcome === "unchanged" || e.outcome === "skipped"
        ? "debug"
        : "info";
  log({
    level,
    msg: `catalog image ${e.outcome}`,
    catalog: e.catalog,
    image: e.ref,
    old_digest: e.oldDigest ?? null,
    new_digest: e.newDigest ?? null,
    revision: e.revision ?? null,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.problems !== undefined ? { problems: e.problems.length } : {}),
  });
}

/** Set once serve says "serving": from then on stderr holds JSON log lines only. */
let serving = false;

function log(obj: Record<string, unknown>): void {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), ...obj }) + "\n");
}

function reportEvent(e: StoreEvent): void {
  switch (e.status) {
    case "loaded":
      log({
        level: "info",
        msg: "catalog loaded",
        catalog: e.catalog,
        revision: e.revision.serial,
        blobs: e.revision.blobCount,
        bytes: e.revision.size,
        // bundles as validate and the web UI count them; channel_entries: (package, channel, bundle) triples
        bundles: e.revision.query("olm.bundle", "", "")?.length ?? 0,
        channel_entries: e.revision.registry?.bundleCount ?? 0,
        load_ms: Math.round(e.revision.loadMs),
        index: e.revision.origin === "index" ? "read" : e.revision.indexWritten ? "written" : "none",
      });
      return;
    case "unchanged":
      log({ level: "info", msg: "catalog unchanged", catalog: e.catalog, revision: e.revision.serial });
      return;
    case "failed":
      log({
        level: "error",
        msg: e.serving
          ? "catalog reload failed; still serving the previous revision"
          : "catalog failed to load; not served",
        catalog: e.catalog,
        serving_revision: e.serving?.serial ?? null,
        problems: e.problems.length,
        first_problem: e.problems[0]?.message,
      });
      // before serving, the problems are those of a start that fails: the CLI's text, as every command's;
      // once serving, stderr is a JSON log: each problem a log line of its own (code, location, hint)
      if (!serving) return reportProblems(e.problems, "text");
      for (const p of [...e.problems].sort(compareProblems)) {
        const { message, severity, ...rest } = problemToJson(p);
        log({ level: severity === "warning" ? "warn" : "error", msg: message, catalog: e.catalog, ...rest });
      }
      return;
    case "watch-error":
      log({ level: "error", msg: "watch failed", catalog: e.catalog, error: e.error });
  }
}

function reportServeEvent(e: ServeEvent): void {
  if (e.source === "store") reportEvent(e.event);
  else if (e.source === "image") reportImageEvent(e.event);
  else log({ level: "warn", msg: e.warning });
}

/** Registers `serve` on the program. */
export function registerServeCommand(program: Command): void {
  const serve = program.command("serve");
  loadOnAction([serve], async () => {
    A = await import("../action/serve.js");
  });
  addImageAccessOptions(serve)
    .description(
      "Serve catalogs over catalogd's HTTP API, a web UI (/) (/catalogs/<name>/api/v1/{all,metas}), " +
        "the resolver API (POST /api/v1/{query,resolve}: bundles matching a " +
        "constraint, dependency resolution of Inputs) and opm's gRPC registry API",
    )
    .argument(
      "<catalogs...>",
      "catalog directories or catalog images, each optionally named: [name=]<dir> or " +
        "[name=]<image-ref> (default name: the directory's or repository's base name)",
    )
    .addOption(new Option("--http <host:port>", "HTTP listen address").default("127.0.0.1:8080"))
    .option("--no-http", "do not serve HTTP")
    .addOption(new Option("--grpc <host:port>", "gRPC listen address").default("127.0.0.1:50051"))
    .option("--no-grpc", "do not serve gRPC")
    .option(
      "--grpc-catalog <name>",
      "catalog answered over gRPC (default: the first one; clients may pick another with metadata x-opcat-catalog)",
    )
    .option(
      "--watch",
      "reload a catalog when its files change (the previous content is served until the new one is valid)",
    )
    .option("--access-log", "write one JSON line per request to stderr")
    .addOption(
      new Option("--shutdown-grace <seconds>", "how long running requests may take to finish on shutdown").default(
        "10",
      ),
    )
    .option(
      "--priority <name=N>",
      "catalog priority for the resolver API, higher preferred (repeatable; default 0)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .addOption(
      new Option("--max-request-bytes <n>", "largest request body the resolver API accepts (413 above)").default(
        String(DEFAULT_MAX_REQUEST_BYTES),
      ),
    )
    .addOption(
      new Option(
        "--resolver-budget <duration>",
        "how long one resolver API request may compute (Go duration); it runs off the server's event loop " +
          "and is stopped with a 422 beyond that",
      ).default("10s"),
    )
    .option("--no-resolver-api", "do not serve POST /api/v1/query and /api/v1/resolve")
    .option(
      "--ui",
      "serve the web UI at http://<--http>/ (catalogs, packages, " +
        "upgrade graphs, resolution, templates); the default with --http",
    )
    .option("--no-ui", "do not serve the web UI")
    .option(
      "--kubeconfig <file>",
      "web UI: show this cluster's Operators and Instances (read with this kubeconfig; " +
        "approving and denying use the token each user gives in the page, never these credentials)",
    )
    .option("--context <name>", "web UI: the kubeconfig context (default: its current context)")
    .option(
      "--poll-interval <duration>",
      "for catalog images: re-resolve the reference this often (Go " +
        "duration: 30s, 5m) and serve a new digest once it is loaded and valid",
    )
    .option(
      "-p, --port <port>",
      "opm's flag: gRPC on all interfaces at this port (same as --grpc 0.0.0.0:<port>; opcat's default is 127.0.0.1)",
    )
    .option(
      "--cache-only",
      "opm's flag: load and validate the catalogs, write their " +
        "serve indexes (with --cache-dir), then exit without serving",
    )
    .option(
      "--cache-enforce-integrity",
      "opm's flag (needs --cache-dir): start only from serve indexes that match the catalogs' " +
        "contents (SHA-256 of every file), failing when one is missing or stale instead of rebuilding it",
    )
    .addHelpText(
      "after",
      "\nCatalog images (e.g. quay.io/org/my-index:v1, oci:<dir>:<tag>) are pulled with the image access " +
        "flags; their configs directory is served.\nDigest-pinned references are not polled.\n" +
        "With --cache-dir, each catalog's revision index is also kept there (<dir>/serve-index/): a start " +
        "whose catalog files are unchanged serves it without parsing them; a changed, corrupt or foreign " +
        "index is rebuilt.",
    )
    .action(async (args: string[], opts: ServeOpts) => {
      await runServe(await serveRequest(args, opts), opts);
    });
}

/** What `serve`'s arguments and flags ask for, checked in the order the command always checked them. */
type ServeRequest = Awaited<ReturnType<typeof serveRequest>>;

async function serveRequest(args: string[], opts: ServeOpts) {
  const catalogs = args.map(A.parseServeCatalogArg);
  let pollMs: number | undefined;
  if (opts.pollInterval !== undefined) {
    const d = parseGoDuration(opts.pollInterval);
    if (typeof d === "string" || !(d > 0))
      throw new OpcatError(
        "USAGE_SERVE",
        `invalid --poll-interval ${JSON.stringify(opts.pollInterval)}: ` +
          `${typeof d === "string" ? d : "must be positive"}`,
        { kind: "usage" },
      );
    if (!catalogs.some((c) => c.image))
      throw new OpcatError("USAGE_SERVE", "--poll-interval applies to catalog images, and none was given", {
        kind: "usage",
      });
    pollMs = d;
  }
  const pull = catalogs.some((c) => c.image) ? { ...(await imageAccessFrom(opts)), onProgress: undefined } : undefined;
  if (opts.ui === true && opts.http === false)
    throw new OpcatError("USAGE_SERVE", "--ui needs the HTTP server: drop --no-http", { kind: "usage" });
  if ((opts.kubeconfig !== undefined || opts.context !== undefined) && (opts.ui === false || opts.http === false)) {
    throw new OpcatError(
      "USAGE_SERVE",
      "--kubeconfig and --context are for the web UI's cluster pages: drop --no-ui/--no-http",
      { kind: "usage" },
    );
  }
  if (opts.context !== undefined && opts.kubeconfig === undefined)
    throw new OpcatError("USAGE_SERVE", "--context needs --kubeconfig", { kind: "usage" });
  if (opts.kubeconfig !== undefined && !existsSync(opts.kubeconfig))
    throw new OpcatError("USAGE_SERVE", `--kubeconfig ${JSON.stringify(opts.kubeconfig)}: no such file`, {
      kind: "usage",
    });
  const cluster =
    opts.kubeconfig !== undefined
      ? {
          kubeconfig: opts.kubeconfig,
          context: opts.context,
          pull: { ...(await imageAccessFrom(opts)), onProgress: undefined },
        }
      : undefined;
  if (opts.http === false && opts.grpc === false)
    throw new OpcatError("USAGE_SERVE", "nothing to serve: both --no-http and --no-grpc were given", {
      kind: "usage",
    });
  const httpAddr = opts.http === false ? undefined : parseListenAddress(opts.http, "--http");
  if (opts.port !== undefined) {
    if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535)
      throw new OpcatError("USAGE_SERVE", `invalid --port ${JSON.stringify(opts.port)}: expected a port number`, {
        kind: "usage",
      });
    if (opts.grpc === false)
      throw new OpcatError("USAGE_SERVE", "--port (gRPC) and --no-grpc exclude each other", {
        kind: "usage",
      });
    // opm listens on ":<port>", every interface; say so, since opcat's own default is loopback only
    opts.grpc = `0.0.0.0:${opts.port}`;
    log({
      level: "info",
      msg: "gRPC on all interfaces as opm's -p asks; use --grpc 127.0.0.1:<port> for loopback only",
      port: Number(opts.port),
    });
  }
  const grpcAddr = opts.grpc === false ? undefined : parseListenAddress(opts.grpc, "--grpc");
  const priorities = (await import("../action/resolve.js")).parsePriorities(opts.priority ?? []);
  for (const n of priorities.keys()) {
    if (!catalogs.some((c) => c.name === n))
      throw new OpcatError("USAGE_PRIORITY", `--priority names catalog ${JSON.stringify(n)}, which is not served`, {
        kind: "usage",
      });
  }
  const maxRequestBytes = Number(opts.maxRequestBytes);
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes < 1)
    throw new OpcatError(
      "USAGE_SERVE",
      `invalid --max-request-bytes ${JSON.stringify(opts.maxRequestBytes)}: expected a positive integer`,
      { kind: "usage" },
    );
  const budgetMs = parseGoDuration(opts.resolverBudget);
  if (typeof budgetMs === "string" || !(budgetMs > 0))
    throw new OpcatError(
      "USAGE_SERVE",
      `invalid --resolver-budget ${JSON.stringify(opts.resolverBudget)}: ` +
        `${typeof budgetMs === "string" ? budgetMs : "must be positive"}`,
      { kind: "usage" },
    );
  const grace = Number(opts.shutdownGrace) * 1000;
  if (!(grace >= 0))
    throw new OpcatError("USAGE_SERVE", `invalid --shutdown-grace ${JSON.stringify(opts.shutdownGrace)}`, {
      kind: "usage",
    });
  if (opts.grpcCatalog !== undefined && !catalogs.some((c) => c.name === opts.grpcCatalog)) {
    throw new OpcatError(
      "USAGE_SERVE",
      `--grpc-catalog ${JSON.stringify(opts.grpcCatalog)} is not one of the served catalogs`,
      { kind: "usage" },
    );
  }

  if (opts.cacheEnforceIntegrity && opts.cacheDir === undefined)
    throw new OpcatError("USAGE_SERVE", "--cache-dir must be specified with --cache-enforce-integrity", {
      kind: "usage",
    });
  const cache =
    opts.cacheDir !== undefined
      ? { dir: opts.cacheDir, enforceIntegrity: opts.cacheEnforceIntegrity === true }
      : undefined;
  return { catalogs, pollMs, pull, cluster, httpAddr, grpcAddr, priorities, maxRequestBytes, budgetMs, grace, cache };
}

/** Serves what `r` asks for (or, with --cache-only, builds the serve cache) until SIGINT or SIGTERM. */
async function runServe(r: ServeRequest, opts: ServeOpts): Promise<void> {
  const { catalogs, pollMs, pull, cluster, httpAddr, grpcAddr, priorities, maxRequestBytes, budgetMs, grace, cache } =
    r;
  const loading = { catalogs, pull, pollIntervalMs: pollMs, watch: opts.watch, cache, onEvent: reportServeEvent };
  if (opts.cacheOnly) {
    // like opm: the serve cache (with --cache-dir: one index per catalog) is built, then exit
    const built = await A.buildServeCacheAction({ ...loading, checkMetaKeys: grpcAddr !== undefined });
    log({
      level: "info",
      msg:
        cache === undefined
          ? "--cache-only: the catalogs load and are valid; without --cache-dir no serve index is kept"
          : "--cache-only: the catalogs load and are valid; serve indexes are up to date",
      catalogs: built.catalogs,
      ...(cache !== undefined ? { cache_dir: cache.dir } : {}),
    });
    return;
  }
  const served = await A.startServeAction({
    ...loading,
    http: httpAddr,
    grpc: grpcAddr,
    grpcCatalog: opts.grpcCatalog,
    accessLog: opts.accessLog ? (line: string) => void process.stderr.write(line + "\n") : undefined,
    errorLog: (entry) => log({ ...entry }),
    resolver: opts.resolverApi ? { priorities, maxRequestBytes, budgetMs } : false,
    ui: opts.ui === false ? false : { maxRequestBytes, cluster },
  });
  // Listening for signals before saying "serving": whoever waits for that line may send one at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (sig: string): void => {
      log({ level: "info", msg: "shutting down", signal: sig });
      resolve();
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
  const http = served.addresses.http;
  const grpc = served.addresses.grpc;
  serving = true;
  log({
    level: "info",
    msg: "serving",
    catalogs: served.catalogs,
    http: http ? `http://${http.address}:${http.port}/catalogs/<name>/api/v1/all` : null,
    ui:
      http && opts.ui !== false
        ? `http://${http.address.includes(":") ? `[${http.address}]` : http.address}:${http.port}/`
        : null,
    resolver_api: http && opts.resolverApi ? `http://${http.address}:${http.port}/api/v1/{query,resolve}` : null,
    grpc: grpc ? `${grpc.host}:${grpc.port}` : null,
    watch: Boolean(opts.watch),
    ...(pollMs !== undefined ? { poll_interval_ms: pollMs } : {}),
  });
  await stopped;
  await served.close(grace);
  log({ level: "info", msg: "stopped" });
}
