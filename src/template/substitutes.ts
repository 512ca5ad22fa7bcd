/**
 * The substitutes template (`olm.template.substitutes`, operator-registry
 * alpha/template/substitutes/substitutes.go): a complete catalog plus substitutions
 * `{name: <substitute bundle image>, base: <name of the bundle it replaces>}`; each substitute takes
 * the base's place in every channel's upgrade graph, without the `olm.substitutesFor` annotation.
 */
import { OpcatError } from "../errors/index.js";
import { bundleCsvJson } from "../fbc/objects.js";
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from "../fbc/properties.js";
import { parseRelease, validateCatalog } from "../fbc/validate.js";
import type { Bundle, DeclarativeConfig, JsonValue } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import { SemverError, tryParseVersion, Version, type PRVersion } from "../semver/index.js";
import { parseEntriesTemplate } from "./basic.js";
import { SCHEMA_SUBSTITUTES } from "./detect.js";
import { goDecode, type GoType } from "../gojson/structdecode.js";
import type { BundleSource, RenderedBundle } from "./source/source.js";

/** One substitution: the substitute's image (`name`) and the name of the bundle it replaces (`base`). */
export interface Substitution {
  name: string;
  base: string;
}

const STRING: GoType = { kind: "string", goName: "string" };
const SUBSTITUTES_TEMPLATE_DATA: GoType = {
  kind: "struct",
  goName: "substitutes.SubstitutesTemplateData",
  shortName: "SubstitutesTemplateData",
  fields: [
    { json: "schema", type: STRING },
    {
      json: "entries",
      type: { kind: "slice", goName: "[]*declcfg.Meta", elem: { kind: "custom", goName: "*declcfg.Meta" } },
    },
    {
      json: "substitutions",
      type: {
        kind: "slice",
        goName: "[]substitutes.Substitute",
        elem: {
          kind: "struct",
          goName: "substitutes.Substitute",
          shortName: "Substitute",
          fields: [
            { json: "name", type: STRING },
            { json: "base", type: STRING },
          ],
        },
      },
    },
  ],
};

const PACKAGE_PROPERTY: GoType = {
  kind: "struct",
  goName: "property.Package",
  shortName: "Package",
  fields: [
    { json: "packageName", type: STRING },
    { json: "version", type: STRING },
    { json: "release", type: STRING },
  ],
};

/** A failure carrying the code and exit code of what caused it, with `prefix: ` added. */
function wrap(prefix: string, e: unknown): never {
  if (e instanceof OpcatError)
    throw new OpcatError(e.code, `${prefix}: ${e.message}`, { kind: e.kind, problems: e.problems, cause: e });
  throw e;
}

function fail(code: string, message: string): OpcatError {
  return new OpcatError(code, message, { kind: "invalid" });
}

/** opm's VersionRelease: a bundle's version and release, compared by version then release. */
interface VersionRelease {
  version: Version;
  release: readonly PRVersion[];
}

/** model.Release.Compare: no release sorts before any release; otherwise pre-release rules. */
function compareRelease(a: readonly PRVersion[], b: readonly PRVersion[]): number {
  if (a.length === 0 && b.length > 0) return -1;
  if (b.length === 0 && a.length > 0) return 1;
  return new Version(0n, 0n, 0n, a).compare(new Version(0n, 0n, 0n, b));
}

function compareVersionRelease(a: VersionRelease, b: VersionRelease): number {
  return a.version.compare(b.version) || compareRelease(a.release, b.release);
}

/**
 * The `olm.substitutesFor` annotation of a manifest object (Go's CSV
 * GetSubstitutesFor), or undefined when it does not decode.
 */
function substitutesForOf(obj: JsonValue): string | undefined {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return undefined;
  const meta = obj.metadata;
  if (meta === undefined || meta === null) return "";
  if (typeof meta !== "object" || Array.isArray(meta)) return undefined;
  const ann = meta.annotations;
  if (ann === undefined || ann === null) return "";
  if (typeof ann !== "object" || Array.isArray(ann)) return undefined;
  for (const v of Object.values(ann)) if (typeof v !== "string") return undefined;
  const s = ann["olm.substitutesFor"];
  return typeof s === "string" ? s : "";
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * declcfg Bundle.usesLegacyReleaseVersion: the bundle's CSV (CsvJSON, else an `olm.csv.metadata`,
 * else the first decodable `olm.bundle.object`) has a non-empty `olm.substitutesFor` annotation.
 */
