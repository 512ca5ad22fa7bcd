/**
 * One webhook CA and serving certificate for every replica: kept in the Secret `opcat-webhook-cert` in
 * the controllers' namespace, made by the first replica that finds none (a replica that loses the race
 * to create it reads the winner's), and replaced by whichever replica first sees it expire within 30
 * days or miss one of the names it must cover (an update with the read resourceVersion: one replica
 * wins, the others read its result). During a rotation the previous CA stays trusted (`caBundle` is the
 * new CA followed by the previous one), so a replica still serving the old certificate keeps working
 * until it reloads (replicas re-read the Secret every few minutes).
 */
import { X509Certificate } from "node:crypto";
import { isConflict, type KubeServer, type KubeObject } from "./kube/client.js";
import { makeServingCerts, type ServingCerts } from "./kube/certs.js";

export const WEBHOOK_CERT_SECRET = "opcat-webhook-cert";
/** A certificate valid for less than this is replaced. */
export const ROTATE_BEFORE_MS = 30 * 86_400_000;

type Secret = KubeObject & { data?: Record<string, string>; type?: string };

export interface SharedCerts extends ServingCerts {
  /** What the webhook configurations trust: the CA, then the previous CA during a rotation. */
  caBundle: string;
  /** The Secret's resourceVersion (changes when another replica rotated). */
  version: string;
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");
const unb64 = (s: string | undefined): string => (s ? Buffer.from(s, "base64").toString("utf8") : "");

/** Whether `pem` is a certificate valid past `now + ROTATE_BEFORE_MS` that names every host. */
export function certCovers(pem: string, hosts: string[], now = Date.now()): boolean {
  let c: X509Certificate;
  try {
    c = new X509Certificate(pem);
  } catch {
    return false;
  }
  if (Date.parse(c.validTo) - now < ROTATE_BEFORE_MS) return false;
  const names = (c.subjectAltName ?? "").split(", ").map((n) => n.replace(/^(DNS|IP Address):/, ""));
  return hosts.every((h) => names.includes(h));
}

function fromSecret(s: Secret): SharedCerts | undefined {
  const d = s.data ?? {};
  const cert = unb64(d["tls.crt"]);
  const key = unb64(d["tls.key"]);
  const caCert = unb64(d["ca.crt"]);
  if (!cert || !key || !caCert) return undefined;
  const previous = unb64(d["ca-previous.crt"]);
  return {
    cert,
    key,
    caCert,
    caBundle: previous ? `${caCert}${previous}` : caCert,
    version: s.metadata.resourceVersion ?? "",
  };
}

function secretFor(namespace: string, certs: ServingCerts, previousCa?: string): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: WEBHOOK_CERT_SECRET,
      namespace,
      labels: { "app.kubernetes.io/part-of": "opcat" },
      annotations: { "rukpak.io/purpose": "the admission webhooks' CA and serving certificate, shared by replicas" },
    },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": b64(certs.cert),
      "tls.key": b64(certs.key),
      "ca.crt": b64(certs.caCert),
      ...(previousCa ? { "ca-previous.crt": b64(previousCa) } : {}),
    },
  };
}

/**
 * The shared certificates for `hosts` from the Secret in `namespace`: made when missing, replaced when
 * expiring or not covering `hosts` (see the module comment).
 */
export async function loadSharedCerts(
  client: KubeServer,
  namespace: string,
  hosts: string[],
  now = Date.now(),
): Promise<SharedCerts> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const s = await client.tryGet<Secret>("v1", "Secret", WEBHOOK_CERT_SECRET, namespace);
    const found = s ? fromSecret(s) : undefined;
    if (found && certCovers(found.cert, hosts, now)) return found;
    const made = makeServingCerts(hosts, 365);
    try {
      if (!s) {
        const created = await client.create<Secret>(secretFor(namespace, made));
        return { ...made, caBundle: made.caCert, version: created.metadata.resourceVersion ?? "" };
      }
      const next = secretFor(namespace, made, found?.caCert);
      next.metadata.resourceVersion = s.metadata.resourceVersion;
      const replaced = await client.replace<Secret>(next);
      return fromSecret(replaced) as SharedCerts;
    } catch (e) {
      // another replica made or rotated it first: use theirs
      if (!isConflict(e)) throw e;
    }
  }
  throw new Error(`Secret ${namespace}/${WEBHOOK_CERT_SECRET}: replicas kept replacing it`);
}
