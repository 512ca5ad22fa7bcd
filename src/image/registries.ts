/**
 * containers `registries.conf` (TOML, version 2 format, plus v1's `[registries.insecure]` and
 * `[registries.block]` lists): per-prefix location rewrites, insecure and blocked registries, and
 * mirrors, so a disconnected user can point `quay.io/...` at a local mirror.
 *
 * Files: `$CONTAINERS_REGISTRIES_CONF`, else `$XDG_CONFIG_HOME/containers/registries.conf` (default
 * `~/.config/containers/registries.conf`) when it exists, else `/etc/containers/registries.conf`;
 * then the drop-ins `<file>.d/*.conf` in name order (a later entry with the same prefix replaces an
 * earlier one).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseTomlText, TomlError } from "smol-toml";
import { ImageError } from "./errors.js";

export type PullFromMirror = "all" | "digest-only" | "tag-only";

export interface RegistryMirror {
  location: string;
  insecure: boolean;
  pullFromMirror: PullFromMirror;
}

export interface RegistryEntry {
  /** The prefix refs are matched against ("quay.io/org", "*.example.com"). */
  prefix: string;
  /** Where the prefix really lives ("" = the prefix itself). */
  location: string;
  insecure: boolean;
  blocked: boolean;
  mirrorByDigestOnly: boolean;
  mirrors: RegistryMirror[];
}

export interface RegistriesConf {
  registries: RegistryEntry[];
  /** Files read, in order. */
  files: string[];
}

// ---------- TOML (smol-toml, TOML 1.0) ----------

type TomlValue = string | boolean | number | bigint | Date | TomlValue[] | TomlTable;
interface TomlTable {
  [k: string]: TomlValue;
}

/** Parses TOML text (TOML 1.0, by smol-toml); errors read "line N: <what>". */
export function parseToml(text: string): TomlTable {
  try {
    return parseTomlText(text) as TomlTable;
  } catch (e) {
    if (e instanceof TomlError)
      throw new Error(`line ${e.line}: ${e.message.split("\n")[0].replace(/^Invalid TOML document: /, "")}`);
    throw e;
  }
}

// ---------- registries.conf ----------

export interface RegistriesConfOptions {
  /** An explicit file (overrides the search). */
  path?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** The main registries.conf path that would be read (it may not exist). */
export function registriesConfPath(opts: RegistriesConfOptions = {}): string {
  if (opts.path) return opts.path;
  const env = opts.env ?? process.env;
  if (env.CONTAINERS_REGISTRIES_CONF) return env.CONTAINERS_REGISTRIES_CONF;
  const home = opts.home ?? env.HOME ?? homedir();
  const user = join(env.XDG_CONFIG_HOME || join(home, ".config"), "containers", "registries.conf");
  return existsSync(user) ? user : "/etc/containers/registries.conf";
}

function str(v: TomlValue | undefined, what: string, file: string): string {
  if (v === undefined) return "";
  if (typeof v !== "string") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: ${what} must be a string`);
  return v;
}

function bool(v: TomlValue | undefined, what: string, file: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: ${what} must be a boolean`);
  return v;
}

