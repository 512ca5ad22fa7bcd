import { test } from "node:test";
import assert from "node:assert/strict";
import { olmCrdObjects, VERSION_RULE } from "./api.js";
import { clusterManifests } from "../manifests.js";

type Crd = {
  metadata: { name: string };
  spec: {
    scope: string;
    names: { kind: string };
    versions: {
      additionalPrinterColumns: { name: string; jsonPath: string }[];
      schema: { openAPIV3Schema: Record<string, unknown> };
    }[];
  };
};

const crd = olmCrdObjects()[0] as unknown as Crd;

test("ClusterExtension CRD: upstream's name, scope and printer columns", () => {
  assert.equal(crd.metadata.name, "clusterextensions.olm.operatorframework.io");
  assert.equal(crd.spec.scope, "Cluster");
  assert.deepEqual(
    crd.spec.versions[0].additionalPrinterColumns.map((c) => [c.name, c.jsonPath]),
    [
      ["Installed Bundle", ".status.install.bundle.name"],
      ["Version", ".status.install.bundle.version"],
      ["Installed", ".status.conditions[?(@.type=='Installed')].status"],
      ["Progressing", ".status.conditions[?(@.type=='Progressing')].status"],
      ["Age", ".metadata.creationTimestamp"],
    ],
  );
});

test("ClusterExtension CRD: upstream's descriptions on the fields (kubectl explain)", () => {
  const root = crd.spec.versions[0].schema.openAPIV3Schema as {
    description?: string;
    properties: { spec: { properties: { source: { properties: { catalog: { properties: Record<string, any> } } } } } };
  };
  assert.equal(root.description, "ClusterExtension is the Schema for the clusterextensions API");
  const version = root.properties.spec.properties.source.properties.catalog.properties.version;
  assert.match(version.description, /^version is an optional semver constraint/);
  assert.equal(version["x-kubernetes-validations"][0].rule, VERSION_RULE);
});

test("ClusterExtension's upstream version rule accepts the ranges its docs show and refuses nonsense", () => {
  // the CEL rule's regular expression (RE2 in the API server; these patterns mean the same in JS)
  const m = /self\.matches\("(.*)"\)$/.exec(VERSION_RULE);
  assert.ok(m);
  const re = new RegExp(m[1].replace(/\\\\/g, "\\"));
  for (const ok of [">=3.0, <3.6", "0.6.0", "1.2.x", "~1.2.3", "^0 || ^3 || ^5", ">=1.2.3, <2.0.0 || >3.0.0", "v1.0"])
    assert.ok(re.test(ok), ok);
  for (const bad of ["1.2.3.4", "latest", ">>1"]) assert.ok(!re.test(bad), bad);
});

test("opcat cluster manifests include the ClusterExtension API", () => {
  const names = clusterManifests({ local: true }).map((o) => `${o.kind}/${o.metadata.name}`);
  assert.ok(names.includes("CustomResourceDefinition/clusterextensions.olm.operatorframework.io"));
});
