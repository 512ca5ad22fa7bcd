/**
 * The resolveset provisioner (`deppy.io/resolver`, seed 002): it unpacks `deppy.resolveset` Bundles
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
import { isConflict, type KubeClient, type KubeObject } from "../client.js";
import { findCondition, setCondition, type Condition, type NewCondition } from "../conditions.js";
import { EventRecorder } from "../events.js";
import { Informer } from "../informer.js";
import { WorkQueue } from "../queue.js";
import { readBundleDirectory } from "../../bundle/index.js";
import {
  API_VERSION as RUKPAK_API_VERSION,
  type Bundle,
  type BundleStatus,
  type Instance,
  type InstanceStatus,
  type ProvisionerClass,
} from "../rukpak/api.js";
import { contentExists } from "../rukpak/content.js";
import { convertRegistryV1 } from "../rukpak/convert.js";
import { canI, grantedRulesInCluster, type GrantedRule } from "../rukpak/permissions.js";
import type { ProvisionerIdentity } from "../rukpak/provisioner.js";
import {
  approvalCondition,
  approvalMismatch,
  madeBy,
  sameJson,
  signApproval,
  verifiedRequester,
  type ApprovalRecord,
  type ApprovalSubject,
  type SigningKey,
} from "../rukpak/trust.js";
import { newPermissions } from "./android.js";
import {
  ANNOTATION_BUNDLE,
  ANNOTATION_CATALOG,
  ANNOTATION_CHANNEL,
  ANNOTATION_PROPERTIES,
  ANNOTATION_PROPERTIES_HASH,
  ANNOTATION_VERSION,
  LABEL_INPUT,
  LABEL_PACKAGE,
  propertiesHash,
  RESOLVESET_PROVISIONER,
} from "./api.js";
import { formatPropertiesAnnotation, parseResolveset, type ResolvesetEntry } from "./resolver.js";

export type ResolvesetApproval = "AllowAll" | "DenyAll" | "Android";

export interface ResolvesetOptions {
  client: KubeClient;
  /** The RukPak content store (where the operator provisioner unpacks registry+v1 bundles). */
  bundleStore: string;
  log?: (msg: string) => void;
  /** Verifies requester signatures and signs approvals (rukpak/trust.ts). */
  key: SigningKey;
  /** The controllers' own user name: Bundles and Instances they made carry it as signed requester. */
  self: string;
}

/**
 * Which ProvisionerClass an entry's Bundle gets: `matchBundle`
 * (`.schema == <schema>` selectors) first, then `matchSchema`.
 */
export function classForEntry(pc: ProvisionerClass, e: { schema: string }): string | undefined {
  const p = pc.parameters ?? {};
  for (const m of (p.matchBundle as { selector?: string; class?: string }[] | undefined) ?? []) {
    const sel = /^\s*\.schema\s*==\s*"?([^"\s]+)"?\s*$/.exec(m.selector ?? "");
    if (sel && sel[1] === e.schema && m.class) return m.class;
  }
  for (const m of (p.matchSchema as { schema?: string; class?: string }[] | undefined) ?? [])
    if (m.schema === e.schema && m.class) return m.class;
  return undefined;
}

export function resolvesetApprovalOf(pc: ProvisionerClass | undefined): ResolvesetApproval {
  const a = pc?.parameters?.approval;
  return a === "AllowAll" || a === "DenyAll" ? a : "Android";
}

/**
 * A provisioner by the identity of `rukpak/provisioner.ts` (its id and the content it accepts); what a
 * resolveset becomes (entry Bundles and package Instances) is made by its own reconcile, not `desired`.
 */
export class ResolvesetProvisioner implements ProvisionerIdentity {
  readonly id = RESOLVESET_PROVISIONER;
  readonly formats = ["deppy.resolveset"] as const;
  readonly classes: Informer<ProvisionerClass>;
  readonly bundles: Informer<Bundle>;
  readonly instances: Informer<Instance>;
  readonly queue: WorkQueue;
  readonly events: EventRecorder;
  private readonly client: KubeClient;
  private readonly log: (m: string) => void;
  private running: Promise<unknown> | undefined;

