/** The one status-write policy, on the in-memory API server (held to kube-apiserver's contract). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeApiError, type KubeObject } from "../kube/client.js";
import type { Condition } from "../kube/conditions.js";
import { FakeKube, type FakeResource } from "../kube/fake.js";
import { customResource } from "./controllerkit.test.js";
import { RetryLater } from "./steps.js";
import { applyConditions, changedOnTop, writeStatus } from "./status.js";

const THING: FakeResource = {
  ...customResource("example.com/v1", "Thing", "things"),
  mapLists: { "status.conditions": ["type"] },
};
interface Thing extends KubeObject {
  spec?: { n: number };
  status?: { seen?: number; note?: string; conditions?: Condition[] };
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

test("applyConditions: a manager's conditions merged with another writer's, only when changed", async () => {
  const { api, thing } = await setup();
  const c = (type: string, status: "True" | "False"): Condition => ({
    type,
    status,
    reason: "R",
    message: type,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  const mine = { ...ref, fieldManager: "second", uid: thing.metadata.uid };
  const other = await api.replace<Thing>(
    { ...thing, status: { note: "owner's", conditions: [c("Installed", "True")] } },
    { subresource: "status" },
  );
  // the cache's copy is stale (it has no status): the Conflict reads again
  const stale = { ...mine, cached: thing, conditions: () => [c("Available", "False")] };
  assert.equal(await applyConditions<Thing>(api, stale), "written");
  let now = await api.get<Thing>(ref.apiVersion, ref.kind, "t");
  assert.equal(now.status?.note, "owner's");
  assert.deepEqual(now.status?.conditions, [c("Installed", "True"), c("Available", "False")]);
  assert.notEqual(now.metadata.resourceVersion, other.metadata.resourceVersion);
  const before = { ...api.requests };
  const same = { ...mine, cached: now, conditions: () => [c("Available", "False")] };
  assert.equal(await applyConditions<Thing>(api, same), "unchanged");
  assert.equal(await applyConditions<Thing>(api, { ...mine, cached: now, conditions: () => undefined }), "unchanged");
  assert.deepEqual(api.requests, before, "nothing to change: no request");
  // the owner's PUT keeps the condition as it is
  await api.replace<Thing>({ ...now, status: { ...now.status, seen: 1 } }, { subresource: "status" });
  const up = { ...mine, conditions: () => [c("Available", "True")] };
  assert.equal(await applyConditions<Thing>(api, up), "written");
  now = await api.get<Thing>(ref.apiVersion, ref.kind, "t");
  assert.deepEqual(now.status, {
    note: "owner's",
    seen: 1,
    conditions: [c("Installed", "True"), c("Available", "True")],
  });
  await api.delete(ref.apiVersion, ref.kind, "t");
  assert.equal(await applyConditions<Thing>(api, up), "gone");
});
