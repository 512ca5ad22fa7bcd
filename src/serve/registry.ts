/**
 * The answers of opm's `api.Registry` gRPC service, computed from a validated catalog model
 * (pkg/cache/{cache,pkgs}.go and pkg/api/model_to_api.go): API bundles with their field contents,
 * orderings and error texts. Everything is built once per catalog revision; queries only look up.
 *
 * Where opm iterates Go maps (ListPackages, the channel-entry streams, GetBundleThatReplaces when
 * several bundles qualify) its order is random; here it is by package, channel and bundle name.
 */
import { compareUtf8, quoteGoString } from "../gojson/encode.js";
import { decodePropertyValue } from "../fbc/decode.js";
import { goQuote } from "../gojson/fmt.js";
import { problem, type Problem } from "../errors/index.js";
import { channelHead, type Model, type ModelBundle } from "../fbc/model.js";
import { bundleCsvJson, bundleObjects } from "../fbc/objects.js";
import {
  parseProperties,
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CSV_METADATA,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_PACKAGE_REQUIRED,
  type ParsedProperties,
} from "../fbc/properties.js";
import type { JsonObject, Meta } from "../fbc/types.js";
import { synthesizeCsvJson } from "./csv.js";
import type {
  ApiBundle,
  ApiChannel,
  ApiChannelEntry,
  ApiDeprecation,
  ApiGroupVersionKind,
  ApiKeyValue,
  ApiPackage,
} from "./apitypes.js";
import { encodeBundleParts } from "./pb.js";
import { MemoryBytes, type Bytes } from "./bytes.js";

/** gRPC status codes used by the registry: what a plain Go error becomes, and InvalidArgument. */
export const RpcCode = { Unknown: 2, InvalidArgument: 3 } as const;

/** An error answer: gRPC code and message text (opm's). */
export interface RpcError {
  /** gRPC status code. */
  code: number;
  message: string;
}

export type RpcResult<T> = { ok: true; value: T } | { ok: false; error: RpcError };

export type {
  ApiBundle,
  ApiChannel,
  ApiChannelEntry,
  ApiDeprecation,
  ApiGroupVersionKind,
  ApiKeyValue,
  ApiPackage,
} from "./apitypes.js";

interface IdxBundle {
  readonly pkg: string;
  readonly channel: string;
  readonly name: string;
  readonly replaces: string;
  readonly skips: readonly string[];
  /** Keys (gvkKey) of the provided APIs, each once. */
  readonly gvks: readonly string[];
  /**
   * Where the encoded parts a, b, r and d (pb.ts BundleParts), one after the other, are in the light
   * bytes: ListBundles' answer when `hasPath`.
   */
  readonly lightOff: number;
  readonly lightLen: number;
  readonly la: number;
  readonly lb: number;
  readonly lr: number;
  /** Where the encoded csvJson and objects are in the heavy store. */
  readonly heavyOff: number;
  readonly heavyLen: number;
  readonly hasPath: boolean;
}

interface IdxChannel {
  readonly name: string;
  readonly head: string;
  readonly bundles: Map<string, IdxBundle>;
}

interface IdxPackage {
  readonly name: string;
  readonly defaultChannel: string;
  readonly channels: Map<string, IdxChannel>;
  readonly api: ApiPackage;
}

/**
 * Where the bundles' biggest parts (CSV JSON and manifests, pb.ts `heavy`) are: in memory, or in a
 * persisted index file (read when a bundle is asked for, as opm reads its cache).
 */
export interface HeavyStore {
  read(offset: number, length: number): Promise<Buffer>;
}

