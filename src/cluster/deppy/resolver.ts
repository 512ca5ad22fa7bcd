/**
 * Deppy on the cluster: continual resolution. Whenever an Input, an InputClass, a served catalog or
 * the set of installed bundles changes, every Input is resolved with opcat's resolver over the
 * ClusterCatalogs' content and the installed bundles (with the properties recorded on their
 * Bundles), and each Input gets:
 * - its status in the documented shape (docs/cluster.md) (instances with `satisfies` and `dependencies`, conditions
 *   `Resolved`, `ResolutionFailed`, `DependenciesMissing`), and Events when it is blocked;
 * - a `deppy.resolveset` Bundle whose content (a ConfigMap) lists the resolved bundles, named by
 *   content so that a new resolution is a new Bundle, and (unless the class is a dry run) a
 *   resolveset Instance pointing at it, which the resolveset provisioner turns into one Bundle and
 *   Instance per entry after approval;
 * - Inputs of their own for dependencies when the class has `generateInputsForDependencies`.
 * Inputs are resolved together but independent ones apart (the resolver splits them), and each has
 * its own resolveset, so one blocked operator never blocks unrelated ones.
 *
 * This file is the controller; what it resolves over is read by `inventory.ts`, and the resolveset
 * (its content's format and its objects) is written by `resolvesetwriter.ts`.
 */
import { isConflict, type KubeServer } from "../kube/client.js";
import { relayed, setCondition, type Condition as KubeCondition } from "../kube/conditions.js";
import { fromResolver, Reason, Type, type GroupCondition as NewCondition } from "./reasons.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller } from "../runtime/controller.js";
import { runSteps, type Step, type StepOutcome, withConditions } from "../runtime/steps.js";
import { persistStatus, type StatusSpec } from "../runtime/reconcile.js";
import { API_VERSION as RUKPAK_API_VERSION, type Bundle, type Instance } from "../rukpak/api.js";
import type {
  Input as ResolverInput,
  InputClass as ResolverClass,
  InstalledOperator,
  InstalledStatus,
  ResolveSet,
  ResolvedBundle,
} from "../../resolve/index.js";
import type { JsonValue } from "../../fbc/types.js";
import type { SigningKey } from "../rukpak/trust.js";
import { ResolutionBudgetError, ResolverRunner, type ContentCatalog } from "./resolverunner.js";
import type { CatalogController } from "../catalogd/catalogs.js";
import {
  DEPPY_API_VERSION,
  LABEL_GENERATED_FOR,
  LABEL_PACKAGE,
  type Input,
  type InputClass,
  type InputStatusInstance,
} from "./api.js";
import {
  clusterVersions,
  installedOperators,
  resolverClasses,
  servedCatalogs,
  type ClusterVersions,
} from "./inventory.js";
import { ResolvesetWriter } from "./resolvesetwriter.js";

export {
  entryProperties,
  formatPropertiesAnnotation,
  parsePropertiesAnnotation,
  parseResolveset,
  RESOLVESET_FILE,
  resolvesetInstanceName,
  TRACE_FILE,
  type ResolvesetEntry,
} from "./resolvesetwriter.js";

export interface DeppyOptions {
  client: KubeServer;
  catalogs: CatalogController;
  /** Namespace of the resolveset ConfigMaps and of Events about cluster-scoped objects. */
  namespace: string;
  log?: (msg: string) => void;
  /** With `self`: objects of the resolver's names that the controllers did not make are refused. */
  key?: SigningKey;
  /** The controllers' own user name. */
  self?: string;
  /** The time one resolution may take in its worker thread (default 60 s). */
  resolutionBudgetMs?: number;
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
}

/** The working state of one resolution pass (the steps of {@link DeppyController.reconcile}). */
interface ResolutionState {
  inputs: Input[];
  versions: ClusterVersions;
  served: ContentCatalog[];
  ops: InstalledOperator[];
  /** Bundles whose edited `olm.properties` annotation does not parse, with why. */
  problems: Map<string, string>;
  /** The InputClasses with the cluster's versions applied to their constraints. */
  classes: ResolverClass[];
  classNotes: Map<string, NewCondition[]>;
  classFailures: Map<string, string>;
  rinputs: ResolverInput[];
  /** Inputs that fail before resolution (no class, the cluster too old for it). */
  early: Map<string, NewCondition[]>;
  rs?: ResolveSet;
}