function usesLegacyReleaseVersion(b: RenderedBundle): boolean {
  const csv = b.csvJson ?? bundleCsvJson(b);
  if (csv !== "") {
    const v = parseJson(csv);
    const s = v === undefined ? undefined : substitutesForOf(v);
    if (s !== undefined) return s !== "";
  }
  for (const p of b.properties) {
    if (p.type === PROPERTY_CSV_METADATA) {
      const v = p.value.isMissing ? undefined : parseJson(p.value.text);
      if (v === undefined || v === null || typeof v !== "object" || Array.isArray(v)) continue;
      const ann = v.annotations;
      if (ann !== null && typeof ann === "object" && !Array.isArray(ann)) {
        const s = ann["olm.substitutesFor"];
        if (typeof s === "string" && s !== "") return true;
      }
    } else if (p.type === PROPERTY_BUNDLE_OBJECT) {
      const v = p.value.isMissing ? undefined : parseJson(p.value.text);
      if (v === undefined || v === null || typeof v !== "object" || Array.isArray(v) || typeof v.data !== "string")
        continue;
      const obj = parseJson(Buffer.from(v.data, "base64").toString("utf8"));
      const s = obj === undefined ? undefined : substitutesForOf(obj);
      if (s !== undefined) return s !== "";
    }
  }
  return false;
}

/** declcfg Bundle.VersionRelease, with its error texts. */
function versionRelease(b: RenderedBundle): VersionRelease | string {
  let vr: { version: Version; release: readonly PRVersion[] } | undefined;
  for (const p of b.properties) {
    if (p.type !== "olm.package") continue;
    if (vr) return `must be exactly one property of type "olm.package"`;
    if (p.value.isMissing)
      return `unable to unmarshal "olm.package" property for bundle ${goQuote(b.name)}: unexpected end of JSON input`;
    const r = goDecode(p.value.value, PACKAGE_PROPERTY);
    if (!r.ok) return `unable to unmarshal "olm.package" property for bundle ${goQuote(b.name)}: ${r.error}`;
    const pkg = r.value as { version: string; release: string };
    const v = tryParseVersion(pkg.version);
    if (v instanceof SemverError)
      return (
        `invalid semver version ${goQuote(pkg.version)} in "olm.package" ` +
        `property for bundle ${goQuote(b.name)}: ${v.message}`
      );
    const rel = parseRelease(pkg.release);
    if (typeof rel === "string")
      return `invalid release ${goQuote(pkg.release)} in "olm.package" property for bundle ${goQuote(b.name)}: ${rel}`;
    vr = { version: v, release: rel };
  }
  if (!vr) return `no "olm.package" property found for bundle ${goQuote(b.name)}`;
  if (vr.release.length === 0 && vr.version.build.length > 0 && usesLegacyReleaseVersion(b)) {
    const build = vr.version.build.join(".");
    const rel = parseRelease(build);
    if (typeof rel === "string")
      return `unable to convert build metadata to release for bundle ${goQuote(b.name)}: ${rel}`;
    vr = { version: new Version(vr.version.major, vr.version.minor, vr.version.patch, vr.version.pre), release: rel };
  }
  return vr;
}

/** ConvertToModel as a pass/fail check: the first problem's message, or undefined when valid. */
function modelError(cfg: DeclarativeConfig): { message: string; code: string } | undefined {
  const v = validateCatalog(cfg);
  const p = v.problems.find((x) => x.severity === "error");
  return p ? { message: p.message, code: p.code } : undefined;
}

async function renderSubstitute(src: BundleSource, name: string): Promise<RenderedBundle> {
  try {
    return await src.render(name);
  } catch (e) {
    wrap(`failed to render bundle image reference ${goQuote(name)}`, e);
  }
}

/** validateSubstitution: field checks, then the base must sort strictly below the substitute. */
async function validateSubstitution(src: BundleSource, cfg: DeclarativeConfig, s: Substitution): Promise<void> {
  if (s.name === "") throw fail("TEMPLATE_SUBSTITUTION_FIELDS", "substitution name cannot be empty");
  if (s.base === "") throw fail("TEMPLATE_SUBSTITUTION_FIELDS", "substitution base cannot be empty");
  if (s.name === s.base) throw fail("TEMPLATE_SUBSTITUTION_FIELDS", "substitution name and base cannot be the same");
  const sub = await renderSubstitute(src, s.name);
  const subVr = versionRelease(sub);
  if (typeof subVr === "string")
    throw fail(
      "TEMPLATE_SUBSTITUTION_VERSION",
      `failed to get VersionRelease for substitute bundle ${goQuote(s.name)}: ${subVr}`,
    );
  const base = cfg.bundles.find((b) => b.name === s.base);
  if (!base) throw fail("TEMPLATE_SUBSTITUTION_BASE", `base bundle ${goQuote(s.base)} does not exist in catalog`);
  const baseVr = versionRelease(base);
  if (typeof baseVr === "string")
    throw fail(
      "TEMPLATE_SUBSTITUTION_VERSION",
      `failed to get VersionRelease for base bundle ${goQuote(s.base)}: ${baseVr}`,
    );
  if (compareVersionRelease(baseVr, subVr) >= 0)
    throw fail(
      "TEMPLATE_SUBSTITUTION_ORDER",
      `base bundle ${goQuote(s.base)} is not less than substitute bundle ${goQuote(s.name)}`,
    );
}

