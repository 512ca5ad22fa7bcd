/**
 * The operator provisioner (`operators.coreos.com/operators`): a registry+v1 bundle converted to plain
 * objects (`convert.ts`) for the Instance's install and watch namespaces, with the serving certificates
 * of its webhooks made here and their CA bundles filled in.
 */
import { readBundleDirectory } from "../../bundle/index.js";
import { makeServingCerts } from "../kube/certs.js";
import type { KubeServer, KubeObject } from "../kube/client.js";
import { LABEL_INSTANCE, OPERATOR_PROVISIONER } from "./api.js";
import { caBundlePlaceholder, convertRegistryV1, type CertificateRequest } from "./convert.js";
import type { Provisioner } from "./provisioner.js";

/** Replaces placeholder strings anywhere in a JSON value. */
function fillPlaceholders(v: unknown, values: Map<string, string>): unknown {
  if (typeof v === "string") return values.get(v) ?? v;
  if (Array.isArray(v)) return v.map((x) => fillPlaceholders(x, values));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillPlaceholders(x, values)]));
  return v;
}

/**
 * The serving certificate Secret of a webhook Service: the one this Instance made earlier when it is
 * still there and covers the names (so that webhook configurations do not change on every
 * reconcile), else a new CA and certificate (valid two years).
 */
async function servingCertificate(
  client: KubeServer,
  req: CertificateRequest,
  instance: string,
): Promise<{ secret: KubeObject; caPem: string }> {
  const cur = await client
    .tryGet<KubeObject & { data?: Record<string, string> }>("v1", "Secret", req.secretName, req.namespace)
    .catch(() => undefined);
  const dec = (k: string) => (cur?.data?.[k] ? Buffer.from(cur.data[k], "base64").toString("utf8") : "");
  let caPem = dec("ca.crt");
  let cert = dec("tls.crt");
  let key = dec("tls.key");
  const covers = cur?.metadata.annotations?.["rukpak.io/dns-names"] === req.dnsNames.join(",");
  if (!(cur && cur.metadata.labels?.[LABEL_INSTANCE] === instance && covers && caPem && cert && key)) {
    const made = makeServingCerts(req.dnsNames, 730);
    caPem = made.caCert;
    cert = made.cert;
    key = made.key;
  }
  const b64 = (v: string) => Buffer.from(v).toString("base64");
  return {
    caPem,
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: req.secretName,
        namespace: req.namespace,
        annotations: { "rukpak.io/dns-names": req.dnsNames.join(",") },
      },
      type: "kubernetes.io/tls",
      data: { "tls.crt": b64(cert), "tls.key": b64(key), "ca.crt": b64(caPem) },
    },
  };
}

export const registryV1Provisioner: Provisioner = {
  id: OPERATOR_PROVISIONER,
  formats: ["registry+v1"],
  async desired(_bundle, inst, { client, dir }) {
    const c = convertRegistryV1(readBundleDirectory(dir), {
      installNamespace: inst.spec.installNamespace,
      watchNamespaces: inst.spec.watchNamespaces,
      ...(inst.spec.config === undefined ? {} : { config: inst.spec.config }),
    });
    const objects = [...c.objects];
    const bundles = new Map<string, string>();
    for (const req of c.certificates) {
      const { secret, caPem } = await servingCertificate(client, req, inst.metadata.name);
      objects.push(secret);
      bundles.set(caBundlePlaceholder(req.secretName), Buffer.from(caPem).toString("base64"));
    }
    return {
      objects: bundles.size > 0 ? objects.map((o) => fillPlaceholders(o, bundles) as KubeObject) : objects,
      installNamespace: c.installNamespace,
      format: "registry+v1",
    };
  },
};
