/**
 * The RukPak provisioners (docs/cluster.md) as one controller process: the operator provisioner
 * (`operators.coreos.com/operators`, registry+v1 bundles converted to plain objects) and the plain
 * provisioner (`rukpak.io/plain`, directories of manifests), both from the provisioner registry
 * (`provisioner.ts`). Two controllers of the controller runtime (`runtime/controller.ts`) share one
 * cache of ProvisionerClasses, Bundles and Instances: the Bundle controller unpacks Bundles of classes
 * naming those provisioners (`bundle.ts`), the Instance controller makes Instances active
 * (`instance.ts`): approval by the class's policy, CRD upgrade safety, server-side apply of every
 * object (owned by the Instance, labelled), pruning of objects the new bundle no longer has, and
 * marking pivoted-from Bundles `Replaced`. Both reconciles are named steps (`runtime/steps.ts`).
 * Progress and failures go to status conditions and Events; failures that may pass are retried with
 * backoff.
 */
import type { KubeServer, KubeObject } from "../kube/client.js";
import type { EventRecorder } from "../kube/events.js";
import { Informer, type InformerEvent } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller } from "../runtime/controller.js";
import type { Step } from "../runtime/steps.js";
import type { PullOptions } from "../../image/index.js";
import {
  API_VERSION,
  OPERATOR_PROVISIONER,
  PLAIN_PROVISIONER,
  type Bundle,
  type Instance,
  LABEL_INSTANCE,
  type ProvisionerClass,
  rukpakCrdObjects,
} from "./api.js";
import { BoundedMap } from "../kube/bounded.js";
import { onlyAvailabilityChanged } from "./availability.js";
import { bundleSteps, reconcileBundle, UnpackSlots, type BundleState } from "./bundle.js";
import type { ContentLimits } from "./content.js";
import { labelsMatch, madeBySelf, type RukpakContext } from "./context.js";
import { desiredContent, instanceSteps, reconcileInstance, type InstanceState } from "./instance.js";
import { plainProvisioner } from "./plain.js";
import { ProvisionerRegistry, type DesiredContent } from "./provisioner.js";
import { RecordStore, refKey, refOf } from "./record.js";
import { registryV1Provisioner } from "./registryv1.js";
import type { SigningKey } from "./trust.js";
import { WEBHOOK_CONFIG_NAME } from "./webhook.js";
import { DEFAULT_NAMESPACE } from "../kube/names.js";

export { approvalOf, fieldManagerFor, listed, requesterOf } from "./context.js";
export type { DesiredContent } from "./provisioner.js";

export interface ProvisionerOptions {
  client: KubeServer;
  /** Root of the content-addressed store of unpacked bundles. */
  stateDir: string;
  /** Image access for docker:// refs. */
  pull?: PullOptions;
  /** Provisioner ids handled (default both built-in ones). */
  provisioners?: string[];
  /** The provisioners by id (default: registry+v1 and plain, `registryv1.ts` and `plain.ts`). */
  registry?: ProvisionerRegistry;
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
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
}

/** The built-in provisioners: registry+v1 (the operator provisioner) and plain. */
/**
 * The kinds whose installed objects are made again when someone deletes them: their informers select
 * the objects by the Instance label, and a deletion re-applies that Instance's objects. The label is
 * only a hint (anyone who may label an object may ask for a re-apply of approved content); what is
 * applied is still the approved content alone.
 */
export const RESTORED_KINDS: readonly (readonly [string, string])[] = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["apps/v1", "DaemonSet"],
  ["v1", "ServiceAccount"],
  ["v1", "Service"],
  ["v1", "ConfigMap"],
  ["v1", "Secret"],
  ["rbac.authorization.k8s.io/v1", "ClusterRole"],
  ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding"],
  ["rbac.authorization.k8s.io/v1", "Role"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
  ["apiextensions.k8s.io/v1", "CustomResourceDefinition"],
  ["admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"],
  ["admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"],
];

export function builtinProvisioners(): ProvisionerRegistry {
  return new ProvisionerRegistry([registryV1Provisioner, plainProvisioner]);
}

export class RukpakController {
  readonly classes: Informer<ProvisionerClass>;
  readonly bundles: Informer<Bundle>;
  readonly instances: Informer<Instance>;
  /** Unpacks Bundles (`bundle.ts`). */
  readonly bundleController: Controller<Bundle>;
  /** Makes Instances active (`instance.ts`). */
  readonly instanceController: Controller<Instance>;
  readonly events: EventRecorder;
  readonly registry: ProvisionerRegistry;
  private readonly client: KubeServer;
  private readonly provisioners: Set<string>;
  private readonly log: (m: string) => void;
  private readonly ctx: RukpakContext;
  private readonly slots: UnpackSlots;
  private readonly bundleSteps: Step<BundleState>[];
  private readonly instanceSteps: Step<InstanceState>[];

