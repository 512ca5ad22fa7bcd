/**
 * What an Instance would create and which permissions that grants: its Bundle unpacked (with the
 * caller's image access and, for Secrets, the caller's own cluster access) and converted as the
 * provisioner would. Used by `opcat instance describe|approve --show` and by the web UI.
 */
import { join } from "node:path";
import { readBundleDirectory } from "../../bundle/index.js";
import { defaultCacheDir, type PullOptions } from "../../image/index.js";
import type { KubeServer, KubeObject } from "../kube/client.js";
import { API_VERSION, type Bundle, type Instance } from "./api.js";
import { readPlainObjects, unpackBundle } from "./content.js";
import { convertRegistryV1, ConvertError } from "./convert.js";
import { grantedRulesInCluster, type GrantedRule } from "./permissions.js";

export interface InstancePreview {
  objects: KubeObject[];
  /**
   * The complete grant: rules of the roles the bundle ships and of the existing roles its bindings
   * reference (what Android approval compares).
   */
  rules: GrantedRule[];
  /** The digest of the content read (what an approval after this review names). */
  digest?: string;
  /** Why the content could not be read (the objects and rules are then empty). */
  error?: string;
}

export async function previewInstance(client: KubeServer, inst: Instance, pull: PullOptions): Promise<InstancePreview> {
  const bundle =
    (await client.tryGet<Bundle>(API_VERSION, "Bundle", inst.spec.bundle.name)) ??
    (inst.spec.bundle.spec ? ({ spec: inst.spec.bundle.spec } as Bundle) : undefined);
  if (!bundle) return { objects: [], rules: [], error: `Bundle ${inst.spec.bundle.name} not found` };
  try {
    const c = await unpackBundle(bundle.spec, {
      root: join(pull.cacheDir ?? defaultCacheDir(), "cluster-preview"),
      pull,
      client,
      clientIsRequester: true,
    });
    const objects =
      c.format === "registry+v1"
        ? convertRegistryV1(readBundleDirectory(c.dir), {
            installNamespace: inst.spec.installNamespace,
            watchNamespaces: inst.spec.watchNamespaces,
            ...(inst.spec.config === undefined ? {} : { config: inst.spec.config }),
          }).objects
        : readPlainObjects(c.dir);
    return { objects, rules: await grantedRulesInCluster(client, objects), digest: c.digest };
  } catch (e) {
    return { objects: [], rules: [], error: e instanceof ConvertError ? e.errors.join("; ") : (e as Error).message };
  }
}
