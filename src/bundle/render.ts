/**
 * opm's rendering of a parsed registry+v1 bundle into an `olm.bundle` blob (operator-registry
 * pkg/registry/registry_to_model.go ObjectsAndPropertiesFromBundle, alpha/action/render.go
 * bundleToDeclcfg, getRelatedImages, templateBundleImageRef, moveBundleObjectsToEndOfPropertySlices).
 */
import { compareUtf8 } from "../gojson/encode.js";
import { goSortSlice } from "../gojson/sort.js";
import { findJsonValueEnd } from "../gojson/scan.js";
import { OpcatError } from "../errors/index.js";
import { RawJson } from "../fbc/rawjson.js";
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from "../fbc/properties.js";
import { SCHEMA_BUNDLE, type Bundle, type Property, type RelatedImage } from "../fbc/types.js";
import { mapField, type GoNode } from "./decode.js";
import { GO_CSV_SPEC } from "./gotypes.js";
import { GO_PROPERTY_GVK, GO_PROPERTY_PACKAGE, GO_RELATED_IMAGE } from "../fbc/gotypes.js";
import { goDecode, goSlice, goUnmarshal, type GoStructType } from "../gojson/structdecode.js";
import {
  bundleError,
  csvDefinitions,
  csvRelease,
  csvSpecMap,
  csvVersion,
  gvkPropertyValue,
  packagePropertyValue,
  packageRequiredPropertyValue,
  type ApiKey,
  type RawProperty,
  type RegistryBundle,
} from "./read.js";
import { parseImageRefTemplate, TemplateError, type ImageRefTemplate } from "./template.js";
import { goQuote } from "../gojson/fmt.js";

export interface RenderBundleOptions {
  /** The bundle image reference (opm: the image a bundle image was pulled from; "" for a directory). */
  image?: string;
  /**
   * opm's `--alpha-image-ref-template`: a Go text/template over `{{.Package}}`, `{{.Name}}`
   * (the CSV name) and `{{.Version}}` whose result becomes the bundle image.
   */
  imageRefTemplate?: string | ImageRefTemplate;
  /** Run the migrations up to and including this level (opm's `--migrate-level`). */
  migrateLevel?: string;
}

type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** json.Unmarshal of raw property text into a struct of string fields (property.GVK, property.Package). */
function unmarshalStringStruct<K extends string>(raw: string, type: GoStructType): Decoded<Record<K, string>> {
  const r = goUnmarshal(raw, type);
  if (!r.ok) return r;
  const o = (r.value ?? {}) as Record<string, string | undefined>;
  return {
    ok: true,
    value: Object.fromEntries(type.fields.map((f) => [f.json, o[f.json] ?? ""])) as Record<K, string>,
  };
}

const RELATED_IMAGES = goSlice(GO_RELATED_IMAGE);

function parseError(idx: number, type: string, err: string): string {
  return `parse property[${idx}] of type ${goQuote(type)}: ${err}`;
}

/** Compact JSON (whitespace outside strings removed), as Go's encoder writes a json.RawMessage. */
function compactJson(raw: string): string {
  if (!/[ \t\r\n]/.test(raw)) return raw;
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      const end = findJsonValueEnd(raw, i);
      out += raw.slice(i, end);
      i = end - 1;
    } else if (c !== " " && c !== "\t" && c !== "\r" && c !== "\n") out += c;
  }
  return out;
}

function gvkId(g: Record<"group" | "kind" | "version", string>): string {
  return `${g.group}\u0000${g.kind}\u0000${g.version}`;
}

