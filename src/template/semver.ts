/**
 * The semver template (`olm.semver`, operator-registry alpha/template/semver/semver.go): bundles
 * listed under Candidate/Fast/Stable become `<archetype>-vX` (major) and/or `<archetype>-vX.Y`
 * (minor) channels with replaces/skips edges, a default channel and, from the default channel's
 * head bundle, the package description and icon.
 */
import { OpcatError } from "../errors/index.js";
import { bundleCsvJson } from "../fbc/objects.js";
import { parseProperties, PropertyParseError } from "../fbc/properties.js";
import { decodeStdBase64 } from "../fbc/decode.js";
import { compareUtf8 } from "../gojson/encode.js";
import { goQuote } from "../gojson/fmt.js";
import { tryParseVersion, Version, SemverError } from "../semver/index.js";
import type { Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, JsonValue, Package } from "../fbc/types.js";
import { SCHEMA_SEMVER } from "./detect.js";
import { readStrictYaml } from "./document.js";
import { goDecode, type GoType } from "../gojson/structdecode.js";
import type { BundleSource, RenderedBundle } from "./source/source.js";

export type Archetype = "candidate" | "fast" | "stable";
export type StreamKind = "" | "minor" | "major";

/** Archetypes in increasing stability (opm's channelPriorities). */
export const ARCHETYPES: readonly Archetype[] = Object.freeze(["candidate", "fast", "stable"] as const);
const ARCH_PRIORITY: Record<Archetype, number> = { candidate: 0, fast: 1, stable: 2 };
const KIND_PRIORITY: Record<StreamKind, number> = { "": 0, major: 1, minor: 2 };

/**
 * What a Y-stream head skips. `cumulative` is today's opm (operator-registry #1065, v1.27.0 on):
 * the other entries of its own Y-stream and every entry of the earlier Y-streams of the same
 * major. `y-stream`: only the other entries of its own Y-stream, as the examples of docs/templates.md#semver
 * (opm's docs before #1065) show; replaces edges are the same in both modes.
 */
export type SemverSkips = "cumulative" | "y-stream";
export const SEMVER_SKIPS: readonly SemverSkips[] = Object.freeze(["cumulative", "y-stream"] as const);

/** The parsed template (SemverTemplateData) after readFile's defaulting. */
export interface SemverTemplate {
  schema: string;
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  defaultChannelTypePreference: StreamKind;
  candidate: { bundles: { image: string }[] | null };
  fast: { bundles: { image: string }[] | null };
  stable: { bundles: { image: string }[] | null };
}

const STRING: GoType = { kind: "string", goName: "string" };
const CHANNEL_BUNDLES: GoType = {
  kind: "struct",
  goName: "semver.channelBundles",
  shortName: "channelBundles",
  fields: [
    {
      json: "bundles",
      type: {
        kind: "slice",
        goName: "[]semver.bundleEntry",
        elem: {
          kind: "struct",
          goName: "semver.bundleEntry",
          shortName: "bundleEntry",
          fields: [{ json: "image", type: STRING }],
        },
      },
    },
  ],
};
const SEMVER_TEMPLATE_DATA: GoType = {
  kind: "struct",
  goName: "semver.SemverTemplateData",
  shortName: "SemverTemplateData",
  fields: [
    { json: "schema", type: STRING },
    { json: "generateMajorChannels", type: { kind: "bool" } },
    { json: "generateMinorChannels", type: { kind: "bool" } },
    { json: "defaultChannelTypePreference", type: { kind: "string", goName: "semver.StreamType" } },
    { json: "candidate", type: CHANNEL_BUNDLES },
    { json: "fast", type: CHANNEL_BUNDLES },
    { json: "stable", type: CHANNEL_BUNDLES },
  ],
};

function fail(code: string, message: string): OpcatError {
  return new OpcatError(code, message, { kind: "invalid" });
}

/**
 * opm's readFile: strict YAML (duplicate keys and unknown fields are errors, keys match in any
 * letter case, first document only), schema check and channel-kind defaulting. Throws OpcatError
 * `render: unable to read file: <err>`.
 */
