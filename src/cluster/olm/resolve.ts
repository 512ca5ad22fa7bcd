/**
 * operator-controller's catalog resolution (`internal/operator-controller/resolve/catalog.go`, v1.11)
 * for a ClusterExtension: in every selected, available catalog, the bundles of the package that are
 * in the requested channels, within the version range (Masterminds syntax) and — under
 * `CatalogProvided` with a bundle installed — successors of the installed one (replaces, skips,
 * skipRange in blang syntax) or the installed one itself; deprecated bundles sort last, then the
 * highest version (and release); across catalogs a non-deprecated bundle wins over a deprecated one,
 * then the highest priority; two catalogs left at the same priority is an error, with upstream's text.
 */
import { MastermindsError, mastermindsRange } from "../../semver/masterminds.js";
import {
  comparePRVersions,
  newPRVersion,
  prVersionToString,
  SemverError,
  tryParseVersion,
  Version,
  type PRVersion,
} from "../../semver/version.js";
import { tryParseRange } from "../../semver/range.js";
import type {
  Bundle,
  Channel,
  ChannelEntry,
  Deprecation,
  DeprecationEntry,
  PackageScopedReference,
  Property,
} from "../../fbc/types.js";
import { goQuote } from "../../semver/gostr.js";

/*
 * The FBC blobs as catalogd serves them (JSON, what opm omits absent): views of src/fbc/types.ts's
 * model, not a second declaration of it.
 */
export type FbcChannelEntry = Pick<ChannelEntry, "name"> &
  Partial<Pick<ChannelEntry, "replaces" | "skips" | "skipRange">>;
export type FbcChannel = Pick<Channel, "name" | "package"> & { entries: FbcChannelEntry[] };
export type FbcBundle = Pick<Bundle, "name" | "package"> &
  Partial<Pick<Bundle, "image">> & { properties?: { type: Property["type"]; value: unknown }[] };
export type FbcDeprecation = Pick<Deprecation, "package"> & {
  entries: (Pick<DeprecationEntry, "message"> & { reference: Partial<PackageScopedReference> & { schema: string } })[];
};

/** One catalog's view of the package (empty arrays when the catalog does not have it). */
export interface CatalogPackage {
  catalog: string;
  priority: number;
  channels: FbcChannel[];
  bundles: FbcBundle[];
  deprecations: FbcDeprecation[];
}

export interface InstalledBundle {
  name: string;
  version: string;
}

export interface ResolveRequest {
  packageName: string;
  version?: string;
  channels?: string[];
  upgradeConstraintPolicy?: "CatalogProvided" | "SelfCertified";
  installed?: InstalledBundle;
  /**
   * Refuse a resolved bundle that declares dependencies (upstream's NoDependencyValidation; default
   * true). opcat's ClusterExtension does not resolve dependencies (its Operator/Input API does).
   */
  refuseDependencies?: boolean;
}

/** The properties upstream refuses on a resolved bundle. */
const DEPENDENCY_PROPERTIES = new Set(["olm.package.required", "olm.gvk.required", "olm.constraint"]);

export interface Resolved {
  bundle: FbcBundle;
  /** The bundle's version as upstream reports it in status.install.bundle.version. */
  version: string;
  catalog: string;
  deprecation?: FbcDeprecation;
}

export class ResolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResolutionError";
  }
}

interface VersionRelease {
  version: Version;
  release: PRVersion[];
}

/** bundleutil.ParseLegacyVersionRelease: a release in the build metadata of registry+v1 versions. */
export function versionRelease(text: string): VersionRelease | undefined {
  const v = tryParseVersion(text);
  if (v instanceof SemverError) return undefined;
  const build = v.build.join(".");
  if (build !== "") {
    try {
      const rel = build.split(".").map((p) => newPRVersion(p));
      return { version: new Version(v.major, v.minor, v.patch, v.pre, []), release: rel };
    } catch {
      // not a release: the build metadata stays
    }
  }
  return { version: v, release: [] };
}

