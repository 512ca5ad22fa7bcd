/**
 * The image access flags every command that may pull or push shares (opm's `--skip-tls-verify`,
 * `--use-http`, and opcat's own), and their translation into the library's pull options. Defining
 * them loads nothing; the image library is loaded when a command runs.
 */
import { statSync } from "node:fs";
import { type Command, Option } from "commander";
import { readRegistriesConf } from "../action/access.js";
import { OpcatError } from "../errors/index.js";
import { parseGoDuration } from "../gojson/duration.js";
import { checkTlsFlags, defaultCacheDir } from "../image/access.js";
import type { PullOptions, PullProgress } from "../image/index.js";
import { formatBytes, Progress } from "./output.js";

/** The parsed image access flags of a command. */
export interface ImageAccessFlags {
  useHttp?: boolean;
  skipTlsVerify?: boolean;
  skipTls?: boolean;
  caFile?: string[];
  cacheDir?: string;
  authfile?: string;
  registriesConf?: string;
  timeout?: string;
  idleTimeout?: string;
}

/** A Go duration flag (30s, 2m) in ms. */
function durationFlag(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const d = parseGoDuration(v);
  if (typeof d === "string" || !(d > 0))
    throw new OpcatError(
      "USAGE_TIMEOUT",
      `invalid ${flag} ${JSON.stringify(v)}: ` +
        `${typeof d === "string" ? d : "must be positive"} (a Go duration such as 30s or 2m)`,
      { kind: "usage" },
    );
  return d;
}

/**
 * Adds the image access flags to a command (opm's `--skip-tls-verify`,
 * `--use-http`, deprecated `--skip-tls`, and opcat's own).
 */
export function addImageAccessOptions(cmd: Command, doing = "while pulling bundles"): Command {
  return cmd
    .option("--skip-tls-verify", `skip TLS certificate verification for container image registries ${doing}`, false)
    .option("--use-http", `use plain HTTP for container image registries ${doing}`, false)
    .addOption(new Option("--skip-tls", "deprecated: same as --use-http").hideHelp())
    .option(
      "--ca-file <file>",
      "PEM file of CA certificates to trust for registries (repeatable)",
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option("--cache-dir <dir>", "image cache directory (default $OPCAT_CACHE_DIR or ~/.cache/opcat)")
    .option(
      "--authfile <file>",
      "registry credentials file consulted first (default: " +
        "$REGISTRY_AUTH_FILE, containers auth.json, ~/.docker/config.json)",
    )
    .option(
      "--registries-conf <file>",
      "containers registries.conf with mirrors and insecure registries " +
        "(default: $CONTAINERS_REGISTRIES_CONF or the standard locations)",
    )
    .option(
      "--timeout <duration>",
      "give up on a registry after this long for one manifest or blob, retries included (Go duration; default 2m)",
    )
    .option(
      "--idle-timeout <duration>",
      "a registry connection that sends nothing for this long fails (and is retried within --timeout; default 30s)",
    );
}

/** Checks the flags (opm's error texts) and turns them into pull options, with a progress line on a terminal. */
export async function imageAccessFrom(f: ImageAccessFlags, label = "pulling"): Promise<PullOptions> {
  const err = checkTlsFlags(f);
  if (err) throw new OpcatError("USAGE_FLAGS", err, { kind: "usage" });
  if (f.authfile !== undefined) {
    let ok = false;
    try {
      ok = statSync(f.authfile).isFile();
    } catch {
      ok = false;
    }
    if (!ok)
      throw new OpcatError(
        "USAGE_AUTHFILE",
        `--authfile ${f.authfile}: no such file (credentials are read from it before the standard locations)`,
        { kind: "usage" },
      );
  }
  const progress = new Progress(label);
  return {
    useHttp: Boolean(f.useHttp || f.skipTls),
    skipTlsVerify: Boolean(f.skipTlsVerify),
    caFile: f.caFile,
    cacheDir: f.cacheDir ?? defaultCacheDir(),
    authFile: f.authfile,
    registriesConf: f.registriesConf ? await readRegistriesConf(f.registriesConf) : undefined,
    totalTimeoutMs: durationFlag(f.timeout, "--timeout"),
    timeoutMs: durationFlag(f.idleTimeout, "--idle-timeout"),
    onProgress: (p: PullProgress) =>
      progress.update(`${p.ref}: ${p.blobsDone}/${p.blobs} blobs, ${formatBytes(p.bytes)}/${formatBytes(p.total)}`),
  };
}
