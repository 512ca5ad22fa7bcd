/** The one reconcile wrapper (reconcile.ts), on the in-memory API server. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { FakeKube } from "../kube/fake.js";
import { customResource } from "./controllerkit.test.js";
import {
  passBy,
  persistStatus,
  reconcileObject,
  type ReconcileSpec,
  type WorkingState,
  workingCopy,
} from "./reconcile.js";
import { RetryLater, retryAfter, STEP_STOPS, stopWith, type Step } from "./steps.js";

const THING = customResource("example.com/v1", "Thing", "things");
interface ThingStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  seen?: number;
  note?: string;
}
interface Thing extends KubeObject {
  spec?: { n: number };
  status?: ThingStatus;
}
interface ThingState extends WorkingState<ThingStatus> {
  thing: Thing;
  /** What each step saw of the object, by step name. */
  saw: Record<string, Thing>;
}
const ref = { apiVersion: THING.apiVersion, kind: THING.kind };
const Ready = (status: "True" | "False", reason: string, message: string) => ({
  type: "Ready",
  status,
  reason,
  message,
});

interface Fixture {
  api: FakeKube;
  /** What the controller's cache holds (set by the test: it may lag or be stale). */
  cache: Map<string, Thing>;
  events: [string, string, string, string][];
  debug: string[];
  spec: (controller: string, steps: Step<ThingState>[]) => ReconcileSpec<Thing, ThingState>;
}

async function fixture(): Promise<Fixture> {
  const api = new FakeKube([THING]);
  const t = await api.create<Thing>({ ...ref, metadata: { name: "t" }, spec: { n: 1 } });
  const cache = new Map([["t", t]]);
  const events: Fixture["events"] = [];
  const debug: string[] = [];
  const spec = (controller: string, steps: Step<ThingState>[]): ReconcileSpec<Thing, ThingState> => ({
    controller,
    apiVersion: THING.apiVersion,
    kind: THING.kind,
    client: api,
    events: { emit: (o, type, reason, message) => events.push([o.metadata.name, type, reason, message]) },
    debug: (m) => debug.push(m),
    get: (key) => cache.get(key),
    state: (o) => ({ ...workingCopy(o), thing: o, saw: {} }),
    object: (s) => s.thing,
    rebase: (s, seen) => {
      s.thing = seen;
    },
    steps,
  });
  return { api, cache, events, debug, spec };
}

const step = (name: string, run: Step<ThingState>["run"]): Step<ThingState> => ({ name, run });
const get = (f: Fixture) => f.api.get<Thing>(THING.apiVersion, THING.kind, "t");
const stops = (controller: string) =>
  Object.fromEntries(
    STEP_STOPS.entries()
      .filter(([c]) => c === controller)
      .map(([, s, n]) => [s, n]),
  );

test("continue to completion: the working status written once, counted as completed", async () => {
  const f = await fixture();
  const steps = [
    step("one", (s) => {
      s.status.seen = 1;
    }),
    step("two", (s) => {
      s.status.note = `after ${s.status.seen}`;
    }),
  ];
  const puts = f.api.requests.PUT ?? 0;
  assert.deepEqual(await reconcileObject(f.spec("t-complete", steps), "t"), {});
  assert.equal((f.api.requests.PUT ?? 0) - puts, 1);
  assert.deepEqual((await get(f)).status, { seen: 1, note: "after 1" });
  assert.deepEqual(stops("t-complete"), { completed: 1 });
  assert.deepEqual(f.events, []);
  assert.deepEqual(f.debug, []);
});

