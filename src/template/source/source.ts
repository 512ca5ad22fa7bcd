/**
 * Where templates get their bundles from: a BundleSource turns an image reference into the
 * rendered `olm.bundle` (opm renders the image; opcat can answer from an already-rendered catalog).
 */
import { OpcatError } from "../../errors/index.js";
import { goQuote } from "../../gojson/fmt.js";
import type { Bundle } from "../../fbc/types.js";

/**
 * A rendered bundle. `csvJson` is the bundle's ClusterServiceVersion as JSON (opm's internal
 * `Bundle.CsvJSON`); when absent it is read from the bundle's `olm.bundle.object` properties.
 */
export interface RenderedBundle extends Bundle {
  csvJson?: string;
}

/**
 * Resolves a bundle image reference to its rendered olm.bundle blob (`imageSource` pulls and
 * renders images, `reuseSource` answers from an already-rendered catalog). `render` may be called
 * concurrently and returns a bundle the caller may change.
 */
export interface BundleSource {
  render(image: string): Promise<RenderedBundle>;
  /**
   * Optional hint: these references are about to be rendered (in this order), so a source that pulls
   * can start now, in parallel. Errors surface later, from `render`.
   */
  prefetch?(images: readonly string[]): void;
}

/** A source for when no image may be rendered: every reference fails (IMAGE_PULL_UNAVAILABLE, exit code 2). */
export function unavailableSource(): BundleSource {
  return {
    render(image: string): Promise<RenderedBundle> {
      return Promise.reject(
        new OpcatError(
          "IMAGE_PULL_UNAVAILABLE",
          `render reference ${goQuote(image)}: no bundle source given (bundle images are not pulled here)`,
          { kind: "io" },
        ),
      );
    },
  };
}

/** A copy of a bundle that callers may change freely (lists copied; csvJson carried along when set). */
export function copyRenderedBundle(b: RenderedBundle): RenderedBundle {
  const c: RenderedBundle = {
    schema: b.schema,
    name: b.name,
    package: b.package,
    image: b.image,
    properties: [...b.properties],
    relatedImages: b.relatedImages.map((r) => ({ ...r })),
  };
  if (b.csvJson !== undefined) c.csvJson = b.csvJson;
  return c;
}
