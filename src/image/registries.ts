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

// ---------- a small TOML reader (the subset registries.conf uses) ----------

type TomlValue = string | boolean | number | TomlValue[] | TomlTable;
interface TomlTable {
  [k: string]: TomlValue;
}

class TomlError extends Error {}

/** Parses TOML text into plain objects: tables, arrays of tables, strings, booleans, integers, arrays, inline tables. */
export function parseToml(text: string): TomlTable {
  const root: TomlTable = {};
  let cur: TomlTable = root;
  let i = 0;
  let line = 1;
  const err = (m: string): never => {
    throw new TomlError(`line ${line}: ${m}`);
  };
  const ws = (): void => {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  };
  const wsnl = (): void => {
    for (;;) {
      ws();
      if (text[i] === "#") while (i < text.length && text[i] !== "\n") i++;
      if (text[i] === "\n" || text[i] === "\r") {
        if (text[i] === "\n") line++;
        i++;
        continue;
      }
      break;
    }
  };
  const bareKey = (): string => {
    const s = i;
    while (i < text.length && /[A-Za-z0-9_-]/.test(text[i])) i++;
    if (s === i) err("expected a key");
    return text.slice(s, i);
  };
  const basicString = (): string => {
    i++;
    let out = "";
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\n") err("newline in string");
      if (text[i] === "\\") {
        const c = text[i + 1];
        const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\" };
        if (c in map) {
          out += map[c];
          i += 2;
        } else if (c === "u" || c === "U") {
          const n = c === "u" ? 4 : 8;
          const hex = text.slice(i + 2, i + 2 + n);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) err("bad unicode escape");
          out += String.fromCodePoint(parseInt(hex, 16));
          i += 2 + n;
        } else err("bad escape");
      } else out += text[i++];
    }
    if (text[i] !== '"') err("unterminated string");
    i++;
    return out;
  };
  const literalString = (): string => {
    const e = text.indexOf("'", i + 1);
    const nl = text.indexOf("\n", i + 1);
    if (e < 0 || (nl >= 0 && nl < e)) err("unterminated string");
    const s = text.slice(i + 1, e);
    i = e + 1;
    return s;
  };
  const key = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      ws();
      parts.push(text[i] === '"' ? basicString() : text[i] === "'" ? literalString() : bareKey());
      ws();
      if (text[i] !== ".") return parts;
      i++;
    }
  };
  const value = (): TomlValue => {
    ws();
    const c = text[i];
    if (c === '"') {
      if (text.startsWith('"""', i)) err("multi-line strings are not supported");
      return basicString();
    }
    if (c === "'") return literalString();
    if (c === "[") {
      i++;
      const arr: TomlValue[] = [];
      for (;;) {
        wsnl();
        if (text[i] === "]") {
          i++;
          return arr;
        }
        arr.push(value());
        wsnl();
        if (text[i] === ",") {
          i++;
          continue;
        }
        wsnl();
        if (text[i] !== "]") err("expected , or ] in array");
      }
    }
    if (c === "{") {
      i++;
      const t: TomlTable = {};
      ws();
      if (text[i] === "}") {
        i++;
        return t;
      }
      for (;;) {
        const k = key();
        if (text[i] !== "=") err("expected =");
        i++;
        setPath(t, k, value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] !== "}") err("expected , or } in inline table");
        i++;
        return t;
      }
    }
    const m = /^(true|false|[+-]?[0-9][0-9_]*)/.exec(text.slice(i, i + 40));
    if (!m) return err("unsupported value");
    i += m[0].length;
    if (m[0] === "true") return true;
    if (m[0] === "false") return false;
    return Number(m[0].replace(/_/g, ""));
  };
  const setPath = (t: TomlTable, k: string[], v: TomlValue): void => {
    let o = t;
    for (const p of k.slice(0, -1)) {
      if (o[p] === undefined) o[p] = {};
      const n = o[p];
      if (typeof n !== "object" || Array.isArray(n)) err(`key ${p} is not a table`);
      o = n as TomlTable;
    }
    const last = k[k.length - 1];
    if (last in o) err(`duplicate key ${k.join(".")}`);
    o[last] = v;
  };
  const tableAt = (k: string[], arrayOfTables: boolean): TomlTable => {
    let o = root;
    for (let j = 0; j < k.length; j++) {
      const p = k[j];
      const lastPart = j === k.length - 1;
      if (lastPart && arrayOfTables) {
        if (o[p] === undefined) o[p] = [];
        const a = o[p];
        if (!Array.isArray(a)) err(`${k.join(".")} is not an array of tables`);
        const t: TomlTable = {};
        (a as TomlValue[]).push(t);
        return t;
      }
      if (o[p] === undefined) o[p] = {};
      let n = o[p];
      if (Array.isArray(n)) n = n[n.length - 1];
      if (typeof n !== "object" || n === null || Array.isArray(n)) err(`${p} is not a table`);
      o = n as TomlTable;
    }
    return o;
  };
  for (;;) {
    wsnl();
    if (i >= text.length) break;
    if (text[i] === "[") {
      const aot = text[i + 1] === "[";
      i += aot ? 2 : 1;
      const k = key();
      if (text[i] !== "]" || (aot && text[i + 1] !== "]")) err("expected ]");
      i += aot ? 2 : 1;
      cur = tableAt(k, aot);
    } else {
      const k = key();
      if (text[i] !== "=") err("expected =");
      i++;
      setPath(cur, k, value());
    }
    ws();
    if (text[i] === "#") while (i < text.length && text[i] !== "\n") i++;
    if (i < text.length && text[i] !== "\n" && text[i] !== "\r") err("expected end of line");
  }
  return root;
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
    throw new ImageError("IMAGE_REGISTRIES_CONF", `loading registries configuration ${JSON.stringify(file)}: ${(e as Error).message}`);
  }
  const out: RegistryEntry[] = [];
  const regs = doc.registry;
  if (regs !== undefined) {
    if (!Array.isArray(regs)) throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: [[registry]] must be an array of tables`);
    for (const r of regs) {
      if (typeof r !== "object" || Array.isArray(r)) continue;
      const t = r as TomlTable;
      const location = str(t.location, "registry.location", file).replace(/\/+$/, "");
      let prefix = str(t.prefix, "registry.prefix", file).replace(/\/+$/, "");
      if (prefix === "") prefix = location;
      if (prefix === "") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: invalid location: cannot be empty`);
      if (prefix.startsWith("*") && !prefix.startsWith("*.")) throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: invalid prefix ${JSON.stringify(prefix)}: wildcards must be "*." at the start`);
      const mirrors: RegistryMirror[] = [];
      const ms = t.mirror;
      if (Array.isArray(ms)) {
        for (const m of ms) {
          if (typeof m !== "object" || Array.isArray(m)) continue;
          const mt = m as TomlTable;
          const pfm = str(mt["pull-from-mirror"], "mirror.pull-from-mirror", file) || "all";
          if (pfm !== "all" && pfm !== "digest-only" && pfm !== "tag-only") throw new ImageError("IMAGE_REGISTRIES_CONF", `${file}: unsupported pull-from-mirror value ${JSON.stringify(pfm)}`);
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
        if (!e) out.push((e = { prefix: host, location: host, insecure: false, blocked: false, mirrorByDigestOnly: false, mirrors: [] }));
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
      if (mustExist) throw new ImageError("IMAGE_REGISTRIES_CONF", `loading registries configuration ${JSON.stringify(f)}: ${(e as Error).message}`);
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
    dropins = readdirSync(main + ".d").filter((n) => n.endsWith(".conf")).sort();
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
  if (r.blocked) throw new ImageError("IMAGE_REGISTRY_BLOCKED", `registry ${r.prefix} is blocked in ${conf.files.join(", ") || "registries.conf"}`);
  const rewrite = (loc: string): string => {
    if (r.prefix.startsWith("*.")) return loc ? loc + name.slice(name.indexOf("/")) : name;
    return loc + name.slice(r.prefix.length);
  };
  const out: PullSource[] = [];
  for (const m of r.mirrors) {
    const allowed = r.mirrorByDigestOnly ? byDigest : m.pullFromMirror === "all" || (m.pullFromMirror === "digest-only" ? byDigest : !byDigest);
    if (allowed) out.push({ name: rewrite(m.location), insecure: m.insecure, mirror: true });
  }
  out.push({ name: r.location ? rewrite(r.location) : name, insecure: r.insecure, mirror: false });
  return out;
}