  constructor(private readonly opts: ResolvesetOptions) {
    this.client = opts.client;
    this.log = opts.log ?? (() => {});
    const onError = (e: unknown) => this.log(`resolveset watch: ${(e as Error).message}`);
    this.classes = new Informer<ProvisionerClass>(this.client, RUKPAK_API_VERSION, "ProvisionerClass", { onError });
    this.bundles = new Informer<Bundle>(this.client, RUKPAK_API_VERSION, "Bundle", { onError });
    this.instances = new Informer<Instance>(this.client, RUKPAK_API_VERSION, "Instance", { onError });
    this.queue = new WorkQueue({
      concurrency: 2,
      baseDelay: 300,
      maxDelay: 30_000,
      onError: (k, e, n) => this.log(`resolveset ${k}: attempt ${n} failed: ${(e as Error).message}`),
    });
    this.events = new EventRecorder(this.client, "opcat-resolveset");
    const all = () => {
      for (const b of this.bundles.list()) if (this.ours(b.spec.class)) this.queue.add(`bundle/${b.metadata.name}`);
      for (const i of this.instances.list())
        if (this.isResolvesetInstance(i)) this.queue.add(`instance/${i.metadata.name}`);
    };
    this.classes.on(all);
    this.bundles.on((_, b) => {
      if (this.ours(b.spec.class)) this.queue.add(`bundle/${b.metadata.name}`);
      if (b.metadata.labels?.[LABEL_PACKAGE] !== undefined || this.ours(b.spec.class)) this.requeueInstances();
    });
    this.instances.on((_, i) => {
      if (this.isResolvesetInstance(i)) this.queue.add(`instance/${i.metadata.name}`);
      else if (i.metadata.labels?.[LABEL_PACKAGE] !== undefined) this.requeueInstances();
    });
  }

  private requeueInstances(): void {
    for (const i of this.instances.list())
      if (this.isResolvesetInstance(i)) this.queue.add(`instance/${i.metadata.name}`);
  }

  private ours(cls: string | undefined): ProvisionerClass | undefined {
    const pc = cls ? this.classes.get(cls) : undefined;
    return pc?.provisioner === this.id ? pc : undefined;
  }

  private isResolvesetInstance(i: Instance): boolean {
    const cls = i.spec.bundle.spec?.class ?? this.bundles.get(i.spec.bundle.name)?.spec.class;
    return this.ours(cls) !== undefined;
  }

  async start(): Promise<void> {
    await Promise.all([this.classes.start(), this.bundles.start(), this.instances.start()]);
    this.running = this.queue.run((k) =>
      k.startsWith("bundle/") ? this.reconcileBundle(k.slice(7)) : this.reconcileInstance(k.slice(9)),
    );
  }