export function parseSemverTemplate(text: string): SemverTemplate {
  const readErr = (code: string, msg: string): OpcatError => fail(code, `render: unable to read file: ${msg}`);
  const y = readStrictYaml(text);
  if (!y.ok) throw readErr("TEMPLATE_DECODE", y.error);
  const r = goDecode(y.value, SEMVER_TEMPLATE_DATA, { disallowUnknownFields: true, coerceStrings: true });
  if (!r.ok) throw readErr("TEMPLATE_DECODE", `error unmarshaling JSON: while decoding JSON: ${r.error}`);
  const sv = r.value as SemverTemplate;
  if (sv.schema !== SCHEMA_SEMVER)
    throw readErr("TEMPLATE_SCHEMA", `readFile: input file has unknown schema, should be ${goQuote(SCHEMA_SEMVER)}`);
  if (!sv.generateMajorChannels && !sv.generateMinorChannels) sv.generateMinorChannels = true;
  const pref = sv.defaultChannelTypePreference as string;
  switch (pref) {
    case "":
      sv.defaultChannelTypePreference = sv.generateMinorChannels ? "minor" : "major";
      break;
    case "minor":
    case "major":
      if (!(pref === "minor" ? sv.generateMinorChannels : sv.generateMajorChannels)) {
        throw readErr(
          "TEMPLATE_PREFERENCE",
          `schema attribute mismatch: DefaultChannelTypePreference set to ` +
            `'${pref}' doesn't make sense if not generating ${pref}-version channels`,
        );
      }
      break;
    default:
      throw readErr(
        "TEMPLATE_PREFERENCE",
        `unknown DefaultChannelTypePreference: ${goQuote(pref)}\nValid values are 'major' or 'minor'`,
      );
  }
  return sv;
}

/** One channel entry being generated (opm's entryTuple). */
interface EntryTuple {
  arch: Archetype;
  kind: StreamKind;
  channel: Channel;
  name: string;
  version: Version;
  index: number;
}

type VersionsByArchetype = Map<Archetype, Map<string, Version>>;

function archetypeImages(sv: SemverTemplate, a: Archetype): string[] {
  return (sv[a].bundles ?? []).map((b) => b.image);
}

/** getVersionsFromStandardChannels: the versions of each archetype's bundles, and the package. */
function versionsOf(
  sv: SemverTemplate,
  bundles: readonly Bundle[],
  renderedImage: Map<string, string>,
): { versions: VersionsByArchetype; pkg: string } {
  const post = (msg: string): OpcatError =>
    fail("TEMPLATE_BUNDLE_VERSIONS", `render: unable to post-process bundle info: ${msg}`);
  const byImage = new Map<string, Bundle>();
  for (const b of bundles) if (!byImage.has(b.image)) byImage.set(b.image, b);
  let pkg = "";
  let havePkg = false;
  const versions: VersionsByArchetype = new Map();
  for (const arch of ARCHETYPES) {
    const entries = new Map<string, Version>();
    for (const image of archetypeImages(sv, arch)) {
      const b = byImage.get(renderedImage.get(image) ?? "\u0000missing");
      if (!b) throw post(`supplied bundle image name ${goQuote(image)} not found in rendered bundle images`);
      let props;
      try {
        props = parseProperties(b.properties);
      } catch (e) {
        if (e instanceof PropertyParseError) throw post(`parse properties for bundle ${goQuote(b.name)}: ${e.message}`);
        throw e;
      }
      if (props.packages.length !== 1)
        throw post(`bundle ${goQuote(b.name)} has multiple "olm.package" properties, expected exactly 1`);
      const { packageName, version } = props.packages[0];
      const v = tryParseVersion(version);
      if (v instanceof SemverError)
        throw post(`bundle ${goQuote(b.name)} has invalid version ${goQuote(version)}: ${v.message}`);
      if (havePkg) {
        if (packageName !== pkg)
          throw post(`bundle ${goQuote(packageName)} does not belong to this package: ${goQuote(pkg)}`);
      } else {
        pkg = packageName;
        havePkg = true;
      }
      if (entries.has(b.name)) throw post(`duplicate bundle name ${goQuote(b.name)}`);
      entries.set(b.name, v);
    }
    const conflict = buildMetadataConflicts(entries);
    if (conflict) throw post(conflict);
    versions.set(arch, entries);
  }
  return { versions, pkg };
}

/**
 * withoutBuildMetadataConflict: versions equal once build metadata is dropped cannot be ordered.
 * (opm walks a Go map, so which bundle it names varies; here the later one in template order.)
 */
