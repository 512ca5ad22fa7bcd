/**
 * The configuration of a registry+v1 bundle, after operator-controller's
 * `rukpak/bundle/registryv1.go` (the schema built from the CSV's install modes) and `config/config.go`
 * (its validation and the wording of its errors): `watchNamespace` and `deploymentConfig`, nothing
 * else.
 *
 * - `watchNamespace` is an unknown field when the bundle supports AllNamespaces only; required when
 *   it supports OwnNamespace or SingleNamespace but not AllNamespaces; optional (null allowed)
 *   otherwise. A namespace name (1 to 63 characters, the DNS-1123 label pattern); with OwnNamespace
 *   and not SingleNamespace it must be the install namespace, with SingleNamespace and not
 *   OwnNamespace it must differ from it.
 * - `deploymentConfig` is OLM v0's `Subscription.spec.config` without `selector`, declared once here
 *   as a typed schema (`deploymentConfigSchema`): the ClusterExtension CRD carries it, and
 *   `schemaProblems` checks a value against it with upstream's messages.
 *
 * Errors read as upstream's: `required field "watchNamespace" is missing`, `unknown field "foo"`,
 * `invalid type for field "watchNamespace": got number, want string`, several joined as
 * `multiple errors found:\n  - …`, the whole prefixed `invalid configuration: `.
 */
import { arr, bool, freeform, type Infer, int, intOrString, map, obj, type OpenApi, str } from "../../schema.js";
import { isObj, type Json } from "./json.js";

/** Upstream's pattern and length of a namespace name. */
export const NAMESPACE_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const NAMESPACE_NAME_MAX_LENGTH = 63;

/** Fields of Kubernetes types kept as they are (the API server checks them when the Deployment is applied). */
const kept = { "x-kubernetes-preserve-unknown-fields": true } as const;

export const deploymentConfigSchema = obj({
  affinity: obj({ nodeAffinity: freeform(), podAffinity: freeform(), podAntiAffinity: freeform() }),
  annotations: map(str()),
  env: arr(obj({ name: str(), value: str(), valueFrom: freeform() }, ["name"])),
  envFrom: arr(obj({ configMapRef: freeform(), prefix: str(), secretRef: freeform() })),
  nodeSelector: map(str()),
  resources: obj({
    claims: arr(obj({ name: str(), request: str() }, ["name"])),
    limits: map(intOrString()),
    requests: map(intOrString()),
  }),
  tolerations: arr(
    obj({ effect: str(), key: str(), operator: str(), tolerationSeconds: int({ format: "int64" }), value: str() }),
  ),
  volumeMounts: arr(
    obj(
      {
        mountPath: str(),
        mountPropagation: str(),
        name: str(),
        readOnly: bool(),
        recursiveReadOnly: str(),
        subPath: str(),
        subPathExpr: str(),
      },
      ["mountPath", "name"],
    ),
  ),
  volumes: arr(obj({ name: str() }, ["name"], kept)),
});
export type DeploymentConfig = Infer<typeof deploymentConfigSchema>;

/** A registry+v1 bundle's configuration once valid. */
export interface BundleConfig {
  watchNamespace?: string;
  deploymentConfig?: DeploymentConfig;
}

/** A configuration the bundle does not accept; `problems` in upstream's words. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `invalid configuration: ${
        problems.length === 1 ? problems[0] : `multiple errors found:\n  - ${problems.join("\n  - ")}`
      }`,
    );
    this.name = "ConfigError";
  }
}

/** JSON Schema's name of a value's type. */
export function jsonType(v: Json): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(s: OpenApi, v: Json): boolean {
  if (s["x-kubernetes-int-or-string"]) return typeof v === "string" || Number.isInteger(v);
  if (!s.type) return true;
  if (s.type === "object") return isObj(v);
  if (s.type === "number") return typeof v === "number";
  if (s.type === "integer") return Number.isInteger(v);
  return jsonType(v) === s.type;
}

function objectProblems(s: OpenApi, v: Record<string, Json>, path: string[], closed: boolean): string[] {
  const out: string[] = [];
  for (const r of s.required ?? []) if (!(r in v)) out.push(`required field "${r}" is missing`);
  const props = s.properties ?? {};
  const extra = s.additionalProperties;
  const unknown = Object.keys(v).filter((k) => !(k in props) && extra === undefined);
  // upstream reports the first additional property only (its library lists them in one error)
  if (closed && unknown.length > 0 && !s["x-kubernetes-preserve-unknown-fields"])
    out.push(`unknown field "${unknown[0]}"`);
  for (const [k, x] of Object.entries(v)) {
    const sub = props[k] ?? (typeof extra === "object" ? extra : undefined);
    if (sub) out.push(...schemaProblems(sub, x, [...path, k], false));
  }
  return out;
}

/**
 * The problems of `v` by an OpenAPI schema of opcat's schema helpers (types, required fields, items,
 * map values), in upstream's words; `path` is the field's path (dots, item indexes). Unknown fields
 * are problems at the top object only (`closed`): upstream's schema closes `deploymentConfig`, not
 * the Kubernetes types inside it.
 */
