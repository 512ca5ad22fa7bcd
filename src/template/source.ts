/**
 * Where templates get their bundles from: a BundleSource turns an image reference into the
 * rendered `olm.bundle` (opm renders the image; opcat can answer from an already-rendered catalog).
 */
import { OpcatError } from "../fbc/errors.js";
import { goQuote } from "../gojson/fmt.js";
import type { Bundle } from "../fbc/types.js";

/**
 * A rendered bundle. `csvJson` is the bundle's ClusterServiceVersion as JSON (opm's internal
 * `Bundle.CsvJSON`); when absent it is read from the bundle's `olm.bundle.object` properties.
 */
export interface RenderedBundle extends Bundle {
  csvJson?: string;
}

/** Resolves a bundle image reference to its rendered olm.bundle blob (images are pulled by a later module). */
export interface BundleSource {
  render(image: string): Promise<RenderedBundle>;
}

/** A source for when no image can be rendered: every reference fails with exit code 2. */
export function unavailableSource(): BundleSource {
  return {
    render(image: string): Promise<RenderedBundle> {
      return Promise.reject(
        new OpcatError(
          "IMAGE_PULL_UNAVAILABLE",
          `render reference ${goQuote(image)}: pulling bundle images is not available yet in opcat; answer the template's images from an already-rendered catalog with --reuse <catalog>`,
          { exitCode: 2 },
        ),
      );
    },
  };
}
