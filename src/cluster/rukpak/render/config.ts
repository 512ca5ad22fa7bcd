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
 * `multiple errors found:\n  - …`, the whole prefixed `invalid configuration: `; ordered and grouped as
 * upstream's schema library (santhosh-tekuri/jsonschema v6) reports them to its formatter (ConfigProblem).
 */
import { arr, bool, freeform, type Infer, int, intOrString, map, obj, type OpenApi, str } from "../../kube/schema.js";
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

/** The name upstream's schema library gives a value's type (every number is a `number`). */
export function jsonType(v: Json): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/**
 * One error of upstream's schema library as its formatter prints it, with the errors it groups: a
 * validator with several errors reports a group (`validation failed`), an `anyOf` its subschemas'.
 * Upstream's message lists them flattened, a group or an `anyOf` before its members.
 */
export interface ConfigProblem {
  message: string;
  causes?: ConfigProblem[];
  group?: true;
}

/** What one validator reports: nothing, its one error, or a group of them. */
function reported(errors: ConfigProblem[]): ConfigProblem | undefined {
  if (errors.length <= 1) return errors[0];
  return { message: "validation failed", causes: errors, group: true };
}

/** The lines of upstream's message: the root's group unwrapped, then every error before its members. */
export function flattened(root: ConfigProblem | undefined): string[] {
  if (!root) return [];
  const lines = (p: ConfigProblem): string[] => [p.message, ...(p.causes ?? []).flatMap(lines)];
  return (root.group ? (root.causes ?? []) : [root]).flatMap(lines);
}

const field = (path: string[]) => (path.length > 0 ? ` for field "${path.join(".")}"` : "");

function typeError(path: string[], v: Json, want: string): ConfigProblem {
  // upstream's formatter says a null where a value is needed is a missing field
  if (v === null && path.length > 0) return { message: `required field "${path.join(".")}" is missing` };
  return { message: `invalid type${field(path)}: got ${jsonType(v)}, want ${want}` };
}

function typeMatches(s: OpenApi, v: Json): boolean {
  if (s["x-kubernetes-int-or-string"]) return typeof v === "string" || Number.isInteger(v);
  if (!s.type) return true;
  if (s.type === "object") return isObj(v);
  if (s.type === "integer") return Number.isInteger(v);
  return jsonType(v) === s.type;
}

/** An object's errors in the library's order: required, each property's, then the unknown ones. */
function objectErrors(s: OpenApi, v: Record<string, Json>, path: string[], closed: boolean): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const missing = (s.required ?? []).filter((r) => !(r in v));
  // the library lists them in one error, whose first name the formatter shows
  if (missing.length > 0) out.push({ message: `required field "${missing[0]}" is missing` });
  const props = s.properties ?? {};
  const extra = s.additionalProperties;
  for (const [k, x] of Object.entries(v)) {
    const sub = props[k] ?? (typeof extra === "object" ? extra : undefined);
    const e = sub ? schemaError(sub, x, [...path, k], false) : undefined;
    if (e) out.push(e);
  }
  const unknown = Object.keys(v).filter((k) => !(k in props) && extra === undefined);
  if (closed && unknown.length > 0 && !s["x-kubernetes-preserve-unknown-fields"])
    out.push({ message: `unknown field "${unknown[0]}"` });
  return out;
}

/**
 * The error of `v` by an OpenAPI schema of opcat's schema helpers (types, required fields, items,
 * map values), as upstream's library would group it; `path` is the field's path (dots, item indexes).
 * Unknown fields are errors at the top object only (`closed`): upstream's schema closes
 * `deploymentConfig`, not the Kubernetes types inside it.
 */
export function schemaError(s: OpenApi, v: Json, path: string[] = [], closed = true): ConfigProblem | undefined {
  if (!typeMatches(s, v)) return typeError(path, v, s["x-kubernetes-int-or-string"] ? "integer or string" : s.type!);
  if (Array.isArray(v) && s.items) {
    const items = s.items;
    return reported(v.map((x, i) => schemaError(items, x, [...path, String(i)], false)).filter((e) => e !== undefined));
  }
  if (isObj(v) && s.type === "object") return reported(objectErrors(s, v, path, closed));
  return undefined;
}

