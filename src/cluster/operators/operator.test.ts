/**
 * The Operator controller's steps (spec, bundleInstance, input, catalogRefs, catalogInstalled, updates,
 * installedVersion, available), each outcome a named case: the real controller on the in-memory API
 * server (runtime/controllerkit.test.ts), its informers watching it; the resolver's findings are given
 * through the small interface the controller reads them from.
 */
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { inputFor, OperatorController } from "./operator.js";
import { OPERATOR_API_VERSION, operatorLabel, type Operator } from "./api.js";
import { FakeKube } from "../kube/fake.js";
import { API_VERSION as RUKPAK, type Bundle, type Instance } from "../rukpak/api.js";
import { ANNOTATION_BUNDLE, ANNOTATION_VERSION, DEPPY_API_VERSION, type Input } from "../deppy/api.js";
import { resolvesetInstanceName } from "../deppy/resolver.js";
import { SigningKey } from "../rukpak/trust.js";
import { requestedBy } from "../rukpak/stepkit.test.js";
import type { InstalledStatus } from "../../resolve/index.js";
import { condition, customResource, settled } from "../runtime/controllerkit.test.js";

test("an Operator becomes an Input as seed 002 describes", () => {
  const op = {
    metadata: { name: "plumbus" },
    spec: {
      catalog: { name: "community", namespace: "my-ns", package: "plumbus", channel: "stable" },
      version: ">2.0.0 <3.0.0",
      constraints: [{ type: "olm.cel", value: "true" }],
    },
  } as unknown as Operator;
  assert.deepEqual(inputFor(op), {
    inputClass: "subscription",
    constraints: [
      { type: "olm.catalog", value: { name: "community", namespace: "my-ns", package: "plumbus", channel: "stable" } },
      { type: "olm.packageVersion", value: { package: "plumbus", version: ">2.0.0 <3.0.0" } },
      { type: "olm.cel", value: "true" },
    ],
  });
});

const RESOURCES = [
  customResource(OPERATOR_API_VERSION, "Operator", "operators"),
  customResource(DEPPY_API_VERSION, "Input", "inputs"),
  customResource(RUKPAK, "Instance", "instances"),
  customResource(RUKPAK, "Bundle", "bundles"),
];
const SELF = "system:serviceaccount:opcat-system:opcat";
const BUNDLE = { name: "tiny", spec: { class: "plain", refs: ["file:///content"] } };

interface World {
  api: FakeKube;
  ctl: OperatorController;
  key: SigningKey;
  /** What the resolver last found per package; `resolved()` tells the controller it resolved. */
  installed: Map<string, InstalledStatus>;
  resolved: () => void;
}

async function world(): Promise<World> {
  const api = new FakeKube(RESOURCES, { allowed: ["alice"] });
  const installed = new Map<string, InstalledStatus>();
  const listeners: (() => void)[] = [];
  const key = new SigningKey(Buffer.alloc(32, 7));
  const deppy = { lastInstalled: installed, onResolved: (fn: () => void) => void listeners.push(fn) };
  const ctl = new OperatorController({ client: api, deppy, key, self: SELF });
  await ctl.start();
  return { api, ctl, key, installed, resolved: () => listeners.forEach((f) => f()) };
}

