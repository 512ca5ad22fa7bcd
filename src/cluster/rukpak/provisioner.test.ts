import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeClient } from "../kube/client.js";
import { OPERATOR_PROVISIONER, PLAIN_PROVISIONER, type Bundle, type Instance } from "./api.js";
import { builtinProvisioners } from "./controller.js";
import { plainProvisioner } from "./plain.js";
import { ProvisionerRegistry, type Provisioner } from "./provisioner.js";
import { registryV1Provisioner } from "./registryv1.js";

test("the built-in registry: each class's provisioner installs its own format", () => {
  const r = builtinProvisioners();
  assert.deepEqual(r.ids().sort(), [OPERATOR_PROVISIONER, PLAIN_PROVISIONER].sort());
  assert.equal(r.forContent(OPERATOR_PROVISIONER, "registry+v1"), registryV1Provisioner);
  assert.equal(r.forContent(PLAIN_PROVISIONER, "plain"), plainProvisioner);
});

test("content another provisioner accepts goes to it; content of no known format is read as plain", () => {
  const r = builtinProvisioners();
  // as before the registry: a registry+v1 bundle of a plain class is converted, plain manifests of an
  // operator class are applied as they are, and a tree of no known format is plain
  assert.equal(r.forContent(PLAIN_PROVISIONER, "registry+v1"), registryV1Provisioner);
  assert.equal(r.forContent(OPERATOR_PROVISIONER, "plain"), plainProvisioner);
  assert.equal(r.forContent(OPERATOR_PROVISIONER, undefined), plainProvisioner);
  assert.equal(r.forContent(OPERATOR_PROVISIONER, "something"), plainProvisioner);
  assert.equal(r.forContent("example.com/unknown", "registry+v1"), registryV1Provisioner);
});

test("a registry refuses an id twice, and a provisioner of its own id wins for the formats it accepts", () => {
  const helm: Provisioner = {
    id: "example.com/helm",
    formats: ["helm", "plain"],
    desired: async () => ({ objects: [], format: "helm" }),
  };
  const r = new ProvisionerRegistry([plainProvisioner, helm]);
  assert.throws(() => r.register(plainProvisioner), /registered twice/);
  assert.equal(r.forContent("example.com/helm", "plain"), helm);
  assert.equal(r.forContent(PLAIN_PROVISIONER, "plain"), plainProvisioner);
  assert.equal(r.forContent(PLAIN_PROVISIONER, "helm"), helm);
  assert.equal(new ProvisionerRegistry().forContent(PLAIN_PROVISIONER, "plain"), undefined);
});

test("the plain provisioner: every object of manifests/, as it is", async () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-plain-"));
  try {
    mkdirSync(join(dir, "manifests"));
    writeFileSync(
      join(dir, "manifests", "a.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n---\n" +
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
    );
    const out = await plainProvisioner.desired({} as Bundle, {} as Instance, { client: {} as KubeClient, dir });
    assert.equal(out.format, "plain");
    assert.deepEqual(
      out.objects.map((o) => `${o.kind}/${o.metadata.name}`),
      ["ConfigMap/a", "Namespace/ns"],
    );
    assert.equal(out.installNamespace, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
