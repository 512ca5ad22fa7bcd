/**
 * The porcelain Operator API (`operators.coreos.com/v1`, docs/cluster.md). An Operator with `spec.catalog`
 * becomes an Input of the same name (`olm.catalog` from `spec.catalog`, `olm.packageVersion` from
 * `spec.version`, then `spec.constraints`, class `spec.inputClass`); one with `spec.bundle` becomes
 * an Instance of that bundle directly (no catalog, no resolver). Its status gathers the components
 * (the Input, the resolveset and package Instances, the Bundles including older ones during a
 * pivot, and the Deployments, CRDs and RBAC objects the bundle made) under one `matchLabels`
 * selector, and the updates the resolver sees in other channels and catalogs
 * (`UpdateAvailable`, reason `CrossChannelUpdateFound` when applying one needs a spec change).
 */
import { type KubeServer, liveOnly } from "../kube/client.js";
import { findCondition, relayed, type Condition } from "../kube/conditions.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { EventRecorder } from "../kube/events.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { defineController, type Controller, type Result } from "../runtime/controller.js";
import { passBy, reconcileObject, workingCopy } from "../runtime/reconcile.js";
import { isOwn, verifiedRequester, type SigningKey } from "../rukpak/trust.js";
import { sameJson } from "../kube/json.js";
import { type Step, type StepOutcome, withConditions } from "../runtime/steps.js";
import { API_VERSION as RUKPAK_API_VERSION, type Bundle, type Instance } from "../rukpak/api.js";
import type { InstalledStatus } from "../../resolve/index.js";
import {
  ANNOTATION_BUNDLE,
  ANNOTATION_VERSION,
  DEPPY_API_VERSION,
  LABEL_PACKAGE,
  type ConstraintSpec,
  type Input,
} from "../deppy/api.js";
import { resolvesetInstanceName, type DeppyController } from "../deppy/resolver.js";
import { OPERATOR_API_VERSION, operatorLabel, type ComponentRef, type Operator, type OperatorUpdate } from "./api.js";

export interface OperatorControllerOptions {
  client: KubeServer;
  /** The resolver: what it last found installed and upgradable per package, and when it resolved. */
  deppy: Pick<DeppyController, "lastInstalled" | "onResolved">;
  log?: (msg: string) => void;
  /** The process's caches (one informer per kind and options, shared with the other controllers). */
  caches?: SharedCaches;
  /** Verifies an Operator's requester: its bundle Instance is written as that user (impersonation). */
  key?: SigningKey;
  /** The controllers' own user name. */
  self?: string;
}

/** The Input an Operator stands for (the translation docs/cluster.md describes). */
export function inputFor(op: Operator): Input["spec"] {
  const constraints: ConstraintSpec[] = [];
  const c = op.spec.catalog;
  if (c)
    constraints.push({
      type: "olm.catalog",
      value: {
        ...(c.name ? { name: c.name } : {}),
        ...(c.namespace ? { namespace: c.namespace } : {}),
        package: c.package,
        ...(c.channel ? { channel: c.channel } : {}),
      },
    });
  if (op.spec.version !== undefined && op.spec.version !== "")
    constraints.push({
      type: "olm.packageVersion",
      value: { package: c?.package ?? op.metadata.name, version: op.spec.version },
    });
  for (const k of op.spec.constraints ?? []) constraints.push({ type: k.type, value: k.value });
  return { inputClass: op.spec.inputClass || "subscription", constraints };
}

const RBAC = new Set(["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount"]);
const SHOWN = new Set(["Deployment", "CustomResourceDefinition", ...RBAC]);

const brief = (cs: readonly Condition[] | undefined, types: string[]): ComponentRef["conditions"] =>
  (cs ?? [])
    .filter((c) => types.includes(c.type))
    .map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: c.lastTransitionTime,
    }));

/** An exact version (not a range): the Operator is pinned, so any update needs a spec change. */
function pinned(v: string | undefined): boolean {
  return !!v && /^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.-]+)?$/.test(v.trim());
}

/** The working state of one pass over an Operator. */
interface OperatorState {
  name: string;
  op: Operator;
  generation: number;
  /** The working copy of its status (the status written is computed from this pass's findings). */
  status: NonNullable<Operator["status"]>;
  owner: NonNullable<Input["metadata"]["ownerReferences"]>[number];
  labels: Record<string, string>;
  /** The Input's spec (from a catalog). */
  inputSpec?: Input["spec"];
  /** This pass's conditions (the status keeps only these types). */
  conds: NewCondition[];
  refs: ComponentRef[];
  installedBundle?: string;
  installedVersion?: string;
  updates: OperatorUpdate[];
  /** The Operator is going: nothing is written. */
  gone?: boolean;
}

