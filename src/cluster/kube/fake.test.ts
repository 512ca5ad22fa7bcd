/** The in-memory API server keeps kube-apiserver's contract (the same cases run on a real one). */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { kubeContract, WIDGET } from "../../../test/kubecontract.js";
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
