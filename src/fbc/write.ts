/**
 * Writing catalogs byte for byte as opm does (alpha/declcfg/write.go): blobs grouped by package in
 * byte order of the package name (package, channels by name, bundles by name, custom blobs by
 * schema, deprecations), then package-less custom blobs. JSON is a stream of objects indented with
 * four spaces; YAML is each object's JSON converted by go-yaml v2, each prefixed with `---`.
 */
import { goQuote } from "../gojson/fmt.js";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { compareUtf8, indentCompactJson, quoteGoString } from "../gojson/encode.js";
import { toGoYaml } from "../yaml/index.js";
import { OpcatError } from "../errors/index.js";
import { writeDirectoryAtomic } from "../fsx/write.js";

export { writeDirectoryAtomic };
import type {
  Bundle,
  Channel,
  DeclarativeConfig,
  Deprecation,
  JsonObject,
  JsonValue,
  Meta,
  Package,
  Property,
} from "./types.js";

export type OutputFormat = "json" | "yaml";

type Blob =
  | { k: "package"; v: Package }
  | { k: "channel"; v: Channel }
  | { k: "bundle"; v: Bundle }
  | { k: "other"; v: Meta }
  | { k: "deprecation"; v: Deprecation };

interface PackageGroup {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  others: Meta[];
  deprecations: Deprecation[];
}

/** opm's configsByPackage: blobs with an empty package name are dropped (quirk), root custom blobs kept. */
function groupByPackage(cfg: DeclarativeConfig): { names: string[]; groups: Map<string, PackageGroup>; root: Meta[] } {
  const groups = new Map<string, PackageGroup>();
  const group = (name: string): PackageGroup => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { packages: [], channels: [], bundles: [], others: [], deprecations: [] }));
    return g;
  };
  const root: Meta[] = [];
  for (const p of cfg.packages) if (p.name !== "") group(p.name).packages.push(p);
  for (const c of cfg.channels) if (c.package !== "") group(c.package).channels.push(c);
  for (const b of cfg.bundles) if (b.package !== "") group(b.package).bundles.push(b);
  for (const o of cfg.others) {
    if (o.package === "") root.push(o);
    else group(o.package).others.push(o);
  }
  for (const d of cfg.deprecations) if (d.package !== "") group(d.package).deprecations.push(d);
  return { names: [...groups.keys()].sort(compareUtf8), groups, root };
}

function* orderedBlobs(names: string[], groups: Map<string, PackageGroup>, root: Meta[]): Generator<Blob> {
  for (const name of names) {
    const g = groups.get(name) as PackageGroup;
    for (const p of g.packages) yield { k: "package", v: p };
    for (const c of [...g.channels].sort((a, b) => compareUtf8(a.name, b.name))) yield { k: "channel", v: c };
    for (const b of [...g.bundles].sort((a, b) => compareUtf8(a.name, b.name))) yield { k: "bundle", v: b };
    for (const o of [...g.others].sort((a, b) => compareUtf8(a.schema, b.schema))) yield { k: "other", v: o };
    for (const d of g.deprecations) yield { k: "deprecation", v: d };
  }
  for (const o of root) yield { k: "other", v: o };
}

const qs = (s: string): string => quoteGoString(s);

function propertiesJson(props: Property[]): string {
  let s = "[";
  for (let i = 0; i < props.length; i++) {
    if (i > 0) s += ",";
    s += `{"type":${qs(props[i].type)},"value":${props[i].value.isMissing ? "null" : props[i].value.textOnce}}`;
  }
  return s + "]";
}

function base64(b: Uint8Array | null): string {
  return b === null ? "null" : `"${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64")}"`;
}

/** The compact JSON encoding of one blob, in Go struct-field order. */
export function blobToCompactJson(blob: Blob): string {
  switch (blob.k) {
    case "package": {
      const p = blob.v;
      let s = `{"schema":${qs(p.schema)},"name":${qs(p.name)},"defaultChannel":${qs(p.defaultChannel)}`;
      if (p.icon) s += `,"icon":{"base64data":${base64(p.icon.base64data)},"mediatype":${qs(p.icon.mediatype)}}`;
      if (p.description !== "") s += `,"description":${qs(p.description)}`;
      if (p.properties.length > 0) s += `,"properties":${propertiesJson(p.properties)}`;
      return s + "}";
    }
    case "channel": {
      const c = blob.v;
      let s = `{"schema":${qs(c.schema)},"name":${qs(c.name)},"package":${qs(c.package)},"entries":`;
      if (c.entries === null) s += "null";
      else {
        s += "[";
        c.entries.forEach((e, i) => {
          if (i > 0) s += ",";
          s += `{"name":${qs(e.name)}`;
          if (e.replaces !== "") s += `,"replaces":${qs(e.replaces)}`;
          if (e.skips.length > 0) s += `,"skips":[${e.skips.map(qs).join(",")}]`;
          if (e.skipRange !== "") s += `,"skipRange":${qs(e.skipRange)}`;
          s += "}";
        });
        s += "]";
      }
      if (c.properties.length > 0) s += `,"properties":${propertiesJson(c.properties)}`;
      return s + "}";
    }
    case "bundle": {
      const b = blob.v;
      let s = `{"schema":${qs(b.schema)}`;
      if (b.name !== "") s += `,"name":${qs(b.name)}`;
      if (b.package !== "") s += `,"package":${qs(b.package)}`;
      s += `,"image":${qs(b.image)}`;
      if (b.properties.length > 0) s += `,"properties":${propertiesJson(b.properties)}`;
      if (b.relatedImages.length > 0) {
        s +=
          `,"relatedImages":[` +
          `${b.relatedImages.map((r) => `{"name":${qs(r.name)},"image":${qs(r.image)}}`).join(",")}]`;
      }
      return s + "}";
    }
    case "deprecation": {
      const d = blob.v;
      let s = `{"schema":${qs(d.schema)},"package":${qs(d.package)},"entries":`;
      if (d.entries === null) s += "null";
      else {
        s +=
          "[" +
          d.entries
            .map((e) => {
              let r = `{"schema":${qs(e.reference.schema)}`;
              if (e.reference.name !== "") r += `,"name":${qs(e.reference.name)}`;
              return `{"reference":${r}},"message":${qs(e.message)}}`;
            })
            .join(",") +
          "]";
      }
      return s + "}";
    }
    case "other":
      return blob.v.blob.textOnce;
  }
}

