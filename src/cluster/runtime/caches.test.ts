import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient } from "../kube/client.js";
import type { Informer } from "../kube/informer.js";
import { CatalogController } from "../catalogd/catalogs.js";
import { OperatorController } from "../operators/operator.js";
import { DeppyController } from "../deppy/resolver.js";
import { ResolvesetProvisioner } from "../deppy/resolveset.js";
import { RESOLVESET_STEPS } from "../deppy/resolvesetsteps.js";
import { ExtensionController } from "../olm/extension.js";
import { API_VERSION } from "../rukpak/api.js";
import { RukpakController } from "../rukpak/controller.js";
import type { SigningKey } from "../rukpak/trust.js";
import { SharedCaches } from "./caches.js";
import type { Controller } from "./controller.js";

const client = {} as KubeClient;
const key = {} as SigningKey;

/** Every controller of a full process, as `run.ts` builds them (not started: nothing is asked of the server). */
function processControllers(caches?: SharedCaches): Controller[] {
  const rukpak = new RukpakController({ client, stateDir: "/nonexistent", key, caches });
  const catalogs = new CatalogController({ client, stateDir: "/nonexistent", caches });
  const deppy = new DeppyController({ client, catalogs, namespace: "opcat-system", caches });
  const resolvesets = new ResolvesetProvisioner({ client, bundleStore: "/nonexistent", key, self: "me", caches });
  const operators = new OperatorController({ client, deppy, caches });
  const extensions = new ExtensionController({ client, catalogs, key, caches });
  return [
    rukpak.bundleController,
    rukpak.instanceController,
    catalogs.controller,
    deppy.controller,
    resolvesets.bundleController,
    resolvesets.instanceController,
    operators.controller,
    extensions.controller,
  ] as unknown as Controller[];
}

/** The informers (one list+watch each) the controllers start. */
function informersOf(cs: Controller[]): Set<Informer> {
  const out = new Set<Informer>();
  for (const c of cs) {
    out.add(c.primary);
    for (const i of c.caches.values()) out.add(i);
  }
  return out;
}

test("one informer per kind and options in a process: 32 watches without the shared caches, 25 with them", () => {
  assert.equal(informersOf(processControllers()).size, 32);
  const caches = new SharedCaches(client);
  const shared = informersOf(processControllers(caches));
  assert.equal(shared.size, 25);
  assert.equal(caches.size, 25);
  // the controllers that watch every Instance (RukPak's two, the resolveset provisioner, the Operator and
  // ClusterExtension controllers) read the same cache
  const instances = caches.informer(API_VERSION, "Instance");
  const all = processControllers(caches);
  assert.equal(caches.size, 25, "a second set of controllers opens nothing more");
  const readers = all.filter((c) => c.primary === instances || c.caches.get(`${API_VERSION}/Instance`) === instances);
  assert.equal(readers.length, 5);
  // a label selector is another cache (Deppy's package Instances)
  assert.notEqual(caches.informer(API_VERSION, "Instance", { labelSelector: "x" }), instances);
});

test("SharedCaches: the same informer for the same kind, namespace and label selector", () => {
  const caches = new SharedCaches(client);
  const a = caches.informer("v1", "ConfigMap", { namespace: "a" });
  assert.equal(caches.informer("v1", "ConfigMap", { namespace: "a" }), a);
  assert.notEqual(caches.informer("v1", "ConfigMap", { namespace: "b" }), a);
  assert.notEqual(caches.informer("v1", "ConfigMap"), a);
  assert.equal(caches.size, 3);
});

test("the reconciles' steps, in order", () => {
  assert.deepEqual(
    RESOLVESET_STEPS.map(([n]) => n),
    [
      "unpacked",
      "entries",
      "entryBundles",
      "conflicts",
      "classes",
      "entriesUnpacked",
      "approval",
      "packageInstances",
      "installed",
    ],
  );
  const catalogs = new CatalogController({ client, stateDir: "/nonexistent" });
  const deppy = new DeppyController({ client, catalogs, namespace: "opcat-system" });
  const operators = new OperatorController({ client, deppy });
  const names = (o: object) => (o as unknown as { steps: { name: string }[] }).steps.map((s) => s.name);
  assert.deepEqual(names(deppy), [
    "settled",
    "gather",
    "classes",
    "inputs",
    "resolve",
    "statuses",
    "generatedInputs",
    "notify",
  ]);
  assert.deepEqual(names(operators), [
    "spec",
    "bundleInstance",
    "input",
    "catalogRefs",
    "catalogInstalled",
    "updates",
    "installedVersion",
    "available",
  ]);
  assert.deepEqual(names(catalogs), [
    "deleted",
    "unavailable",
    "finalizer",
    "specChanged",
    "newSource",
    "pull",
    "status",
  ]);
});
