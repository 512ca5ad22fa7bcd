/**
 * Catalog templates, rendered exactly as `opm alpha render-template` does (operator-registry
 * alpha/template): the basic template (`olm.template.basic`) and the semver template
 * (`olm.semver`). Bundle images are resolved by a BundleSource; `reuseSource` answers them from an
 * already-rendered catalog (`--reuse`).
 */
import { OpcatError } from "../errors/index.js";
import { goQuote } from "../gojson/fmt.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { renderBasicTemplate } from "./basic.js";
import {
  ALL_TEMPLATE_TYPES,
  detectTemplateSchema,
  SCHEMA_BASIC,
  SCHEMA_GRAPH,
  SCHEMA_SEMVER,
  SCHEMA_SUBSTITUTES,
  TEMPLATE_TYPES,
  typeFromSchema,
} from "./detect.js";
import { renderSemverTemplate, type SemverSkips } from "./semver.js";
import { renderSubstitutesTemplate } from "./substitutes.js";
import { renderGraphTemplate, type TagLister } from "./graph/graph.js";
import type { BundleSource } from "./source/source.js";

export { renderBasicTemplate } from "./basic.js";
export {
  renderSemverTemplate,
  parseSemverTemplate,
  SEMVER_SKIPS,
  type SemverTemplate,
  type SemverSkips,
} from "./semver.js";
export {
  detectTemplateSchema,
  TEMPLATE_TYPES,
  TEMPLATE_SCHEMAS,
  ALL_TEMPLATE_TYPES,
  SCHEMA_BASIC,
  SCHEMA_SEMVER,
  SCHEMA_SUBSTITUTES,
} from "./detect.js";
export { reuseSource, type ReuseOptions } from "./source/reuse.js";
export {
  renderGraphTemplate,
  parseGraphTemplate,
  addBundleToGraph,
  formatGraphTemplate,
  catalogTagLister,
  registryTagLister,
  SCHEMA_GRAPH,
  SCHEMA_GRAPH_ALIAS,
  type GraphTemplate,
  type TagLister,
  type AddBundleToGraph,
} from "./graph/graph.js";
export { convertCatalog, type ConvertOptions, type ConvertTarget } from "./convert.js";
export { unavailableSource, type BundleSource, type RenderedBundle } from "./source/source.js";
export {
  planAddBundle,
  addBundleToFile,
  addBundleFromReleaseConfig,
  registerAddBundleKind,
  type AddBundleKind,
  type AddBundleOutcome,
  type AddBundlePlan,
  type AddBundleReport,
  type AddBundleRequest,
  type ReleaseConfigReport,
} from "./addbundle/addbundle.js";
export { parseReleaseConfig, type ReleaseConfig } from "./addbundle/releaseconfig.js";
export {
  imageSource,
  fallbackSource,
  renderedSource,
  type ImageSourceOptions,
  type RenderedSourceOptions,
} from "./source/imagesource.js";
export { renderSubstitutesTemplate, type Substitution } from "./substitutes.js";
export {
  renderCompositeTemplate,
  COMPOSITE_SCHEMA,
  CATALOGS_SCHEMA,
  BUILDER_SCHEMAS,
  type CompositeOptions,
  type CompositeResult,
} from "./composite.js";

export interface RenderTemplateOptions {
  /**
   * `basic`, `semver`, `substitutes` or opcat's `graph`; when absent
   * the type is detected from the first document's schema.
   */
  type?: string;
  /** Lists repository tags for the graph template's `bundles.repo` (else the source's own `listTags`, if any). */
  tags?: TagLister;
  /**
   * Semver template: what a Y-stream head skips, `cumulative` (today's opm,
   * the default) or `y-stream` (the examples of docs/templates.md#semver).
   */
  semverSkips?: SemverSkips;
}

/**
 * Renders a template as `opm alpha render-template [TYPE]` does, with its error texts:
 * `invalid template type "<t>", must be one of: [basic semver substitutes]` (opm's list; `graph`
 * is accepted too),
 * `auto-detecting template type: …`, `rendering template: …`.
 * The result is not validated (opm does not validate either).
 */
export async function renderTemplate(
  text: string,
  src: BundleSource,
  opts: RenderTemplateOptions = {},
): Promise<DeclarativeConfig> {
  let type = opts.type;
  if (type !== undefined && type !== "") {
    if (!ALL_TEMPLATE_TYPES.includes(type)) {
      throw new OpcatError(
        "TEMPLATE_TYPE",
        `invalid template type ${goQuote(type)}, must be one of: [${TEMPLATE_TYPES.join(" ")}]`,
        { kind: "usage" },
      );
    }
  } else {
    type = typeFromSchema(detectTemplateSchema(text));
  }
  try {
    switch (type) {
      case typeFromSchema(SCHEMA_BASIC):
        return await renderBasicTemplate(text, src);
      case typeFromSchema(SCHEMA_SEMVER):
        return await renderSemverTemplate(text, src, { skips: opts.semverSkips });
      case typeFromSchema(SCHEMA_GRAPH):
        return await renderGraphTemplate(text, src, { tags: opts.tags });
      case typeFromSchema(SCHEMA_SUBSTITUTES):
        return await renderSubstitutesTemplate(text, src);
      default:
        throw new OpcatError("TEMPLATE_UNSUPPORTED", `the ${goQuote(type)} template is not supported by opcat`, {
          kind: "usage",
        });
    }
  } catch (e) {
    if (e instanceof OpcatError && e.code !== "TEMPLATE_UNSUPPORTED") {
      throw new OpcatError(e.code, `rendering template: ${e.message}`, { kind: e.kind, cause: e });
    }
    throw e;
  }
}
