/**
 * The ClusterExtension controller: operator-controller's API on opcat's machinery. Each
 * ClusterExtension is resolved against the served ClusterCatalogs (resolve.ts) and installed as one
 * RukPak `Instance` (`clusterextension-<name>`, class `olm.clusterextension`, owned by the
 * ClusterExtension) that embeds the chosen bundle image; the RukPak provisioner unpacks, converts,
 * checks CRD upgrade safety, asks for approval, applies and pivots. The Instance is written
 * **as the ClusterExtension's author** (the requester the admission webhook recorded and signed on
 * the ClusterExtension), through the API server's impersonation: the webhook then records that user
 * as the Instance's requester, so `use` on the class and UserPermission judge her, never the
 * controller (docs/security.md). The Instance's conditions become the ClusterExtension's
 * `Installed` / `Progressing`; the catalog's `olm.deprecations` its deprecation conditions.
 *
 * One entry: `reconcile(name)`, made of small named steps on the one reconcile wrapper.
 */
import { createHash } from "node:crypto";
import { KubeApiError, type KubeServer, type KubeObject, liveOnly } from "../kube/client.js";
import { findCondition, type Condition } from "../kube/conditions.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller, type Result } from "../runtime/controller.js";
import { passBy, reconcileObject, workingCopy } from "../runtime/reconcile.js";
import { requeueAfter, type Step, type StepOutcome, withConditions } from "../runtime/steps.js";
import { API_VERSION as RUKPAK_API_VERSION, type Instance, type ProvisionerClass } from "../rukpak/api.js";
import { Reason as RukpakReason } from "../rukpak/reasons.js";
import type { Requester } from "../rukpak/permissions.js";
import { verifiedRequester, type SigningKey } from "../rukpak/trust.js";
import { sameJson } from "../kube/json.js";
import type { ServedCatalog } from "../catalogd/catalogs.js";
import type { ClusterCatalog } from "../catalogd/api.js";
import { bundleConfigProblems, ConfigError } from "../rukpak/render/config.js";
import {
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  OLM_API_VERSION,
  type ClusterExtension,
  type ClusterExtensionStatus,
} from "./api.js";
import {
  resolveBundle,
  ResolutionError,
  type CatalogPackage,
  type FbcBundle,
  type FbcChannel,
  type FbcDeprecation,
  type InstalledBundle,
  type Resolved,
} from "./resolve.js";
import { selectorMatches, type LabelSelector } from "../kube/selector.js";

/** The ProvisionerClass of ClusterExtensions' Instances (registry+v1, approval UserPermission). */
export const CLUSTER_EXTENSION_CLASS = "olm.clusterextension";
/** catalogd's label naming a catalog (matched by selectors even where no webhook stamped it). */
export const LABEL_CATALOG_NAME = "olm.operatorframework.io/metadata.name";
/** Upstream's revision annotations, on the Instance. */
export const ANNOTATION_BUNDLE_NAME = "olm.operatorframework.io/bundle-name";
export const ANNOTATION_BUNDLE_VERSION = "olm.operatorframework.io/bundle-version";
export const ANNOTATION_PACKAGE_NAME = "olm.operatorframework.io/package-name";
export const ANNOTATION_BUNDLE_REFERENCE = "olm.operatorframework.io/bundle-reference";
/** When the Instance's current spec was written (progressDeadlineMinutes counts from it). */
export const ANNOTATION_ROLLOUT_STARTED = "olm.operatorframework.io/rollout-started";

export function clusterExtensionProvisionerClass(): ProvisionerClass {
  return {
    apiVersion: RUKPAK_API_VERSION,
    kind: "ProvisionerClass",
    metadata: { name: CLUSTER_EXTENSION_CLASS },
    provisioner: "operators.coreos.com/operators",
    parameters: { approval: "UserPermission", maxObjectSize: "10mb" },
  };
}

/** The Instance of a ClusterExtension. */
export function instanceNameFor(ext: string): string {
  const n = `clusterextension-${ext}`;
  return n.length <= 253 ? n : `clusterextension-${createHash("sha256").update(ext).digest("hex").slice(0, 40)}`;
}

