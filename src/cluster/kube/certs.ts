/**
 * A throwaway CA and a serving certificate for the controller's admission webhooks (the API server
 * verifies the webhook against the CA given as `caBundle`). Keys come from Node's crypto; the X.509
 * encoding from node-forge.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import forge from "node-forge";

export interface ServingCerts {
  caCert: string;
  cert: string;
  key: string;
}

function keyPair(): { pub: forge.pki.PublicKey; priv: forge.pki.PrivateKey; pem: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const priv = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  const pub = forge.pki.setRsaPublicKey(priv.n, priv.e);
  return { pub, priv, pem };
}

function serial(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b.toString("hex");
}

/** A CA and a certificate for `hosts` (IP addresses and DNS names), valid for `days`. */
export function makeServingCerts(hosts: string[], days = 365): ServingCerts {
  const now = new Date(Date.now() - 60_000);
  const until = new Date(now.getTime() + days * 86_400_000);
  const ca = keyPair();
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.pub;
  caCert.serialNumber = serial();
  caCert.validity.notBefore = now;
  caCert.validity.notAfter = until;
  const caName = [{ name: "commonName", value: "opcat-webhook-ca" }];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  caCert.sign(ca.priv as forge.pki.rsa.PrivateKey, forge.md.sha256.create());

  const leaf = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = leaf.pub;
  cert.serialNumber = serial();
  cert.validity.notBefore = now;
  cert.validity.notAfter = until;
  cert.setSubject([{ name: "commonName", value: hosts[0] ?? "opcat-webhook" }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: hosts.map((h) => (/^[\d.]+$/.test(h) || h.includes(":") ? { type: 7, ip: h } : { type: 2, value: h })),
    },
  ]);
  cert.sign(ca.priv as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return { caCert: forge.pki.certificateToPem(caCert), cert: forge.pki.certificateToPem(cert), key: leaf.pem };
}