function compareRelease(a: PRVersion[], b: PRVersion[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  if (a.length === 0) return -1;
  if (b.length === 0) return 1;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = comparePRVersions(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareVR(a: VersionRelease, b: VersionRelease): number {
  return a.version.compare(b.version) || compareRelease(a.release, b.release);
}

/** The version of a bundle (its olm.package property). */
export function bundleVersion(b: FbcBundle): VersionRelease | undefined {
  const p = b.properties?.find((x) => x.type === "olm.package");
  const v = (p?.value as { version?: unknown } | undefined)?.version;
  return typeof v === "string" ? versionRelease(v) : undefined;
}

/** The version text upstream writes into status (the release back in the build metadata). */
export function statusVersion(vr: VersionRelease): string {
  const v = vr.version;
  const build = vr.release.length > 0 ? vr.release.map(prVersionToString) : v.build;
  return new Version(v.major, v.minor, v.patch, v.pre, build).toString();
}

function successorOf(installed: InstalledBundle, channels: FbcChannel[]): (b: FbcBundle) => boolean {
  const parsed = tryParseVersion(installed.version);
  const iv = parsed instanceof SemverError ? undefined : parsed;
  const isSuccessor = (e: FbcChannelEntry) => {
    if (e.replaces === installed.name) return true;
    if ((e.skips ?? []).includes(installed.name)) return true;
    if (e.skipRange && iv) {
      const r = tryParseRange(e.skipRange);
      try {
        if (typeof r === "function" && r(iv)) return true;
      } catch {
        // blang panics on some ranges (an empty OR group): Go's resolver would crash; no edge here
      }
    }
    return false;
  };
  const installedVR = versionRelease(installed.version);
  return (b) => {
    for (const ch of channels) for (const e of ch.entries) if (e.name === b.name && isSuccessor(e)) return true;
    const vr = bundleVersion(b);
    return !!vr && !!installedVR && compareVR(vr, installedVR) === 0;
  };
}

function deprecatedBundle(b: FbcBundle, d: FbcDeprecation | undefined): boolean {
  return !!d?.entries.some((e) => e.reference.schema === "olm.bundle" && e.reference.name === b.name);
}

function formatList(xs: readonly string[]): string {
  return `[${xs.join(" ")}]`;
}

/** Resolves one bundle, or throws a ResolutionError with operator-controller's message. */
export function resolveBundle(req: ResolveRequest, catalogs: readonly CatalogPackage[]): Resolved {
  let range: ((v: Version) => boolean) | undefined;
  if (req.version) {
    const r = mastermindsRange(req.version);
    if (r instanceof MastermindsError)
      throw new ResolutionError(`desired version range ${goQuote(req.version)} is invalid: ${r.message}`);
    range = r;
  }
  type Found = { bundle: FbcBundle; vr: VersionRelease; catalog: string; priority: number; dep?: FbcDeprecation };
  let found: Found[] = [];
  let priorDeprecation: FbcDeprecation | undefined;
  for (const cat of catalogs) {
    if (cat.channels.length + cat.bundles.length + cat.deprecations.length === 0) continue;
    const channels =
      req.channels && req.channels.length > 0
        ? cat.channels.filter((c) => req.channels!.includes(c.name))
        : cat.channels;
    const preds: ((b: FbcBundle) => boolean)[] = [];
    if (req.channels && req.channels.length > 0)
      preds.push((b) => channels.some((c) => c.entries.some((e) => e.name === b.name)));
    if (range) {
      const r = range;
      preds.push((b) => {
        const vr = bundleVersion(b);
        return !!vr && r(vr.version);
      });
    }
    if (req.upgradeConstraintPolicy !== "SelfCertified" && req.installed) {
      if (tryParseVersion(req.installed.version) instanceof SemverError)
        throw new ResolutionError(
          `error walking catalogs: error finding upgrade edges: failed to get version and release of ` +
            `installed bundle: invalid version ${goQuote(req.installed.version)}`,
        );
      preds.push(successorOf(req.installed, channels));
    }
    const dep = cat.deprecations[0];
    const candidates = cat.bundles
      .filter((b) => preds.every((p) => p(b)))
      .map((b) => ({ b, vr: bundleVersion(b) }))
      .filter((x): x is { b: FbcBundle; vr: VersionRelease } => x.vr !== undefined)
      .sort((x, y) => Number(deprecatedBundle(x.b, dep)) - Number(deprecatedBundle(y.b, dep)) || compareVR(y.vr, x.vr));
    if (candidates.length === 0) continue;
    const top = candidates[0];
    if (found.length > 0) {
      const cur = deprecatedBundle(top.b, dep);
      const prior = deprecatedBundle(found[found.length - 1].bundle, priorDeprecation);
      if (cur && !prior) continue;
      if (!cur && prior) found = [];
    }
    found.push({ bundle: top.b, vr: top.vr, catalog: cat.catalog, priority: cat.priority, dep });
    priorDeprecation = dep;
  }
  if (found.length > 1) {
    found.sort((a, b) => b.priority - a.priority);
    if (found[0].priority !== found[1].priority) found = [found[0]];
  }
  if (found.length !== 1) {
    let msg = "";
    if (req.installed) msg += `error upgrading from currently installed version ${goQuote(req.installed.version)}: `;
    msg += found.length > 1 ? `found bundles for package ${goQuote(req.packageName)} ` : "";
    msg += found.length <= 1 ? `no bundles found for package ${goQuote(req.packageName)} ` : "";
    if (req.version) msg += `matching version ${goQuote(req.version)} `;
    if (req.channels && req.channels.length > 0) msg += `in channels ${formatList(req.channels)} `;
    const matched = found.map((f) => f.catalog).sort();
    if (matched.length > 1) msg += `in multiple catalogs with the same priority ${formatList(matched)} `;
    throw new ResolutionError(msg.trim());
  }
  const f = found[0];
  if (req.refuseDependencies !== false) {
    const dep = (f.bundle.properties ?? []).find((p) => DEPENDENCY_PROPERTIES.has(p.type));
    if (dep)
      throw new ResolutionError(
        `validating bundle ${goQuote(f.bundle.name)}: bundle ${goQuote(f.bundle.name)} has a dependency declared ` +
          `via property ${goQuote(dep.type)} which is currently not supported`,
      );
  }
  // the deprecations of the catalog the bundle comes from (upstream returns the last catalog walked)
  return { bundle: f.bundle, version: statusVersion(f.vr), catalog: f.catalog, deprecation: f.dep };
}
