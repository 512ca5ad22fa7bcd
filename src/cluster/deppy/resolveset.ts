/**
 * The resolveset provisioner (`deppy.io/resolver`, docs/cluster.md): it unpacks `deppy.resolveset` Bundles
 * (their content is a ConfigMap listing resolved bundles) and makes resolveset Instances active:
 * - one Bundle per entry, its ProvisionerClass chosen by the class's `matchBundle` selectors
 *   (`.schema == olm.bundle`) or `matchSchema`, carrying the properties the resolver used in the
 *   editable `olm.properties` annotation; these unpack at once (unpacking changes nothing);
 * - approval by the class's policy: `AllowAll`, `DenyAll`, or `Android` (the default): approved
 *   only when no entry grants a permission the bundle it replaces does not (a first install is a
 *   new permission set); otherwise the Instance waits and `status.permissions` lists what is new
 *   (`kubectl instance approve --show` prints it);
 * - once approved, one Instance per package (named after the package, selecting that package's
 *   Bundles, so that RukPak pivots from the old version) pointing at the entry's Bundle.
 */
import { createHash } from "node:crypto";
import { BoundedMap } from "../kube/bounded.js";
import { type KubeServer, type KubeObject, liveOnly } from "../kube/client.js";
import { setCondition } from "../kube/conditions.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer, InformerEvent } from "../kube/informer.js";
import { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller, type Result } from "../runtime/controller.js";
import { passBy, reconcileObject, workingCopy } from "../runtime/reconcile.js";
import type { Step } from "../runtime/steps.js";
import { readBundleDirectory } from "../../bundle/index.js";
import {
  API_VERSION as RUKPAK_API_VERSION,
  type Bundle,
  type BundleStatus,
  type Instance,
  type ProvisionerClass,
} from "../rukpak/api.js";
import { isBundleDirectory } from "../../bundle/index.js";
import { contentExists, readPlainObjects } from "../rukpak/content.js";
import { RecordStore } from "../rukpak/record.js";
import { DEFAULT_NAMESPACE } from "../kube/names.js";
import { convertRegistryV1 } from "../rukpak/convert.js";
import { canI } from "../rukpak/permissions.js";
import type { ProvisionerIdentity } from "../rukpak/provisioner.js";
import { madeBy, verifiedRequester, type SigningKey } from "../rukpak/trust.js";
import { LABEL_PACKAGE, LABEL_RESOLVESET, RESOLVESET_PROVISIONER } from "./api.js";
import { parseResolveset, type ResolvesetEntry } from "./resolvesetwriter.js";
import { INSTANCE_STATUS } from "../rukpak/instance.js";
import { resolvesetSteps, type ResolvesetContext, type ResolvesetState } from "./resolvesetsteps.js";

export { classForEntry, resolvesetApprovalOf, type ResolvesetApproval } from "./resolvesetsteps.js";

export interface ResolvesetOptions {
  client: KubeServer;
  /** The RukPak content store (where the operator provisioner unpacks registry+v1 bundles). */
  bundleStore: string;
  log?: (msg: string) => void;
  /** Verifies requester signatures and signs approvals (rukpak/trust.ts). */
  key: SigningKey;
  /** The controllers' own user name: Bundles and Instances they made carry it as signed requester. */
  self: string;
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
  /**
   * opcat's namespace, where the resolver writes each resolveset's ConfigMap (named by its content's
   * hash, never changed): those are read from a cache of that namespace's resolveset ConfigMaps.
   */
  namespace?: string;
  /**
   * The RukPak controller's install records (what each Instance last installed, kept in opcat's
   * namespace where users cannot write): Android's baseline. Default: a store of its own there.
   */
  records?: RecordStore;
}

/**
 * A provisioner by the identity of `rukpak/provisioner.ts` (its id and the content it accepts); what a
 * resolveset becomes (entry Bundles and package Instances) is made by its own reconcile, not `desired`.
 */
