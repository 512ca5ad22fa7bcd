/**
 * A ClusterExtension's `config.inline` on a real API server: `watchNamespace` judged against the
 * bundle's install modes with operator-controller's rules and messages (registryv1.go's schema,
 * config.go's wording) and flowing into the rendered Deployment's `olm.targetNamespaces` and the
 * Roles; `deploymentConfig` typed by the CRD and applied to the bundle's Deployment with upstream's
 * merge rules. Packages built here (one per install-mode set), pushed to a real docker-registry on
 * 127.0.0.1, served by one ClusterCatalog; the controllers in this process.
 */
import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION as RUKPAK } from "../../src/cluster/rukpak/api.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import { OLM_API_VERSION, type ClusterExtension } from "../../src/cluster/olm/api.js";
import { instanceNameFor } from "../../src/cluster/olm/extension.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry");
const skip = cluster.skip || missingTools;
const log = controllerLog("extensionconfig-controllers");
const NS = "cfg-system";
const TEAM = "cfg-team";
const CATALOG = "cfg-catalog";

/** Packages and the install modes each supports. */
const PACKAGES: Record<string, string[]> = {
  "cfg-own": ["OwnNamespace"],
  "cfg-single": ["SingleNamespace"],
  "cfg-all": ["AllNamespaces"],
  "cfg-full": ["AllNamespaces", "OwnNamespace", "SingleNamespace"],
};

/** A registry+v1 bundle of `pkg` 1.0.0: a Deployment `<pkg>-controller` and namespaced permissions. */
function writeBundle(dir: string, pkg: string, supported: string[]): void {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  const installModes = ["OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"].map((type) => ({
    type,
    supported: supported.includes(type),
  }));
  const container = {
    name: "manager",
    image: `example.com/${pkg}:v1`,
    env: [
      { name: "KEEP", value: "bundle" },
      { name: "LOG_LEVEL", value: "info" },
    ],
    resources: { limits: { cpu: "1" } },
  };
  writeFileSync(
    join(dir, "manifests", `${pkg}.clusterserviceversion.yaml`),
    JSON.stringify({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: `${pkg}.v1.0.0`, annotations: { "olm.properties": "[]", "from-csv": "csv" } },
      spec: {
        displayName: pkg,
        version: "1.0.0",
        installModes,
        install: {
          strategy: "deployment",
          spec: {
            permissions: [
              {
                serviceAccountName: pkg,
                rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
              },
            ],
            deployments: [
              {
                name: `${pkg}-controller`,
                spec: {
                  replicas: 1,
                  selector: { matchLabels: { app: pkg } },
                  template: {
                    metadata: { labels: { app: pkg } },
                    spec: { serviceAccountName: pkg, containers: [container] },
                  },
                },
              },
            ],
          },
        },
      },
    }),
  );
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    "annotations:\n" +
      "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n" +
      "  operators.operatorframework.io.bundle.manifests.v1: manifests/\n" +
      "  operators.operatorframework.io.bundle.metadata.v1: metadata/\n" +
      `  operators.operatorframework.io.bundle.package.v1: ${pkg}\n` +
      "  operators.operatorframework.io.bundle.channels.v1: stable\n",
  );
}

type Deployment = KubeObject & {
  spec: {
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: {
        containers: { env?: unknown[]; envFrom?: unknown[]; resources?: unknown; volumeMounts?: unknown[] }[];
        volumes?: unknown[];
        nodeSelector?: Record<string, string>;
        tolerations?: unknown[];
        affinity?: Record<string, unknown>;
      };
    };
  };
};

const PREFIX = "invalid ClusterExtension configuration: invalid configuration: ";

