/**
 * The contract the in-memory API server (src/cluster/kube/fake.ts) keeps with kube-apiserver: one set of
 * cases, run against the fake (src/cluster/kube/fake.test.ts) and against a real API server
 * (test/cluster/kubecontract.test.ts). A case the fake gets wrong fails there, not in a controller test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  isConflict,
  isGone,
  isNotFound,
  KubeApiError,
  type KubeObject,
  type KubeServer,
  type WatchEvent,
} from "../src/cluster/kube/client.js";
import { mapListsOf, type FakeResource } from "../src/cluster/kube/fake.js";

/** The custom resource the cases run on, as a real API server gets it (its CRD). */
export const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.contract.opcat.test" },
  spec: {
    group: "contract.opcat.test",
    names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: {
                type: "object",
                "x-kubernetes-preserve-unknown-fields": true,
                properties: {
                  conditions: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    items: {
                      type: "object",
                      required: ["type", "status"],
                      properties: {
                        type: { type: "string" },
                        status: { type: "string" },
                        reason: { type: "string" },
                        message: { type: "string" },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

/** The same kind as the fake serves it: namespaced, with a status subresource, its map lists from the CRD. */
export const WIDGET: FakeResource = {
  apiVersion: "contract.opcat.test/v1",
  kind: "Widget",
  resource: "widgets.contract.opcat.test",
  namespaced: true,
  statusSubresource: true,
  generation: true,
  mapLists: mapListsOf(WIDGET_CRD),
};

interface Widget extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

async function rejects(p: Promise<unknown>, status: number, reason: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof KubeApiError, String(e));
    assert.equal(e.status, status, e.message);
    assert.equal(e.reason, reason, e.message);
    return true;
  });
}

/**
 * The events of a watch of Widgets until `done` says enough (the server ends the watch after 60 s at the
 * latest, and the case then fails on what it has), bookmarks left out.
 */
async function watched(
  api: KubeServer,
  ns: string,
  query: Record<string, string>,
  done: (evs: WatchEvent[]) => boolean,
): Promise<WatchEvent[]> {
  const path = await api.path(WIDGET.apiVersion, WIDGET.kind, ns);
  const evs: WatchEvent[] = [];
  const stop = new AbortController();
  const onEvent = (e: WatchEvent) => {
    if (e.type === "BOOKMARK") return;
    evs.push(e);
    if (done(evs)) stop.abort();
  };
  await api.watch(path, { ...query, timeoutSeconds: 60 }, onEvent, stop.signal);
  return evs;
}

const brief = (evs: WatchEvent[]) =>
  evs.map((e) => `${e.type} ${e.object.metadata.name} ${JSON.stringify((e.object as Widget).spec ?? {})}`);

/**
 * Registers the contract's tests. `env()` gives the API to test and a namespace of its own, created
 * for the run (the cases make objects with fixed names in it).
 */
export function kubeContract(env: () => { api: KubeServer; ns: string }): void {
  const widget = (name: string, extra: Partial<Widget> = {}): Widget => ({
    apiVersion: WIDGET.apiVersion,
    kind: WIDGET.kind,
    ...extra,
    metadata: { name, namespace: env().ns, ...extra.metadata },
  });

  test("create sets uid, resourceVersion, creationTimestamp and, for a custom resource, generation 1", async () => {
    const { api, ns } = env();
    const w = await api.create(widget("w-create", { spec: { size: 1 } }));
    assert.match(w.metadata.uid ?? "", /^[0-9a-f-]{36}$/);
    assert.ok(w.metadata.resourceVersion);
    assert.match(w.metadata.creationTimestamp ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(w.metadata.generation, 1);
    const cm = await api.create<KubeObject>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm-create", namespace: ns },
    });
    assert.equal(cm.metadata.generation, undefined);
  });

  test("a second create of a name is AlreadyExists; a missing object is NotFound", async () => {
    const { api, ns } = env();
    await api.create(widget("w-twice"));
    await rejects(api.create(widget("w-twice")), 409, "AlreadyExists");
    await rejects(api.get(WIDGET.apiVersion, WIDGET.kind, "w-none", ns), 404, "NotFound");
    assert.equal(await api.tryGet(WIDGET.apiVersion, WIDGET.kind, "w-none", ns), undefined);
    assert.equal(await api.delete(WIDGET.apiVersion, WIDGET.kind, "w-none", ns), false);
  });

  test("an object in a namespace that does not exist is NotFound", async () => {
    const { api } = env();
    const w = widget("w-nowhere");
    w.metadata.namespace = "contract-no-such-namespace";
    await rejects(api.create(w), 404, "NotFound");
  });

  test("a replace with a stale resourceVersion is a Conflict; a fresh one succeeds and moves it", async () => {
    const { api } = env();
    const w = await api.create(widget("w-replace", { spec: { size: 1 } }));
    const next = await api.replace({ ...w, spec: { size: 2 } } as Widget);
    assert.notEqual(next.metadata.resourceVersion, w.metadata.resourceVersion);
    await assert.rejects(api.replace({ ...w, spec: { size: 3 } } as Widget), (e) => isConflict(e));
    const same = await api.replace(next);
    assert.equal(same.metadata.resourceVersion, next.metadata.resourceVersion, "a no-op write keeps the version");
  });

  test("spec changes count generations; /status writes status only, the object write never", async () => {
    const { api, ns } = env();
    const w = await api.create(widget("w-status", { spec: { size: 1 }, status: { ready: true } }));
    assert.equal((w as Widget).status, undefined, "status is dropped on create");
    const s = await api.replace({ ...w, spec: { size: 9 }, status: { ready: true } } as Widget, {
      subresource: "status",
    });
    assert.deepEqual(
      [(s as Widget).spec, (s as Widget).status, s.metadata.generation],
      [{ size: 1 }, { ready: true }, 1],
    );
    const g = await api.replace({ ...s, spec: { size: 2 }, status: { ready: false } } as Widget);
    assert.deepEqual(
      [(g as Widget).spec, (g as Widget).status, g.metadata.generation],
      [{ size: 2 }, { ready: true }, 2],
    );
    const m = await api.mergePatch<Widget>(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w-status",
      { status: { n: 1 } },
      {
        namespace: ns,
        subresource: "status",
      },
    );
    assert.deepEqual([m.status, m.metadata.generation], [{ ready: true, n: 1 }, 2]);
  });

  test("list by label selector, in each of its forms", async () => {
    const { api, ns } = env();
    for (const [name, labels] of [
      ["l-a1", { a: "1" }],
      ["l-a2", { a: "2" }],
      ["l-b", { b: "x" }],
    ] as const)
      await api.create(widget(name, { metadata: { name, labels: { contract: "list", ...labels } } }));
    const names = async (sel: string) =>
      (await api.list(WIDGET.apiVersion, WIDGET.kind, { namespace: ns, labelSelector: `contract=list,${sel}` })).items
        .map((o) => o.metadata.name)
        .sort();
    assert.deepEqual(await names("a=1"), ["l-a1"]);
    assert.deepEqual(await names("a!=1"), ["l-a2", "l-b"]);
    assert.deepEqual(await names("a"), ["l-a1", "l-a2"]);
    assert.deepEqual(await names("!a"), ["l-b"]);
    assert.deepEqual(await names("a in (1,2)"), ["l-a1", "l-a2"]);
    assert.deepEqual(await names("a notin (1)"), ["l-a2", "l-b"]);
  });

  test("a finalizer holds a deletion until it is removed; getLive no longer sees the object", async () => {
    const { api, ns } = env();
    await api.create(widget("w-final", { metadata: { name: "w-final", finalizers: ["contract.opcat.test/hold"] } }));
    assert.equal(await api.delete(WIDGET.apiVersion, WIDGET.kind, "w-final", ns), true);
    const held = await api.get(WIDGET.apiVersion, WIDGET.kind, "w-final", ns);
    assert.ok(held.metadata.deletionTimestamp);
    await api.create(widget("w-emptied", { metadata: { name: "w-emptied", finalizers: ["contract.opcat.test/a"] } }));
    const emptied = await api.mergePatch(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w-emptied",
      { metadata: { finalizers: [], labels: {} } },
      { namespace: ns },
    );
    assert.deepEqual([emptied.metadata.finalizers, emptied.metadata.labels], [undefined, undefined], "empty is absent");
    assert.equal(await api.getLive(WIDGET.apiVersion, WIDGET.kind, "w-final", { namespace: ns }), undefined);
    await api.mergePatch(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w-final",
      { metadata: { finalizers: null } },
      {
        namespace: ns,
      },
    );
    assert.equal(await api.tryGet(WIDGET.apiVersion, WIDGET.kind, "w-final", ns), undefined);
  });

  test("a merge patch removes with null, and with a stale resourceVersion it is a Conflict", async () => {
    const { api, ns } = env();
    const w = await api.create(widget("w-merge", { spec: { a: 1, b: { c: 2, d: 3 } } }));
    const p = await api.mergePatch<Widget>(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w-merge",
      { spec: { b: { c: null } } },
      {
        namespace: ns,
      },
    );
    assert.deepEqual(p.spec, { a: 1, b: { d: 3 } });
    await assert.rejects(
      api.mergePatch(
        WIDGET.apiVersion,
        WIDGET.kind,
        "w-merge",
        {
          metadata: { resourceVersion: w.metadata.resourceVersion },
          spec: { a: 2 },
        },
        { namespace: ns },
      ),
      (e) => isConflict(e),
    );
  });

  test("server-side apply creates, updates, and drops what the same manager no longer applies", async () => {
    const { api, ns } = env();
    const a = await api.apply(widget("w-apply", { spec: { x: 1, y: 2 } }), { fieldManager: "one" });
    assert.deepEqual((a as Widget).spec, { x: 1, y: 2 });
    await api.apply(widget("w-apply", { spec: { z: 3 } }), { fieldManager: "two" });
    const b = await api.apply(widget("w-apply", { spec: { x: 5 } }), { fieldManager: "one" });
    assert.deepEqual((b as Widget).spec, { x: 5, z: 3 }, "y dropped by its manager, z kept (another's)");
    assert.equal(b.metadata.generation, 3);
    await assert.rejects(api.get(WIDGET.apiVersion, WIDGET.kind, "w-gone", ns), (e) => isNotFound(e));
  });

  applyListContract(env, widget);
  watchContract(env, widget);
  accessContract(env, widget);
}

type WidgetOf = (name: string, extra?: Partial<Widget>) => Widget;

function applyListContract(env: () => { api: KubeServer; ns: string }, widget: WidgetOf): void {
  type Cond = { type: string; status: string; reason?: string };
  const cond = (type: string, status = "True"): Cond => ({ type, status, reason: `${type}Reason` });
  const conditions = (w: Widget) => ((w.status?.conditions ?? []) as Cond[]).map((c) => `${c.type}=${c.status}`).sort();
  const applyStatus = (name: string, manager: string, cs: Cond[], resourceVersion?: string) =>
    env().api.apply(widget(name, { metadata: { name, resourceVersion }, status: { conditions: cs } }), {
      subresource: "status",
      fieldManager: manager,
    }) as Promise<Widget>;

  test("server-side apply merges a map list (conditions by type): each manager's items, a PUT's kept", async () => {
    const { api, ns } = env();
    await api.create(widget("w-conds", { spec: { size: 1 } }));
    await applyStatus("w-conds", "one", [cond("A"), cond("Shared", "False")]);
    const two = await applyStatus("w-conds", "two", [cond("B")]);
    assert.deepEqual(conditions(two), ["A=True", "B=True", "Shared=False"], "merged by type, not replaced");
    const third = { ...two, status: { conditions: [...(two.status!.conditions as Cond[]), cond("C")] } };
    await api.replace(third, { subresource: "status" });
    const again = await applyStatus("w-conds", "one", [cond("A", "False"), cond("Shared", "False")]);
    assert.deepEqual(conditions(again), ["A=False", "B=True", "C=True", "Shared=False"], "a PUT's item kept");
    const dropped = await applyStatus("w-conds", "one", [cond("D")]);
    assert.deepEqual(conditions(dropped), ["B=True", "C=True", "D=True"], "A and Shared dropped by their manager");
    const fresh = await api.get<Widget>(WIDGET.apiVersion, WIDGET.kind, "w-conds", ns);
    assert.deepEqual(fresh.spec, { size: 1 }, "a status apply leaves the spec");
    const gone = await applyStatus("w-conds", "two", [], fresh.metadata.resourceVersion);
    assert.deepEqual(conditions(gone), ["C=True", "D=True"], "B dropped by its manager; the others stay");
    await rejects(applyStatus("w-conds", "two", [cond("B")], fresh.metadata.resourceVersion), 409, "Conflict");
  });
}

function watchContract(env: () => { api: KubeServer; ns: string }, widget: WidgetOf): void {
  test("a watch from a list's resourceVersion sees every change after it, in order", async () => {
    const { api, ns } = env();
    const labels = { contract: "watch-order" };
    await api.create(widget("w-before", { metadata: { name: "w-before", labels } }));
    const { resourceVersion } = await api.list(WIDGET.apiVersion, WIDGET.kind, { namespace: ns });
    await api.create(widget("w-order", { metadata: { name: "w-order", labels }, spec: { size: 1 } }));
    await api.mergePatch(WIDGET.apiVersion, WIDGET.kind, "w-order", { spec: { size: 2 } }, { namespace: ns });
    await api.delete(WIDGET.apiVersion, WIDGET.kind, "w-order", ns);
    const evs = await watched(api, ns, { resourceVersion, labelSelector: "contract=watch-order" }, (e) =>
      e.some((x) => x.type === "DELETED"),
    );
    assert.deepEqual(brief(evs), [
      'ADDED w-order {"size":1}',
      'MODIFIED w-order {"size":2}',
      'DELETED w-order {"size":2}',
    ]);
    const rvs = new Set([resourceVersion, ...evs.map((e) => e.object.metadata.resourceVersion)]);
    assert.equal(rvs.size, 4, "each change has a resourceVersion of its own");
  });

  test("a watch by label selector: an object that stops matching is DELETED, one that starts ADDED", async () => {
    const { api, ns } = env();
    const { resourceVersion } = await api.list(WIDGET.apiVersion, WIDGET.kind, { namespace: ns });
    await api.create(widget("w-sel", { metadata: { name: "w-sel", labels: { contract: "watch-sel" } } }));
    await api.create(widget("w-other", { metadata: { name: "w-other", labels: { contract: "watch-none" } } }));
    const relabel = (name: string, value: string) =>
      api.mergePatch(
        WIDGET.apiVersion,
        WIDGET.kind,
        name,
        { metadata: { labels: { contract: value } } },
        { namespace: ns },
      );
    await relabel("w-sel", "watch-none");
    await relabel("w-other", "watch-sel");
    const evs = await watched(api, ns, { resourceVersion, labelSelector: "contract=watch-sel" }, (e) => e.length >= 3);
    assert.deepEqual(brief(evs), ["ADDED w-sel {}", "DELETED w-sel {}", "ADDED w-other {}"]);
  });

  test("a watch without a resourceVersion starts with the objects there are, as ADDED", async () => {
    const { api, ns } = env();
    await api.create(widget("w-there", { metadata: { name: "w-there", labels: { contract: "watch-there" } } }));
    const evs = await watched(api, ns, { labelSelector: "contract=watch-there" }, (e) => e.length >= 1);
    assert.deepEqual(brief(evs), ["ADDED w-there {}"]);
  });

  test("a watch from a resourceVersion the server no longer has is 410 Gone (the informer lists again)", async () => {
    const { api, ns } = env();
    await assert.rejects(
      watched(api, ns, { resourceVersion: "1" }, () => true),
      (e) => isGone(e) && (e as KubeApiError).reason === "Expired",
    );
  });
}

function accessContract(env: () => { api: KubeServer; ns: string }, widget: WidgetOf): void {
  test("a dry run (dryRun=All) is validated and answered, never stored", async () => {
    const { api, ns } = env();
    const made = await api.apply(widget("w-dry", { spec: { size: 1 } }), { dryRun: true });
    assert.equal(made.metadata.name, "w-dry");
    const path = await api.path(WIDGET.apiVersion, WIDGET.kind, ns);
    await api.request("POST", path, { body: widget("w-dry"), query: { dryRun: "All" } });
    assert.equal(await api.tryGet(WIDGET.apiVersion, WIDGET.kind, "w-dry", ns), undefined);
    const nowhere = widget("w-dry");
    nowhere.metadata.namespace = "contract-no-such-namespace";
    await rejects(api.apply(nowhere, { dryRun: true }), 404, "NotFound");
    const kept = await api.create(widget("w-dry-kept", { spec: { size: 1 } }));
    await api.apply(widget("w-dry-kept", { spec: { size: 2 } }), { dryRun: true });
    await api.request("DELETE", `${path}/w-dry-kept`, { query: { dryRun: "All" } });
    const after = await api.get<Widget>(WIDGET.apiVersion, WIDGET.kind, "w-dry-kept", ns);
    assert.deepEqual([after.spec, after.metadata.resourceVersion], [{ size: 1 }, kept.metadata.resourceVersion]);
  });

  test("an impersonated user without rights is Forbidden, and a SubjectAccessReview says so", async () => {
    const { api, ns } = env();
    const user = "contract-nobody";
    const as = api.impersonating({ username: user, groups: ["system:authenticated"] });
    await assert.rejects(as.create(widget("w-denied")), (e: unknown) => {
      assert.ok(e instanceof KubeApiError && e.status === 403 && e.reason === "Forbidden", String(e));
      assert.equal(
        e.message,
        `widgets.contract.opcat.test is forbidden: User "${user}" cannot create resource "widgets" in API group ` +
          `"contract.opcat.test" in the namespace "${ns}"`,
      );
      return true;
    });
    assert.deepEqual(await as.whoami().then((u) => u.username), user);
    const review = (who: string) =>
      api.request<{ status: { allowed: boolean } }>("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: { user: who, resourceAttributes: { verb: "get", group: "", resource: "configmaps", namespace: ns } },
        },
      });
    assert.equal((await review(user)).status.allowed, false);
  });
}