/** Parses one registries.conf text. */
export function parseRegistriesConf(text: string, file = "registries.conf"): RegistryEntry[] {
  let doc: TomlTable;
  try {
    doc = parseToml(text);
  } catch (e) {
    throw new ImageError(
      "IMAGE_REGISTRIES_CONF",
      `loading registries configuration ${JSON.stringify(file)}: ${(e as Error).message}`,
    );
  }
  const out: RegistryEntry[] = [];
  const regs = doc.registry;
  if (regs !== undefined) {
    if (!Array.isArray(regs))
      throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: [[registry]] must be an array of tables`);
    for (const r of regs) {
      if (typeof r !== "object" || Array.isArray(r)) continue;
      const t = r as TomlTable;
      const location = str(t.location, "registry.location", file).replace(/\/+$/, "");
      let prefix = str(t.prefix, "registry.prefix", file).replace(/\/+$/, "");
      if (prefix === "") prefix = location;
      if (prefix === "") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: invalid location: cannot be empty`);
      if (prefix.startsWith("*") && !prefix.startsWith("*."))
        throw new ImageError(
          "IMAGE_REGISTRIES_CONF",
          `${file}: invalid prefix ${JSON.stringify(prefix)}: wildcards must be "*." at the start`,
        );
      const mirrors: RegistryMirror[] = [];
      const ms = t.mirror;
      if (Array.isArray(ms)) {
        for (const m of ms) {
          if (typeof m !== "object" || Array.isArray(m)) continue;
          const mt = m as TomlTable;
          const pfm = str(mt["pull-from-mirror"], "mirror.pull-from-mirror", file) || "all";
          if (pfm !== "all" && pfm !== "digest-only" && pfm !== "tag-only")
            throw new ImageError(
              "IMAGE_REGISTRIES_CONF",
              `${file}: unsupported pull-from-mirror value ${JSON.stringify(pfm)}`,
            );
          const loc = str(mt.location, "mirror.location", file).replace(/\/+$/, "");
          if (loc === "") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: invalid location: cannot be empty`);
          mirrors.push({ location: loc, insecure: bool(mt.insecure, "mirror.insecure", file), pullFromMirror: pfm });
        }
      }
      out.push({
        prefix,
        location: location || (prefix.startsWith("*.") ? "" : prefix),
        insecure: bool(t.insecure, "registry.insecure", file),
        blocked: bool(t.blocked, "registry.blocked", file),
        mirrorByDigestOnly: bool(t["mirror-by-digest-only"], "registry.mirror-by-digest-only", file),
        mirrors,
      });
    }
  }
  // v1 format: [registries.insecure] registries = [...], [registries.block] registries = [...]
  const v1 = doc.registries;
  if (typeof v1 === "object" && v1 !== null && !Array.isArray(v1)) {
    for (const [kind, t] of Object.entries(v1 as TomlTable)) {
      if (kind !== "insecure" && kind !== "block") continue;
      const list = typeof t === "object" && !Array.isArray(t) ? (t as TomlTable).registries : undefined;
      if (!Array.isArray(list)) continue;
      for (const host of list) {
        if (typeof host !== "string") continue;
        let e = out.find((x) => x.prefix === host);
        if (!e)
          out.push(
            (e = {
              prefix: host,
              location: host,
              insecure: false,
              blocked: false,
              mirrorByDigestOnly: false,
              mirrors: [],
            }),
          );
        if (kind === "insecure") e.insecure = true;
        else e.blocked = true;
      }
    }
  }
  return out;
}

/** Reads the registries configuration (main file + drop-ins); missing files mean no configuration. */
export function loadRegistriesConf(opts: RegistriesConfOptions = {}): RegistriesConf {
  const main = registriesConfPath(opts);
  const files: string[] = [];
  const byPrefix = new Map<string, RegistryEntry>();
  const readOne = (f: string, mustExist: boolean): void => {
    let text: string;
    try {
      text = readFileSync(f, "utf8");
    } catch (e) {
      if (mustExist)
        throw new ImageError(
          "IMAGE_REGISTRIES_CONF",
          `loading registries configuration ${JSON.stringify(f)}: ${(e as Error).message}`,
        );
      return;
    }
    files.push(f);
    for (const r of parseRegistriesConf(text, f)) {
      byPrefix.delete(r.prefix);
      byPrefix.set(r.prefix, r);
    }
  };
  const env = opts.env ?? process.env;
  readOne(main, Boolean(opts.path || env.CONTAINERS_REGISTRIES_CONF));
  let dropins: string[] = [];
  try {
    dropins = readdirSync(main + ".d")
      .filter((n) => n.endsWith(".conf"))
      .sort();
  } catch {
    dropins = [];
  }
  for (const d of dropins) readOne(join(main + ".d", d), false);
  return { registries: [...byPrefix.values()], files };
}

/** Does `prefix` match repository name `name` (domain/path)? Wildcards "*.example.com" match subdomains. */
function prefixMatches(prefix: string, name: string): number {
  if (prefix.startsWith("*.")) {
    const host = name.split("/")[0];
    return host.endsWith(prefix.slice(1)) ? prefix.length : -1;
  }
  if (name === prefix) return prefix.length;
  if (name.startsWith(prefix) && (name[prefix.length] === "/" || prefix.endsWith("/"))) return prefix.length;
  return -1;
}

/** The entry with the longest prefix matching `name`, if any. */
export function findRegistry(conf: RegistriesConf, name: string): RegistryEntry | undefined {
  let best: RegistryEntry | undefined;
  let bestLen = -1;
  for (const r of conf.registries) {
    const l = prefixMatches(r.prefix, name);
    if (l > bestLen) {
      best = r;
      bestLen = l;
    }
  }
  return best;
}

/** One place to try for a pull: the repository name there and whether TLS may be skipped. */
export interface PullSource {
  /** domain/path at the source. */
  name: string;
  insecure: boolean;
  mirror: boolean;
}

/**
 * Where to pull repository `name` from, in order: the mirrors allowed for this reference (digest or
 * tag), then the primary location. Throws when the registry is blocked.
 */
export function pullSources(conf: RegistriesConf, name: string, byDigest: boolean): PullSource[] {
  const r = findRegistry(conf, name);
  if (!r) return [{ name, insecure: false, mirror: false }];
  if (r.blocked)
    throw new ImageError(
      "IMAGE_REGISTRY_BLOCKED",
      `registry ${r.prefix} is blocked in ${conf.files.join(", ") || "registries.conf"}`,
    );
  const rewrite = (loc: string): string => {
    if (r.prefix.startsWith("*.")) return loc ? loc + name.slice(name.indexOf("/")) : name;
    return loc + name.slice(r.prefix.length);
  };
  const out: PullSource[] = [];
  for (const m of r.mirrors) {
    const allowed = r.mirrorByDigestOnly
      ? byDigest
      : m.pullFromMirror === "all" || (m.pullFromMirror === "digest-only" ? byDigest : !byDigest);
    if (allowed) out.push({ name: rewrite(m.location), insecure: m.insecure, mirror: true });
  }
  out.push({ name: r.location ? rewrite(r.location) : name, insecure: r.insecure, mirror: false });
  return out;
}
