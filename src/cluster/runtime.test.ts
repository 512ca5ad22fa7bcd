import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_CONDITION_MESSAGE, setCondition, type Condition } from "./kube/conditions.js";
import { WorkQueue, Backoff, DurationHistogram, DURATION_BUCKETS } from "./kube/queue.js";
import { crdObject, obj, str, arr, enumOf } from "./kube/schema.js";
import { rukpakCrds } from "./rukpak/api.js";

test(
  "setCondition: lastTransitionTime changes only with " + "the status; reason, message, generation update in place",
  () => {
    let { conditions, changed } = setCondition(
      [],
      { type: "Ready", status: "False", reason: "A", message: "a", observedGeneration: 1 },
      "2026-01-01T00:00:00Z",
    );
    assert.ok(changed);
    ({ conditions, changed } = setCondition(
      conditions,
      { type: "Ready", status: "False", reason: "B", message: "b", observedGeneration: 2 },
      "2026-01-02T00:00:00Z",
    ));
    assert.ok(changed);
    assert.equal(conditions[0].lastTransitionTime, "2026-01-01T00:00:00Z");
    assert.equal(conditions[0].reason, "B");
    ({ conditions, changed } = setCondition(
      conditions,
      { type: "Ready", status: "False", reason: "B", message: "b", observedGeneration: 2 },
      "2026-01-03T00:00:00Z",
    ));
    assert.ok(!changed);
    ({ conditions } = setCondition(
      conditions,
      { type: "Ready", status: "True", reason: "C", message: "c" },
      "2026-01-04T00:00:00Z",
    ));
    assert.equal(conditions[0].lastTransitionTime, "2026-01-04T00:00:00Z");
    assert.equal(conditions[0].observedGeneration, 2, "kept when not given");
    assert.equal(conditions.length, 1);
  },
);

test(
  "setCondition: a message longer than metav1.Condition allows is cut to fit, saying so " +
    "(a resolution explained in 40,000 characters must not make every status write fail)",
  () => {
    const long = "x".repeat(40_000);
    const { conditions } = setCondition([], { type: "Resolved", status: "False", reason: "R", message: long });
    assert.equal(conditions[0].message.length, MAX_CONDITION_MESSAGE);
    assert.match(conditions[0].message, /… \(40000 characters; the rest left out\)$/);
    const short = setCondition([], { type: "Resolved", status: "False", reason: "R", message: "fits" });
    assert.equal(short.conditions[0].message, "fits");
  },
);

test("fast-check: setCondition keeps one condition per type and never mutates its input", () => {
  const cond = fc.record({
    type: fc.constantFrom("A", "B", "C"),
    status: fc.constantFrom("True", "False", "Unknown") as fc.Arbitrary<Condition["status"]>,
    reason: fc.string(),
    message: fc.string(),
  });
  fc.assert(
    fc.property(fc.array(cond, { maxLength: 20 }), (cs) => {
      let list: Condition[] = [];
      for (const c of cs) {
        const before = JSON.stringify(list);
        const next = setCondition(list, c, "2026-01-01T00:00:00Z").conditions;
        assert.equal(JSON.stringify(list), before);
        list = next;
      }
      assert.equal(new Set(list.map((c) => c.type)).size, list.length);
      for (const t of ["A", "B", "C"]) {
        const last = [...cs].reverse().find((c) => c.type === t);
        const got = list.find((c) => c.type === t);
        assert.equal(got?.status, last?.status);
      }
    }),
  );
});

test(
  "WorkQueue: a key queued twice runs once; added while " +
    "running, it runs again after; failures retry until success",
  async () => {
    const q = new WorkQueue({ concurrency: 2, baseDelay: 1, maxDelay: 4 });
    const runs: string[] = [];
    let failuresLeft = 3;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = q.run(async (k) => {
      runs.push(k);
      if (k === "slow" && runs.filter((x) => x === "slow").length === 1) await gate;
      if (k === "flaky" && failuresLeft-- > 0) throw new Error("not yet");
    });
    q.add("a");
    q.add("a");
    q.add("slow");
    await new Promise((r) => setImmediate(r));
    q.add("slow"); // while it runs
    q.add("flaky");
    release();
    await q.idle();
    q.stop();
    await running;
    assert.equal(runs.filter((x) => x === "a").length, 1);
    assert.equal(runs.filter((x) => x === "slow").length, 2);
    assert.equal(runs.filter((x) => x === "flaky").length, 4);
    // what /metrics reports of it: 7 reconciles, 3 of them failed, each timed
    assert.equal(q.processed, 7);
    assert.equal(q.errors, 3);
    assert.equal(q.durations.count, 7);
    assert.equal(
      q.durations.counts.reduce((a, b) => a + b, 0),
      7,
    );
    assert.ok(q.durations.sum >= 0);
  },
);

