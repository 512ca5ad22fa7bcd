/**
 * The RukPak provisioners of seed 002 as one controller process: the operator provisioner
 * (`operators.coreos.com/operators`, registry+v1 bundles converted to plain objects) and the plain
 * provisioner (`rukpak.io/plain`, directories of manifests). It unpacks Bundles of classes naming
 * those provisioners, and makes Instances active: approval by the class's policy, CRD upgrade
 * safety, server-side apply of every object (owned by the Instance, labelled), pruning of objects
 * the new bundle no longer has, and marking pivoted-from Bundles `Replaced`. Progress and failures
 * go to status conditions and Events; failures that may pass are retried with backoff.
 */
import { isConflict, isNotFound, KubeApiError, type KubeClient, type KubeObject } from "../client.js";
import { findCondition, setCondition, type Condition, type NewCondition } from "../conditions.js";
import { EventRecorder } from "../events.js";
import { Informer } from "../informer.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../finalizers.js";
import { rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { WorkQueue } from "../queue.js";
import { readBundleDirectory } from "../../bundle/index.js";
import type { PullOptions } from "../../image/index.js";
import {
  ANNOTATION_REQUESTER,
  API_VERSION,
  FINALIZER_CONTENT,
  GROUP,
  LABEL_BUNDLE,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  OPERATOR_PROVISIONER,
  PLAIN_PROVISIONER,
  type Approval,
  type Bundle,
  type BundleStatus,
  type Instance,
  type InstanceStatus,
  type ProvisionerClass,
  rukpakCrdObjects,
} from "./api.js";
import { contentExists, limitsOf, readPlainObjects, UnpackError, unpackBundle, type ContentLimits } from "./content.js";
import { caBundlePlaceholder, ConvertError, convertRegistryV1, type CertificateRequest } from "./convert.js";
import { makeServingCerts } from "../certs.js";
import { crdUpgradeProblems, existingObjectProblems } from "./crdsafety.js";
import { canI, describeObject, dryRunAs, type Requester } from "./permissions.js";
import { refKey, refOf, RecordStore, type InstallRecord } from "./record.js";
import {
  approvalCondition,
  approvalMismatch,
  approvalParts,
  madeBy,
  protectedReason,
  sameJson,
  signApproval,
  verifiedRequester,
  type ApprovalRecord,
  type ApprovalSubject,
  type ProtectedSet,
  type SigningKey,
} from "./trust.js";
import { DELEGATING_KINDS, WEBHOOK_CONFIG_NAME } from "./webhook.js";
import { DEFAULT_NAMESPACE } from "../names.js";

export interface ProvisionerOptions {
  client: KubeClient;
  /** Root of the content-addressed store of unpacked bundles. */
  stateDir: string;
  /** Image access for docker:// refs. */
  pull?: PullOptions;
  /** Provisioner ids handled (default both). */
  provisioners?: string[];
  log?: (msg: string) => void;
  /** Bundles unpacked at once (default 4); at most `concurrency - 1` of them from one host or one requester. */
  concurrency?: number;
  /** Verifies requester signatures and signs approvals (trust.ts); one key per installation. */
  key: SigningKey;
  /** The controllers' own user name (objects they made carry it as their signed requester). */
  self?: string;
  /** The controllers' namespace: install records live there, and nothing in it is ever installed. */
  namespace?: string;
  /** Names of opcat's CRDs (default: the rukpak.io ones; never part of a bundle). */
  protectedCrds?: string[];
  /** Names of opcat's own webhook configurations and cluster RBAC (never touched by a bundle). */
  protectedNames?: string[];
  /** Limits for every class (a class's parameters win). */
  limits?: ContentLimits;
}

export interface DesiredContent {
  objects: KubeObject[];
  installNamespace?: string;
  format: string;
}

const APPROVAL_DEFAULT: Approval = "UserPermission";

function labelsMatch(selector: Instance["spec"]["selector"], labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in l;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
    if (e.operator === "In" && (!has || !(e.values ?? []).includes(l[e.key]))) return false;
    if (e.operator === "NotIn" && has && (e.values ?? []).includes(l[e.key])) return false;
  }
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions?.length ?? 0) > 0;
}

/** Replaces placeholder strings anywhere in a JSON value. */
function fillPlaceholders(v: unknown, values: Map<string, string>): unknown {
  if (typeof v === "string") return values.get(v) ?? v;
  if (Array.isArray(v)) return v.map((x) => fillPlaceholders(x, values));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillPlaceholders(x, values)]));
  return v;
}

/** operator-controller's owner labels on an Instance, which every object it installs carries too. */
const OWNER_LABELS = ["olm.operatorframework.io/owner-kind", "olm.operatorframework.io/owner-name"];
function ownerLabels(inst: Instance): Record<string, string> {
  const l = inst.metadata.labels ?? {};
  return Object.fromEntries(OWNER_LABELS.filter((k) => l[k] !== undefined).map((k) => [k, l[k]]));
}

/** The requester an annotation names, unverified (for display only: trust.ts verifies it). */
export function requesterOf(o: KubeObject): Requester | undefined {
  const raw = o.metadata.annotations?.[ANNOTATION_REQUESTER];
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Requester;
    return typeof r.username === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}

export function approvalOf(pc: ProvisionerClass | undefined): Approval {
  const a = pc?.parameters?.approval;
  return a === "AllowAll" || a === "DenyAll" || a === "UserPermission" ? a : APPROVAL_DEFAULT;
}

/** The namespaces the objects need: the install namespace and every object's. */
function neededNamespaces(desired: DesiredContent): Set<string> {
  const needed = new Set<string>();
  if (desired.installNamespace) needed.add(desired.installNamespace);
  for (const o of desired.objects) if (o.metadata.namespace) needed.add(o.metadata.namespace);
  return needed;
}

/** `a; b; c; and N more` of a list of problems. */
export function listed(items: readonly string[], max = 10): string {
  return `${items.slice(0, max).join("; ")}${items.length > max ? `; and ${items.length - max} more` : ""}`;
}

/** The field manager of an Instance's objects (one per Instance, never the controllers' own). */
export function fieldManagerFor(instance: string): string {
  const m = `rukpak-instance-${instance}`;
  return m.length <= 128 ? m : `rukpak-instance-${createHash("sha256").update(instance).digest("hex").slice(0, 32)}`;
}

