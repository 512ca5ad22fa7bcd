/**
 * The validated, linked catalog model (opm's alpha/model): packages → channels → bundles, where a
 * bundle listed in several channels appears once per channel with that channel's upgrade edges.
 */
import { compareUtf8 } from "../gojson/encode.js";
import type { PRVersion, Version } from "../semver/index.js";
import { prVersionToString } from "../semver/index.js";
import type { ParsedProperties } from "./properties.js";
import type { Bundle, Channel, Location, Package, Property, RelatedImage } from "./types.js";

export interface ModelDeprecation {
  message: string;
}

export interface ModelPackage {
  name: string;
  description: string;
  icon?: { base64data: Uint8Array | null; mediatype: string };
  defaultChannel?: ModelChannel;
  channels: Map<string, ModelChannel>;
  deprecation?: ModelDeprecation;
  source?: Package;
}

export interface ModelChannel {
  name: string;
  package: ModelPackage;
  bundles: Map<string, ModelBundle>;
  deprecation?: ModelDeprecation;
  properties: Property[];
  /** The olm.channel blob (absent for the placeholder opm creates for an undefined default channel). */
  source?: Channel;
}

export interface ModelBundle {
  name: string;
  package: ModelPackage;
  channel: ModelChannel;
  replaces: string;
  skips: string[];
  skipRange: string;
  image: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  deprecation?: ModelDeprecation;
  /** The olm.bundle blob; absent when a channel entry names a bundle that does not exist. */
  source?: Bundle;
  parsed?: ParsedProperties;
  version?: Version;
  /** Release segments (`olm.package` `release`), empty when none. */
  release: PRVersion[];
}

export type Model = Map<string, ModelPackage>;

/** `<version>` or `<version>-<release>` (opm's `Bundle.VersionString`). */
export function versionString(b: ModelBundle): string {
  const v = b.version ? b.version.toString() : "0.0.0";
  return b.release.length > 0 ? `${v}-${b.release.map(prVersionToString).join(".")}` : v;
}

/** Compares by version, then release (no release sorts first), as opm's `Bundle.Compare`. */
export function compareModelBundles(a: ModelBundle, b: ModelBundle): number {
  if (a.name === b.name) return 0;
  if (a.version && b.version) {
    const c = a.version.compare(b.version);
    if (c !== 0) return c;
  }
  const ar = a.release.length > 0;
  const br = b.release.length > 0;
  if (ar && !br) return 1;
  if (!ar && br) return -1;
  for (let i = 0; i < Math.min(a.release.length, b.release.length); i++) {
    const x = a.release[i];
    const y = b.release[i];
    if (x.isNum && y.isNum) {
      if (x.num !== y.num) return x.num < y.num ? -1 : 1;
    } else if (x.isNum !== y.isNum) return x.isNum ? -1 : 1;
    else if (x.str !== y.str) return x.str < y.str ? -1 : 1;
  }
  return a.release.length - b.release.length;
}

/** The channel head: the only bundle no other bundle replaces or skips. */
export function channelHead(ch: ModelChannel): { head?: ModelBundle; error?: string } {
  const incoming = new Set<string>();
  for (const b of ch.bundles.values()) {
    if (b.replaces) incoming.add(b.replaces);
    for (const s of b.skips) incoming.add(s);
  }
  const heads: ModelBundle[] = [];
  for (const b of ch.bundles.values()) if (!incoming.has(b.name)) heads.push(b);
  if (heads.length === 0) return { error: "no channel head found in graph" };
  if (heads.length > 1) {
    const names = heads.map((h) => h.name).sort(byteCompare);
    return { error: `multiple channel heads found in graph: ${names.join(", ")}` };
  }
  return { head: heads[0] };
}

/** Go's string order (UTF-8 bytes). */
export const byteCompare = compareUtf8;

/** Where a model object was defined, for error reports. */
export function locationOf(x: ModelPackage | ModelChannel | ModelBundle): Location | undefined {
  return x.source?.loc;
}