type OperatorStep = (s: OperatorState) => Promise<StepOutcome> | StepOutcome;

export class OperatorController {
  /** Built on the controller runtime: Operators, and the Inputs, Instances and Bundles they make. */
  readonly controller: Controller<Operator>;
  readonly operators: Informer<Operator>;
  readonly inputs: Informer<Input>;
  readonly instances: Informer<Instance>;
  readonly bundles: Informer<Bundle>;
  readonly events: EventRecorder;
  private readonly client: KubeServer;
  private readonly log: (m: string) => void;
  /** The steps of a pass (`reconcile`). */
  private readonly steps: Step<OperatorState>[];

  constructor(private readonly opts: OperatorControllerOptions) {
    this.client = opts.client;
    this.log = opts.log ?? (() => {});
    const all = () => this.operators.list().map((o) => o.metadata.name);
    const byPackage = (pkg: string | undefined) =>
      pkg
        ? this.operators
            .list()
            .filter((o) => this.packagesOf(o).includes(pkg))
            .map((o) => o.metadata.name)
        : [];
    this.controller = defineController<Operator>(
      this.client,
      {
        name: "operators",
        caches: opts.caches,
        for: {
          apiVersion: OPERATOR_API_VERSION,
          kind: "Operator",
          // its own status writes do not enqueue it
          filter: (ev, o, old) => !(ev === "update" && old?.metadata.generation === o.metadata.generation),
        },
        watches: [
          { apiVersion: DEPPY_API_VERSION, kind: "Input", map: (i) => [i.metadata.name] },
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Instance",
            map: (i) => [
              ...all().filter((n) => i.metadata.name === n || i.metadata.name === resolvesetInstanceName(n)),
              ...byPackage(i.metadata.labels?.[LABEL_PACKAGE]),
            ],
          },
          {
            apiVersion: RUKPAK_API_VERSION,
            kind: "Bundle",
            map: (b) => [
              ...byPackage(b.metadata.labels?.[LABEL_PACKAGE]),
              ...Object.keys(b.metadata.labels ?? {})
                .filter((k) => k.startsWith("operators.coreos.com/"))
                .map((k) => k.slice("operators.coreos.com/".length)),
            ],
          },
        ],
        concurrency: 4,
        baseDelayMs: 300,
        maxDelayMs: 30_000,
        reconcile: (key) => this.reconcile(key),
      },
      this.log,
    );
    this.operators = this.controller.primary;
    this.inputs = this.controller.cacheOf<Input>(DEPPY_API_VERSION, "Input");
    this.instances = this.controller.cacheOf<Instance>(RUKPAK_API_VERSION, "Instance");
    this.bundles = this.controller.cacheOf<Bundle>(RUKPAK_API_VERSION, "Bundle");
    this.events = this.controller.events;
    opts.deppy.onResolved(() => {
      for (const n of all()) this.controller.queue.add(n);
    });
    const steps: [string, OperatorStep][] = [
      ["spec", (s) => this.checkSpec(s)],
      ["bundleInstance", (s) => this.bundleInstance(s)],
      ["input", (s) => this.input(s)],
      ["catalogRefs", (s) => this.catalogRefs(s)],
      ["catalogInstalled", (s) => this.catalogInstalled(s)],
      ["updates", (s) => this.updates(s)],
      ["installedVersion", (s) => this.installedVersion(s)],
      ["available", (s) => this.available(s)],
    ];
    this.steps = steps.map(([name, run]) => ({ name, run }));
  }

  get queue() {
    return this.controller.queue;
  }

  /** The packages an Operator installed: its own and, from its Input's status, its dependencies. */
  private packagesOf(o: Operator): string[] {
    const out = new Set<string>();
    if (o.spec.catalog?.package) out.add(o.spec.catalog.package);
    for (const x of this.inputs.get(o.metadata.name)?.status?.instances ?? []) if (x.package) out.add(x.package);
    for (const d of this.inputs.get(o.metadata.name)?.status?.instances ?? [])
      for (const r of d.dependencies ?? []) out.add(r.name);
    return [...out];
  }

  async start(): Promise<void> {
    await this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
  }

  /**
   * One pass over an Operator (steps: spec, bundleInstance, input, catalogRefs, catalogInstalled,
   * updates, installedVersion, available), then its status written (conflicts retried on a fresh read)
   * by the one reconcile wrapper (`runtime/reconcile.ts`).
   */
  async reconcile(name: string): Promise<Result> {
    return reconcileObject<Operator, OperatorState>(
      {
        ...passBy("operator", this.client, this.events, this.log),
        apiVersion: OPERATOR_API_VERSION,
        kind: "Operator",
        get: (key) => liveOnly(this.operators.get(key)),
        state: (op, key) => this.state(op, key),
        steps: this.steps,
        object: (s) => s.op,
        next: (s, fresh) => (s.gone ? undefined : this.statusOf(s, fresh)),
      },
      name,
    );
  }

  private state(op: Operator, name: string): OperatorState {
    const labels = { [operatorLabel(name)]: "" };
    return {
      name,
      op,
      ...workingCopy(op),
      owner: {
        apiVersion: OPERATOR_API_VERSION,
        kind: "Operator",
        name,
        uid: op.metadata.uid!,
        blockOwnerDeletion: true,
        controller: true,
      },
      labels,
      conds: [],
      refs: [],
      updates: [],
    };
  }

  /** spec.bundle or spec.catalog, not both, not neither. */
  private checkSpec(s: OperatorState): StepOutcome {
    const { op } = s;
    if (op.spec.bundle && op.spec.catalog)
      return this.installed(s, {
        status: "False",
        reason: "InvalidSpec",
        message: "spec.bundle and spec.catalog exclude each other: install from a catalog or a bundle",
      });
    if (!op.spec.bundle && !op.spec.catalog)
      return this.installed(s, {
        status: "False",
        reason: "InvalidSpec",
        message: "set spec.catalog (install from a catalog) or spec.bundle (install a bundle directly)",
      });
  }

  /** Ends the pass with the Installed condition (the status is still written). */
  private installed(s: OperatorState, c: Omit<NewCondition, "type">): StepOutcome {
    s.conds.push({ type: "Installed", ...c });
    return { stop: true };
  }

  /**
   * The Instance's or Input's deletion may be seen before the Operator's (separate watches): the API
   * server, not the cache, is asked before one is made again for an Operator being deleted.
   */
  private async alive(s: OperatorState): Promise<boolean> {
    return !!(await this.client.getLive(OPERATOR_API_VERSION, "Operator", s.name, { uid: s.op.metadata.uid }));
  }

  /** A bundle directly: one Instance, no resolver. */
  private async bundleInstance(s: OperatorState): Promise<StepOutcome> {
    const { op, name, labels } = s;
    if (!op.spec.bundle) return;
    const cur = this.instances.get(name);
    if (cur && !(cur.metadata.ownerReferences ?? []).some((r) => r.uid === op.metadata.uid))
      return this.installed(s, {
        status: "False",
        reason: "NameConflict",
        message: `Instance ${name} exists and does not belong to this Operator`,
      });
    if (
      !cur ||
      JSON.stringify(cur.spec.bundle) !== JSON.stringify(op.spec.bundle) ||
      cur.spec.installNamespace !== op.spec.installNamespace
    ) {
      if (!cur && !(await this.alive(s))) {
        s.gone = true;
        return { stop: true };
      }
      // as the Operator's author, whom the webhook then records as the Instance's requester and
      // approval judges (as a ClusterExtension's); an unverified author: as the controllers, judged as
      // nobody (it waits for an approval)
      const author = this.opts.key ? verifiedRequester(this.opts.key, op) : undefined;
      const as = author && !isOwn(author, this.opts.self) ? this.client.impersonating(author) : this.client;
      await as.apply<Instance>({
        apiVersion: RUKPAK_API_VERSION,
        kind: "Instance",
        metadata: { name, labels, ownerReferences: [s.owner] },
        spec: {
          selector: { matchLabels: labels },
          bundle: op.spec.bundle,
          ...(op.spec.installNamespace ? { installNamespace: op.spec.installNamespace } : {}),
        },
      });
    }
    const inst = this.instances.get(name);
    s.refs.push({
      kind: "Instance",
      apiVersion: RUKPAK_API_VERSION,
      name,
      conditions: brief(inst?.status?.conditions, ["Approved", "Installed", "Unpacked", "Available", "Progressing"]),
    });
    this.bundleRefs(s.refs, (b) => b.metadata.labels?.[operatorLabel(name)] !== undefined);
    this.objectRefs(s.refs, inst);
    s.installedBundle = inst?.status?.activeBundle;
    const ic = findCondition(inst?.status?.conditions, "Installed");
    s.conds.push(
      ic
        ? { type: "Installed", status: ic.status, reason: relayed(ic.reason), message: ic.message }
        : { type: "Installed", status: "False", reason: "Pending", message: `waiting for Instance ${name}` },
    );
  }

  /**
   * Available, from the Available conditions of the Instances the Operator installs through (reported
   * from their Deployments' and Pods' real state when availability reporting is on): True when every
   * one is, else False with the first one's reason and each one's message; absent when none reports it.
   */
  private available(s: OperatorState): void {
    const reported = s.refs
      .filter((r) => r.kind === "Instance" && r.name !== resolvesetInstanceName(s.name))
      .map((r) => [r.name, findCondition(this.instances.get(r.name)?.status?.conditions, "Available")] as const)
      .filter((x): x is readonly [string, NonNullable<(typeof x)[1]>] => x[1] !== undefined);
    if (reported.length === 0) return;
    const down = reported.filter(([, c]) => c.status !== "True");
    s.conds.push(
      down.length === 0
        ? {
            type: "Available",
            status: "True",
            reason: "WorkloadsAvailable",
            message: `every workload of ${reported.map(([n]) => `Instance ${n}`).join(", ")} is available`,
          }
        : {
            type: "Available",
            status: "False",
            reason: relayed(down[0][1].reason),
            message: down.map(([n, c]) => `Instance ${n}: ${c.message}`).join("; "),
          },
    );
  }

  /** From a catalog: the Input the Operator stands for (never one it does not own). */
  private async input(s: OperatorState): Promise<StepOutcome> {
    const { op, name, labels } = s;
    if (!op.spec.catalog) return;
    const spec = inputFor(op);
    s.inputSpec = spec;
    const cur = this.inputs.get(name);
    if (cur && !(cur.metadata.ownerReferences ?? []).some((r) => r.uid === op.metadata.uid))
      return this.installed(s, {
        status: "False",
        reason: "NameConflict",
        message: `Input ${name} exists and does not belong to this Operator`,
      });
    // compared as canonical JSON: the API server hands objects back with their keys in its own order
    if (!cur || !sameJson(cur.spec, spec)) {
      // as for the Instance: no Input again for an Operator being deleted
      if (!cur && !(await this.alive(s))) {
        s.gone = true;
        return { stop: true };
      }
      await this.client.apply<Input>({
        apiVersion: DEPPY_API_VERSION,
        kind: "Input",
        metadata: { name, labels, ownerReferences: [s.owner] },
        spec,
      });
    }
  }

  /** The components: the Input, the resolveset Instance, the package Instances, their objects and Bundles. */
  private catalogRefs(s: OperatorState): void {
    const { op, name, refs } = s;
    if (!op.spec.catalog) return;
    const input = this.inputs.get(name);
    refs.push({
      kind: "Input",
      apiVersion: DEPPY_API_VERSION,
      name,
      conditions: brief(input?.status?.conditions, ["Resolved", "ResolutionFailed", "UpdateBlocked"]),
    });
    const rsName = resolvesetInstanceName(name);
    const rs = this.instances.get(rsName);
    if (rs)
      refs.push({
        kind: "Instance",
        apiVersion: RUKPAK_API_VERSION,
        name: rsName,
        conditions: brief(rs.status?.conditions, ["Approved", "Installed"]),
      });
    const pkgs = new Set<string>([
      op.spec.catalog.package,
      ...(input?.status?.instances ?? []).map((x) => x.package ?? "").filter(Boolean),
    ]);
    for (const pkg of pkgs) {
      const pi = this.instances.get(pkg);
      if (!pi) continue;
      refs.push({
        kind: "Instance",
        apiVersion: RUKPAK_API_VERSION,
        name: pkg,
        conditions: brief(pi.status?.conditions, ["Approved", "Installed", "Available", "Progressing"]),
      });
      this.objectRefs(refs, pi);
    }
    this.bundleRefs(refs, (b) => pkgs.has(b.metadata.labels?.[LABEL_PACKAGE] ?? "\0"));
  }

  /** Installed: from the Input's resolution, the resolveset's approval and installation. */
  private catalogInstalled(s: OperatorState): void {
    const { op, name } = s;
    if (!op.spec.catalog) return;
    const input = this.inputs.get(name);
    const rs = this.instances.get(resolvesetInstanceName(name));
    const installedBundle = this.instances.get(op.spec.catalog.package)?.status?.activeBundle;
    s.installedBundle = installedBundle;
    const resolved = findCondition(input?.status?.conditions, "Resolved");
    const rsc = findCondition(rs?.status?.conditions, "Approved");
    const ric = findCondition(rs?.status?.conditions, "Installed");
    const status = installedBundle ? "True" : "False";
    if (resolved?.status === "False")
      s.conds.push({
        type: "Installed",
        status,
        reason: installedBundle ? "ResolutionFailed" : relayed(resolved.reason),
        message: resolved.message,
      });
    else if (resolved?.reason === "DryRun")
      s.conds.push({ type: "Installed", status, reason: "DryRun", message: resolved.message });
    else if (rs && rsc?.status === "False")
      s.conds.push({ type: "Installed", status, reason: "AwaitingApproval", message: rsc.message });
    else if (ric)
      s.conds.push({ type: "Installed", status: ric.status, reason: relayed(ric.reason), message: ric.message });
    else
      s.conds.push({
        type: "Installed",
        status: "False",
        reason: "Pending",
        message: resolved ? resolved.message : `waiting for Input ${name} to be resolved`,
      });
  }

  /** The updates the resolver sees, and UpdateAvailable (CrossChannelUpdateFound when one needs a spec change). */
  private updates(s: OperatorState): void {
    const { op } = s;
    const spec = s.inputSpec;
    if (!op.spec.catalog || !spec) return;
    const st: InstalledStatus | undefined = this.opts.deppy.lastInstalled.get(op.spec.catalog.package);
    if (!st) return;
    const updates = st.updates.map((u) => ({
      options: u.options,
      catalogSourceRef: {
        name: u.catalog,
        ...(op.spec.catalog?.namespace ? { namespace: op.spec.catalog.namespace } : {}),
      },
      package: u.package,
      channel: u.channel,
    }));
    s.updates = updates;
    const uc = st.conditions.find((c) => c.type === "UpdateAvailable");
    const mine = (u: OperatorUpdate) =>
      (!op.spec.catalog?.channel || u.channel === op.spec.catalog.channel) &&
      (!op.spec.catalog?.name || u.catalogSourceRef.name === op.spec.catalog.name);
    if (updates.length === 0)
      s.conds.push({
        type: "UpdateAvailable",
        status: "False",
        reason: "NoUpdateFound",
        message: uc?.message ?? "no bundle in the catalogs upgrades from the installed one",
      });
    else if (
      pinned(op.spec.version) ||
      !updates.some(mine) ||
      spec.inputClass === "force" ||
      (spec.inputClass ?? "").startsWith("dry-run")
    )
      s.conds.push({
        type: "UpdateAvailable",
        status: "True",
        reason: "CrossChannelUpdateFound",
        message: "updates have been found that require a change in the operator spec to apply",
      });
    else
      s.conds.push({
        type: "UpdateAvailable",
        status: "True",
        reason: "UpdateFound",
        message: uc?.message ?? "updates are available in the subscribed channel",
      });
  }

  /** The installed bundle's name and version, from its Bundle's annotations. */
  private installedVersion(s: OperatorState): void {
    if (!s.installedBundle) return;
    const a = this.bundles.get(s.installedBundle)?.metadata.annotations ?? {};
    s.installedVersion = a[ANNOTATION_VERSION];
    s.installedBundle = a[ANNOTATION_BUNDLE] ?? s.installedBundle;
  }

  /** The status: this pass's conditions (others dropped), installed bundle, updates, components. */
  private statusOf(s: OperatorState, fresh: Operator): NonNullable<Operator["status"]> {
    const { conds, generation: gen } = s;
    const list = withConditions(fresh.status ?? {}, gen, conds).conditions ?? [];
    const types = new Set<string>(conds.map((c) => c.type));
    return {
      updates: s.updates,
      ...(s.installedBundle ? { installedBundle: s.installedBundle } : {}),
      ...(s.installedVersion ? { installedVersion: s.installedVersion } : {}),
      conditions: list.filter((c) => types.has(c.type)),
      components: { matchLabels: s.labels, refs: s.refs },
      observedGeneration: gen,
    };
  }

  private bundleRefs(refs: ComponentRef[], pick: (b: Bundle) => boolean): void {
    const list = this.bundles
      .list()
      .filter(pick)
      .sort(
        (a, b) =>
          (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
          a.metadata.name.localeCompare(b.metadata.name),
      );
    for (const b of list)
      refs.push({
        kind: "Bundle",
        apiVersion: RUKPAK_API_VERSION,
        name: b.metadata.name,
        conditions: brief(b.status?.conditions, ["Unpacked", "Replaced"]),
      });
  }

  private objectRefs(refs: ComponentRef[], inst: Instance | undefined): void {
    for (const o of inst?.status?.objects ?? []) {
      if (!SHOWN.has(o.kind)) continue;
      refs.push({
        kind: o.kind,
        apiVersion: o.apiVersion,
        name: o.name,
        ...(o.namespace ? { namespace: o.namespace } : {}),
      });
    }
  }
}
