/**
 * What the controllers trust, and how they prove it (docs/security.md):
 * - a **signing key** only the controllers can read (a Secret in their namespace, made once and shared
 *   by every replica);
 * - **requester signatures**: the admission webhook records who created or last changed the spec of a
 *   Bundle/Instance and signs (kind, name, spec, requester) with that key; an annotation written by
 *   anyone else, or copied onto another spec, does not verify;
 * - **approval records** (`status.approval`): a decision signed over the Instance's uid and generation,
 *   the Bundle's uid and generation and the digest of the unpacked content, so that what is installed
 *   is exactly what was approved, and any change of any of them needs a new approval;
 * - **protected objects**: opcat's own APIs, webhook configurations, namespace and RBAC, which no
 *   bundle may create, change or delete.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isConflict, type KubeServer, type KubeObject } from "../kube/client.js";
import type { Requester } from "./permissions.js";
import { relayed } from "../kube/conditions.js";
import { canonicalJson } from "../kube/json.js";
import type { GroupCondition as NewCondition } from "./reasons.js";

export const SIGNING_KEY_SECRET = "opcat-signing-key";
export const ANNOTATION_REQUESTER_SIGNATURE = "rukpak.io/requester-signature";

/** The HMAC key of this controller installation. */
export class SigningKey {
  constructor(private readonly key: Buffer) {}

  sign(parts: readonly unknown[]): string {
    return createHmac("sha256", this.key).update(JSON.stringify(parts)).digest("base64url");
  }

  verify(parts: readonly unknown[], signature: string | undefined): boolean {
    if (!signature) return false;
    const want = Buffer.from(this.sign(parts));
    const got = Buffer.from(signature);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}

/**
 * The key from the Secret `opcat-signing-key` in `namespace`, made (32 random bytes) when missing; a
 * replica that loses the race to make it reads the winner's.
 */
export async function loadSigningKey(client: KubeServer, namespace: string): Promise<SigningKey> {
  type Secret = KubeObject & { data?: Record<string, string> };
  const read = async () => {
    const s = await client.tryGet<Secret>("v1", "Secret", SIGNING_KEY_SECRET, namespace);
    const k = s?.data?.key ? Buffer.from(s.data.key, "base64") : undefined;
    return k && k.length >= 32 ? new SigningKey(k) : undefined;
  };
  const found = await read();
  if (found) return found;
  if (!(await client.tryGet("v1", "Namespace", namespace)))
    await client
      .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
      .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
  const key = randomBytes(32);
  try {
    await client.create<Secret>({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: SIGNING_KEY_SECRET,
        namespace,
        labels: { "app.kubernetes.io/part-of": "opcat" },
        annotations: { "rukpak.io/purpose": "signs requester identities and approvals; readable by opcat only" },
      },
      type: "Opaque",
      data: { key: key.toString("base64") },
    });
    return new SigningKey(key);
  } catch (e) {
    if (!isConflict(e)) throw e;
    const k = await read();
    if (!k) throw new Error(`Secret ${namespace}/${SIGNING_KEY_SECRET} exists without a usable key`);
    return k;
  }
}

export function specHash(spec: unknown): string {
  return createHash("sha256").update(canonicalJson(spec)).digest("hex");
}

/**
 * The signed fields of a requester annotation. v2: the controllers' own writes carry their mark
 * ({@link EXTRA_CONTROLLERS}); a v1 signature (an older opcat, whose own writes were unmarked and
 * would now read as a person using the controllers' credentials) no longer verifies, so such an
 * object has no requester until its spec is written again.
 */
export function requesterParts(kind: string, name: string, spec: unknown, requester: string): unknown[] {
  return ["requester/v2", kind, name, specHash(spec), requester];
}

/**
 * The requester of a Bundle or Instance when its signature verifies for the object's current spec;
 * undefined otherwise (written without the webhook, forged, copied, or the spec changed since).
 */
