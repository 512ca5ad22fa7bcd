/**
 * The ClusterServiceVersion opm synthesises for a bundle that has no CSV manifest but one
 * `olm.csv.metadata` property (pkg/api/model_to_api.go csvMetadataToCsv), encoded byte for byte as
 * Go's `json.Marshal` of operator-framework/api v1alpha1.ClusterServiceVersion (v0.45, with
 * k8s.io/apimachinery 0.36): struct field order, `omitempty` rules, sorted map keys, HTML escaping.
 *
 * The metadata value is read the way `json.Unmarshal` fills the Go structs: keys matched exactly,
 * else case-insensitively, unknown keys dropped, `null` leaving the zero value.
 */
import { compareUtf8, encodeSortedCompact, formatGoFloat, quoteGoString } from "../gojson/encode.js";
import { goFoldEqual } from "../gojson/unicode.js";
import type { JsonObject, JsonValue } from "../fbc/types.js";

type Kind = "string" | "bool" | "int" | "raw" | "stringMap" | { slice: Kind } | { struct: readonly Field[] };

/** [JSON name, kind, omitempty] */
type Field = readonly [string, Kind, boolean];

const q = (s: string): string => quoteGoString(s, true);

const RESOURCE: Kind = {
  struct: [
    ["name", "string", false],
    ["kind", "string", false],
    ["version", "string", false],
  ],
};
const DESCRIPTOR: Kind = {
  struct: [
    ["path", "string", false],
    ["displayName", "string", true],
    ["description", "string", true],
    ["x-descriptors", { slice: "string" }, true],
    ["value", "raw", true],
  ],
};
const DESCRIPTORS: Field[] = [
  ["statusDescriptors", { slice: DESCRIPTOR }, true],
  ["specDescriptors", { slice: DESCRIPTOR }, true],
  ["actionDescriptors", { slice: DESCRIPTOR }, true],
];
const CRD_DESCRIPTION: Kind = {
  struct: [
    ["name", "string", false],
    ["version", "string", false],
    ["kind", "string", false],
    ["displayName", "string", true],
    ["description", "string", true],
    ["resources", { slice: RESOURCE }, true],
    ...DESCRIPTORS,
  ],
};
const API_SERVICE_DESCRIPTION: Kind = {
  struct: [
    ["name", "string", false],
    ["group", "string", false],
    ["version", "string", false],
    ["kind", "string", false],
    ["deploymentName", "string", true],
    ["containerPort", "int", true],
    ["displayName", "string", true],
    ["description", "string", true],
    ["resources", { slice: RESOURCE }, true],
    ...DESCRIPTORS,
  ],
};
const CRDS: Kind = {
  struct: [
    ["owned", { slice: CRD_DESCRIPTION }, true],
    ["required", { slice: CRD_DESCRIPTION }, true],
  ],
};
const API_SERVICES: Kind = {
  struct: [
    ["owned", { slice: API_SERVICE_DESCRIPTION }, true],
    ["required", { slice: API_SERVICE_DESCRIPTION }, true],
  ],
};
const APP_LINK: Kind = {
  struct: [
    ["name", "string", true],
    ["url", "string", true],
  ],
};
const MAINTAINER: Kind = {
  struct: [
    ["name", "string", true],
    ["email", "string", true],
  ],
};
const INSTALL_MODE: Kind = {
  struct: [
    ["type", "string", false],
    ["supported", "bool", false],
  ],
};
const GVK: Kind = {
  struct: [
    ["group", "string", false],
    ["version", "string", false],
    ["kind", "string", false],
  ],
};

/** The inputs of the synthesis besides the metadata value. */
export interface CsvContext {
  /** Bundle name (becomes metadata.name). */
  name: string;
  /** The bundle version string (`olm.package` version, parsed and printed as semver). */
  version: string;
  /** Package icon, if the package has one. */
  icon?: { base64data: Uint8Array | null; mediatype: string };
  relatedImages: readonly { name: string; image: string }[];
  /** Used when the metadata has no description. */
  packageDescription: string;
}