type ResolutionStep = (s: ResolutionState) => Promise<StepOutcome> | StepOutcome;

export class DeppyController {
  /** Built on the controller runtime: one key, `resolve`, enqueued by every change that matters. */
  readonly controller: Controller<Input>;
  readonly inputs: Informer<Input>;
  readonly classes: Informer<InputClass>;
  readonly packageInstances: Informer<Instance>;
  readonly packageBundles: Informer<Bundle>;
  readonly events: EventRecorder;
  /** The installed operators' update options from the last resolution, by package. */
  readonly lastInstalled = new Map<string, InstalledStatus>();
  private readonly resolvedListeners: (() => void)[] = [];
  /** Resolutions run so far (for tests and benchmarks). */
  resolutions = 0;
  /** Time spent in the resolver itself, in ms. */
  resolveMs = 0;
  private readonly client: KubeServer;
  private readonly log: (m: string) => void;
  private versions: ClusterVersions | undefined;
  /** Resolutions run in a worker thread within a budget (created at start, stopped at stop). */
  private runner: ResolverRunner | undefined;
  /** The steps of a resolution pass. */
  private readonly steps: Step<ResolutionState>[];
  private readonly writer: ResolvesetWriter;

  constructor(private readonly opts: DeppyOptions) {
    this.client = opts.client;
    this.log = opts.log ?? (() => {});
    this.writer = new ResolvesetWriter(opts);
    const again = () => this.queue.add("resolve");
    this.controller = defineController<Input>(
      this.client,
      {
        name: "deppy",
        // Events about cluster-scoped objects must be in the default namespace (the API server refuses others)
        component: "opcat-deppy",
        caches: opts.caches,
        for: {
          apiVersion: DEPPY_API_VERSION,
          kind: "Input",
          // every Input is resolved together: an event enqueues the one key `resolve`, not the Input
          filter: (ev, i, old) => {
            // status writes by this controller do not start a resolution
            if (
              !(
                ev === "update" &&
                old &&
                old.metadata.generation === i.metadata.generation &&
                JSON.stringify(old.metadata.labels) === JSON.stringify(i.metadata.labels)
              )
            )
              again();
            return false;
          },
        },
        watches: [
          { apiVersion: DEPPY_API_VERSION, kind: "InputClass", map: () => ["resolve"] },
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Instance",
            options: { labelSelector: LABEL_PACKAGE },
            map: (o, ev, old) => {
              const [i, prev] = [o as Instance, old as Instance | undefined];
              return ev === "update" && prev?.status?.activeBundle === i.status?.activeBundle ? [] : ["resolve"];
            },
          },
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Bundle",
            options: { labelSelector: LABEL_PACKAGE },
            map: (b, ev, old) =>
              ev === "update" && JSON.stringify(old?.metadata.annotations) === JSON.stringify(b.metadata.annotations)
                ? []
                : ["resolve"],
          },
        ],
        concurrency: 1,
        baseDelayMs: 500,
        maxDelayMs: 30_000,
        reconcile: () => this.reconcile(),
      },
      this.log,
    );
    this.inputs = this.controller.primary;
    this.classes = this.controller.cacheOf<InputClass>(DEPPY_API_VERSION, "InputClass");
    this.packageInstances = this.controller.cacheOf<Instance>(RUKPAK_API_VERSION, "Instance");
    this.packageBundles = this.controller.cacheOf<Bundle>(RUKPAK_API_VERSION, "Bundle");
    this.events = this.controller.events;
    opts.catalogs.onChange(again);
    const steps: [string, ResolutionStep][] = [
      ["settled", () => this.settled()],
      ["gather", (s) => this.gather(s)],
      ["classes", (s) => this.applyVersions(s)],
      ["inputs", (s) => this.resolverInputs(s)],
      ["resolve", (s) => this.resolve(s)],
      ["statuses", (s) => this.statuses(s)],
      ["generatedInputs", (s) => this.generateInputs(s)],
      ["notify", () => this.notify()],
    ];
    this.steps = steps.map(([name, run]) => ({ name, run }));
  }

  get queue() {
    return this.controller.queue;
  }

  /** True while a resolution runs (in its worker thread). */
  get resolving(): boolean {
    return this.runner?.busy ?? false;
  }

  /** Called after every resolution. */
  onResolved(fn: () => void): void {
    this.resolvedListeners.push(fn);
  }

  async start(): Promise<void> {
    this.runner = new ResolverRunner({ budgetMs: this.opts.resolutionBudgetMs });
    await this.controller.start();
    this.queue.add("resolve");
  }

  async stop(): Promise<void> {
    // the worker goes at once: a resolution under way is not waited for
    const stopped = this.controller.stop();
    await this.runner?.close();
    await stopped;
  }

  /** The cluster's Kubernetes version (`/version`) and OpenShift version (a ClusterVersion, when the API exists). */
  async clusterVersions(): Promise<ClusterVersions> {
    if (this.versions) return this.versions;
    this.versions = await clusterVersions(this.client);
    return this.versions;
  }

  /** What the ClusterCatalogs serve, for the resolver's worker (content sent once per revision). */
  servedCatalogs(): ContentCatalog[] {
    return servedCatalogs(this.opts.catalogs);
  }

  /**
   * Installed operators: the package Instances the resolveset
   * provisioner made, with their Bundles' recorded properties.
   */
  installed(): { ops: InstalledOperator[]; problems: Map<string, string> } {
    return installedOperators(this.packageInstances, this.packageBundles);
  }

  /**
   * One resolution of every Input (steps: settled, gather, classes, inputs, resolve, statuses,
   * generatedInputs, notify).
   */
  async reconcile(): Promise<void> {
    const s: ResolutionState = {
      inputs: [],
      versions: {},
      served: [],
      ops: [],
      problems: new Map(),
      classes: [],
      classNotes: new Map(),
      classFailures: new Map(),
      rinputs: [],
      early: new Map(),
    };
    await runSteps(this.steps, s, "input");
  }

  /** Resolving before every catalog was tried would take installed operators for catalog-less ones. */
  private settled(): StepOutcome {
    if (!this.opts.catalogs.settled()) return { stop: true };
  }

  /** The Inputs, the cluster's versions, the served catalogs and the installed operators. */
  private async gather(s: ResolutionState): Promise<void> {
    s.inputs = this.inputs.list().filter((i) => !i.metadata.deletionTimestamp);
    s.versions = await this.clusterVersions();
    s.served = this.servedCatalogs();
    ({ ops: s.ops, problems: s.problems } = this.installed());
  }

  /** The InputClasses, with the cluster's versions applied to their constraints. */
  private applyVersions(s: ResolutionState): void {
    ({
      classes: s.classes,
      classNotes: s.classNotes,
      classFailures: s.classFailures,
    } = resolverClasses(this.classes.list(), s.versions));
  }

  /** The resolver's Inputs; those without a class, or whose class the cluster is too old for, fail early. */
  private resolverInputs(s: ResolutionState): void {
    for (const i of s.inputs) {
      const cls = i.spec.inputClass || "subscription";
      if (!this.classes.get(cls)) {
        s.early.set(i.metadata.name, [
          {
            type: "ResolutionFailed",
            status: "True",
            reason: "InputClassNotFound",
            message: `InputClass ${cls} does not exist (kubectl get inputclasses lists them)`,
          },
        ]);
        continue;
      }
      const f = s.classFailures.get(cls);
      if (f) {
        s.early.set(i.metadata.name, [
          { type: "ResolutionFailed", status: "True", reason: "ClusterVersionTooOld", message: f },
        ]);
        continue;
      }
      s.rinputs.push({
        name: i.metadata.name,
        inputClass: cls,
        constraints: (i.spec.constraints ?? []).map((c) => ({ type: c.type, value: (c.value ?? null) as JsonValue })),
      });
    }
  }

  /**
   * The resolution, in the worker thread within its budget; past the budget every Input says so and the
   * pass ends (not retried: the next change of an Input, class, catalog or installed bundle resolves again).
   * Without Inputs and installed operators there is none (its answer is empty): Deppy unused holds no
   * catalog model.
   */
  private async resolve(s: ResolutionState): Promise<StepOutcome> {
    if (s.inputs.length === 0 && s.ops.length === 0) {
      // nothing asked for and nothing installed: no catalog is read, and a worker holding models goes
      await this.runner!.release();
      this.lastInstalled.clear();
      this.notify();
      return { stop: true };
    }
    const t0 = performance.now();
    try {
      s.rs = await this.runner!.resolve(s.served, {
        inputs: s.rinputs,
        classes: s.classes,
        installed: s.ops,
        cluster: { kubernetesVersion: s.versions.kube, openshiftVersion: s.versions.ocp },
      });
    } catch (e) {
      if (!(e instanceof ResolutionBudgetError)) throw e;
      this.resolveMs += performance.now() - t0;
      for (const i of s.inputs) {
        const c: NewCondition = {
          type: Type.ResolutionFailed,
          status: "True",
          reason: Reason.ResolutionBudgetExceeded,
          message: e.message,
        };
        await this.writeStatus(i, { instances: [] }, [
          c,
          { type: Type.Resolved, status: "False", reason: c.reason, message: c.message },
        ]);
        this.events.emit(i, "Warning", c.reason, c.message, (err) => this.log(`event: ${(err as Error).message}`));
      }
      return { stop: true };
    }
    this.resolveMs += performance.now() - t0;
    this.resolutions++;
    this.lastInstalled.clear();
    for (const x of s.rs.installed) this.lastInstalled.set(x.package, x);
  }

  /** Each Input's status (and Events when it is blocked), its resolveset written when it resolved. */
  private async statuses(s: ResolutionState): Promise<void> {
    const rs = s.rs!;
    const pkgOf = new Map(rs.bundles.map((b) => [b.name, b.package]));
    for (const op of s.ops) pkgOf.set(op.bundle, op.package);
    for (const i of s.inputs) {
      const name = i.metadata.name;
      const notes = [...(s.classNotes.get(i.spec.inputClass || "subscription") ?? [])];
      for (const [b, msg] of s.problems)
        if (pkgOf.has(b))
          notes.push({ type: "PropertiesOverridden", status: "False", reason: "InvalidAnnotation", message: msg });
      const failed = s.early.get(name);
      if (failed) {
        await this.writeStatus(i, { instances: [] }, [
          ...failed,
          { type: "Resolved", status: "False", reason: failed[0].reason, message: failed[0].message },
          ...notes,
        ]);
        this.events.emit(i, "Warning", failed[0].reason, failed[0].message);
        continue;
      }
      const st = rs.inputs.find((x) => x.name === name);
      if (!st) continue;
      const out = await this.resolvedStatus(s, i, st, pkgOf);
      await this.writeStatus(i, out.fields, [...out.conds, ...notes]);
    }
  }

  /** The status of an Input the resolver answered: its instances, conditions and resolveset. */
  private async resolvedStatus(
    s: ResolutionState,
    i: Input,
    st: ResolveSet["inputs"][number],
    pkgOf: Map<string, string>,
  ): Promise<{ fields: { instances: InputStatusInstance[]; resolveset?: string }; conds: NewCondition[] }> {
    const rs = s.rs!;
    const name = i.metadata.name;
    const failure = st.conditions.find((c) => c.type === "ResolutionFailed" && c.status === "True");
    const ref = (r: { name: string; meets: JsonValue[] }) => ({
      kind: "Instance",
      apiVersion: RUKPAK_API_VERSION,
      name: pkgOf.get(r.name) ?? r.name,
      meets: r.meets,
    });
    const instances: InputStatusInstance[] = st.instances.map((x) => ({
      name: x.name,
      package: x.package,
      version: x.version,
      catalog: x.catalog,
      satisfies: x.satisfies.map(ref),
      dependencies: x.dependencies.map(ref),
      conditions: x.conditions.map((c) => ({ ...c, lastTransitionTime: "" })) as unknown as KubeCondition[],
    }));
    const conds: NewCondition[] = st.conditions
      .filter((c) => c.type !== "DependenciesMissing" || c.status === "True")
      .flatMap((c) => fromResolver(c) ?? []);
    if (!failure)
      conds.push({
        type: "ResolutionFailed",
        status: "False",
        reason: "Resolved",
        message: "the constraints are satisfied",
      });
    let resolveset: string | undefined;
    if (failure) {
      conds.push({ type: Type.Resolved, status: "False", reason: relayed(failure.reason), message: failure.message });
      this.events.emit(i, "Warning", "ResolutionFailed", failure.message, (e) =>
        this.log(`event: ${(e as Error).message}`),
      );
    } else {
      const mine = bundlesOf(rs, name);
      const cls = this.classes.get(i.spec.inputClass || "subscription");
      resolveset = await this.writer.write(i, mine, st.dryRun, cls?.parameters?.trace ? rs.trace : undefined);
      conds.push({
        type: "Resolved",
        status: "True",
        reason: st.dryRun ? "DryRun" : "Resolved",
        message: st.dryRun
          ? `would install ${describe(mine)} (dry run: resolveset Bundle ${resolveset}, no Instance)`
          : `resolved to ${describe(mine)}`,
      });
    }
    const blocked = await this.blockedUpdates(i, rs, s.served, s.rinputs, s.classes, s.ops, s.versions);
    for (const b of blocked) {
      conds.push({ type: "UpdateBlocked", status: "True", reason: "UpdateBlocked", message: b });
      this.events.emit(i, "Warning", "UpdateBlocked", b, (e) => this.log(`event: ${(e as Error).message}`));
    }
    if (blocked.length === 0)
      conds.push({
        type: "UpdateBlocked",
        status: "False",
        reason: "NotBlocked",
        message: "no update in the subscribed channel is held back",
      });
    return { fields: { instances, ...(resolveset ? { resolveset } : {}) }, conds };
  }

  /** Inputs for dependencies, owned by the Input that needed them (none without a live owner). */
  private async generateInputs(s: ResolutionState): Promise<void> {
    const rs = s.rs!;
    const byName = new Set(s.inputs.map((i) => i.metadata.name));
    for (const g of rs.generatedInputs) {
      const parent =
        rs.bundles.find(
          (b) => b.package === g.constraints.map((c) => (c.value as { package?: string }).package).find(Boolean),
        )?.dependencyOf ?? [];
      const owner = s.inputs.find((i) => bundlesOf(rs, i.metadata.name).some((b) => parent.includes(b.name)));
      // a generated Input is owned by the Input that needed it, and goes with it: none without a live owner
      if (byName.has(g.name) || !owner) continue;
      if (!(await this.client.getLive(DEPPY_API_VERSION, "Input", owner.metadata.name, { uid: owner.metadata.uid })))
        continue;
      await this.client
        .create<Input>({
          apiVersion: DEPPY_API_VERSION,
          kind: "Input",
          metadata: {
            name: g.name,
            labels: { [LABEL_GENERATED_FOR]: owner.metadata.name },
            ownerReferences: [
              {
                apiVersion: DEPPY_API_VERSION,
                kind: "Input",
                name: owner.metadata.name,
                uid: owner.metadata.uid!,
                blockOwnerDeletion: false,
              },
            ],
          },
          spec: { inputClass: g.inputClass, constraints: g.constraints.map((c) => ({ type: c.type, value: c.value })) },
        })
        .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
    }
  }

  private notify(): void {
    for (const f of this.resolvedListeners) f();
  }
  /**
   * Why an update is blocked: for each installed package an Input subscribes to whose channel has
   * newer bundles the resolution does not take, resolve again asking for the newest one and report
   * the resolver's explanation.
   */
  private async blockedUpdates(
    i: Input,
    rs: ResolveSet,
    served: ContentCatalog[],
    rinputs: ResolverInput[],
    classes: ResolverClass[],
    ops: InstalledOperator[],
    versions: ClusterVersions,
  ): Promise<string[]> {
    const out: string[] = [];
    const cls = classes.find((c) => c.name === (i.spec.inputClass || "subscription"));
    if (!cls || cls.parameters.dryRun || cls.parameters.force) return out;
    const mine = bundlesOf(rs, i.metadata.name);
    for (const b of mine) {
      const inst = rs.installed.find((x) => x.package === b.package);
      if (!inst) continue;
      const same =
        inst.updates.find((u) => u.channel === b.channel && u.catalog === b.catalog) ??
        inst.updates.find((u) => u.channel === b.channel);
      const options = same?.options ?? [];
      const newest = options[0];
      if (!newest || newest === b.name) continue;
      const me = rinputs.find((x) => x.name === i.metadata.name);
      if (!me) continue;
      const probe = await this.runner!.resolve(served, {
        inputs: [
          ...rinputs.filter((x) => x !== me),
          { ...me, constraints: [...me.constraints, { type: "olm.name", value: newest }] },
        ],
        classes,
        installed: ops,
        cluster: { kubernetesVersion: versions.kube, openshiftVersion: versions.ocp },
      });
      const f = probe.inputs
        .find((s) => s.name === me.name)
        ?.conditions.find((c) => c.type === "ResolutionFailed" && c.status === "True");
      out.push(
        `${b.package} stays at ${b.name} although ${newest} is in channel ` +
          `${b.channel}: ${f ? f.message : "a more preferred solution keeps it"}`,
      );
    }
    return out;
  }

  /**
   * An Input's status from this resolution, by the one status write of the reconcile wrapper
   * (`runtime/reconcile.ts` persistStatus): a resolution covers every Input at once, so each is written
   * from the pass's findings for it (INPUT_STATUS) rather than by a pass of its own.
   */
  private async writeStatus(i: Input, fields: InputFindings["fields"], conds: NewCondition[]): Promise<void> {
    const input = this.inputs.get(i.metadata.name) ?? i;
    await persistStatus(this.client, INPUT_STATUS, { input, status: { ...(input.status ?? {}) }, fields, conds });
  }
}

