/**
 * The Bundle controller's steps (bundle.ts), one table per step, on the in-memory API server: each
 * case sets up the cluster and the pass's state as the earlier steps leave it, runs the step, and
 * checks its outcome (continue, stop, a write, what the state now says).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import type { StepOutcome } from "../runtime/steps.js";
import { API_VERSION, FINALIZER_CONTENT, type Bundle } from "./api.js";
import { bundleSteps, reconcileBundle, type BundleState } from "./bundle.js";
import { contentExists } from "./content.js";
import {
  ALICE,
  cluster,
  createBundle,
  createInstance,
  plainSpec,
  unpackedBundle,
  type Cluster,
} from "./stepkit.test.js";

/** The state a pass over Bundle `name` starts with (as reconcileBundle makes it). */
function stateOf(c: Cluster, name: string): BundleState {
  const b = c.ctx.bundles.get(name)!;
  return { name, b, generation: b.metadata.generation ?? 0, status: { ...(b.status ?? {}) } };
}

async function run(c: Cluster, step: string, s: BundleState): Promise<StepOutcome> {
  return bundleSteps(c.ctx, c.slots)
    .find((x) => x.name === step)!
    .run(s);
}

const STOP = { stop: true as const };

/** Bundle `b`, new (the state of its first pass). */
const newBundle = async (c: Cluster) => (await createBundle(c, "b"), stateOf(c, "b"));
/** Bundle `b`, unpacked. */
const unpackedOne = async (c: Cluster) => (await unpackedBundle(c, "b"), stateOf(c, "b"));
const get = (c: Cluster, name: string) => c.api.tryGet<Bundle>(API_VERSION, "Bundle", name);

interface Case {
  name: string;
  step: string;
  /** Makes the cluster and the state the step sees. */
  given: (c: Cluster) => Promise<BundleState>;
  outcome: StepOutcome;
  after?: (c: Cluster, s: BundleState) => Promise<void> | void;
}

/** A new Bundle's pass goes on through `step`. */
const goesOn = (step: string, what: string): Case => ({
  name: `${step}: ${what}`,
  step,
  given: newBundle,
  outcome: undefined,
});