/**
 * processSubstitution: in every channel, each entry named `base` hands its replaces/skips/skipRange
 * (plus a skip of `base`) to a new entry for the substitute appended to the channel; entries that
 * replaced `base` now replace the substitute (and skip `base`); entries that skipped `base` skip the
 * substitute instead. The substitute bundle is added and the catalog must still be valid.
 */
async function processSubstitution(src: BundleSource, cfg: DeclarativeConfig, s: Substitution): Promise<void> {
  await validateSubstitution(src, cfg, s);
  const sub = await renderSubstitute(src, s.name);
  for (const ch of cfg.channels) {
    const entries = ch.entries;
    if (!entries) continue;
    const matching: number[] = [];
    for (let j = 0; j < entries.length; j++) if (entries[j].name === s.base) matching.push(j);
    for (let i = matching.length - 1; i >= 0; i--) {
      const e = entries[matching[i]];
      entries.push({ name: sub.name, replaces: e.replaces, skips: [...e.skips, s.base], skipRange: e.skipRange });
      e.replaces = "";
      e.skips = [];
      e.skipRange = "";
    }
    const original = entries.length - matching.length;
    for (let j = 0; j < original; j++) {
      const e = entries[j];
      if (e.replaces === s.base) {
        e.replaces = sub.name;
        e.skips = [...e.skips, s.base];
      } else if (e.skips.includes(s.base)) {
        e.skips = [...e.skips, sub.name].filter((k) => k !== s.base);
      }
    }
  }
  cfg.bundles.push(sub as Bundle);
  const err = modelError(cfg);
  if (err) throw fail("TEMPLATE_SUBSTITUTES_RESULT_INVALID", `resulting config is not valid FBC: ${err.message}`);
}

/**
 * Renders a substitutes template as opm does. The entries must form a valid catalog; substitutions
 * are applied in order, each substitute image rendered through `src`. Errors, all prefixed
 * `render: `: `unable to parse template: …`, `unable to create declarative config from entries: …`,
 * `entries are not valid FBC: …`, `cannot reuse the same substitution base "<b>"`,
 * `cannot reuse the same substitution "<n>" for different bases ("<b1>" and "<b2>")`,
 * `error processing substitution "<base>" -> "<name>": …`. Validity is checked with opcat's
 * validator: the message is that of the first problem (opm prints its whole error tree).
 */
export async function renderSubstitutesTemplate(text: string, src: BundleSource): Promise<DeclarativeConfig> {
  let parsed: ReturnType<typeof parseEntriesTemplate>;
  try {
    parsed = parseEntriesTemplate(text, SUBSTITUTES_TEMPLATE_DATA, SCHEMA_SUBSTITUTES);
  } catch (e) {
    if (e instanceof OpcatError && (e.code === "TEMPLATE_DECODE" || e.code === "TEMPLATE_SCHEMA"))
      wrap("render: unable to parse template", e);
    wrap("render: unable to create declarative config from entries", e);
  }
  const { cfg, value } = parsed;
  const substitutions = (value.substitutions as Substitution[] | null) ?? [];
  const invalid = modelError(cfg);
  if (invalid) throw fail(invalid.code, `render: entries are not valid FBC: ${invalid.message}`);

  const seenBases = new Set<string>();
  const seenNames = new Map<string, string>();
  for (const s of substitutions) {
    if (seenBases.has(s.base))
      throw fail("TEMPLATE_SUBSTITUTION_REUSED", `render: cannot reuse the same substitution base ${goQuote(s.base)}`);
    seenBases.add(s.base);
    const prior = seenNames.get(s.name);
    if (prior !== undefined) {
      throw fail(
        "TEMPLATE_SUBSTITUTION_REUSED",
        `render: cannot reuse the same substitution ${goQuote(s.name)} ` +
          `for different bases (${goQuote(prior)} and ${goQuote(s.base)})`,
      );
    }
    seenNames.set(s.name, s.base);
    try {
      await processSubstitution(src, cfg, s);
    } catch (e) {
      wrap(`render: error processing substitution ${goQuote(s.base)} -> ${goQuote(s.name)}`, e);
    }
  }
  return cfg;
}
