/**
 * The Instance controller's steps (instance.ts), one table per step, on the in-memory API server: each
 * case sets up the cluster, runs the steps before the one under test for real (so its state is what
 * they leave), runs that step, and checks its outcome (continue, stop with which condition and
 * reason, a retry, what was written).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { findCondition } from "../kube/conditions.js";
import { RetryLater, type StepOutcome } from "../runtime/steps.js";
import { API_VERSION, LABEL_INSTANCE, type Bundle, type Instance } from "./api.js";
import { commitInstanceStatus, instanceSteps, reconcileInstance, type InstanceState } from "./instance.js";
import {
  ALICE,
  cluster,
  configMapYaml,
  createInstance,
  manifests,
  NAMESPACE,
  plainSpec,
  requestedBy,
  unpackedBundle,
  type Cluster,
} from "./stepkit.test.js";

/** The state of a pass over Instance `name` once the steps before `step` ran (as reconcileInstance runs them). */
async function stateBefore(c: Cluster, name: string, step: string): Promise<InstanceState> {
  const inst = c.ctx.instances.get(name)!;
  const s: InstanceState = {
    name,
    generation: inst.metadata.generation ?? 0,
    inst,
    status: { ...(inst.status ?? {}) },
    bundleName: inst.spec.bundle.name,
  };
  for (const x of instanceSteps(c.ctx)) {
    if (x.name === step) break;
    const out = await x.run(s);
    assert.equal(out, undefined, `step ${x.name} before ${step} went on`);
  }
  return s;
}

const run = (c: Cluster, step: string, s: InstanceState): Promise<StepOutcome> | StepOutcome =>
  instanceSteps(c.ctx)
    .find((x) => x.name === step)!
    .run(s);

const getInstance = (c: Cluster, name = "i") => c.api.get<Instance>(API_VERSION, "Instance", name);

/** The reason of the condition of `type` a stop sets (undefined: no stop with it). */
function stoppedWith(out: StepOutcome, type: string): string | undefined {
  return out && "stop" in out ? out.conditions?.find((x) => x.type === type)?.reason : undefined;
}

/** The usual cluster: Bundle `b` unpacked (one ConfigMap, default/shipped), Instance `i` naming it. */
async function installable(approval = "AllowAll"): Promise<Cluster> {
  const c = await cluster(approval);
  await unpackedBundle(c, "b", plainSpec(), { app: "x" });
  await createInstance(c, "i", { bundle: { name: "b" }, selector: { matchLabels: { app: "x" } } });
  return c;
}

/** Instance `i` names Bundle `name` now (a spec alice wrote). */
async function pivotTo(c: Cluster, name: string): Promise<void> {
  const i = await getInstance(c);
  await c.api.replace<Instance>(requestedBy(c.ctx.key, { ...i, spec: { ...i.spec, bundle: { name } } }, ALICE));
}

/** A new Instance `j` naming `bundle`, before `step`. */
async function instanceJ(c: Cluster, bundle: Instance["spec"]["bundle"], step: string): Promise<InstanceState> {
  await createInstance(c, "j", { bundle });
  return stateBefore(c, "j", step);
}

/** Instance `j` of a new Bundle `j` of these manifests, before `step`. */
async function installing(c: Cluster, files: Record<string, string>, step: string): Promise<InstanceState> {
  await manifests(c.api, "j", files);
  await unpackedBundle(c, "j", plainSpec("j"));
  return instanceJ(c, { name: "j" }, step);
}

/** Instance `i` installed, then naming Bundle `b2` (another ConfigMap), before `step`. */
async function upgrading(c: Cluster, step: string): Promise<InstanceState> {
  await reconcileInstance(c.ctx, instanceSteps(c.ctx), "i");
  await manifests(c.api, "v2", { "cm.yaml": configMapYaml("shipped-v2", "default") });
  await unpackedBundle(c, "b2", plainSpec("v2"), { app: "x" });
  await pivotTo(c, "b2");
  return stateBefore(c, "i", step);
}

interface Case {
  name: string;
  step: string;
  given: (c: Cluster) => Promise<InstanceState>;
  /** The outcome: "continue", "stop" (no condition), or [condition type, reason] of the stop. */
  outcome: "continue" | "stop" | [string, string];
  retry?: true;
  after?: (c: Cluster, s: InstanceState) => Promise<void> | void;
}

