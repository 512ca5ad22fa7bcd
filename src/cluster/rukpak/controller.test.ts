import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient } from "../kube/client.js";
import { API_VERSION, type Bundle } from "./api.js";
import { bundleSteps, UnpackSlots, type BundleState } from "./bundle.js";
import type { RukpakContext } from "./context.js";
import { RukpakController } from "./controller.js";
import { instanceSteps } from "./instance.js";
import type { SigningKey } from "./trust.js";

test("RukPak is two controllers of the runtime over one cache of classes, Bundles and Instances", () => {
  const c = new RukpakController({ client: {} as KubeClient, stateDir: "/nonexistent", key: {} as SigningKey });
  assert.equal(c.bundleController.primary, c.bundles);
  assert.equal(c.instanceController.primary, c.instances);
  assert.equal(c.bundleController.cacheOf(API_VERSION, "Instance"), c.instances);
  assert.equal(c.bundleController.cacheOf(API_VERSION, "ProvisionerClass"), c.classes);
  assert.equal(c.instanceController.cacheOf(API_VERSION, "Bundle"), c.bundles);
  assert.equal(c.instanceController.cacheOf(API_VERSION, "ProvisionerClass"), c.classes);
  assert.equal(c.bundleQueue, c.bundleController.queue);
  assert.equal(c.instanceQueue, c.instanceController.queue);
  assert.notEqual(c.bundleQueue, c.instanceQueue);
  // the Events of both keep the reporting component RukPak always had
  for (const r of [c.events, c.instanceController.events])
    assert.equal((r as unknown as { component: string }).component, "opcat-rukpak");
});

test("the reconciles' steps, in order", () => {
  const ctx = {} as RukpakContext;
  assert.deepEqual(
    bundleSteps(ctx, new UnpackSlots(3)).map((s) => s.name),
    [
      "deletion",
      "class",
      "finalizer",
      "unpacked",
      "restorePinned",
      "backoff",
      "inProgress",
      "slot",
      "unpack",
      "outcome",
    ],
  );
  assert.deepEqual(
    instanceSteps(ctx).map((s) => s.name),
    [
      "signature",
      "bundle",
      "unpacked",
      "content",
      "protected",
      "crdGroups",
      "approval",
      "unchanged",
      "crdSafety",
      "collisions",
      "alive",
      "pivot",
      "apply",
      "prune",
      "replaced",
      "installed",
    ],
  );
});

test("UnpackSlots: one host or one requester never holds every worker", () => {
  const u = new UnpackSlots(1);
  const b = (name: string, ref: string) =>
    ({ metadata: { name }, spec: { refs: [ref] } }) as unknown as Parameters<UnpackSlots["take"]>[0];
  const added: string[] = [];
  const queue = { add: (k: string) => added.push(k) } as unknown as Parameters<UnpackSlots["release"]>[1];
  assert.ok(u.take(b("a", "docker://reg.example/a:1"), new AbortController(), { username: "alice" }));
  // the same host: waits
  assert.ok(!u.take(b("b", "docker://reg.example/b:1"), new AbortController(), { username: "bob" }));
  // file:// fetches from no host and takes no slot
  assert.ok(u.take(b("c", "file:///x"), new AbortController(), { username: "alice" }));
  u.release("a", queue);
  assert.deepEqual(added, ["b"], "a freed slot wakes the waiting Bundle");
});

test("a Bundle's outcome counts as settled only once its status is written (a Conflict leaves it open)", async () => {
  const u = new UnpackSlots(3);
  const b = {
    apiVersion: API_VERSION,
    kind: "Bundle",
    metadata: { name: "b", generation: 1, uid: "u1" },
    spec: { class: "c", refs: [] },
    status: { unpacked: "InProgress", observedGeneration: 1 },
  } as unknown as Bundle;
  const ctx = { bundles: { get: () => b }, client: { tryGet: async () => b } } as unknown as RukpakContext;
  const outcome = bundleSteps(ctx, u).find((s) => s.name === "outcome")!;
  const s: BundleState = {
    name: "b",
    b,
    generation: 1,
    status: { ...b.status },
    outcome: {
      status: { unpacked: "Done", reason: "UnpackSuccessful", message: "unpacked", digest: "sha256:0" },
      event: ["Normal", "Unpacked", "unpacked"],
    },
  };
  await outcome.run(s);
  // not yet: had the write of this Done failed, the next pass would stop at `unpacked` and never write it
  assert.equal(u.settled.has("b"), false);
  assert.ok(s.write);
  s.settle?.();
  assert.deepEqual(u.settled.get("b"), { gen: 1, digest: "sha256:0" });
});