  constructor(private readonly opts: ProvisionerOptions) {
    this.client = opts.client;
    this.provisioners = new Set(opts.provisioners ?? [OPERATOR_PROVISIONER, PLAIN_PROVISIONER]);
    this.registry = opts.registry ?? builtinProvisioners();
    this.log = opts.log ?? (() => {});
    const onError = (e: unknown) => this.log(`watch: ${(e as Error).message}`);
    // the process's caches when given (shared with the other controllers), else caches of its own
    const cache = <T extends KubeObject>(kind: string) =>
      opts.caches?.informer<T>(API_VERSION, kind) ?? new Informer<T>(this.client, API_VERSION, kind, { onError });
    this.classes = cache<ProvisionerClass>("ProvisionerClass");
    this.bundles = cache<Bundle>("Bundle");
    this.instances = cache<Instance>("Instance");
    this.slots = new UnpackSlots(Math.max(1, (opts.concurrency ?? 4) - 1));
    this.bundleController = this.defineBundles();
    this.instanceController = this.defineInstances();
    this.events = this.bundleController.events;
    this.ctx = this.context();
    this.bundleSteps = bundleSteps(this.ctx, this.slots);
    this.instanceSteps = instanceSteps(this.ctx);
  }

  private context(): RukpakContext {
    const { opts } = this;
    const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    return {
      client: this.client,
      key: opts.key,
      self: opts.self,
      stateDir: opts.stateDir,
      pull: opts.pull,
      limits: opts.limits,
      log: this.log,
      records: new RecordStore(this.client, namespace),
      protectedSet: {
        namespace,
        crds: new Set(opts.protectedCrds ?? rukpakCrdObjects().map((c) => c.metadata.name)),
        clusterNames: new Set(
          opts.protectedNames ?? [WEBHOOK_CONFIG_NAME, "opcat-rukpak", "rukpak-approver", "rukpak-class-user"],
        ),
      },
      provisioners: this.registry,
      bundles: this.bundles,
      instances: this.instances,
      events: this.events,
      bundleQueue: this.bundleQueue,
      instanceQueue: this.instanceQueue,
      appliedHere: this.appliedHere,
      ours: (c) => this.ours(c),
    };
  }

  /** Bundles; a class's Bundles when it changes, a Bundle that failed when its Instance changes. */
  private defineBundles(): Controller<Bundle> {
    const concurrency = this.opts.concurrency ?? 4;
    return defineController<Bundle>(
      this.client,
      {
        name: "bundle",
        component: "opcat-rukpak",
        for: {
          apiVersion: API_VERSION,
          kind: "Bundle",
          informer: this.bundles as unknown as Informer,
          filter: (ev, b, old) => this.onBundle(ev, b, old),
        },
        watches: [
          { ...this.source("ProvisionerClass"), map: (pc, ev, old) => this.bundlesOfClass(pc, ev, old) },
          { ...this.source("Instance"), map: (i, ev, old) => this.failedBundleOf(i, ev, old) },
        ],
        concurrency,
        baseDelayMs: 200,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcileBundle(key),
      },
      this.log,
    );
  }

  /**
   * Instances; all of them when a class changes, those naming or selecting a Bundle when it does, and
   * an installed Instance again when one of its objects is deleted.
   */
  private defineInstances(): Controller<Instance> {
    const restored = RESTORED_KINDS.map(([apiVersion, kind]) => ({
      apiVersion,
      kind,
      options: { labelSelector: LABEL_INSTANCE },
      map: (o: KubeObject, ev: InformerEvent) => this.restore({ ...o, apiVersion, kind }, ev),
    }));
    return defineController<Instance>(
      this.client,
      {
        name: "instance",
        component: "opcat-rukpak",
        caches: this.opts.caches,
        for: {
          apiVersion: API_VERSION,
          kind: "Instance",
          informer: this.instances as unknown as Informer,
          // Available/Progressing written by the availability controller leave nothing to do here
          filter: (ev, i, old) => ev !== "update" || !old || !onlyAvailabilityChanged(old, i),
        },
        watches: [
          { ...this.source("ProvisionerClass"), map: () => this.instances.list().map((i) => i.metadata.name) },
          { ...this.source("Bundle"), map: (b) => this.instancesOf(b as Bundle) },
          ...restored,
        ],
        concurrency: this.opts.concurrency ?? 4,
        baseDelayMs: 200,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcileInstance(key),
      },
      this.log,
    );
  }

  /** The shared cache of a kind. */
  private source(kind: "ProvisionerClass" | "Bundle" | "Instance") {
    const informer = { ProvisionerClass: this.classes, Bundle: this.bundles, Instance: this.instances }[kind];
    return { apiVersion: API_VERSION, kind, informer: informer as unknown as Informer };
  }

  get bundleQueue() {
    return this.bundleController.queue;
  }

  get instanceQueue() {
    return this.instanceController.queue;
  }

  /** The Instances whose objects this process applied (name → uid; see RukpakContext.appliedHere). */
  private readonly appliedHere = new BoundedMap<string, string>(10_000);

  /**
   * Applies an Instance's objects again (one of them was deleted): a pass over an installed Instance
   * whose Bundle, content and objects are unchanged applies nothing otherwise.
   */
  resync(name: string): void {
    this.appliedHere.delete(name);
    this.instanceQueue.add(name);
  }

