/**
 * operator-controller's ClusterExtension on a real API server, as its users write it: catalogs of a
 * small registry+v1 package (`tiny`, built here, pushed by opcat to a real docker-registry on
 * 127.0.0.1) served by the catalog controller; ClusterExtensions resolved by the extension controller
 * and installed through a RukPak Instance by the operator provisioner; all controllers in this
 * process with their admission webhooks registered by URL.
 *
 * Catalogs: `main` (label team=a): stable 1.0.0 → 1.1.0 → 1.2.0; fast 1.2.0 → 2.0.0 → 3.0.0 → 4.0.0
 * (4.0.0 drops a CRD field: unsafe). `other` (team=b): stable 1.0.0 → 1.5.0. `depr` (team=d):
 * stable 1.0.0 → 1.1.0 with the package, channel stable and bundle 1.0.0 deprecated.
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
import { API_VERSION as RUKPAK, ANNOTATION_REQUESTER, type Instance } from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import { OLM_API_VERSION, type ClusterExtension } from "../../src/cluster/olm/api.js";
import { ANNOTATION_ROLLOUT_STARTED, instanceNameFor } from "../../src/cluster/olm/extension.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import {
  clientAs,
  clusterKubeconfig,
  cond,
  controllerLog,
  grantClusterRole,
  waitFor,
  waitForCrdGone,
} from "./harness.js";

const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry");
const skip = cluster.skip || missingTools;
const log = controllerLog("clusterextension-controllers");
const NS = "tiny-system";
const CRD = "widgets.tiny.example.com";

/** A registry+v1 bundle of package `tiny` (one Deployment, one CRD); `dropColor`: the CRD loses a field. */
function writeBundle(dir: string, version: string, dropColor = false): void {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  const props: Record<string, unknown> = { size: { type: "integer" } };
  if (!dropColor) props.color = { type: "string" };
  writeFileSync(
    join(dir, "manifests", "crd.yaml"),
    JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: CRD },
      spec: {
        group: "tiny.example.com",
        names: { kind: "Widget", listKind: "WidgetList", plural: "widgets", singular: "widget" },
        scope: "Namespaced",
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: props } },
              },
            },
          },
        ],
      },
    }),
  );
  writeFileSync(
    join(dir, "manifests", "tiny.clusterserviceversion.yaml"),
    JSON.stringify({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: `tiny.v${version}`, annotations: { "olm.properties": "[]" } },
      spec: {
        displayName: "tiny",
        version,
        installModes: [
          { type: "OwnNamespace", supported: true },
          { type: "SingleNamespace", supported: true },
          { type: "MultiNamespace", supported: false },
          { type: "AllNamespaces", supported: true },
        ],
        customresourcedefinitions: { owned: [{ name: CRD, version: "v1", kind: "Widget" }] },
        install: {
          strategy: "deployment",
          spec: {
            clusterPermissions: [
              {
                serviceAccountName: "tiny",
                rules: [{ apiGroups: ["tiny.example.com"], resources: ["widgets"], verbs: ["get", "list", "watch"] }],
              },
            ],
            deployments: [
              {
                name: "tiny-controller",
                spec: {
                  replicas: 1,
                  selector: { matchLabels: { app: "tiny" } },
                  template: {
                    metadata: { labels: { app: "tiny" } },
                    spec: {
                      serviceAccountName: "tiny",
                      containers: [{ name: "manager", image: `example.com/tiny:v${version}` }],
                    },
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
      "  operators.operatorframework.io.bundle.package.v1: tiny\n" +
      "  operators.operatorframework.io.bundle.channels.v1: stable\n",
  );
}

/**
 * Every scenario twice: with the controllers under their own user (as in a cluster) and under the
 * admin's own credentials, the user who creates the ClusterExtensions (as `opcat cluster run
 * --kubeconfig ~/.kube/config` on a laptop: one identity for both).
 */
const AS = { controller: "their own user", admin: "the admin (one identity)" };
for (const identity of ["controller", "admin"] as const)
  describe(`ClusterExtension on a real API server (operator-controller's API), controllers as ${AS[identity]}`, {
    skip,
    concurrency: false,
  }, () => {
    let kubeconfig = "";
    let admin: KubeClient;
    let registry: RunningRegistry;
    let running: RunningControllers | undefined;
    let tmp = "";
    const dirs: Record<string, string> = {};
    const images: Record<string, string> = {};

    /** A catalog directory of package tiny: channels as ordered versions, each replacing the one before. */
    function writeCatalog(
      dir: string,
      channels: Record<string, string[]>,
      deprecations?: { reference: { schema: string; name?: string }; message: string }[],
    ): void {
      mkdirSync(dir, { recursive: true });
      const blobs: unknown[] = [{ schema: "olm.package", name: "tiny", defaultChannel: "stable" }];
      for (const [ch, vs] of Object.entries(channels))
        blobs.push({
          schema: "olm.channel",
          name: ch,
          package: "tiny",
          entries: vs.map((v, i) => ({ name: `tiny.v${v}`, ...(i > 0 ? { replaces: `tiny.v${vs[i - 1]}` } : {}) })),
        });
      if (deprecations) blobs.push({ schema: "olm.deprecations", package: "tiny", entries: deprecations });
      let text = blobs.map((b) => JSON.stringify(b)).join("\n") + "\n";
      for (const v of [...new Set(Object.values(channels).flat())])
        text += formatCatalog(renderBundleDirectory(dirs[v], { image: images[v] }), "json");
      writeFileSync(join(dir, "tiny.json"), text);
    }

    async function catalog(name: string, tag: string, team: string, pollIntervalMinutes?: number): Promise<void> {
      await admin.apply({
        apiVersion: CATALOG_API_VERSION,
        kind: "ClusterCatalog",
        metadata: { name, labels: { team } },
        spec: {
          source: {
            type: "Image",
            image: { ref: `${registry.host}/catalogs/${tag}`, ...(pollIntervalMinutes ? { pollIntervalMinutes } : {}) },
          },
        },
      } as ClusterCatalog);
      await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        name,
        (o) => cond(o, "Serving")?.status === "True",
        "Serving",
      );
    }

    function extension(name: string, catalogSpec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
      return {
        apiVersion: OLM_API_VERSION,
        kind: "ClusterExtension",
        metadata: { name },
        spec: {
          namespace: NS,
          source: { sourceType: "Catalog", catalog: { packageName: "tiny", ...catalogSpec } },
          ...extra,
        },
      } as unknown as ClusterExtension;
    }

    const progressedAt = (o: ClusterExtension | undefined) =>
      o?.status?.conditions?.find((c) => c.type === "Progressing")?.observedGeneration;

    /** Waits until the extension reports `version` installed for its current generation. */
    const installedVersion = (name: string, version: string) =>
      waitFor<ClusterExtension>(
        admin,
        OLM_API_VERSION,
        "ClusterExtension",
        name,
        (o) =>
          cond(o, "Installed")?.status === "True" &&
          o?.status?.install?.bundle.version === version &&
          cond(o, "Progressing")?.reason === "Succeeded" &&
          progressedAt(o) === o?.metadata.generation,
        `installed ${version}`,
      );

    const progressing = (name: string, reason: string, match: (m: string) => boolean, what: string) =>
      waitFor<ClusterExtension>(
        admin,
        OLM_API_VERSION,
        "ClusterExtension",
        name,
        (o) =>
          cond(o, "Progressing")?.reason === reason &&
          match(cond(o, "Progressing")?.message ?? "") &&
          progressedAt(o) === o?.metadata.generation,
        what,
      );

    async function patchCatalogSpec(name: string, catalogSpec: Record<string, unknown>, extra = {}): Promise<void> {
      await admin.mergePatch(OLM_API_VERSION, "ClusterExtension", name, {
        spec: { source: { catalog: catalogSpec }, ...extra },
      });
    }

    /** Deletes every ClusterExtension and waits until what they installed is gone. */
    async function removeAll(): Promise<void> {
      for (const e of (await admin.list<ClusterExtension>(OLM_API_VERSION, "ClusterExtension")).items) {
        await admin.delete(OLM_API_VERSION, "ClusterExtension", e.metadata.name).catch(() => false);
        await waitFor(admin, OLM_API_VERSION, "ClusterExtension", e.metadata.name, (o) => o === undefined, "gone");
        await waitFor(admin, RUKPAK, "Instance", instanceNameFor(e.metadata.name), (o) => o === undefined, "gone");
      }
      await waitForCrdGone(admin, CRD);
    }

    before(async () => {
      if (cluster.skip !== false) return;
      kubeconfig = cluster.kubeconfig;
      admin = clientAs(kubeconfig, "admin");
      tmp = mkdtempSync(join(tmpdir(), "opcat-clusterext-"));
      registry = await startDockerRegistry(join(tmp, "registry"));
      for (const v of ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.5.0", "2.0.0", "3.0.0", "4.0.0"]) {
        dirs[v] = join(tmp, "bundles", v);
        writeBundle(dirs[v], v, v === "4.0.0");
        images[v] = `${registry.host}/tiny-bundle:v${v}`;
        await pushImage(buildBundleImage(dirs[v]), images[v], { useHttp: true });
      }
      const main = { stable: ["1.0.0", "1.1.0", "1.2.0"], fast: ["1.2.0", "2.0.0", "3.0.0", "4.0.0"] };
      writeCatalog(join(tmp, "main"), main);
      writeCatalog(join(tmp, "main2"), { ...main, stable: [...main.stable, "1.3.0"] });
      writeCatalog(join(tmp, "other"), { stable: ["1.0.0", "1.5.0"] });
      writeCatalog(join(tmp, "depr"), { stable: ["1.0.0", "1.1.0"] }, [
        { reference: { schema: "olm.package" }, message: "tiny is deprecated" },
        { reference: { schema: "olm.channel", name: "stable" }, message: "stable is deprecated" },
        { reference: { schema: "olm.bundle", name: "tiny.v1.0.0" }, message: "tiny 1.0.0 is deprecated" },
      ]);
      for (const c of ["main", "other", "depr"])
        await pushImage(buildCatalogImage(join(tmp, c)), `${registry.host}/catalogs/${c}:v1`, { useHttp: true });
      running = await runControllers({
        kubeconfig,
        // their own identity, or the admin's: an Instance they write for themselves is never judged as
        // that user, and the admin's ClusterExtensions install as the admin either way
        context: identity,
        stateDir: join(tmp, "state"),
        pull: { useHttp: true },
        namespace: "opcat-clusterext-test",
        log,
      });
      await removeAll();
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as KubeObject);
      await catalog("main", "main:v1", "a", 60);
      await catalog("other", "other:v1", "b");
      await catalog("depr", "depr:v1", "d");
    });

    afterEach(async () => {
      if (cluster.skip === false && admin) await removeAll();
    });

    after(async () => {
      try {
        if (admin && running) await removeAll();
      } finally {
        for (const c of ["main", "other", "depr"])
          await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", c).catch(() => false);
        await admin?.delete("v1", "Namespace", "tiny-late").catch(() => false);
        await running?.stop();
        await registry?.stop();
        admin?.close();
        if (tmp) rmSync(tmp, { recursive: true, force: true });
      }
    });

    test("the latest version; owner labels; a deleted object is restored; uninstall", async () => {
      await admin.apply(extension("tiny", { selector: { matchLabels: { team: "a" } } }));
      const ext = await installedVersion("tiny", "4.0.0");
      assert.equal(ext?.status?.install?.bundle.name, "tiny.v4.0.0");
      assert.equal(cond(ext, "Installed")?.message, `Installed bundle ${images["4.0.0"]} successfully`);
      assert.equal(cond(ext, "Progressing")?.message, "Desired state reached");
      for (const t of ["Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"])
        assert.equal(cond(ext, t)?.status, "False", t);
      // the objects it installed carry operator-controller's owner labels
      const dep = await admin.get("apps/v1", "Deployment", "tiny-controller", NS);
      assert.equal(dep.metadata.labels?.["olm.operatorframework.io/owner-kind"], "ClusterExtension");
      assert.equal(dep.metadata.labels?.["olm.operatorframework.io/owner-name"], "tiny");
      // the Instance was written as the extension's author, never as the controllers
      const inst = await admin.get<Instance>(RUKPAK, "Instance", instanceNameFor("tiny"));
      const author = JSON.parse(inst.metadata.annotations?.[ANNOTATION_REQUESTER] ?? "{}").username;
      assert.equal(author, (await admin.whoami()).username);
      // (under one identity the author is the controllers' user too, and the Instance installs as them)
      if (identity === "controller") assert.notEqual(author, (await running!.client.whoami()).username);
      // a deleted installed object is made again
      const uid = dep.metadata.uid;
      await admin.delete("apps/v1", "Deployment", "tiny-controller", NS);
      await waitFor(
        admin,
        "apps/v1",
        "Deployment",
        "tiny-controller",
        (o) => !!o && o.metadata.uid !== uid,
        "restored",
        180_000,
        NS,
      );
      // uninstall
      await admin.delete(OLM_API_VERSION, "ClusterExtension", "tiny");
      await waitForCrdGone(admin, CRD);
      await waitFor(admin, "apps/v1", "Deployment", "tiny-controller", (o) => o === undefined, "gone", 180_000, NS);
    });

    test("the API server validates ClusterExtensions with upstream's rules and messages", async () => {
      const bad = (catalogSpec: Record<string, unknown>, extra: Record<string, unknown>, message: RegExp) =>
        assert.rejects(admin.create(extension("bad", catalogSpec, extra)), message);
      await bad({ version: "latest" }, {}, /invalid version expression/);
      await bad({ channels: ["Stable_1"] }, {}, /channels entries must be valid DNS1123 subdomains/);
      await bad({ upgradeConstraintPolicy: "Sometimes" }, {}, /Unsupported value: "Sometimes"/);
      await bad({}, { install: {} }, /at least one of \[preflight\] are required when install is specified/);
      await bad({}, { progressDeadlineMinutes: 5 }, /should be greater than or equal to 10/);
      await bad({}, { config: { configType: "Inline" } }, /inline is required when configType is Inline/);
      // accepted as upstream: the deprecated serviceAccount, the default policy; packageName is immutable
      await admin.create(
        extension(
          "tiny",
          { selector: { matchLabels: { team: "a" } }, version: "1.0.0" },
          {
            serviceAccount: { name: "installer" },
          },
        ),
      );
      const ext = await installedVersion("tiny", "1.0.0");
      assert.equal(ext?.spec.source.catalog?.upgradeConstraintPolicy, "CatalogProvided");
      await assert.rejects(
        admin.mergePatch(OLM_API_VERSION, "ClusterExtension", "tiny", {
          spec: { source: { catalog: { packageName: "other" } } },
        }),
        /packageName is immutable/,
      );
    });

    test("a pin never upgrades; a non-successor is refused with upstream's message; SelfCertified may", async () => {
      await admin.apply(extension("tiny", { selector: { matchLabels: { team: "a" } }, version: "1.0.0" }));
      await installedVersion("tiny", "1.0.0");
      await patchCatalogSpec("tiny", { version: "3.0.0" });
      const refused = await progressing("tiny", "Retrying", (m) => m.startsWith("unable to upgrade"), "refused");
      assert.equal(
        cond(refused, "Progressing")?.message,
        'unable to upgrade to version 3.0.0: error upgrading from currently installed version "1.0.0": ' +
          'no bundles found for package "tiny" matching version "3.0.0" (currently installed: 1.0.0)',
      );
      assert.equal(refused?.status?.install?.bundle.version, "1.0.0");
      assert.equal(cond(refused, "Installed")?.status, "True");
      await patchCatalogSpec("tiny", { upgradeConstraintPolicy: "SelfCertified" });
      await installedVersion("tiny", "3.0.0");
    });

    test("a version range and channels: the highest version within both", async () => {
      await admin.apply(
        extension("tiny", {
          selector: { matchLabels: { team: "a" } },
          version: ">=1.0.0, <2.0.0",
          channels: ["stable"],
        }),
      );
      const ext = await installedVersion("tiny", "1.2.0");
      assert.equal(ext?.status?.install?.bundle.name, "tiny.v1.2.0");
      // channel fast from 1.2.0: 2.0.0 is its successor; the range ~2 allows it
      await patchCatalogSpec("tiny", { version: "~2", channels: ["fast"] });
      await installedVersion("tiny", "2.0.0");
    });

    test("crdUpgradeSafety: an unsafe CRD change is refused under Strict and applied under None", async () => {
      await admin.apply(extension("tiny", { selector: { matchLabels: { team: "a" } }, version: "3.0.0" }));
      await installedVersion("tiny", "3.0.0");
      await patchCatalogSpec("tiny", { version: "4.0.0" });
      const refused = await progressing("tiny", "Retrying", (m) => m.includes("UnsafeCRDUpgrade"), "unsafe");
      assert.match(cond(refused, "Progressing")?.message ?? "", /widgets\.tiny\.example\.com/);
      assert.equal(refused?.status?.install?.bundle.version, "3.0.0");
      await admin.mergePatch(OLM_API_VERSION, "ClusterExtension", "tiny", {
        spec: { install: { preflight: { crdUpgradeSafety: { enforcement: "None" } } } },
      });
      await installedVersion("tiny", "4.0.0");
    });

    test("a selector picks among catalogs; two catalogs at the same priority is upstream's error", async () => {
      await admin.apply(extension("tiny", { selector: { matchLabels: { team: "b" } }, channels: ["stable"] }));
      await installedVersion("tiny", "1.5.0");
      await removeAll();
      await admin.apply(
        extension("tiny", {
          selector: { matchExpressions: [{ key: "team", operator: "In", values: ["a", "b"] }] },
          channels: ["stable"],
        }),
      );
      const ext = await progressing("tiny", "Retrying", (m) => m.includes("multiple catalogs"), "ambiguous");
      assert.equal(
        cond(ext, "Progressing")?.message,
        'found bundles for package "tiny" in channels [stable] in multiple catalogs with the same priority ' +
          "[main other]",
      );
      assert.equal(cond(ext, "Installed")?.status, "False");
      assert.equal(cond(ext, "Installed")?.message, "No bundle installed");
    });

    test("deprecation conditions from the catalog's olm.deprecations", async () => {
      await admin.apply(
        extension("tiny", { selector: { matchLabels: { team: "d" } }, version: "1.0.0", channels: ["stable"] }),
      );
      const ext = await installedVersion("tiny", "1.0.0");
      const c = (t: string) => [cond(ext, t)?.status, cond(ext, t)?.reason, cond(ext, t)?.message];
      assert.deepEqual(c("PackageDeprecated"), ["True", "Deprecated", "tiny is deprecated"]);
      assert.deepEqual(c("ChannelDeprecated"), ["True", "Deprecated", "stable is deprecated"]);
      assert.deepEqual(c("BundleDeprecated"), ["True", "Deprecated", "tiny 1.0.0 is deprecated"]);
      assert.deepEqual(c("Deprecated"), [
        "True",
        "Deprecated",
        "tiny is deprecated\nstable is deprecated\ntiny 1.0.0 is deprecated",
      ]);
    });

    test("an install into a namespace that does not exist yet completes once it appears", async () => {
      const late = extension("late", { selector: { matchLabels: { team: "a" } }, version: "1.0.0" });
      late.spec.namespace = "tiny-late";
      await admin.apply(late);
      const waiting = await progressing("late", "Retrying", (m) => m.includes("not found"), "namespace missing");
      assert.equal(cond(waiting, "Progressing")?.message, 'failed to install: namespaces "tiny-late" not found');
      assert.equal(cond(waiting, "Installed")?.status, "False");
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tiny-late" } } as KubeObject);
      await installedVersion("late", "1.0.0");
    });

    test("a tenant's ClusterExtension waits for approval (her rights judged); progressDeadlineMinutes", async () => {
      // carol may write ClusterExtensions and Instances and use the class, nothing cluster-wide besides
      await grantClusterRole(admin, "clusterext-tenant", { group: "dev-team" }, [
        {
          apiGroups: ["olm.operatorframework.io"],
          resources: ["clusterextensions"],
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
        { apiGroups: ["rukpak.io"], resources: ["instances"], verbs: ["get", "list", "watch", "create", "update"] },
        { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "use"] },
      ]);
      const carol = clientAs(kubeconfig, "carol");
      try {
        await carol.create(
          extension(
            "carols",
            { selector: { matchLabels: { team: "a" } }, version: "1.0.0" },
            { progressDeadlineMinutes: 10 },
          ),
        );
        const waiting = await progressing("carols", "Retrying", (m) => m.includes("waits for approval"), "approval");
        assert.match(cond(waiting, "Progressing")?.message ?? "", /InsufficientPermissions/);
        const inst = await admin.get<Instance>(RUKPAK, "Instance", instanceNameFor("carols"));
        assert.equal(JSON.parse(inst.metadata.annotations?.[ANNOTATION_REQUESTER] ?? "{}").username, "carol");
        assert.equal(await admin.tryGet("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD), undefined);
        // progressDeadlineMinutes: counted from when the Instance's spec was written (moved two hours back here)
        await admin.mergePatch(RUKPAK, "Instance", instanceNameFor("carols"), {
          metadata: { annotations: { [ANNOTATION_ROLLOUT_STARTED]: new Date(Date.now() - 7_200_000).toISOString() } },
        });
        const late = await waitFor<ClusterExtension>(
          admin,
          OLM_API_VERSION,
          "ClusterExtension",
          "carols",
          (o) => cond(o, "Progressing")?.reason === "ProgressDeadlineExceeded",
          "deadline exceeded",
        );
        assert.equal(cond(late, "Progressing")?.status, "False");
        // an approver's decision installs it
        await approveInstance(admin, instanceNameFor("carols"));
        await installedVersion("carols", "1.0.0");
      } finally {
        carol.close();
        await admin
          .delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterext-tenant")
          .catch(() => false);
        await admin.delete("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterext-tenant").catch(() => false);
      }
    });

    test("an author who may not write Instances is told so, and nothing is installed", async () => {
      await grantClusterRole(admin, "clusterext-writer", { user: "bob" }, [
        {
          apiGroups: ["olm.operatorframework.io"],
          resources: ["clusterextensions"],
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
      ]);
      const bob = clientAs(kubeconfig, "bob");
      try {
        await bob.create(extension("bobs", { selector: { matchLabels: { team: "a" } }, version: "1.0.0" }));
        const refused = await progressing("bobs", "Retrying", (m) => m.includes("may not write Instance"), "refused");
        assert.match(cond(refused, "Progressing")?.message ?? "", /^bob may not write Instance clusterextension-bobs/);
        assert.equal(await admin.tryGet(RUKPAK, "Instance", instanceNameFor("bobs")), undefined);
      } finally {
        bob.close();
        await admin
          .delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterext-writer")
          .catch(() => false);
        await admin.delete("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterext-writer").catch(() => false);
      }
    });

    test("ClusterCatalogs as catalogd serves them: the name label, availabilityMode, validations", async () => {
      const main = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "main");
      assert.equal(main.metadata.labels?.["olm.operatorframework.io/metadata.name"], "main");
      assert.equal(cond(main, "Serving")?.message, "Serving desired content from resolved source");
      // a selector naming one catalog by that label
      await admin.apply(
        extension("tiny", {
          selector: { matchLabels: { "olm.operatorframework.io/metadata.name": "other" } },
          channels: ["stable"],
        }),
      );
      await installedVersion("tiny", "1.5.0");
      // availabilityMode Unavailable: not served
      await admin.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "depr", {
        spec: { availabilityMode: "Unavailable" },
      });
      const off = await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        "depr",
        (o) => cond(o, "Serving")?.reason === "UserSpecifiedUnavailable",
        "unavailable",
      );
      assert.equal(cond(off, "Serving")?.status, "False");
      assert.equal(cond(off, "Serving")?.message, "Catalog availability mode is set to Unavailable");
      const base = off?.status?.urls?.base ?? "";
      assert.equal((await fetch(`${base}/api/v1/all`)).status, 404);
      await admin.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "depr", {
        spec: { availabilityMode: "Available" },
      });
      await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        "depr",
        (o) => cond(o, "Serving")?.status === "True",
        "serving again",
      );
      // catalogd's validation of image references, with its message
      await assert.rejects(
        admin.apply({
          apiVersion: CATALOG_API_VERSION,
          kind: "ClusterCatalog",
          metadata: { name: "untagged" },
          spec: { source: { type: "Image", image: { ref: "quay.io/example/catalog" } } },
        } as ClusterCatalog),
        /must end with a digest or a tag/,
      );
    });

    test("a catalog opm refuses is served as catalogd serves it; each ClusterExtension resolves in it", async () => {
      // tiny without defaultChannel; stable has two heads (1.0.0 → 1.1.0 → 1.2.0, and a lone 1.5.0);
      // ghost (no defaultChannel either) has no bundle at 1.x
      const dir = join(tmp, "lax");
      mkdirSync(dir, { recursive: true });
      const chain = (pkg: string, vs: string[]) =>
        vs.map((v, i) => ({ name: `${pkg}.v${v}`, ...(i > 0 ? { replaces: `${pkg}.v${vs[i - 1]}` } : {}) }));
      const blobs: unknown[] = [
        { schema: "olm.package", name: "tiny" },
        {
          schema: "olm.channel",
          name: "stable",
          package: "tiny",
          entries: [...chain("tiny", ["1.0.0", "1.1.0", "1.2.0"]), { name: "tiny.v1.5.0" }],
        },
        { schema: "olm.channel", name: "fast", package: "tiny", entries: chain("tiny", ["1.2.0", "2.0.0"]) },
        { schema: "olm.package", name: "ghost" },
        { schema: "olm.channel", name: "alpha", package: "ghost", entries: [{ name: "ghost.v0.1.0" }] },
        {
          schema: "olm.bundle",
          name: "ghost.v0.1.0",
          package: "ghost",
          image: "example.com/ghost-bundle:v0.1.0",
          properties: [{ type: "olm.package", value: { packageName: "ghost", version: "0.1.0" } }],
        },
      ];
      let text = blobs.map((b) => JSON.stringify(b)).join("\n") + "\n";
      for (const v of ["1.0.0", "1.1.0", "1.2.0", "1.5.0", "2.0.0"])
        text += formatCatalog(renderBundleDirectory(dirs[v], { image: images[v] }), "json");
      writeFileSync(join(dir, "lax.json"), text);
      await pushImage(buildCatalogImage(dir), `${registry.host}/catalogs/lax:v1`, { useHttp: true });
      try {
        await catalog("lax", "lax:v1", "x");
        const lax = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "lax");
        assert.equal(cond(lax, "Serving")?.reason, "Available");
        const validated = cond(lax, "Validated");
        assert.deepEqual([validated?.status, validated?.reason], ["False", "Invalid"]);
        const msg = validated?.message ?? "";
        assert.match(msg, /^opcat validate finds 3 problems in the served content/);
        assert.match(msg, /invalid package "tiny": default channel must be set/);
        assert.match(msg, /invalid package "ghost": default channel must be set/);
        assert.match(msg, /invalid channel "stable": multiple channel heads found in graph: tiny.v1.2.0, tiny.v1.5.0/);
        // served as it is: the package blob without a default channel
        const all = await (await fetch(`${lax.status?.urls?.base}/api/v1/all`)).text();
        assert.ok(all.split("\n").includes('{"name":"tiny","schema":"olm.package"}'), all.slice(0, 200));
        const valid = await admin.get<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", "other");
        assert.equal(cond(valid, "Validated")?.status, "True");

        const inLax = { selector: { matchLabels: { team: "x" } } };
        // no channel named, no default channel: every channel; the highest version within the range
        await admin.apply(extension("tiny", { ...inLax, version: "<2.0.0" }));
        await installedVersion("tiny", "1.5.0");
        // a package without a satisfying bundle fails that ClusterExtension only, with upstream's message
        await admin.apply(extension("ghost", { ...inLax, packageName: "ghost", version: ">=1.0.0" }));
        const ghost = await progressing("ghost", "Retrying", (m) => m.includes("ghost"), "unresolvable");
        assert.equal(
          cond(ghost, "Progressing")?.message,
          'no bundles found for package "ghost" matching version ">=1.0.0"',
        );
        assert.equal(cond(ghost, "Installed")?.status, "False");
        const tiny = await installedVersion("tiny", "1.5.0");
        assert.equal(cond(tiny, "Installed")?.status, "True");
        await removeAll();

        // a named channel with two heads: successors only, one edge at a time (1.0.0 → 1.1.0 → 1.2.0);
        // the other head, 1.5.0, is higher and within the range but replaces nothing installed
        await admin.apply(extension("tiny", { ...inLax, channels: ["stable"], version: "1.0.0" }));
        await installedVersion("tiny", "1.0.0");
        await patchCatalogSpec("tiny", { version: ">=1.0.0, <2.0.0" });
        await installedVersion("tiny", "1.2.0");
        await new Promise((r) => setTimeout(r, 2000));
        const held = await admin.get<ClusterExtension>(OLM_API_VERSION, "ClusterExtension", "tiny");
        assert.equal(held.status?.install?.bundle.version, "1.2.0");
        // another channel named: its successor of 1.2.0
        await patchCatalogSpec("tiny", { channels: ["fast"], version: null });
        await installedVersion("tiny", "2.0.0");
      } finally {
        await removeAll();
        await admin.delete(CATALOG_API_VERSION, "ClusterCatalog", "lax").catch(() => false);
      }
    });

    test("a new catalog digest upgrades within the constraints; a deleted catalog leaves the install", async () => {
      await admin.apply(extension("tiny", { selector: { matchLabels: { team: "a" } }, channels: ["stable"] }));
      await installedVersion("tiny", "1.2.0");
      // the same tag, new content (1.3.0 replaces 1.2.0); a spec change makes the catalog poll now
      await pushImage(buildCatalogImage(join(tmp, "main2")), `${registry.host}/catalogs/main:v1`, { useHttp: true });
      await admin.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "main", {
        spec: { source: { image: { pollIntervalMinutes: 59 } } },
      });
      await installedVersion("tiny", "1.3.0");
      // the catalog goes: nothing is uninstalled, and deprecation is unknown
      await admin.delete(CATALOG_API_VERSION, "ClusterCatalog", "main");
      await waitFor(admin, CATALOG_API_VERSION, "ClusterCatalog", "main", (o) => o === undefined, "gone");
      const ext = await waitFor<ClusterExtension>(
        admin,
        OLM_API_VERSION,
        "ClusterExtension",
        "tiny",
        (o) => cond(o, "Deprecated")?.status === "Unknown",
        "deprecation unknown",
      );
      assert.equal(cond(ext, "Installed")?.status, "True");
      assert.equal(ext?.status?.install?.bundle.version, "1.3.0");
      assert.deepEqual(
        [cond(ext, "Progressing")?.reason, cond(ext, "Progressing")?.message],
        ["Succeeded", "Desired state reached"],
      );
      assert.equal(cond(ext, "BundleDeprecated")?.reason, "DeprecationStatusUnknown");
      assert.ok(await admin.tryGet("apps/v1", "Deployment", "tiny-controller", NS));
    });
  });