function buildMetadataConflicts(entries: Map<string, Version>): string | undefined {
  const seen = new Set<string>();
  const errs: string[] = [];
  for (const v of entries.values()) {
    const stripped = new Version(v.major, v.minor, v.patch, v.pre).toString();
    if (seen.has(stripped)) {
      const msg = `bundle version ${goQuote(v.toString())} cannot be compared to ${goQuote(stripped)}`;
      if (!errs.includes(msg)) errs.push(msg);
    } else seen.add(stripped);
  }
  if (errs.length === 0) return undefined;
  return (
    `encountered bundle versions which differ only by build metadata, which ` +
    `cannot be ordered: ${errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`}`
  );
}

/** The high-water channel comparison (highwaterChannel.gt). */
interface Highwater {
  arch: Archetype;
  kind: StreamKind;
  version: Version;
  name: string;
}

function highwaterGreater(h: Highwater, best: Highwater, pref: StreamKind): boolean {
  if (ARCH_PRIORITY[h.arch] !== ARCH_PRIORITY[best.arch]) return ARCH_PRIORITY[h.arch] > ARCH_PRIORITY[best.arch];
  const c = h.version.compare(best.version);
  if (c !== 0) return c > 0;
  if (h.kind !== best.kind) {
    if (h.kind === pref) return true;
    if (best.kind === pref) return false;
    return KIND_PRIORITY[h.kind] > KIND_PRIORITY[best.kind];
  }
  return false;
}

/**
 * generateChannels + linkChannels: the channels (sorted by name) and the default channel name.
 * Exposed for unit tests of the edge rules.
 */
export function generateSemverChannels(
  sv: Pick<SemverTemplate, "generateMajorChannels" | "generateMinorChannels" | "defaultChannelTypePreference">,
  pkg: string,
  versions: ReadonlyMap<Archetype, ReadonlyMap<string, Version>>,
  skips: SemverSkips = "cumulative",
): { channels: Channel[]; defaultChannel: string } {
  let best: Highwater = { arch: "candidate", kind: "", version: new Version(0n, 0n, 0n), name: "" };
  const channels = new Map<string, Channel>();
  const tuples: EntryTuple[] = [];
  for (const arch of ARCHETYPES) {
    const bundles = versions.get(arch);
    if (!bundles || bundles.size === 0) continue;
    const names = [...bundles.keys()].sort((a, b) => (bundles.get(a) as Version).compare(bundles.get(b) as Version));
    for (const name of names) {
      const version = bundles.get(name) as Version;
      const kinds: [StreamKind, string][] = [];
      if (sv.generateMajorChannels) kinds.push(["major", `${arch}-v${version.major}`]);
      if (sv.generateMinorChannels) kinds.push(["minor", `${arch}-v${version.major}.${version.minor}`]);
      for (const [kind, chName] of kinds) {
        let ch = channels.get(chName);
        if (!ch) {
          ch = { schema: "olm.channel", name: chName, package: pkg, entries: [], properties: [] };
          channels.set(chName, ch);
          const candidate: Highwater = { arch, kind, version, name: chName };
          if (highwaterGreater(candidate, best, sv.defaultChannelTypePreference)) best = candidate;
        }
        const entries = ch.entries as ChannelEntry[];
        entries.push({ name, replaces: "", skips: [], skipRange: "" });
        tuples.push({ arch, kind, channel: ch, name, version, index: entries.length - 1 });
      }
    }
  }
  linkChannels(tuples, skips);
  const out = [...channels.values()].sort((a, b) => compareUtf8(a.name, b.name));
  return { channels: out, defaultChannel: best.name };
}

/** opm's linkChannels: replaces/skips on the highest-Z entry of each X.Y within (archetype, kind, X). */
function linkChannels(tuples: EntryTuple[], mode: SemverSkips): void {
  tuples.sort((a, b) => {
    if (a.arch !== b.arch) return ARCH_PRIORITY[a.arch] - ARCH_PRIORITY[b.arch];
    if (a.kind !== b.kind) return KIND_PRIORITY[a.kind] - KIND_PRIORITY[b.kind];
    return a.version.compare(b.version);
  });
  const setEdges = (t: EntryTuple, zmax: string, acc: Set<string>): void => {
    const entry = (t.channel.entries as ChannelEntry[])[t.index];
    entry.replaces = zmax;
    const skips = [...acc].filter((s) => s !== zmax).sort(compareUtf8);
    if (skips.length > 0) entry.skips = skips;
  };
  let zmax = "";
  let acc = new Set<string>();
  for (let i = 1; i < tuples.length; i++) {
    const prev = tuples[i - 1];
    const cur = tuples[i];
    const archChange = prev.arch !== cur.arch;
    const kindChange = prev.kind !== cur.kind;
    const xChange = prev.version.major !== cur.version.major;
    const yChange = prev.version.minor !== cur.version.minor;
    if (archChange || kindChange || xChange || yChange) setEdges(prev, zmax, acc);
    if (archChange || kindChange || xChange) {
      acc = new Set();
      zmax = "";
    } else {
      if (yChange) {
        zmax = prev.name;
        if (mode === "y-stream") acc = new Set();
      }
      acc.add(prev.name);
    }
  }
  if (tuples.length > 1) {
    const last = tuples[tuples.length - 1];
    const pen = tuples[tuples.length - 2];
    if (pen.arch === last.arch && pen.kind === last.kind && pen.version.major === last.version.major)
      setEdges(last, zmax, acc);
  }
}

/** The CSV's spec.description and first spec.icon, as opm reads them (any decoding failure: nothing). */
export function csvPackageMetadata(csvJson: string): { description?: string; icon?: Icon } {
  if (csvJson === "") return {};
  let csv: JsonValue;
  try {
    csv = JSON.parse(csvJson) as JsonValue;
  } catch {
    return {};
  }
  if (csv === null) return {};
  if (typeof csv !== "object" || Array.isArray(csv)) return {};
  for (const k of ["apiVersion", "kind"]) {
    const v = csv[k];
    if (v !== undefined && v !== null && typeof v !== "string") return {};
  }
  const meta = csv.metadata;
  if (meta !== undefined && meta !== null && (typeof meta !== "object" || Array.isArray(meta))) return {};
  // Spec is a json.RawMessage: absent means no bytes, which does not decode.
  const spec = Object.hasOwn(csv, "spec") ? csv.spec : undefined;
  if (spec === undefined) return {};
  if (spec !== null && (typeof spec !== "object" || Array.isArray(spec))) return {};
  const out: { description?: string; icon?: Icon } = {};
  if (spec === null) return out;
  const d = spec.description;
  if (typeof d === "string" && d !== "") out.description = d;
  const icons = spec.icon;
  if (Array.isArray(icons) && icons.length > 0) {
    const decoded: Icon[] = [];
    for (const ic of icons) {
      if (ic === null) {
        decoded.push({ base64data: null, mediatype: "" });
        continue;
      }
      const r = goDecode(ic, ICON, {
        custom: (v) => (v === null || typeof v === "string" ? undefined : "not a base64 string"),
      });
      if (!r.ok) return out;
      const { base64data, mediatype } = r.value as { base64data: string | null; mediatype: string };
      let data: Uint8Array | null = null;
      if (base64data !== null) {
        try {
          data = decodeStdBase64(base64data);
        } catch {
          return out;
        }
      }
      decoded.push({ base64data: data, mediatype });
    }
    out.icon = decoded[0];
  }
  return out;
}

const ICON: GoType = {
  kind: "struct",
  goName: "registry.Icon",
  shortName: "Icon",
  fields: [
    { json: "mediatype", type: { kind: "string", goName: "string" } },
    // []byte: a base64 string (decoded separately) or null.
    { json: "base64data", type: { kind: "custom", goName: "[]uint8" } },
  ],
};

/**
 * Renders a semver template (spec 5.3). Each distinct image is rendered once by `src`; errors are
 * opm's texts (`render: unable to read file: …`, `render: no bundles specified or no bundles could
 * be rendered`, `render: unable to post-process bundle info: …`, or the source's error).
 */
export async function renderSemverTemplate(
  text: string,
  src: BundleSource,
  opts: { skips?: SemverSkips } = {},
): Promise<DeclarativeConfig> {
  const sv = parseSemverTemplate(text);
  const images: string[] = [];
  const seen = new Set<string>();
  for (const a of ARCHETYPES) {
    for (const img of archetypeImages(sv, a)) {
      if (!seen.has(img)) {
        seen.add(img);
        images.push(img);
      }
    }
  }
  const bundles: RenderedBundle[] = [];
  const renderedImage = new Map<string, string>();
  src.prefetch?.(images);
  for (const img of images) {
    const b = await src.render(img);
    renderedImage.set(img, b.image);
    bundles.push(b);
  }
  if (bundles.length === 0)
    throw fail("TEMPLATE_NO_BUNDLES", "render: no bundles specified or no bundles could be rendered");

  const { versions, pkg } = versionsOf(sv, bundles, renderedImage);
  const pkgBlob: Package = { schema: "olm.package", name: pkg, defaultChannel: "", description: "", properties: [] };
  const { channels, defaultChannel } = generateSemverChannels(sv, pkg, versions, opts.skips);
  pkgBlob.defaultChannel = defaultChannel;

  // populatePackageMetadata: description and icon from the default channel's head bundle.
  const ch = channels.find((c) => c.name === defaultChannel);
  const last = ch?.entries && ch.entries.length > 0 ? ch.entries[ch.entries.length - 1].name : undefined;
  const head = last !== undefined ? bundles.find((b) => b.name === last) : undefined;
  if (head) {
    const meta = csvPackageMetadata(head.csvJson ?? bundleCsvJson(head));
    if (meta.description !== undefined) pkgBlob.description = meta.description;
    if (meta.icon !== undefined) pkgBlob.icon = meta.icon;
  }
  return { packages: [pkgBlob], channels, bundles, deprecations: [], others: [] };
}