/** A heavy store in memory: one buffer per bundle, at consecutive offsets (as persisted). */
export class MemoryHeavyStore implements HeavyStore {
  readonly #at = new Map<number, Buffer>();
  readonly chunks: readonly Buffer[];
  constructor(chunks: Buffer[]) {
    this.chunks = chunks;
    let off = 0;
    for (const c of chunks) {
      if (c.length > 0) this.#at.set(off, c);
      off += c.length;
    }
  }
  read(offset: number, length: number): Promise<Buffer> {
    if (length === 0) return Promise.resolve(NO_BYTES);
    const c = this.#at.get(offset);
    if (!c || c.length !== length) return Promise.reject(new Error("no bundle at this place of the heavy store"));
    return Promise.resolve(c);
  }
}

/** The registry index as persisted (revision index files): JSON structure, light and heavy bytes. */
export interface PersistedRegistry {
  json: string;
  light: Buffer;
  /** The heavy section, in order. */
  heavy: readonly Buffer[];
}

interface PersistedShape {
  packages: { name: string; defaultChannel: string; api: ApiPackage; channels: [string, string, number[]][] }[];
  /** pkg, channel, name, replaces, skips, gvks, light offset, la, lb, lr, ld, heavy offset, heavy length, hasPath */
  bundles: [
    string,
    string,
    string,
    string,
    string[],
    string[],
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    boolean,
  ][];
  metas: [string, JsonObject[]][];
}

const NO_BYTES = Buffer.alloc(0);
/** ListBundles reads the light parts of consecutive bundles in pieces of about this many bytes. */
const LIST_READ = 1 << 20;
const META_KEY = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

/** opm's custom-schema key check (pkg/cache/meta_key.go); the error text, or undefined when valid. */
export function metaKeyError(schema: string, packageName: string): string | undefined {
  const check = (what: string, v: string): string | undefined => {
    if (v === "") return `invalid ${what}: must not be empty`;
    if (!META_KEY.test(v)) return `invalid ${what} ${goQuote(v)}: must match ${META_KEY.source}`;
    return undefined;
  };
  return check("schema", schema) ?? (packageName !== "" ? check("packageName", packageName) : undefined);
}

const ok = <T>(value: T): RpcResult<T> => ({ ok: true, value });
const fail = <T>(message: string, code: number = RpcCode.Unknown): RpcResult<T> => ({
  ok: false,
  error: { code, message },
});

/** opm's registry queries over one catalog revision. Immutable once built. */
export class RegistryIndex {
  readonly #packages: Map<string, IdxPackage>;
  readonly #all: IdxBundle[];
  readonly #listOrder: IdxBundle[];
  readonly #provides: Map<string, IdxBundle[]>;
  readonly #metas: Map<string, JsonObject[]>;
  readonly #heavy: HeavyStore;
  /** The light parts of every bundle (each bundle's at its `lightOff`), in memory or in an index file. */
  readonly #light: Bytes;
  /** The heavy parts in memory, when built here (undefined when they are read from a file). */
  readonly #heavyArena: readonly Buffer[] | undefined;