test("DurationHistogram: each observation in the first bucket whose bound it does not exceed", () => {
  const h = new DurationHistogram();
  for (const s of [0.001, 0.005, 0.0051, 7, 61]) h.observe(s);
  assert.equal(h.counts[0], 2, "0.001 and 0.005 (a bound is inclusive)");
  assert.equal(h.counts[1], 1);
  assert.equal(h.counts[DURATION_BUCKETS.indexOf(10)], 1);
  assert.equal(h.counts[DURATION_BUCKETS.length], 1, "above the last bound");
  assert.equal(h.count, 5);
});

test(
  "WorkQueue: a failing key is not run again before its backoff, however often it is added " +
    "(also by its own pass); retryNow cuts the backoff short, drop forgets it",
  async () => {
    // a backoff no test waits out: every run below is one the queue started at once
    const q = new WorkQueue({ concurrency: 2, baseDelay: 3_600_000, maxDelay: 3_600_000 });
    let runs = 0;
    const ticks = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const running = q.run(async (k) => {
      runs++;
      q.add(k); // what a status write's watch event does while the pass runs
      await ticks(1);
      q.add(k);
      throw new Error("broken");
    });
    q.add("broken");
    await ticks(20);
    for (let i = 0; i < 100; i++) {
      q.add("broken");
      await ticks(1);
    }
    assert.equal(runs, 1, "added 102 times while failing, run once");
    assert.ok(q.isBackingOff("broken"));
    assert.equal(q.failuresOf("broken"), 1);
    q.retryNow("broken"); // its spec changed
    await ticks(20);
    assert.equal(runs, 2);
    assert.equal(q.failuresOf("broken"), 1, "retryNow starts the backoff over");
    q.drop("broken"); // deleted
    assert.ok(!q.isBackingOff("broken"));
    await q.idle();
    assert.equal(runs, 2, "nothing retried after drop");
    q.add("broken"); // made again
    await ticks(20);
    assert.equal(runs, 3);
    q.stop();
    await running;
  },
);

test("Backoff doubles up to its cap and resets", () => {
  const b = new Backoff(100, 1000);
  assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000]);
  b.reset();
  assert.equal(b.next(), 100);
});

test(
  "schemas: one typed source gives structural CRD schemas " + "(every property typed or preserving unknown fields)",
  () => {
    const s = obj({ a: str(), b: arr(enumOf(["x", "y"] as const)) }, ["a"]);
    assert.deepEqual(s.openapi, {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "array", items: { type: "string", enum: ["x", "y"] } } },
      required: ["a"],
    });
    const walk = (o: Record<string, unknown>, path: string): void => {
      assert.ok(o.type || o["x-kubernetes-preserve-unknown-fields"], `${path} has a type`);
      for (const [k, v] of Object.entries((o.properties as Record<string, Record<string, unknown>>) ?? {}))
        walk(v, `${path}.${k}`);
      if (o.items) walk(o.items as Record<string, unknown>, `${path}[]`);
    };
    for (const d of rukpakCrds) {
      const crd = crdObject(d) as { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] } };
      walk(crd.spec.versions[0].schema.openAPIV3Schema, d.kind);
    }
  },
);

