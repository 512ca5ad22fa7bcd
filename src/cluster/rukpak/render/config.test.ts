import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle, modes } from "../../../../test/cluster/registryv1.js";
import { ConfigError, convertRegistryV1 } from "../convert.js";
import { bundleConfigProblems, deploymentConfigSchema, schemaProblems, watchNamespaceRule } from "./config.js";

const ownFormat = (wn: string) =>
  `invalid format for field "watchNamespace": '${wn}' is not valid ownNamespaceInstallMode: invalid value "${wn}": ` +
  `must be "inst" (the namespace where the operator is installed) because this operator only supports ` +
  "OwnNamespace install mode";
const singleFormat =
  `invalid format for field "watchNamespace": 'inst' is not valid singleNamespaceInstallMode: invalid value "inst": ` +
  `must be different from "inst" (the install namespace) because this operator uses SingleNamespace install mode ` +
  "to watch a different namespace";
const PATTERN = `field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`;

/** Upstream's cases (config_test.go, error_formatting_test.go), install namespace "inst". */
const cases: { name: string; modes: string[]; config: unknown; want: string[] }[] = [
  { name: "AllNamespaces only, nothing", modes: ["AllNamespaces"], config: {}, want: [] },
  {
    name: "AllNamespaces only: watchNamespace is unknown",
    modes: ["AllNamespaces"],
    config: { watchNamespace: "x" },
    want: [`unknown field "watchNamespace"`],
  },
  { name: "unknown field", modes: ["AllNamespaces"], config: { somekey: 1 }, want: [`unknown field "somekey"`] },
  {
    name: "selector is not v1's",
    modes: ["AllNamespaces"],
    config: { deploymentConfig: { selector: {} } },
    want: [`unknown field "selector"`],
  },
  { name: "not an object", modes: ["AllNamespaces"], config: true, want: ["invalid type: got boolean, want object"] },
  {
    name: "OwnNamespace only, missing",
    modes: ["OwnNamespace"],
    config: {},
    want: [`required field "watchNamespace" is missing`],
  },
  {
    name: "SingleNamespace only, null",
    modes: ["SingleNamespace"],
    config: { watchNamespace: null },
    want: [`required field "watchNamespace" is missing`],
  },
  {
    name: "Own and Single, missing",
    modes: ["OwnNamespace", "SingleNamespace"],
    config: {},
    want: [`required field "watchNamespace" is missing`],
  },
  {
    name: "wrong type",
    modes: ["SingleNamespace"],
    config: { watchNamespace: { nested: "object" } },
    want: [`invalid type for field "watchNamespace": got object, want string`],
  },
  {
    name: "OwnNamespace only, the install namespace",
    modes: ["OwnNamespace"],
    config: { watchNamespace: "inst" },
    want: [],
  },
  {
    name: "OwnNamespace only, another namespace",
    modes: ["OwnNamespace"],
    config: { watchNamespace: "other" },
    want: [ownFormat("other")],
  },
  { name: "SingleNamespace only, another", modes: ["SingleNamespace"], config: { watchNamespace: "other" }, want: [] },
  {
    name: "SingleNamespace only, the install namespace",
    modes: ["SingleNamespace"],
    config: { watchNamespace: "inst" },
    want: [singleFormat],
  },
  {
    name: "Own and Single: any namespace",
    modes: ["OwnNamespace", "SingleNamespace"],
    config: { watchNamespace: "inst" },
    want: [],
  },
  {
    name: "bad name, too long",
    modes: ["OwnNamespace", "SingleNamespace"],
    config: { watchNamespace: "A".repeat(64) },
    want: [`field "watchNamespace" must have maximum length of 63 (len=64)`, PATTERN],
  },
  {
    name: "empty name",
    modes: ["OwnNamespace", "SingleNamespace"],
    config: { watchNamespace: "" },
    want: [`field "watchNamespace" must have minimum length of 1 (len=0)`, PATTERN],
  },
  { name: "All and Own: optional", modes: ["AllNamespaces", "OwnNamespace"], config: {}, want: [] },
  { name: "All and Own: null", modes: ["AllNamespaces", "OwnNamespace"], config: { watchNamespace: null }, want: [] },
  {
    name: "All and Own: another namespace is not own",
    modes: ["AllNamespaces", "OwnNamespace"],
    config: { watchNamespace: "other" },
    want: [
      `invalid value for field "watchNamespace"`,
      `invalid type for field "watchNamespace": got string, want null`,
      ownFormat("other"),
    ],
  },
  {
    name: "All and Single: not a string",
    modes: ["AllNamespaces", "SingleNamespace"],
    config: { watchNamespace: 5 },
    want: [
      `invalid value for field "watchNamespace"`,
      `invalid type for field "watchNamespace": got number, want null`,
      `invalid type for field "watchNamespace": got number, want string`,
    ],
  },
  {
    name: "format first and alone: an own-namespace-only bundle's bad name is only not its namespace",
    modes: ["OwnNamespace"],
    config: { watchNamespace: "Not_A_Namespace" },
    want: [ownFormat("Not_A_Namespace")],
  },
  {
    name: "deploymentConfig null is not an object (upstream's schema allows no null)",
    modes: ["AllNamespaces"],
    config: { deploymentConfig: null },
    want: [`required field "deploymentConfig" is missing`],
  },
  {
    name: "deploymentConfig types",
    modes: ["AllNamespaces"],
    config: { deploymentConfig: { env: [{ value: "x" }], nodeSelector: { a: 1 }, resources: "big" } },
    want: [
      `required field "name" is missing`,
      `invalid type for field "deploymentConfig.nodeSelector.a": got number, want string`,
      `invalid type for field "deploymentConfig.resources": got string, want object`,
    ],
  },
  {
    name: "deploymentConfig: quantities are integers or strings, Kubernetes types stay open",
    modes: ["AllNamespaces"],
    config: {
      deploymentConfig: {
        resources: { limits: { cpu: 1, memory: "64Mi" }, requests: { cpu: true } },
        volumes: [{ name: "v", emptyDir: {} }],
        env: [{ name: "A", futureField: 1 }],
      },
    },
    want: [`invalid type for field "deploymentConfig.resources.requests.cpu": got boolean, want integer or string`],
  },
];

