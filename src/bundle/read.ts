/**
 * Reading a registry+v1 bundle directory as opm's bundle parser does (operator-registry
 * pkg/registry/parse.go, bundle.go, csv.go): the manifests, the metadata files and the properties
 * derived from them. Every failure is an {@link OpcatError} carrying opm's message and the file
 * concerned; files opm skips with a warning are listed in {@link RegistryBundle.warnings}.
 */
import { readdirSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { goFloatV } from "../gojson/float.js";
import { compareUtf8, indentCompactJson, quoteGoString } from "../gojson/encode.js";
import { OpcatError, problem, type Problem } from "../errors/index.js";
import { readInputTextSync } from "../fsx/readfile.js";
import type { JsonObject, JsonValue } from "../fbc/types.js";
import {
  decodeFirstDocument,
  encodeGoJson,
  encodeUnstructured,
  mapField,
  valueNode,
  zeroIntegers,
  type DecodeResult,
  type GoNode,
} from "./decode.js";
import { goErrnoText } from "../gojson/goerrno.js";
import { goJsonKind, goUnmarshalTypeError } from "../gojson/unmarshal.js";
import {
  goDecode,
  goSlice,
  goSliceItems,
  goUnmarshal,
  type GoDecodeResult,
  type GoStructType,
  type GoType,
} from "../gojson/structdecode.js";
import {
  GO_ANNOTATIONS_FILE,
  GO_CRD,
  GO_DEPENDENCIES_FILE,
  GO_OWNED_REQUIRED,
  GO_PROPERTIES_FILE,
  GO_REGISTRY_PROPERTY,
} from "./gotypes.js";

export const ANNOTATION_PACKAGE = "operators.operatorframework.io.bundle.package.v1";
export const ANNOTATION_CHANNELS = "operators.operatorframework.io.bundle.channels.v1";
export const ANNOTATION_DEFAULT_CHANNEL = "operators.operatorframework.io.bundle.channel.default.v1";
/** The CSV annotation holding a JSON array of extra bundle properties. */
export const CSV_PROPERTIES_ANNOTATION = "olm.properties";

/** A property or dependency as opm's parser holds it: the value is Go's raw JSON bytes ("" when absent). */
export interface RawProperty {
  readonly type: string;
  readonly value: string;
}

/** One manifest of the bundle (the first document of a file in `manifests/`). */
export interface BundleManifest {
  /** Path relative to the bundle directory, e.g. `manifests/foo.crd.yaml`. */
  readonly file: string;
  readonly object: JsonObject;
  readonly kind: string;
  readonly apiVersion: string;
  /** Go's json.Marshal of the object: keys sorted, compact, HTML escaping on. */
  readonly json: string;
}

/** An API a bundle provides or requires (opm's APIKey). */
export interface ApiKey {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
}

/** A parsed registry+v1 bundle directory (opm's `registry.Bundle` after `bundleParser.Parse`). */
export interface RegistryBundle {
  readonly dir: string;
  /** The CSV's `metadata.name`. */
  readonly name: string;
  /** The package annotation. */
  readonly package: string;
  readonly channels: string[];
  readonly defaultChannel: string;
  /** Files (relative to the bundle directory) the annotations, dependencies and properties came from. */
  readonly annotationsFile: string;
  readonly dependenciesFile?: string;
  readonly propertiesFile?: string;
  /** Manifests in file-name order; only the first ClusterServiceVersion is kept. */
  readonly objects: BundleManifest[];
  readonly csv: BundleManifest;
  /** properties.yaml properties, then the derived ones (olm.package, CSV olm.properties, olm.gvk), de-duplicated. */
  readonly properties: RawProperty[];
  readonly dependencies: RawProperty[];
  /** APIs provided by CRD manifests (v1 first, then v1beta1) and owned API services, de-duplicated. */
  readonly providedApis: ApiKey[];
  /** Files opm skips with a warning (undecodable manifests, extra documents, a bad olm.properties annotation). */
  readonly warnings: Problem[];
}

/** Thrown for a bundle opm cannot read; `file` (relative to the bundle directory) is where the problem is. */
export function bundleError(
  code: string,
  message: string,
  dir: string,
  file?: string,
  hint?: string,
  warnings: Problem[] = [],
): OpcatError {
  const loc = file !== undefined ? { file: join(dir, file), line: 0, index: 0 } : { file: dir, line: 0, index: 0 };
  return new OpcatError(code, message, {
    problems: [problem(code, message, { loc, hint }), ...warnings],
    kind: "invalid",
  });
}

// ---------------------------------------------------------------------------------------------
// Go json helpers over GoNodes

type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

const CSV_PROPERTIES = goSlice(GO_REGISTRY_PROPERTY);

function typeError(jsonType: string, structName: string, field: string, goType: string): string {
  return goUnmarshalTypeError(jsonType, goType, { struct: structName, field });
}

/**
 * sigs.k8s.io/yaml.Unmarshal or json.Decoder.Decode of a file's first document into `type`:
 * goDecode with YAMLToJSON's string coercion for YAML, goUnmarshal on the verbatim text for JSON.
 */
function decodeNode(node: GoNode, type: GoType): GoDecodeResult {
  return node.fromYaml ? goDecode(node.value, type, { coerceStrings: true }) : goUnmarshal(node.raw(), type);
}

/** The text of a decoded json.RawMessage ("" when nil): verbatim from goUnmarshal, re-encoded from goDecode. */
function rawText(v: unknown, fromYaml: boolean): string {
  if (v === undefined) return "";
  return fromYaml ? encodeGoJson(v as JsonValue) : (v as string);
}

/** `{type, value json.RawMessage}` items of a decoded list (nil items and zero structs as empty). */
function rawProperties(list: unknown, fromYaml: boolean): RawProperty[] {
  const items = fromYaml ? ((list as unknown[] | null) ?? []) : goSliceItems(list);
  return items.map((x) => {
    const o = (x ?? {}) as { type?: string; value?: unknown };
    return { type: o.type ?? "", value: rawText(o.value, fromYaml) };
  });
}

/** registry.PropertiesFile / DependenciesFile: the `{type, value}` list under `listField`. */
function decodeTypedList(root: GoNode, type: GoStructType, listField: string): Decoded<RawProperty[]> {
  const r = decodeNode(root, type);
  if (!r.ok) return r;
  const file = r.value as Record<string, unknown> | undefined;
  return { ok: true, value: rawProperties(file?.[listField], root.fromYaml) };
}

interface Annotations {
  package: string;
  channels: string;
  defaultChannel: string;
}

function decodeAnnotations(root: GoNode): Decoded<Annotations> {
  const r = decodeNode(root, GO_ANNOTATIONS_FILE);
  if (!r.ok) return r;
  const a = ((r.value as { annotations?: Record<string, string | undefined> } | undefined)?.annotations ??
    {}) as Record<string, string | undefined>;
  return {
    ok: true,
    value: {
      package: a[ANNOTATION_PACKAGE] ?? "",
      channels: a[ANNOTATION_CHANNELS] ?? "",
      defaultChannel: a[ANNOTATION_DEFAULT_CHANNEL] ?? "",
    },
  };
}

/** Decodes a file's first document into a struct; a failing JSON stream is re-read as YAML as apimachinery does. */
function decodeInto<T>(res: DecodeResult, decode: (n: GoNode) => Decoded<T>): Decoded<T> {
  if (!res.ok) return { ok: false, error: res.error };
  const first = decode(res.node);
  if (first.ok || !res.yamlFallback) return first;
  const again = res.yamlFallback();
  if (!again.ok) return first;
  const second = decode(again.node);
  return second.ok ? second : first;
}

// ---------------------------------------------------------------------------------------------
// Reading

function readText(path: string): string | undefined {
  try {
    // a FIFO or a device in a bundle directory is refused (IO_NOT_REGULAR), never read
    return readInputTextSync(path, { what: "bundle file" });
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    return undefined;
  }
}

function listDir(dir: string, rel: string, bundleDir: string): Dirent[] {
  try {
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => compareUtf8(a.name, b.name));
    return entries;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // os.DirFS + fs.Sub report the sub-directory itself as ".".
    const reason = goErrnoText(err);
    throw bundleError(
      "BUNDLE_DIR_UNREADABLE",
      `open .: ${reason}`,
      bundleDir,
      rel,
      `the bundle needs a ${rel}/ directory`,
    );
  }
}