  private constructor(
    packages: Map<string, IdxPackage>,
    all: IdxBundle[],
    metas: Map<string, JsonObject[]>,
    light: Bytes,
    heavy: HeavyStore,
  ) {
    this.#packages = packages;
    this.#metas = metas;
    this.#heavy = heavy;
    this.#light = light;
    this.#heavyArena = heavy instanceof MemoryHeavyStore ? heavy.chunks : undefined;
    this.#all = all;
    this.#listOrder = [...all].sort(
      (a, b) => compareUtf8(a.channel, b.channel) || compareUtf8(a.pkg, b.pkg) || compareUtf8(a.name, b.name),
    );
    all.sort((a, b) => compareUtf8(a.pkg, b.pkg) || compareUtf8(a.channel, b.channel) || compareUtf8(a.name, b.name));
    this.#provides = new Map();
    for (const b of all) {
      for (const key of b.gvks) {
        const list = this.#provides.get(key);
        if (list) list.push(b);
        else this.#provides.set(key, [b]);
      }
    }
  }

  /**
   * Builds the index from a validated model and the catalog's custom blobs. Fails like opm's cache
   * build: a bundle that cannot be converted, or (with `checkMetaKeys`) a custom blob whose schema or
   * package opm serve rejects.
   */
  static build(
    model: Model,
    others: readonly Meta[],
    opts: { checkMetaKeys?: boolean } = {},
  ): { index: RegistryIndex } | { problems: Problem[] } {
    const problems: Problem[] = [];
    const metas = new Map<string, JsonObject[]>();
    for (const o of others) {
      if (opts.checkMetaKeys !== false) {
        const err = metaKeyError(o.schema, o.package);
        if (err !== undefined) {
          problems.push(
            problem("SERVE_CUSTOM_SCHEMA_NAME", `invalid custom schema meta: ${err}`, {
              loc: o.loc,
              blob: { schema: o.schema, package: o.package || undefined, name: o.name || undefined },
              hint: "opm serve only accepts custom schema and package names matching ^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
            }),
          );
          continue;
        }
      }
      const key = o.schema + "\u0000" + o.package;
      const v = o.blob.value as JsonObject;
      const list = metas.get(key);
      if (list) list.push(v);
      else metas.set(key, [v]);
    }
    const packages = new Map<string, IdxPackage>();
    const lights: Buffer[] = [];
    let lightSize = 0;
    const heavies: Buffer[] = [];
    let heavySize = 0;
    // the CSV and manifests depend on the bundle only: kept once for all the channels it is in
    const heavyAt = new Map<string, { off: number; len: number }>();
    const all: IdxBundle[] = [];
    for (const mp of model.values()) {
      const channels = new Map<string, IdxChannel>();
      const chApi: ApiChannel[] = [];
      for (const mc of mp.channels.values()) {
        const { head, error } = channelHead(mc);
        if (!head) {
          problems.push(
            problem("SERVE_CHANNEL_HEAD", `build package index: process package ${goQuote(mp.name)}: ${error}`, {
              loc: mc.source?.loc,
            }),
          );
          continue;
        }
        const bundles = new Map<string, IdxBundle>();
        for (const mb of mc.bundles.values()) {
          let h = heavyAt.get(mb.name);
          const conv = convertBundle(mb, { heavy: h === undefined });
          if (typeof conv === "string") {
            problems.push(
              problem("SERVE_BUNDLE_CONVERT", `build package index: process package ${goQuote(mp.name)}: ${conv}`, {
                loc: mb.source?.loc,
                blob: { schema: "olm.bundle", package: mp.name, name: mb.name },
              }),
            );
            continue;
          }
          if (problems.length > 0) continue;
          const parts = encodeBundleParts(conv, h === undefined);
          if (!h) {
            h = { off: heavySize, len: parts.heavy.length };
            heavies.push(parts.heavy);
            heavySize += parts.heavy.length;
            heavyAt.set(mb.name, h);
          }
          const gvks = [...new Set(conv.providedApis.map((g) => gvkKey(g.group, g.version, g.kind)))];
          const light = [parts.a, parts.b, parts.r, parts.d];
          const len = parts.a.length + parts.b.length + parts.r.length + parts.d.length;
          lights.push(...light);
          const b: IdxBundle = {
            lightOff: lightSize,
            lightLen: len,
            pkg: mp.name,
            channel: mc.name,
            name: mb.name,
            replaces: mb.replaces,
            skips: mb.skips,
            gvks,
            la: parts.a.length,
            lb: parts.b.length,
            lr: parts.r.length,
            heavyOff: h.off,
            heavyLen: h.len,
            hasPath: conv.bundlePath !== "",
          };
          all.push(b);
          lightSize += len;
          bundles.set(mb.name, b);
        }
        channels.set(mc.name, { name: mc.name, head: head.name, bundles });
        chApi.push({ name: mc.name, csvName: head.name, deprecation: dep(mc.deprecation) });
      }
      heavyAt.clear();
      const api: ApiPackage = {
        name: mp.name,
        defaultChannelName: mp.defaultChannel?.name ?? "",
        deprecation: dep(mp.deprecation),
        channels: chApi.sort((a, b) => compareUtf8(a.name, b.name)),
      };
      packages.set(mp.name, { name: mp.name, defaultChannel: api.defaultChannelName, channels, api });
    }
    if (problems.length > 0) return { problems };
    const lightArena = Buffer.concat(lights, lightSize);
    lights.length = 0;
    const heavy = new MemoryHeavyStore(heavies);
    return { index: new RegistryIndex(packages, all, metas, new MemoryBytes(lightArena), heavy) };
  }

  /**
   * The index in its persisted form (see revision index files); only for an index built here. The
   * light parts are laid out in ListBundles' order, so that the stream reads the file front to back.
   */
  persist(): PersistedRegistry {
    if (!this.#heavyArena || !this.#light.inMemory)
      throw new Error("registry index: only an index built in memory can be persisted");
    const ids = new Map<IdxBundle, number>();
    const shape: PersistedShape = { packages: [], bundles: [], metas: [...this.#metas] };
    const arena = this.#light.whole();
    const light = Buffer.allocUnsafe(arena.length);
    const lightAt = new Map<IdxBundle, number>();
    let at = 0;
    for (const b of this.#listOrder) {
      lightAt.set(b, at);
      at += arena.copy(light, at, b.lightOff, b.lightOff + b.lightLen);
    }
    for (const b of this.#all) {
      ids.set(b, shape.bundles.length);
      shape.bundles.push([
        b.pkg,
        b.channel,
        b.name,
        b.replaces,
        [...b.skips],
        [...b.gvks],
        lightAt.get(b) ?? -1,
        b.la,
        b.lb,
        b.lr,
        b.lightLen,
        b.heavyOff,
        b.heavyLen,
        b.hasPath,
      ]);
    }
    for (const p of this.#packages.values()) {
      shape.packages.push({
        name: p.name,
        defaultChannel: p.defaultChannel,
        api: p.api,
        channels: [...p.channels.values()].map((c) => [
          c.name,
          c.head,
          [...c.bundles.values()].map((b) => ids.get(b) ?? -1),
        ]),
      });
    }
    return { json: JSON.stringify(shape), light, heavy: this.#heavyArena };
  }

  /** An index from its persisted form; the heavy parts are read from `heavy` when asked for. */
  static fromPersisted(json: string, light: Bytes, heavy: HeavyStore): RegistryIndex {
    const shape = JSON.parse(json) as PersistedShape;
    // JSON.parse gives every occurrence its own string: one copy of each package and channel name
    const names = new Map<string, string>();
    const intern = (s: string): string => {
      const had = names.get(s);
      if (had !== undefined) return had;
      names.set(s, s);
      return s;
    };
    const all: IdxBundle[] = shape.bundles.map((t) => ({
      pkg: intern(t[0]),
      channel: intern(t[1]),
      name: t[2],
      replaces: t[3],
      skips: t[4],
      gvks: t[5],
      lightOff: t[6],
      lightLen: t[10],
      la: t[7],
      lb: t[8],
      lr: t[9],
      heavyOff: t[11],
      heavyLen: t[12],
      hasPath: t[13],
    }));
    const packages = new Map<string, IdxPackage>();
    for (const p of shape.packages) {
      const channels = new Map<string, IdxChannel>();
      for (const [name, head, ids] of p.channels) {
        const bundles = new Map<string, IdxBundle>();
        for (const i of ids) {
          const b = all[i];
          if (!b) throw new Error("registry index: bundle reference out of range");
          bundles.set(b.name, b);
        }
        channels.set(name, { name, head, bundles });
      }
      const name = intern(p.name);
      packages.set(name, { name, defaultChannel: p.defaultChannel, api: p.api, channels });
    }
    names.clear();
    return new RegistryIndex(packages, all, new Map(shape.metas), light, heavy);
  }

  /** GetBundle's answer (replaces and skips cleared). */
  async #trimmed(b: IdxBundle): Promise<Buffer> {
    const [l, heavy] = await Promise.all([this.#lightOf(b), this.#heavy.read(b.heavyOff, b.heavyLen)]);
    return Buffer.concat([l.subarray(0, b.la), heavy, l.subarray(b.la, b.la + b.lb), l.subarray(b.la + b.lb + b.lr)]);
  }

  /** ListBundles' answer: as stored, but csvJson and object cleared when bundlePath is set. */
  async #listed(b: IdxBundle, light?: Buffer): Promise<Buffer> {
    const l = light ?? (await this.#lightOf(b));
    if (b.hasPath) return l;
    const heavy = await this.#heavy.read(b.heavyOff, b.heavyLen);
    return Buffer.concat([l.subarray(0, b.la), heavy, l.subarray(b.la)]);
  }

  #lightOf(b: IdxBundle): Promise<Buffer> {
    return this.#light.slice(b.lightOff, b.lightOff + b.lightLen);
  }

  /** ListPackages: every package name (sorted). */
  listPackages(): string[] {
    return [...this.#packages.keys()].sort(compareUtf8);
  }

  getPackage(name: string): RpcResult<ApiPackage> {
    const p = this.#packages.get(name);
    return p ? ok(p.api) : fail(`package ${goQuote(name)} not found`);
  }

  /** GetBundle: the encoded `api.Bundle` (pb.ts decodeApiBundle reads it). */
  async getBundle(pkgName: string, channelName: string, csvName: string): Promise<RpcResult<Buffer>> {
    const ch = this.#channel(pkgName, channelName);
    if (!ch.ok) return ch;
    const b = ch.value.bundles.get(csvName);
    if (!b)
      return fail(`package ${goQuote(pkgName)}, channel ${goQuote(channelName)}, bundle ${goQuote(csvName)} not found`);
    return ok(await this.#trimmed(b));
  }

  async getBundleForChannel(pkgName: string, channelName: string): Promise<RpcResult<Buffer>> {
    const ch = this.#channel(pkgName, channelName);
    if (!ch.ok) return ch;
    const b = ch.value.bundles.get(ch.value.head);
    return b
      ? ok(await this.#trimmed(b))
      : fail(
          `package ${goQuote(pkgName)}, channel ${goQuote(channelName)}, bundle ${goQuote(ch.value.head)} not found`,
        );
  }

  getChannelEntriesThatReplace(csvName: string): RpcResult<ApiChannelEntry[]> {
    // one entry for the replaced bundle, one per other skipped bundle (both carrying the bundle's own
    // replaces); opm compares names as they are: an empty name matches every entry that replaces nothing.
    // A scan of every bundle, as opm's: a table of it would be kept for a rarely asked question.
    const list: ApiChannelEntry[] = [];
    for (const b of this.#all) {
      const hit = (): number =>
        list.push({ packageName: b.pkg, channelName: b.channel, bundleName: b.name, replaces: b.replaces });
      if (b.replaces === csvName) hit();
      for (const s of b.skips) if (s !== b.replaces && s === csvName) hit();
    }
    return list.length > 0 ? ok(list) : fail(`no channel entries found that replace ${csvName}`);
  }

  async getBundleThatReplaces(csvName: string, pkgName: string, channelName: string): Promise<RpcResult<Buffer>> {
    const p = this.#packages.get(pkgName);
    if (!p) return fail(`package ${pkgName} not found`);
    const ch = p.channels.get(channelName);
    if (!ch) return fail(`package ${goQuote(pkgName)}, channel ${goQuote(channelName)} not found`);
    let found: IdxBundle | undefined;
    for (const b of ch.bundles.values()) {
      if ((b.replaces === csvName || b.skips.includes(csvName)) && (!found || compareUtf8(b.name, found.name) < 0))
        found = b;
    }
    return found
      ? ok(await this.#trimmed(found))
      : fail(`no entry found for package ${goQuote(pkgName)}, channel ${goQuote(channelName)}`);
  }

  getChannelEntriesThatProvide(group: string, version: string, kind: string): RpcResult<ApiChannelEntry[]> {
    const out: ApiChannelEntry[] = [];
    for (const b of this.#provides.get(gvkKey(group, version, kind)) ?? [])
      out.push(...this.#entriesForBundle(b, true));
    return out.length > 0 ? ok(out) : fail(notProvided(group, version, kind));
  }

  getLatestChannelEntriesThatProvide(group: string, version: string, kind: string): RpcResult<ApiChannelEntry[]> {
    const out: ApiChannelEntry[] = [];
    for (const b of this.#provides.get(gvkKey(group, version, kind)) ?? []) {
      const ch = this.#packages.get(b.pkg)?.channels.get(b.channel);
      if (ch && ch.head === b.name) out.push(...this.#entriesForBundle(b, false));
    }
    return out.length > 0 ? ok(out) : fail(notProvided(group, version, kind));
  }

  async getDefaultBundleThatProvides(group: string, version: string, kind: string): Promise<RpcResult<Buffer>> {
    const latest = this.getLatestChannelEntriesThatProvide(group, version, kind);
    if (!latest.ok) return latest;
    // Already ordered by package name.
    for (const e of latest.value) {
      const p = this.#packages.get(e.packageName);
      if (p && e.channelName === p.defaultChannel) return this.getBundle(e.packageName, e.channelName, e.bundleName);
    }
    return fail(
      `no entry found that provides group:${goQuote(group)} version:${goQuote(version)} kind:${goQuote(kind)}`,
    );
  }

  /** ListBundles, encoded, in its order: channel name, package name, bundle name. */
  async *listBundles(): AsyncGenerator<Buffer> {
    const order = this.#listOrder;
    for (let i = 0; i < order.length; ) {
      // a run of bundles whose light parts follow each other (all of them, as persisted) is read at once
      const start = order[i].lightOff;
      let end = start + order[i].lightLen;
      let j = i + 1;
      while (j < order.length && order[j].lightOff === end && end - start < LIST_READ) {
        end += order[j].lightLen;
        j++;
      }
      const run = await this.#light.slice(start, end);
      for (; i < j; i++) {
        const b = order[i];
        yield await this.#listed(b, run.subarray(b.lightOff - start, b.lightOff - start + b.lightLen));
      }
    }
  }

  /** Number of (package, channel, bundle) entries. */
  get bundleCount(): number {
    return this.#listOrder.length;
  }

  /** ExperimentalListPackageCustomSchemas (the acknowledgement header is checked by the caller). */
  listPackageCustomSchemas(schema: string, packageName: string): RpcResult<readonly JsonObject[]> {
    if (schema === "") return fail("schema is required", RpcCode.InvalidArgument);
    const err = metaKeyError(schema, packageName);
    if (err !== undefined) return fail(`invalid custom schema query: ${err}`, RpcCode.InvalidArgument);
    return ok(this.#metas.get(schema + "\u0000" + packageName) ?? []);
  }

  #channel(pkgName: string, channelName: string): RpcResult<IdxChannel> {
    const p = this.#packages.get(pkgName);
    if (!p) return fail(`package ${goQuote(pkgName)} not found`);
    const ch = p.channels.get(channelName);
    if (!ch) return fail(`package ${goQuote(pkgName)}, channel ${goQuote(channelName)} not found`);
    return ok(ch);
  }

  #entriesForBundle(b: IdxBundle, ignoreChannel: boolean): ApiChannelEntry[] {
    const out: ApiChannelEntry[] = [
      { packageName: b.pkg, channelName: b.channel, bundleName: b.name, replaces: b.replaces },
    ];
    const ch = ignoreChannel ? undefined : this.#packages.get(b.pkg)?.channels.get(b.channel);
    for (const s of b.skips) {
      if (s !== b.replaces && (ignoreChannel || ch?.bundles.has(s)))
        out.push({ packageName: b.pkg, channelName: b.channel, bundleName: b.name, replaces: s });
    }
    return out;
  }
}

function notProvided(group: string, version: string, kind: string): string {
  return (
    `no channel entries found that provide group:${goQuote(group)} ` +
    `version:${goQuote(version)} kind:${goQuote(kind)}`
  );
}

function gvkKey(g: string, v: string, k: string): string {
  return `${g}\u0000${v}\u0000${k}`;
}

function dep(d: { message: string } | undefined): ApiDeprecation | null {
  return d ? { message: d.message } : null;
}

/**
 * api.ConvertModelBundleToAPIBundle; a string is the error text. With `heavy: false` the CSV JSON
 * and objects are left empty (the registry computes them once per bundle, not once per channel).
 */
export function convertBundle(mb: ModelBundle, opts: { heavy?: boolean } = {}): ApiBundle | string {
  let props: ParsedProperties;
  if (mb.parsed) props = mb.parsed;
  else {
    try {
      props = parseProperties(mb.properties);
    } catch (e) {
      return `parse properties: ${(e as Error).message}`;
    }
  }
  if (props.packages.length !== 1)
    return `parse properties: expected exactly 1 property of type "olm.package", found ${props.packages.length}`;
  if (props.csvMetadatas.length > 1)
    return (
      `parse properties: expected at most 1 property of type ` +
      `"olm.csv.metadata", found ${props.csvMetadatas.length}`
    );
  const src = mb.source;
  const heavy = opts.heavy !== false;
  let csvJson = src && heavy ? bundleCsvJson(src) : "";
  let objects = src && heavy ? bundleObjects(src) : [];
  if (heavy && csvJson === "" && props.csvMetadatas.length === 1) {
    csvJson = synthesizeCsvJson(props.csvMetadatas[0], {
      name: mb.name,
      version: mb.version ? mb.version.toString() : "0.0.0",
      icon: mb.package.icon,
      relatedImages: mb.relatedImages,
      packageDescription: mb.package.description,
    });
    if (objects.length === 0) objects = [csvJson];
  }
  const dependencies: ApiKeyValue[] = [];
  const properties: ApiKeyValue[] = [];
  for (const p of mb.properties) {
    if (p.type === PROPERTY_GVK_REQUIRED) dependencies.push({ type: "olm.gvk", value: p.value.text });
    else if (p.type === PROPERTY_PACKAGE_REQUIRED) {
      let d: Record<string, unknown>;
      try {
        d = decodePropertyValue(p.type, p.value.value);
      } catch (e) {
        return `convert model properties to api dependencies: ${(e as Error).message}`;
      }
      const str = (x: unknown): string => quoteGoString(typeof x === "string" ? x : "");
      dependencies.push({
        type: "olm.package",
        value: `{"packageName":${str(d.packageName)},"version":${str(d.versionRange)}}`,
      });
    }
    if (p.type !== PROPERTY_BUNDLE_OBJECT && p.type !== PROPERTY_CSV_METADATA)
      properties.push({ type: p.type, value: p.value.text });
  }
  const gvk = (g: { group: string; version: string; kind: string }): ApiGroupVersionKind => ({
    group: g.group,
    version: g.version,
    kind: g.kind,
    plural: "",
  });
  return {
    csvName: mb.name,
    packageName: mb.package.name,
    channelName: mb.channel.name,
    csvJson,
    object: objects,
    bundlePath: mb.image,
    providedApis: props.gvks.map(gvk),
    requiredApis: props.gvksRequired.map(gvk),
    version: props.packages[0].version,
    skipRange: mb.skipRange,
    dependencies,
    properties,
    replaces: mb.replaces,
    skips: mb.skips,
    deprecation: dep(mb.deprecation),
  };
}