export class RukpakController {
  readonly classes: Informer<ProvisionerClass>;
  readonly bundles: Informer<Bundle>;
  readonly instances: Informer<Instance>;
  readonly bundleQueue: WorkQueue;
  readonly instanceQueue: WorkQueue;
  readonly events: EventRecorder;
  private readonly client: KubeClient;
  private readonly provisioners: Set<string>;
  private readonly log: (m: string) => void;
  private running: Promise<unknown> | undefined;
  private readonly key: SigningKey;
  private readonly records: RecordStore;
  private readonly protectedSet: ProtectedSet;
  /** Unpacks running: the Bundle's key → its abort controller and the slots (hosts, requester) it holds. */
  private readonly unpacking = new Map<string, { ac: AbortController; slots: string[] }>();
  /** Bundles waiting for a free slot of a host they fetch from or of their requester. */
  private readonly waitingForSlot = new Set<string>();
  /** Bundles this process has tried to unpack (a Failed one is tried once more after a restart). */
  private readonly tried = new Set<string>();
  /** The generation of each Bundle whose outcome is final here: unpacked (with its digest) or failed for good. */
  private readonly settled = new Map<string, { gen: number; digest?: string }>();
  private readonly perSlot: number;

  constructor(private readonly opts: ProvisionerOptions) {
    this.client = opts.client;
    this.key = opts.key;
    const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    this.records = new RecordStore(this.client, namespace);
    this.protectedSet = {
      namespace,
      crds: new Set(opts.protectedCrds ?? rukpakCrdObjects().map((c) => c.metadata.name)),
      clusterNames: new Set(
        opts.protectedNames ?? [WEBHOOK_CONFIG_NAME, "opcat-rukpak", "rukpak-approver", "rukpak-class-user"],
      ),
    };
    this.provisioners = new Set(opts.provisioners ?? [OPERATOR_PROVISIONER, PLAIN_PROVISIONER]);
    this.log = opts.log ?? (() => {});
    const onError = (e: unknown) => this.log(`watch: ${(e as Error).message}`);
    this.classes = new Informer<ProvisionerClass>(this.client, API_VERSION, "ProvisionerClass", { onError });
    this.bundles = new Informer<Bundle>(this.client, API_VERSION, "Bundle", { onError });
    this.instances = new Informer<Instance>(this.client, API_VERSION, "Instance", { onError });
    const qerr = (kind: string) => (key: string, e: unknown, attempt: number) =>
      this.log(`${kind} ${key}: attempt ${attempt} failed: ${(e as Error).message}`);
    this.bundleQueue = new WorkQueue({
      concurrency: opts.concurrency ?? 4,
      onError: qerr("bundle"),
      baseDelay: 200,
      maxDelay: 30_000,
    });
    this.instanceQueue = new WorkQueue({
      concurrency: opts.concurrency ?? 4,
      onError: qerr("instance"),
      baseDelay: 200,
      maxDelay: 30_000,
    });
    this.events = new EventRecorder(this.client, "opcat-rukpak");
    this.classes.on((ev, pc, old) => {
      const changed = ev === "update" && JSON.stringify(old?.parameters) !== JSON.stringify(pc.parameters);
      for (const b of this.bundles.list()) {
        if (b.spec.class !== pc.metadata.name) continue;
        if (!changed) this.bundleQueue.add(b.metadata.name);
        else {
          // new limits: a Bundle that failed for good may pass now
          this.settled.delete(b.metadata.name);
          this.tried.delete(b.metadata.name);
          this.bundleQueue.retryNow(b.metadata.name);
        }
      }
      for (const i of this.instances.list()) this.instanceQueue.add(i.metadata.name);
    });
    this.perSlot = Math.max(1, (opts.concurrency ?? 4) - 1);
    this.bundles.on((ev, b, old) => {
      const key = b.metadata.name;
      if (ev === "delete" || b.metadata.deletionTimestamp) {
        // nothing more for it: stop its unpack, forget its retries (a deletion still removes the finalizer)
        this.unpacking.get(key)?.ac.abort(new UnpackError("Aborted", "the Bundle is being deleted", false));
        this.bundleQueue.drop(key);
        this.tried.delete(key);
        this.settled.delete(key);
        if (ev !== "delete") this.bundleQueue.add(key);
      } else if (old && old.metadata.generation !== b.metadata.generation) {
        // a new spec: the old one's unpack and backoff are moot
        this.unpacking.get(key)?.ac.abort(new UnpackError("Aborted", "the Bundle's spec changed", false));
        this.bundleQueue.retryNow(key);
      } else this.bundleQueue.add(key);
      for (const i of this.instances.list())
        if (i.spec.bundle.name === b.metadata.name || labelsMatch(i.spec.selector, b.metadata.labels))
          this.instanceQueue.add(i.metadata.name);
    });
    this.instances.on((ev, i, old) => {
      this.instanceQueue.add(i.metadata.name);
      // a changed Instance may now have a verifiable requester: its Bundle's content is read again
      // (whose rights it is read with comes from the Instance), also after a final refusal
      if (ev === "update" && old && old.metadata.generation !== i.metadata.generation) {
        const b = this.bundles.get(i.spec.bundle.name);
        if (b?.status?.unpacked === "Failed") {
          this.settled.delete(b.metadata.name);
          this.tried.delete(b.metadata.name);
          this.bundleQueue.retryNow(b.metadata.name);
        }
      }
    });
  }

  /** Starts the informers and the workers; resolves once the caches are filled. */
  async start(): Promise<void> {
    await Promise.all([this.classes.start(), this.bundles.start(), this.instances.start()]);
    this.running = Promise.all([
      this.bundleQueue.run((k) => this.reconcileBundle(k)),
      this.instanceQueue.run((k) => this.reconcileInstance(k)),
    ]);
  }

  async stop(): Promise<void> {
    this.classes.stop();
    this.bundles.stop();
    this.instances.stop();
    this.bundleQueue.stop();
    this.instanceQueue.stop();
    await this.running;
  }

