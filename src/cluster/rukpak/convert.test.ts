import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readBundleDirectory } from "../../bundle/index.js";
import { ConvertError, convertRegistryV1, targetNamespaces } from "./convert.js";
import { crdUpgradeProblems, existingObjectProblems } from "./crdsafety.js";
import { grantedRules } from "./permissions.js";
import type { KubeObject } from "../kube/client.js";
import { COMMUNITY, requireShared } from "../../../test/shared.js";

const ORDER = [
  "ServiceAccount",
  "Role",
  "RoleBinding",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "*",
  "Deployment",
];
const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.indexOf("*"));

test("target namespaces follow operator-controller's install-mode rules", () => {
  const all = new Set(["AllNamespaces", "OwnNamespace"]);
  assert.deepEqual(targetNamespaces(all, "ns", undefined), [""]);
  assert.deepEqual(targetNamespaces(new Set(["OwnNamespace"]), "ns", undefined), ["ns"]);
  assert.deepEqual(targetNamespaces(new Set(["OwnNamespace"]), "ns", ["ns"]), ["ns"]);
  assert.match(
    String(targetNamespaces(new Set(["OwnNamespace"]), "ns", [""])),
    /do not support targeting all namespaces/,
  );
  assert.match(
    String(targetNamespaces(new Set(["AllNamespaces"]), "ns", ["ns"])),
    /do not support targeting own namespace/,
  );
  assert.deepEqual(targetNamespaces(new Set(["SingleNamespace"]), "ns", ["other"]), ["other"]);
  assert.match(
    String(targetNamespaces(new Set(["SingleNamespace"]), "ns", ["a", "b"])),
    /do not support target namespaces \[a b\]/,
  );
  assert.deepEqual(targetNamespaces(new Set(["MultiNamespace"]), "ns", ["a", "b"]), ["a", "b"]);
});

test("conformance: every community bundle converts (webhooks included), with the generated objects in order", {
  skip: requireShared().skip,
}, () => {
  const root = join(COMMUNITY, "operators");
  let ok = 0;
  const refused: string[] = [];
  for (const op of readdirSync(root)) {
    for (const v of readdirSync(join(root, op))) {
      const dir = join(root, op, v);
      if (!existsSync(join(dir, "manifests"))) continue;
      let c;
      try {
        c = convertRegistryV1(readBundleDirectory(dir));
      } catch (e) {
        assert.ok(e instanceof ConvertError, `${op}/${v}: ${(e as Error).message}`);
        assert.deepEqual(e.errors, [], `${op}/${v}`);
        refused.push(`${op}/${v}`);
        continue;
      }
      ok++;
      const kinds = c.objects.map((o) => o.kind);
      // generated RBAC first (in the order of ORDER), then CRDs, then the other manifests, Deployments last
      const firstCrd = kinds.indexOf("CustomResourceDefinition");
      const rbacEnd = firstCrd >= 0 ? firstCrd : kinds.findIndex((k) => rank(k) > rank("ClusterRoleBinding"));
      const prefix = kinds.slice(0, rbacEnd < 0 ? kinds.length : rbacEnd);
      for (let i = 1; i < prefix.length; i++)
        assert.ok(rank(prefix[i - 1]) <= rank(prefix[i]), `${op}/${v}: ${prefix[i - 1]} before ${prefix[i]}`);
      // Deployments, then (for webhooks) the webhook configurations and their Services
      const tail = kinds.slice(kinds.indexOf("Deployment"));
      assert.ok(
        tail.every((k) =>
          ["Deployment", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Service"].includes(k),
        ),
        `${op}/${v}: ${tail.join(",")}`,
      );
      const lastDep = kinds.lastIndexOf("Deployment");
      assert.ok(kinds.slice(lastDep + 1).every((k) => k !== "Deployment"));
      for (const o of c.objects) {
        assert.ok(o.metadata.name.length <= 253, `${op}/${v}: name length`);
        if (o.kind.endsWith("Role") || o.kind.endsWith("RoleBinding"))
          assert.ok(o.metadata.name.length <= 63, `${op}/${v}: ${o.metadata.name}`);
        if (o.kind === "ServiceAccount") assert.notEqual(o.metadata.name, "default");
        if (o.kind === "Deployment") {
          const ann = (o.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata
            .annotations;
          assert.equal(ann["olm.targetNamespaces"], c.targetNamespaces.join(","));
          assert.equal(ann["olm.operatorNamespace"], c.installNamespace);
          assert.equal(o.metadata.namespace, c.installNamespace);
        }
      }
      // AllNamespaces: permissions are promoted to cluster scope with namespace discovery; no Roles
      if (c.targetNamespaces[0] === "")
        assert.ok(
          !c.objects.some((o) => o.kind === "Role" && o.metadata.name.startsWith(`${c.csvName}-`)),
          `${op}/${v}: no generated Role`,
        );
    }
  }
  assert.deepEqual(refused, [], "no community bundle is refused");
  assert.equal(ok, 396);
});

test("permissions of a bundle: the rules each ServiceAccount is granted, per scope", {
  skip: requireShared().skip,
}, () => {
  const c = convertRegistryV1(readBundleDirectory(join(COMMUNITY, "operators", "rabbitmq-cluster-operator", "2.9.0")));
  const rules = grantedRules(c.objects);
  assert.ok(rules.length > 0);
  assert.ok(rules.every((r) => r.scope === "cluster"));
  assert.ok(
    rules.some((r) => r.resources.includes("namespaces") && r.verbs.join() === "get,list,watch"),
    "namespace discovery added in AllNamespaces mode",
  );
  const own = convertRegistryV1(
    readBundleDirectory(join(COMMUNITY, "operators", "rabbitmq-cluster-operator", "2.9.0")),
    { watchNamespaces: ["team-a"] },
  );
  assert.ok(own.objects.some((o) => o.kind === "Role" && o.metadata.namespace === "team-a"));
});

function crd(versions: { name: string; schema: unknown }[], stored: string[]): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "things.example.com" },
    spec: {
      scope: "Namespaced",
      versions: versions.map((v) => ({
        name: v.name,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: v.schema },
      })),
    },
    status: { storedVersions: stored },
  };
}