test("runSteps: steps run in order until one stops; a stop's conditions land on the working status", async () => {
  const { runSteps } = await import("./runtime/steps.js");
  const ran: string[] = [];
  const state = { generation: 3, status: {} as { conditions?: Condition[] }, seen: 0 };
  const out = await runSteps(
    [
      { name: "a", run: (s) => void ((s.seen = 1), ran.push("a")) },
      {
        name: "b",
        run: () => {
          ran.push("b");
          return {
            stop: true as const,
            conditions: [{ type: "Installed", status: "False" as const, reason: "Waiting", message: "w" }],
          };
        },
      },
      { name: "c", run: () => void ran.push("c") },
    ],
    state,
  );
  assert.deepEqual(ran, ["a", "b"]);
  assert.equal(out.stoppedAt, "b");
  assert.equal(state.status.conditions?.[0].reason, "Waiting");
  assert.equal(state.status.conditions?.[0].observedGeneration, 3);
  const again = await runSteps([{ name: "x", run: () => ({ requeueAfter: 5000 }) }], state);
  assert.deepEqual(again, { stoppedAt: "x", requeueAfter: 5000 });
  assert.deepEqual(await runSteps([{ name: "y", run: () => undefined }], state), {});
});

test("defineController: controllers share a kind's cache (informer) and may name their Events' component", async () => {
  const { defineController } = await import("./runtime/controller.js");
  const { Informer } = await import("./kube/informer.js");
  const { EventRecorder } = await import("./kube/events.js");
  const client = {} as import("./kube/client.js").KubeClient;
  const shared = new Informer(client, "rukpak.io/v1alpha2", "Bundle");
  const reconcile = async () => undefined;
  const a = defineController(client, {
    name: "a",
    component: "opcat-group",
    for: { apiVersion: "rukpak.io/v1alpha2", kind: "Bundle", informer: shared },
    reconcile,
  });
  const b = defineController(client, {
    name: "b",
    for: { apiVersion: "rukpak.io/v1alpha2", kind: "Instance" },
    watches: [
      { apiVersion: "rukpak.io/v1alpha2", kind: "Bundle", informer: shared, map: (o) => [`i-${o.metadata.name}`] },
    ],
    reconcile,
  });
  assert.equal(a.primary, shared);
  assert.equal(b.cacheOf("rukpak.io/v1alpha2", "Bundle"), shared);
  assert.ok(a.events instanceof EventRecorder);
  assert.equal((a.events as unknown as { component: string }).component, "opcat-group");
  assert.equal((b.events as unknown as { component: string }).component, "opcat-b");
  // one event on the shared cache reaches both controllers' queues
  (shared as unknown as { emit: (e: string, o: unknown) => void }).emit("add", { metadata: { name: "x" } });
  assert.equal(a.queue.length, 1);
  assert.equal(b.queue.length, 1);
});

test("resourceOfPath names the resource of a request path", async () => {
  const { resourceOfPath } = await import("./kube/client.js");
  const cases: [string, string][] = [
    ["/api/v1/namespaces/ns/configmaps/x", "configmaps"],
    ["/api/v1/namespaces/ns", "namespaces"],
    ["/api/v1/namespaces", "namespaces"],
    ["/apis/deppy.io/v1/inputs/a/status", "inputs/status"],
    ["/apis/rukpak.io/v1/instances?watch=true", "instances"],
    ["/apis/authorization.k8s.io/v1/subjectaccessreviews", "subjectaccessreviews"],
    ["/apis/apps/v1/namespaces/ns/deployments/d/scale", "deployments/scale"],
    ["/apis/rukpak.io/v1", "apis/rukpak.io/v1"],
  ];
  for (const [path, want] of cases) assert.equal(resourceOfPath(path), want, path);
});

test("runSteps counts which step ended each pass, by controller", async () => {
  const { runSteps, STEP_STOPS } = await import("./runtime/steps.js");
  const count = (step: string) => STEP_STOPS.entries().find(([c, s]) => c === "test-steps" && s === step)?.[2] ?? 0;
  const steps = [
    { name: "first", run: (s: { stop: boolean }) => (s.stop ? { stop: true as const } : undefined) },
    { name: "second", run: () => undefined },
  ];
  await runSteps(steps, { stop: true }, "test-steps");
  await runSteps(steps, { stop: true }, "test-steps");
  await runSteps(steps, { stop: false }, "test-steps");
  await runSteps(steps, { stop: true }); // no controller: not counted
  assert.deepEqual([count("first"), count("completed"), count("second")], [2, 1, 0]);
});