/** The lines of upstream's message for `v` by the schema `s` (none when it holds). */
export function schemaProblems(s: OpenApi, v: Json, path: string[] = []): string[] {
  return flattened(schemaError(s, v, path));
}

/** What upstream's schema says of `watchNamespace` for these install modes. */
export function watchNamespaceRule(supported: Set<string>): "unknown" | "required" | "optional" {
  if (!supported.has("OwnNamespace") && !supported.has("SingleNamespace")) return "unknown";
  return supported.has("AllNamespaces") ? "optional" : "required";
}

/** The install-mode format's error, if any (the library checks it before the string's own rules). */
function formatError(supported: Set<string>, installNs: string, wn: string): ConfigProblem | undefined {
  const own = supported.has("OwnNamespace");
  const single = supported.has("SingleNamespace");
  const error = (name: string, why: string) => ({
    message: `invalid format for field "watchNamespace": '${wn}' is not valid ${name}: invalid value "${wn}": ${why}`,
  });
  if (installNs !== "" && own && !single && wn !== installNs)
    return error(
      "ownNamespaceInstallMode",
      `must be "${installNs}" (the namespace where the operator is installed) because this operator only ` +
        "supports OwnNamespace install mode",
    );
  if (installNs !== "" && single && !own && wn === installNs)
    return error(
      "singleNamespaceInstallMode",
      `must be different from "${installNs}" (the install namespace) because this operator uses ` +
        "SingleNamespace install mode to watch a different namespace",
    );
  return undefined;
}

/** The error of a watchNamespace by the namespace schema: type, then format alone, then length and pattern. */
function namespaceError(supported: Set<string>, installNs: string, wn: Json): ConfigProblem | undefined {
  if (typeof wn !== "string") return typeError(["watchNamespace"], wn, "string");
  const format = formatError(supported, installNs, wn);
  if (format) return format;
  const f = `field "watchNamespace"`;
  const out: ConfigProblem[] = [];
  if (wn.length < 1) out.push({ message: `${f} must have minimum length of 1 (len=0)` });
  if (wn.length > NAMESPACE_NAME_MAX_LENGTH)
    out.push({ message: `${f} must have maximum length of ${NAMESPACE_NAME_MAX_LENGTH} (len=${wn.length})` });
  if (!new RegExp(NAMESPACE_NAME_PATTERN).test(wn))
    out.push({ message: `${f} must match pattern "${NAMESPACE_NAME_PATTERN}"` });
  return reported(out);
}

/** The error of a present watchNamespace (optional: upstream's `anyOf` of null and the namespace schema). */
function watchNamespaceError(supported: Set<string>, installNs: string, wn: Json): ConfigProblem | undefined {
  const rule = watchNamespaceRule(supported);
  if (rule === "required") return namespaceError(supported, installNs, wn);
  if (wn === null) return undefined;
  const asNamespace = namespaceError(supported, installNs, wn);
  if (!asNamespace) return undefined;
  return {
    message: `invalid value for field "watchNamespace"`,
    causes: [{ message: `invalid type for field "watchNamespace": got ${jsonType(wn)}, want null` }, asNamespace],
  };
}

/**
 * The problems of a bundle configuration for a bundle with these install modes installed into
 * `installNs`, as the lines of upstream's message (the library's order: the required field, each
 * field's errors, then the unknown ones).
 */
export function bundleConfigProblems(supported: Set<string>, installNs: string, config: Json): string[] {
  if (!isObj(config)) return [`invalid type: got ${jsonType(config)}, want object`];
  const rule = watchNamespaceRule(supported);
  const errors: ConfigProblem[] = [];
  if (rule === "required" && !("watchNamespace" in config))
    errors.push({ message: `required field "watchNamespace" is missing` });
  for (const [k, v] of Object.entries(config)) {
    const e =
      k === "watchNamespace" && rule !== "unknown"
        ? watchNamespaceError(supported, installNs, v)
        : k === "deploymentConfig"
          ? schemaError(deploymentConfigSchema.openapi, v, ["deploymentConfig"])
          : undefined;
    if (e) errors.push(e);
  }
  const known = new Set(["deploymentConfig", ...(rule === "unknown" ? [] : ["watchNamespace"])]);
  const unknown = Object.keys(config).filter((k) => !known.has(k));
  if (unknown.length > 0) errors.push({ message: `unknown field "${unknown[0]}"` });
  return flattened(reported(errors));
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
