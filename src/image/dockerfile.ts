/**
 * `opm generate dockerfile`: the Dockerfile text for a catalog directory, byte for byte as opm's
 * template writes it, and opm's label-flag parsing.
 */
import { goQuote } from "../gojson/fmt.js";
import { LABEL_CONFIGS } from "./labels.js";

/** opm's default base and builder image. */
export const DEFAULT_OPM_IMAGE = "quay.io/operator-framework/opm:latest";

export interface DockerfileOptions {
  baseImage: string;
  builderImage: string;
  /** The catalog directory's base name (what `ADD` copies). */
  indexDir: string;
  extraLabels?: Record<string, string>;
}

/** The Dockerfile text (opm's template; extra labels in sorted key order). Throws opm's errors for unset fields. */
export function generateDockerfile(o: DockerfileOptions): string {
  if (o.baseImage === "") throw new Error("base image is unset");
  if (o.indexDir === "") throw new Error("index directory is unset");
  let s = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM ${o.builderImage} as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD ${o.indexDir} /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM ${o.baseImage}`;
  if (o.baseImage !== "scratch") {
    s += `
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]`;
  } else {
    s += `
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache`;
  }
  s += `

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL ${LABEL_CONFIGS}=/configs`;
  const labels = o.extraLabels ?? {};
  const keys = Object.keys(labels).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length > 0) {
    s += "\n\n# Set other custom labels";
    for (const k of keys) s += `\nLABEL "${k}"="${labels[k]}"`;
  }
  return s + "\n";
}

/**
 * opm's `-l/--extra-labels` parsing: each value is split at commas (pflag StringSlice, CSV quoting),
 * each item at its first "="; a malformed item fails with `invalid label "<item>"`; later keys win.
 */
export function parseExtraLabels(values: readonly string[]): Record<string, string> | { error: string } {
  const out: Record<string, string> = {};
  for (const v of values) {
    for (const item of splitCsv(v)) {
      const i = item.indexOf("=");
      if (i < 0) return { error: `invalid label ${goQuote(item)}` };
      out[item.slice(0, i)] = item.slice(i + 1);
    }
  }
  return out;
}

/** pflag's StringSlice reading of one flag value (encoding/csv, one record). */
function splitCsv(v: string): string[] {
  if (v === "") return [];
  const out: string[] = [];
  let i = 0;
  while (i <= v.length) {
    if (v[i] === '"') {
      let s = "";
      i++;
      while (i < v.length) {
        if (v[i] === '"') {
          if (v[i + 1] === '"') {
            s += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += v[i++];
      }
      out.push(s);
      i++; // skip comma
    } else {
      const j = v.indexOf(",", i);
      const end = j < 0 ? v.length : j;
      out.push(v.slice(i, end));
      i = end + 1;
    }
  }
  return out;
}
