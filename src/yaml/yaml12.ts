/**
 * YAML 1.2 reading (the `yaml` package), for the one input opm never reads: the community operator
 * pipeline's `release-config.yaml`, which the pipeline (Python) loads with ruamel.yaml, a YAML 1.2
 * reader (`yes`, `on` and `0x1F`-style octals stay strings; only the first document is allowed).
 * Throws the `yaml` package's error for malformed input.
 */
import { parse } from "yaml";

export function parseYaml12(text: string): unknown {
  return parse(text);
}