const CASES: Case[] = [
  {
    name: "signature: no approval recorded goes on",
    step: "signature",
    given: async (c) => stateBefore(c, "i", "signature"),
    outcome: "continue",
  },
  {
    name: "signature: an approval opcat did not sign is dropped, and the status says so at once",
    step: "signature",
    given: async (c) => {
      const i = await getInstance(c);
      const forged = { decision: "Approved" as const, by: "mallory", generation: 1, digest: "x", signature: "no" };
      const approval = { ...forged, bundle: { name: "b", uid: "u", generation: 1 } };
      await c.api.replace<Instance>({ ...i, status: { approval } }, { subresource: "status" });
      return stateBefore(c, "i", "signature");
    },
    outcome: "continue",
    after: async (c) => {
      const st = (await getInstance(c)).status;
      assert.equal(st?.approval, undefined);
      assert.equal(findCondition(st?.conditions, "Approved")?.reason, "ApprovalNotSigned");
    },
  },
  {
    name: "bundle: a Bundle that does not exist",
    step: "bundle",
    given: async (c) => {
      return instanceJ(c, { name: "nope" }, "bundle");
    },
    outcome: ["Unpacked", "BundleNotFound"],
  },
  {
    name: "bundle: an embedded spec makes the Bundle, owned by the Instance",
    step: "bundle",
    given: async (c) => {
      return instanceJ(c, { name: "made", spec: plainSpec() }, "bundle");
    },
    outcome: "continue",
    after: async (c) => {
      const b = await c.api.get<Bundle>(API_VERSION, "Bundle", "made");
      assert.equal(b.metadata.ownerReferences?.[0].name, "j");
    },
  },
  {
    name: "bundle: an embedded spec naming someone else's Bundle is a conflict",
    step: "bundle",
    given: async (c) => {
      return instanceJ(c, { name: "b", spec: plainSpec() }, "bundle");
    },
    outcome: ["Installed", "BundleSpecConflict"],
  },
  {
    name: "bundle: a Bundle of a class this controller does not run stops the pass",
    step: "bundle",
    given: async (c) => {
      await c.api.create({ apiVersion: API_VERSION, kind: "Bundle", metadata: { name: "o" }, spec: { class: "x" } });
      return instanceJ(c, { name: "o" }, "bundle");
    },
    outcome: "stop",
  },
  {
    name: "unpacked: a Bundle not unpacked yet",
    step: "unpacked",
    given: async (c) => {
      await c.api.create({ apiVersion: API_VERSION, kind: "Bundle", metadata: { name: "n" }, spec: plainSpec() });
      return instanceJ(c, { name: "n" }, "unpacked");
    },
    outcome: ["Unpacked", "UnpackPending"],
  },
  {
    name: "unpacked: a Bundle whose unpack failed",
    step: "unpacked",
    given: async (c) => {
      c.allowed.clear(); // its content cannot be read as its requester
      return installing(c, { "cm.yaml": configMapYaml("x", "default") }, "unpacked");
    },
    outcome: ["Unpacked", "UnpackFailed"],
  },
  {
    name: "unpacked: Done at its generation goes on with its digest",
    step: "unpacked",
    given: async (c) => stateBefore(c, "i", "unpacked"),
    outcome: "continue",
    after: (_c, s) => assert.match(s.digest ?? "", /^sha256:/),
  },
  {
    name: "content: every object labelled with and owned by the Instance",
    step: "content",
    given: async (c) => stateBefore(c, "i", "content"),
    outcome: "continue",
    after: (_c, s) => {
      const o = s.desired!.objects[0];
      assert.equal(o.metadata.labels?.[LABEL_INSTANCE], "i");
      assert.equal(o.metadata.ownerReferences?.[0].uid, s.inst.metadata.uid);
    },
  },
  {
    name: "content: content missing from this store (another replica unpacked it) asks for its Bundle",
    step: "content",
    given: async (c) => {
      const s = await stateBefore(c, "i", "content");
      c.ctx.stateDir = `${c.ctx.stateDir}/elsewhere`;
      return s;
    },
    outcome: "stop",
    after: (c) => assert.equal(c.bundleQueue.length, 1),
  },
  {
    name: "protected: an object in opcat's namespace is refused",
    step: "protected",
    given: async (c) => {
      return installing(c, { "cm.yaml": configMapYaml("x", NAMESPACE) }, "protected");
    },
    outcome: ["Installed", "ProtectedObject"],
  },
  {
    name: "crdGroups: a CRD in a built-in group is refused",
    step: "crdGroups",
    given: async (c) => {
      const crd =
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n" +
        "  name: clusterrolebindings.rbac.authorization.k8s.io\nspec:\n  group: rbac.authorization.k8s.io\n" +
        "  names:\n    kind: ClusterRoleBinding\n    plural: clusterrolebindings\n  scope: Cluster\n";
      return installing(c, { "crd.yaml": crd }, "crdGroups");
    },
    outcome: ["Installed", "ForbiddenAPIGroup"],
  },
  {
    name: "approval: AllowAll signs an approval, written before anything is made from it",
    step: "approval",
    given: async (c) => stateBefore(c, "i", "approval"),
    outcome: "continue",
    after: async (c, s) => {
      assert.equal(s.approved?.reason, "AllowAll");
      assert.equal((await getInstance(c)).status?.approval?.reason, "AllowAll");
    },
  },
  {
    name: "approval: DenyAll waits for a user, naming the content to approve",
    step: "approval",
    given: async (c) => {
      const pc = await c.api.get(API_VERSION, "ProvisionerClass", "plain");
      await c.api.replace({ ...pc, parameters: { approval: "DenyAll" } } as typeof pc);
      return stateBefore(c, "i", "approval");
    },
    outcome: ["Approved", "AwaitingApproval"],
    after: (_c, s) => assert.match(s.status.contentDigest ?? "", /^sha256:/),
  },
  {
    name: "approval: UserPermission for an Instance nobody verifiable asked for waits",
    step: "approval",
    given: async (c) => {
      const pc = await c.api.get(API_VERSION, "ProvisionerClass", "plain");
      await c.api.replace({ ...pc, parameters: { approval: "UserPermission" } } as typeof pc);
      await c.api.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "j" },
        spec: { bundle: { name: "b" } },
      });
      return stateBefore(c, "j", "approval");
    },
    outcome: ["Approved", "RequesterUnverified"],
  },
  {
    name: "unchanged: an Instance this process did not apply goes on (it is applied)",
    step: "unchanged",
    given: async (c) => stateBefore(c, "i", "unchanged"),
    outcome: "continue",
  },
  {
    name: "unchanged: installed here, same Bundle, content and objects: nothing applied, no Event",
    step: "unchanged",
    given: async (c) => {
      await reconcileInstance(c.ctx, instanceSteps(c.ctx), "i");
      c.events.length = 0;
      return stateBefore(c, "i", "unchanged");
    },
    outcome: ["Installed", "InstallationSucceeded"],
    after: (c) => assert.deepEqual(c.events, []),
  },
  {
    name: "crdSafety: no CRDs goes on",
    step: "crdSafety",
    given: async (c) => stateBefore(c, "i", "crdSafety"),
    outcome: "continue",
  },
  {
    name: "collisions: an object that exists and is not the Instance's is never adopted (tried again)",
    step: "collisions",
    given: async (c) => {
      await c.api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shipped", namespace: "default" } });
      return stateBefore(c, "i", "collisions");
    },
    outcome: ["Installed", "ObjectCollision"],
    retry: true,
  },
  {
    name: "alive: an Instance deleted meanwhile makes nothing",
    step: "alive",
    given: async (c) => {
      const s = await stateBefore(c, "i", "alive");
      await c.api.delete(API_VERSION, "Instance", "i");
      return s;
    },
    outcome: "stop",
  },
  {
    name: "alive: a newer spec meanwhile stops the pass (its update brings the next)",
    step: "alive",
    given: async (c) => {
      const s = await stateBefore(c, "i", "alive");
      const i = await getInstance(c);
      await c.api.replace<Instance>({ ...i, spec: { ...i.spec, crdUpgradeSafety: "None" } });
      return s;
    },
    outcome: "stop",
  },
  {
    name: "pivot: the target set is recorded (pending) before anything is applied",
    step: "pivot",
    given: async (c) => stateBefore(c, "i", "pivot"),
    outcome: "continue",
    after: async (c, s) => {
      const { record } = await c.ctx.records.read(s.inst);
      assert.deepEqual(record?.pending, [
        { apiVersion: "v1", kind: "ConfigMap", name: "shipped", namespace: "default" },
      ]);
    },
  },
  {
    name: "pivot: from another installed Bundle, Upgrading is written at once",
    step: "pivot",
    given: (c) => upgrading(c, "pivot"),
    outcome: "continue",
    after: async (c) => {
      const installed = findCondition((await getInstance(c)).status?.conditions, "Installed");
      assert.equal(installed?.reason, "Upgrading");
    },
  },
  {
    name: "apply: every object applied",
    step: "apply",
    given: async (c) => stateBefore(c, "i", "apply"),
    outcome: "continue",
    after: async (c) => {
      const cm = await c.api.get("v1", "ConfigMap", "shipped", "default");
      assert.equal(cm.metadata.labels?.[LABEL_INSTANCE], "i");
    },
  },
  {
    name: "prune: what the new Bundle no longer has goes, and the record says what is applied",
    step: "prune",
    given: (c) => upgrading(c, "prune"),
    outcome: "continue",
    after: async (c, s) => {
      assert.equal(await c.api.tryGet("v1", "ConfigMap", "shipped", "default"), undefined);
      assert.ok(await c.api.tryGet("v1", "ConfigMap", "shipped-v2", "default"));
      assert.equal((await c.ctx.records.read(s.inst)).record?.pending, undefined);
      assert.equal(c.ctx.appliedHere.get("i"), s.inst.metadata.uid);
    },
  },
  {
    name: "replaced: an older Bundle the Instance selects is marked Replaced",
    step: "replaced",
    given: async (c) => {
      await manifests(c.api, "v0", { "cm.yaml": configMapYaml("old", "default") });
      await unpackedBundle(c, "b0", plainSpec("v0"), { app: "x" });
      return stateBefore(c, "i", "replaced");
    },
    outcome: "continue",
    after: async (c) => {
      const b0 = await c.api.get<Bundle>(API_VERSION, "Bundle", "b0");
      assert.equal(findCondition(b0.status?.conditions, "Replaced")?.status, "True");
      assert.equal(b0.status?.unpacked, "Done", "the Bundle controller's status stays");
    },
  },
  {
    name: "installed: the first install, with an Installed Event",
    step: "installed",
    given: async (c) => stateBefore(c, "i", "installed"),
    outcome: ["Installed", "InstallationSucceeded"],
    after: (_c, s) => assert.equal(s.status.activeBundle, "b"),
  },
];

