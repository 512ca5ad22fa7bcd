/** What an unpack yields, how it fails, and its bounds (ProvisionerClass parameters). */
import type { PullOptions } from "../../../image/index.js";
import { parseGoDuration } from "../../../gojson/duration.js";
import type { KubeServer } from "../../kube/client.js";
import type { Requester } from "../permissions.js";
import type { ConditionReason } from "../reasons.js";

export interface UnpackedContent {
  /** Directory with the bundle's files. */
  dir: string;
  /** sha256 over the sorted file paths and contents. */
  digest: string;
  format: "registry+v1" | "plain";
  /** Refs pinned to what was unpacked (images by digest). */
  resolvedRefs: string[];
  /** `/objects/<kind>/<namespace>/<name>` of each manifest. */
  objects: string[];
}

/**
 * A failure to unpack; `reason` is a CamelCase condition reason,
 * `retryable` false for content that will never unpack.
 */
export class UnpackError extends Error {
  constructor(
    readonly reason: ConditionReason,
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = "UnpackError";
  }
}

/** Bounds of one unpack (ProvisionerClass parameters, see {@link limitsOf}). */
export interface ContentLimits {
  /** Bytes of the unpacked tree, and of a downloaded tarball (default 64 MiB: `maxBundleSize`). */
  maxBytes?: number;
  /** Files, directories and symlinks of the unpacked tree (default 10,000: `maxBundleFiles`). */
  maxFiles?: number;
  /** Bytes of one file under `manifests/` (`maxObjectSize`; default: only `maxBytes`). */
  maxObjectBytes?: number;
  /** Time for fetching one ref, docker:// or https:// (default 5 min: `pullTimeout`). */
  pullTimeoutMs?: number;
}

export const DEFAULT_LIMITS: Required<Omit<ContentLimits, "maxObjectBytes">> = {
  maxBytes: 64 * 1024 ** 2,
  maxFiles: 10_000,
  pullTimeoutMs: 5 * 60_000,
};

export interface ContentOptions {
  /** Root of the content store. */
  root: string;
  /** Image access (registries.conf, TLS, cache) for docker:// refs. */
  pull?: PullOptions;
  client: KubeServer;
  /**
   * Who asked for the content: ConfigMaps and pull Secrets are read only when a SubjectAccessReview
   * says this user may `get` them. Without one, none are read.
   */
  requester?: Requester;
  /**
   * The client acts as the requester itself (its own credentials: `instance describe`): its reads
   * are checked by the API server, no SubjectAccessReview is needed.
   */
  clientIsRequester?: boolean;
  /** The Bundle was made by the controllers for their own purposes: it has no requester by design. */
  madeByControllers?: boolean;
  limits?: ContentLimits;
  /** Aborts the unpack (the Bundle was deleted or changed); partial content is removed. */
  signal?: AbortSignal;
}

const UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  m: 1e6,
  g: 1e9,
  t: 1e12,
  ki: 1024,
  mi: 1024 ** 2,
  gi: 1024 ** 3,
  ti: 1024 ** 4,
};

/**
 * A size as ProvisionerClass parameters write it: a number of bytes, or a Kubernetes quantity with an
 * SI (`10M`, `500k`) or binary (`10Mi`) suffix, also with a trailing `b`/`B` and in any case (`10mb`,
 * `64MiB`): `m` is mega here, never milli. Undefined when it is not a size.
 */
export function parseSize(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtKMGT]i?)?[bB]?\s*$/.exec(v);
  if (!m) return undefined;
  const unit = UNITS[(m[2] ?? "").toLowerCase()];
  return unit === undefined ? undefined : Math.floor(Number(m[1]) * unit);
}

/**
 * The limits a ProvisionerClass's parameters set: `maxObjectSize` (one manifest), `maxBundleSize`
 * (the unpacked tree), `maxBundleFiles`, `pullTimeout` (a Go duration). Values that do not parse are
 * reported in `problems` and the default is used.
 */
export function limitsOf(parameters: Record<string, unknown> | undefined): {
  limits: ContentLimits;
  problems: string[];
} {
  const p = parameters ?? {};
  const limits: ContentLimits = {};
  const problems: string[] = [];
  const size = (key: string, set: (n: number) => void) => {
    if (p[key] === undefined) return;
    const n = parseSize(p[key]);
    if (n === undefined) problems.push(`parameter ${key}: ${JSON.stringify(p[key])} is not a size (e.g. 10Mi, 10mb)`);
    else set(n);
  };
  size("maxObjectSize", (n) => (limits.maxObjectBytes = n));
  size("maxBundleSize", (n) => (limits.maxBytes = n));
  if (p.maxBundleFiles !== undefined) {
    const n = Number(p.maxBundleFiles);
    if (Number.isInteger(n) && n > 0) limits.maxFiles = n;
    else problems.push(`parameter maxBundleFiles: ${JSON.stringify(p.maxBundleFiles)} is not a positive integer`);
  }
  if (p.pullTimeout !== undefined) {
    const d = typeof p.pullTimeout === "string" ? parseGoDuration(p.pullTimeout) : "not a string";
    if (typeof d === "number" && d > 0) limits.pullTimeoutMs = d;
    else problems.push(`parameter pullTimeout: ${JSON.stringify(p.pullTimeout)} is not a duration (e.g. 5m)`);
  }
  return { limits, problems };
}