  /**
   * A deleted object that an installed Instance lists as its own: the Instance applies its objects
   * again (not while it is going, and not for what a pivot's prune removes: that is no longer listed,
   * or the Instance's new generation is not yet observed).
   */
  private restore(o: KubeObject, ev: InformerEvent): string[] {
    const name = o.metadata.labels?.[LABEL_INSTANCE];
    const inst = ev === "delete" && name ? this.instances.get(name) : undefined;
    if (!inst || inst.metadata.deletionTimestamp || inst.status?.observedGeneration !== inst.metadata.generation)
      return [];
    const key = refKey(refOf(o));
    if (!inst.status?.objects?.some((r) => refKey(r) === key)) return [];
    this.appliedHere.delete(inst.metadata.name);
    return [inst.metadata.name];
  }

  /** Forgets a Bundle's outcome and retries it now (new limits or a new requester may let it pass). */
  private retryBundle(name: string): void {
    this.slots.forget(name);
    this.bundleQueue.retryNow(name);
  }

  /** Which Bundle events enqueue it (and what else they do to it). */
  private onBundle(ev: InformerEvent, b: Bundle, old: Bundle | undefined): boolean {
    const key = b.metadata.name;
    if (ev === "delete" || b.metadata.deletionTimestamp) {
      // nothing more for it: stop its unpack, forget its retries (a deletion still removes the finalizer)
      this.slots.abort(key, "the Bundle is being deleted");
      this.bundleQueue.drop(key);
      this.slots.forget(key);
      return ev !== "delete";
    }
    if (old && old.metadata.generation !== b.metadata.generation) {
      // a new spec: the old one's unpack and backoff are moot
      this.slots.abort(key, "the Bundle's spec changed");
      this.bundleQueue.retryNow(key);
      return false;
    }
    return true;
  }

  /** A class changed: its Bundles again; with new parameters (limits), a Bundle that failed for good may pass. */
  private bundlesOfClass(o: KubeObject, ev: InformerEvent, old: KubeObject | undefined): string[] {
    const pc = o as ProvisionerClass;
    const changed =
      ev === "update" &&
      JSON.stringify((old as ProvisionerClass | undefined)?.parameters) !== JSON.stringify(pc.parameters);
    const names = this.bundles
      .list()
      .filter((b) => b.spec.class === pc.metadata.name)
      .map((b) => b.metadata.name);
    if (!changed) return names;
    for (const n of names) this.retryBundle(n);
    return [];
  }

  /**
   * A changed Instance may now have a verifiable requester: its Bundle's content is read again (whose
   * rights it is read with comes from the Instance), also after a final refusal.
   */
  private failedBundleOf(o: KubeObject, ev: InformerEvent, old: KubeObject | undefined): string[] {
    const i = o as Instance;
    if (ev === "update" && old && old.metadata.generation !== i.metadata.generation) {
      const b = this.bundles.get(i.spec.bundle.name);
      if (b?.status?.unpacked === "Failed") this.retryBundle(b.metadata.name);
    }
    return [];
  }

  /** The Instances that name a Bundle or select it. */
  private instancesOf(b: Bundle): string[] {
    return this.instances
      .list()
      .filter((i) => i.spec.bundle.name === b.metadata.name || labelsMatch(i.spec.selector, b.metadata.labels))
      .map((i) => i.metadata.name);
  }

  /** The install records (what each Instance last installed), shared with the resolveset provisioner. */
  get records(): RecordStore {
    return this.ctx.records;
  }

  /** Starts the informers and the workers; resolves once the caches are filled. */
  async start(): Promise<void> {
    await Promise.all([this.bundleController.start(), this.instanceController.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.bundleController.stop(), this.instanceController.stop()]);
  }

  private ours(className: string | undefined): ProvisionerClass | undefined {
    if (!className) return undefined;
    const pc = this.classes.get(className);
    return pc && this.provisioners.has(pc.provisioner) ? pc : undefined;
  }

  /**
   * Unpacks a Bundle once per generation (`bundle.ts`: deletion, class, finalizer, unpacked,
   * restorePinned, backoff, inProgress, slot, unpack, outcome).
   */
  async reconcileBundle(name: string): Promise<void> {
    await reconcileBundle(this.ctx, this.bundleSteps, name);
  }

  /**
   * Makes an Instance active (`instance.ts`: signature, bundle, unpacked, content, protected,
   * approval, unchanged, crdSafety, collisions, alive, pivot, apply, prune, replaced, installed).
   */
  async reconcileInstance(name: string): Promise<void> {
    await reconcileInstance(this.ctx, this.instanceSteps, name);
  }

  /** The objects an unpacked bundle becomes for an Instance (its class's provisioner decides). */
  async desiredContent(bundle: Bundle, inst: Instance): Promise<DesiredContent> {
    return desiredContent(this.ctx, bundle, inst);
  }

  /** True when this controller made `o` (its signed requester is the controllers' own identity). */
  madeBySelf(o: KubeObject): boolean {
    return madeBySelf(this.ctx, o);
  }
}