export function verifiedRequester(key: SigningKey, o: KubeObject): Requester | undefined {
  const raw = o.metadata.annotations?.["rukpak.io/requester"];
  const sig = o.metadata.annotations?.[ANNOTATION_REQUESTER_SIGNATURE];
  if (!raw || !sig) return undefined;
  if (!key.verify(requesterParts(o.kind, o.metadata.name, (o as { spec?: unknown }).spec, raw), sig)) return undefined;
  try {
    const r = JSON.parse(raw) as Requester;
    return typeof r.username === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The mark of the controllers' own writes: every request a controller makes for its own purposes
 * (applying a bundle's objects, a resolveset's Bundles and Instances, the Bundle of an Instance that
 * has no requester) impersonates the controllers' own user with this extra key, so that the webhook
 * records and signs it. A person who runs the controllers with their own credentials (`cluster run`
 * from a laptop) writes without it, and is judged as themselves; nobody else can impersonate it.
 */
export const EXTRA_CONTROLLERS = "rukpak.io/acting-as";
export const EXTRA_CONTROLLERS_VALUE = "controllers";

/** The user the controllers impersonate for their own writes: themselves, marked. */
export function ownUser(me: Requester): Requester {
  return {
    username: me.username,
    groups: me.groups ?? [],
    ...(me.uid ? { uid: me.uid } : {}),
    extra: { ...(me.extra ?? {}), [EXTRA_CONTROLLERS]: [EXTRA_CONTROLLERS_VALUE] },
  };
}

/** True when `r` is the controllers acting for themselves (their user, with the mark). */
export function isOwn(r: Requester | undefined, self: string | undefined): boolean {
  return (
    r !== undefined &&
    self !== undefined &&
    r.username === self &&
    (r.extra?.[EXTRA_CONTROLLERS] ?? []).includes(EXTRA_CONTROLLERS_VALUE)
  );
}

/**
 * True when the controllers made `o` for their own purposes: its signed requester is their own,
 * marked identity (false when `self` is not known). Nothing a user can write (labels, annotations,
 * owner references) makes or unmakes this.
 */
export function madeBy(key: SigningKey, self: string | undefined, o: KubeObject): boolean {
  return isOwn(verifiedRequester(key, o), self);
}

/** What an approval decides about, and who decided. */
export interface ApprovalRecord {
  decision: "Approved" | "Denied";
  /** The condition reason shown (AllowAll, UserPermission, ApprovedByUser, ResolvesetApproved, …). */
  reason?: string;
  /** Who decided: a user (`kubectl instance approve`) or the policy that approved automatically. */
  by: string;
  /** The Instance generation the decision is for. */
  generation: number;
  bundle: { name: string; uid: string; generation: number };
  /** The digest of the unpacked content (the Bundle's `status.digest` when it was decided). */
  digest: string;
  signature?: string;
}

export function approvalParts(instanceUid: string, a: ApprovalRecord): unknown[] {
  return [
    "approval/v1",
    instanceUid,
    a.decision,
    a.reason ?? "",
    a.by,
    a.generation,
    a.bundle.name,
    a.bundle.uid,
    a.bundle.generation,
    a.digest,
  ];
}

export function signApproval(key: SigningKey, instanceUid: string, a: ApprovalRecord): ApprovalRecord {
  const { signature: _, ...rest } = a;
  return { ...rest, signature: key.sign(approvalParts(instanceUid, rest)) };
}

/** The fields an approval is compared on (what it names), without who decided or the signature. */
export interface ApprovalSubject {
  instanceUid: string;
  generation: number;
  bundle: { name: string; uid: string; generation: number };
  digest: string;
}

/**
 * Why `a` does not approve `subject` (undefined: it does): not signed by this installation, a
 * denial, or naming another generation, Bundle or content.
 */
export function approvalMismatch(
  key: SigningKey,
  a: ApprovalRecord | undefined,
  s: ApprovalSubject,
): string | undefined {
  if (!a) return "no approval recorded";
  if (!key.verify(approvalParts(s.instanceUid, a), a.signature)) return "the recorded approval is not signed by opcat";
  if (a.generation !== s.generation) return `the approval is for generation ${a.generation}, not ${s.generation}`;
  if (a.bundle.name !== s.bundle.name || a.bundle.uid !== s.bundle.uid)
    return `the approval is for another Bundle (${a.bundle.name})`;
  if (a.bundle.generation !== s.bundle.generation)
    return (
      `Bundle ${s.bundle.name} changed since it was approved ` +
      `(generation ${a.bundle.generation} → ${s.bundle.generation})`
    );
  if (a.digest !== s.digest) return `the content changed since it was approved (${a.digest} → ${s.digest})`;
  if (a.decision !== "Approved") return `denied by ${a.by}`;
  return undefined;
}

/** opcat's own objects, which no bundle may touch. */
export interface ProtectedSet {
  /** The controllers' namespace (everything in it is protected, and the Namespace itself). */
  namespace: string;
  /** CRD names opcat serves. */
  crds: ReadonlySet<string>;
  /** Names of cluster-scoped RBAC objects and webhook configurations of opcat. */
  clusterNames: ReadonlySet<string>;
}

const PROTECTED_CLUSTER_KINDS = new Set([
  "ClusterRole",
  "ClusterRoleBinding",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
]);

/** Why a bundle may not contain `o` (undefined: it may). */
export function protectedReason(p: ProtectedSet, o: KubeObject): string | undefined {
  const what = `${o.kind} ${JSON.stringify(o.metadata.name)}`;
  if (o.kind === "Namespace" && o.metadata.name === p.namespace) return `${what} is opcat's own namespace`;
  if (o.metadata.namespace === p.namespace) return `${what} is in opcat's own namespace ${p.namespace}`;
  if (o.kind === "CustomResourceDefinition" && p.crds.has(o.metadata.name)) return `${what} is one of opcat's APIs`;
  if (PROTECTED_CLUSTER_KINDS.has(o.kind) && p.clusterNames.has(o.metadata.name))
    return `${what} is part of opcat's own installation`;
  // an APIService routes a whole API group (opcat's included) to a Service of the bundle's choosing
  if (o.kind === "APIService") return `a bundle may not contain APIServices`;
  return undefined;
}

/** The Approved condition a recorded approval shows. */
export function approvalCondition(a: ApprovalRecord): NewCondition {
  // the reason this controller signed into the record
  const reason: NewCondition["reason"] = a.reason
    ? relayed(a.reason)
    : a.decision === "Approved"
      ? "ApprovedByUser"
      : "DeniedByUser";
  if (a.decision !== "Approved") return { type: "Approved", status: "False", reason, message: `denied by ${a.by}` };
  const message =
    reason === "ApprovedByUser"
      ? `approved by ${a.by} for bundle ${a.bundle.name}`
      : reason === "UserPermission"
        ? `${a.by.split(", ").join(" and ")} may create every object of bundle ${a.bundle.name}`
        : reason === "AllowAll"
          ? `approved by ${a.by} (approval: AllowAll)`
          : `approved by ${a.by}`;
  return { type: "Approved", status: "True", reason, message };
}
