import { test } from "node:test";
import assert from "node:assert/strict";
import { OpcatError } from "../errors/index.js";
import { clusterFailure, clusterRunOptions, type ClusterRunFlags } from "./cluster.js";

const flags: ClusterRunFlags = {
  webhookName: "opcat-rukpak",
  webhookHost: "127.0.0.1",
  webhookPort: "0",
  webhooks: true,
  install: true,
  deppy: true,
  namespace: "opcat-system",
  catalogHost: "127.0.0.1",
  catalogPort: "0",
  resolutionBudget: "60",
  healthHost: "127.0.0.1",
  availability: false,
};

test("cluster run: flag values become the controllers' options", () => {
  const o = clusterRunOptions(
    { ...flags, webhookService: "ns/svc:443", healthPort: "8080", resolutionBudget: "1.5" },
    {},
    "/cache",
  );
  assert.deepEqual(o.webhookService, { namespace: "ns", name: "svc", port: 443 });
  assert.equal(o.healthPort, 8080);
  assert.equal(o.resolutionBudgetMs, 1500);
  assert.equal(o.stateDir, "/cache/cluster");
  assert.equal(clusterRunOptions({ ...flags, stateDir: "/s" }, {}, "/cache").stateDir, "/s");
});

test("cluster run: each bad flag value is a usage error naming the flag", () => {
  const cases: [string, Partial<ClusterRunFlags>, string, RegExp][] = [
    ["budget zero", { resolutionBudget: "0" }, "USAGE_RESOLUTION_BUDGET", /--resolution-budget 0: expected a positive/],
    ["budget text", { resolutionBudget: "soon" }, "USAGE_RESOLUTION_BUDGET", /--resolution-budget soon/],
    ["service shape", { webhookService: "svc:443" }, "USAGE_WEBHOOK_SERVICE", /expected <namespace>\/<name>:<port>/],
    ["webhook port", { webhookPort: "70000" }, "USAGE_WEBHOOK_PORT", /--webhook-port 70000: not a port/],
    ["catalog port", { catalogPort: "1.5" }, "USAGE_CATALOG_PORT", /--catalog-port 1.5: not a port/],
    ["health port", { healthPort: "-1" }, "USAGE_HEALTH_PORT", /--health-port -1: not a port/],
  ];
  for (const [name, bad, code, message] of cases)
    assert.throws(
      () => clusterRunOptions({ ...flags, ...bad }, {}, "/cache"),
      (e: unknown) => e instanceof OpcatError && e.code === code && e.kind === "usage" && message.test(e.message),
      name,
    );
});

test("API failures: refusals are invalid with the server's message, an unreachable server is usage", () => {
  const api = (status: number, reason: string) =>
    Object.assign(new Error('instances.rukpak.io "x" is forbidden'), { name: "KubeApiError", status, reason });
  const kindOf = (e: unknown) => {
    try {
      clusterFailure(e, "reading Instance x");
    } catch (err) {
      return [(err as OpcatError).code, (err as OpcatError).kind, (err as OpcatError).message];
    }
  };
  assert.deepEqual(kindOf(api(403, "Forbidden")), [
    "CLUSTER_FORBIDDEN",
    "invalid",
    'reading Instance x: instances.rukpak.io "x" is forbidden',
  ]);
  assert.equal(kindOf(api(500, "InternalError"))?.[1], "usage");
  assert.deepEqual(kindOf(Object.assign(new Error("x"), { code: "ECONNREFUSED" })), [
    "CLUSTER_UNREACHABLE",
    "usage",
    "reading Instance x: the API server cannot be reached (ECONNREFUSED)",
  ]);
  const other = new TypeError("a bug");
  assert.throws(
    () => clusterFailure(other, "x"),
    (e) => e === other,
  );
});