describe("ClusterExtension config.inline on a real API server", { skip, concurrency: false }, () => {
  let admin: KubeClient;
  let registry: RunningRegistry;
  let running: RunningControllers | undefined;
  let tmp = "";

  function extension(name: string, inline?: Record<string, unknown>): ClusterExtension {
    return {
      apiVersion: OLM_API_VERSION,
      kind: "ClusterExtension",
      metadata: { name },
      spec: {
        namespace: NS,
        source: {
          sourceType: "Catalog",
          catalog: {
            packageName: name,
            selector: { matchLabels: { "olm.operatorframework.io/metadata.name": CATALOG } },
          },
        },
        ...(inline ? { config: { configType: "Inline", inline } } : {}),
      },
    } as unknown as ClusterExtension;
  }

  const current = (o: ClusterExtension | undefined) =>
    o?.status?.conditions?.find((c) => c.type === "Progressing")?.observedGeneration === o?.metadata.generation;

  /** Waits for Progressing=False/InvalidConfiguration with exactly `message`. */
  async function invalid(name: string, message: string): Promise<ClusterExtension | undefined> {
    const ext = await waitFor<ClusterExtension>(
      admin,
      OLM_API_VERSION,
      "ClusterExtension",
      name,
      (o) => current(o) && cond(o, "Progressing")?.reason === "InvalidConfiguration",
      `InvalidConfiguration: ${message}`,
    );
    assert.equal(cond(ext, "Progressing")?.status, "False");
    assert.equal(cond(ext, "Progressing")?.message, message);
    assert.equal(cond(ext, "Installed")?.status, "False");
    return ext;
  }

  const installed = (name: string) =>
    waitFor<ClusterExtension>(
      admin,
      OLM_API_VERSION,
      "ClusterExtension",
      name,
      (o) => current(o) && cond(o, "Installed")?.status === "True" && cond(o, "Progressing")?.reason === "Succeeded",
      "installed",
    );

  /** Sets config.inline as given, whole (a merge patch would merge it with the one there). */
  async function setInline(name: string, inline: Record<string, unknown> | null): Promise<void> {
    const cur = await admin.get<ClusterExtension>(OLM_API_VERSION, "ClusterExtension", name);
    const spec = { ...cur.spec } as Record<string, unknown>;
    if (inline === null) delete spec.config;
    else spec.config = { configType: "Inline", inline };
    await admin.replace({ ...cur, spec } as ClusterExtension);
  }

  const deployment = (pkg: string) => admin.get<Deployment>("apps/v1", "Deployment", `${pkg}-controller`, NS);

  /** The namespaces of the Roles the package's Instance installed. */
  async function roleNamespaces(pkg: string): Promise<string[]> {
    const roles = await admin.list<KubeObject>("rbac.authorization.k8s.io/v1", "Role", {
      labelSelector: `olm.operatorframework.io/owner-name=${pkg}`,
    });
    return roles.items.map((r) => r.metadata.namespace ?? "").sort();
  }

  async function removeAll(): Promise<void> {
    for (const pkg of Object.keys(PACKAGES)) {
      await admin.delete(OLM_API_VERSION, "ClusterExtension", pkg).catch(() => false);
      await waitFor(admin, OLM_API_VERSION, "ClusterExtension", pkg, (o) => o === undefined, "gone");
      await waitFor(admin, RUKPAK, "Instance", instanceNameFor(pkg), (o) => o === undefined, "gone");
      await waitFor(admin, "apps/v1", "Deployment", `${pkg}-controller`, (o) => o === undefined, "gone", 180_000, NS);
    }
  }

  before(async () => {
    if (cluster.skip !== false) return;
    admin = clientAs(cluster.kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-extconfig-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    let fbc = "";
    for (const [pkg, supported] of Object.entries(PACKAGES)) {
      const dir = join(tmp, "bundles", pkg);
      writeBundle(dir, pkg, supported);
      const image = `${registry.host}/${pkg}-bundle:v1.0.0`;
      await pushImage(buildBundleImage(dir), image, { useHttp: true });
      fbc += `${JSON.stringify({ schema: "olm.package", name: pkg, defaultChannel: "stable" })}\n`;
      const entries = [{ name: `${pkg}.v1.0.0` }];
      fbc += `${JSON.stringify({ schema: "olm.channel", name: "stable", package: pkg, entries })}\n`;
      fbc += formatCatalog(renderBundleDirectory(dir, { image }), "json");
    }
    mkdirSync(join(tmp, "catalog"), { recursive: true });
    writeFileSync(join(tmp, "catalog", "catalog.json"), fbc);
    await pushImage(buildCatalogImage(join(tmp, "catalog")), `${registry.host}/catalogs/cfg:v1`, { useHttp: true });
    running = await runControllers({
      kubeconfig: cluster.kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true },
      namespace: "opcat-extconfig-test",
      log,
    });
    await removeAll();
    for (const name of [NS, TEAM])
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } } as KubeObject);
    await admin.apply({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name: CATALOG },
      spec: { source: { type: "Image", image: { ref: `${registry.host}/catalogs/cfg:v1` } } },
    } as ClusterCatalog);
    await waitFor<ClusterCatalog>(
      admin,
      CATALOG_API_VERSION,
      "ClusterCatalog",
      CATALOG,
      (o) => cond(o, "Serving")?.status === "True",
      "Serving",
    );
  });

  afterEach(async () => {
    if (cluster.skip === false && admin) await removeAll();
  });

  after(async () => {
    try {
      if (admin && running) await removeAll();
    } finally {
      await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", CATALOG).catch(() => false);
      for (const name of [NS, TEAM]) await admin?.delete("v1", "Namespace", name).catch(() => false);
      await running?.stop();
      await registry?.stop();
      admin?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  test("the ClusterCatalog's status, finalizer and label are catalogd's; installed objects are labelled", async () => {
    const cc = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", CATALOG);
    assert.deepEqual(
      [cond(cc, "Progressing")?.status, cond(cc, "Progressing")?.reason, cond(cc, "Progressing")?.message],
      ["True", "Succeeded", "Successfully unpacked and stored content from resolved source"],
    );
    assert.deepEqual(
      [cond(cc, "Serving")?.status, cond(cc, "Serving")?.reason, cond(cc, "Serving")?.message],
      ["True", "Available", "Serving desired content from resolved source"],
    );
    assert.deepEqual(cc.metadata.finalizers, ["olm.operatorframework.io/delete-server-cache"]);
    assert.equal(cc.metadata.labels?.["olm.operatorframework.io/metadata.name"], CATALOG);
    await admin.create(extension("cfg-all"));
    const ext = await installed("cfg-all");
    // operator-controller's ClusterExtension finalizers guard caches opcat does not keep per extension
    assert.deepEqual(ext?.metadata.finalizers ?? [], []);
    const dep = await deployment("cfg-all");
    assert.equal(dep.metadata.labels?.["olm.operatorframework.io/owner-kind"], "ClusterExtension");
    assert.equal(dep.metadata.labels?.["olm.operatorframework.io/owner-name"], "cfg-all");
    assert.equal(dep.metadata.labels?.["app.kubernetes.io/managed-by"], "opcat");
  });

  test("OwnNamespace only: watchNamespace required, must be the install namespace; then installs", async () => {
    await admin.create(extension("cfg-own"));
    await invalid("cfg-own", `${PREFIX}required field "watchNamespace" is missing`);
    await setInline("cfg-own", { watchNamespace: TEAM });
    await invalid(
      "cfg-own",
      `${PREFIX}invalid format for field "watchNamespace": '${TEAM}' is not valid ownNamespaceInstallMode: ` +
        `invalid value "${TEAM}": must be "${NS}" (the namespace where the operator is installed) because this ` +
        "operator only supports OwnNamespace install mode",
    );
    await setInline("cfg-own", { watchNamespace: NS });
    await installed("cfg-own");
    const dep = await deployment("cfg-own");
    assert.equal(dep.spec.template.metadata.annotations?.["olm.targetNamespaces"], NS);
    assert.equal(dep.spec.template.metadata.annotations?.["olm.operatorNamespace"], NS);
    assert.deepEqual(await roleNamespaces("cfg-own"), [NS]);
  });

  test("SingleNamespace only: must differ from the install namespace; the target gets the Roles", async () => {
    await admin.create(extension("cfg-single", { watchNamespace: NS }));
    await invalid(
      "cfg-single",
      `${PREFIX}invalid format for field "watchNamespace": '${NS}' is not valid singleNamespaceInstallMode: ` +
        `invalid value "${NS}": must be different from "${NS}" (the install namespace) because this operator ` +
        "uses SingleNamespace install mode to watch a different namespace",
    );
    await setInline("cfg-single", { watchNamespace: "Not_A_Namespace" });
    await invalid("cfg-single", `${PREFIX}field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`);
    await setInline("cfg-single", { watchNamespace: TEAM });
    await installed("cfg-single");
    const dep = await deployment("cfg-single");
    assert.equal(dep.spec.template.metadata.annotations?.["olm.targetNamespaces"], TEAM);
    assert.deepEqual(await roleNamespaces("cfg-single"), [TEAM]);
  });

  test("AllNamespaces only: watchNamespace is an unknown field; others are refused before unpacking", async () => {
    await admin.create(extension("cfg-all", { watchNamespace: TEAM }));
    await invalid("cfg-all", `${PREFIX}unknown field "watchNamespace"`);
    await setInline("cfg-all", { replicas: 3 });
    await invalid("cfg-all", `${PREFIX}unknown field "replicas"`);
    // kept by the API server (not pruned), so reported as upstream reports it
    await setInline("cfg-all", { deploymentConfig: { selector: { matchLabels: { app: "x" } } } });
    await invalid("cfg-all", `${PREFIX}unknown field "selector"`);
    await setInline("cfg-all", null);
    await installed("cfg-all");
    const dep = await deployment("cfg-all");
    assert.equal(dep.spec.template.metadata.annotations?.["olm.targetNamespaces"], "");
    assert.deepEqual(await roleNamespaces("cfg-all"), []);
  });

  test("the CRD types deploymentConfig: a wrongly typed one is refused by the API server", async () => {
    await assert.rejects(
      admin.create(extension("cfg-full", { deploymentConfig: { env: "LOG_LEVEL=debug" } })),
      /deploymentConfig\.env: Invalid value: "string": .*must be of type array/,
    );
    await assert.rejects(
      admin.create(extension("cfg-full", { deploymentConfig: { env: [{ value: "x" }] } })),
      /deploymentConfig\.env\[0\]\.name: Required value/,
    );
  });

  test("deploymentConfig is applied to the bundle's Deployment with upstream's merge rules", async () => {
    const dc = {
      env: [
        { name: "LOG_LEVEL", value: "debug" },
        { name: "ADDED", value: "yes" },
      ],
      envFrom: [{ configMapRef: { name: "cfg-env", optional: true } }],
      resources: { requests: { cpu: "10m", memory: "32Mi" } },
      nodeSelector: { "kubernetes.io/os": "linux" },
      tolerations: [{ key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/arch", operator: "Exists" }] }],
          },
        },
      },
      volumes: [{ name: "scratch", emptyDir: {} }],
      volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
      annotations: { "example.com/team": "ops", "from-csv": "ignored" },
    };
    await admin.create(extension("cfg-full", { deploymentConfig: dc }));
    await installed("cfg-full");
    const dep = await deployment("cfg-full");
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    assert.deepEqual(c.env, [
      { name: "KEEP", value: "bundle" },
      { name: "LOG_LEVEL", value: "debug" },
      { name: "ADDED", value: "yes" },
    ]);
    assert.deepEqual(c.envFrom, dc.envFrom);
    assert.deepEqual(c.resources, dc.resources);
    assert.deepEqual(c.volumeMounts, dc.volumeMounts);
    assert.deepEqual(pod.volumes, dc.volumes);
    assert.deepEqual(pod.nodeSelector, dc.nodeSelector);
    assert.deepEqual(pod.tolerations, dc.tolerations);
    assert.deepEqual(pod.affinity, dc.affinity);
    assert.equal(dep.metadata.annotations?.["example.com/team"], "ops");
    const podAnnotations = dep.spec.template.metadata.annotations ?? {};
    assert.equal(podAnnotations["example.com/team"], "ops");
    assert.equal(podAnnotations["from-csv"], "csv", "an annotation already there is never overridden");
    assert.equal(podAnnotations["olm.targetNamespaces"], "");
    // a changed configuration reaches the Deployment
    await setInline("cfg-full", { deploymentConfig: { env: [{ name: "LOG_LEVEL", value: "trace" }] } });
    await waitFor<Deployment>(
      admin,
      "apps/v1",
      "Deployment",
      "cfg-full-controller",
      (o) =>
        JSON.stringify(o?.spec.template.spec.containers[0].env) ===
        JSON.stringify([
          { name: "KEEP", value: "bundle" },
          { name: "LOG_LEVEL", value: "trace" },
        ]),
      "env updated",
      180_000,
      NS,
    );
    const after = await deployment("cfg-full");
    assert.deepEqual(after.spec.template.spec.containers[0].resources, { limits: { cpu: "1" } }, "the bundle's again");
    assert.equal(after.spec.template.spec.nodeSelector, undefined);
  });
});
