/**
 * The community operator pipeline's `release-config.yaml` (operator-pipelines
 * operatorcert/schemas/release-config-schema.json): which catalog templates a new bundle goes into,
 * its channels and, for basic templates, its edges.
 *
 * ```yaml
 * catalog_templates:
 *   - template_name: basic.yaml      # relative to the package's catalog-templates/ directory
 *     channels: [stable]             # semver templates: Candidate, Fast, Stable
 *     replaces: foo.v1.0.0           # optional
 *     skips: [foo.v1.0.1]            # optional
 *     skipRange: ">=1.0.0 <1.1.0"    # optional
 *     defaultChannel: stable         # optional; only used when the pipeline creates a template
 * merge: true                        # optional, not used here
 * ```
 */
import { parseYaml12 } from "../../yaml/yaml12.js";

export interface ReleaseConfigTemplate {
  templateName: string;
  channels: string[];
  defaultChannel?: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface ReleaseConfig {
  catalogTemplates: ReleaseConfigTemplate[];
  merge?: boolean;
}

const TEMPLATE_KEYS = new Set(["template_name", "channels", "defaultChannel", "replaces", "skips", "skipRange"]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function stringList(v: unknown, what: string, problems: string[]): string[] | undefined {
  if (!Array.isArray(v) || v.length === 0 || !v.every((s) => typeof s === "string")) {
    problems.push(`${what} must be a non-empty list of strings`);
    return undefined;
  }
  if (new Set(v).size !== v.length) problems.push(`${what} has duplicate items`);
  return v as string[];
}

/**
 * Parses and checks a release config against the pipeline's JSON schema (required
 * `catalog_templates` with `template_name` and `channels`; no unknown keys; a `defaultChannel` must
 * be one of the channels, as the pipeline requires). Returns every problem found instead when it
 * does not conform.
 */
export function parseReleaseConfig(text: string): ReleaseConfig | { problems: string[] } {
  let doc: unknown;
  try {
    // The pipeline reads it with ruamel.yaml: YAML 1.2 (`[x, y]` are strings).
    doc = parseYaml12(text);
  } catch (e) {
    return { problems: [(e as Error).message] };
  }
  const problems: string[] = [];
  if (!isRecord(doc)) return { problems: ["the release config is not a mapping"] };
  for (const k of Object.keys(doc))
    if (k !== "catalog_templates" && k !== "merge") problems.push(`unknown key ${JSON.stringify(k)}`);
  if (doc.merge !== undefined && typeof doc.merge !== "boolean") problems.push("merge must be a boolean");
  const list = doc.catalog_templates;
  if (!Array.isArray(list) || list.length === 0) {
    problems.push("catalog_templates must be a non-empty list");
    return { problems };
  }
  const out: ReleaseConfigTemplate[] = [];
  list.forEach((item: unknown, i: number) => {
    const at = `catalog_templates[${i}]`;
    if (!isRecord(item)) {
      problems.push(`${at} must be a mapping`);
      return;
    }
    for (const k of Object.keys(item))
      if (!TEMPLATE_KEYS.has(k)) problems.push(`${at}: unknown key ${JSON.stringify(k)}`);
    const name = item.template_name;
    if (typeof name !== "string" || name === "") problems.push(`${at}.template_name must be a non-empty string`);
    const channels = stringList(item.channels, `${at}.channels`, problems);
    const t: ReleaseConfigTemplate = { templateName: typeof name === "string" ? name : "", channels: channels ?? [] };
    for (const k of ["defaultChannel", "replaces", "skipRange"] as const) {
      const v = item[k];
      if (v === undefined) continue;
      if (typeof v !== "string") problems.push(`${at}.${k} must be a string`);
      else t[k] = v;
    }
    if (item.skips !== undefined) t.skips = stringList(item.skips, `${at}.skips`, problems);
    if (t.defaultChannel !== undefined && channels && !channels.includes(t.defaultChannel)) {
      problems.push(
        `defaultChannel '${t.defaultChannel}' not found in '${t.templateName}'. ` +
          `Available channels: [${channels.map((c) => `'${c}'`).join(", ")}]`,
      );
    }
    out.push(t);
  });
  if (problems.length > 0) return { problems };
  const rc: ReleaseConfig = { catalogTemplates: out };
  if (typeof doc.merge === "boolean") rc.merge = doc.merge;
  return rc;
}