for (const k of CASES)
  test(`Instance step ${k.name}`, async () => {
    const c = await installable();
    const s = await k.given(c);
    const out: StepOutcome = await run(c, k.step, s);
    const retry = out && "retry" in out ? out.retry : undefined;
    if (k.outcome === "continue") assert.equal(out, undefined);
    else if (k.outcome === "stop") assert.deepEqual(out, { stop: true });
    else assert.equal(stoppedWith(out, k.outcome[0]), k.outcome[1]);
    assert.equal(retry, k.retry);
    await k.after?.(c, s);
  });

test("Instance step apply: an object that cannot be applied: InstallFailed written, an Event, thrown", async () => {
  const c = await installable();
  const s = await stateBefore(c, "i", "apply");
  s.desired!.objects.push({ apiVersion: "example.com/v1", kind: "Unserved", metadata: { name: "u" } });
  await assert.rejects(Promise.resolve(run(c, "apply", s)));
  const installed = findCondition((await getInstance(c)).status?.conditions, "Installed");
  assert.equal(installed?.reason, "InstallFailed");
  assert.deepEqual(c.events.at(-1), ["i", "Warning", "InstallFailed"]);
});

test("Instance pass: installed once, with its Event; the availability controller's conditions stay", async () => {
  const c = await installable();
  const s = await stateBefore(c, "i", "installed");
  // the availability controller writes its conditions while the pass runs
  const i = await getInstance(c);
  const available = { type: "Available", status: "True" as const, reason: "NoWorkloads", message: "m" };
  const conditions = [...(i.status?.conditions ?? []), { ...available, lastTransitionTime: "2026-01-01T00:00:00Z" }];
  await c.api.replace<Instance>({ ...i, status: { ...i.status, conditions } }, { subresource: "status" });
  await run(c, "installed", s);
  s.status = { ...s.status, activeBundle: "b" };
  assert.equal(await commitInstanceStatus(c.ctx.client, s), true);
  const st = (await getInstance(c)).status;
  assert.equal(st?.activeBundle, "b");
  assert.equal(findCondition(st?.conditions, "Available")?.reason, "NoWorkloads");
  await reconcileInstance(c.ctx, instanceSteps(c.ctx), "i");
  assert.equal(findCondition((await getInstance(c)).status?.conditions, "Installed")?.status, "True");
});

test("Instance commit: an approval written meanwhile is never overwritten; the pass is tried again", async () => {
  const c = await installable("DenyAll");
  const s = await stateBefore(c, "i", "approval");
  await run(c, "approval", s);
  const i = await getInstance(c);
  const approval = { decision: "Approved" as const, by: "alice", generation: 1, digest: "d", signature: "s" };
  await c.api.replace<Instance>(
    { ...i, status: { ...i.status, approval: { ...approval, bundle: { name: "b", uid: "u", generation: 1 } } } },
    { subresource: "status" },
  );
  await assert.rejects(commitInstanceStatus(c.ctx.client, s), RetryLater);
  assert.equal((await getInstance(c)).status?.approval?.by, "alice");
});

test("Instance commit: an Instance gone meanwhile gets nothing (false)", async () => {
  const c = await installable();
  const s = await stateBefore(c, "i", "installed");
  await c.api.delete(API_VERSION, "Instance", "i");
  s.status = { ...s.status, activeBundle: "b" };
  assert.equal(await commitInstanceStatus(c.ctx.client, s), false);
});
