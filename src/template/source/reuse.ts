/**
 * `--reuse`: answering a template's bundle images from a catalog opm already rendered, instead of
 * pulling and rendering the images again.
 */
import { OpcatError } from "../../errors/index.js";
import { bundleCsvJson } from "../../fbc/objects.js";
import { PROPERTY_CSV_METADATA } from "../../fbc/properties.js";
import { goQuote } from "../../gojson/fmt.js";
import { tryParseReference } from "../../image/index.js";
import type { Bundle, DeclarativeConfig, Icon } from "../../fbc/types.js";
import { copyRenderedBundle, type BundleSource, type RenderedBundle } from "./source.js";

export interface ReuseOptions {
  /**
   * Also answer tag references (`repo:tag`). Off by default: a tag may have moved since the catalog
   * was rendered, so only digest-pinned references (`repo@sha256:…`) are safe to reuse.
   */
  reuseTags?: boolean;
}

function isDigestPinned(image: string): boolean {
  const ref = tryParseReference(image);
  return !(ref instanceof Error) && ref.digest !== undefined;
}

/**
 * A BundleSource that answers from an already-rendered FBC: the bundle whose `image` is exactly the
 * requested reference (the first one if several). Each call returns a fresh copy, so callers may
 * normalise or migrate the result without touching `rendered`.
 *
 * The bundle's CSV (used by the semver template for the package description and icon) comes from
 * its `olm.bundle.object` properties. A catalog migrated to `olm.csv.metadata` no longer holds the
 * CSV: its description is taken from the `olm.csv.metadata` property, and its icon — which
 * csv.metadata does not carry — from the package blob when the bundle is the last entry of the
 * package's default channel (where opm's semver template took the package icon from).
 *
 * Errors (OpcatError, exit code 2): an image that is not in the catalog, or a tag reference
 * without `reuseTags`.
 */
/** TEMPLATE_REUSE_TAG errors for a tag reference the reused catalog has (answered with --reuse-tags). */
export const REUSABLE_TAGS = new WeakSet<Error>();

export function reuseSource(rendered: DeclarativeConfig, opts: ReuseOptions = {}): BundleSource {
  const byImage = new Map<string, Bundle>();
  for (const b of rendered.bundles) if (!byImage.has(b.image)) byImage.set(b.image, b);
  let heads: Map<string, Icon> | undefined;
  const headIcons = (): Map<string, Icon> => {
    if (heads) return heads;
    heads = new Map();
    for (const p of rendered.packages) {
      if (!p.icon) continue;
      const ch = rendered.channels.find((c) => c.package === p.name && c.name === p.defaultChannel);
      const entries = ch?.entries;
      if (entries && entries.length > 0) heads.set(`${p.name}\u0000${entries[entries.length - 1].name}`, p.icon);
    }
    return heads;
  };
  return {
    render(image: string): Promise<RenderedBundle> {
      if (!opts.reuseTags && !isDigestPinned(image)) {
        const e = new OpcatError(
          "TEMPLATE_REUSE_TAG",
          `render reference ${goQuote(image)}: only digest-pinned references (…@sha256:…) ` +
            `can be reused from a rendered catalog; a tag may have moved since it was rendered`,
          { kind: "usage" },
        );
        // a source tried after this one (pulling) says so when it fails too: --reuse-tags would have answered
        if (byImage.has(image)) REUSABLE_TAGS.add(e);
        return Promise.reject(e);
      }
      const b = byImage.get(image);
      if (!b) {
        return Promise.reject(
          new OpcatError(
            "TEMPLATE_REUSE_NOT_FOUND",
            `render reference ${goQuote(image)}: image not found in the reused catalog`,
            { kind: "io" },
          ),
        );
      }
      const copy = copyRenderedBundle(b);
      // Computed on first use: only the semver template reads it, for one bundle.
      let csv: string | undefined;
      Object.defineProperty(copy, "csvJson", {
        enumerable: false,
        get: (): string =>
          (csv ??= bundleCsvJson(b) || (csvFromMetadata(b, headIcons().get(`${b.package}\u0000${b.name}`)) ?? "")),
      });
      return Promise.resolve(copy);
    },
  };
}

/** A CSV carrying what the bundle's olm.csv.metadata (plus the known icon) says, or undefined without one. */
function csvFromMetadata(b: Bundle, icon: Icon | undefined): string | undefined {
  const prop = b.properties.find((p) => p.type === PROPERTY_CSV_METADATA);
  if (!prop) return undefined;
  const v = prop.value.value;
  const spec: Record<string, unknown> = {};
  if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.description === "string")
    spec.description = v.description;
  if (icon) {
    spec.icon = [
      {
        base64data: icon.base64data === null ? null : Buffer.from(icon.base64data).toString("base64"),
        mediatype: icon.mediatype,
      },
    ];
  }
  return JSON.stringify({
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: b.name },
    spec,
  });
}
