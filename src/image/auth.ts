/**
 * Registry credentials from the standard files, in containers/image's order: `$REGISTRY_AUTH_FILE`,
 * `$XDG_RUNTIME_DIR/containers/auth.json`, `$XDG_CONFIG_HOME/containers/auth.json` (default
 * `~/.config/containers/auth.json`), `$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`).
 * Within a file the most specific key wins (`host/ns/repo`, then `host/ns`, then `host`); Docker's
 * URL-shaped keys (`https://index.docker.io/v1/`) are matched by host; `credHelpers`/`credsStore`
 * run `docker-credential-<name> get`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ImageError } from "./errors.js";

export interface Credentials {
  username: string;
  password: string;
}

export interface AuthLookupOptions {
  /** An explicit auth file, consulted first (like `--authfile`). */
  authFile?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** The credential files consulted, in order (missing ones are skipped when read). */
export function authFilePaths(opts: AuthLookupOptions = {}): string[] {
  const env = opts.env ?? process.env;
  const home = opts.home ?? env.HOME ?? homedir();
  const out: string[] = [];
  if (opts.authFile) out.push(opts.authFile);
  if (env.REGISTRY_AUTH_FILE) out.push(env.REGISTRY_AUTH_FILE);
  if (env.XDG_RUNTIME_DIR) out.push(join(env.XDG_RUNTIME_DIR, "containers", "auth.json"));
  out.push(join(env.XDG_CONFIG_HOME || join(home, ".config"), "containers", "auth.json"));
  out.push(join(env.DOCKER_CONFIG || join(home, ".docker"), "config.json"));
  return out;
}

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
  identitytoken?: string;
}

interface AuthFile {
  auths?: Record<string, AuthEntry>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/** Host part of a Docker-style key: "https://index.docker.io/v1/" → "docker.io". */
function normalizeKey(key: string): string {
  let k = key;
  const m = /^[a-z]+:\/\//i.exec(k);
  if (m) {
    k = k.slice(m[0].length);
    const slash = k.indexOf("/");
    if (slash >= 0) k = k.slice(0, slash);
  }
  if (k === "index.docker.io" || k === "registry-1.docker.io") k = "docker.io";
  return k.replace(/\/+$/, "");
}

function decodeEntry(e: AuthEntry, file: string, key: string): Credentials | undefined {
  if (typeof e.auth === "string" && e.auth !== "") {
    const text = Buffer.from(e.auth, "base64").toString("utf8");
    const i = text.indexOf(":");
    if (i < 0)
      throw new ImageError(
        "IMAGE_AUTH_FILE",
        `${file}: invalid auth for ${JSON.stringify(key)}: not base64 of user:password`,
      );
    return { username: text.slice(0, i), password: text.slice(i + 1) };
  }
  if (typeof e.username === "string" && typeof e.password === "string")
    return { username: e.username, password: e.password };
  return undefined;
}

function credHelper(helper: string, host: string): Credentials | undefined {
  const r = spawnSync(`docker-credential-${helper}`, ["get"], { input: host, encoding: "utf8", timeout: 30_000 });
  if (r.error || r.status !== 0) return undefined;
  try {
    const v = JSON.parse(r.stdout) as { Username?: string; Secret?: string };
    if (typeof v.Username === "string" && typeof v.Secret === "string" && v.Secret !== "")
      return { username: v.Username, password: v.Secret };
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Candidate keys for a repository, most specific first: "quay.io/ns/repo", "quay.io/ns", "quay.io".
 * `name` is domain/path as in a reference.
 */
export function credentialKeys(name: string): string[] {
  const parts = name.split("/");
  const out: string[] = [];
  for (let n = parts.length; n >= 1; n--) out.push(parts.slice(0, n).join("/"));
  return out;
}

function readAuthFile(path: string): AuthFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null ? (v as AuthFile) : undefined;
  } catch (e) {
    throw new ImageError("IMAGE_AUTH_FILE", `${path}: ${(e as Error).message}`);
  }
}

/**
 * The credentials for repository `name` (domain/path, e.g. "quay.io/org/repo"), or undefined for
 * anonymous access.
 */
export function lookupCredentials(name: string, opts: AuthLookupOptions = {}): Credentials | undefined {
  const keys = credentialKeys(name);
  const host = keys[keys.length - 1];
  for (const file of authFilePaths(opts)) {
    const f = readAuthFile(file);
    if (!f) continue;
    const helper = f.credHelpers?.[host] ?? (host === "docker.io" ? f.credHelpers?.["index.docker.io"] : undefined);
    if (helper) {
      const c = credHelper(helper, host);
      if (c) return c;
    }
    if (f.auths && typeof f.auths === "object") {
      const byKey = new Map<string, [string, AuthEntry]>();
      for (const [k, v] of Object.entries(f.auths)) {
        const nk = /^[a-z]+:\/\//i.test(k) ? normalizeKey(k) : k === "index.docker.io" ? "docker.io" : k;
        if (!byKey.has(nk) || nk === k) byKey.set(nk, [k, v]);
      }
      for (const k of keys) {
        const hit = byKey.get(k);
        if (hit && typeof hit[1] === "object" && hit[1] !== null) {
          const c = decodeEntry(hit[1], file, hit[0]);
          if (c) return c;
        }
      }
    }
    if (f.credsStore) {
      const c = credHelper(f.credsStore, host);
      if (c) return c;
    }
  }
  return undefined;
}