test("stop with conditions: observedGeneration, the Event after the write, the step counted and logged", async () => {
  const f = await fixture();
  let ran = false;
  const steps = [
    step("check", (s) => stopWith(s, "Warning", Ready("False", "Broken", "it is broken"))),
    step("after", () => {
      ran = true;
    }),
  ];
  assert.deepEqual(await reconcileObject(f.spec("t-stop", steps), "t"), {});
  assert.equal(ran, false);
  const st = (await get(f)).status!;
  assert.equal(st.observedGeneration, 1);
  assert.deepEqual(
    st.conditions?.map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
    [["Ready", "False", "Broken", "it is broken", 1]],
  );
  assert.deepEqual(f.events, [["t", "Warning", "Broken", "it is broken"]]);
  assert.deepEqual(stops("t-stop"), { check: 1 });
  assert.deepEqual(f.debug, ["t-stop t: stopped at check (Broken)"]);
});

test("a stop's observe outcome writes observedGeneration without stopWith", async () => {
  const f = await fixture();
  const steps = [step("done", () => ({ stop: true as const, observe: true as const }))];
  await reconcileObject(f.spec("t-observe", steps), "t");
  assert.equal((await get(f)).status?.observedGeneration, 1);
});

test("retry-after: the status is written, then RetryLater with the stop's reason", async () => {
  const f = await fixture();
  const steps = [step("wait", (s) => retryAfter(stopWith(s, undefined, Ready("False", "InTheWay", "another object"))))];
  await assert.rejects(reconcileObject(f.spec("t-retry", steps), "t"), (e: unknown) => {
    assert.ok(e instanceof RetryLater);
    assert.equal(e.message, "InTheWay: another object");
    return true;
  });
  assert.equal((await get(f)).status?.conditions?.[0]?.reason, "InTheWay");
  assert.deepEqual(stops("t-retry"), { wait: 1 });
});

test("requeue-after: the Result asks for another pass, the status is still written", async () => {
  const f = await fixture();
  const steps = [
    step("soon", (s) => {
      s.status.note = "waiting";
      return { requeueAfter: 1234 };
    }),
    step("later", () => assert.fail("a requeue ends the pass")),
  ];
  assert.deepEqual(await reconcileObject(f.spec("t-requeue", steps), "t"), { requeueAfter: 1234 });
  assert.equal((await get(f)).status?.note, "waiting");
  assert.deepEqual(stops("t-requeue"), { soon: 1 });
});

test("written only when it changed: a pass that finds the same costs no request and emits no Event", async () => {
  const f = await fixture();
  const steps = [step("check", (s) => stopWith(s, "Normal", Ready("True", "Fine", "all fine")))];
  await reconcileObject(f.spec("t-same", steps), "t");
  assert.equal(f.events.length, 1);
  f.cache.set("t", await get(f));
  const before = { ...f.api.requests };
  await reconcileObject(f.spec("t-same", steps), "t");
  assert.deepEqual(f.api.requests, before);
  assert.equal(f.events.length, 1);
});

test("eventWhen kept: the Event is emitted again while the status already says it", async () => {
  const f = await fixture();
  const steps = [step("check", (s) => stopWith(s, "Normal", Ready("False", "Waiting", "waiting for approval")))];
  await reconcileObject({ ...f.spec("t-kept", steps), eventWhen: "kept" }, "t");
  f.cache.set("t", await get(f));
  await reconcileObject({ ...f.spec("t-kept", steps), eventWhen: "kept" }, "t");
  assert.equal(f.events.length, 2);
});

test("a Conflict is answered by reading again: what the pass changed goes on top of the other writer's", async () => {
  const f = await fixture();
  const stale = f.cache.get("t")!;
  await f.api.replace<Thing>({ ...stale, status: { note: "someone else" } }, { subresource: "status" });
  const steps = [
    step("one", (s) => {
      s.status.seen = 7;
    }),
  ];
  await reconcileObject(f.spec("t-conflict", steps), "t");
  assert.deepEqual((await get(f)).status, { note: "someone else", seen: 7 });
});