test("CRD upgrade safety names what would break", () => {
  const s1 = {
    type: "object",
    properties: {
      spec: { type: "object", properties: { size: { type: "integer" }, mode: { type: "string", enum: ["a", "b"] } } },
    },
  };
  assert.deepEqual(
    crdUpgradeProblems(crd([{ name: "v1", schema: s1 }], ["v1"]), crd([{ name: "v1", schema: s1 }], [])),
    [],
  );
  const s2 = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        required: ["owner"],
        properties: { size: { type: "string" }, mode: { type: "string", enum: ["a"] }, owner: { type: "string" } },
      },
    },
  };
  assert.deepEqual(
    crdUpgradeProblems(crd([{ name: "v1", schema: s1 }], ["v1"]), crd([{ name: "v1", schema: s2 }], [])),
    [
      'validating upgrade for CRD "things.example.com": v1: ^.spec.owner: new required field',
      'validating upgrade for CRD "things.example.com": v1: ^.spec.size: type changed from integer to string',
      'validating upgrade for CRD "things.example.com": v1: ^.spec.mode: enum values removed: "b"',
    ],
  );
  assert.deepEqual(
    crdUpgradeProblems(crd([{ name: "v1", schema: s1 }], ["v1"]), crd([{ name: "v2", schema: s1 }], [])),
    ['validating upgrade for CRD "things.example.com": NoStoredVersionRemoved: stored version "v1" removed'],
  );
});

test("webhooks: configurations, Services, certificate volumes and " +
  "the certificate the provisioner provides (kube-green 0.7.1)", {
  skip: requireShared().skip,
}, () => {
  const c = convertRegistryV1(readBundleDirectory(join(COMMUNITY, "operators", "kube-green", "0.7.1")));
  const ns = c.installNamespace;
  const hook = c.objects.find((o) => o.kind === "ValidatingWebhookConfiguration");
  assert.equal(hook?.metadata.name, "vsleepinfo.kb.io");
  assert.ok(hook);
  const w = (
    hook.webhooks as {
      name: string;
      clientConfig: { service: Record<string, unknown>; caBundle: string };
      rules: unknown[];
      namespaceSelector?: unknown;
    }[]
  )[0];
  assert.equal(w.name, "vsleepinfo.kb.io");
  assert.deepEqual(w.clientConfig.service, {
    namespace: ns,
    name: "kube-green-controller-manager-service",
    path: "/validate-kube-green-com-v1alpha1-sleepinfo",
    port: 443,
  });
  assert.equal(w.clientConfig.caBundle, "__opcat_ca_bundle__/kube-green-controller-manager-service-cert");
  assert.equal(w.namespaceSelector, undefined, "AllNamespaces: no namespace selector");
  const svc = c.objects.find(
    (o) => o.kind === "Service" && o.metadata.name === "kube-green-controller-manager-service",
  );
  assert.ok(svc);
  assert.deepEqual((svc.spec as { ports: unknown[] }).ports, [
    { name: "443", port: 443, targetPort: 9443, protocol: "TCP" },
  ]);
  const dep = c.objects.find((o) => o.kind === "Deployment");
  assert.ok(dep);
  const pod = (
    dep.spec as {
      template: {
        spec: {
          volumes: { name: string; secret?: { secretName: string } }[];
          containers: { volumeMounts?: { name: string; mountPath: string }[] }[];
        };
      };
    }
  ).template.spec;
  assert.equal(
    pod.volumes.find((v) => v.name === "webhook-cert")?.secret?.secretName,
    "kube-green-controller-manager-service-cert",
  );
  assert.ok(
    pod.containers.every((ct) => ct.volumeMounts?.some((m) => m.mountPath === "/tmp/k8s-webhook-server/serving-certs")),
  );
  assert.deepEqual(c.certificates, [
    {
      secretName: "kube-green-controller-manager-service-cert",
      namespace: ns,
      dnsNames: [
        `kube-green-controller-manager-service.${ns}.svc`,
        `kube-green-controller-manager-service.${ns}.svc.cluster.local`,
      ],
    },
  ]);
});

test("existing custom resources are checked against the new schema of their version", () => {
  const s2 = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: { size: { type: "integer", maximum: 3 }, mode: { type: "string", enum: ["a"] } },
      },
    },
  };
  const objs: KubeObject[] = [
    {
      apiVersion: "example.com/v1",
      kind: "Thing",
      metadata: { name: "ok", namespace: "n" },
      spec: { size: 2, mode: "a" },
    },
    {
      apiVersion: "example.com/v1",
      kind: "Thing",
      metadata: { name: "big", namespace: "n" },
      spec: { size: 5, mode: "b" },
    },
  ];
  assert.deepEqual(existingObjectProblems(crd([{ name: "v1", schema: s2 }], []), "v1", objs), [
    'validating upgrade for CRD "things.example.com": existing custom object n/big failed validation ' +
      'for new schema version v1: spec.size: 5 is more than the maximum 3; spec.mode: "b" is not one of "a"',
  ]);
});