export class ResolvesetProvisioner implements ProvisionerIdentity {
  readonly id = RESOLVESET_PROVISIONER;
  readonly formats = ["deppy.resolveset"] as const;
  /** Unpacks resolveset Bundles. */
  readonly bundleController: Controller<Bundle>;
  /** Makes resolveset Instances active (`resolvesetsteps.ts`). */
  readonly instanceController: Controller<Instance>;
  readonly classes: Informer<ProvisionerClass>;
  readonly bundles: Informer<Bundle>;
  readonly instances: Informer<Instance>;
  readonly events: EventRecorder;
  private readonly client: KubeServer;
  private readonly log: (m: string) => void;
  private readonly ctx: ResolvesetContext;
  private readonly steps: Step<ResolvesetState>[];
  /** The process's caches, else caches of its own that its two controllers share. */
  private readonly caches: SharedCaches;
  /** The install records: Android's baseline. */
  readonly #records: RecordStore;

  constructor(private readonly opts: ResolvesetOptions) {
    this.client = opts.client;
    this.log = opts.log ?? (() => {});
    this.caches = opts.caches ?? new SharedCaches(this.client, (m) => this.log(`resolveset ${m}`));
    this.#records = opts.records ?? new RecordStore(this.client, opts.namespace ?? DEFAULT_NAMESPACE);
    this.bundleController = this.defineBundles();
    this.instanceController = this.defineInstances();
    this.bundles = this.bundleController.primary;
    this.instances = this.instanceController.primary;
    this.classes = this.instanceController.cacheOf<ProvisionerClass>(RUKPAK_API_VERSION, "ProvisionerClass");
    this.events = this.instanceController.events;
    this.ctx = {
      client: this.client,
      key: opts.key,
      self: opts.self,
      bundles: this.bundles,
      instances: this.instances,
      events: this.events,
      entriesOf: async (b) => {
        const r = await this.entriesOf(b);
        if ("entries" in r) this.#packagesOf.set(b.metadata.name, new Set(r.entries.map((e) => e.package)));
        return r;
      },
      objectsOf: (b) => this.objectsOf(b),
      installedOf: (i) => this.installedOf(i),
    };
    this.steps = resolvesetSteps(this.ctx);
  }

