/**
 * Container images. For now: image references (Docker reference grammar as opm validates pull specs).
 * This module will grow into the registry client.
 */
export {
  ReferenceError,
  type ImageReference,
  parseNormalizedNamed,
  tryParseNormalizedNamed,
  parseReference,
  tryParseReference,
  parseNamed,
  validatePullSpec,
} from "./reference.js";
