/** The in-memory API server keeps kube-apiserver's contract (the same cases run on a real one). */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { kubeContract, WIDGET } from "../../../test/kubecontract.js";
import { KubeApiError, type KubeObject } from "./client.js";
import { FakeKube } from "./fake.js";
import { Informer } from "./informer.js";

describe("FakeKube keeps the API server's contract", () => {
  let api: FakeKube;
  before(async () => {
    api = new FakeKube([WIDGET]);
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "contract" } });
  });
  kubeContract(() => ({ api, ns: "contract" }));
});

describe("an Informer on FakeKube", () => {
  const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } });
  const settle = () => new Promise((r) => setImmediate(r));

  test("lists, then follows creates, updates and deletes through its watch", async () => {
    const api = new FakeKube();
    await api.create(cm("one"));
    const seen: string[] = [];
    const inf = new Informer(api, "v1", "ConfigMap").on((ev, o) => seen.push(`${ev} ${o.metadata.name}`));
    await inf.start();
    await api.create(cm("two"));
    await api.mergePatch("v1", "ConfigMap", "one", { data: { a: "1" } }, { namespace: "default" });
    await api.delete("v1", "ConfigMap", "two", "default");
    await settle();
    inf.stop();
    assert.deepEqual(seen, ["add one", "add two", "update one", "delete two"]);
    assert.deepEqual(
      inf.list().map((o) => o.metadata.name),
      ["one"],
    );
    assert.equal(api.requests.WATCH, 1);
  });

  test("resuming from a resourceVersion the fake no longer has is 410 Gone: the informer lists again", async () => {
    const api = new FakeKube();
    const old = api.resourceVersion;
    await api.create(cm("kept"));
    api.compact();
    const inf = new Informer(api, "v1", "ConfigMap", { resourceVersion: old });
    await inf.start();
    while (inf.lists === 0) await settle();
    inf.stop();
    assert.deepEqual([inf.gone, inf.lists, inf.list().map((o) => o.metadata.name)], [1, 1, ["kept"]]);
  });
});

describe("FakeKube's admission", () => {
  test("mutates creates and updates as the writer's user, never status writes; a throw refuses", async () => {
    const seen: string[] = [];
    const api = new FakeKube([WIDGET], {
      allowed: ["alice"],
      admit: ({ operation, object, userInfo }) => {
        seen.push(`${operation} ${object.metadata.name} ${userInfo.username}`);
        if (object.metadata.name === "refused") throw new KubeApiError(403, "Forbidden", "admission webhook denied");
        return { ...object, metadata: { ...object.metadata, labels: { stamped: userInfo.username } } };
      },
    });
    const w: KubeObject = {
      apiVersion: WIDGET.apiVersion,
      kind: WIDGET.kind,
      metadata: { name: "w", namespace: "default" },
    };
    const made = await api.impersonating({ username: "alice" }).create(w);
    assert.deepEqual(made.metadata.labels, { stamped: "alice" });
    const next = await api.mergePatch(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w",
      { spec: { a: 1 } },
      { namespace: "default" },
    );
    assert.deepEqual(next.metadata.labels, { stamped: "system:admin" });
    await api.mergePatch(
      WIDGET.apiVersion,
      WIDGET.kind,
      "w",
      { status: { ok: 1 } },
      { namespace: "default", subresource: "status" },
    );
    await assert.rejects(
      api.create({ ...w, metadata: { ...w.metadata, name: "refused" } }),
      /admission webhook denied/,
    );
    assert.equal(await api.tryGet(WIDGET.apiVersion, WIDGET.kind, "refused", "default"), undefined);
    assert.deepEqual(seen, ["CREATE w alice", "UPDATE w system:admin", "CREATE refused system:admin"]);
  });
});