function isDirEntry(e: Dirent, parent: string): boolean {
  if (e.isDirectory()) return true;
  if (!e.isSymbolicLink()) return false;
  try {
    return statSync(join(parent, e.name)).isDirectory();
  } catch {
    return false;
  }
}

/** apimachinery's `GroupVersionKind()`: the version part of apiVersion, or undefined when it does not parse. */
function parseApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return { group: "", version: apiVersion };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return undefined;
}

function decodeManifest(
  text: string,
): { ok: true; object: JsonObject; kind: string; apiVersion: string } | { ok: false; error: string } {
  const res = decodeFirstDocument(text);
  if (!res.ok) return res;
  const v = res.node.fromYaml && /-0|-\./.test(text) ? zeroIntegers(res.node.value) : res.node.value;
  if (v === null) return { ok: false, error: "Object 'Kind' is missing in 'null'" };
  if (typeof v !== "object" || Array.isArray(v))
    return { ok: false, error: goUnmarshalTypeError(goJsonKind(v), "map[string]interface {}") };
  const kind = typeof v.kind === "string" ? v.kind : "";
  if (kind === "") return { ok: false, error: `Object 'Kind' is missing in '${res.node.raw()}'` };
  return { ok: true, object: v, kind, apiVersion: typeof v.apiVersion === "string" ? v.apiVersion : "" };
}

