/**
 * RukPak's admission webhooks (docs/cluster.md, docs/security.md), served by the controller process over TLS:
 * - `/mutate`: records who created a Bundle/Instance/ClusterExtension or last changed its spec in the
 *   `rukpak.io/requester` annotation, signed over (kind, name, spec, requester) with the controllers'
 *   key in `rukpak.io/requester-signature` (the API server keeps no creator; a user cannot forge it,
 *   the webhook always overwrites it, and a copy on another spec does not verify);
 * - `/mutate-catalog`: stamps catalogd's `olm.operatorframework.io/metadata.name` label on ClusterCatalogs;
 * - `/mutate-status`: signs a changed `status.approval` of an Instance for the user who wrote it;
 * - `/validate`: a Bundle or Instance naming a ProvisionerClass is refused unless the user has
 *   the `use` verb on that ProvisionerClass (a SubjectAccessReview);
 * - `/validate-approval`: a change of an Instance's `Approved` condition or `status.approval` is
 *   refused unless the user has the `approve` verb on that Instance.
 * The configurations fail closed (`failurePolicy: Fail`) and are never removed by a stopping
 * controller: while no controller serves them, nobody can create or change Bundles and Instances.
 * `registerWebhooks` writes the Mutating/ValidatingWebhookConfigurations, by URL (a controller
 * outside the cluster, e.g. on 127.0.0.1) or by Service (in the cluster), with the CA as caBundle.
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { KubeServer, KubeObject } from "../kube/client.js";
import type { ServingCerts } from "../kube/certs.js";
import { ANNOTATION_PROPERTIES, ANNOTATION_REQUESTER, API_VERSION, GROUP, type Bundle, type Instance } from "./api.js";
import { canI, type Requester } from "./permissions.js";
import {
  ANNOTATION_REQUESTER_SIGNATURE,
  approvalParts,
  isOwn,
  requesterParts,
  signApproval,
  verifiedRequester,
  type ApprovalRecord,
  type SigningKey,
} from "./trust.js";
import { sameJson } from "../kube/json.js";

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
  constructor(
    private readonly client: KubeServer,
    private readonly key: SigningKey,
    /** The controllers' own user: only they may change what they made for their own purposes. */
    private readonly self?: string,
  ) {}

  /**
   * A Bundle or Instance the controllers made for their own purposes (its signed requester is their
   * marked identity) is theirs alone: anyone else's change is refused, except what Kubernetes' garbage
   * collector does to any object (dropping owner references and finalizers). Such objects are what
   * installed content, approvals and Android's baselines are made of; a change by someone else would
   * otherwise be taken as the controllers' own.
   */
  private foreignChange(req: AdmissionRequest): string | undefined {
    const obj = req.object;
    const old = req.oldObject;
    if (req.operation !== "UPDATE" || !obj || !old || this.self === undefined) return undefined;
    if (req.userInfo.username === this.self || (obj.kind !== "Bundle" && obj.kind !== "Instance")) return undefined;
    if (!isOwn(verifiedRequester(this.key, old), this.self)) return undefined;
    const m = (o: KubeObject) => o.metadata;
    const sub = <T>(a: T[] | undefined, b: T[] | undefined, k: (x: T) => string) =>
      (a ?? []).every((x) => (b ?? []).some((y) => k(y) === k(x)));
    // the Deppy story "change the properties of an installed bundle" (deppy.test.ts): olm.properties
    // steers what the resolver sees (its outcome is approved again), never identity or content
    const { [ANNOTATION_PROPERTIES]: _o, ...oldAnnotations } = m(old).annotations ?? {};
    const { [ANNOTATION_PROPERTIES]: _n, ...newAnnotations } = m(obj).annotations ?? {};
    const onlyReleases =
      sameJson((old as { spec?: unknown }).spec, (obj as { spec?: unknown }).spec) &&
      sameJson(m(old).labels ?? {}, m(obj).labels ?? {}) &&
      sameJson(oldAnnotations, newAnnotations) &&
      sub(m(obj).ownerReferences, m(old).ownerReferences, (r) => JSON.stringify(r)) &&
      sub(m(obj).finalizers, m(old).finalizers, (f) => f);
    if (onlyReleases) return undefined;
    return (
      `${obj.kind} ${JSON.stringify(obj.metadata.name)} was made by opcat's controllers and only they may change ` +
      `it (${req.userInfo.username} may only edit its olm.properties annotation or remove its owner references ` +
      "or finalizers); change the object " +
      "it was made for (its Operator, ClusterExtension, Input or Instance) instead"
    );
  }

  /** The ProvisionerClass an object names (an Instance without an embedded spec names its Bundle's class). */
  private async classOf(obj: KubeObject): Promise<string | undefined> {
    if (obj.kind === "Bundle") return (obj as Bundle).spec?.class;
    if (obj.kind !== "Instance" && obj.kind !== "Operator") return undefined;
    const i = obj as Instance;
    if (i.spec?.bundle?.spec?.class) return i.spec.bundle.spec.class;
    if (!i.spec?.bundle?.name) return undefined;
    const b = await this.client.tryGet<Bundle>(API_VERSION, "Bundle", i.spec.bundle.name);
    return b?.spec.class;
  }

  async mutate(req: AdmissionRequest): Promise<AdmissionResponse> {
    const obj = req.object;
    if (!obj || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return { uid: req.uid, allowed: true };
    if (!obj.metadata.name)
      // the API server generates the name after mutating admission: a signature over it cannot exist
      return deny(
        req.uid,
        `${obj.kind} needs a name: metadata.generateName is not supported, because opcat signs who asked ` +
          "for an object over its name, and a generated name is not known yet when the request is admitted; " +
          "set metadata.name",
        400,
      );
    const old = req.oldObject;
    const spec = (obj as { spec?: unknown }).spec;
    const specChanged =
      req.operation === "CREATE" ||
      JSON.stringify((old as { spec?: unknown } | undefined)?.spec) !== JSON.stringify(spec);
    // the requester and its signature over (kind, name, spec, requester): written here only, kept
    // as they were while the spec does not change, whatever the request says
    let value: string | undefined;
    let signature: string | undefined;
    if (specChanged) {
      value = JSON.stringify(requester(req.userInfo));
      signature = this.key.sign(requesterParts(obj.kind, obj.metadata.name ?? "", spec, value));
    } else {
      value = old?.metadata.annotations?.[ANNOTATION_REQUESTER];
      signature = old?.metadata.annotations?.[ANNOTATION_REQUESTER_SIGNATURE];
    }
    const ops: unknown[] = [];
    let annotations = obj.metadata.annotations;
    for (const [name, want] of [
      [ANNOTATION_REQUESTER, value],
      [ANNOTATION_REQUESTER_SIGNATURE, signature],
    ] as const) {
      const current = annotations?.[name];
      if (want === current) continue;
      if (!annotations) {
        ops.push({ op: "add", path: "/metadata/annotations", value: {} });
        annotations = {};
      }
      const path = `/metadata/annotations/${jsonPointer(name)}`;
      ops.push(
        want === undefined
          ? { op: "remove", path }
          : { op: current === undefined ? "add" : "replace", path, value: want },
      );
    }
    if (ops.length === 0) return { uid: req.uid, allowed: true };
    return {
      uid: req.uid,
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
    };
  }

  /**
   * ClusterCatalogs: catalogd's defaulting webhook, the label `olm.operatorframework.io/metadata.name`
   * set to the catalog's name (so that a ClusterExtension's selector can name one catalog).
   */
  mutateCatalog(req: AdmissionRequest): AdmissionResponse {
    const obj = req.object;
    if (!obj || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return { uid: req.uid, allowed: true };
    const name = obj.metadata.name || req.name || "";
    const label = "olm.operatorframework.io/metadata.name";
    if (obj.metadata.labels?.[label] === name) return { uid: req.uid, allowed: true };
    const ops: unknown[] = [];
    if (!obj.metadata.labels) ops.push({ op: "add", path: "/metadata/labels", value: {} });
    ops.push({ op: "add", path: `/metadata/labels/${jsonPointer(label)}`, value: name });
    return {
      uid: req.uid,
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
    };
  }

  /**
   * `instances/status`: a changed `status.approval` is signed here for the user who wrote it (the
   * validating webhook then requires the `approve` verb of that user); one the controllers signed
   * themselves is kept as it is.
   */
  async mutateStatus(req: AdmissionRequest): Promise<AdmissionResponse> {
    const obj = req.object as Instance | undefined;
    if (!obj || req.operation !== "UPDATE") return { uid: req.uid, allowed: true };
    const oldA = (req.oldObject as Instance | undefined)?.status?.approval as ApprovalRecord | undefined;
    const newA = obj.status?.approval as ApprovalRecord | undefined;
    if (!newA || JSON.stringify(oldA) === JSON.stringify(newA)) return { uid: req.uid, allowed: true };
    const uid = obj.metadata.uid ?? "";
    if (this.key.verify(approvalParts(uid, newA), newA.signature)) return { uid: req.uid, allowed: true };
    if (newA.decision !== "Approved" && newA.decision !== "Denied")
      return deny(req.uid, `status.approval.decision must be Approved or Denied`, 400);
    const signed = signApproval(this.key, uid, { ...newA, by: req.userInfo.username });
    return {
      uid: req.uid,
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify([{ op: "replace", path: "/status/approval", value: signed }])).toString(
        "base64",
      ),
    };
  }

  async validate(req: AdmissionRequest): Promise<AdmissionResponse> {
    const obj = req.object;
    if (!obj || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return { uid: req.uid, allowed: true };
    const foreign = this.foreignChange(req);
    if (foreign) return deny(req.uid, foreign);
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
      const a = (o as Instance | undefined)?.status?.approval;
      return JSON.stringify([c ? [c.status, c.reason, c.message, c.observedGeneration ?? null] : null, a ?? null]);
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
      else if (path === "/mutate-status") response = await this.mutateStatus(req);
      else if (path === "/mutate-catalog") response = this.mutateCatalog(req);
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
  /** Serves `certs` on new connections from now on (a rotated certificate). */
  setCerts(certs: ServingCerts): void;
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
    setCerts: (c) => server.setSecureContext({ cert: c.cert, key: c.key }),
    // the API server keeps connections to a webhook alive: close the idle ones, or close() waits for them
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeIdleConnections();
        // an answer in flight gets a moment; then the kept-alive sockets go too
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}

export type WebhookTarget = { url: string } | { service: { namespace: string; name: string; port: number } };

function clientConfig(target: WebhookTarget, path: string, caBundle: string): Record<string, unknown> {
  // no CA yet (the manifests, before a controller made one): the API server cannot verify the
  // webhook's certificate, so every call fails, and the webhooks fail closed until a controller starts
  const ca = caBundle ? { caBundle: Buffer.from(caBundle).toString("base64") } : {};
  if ("url" in target) return { url: `${target.url.replace(/\/$/, "")}${path}`, ...ca };
  return { service: { ...target.service, path }, ...ca };
}

export const WEBHOOK_CONFIG_NAME = "opcat-rukpak";

/**
 * Kinds (besides Bundles and Instances) whose objects the controllers turn into Instances: the
 * webhook records and signs their requester, and an Instance the controllers made for one is judged
 * as that requester (never as the controllers themselves).
 */
export const DELEGATING_KINDS = [
  { group: "operators.coreos.com", version: "v1", resource: "operators", kind: "Operator" },
  { group: "olm.operatorframework.io", version: "v1", resource: "clusterextensions", kind: "ClusterExtension" },
];

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
    // objects the controllers make Instances for: their requester is whom those Instances are judged as
    ...DELEGATING_KINDS.map((k) => ({
      apiGroups: [k.group],
      apiVersions: [k.version],
      operations: ["CREATE", "UPDATE"],
      resources: [k.resource],
      scope: "*",
    })),
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
        {
          name: "metadata-name.clustercatalogs.olm.operatorframework.io",
          clientConfig: clientConfig(target, "/mutate-catalog", caBundle),
          rules: [
            {
              apiGroups: ["olm.operatorframework.io"],
              apiVersions: ["v1"],
              operations: ["CREATE", "UPDATE"],
              resources: ["clustercatalogs"],
              scope: "*",
            },
          ],
          reinvocationPolicy: "Never",
          ...common,
        },
        {
          name: "approval.instances.rukpak.io",
          clientConfig: clientConfig(target, "/mutate-status", caBundle),
          rules: [
            {
              apiGroups: [GROUP],
              apiVersions: ["v1"],
              operations: ["UPDATE"],
              resources: ["instances/status"],
              scope: "*",
            },
          ],
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
  client: KubeServer,
  target: WebhookTarget,
  caBundle: string,
  name = WEBHOOK_CONFIG_NAME,
): Promise<void> {
  for (const o of webhookConfigurations(target, caBundle, name)) await client.apply(o);
}
