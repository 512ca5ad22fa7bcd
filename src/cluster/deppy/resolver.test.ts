/**
 * The Deppy resolver's steps (settled, gather, classes, inputs, resolve, statuses, generatedInputs,
 * notify), each outcome a named case: the real controller on the in-memory API server
 * (runtime/controllerkit.test.ts), its informers watching it, resolving with the real resolver (in its
 * worker thread) over what a real ClusterCatalog controller serves from catalog images on disk.
 */
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { FakeKube } from "../kube/fake.js";
import { CATALOG_API_VERSION } from "../catalogd/api.js";
import { type CatalogBeside, catalogBeside, publish, startBeside, stopBeside } from "../catalogd/catalogkit.test.js";
import { API_VERSION as RUKPAK, type Bundle, type Instance } from "../rukpak/api.js";
import { condition, customResource, eventsOf, fbc, settled } from "../runtime/controllerkit.test.js";
import {
  defaultInputClasses,
  DEPPY_API_VERSION,
  LABEL_GENERATED_FOR,
  LABEL_INPUT,
  type Input,
  type InputClass,
} from "./api.js";
import { DeppyController, RESOLVESET_FILE, resolvesetInstanceName } from "./resolver.js";

const NAMESPACE = "opcat-system";
const RESOURCES = [
  customResource(CATALOG_API_VERSION, "ClusterCatalog", "clustercatalogs"),
  customResource(DEPPY_API_VERSION, "Input", "inputs"),
  { ...customResource(DEPPY_API_VERSION, "InputClass", "inputclasses"), statusSubresource: false },
  customResource(RUKPAK, "Instance", "instances"),
  customResource(RUKPAK, "Bundle", "bundles"),
];
/** The catalog: tiny (1.0.0, 1.1.0), needy (requires base), base. */
const CATALOG = [
  fbc.package("tiny", ["1.0.0", "1.1.0"]),
  fbc.package("needy", ["1.0.0"], ["base"]),
  fbc.package("base", ["1.0.0"]),
].join("\n");

interface World extends CatalogBeside {
  api: FakeKube;
  deppy: DeppyController;
  resolved: number;
}

