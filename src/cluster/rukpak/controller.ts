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
import { WorkQueue } from "../queue.js";
import { readBundleDirectory } from "../../bundle/index.js";
import type { PullOptions } from "../../image/index.js";
import {
  ANNOTATION_REQUESTER,
  API_VERSION,
  FINALIZER_CONTENT,
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
  type ObjectRef,
  type ProvisionerClass,
} from "./api.js";
import { contentExists, limitsOf, readPlainObjects, UnpackError, unpackBundle, type ContentLimits } from "./content.js";
import { caBundlePlaceholder, ConvertError, convertRegistryV1, type CertificateRequest } from "./convert.js";
import { makeServingCerts } from "../certs.js";
import { crdUpgradeProblems, existingObjectProblems } from "./crdsafety.js";
import { describeCheck, missingPermissions, type Requester } from "./permissions.js";

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

function refOf(o: KubeObject): ObjectRef {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  };
}
function refKey(r: ObjectRef): string {
  return `${r.apiVersion}/${r.kind}/${r.namespace ?? ""}/${r.name}`;
}

/** Replaces placeholder strings anywhere in a JSON value. */
function fillPlaceholders(v: unknown, values: Map<string, string>): unknown {
  if (typeof v === "string") return values.get(v) ?? v;
  if (Array.isArray(v)) return v.map((x) => fillPlaceholders(x, values));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillPlaceholders(x, values)]));
  return v;
}

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
    this.instances.on((_, i) => this.instanceQueue.add(i.metadata.name));
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
  private takeSlots(b: Bundle, ac: AbortController): boolean {
    const name = b.metadata.name;
    const hosts = [...new Set(b.spec.refs.map((r) => RukpakController.hostOf(r)).filter((h) => h !== ""))];
    const slots = [
      ...hosts.map((h) => `host ${h}`),
      ...(hosts.length > 0 ? [`user ${requesterOf(b)?.username ?? ""}`] : []),
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
    if (!this.takeSlots(b, ac)) return; // queued again when a slot frees
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
        requester: requesterOf(b),
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

  async reconcileInstance(name: string): Promise<void> {
    const cached = this.instances.get(name);
    if (!cached || cached.metadata.deletionTimestamp) return;
    let inst = await this.client.getLive<Instance>(API_VERSION, "Instance", name, { uid: cached.metadata.uid });
    if (!inst) return;
    const gen = inst.metadata.generation ?? 0;
    const bundleName = inst.spec.bundle.name;

    // the desired Bundle: created from the embedded spec when given
    let bundle = this.bundles.get(bundleName) ?? (await this.client.tryGet<Bundle>(API_VERSION, "Bundle", bundleName));
    if (inst.spec.bundle.spec) {
      if (!this.ours(inst.spec.bundle.spec.class)) return;
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
            ...(inst.metadata.annotations?.[ANNOTATION_REQUESTER]
              ? { annotations: { [ANNOTATION_REQUESTER]: inst.metadata.annotations[ANNOTATION_REQUESTER] } }
              : {}),
          },
          spec: inst.spec.bundle.spec,
        });
      } else if (JSON.stringify(bundle.spec) !== JSON.stringify({ ...bundle.spec, ...inst.spec.bundle.spec })) {
        await this.setInstanceStatus(inst, (s) => ({
          ...s,
          conditions: this.conds(inst!, {
            type: "Installed",
            status: "False",
            reason: "BundleSpecConflict",
            message: `Bundle ${bundleName} exists with another spec; name a new Bundle to pivot`,
          }),
          observedGeneration: gen,
        }));
        return;
      }
    }
    if (!bundle) {
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, {
          type: "Unpacked",
          status: "False",
          reason: "BundleNotFound",
          message: `Bundle ${bundleName} not found`,
        }),
        observedGeneration: gen,
      }));
      return;
    }
    const pc = this.ours(bundle.spec.class);
    if (!pc) return;
    const bst = bundle.status;
    if (bst?.unpacked !== "Done" || bst.observedGeneration !== bundle.metadata.generation) {
      const failed = bst?.unpacked === "Failed";
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, {
          type: "Unpacked",
          status: "False",
          reason: failed ? "UnpackFailed" : "UnpackPending",
          message: failed
            ? `Failed to unpack the ${bundleName} Bundle: ${bst?.message ?? ""}`
            : `Waiting for the ${bundleName} Bundle to be unpacked`,
        }),
        observedGeneration: gen,
      }));
      return;
    }

    let desired: DesiredContent;
    try {
      desired = await this.desiredContent(bundle, inst);
    } catch (e) {
      if (e instanceof UnpackError && e.reason === "ContentMissing") {
        // unpacked by another provisioner process: unpack here too, then come back
        await this.writeBundleStatus(bundle, { ...bst, unpacked: "InProgress", observedGeneration: -1 });
        return;
      }
      const msg = e instanceof ConvertError ? e.errors.join("; ") : (e as Error).message;
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(
          inst!,
          {
            type: "Unpacked",
            status: "True",
            reason: "UnpackSuccessful",
            message: `Successfully unpacked the ${bundleName} Bundle`,
          },
          { type: "Installed", status: "False", reason: "InvalidBundle", message: msg },
        ),
        observedGeneration: gen,
      }));
      this.events.emit(inst, "Warning", "InvalidBundle", msg);
      return;
    }
    const unpackedOk: NewCondition = {
      type: "Unpacked",
      status: "True",
      reason: "UnpackSuccessful",
      message: `Successfully unpacked the ${bundleName} Bundle`,
    };
    const labels = { [LABEL_INSTANCE]: name, [LABEL_BUNDLE]: bundleName, [LABEL_MANAGED_BY]: MANAGED_BY };
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

    // approval, per generation of the Instance
    const approvedCond = findCondition(inst.status?.conditions, "Approved");
    let approved = approvedCond?.status === "True" && approvedCond.observedGeneration === gen;
    if (!approved) {
      const policy = approvalOf(pc);
      let c: NewCondition;
      if (policy === "AllowAll") {
        c = {
          type: "Approved",
          status: "True",
          reason: "AllowAll",
          message: `approved by ProvisionerClass ${pc.metadata.name} (approval: AllowAll)`,
        };
      } else if (policy === "DenyAll") {
        c = {
          type: "Approved",
          status: "False",
          reason: "AwaitingApproval",
          message: `waiting for approval of bundle ${bundleName}: kubectl instance approve ${name}`,
        };
      } else {
        const who = requesterOf(inst);
        if (!who) {
          c = {
            type: "Approved",
            status: "False",
            reason: "RequesterUnknown",
            message:
              "the creator of this Instance is not recorded (the admission " +
              "webhook was not running); approve it with kubectl instance approve",
          };
        } else {
          const missing = await missingPermissions(this.client, who, desired.objects);
          c =
            missing.length === 0
              ? {
                  type: "Approved",
                  status: "True",
                  reason: "UserPermission",
                  message: `${who.username} may create every object of bundle ${bundleName}`,
                }
              : {
                  type: "Approved",
                  status: "False",
                  reason: "InsufficientPermissions",
                  message:
                    `${who.username} may not ${missing.slice(0, 20).map(describeCheck).join("; ")}` +
                    `${missing.length > 20 ? `; and ${missing.length - 20} more` : ""}`,
                };
        }
      }
      approved = c.status === "True";
      inst = await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, unpackedOk, c),
        observedGeneration: gen,
      }));
      if (!approved) {
        this.events.emit(inst, "Normal", c.reason, c.message);
        return;
      }
    }

    // CRD upgrade safety, before anything changes
    const unsafe: string[] = [];
    for (const o of desired.objects) {
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
    if (unsafe.length > 0) {
      const msg = unsafe.join("\n");
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, unpackedOk, {
          type: "Installed",
          status: "False",
          reason: "UnsafeCRDUpgrade",
          message: msg,
        }),
        observedGeneration: gen,
      }));
      this.events.emit(inst, "Warning", "UnsafeCRDUpgrade", msg);
      return;
    }

    // single owner: an object another Instance manages is never taken over
    const collisions: string[] = [];
    for (const o of desired.objects) {
      const cur = await this.client
        .tryGet(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)
        .catch(() => undefined);
      const owner = cur?.metadata.labels?.[LABEL_INSTANCE];
      if (owner && owner !== name)
        collisions.push(
          `${o.kind} ${JSON.stringify(o.metadata.name)}` +
            `${o.metadata.namespace ? ` in namespace ${o.metadata.namespace}` : ""} ` +
            `is managed by Instance ${owner}`,
        );
    }
    if (collisions.length > 0) {
      const msg =
        `${collisions.slice(0, 10).join("; ")}` +
        `${collisions.length > 10 ? `; and ${collisions.length - 10} more` : ""}: ` +
        `an object has one owner; remove the other Instance first`;
      await this.setInstanceStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, unpackedOk, {
          type: "Installed",
          status: "False",
          reason: "ObjectCollision",
          message: msg,
        }),
        observedGeneration: gen,
      }));
      this.events.emit(inst, "Warning", "ObjectCollision", msg);
      return;
    }

    // The cache may not have seen the Instance's deletion yet (a pivot or install that started just
    // before it): ask the API server before creating its objects, which would otherwise outlive it
    // until the garbage collector notices their owner is gone.
    if (!(await this.client.getLive(API_VERSION, "Instance", inst.metadata.name, { uid: inst.metadata.uid }))) return;
    try {
      await this.install(desired);
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

    // prune what the new bundle no longer has
    const keep = new Set(desired.objects.map((o) => refKey(refOf(o))));
    for (const r of inst.status?.objects ?? []) {
      if (!keep.has(refKey(r)))
        await this.client
          .delete(r.apiVersion, r.kind, r.name, r.namespace)
          .catch((e) => (isNotFound(e) ? false : Promise.reject(e)));
    }
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
    const previous = inst.status?.activeBundle;
    const msg = `Instantiated bundle ${bundleName} successfully`;
    await this.setInstanceStatus(inst, (s) => ({
      ...s,
      activeBundle: bundleName,
      ...(desired.installNamespace ? { installNamespace: desired.installNamespace } : {}),
      objects: desired.objects.map(refOf),
      conditions: this.conds(inst!, unpackedOk, {
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
   * Applies the objects: namespace first, CRDs (waiting until
   * Established), then the rest; a dry run of everything first.
   */
  private async install(desired: DesiredContent): Promise<void> {
    if (desired.installNamespace) {
      const ns = await this.client.tryGet("v1", "Namespace", desired.installNamespace);
      if (!ns)
        await this.client
          .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: desired.installNamespace } })
          .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
    }
    const crds = desired.objects.filter((o) => o.kind === "CustomResourceDefinition");
    const rest = desired.objects.filter((o) => o.kind !== "CustomResourceDefinition");
    const ownKinds = new Set(
      crds.map((c) => `${(c.spec as { group: string }).group}/${(c.spec as { names: { kind: string } }).names.kind}`),
    );
    // dry run: a bundle that cannot be applied changes nothing
    for (const o of desired.objects) {
      if (ownKinds.has(`${o.apiVersion.split("/")[0]}/${o.kind}`)) continue;
      await this.client.apply(o, { dryRun: true });
    }
    for (const c of crds) await this.client.apply(c);
    for (const c of crds) await this.waitEstablished(c.metadata.name);
    for (const o of rest) await this.client.apply(o);
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
