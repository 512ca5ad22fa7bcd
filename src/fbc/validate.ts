/**
 * Validation of a loaded catalog with every rule of `opm validate` (opm's ConvertToModel followed by
 * model.Validate), reported all at once with stable codes and the location of the blob concerned.
 * opm stops at the first problem of ConvertToModel and prints model problems in random order; here
 * a bad blob is set aside and checking goes on, and problems come out sorted by file and line.
 */
import { validatePullSpec } from "../reference/reference.js";
import { goQuote } from "../gojson/fmt.js";
import {
  SemverError,
  SemverPanic,
  tryParsePRVersion,
  tryParseRange,
  tryParseVersion,
  type PRVersion,
} from "../semver/index.js";
import { compareProblems, problem, type Problem } from "../errors/index.js";
import {
  byteCompare,
  channelHead,
  versionString,
  type Model,
  type ModelBundle,
  type ModelChannel,
  type ModelPackage,
} from "./model.js";
import { parseProperties, PropertyParseError, type ParsedProperties } from "./properties.js";
import { operandProblems } from "./operands.js";
import {
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  type DeclarativeConfig,
  type Bundle,
  type Channel,
  type Location,
} from "./types.js";

export interface ValidationResult {
  /** The linked model (built from every blob that passed its own checks). */
  model: Model;
  /** Every problem found, sorted by location. Empty means the catalog is valid. */
  problems: Problem[];
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** k8s.io/apimachinery validation.IsDNS1123Label messages. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push("must be no more than 63 characters");
  if (!DNS1123_LABEL.test(value)) {
    if (DNS1123_SUBDOMAIN.test(value)) errs.push("must not contain dots");
    else
      errs.push(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters " +
          "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  " +
          "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      );
  }
  return errs;
}

/** model.NewRelease: parses an `olm.package` release string; the error text on failure. */
export function parseRelease(rel: string): PRVersion[] | string {
  if (rel === "") return [];
  if (rel.length > 20) return `invalid release ${goQuote(rel)}: exceeds maximum length of 20 characters`;
  const out: PRVersion[] = [];
  const errs: string[] = [];
  rel.split(".").forEach((seg, i) => {
    const p = tryParsePRVersion(seg);
    if (p instanceof SemverError) errs.push(`segment ${i}: ${p.message}`);
    else out.push(p);
  });
  if (errs.length > 0) return `invalid release ${goQuote(rel)}: ${errs.join("\n")}`;
  return out;
}

/** Go's `%#v` of a declcfg.PackageScopedReference. */
function refGoSyntax(r: { schema: string; name: string }): string {
  return `declcfg.PackageScopedReference{Schema:${goQuote(r.schema)}, Name:${goQuote(r.name)}}`;
}

const q = goQuote;

/** Shared by channel entries whose bundle is not (yet) found; replaced, never mutated. */
const NONE = Object.freeze([]) as unknown as never[];

/**
 * Validates a loaded catalog: {@link convertToModel}, then {@link validateModel} on the model, then
 * opcat's checks of the operand blobs (docs/operands.md) and properties. Never throws for bad content.
 */
export function validateCatalog(cfg: DeclarativeConfig): ValidationResult {
  const problems: Problem[] = [];
  const add = adder(problems);
  const conversion = convert(cfg, add);
  checkModel(conversion.model, add, conversion.rejectedDefaultChannels, conversion.rejectedChannelPackages);
  // opcat extension (docs/operands.md): olm.operand / olm.relatedimages blobs and the
  // olm.operand.* / olm.relatedImageBundle bundle properties; opm does not look inside them.
  problems.push(...operandProblems(cfg.others, cfg.bundles));
  problems.sort(compareProblems);
  return { model: conversion.model, problems };
}

/** The model built by {@link convertToModel}, its problems, and what it set aside. */
export interface ConversionResult {
  /** The linked model (built from every blob that passed its own checks). */
  model: Model;
  /** The conversion's problems, sorted by location. */
  problems: Problem[];
  /** Packages whose default channel was rejected: not reported again by {@link validateModel}. */
  rejectedDefaultChannels: Set<string>;
  /** Packages with a rejected channel: not reported again as having no channels. */
  rejectedChannelPackages: Set<string>;
}

/** What {@link validateModel} must not report again, as {@link convertToModel} already did. */
export type ModelRejections = Pick<ConversionResult, "rejectedDefaultChannels" | "rejectedChannelPackages">;

/**
 * opm's declcfg.ConvertToModel: the per-blob checks of packages, channels, bundles and deprecations,
 * and their linking into a {@link Model}. A rejected blob is set aside (reported once) and
 * conversion goes on. Never throws for bad content.
 */
export function convertToModel(cfg: DeclarativeConfig): ConversionResult {
  const problems: Problem[] = [];
  const conversion = convert(cfg, adder(problems));
  problems.sort(compareProblems);
  return { ...conversion, problems };
}

/**
 * opm's model.Validate: packages (default channel, channels, distinct versions), channels (a
 * head, the replaces chain, no stranded bundles), bundles (names, skips, skipRange, image,
 * deprecations). `rejected` comes from {@link convertToModel}. Problems sorted by location.
 */
export function validateModel(model: Model, rejected?: ModelRejections): Problem[] {
  const problems: Problem[] = [];
  checkModel(
    model,
    adder(problems),
    rejected?.rejectedDefaultChannels ?? new Set(),
    rejected?.rejectedChannelPackages ?? new Set(),
  );
  problems.sort(compareProblems);
  return problems;
}

function adder(problems: Problem[]): Add {
  return (code, message, loc, blob, hint) => {
    problems.push(problem(code, message, { loc, blob, hint }));
  };
}

/** ConvertToModel, reporting through `add`. */
function convert(cfg: DeclarativeConfig, add: Add): Omit<ConversionResult, "problems"> {
  const model: Model = new Map();
  const defaultChannels = new Map<string, string>();

  // Packages.
  const firstPackageLoc = new Map<string, Location | undefined>();
  for (const p of cfg.packages) {
    const blob = { schema: SCHEMA_PACKAGE, name: p.name };
    if (p.name === "") {
      add(
        "FBC_PACKAGE_NO_NAME",
        "config contains package with no name",
        p.loc,
        blob,
        'set "name" on the olm.package blob',
      );
      continue;
    }
    if (model.has(p.name)) {
      const first = firstPackageLoc.get(p.name);
      add(
        "FBC_PACKAGE_DUPLICATE",
        `duplicate package ${q(p.name)}`,
        p.loc,
        blob,
        first
          ? `the package is already defined at ${first.file}:${first.line}; keep one olm.package blob per package`
          : undefined,
      );
      continue;
    }
    const dnsErrs = dns1123LabelErrors(p.name);
    if (dnsErrs.length > 0) {
      add(
        "FBC_PACKAGE_INVALID_NAME",
        `invalid package name ${q(p.name)}: [${dnsErrs.join(" ")}]`,
        p.loc,
        blob,
        "package names must be lowercase RFC 1123 labels",
      );
      continue;
    }
    const mp: ModelPackage = { name: p.name, description: p.description, channels: new Map(), source: p };
    if (p.icon) mp.icon = { base64data: p.icon.base64data, mediatype: p.icon.mediatype };
    defaultChannels.set(p.name, p.defaultChannel);
    firstPackageLoc.set(p.name, p.loc);
    model.set(p.name, mp);
  }

  // Packages that channels, bundles or deprecations name but no olm.package blob defines: reported
  // once each, and their blobs still checked against one another (in a stand-in left out of the model).
  const orphans = orphanPackages(cfg, model, add);

  // Channels. A rejected channel is not reported again as an undefined default channel, nor are the
  // bundles it lists as being in no channel.
  const rejectedDefault = new Set<string>();
  const rejectedChannelPkgs = new Set<string>();
  const rejectedEntries = new Map<string, Set<string>>();
  const rejectEntries = (c: Channel): void => addEntryNames(rejectedEntries, c);
  const entriesWithoutBundle = new Map<ModelChannel, Set<string>>();
  for (const c of cfg.channels) {
    const blob = { schema: SCHEMA_CHANNEL, package: c.package, name: c.name };
    const mp = model.get(c.package);
    if (!mp) {
      add(
        "FBC_CHANNEL_UNKNOWN_PACKAGE",
        `unknown package ${q(c.package)} for channel ${q(c.name)}`,
        c.loc,
        blob,
        `add an olm.package blob named ${q(c.package)} or fix the channel's "package"`,
      );
      continue;
    }
    if (c.name === "") {
      rejectedDefault.add(c.package);
      rejectedChannelPkgs.add(c.package);
      rejectEntries(c);
      add(
        "FBC_CHANNEL_NO_NAME",
        `package ${q(c.package)} contains channel with no name`,
        c.loc,
        blob,
        'set "name" on the olm.channel blob',
      );
      continue;
    }
    if (mp.channels.has(c.name)) {
      rejectedChannelPkgs.add(c.package);
      rejectEntries(c);
      const first = mp.channels.get(c.name)?.source?.loc;
      add(
        "FBC_CHANNEL_DUPLICATE",
        `package ${q(c.package)} has duplicate channel ${q(c.name)}`,
        c.loc,
        blob,
        first ? `the channel is already defined at ${first.file}:${first.line}` : undefined,
      );
      continue;
    }
    const mc: ModelChannel = { name: c.name, package: mp, bundles: new Map(), properties: c.properties, source: c };
    let dup = false;
    for (const e of c.entries ?? []) {
      if (mc.bundles.has(e.name)) {
        add(
          "FBC_CHANNEL_DUPLICATE_ENTRY",
          `invalid package ${q(c.package)}, channel ${q(c.name)}: duplicate entry ${q(e.name)}`,
          c.loc,
          blob,
          "list each bundle once per channel",
        );
        dup = true;
        break;
      }
      mc.bundles.set(e.name, {
        name: e.name,
        package: mp,
        channel: mc,
        replaces: e.replaces,
        skips: e.skips,
        skipRange: e.skipRange,
        image: "",
        // Shared until the entry's bundle is found (then replaced, never mutated): three fewer
        // allocations per channel entry.
        properties: NONE,
        relatedImages: NONE,
        release: NONE,
        // Set when the bundle is found: present from the start so that filling them in does not
        // change the object's shape (10,000 shape transitions and property stores otherwise).
        deprecation: undefined,
        source: undefined,
        parsed: undefined,
        version: undefined,
      });
    }
    if (dup) {
      rejectedChannelPkgs.add(c.package);
      rejectEntries(c);
      if (defaultChannels.get(c.package) === c.name) rejectedDefault.add(c.package);
      continue;
    }
    entriesWithoutBundle.set(mc, new Set(mc.bundles.keys()));
    mp.channels.set(c.name, mc);
    if (defaultChannels.get(c.package) === c.name) mp.defaultChannel = mc;
  }

  // Bundles. A bundle rejected here is not reported again as a channel entry without a bundle.
  const rejected = new Map<string, Set<string>>();
  const packageBundles = new Map<string, Map<string, Location | undefined>>();
  const bundleState: BundleState = {
    model,
    add,
    packageBundles,
    pullSpecErrors: new Map(),
    entriesWithoutBundle,
    rejectedEntries,
    orphans,
  };
  for (const b of cfg.bundles) {
    if (linkBundle(b, bundleState)) continue;
    const set = rejected.get(b.package);
    if (set) set.add(b.name);
    else rejected.set(b.package, new Set([b.name]));
  }

  // Channel entries without a bundle (opm checks only the last channel of each package).
  reportEntriesWithoutBundle(entriesWithoutBundle, rejected, orphans, add);

  // An unknown default channel becomes an empty placeholder channel (which then fails as empty).
  for (const mp of model.values()) {
    const dc = defaultChannels.get(mp.name) ?? "";
    if (dc !== "" && !mp.defaultChannel && !rejectedDefault.has(mp.name)) {
      const placeholder: ModelChannel = { name: dc, package: mp, bundles: new Map(), properties: [] };
      mp.defaultChannel = placeholder;
      mp.channels.set(dc, placeholder);
    }
  }

  // Deprecations.
  const deprecated = new Set<string>();
  cfg.deprecations.forEach((d, i) => {
    const blob = { schema: "olm.deprecations", package: d.package };
    if (d.package === "") {
      add("FBC_DEPRECATION_NO_PACKAGE", `package name must be set for deprecation item ${i}`, d.loc, blob);
      return;
    }
    const mp = model.get(d.package);
    if (!mp) {
      add(
        "FBC_DEPRECATION_UNKNOWN_PACKAGE",
        `cannot apply deprecations to an unknown package ${q(d.package)}`,
        d.loc,
        blob,
      );
      return;
    }
    if (deprecated.has(d.package)) {
      add(
        "FBC_DEPRECATION_DUPLICATE",
        `expected a maximum of one deprecation per package: ${q(d.package)}`,
        d.loc,
        blob,
        "merge the entries into one olm.deprecations blob",
      );
      return;
    }
    deprecated.add(d.package);
    const seen = new Set<string>();
    (d.entries ?? []).forEach((e, j) => {
      const ref = e.reference;
      if (ref.schema === "") {
        add(
          "FBC_DEPRECATION_NO_SCHEMA",
          `schema must be set for deprecation entry [${j}] for package ${q(d.package)}`,
          d.loc,
          blob,
        );
        return;
      }
      const key = ref.schema + "\u0000" + ref.name;
      if (seen.has(key)) {
        add(
          "FBC_DEPRECATION_DUPLICATE_ENTRY",
          `duplicate deprecation entry ${refGoSyntax(ref)} for package ${q(d.package)}`,
          d.loc,
          blob,
        );
        return;
      }
      seen.add(key);
      switch (ref.schema) {
        case SCHEMA_BUNDLE:
          if (!packageBundles.get(d.package)?.has(ref.name)) {
            add(
              "FBC_DEPRECATION_UNKNOWN_BUNDLE",
              `cannot deprecate bundle ${q(ref.name)} for package ${q(d.package)}: bundle not found`,
              d.loc,
              blob,
            );
            return;
          }
          for (const mc of mp.channels.values()) {
            const mb = mc.bundles.get(ref.name);
            if (mb) mb.deprecation = { message: e.message };
          }
          return;
        case SCHEMA_CHANNEL: {
          const mc = mp.channels.get(ref.name);
          if (!mc) {
            add(
              "FBC_DEPRECATION_UNKNOWN_CHANNEL",
              `cannot deprecate channel ${q(ref.name)} for package ${q(d.package)}: channel not found`,
              d.loc,
              blob,
            );
            return;
          }
          mc.deprecation = { message: e.message };
          return;
        }
        case SCHEMA_PACKAGE:
          if (ref.name !== "") {
            add(
              "FBC_DEPRECATION_PACKAGE_NAME_SET",
              `package name must be empty for deprecated package ${q(d.package)} (specified ${q(ref.name)})`,
              d.loc,
              blob,
              "remove reference.name from the olm.package entry",
            );
            return;
          }
          mp.deprecation = { message: e.message };
          return;
        default:
          add(
            "FBC_DEPRECATION_UNKNOWN_SCHEMA",
            `cannot deprecate object ${refGoSyntax(ref)} referenced by ` +
              `entry ${j} for package ${q(d.package)}: object schema unknown`,
            d.loc,
            blob,
            "reference.schema must be olm.package, olm.channel or olm.bundle",
          );
      }
    });
  });

  // The stand-ins are no packages of the catalog.
  deleteKeys(model, orphans);
  return { model, rejectedDefaultChannels: rejectedDefault, rejectedChannelPackages: rejectedChannelPkgs };
}

/**
 * Reports channel entries that name no bundle of their package (and takes them out of the channel),
 * except bundles rejected earlier and the entries of a package no olm.package defines and no bundle
 * names: those dangle only because of that (most likely a typo in the channel's "package"), which is
 * reported once already, as opm's first message.
 */
function reportEntriesWithoutBundle(
  entries: Map<ModelChannel, Set<string>>,
  rejected: Map<string, Set<string>>,
  orphans: Map<string, Orphan>,
  add: Add,
): void {
  for (const [mc, names] of entries) {
    if (orphans.get(mc.package.name)?.bundles.length === 0) continue;
    const gone = rejected.get(mc.package.name);
    if (gone) for (const n of names) if (gone.has(n)) names.delete(n);
    if (names.size === 0) continue;
    const list = [...names].sort(byteCompare);
    add(
      "FBC_CHANNEL_ENTRY_NO_BUNDLE",
      `no olm.bundle blobs found in package ${q(mc.package.name)} for olm.channel entries [${list.join(" ")}]`,
      mc.source?.loc,
      { schema: SCHEMA_CHANNEL, package: mc.package.name, name: mc.name },
      `add the missing olm.bundle blobs or remove the entries from channel ${q(mc.name)}`,
    );
    for (const n of list) mc.bundles.delete(n);
  }
}

/** A package named by blobs but defined by no olm.package blob, and the blobs that name it. */
interface Orphan {
  /** Stands in for the package while its blobs are checked; never part of the returned model. */
  stand: ModelPackage;
  channels: Channel[];
  bundles: Bundle[];
  deprecations: DeclarativeConfig["deprecations"];
}

function deleteKeys(from: Map<string, unknown>, keys: Map<string, unknown>): void {
  for (const k of keys.keys()) from.delete(k);
}

/** Adds the names of channel `c`'s entries to the set of its package in `map`. */
function addEntryNames(map: Map<string, Set<string>>, c: Channel): void {
  let set = map.get(c.package);
  if (!set) map.set(c.package, (set = new Set()));
  for (const e of c.entries ?? []) set.add(e.name);
}

/**
 * The packages (non-empty names) that channels, bundles or deprecations name and no olm.package defines:
 * each reported (once), its stand-in added to `model` (to be taken out when conversion ends).
 */
function orphanPackages(cfg: DeclarativeConfig, model: Model, add: Add): Map<string, Orphan> {
  const out = new Map<string, Orphan>();
  const get = (name: string): Orphan | undefined => {
    if (name === "" || model.has(name)) return undefined;
    let o = out.get(name);
    if (!o) {
      o = { stand: { name, description: "", channels: new Map() }, channels: [], bundles: [], deprecations: [] };
      out.set(name, o);
    }
    return o;
  };
  for (const c of cfg.channels) get(c.package)?.channels.push(c);
  for (const b of cfg.bundles) get(b.package)?.bundles.push(b);
  for (const d of cfg.deprecations) get(d.package)?.deprecations.push(d);
  for (const [name, o] of out) {
    reportOrphan(name, o, add);
    model.set(name, o.stand);
  }
  return out;
}

/**
 * One problem for a missing olm.package blob, with opm's message for the first blob opm meets that
 * names it (channels come before bundles, bundles before deprecations) and, as the hint, the root cause:
 * how many blobs name the package. The others would only repeat it.
 */
function reportOrphan(name: string, o: Orphan, add: Add): void {
  const counts: string[] = [];
  if (o.channels.length > 0) counts.push(plural(o.channels.length, "channel"));
  if (o.bundles.length > 0) counts.push(plural(o.bundles.length, "bundle"));
  if (o.deprecations.length > 0) counts.push(plural(o.deprecations.length, "olm.deprecations blob"));
  const total = o.channels.length + o.bundles.length + o.deprecations.length;
  const named = counts.length > 1 ? `${counts.slice(0, -1).join(", ")} and ${counts[counts.length - 1]}` : counts[0];
  const cause =
    total > 1
      ? `package ${q(name)} has no olm.package blob; ${named} name it (this is the first): ` +
        `add an olm.package blob named ${q(name)}, or fix their "package"`
      : undefined;
  const first = firstNaming(name, o);
  add(first.code, first.message, first.loc, first.blob, cause ?? first.hint);
}

/** opm's problem for the first blob that names a package without an olm.package blob. */
function firstNaming(
  name: string,
  o: Orphan,
): { code: string; message: string; loc: Location | undefined; blob: Problem["blob"]; hint?: string } {
  const fix = (what: string) => `add an olm.package blob named ${q(name)} or fix the ${what}'s "package"`;
  const c = o.channels[0];
  if (c)
    return {
      code: "FBC_CHANNEL_UNKNOWN_PACKAGE",
      message: `unknown package ${q(name)} for channel ${q(c.name)}`,
      loc: c.loc,
      blob: { schema: SCHEMA_CHANNEL, package: name, name: c.name },
      hint: fix("channel"),
    };
  const b = o.bundles[0];
  if (b)
    return {
      code: "FBC_BUNDLE_UNKNOWN_PACKAGE",
      message: `unknown package ${q(name)} for bundle ${q(b.name)}`,
      loc: b.loc,
      blob: { schema: SCHEMA_BUNDLE, package: name, name: b.name },
      hint: fix("bundle"),
    };
  const d = o.deprecations[0];
  return {
    code: "FBC_DEPRECATION_UNKNOWN_PACKAGE",
    message: `cannot apply deprecations to an unknown package ${q(name)}`,
    loc: d.loc,
    blob: { schema: "olm.deprecations", package: name },
  };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

interface BundleState {
  model: Model;
  add: Add;
  /** Bundle names seen per package, with the first definition's location. */
  packageBundles: Map<string, Map<string, Location | undefined>>;
  /** Related image pull specs repeat (shared by a package's bundles): each is checked once. */
  pullSpecErrors: Map<string, string | null>;
  entriesWithoutBundle: Map<ModelChannel, Set<string>>;
  /** Per package, the entries of its rejected channels: their bundles are in a channel after all. */
  rejectedEntries: Map<string, Set<string>>;
  /** Packages without an olm.package blob (reported once): a bundle of one with no channel at all is not reported. */
  orphans: Map<string, Orphan>;
}

function checkPullSpec(ref: string, cache: Map<string, string | null>): string | undefined {
  const known = cache.get(ref);
  if (known !== undefined) return known ?? undefined;
  const err = validatePullSpec(ref);
  cache.set(ref, err ?? null);
  return err;
}

/**
 * ConvertToModel for one olm.bundle blob: checks it and fills in its channel entries. False when
 * the bundle is rejected (reported here). A function of its own, so that it is optimised quickly
 * (10,000 bundles would otherwise run interpreted while the whole of convertToModel compiles).
 */
function linkBundle(b: Bundle, st: BundleState): boolean {
  const { add } = st;
  const blob = (): Problem["blob"] => ({ schema: SCHEMA_BUNDLE, package: b.package, name: b.name });
  if (b.package === "") {
    add(
      "FBC_BUNDLE_NO_PACKAGE",
      `package name must be set for bundle ${q(b.name)}`,
      b.loc,
      blob(),
      'set "package" on the olm.bundle blob',
    );
    return false;
  }
  const mp = st.model.get(b.package);
  if (!mp) {
    add(
      "FBC_BUNDLE_UNKNOWN_PACKAGE",
      `unknown package ${q(b.package)} for bundle ${q(b.name)}`,
      b.loc,
      blob(),
      `add an olm.package blob named ${q(b.package)} or fix the bundle's "package"`,
    );
    return false;
  }
  let names = st.packageBundles.get(b.package);
  if (!names) st.packageBundles.set(b.package, (names = new Map()));
  if (names.has(b.name)) {
    const first = names.get(b.name);
    add(
      "FBC_BUNDLE_DUPLICATE",
      `package ${q(b.package)} has duplicate bundle ${q(b.name)}`,
      b.loc,
      blob(),
      first ? `the bundle is already defined at ${first.file}:${first.line}` : undefined,
    );
    return false;
  }
  names.set(b.name, b.loc);
  let props: ParsedProperties;
  try {
    props = parseProperties(b.properties);
  } catch (e) {
    if (!(e instanceof PropertyParseError)) throw e;
    add("FBC_BUNDLE_PROPERTY_INVALID", `parse properties for bundle ${q(b.name)}: ${e.message}`, b.loc, blob());
    return false;
  }
  if (props.packages.length !== 1) {
    add(
      "FBC_BUNDLE_PACKAGE_PROPERTY_COUNT",
      `package ${q(b.package)} bundle ${q(b.name)} must have exactly ` +
        `1 "olm.package" property, found ${props.packages.length}`,
      b.loc,
      blob(),
      "give the bundle exactly one property {type: olm.package, value: {packageName, version}}",
    );
    return false;
  }
  const pp = props.packages[0];
  if (b.package !== pp.packageName) {
    add(
      "FBC_BUNDLE_PACKAGE_MISMATCH",
      `package ${q(b.package)} does not match "olm.package" property ${q(pp.packageName)}`,
      b.loc,
      blob(),
      "the olm.package property's packageName must equal the bundle's \"package\"",
    );
    return false;
  }
  if (b.image !== "") {
    // Bundle images are nearly always unique: checked directly, not through the cache.
    const err = validatePullSpec(b.image);
    if (err !== undefined) {
      add(
        "FBC_BUNDLE_IMAGE_INVALID",
        `package ${q(b.package)} bundle ${q(b.name)} image: invalid image pull spec ${q(b.image)}: ${err}`,
        b.loc,
        blob(),
      );
      return false;
    }
  }
  for (let i = 0; i < b.relatedImages.length; i++) {
    const ri = b.relatedImages[i];
    if (ri.image === "") continue;
    const err = checkPullSpec(ri.image, st.pullSpecErrors);
    if (err !== undefined) {
      add(
        "FBC_BUNDLE_RELATED_IMAGE_INVALID",
        `package ${q(b.package)} bundle ${q(b.name)} relatedImages[${i}].image: ` +
          `invalid image pull spec ${q(ri.image)}: ${err}`,
        b.loc,
        blob(),
      );
      return false;
    }
  }
  const ver = tryParseVersion(pp.version);
  if (ver instanceof SemverError) {
    add(
      "FBC_BUNDLE_VERSION_INVALID",
      `error parsing bundle ${q(b.name)} version ${q(pp.version)}: ${ver.message}`,
      b.loc,
      blob(),
      "versions must be strict semver: MAJOR.MINOR.PATCH[-pre][+build], no leading v",
    );
    return false;
  }
  let release: PRVersion[] = NONE;
  if (pp.release !== "") {
    const r = parseRelease(pp.release);
    if (typeof r === "string") {
      add(
        "FBC_BUNDLE_RELEASE_INVALID",
        `error parsing bundle ${q(b.name)} release version ${q(pp.release)}: ${r}`,
        b.loc,
        blob(),
      );
      return false;
    }
    release = r;
  }
  let found = false;
  for (const mc of mp.channels.values()) {
    const mb = mc.bundles.get(b.name);
    if (!mb) continue;
    found = true;
    mb.image = b.image;
    mb.properties = b.properties;
    mb.relatedImages = b.relatedImages;
    mb.source = b;
    mb.parsed = props;
    mb.version = ver;
    mb.release = release;
    st.entriesWithoutBundle.get(mc)?.delete(b.name);
  }
  if (
    !found &&
    !st.rejectedEntries.get(b.package)?.has(b.name) &&
    !(mp.channels.size === 0 && st.orphans.has(b.package))
  ) {
    add(
      "FBC_BUNDLE_NOT_IN_CHANNEL",
      `package ${q(b.package)}, bundle ${q(b.name)} not found in any channel entries`,
      b.loc,
      blob(),
      "add the bundle to at least one olm.channel's entries, or remove it",
    );
  }
  return true;
}

type Add = (code: string, message: string, loc: Location | undefined, blob?: Problem["blob"], hint?: string) => void;

/**
 * model.Validate, reporting through `add`. Packages, channels and bundles are visited in model
 * order: the problems are sorted by location (then code and message) at the end, so the output is
 * deterministic anyway.
 */
function checkModel(
  model: Model,
  add: Add,
  rejectedDefault: ReadonlySet<string>,
  rejectedChannelPkgs: ReadonlySet<string>,
): void {
  // skipRange strings repeat across bundles and packages: parse each distinct one once.
  const rangeErrors = new Map<string, string | null>();
  for (const mp of model.values()) {
    const pkgPath = `invalid package ${q(mp.name)}`;
    const ploc = mp.source?.loc;
    const pblob = (): Problem["blob"] => ({ schema: SCHEMA_PACKAGE, name: mp.name });
    if (!mp.defaultChannel && !rejectedDefault.has(mp.name))
      add(
        "FBC_PACKAGE_NO_DEFAULT_CHANNEL",
        `${pkgPath}: default channel must be set`,
        ploc,
        pblob(),
        'set "defaultChannel" on the olm.package blob',
      );
    if (mp.channels.size === 0 && !rejectedChannelPkgs.has(mp.name))
      add(
        "FBC_PACKAGE_NO_CHANNELS",
        `${pkgPath}: package must contain at least one channel`,
        ploc,
        pblob(),
        "add an olm.channel blob for this package",
      );
    for (const mc of mp.channels.values()) validateChannel(mc, pkgPath, add, rangeErrors);
    // Duplicate versions: a version's first bundle name is remembered; only a second distinct
    // name (rare) makes a set.
    const byVersion = new Map<string, string | Set<string>>();
    let dupVersions: string[] | undefined;
    for (const mc of mp.channels.values()) {
      for (const mb of mc.bundles.values()) {
        if (!mb.source) continue;
        const v = versionString(mb);
        const seen = byVersion.get(v);
        if (seen === undefined) byVersion.set(v, mb.name);
        else if (typeof seen === "string") {
          if (seen !== mb.name) {
            byVersion.set(v, new Set([seen, mb.name]));
            (dupVersions ??= []).push(v);
          }
        } else seen.add(mb.name);
      }
    }
    if (dupVersions) {
      const dups = dupVersions
        .sort(byteCompare)
        .map((v) => `{${v}: [${[...(byVersion.get(v) as Set<string>)].sort(byteCompare).join(", ")}]}`);
      add(
        "FBC_PACKAGE_DUPLICATE_VERSIONS",
        `${pkgPath}: duplicate versions found in bundles: [${dups.join(" ")}]`,
        ploc,
        pblob(),
        "every bundle of a package needs a distinct version (and release)",
      );
    }
    if (mp.deprecation && mp.deprecation.message === "")
      add("FBC_DEPRECATION_NO_MESSAGE", `${pkgPath}: invalid deprecation: message must be set`, ploc, pblob());
  }
}

function validateChannel(mc: ModelChannel, pkgPath: string, add: Add, rangeErrors: Map<string, string | null>): void {
  const path = `${pkgPath}: invalid channel ${q(mc.name)}`;
  const loc = mc.source?.loc ?? mc.package.source?.loc;
  const blob = (): Problem["blob"] => ({ schema: SCHEMA_CHANNEL, package: mc.package.name, name: mc.name });
  if (mc.bundles.size === 0) {
    if (!mc.source) {
      add(
        "FBC_DEFAULT_CHANNEL_UNDEFINED",
        `${path}: channel must contain at least one bundle`,
        loc,
        { schema: SCHEMA_PACKAGE, name: mc.package.name },
        `the package's defaultChannel ${q(mc.name)} is not defined by any olm.channel blob`,
      );
    } else if ((mc.source.entries ?? []).length === 0) {
      add(
        "FBC_CHANNEL_EMPTY",
        `${path}: channel must contain at least one bundle`,
        loc,
        blob(),
        "add entries to the channel or remove it",
      );
    }
  } else {
    const err = replacesChainError(mc);
    if (err) add(err.code, `${path}: ${err.message}`, loc, blob(), err.hint);
  }
  for (const mb of mc.bundles.values()) validateBundle(mb, path, add, rangeErrors);
  if (mc.deprecation && mc.deprecation.message === "")
    add("FBC_DEPRECATION_NO_MESSAGE", `${path}: invalid deprecation: message must be set`, loc, blob());
}

function replacesChainError(mc: ModelChannel): { code: string; message: string; hint?: string } | undefined {
  const { head, error } = channelHead(mc);
  if (!head) {
    return error?.startsWith("multiple")
      ? {
          code: "FBC_CHANNEL_MULTIPLE_HEADS",
          message: error,
          hint: "exactly one bundle may be left un-replaced and un-skipped; link the others with replaces or skips",
        }
      : {
          code: "FBC_CHANNEL_NO_HEAD",
          message: error ?? "no channel head found in graph",
          hint: "every bundle is replaced or skipped by another: the upgrade graph has a cycle",
        };
  }
  const skipped = new Set<string>();
  for (const b of mc.bundles.values()) for (const s of b.skips) skipped.add(s);
  const chain = new Set<string>([head.name]);
  const order: string[] = [head.name];
  let cur: ModelBundle | undefined = head;
  while (cur) {
    if (skipped.has(cur.replaces)) break;
    if (chain.has(cur.replaces)) {
      const start = order.indexOf(cur.replaces);
      const cycle = [...order.slice(start), cur.replaces];
      return {
        code: "FBC_CHANNEL_CYCLE",
        message: `detected cycle in replaces chain of upgrade graph: ${cycle.join(" -> ")}`,
        hint: "a bundle's replaces chain leads back to itself; break the cycle",
      };
    }
    chain.add(cur.replaces);
    order.push(cur.replaces);
    cur = mc.bundles.get(cur.replaces);
  }
  const stranded: string[] = [];
  for (const name of mc.bundles.keys()) if (!chain.has(name) && !skipped.has(name)) stranded.push(name);
  if (stranded.length > 0) {
    stranded.sort(byteCompare);
    return {
      code: "FBC_CHANNEL_STRANDED",
      message: `channel contains one or more stranded bundles: ${stranded.join(", ")}`,
      hint: "stranded bundles cannot be upgraded from: add them to the head's replaces chain or to a skips list",
    };
  }
  return undefined;
}

/** blang's ParseRange error for `r` (undefined when valid), memoised in `cache`. */
function skipRangeError(r: string, cache: Map<string, string | null>): string | undefined {
  const known = cache.get(r);
  if (known !== undefined) return known ?? undefined;
  let err: string | undefined;
  try {
    const parsed = tryParseRange(r);
    if (parsed instanceof SemverError) err = parsed.message;
  } catch (e) {
    if (e instanceof SemverPanic) err = e.message;
    else throw e;
  }
  cache.set(r, err ?? null);
  return err;
}

function validateBundle(mb: ModelBundle, chPath: string, add: Add, rangeErrors: Map<string, string | null>): void {
  if (!mb.source) return; // reported as FBC_CHANNEL_ENTRY_NO_BUNDLE
  // Messages, paths and blob references are built only when there is a problem to report.
  const path = (): string => `${chPath}: invalid bundle ${q(mb.name)}`;
  const loc = mb.source.loc;
  const blob = (): Problem["blob"] => ({ schema: SCHEMA_BUNDLE, package: mb.package.name, name: mb.name });
  if (mb.name === "") add("FBC_BUNDLE_NO_NAME", `${path()}: name must be set`, loc, blob());
  if (mb.release.length > 0) {
    const normalized = `${mb.package.name}-v${versionString(mb)}`;
    if (mb.name !== normalized)
      add(
        "FBC_BUNDLE_NAME_NOT_NORMALIZED",
        `${path()}: name ${q(mb.name)} does not match normalized name ${q(normalized)}`,
        loc,
        blob(),
        "a bundle with a release must be named <package>-v<version>-<release>",
      );
  }
  const skips = mb.skips;
  for (let i = 0; i < skips.length; i++) {
    if (skips[i] === "")
      add(
        "FBC_BUNDLE_EMPTY_SKIP",
        `${path()}: skip[${i}] is empty`,
        mc(mb).source?.loc ?? loc,
        blob(),
        "remove the empty skips element",
      );
  }
  if (mb.skipRange !== "") {
    const err = skipRangeError(mb.skipRange, rangeErrors);
    if (err !== undefined)
      add(
        "FBC_BUNDLE_SKIPRANGE_INVALID",
        `${path()}: invalid skipRange ${q(mb.skipRange)}: ${err}`,
        mc(mb).source?.loc ?? loc,
        blob(),
        "skipRange uses blang/semver ranges, e.g. '>=1.0.0 <1.2.0'",
      );
  }
  if (mb.image === "" && (mb.parsed?.bundleObjects ?? 0) === 0)
    add(
      "FBC_BUNDLE_NO_IMAGE",
      `${path()}: bundle image must be set`,
      loc,
      blob(),
      'set "image" to the bundle image pull spec',
    );
  if (mb.deprecation && mb.deprecation.message === "")
    add("FBC_DEPRECATION_NO_MESSAGE", `${path()}: invalid deprecation: message must be set`, loc, blob());
  if (mb.version && mb.version.build.length > 0 && mb.release.length > 0)
    add(
      "FBC_BUNDLE_BUILD_WITH_RELEASE",
      `${path()}: cannot use build metadata in version with a release version`,
      loc,
      blob(),
    );
}

function mc(mb: ModelBundle): ModelChannel {
  return mb.channel;
}
