/**
 * What a pulled image is, by its labels, as opm decides it: a catalog image (the configs label), a
 * bundle image (the bundle package label), or opm's error for anything else (sqlite indexes included).
 */
import { OpcatError } from "../errors/index.js";
import { goQuote } from "../gojson/fmt.js";
import { LABEL_BUNDLE_PACKAGE, LABEL_CONFIGS, LABEL_DATABASE } from "./labels.js";
import type { PulledImage } from "./pull.js";

/** opm's error for an image that is neither a catalog nor a bundle image. */
export function imageTypeError(ref: string, labels: Record<string, string>): OpcatError {
  const keys = Object.keys(labels).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (labels[LABEL_DATABASE] !== undefined) {
    return new OpcatError(
      "IMAGE_SQLITE_INDEX",
      `render ${goQuote(ref)}: sqlite-based index images are no ` +
        `longer supported, migrate to a file-based catalog: not allowed`,
      { kind: "invalid" },
    );
  }
  if (keys.length === 0)
    return new OpcatError(
      "IMAGE_TYPE_UNKNOWN",
      `render ${goQuote(ref)}: image type could not be determined: image has no labels`,
      { kind: "invalid" },
    );
  return new OpcatError(
    "IMAGE_TYPE_UNKNOWN",
    `render ${goQuote(ref)}: image type could not be determined, found labels\n` +
      `${keys.map((k) => `  ${k}=${labels[k]}`).join("\n")}`,
    { kind: "invalid" },
  );
}

/** Classifies a pulled image by its labels: catalog (configs label) first, then bundle (package label). */
export function classifyImage(
  img: Pick<PulledImage, "ref" | "labels">,
): { kind: "catalog-image"; configsDir: string } | { kind: "bundle-image" } {
  const cfg = img.labels[LABEL_CONFIGS];
  if (cfg !== undefined) return { kind: "catalog-image", configsDir: cfg };
  if (img.labels[LABEL_BUNDLE_PACKAGE] !== undefined) return { kind: "bundle-image" };
  throw imageTypeError(img.ref, img.labels);
}