const CSV_KIND = "ClusterServiceVersion";
const CRD_KIND = "CustomResourceDefinition";
const CRD_GROUP = "apiextensions.k8s.io";

interface DecodedCrd {
  spec: {
    group: string;
    names: { plural: string; kind: string };
    version?: string;
    versions: { name: string }[] | null;
  };
}

/**
 * The (group, version, kind, plural) keys a CRD manifest provides: its JSON decoded as
 * apimachinery's UniversalDeserializer does (case-sensitive field names, members in sorted order as
 * the unstructured object is marshalled), over the fields opm reads (bundle/gotypes.ts GO_CRD).
 */
function crdApis(m: BundleManifest, version: "v1" | "v1beta1"): ApiKey[] | string {
  const r = goDecode(m.object, GO_CRD[version], { sortedKeys: true, caseSensitive: true });
  if (!r.ok) return r.error;
  const { spec } = r.value as DecodedCrd;
  const { group } = spec;
  const { kind, plural } = spec.names;
  const out: ApiKey[] = (spec.versions ?? []).map((v) => ({ group, version: v.name, kind, plural }));
  if (version === "v1beta1" && spec.version !== "") out.push({ group, version: spec.version ?? "", kind, plural });
  return out;
}

function apiKeyString(k: ApiKey): string {
  return `${k.group}/${k.version}/${k.kind} (${k.plural})`;
}

function apiKeyId(k: ApiKey): string {
  return `${k.group}\u0000${k.version}\u0000${k.kind}\u0000${k.plural}`;
}

/** fmt's `%v` of opm's `map[APIKey]struct{}` (keys sorted field by field). */
function formatApiMap(keys: readonly ApiKey[]): string {
  const sorted = [...keys].sort(
    (a, b) =>
      compareUtf8(a.group, b.group) ||
      compareUtf8(a.version, b.version) ||
      compareUtf8(a.kind, b.kind) ||
      compareUtf8(a.plural, b.plural),
  );
  return "map[" + sorted.map((k) => `${apiKeyString(k)}:{}`).join(" ") + "]";
}

