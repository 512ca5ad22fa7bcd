/**
 * Catalog templates, rendered exactly as `opm alpha render-template` does (operator-registry
 * alpha/template): the basic template (`olm.template.basic`) and the semver template
 * (`olm.semver`). Bundle images are resolved by a BundleSource; `reuseSource` answers them from an
 * already-rendered catalog (`--reuse`).
 */
import { OpcatError } from "../fbc/errors.js";
import { goQuote } from "../gojson/fmt.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { renderBasicTemplate } from "./basic.js";
import { detectTemplateSchema, SCHEMA_BASIC, SCHEMA_SEMVER, SCHEMA_SUBSTITUTES, TEMPLATE_TYPES, typeFromSchema } from "./detect.js";
import { renderSemverTemplate } from "./semver.js";
import type { BundleSource } from "./source.js";

export { renderBasicTemplate } from "./basic.js";
export { renderSemverTemplate, parseSemverTemplate, type SemverTemplate } from "./semver.js";
export { detectTemplateSchema, TEMPLATE_TYPES, TEMPLATE_SCHEMAS, SCHEMA_BASIC, SCHEMA_SEMVER, SCHEMA_SUBSTITUTES } from "./detect.js";
export { reuseSource, type ReuseOptions } from "./reuse.js";
export { unavailableSource, type BundleSource, type RenderedBundle } from "./source.js";

export interface RenderTemplateOptions {
  /** `basic`, `semver` or `substitutes`; when absent the type is detected from the first document's schema. */
  type?: string;
}

/**
 * Renders a template as `opm alpha render-template [TYPE]` does, with its error texts:
 * `invalid template type "<t>", must be one of: [basic semver substitutes]`,
 * `auto-detecting template type: …`, `rendering template: …`. The substitutes template is
 * recognised but not implemented yet (OpcatError TEMPLATE_UNSUPPORTED, exit code 2).
 * The result is not validated (opm does not validate either).
 */
export async function renderTemplate(text: string, src: BundleSource, opts: RenderTemplateOptions = {}): Promise<DeclarativeConfig> {
  let type = opts.type;
  if (type !== undefined && type !== "") {
    if (!TEMPLATE_TYPES.includes(type)) {
      throw new OpcatError("TEMPLATE_TYPE", `invalid template type ${goQuote(type)}, must be one of: [${TEMPLATE_TYPES.join(" ")}]`, { exitCode: 2 });
    }
  } else {
    type = typeFromSchema(detectTemplateSchema(text));
  }
  try {
    switch (type) {
      case typeFromSchema(SCHEMA_BASIC):
        return await renderBasicTemplate(text, src);
      case typeFromSchema(SCHEMA_SEMVER):
        return await renderSemverTemplate(text, src);
      default:
        throw new OpcatError("TEMPLATE_UNSUPPORTED", `the ${goQuote(SCHEMA_SUBSTITUTES)} template is not supported by opcat yet`, { exitCode: 2 });
    }
  } catch (e) {
    if (e instanceof OpcatError && e.code !== "TEMPLATE_UNSUPPORTED") {
      throw new OpcatError(e.code, `rendering template: ${e.message}`, { exitCode: e.exitCode, cause: e });
    }
    throw e;
  }
}
