/**
 * RukPak's admission webhooks (seed 002), served by the controller process over TLS:
 * - `/mutate`: records who created a Bundle/Instance or last changed its spec in the
 *   `rukpak.io/requester` annotation (the API server keeps no creator; a user cannot forge it,
 *   the webhook always overwrites it);
 * - `/validate`: a Bundle or Instance naming a ProvisionerClass is refused unless the user has
 *   the `use` verb on that ProvisionerClass (a SubjectAccessReview);
 * - `/validate-approval`: a change of an Instance's `Approved` condition is refused unless the
 *   user has the `approve` verb on that Instance.
 * `registerWebhooks` writes the Mutating/ValidatingWebhookConfigurations, by URL (a controller
 * outside the cluster, e.g. on 127.0.0.1) or by Service (in the cluster), with the CA as caBundle.
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { KubeClient, KubeObject } from "../client.js";
import type { ServingCerts } from "../certs.js";
import { ANNOTATION_REQUESTER, API_VERSION, GROUP, type Bundle, type Instance } from "./api.js";
import { canI, type Requester } from "./permissions.js";

interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: KubeObject;
  oldObject?: KubeObject;
}

interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason?: string; message: string };
  patchType?: "JSONPatch";
  patch?: string;
}

function requester(u: AdmissionRequest["userInfo"]): Requester {
  return {
    username: u.username,
    groups: u.groups ?? [],
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.extra ? { extra: u.extra } : {}),
  };
}

function deny(uid: string, message: string, code = 403): AdmissionResponse {
  return { uid, allowed: false, status: { code, reason: code === 403 ? "Forbidden" : "BadRequest", message } };
}

function jsonPointer(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

export class AdmissionHandler {
  constructor(private readonly client: KubeClient) {}

  /** The ProvisionerClass an object names (an Instance without an embedded spec names its Bundle's class). */
  private async classOf(obj: KubeObject): Promise<string | undefined> {
    if (obj.kind === "Bundle") return (obj as Bundle).spec?.class;
    const i = obj as Instance;
    if (i.spec?.bundle?.spec?.class) return i.spec.bundle.spec.class;
    if (!i.spec?.bundle?.name) return undefined;
    const b = await this.client.tryGet<Bundle>(API_VERSION, "Bundle", i.spec.bundle.name);
    return b?.spec.class;
  }

  async mutate(req: AdmissionRequest): Promise<AdmissionResponse> {
    const obj = req.object;
    if (!obj || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return { uid: req.uid, allowed: true };
    const old = req.oldObject;
    const specChanged =
      req.operation === "CREATE" ||
      JSON.stringify((old as { spec?: unknown } | undefined)?.spec) !==
        JSON.stringify((obj as { spec?: unknown }).spec);
    const value = specChanged
      ? JSON.stringify(requester(req.userInfo))
      : old?.metadata.annotations?.[ANNOTATION_REQUESTER];
    const current = obj.metadata.annotations?.[ANNOTATION_REQUESTER];
    if (value === current) return { uid: req.uid, allowed: true };
    const ops: unknown[] = [];
    if (!obj.metadata.annotations) ops.push({ op: "add", path: "/metadata/annotations", value: {} });
    const path = `/metadata/annotations/${jsonPointer(ANNOTATION_REQUESTER)}`;
    ops.push(
      value === undefined ? { op: "remove", path } : { op: current === undefined ? "add" : "replace", path, value },
    );
    return {
      uid: req.uid,
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
    };
  }

  async validate(req: AdmissionRequest): Promise<AdmissionResponse> {
    const obj = req.object;
    if (!obj || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return { uid: req.uid, allowed: true };
    if (
      req.operation === "UPDATE" &&
      JSON.stringify((req.oldObject as { spec?: unknown })?.spec) === JSON.stringify((obj as { spec?: unknown }).spec)
    )
      return { uid: req.uid, allowed: true };
    const cls = await this.classOf(obj);
    if (!cls) return { uid: req.uid, allowed: true };
    const ok = await canI(this.client, requester(req.userInfo), {
      verb: "use",
      group: GROUP,
      resource: "provisionerclasses",
      name: cls,
    });
    if (ok) return { uid: req.uid, allowed: true };
    return deny(
      req.uid,
      `${req.userInfo.username} may not use ProvisionerClass ${JSON.stringify(cls)}: creating or ` +
        `changing a ${obj.kind} that names it needs the "use" verb on provisionerclasses.${GROUP}/${cls}`,
    );
  }

  async validateApproval(req: AdmissionRequest): Promise<AdmissionResponse> {
    if (req.operation !== "UPDATE" || !req.object) return { uid: req.uid, allowed: true };
    const approved = (o: KubeObject | undefined) => {
      const c = ((o as Instance | undefined)?.status?.conditions ?? []).find((x) => x.type === "Approved");
      return c ? JSON.stringify([c.status, c.reason, c.message, c.observedGeneration ?? null]) : "";
    };
    if (approved(req.oldObject) === approved(req.object)) return { uid: req.uid, allowed: true };
    const name = req.object.metadata.name;
    const ok = await canI(this.client, requester(req.userInfo), {
      verb: "approve",
      group: GROUP,
      resource: "instances",
      name,
    });
    if (ok) return { uid: req.uid, allowed: true };
    return deny(
      req.uid,
      `${req.userInfo.username} may not change the Approved condition of Instance ` +
        `${JSON.stringify(name)}: that needs the "approve" verb on instances.${GROUP}/${name}`,
    );
  }

  async handle(
    path: string,
    review: { request?: AdmissionRequest },
  ): Promise<{ apiVersion: string; kind: string; response: AdmissionResponse }> {
    const req = review.request;
    if (!req) throw new Error("AdmissionReview without a request");
    let response: AdmissionResponse;
    try {
      if (path === "/mutate") response = await this.mutate(req);
      else if (path === "/validate") response = await this.validate(req);
      else if (path === "/validate-approval") response = await this.validateApproval(req);
      else response = deny(req.uid, `no webhook at ${path}`, 404);
    } catch (e) {
      response = deny(req.uid, `opcat webhook failed: ${(e as Error).message}`, 500);
    }
    return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
  }
}

export interface WebhookServer {
  port: number;
  close(): Promise<void>;
}

/** Serves the webhooks over TLS on `host:port` (port 0: any free port). */
export async function serveWebhooks(
  handler: AdmissionHandler,
  certs: ServingCerts,
  host = "127.0.0.1",
  port = 0,
): Promise<WebhookServer> {
  const server = https.createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > 8 << 20) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0];
      let body: { request?: AdmissionRequest };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400, { "Content-Type": "text/plain" }).end("invalid AdmissionReview JSON\n");
        return;
      }
      handler.handle(path, body).then(
        (out) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(out)),
        (e: Error) => res.writeHead(400, { "Content-Type": "text/plain" }).end(`${e.message}\n`),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export type WebhookTarget = { url: string } | { service: { namespace: string; name: string; port: number } };