export function schemaProblems(s: OpenApi, v: Json, path: string[] = [], closed = true): string[] {
  if (!typeMatches(s, v)) {
    const want = s["x-kubernetes-int-or-string"] ? "integer or string" : s.type;
    const where = path.length > 0 ? ` for field "${path.join(".")}"` : "";
    return [`invalid type${where}: got ${jsonType(v)}, want ${want}`];
  }
  if (Array.isArray(v) && s.items) return v.flatMap((x, i) => schemaProblems(s.items!, x, [...path, String(i)], false));
  if (isObj(v) && s.type === "object") return objectProblems(s, v, path, closed);
  return [];
}

/** What upstream's schema says of `watchNamespace` for these install modes. */
export function watchNamespaceRule(supported: Set<string>): "unknown" | "required" | "optional" {
  if (!supported.has("OwnNamespace") && !supported.has("SingleNamespace")) return "unknown";
  return supported.has("AllNamespaces") ? "optional" : "required";
}

/** The problems of a watchNamespace string: length, pattern, then the install-mode format. */
function namespaceProblems(supported: Set<string>, installNs: string, wn: string): string[] {
  const field = `field "watchNamespace"`;
  const out: string[] = [];
  if (wn.length < 1) out.push(`${field} must have minimum length of 1 (len=0)`);
  if (wn.length > NAMESPACE_NAME_MAX_LENGTH)
    out.push(`${field} must have maximum length of ${NAMESPACE_NAME_MAX_LENGTH} (len=${wn.length})`);
  if (!new RegExp(NAMESPACE_NAME_PATTERN).test(wn)) out.push(`${field} must match pattern "${NAMESPACE_NAME_PATTERN}"`);
  const own = supported.has("OwnNamespace");
  const single = supported.has("SingleNamespace");
  const format = (name: string, why: string) =>
    `invalid format for ${field}: '${wn}' is not valid ${name}: invalid value "${wn}": ${why}`;
  if (installNs !== "" && own && !single && wn !== installNs)
    out.push(
      format(
        "ownNamespaceInstallMode",
        `must be "${installNs}" (the namespace where the operator is installed) because this operator only ` +
          "supports OwnNamespace install mode",
      ),
    );
  if (installNs !== "" && single && !own && wn === installNs)
    out.push(
      format(
        "singleNamespaceInstallMode",
        `must be different from "${installNs}" (the install namespace) because this operator uses ` +
          "SingleNamespace install mode to watch a different namespace",
      ),
    );
  return out;
}

function watchNamespaceProblems(supported: Set<string>, installNs: string, config: Record<string, Json>): string[] {
  const rule = watchNamespaceRule(supported);
  const present = "watchNamespace" in config;
  const wn = config.watchNamespace;
  if (rule === "unknown") return [];
  if (rule === "required") {
    if (!present || wn === null) return [`required field "watchNamespace" is missing`];
    if (typeof wn !== "string") return [`invalid type for field "watchNamespace": got ${jsonType(wn)}, want string`];
    return namespaceProblems(supported, installNs, wn);
  }
  if (!present || wn === null) return [];
  // optional: upstream's schema is anyOf [null, the namespace schema]; its error names the field only
  if (typeof wn !== "string" || namespaceProblems(supported, installNs, wn).length > 0)
    return [`invalid value for field "watchNamespace"`];
  return [];
}

/**
 * The problems of a bundle configuration for a bundle with these install modes installed into
 * `installNs` (upstream's order: unknown fields, then each field's own).
 */
export function bundleConfigProblems(supported: Set<string>, installNs: string, config: Json): string[] {
  if (!isObj(config)) return [`invalid type: got ${jsonType(config)}, want object`];
  const known = new Set([
    "deploymentConfig",
    ...(watchNamespaceRule(supported) === "unknown" ? [] : ["watchNamespace"]),
  ]);
  const unknown = Object.keys(config).filter((k) => !known.has(k));
  const out = unknown.length > 0 ? [`unknown field "${unknown[0]}"`] : [];
  out.push(...watchNamespaceProblems(supported, installNs, config));
  const dc = config.deploymentConfig;
  if (dc !== undefined && dc !== null)
    out.push(...schemaProblems(deploymentConfigSchema.openapi, dc, ["deploymentConfig"]));
  return out;
}

/** The configuration once valid; throws ConfigError otherwise. */
export function readBundleConfig(supported: Set<string>, installNs: string, config: Json): BundleConfig {
  const problems = bundleConfigProblems(supported, installNs, config);
  if (problems.length > 0) throw new ConfigError(problems);
  const c = config as Record<string, Json>;
  return {
    ...(typeof c.watchNamespace === "string" ? { watchNamespace: c.watchNamespace } : {}),
    ...(isObj(c.deploymentConfig) ? { deploymentConfig: c.deploymentConfig as DeploymentConfig } : {}),
  };
}
