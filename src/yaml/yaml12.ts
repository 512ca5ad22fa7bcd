/**
 * YAML 1.2 (the `yaml` package), where opm is not involved:
 * * `parseYaml12`: the community operator pipeline's `release-config.yaml`, which the pipeline
 *   (Python) loads with ruamel.yaml, a YAML 1.2 reader (`yes`, `on` and `0x1F`-style octals stay
 *   strings; only the first document is allowed). Throws the `yaml` package's error for malformed input.
 * * `stringifyYaml12`: the web UI's blob viewer (no line folding). Kept free of the rest of src/yaml
 *   so that the browser bundle only takes the `yaml` package.
 */
import { parse, stringify } from "yaml";

export function stringifyYaml12(value: unknown): string {
  return stringify(value, { lineWidth: 0 });
}

/** Reads the release config (see above). */
export function parseYaml12(text: string): unknown {
  return parse(text);
}