function clientConfig(target: WebhookTarget, path: string, caBundle: string): Record<string, unknown> {
  const ca = Buffer.from(caBundle).toString("base64");
  if ("url" in target) return { url: `${target.url.replace(/\/$/, "")}${path}`, caBundle: ca };
  return { service: { ...target.service, path }, caBundle: ca };
}

export const WEBHOOK_CONFIG_NAME = "opcat-rukpak";

/** The webhook configurations for `target` with `caBundle` (PEM), named `name`. */
export function webhookConfigurations(
  target: WebhookTarget,
  caBundle: string,
  name = WEBHOOK_CONFIG_NAME,
): KubeObject[] {
  const common = {
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    timeoutSeconds: 10,
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
  };
  const objRules = [
    {
      apiGroups: [GROUP],
      apiVersions: ["v1"],
      operations: ["CREATE", "UPDATE"],
      resources: ["bundles", "instances"],
      scope: "*",
    },
  ];
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name, labels: { "app.kubernetes.io/part-of": "opcat" } },
      webhooks: [
        {
          name: "requester.rukpak.io",
          clientConfig: clientConfig(target, "/mutate", caBundle),
          rules: objRules,
          reinvocationPolicy: "Never",
          ...common,
        },
      ],
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name, labels: { "app.kubernetes.io/part-of": "opcat" } },
      webhooks: [
        {
          name: "use.provisionerclasses.rukpak.io",
          clientConfig: clientConfig(target, "/validate", caBundle),
          rules: objRules,
          ...common,
        },
        {
          name: "approve.instances.rukpak.io",
          clientConfig: clientConfig(target, "/validate-approval", caBundle),
          rules: [
            {
              apiGroups: [GROUP],
              apiVersions: ["v1"],
              operations: ["UPDATE"],
              resources: ["instances/status"],
              scope: "*",
            },
          ],
          ...common,
        },
      ],
    },
  ];
}

export async function registerWebhooks(
  client: KubeClient,
  target: WebhookTarget,
  caBundle: string,
  name = WEBHOOK_CONFIG_NAME,
): Promise<void> {
  for (const o of webhookConfigurations(target, caBundle, name)) await client.apply(o);
}

/**
 * Removes webhook configurations registered by URL that still point at `url` (a controller run
 * from outside the cluster does this when it stops, so that a stopped laptop process does not
 * leave every Bundle/Instance write failing on an unreachable webhook).
 */
export async function unregisterWebhooks(client: KubeClient, url: string, name = WEBHOOK_CONFIG_NAME): Promise<void> {
  for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
    const cur = await client.tryGet<KubeObject & { webhooks?: { clientConfig?: { url?: string } }[] }>(
      "admissionregistration.k8s.io/v1",
      kind,
      name,
    );
    if (cur && (cur.webhooks ?? []).every((w) => w.clientConfig?.url?.startsWith(url)))
      await client.delete("admissionregistration.k8s.io/v1", kind, name);
  }
}
