import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle, modes } from "../../../../test/cluster/registryv1.js";
import { type ConvertOptions, generateContext, renderContext } from "./context.js";

const cases: {
  name: string;
  opts?: ConvertOptions;
  annotations?: Record<string, string>;
  supported?: string[];
  want: { installNamespace: string; targetNamespaces: string[] | string };
}[] = [
  {
    name: "defaults: <package>-system, all namespaces",
    want: { installNamespace: "pkg-system", targetNamespaces: [""] },
  },
  {
    name: "the CSV's suggested namespace",
    annotations: { "operatorframework.io/suggested-namespace": "suggested" },
    want: { installNamespace: "suggested", targetNamespaces: [""] },
  },
  {
    name: "the install namespace option first",
    opts: { installNamespace: "mine" },
    annotations: { "operatorframework.io/suggested-namespace": "suggested" },
    want: { installNamespace: "mine", targetNamespaces: [""] },
  },
  {
    name: "own namespace by default without AllNamespaces",
    supported: ["OwnNamespace"],
    want: { installNamespace: "pkg-system", targetNamespaces: ["pkg-system"] },
  },
  {
    name: "the reason when the install modes refuse the watch namespaces",
    supported: ["OwnNamespace"],
    opts: { watchNamespaces: ["a", "b"] },
    want: {
      installNamespace: "pkg-system",
      targetNamespaces: "supported install modes [OwnNamespace] do not support target namespaces [a b]",
    },
  },
];
for (const c of cases)
  test(`renderContext: ${c.name}`, () => {
    const b = bundle(
      { installModes: modes(...(c.supported ?? ["AllNamespaces", "OwnNamespace"])) },
      [],
      "pkg",
      c.annotations,
    );
    const ctx = renderContext(b, c.opts);
    assert.deepEqual({ installNamespace: ctx.installNamespace, targetNamespaces: ctx.targetNamespaces }, c.want);
  });

test("renderContext: the CSV's parts and the bundle's manifests by role", () => {
  const b = bundle(
    {
      install: {
        spec: {
          deployments: [{ name: "op" }, "not an object"],
          permissions: [{ serviceAccountName: "", rules: [{ verbs: ["get"] }] }],
          clusterPermissions: [{ serviceAccountName: "sa" }],
        },
      },
      webhookdefinitions: [{ type: "ValidatingAdmissionWebhook" }],
    },
    [
      { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "a.example.com" } },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
    ],
  );
  const ctx = renderContext(b);
  assert.deepEqual(ctx.deployments, [{ name: "op" }]);
  assert.deepEqual(ctx.permissions, [{ serviceAccountName: "default", rules: [{ verbs: ["get"] }] }]);
  assert.deepEqual(ctx.clusterPermissions, [{ serviceAccountName: "sa", rules: [] }]);
  assert.deepEqual(
    ctx.crds.map((m) => m.kind),
    ["CustomResourceDefinition"],
  );
  assert.deepEqual(
    ctx.others.map((m) => m.kind),
    ["ConfigMap"],
  );
  assert.equal(ctx.webhooks.length, 1);
});

test('generateContext: AllNamespaces when the targets are [""]', () => {
  const ctx = renderContext(bundle({ installModes: modes("AllNamespaces") }));
  assert.equal(generateContext(ctx, [""]).allNamespaces, true);
  assert.equal(generateContext(ctx, ["a"]).allNamespaces, false);
});