  private ours(className: string | undefined): ProvisionerClass | undefined {
    if (!className) return undefined;
    const pc = this.classes.get(className);
    return pc && this.provisioners.has(pc.provisioner) ? pc : undefined;
  }

  // ---------------------------------------------------------------- Bundles

  private async writeBundleStatus(b: Bundle, status: BundleStatus): Promise<Bundle> {
    return this.client.replace<Bundle>({ ...b, status }, { subresource: "status" });
  }

  /** Where a ref is fetched from ("" for none: file:// reads ConfigMaps). */
  private static hostOf(ref: string): string {
    if (ref.startsWith("docker://")) return ref.slice("docker://".length).split("/")[0];
    if (ref.startsWith("https://")) return new URL(ref).host;
    return "";
  }

  /**
   * Takes a slot of every host the refs fetch from and of the requester, or none and false (the Bundle
   * waits): neither one host nor one user ever holds every worker.
   */
  private takeSlots(b: Bundle, ac: AbortController, requester: Requester | undefined): boolean {
    const name = b.metadata.name;
    const hosts = [...new Set(b.spec.refs.map((r) => RukpakController.hostOf(r)).filter((h) => h !== ""))];
    const slots = [
      ...hosts.map((h) => `host ${h}`),
      ...(hosts.length > 0 ? [`user ${requester?.username ?? ""}`] : []),
    ];
    const busy = (k: string) => [...this.unpacking.values()].filter((u) => u.slots.includes(k)).length;
    if (slots.some((k) => busy(k) >= this.perSlot)) {
      this.waitingForSlot.add(name);
      return false;
    }
    this.unpacking.set(name, { ac, slots });
    return true;
  }

  private releaseSlots(name: string): void {
    if (!this.unpacking.delete(name)) return;
    for (const k of [...this.waitingForSlot]) {
      this.waitingForSlot.delete(k);
      this.bundleQueue.add(k);
    }
  }

  /**
   * A Bundle another replica (or an earlier run with another state directory) unpacked: its content
   * is fetched again from the refs pinned when it was unpacked (images by digest, not a tag that may
   * have moved), and kept only when its digest is the recorded one, so that every replica installs
   * exactly what was approved. True when restored; otherwise a full unpack follows (a new digest,
   * which no approval names).
   */
  private async restorePinned(b: Bundle, gen: number): Promise<boolean> {
    const st = b.status ?? {};
    if (st.unpacked !== "Done" || st.observedGeneration !== gen || !st.digest) return false;
    if (contentExists(this.opts.stateDir, st.digest)) return false;
    const pinned = st.resolvedRefs ?? [];
    if (
      pinned.length !== b.spec.refs.length ||
      pinned.some((r, i) => r.split("://")[0] !== b.spec.refs[i].split("://")[0])
    )
      return false;
    const { limits } = limitsOf(this.ours(b.spec.class)?.parameters);
    try {
      const content = await unpackBundle(
        { ...b.spec, refs: pinned },
        {
          root: this.opts.stateDir,
          pull: this.opts.pull,
          client: this.client,
          requester: await this.contentRequesterOf(b),
          limits: { ...this.opts.limits, ...limits },
        },
      );
      if (content.digest !== st.digest) {
        this.log(`bundle ${b.metadata.name}: the pinned refs now give ${content.digest}, not ${st.digest}`);
        return false;
      }
    } catch (e) {
      this.log(`bundle ${b.metadata.name}: restoring from the pinned refs: ${(e as Error).message}`);
      return false;
    }
    this.settled.set(b.metadata.name, { gen, digest: st.digest });
    for (const i of this.instances.list())
      if (i.spec.bundle.name === b.metadata.name) this.instanceQueue.add(i.metadata.name);
    return true;
  }

