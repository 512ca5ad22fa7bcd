/** The template inputs' Go struct decoder lives in the leaf src/gojson (structdecode.ts). */
export {
  formatFloat32G,
  type GoDecodeOptions,
  type GoDecodeResult,
  type GoField,
  type GoType,
  goDecode,
  goFoldEqual,
} from "../gojson/structdecode.js";