describe("Operator steps on the fake API server", () => {
  let w: World;
  beforeEach(async () => {
    w = await world();
  });
  afterEach(async () => {
    await w.ctl.stop();
  });

  const create = async (name: string, spec: Operator["spec"], by?: string) => {
    const op: Operator = { apiVersion: OPERATOR_API_VERSION, kind: "Operator", metadata: { name }, spec };
    await w.api.create(by ? requestedBy(w.key, op, by) : op);
    await settled(w.ctl.queue);
    return w.api.get<Operator>(OPERATOR_API_VERSION, "Operator", name);
  };
  const get = async (name: string) => {
    await settled(w.ctl.queue);
    return w.api.get<Operator>(OPERATOR_API_VERSION, "Operator", name);
  };
  const setStatus = async (kind: string, apiVersion: string, name: string, status: unknown) => {
    await w.api.mergePatch(apiVersion, kind, name, { status }, { subresource: "status" });
  };
  const cond = (type: string, status: string, reason: string, message = `${type} ${reason}`) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });

  describe("spec", () => {
    test("spec.bundle and spec.catalog both: InvalidSpec, nothing made", async () => {
      const op = await create("both", { bundle: BUNDLE, catalog: { package: "tiny" } });
      assert.deepEqual(condition(op, "Installed"), {
        is: "False InvalidSpec",
        message: "spec.bundle and spec.catalog exclude each other: install from a catalog or a bundle",
      });
      assert.equal((await w.api.list(RUKPAK, "Instance")).items.length, 0);
      assert.equal((await w.api.list(DEPPY_API_VERSION, "Input")).items.length, 0);
    });

    test("neither: InvalidSpec, and the status records the generation it judged", async () => {
      const op = await create("neither", {});
      assert.equal(condition(op, "Installed").is, "False InvalidSpec");
      assert.equal(op.status?.observedGeneration, 1);
    });
  });

  describe("bundleInstance", () => {
    test("a bundle: an Instance of it, owned and labelled, Installed Pending until it reports", async () => {
      const op = await create("direct", { bundle: BUNDLE, installNamespace: "tiny-system" });
      const inst = await w.api.get<Instance>(RUKPAK, "Instance", "direct");
      assert.deepEqual(
        inst.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
        [["Operator", "direct", op.metadata.uid, true]],
      );
      assert.deepEqual(inst.metadata.labels, { [operatorLabel("direct")]: "" });
      assert.deepEqual(inst.spec, {
        selector: { matchLabels: { [operatorLabel("direct")]: "" } },
        bundle: BUNDLE,
        installNamespace: "tiny-system",
      });
      assert.deepEqual(condition(op, "Installed"), { is: "False Pending", message: "waiting for Instance direct" });
      assert.deepEqual(
        op.status?.components?.refs?.map((r) => `${r.kind} ${r.name}`),
        ["Instance direct"],
      );
      assert.equal(w.api.requestLog.find((r) => r.resource === "instances" && r.verb === "patch")?.user, undefined);
    });

    test("an Instance of the name that is not the Operator's: NameConflict, left alone", async () => {
      const other = await w.api.create<Instance>({
        apiVersion: RUKPAK,
        kind: "Instance",
        metadata: { name: "taken" },
        spec: { bundle: BUNDLE },
      } as Instance);
      const op = await create("taken", { bundle: BUNDLE });
      assert.deepEqual(condition(op, "Installed"), {
        is: "False NameConflict",
        message: "Instance taken exists and does not belong to this Operator",
      });
      const after = await w.api.get(RUKPAK, "Instance", "taken");
      assert.equal(after.metadata.resourceVersion, other.metadata.resourceVersion);
    });

    test("the Instance's Installed, active Bundle and Available are the Operator's", async () => {
      await create("relay", { bundle: BUNDLE });
      await w.api.create<Bundle>({
        apiVersion: RUKPAK,
        kind: "Bundle",
        metadata: {
          name: "relay-b1",
          labels: { [operatorLabel("relay")]: "" },
          annotations: { [ANNOTATION_BUNDLE]: "tiny.v1.2.0", [ANNOTATION_VERSION]: "1.2.0" },
        },
        spec: BUNDLE.spec,
      } as Bundle);
      await setStatus("Instance", RUKPAK, "relay", {
        activeBundle: "relay-b1",
        conditions: [cond("Installed", "True", "InstallationSucceeded"), cond("Available", "True", "Available")],
      });
      const op = await get("relay");
      assert.deepEqual(condition(op, "Installed"), {
        is: "True InstallationSucceeded",
        message: "Installed InstallationSucceeded",
      });
      assert.deepEqual([op.status?.installedBundle, op.status?.installedVersion], ["tiny.v1.2.0", "1.2.0"]);
      assert.deepEqual(condition(op, "Available"), {
        is: "True WorkloadsAvailable",
        message: "every workload of Instance relay is available",
      });
      assert.deepEqual(
        op.status?.components?.refs?.map((r) => `${r.kind} ${r.name}`),
        ["Instance relay", "Bundle relay-b1"],
      );
      await setStatus("Instance", RUKPAK, "relay", {
        conditions: [
          cond("Installed", "True", "InstallationSucceeded"),
          cond("Available", "False", "Unavailable", "down"),
        ],
      });
      assert.deepEqual(condition(await get("relay"), "Available"), {
        is: "False Unavailable",
        message: "Instance relay: down",
      });
    });

    test("a verified author: the Instance is written as that user", async () => {
      await create("authored", { bundle: BUNDLE }, "alice");
      assert.ok(await w.api.tryGet(RUKPAK, "Instance", "authored"));
      const writes = w.api.requestLog.filter((r) => r.resource === "instances" && r.verb === "patch");
      assert.deepEqual(
        writes.map((r) => r.user),
        ["alice"],
      );
    });

    test("an author the API server refuses: no Instance, the pass fails and is retried", async () => {
      await create("refused", { bundle: BUNDLE }, "mallory");
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", "refused"), undefined);
      assert.ok(w.ctl.queue.failuresOf("refused") >= 1);
      assert.ok(w.api.requestLog.some((r) => r.user === "mallory" && r.forbidden));
    });
  });

  describe("input and catalogInstalled", () => {
    const catalog = { catalog: { name: "main", package: "tiny", channel: "stable" } };

    test("a catalog: an Input of the translated constraints, owned; Pending until it is resolved", async () => {
      const op = await create("fromcat", { ...catalog, version: "1.2.0" });
      const input = await w.api.get<Input>(DEPPY_API_VERSION, "Input", "fromcat");
      assert.deepEqual(input.spec, inputFor(op));
      assert.deepEqual(
        input.metadata.ownerReferences?.map((r) => r.uid),
        [op.metadata.uid],
      );
      assert.deepEqual(condition(op, "Installed"), {
        is: "False Pending",
        message: "waiting for Input fromcat to be resolved",
      });
      assert.deepEqual(
        op.status?.components?.refs?.map((r) => `${r.kind} ${r.name}`),
        ["Input fromcat"],
      );
    });

    test("an Input of the name that is not the Operator's: NameConflict", async () => {
      await w.api.create({ apiVersion: DEPPY_API_VERSION, kind: "Input", metadata: { name: "cattaken" }, spec: {} });
      const op = await create("cattaken", catalog);
      assert.deepEqual(condition(op, "Installed"), {
        is: "False NameConflict",
        message: "Input cattaken exists and does not belong to this Operator",
      });
    });

    test("a spec change rewrites the Input", async () => {
      await create("moving", catalog);
      await w.api.mergePatch(OPERATOR_API_VERSION, "Operator", "moving", { spec: { version: "2.0.0" } });
      const op = await get("moving");
      const input = await w.api.get<Input>(DEPPY_API_VERSION, "Input", "moving");
      assert.deepEqual(input.spec, inputFor(op));
      assert.equal(op.status?.observedGeneration, 2);
    });

    const relays: [string, () => Promise<void>, string, string][] = [
      [
        "resolution failed: its reason, not installed",
        () =>
          setStatus("Input", DEPPY_API_VERSION, "cat", {
            conditions: [cond("Resolved", "False", "ConstraintsUnsatisfiable")],
          }),
        "False ConstraintsUnsatisfiable",
        "Resolved ConstraintsUnsatisfiable",
      ],
      [
        "a dry run: DryRun",
        () => setStatus("Input", DEPPY_API_VERSION, "cat", { conditions: [cond("Resolved", "True", "DryRun")] }),
        "False DryRun",
        "Resolved DryRun",
      ],
      [
        "the resolveset awaits approval: AwaitingApproval",
        async () => {
          await setStatus("Input", DEPPY_API_VERSION, "cat", { conditions: [cond("Resolved", "True", "Resolved")] });
          await resolveset({ conditions: [cond("Approved", "False", "AwaitingApproval", "approve it")] });
        },
        "False AwaitingApproval",
        "approve it",
      ],
      [
        "the resolveset installed, the package's Instance active: its Installed",
        async () => {
          await setStatus("Input", DEPPY_API_VERSION, "cat", { conditions: [cond("Resolved", "True", "Resolved")] });
          await resolveset({
            conditions: [cond("Approved", "True", "Approved"), cond("Installed", "True", "InstallationSucceeded")],
          });
          await w.api.create({ apiVersion: RUKPAK, kind: "Instance", metadata: { name: "tiny" }, spec: {} });
          await setStatus("Instance", RUKPAK, "tiny", { activeBundle: "tiny-b1" });
        },
        "True InstallationSucceeded",
        "Installed InstallationSucceeded",
      ],
    ];
    const resolveset = async (status: unknown) => {
      const name = resolvesetInstanceName("cat");
      await w.api.create({ apiVersion: RUKPAK, kind: "Instance", metadata: { name }, spec: {} });
      await setStatus("Instance", RUKPAK, name, status);
    };
    for (const [name, arrange, is, message] of relays)
      test(`Installed from the Input and resolveset: ${name}`, async () => {
        await create("cat", catalog);
        await arrange();
        assert.deepEqual(condition(await get("cat"), "Installed"), { is, message });
      });
  });

  describe("updates", () => {
    const installed = (updates: { channel: string; catalog: string }[]): InstalledStatus => ({
      package: "tiny",
      bundle: "tiny.v1.0.0",
      version: "1.0.0",
      updates: updates.map((u) => ({ options: ["tiny.v1.1.0"], package: "tiny", ...u })),
      conditions: [],
    });
    const cases: [string, Operator["spec"], InstalledStatus, string, number][] = [
      ["none: NoUpdateFound", {}, installed([]), "False NoUpdateFound", 0],
      [
        "in the subscribed channel: UpdateFound",
        {},
        installed([{ channel: "stable", catalog: "main" }]),
        "True UpdateFound",
        1,
      ],
      [
        "only in another channel: CrossChannelUpdateFound",
        {},
        installed([{ channel: "fast", catalog: "main" }]),
        "True CrossChannelUpdateFound",
        1,
      ],
      [
        "a pinned version: CrossChannelUpdateFound",
        { version: "1.0.0" },
        installed([{ channel: "stable", catalog: "main" }]),
        "True CrossChannelUpdateFound",
        1,
      ],
    ];
    for (const [name, extra, st, is, n] of cases)
      test(`UpdateAvailable when the resolver has resolved: ${name}`, async () => {
        const before = await create("up", { catalog: { name: "main", package: "tiny", channel: "stable" }, ...extra });
        assert.deepEqual(condition(before, "UpdateAvailable"), {}, "nothing before the resolver reports");
        w.installed.set("tiny", st);
        w.resolved();
        const op = await get("up");
        assert.equal(condition(op, "UpdateAvailable").is, is);
        assert.equal(op.status?.updates?.length, n);
      });
  });
});