function dedupeApis(keys: ApiKey[]): ApiKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => {
    const id = apiKeyId(k);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The CSV `spec` as Go's `map[string]*json.RawMessage` sees it, or Go's error. */
export function csvSpecMap(csv: BundleManifest): { ok: true; spec: GoNode | undefined } | { ok: false; error: string } {
  if (!Object.hasOwn(csv.object, "spec")) return { ok: false, error: "unexpected end of JSON input" };
  const spec = valueNode(csv.object.spec as JsonValue);
  if (spec.value === null) return { ok: true, spec: undefined };
  if (!spec.entries)
    return { ok: false, error: goUnmarshalTypeError(goJsonKind(spec.value), "map[string]*json.RawMessage") };
  return { ok: true, spec };
}

export interface DefinitionKey {
  group: string;
  kind: string;
  name: string;
  version: string;
}

/** csv.GetCustomResourceDefintions / GetApiServiceDefinitions: `{owned, required}` under `key` of the spec. */
export function csvDefinitions(
  spec: GoNode | undefined,
  key: string,
): { ok: true; owned: DefinitionKey[]; required: DefinitionKey[] } | { ok: false; error: string } {
  const node = spec ? mapField(spec, key) : undefined;
  if (node === undefined) return { ok: true, owned: [], required: [] };
  const r = goDecode(node.value, GO_OWNED_REQUIRED, { sortedKeys: true });
  if (!r.ok) return r;
  const lists: DefinitionKey[][] = [];
  for (const f of ["owned", "required"] as const) {
    const items = ((r.value as Record<string, (DefinitionKey | null)[] | null>)[f] ?? []) as (DefinitionKey | null)[];
    if (items.includes(null)) return { ok: false, error: `nil entry in spec.${key}.${f}` };
    lists.push(items as DefinitionKey[]);
  }
  return { ok: true, owned: lists[0], required: lists[1] };
}

/** csv.GetVersion: `spec.version` as a string ("" when absent), or Go's error. */
export function csvVersion(spec: GoNode | undefined): { ok: true; value: string } | { ok: false; error: string } {
  const n = spec ? mapField(spec, "version") : undefined;
  if (n === undefined || n.value === null) return { ok: true, value: "" };
  if (typeof n.value !== "string") return { ok: false, error: goUnmarshalTypeError(goJsonKind(n.value), "string") };
  return { ok: true, value: n.value };
}

/** csv.GetRelease: `spec.release` as a string, a number converted to a string, or an error. */
export function csvRelease(spec: GoNode | undefined): { ok: true; value: string } | { ok: false; error: string } {
  const n = spec ? mapField(spec, "release") : undefined;
  if (n === undefined || n.value === null) return { ok: true, value: "" };
  if (typeof n.value === "string") return { ok: true, value: n.value };
  if (typeof n.value === "number") {
    const num = n.value;
    // Go: num == float64(int64(num)) → "%d", else "%g".
    if (Number.isInteger(num) && Math.abs(num) < 2 ** 63) return { ok: true, value: BigInt(num).toString() };
    return { ok: true, value: goFloatV(num) }; // fmt %g
  }
  return { ok: false, error: "release field must be a string or number" };
}

/**
 * Checks the CSV's apiVersion and metadata as Go's typed decode (TypeMeta, ObjectMeta) would and
 * returns prettyunmarshaler's message for the first type error, where `offset` is the byte offset
 * in the CSV's JSON (after a mistyped literal, just after the `{`/`[` of a mistyped container).
 */
function checkCsvMeta(csv: BundleManifest): string | undefined {
  const at = (path: string[], v: JsonValue, msg: string): string => prettyTypeError(csv, path, v, msg);
  const av = csv.object.apiVersion;
  if (av !== undefined && av !== null && typeof av !== "string")
    return at(["apiVersion"], av, typeError(goJsonKind(av), "TypeMeta", "apiVersion", "string"));
  const meta = csv.object.metadata;
  if (meta === undefined || meta === null) return undefined;
  if (typeof meta !== "object" || Array.isArray(meta))
    return at(["metadata"], meta, typeError(goJsonKind(meta), "", "metadata", "v1.ObjectMeta"));
  for (const f of Object.keys(meta).sort(compareUtf8)) {
    const v = meta[f];
    if (v === null) continue;
    if (f === "name" || f === "namespace" || f === "generateName") {
      if (typeof v !== "string")
        return at(["metadata", f], v, typeError(goJsonKind(v), "ObjectMeta", `metadata.${f}`, "string"));
    } else if (f === "annotations" || f === "labels") {
      if (typeof v !== "object" || Array.isArray(v))
        return at(["metadata", f], v, typeError(goJsonKind(v), "ObjectMeta", `metadata.${f}`, "map[string]string"));
      for (const k of Object.keys(v).sort(compareUtf8)) {
        const x = v[k];
        if (x !== null && typeof x !== "string")
          return at(["metadata", f, k], x, typeError(goJsonKind(x), "ObjectMeta", `metadata.${f}`, "string"));
      }
    }
  }
  return undefined;
}

const SENTINEL = "\u0000opcat-sentinel\u0000";

/** prettyunmarshaler.NewJSONUnmarshalError(data, err).Pretty() for a type error at `path` of the CSV JSON. */
function prettyTypeError(csv: BundleManifest, path: string[], bad: JsonValue, msg: string): string {
  const clone = JSON.parse(JSON.stringify(csv.object)) as JsonObject;
  let o: JsonObject = clone;
  for (let i = 0; i < path.length - 1; i++) o = o[path[i]] as JsonObject;
  o[path[path.length - 1]] = SENTINEL;
  const marked = encodeUnstructured(clone);
  const startChars = marked.indexOf(quoteGoString(SENTINEL, true));
  const start = Buffer.byteLength(marked.slice(0, startChars), "utf8");
  const literal = encodeUnstructured(bad);
  const offset = bad !== null && typeof bad === "object" ? start + 1 : start + Buffer.byteLength(literal, "utf8");
  const data = Buffer.from(csv.json, "utf8");
  const marker = " <==";
  const out = `${msg} at offset ${offset} (indicated by${marker})\n`;
  const pretty = Buffer.from(indentCompactJson(csv.json, "    "), "utf8");
  if (offset === data.length) return out + pretty.toString("utf8") + marker;
  let p = 0;
  let pOffset = 0;
  for (let d = 0; d < data.length; d++) {
    if (d === offset) {
      pOffset = p;
      break;
    }
    while (pretty[p] !== data[d]) {
      p++;
      if (p >= pretty.length) return msg;
    }
    p++;
  }
  return out + pretty.subarray(0, pOffset).toString("utf8") + `${marker} ` + pretty.subarray(pOffset).toString("utf8");
}

/** The CSV's annotations (`metadata.annotations`, string values only). */
export function csvAnnotations(csv: BundleManifest): Record<string, string> {
  const meta = csv.object.metadata;
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return {};
  const a = meta.annotations;
  if (a === null || typeof a !== "object" || Array.isArray(a)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) if (typeof v === "string") out[k] = v;
  return out;
}

/**
 * Parses the CSV `olm.properties` annotation like Go's json.Unmarshal into `[]Property`: values
 * are kept verbatim; on a type error the elements decoded so far are kept (Go fills the slice
 * before reporting the error).
 */
function parseCsvPropertiesAnnotation(text: string): { props: RawProperty[]; error?: string } {
  const r = goUnmarshal(text, CSV_PROPERTIES);
  return r.ok ? { props: rawProperties(r.value, false) } : { props: rawProperties(r.value, false), error: r.error };
}

/** Go's propertySet: de-duplicated by type and raw value, first occurrence kept. */
function propertySet(props: readonly RawProperty[]): RawProperty[] {
  const seen = new Set<string>();
  const out: RawProperty[] = [];
  for (const p of props) {
    const k = `${p.type}\u0000${p.value}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(p);
  }
  return out;
}

/** The package property's JSON as opm builds it: `{"packageName","version"[,"release"]}`, no HTML escaping. */
export function packagePropertyValue(pkg: string, version: string, release: string): string {
  let s = `{"packageName":${q(pkg)},"version":${q(version)}`;
  if (release !== "") s += `,"release":${q(release)}`;
  return s + "}";
}

export function packageRequiredPropertyValue(pkg: string, versionRange: string): string {
  return `{"packageName":${q(pkg)},"versionRange":${q(versionRange)}}`;
}

export function gvkPropertyValue(group: string, kind: string, version: string): string {
  return `{"group":${q(group)},"kind":${q(kind)},"version":${q(version)}}`;
}

function q(s: string): string {
  return quoteGoString(s, false);
}

/**
 * Reads a registry+v1 bundle directory (`manifests/`, `metadata/annotations.yaml`, optional
 * `metadata/dependencies.yaml` and `metadata/properties.yaml`) exactly as opm's bundle parser.
 * Throws an {@link OpcatError} (exit code 1) with opm's message and the file concerned.
 */
export function readBundleDirectory(dir: string): RegistryBundle {
  const warnings: Problem[] = [];
  const warn = (file: string, message: string): void => {
    warnings.push(
      problem("BUNDLE_FILE_SKIPPED", message, {
        loc: { file: join(dir, file), line: 0, index: 0 },
        severity: "warning",
      }),
    );
  };
  const fail = (code: string, message: string, file?: string, hint?: string): OpcatError =>
    bundleError(code, message, dir, file, hint, warnings);

  // manifests/: direct children that are files, names not starting with ".", in name order.
  const manifestsDir = join(dir, "manifests");
  const objects: BundleManifest[] = [];
  let csvFound = false;
  for (const e of listDir(manifestsDir, "manifests", dir)) {
    if (isDirEntry(e, manifestsDir) || e.name.startsWith(".")) continue;
    const rel = `manifests/${e.name}`;
    const text = readText(join(manifestsDir, e.name));
    if (text === undefined) {
      warn(rel, `failed to decode: unable to read file ${e.name}`);
      continue;
    }
    const d = decodeManifest(text);
    if (!d.ok) {
      warn(rel, `failed to decode: ${d.error}`);
      continue;
    }
    if (d.kind === CSV_KIND) {
      if (csvFound) continue;
      csvFound = true;
    }
    objects.push({
      file: rel,
      object: d.object,
      kind: d.kind,
      apiVersion: d.apiVersion,
      json: encodeUnstructured(d.object),
    });
  }
  if (objects.length === 0)
    throw fail(
      "BUNDLE_NO_OBJECTS",
      "no bundle objects found",
      "manifests",
      "no file in manifests/ could be read as a Kubernetes object",
    );

  // Bundle.cache(): the CSV (found through GroupVersionKind, so a bad apiVersion hides it), then the CRDs.
  const csv = objects.find((o) => parseApiVersion(o.apiVersion) !== undefined && o.kind === CSV_KIND);
  if (csv) {
    const err = checkCsvMeta(csv);
    if (err !== undefined) throw fail("BUNDLE_CSV_INVALID", err, csv.file);
  }
  const v1: ApiKey[] = [];
  const v1beta1: ApiKey[] = [];
  for (const o of objects) {
    const gv = parseApiVersion(o.apiVersion);
    if (!gv || o.kind !== CRD_KIND) continue;
    if (gv.version !== "v1" && gv.version !== "v1beta1") continue;
    if (gv.group !== CRD_GROUP) {
      throw fail(
        "BUNDLE_CRD_INVALID",
        `error decoding ${gv.version} CRD: no kind "${CRD_KIND}" is registered ` +
          `for version "${o.apiVersion}" in scheme "pkg/registry/bundle.go:24"`,
        o.file,
      );
    }
    const apis = crdApis(o, gv.version as "v1" | "v1beta1");
    if (typeof apis === "string") throw fail("BUNDLE_CRD_INVALID", `error decoding ${gv.version} CRD: ${apis}`, o.file);
    (gv.version === "v1" ? v1 : v1beta1).push(...apis);
  }
  if (!csv)
    throw fail("BUNDLE_NO_CSV", "no csv in bundle", "manifests", "the bundle needs a ClusterServiceVersion manifest");
  const meta = csv.object.metadata;
  const name =
    meta !== null && typeof meta === "object" && !Array.isArray(meta) && typeof meta.name === "string" ? meta.name : "";

  // AllProvidedAPIsInBundle
  const specRes = csvSpecMap(csv);
  const apiCheck = (): string | undefined => {
    if (!specRes.ok)
      return `error getting apiservice definitions: error unmarshaling into object map: ${specRes.error}`;
    const apiSvc = csvDefinitions(specRes.spec, "apiservicedefinitions");
    if (!apiSvc.ok) return `error getting apiservice definitions: ${apiSvc.error}`;
    return undefined;
  };
  const apiErr = apiCheck();
  if (apiErr !== undefined)
    throw fail("BUNDLE_CSV_INVALID", `error checking provided apis in bundle ${name}: ${apiErr}`, csv.file);
  const spec = (specRes as { spec: GoNode | undefined }).spec;
  const apiSvc = csvDefinitions(spec, "apiservicedefinitions") as { owned: DefinitionKey[]; required: DefinitionKey[] };
  const providedApis = dedupeApis([
    ...v1,
    ...v1beta1,
    ...apiSvc.owned.map((a) => ({ group: a.group, version: a.version, kind: a.kind, plural: a.name })),
  ]);
  const crds = csvDefinitions(spec, "customresourcedefinitions");
  if (!crds.ok)
    throw fail("BUNDLE_CSV_INVALID", `error checking provided apis in bundle ${name}: ${crds.error}`, csv.file);
  const provided = new Set(providedApis.map(apiKeyId));
  for (const c of crds.owned) {
    const dot = c.name.indexOf(".");
    if (dot < 0)
      throw fail(
        "BUNDLE_CSV_INVALID",
        `error checking provided apis in bundle ${name}: couldn't parse plural.group from crd name: ${c.name}`,
        csv.file,
      );
    const key: ApiKey = {
      group: c.name.slice(dot + 1),
      version: c.version,
      kind: c.kind,
      plural: c.name.slice(0, dot),
    };
    if (!provided.has(apiKeyId(key))) {
      throw fail(
        "BUNDLE_MISSING_CRD",
        `error checking provided apis in bundle ${name}: couldn't find ` +
          `${apiKeyString(key)} in bundle. found: ${formatApiMap(providedApis)}`,
        csv.file,
        `spec.customresourcedefinitions.owned lists ${c.name} ${c.version} ${c.kind}, ` +
          `but no CustomResourceDefinition manifest in manifests/ provides it`,
      );
    }
  }

  // metadata/: every entry, in name order; the first file of each kind that decodes and is non-empty.
  const metadataDir = join(dir, "metadata");
  let annotations: Annotations | undefined;
  let annotationsFile = "";
  let deps: RawProperty[] | undefined;
  let depsFile: string | undefined;
  let props: RawProperty[] | undefined;
  let propsFile: string | undefined;
  for (const e of listDir(metadataDir, "metadata", dir)) {
    if (annotations && deps && props) break;
    if (isDirEntry(e, metadataDir)) continue;
    const text = readText(join(metadataDir, e.name));
    if (text === undefined) continue;
    const rel = `metadata/${e.name}`;
    const res = decodeFirstDocument(text);
    if (!annotations) {
      const a = decodeInto(res, decodeAnnotations);
      if (a.ok && (a.value.package !== "" || a.value.channels !== "" || a.value.defaultChannel !== "")) {
        annotations = a.value;
        annotationsFile = rel;
      }
    }
    if (!deps) {
      const d = decodeInto(res, (n) => decodeTypedList(n, GO_DEPENDENCIES_FILE, "dependencies"));
      if (d.ok && d.value.length > 0) {
        deps = d.value;
        depsFile = rel;
      }
    }
    if (!props) {
      const p = decodeInto(res, (n) => decodeTypedList(n, GO_PROPERTIES_FILE, "properties"));
      if (p.ok && p.value.length > 0) {
        props = p.value;
        propsFile = rel;
      }
    }
  }
  if (!annotations) {
    throw fail(
      "BUNDLE_NO_ANNOTATIONS",
      "Could not find annotations file",
      "metadata",
      `no file in metadata/ has an "annotations" map with ${ANNOTATION_PACKAGE} (usually metadata/annotations.yaml)`,
    );
  }

  // derivedProperties
  const derived: RawProperty[] = [];
  const annotationsOfCsv = csvAnnotations(csv);
  if (Object.hasOwn(annotationsOfCsv, CSV_PROPERTIES_ANNOTATION)) {
    const parsed = parseCsvPropertiesAnnotation(annotationsOfCsv[CSV_PROPERTIES_ANNOTATION]);
    if (parsed.error !== undefined) warn(csv.file, `failed to unmarshal csv annotation properties: ${parsed.error}`);
    derived.push(...parsed.props);
  }
  if (annotations.package !== "") {
    const version = csvVersion(spec);
    if (!version.ok)
      throw fail(
        "BUNDLE_CSV_VERSION",
        `failed to derive properties: ${version.error}`,
        csv.file,
        "spec.version of the ClusterServiceVersion must be a string (quote it in YAML)",
      );
    const release = csvRelease(spec);
    if (!release.ok) throw fail("BUNDLE_CSV_RELEASE", `failed to derive properties: ${release.error}`, csv.file);
    derived.unshift({
      type: "olm.package",
      value: packagePropertyValue(annotations.package, version.value, release.value),
    });
  }
  for (const api of providedApis)
    derived.push({ type: "olm.gvk", value: gvkPropertyValue(api.group, api.kind, api.version) });

  return {
    dir,
    name,
    package: annotations.package,
    channels: annotations.channels.split(","),
    defaultChannel: annotations.defaultChannel,
    annotationsFile,
    dependenciesFile: depsFile,
    propertiesFile: propsFile,
    objects,
    csv,
    properties: propertySet([...(props ?? []), ...propertySet(derived)]),
    dependencies: deps ?? [],
    providedApis,
    warnings,
  };
}