/** The Bundle object of a catalog bundle for one ClusterExtension (a DNS subdomain). */
export function bundleObjectName(ext: string, bundle: string, image: string): string {
  const base =
    bundle
      .toLowerCase()
      .replace(/[^a-z0-9.-]/g, "-")
      .replace(/^[^a-z0-9]+/, "")
      .slice(0, 200)
      .replace(/[^a-z0-9]+$/, "") || "bundle";
  return `${base}-${createHash("sha256").update(`${ext}\0${image}`).digest("hex").slice(0, 10)}`;
}

/** A catalog filter's selector: Kubernetes' matching; an absent one selects every catalog (as upstream). */
export function selects(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  return sel === undefined || selectorMatches(sel, labels);
}

/**
 * What the controller reads of the cluster's catalogs: the catalogd controller (`catalogd/catalogs.ts`)
 * in a process, any other source of served revisions in a test.
 */
export interface CatalogSource {
  /** True once every ClusterCatalog was tried (resolving earlier would miss installed bundles' catalogs). */
  settled(): boolean;
  /** Every catalog with served content. */
  servedCatalogs(): ServedCatalog[];
  /** The ClusterCatalogs (selectors, availabilityMode, deletion). */
  readonly catalogs: { get(name: string): ClusterCatalog | undefined; list(): ClusterCatalog[] };
  /** Called when a served catalog changes. */
  onChange(fn: () => void): void;
}

export interface ExtensionControllerOptions {
  client: KubeServer;
  catalogs: CatalogSource;
  key: SigningKey;
  log?: (msg: string) => void;
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
}

/** What one pass decided, written to status at the end. */
interface Outcome {
  conditions: NewCondition[];
  install?: { bundle: { name: string; version: string } } | null;
  requeueAfter?: number;
}

/** The working state of one pass: what earlier steps found, and the outcome once a step ends the pass. */
interface ExtensionState {
  ext: ClusterExtension;
  generation: number;
  /** The working copy of the status (the status written is computed from `out`). */
  status: ClusterExtensionStatus;
  inst: Instance | undefined;
  installed?: InstalledBundle;
  requester?: Requester;
  resolved?: Resolved;
  deprecation: NewCondition[];
  out?: Outcome;
}

/** Ends the pass with `out` (nothing: the pass goes on); requeued after `out.requeueAfter` when it says so. */
function end(s: ExtensionState, out: Outcome | undefined): StepOutcome {
  if (!out) return;
  s.out = out;
  return out.requeueAfter ? requeueAfter(out.requeueAfter) : { stop: true };
}

/** Install modes under which every watchNamespace is optional (judging the rest of a configuration alone). */
const ANY_INSTALL_MODE = new Set(["AllNamespaces", "OwnNamespace", "SingleNamespace"]);

const DEPRECATION_TYPES = ["Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"];

export class ExtensionController {
  /** Built on the controller runtime: ClusterExtensions, their Instances, Namespaces, installed objects. */
  readonly controller: Controller<ClusterExtension>;
  readonly extensions: Informer<ClusterExtension>;
  readonly instances: Informer<Instance>;
  readonly namespaces: Informer<KubeObject>;
  private readonly client: KubeServer;
  private readonly log: (m: string) => void;