  /** resolveset Bundles; all of them when a class changes. */
  private defineBundles(): Controller<Bundle> {
    return defineController<Bundle>(
      this.client,
      {
        name: "resolveset-bundle",
        component: "opcat-resolveset",
        caches: this.caches,
        for: { apiVersion: RUKPAK_API_VERSION, kind: "Bundle", filter: (_ev, b) => !!this.ours(b.spec.class) },
        watches: [
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "ProvisionerClass",
            map: () =>
              this.bundles
                .list()
                .filter((b) => this.ours(b.spec.class))
                .map((b) => b.metadata.name),
          },
        ],
        concurrency: 2,
        baseDelayMs: 300,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcileBundle(key),
      },
      this.log,
    );
  }

  /**
   * resolveset Instances; all of them when a class changes, or a package's (or a resolveset's) Bundle,
   * or a package Instance.
   */
  private defineInstances(): Controller<Instance> {
    const all = () => this.resolvesetInstances();
    return defineController<Instance>(
      this.client,
      {
        name: "resolveset",
        component: "opcat-resolveset",
        caches: this.caches,
        for: { apiVersion: RUKPAK_API_VERSION, kind: "Instance", filter: (ev, i) => this.onInstance(ev, i) },
        watches: [
          { apiVersion: RUKPAK_API_VERSION, kind: "ProvisionerClass", map: all },
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Bundle",
            map: (o) => this.instancesOfBundle(o as Bundle),
          },
          // the resolver's resolveset ConfigMaps: a cache only (each is written once, before its Bundle)
          ...(this.opts.namespace
            ? [
                {
                  apiVersion: "v1",
                  kind: "ConfigMap",
                  options: { namespace: this.opts.namespace, labelSelector: `${LABEL_RESOLVESET}=true` },
                  map: () => [],
                },
              ]
            : []),
        ],
        concurrency: 2,
        baseDelayMs: 300,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcileInstance(key),
      },
      this.log,
    );
  }

  /**
   * The packages each resolveset Bundle names (its content never changes: the name is its content's
   * hash), learnt when a pass reads its entries, before it looks at any package's state.
   */
  readonly #packagesOf = new BoundedMap<string, Set<string>>(10_000);

  /**
   * The resolveset Instances a package's Bundle or Instance may matter to: those whose resolveset
   * names the package, those that own the object (one it named before), and those whose resolveset
   * was not read yet (what is installed decides their approvals). Not every resolveset Instance:
   * each package event would then reconcile all of them.
   */
  private interestedIn(pkg: string, o: KubeObject): string[] {
    const owners = new Set((o.metadata.ownerReferences ?? []).filter((r) => r.kind === "Instance").map((r) => r.name));
    return this.resolvesetInstances().filter((n) => {
      const known = this.#packagesOf.get(this.instances.get(n)?.spec.bundle.name ?? "");
      return !known || known.has(pkg) || owners.has(n);
    });
  }

  /** A resolveset Instance enqueues itself; a package Instance the resolveset Instances naming its package. */
  private onInstance(_ev: InformerEvent, i: Instance): boolean {
    if (this.isResolvesetInstance(i)) return true;
    const pkg = i.metadata.labels?.[LABEL_PACKAGE];
    if (pkg !== undefined) for (const n of this.interestedIn(pkg, i)) this.instanceController.queue.add(n);
    return false;
  }

  /**
   * The resolveset Instances a Bundle event concerns: a resolveset's Bundle, the Instances naming it
   * (each Input's resolution makes one; mapping them to every resolveset Instance re-reconciled each
   * of those per event of any of them); a package's Bundle, those naming its package
   * ({@link interestedIn}); any other Bundle, none.
   */
  private instancesOfBundle(b: Bundle): string[] {
    if (this.ours(b.spec.class))
      return this.instances
        .list()
        .filter((i) => i.spec.bundle.name === b.metadata.name && this.isResolvesetInstance(i))
        .map((i) => i.metadata.name);
    const pkg = b.metadata.labels?.[LABEL_PACKAGE];
    return pkg !== undefined ? this.interestedIn(pkg, b) : [];
  }

  private resolvesetInstances(): string[] {
    return this.instances
      .list()
      .filter((i) => this.isResolvesetInstance(i))
      .map((i) => i.metadata.name);
  }

  private ours(cls: string | undefined): ProvisionerClass | undefined {
    const pc = cls ? this.classes.get(cls) : undefined;
    return pc?.provisioner === this.id ? pc : undefined;
  }

  private isResolvesetInstance(i: Instance): boolean {
    const cls = i.spec.bundle.spec?.class ?? this.bundles.get(i.spec.bundle.name)?.spec.class;
    return this.ours(cls) !== undefined;
  }

  get queue() {
    return this.instanceController.queue;
  }

  async start(): Promise<void> {
    await Promise.all([this.bundleController.start(), this.instanceController.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.bundleController.stop(), this.instanceController.stop()]);
  }

  /** Reads the entries of a resolveset Bundle from its mounted ConfigMaps. */
  async entriesOf(
    b: Bundle,
  ): Promise<{ entries: ResolvesetEntry[]; digest: string } | { reason: string; message: string }> {
    const ref = b.spec.refs[0] ?? "";
    if (!ref.startsWith("file://"))
      return {
        reason: "InvalidRef",
        message: `a resolveset Bundle's content is a file://<path> in a mounted ConfigMap, not ${ref}`,
      };
    const path = "/" + ref.slice("file://".length).replace(/^\/+/, "");
    for (const m of b.spec.volumeMounts ?? []) {
      const mount = m.mountPath.replace(/\/+$/, "");
      if (!path.startsWith(mount + "/")) continue;
      const key = path.slice(mount.length + 1);
      if (!this.madeBySelf(b)) {
        // read as whoever made the Bundle: never a ConfigMap that user may not read themselves
        const who = verifiedRequester(this.opts.key, b);
        const may =
          who !== undefined &&
          (await canI(this.client, who, {
            verb: "get",
            group: "",
            resource: "configmaps",
            namespace: m.configMap.namespace,
            name: m.configMap.name,
          }));
        if (!may)
          return {
            reason: "ConfigMapNotReadable",
            message:
              `ConfigMap ${m.configMap.namespace}/${m.configMap.name} cannot be read for ` +
              `${who?.username ?? "an unverified requester"} (it does not exist or they may not get it)`,
          };
      }
      const cm = await this.configMap(b, m.configMap.name, m.configMap.namespace);
      if (!cm)
        return {
          reason: "ConfigMapNotFound",
          message: `ConfigMap ${m.configMap.namespace}/${m.configMap.name} (mounted at ${m.mountPath}) not found`,
        };
      const text = cm.data?.[key];
      if (text === undefined)
        return {
          reason: "FileNotFound",
          message: `ConfigMap ${m.configMap.namespace}/${m.configMap.name} has no key ${key}`,
        };
      try {
        return { entries: parseResolveset(text), digest: `sha256:${createHash("sha256").update(text).digest("hex")}` };
      } catch (e) {
        return { reason: "InvalidResolveset", message: `${key}: ${(e as Error).message}` };
      }
    }
    return { reason: "FileNotFound", message: `no volumeMount holds ${path}` };
  }

  /**
   * A mounted ConfigMap: a resolveset ConfigMap of a Bundle the controllers made from the cache of
   * them, when it holds it; anything else (or one the cache has not seen yet) from the API server.
   */
  private async configMap(
    b: Bundle,
    name: string,
    namespace: string,
  ): Promise<(KubeObject & { data?: Record<string, string> }) | undefined> {
    type Cm = KubeObject & { data?: Record<string, string> };
    if (this.opts.namespace && namespace === this.opts.namespace && this.madeBySelf(b)) {
      const cache = this.instanceController.cacheOf<Cm>("v1", "ConfigMap");
      const cached = cache.get(`${namespace}/${name}`);
      if (cached) return cached;
    }
    return this.client.tryGet<Cm>("v1", "ConfigMap", name, namespace);
  }

  /** A resolveset Bundle's unpack, as named steps (class, unpacked, entries); the outcome written once. */
  private readonly unpackSteps: Step<UnpackState>[] = [
    { name: "class", run: (s) => (s.b.metadata.deletionTimestamp || !this.ours(s.b.spec.class) ? STOP : undefined) },
    { name: "unpacked", run: (s) => (unpackedAt(s.b, s.generation) ? STOP : undefined) },
    {
      name: "entries",
      run: async (s) => {
        s.read = await this.entriesOf(s.b);
      },
    },
  ];

  /** One pass over a resolveset Bundle on the one reconcile wrapper: the outcome written once, then its Event. */
  async reconcileBundle(name: string): Promise<Result> {
    return reconcileObject<Bundle, UnpackState>(
      {
        ...passBy("resolveset-bundle", this.client, this.events, this.log),
        apiVersion: RUKPAK_API_VERSION,
        kind: "Bundle",
        // a Bundle being deleted stops at its class step
        get: (key) => this.bundles.get(key),
        state: (b) => ({ ...workingCopy(b), b }),
        steps: this.unpackSteps,
        object: (s) => s.b,
        // a new generation is read again (its update event brings the next pass)
        next: (s, fresh) =>
          s.read && (fresh.metadata.generation ?? 0) === s.generation
            ? unpackOutcome(fresh.status ?? {}, s.generation, s.read, this.formats[0])
            : undefined,
        done: (s, write) => {
          const r = s.read;
          if (r && !("entries" in r) && write !== "gone") this.events.emit(s.b, "Warning", r.reason, r.message);
        },
      },
      name,
    );
  }

  /**
   * The objects an unpacked Bundle would install, as Android compares them (undefined: unknown).
   */
  private async objectsOf(b: Bundle | undefined): Promise<KubeObject[] | undefined> {
    if (b?.status?.unpacked !== "Done" || !b.status.digest) return undefined;
    const f = b.status.format;
    return f === "plain" || f === "registry+v1" ? this.objectsIn(b.status.digest, f) : undefined;
  }

  /** The objects of stored content (undefined: not stored, or unreadable). */
  private objectsIn(digest: string, format?: "plain" | "registry+v1"): KubeObject[] | undefined {
    const dir = contentExists(this.opts.bundleStore, digest);
    if (!dir) return undefined;
    try {
      // a plain bundle's objects are compared as they are (they granted nothing before: A7)
      if ((format ?? (isBundleDirectory(dir) ? "registry+v1" : "plain")) === "plain") return readPlainObjects(dir);
      return convertRegistryV1(readBundleDirectory(dir), {}).objects;
    } catch {
      return undefined;
    }
  }

  /**
   * What a package Instance last installed, from its install record: the content the controllers
   * applied after an approval, never a Bundle's or the Instance's current fields (users may write
   * those). No Instance, or none installed yet: nothing. Undefined: installed, but its content is no
   * longer stored (Android then cannot compare, and asks a person).
   */
  private async installedOf(i: Instance | undefined): Promise<{ bundle?: string; objects: KubeObject[] } | undefined> {
    if (!i) return { objects: [] };
    const { record } = await this.#records.read(i);
    if (!record?.digest) return i.status?.activeBundle ? undefined : { objects: [] };
    const objects = this.objectsIn(record.digest);
    return objects && { bundle: record.bundle, objects };
  }

  /** True when the controllers made `o` (its signed requester is their own identity). */
  private madeBySelf(o: KubeObject): boolean {
    return madeBy(this.opts.key, this.opts.self, o);
  }

  /**
   * Makes a resolveset Instance active (`resolvesetsteps.ts`: unpacked, entries, entryBundles,
   * conflicts, classes, entriesUnpacked, approval, packageInstances, installed).
   */
  async reconcileInstance(name: string): Promise<Result> {
    let pc: ProvisionerClass | undefined;
    return reconcileObject<Instance, ResolvesetState>(
      {
        ...INSTANCE_STATUS,
        ...passBy("resolveset", this.client, this.events, this.log),
        get: async (key) => {
          const cached = liveOnly(this.instances.get(key));
          if (!cached) return undefined;
          // the cache may not have seen its deletion yet: a deleted resolveset makes nothing again
          const inst = await this.client.getLive<Instance>(RUKPAK_API_VERSION, "Instance", key, {
            uid: cached.metadata.uid,
          });
          if (!inst) return undefined;
          pc = this.ours(this.bundles.get(inst.spec.bundle.name)?.spec.class ?? inst.spec.bundle.spec?.class);
          return pc && inst;
        },
        state: (inst, key) => ({
          ...workingCopy(inst),
          name: key,
          inst,
          pc: pc!,
          rsName: inst.spec.bundle.name,
          rsBundle: this.bundles.get(inst.spec.bundle.name),
          entries: [],
          digest: "",
          entryBundles: [],
          unmatched: [],
          squatted: [],
          notReady: [],
        }),
        steps: this.steps,
        // as the Instance controller's: the Event while the status says what the pass found
        eventWhen: "kept",
      },
      name,
    );
  }
}