/** ObjectsAndPropertiesFromBundle: the bundle's final property list, sorted by (type, raw value). */
function objectsAndProperties(b: RegistryBundle, fail: (msg: string) => OpcatError): RawProperty[] {
  const provided = new Map<string, Record<"group" | "kind" | "version", string>>();
  const required = new Map<string, Record<"group" | "kind" | "version", string>>();
  let packageProp: RawProperty | undefined;
  const others: RawProperty[] = [];
  b.properties.forEach((p, i) => {
    if (p.type === "olm.gvk") {
      const v = unmarshalStringStruct<"group" | "kind" | "version">(p.value, GO_PROPERTY_GVK);
      if (!v.ok) throw fail(parseError(i, p.type, v.error));
      provided.set(gvkId(v.value), v.value);
    } else if (p.type === "olm.package") {
      const v = unmarshalStringStruct<"packageName" | "version" | "release">(p.value, GO_PROPERTY_PACKAGE);
      if (!v.ok) throw fail(parseError(i, p.type, v.error));
      packageProp = {
        type: "olm.package",
        value: packagePropertyValue(v.value.packageName, v.value.version, v.value.release),
      };
    } else others.push(p);
  });
  const packageRequired: RawProperty[] = [];
  b.dependencies.forEach((p, i) => {
    if (p.type === "olm.gvk") {
      const v = unmarshalStringStruct<"group" | "kind" | "version">(p.value, GO_PROPERTY_GVK);
      if (!v.ok) throw fail(parseError(i, p.type, v.error));
      required.set(gvkId(v.value), v.value);
    } else if (p.type === "olm.package") {
      const v = unmarshalStringStruct<"packageName" | "version" | "release">(p.value, GO_PROPERTY_PACKAGE);
      if (!v.ok) throw fail(parseError(i, p.type, v.error));
      packageRequired.push({
        type: "olm.package.required",
        value: packageRequiredPropertyValue(v.value.packageName, v.value.version),
      });
    } else others.push(p);
  });
  const spec = csvSpecMap(b.csv);
  if (!spec.ok) throw fail(`get version: ${spec.error}`);
  const version = csvVersion(spec.spec);
  if (!version.ok) throw fail(`get version: ${version.error}`);
  const release = csvRelease(spec.spec);
  if (!release.ok) throw fail(`get release: ${release.error}`);
  for (const api of b.providedApis) {
    const g = { group: api.group, kind: api.kind, version: api.version };
    if (!provided.has(gvkId(g))) provided.set(gvkId(g), g);
  }
  for (const api of requiredApis(spec.spec, fail)) {
    const g = { group: api.group, kind: api.kind, version: api.version };
    if (!required.has(gvkId(g))) required.set(gvkId(g), g);
  }
  const props: RawProperty[] = b.objects.map((o) => ({
    type: PROPERTY_BUNDLE_OBJECT,
    value: `{"data":"${Buffer.from(o.json, "utf8").toString("base64")}"}`,
  }));
  props.push(
    packageProp ?? { type: "olm.package", value: packagePropertyValue(b.package, version.value, release.value) },
  );
  for (const g of provided.values())
    props.push({ type: "olm.gvk", value: gvkPropertyValue(g.group, g.kind, g.version) });
  for (const g of required.values())
    props.push({ type: "olm.gvk.required", value: gvkPropertyValue(g.group, g.kind, g.version) });
  props.push(...packageRequired, ...others);
  props.sort((x, y) => (x.type !== y.type ? compareUtf8(x.type, y.type) : compareUtf8(x.value, y.value)));
  return props;
}

function requiredApis(spec: GoNode | undefined, fail: (msg: string) => OpcatError): ApiKey[] {
  const crds = csvDefinitions(spec, "customresourcedefinitions");
  if (!crds.ok) throw fail(`get required apis: ${crds.error}`);
  const out: ApiKey[] = [];
  for (const c of crds.required) {
    const dot = c.name.indexOf(".");
    if (dot < 0) throw fail(`get required apis: couldn't parse plural.group from crd name: ${c.name}`);
    out.push({ group: c.name.slice(dot + 1), version: c.version, kind: c.kind, plural: c.name.slice(0, dot) });
  }
  const svc = csvDefinitions(spec, "apiservicedefinitions");
  if (!svc.ok) throw fail(`get required apis: ${svc.error}`);
  for (const a of svc.required) out.push({ group: a.group, version: a.version, kind: a.kind, plural: a.name });
  return out;
}

/** getRelatedImages: CSV spec.relatedImages, the bundle image, then the deployments' container images. */
function relatedImages(b: RegistryBundle, image: string, fail: (msg: string) => OpcatError): RelatedImage[] {
  const spec = csvSpecMap(b.csv);
  if (!spec.ok) throw fail(spec.error);
  const out: RelatedImage[] = [];
  const raw = spec.spec ? mapField(spec.spec, "relatedImages") : undefined;
  if (raw !== undefined) {
    // json.Unmarshal(*spec["relatedImages"], &[]declcfg.RelatedImage{}) on the CSV's re-encoded (sorted) spec.
    const r = goDecode(raw.value, RELATED_IMAGES, { sortedKeys: true });
    if (!r.ok) throw fail(r.error);
    for (const x of (r.value as { name: string; image: string }[] | null) ?? [])
      out.push({ name: x.name, image: x.image });
  }
  const all = new Set(out.map((r) => r.image));
  if (image !== "" && !all.has(image)) out.push({ name: "", image });
  const ops = operatorImages(spec.spec);
  if (typeof ops === "string") throw fail(ops);
  for (const img of ops) {
    if (!all.has(img)) out.push({ name: "", image: img });
    all.add(img);
  }
  return out;
}

interface DecodedContainer {
  image: string;
}
interface DecodedCsvSpec {
  Install: {
    strategy: string;
    spec: {
      Deployments:
        | { Spec: { template: { spec: Record<"containers" | "initContainers", DecodedContainer[] | null> } } }[]
        | null;
    };
  };
}