  async stop(): Promise<void> {
    this.classes.stop();
    this.bundles.stop();
    this.instances.stop();
    this.queue.stop();
    await this.running;
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
      const cm = await this.client.tryGet<KubeObject & { data?: Record<string, string> }>(
        "v1",
        "ConfigMap",
        m.configMap.name,
        m.configMap.namespace,
      );
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

  async reconcileBundle(name: string): Promise<void> {
    const b = this.bundles.get(name);
    if (!b || b.metadata.deletionTimestamp || !this.ours(b.spec.class)) return;
    const gen = b.metadata.generation ?? 0;
    if (b.status?.unpacked === "Done" && b.status.observedGeneration === gen) return;
    const r = await this.entriesOf(b);
    let status: BundleStatus;
    if ("entries" in r) {
      const msg =
        `Successfully unpacked the resolveset (${r.entries.length} ` +
        `${r.entries.length === 1 ? "entry" : "entries"})`;
      status = {
        ...b.status,
        unpacked: "Done",
        reason: "UnpackSuccessful",
        message: msg,
        digest: r.digest,
        format: this.formats[0],
        objects: ["/objects/resolved.bundles.json"],
        conditions: setCondition(b.status?.conditions, {
          type: "Unpacked",
          status: "True",
          reason: "UnpackSuccessful",
          message: msg,
          observedGeneration: gen,
        }).conditions,
        observedGeneration: gen,
      };
    } else {
      status = {
        ...b.status,
        unpacked: "Failed",
        reason: r.reason,
        message: r.message,
        conditions: setCondition(b.status?.conditions, {
          type: "Unpacked",
          status: "False",
          reason: r.reason,
          message: r.message,
          observedGeneration: gen,
        }).conditions,
        observedGeneration: gen,
      };
      this.events.emit(b, "Warning", r.reason, r.message);
    }
    await this.client.replace<Bundle>({ ...b, status }, { subresource: "status" });
  }

  /** The RBAC rules a registry+v1 Bundle grants, from the operator provisioner's content store. */
  /**
   * The complete grant of a registry+v1 Bundle: the rules of the roles it ships and of the existing
   * roles its bindings reference (a binding to `cluster-admin` grants everything).
   */
  private async rulesOf(b: Bundle | undefined): Promise<GrantedRule[] | undefined> {
    if (b?.status?.unpacked !== "Done" || !b.status.digest) return undefined;
    const dir = contentExists(this.opts.bundleStore, b.status.digest);
    if (!dir) return undefined;
    if (b.status.format !== "registry+v1") return [];
    let objects: KubeObject[];
    try {
      objects = convertRegistryV1(readBundleDirectory(dir), {}).objects;
    } catch {
      return undefined;
    }
    return grantedRulesInCluster(this.client, objects);
  }

  /** True when the controllers made `o` (its signed requester is their own identity). */
  private madeBySelf(o: KubeObject): boolean {
    return madeBy(this.opts.key, this.opts.self, o);
  }

  private async setStatus(
    inst: Instance,
    mutate: (s: InstanceStatus & { permissions?: string[] }) => InstanceStatus & { permissions?: string[] },
  ): Promise<Instance> {
    // optimistic concurrency on the object the conditions were computed from: a user's approval
    // written meanwhile makes this a conflict (retried with what they wrote), never a lost update
    const next = mutate({ ...(inst.status ?? {}) });
    if (JSON.stringify(next) === JSON.stringify(inst.status ?? {})) return inst;
    return this.client.replace<Instance>({ ...inst, status: next }, { subresource: "status" });
  }

  private conds(inst: Instance, ...cs: NewCondition[]): Condition[] {
    let list = inst.status?.conditions ?? [];
    for (const c of cs)
      list = setCondition(list, { observedGeneration: inst.metadata.generation ?? 0, ...c }).conditions;
    return list;
  }

  async reconcileInstance(name: string): Promise<void> {
    const cached = this.instances.get(name);
    if (!cached || cached.metadata.deletionTimestamp) return;
    // the cache may not have seen its deletion yet: a deleted resolveset makes nothing again
    let inst = await this.client.getLive<Instance>(RUKPAK_API_VERSION, "Instance", name, { uid: cached.metadata.uid });
    if (!inst) return;
    const gen = inst.metadata.generation ?? 0;
    const rsName = inst.spec.bundle.name;
    const rsBundle = this.bundles.get(rsName);
    const pc = this.ours(rsBundle?.spec.class ?? inst.spec.bundle.spec?.class);
    if (!pc) return;
    if (rsBundle?.status?.unpacked !== "Done") {
      const failed = rsBundle?.status?.unpacked === "Failed";
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, {
          type: "Unpacked",
          status: "False",
          reason: failed ? "UnpackFailed" : "UnpackPending",
          message: failed
            ? `resolveset ${rsName}: ${rsBundle?.status?.message}`
            : `waiting for resolveset Bundle ${rsName}`,
        }),
        observedGeneration: gen,
      }));
      return;
    }
    const r = await this.entriesOf(rsBundle);
    if (!("entries" in r)) throw new Error(r.message);
    const input = inst.metadata.labels?.[LABEL_INPUT] ?? "";

    // 1. one Bundle per entry (unpacking is harmless, and Android approval needs the content)
    const entryBundles: { e: ResolvesetEntry; b: Bundle | undefined }[] = [];
    const unmatched: string[] = [];
    const squatted: string[] = [];
    for (const e of r.entries) {
      const cls = classForEntry(pc, e);
      if (!cls) {
        unmatched.push(`${e.name} (schema ${e.schema})`);
        continue;
      }
      if (!e.image) {
        // an installed bundle the catalogs no longer have: keep its Bundle
        const kept = this.bundles
          .list()
          .find(
            (x) =>
              this.madeBySelf(x) &&
              x.metadata.labels?.[LABEL_PACKAGE] === e.package &&
              (x.metadata.annotations?.[ANNOTATION_BUNDLE] ?? x.metadata.name) === e.name,
          );
        if (kept) entryBundles.push({ e, b: kept });
        else unmatched.push(`${e.name} (no image, and no Bundle of it on the cluster)`);
        continue;
      }
      const ref = e.image.includes("://") ? e.image : `docker://${e.image}`;
      // one Bundle per bundle name; the same name from another catalog with another image gets its own.
      // Only a Bundle the controllers made with exactly this spec is taken: one someone else made
      // under that name (other refs, mounts, secrets) is never adopted
      const mine = (x: Bundle | undefined) =>
        x !== undefined && this.madeBySelf(x) && sameJson(x.spec, { class: cls, refs: [ref] });
      const hashed = `${e.name}-${createHash("sha256").update(ref).digest("hex").slice(0, 8)}`;
      let bname = e.name;
      let b = this.bundles.get(bname) ?? (await this.client.tryGet<Bundle>(RUKPAK_API_VERSION, "Bundle", bname));
      if (b && !mine(b)) {
        bname = hashed;
        b = this.bundles.get(bname) ?? (await this.client.tryGet<Bundle>(RUKPAK_API_VERSION, "Bundle", bname));
        if (b && !mine(b)) {
          squatted.push(`${e.name} (Bundles ${e.name} and ${hashed} exist and were not made by opcat for it)`);
          continue;
        }
      }
      const rsOwner = {
        apiVersion: RUKPAK_API_VERSION,
        kind: "Instance",
        name,
        uid: inst.metadata.uid!,
        blockOwnerDeletion: false,
      };
      if (b && !(b.metadata.ownerReferences ?? []).some((o) => o.uid === rsOwner.uid)) {
        // shared by several resolvesets: it goes when the last of them goes
        b = await this.client
          .mergePatch<Bundle>(RUKPAK_API_VERSION, "Bundle", b.metadata.name, {
            metadata: { ownerReferences: [...(b.metadata.ownerReferences ?? []), rsOwner] },
          })
          .catch(() => b);
      }
      if (!b) {
        const props = formatPropertiesAnnotation(e.properties);
        b = await this.client
          .create<Bundle>({
            apiVersion: RUKPAK_API_VERSION,
            kind: "Bundle",
            metadata: {
              name: bname,
              labels: { [LABEL_PACKAGE]: e.package },
              ownerReferences: [rsOwner],
              annotations: {
                [ANNOTATION_BUNDLE]: e.name,
                [ANNOTATION_VERSION]: e.version,
                [ANNOTATION_CATALOG]: e.catalog,
                [ANNOTATION_CHANNEL]: e.channel,
                [ANNOTATION_PROPERTIES]: props,
                [ANNOTATION_PROPERTIES_HASH]: propertiesHash(props),
              },
            },
            spec: { class: cls, refs: [ref] },
          })
          .catch(async (err) => {
            if (!isConflict(err)) return Promise.reject(err);
            const made = await this.client.get<Bundle>(RUKPAK_API_VERSION, "Bundle", bname);
            if (!mine(made)) throw new Error(`Bundle ${bname} was made meanwhile by someone else`);
            return made;
          });
      }
      entryBundles.push({ e, b });
    }
    if (squatted.length > 0) {
      const msg = `${squatted.join(", ")}: delete those Bundles or ask their owner to`;
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, { type: "Installed", status: "False", reason: "BundleConflict", message: msg }),
        observedGeneration: gen,
      }));
      this.events.emit(inst, "Warning", "BundleConflict", msg);
      return;
    }
    if (unmatched.length > 0) {
      const msg =
        `no ProvisionerClass for ${unmatched.join(", ")}: add a matchBundle ` +
        `or matchSchema entry to ProvisionerClass ${pc.metadata.name}`;
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, { type: "Installed", status: "False", reason: "NoMatchingClass", message: msg }),
        observedGeneration: gen,
      }));
      this.events.emit(inst, "Warning", "NoMatchingClass", msg);
      return;
    }
    const failed = entryBundles.filter((x) => x.b?.status?.unpacked === "Failed");
    if (failed.length > 0) {
      const msg = failed.map((x) => `${x.e.name}: ${x.b?.status?.message ?? ""}`).join("; ");
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, { type: "Unpacked", status: "False", reason: "UnpackFailed", message: msg }),
        observedGeneration: gen,
      }));
      return;
    }
    const pending = entryBundles.filter(
      (x) => x.b?.status?.unpacked !== "Done" || x.b.status.observedGeneration !== x.b.metadata.generation,
    );
    if (pending.length > 0) {
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, {
          type: "Unpacked",
          status: "False",
          reason: "UnpackPending",
          message: `waiting for ${pending.map((x) => x.e.name).join(", ")} to be unpacked`,
        }),
        observedGeneration: gen,
      }));
      return;
    }
    const unpacked: NewCondition = {
      type: "Unpacked",
      status: "True",
      reason: "UnpackSuccessful",
      message:
        `unpacked ${entryBundles.length} bundle${entryBundles.length === 1 ? "" : "s"}: ` +
        `${entryBundles.map((x) => x.e.name).join(", ")}`,
    };

    // 2. approval: a signed decision naming this generation, the resolveset Bundle and its content
    const subject: ApprovalSubject = {
      instanceUid: inst.metadata.uid!,
      generation: gen,
      bundle: { name: rsName, uid: rsBundle.metadata.uid!, generation: rsBundle.metadata.generation ?? 0 },
      // the resolveset and every entry's content: a moved tag under an entry asks again
      digest: `sha256:${createHash("sha256")
        .update(
          JSON.stringify([
            rsBundle.status?.digest ?? r.digest,
            ...entryBundles.map(({ b }) => [
              b?.metadata.name,
              b?.metadata.uid,
              b?.metadata.generation,
              b?.status?.digest,
            ]),
          ]),
        )
        .digest("hex")}`,
    };
    const recorded = inst.status?.approval;
    const mismatch = approvalMismatch(this.opts.key, recorded, subject);
    if (mismatch !== undefined) {
      const policy = resolvesetApprovalOf(pc);
      let c: NewCondition;
      let permissions: string[] | undefined;
      if (recorded && mismatch.startsWith("denied by "))
        c = {
          type: "Approved",
          status: "False",
          reason: "DeniedByUser",
          message: `${mismatch}; approve it with kubectl instance approve ${name}`,
        };
      else if (policy === "AllowAll")
        c = {
          type: "Approved",
          status: "True",
          reason: "AllowAll",
          message: `approved by ProvisionerClass ${pc.metadata.name} (approval: AllowAll)`,
        };
      else if (policy === "DenyAll")
        c = {
          type: "Approved",
          status: "False",
          reason: "AwaitingApproval",
          message: `every change needs review (approval: DenyAll): kubectl instance approve ${name}`,
        };
      else {
        permissions = [];
        const unknown: string[] = [];
        for (const { e, b } of entryBundles) {
          const next = await this.rulesOf(b);
          const pkgInst = this.instances.get(e.package);
          const activeName = pkgInst?.status?.activeBundle;
          const current = activeName ? await this.rulesOf(this.bundles.get(activeName)) : [];
          if (!next || !current) {
            unknown.push(e.name);
            continue;
          }
          const change =
            activeName && activeName !== b?.metadata.name
              ? ` (replacing ${activeName})`
              : activeName
                ? ""
                : " (new install)";
          for (const p of newPermissions(current, next)) permissions.push(`${e.name}${change}: ${p}`);
        }
        if (unknown.length > 0)
          c = {
            type: "Approved",
            status: "False",
            reason: "PermissionsUnknown",
            message:
              `the permissions of ${unknown.join(", ")} could not be ` +
              `read; approve with kubectl instance approve ${name}`,
          };
        else if (permissions.length === 0)
          c = {
            type: "Approved",
            status: "True",
            reason: "NoNewPermissions",
            message: "no bundle needs a permission the bundle it replaces does not have (approval: Android)",
          };
        else
          c = {
            type: "Approved",
            status: "False",
            reason: "NewPermissions",
            message:
              `${permissions.length} new permission${permissions.length === 1 ? "" : "s"} (approval: ` +
              `Android); review with kubectl instance approve --show ${name}: ` +
              `${permissions.slice(0, 10).join("; ")}` +
              `${permissions.length > 10 ? `; and ${permissions.length - 10} more` : ""}`,
          };
      }
      const approval: ApprovalRecord | undefined =
        c.status === "True"
          ? signApproval(this.opts.key, subject.instanceUid, {
              decision: "Approved",
              reason: c.reason,
              by: c.reason === "AllowAll" ? `ProvisionerClass ${pc.metadata.name}` : "Android (no new permissions)",
              generation: gen,
              bundle: subject.bundle,
              digest: subject.digest,
            })
          : undefined;
      inst = await this.setStatus(inst, (s) => ({
        ...s,
        ...(permissions ? { permissions } : {}),
        ...(approval ? { approval } : { contentDigest: subject.digest }),
        conditions: this.conds(inst!, unpacked, c),
        observedGeneration: gen,
      }));
      if (!approval) {
        this.events.emit(inst, "Normal", c.reason, c.message);
        return;
      }
    } else if (findCondition(inst.status?.conditions, "Approved")?.status !== "True") {
      const c = approvalCondition(recorded!);
      inst = await this.setStatus(inst, (s) => ({ ...s, conditions: this.conds(inst!, unpacked, c) }));
    }

    // 3. one Instance per package
    const owner = {
      apiVersion: RUKPAK_API_VERSION,
      kind: "Instance",
      name,
      uid: inst.metadata.uid!,
      blockOwnerDeletion: false,
    };
    const notReady: string[] = [];
    for (const { e, b } of entryBundles) {
      const bn = b?.metadata.name ?? e.name;
      const cur = await this.client.tryGet<Instance>(RUKPAK_API_VERSION, "Instance", e.package);
      if (cur && !this.madeBySelf(cur)) {
        // an Instance of that name made (or changed) by someone else is never taken over
        notReady.push(`${e.package} (Instance ${e.package} exists and was not made by opcat: delete it first)`);
        continue;
      }
      const owners = [...(cur?.metadata.ownerReferences ?? []).filter((o) => o.uid !== owner.uid), owner];
      let applied = cur;
      if (
        !cur ||
        cur.spec.bundle.name !== bn ||
        (cur.metadata.ownerReferences ?? []).every((o) => o.uid !== owner.uid)
      ) {
        // asked again right before writing: the steps above took time, and a package Instance made
        // (or given this owner) for a resolveset being deleted would outlive it
        if (!(await this.client.getLive(RUKPAK_API_VERSION, "Instance", name, { uid: owner.uid }))) return;
        applied = await this.client.apply<Instance>({
          apiVersion: RUKPAK_API_VERSION,
          kind: "Instance",
          metadata: {
            name: e.package,
            labels: { [LABEL_PACKAGE]: e.package, ...(input ? { [LABEL_INPUT]: input } : {}) },
            ownerReferences: owners,
          },
          spec: { selector: { matchLabels: { [LABEL_PACKAGE]: e.package } }, bundle: { name: bn } },
        });
      }
      // approved through the resolveset: the package Instance needs no second review; the approval
      // names its generation, the entry's Bundle and that Bundle's content
      if (applied && b?.metadata.uid && b.status?.digest) {
        const g = applied.metadata.generation ?? 0;
        const want: ApprovalSubject = {
          instanceUid: applied.metadata.uid!,
          generation: g,
          bundle: { name: bn, uid: b.metadata.uid, generation: b.metadata.generation ?? 0 },
          digest: b.status.digest,
        };
        if (approvalMismatch(this.opts.key, applied.status?.approval, want) !== undefined) {
          const approval = signApproval(this.opts.key, want.instanceUid, {
            decision: "Approved",
            reason: "ResolvesetApproved",
            by: `resolveset ${rsName} (Instance ${name})`,
            generation: g,
            bundle: want.bundle,
            digest: want.digest,
          });
          const conditions = setCondition(applied.status?.conditions, {
            type: "Approved",
            status: "True",
            reason: "ResolvesetApproved",
            message: `approved with resolveset ${rsName} (Instance ${name})`,
            observedGeneration: g,
          }).conditions;
          // a conflict (the operator provisioner wrote this Instance's status meanwhile) fails the pass,
          // which is retried with backoff: swallowed, no later event on that Instance might bring it back
          await this.client.replace<Instance>(
            { ...applied, status: { ...(applied.status ?? {}), approval, conditions } },
            { subresource: "status" },
          );
        }
      }
      const now = await this.client.tryGet<Instance>(RUKPAK_API_VERSION, "Instance", e.package);
      const ic = findCondition(now?.status?.conditions, "Installed");
      if (!(ic?.status === "True" && now?.status?.activeBundle === bn))
        notReady.push(
          `${e.package} (${ic && ic.status === "False" ? `${ic.reason}: ${ic.message}` : `installing ${bn}`})`,
        );
    }
    if (notReady.length > 0) {
      await this.setStatus(inst, (s) => ({
        ...s,
        conditions: this.conds(inst!, unpacked, {
          type: "Installed",
          status: "False",
          reason: "Installing",
          message: `waiting for ${notReady.join(", ")}`,
        }),
        observedGeneration: gen,
      }));
      return;
    }
    const prev = inst.status?.activeBundle;
    const msg = `Instantiated resolveset ${rsName}: ${entryBundles.map((x) => x.e.name).join(", ") || "no bundles"}`;
    await this.setStatus(inst, (s) => ({
      ...s,
      activeBundle: rsName,
      objects: entryBundles.map((x) => ({ apiVersion: RUKPAK_API_VERSION, kind: "Instance", name: x.e.package })),
      conditions: this.conds(inst!, unpacked, {
        type: "Installed",
        status: "True",
        reason: "InstallationSucceeded",
        message: msg,
      }),
      observedGeneration: gen,
    }));
    if (prev !== rsName) this.events.emit(inst, "Normal", "Installed", msg);
  }
}