/** The blob as a JSON value (objects in Go field order) for the YAML emitter. */
function blobToValue(blob: Blob): JsonValue {
  if (blob.k === "other") return blob.v.blob.value;
  return JSON.parse(blobToCompactJson(blob)) as JsonObject;
}

/** The catalog as opm's JSON or YAML stream, one blob (document) at a time, generated as it is read. */
export function* catalogChunks(cfg: DeclarativeConfig, format: OutputFormat): Generator<string> {
  const { names, groups, root } = groupByPackage(cfg);
  if (format === "json")
    for (const blob of orderedBlobs(names, groups, root))
      yield indentCompactJson(blobToCompactJson(blob), "    ") + "\n";
  else for (const blob of orderedBlobs(names, groups, root)) yield "---\n" + toGoYaml(blobToValue(blob));
}

/** The catalog's blobs as JSON values, in the order and with the keys of its JSON stream. */
export function* catalogValues(cfg: DeclarativeConfig): Generator<JsonValue> {
  const { names, groups, root } = groupByPackage(cfg);
  for (const blob of orderedBlobs(names, groups, root)) yield JSON.parse(blobToCompactJson(blob)) as JsonValue;
}

/** Writes a catalog as opm's JSON stream. */
export function writeJson(cfg: DeclarativeConfig, write: (chunk: string) => void): void {
  for (const c of catalogChunks(cfg, "json")) write(c);
}

/** Writes a catalog as opm's YAML stream (`---` before every document). */
export function writeYaml(cfg: DeclarativeConfig, write: (chunk: string) => void): void {
  for (const c of catalogChunks(cfg, "yaml")) write(c);
}

/** The whole catalog as one string in the given format. */
export function formatCatalog(cfg: DeclarativeConfig, format: OutputFormat): string {
  return [...catalogChunks(cfg, format)].join("");
}

/**
 * Writes a catalog to a stream (e.g. process.stdout), respecting back-pressure. The output is
 * produced blob by blob and written in batches of about 256 KiB: nothing written is kept.
 */
export async function writeCatalog(
  cfg: DeclarativeConfig,
  format: OutputFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  let pending: string[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const chunk = pending.join("");
    pending = [];
    size = 0;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  };
  for (const c of catalogChunks(cfg, format)) {
    pending.push(c);
    size += c.length;
    if (size > 1 << 18) await flush();
  }
  await flush();
}

/**
 * opm's WriteFS (used by `migrate`): `<dir>/<package>/catalog.<ext>` per package and
 * `<dir>/catalog.<ext>` for package-less custom blobs.
 */
export function writeCatalogDirectory(cfg: DeclarativeConfig, dir: string, format: OutputFormat): string[] {
  return writeDirectoryAtomic(dir, (tmp) =>
    writeCatalogFiles(cfg, tmp, format).map((f) => join(dir, relative(tmp, f))),
  );
}

function writeCatalogFiles(cfg: DeclarativeConfig, dir: string, format: OutputFormat): string[] {
  const { names, groups, root } = groupByPackage(cfg);
  const ext = format === "json" ? ".json" : ".yaml";
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const name of names) {
    if (name === "." || name === ".." || name.includes("/") || name.includes("\\") || name.includes("\0")) {
      throw new OpcatError(
        "FBC_WRITE_INVALID_PACKAGE_NAME",
        `invalid package name ${goQuote(name)}: must be a single local path element`,
        { kind: "invalid" },
      );
    }
    const sub: DeclarativeConfig = { ...groups.get(name), others: groups.get(name)?.others ?? [] } as DeclarativeConfig;
    mkdirSync(join(dir, name), { recursive: true });
    const file = join(dir, name, "catalog" + ext);
    writeFileSync(file, formatCatalog(sub, format));
    written.push(file);
  }
  if (root.length > 0) {
    const file = join(dir, "catalog" + ext);
    writeFileSync(
      file,
      formatCatalog({ packages: [], channels: [], bundles: [], deprecations: [], others: root }, format),
    );
    written.push(file);
  }
  return written;
}

/** True when `dir` does not exist or is an empty directory. */
export function isEmptyOrMissingDir(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw e; // ENOTDIR, EACCES…: an I/O error with the path
  }
}