/** The `csvJson` text opm serves for a bundle described only by `olm.csv.metadata`. */
export function synthesizeCsvJson(meta: JsonValue, ctx: CsvContext): string {
  const m = asObject(meta);
  const get = (name: string): JsonValue | undefined => lookup(m, name);

  let md = `{"name":${q(ctx.name)}`;
  const labels = encodeStringMap(get("labels"));
  if (labels !== undefined && labels !== "{}") md += `,"labels":${labels}`;
  const annotations = encodeStringMap(get("annotations"));
  if (annotations !== undefined && annotations !== "{}") md += `,"annotations":${annotations}`;
  md += "}";

  let spec = `{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":${q(ctx.version)}`;
  const field = (name: string, src: string, kind: Kind, omitempty: boolean): void => {
    const enc = encodeValue(get(src), kind);
    if (omitempty && isEmpty(enc)) return;
    spec += `,${q(name)}:${enc.text}`;
  };
  field("maturity", "maturity", "string", true);
  field("customresourcedefinitions", "crdDescriptions", CRDS, false);
  field("apiservicedefinitions", "apiServiceDefinitions", API_SERVICES, false);
  field("nativeAPIs", "nativeAPIs", { slice: GVK }, true);
  field("minKubeVersion", "minKubeVersion", "string", true);
  field("displayName", "displayName", "string", false);
  const own = get("description");
  const description = typeof own === "string" && own !== "" ? own : ctx.packageDescription;
  if (description !== "") spec += `,"description":${q(description)}`;
  field("keywords", "keywords", { slice: "string" }, true);
  field("maintainers", "maintainers", { slice: MAINTAINER }, true);
  field("provider", "provider", APP_LINK, false);
  field("links", "links", { slice: APP_LINK }, true);
  if (ctx.icon) {
    const data = ctx.icon.base64data ? Buffer.from(ctx.icon.base64data).toString("base64") : "";
    spec += `,"icon":[{"base64data":${q(data)},"mediatype":${q(ctx.icon.mediatype)}}]`;
  }
  field("installModes", "installModes", { slice: INSTALL_MODE }, true);
  spec += `,"cleanup":{"enabled":false}`;
  if (ctx.relatedImages.length > 0) {
    spec +=
      `,"relatedImages":[` +
      `${ctx.relatedImages.map((r) => `{"name":${q(r.name)},"image":${q(r.image)}}`).join(",")}]`;
  }
  spec += "}";
  return (
    `{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1",` +
    `"metadata":${md},"spec":${spec},"status":{"cleanup":{}}}`
  );
}

interface Encoded {
  text: string;
  /** Go's "empty value" for omitempty: false, 0, "", nil or zero-length slice/map. Structs never are. */
  empty: boolean;
}

function isEmpty(e: Encoded): boolean {
  return e.empty;
}

function asObject(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

/** encoding/json field matching: the exact key, else any key equal under case folding (the last one wins). */
function lookup(o: JsonObject | undefined, name: string): JsonValue | undefined {
  if (!o) return undefined;
  let found: JsonValue | undefined;
  for (const k of Object.keys(o)) {
    if (k === name || goFoldEqual(k, name)) found = o[k];
  }
  return found;
}

function encodeStringMap(v: JsonValue | undefined): string | undefined {
  const o = asObject(v);
  if (!o) return undefined;
  const keys = Object.keys(o).sort(compareUtf8);
  return "{" + keys.map((k) => `${q(k)}:${q(typeof o[k] === "string" ? (o[k] as string) : "")}`).join(",") + "}";
}

function encodeValue(v: JsonValue | undefined, kind: Kind): Encoded {
  if (kind === "string") {
    const s = typeof v === "string" ? v : "";
    return { text: q(s), empty: s === "" };
  }
  if (kind === "bool") {
    const b = v === true;
    return { text: b ? "true" : "false", empty: !b };
  }
  if (kind === "int") {
    const n = typeof v === "number" ? Math.trunc(v) : 0;
    return { text: formatGoFloat(n), empty: n === 0 };
  }
  if (kind === "raw") {
    if (v === undefined) return { text: "null", empty: true };
    return { text: encodeSortedCompact(v).replace(/[<>&]/g, htmlEscape), empty: false };
  }
  if (kind === "stringMap") {
    const t = encodeStringMap(v);
    return t === undefined ? { text: "null", empty: true } : { text: t, empty: t === "{}" };
  }
  if ("slice" in kind) {
    if (!Array.isArray(v)) return { text: "null", empty: true };
    return { text: "[" + v.map((x) => encodeValue(x, kind.slice).text).join(",") + "]", empty: v.length === 0 };
  }
  const o = asObject(v);
  const parts: string[] = [];
  for (const [name, k, omitempty] of kind.struct) {
    const e = encodeValue(lookup(o, name), k);
    if (omitempty && e.empty) continue;
    parts.push(`${q(name)}:${e.text}`);
  }
  return { text: "{" + parts.join(",") + "}", empty: false };
}

function htmlEscape(c: string): string {
  return c === "<" ? "\\u003c" : c === ">" ? "\\u003e" : "\\u0026";
}