test("gone, or replaced by another of the same name: nothing is written and no Event", async () => {
  const f = await fixture();
  const steps = [step("check", (s) => stopWith(s, "Warning", Ready("False", "Broken", "broken")))];
  assert.deepEqual(await reconcileObject(f.spec("t-gone", steps), "t-absent"), {});
  assert.deepEqual(stops("t-gone"), {});
  const old = f.cache.get("t")!;
  await f.api.delete(THING.apiVersion, THING.kind, "t");
  await reconcileObject(f.spec("t-gone", steps), "t");
  await f.api.create<Thing>({ ...ref, metadata: { name: "t" }, spec: { n: 2 } });
  f.cache.set("t", old);
  await reconcileObject(f.spec("t-gone", steps), "t");
  assert.equal((await get(f)).status, undefined);
  assert.deepEqual(f.events, []);
});

test("a retry-after stop on an object that is gone is not tried again", async () => {
  const f = await fixture();
  await f.api.delete(THING.apiVersion, THING.kind, "t");
  const steps = [step("wait", (s) => retryAfter(stopWith(s, undefined, Ready("False", "InTheWay", "x"))))];
  assert.deepEqual(await reconcileObject(f.spec("t-gone-retry", steps), "t"), {});
});

test("persistStatus: a step persists before the next acts, which goes on from the written object", async () => {
  const f = await fixture();
  let spec: ReconcileSpec<Thing, ThingState> | undefined;
  const steps = [
    step("approve", async (s) => {
      s.status.note = "approved";
      assert.equal(await persistStatus(f.api, spec!, s), "written");
    }),
    step("act", async (s) => {
      s.saw.act = s.thing;
      assert.equal((await get(f)).status?.note, "approved");
      s.status.seen = 2;
    }),
  ];
  spec = f.spec("t-persist", steps);
  const puts = f.api.requests.PUT ?? 0;
  const s0 = f.cache.get("t")!;
  let state: ThingState | undefined;
  await reconcileObject({ ...spec, state: (o) => (state = spec!.state(o, "t")) }, "t");
  assert.equal((f.api.requests.PUT ?? 0) - puts, 2);
  assert.notEqual(state!.saw.act.metadata.resourceVersion, s0.metadata.resourceVersion);
  assert.deepEqual((await get(f)).status, { note: "approved", seen: 2 });
});

test("next: a controller's own status computation, and undefined to write nothing", async () => {
  const f = await fixture();
  const steps = [step("one", () => undefined)];
  const puts = f.api.requests.PUT ?? 0;
  await reconcileObject({ ...f.spec("t-next", steps), next: () => undefined }, "t");
  assert.equal((f.api.requests.PUT ?? 0) - puts, 0);
  await reconcileObject({ ...f.spec("t-next", steps), next: (_s, fresh) => ({ seen: fresh.spec!.n * 10 }) }, "t");
  assert.deepEqual((await get(f)).status, { seen: 10 });
});

test("a spec's shared parts: the working copy, the debug lines", () => {
  const t: Thing = { ...ref, metadata: { name: "t", generation: 3 }, status: { seen: 1 } };
  const w = workingCopy(t);
  assert.deepEqual(w, { generation: 3, status: { seen: 1 } });
  assert.notEqual(w.status, t.status);
  assert.deepEqual(workingCopy<Thing>({ ...ref, metadata: { name: "new" } }), { generation: 0, status: {} });
  const lines: string[] = [];
  const by = () => passBy("c", new FakeKube([THING]), { emit: () => {} }, (m) => lines.push(m));
  const before = process.env.OPCAT_DEBUG;
  try {
    process.env.OPCAT_DEBUG = "0";
    assert.equal(by().debug, undefined);
    process.env.OPCAT_DEBUG = "1";
    const parts = by();
    parts.debug?.("stopped");
    assert.deepEqual([parts.controller, lines], ["c", ["debug: stopped"]]);
  } finally {
    if (before === undefined) delete process.env.OPCAT_DEBUG;
    else process.env.OPCAT_DEBUG = before;
  }
});