/**
 * csv.GetOperatorImages: json.Unmarshal of the CSV's (re-encoded, sorted) spec into its local
 * `csvSpec` type (bundle/gotypes.ts: the path to the containers' images); with install strategy
 * `deployment`, the image of every container and init container of every deployment's pod
 * template (a set, in that order). Go's error text otherwise.
 */
function operatorImages(spec: GoNode | undefined): string[] | string {
  if (!spec) return [];
  const r = goDecode(spec.value, GO_CSV_SPEC, { sortedKeys: true });
  if (!r.ok) return r.error;
  const install = (r.value as DecodedCsvSpec).Install;
  if (install.strategy !== "deployment") return [];
  const images = new Set<string>();
  for (const d of install.spec.Deployments ?? []) {
    const ps = d.Spec.template.spec;
    for (const c of ps.containers ?? []) images.add(c.image);
    for (const c of ps.initContainers ?? []) images.add(c.image);
  }
  return [...images];
}

/** The version of the first `olm.package` property (what `{{.Version}}` sees), or Go's error. */
function templateVersion(b: RegistryBundle): Decoded<string> {
  for (const p of b.properties) {
    if (p.type !== "olm.package") continue;
    const v = unmarshalStringStruct<"packageName" | "version" | "release">(p.value, GO_PROPERTY_PACKAGE);
    return v.ok ? { ok: true, value: v.value.version } : v;
  }
  return { ok: true, value: "" };
}

/** Parses an image reference template; throws OpcatError `invalid image reference template: …`. */
export function compileImageRefTemplate(tmpl: string): ImageRefTemplate {
  try {
    return parseImageRefTemplate(tmpl);
  } catch (e) {
    if (e instanceof TemplateError)
      throw new OpcatError("BUNDLE_IMAGE_TEMPLATE", `invalid image reference template: ${e.message}`, {
        kind: "usage",
      });
    throw e;
  }
}

/**
 * opm's rendering of a parsed bundle into an `olm.bundle` blob, as `opm render` prints it:
 * properties sorted by (type, raw value) with `olm.bundle.object` last, related images sorted by
 * image. The image is `opts.imageRefTemplate` applied to the bundle, else `opts.image`, else "".
 * Throws {@link OpcatError} (exit code 1) with opm's message.
 */
export function renderBundle(b: RegistryBundle, opts: RenderBundleOptions = {}): Bundle {
  let image = opts.image ?? "";
  if (opts.imageRefTemplate !== undefined) {
    const tmpl =
      typeof opts.imageRefTemplate === "string"
        ? compileImageRefTemplate(opts.imageRefTemplate)
        : opts.imageRefTemplate;
    const tfail = (msg: string): OpcatError =>
      bundleError(
        "BUNDLE_IMAGE_TEMPLATE",
        `failed templating image reference from bundle for ${goQuote(b.dir)}: ${msg}`,
        b.dir,
        b.annotationsFile,
      );
    const version = templateVersion(b);
    if (!version.ok) throw tfail(version.error);
    try {
      image = tmpl.execute({ Package: b.package, Name: b.name, Version: version.value });
    } catch (e) {
      if (e instanceof TemplateError) throw tfail(e.message);
      throw e;
    }
  }
  const props = objectsAndProperties(b, (msg) =>
    bundleError("BUNDLE_PROPERTIES", `get properties for bundle ${goQuote(b.name)}: ${msg}`, b.dir, b.csv.file),
  );
  const related = relatedImages(b, image, (msg) =>
    bundleError("BUNDLE_RELATED_IMAGES", `get related images for bundle ${goQuote(b.name)}: ${msg}`, b.dir, b.csv.file),
  );
  // render: olm.bundle.object / olm.csv.metadata last (stable), related images sorted by image (Go's sort.Slice).
  const toProperty = (p: RawProperty): Property => ({
    type: p.type,
    value: p.value === "" ? RawJson.missing() : RawJson.fromText(compactJson(p.value)),
  });
  const front: Property[] = [];
  const back: Property[] = [];
  for (const p of props)
    (p.type === PROPERTY_BUNDLE_OBJECT || p.type === PROPERTY_CSV_METADATA ? back : front).push(toProperty(p));
  // opm: sort.Slice by image, not stable (equal images in pdqsort's order); sorting again later is a no-op
  goSortSlice(related, (x, y) => compareUtf8(x.image, y.image) < 0);
  return {
    schema: SCHEMA_BUNDLE,
    name: b.name,
    package: b.package,
    image,
    properties: front.concat(back),
    relatedImages: related,
  };
}