  constructor(private readonly opts: ExtensionControllerOptions) {
    this.client = opts.client;
    this.log = opts.log ?? (() => {});
    this.controller = defineController<ClusterExtension>(
      this.client,
      {
        name: "clusterextension",
        caches: opts.caches,
        for: {
          apiVersion: OLM_API_VERSION,
          kind: "ClusterExtension",
          filter: (ev, o, old) => !(ev === "update" && old?.metadata.generation === o.metadata.generation),
        },
        watches: [
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Instance",
            map: (i) => {
              const owner = i.metadata.labels?.[LABEL_OWNER_NAME];
              return i.metadata.labels?.[LABEL_OWNER_KIND] === "ClusterExtension" && owner ? [owner] : [];
            },
          },
          {
            apiVersion: "v1",
            kind: "Namespace",
            map: (ns) =>
              this.extensions
                .list()
                .filter((e) => e.spec.namespace === ns.metadata.name)
                .map((e) => e.metadata.name),
          },
        ],
        concurrency: 2,
        baseDelayMs: 500,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcile(key),
      },
      this.log,
    );
    this.extensions = this.controller.primary;
    this.instances = this.controller.cacheOf<Instance>(RUKPAK_API_VERSION, "Instance");
    this.namespaces = this.controller.cacheOf<KubeObject>("v1", "Namespace");
    opts.catalogs.onChange(() => this.requeueAll());
  }

  get queue() {
    return this.controller.queue;
  }

  private requeueAll(): void {
    for (const e of this.extensions.list()) this.queue.add(e.metadata.name);
  }

  async start(): Promise<void> {
    await this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
  }

  /**
   * One pass as named steps (catalogs, ownership, requester, configuration, resolution, namespace,
   * instance) on the one reconcile wrapper (`runtime/reconcile.ts`): each either ends the pass with its
   * outcome or goes on; the step that ended it is counted in
   * `opcat_reconcile_stops_total{controller="clusterextension"}`; then conditions and status.install are
   * written once (conflicts retried on a fresh read).
   */
  async reconcile(name: string): Promise<Result> {
    return reconcileObject<ClusterExtension, ExtensionState>(
      {
        ...passBy("clusterextension", this.client, this.controller.events, this.log),
        apiVersion: OLM_API_VERSION,
        kind: "ClusterExtension",
        // a ClusterExtension being deleted: its Instance goes with it (owner reference)
        get: (key) => liveOnly(this.extensions.get(key)),
        state: (ext) => ({
          ...workingCopy(ext),
          ext,
          inst: this.instances.get(instanceNameFor(ext.metadata.name)),
          deprecation: [],
        }),
        steps: this.steps,
        object: (s) => s.ext,
        next: (s, fresh) => (s.out && s.out.conditions.length > 0 ? statusOf(fresh, s.out) : undefined),
      },
      name,
    );
  }

  private readonly steps: Step<ExtensionState>[] = [
    // resolving before every catalog was tried would see installed bundles' catalogs as missing
    { name: "catalogs", run: () => (this.opts.catalogs.settled() ? undefined : requeueAfter(1000)) },
    { name: "ownership", run: (s) => end(s, this.instanceConflict(s.ext, s.inst)) },
    {
      name: "requester",
      run: (s) => {
        s.installed = this.installedBundle(s.ext, s.inst);
        const r = this.requesterOf(s.ext);
        if ("blocked" in r) return end(s, this.withInstalled(s.ext, s.installed, r.blocked));
        s.requester = r.requester;
      },
    },
    {
      name: "configuration",
      run: (s) => {
        const invalid = this.invalidConfiguration(s.ext);
        return invalid && end(s, this.withInstalled(s.ext, s.installed, invalid));
      },
    },
    {
      name: "resolution",
      run: (s) => {
        const resolution = this.resolve(s.ext, s.installed);
        s.deprecation = this.deprecationConditions(s.ext, s.installed?.name ?? "", resolution);
        if ("error" in resolution)
          return end(s, this.withInstalled(s.ext, s.installed, resolution.error, s.deprecation));
        s.resolved = resolution.resolved;
      },
    },
    {
      name: "namespace",
      run: (s) =>
        this.namespaceExists(s.ext)
          ? undefined
          : end(
              s,
              this.withInstalled(
                s.ext,
                s.installed,
                this.retrying(`failed to install: namespaces ${JSON.stringify(s.ext.spec.namespace)} not found`),
                s.deprecation,
              ),
            ),
    },
    { name: "instance", run: (s) => this.instanceStep(s) },
  ];

  /** The Instance made or updated as the author; the outcome read from it. */
  private async instanceStep(s: ExtensionState): Promise<StepOutcome> {
    const { ext, installed, deprecation } = s;
    const requester = s.requester!;
    let current: Instance | undefined;
    try {
      current = await this.ensureInstance(ext, s.inst, s.resolved!, requester);
    } catch (e) {
      // the author may not write the Instance (RBAC, or `use` on the class): she is told, and it is retried
      if (!(e instanceof KubeApiError) || e.status !== 403) throw e;
      const message =
        `${requester.username} may not write Instance ${instanceNameFor(ext.metadata.name)}, ` +
        `through which a ClusterExtension installs: ${e.message}`;
      return end(s, {
        ...this.withInstalled(ext, installed, this.retrying(message), deprecation),
        requeueAfter: 30_000,
      });
    }
    s.out = current ? this.fromInstance(ext, current, s.resolved!, installed, deprecation) : { conditions: [] };
    if (s.out.requeueAfter) return requeueAfter(s.out.requeueAfter);
  }

  // ---------------------------------------------------------------- steps

  /** An Instance of that name that this ClusterExtension does not own is never taken over. */
  private instanceConflict(ext: ClusterExtension, inst: Instance | undefined): Outcome | undefined {
    if (!inst || this.owns(ext, inst)) return undefined;
    return {
      conditions: [
        this.blocked(
          `Instance ${inst.metadata.name} exists and does not belong to this ClusterExtension; ` +
            "opcat never takes over an object it did not create",
        ),
        { type: "Installed", status: "False", reason: "Failed", message: "No bundle installed" },
      ],
      install: null,
    };
  }

  /**
   * What is installed: the bundle the Instance has active when its spec is in effect, else what the
   * status recorded last (during a pivot the previous bundle keeps running).
   */
  private installedBundle(ext: ClusterExtension, inst: Instance | undefined): InstalledBundle | undefined {
    if (!inst) return undefined;
    const a = inst.metadata.annotations ?? {};
    if (
      findCondition(inst.status?.conditions, "Installed")?.status === "True" &&
      inst.status?.activeBundle === inst.spec.bundle.name &&
      a[ANNOTATION_BUNDLE_NAME] &&
      a[ANNOTATION_BUNDLE_VERSION]
    )
      return { name: a[ANNOTATION_BUNDLE_NAME], version: a[ANNOTATION_BUNDLE_VERSION] };
    const recorded = ext.status?.install?.bundle;
    return recorded && inst.status?.activeBundle ? { name: recorded.name, version: recorded.version } : undefined;
  }

  /** The ClusterExtension's author, as the admission webhook recorded and signed it. */
  private requesterOf(ext: ClusterExtension): { requester: Requester } | { blocked: NewCondition } {
    const r = verifiedRequester(this.opts.key, ext);
    if (r) return { requester: r };
    return {
      blocked: this.blocked(
        "who created or last changed this ClusterExtension cannot be verified (written while opcat's admission " +
          "webhook was not serving, or the record was altered): apply it again",
      ),
    };
  }

  /**
   * config.inline, what can be judged before the bundle is unpacked (unknown fields, deploymentConfig),
   * in upstream's words; `watchNamespace` depends on the bundle's install modes and is judged when the
   * Instance renders it (its `InvalidConfiguration` becomes ours in progressingFromInstance).
   */
  private invalidConfiguration(ext: ClusterExtension): NewCondition | undefined {
    const { watchNamespace: _judgedLater, ...rest } = (ext.spec.config?.inline ?? {}) as Record<string, unknown>;
    const problems = bundleConfigProblems(ANY_INSTALL_MODE, "", rest);
    if (problems.length === 0) return undefined;
    return this.invalidConfigurationCondition(new ConfigError(problems).message);
  }

  private invalidConfigurationCondition(message: string): NewCondition {
    return {
      type: "Progressing",
      status: "False",
      reason: "InvalidConfiguration",
      message: `invalid ClusterExtension configuration: ${message}`,
    };
  }

  /** The package as each selected, available catalog serves it. */
  private catalogPackages(ext: ClusterExtension): CatalogPackage[] {
    const c = ext.spec.source.catalog!;
    const out: CatalogPackage[] = [];
    for (const s of this.opts.catalogs.servedCatalogs()) {
      const cc = this.opts.catalogs.catalogs.get(s.name);
      if (!cc || (cc.spec as { availabilityMode?: string }).availabilityMode === "Unavailable") continue;
      if (!selects(c.selector, { ...(cc.metadata.labels ?? {}), [LABEL_CATALOG_NAME]: cc.metadata.name })) continue;
      const pkg: CatalogPackage = {
        catalog: s.name,
        priority: s.priority,
        channels: [],
        bundles: [],
        deprecations: [],
      };
      for (const i of s.revision.query("", c.packageName, "") ?? []) {
        const blob = JSON.parse(s.revision.line(i).toString("utf8")) as { schema?: string };
        if (blob.schema === "olm.channel") pkg.channels.push(blob as FbcChannel);
        else if (blob.schema === "olm.bundle") pkg.bundles.push(blob as FbcBundle);
        else if (blob.schema === "olm.deprecations") pkg.deprecations.push(blob as FbcDeprecation);
      }
      out.push(pkg);
    }
    return out;
  }

  /** Whether a ClusterCatalog matching the selector exists (upstream's CheckCatalogsExist). */
  private catalogsExist(ext: ClusterExtension): boolean {
    const sel = ext.spec.source.catalog?.selector;
    return this.opts.catalogs.catalogs
      .list()
      .some(
        (cc: ClusterCatalog) =>
          !cc.metadata.deletionTimestamp &&
          selects(sel, { ...(cc.metadata.labels ?? {}), [LABEL_CATALOG_NAME]: cc.metadata.name }),
      );
  }

  /**
   * Resolution with upstream's handling of failures: nothing installed → Retrying; a version asked for
   * that differs from the installed one → Retrying; catalogs that match exist → Retrying; none left →
   * the installed bundle stays (so that deleting a catalog never uninstalls anything).
   */
  private resolve(
    ext: ClusterExtension,
    installed: InstalledBundle | undefined,
  ): { resolved: Resolved } | { error: NewCondition; hasCatalogData?: false } {
    const c = ext.spec.source.catalog!;
    try {
      return {
        resolved: resolveBundle(
          {
            packageName: c.packageName,
            version: c.version,
            channels: c.channels,
            upgradeConstraintPolicy: c.upgradeConstraintPolicy,
            installed,
          },
          this.catalogPackages(ext),
        ),
      };
    } catch (e) {
      if (!(e instanceof ResolutionError)) throw e;
      const err = e.message;
      if (!installed) return { error: this.retrying(err) };
      if (c.version && c.version !== installed.version)
        return {
          error: this.retrying(
            `unable to upgrade to version ${c.version}: ${err} (currently installed: ${installed.version})`,
          ),
        };
      if (this.catalogsExist(ext)) return { error: this.retrying(err) };
      return {
        error: {
          type: "Progressing",
          status: "True",
          reason: "Succeeded",
          message: "Desired state reached",
        },
      };
    }
  }

  /** Upstream's SetDeprecationStatus. */
  private deprecationConditions(
    ext: ClusterExtension,
    installedName: string,
    r: { resolved: Resolved } | { error: NewCondition },
  ): NewCondition[] {
    const unknown = "deprecation status unknown: catalog data unavailable";
    if (!("resolved" in r))
      return [
        { type: "Deprecated", status: "Unknown", reason: "DeprecationStatusUnknown", message: unknown },
        { type: "PackageDeprecated", status: "Unknown", reason: "DeprecationStatusUnknown", message: unknown },
        { type: "ChannelDeprecated", status: "Unknown", reason: "DeprecationStatusUnknown", message: unknown },
        installedName
          ? { type: "BundleDeprecated", status: "Unknown", reason: "DeprecationStatusUnknown", message: unknown }
          : { type: "BundleDeprecated", status: "Unknown", reason: "Absent", message: "no bundle installed yet" },
      ];
    const channels = new Set(ext.spec.source.catalog?.channels ?? []);
    const pkg: string[] = [];
    const ch: string[] = [];
    const bundle: string[] = [];
    for (const e of r.resolved.deprecation?.entries ?? []) {
      if (!e.message) continue;
      if (e.reference.schema === "olm.package") pkg.push(e.message);
      else if (e.reference.schema === "olm.channel" && (channels.size === 0 || channels.has(e.reference.name ?? "")))
        ch.push(e.message);
      else if (e.reference.schema === "olm.bundle" && installedName && e.reference.name === installedName)
        bundle.push(e.message);
    }
    const all = [...pkg, ...ch, ...bundle];
    const one = (type: NewCondition["type"], msgs: string[], none: string): NewCondition =>
      msgs.length > 0
        ? { type, status: "True", reason: "Deprecated", message: msgs.join("\n") }
        : { type, status: "False", reason: "NotDeprecated", message: none };
    return [
      one("Deprecated", all, "not deprecated"),
      one("PackageDeprecated", pkg, "package not deprecated"),
      one("ChannelDeprecated", ch, "channel not deprecated"),
      installedName
        ? one("BundleDeprecated", bundle, "bundle not deprecated")
        : { type: "BundleDeprecated", status: "Unknown", reason: "Absent", message: "no bundle installed yet" },
    ];
  }

  private namespaceExists(ext: ClusterExtension): boolean {
    return this.namespaces.get(ext.spec.namespace) !== undefined;
  }

  /** The Instance this ClusterExtension needs now. */
  desiredInstance(ext: ClusterExtension, r: Resolved, started: string): Instance {
    const name = ext.metadata.name;
    const image = r.bundle.image ?? "";
    const labels = { [LABEL_OWNER_KIND]: "ClusterExtension", [LABEL_OWNER_NAME]: name };
    // upstream validates the configuration always (an empty one too: a watchNamespace may be required)
    const config = ext.spec.config?.inline ?? {};
    const enforcement = ext.spec.install?.preflight?.crdUpgradeSafety?.enforcement;
    return {
      apiVersion: RUKPAK_API_VERSION,
      kind: "Instance",
      metadata: {
        name: instanceNameFor(name),
        labels,
        annotations: {
          [ANNOTATION_BUNDLE_NAME]: r.bundle.name,
          [ANNOTATION_BUNDLE_VERSION]: r.version,
          [ANNOTATION_PACKAGE_NAME]: r.bundle.package,
          [ANNOTATION_BUNDLE_REFERENCE]: image,
          [ANNOTATION_ROLLOUT_STARTED]: started,
        },
        ownerReferences: [
          { apiVersion: OLM_API_VERSION, kind: "ClusterExtension", name, uid: ext.metadata.uid!, controller: true },
        ],
      },
      spec: {
        selector: { matchLabels: labels },
        bundle: {
          name: bundleObjectName(name, r.bundle.name, image),
          spec: { class: CLUSTER_EXTENSION_CLASS, refs: [`docker://${image}`] },
        },
        installNamespace: ext.spec.namespace,
        config,
        ...(enforcement === "None" ? { crdUpgradeSafety: "None" as const } : {}),
      },
    };
  }

  /**
   * True when `inst` is this ClusterExtension's: its owner reference names it, or — since anyone who
   * may update Instances may drop owner references, as the garbage collector does — it has no owner
   * at all and its signed requester (which nobody can forge) is this ClusterExtension's author. Such
   * an Instance gets its owner reference back when it is next written (`ensureInstance`).
   */
  private owns(ext: ClusterExtension, inst: Instance): boolean {
    const owners = inst.metadata.ownerReferences ?? [];
    if (owners.some((r) => r.uid === ext.metadata.uid)) return true;
    if (owners.length > 0) return false;
    const mine = verifiedRequester(this.opts.key, ext);
    const its = verifiedRequester(this.opts.key, inst);
    return !!mine && !!its && mine.username === its.username && mine.uid === its.uid;
  }

  /**
   * Creates or updates the Instance **as the ClusterExtension's author** (impersonation), so that
   * the webhook records her as its requester and approval judges her. Unchanged: nothing is written.
   */
  private async ensureInstance(
    ext: ClusterExtension,
    cur: Instance | undefined,
    r: Resolved,
    requester: Requester,
  ): Promise<Instance | undefined> {
    const curStarted = cur?.metadata.annotations?.[ANNOTATION_ROLLOUT_STARTED] ?? "";
    const want = this.desiredInstance(ext, r, curStarted);
    // compared whatever the order of keys (a rewrite would restart the progress deadline)
    const same =
      cur &&
      sameJson(cur.spec, want.spec) &&
      Object.entries(want.metadata.labels ?? {}).every(([k, v]) => cur.metadata.labels?.[k] === v) &&
      Object.entries(want.metadata.annotations ?? {}).every(([k, v]) => cur.metadata.annotations?.[k] === v);
    // an Instance whose owner reference someone dropped gets it back, without restarting its rollout
    const owned = (cur?.metadata.ownerReferences ?? []).some((o) => o.uid === ext.metadata.uid);
    if (same && owned) return cur;
    // the ClusterExtension may be going (its Instance's deletion can be seen first): ask the API server
    if (!(await this.client.getLive(OLM_API_VERSION, "ClusterExtension", ext.metadata.name, { uid: ext.metadata.uid })))
      return undefined;
    if (!same) want.metadata.annotations![ANNOTATION_ROLLOUT_STARTED] = new Date().toISOString();
    const as = this.client.impersonating(requester);
    if (!cur) return as.create<Instance>(want);
    // keep what others wrote on the Instance (finalizers, other labels); the spec is ours
    return as.replace<Instance>({
      ...cur,
      metadata: {
        ...cur.metadata,
        labels: { ...(cur.metadata.labels ?? {}), ...want.metadata.labels },
        annotations: { ...(cur.metadata.annotations ?? {}), ...want.metadata.annotations },
        ...(owned ? {} : { ownerReferences: want.metadata.ownerReferences }),
      },
      spec: want.spec,
    });
  }

  /** The ClusterExtension's conditions from its Instance's. */
  private fromInstance(
    ext: ClusterExtension,
    inst: Instance,
    r: Resolved,
    installed: InstalledBundle | undefined,
    deprecation: NewCondition[],
  ): Outcome {
    const gen = inst.metadata.generation ?? 0;
    const ic = findCondition(inst.status?.conditions, "Installed");
    const done =
      ic?.status === "True" &&
      inst.status?.activeBundle === inst.spec.bundle.name &&
      inst.status?.observedGeneration === gen &&
      inst.spec.bundle.name === bundleObjectName(ext.metadata.name, r.bundle.name, r.bundle.image ?? "");
    if (done) {
      // the bundle deprecation is about the bundle now installed
      const dep = this.deprecationConditions(ext, r.bundle.name, { resolved: r });
      return {
        conditions: [
          {
            type: "Installed",
            status: "True",
            reason: "Succeeded",
            message: `Installed bundle ${r.bundle.image} successfully`,
          },
          { type: "Progressing", status: "True", reason: "Succeeded", message: "Desired state reached" },
          ...dep,
        ],
        install: { bundle: { name: r.bundle.name, version: r.version } },
      };
    }
    const progressing = this.progressingFromInstance(inst);
    const deadline = this.pastDeadline(ext, inst);
    return {
      ...this.withInstalled(ext, installed, deadline.condition ?? progressing, deprecation),
      ...(deadline.requeueAfter ? { requeueAfter: deadline.requeueAfter } : {}),
    };
  }

  /** Progressing while the Instance is not there yet: approval, unpacking, safety, collisions. */
  private progressingFromInstance(inst: Instance): NewCondition {
    const cs = inst.status?.conditions;
    const stale = (c: Condition | undefined) =>
      !c || (c.observedGeneration !== undefined && c.observedGeneration !== inst.metadata.generation);
    const approved = findCondition(cs, "Approved");
    const unpacked = findCondition(cs, "Unpacked");
    const installed = findCondition(cs, "Installed");
    const who = `Instance ${inst.metadata.name}`;
    if (!stale(unpacked) && unpacked!.status === "False")
      return this.retrying(`${who}: ${unpacked!.reason}: ${unpacked!.message}`);
    if (!stale(approved) && approved!.status === "False" && approved!.reason === RukpakReason.DryRunFailed)
      return this.retrying(`${who}: ${approved!.message}`);
    if (!stale(approved) && approved!.status === "False")
      return this.retrying(
        `${who} waits for approval (${approved!.reason}): ${approved!.message}; ` +
          `kubectl instance approve ${inst.metadata.name}`,
      );
    if (!stale(installed) && installed!.status === "False" && installed!.reason === "InvalidConfiguration")
      return this.invalidConfigurationCondition(installed!.message);
    if (!stale(installed) && installed!.status === "False" && installed!.reason !== "Upgrading")
      return this.retrying(`${who}: ${installed!.reason}: ${installed!.message}`);
    return {
      type: "Progressing",
      status: "True",
      reason: "RollingOut",
      message: `${who} is installing bundle ${inst.metadata.annotations?.[ANNOTATION_BUNDLE_NAME] ?? ""}`.trim(),
    };
  }

  /** progressDeadlineMinutes: counted from when the Instance's current spec was written. */
  private pastDeadline(ext: ClusterExtension, inst: Instance): { condition?: NewCondition; requeueAfter?: number } {
    const minutes = ext.spec.progressDeadlineMinutes;
    const started = Date.parse(inst.metadata.annotations?.[ANNOTATION_ROLLOUT_STARTED] ?? "");
    if (!minutes || Number.isNaN(started)) return {};
    const left = started + minutes * 60_000 - Date.now();
    if (left > 0) return { requeueAfter: left };
    return {
      condition: {
        type: "Progressing",
        status: "False",
        reason: "ProgressDeadlineExceeded",
        message: `installation has not completed within ${minutes} minutes (progressDeadlineMinutes)`,
      },
    };
  }

  /** `Installed` from what is installed (upstream's setInstalledStatusFromRevisionStates), plus `progressing`. */
  private withInstalled(
    ext: ClusterExtension,
    installed: InstalledBundle | undefined,
    progressing: NewCondition,
    deprecation: NewCondition[] = [],
  ): Outcome {
    const installedCond: NewCondition = installed
      ? {
          type: "Installed",
          status: "True",
          reason: "Succeeded",
          message: `Installed bundle ${this.installedImage(ext, installed)} successfully`,
        }
      : { type: "Installed", status: "False", reason: "Failed", message: "No bundle installed" };
    return {
      conditions: [installedCond, progressing, ...deprecation],
      install: installed ? { bundle: { name: installed.name, version: installed.version } } : null,
    };
  }

  /** The image of the installed bundle: the Instance's when it names that bundle, else what status said. */
  private installedImage(ext: ClusterExtension, installed: InstalledBundle): string {
    const a = this.instances.get(instanceNameFor(ext.metadata.name))?.metadata.annotations ?? {};
    if (a[ANNOTATION_BUNDLE_NAME] === installed.name && a[ANNOTATION_BUNDLE_REFERENCE])
      return a[ANNOTATION_BUNDLE_REFERENCE];
    const prev = ext.status?.conditions?.find((c) => c.type === "Installed" && c.status === "True");
    return (prev && /^Installed bundle (.*) successfully$/.exec(prev.message)?.[1]) ?? "";
  }

  private retrying(message: string): NewCondition {
    return { type: "Progressing", status: "True", reason: "Retrying", message };
  }

  private blocked(message: string): NewCondition {
    return { type: "Progressing", status: "False", reason: "Blocked", message };
  }
}

/** Conditions and status.install from a pass's outcome, on top of the ClusterExtension as it is now. */
function statusOf(fresh: ClusterExtension, out: Outcome): ClusterExtensionStatus {
  const gen = fresh.metadata.generation ?? 0;
  const list = withConditions(fresh.status ?? {}, gen, out.conditions).conditions ?? [];
  // deprecation conditions are always present once known
  const types = new Set([...out.conditions.map((c) => c.type), ...DEPRECATION_TYPES]);
  const status: ClusterExtensionStatus = {
    ...(fresh.status ?? {}),
    conditions: list.filter((c) => types.has(c.type)),
  };
  if (out.install === null) delete status.install;
  else if (out.install) status.install = out.install;
  return status;
}