  /**
   * Unpacks a Bundle once per generation: `InProgress` is written when a generation is first seen,
   * then `Done` or `Failed`. A failure that may pass is retried with the queue's backoff without
   * writing anything until the outcome changes; one that cannot pass stays until the spec changes.
   */
  async reconcileBundle(name: string): Promise<void> {
    let b = this.bundles.get(name);
    if (!b) return;
    if (b.metadata.deletionTimestamp) {
      // deleted: drop its unpacked content unless another Bundle has the same content, then let it go
      if (!hasFinalizer(b, FINALIZER_CONTENT)) return;
      const digest = b.status?.digest;
      const shared =
        digest &&
        this.bundles
          .list()
          .some((o) => o.metadata.name !== name && !o.metadata.deletionTimestamp && o.status?.digest === digest);
      const dir = digest && !shared ? contentExists(this.opts.stateDir, digest) : undefined;
      if (dir) rmSync(dir, { recursive: true, force: true });
      await removeFinalizer(this.client, b, FINALIZER_CONTENT);
      return;
    }
    if (!this.ours(b.spec.class)) return;
    if (!hasFinalizer(b, FINALIZER_CONTENT)) b = await addFinalizer(this.client, b, FINALIZER_CONTENT);
    const gen = b.metadata.generation ?? 0;
    const st = b.status ?? {};
    if (
      st.unpacked === "Done" &&
      st.observedGeneration === gen &&
      st.digest &&
      contentExists(this.opts.stateDir, st.digest)
    )
      return;
    const done = this.settled.get(name);
    if (done?.gen === gen && (!done.digest || contentExists(this.opts.stateDir, done.digest))) return;
    if (await this.restorePinned(b, gen)) return;
    // a failure of this generation: retried only by the backoff (or once after a restart)
    const failedBefore = st.unpacked === "Failed" && st.observedGeneration === gen;
    if (failedBefore && this.bundleQueue.failuresOf(name) === 0 && this.tried.has(name)) return;
    const startsNow = !failedBefore && (st.unpacked !== "InProgress" || st.observedGeneration !== gen);
    if (startsNow) {
      const c = setCondition(st.conditions, {
        type: "Unpacked",
        status: "False",
        reason: "Unpacking",
        message: "unpacking the bundle's content",
        observedGeneration: gen,
      });
      b = await this.writeBundleStatus(b, {
        ...st,
        unpacked: "InProgress",
        reason: "Unpacking",
        message: "unpacking the bundle's content",
        conditions: c.conditions,
        observedGeneration: gen,
      });
    }
    const ac = new AbortController();
    const requester = await this.contentRequesterOf(b);
    if (!this.takeSlots(b, ac, requester)) return; // queued again when a slot frees
    this.tried.add(name);
    const pc = this.ours(b.spec.class);
    const { limits, problems } = limitsOf(pc?.parameters);
    if (problems.length > 0) this.log(`ProvisionerClass ${pc?.metadata.name}: ${problems.join("; ")}`);
    let outcome: { status: BundleStatus; event: ["Normal" | "Warning", string, string] } | undefined;
    let retry: UnpackError | undefined;
    try {
      const content = await unpackBundle(b.spec, {
        root: this.opts.stateDir,
        pull: this.opts.pull,
        client: this.client,
        requester,
        limits: { ...this.opts.limits, ...limits },
        signal: ac.signal,
      });
      const type = b.spec.refs[0].split("://")[0];
      const msg = `Successfully unpacked the ${type} Bundle (${content.format}, ${content.objects.length} objects)`;
      outcome = {
        status: {
          unpacked: "Done",
          reason: "UnpackSuccessful",
          message: msg,
          digest: content.digest,
          resolvedRefs: content.resolvedRefs,
          format: content.format,
          objects: content.objects,
        },
        event: ["Normal", "Unpacked", msg],
      };
    } catch (e) {
      if (!(e instanceof UnpackError)) throw e;
      if (e.reason === "Aborted") return; // deleted or changed: the next pass deals with that
      outcome = {
        status: { unpacked: "Failed", reason: e.reason, message: e.message },
        event: ["Warning", e.reason, e.message],
      };
      if (e.retryable) retry = e;
    } finally {
      this.releaseSlots(name);
    }
    const cur = this.bundles.get(name) ?? b;
    if (cur.metadata.deletionTimestamp || (cur.metadata.generation ?? 0) !== gen) return;
    if (outcome.status.unpacked === "Done" || !retry) this.settled.set(name, { gen, digest: outcome.status.digest });
    const was = cur.status ?? {};
    // (the cache may not hold this pass's InProgress yet: then the outcome is written whatever it shows)
    const same =
      !startsNow &&
      was.unpacked === outcome.status.unpacked &&
      was.reason === outcome.status.reason &&
      was.message === outcome.status.message &&
      was.digest === (outcome.status.digest ?? was.digest) &&
      was.observedGeneration === gen;
    if (!same) {
      const fresh = (await this.client.tryGet<Bundle>(API_VERSION, "Bundle", name)) ?? cur;
      const fst = fresh.status ?? {};
      const c = setCondition(fst.conditions, {
        type: "Unpacked",
        status: outcome.status.unpacked === "Done" ? "True" : "False",
        reason: outcome.status.reason!,
        message: outcome.status.message!,
        observedGeneration: gen,
      });
      await this.writeBundleStatus(fresh, {
        ...fst,
        ...outcome.status,
        conditions: c.conditions,
        observedGeneration: gen,
      });
      this.events.emit(fresh, ...outcome.event);
    }
    if (retry) throw retry; // retried with backoff, nothing written while the outcome stays the same
  }

  // ---------------------------------------------------------------- Instances

  /** The objects an unpacked bundle becomes for an Instance (registry+v1 converted, plain as they are). */
  async desiredContent(bundle: Bundle, inst: Instance): Promise<DesiredContent> {
    const dir = contentExists(this.opts.stateDir, bundle.status!.digest!);
    if (!dir)
      throw new UnpackError(
        "ContentMissing",
        `the content of bundle ${bundle.metadata.name} is not in this provisioner's store`,
      );
    if (bundle.status?.format === "registry+v1") {
      const c = convertRegistryV1(readBundleDirectory(dir), {
        installNamespace: inst.spec.installNamespace,
        watchNamespaces: inst.spec.watchNamespaces,
      });
      const objects = [...c.objects];
      const bundles = new Map<string, string>();
      for (const req of c.certificates) {
        const { secret, caPem } = await this.servingCertificate(req, inst.metadata.name);
        objects.push(secret);
        bundles.set(caBundlePlaceholder(req.secretName), Buffer.from(caPem).toString("base64"));
      }
      return {
        objects: bundles.size > 0 ? objects.map((o) => fillPlaceholders(o, bundles) as KubeObject) : objects,
        installNamespace: c.installNamespace,
        format: "registry+v1",
      };
    }
    return { objects: readPlainObjects(dir), format: "plain" };
  }

