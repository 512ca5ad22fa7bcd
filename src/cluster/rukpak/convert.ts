/**
 * registry+v1 → plain objects: what the operator provisioner applies for an OLM bundle, by the rules
 * of RukPak's `pkg/convert/registryv1.go` as operator-controller's renderer fixed them
 * (../shared/reference/olmv1-spec.md §3.9 and §5.9), in the renderer's shape (`render/`): a context
 * built once (`render/context.ts`: install namespace, target namespaces, the CSV's parts), the
 * validators (`render/validators.ts`: gates and checks, all errors reported together), then the
 * resource generators (`render/generators.ts`: ServiceAccounts, Roles/RoleBindings,
 * ClusterRoles/ClusterRoleBindings, CRDs, the other allowed manifests, Deployments, and for webhooks
 * the webhook configurations and Services), with the serving certificates listed for the provisioner
 * to provide (their CA bundles are placeholders until it does).
 */
import type { RegistryBundle } from "../../bundle/index.js";
import type { KubeObject } from "../kube/client.js";
import { type CertificateRequest, type ConvertOptions, generateContext, renderContext } from "./render/context.js";
import { certificateRequests, GENERATORS } from "./render/generators.js";
import { strAt } from "./render/json.js";
import { checkAPIServiceDefinitionsUnsupported, checkSupportedInstallModes, VALIDATORS } from "./render/validators.js";

export { ConfigError } from "./render/config.js";
export {
  type CertificateRequest,
  type ConvertOptions,
  caBundlePlaceholder,
  targetNamespaces,
} from "./render/context.js";
export { rbacName } from "./render/generators.js";

export interface Converted {
  installNamespace: string;
  targetNamespaces: string[];
  objects: KubeObject[];
  /** Serving certificates for webhook Services (empty for bundles without webhooks). */
  certificates: CertificateRequest[];
  package: string;
  csvName: string;
  version: string;
}

/** A bundle that cannot be converted; `errors` are all the reasons, each a sentence. */
export class ConvertError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join("; "));
    this.name = "ConvertError";
  }
}

/**
 * `b` as plain objects. Throws ConvertError with every reason it cannot be rendered, or ConfigError
 * (render/config.ts) when it passes upstream's gates (API services, install modes) but does not
 * accept `opts.config`.
 */
export function convertRegistryV1(b: RegistryBundle, opts: ConvertOptions = {}): Converted {
  const ctx = renderContext(b, opts);
  const gated = [checkAPIServiceDefinitionsUnsupported, checkSupportedInstallModes].some((v) => v(b, ctx).length > 0);
  if (ctx.configError && !gated) throw ctx.configError;
  const errors = VALIDATORS.flatMap((validate) => validate(b, ctx));
  const targets = ctx.targetNamespaces;
  if (errors.length > 0 || typeof targets === "string") throw new ConvertError(errors);
  const gen = generateContext(ctx, targets);
  return {
    installNamespace: ctx.installNamespace,
    targetNamespaces: targets,
    objects: GENERATORS.flatMap((generate) => generate(gen)),
    certificates: certificateRequests(gen),
    package: b.package,
    csvName: ctx.csvName,
    version: strAt(ctx.spec, "version") ?? "",
  };
}
