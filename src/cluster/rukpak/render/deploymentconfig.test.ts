import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "../../kube/client.js";
import type { DeploymentConfig } from "./config.js";
import { applyDeploymentConfig } from "./deploymentconfig.js";

/** A Deployment as the generator makes it: two containers, an init container, some of everything. */
function deployment(): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "op", namespace: "ns", annotations: { keep: "mine" } },
    spec: {
      template: {
        metadata: { annotations: { "olm.targetNamespaces": "", keep: "mine" } },
        spec: {
          initContainers: [{ name: "init", image: "i" }],
          containers: [
            {
              name: "a",
              image: "i",
              env: [
                { name: "X", value: "1" },
                { name: "Y", value: "2" },
              ],
              envFrom: [{ configMapRef: { name: "c" } }],
              resources: { limits: { cpu: "1" }, requests: { memory: "1Gi" } },
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
            { name: "b", image: "i" },
          ],
          volumes: [{ name: "data", emptyDir: {} }],
          tolerations: [{ key: "t", operator: "Exists" }],
          nodeSelector: { old: "yes" },
          affinity: {
            nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }] },
            podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "k" }] },
          },
        },
      },
    },
  } as KubeObject;
}

type Pod = {
  initContainers: Record<string, unknown>[];
  containers: Record<string, unknown>[];
  volumes: unknown[];
  tolerations: unknown[];
  nodeSelector?: unknown;
  affinity?: Record<string, unknown>;
};
const pod = (d: KubeObject) => (d as unknown as { spec: { template: { spec: Pod } } }).spec.template.spec;
const templateAnnotations = (d: KubeObject) =>
  (d as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata
    .annotations;

/** A volume of any source (the schema types only its name). */
const volume = (v: Record<string, unknown>) => v as { name: string };

/** Named cases of upstream's rules (operator-controller generators.go applyCustomConfigToDeployment). */
const cases: { name: string; dc: DeploymentConfig; check: (d: KubeObject) => void }[] = [
  {
    name: "env: same name replaced in place, new appended, in every container, not init containers",
    dc: {
      env: [
        { name: "Y", value: "two" },
        { name: "Z", value: "3" },
      ],
    },
    check: (d) => {
      assert.deepEqual(pod(d).containers[0].env, [
        { name: "X", value: "1" },
        { name: "Y", value: "two" },
        { name: "Z", value: "3" },
      ]);
      assert.deepEqual(pod(d).containers[1].env, [
        { name: "Y", value: "two" },
        { name: "Z", value: "3" },
      ]);
      assert.equal(pod(d).initContainers[0].env, undefined);
    },
  },
  {
    name: "envFrom: appended unless equal",
    dc: { envFrom: [{ configMapRef: { name: "c" } }, { secretRef: { name: "s" } }] },
    check: (d) =>
      assert.deepEqual(pod(d).containers[0].envFrom, [{ configMapRef: { name: "c" } }, { secretRef: { name: "s" } }]),
  },
  {
    name: "volumes and volumeMounts: same name replaced, others appended",
    dc: {
      volumes: [volume({ name: "data", configMap: { name: "cm" } }), volume({ name: "extra", emptyDir: {} })],
      volumeMounts: [
        { name: "data", mountPath: "/etc/data" },
        { name: "extra", mountPath: "/extra" },
      ],
    },
    check: (d) => {
      assert.deepEqual(pod(d).volumes, [
        { name: "data", configMap: { name: "cm" } },
        { name: "extra", emptyDir: {} },
      ]);
      assert.deepEqual(pod(d).containers[0].volumeMounts, [
        { name: "data", mountPath: "/etc/data" },
        { name: "extra", mountPath: "/extra" },
      ]);
    },
  },
  {
    name: "tolerations: appended unless equal",
    dc: {
      tolerations: [
        { key: "t", operator: "Exists" },
        { key: "u", operator: "Equal", value: "v" },
      ],
    },
    check: (d) =>
      assert.deepEqual(pod(d).tolerations, [
        { key: "t", operator: "Exists" },
        { key: "u", operator: "Equal", value: "v" },
      ]),
  },
  {
    name: "resources: replaced whole in every container",
    dc: { resources: { requests: { cpu: "100m" } } },
    check: (d) => {
      assert.deepEqual(pod(d).containers[0].resources, { requests: { cpu: "100m" } });
      assert.deepEqual(pod(d).containers[1].resources, { requests: { cpu: "100m" } });
    },
  },
  {
    name: "nodeSelector: replaced",
    dc: { nodeSelector: { disk: "ssd" } },
    check: (d) => assert.deepEqual(pod(d).nodeSelector, { disk: "ssd" }),
  },
  {
    name: "affinity {}: erased",
    dc: { affinity: {} },
    check: (d) => assert.equal(pod(d).affinity, undefined),
  },
  {
    name: "affinity: a sub-field given replaces it, an empty one erases it, others untouched",
    dc: {
      affinity: {
        nodeAffinity: {},
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 2 }] },
      },
    },
    check: (d) =>
      assert.deepEqual(pod(d).affinity, {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "k" }] },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 2 }] },
      }),
  },
  {
    name: "affinity: erasing every sub-field leaves none",
    dc: { affinity: { nodeAffinity: {}, podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } } },
    check: (d) => assert.equal(pod(d).affinity, undefined),
  },
  {
    name: "annotations: added to the Deployment and its pods, never overriding",
    dc: { annotations: { keep: "theirs", "olm.targetNamespaces": "x", added: "yes" } },
    check: (d) => {
      assert.deepEqual(d.metadata.annotations, {
        keep: "mine",
        "olm.targetNamespaces": "x",
        added: "yes",
      });
      assert.deepEqual(templateAnnotations(d), { "olm.targetNamespaces": "", keep: "mine", added: "yes" });
    },
  },
  {
    name: "nothing given: nothing changes",
    dc: {},
    check: (d) => assert.deepEqual(d, deployment()),
  },
];

for (const c of cases)
  test(`deploymentConfig: ${c.name}`, () => {
    const d = deployment();
    applyDeploymentConfig(d, c.dc);
    c.check(d);
  });

test("deploymentConfig: what is applied is a copy (changing the configuration later changes no Deployment)", () => {
  const dc: DeploymentConfig = { env: [{ name: "A", value: "1" }] };
  const d = deployment();
  applyDeploymentConfig(d, dc);
  dc.env![0].value = "changed";
  assert.deepEqual(pod(d).containers[1].env, [{ name: "A", value: "1" }]);
});