/** What a resolution found for one Input: its instances and resolveset, and its conditions. */
interface InputFindings {
  input: Input;
  status: NonNullable<Input["status"]>;
  fields: { instances: InputStatusInstance[]; resolveset?: string };
  conds: NewCondition[];
}

/** An Input's status: this resolution's conditions (others dropped), its instances' conditions merged by type. */
const INPUT_STATUS: StatusSpec<Input, InputFindings> = {
  apiVersion: DEPPY_API_VERSION,
  kind: "Input",
  object: (s) => s.input,
  next: ({ fields, conds }, fresh) => {
    const gen = fresh.metadata.generation ?? 0;
    let list = withConditions(fresh.status ?? {}, gen, conds).conditions ?? [];
    // conditions this pass did not report are dropped (they no longer hold)
    const types = new Set<string>(conds.map((c) => c.type));
    list = list.filter((c) => types.has(c.type));
    const prevInstances = new Map((fresh.status?.instances ?? []).map((x) => [x.name, x]));
    const instances = fields.instances.map((x) => {
      let cl: KubeCondition[] = prevInstances.get(x.name)?.conditions ?? [];
      for (const c of (x.conditions ?? []) as unknown as NewCondition[])
        cl = setCondition(cl, { ...c, lastTransitionTime: undefined }).conditions;
      cl = cl.filter((c) => (x.conditions ?? []).some((n) => n.type === c.type));
      return { ...x, conditions: cl };
    });
    return {
      ...(fresh.status ?? {}),
      instances,
      ...(fields.resolveset ? { resolveset: fields.resolveset } : {}),
      conditions: list,
      observedGeneration: gen,
    };
  },
};

/** The bundles of one Input's resolution: those it requested and, transitively, their dependencies. */
export function bundlesOf(rs: ResolveSet, input: string): ResolvedBundle[] {
  const mine = new Set(rs.bundles.filter((b) => b.requestedBy.includes(input)).map((b) => b.name));
  for (let changed = true; changed; ) {
    changed = false;
    for (const b of rs.bundles) {
      if (!mine.has(b.name) && b.dependencyOf.some((d) => mine.has(d))) {
        mine.add(b.name);
        changed = true;
      }
    }
  }
  return rs.bundles.filter((b) => mine.has(b.name));
}

function describe(bs: readonly ResolvedBundle[]): string {
  if (bs.length === 0) return "nothing";
  return bs.map((b) => `${b.name} (${b.action}${b.pivotFrom ? ` from ${b.pivotFrom}` : ""})`).join(", ");
}