  /**
   * The serving certificate Secret of a webhook Service: the one this Instance made earlier when it is
   * still there and covers the names (so that webhook configurations do not change on every
   * reconcile), else a new CA and certificate (valid two years).
   */
  private async servingCertificate(
    req: CertificateRequest,
    instance: string,
  ): Promise<{ secret: KubeObject; caPem: string }> {
    const cur = await this.client
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

  private async setInstanceStatus(inst: Instance, mutate: (s: InstanceStatus) => InstanceStatus): Promise<Instance> {
    const next = mutate({ ...(inst.status ?? {}) });
    if (JSON.stringify(next) === JSON.stringify(inst.status ?? {})) return inst;
    return this.client.replace<Instance>({ ...inst, status: next }, { subresource: "status" });
  }

  private conds(inst: Instance, ...cs: NewCondition[]): Condition[] {
    let list = inst.status?.conditions ?? [];
    const gen = inst.metadata.generation ?? 0;
    for (const c of cs) list = setCondition(list, { observedGeneration: gen, ...c }).conditions;
    return list;
  }

  /** Ends a reconcile with conditions (and an Event when `event` says so). */
  private async stopWith(inst: Instance, event: "Normal" | "Warning" | undefined, ...cs: NewCondition[]) {
    const gen = inst.metadata.generation ?? 0;
    const out = await this.setInstanceStatus(inst, (s) => ({
      ...s,
      conditions: this.conds(inst, ...cs),
      observedGeneration: gen,
    }));
    const last = cs[cs.length - 1];
    if (event && last) this.events.emit(out, event, last.reason, last.message);
    return out;
  }

  /**
   * An approval record that opcat did not sign (written while no webhook served) is removed, and the
   * Approved condition says so: the status never shows an approval nobody gave.
   */
  private async dropForgedApproval(inst: Instance): Promise<Instance> {
    const a = inst.status?.approval;
    if (!a || this.key.verify(approvalParts(inst.metadata.uid!, a), a.signature)) return inst;
    return this.setInstanceStatus(inst, (s) => {
      const { approval: _, ...rest } = s;
      return {
        ...rest,
        conditions: this.conds(inst, {
          type: "Approved",
          status: "False",
          reason: "ApprovalNotSigned",
          message:
            "the recorded approval is not signed by opcat (written while its admission webhook was not " +
            `serving?) and is ignored; approve with kubectl instance approve ${inst.metadata.name}`,
        }),
      };
    });
  }

  /** True when this controller made `o` (its signed requester is the controllers' own identity). */
  madeBySelf(o: KubeObject): boolean {
    return madeBy(this.key, this.opts.self, o);
  }

  /** The Bundle an Instance names; made from its embedded spec when given (and only then). */
  private async bundleFor(inst: Instance): Promise<{ bundle?: Bundle; stop?: NewCondition }> {
    const name = inst.metadata.name;
    const bundleName = inst.spec.bundle.name;
    let bundle = this.bundles.get(bundleName) ?? (await this.client.tryGet<Bundle>(API_VERSION, "Bundle", bundleName));
    const embedded = inst.spec.bundle.spec;
    if (!embedded) {
      if (bundle) return { bundle };
      return {
        stop: {
          type: "Unpacked",
          status: "False",
          reason: "BundleNotFound",
          message: `Bundle ${bundleName} not found`,
        },
      };
    }
    if (!bundle) {
      bundle = await this.client.create<Bundle>({
        apiVersion: API_VERSION,
        kind: "Bundle",
        metadata: {
          name: bundleName,
          labels: { ...(inst.spec.selector?.matchLabels ?? {}), [LABEL_INSTANCE]: name },
          ownerReferences: [
            { apiVersion: API_VERSION, kind: "Instance", name, uid: inst.metadata.uid!, blockOwnerDeletion: false },
          ],
        },
        spec: embedded,
      });
      return { bundle };
    }
    // a Bundle of that name must be the one made from this spec for this Instance: someone else's
    // Bundle (same name, other refs, mounts or secrets) is a conflict, never a match
    const mine =
      (bundle.metadata.ownerReferences ?? []).some((o) => o.uid === inst.metadata.uid) && this.madeBySelf(bundle);
    const same = sameJson(bundle.spec, { ...bundle.spec, ...embedded });
    if (mine && same) return { bundle };
    return {
      stop: {
        type: "Installed",
        status: "False",
        reason: "BundleSpecConflict",
        message: mine
          ? `Bundle ${bundleName} exists with another spec; name a new Bundle to pivot`
          : `Bundle ${bundleName} exists and was not made from this Instance's spec; ` +
            `name a Bundle that does not exist yet`,
      },
    };
  }

  async reconcileInstance(name: string): Promise<void> {
    const cached = this.instances.get(name);
    if (!cached || cached.metadata.deletionTimestamp) return;
    let inst = await this.client.getLive<Instance>(API_VERSION, "Instance", name, { uid: cached.metadata.uid });
    if (!inst) return;
    const gen = inst.metadata.generation ?? 0;
    const bundleName = inst.spec.bundle.name;
    if (inst.spec.bundle.spec && !this.ours(inst.spec.bundle.spec.class)) return;
    inst = await this.dropForgedApproval(inst);

    // 1. the Bundle, unpacked
    const found = await this.bundleFor(inst);
    if (found.stop) {
      await this.stopWith(inst, undefined, found.stop);
      return;
    }
    const bundle = found.bundle!;
    const pc = this.ours(bundle.spec.class);
    if (!pc) return;
    const bst = bundle.status;
    if (bst?.unpacked !== "Done" || bst.observedGeneration !== bundle.metadata.generation || !bst.digest) {
      const failed = bst?.unpacked === "Failed";
      await this.stopWith(inst, undefined, {
        type: "Unpacked",
        status: "False",
        reason: failed ? "UnpackFailed" : "UnpackPending",
        message: failed
          ? `Failed to unpack the ${bundleName} Bundle: ${bst?.message ?? ""}`
          : `Waiting for the ${bundleName} Bundle to be unpacked`,
      });
      return;
    }

    // 2. what it becomes
    let desired: DesiredContent;
    try {
      desired = await this.desiredContent(bundle, inst);
    } catch (e) {
      if (e instanceof UnpackError && e.reason === "ContentMissing") {
        // unpacked by another provisioner process: restored here from its pinned refs (or unpacked
        // again), after which the Bundle's reconcile enqueues this Instance
        this.bundleQueue.add(bundle.metadata.name);
        return;
      }
      const msg = e instanceof ConvertError ? e.errors.join("; ") : (e as Error).message;
      const unpacked = {
        type: "Unpacked",
        status: "True" as const,
        reason: "UnpackSuccessful",
        message: `Successfully unpacked the ${bundleName} Bundle`,
      };
      await this.stopWith(inst, "Warning", unpacked, {
        type: "Installed",
        status: "False",
        reason: "InvalidBundle",
        message: msg,
      });
      return;
    }
    const unpackedOk: NewCondition = {
      type: "Unpacked",
      status: "True",
      reason: "UnpackSuccessful",
      message: `Successfully unpacked the ${bundleName} Bundle`,
    };
    const labels = {
      ...ownerLabels(inst),
      [LABEL_INSTANCE]: name,
      [LABEL_BUNDLE]: bundleName,
      [LABEL_MANAGED_BY]: MANAGED_BY,
    };
    const owner = {
      apiVersion: API_VERSION,
      kind: "Instance",
      name,
      uid: inst.metadata.uid!,
      blockOwnerDeletion: false,
    };
    for (const o of desired.objects) {
      o.metadata = { ...o.metadata, labels: { ...(o.metadata.labels ?? {}), ...labels }, ownerReferences: [owner] };
    }

    // 3. opcat's own objects are never part of a bundle
    const forbidden = desired.objects.map((o) => protectedReason(this.protectedSet, o)).filter((x) => x !== undefined);
    if (forbidden.length > 0) {
      await this.stopWith(inst, "Warning", unpackedOk, {
        type: "Installed",
        status: "False",
        reason: "ProtectedObject",
        message: `${listed(forbidden)}: a bundle may not create, change or delete opcat's own objects`,
      });
      return;
    }

    // 4. approval: a signed decision naming this generation, this Bundle and this content
    const subject: ApprovalSubject = {
      instanceUid: inst.metadata.uid!,
      generation: gen,
      bundle: { name: bundleName, uid: bundle.metadata.uid!, generation: bundle.metadata.generation ?? 0 },
      digest: bst.digest,
    };
    const recorded = inst.status?.approval;
    const mismatch = approvalMismatch(this.key, recorded, subject);
    let approvedCond: NewCondition;
    if (mismatch === undefined) {
      approvedCond = approvalCondition(recorded!);
    } else {
      const decided = await this.decide(inst, bundle, pc, desired, subject, recorded, mismatch);
      if (!decided.approval) {
        inst = await this.setInstanceStatus(inst, (s) => ({
          ...s,
          contentDigest: subject.digest,
          conditions: this.conds(inst!, unpackedOk, decided.condition),
          observedGeneration: gen,
        }));
        this.events.emit(inst, "Normal", decided.condition.reason, decided.condition.message);
        return;
      }
      approvedCond = decided.condition;
      inst = await this.setInstanceStatus(inst, (s) => ({
        ...s,
        approval: decided.approval,
        conditions: this.conds(inst!, unpackedOk, approvedCond),
        observedGeneration: gen,
      }));
    }

    // 5. CRD upgrade safety, before anything changes (unless the Instance says None)
    const unsafe = inst.spec.crdUpgradeSafety === "None" ? [] : await this.unsafeCrdChanges(desired.objects);
    if (unsafe.length > 0) {
      await this.stopWith(inst, "Warning", unpackedOk, approvedCond, {
        type: "Installed",
        status: "False",
        reason: "UnsafeCRDUpgrade",
        message: unsafe.join("\n"),
      });
      return;
    }

    // 6. never adopt: an object that exists and is not this Instance's (by the controller's own
    // record) is a collision
    let { record, version } = await this.records.read(inst);
    const collisions = await this.collisions(inst, record, desired.objects);
    if (collisions.length > 0) {
      await this.stopWith(inst, "Warning", unpackedOk, approvedCond, {
        type: "Installed",
        status: "False",
        reason: "ObjectCollision",
        message: `${listed(collisions)}: an object has one owner, and opcat never adopts an object it did not create`,
      });
      return;
    }

    // The cache may not have seen the Instance's deletion yet (a pivot or install that started just
    // before it): ask the API server before creating its objects, which would otherwise outlive it
    // until the garbage collector notices their owner is gone.
    if (!(await this.client.getLive(API_VERSION, "Instance", inst.metadata.name, { uid: inst.metadata.uid }))) return;

    // 7. the pivot, as a transaction: the target set is recorded before anything is applied
    const target = desired.objects.map(refOf);
    const before = [...(record?.applied ?? []), ...(record?.pending ?? [])];
    record = {
      instance: name,
      uid: inst.metadata.uid!,
      applied: record?.applied ?? [],
      pending: target,
      bundle: bundleName,
      digest: bst.digest,
      namespaces: record?.namespaces ?? [],
    };
    version = await this.records.write(inst, record, version);
    const previous = inst.status?.activeBundle;
    if (findCondition(inst.status?.conditions, "Installed")?.status === "True" && previous !== bundleName)
      inst = await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, unpackedOk, approvedCond, {
          type: "Installed",
          status: "False",
          reason: "Upgrading",
          message: `applying bundle ${bundleName} (from ${previous})`,
        }),
      }));
    try {
      const made = await this.install(desired, fieldManagerFor(name), record.namespaces ?? []);
      if (made.length > 0) {
        record = { ...record, namespaces: [...(record.namespaces ?? []), ...made] };
        version = await this.records.write(inst, record, version);
      }
    } catch (e) {
      const msg = e instanceof KubeApiError ? `${e.reason}: ${e.message}` : (e as Error).message;
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, {
          type: "Installed",
          status: "False",
          reason: s.activeBundle && s.activeBundle !== bundleName ? "UpgradeFailed" : "InstallFailed",
          message: msg,
        }),
        observedGeneration: gen,
      })).catch(() => undefined);
      this.events.emit(inst, "Warning", "InstallFailed", msg);
      throw e;
    }

    // 8. prune what the new bundle no longer has: only objects in the record, and only while they
    // still name this Instance as their owner
    const keep = new Set(target.map(refKey));
    const pruned = new Set<string>();
    for (const r of before) {
      const k = refKey(r);
      if (keep.has(k) || pruned.has(k)) continue;
      pruned.add(k);
      const live = await this.client.tryGet(r.apiVersion, r.kind, r.name, r.namespace).catch(() => undefined);
      if (!live || !(live.metadata.ownerReferences ?? []).some((o) => o.uid === inst!.metadata.uid)) continue;
      await this.client
        .delete(r.apiVersion, r.kind, r.name, r.namespace)
        .catch((e) => (isNotFound(e) ? false : Promise.reject(e)));
    }
    record = { ...record, applied: target, pending: undefined };
    await this.records.write(inst, record, version);

    // older bundles this Instance pivoted from
    for (const b of this.bundles.list()) {
      if (b.metadata.name === bundleName || !labelsMatch(inst.spec.selector, b.metadata.labels)) continue;
      if (findCondition(b.status?.conditions, "Replaced")?.status === "True") continue;
      const fresh = await this.client.tryGet<Bundle>(API_VERSION, "Bundle", b.metadata.name);
      if (!fresh) continue;
      const c = setCondition(fresh.status?.conditions, {
        type: "Replaced",
        status: "True",
        reason: "Replaced",
        message: `replaced by ${bundleName} in instance ${name}`,
      });
      await this.writeBundleStatus(fresh, { ...(fresh.status ?? {}), conditions: c.conditions }).catch((e) =>
        isConflict(e) ? undefined : Promise.reject(e),
      );
    }
    const msg = `Instantiated bundle ${bundleName} successfully`;
    await this.setInstanceStatus(inst, (s) => ({
      ...s,
      activeBundle: bundleName,
      ...(desired.installNamespace ? { installNamespace: desired.installNamespace } : {}),
      objects: target,
      conditions: this.conds(inst!, unpackedOk, approvedCond, {
        type: "Installed",
        status: "True",
        reason: "InstallationSucceeded",
        message: msg,
      }),
      observedGeneration: gen,
    }));
    if (previous !== bundleName)
      this.events.emit(
        inst,
        "Normal",
        previous ? "Upgraded" : "Installed",
        previous ? `${msg} (from ${previous})` : msg,
      );
  }

  /**
   * A new decision by the class's policy when no recorded approval names this generation, Bundle and
   * content: a signed approval, or the condition saying what the Instance waits for.
   */
  private async decide(
    inst: Instance,
    bundle: Bundle,
    pc: ProvisionerClass,
    desired: DesiredContent,
    subject: ApprovalSubject,
    recorded: ApprovalRecord | undefined,
    mismatch: string,
  ): Promise<{ approval?: ApprovalRecord; condition: NewCondition }> {
    const name = inst.metadata.name;
    const bundleName = bundle.metadata.name;
    const waiting = (reason: string, message: string) => ({
      condition: { type: "Approved", status: "False" as const, reason, message },
    });
    // a denial of exactly this content stands until something changes
    if (recorded && mismatch.startsWith("denied by "))
      return waiting(
        "DeniedByUser",
        `${mismatch}; change the Instance or approve it: kubectl instance approve ${name}`,
      );
    const approve = (reason: string, by: string, message: string) => ({
      approval: signApproval(this.key, subject.instanceUid, {
        decision: "Approved",
        reason,
        by,
        generation: subject.generation,
        bundle: subject.bundle,
        digest: subject.digest,
      }),
      condition: { type: "Approved", status: "True" as const, reason, message },
    });
    const policy = approvalOf(pc);
    if (policy === "DenyAll")
      return waiting(
        "AwaitingApproval",
        `waiting for approval of bundle ${bundleName}: kubectl instance approve ${name}` +
          (recorded ? ` (${mismatch})` : ""),
      );
    // who asked: the Instance's creator (for an Instance the controllers made for an Operator or a
    // ClusterExtension, that object's creator), and whoever last shaped a Bundle they did not make
    const who = await this.requesterOf(inst);
    if (!who)
      return waiting(
        "RequesterUnverified",
        "who created or last changed this Instance cannot be verified (written while opcat's admission " +
          `webhook was not serving, or the record was altered); approve it with kubectl instance approve ${name}`,
      );
    const requesters = [who];
    if (!this.madeBySelf(bundle)) {
      const shaper = verifiedRequester(this.key, bundle);
      if (!shaper)
        return waiting(
          "RequesterUnverified",
          `who created or last changed Bundle ${bundleName} cannot be verified; ` +
            `approve it with kubectl instance approve ${name}`,
        );
      if (shaper.username !== who.username) requesters.push(shaper);
    }
    // the class: the Instance may name a Bundle made later, so `use` is checked here as well
    for (const r of requesters)
      if (
        !(await canI(this.client, r, {
          verb: "use",
          group: GROUP,
          resource: "provisionerclasses",
          name: pc.metadata.name,
        }))
      )
        return waiting(
          "ClassNotPermitted",
          `${r.username} may not use ProvisionerClass ${JSON.stringify(pc.metadata.name)} ` +
            `(the "use" verb on provisionerclasses.${GROUP})`,
        );
    if (policy === "AllowAll")
      return approve(
        "AllowAll",
        `ProvisionerClass ${pc.metadata.name}`,
        `approved by ProvisionerClass ${pc.metadata.name} (approval: AllowAll)`,
      );
    // UserPermission: the API server judges, as each requester, a dry run of every object
    const refusals: string[] = [];
    for (const r of requesters) {
      const ns = await this.namespacesFor(inst, desired, r);
      for (const x of ns.refused) refusals.push(`${r.username} may not create Namespace ${JSON.stringify(x)}`);
      if (ns.refused.length > 0) continue;
      for (const x of await dryRunAs(this.client, r, desired.objects, fieldManagerFor(name)))
        refusals.push(`${r.username} may not make ${x.object}: ${x.message}`);
    }
    if (refusals.length === 0)
      return approve(
        "UserPermission",
        requesters.map((r) => r.username).join(", "),
        `${requesters.map((r) => r.username).join(" and ")} may create every object of bundle ${bundleName}`,
      );
    return waiting("InsufficientPermissions", listed(refusals, 20));
  }

  /**
   * Whose rights a Bundle's content (ConfigMaps, pull Secrets) is read with: its verified requester;
   * for a Bundle the controllers made from an Instance's embedded spec, whom that Instance is judged
   * as. Never the controllers' own rights, and never an unverified annotation.
   */
  private async contentRequesterOf(b: Bundle): Promise<Requester | undefined> {
    const who = verifiedRequester(this.key, b);
    const owners = b.metadata.ownerReferences ?? [];
    // no owner: made by a user (who may be the controllers' own identity, e.g. `cluster run` on a laptop)
    if (!who || !this.madeBySelf(b) || owners.length === 0) return who;
    for (const ref of owners) {
      if (ref.kind !== "Instance" || ref.apiVersion !== API_VERSION) continue;
      const inst = this.instances.get(ref.name);
      if (inst?.metadata.uid === ref.uid) return this.requesterOf(inst);
    }
    return undefined;
  }

  /**
   * Whom an Instance is judged as: its verified requester, or, when the controllers made it for an
   * owner of a delegating kind (Operator, ClusterExtension), that owner's verified requester. An
   * Instance the controllers made for another owner (a resolveset's package Instance) has no
   * requester: it waits for an approval.
   */
  private async requesterOf(inst: Instance): Promise<Requester | undefined> {
    const who = verifiedRequester(this.key, inst);
    const owners = inst.metadata.ownerReferences ?? [];
    // no owner: made by a user (who may be the controllers' own identity, e.g. `cluster run` on a laptop);
    // made by the controllers for something: never judged with the controllers' own rights
    if (!who || !this.madeBySelf(inst) || owners.length === 0) return who;
    for (const ref of owners) {
      const k = DELEGATING_KINDS.find((d) => d.kind === ref.kind && `${d.group}/${d.version}` === ref.apiVersion);
      if (!k) continue;
      const owner = await this.client.getLive(ref.apiVersion, ref.kind, ref.name, { uid: ref.uid });
      const theirs = owner ? verifiedRequester(this.key, owner) : undefined;
      return theirs?.username === this.opts.self ? undefined : theirs;
    }
    return undefined;
  }

  /**
   * The namespaces the objects need that do not exist: each is created by the controller when the
   * requester may create it (a dry run as the requester), so that the dry run of what goes in it can
   * be judged; those the requester may not create are returned.
   */
  private async namespacesFor(inst: Instance, desired: DesiredContent, r: Requester): Promise<{ refused: string[] }> {
    const made: string[] = [];
    const needed = neededNamespaces(desired);
    const refused: string[] = [];
    for (const ns of needed) {
      if (await this.client.tryGet("v1", "Namespace", ns)) continue;
      const nsObj = { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } };
      const ok = await this.client
        .impersonating(r)
        .request("POST", "/api/v1/namespaces", { body: nsObj, query: { dryRun: "All" } })
        .then(
          () => true,
          () => false,
        );
      if (!ok) refused.push(ns);
      else {
        await this.client.create(nsObj).catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
        made.push(ns);
      }
    }
    if (made.length > 0) {
      const { record, version } = await this.records.read(inst);
      await this.records.write(
        inst,
        {
          instance: inst.metadata.name,
          uid: inst.metadata.uid!,
          applied: record?.applied ?? [],
          ...(record?.pending ? { pending: record.pending } : {}),
          namespaces: [...(record?.namespaces ?? []), ...made],
        },
        version,
      );
    }
    return { refused };
  }

  /** CRD changes that would break stored versions, fields or existing custom resources. */
  private async unsafeCrdChanges(objects: readonly KubeObject[]): Promise<string[]> {
    const unsafe: string[] = [];
    for (const o of objects) {
      if (o.kind !== "CustomResourceDefinition") continue;
      const existing = await this.client.tryGet<
        KubeObject & {
          spec: { group: string; names: { kind: string }; versions: { name: string; served?: boolean }[] };
        }
      >("apiextensions.k8s.io/v1", "CustomResourceDefinition", o.metadata.name);
      if (!existing) continue;
      const diff = crdUpgradeProblems(existing, o);
      unsafe.push(...diff);
      if (diff.length > 0) continue;
      // existing custom resources must stay valid under the new schema of their version
      for (const v of existing.spec.versions.filter((x) => x.served !== false)) {
        const { items } = await this.client
          .list(`${existing.spec.group}/${v.name}`, existing.spec.names.kind)
          .catch(() => ({ items: [] as KubeObject[] }));
        unsafe.push(...existingObjectProblems(o, v.name, items));
      }
    }
    return unsafe;
  }

  /**
   * Objects of the bundle that exist and are not this Instance's. This Instance's are those in its
   * record (applied, or pending from an interrupted pivot) that still name it as their owner, and
   * namespaces the controller created for it; before a record exists (an Instance installed by an
   * older opcat), objects labelled with it and owned by it.
   */
  private async collisions(inst: Instance, record: InstallRecord | undefined, objects: readonly KubeObject[]) {
    const name = inst.metadata.name;
    const recorded = new Set([...(record?.applied ?? []), ...(record?.pending ?? [])].map(refKey));
    const out: string[] = [];
    for (const o of objects) {
      const cur = await this.client
        .tryGet(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)
        .catch(() => undefined);
      if (!cur) continue;
      const ownedByUs = (cur.metadata.ownerReferences ?? []).some((x) => x.uid === inst.metadata.uid);
      const where = describeObject(o);
      if (o.kind === "Namespace" && record?.namespaces?.includes(o.metadata.name)) continue;
      if (ownedByUs && (recorded.has(refKey(refOf(o))) || (!record && cur.metadata.labels?.[LABEL_INSTANCE] === name)))
        continue;
      const other = cur.metadata.labels?.[LABEL_INSTANCE];
      out.push(
        other && other !== name
          ? `${where} is managed by Instance ${other}`
          : `${where} exists and is not managed by Instance ${name}`,
      );
    }
    return out;
  }

  /**
   * Applies the objects (as the Instance's own field manager): missing namespaces first (returned:
   * the ones made here), CRDs (waiting until Established), then the rest; a dry run of everything
   * first, so that a bundle that cannot be applied changes nothing.
   */
  private async install(desired: DesiredContent, fieldManager: string, known: readonly string[]): Promise<string[]> {
    const made: string[] = [];
    const needed = neededNamespaces(desired);
    const shipped = new Set(desired.objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name));
    for (const ns of needed) {
      if (await this.client.tryGet("v1", "Namespace", ns)) continue;
      if (shipped.has(ns)) {
        await this.client.apply(desired.objects.find((o) => o.kind === "Namespace" && o.metadata.name === ns)!, {
          fieldManager,
        });
        continue;
      }
      await this.client
        .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
        .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
      if (!known.includes(ns)) made.push(ns);
    }
    const crds = desired.objects.filter((o) => o.kind === "CustomResourceDefinition");
    const rest = desired.objects.filter((o) => o.kind !== "CustomResourceDefinition");
    const ownKinds = new Set(
      crds.map((c) => `${(c.spec as { group: string }).group}/${(c.spec as { names: { kind: string } }).names.kind}`),
    );
    for (const o of desired.objects) {
      if (ownKinds.has(`${o.apiVersion.split("/")[0]}/${o.kind}`)) continue;
      await this.client.apply(o, { dryRun: true, fieldManager });
    }
    for (const c of crds) await this.client.apply(c, { fieldManager });
    for (const c of crds) await this.waitEstablished(c.metadata.name);
    for (const o of rest) await this.client.apply(o, { fieldManager });
    return made;
  }

  private async waitEstablished(name: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const crd = await this.client.get<KubeObject & { status?: { conditions?: Condition[] } }>(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        name,
      );
      if (findCondition(crd.status?.conditions, "Established")?.status === "True") return;
      if (Date.now() > deadline) throw new Error(`CRD ${name} did not become Established within 60 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