type Entries = Awaited<ReturnType<ResolvesetProvisioner["entriesOf"]>>;

/** One pass over a resolveset Bundle: it, the generation it unpacks, and its entries once read. */
interface UnpackState {
  b: Bundle;
  generation: number;
  /** The working copy of the status (what is written is computed from `read`). */
  status: BundleStatus;
  read?: Entries;
}

const STOP = { stop: true } as const;

const unpackedAt = (b: Bundle, gen: number): boolean =>
  b.status?.unpacked === "Done" && b.status.observedGeneration === gen;

/** The status saying a resolveset Bundle's entries were read (Done), or why not (Failed). */
function unpackOutcome(st: BundleStatus, gen: number, r: Entries, format: string): BundleStatus {
  const n = "entries" in r ? r.entries.length : 0;
  const out: BundleStatus =
    "entries" in r
      ? {
          unpacked: "Done",
          reason: "UnpackSuccessful",
          message: `Successfully unpacked the resolveset (${n} ${n === 1 ? "entry" : "entries"})`,
          digest: r.digest,
          format,
          objects: ["/objects/resolved.bundles.json"],
        }
      : { unpacked: "Failed", reason: r.reason, message: r.message };
  const { conditions } = setCondition(st.conditions, {
    type: "Unpacked",
    status: out.unpacked === "Done" ? "True" : "False",
    reason: out.reason!,
    message: out.message!,
    observedGeneration: gen,
  });
  return { ...st, ...out, conditions, observedGeneration: gen };
}