for (const c of cases)
  test(`bundle configuration: ${c.name}`, () => {
    assert.deepEqual(bundleConfigProblems(new Set(c.modes), "inst", c.config), c.want);
  });

test("bundle configuration: the watchNamespace rule of each install-mode set", () => {
  assert.equal(watchNamespaceRule(new Set(["AllNamespaces", "MultiNamespace"])), "unknown");
  assert.equal(watchNamespaceRule(new Set(["OwnNamespace"])), "required");
  assert.equal(watchNamespaceRule(new Set(["AllNamespaces", "SingleNamespace"])), "optional");
});

test("bundle configuration: a value with no problem by the schema has none", () => {
  const dc = {
    env: [{ name: "A", value: "1" }],
    envFrom: [{ configMapRef: { name: "c" } }],
    tolerations: [{ key: "k", operator: "Exists", tolerationSeconds: 5 }],
    affinity: { nodeAffinity: {} },
    volumeMounts: [{ name: "v", mountPath: "/v", readOnly: true }],
    annotations: { a: "b" },
  };
  assert.deepEqual(schemaProblems(deploymentConfigSchema.openapi, dc, ["deploymentConfig"]), []);
});

test("convert: configuration errors come after the install-mode gate, as ConfigError with upstream's prefix", () => {
  const own = bundle({ installModes: modes("OwnNamespace") });
  assert.throws(
    () => convertRegistryV1(own, { installNamespace: "inst", config: {} }),
    (e: unknown) =>
      e instanceof ConfigError && e.message === `invalid configuration: required field "watchNamespace" is missing`,
  );
  const multiOnly = bundle({ installModes: modes("MultiNamespace") });
  assert.throws(
    () => convertRegistryV1(multiOnly, { installNamespace: "inst", config: {} }),
    (e: unknown) => !(e instanceof ConfigError) && /must support at least one of/.test((e as Error).message),
  );
  const two = bundle({ installModes: modes("OwnNamespace", "SingleNamespace") });
  assert.throws(
    () => convertRegistryV1(two, { installNamespace: "inst", config: { watchNamespace: "", x: 1 } }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message ===
        "invalid configuration: multiple errors found:\n  - validation failed\n  - " +
          `field "watchNamespace" must have minimum length of 1 (len=0)\n  - ${PATTERN}\n  - unknown field "x"`,
  );
});

test("convert: the configured watchNamespace is the target namespace of annotations and RBAC", () => {
  const b = bundle({
    installModes: modes("OwnNamespace", "SingleNamespace"),
    install: {
      spec: {
        permissions: [{ serviceAccountName: "sa", rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }],
        deployments: [
          {
            name: "op",
            spec: {
              selector: { matchLabels: { a: "b" } },
              template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "m", image: "i" }] } },
            },
          },
        ],
      },
    },
  });
  const c = convertRegistryV1(b, { installNamespace: "inst", config: { watchNamespace: "team-a" } });
  assert.deepEqual(c.targetNamespaces, ["team-a"]);
  const dep = c.objects.find((o) => o.kind === "Deployment") as unknown as {
    spec: { template: { metadata: { annotations: Record<string, string> } } };
  };
  assert.equal(dep.spec.template.metadata.annotations["olm.targetNamespaces"], "team-a");
  assert.deepEqual(
    c.objects.filter((o) => o.kind === "Role").map((o) => o.metadata.namespace),
    ["team-a"],
  );
});
