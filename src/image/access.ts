/**
 * The small pieces of image access that commands need before they touch a registry: opm's TLS flag
 * checks and the default cache directory (kept apart from the registry client so that they load alone).
 */
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * opm's checks on `--use-http`, `--skip-tls-verify` and the
 * deprecated `--skip-tls`; returns the error text or undefined.
 */
export function checkTlsFlags(f: {
  useHttp?: boolean;
  skipTlsVerify?: boolean;
  skipTls?: boolean;
}): string | undefined {
  if (f.skipTls && f.useHttp) return "invalid flag combination: cannot use --use-http with --skip-tls";
  if (f.skipTls && f.skipTlsVerify) return "invalid flag combination: cannot use --skip-tls-verify with --skip-tls";
  if (f.useHttp && f.skipTlsVerify)
    return "invalid flag combination: --use-http and --skip-tls-verify cannot both be true";
  return undefined;
}

/** `$OPCAT_CACHE_DIR`, else `$XDG_CACHE_HOME/opcat`, else `~/.cache/opcat`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPCAT_CACHE_DIR) return env.OPCAT_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "opcat");
}
