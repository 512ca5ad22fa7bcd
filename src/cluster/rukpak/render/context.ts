/**
 * The context of a registry+v1 rendering, built once from the bundle and the options: what the
 * validators check and the generators turn into objects (the CSV's spec and annotations, the install
 * namespace, the supported install modes and target namespaces, the deployments, CRDs, other
 * manifests, webhook definitions and permissions).
 */
import type { BundleManifest, RegistryBundle } from "../../../bundle/index.js";
import { type BundleConfig, ConfigError, type DeploymentConfig, readBundleConfig } from "./config.js";
import { arrAt, isObj, type Json, type JsonObj, objAt } from "./json.js";

export interface ConvertOptions {
  /** Where the operator runs (default: the CSV's suggested namespace, else `<package>-system`). */
  installNamespace?: string;
  /** Namespaces the operator watches; [] or [""] means all (default: all when supported, else its own namespace). */
  watchNamespaces?: string[];
  /**
   * operator-controller's bundle configuration (a ClusterExtension's `config.inline`): checked against
   * the install modes by upstream's rules (config.ts); its `watchNamespace` is then the target namespace
   * and its `deploymentConfig` is applied to the Deployments. Set, it replaces `watchNamespaces`.
   */
  config?: Json;
}

/** A serving certificate the provisioner must provide (a kubernetes.io/tls Secret) for a webhook Service. */
export interface CertificateRequest {
  secretName: string;
  namespace: string;
  dnsNames: string[];
}

/** Placeholder for the PEM CA bundle of a certificate request, in webhook configurations and CRD conversion. */
export function caBundlePlaceholder(secretName: string): string {
  return `__opcat_ca_bundle__/${secretName}`;
}

export interface Permission {
  serviceAccountName: string;
  rules: Json[];
}

/** What validators read: the bundle as the renderer sees it. */
export interface RenderContext {
  bundle: RegistryBundle;
  opts: ConvertOptions;
  csvName: string;
  /** The CSV's `spec`. */
  spec: JsonObj | undefined;
  csvAnnotations: Record<string, string>;
  installNamespace: string;
  /** The install modes with `supported: true`, in CSV order. */
  supported: Set<string>;
  /** The target namespaces, or the sentence saying why the install modes do not allow them. */
  targetNamespaces: string[] | string;
  /** The CSV's strategy deployment specs (objects only). */
  deployments: JsonObj[];
  crds: BundleManifest[];
  /** The manifests other than the CSV and the CRDs. */
  others: BundleManifest[];
  webhooks: JsonObj[];
  permissions: Permission[];
  clusterPermissions: Permission[];
  /** The configuration's deploymentConfig, applied to every Deployment. */
  deploymentConfig?: DeploymentConfig;
  /** Why the bundle does not accept the configuration (reported after the install-mode gates, as upstream). */
  configError?: ConfigError;
}

/** What generators read: a context whose validation passed (target namespaces known). */
export interface GenerateContext extends RenderContext {
  targetNamespaces: string[];
  /** Targets are [""]: the operator watches all namespaces. */
  allNamespaces: boolean;
}

function permissions(spec: JsonObj | undefined, key: "permissions" | "clusterPermissions"): Permission[] {
  return arrAt(spec, "install", "spec", key)
    .filter(isObj)
    .map((p) => ({
      serviceAccountName:
        typeof p.serviceAccountName === "string" && p.serviceAccountName !== "" ? p.serviceAccountName : "default",
      rules: Array.isArray(p.rules) ? p.rules : [],
    }));
}

/** Target namespaces by operator-controller's rules; an error sentence when the install modes do not allow them. */
export function targetNamespaces(
  supported: Set<string>,
  installNs: string,
  requested: string[] | undefined,
): string[] | string {
  const modes = `[${[...supported].join(" ")}]`;
  if (requested === undefined) {
    if (supported.has("AllNamespaces")) return [""];
    if (supported.has("OwnNamespace")) return [installNs];
    return `supported install modes ${modes} do not support targeting all namespaces; set watchNamespaces`;
  }
  if (requested.length === 0 || (requested.length === 1 && requested[0] === "")) {
    return supported.has("AllNamespaces")
      ? [""]
      : `supported install modes ${modes} do not support targeting all namespaces`;
  }
  if (requested.length === 1) {
    if (requested[0] === installNs)
      return supported.has("OwnNamespace")
        ? requested
        : `supported install modes ${modes} do not support targeting own namespace`;
    return supported.has("SingleNamespace")
      ? requested
      : `supported install modes ${modes} do not support target namespaces [${requested.join(" ")}]`;
  }
  if (supported.has("MultiNamespace") && !requested.includes("")) return requested;
  return `supported install modes ${modes} do not support target namespaces [${requested.join(" ")}]`;
}

/** The configuration, or why the bundle does not accept it. */
function bundleConfig(supported: Set<string>, installNs: string, config: Json): BundleConfig | ConfigError {
  try {
    return readBundleConfig(supported, installNs, config);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
}

/** The context of `b` rendered with `opts` (nothing checked yet; a configuration read, its error kept). */
export function renderContext(b: RegistryBundle, opts: ConvertOptions = {}): RenderContext {
  const spec = objAt(b.csv.object, "spec");
  const csvAnnotations = (objAt(b.csv.object, "metadata", "annotations") ?? {}) as Record<string, string>;
  const installNamespace =
    opts.installNamespace || csvAnnotations["operatorframework.io/suggested-namespace"] || `${b.package}-system`;
  const supported = new Set(
    arrAt(spec, "installModes")
      .filter(isObj)
      .filter((m) => m.supported === true && typeof m.type === "string")
      .map((m) => m.type as string),
  );
  const read = opts.config === undefined ? undefined : bundleConfig(supported, installNamespace, opts.config);
  const config = read instanceof ConfigError ? {} : read;
  const requested = config?.watchNamespace === undefined ? undefined : [config.watchNamespace];
  return {
    bundle: b,
    opts,
    csvName: b.name,
    spec,
    csvAnnotations,
    installNamespace,
    supported,
    targetNamespaces: targetNamespaces(supported, installNamespace, config ? requested : opts.watchNamespaces),
    deployments: arrAt(spec, "install", "spec", "deployments").filter(isObj),
    crds: b.objects.filter((o) => o.kind === "CustomResourceDefinition"),
    others: b.objects.filter((o) => o.kind !== "ClusterServiceVersion" && o.kind !== "CustomResourceDefinition"),
    webhooks: arrAt(spec, "webhookdefinitions").filter(isObj),
    permissions: permissions(spec, "permissions"),
    clusterPermissions: permissions(spec, "clusterPermissions"),
    ...(config?.deploymentConfig ? { deploymentConfig: config.deploymentConfig } : {}),
    ...(read instanceof ConfigError ? { configError: read } : {}),
  };
}

/** The generators' context: `ctx` once validated, with its target namespaces (the list `ctx` has). */
export function generateContext(ctx: RenderContext, targets: string[]): GenerateContext {
  return { ...ctx, targetNamespaces: targets, allNamespaces: targets.length === 1 && targets[0] === "" };
}