const CASES: Case[] = [
  goesOn("deletion", "a Bundle not being deleted goes on"),
  {
    name: "deletion: a deleted Bundle drops its content and its finalizer",
    step: "deletion",
    given: async (c) => {
      await unpackedBundle(c, "b");
      await c.api.delete(API_VERSION, "Bundle", "b");
      return stateOf(c, "b");
    },
    outcome: STOP,
    after: async (c, s) => {
      assert.equal(await get(c, "b"), undefined, "the finalizer removed, the Bundle goes");
      assert.equal(contentExists(c.ctx.stateDir, s.b.status!.digest!), undefined);
    },
  },
  {
    name: "deletion: content another Bundle has is kept",
    step: "deletion",
    given: async (c) => {
      await unpackedBundle(c, "b");
      await unpackedBundle(c, "twin");
      await c.api.delete(API_VERSION, "Bundle", "b");
      return stateOf(c, "b");
    },
    outcome: STOP,
    after: (c, s) => assert.ok(contentExists(c.ctx.stateDir, s.b.status!.digest!)),
  },
  {
    name: "class: a class this controller does not run stops the pass",
    step: "class",
    given: async (c) => (await createBundle(c, "b", { ...plainSpec(), class: "other" }), stateOf(c, "b")),
    outcome: STOP,
  },
  goesOn("class", "its own class goes on"),
  {
    name: "finalizer: added before anything is unpacked",
    step: "finalizer",
    given: newBundle,
    outcome: undefined,
    after: async (c) => assert.deepEqual((await get(c, "b"))?.metadata.finalizers, [FINALIZER_CONTENT]),
  },
  {
    name: "unpacked: Done at this generation, its content here, stops the pass",
    step: "unpacked",
    given: unpackedOne,
    outcome: STOP,
  },
  {
    name: "unpacked: settled by this process (failed for good) stops the pass",
    step: "unpacked",
    given: async (c) => (c.slots.settled.set("b", { gen: 1 }), newBundle(c)),
    outcome: STOP,
  },
  goesOn("unpacked", "a new Bundle goes on"),
  {
    name: "restorePinned: content another replica unpacked is fetched again from the pinned refs",
    step: "restorePinned",
    given: async (c) => {
      await unpackedBundle(c, "b");
      await createInstance(c, "i", { bundle: { name: "b" } });
      c.slots.settled.clear();
      c.ctx.stateDir = `${c.ctx.stateDir}/elsewhere`; // another replica's store: empty
      return stateOf(c, "b");
    },
    outcome: STOP,
    after: (c, s) => {
      assert.ok(contentExists(c.ctx.stateDir, s.b.status!.digest!));
      assert.deepEqual(c.slots.settled.get("b"), { gen: 1, digest: s.b.status!.digest });
      assert.equal(c.instanceQueue.length, 1, "the Instance naming it is told");
    },
  },
  {
    name: "restorePinned: pinned refs that give other content go on to a full unpack",
    step: "restorePinned",
    given: async (c) => {
      await unpackedBundle(c, "b");
      const cm = await c.api.get("v1", "ConfigMap", "manifests", "default");
      await c.api.replace({ ...cm, data: { "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n" } });
      c.ctx.stateDir = `${c.ctx.stateDir}/elsewhere`;
      return stateOf(c, "b");
    },
    outcome: undefined,
  },
  {
    name: "backoff: a failure of this generation tried here waits for the queue's backoff",
    step: "backoff",
    given: async (c) => {
      await createBundle(c, "b");
      c.slots.tried.add("b");
      return { ...stateOf(c, "b"), status: { unpacked: "Failed", observedGeneration: 1 } };
    },
    outcome: STOP,
  },
  {
    name: "backoff: a generation seen for the first time starts now",
    step: "backoff",
    given: newBundle,
    outcome: undefined,
    after: (_c, s) => assert.equal(s.startsNow, true),
  },
  {
    name: "inProgress: InProgress written before the unpack starts",
    step: "inProgress",
    given: async (c) => (await createBundle(c, "b"), { ...stateOf(c, "b"), startsNow: true }),
    outcome: undefined,
    after: async (c, s) => {
      assert.equal((await get(c, "b"))?.status?.unpacked, "InProgress");
      assert.equal(s.status.unpacked, "InProgress");
    },
  },
  {
    name: "inProgress: a spec changed meanwhile stops the pass (its update brings the next)",
    step: "inProgress",
    given: async (c) => {
      const b = await createBundle(c, "b");
      const s = { ...stateOf(c, "b"), startsNow: true };
      await c.api.replace<Bundle>({ ...b, spec: { ...b.spec, refs: ["file:///other"] } });
      return s;
    },
    outcome: STOP,
    after: async (c) => assert.equal((await get(c, "b"))?.status, undefined),
  },
  {
    name: "slot: one host's slots all taken, the Bundle waits",
    step: "slot",
    given: async (c) => {
      await createBundle(c, "b", { class: "plain", refs: ["docker://reg.example/b:1"] });
      for (const n of ["x", "y", "z"])
        c.slots.unpacking.set(n, { ac: new AbortController(), slots: ["host reg.example"] });
      return stateOf(c, "b");
    },
    outcome: STOP,
    after: (c) => assert.ok(c.slots.waitingForSlot.has("b")),
  },
  {
    name: "unpack: file:// content read as its requester: Done",
    step: "unpack",
    given: async (c) => {
      await createBundle(c, "b");
      return { ...stateOf(c, "b"), ac: new AbortController(), requester: { username: ALICE } };
    },
    outcome: undefined,
    after: (_c, s) => {
      assert.equal(s.outcome?.status.unpacked, "Done");
      assert.equal(s.outcome?.status.format, "plain");
      assert.equal(s.retry, undefined);
    },
  },
  {
    name: "unpack: a ConfigMap its requester may not read fails for good",
    step: "unpack",
    given: async (c) => {
      await createBundle(c, "b");
      c.allowed.clear();
      return { ...stateOf(c, "b"), ac: new AbortController(), requester: { username: "alice" } };
    },
    outcome: undefined,
    after: (_c, s) => {
      assert.deepEqual([s.outcome?.status.unpacked, s.outcome?.status.reason], ["Failed", "ConfigMapNotReadable"]);
      assert.equal(s.retry, undefined);
    },
  },
  {
    name: "unpack: an https:// ref without a digest fails for good",
    step: "unpack",
    given: async (c) => {
      await createBundle(c, "b", { class: "plain", refs: ["https://example.com/b.tgz"] });
      return { ...stateOf(c, "b"), ac: new AbortController() };
    },
    outcome: undefined,
    after: (_c, s) => assert.equal(s.outcome?.status.reason, "DigestRequired"),
  },
  {
    name: "unpack: an aborted unpack (deleted or changed) stops without an outcome",
    step: "unpack",
    given: async (c) => {
      await createBundle(c, "b");
      const ac = new AbortController();
      c.slots.unpacking.set("b", { ac, slots: [] });
      c.slots.abort("b", "changed");
      return { ...stateOf(c, "b"), ac };
    },
    outcome: STOP,
    after: (_c, s) => assert.equal(s.outcome, undefined),
  },
  {
    name: "outcome: a status that says it already is not written again",
    step: "outcome",
    given: async (c) => {
      const b = await unpackedBundle(c, "b");
      c.slots.settled.clear();
      return { ...stateOf(c, "b"), outcome: { status: { ...b.status! }, event: ["Normal", "Unpacked", "x"] } };
    },
    outcome: undefined,
    after: (c, s) => {
      assert.equal(s.write, undefined);
      assert.equal(c.slots.settled.get("b")?.gen, 1);
    },
  },
  {
    name: "outcome: a Bundle being deleted meanwhile gets nothing",
    step: "outcome",
    given: async (c) => {
      const b = await createBundle(c, "b");
      await c.api.replace<Bundle>({ ...b, metadata: { ...b.metadata, finalizers: [FINALIZER_CONTENT] } });
      const s = stateOf(c, "b");
      await c.api.delete(API_VERSION, "Bundle", "b");
      const out = { status: { unpacked: "Failed" as const, reason: "X", message: "x" } };
      return { ...s, outcome: { ...out, event: ["Warning", "X", "x"] } };
    },
    outcome: STOP,
    after: (_c, s) => assert.equal(s.write, undefined),
  },
];

for (const k of CASES)
  test(`Bundle step ${k.name}`, async () => {
    const c = await cluster();
    const s = await k.given(c);
    assert.deepEqual(await run(c, k.step, s), k.outcome);
    await k.after?.(c, s);
  });

test("Bundle pass: InProgress, then Done written once with its Event; a second pass changes nothing", async () => {
  const c = await cluster();
  await createBundle(c, "b");
  const steps = bundleSteps(c.ctx, c.slots);
  await reconcileBundle(c.ctx, steps, "b");
  const b = (await get(c, "b"))!;
  assert.equal(b.status?.unpacked, "Done");
  assert.ok(existsSync(contentExists(c.ctx.stateDir, b.status!.digest!)!));
  assert.deepEqual(c.events, [["b", "Normal", "Unpacked"]]);
  const before = { ...c.api.requests };
  await reconcileBundle(c.ctx, steps, "b");
  assert.deepEqual(c.api.requests, before);
});