describe("Deppy resolver steps on the fake API server", () => {
  let w: World;
  const idle = () => settled(w.catalogs.queue, w.deppy.queue);
  beforeEach(async () => {
    const api = new FakeKube(RESOURCES);
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
    for (const c of defaultInputClasses()) await api.create(c);
    const { catalogs, tmp } = await catalogBeside(api, "opcat-resolver-", CATALOG);
    const deppy = new DeppyController({ client: api, catalogs, namespace: NAMESPACE });
    w = { api, catalogs, deppy, tmp, resolved: 0 };
    deppy.onResolved(() => w.resolved++);
  });
  afterEach(() => stopBeside(w, w.deppy));
  const start = () => startBeside(w, w.deppy);
  const input = async (name: string, pkg: string, inputClass = "subscription") => {
    await w.api.create<Input>({
      apiVersion: DEPPY_API_VERSION,
      kind: "Input",
      metadata: { name },
      spec: { inputClass, constraints: [{ type: "olm.catalog", value: { package: pkg } }] },
    });
    await idle();
    return w.api.get<Input>(DEPPY_API_VERSION, "Input", name);
  };

  describe("settled", () => {
    test("before every ClusterCatalog was tried nothing is resolved; once they were, everything is", async () => {
      await w.deppy.start();
      await w.api.create<Input>({
        apiVersion: DEPPY_API_VERSION,
        kind: "Input",
        metadata: { name: "early" },
        spec: { constraints: [{ type: "olm.catalog", value: { package: "tiny" } }] },
      });
      await idle();
      const before = await w.api.get<Input>(DEPPY_API_VERSION, "Input", "early");
      assert.deepEqual([before.status, w.resolved], [undefined, 0]);
      await w.catalogs.start();
      await idle();
      const after = await w.api.get<Input>(DEPPY_API_VERSION, "Input", "early");
      assert.equal(condition(after, "Resolved").is, "True Resolved");
      assert.ok(w.resolved > 0);
    });
  });

  describe("inputs and statuses", () => {
    test("an Input that resolves: Resolved, its instances, a resolveset Bundle, ConfigMap and Instance", async () => {
      await start();
      const i = await input("tiny", "tiny");
      assert.deepEqual(condition(i, "Resolved"), { is: "True Resolved", message: "resolved to tiny.v1.1.0 (install)" });
      assert.equal(condition(i, "ResolutionFailed").is, "False Resolved");
      assert.equal(condition(i, "UpdateBlocked").is, "False NotBlocked");
      assert.deepEqual(
        i.status?.instances?.map((x) => [x.package, x.version, x.catalog]),
        [["tiny", "1.1.0", "main"]],
      );
      const rs = i.status?.resolveset ?? "";
      const bundle = await w.api.get<Bundle>(RUKPAK, "Bundle", rs);
      assert.deepEqual(
        bundle.metadata.ownerReferences?.map((o) => [o.kind, o.name]),
        [["Input", "tiny"]],
      );
      const cm = await w.api.get<{ data: Record<string, string> } & Bundle>("v1", "ConfigMap", rs, NAMESPACE);
      assert.match(cm.data[RESOLVESET_FILE], /tiny\.v1\.1\.0/);
      const inst = await w.api.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName("tiny"));
      assert.deepEqual([inst.spec.bundle.name, inst.metadata.labels?.[LABEL_INPUT]], [rs, "tiny"]);
      assert.ok(w.resolved > 0, "listeners hear of the resolution");
    });

    test("a dry-run class: Resolved DryRun, a resolveset Bundle and no Instance", async () => {
      await start();
      const i = await input("trial", "tiny", "dry-run");
      assert.equal(condition(i, "Resolved").is, "True DryRun");
      assert.equal(
        condition(i, "Resolved").message,
        `would install tiny.v1.1.0 (install) (dry run: resolveset Bundle ${i.status?.resolveset}, no Instance)`,
      );
      assert.ok(await w.api.tryGet(RUKPAK, "Bundle", i.status?.resolveset ?? ""));
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", resolvesetInstanceName("trial")), undefined);
    });

    test("a package no catalog has: Resolved False with the resolver's reason, a Warning, no resolveset", async () => {
      await start();
      const i = await input("ghost", "ghost");
      const why =
        "unable to find a solution that matches the constraints: input ghost is requested; " +
        "no operators found in package ghost in the catalogs referenced by input ghost";
      assert.deepEqual(condition(i, "ResolutionFailed"), { is: "True ConstraintsNotSatisfiable", message: why });
      assert.deepEqual(condition(i, "Resolved"), { is: "False ConstraintsNotSatisfiable", message: why });
      assert.equal(i.status?.resolveset, undefined);
      assert.deepEqual(await eventsOf(w.api, "ghost"), ["Warning ResolutionFailed"]);
    });

    test("an InputClass that does not exist: InputClassNotFound, a Warning", async () => {
      await start();
      const i = await input("classless", "tiny", "nope");
      assert.deepEqual(condition(i, "ResolutionFailed"), {
        is: "True InputClassNotFound",
        message: "InputClass nope does not exist (kubectl get inputclasses lists them)",
      });
      assert.equal(condition(i, "Resolved").is, "False InputClassNotFound");
      assert.deepEqual(await eventsOf(w.api, "classless"), ["Warning InputClassNotFound"]);
    });

    test("a class the cluster is too old for: ClusterVersionTooOld (the fake's /version)", async () => {
      await w.api.create<InputClass>({
        apiVersion: DEPPY_API_VERSION,
        kind: "InputClass",
        metadata: { name: "future" },
        parameters: { constraints: [{ type: "minKubeVersion", value: "9.99" }] },
      } as InputClass);
      await start();
      const i = await input("later", "tiny", "future");
      const version = (await w.api.request<{ gitVersion: string }>("GET", "/version")).gitVersion.replace(
        /^v|-.*$/g,
        "",
      );
      assert.deepEqual(condition(i, "ResolutionFailed"), {
        is: "True ClusterVersionTooOld",
        message: `the cluster runs Kubernetes ${version} but InputClass future requires 9.99`,
      });
    });

    test("a class constraining the OpenShift version on a cluster without one: noted, resolved", async () => {
      await start();
      const i = await input("noted", "tiny");
      assert.equal(condition(i, "OpenShiftVersionChecked").is, "False NoClusterVersion");
      assert.equal(condition(i, "Resolved").is, "True Resolved");
    });
  });

  describe("generatedInputs and catalog changes", () => {
    test("a dependency: an Input of its own, owned by the Input that needed it", async () => {
      await start();
      const i = await input("needy", "needy");
      assert.equal(condition(i, "Resolved").message, "resolved to base.v1.0.0 (install), needy.v1.0.0 (install)");
      const generated = (await w.api.list<Input>(DEPPY_API_VERSION, "Input")).items.filter(
        (x) => x.metadata.labels?.[LABEL_GENERATED_FOR] === "needy",
      );
      assert.equal(generated.length, 1);
      assert.deepEqual(
        generated[0].metadata.ownerReferences?.map((o) => [o.name, o.uid]),
        [["needy", i.metadata.uid]],
      );
      assert.equal(generated[0].metadata.name, "base");
      assert.match(JSON.stringify(generated[0].spec.constraints), /"package":"base"/);
    });

    test("a catalog serving new content: every Input is resolved again, to the new head", async () => {
      await start();
      await input("tiny", "tiny");
      await publish(
        w,
        CATALOG.replace(fbc.package("tiny", ["1.0.0", "1.1.0"]), fbc.package("tiny", ["1.0.0", "1.1.0", "1.2.0"])),
      );
      await w.api.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "main", { spec: { priority: 1 } });
      await idle();
      const i = await w.api.get<Input>(DEPPY_API_VERSION, "Input", "tiny");
      assert.deepEqual(condition(i, "Resolved"), { is: "True Resolved", message: "resolved to tiny.v1.2.0 (install)" });
      const inst = await w.api.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName("tiny"));
      assert.equal(inst.spec.bundle.name, i.status?.resolveset);
    });
  });
});
