/** The one status-write policy, on the in-memory API server (held to kube-apiserver's contract). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeApiError, type KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { FakeKube } from "../kube/fake.js";
import { customResource } from "./controllerkit.test.js";
import { RetryLater } from "./steps.js";
import { changedOnTop, writeStatus } from "./status.js";

const THING = customResource("example.com/v1", "Thing", "things");
interface Thing extends KubeObject {
  spec?: { n: number };
  status?: { seen?: number; note?: string };
}
const ref = { apiVersion: THING.apiVersion, kind: THING.kind, name: "t" };

async function setup(): Promise<{ api: FakeKube; thing: Thing }> {
  const api = new FakeKube([THING]);
  const thing = await api.create<Thing>({ ...ref, metadata: { name: "t" }, spec: { n: 1 } });
  return { api, thing };
}

test("writes from the cached copy; an unchanged status costs no request at all", async () => {
  const { api, thing } = await setup();
  assert.equal(await writeStatus<Thing>(api, { ...ref, cached: thing, next: () => ({ seen: 1 }) }), "written");
  const now = await api.get<Thing>(ref.apiVersion, ref.kind, "t");
  const before = { ...api.requests };
  assert.equal(await writeStatus<Thing>(api, { ...ref, cached: now, next: () => ({ seen: 1 }) }), "unchanged");
  assert.deepEqual(api.requests, before);
});

test("a stale cached copy: the Conflict is answered by reading again and recomputing", async () => {
  const { api, thing } = await setup();
  await api.replace<Thing>({ ...thing, status: { note: "another writer" } }, { subresource: "status" });
  const out = await writeStatus<Thing>(api, {
    ...ref,
    cached: thing, // stale: it lacks the other writer's note
    next: (fresh) => ({ ...(fresh.status ?? {}), seen: 2 }),
  });
  assert.equal(out, "written");
  assert.deepEqual((await api.get<Thing>(ref.apiVersion, ref.kind, "t")).status, { note: "another writer", seen: 2 });
});

test("an object gone, or re-created under the same name, gets nothing", async () => {
  const { api, thing } = await setup();
  await api.delete(ref.apiVersion, ref.kind, "t");
  assert.equal(await writeStatus<Thing>(api, { ...ref, next: () => ({ seen: 3 }) }), "gone");
  await api.create<Thing>({ ...ref, metadata: { name: "t" }, spec: { n: 2 } });
  assert.equal(await writeStatus<Thing>(api, { ...ref, uid: thing.metadata.uid, next: () => ({ seen: 3 }) }), "gone");
  assert.equal((await api.get<Thing>(ref.apiVersion, ref.kind, "t")).status, undefined);
});

test("conflicts that never end: the pass is handed back to the queue's backoff (RetryLater)", async () => {
  const { api } = await setup();
  let writes = 0;
  const busy = {
    tryGet: api.tryGet.bind(api),
    replace: async () => {
      writes++;
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    },
  } as unknown as Pick<FakeKube, "tryGet" | "replace">;
  await assert.rejects(writeStatus<Thing>(busy, { ...ref, next: () => ({ seen: 4 }) }), RetryLater);
  assert.equal(writes, 5);
});

test("changedOnTop: what a pass changed goes on top of another writer's fields and conditions", () => {
  const c = (type: string, status: "True" | "False") => ({
    type,
    status,
    reason: "R",
    message: "",
    lastTransitionTime: "",
  });
  type S = { note?: string; seen?: number; other?: boolean; conditions?: Condition[] };
  const base: S = { note: "a", conditions: [c("Installed", "False"), c("Available", "False")] };
  const working: S = { seen: 1, conditions: [c("Installed", "True"), c("Available", "False")] };
  // with nothing written meanwhile, the working status as it is
  assert.equal(changedOnTop(base, working, structuredClone(base)), working);
  const fresh: S = { note: "a", other: true, conditions: [c("Installed", "False"), c("Available", "True")] };
  assert.deepEqual(changedOnTop(base, working, fresh), {
    other: true,
    seen: 1,
    conditions: [c("Installed", "True"), c("Available", "True")],
  });
});
