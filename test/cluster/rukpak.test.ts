/**
 * RukPak on a real API server (etcd + kube-apiserver started by the test runner) with real bundles
 * from ../shared/data/community/operators, built and pushed by opcat to a real docker-registry on
 * 127.0.0.1, installed by opcat's provisioner running in this process with its admission webhooks
 * registered by URL.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundleImage, pushImage } from "../../src/image/index.js";
import { readBundleDirectory } from "../../src/bundle/index.js";
import { KubeApiError, type KubeClient, type KubeObject } from "../../src/cluster/kube/client.js";
import { convertRegistryV1 } from "../../src/cluster/rukpak/convert.js";
import { parseKubeDocuments } from "../../src/cluster/rukpak/manifests.js";
import {
  API_VERSION,
  LABEL_INSTANCE,
  OPERATOR_PROVISIONER,
  type Bundle,
  type Instance,
} from "../../src/cluster/rukpak/api.js";
import { approveInstance } from "../../src/cluster/rukpak/approve.js";
import { prune } from "../../src/cluster/rukpak/apply.js";
import { refKey, type PassReads } from "../../src/cluster/rukpak/reads.js";
import { RecordStore, recordName, type InstallRecord } from "../../src/cluster/rukpak/record.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { makeCerts, makeHtpasswd, requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import type { AddressInfo } from "node:net";
import { COMMUNITY, requireShared } from "../shared.js";
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
const missingTools = requireTools("docker-registry", "htpasswd", "openssl", "tar");
const shared = requireShared();
const skip = cluster.skip || missingTools || shared.skip;
const OPS = join(COMMUNITY, "operators");

describe("RukPak on a real API server", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let registry: RunningRegistry;
  let privateRegistry: RunningRegistry;
  let https: HttpsServer;
  let certs: { ca: string; cert: string; key: string };
  let running: RunningControllers;
  let tmp = "";
  const images: Record<string, string> = {};

  async function push(name: string, dir: string): Promise<string> {
    const ref = `${registry.host}/${name}`;
    await pushImage(buildBundleImage(dir), ref, { useHttp: true });
    return `docker://${ref}`;
  }

  async function klass(name: string, approval: string): Promise<void> {
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name },
      provisioner: OPERATOR_PROVISIONER,
      parameters: { approval },
    } as unknown as KubeObject);
  }

  function instance(name: string, bundle: string, ref: string, cls: string, sub: string): Instance {
    return {
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name },
      spec: {
        selector: { matchLabels: { subscription: sub } },
        bundle: { name: bundle, spec: { class: cls, refs: [ref] } },
      },
    };
  }

  const installed = (bundle: string) => (o: Instance | undefined) =>
    cond(o, "Installed")?.status === "True" &&
    o?.status?.activeBundle === bundle &&
    o.status.observedGeneration === o.metadata.generation;

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-rukpak-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    images.rabbit280 = await push("rabbitmq-bundle:2.8.0", join(OPS, "rabbitmq-cluster-operator", "2.8.0"));
    images.rabbit290 = await push("rabbitmq-bundle:2.9.0", join(OPS, "rabbitmq-cluster-operator", "2.9.0"));
    images.catfacts = await push("cat-facts-bundle:1.1.0", join(OPS, "cat-facts-operator", "1.1.0"));
    images.nfs = await push("nfs-bundle:0.0.9", join(OPS, "nfs-provisioner-operator", "0.0.9"));
    images.kubegreen = await push("kube-green-bundle:0.7.1", join(OPS, "kube-green", "0.7.1"));
    // rabbitmq 2.9.0 with its CRD's only (stored) version renamed: an upgrade that drops a stored version
    const bad = join(tmp, "rabbit-bad");
    cpSync(join(OPS, "rabbitmq-cluster-operator", "2.9.0"), bad, { recursive: true });
    const crdFile = join(bad, "manifests", "crds.yaml");
    writeFileSync(crdFile, readFileSync(crdFile, "utf8").replace(/^(\s+)name: v1beta1$/m, "$1name: v1beta2"));
    const csvFile = join(bad, "manifests", "rabbitmq.clusterserviceversion.yaml");
    writeFileSync(
      csvFile,
      readFileSync(csvFile, "utf8")
        .replace(/rabbitmq\.com\/v1beta1/g, "rabbitmq.com/v1beta2")
        .replace(/^(\s+)version: v1beta1$/gm, "$1version: v1beta2"),
    );
    images.rabbitBad = await push("rabbitmq-bundle:2.9.0-bad", bad);
    // rabbitmq 2.9.0 whose CRD newly limits spec.replicas to 3: safe by
    // the schema diff, unsafe for an existing cluster of 5
    const strict = join(tmp, "rabbit-strict");
    cpSync(join(OPS, "rabbitmq-cluster-operator", "2.9.0"), strict, { recursive: true });
    const strictCrdFile = join(strict, "manifests", "crds.yaml");
    const strictCrd = parseKubeDocuments(readFileSync(strictCrdFile, "utf8"), "crds.yaml")[0] as unknown as {
      spec: {
        versions: {
          schema: { openAPIV3Schema: { properties: { spec: { properties: { replicas: Record<string, unknown> } } } } };
        }[];
      };
    };
    strictCrd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum = 3;
    writeFileSync(strictCrdFile, JSON.stringify(strictCrd));
    images.rabbitStrict = await push("rabbitmq-bundle:2.9.0-strict", strict);
    // a registry with basic auth, and an https server for tarball refs (its CA given to the provisioner)
    makeHtpasswd(join(tmp, "htpasswd"), "puller", "s3cret");
    privateRegistry = await startDockerRegistry(join(tmp, "private"), { htpasswd: join(tmp, "htpasswd") });
    const auth = join(tmp, "auth.json");
    writeFileSync(
      auth,
      JSON.stringify({ auths: { [privateRegistry.host]: { auth: Buffer.from("puller:s3cret").toString("base64") } } }),
    );
    await pushImage(
      buildBundleImage(join(OPS, "dell-csm-operator", "1.9.1")),
      `${privateRegistry.host}/private/dell-bundle:1.9.1`,
      { useHttp: true, authFile: auth },
    );
    certs = makeCerts(join(tmp, "certs"));
    const plain = join(tmp, "tarball", "manifests");
    writeFileSync(
      join(tmp, "obj.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-a-tarball\n" +
        "  namespace: default\ndata:\n  source: https\n",
    );
    execFileSync("mkdir", ["-p", plain]);
    cpSync(join(tmp, "obj.yaml"), join(plain, "obj.yaml"));
    execFileSync("tar", ["czf", join(tmp, "bundle.tgz"), "-C", join(tmp, "tarball"), "manifests"]);
    const tgz = readFileSync(join(tmp, "bundle.tgz"));
    https = createHttpsServer({ cert: readFileSync(certs.cert), key: readFileSync(certs.key) }, (req, res) => {
      if (req.url === "/bundle.tgz") res.writeHead(200, { "Content-Type": "application/gzip" }).end(tgz);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => https.listen(0, "127.0.0.1", () => r()));
    images.tarball = `https://127.0.0.1:${(https.address() as AddressInfo).port}/bundle.tgz`;
    images.tarballDigest = `sha256:${createHash("sha256").update(tgz).digest("hex")}`;
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true, caFile: certs.ca },
      log: controllerLog("rukpak-controllers"),
    });
    // carol (group dev-team): may create Instances and Bundles and use every class, nothing else
    await grantClusterRole(admin, "test-dev-team", { group: "dev-team" }, [
      {
        apiGroups: ["rukpak.io"],
        resources: ["instances", "bundles"],
        verbs: ["get", "list", "watch", "create", "update", "patch"],
      },
      { apiGroups: ["rukpak.io"], resources: ["instances/status"], verbs: ["get", "update", "patch"] },
      { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "list", "use"] },
    ]);
    // bob: may create Bundles but use no class
    await grantClusterRole(admin, "test-bob", { user: "bob" }, [
      { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get", "create"] },
    ]);
  });

  after(async () => {
    await running?.stop();
    await registry?.stop();
    await privateRegistry?.stop();
    https?.close();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test(
    "AllowAll: an Instance installs rabbitmq-cluster-operator " + "2.8.0 with every object of the conversion rules",
    async () => {
      await klass("test-allow", "AllowAll");
      await admin.create(instance("rabbitmq", "rabbitmq-2.8.0", images.rabbit280, "test-allow", "rabbitmq"));
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "rabbitmq",
        installed("rabbitmq-2.8.0"),
        "Installed",
      );
      assert.equal(cond(inst, "Approved")?.reason, "AllowAll");
      const expected = convertRegistryV1(readBundleDirectory(join(OPS, "rabbitmq-cluster-operator", "2.8.0")));
      assert.equal(inst?.status?.installNamespace, expected.installNamespace);
      assert.equal(inst?.status?.objects?.length, expected.objects.length);
      for (const want of expected.objects) {
        const got = await admin.get(want.apiVersion, want.kind, want.metadata.name, want.metadata.namespace);
        assert.equal(got.metadata.labels?.[LABEL_INSTANCE], "rabbitmq", `${want.kind} ${want.metadata.name} labelled`);
        assert.equal(
          got.metadata.ownerReferences?.[0]?.uid,
          inst?.metadata.uid,
          `${want.kind} ${want.metadata.name} owned by the Instance`,
        );
        if (want.kind === "ClusterRole" || want.kind === "Role") assert.deepEqual(got.rules, want.rules);
        if (want.kind === "Deployment") {
          const ann = (got.spec as { template: { metadata: { annotations: Record<string, string> } } }).template
            .metadata.annotations;
          assert.equal(ann["olm.targetNamespaces"], "");
          assert.equal(ann["olm.operatorNamespace"], expected.installNamespace);
          assert.equal((got.spec as { revisionHistoryLimit: number }).revisionHistoryLimit, 1);
        }
      }
      const bundle = await admin.get<Bundle>(API_VERSION, "Bundle", "rabbitmq-2.8.0");
      assert.equal(bundle.status?.unpacked, "Done");
      assert.equal(bundle.status?.format, "registry+v1");
      assert.match(bundle.status?.resolvedRefs?.[0] ?? "", /@sha256:[0-9a-f]{64}$/);
      assert.ok(bundle.status?.objects?.some((o) => o.startsWith("/objects/ClusterServiceVersion/")));
    },
  );

  test("objects an admin deletes from an installed Instance are made again (a CRD, a ClusterRole)", async () => {
    const inst = await admin.get<Instance>(API_VERSION, "Instance", "rabbitmq");
    assert.ok(installed("rabbitmq-2.8.0")(inst), "installed by the test before");
    const pick = (kind: string) => {
      const r = inst.status?.objects?.find((o) => o.kind === kind);
      assert.ok(r, `the Instance lists a ${kind}`);
      return r;
    };
    for (const r of [pick("CustomResourceDefinition"), pick("ClusterRole")]) {
      const before = await admin.get(r.apiVersion, r.kind, r.name);
      await admin.delete(r.apiVersion, r.kind, r.name);
      if (r.kind === "CustomResourceDefinition") await waitForCrdGone(admin, r.name);
      const again = await waitFor(
        admin,
        r.apiVersion,
        r.kind,
        r.name,
        (o) => !!o && o.metadata.uid !== before.metadata.uid && !o.metadata.deletionTimestamp,
        `${r.kind} ${r.name} made again`,
        120_000,
      );
      assert.equal(again?.metadata.labels?.[LABEL_INSTANCE], "rabbitmq");
    }
  });

  const recordTitle =
    "install records: a written record is read back without a request; a change behind the store's back conflicts";
  test(recordTitle, async () => {
    // a store of its own (namespace default, the controllers' is opcat-system) for a real Instance, so
    // that the garbage collector keeps the record it owns; `admin` is someone else writing it
    const inst = await admin.get<Instance>(API_VERSION, "Instance", "rabbitmq");
    const uid = inst.metadata.uid!;
    const controller = clientAs(kubeconfig, "admin");
    const gets: string[] = [];
    const listen = (method: string, path: string) => {
      if (method === "GET" && path.includes(recordName(uid))) gets.push(path);
    };
    controller.requestListeners.add(listen);
    const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", name, namespace: "default" });
    try {
      const store = new RecordStore(controller, "default");
      assert.equal((await store.read(inst)).record, undefined);
      assert.equal(gets.length, 1);
      const rec: InstallRecord = { instance: "rabbitmq", uid, applied: [ref("a")] };
      const v1 = await store.write(inst, rec, undefined);
      const again = await store.read(inst);
      assert.deepEqual(again, { record: rec, version: v1 });
      assert.equal(gets.length, 1, "read from what the store wrote");
      // what the caller does with its copy does not change what the store knows
      again.record!.applied.push(ref("mutated"));
      assert.deepEqual((await store.read(inst)).record, rec);
      // someone else writes the record: the store's next write conflicts, then it reads it live
      const cm = await admin.get<KubeObject & { data: Record<string, string> }>(
        "v1",
        "ConfigMap",
        recordName(uid),
        "default",
      );
      cm.data["record.json"] = JSON.stringify({ ...rec, applied: [ref("b")] });
      await admin.replace(cm);
      await assert.rejects(store.write(inst, { ...rec, applied: [ref("c")] }, v1), /conflict|modified/i);
      assert.deepEqual((await store.read(inst)).record?.applied, [ref("b")]);
      assert.equal(gets.length, 2);
    } finally {
      controller.requestListeners.delete(listen);
      controller.close();
      await admin.delete("v1", "ConfigMap", recordName(uid), "default").catch(() => false);
    }
  });

  test(
    "a bundle with an admission webhook: Service, certificate Secret and " +
      "webhook configuration with its CA; the certificate is kept across reconciles",
    async () => {
      await admin.create(instance("kube-green", "kube-green-0.7.1", images.kubegreen, "test-allow", "kube-green"));
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "kube-green",
        installed("kube-green-0.7.1"),
        "Installed",
      );
      const ns = inst?.status?.installNamespace ?? "";
      const secret = await admin.get<KubeObject & { type: string; data: Record<string, string> }>(
        "v1",
        "Secret",
        "kube-green-controller-manager-service-cert",
        ns,
      );
      assert.equal(secret.type, "kubernetes.io/tls");
      const hook = await admin.get<
        KubeObject & { webhooks: { clientConfig: { caBundle: string; service: { name: string } } }[] }
      >("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "vsleepinfo.kb.io");
      assert.equal(hook.webhooks[0].clientConfig.caBundle, secret.data["ca.crt"], "caBundle is the Secret's CA");
      assert.equal(hook.webhooks[0].clientConfig.service.name, "kube-green-controller-manager-service");
      assert.ok(await admin.tryGet("v1", "Service", "kube-green-controller-manager-service", ns));
      // the certificate verifies against the CA for the Service's DNS name
      const { X509Certificate } = await import("node:crypto");
      const ca = new X509Certificate(Buffer.from(secret.data["ca.crt"], "base64"));
      const leaf = new X509Certificate(Buffer.from(secret.data["tls.crt"], "base64"));
      assert.ok(leaf.verify(ca.publicKey));
      assert.equal(
        leaf.checkHost(`kube-green-controller-manager-service.${ns}.svc`),
        `kube-green-controller-manager-service.${ns}.svc`,
      );
      // another reconcile (a label change bumps nothing in spec, so touch the spec: a new
      // watch namespace list equal to the default) keeps the same certificate
      const cur = await admin.get<Instance>(API_VERSION, "Instance", "kube-green");
      await admin.replace({ ...cur, spec: { ...cur.spec, watchNamespaces: [""] } });
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "kube-green",
        installed("kube-green-0.7.1"),
        "Installed again",
      );
      const again = await admin.get<KubeObject & { data: Record<string, string> }>(
        "v1",
        "Secret",
        "kube-green-controller-manager-service-cert",
        ns,
      );
      assert.equal(again.data["tls.crt"], secret.data["tls.crt"]);
    },
  );

  test(
    "pivot: the Instance moves to 2.9.0, objects only " + "2.8.0 had are pruned, the old Bundle is Replaced",
    async () => {
      const cur = await admin.get<Instance>(API_VERSION, "Instance", "rabbitmq");
      await admin.replace({
        ...cur,
        spec: {
          ...cur.spec,
          bundle: { name: "rabbitmq-2.9.0", spec: { class: "test-allow", refs: [images.rabbit290] } },
        },
      });
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "rabbitmq",
        installed("rabbitmq-2.9.0"),
        "Installed 2.9.0",
      );
      const before = convertRegistryV1(readBundleDirectory(join(OPS, "rabbitmq-cluster-operator", "2.8.0")));
      const after = convertRegistryV1(readBundleDirectory(join(OPS, "rabbitmq-cluster-operator", "2.9.0")));
      const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
      const kept = new Set(after.objects.map(key));
      const gone = before.objects.filter((o) => !kept.has(key(o)));
      assert.ok(gone.length > 0, "2.8.0 and 2.9.0 differ in generated RBAC names");
      for (const o of gone)
        assert.equal(
          await admin.tryGet(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace),
          undefined,
          `${key(o)} pruned`,
        );
      for (const o of after.objects)
        assert.ok(await admin.tryGet(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace), `${key(o)} present`);
      assert.equal(inst?.status?.objects?.length, after.objects.length);
      const old = await waitFor<Bundle>(
        admin,
        API_VERSION,
        "Bundle",
        "rabbitmq-2.8.0",
        (b) => cond(b, "Replaced")?.status === "True",
        "Replaced",
      );
      assert.match(cond(old, "Replaced")?.message ?? "", /replaced by rabbitmq-2\.9\.0/);
    },
  );

  test("a CRD change that removes a stored version is refused; 2.9.0 keeps running", async () => {
    const cur = await admin.get<Instance>(API_VERSION, "Instance", "rabbitmq");
    await admin.replace({
      ...cur,
      spec: {
        ...cur.spec,
        bundle: { name: "rabbitmq-2.9.0-bad", spec: { class: "test-allow", refs: [images.rabbitBad] } },
      },
    });
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "rabbitmq",
      (o) => cond(o, "Installed")?.reason === "UnsafeCRDUpgrade",
      "UnsafeCRDUpgrade",
    );
    const c = cond(inst, "Installed");
    assert.equal(c?.status, "False");
    assert.match(c?.message ?? "", /rabbitmqclusters\.rabbitmq\.com.*stored version "v1beta1" removed/);
    assert.equal(inst?.status?.activeBundle, "rabbitmq-2.9.0");
    const crd = await admin.get<KubeObject & { spec: { versions: { name: string }[] } }>(
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      "rabbitmqclusters.rabbitmq.com",
    );
    assert.deepEqual(
      crd.spec.versions.map((v) => v.name),
      ["v1beta1"],
    );
    const after = convertRegistryV1(readBundleDirectory(join(OPS, "rabbitmq-cluster-operator", "2.9.0")));
    const dep = after.objects.find((o) => o.kind === "Deployment")!;
    assert.ok(
      await admin.tryGet("apps/v1", "Deployment", dep.metadata.name, dep.metadata.namespace),
      "the 2.9.0 Deployment is still there",
    );
  });

  test(
    "a CRD change that would make existing custom resources " + "invalid is refused, naming the object and the field",
    async () => {
      await admin.create({
        apiVersion: "rabbitmq.com/v1beta1",
        kind: "RabbitmqCluster",
        metadata: { name: "big", namespace: "default" },
        spec: { replicas: 5 },
      } as unknown as KubeObject);
      const cur = await admin.get<Instance>(API_VERSION, "Instance", "rabbitmq");
      await admin.replace({
        ...cur,
        spec: {
          ...cur.spec,
          bundle: { name: "rabbitmq-2.9.0-strict", spec: { class: "test-allow", refs: [images.rabbitStrict] } },
        },
      });
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "rabbitmq",
        (o) => {
          const c = o?.status?.conditions?.find((x) => x.type === "Installed");
          return (
            c?.reason === "UnsafeCRDUpgrade" &&
            c.observedGeneration === o?.metadata.generation &&
            o?.spec.bundle.name === "rabbitmq-2.9.0-strict"
          );
        },
        "UnsafeCRDUpgrade for the strict bundle",
      );
      assert.match(
        cond(inst, "Installed")?.message ?? "",
        new RegExp(
          /existing custom object default\/big failed validation for new /.source +
            /schema version v1beta1: spec\.replicas: 5 is more than the maximum 3/.source,
        ),
      );
      assert.equal(inst?.status?.activeBundle, "rabbitmq-2.9.0");
      await admin.delete("rabbitmq.com/v1beta1", "RabbitmqCluster", "big", "default");
    },
  );

  test(
    "single owner: a second Instance of the same operator is " +
      "refused, naming the Instance that manages the objects",
    async () => {
      await admin.create(
        instance("rabbitmq-again", "rabbitmq-2.9.0-again", images.rabbit290, "test-allow", "rabbitmq-again"),
      );
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "rabbitmq-again",
        (o) => cond(o, "Installed")?.reason === "ObjectCollision",
        "ObjectCollision",
      );
      assert.match(
        cond(inst, "Installed")?.message ?? "",
        /CustomResourceDefinition "rabbitmqclusters\.rabbitmq\.com" is managed by Instance rabbitmq/,
      );
      const crd = await admin.get(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "rabbitmqclusters.rabbitmq.com",
      );
      assert.equal(crd.metadata.labels?.[LABEL_INSTANCE], "rabbitmq", "still managed by the first Instance");
    },
  );

  test(
    "DenyAll waits for approval; approving without the " + "approve verb is refused; an admin's approval installs",
    async () => {
      await klass("test-deny", "DenyAll");
      await admin.create(instance("catfacts", "cat-facts-1.1.0", images.catfacts, "test-deny", "catfacts"));
      const waiting = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "catfacts",
        (o) => cond(o, "Approved")?.reason === "AwaitingApproval",
        "AwaitingApproval",
      );
      assert.equal(cond(waiting, "Approved")?.status, "False");
      assert.equal(cond(waiting, "Installed"), undefined, "nothing installed before approval");
      const carol = clientAs(kubeconfig, "carol");
      try {
        await assert.rejects(
          approveInstance(carol, "catfacts"),
          (e: unknown) =>
            e instanceof KubeApiError &&
            e.status === 403 &&
            /may not change the Approved condition.*"approve" verb/.test(e.message),
        );
      } finally {
        carol.close();
      }
      await approveInstance(admin, "catfacts");
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "catfacts",
        installed("cat-facts-1.1.0"),
        "Installed",
      );
      assert.equal(cond(inst, "Approved")?.reason, "ApprovedByUser");
      assert.match(cond(inst, "Approved")?.message ?? "", /opcat-admin/);
    },
  );

  test("a user without `use` on a class cannot create a Bundle naming it", async () => {
    const bob = clientAs(kubeconfig, "bob");
    try {
      await assert.rejects(
        bob.create({
          apiVersion: API_VERSION,
          kind: "Bundle",
          metadata: { name: "bob-bundle" },
          spec: { class: "test-allow", refs: [images.catfacts] },
        } as unknown as KubeObject),
        (e: unknown) =>
          e instanceof KubeApiError &&
          e.status === 403 &&
          /bob may not use ProvisionerClass "test-allow"/.test(e.message),
      );
    } finally {
      bob.close();
    }
  });

  test("UserPermission approves for an admin, not for a user who could not create the objects", async () => {
    await klass("test-userperm", "UserPermission");
    await admin.create(instance("nfs-admin", "nfs-0.0.9", images.nfs, "test-userperm", "nfs"));
    const ok = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "nfs-admin",
      installed("nfs-0.0.9"),
      "Installed",
    );
    assert.equal(cond(ok, "Approved")?.reason, "UserPermission");
    assert.match(cond(ok, "Approved")?.message ?? "", /opcat-admin may create every object/);

    const carol = clientAs(kubeconfig, "carol");
    try {
      await carol.create(
        instance("catfacts-carol", "cat-facts-1.1.0-carol", images.catfacts, "test-userperm", "catfacts-carol"),
      );
    } finally {
      carol.close();
    }
    const denied = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "catfacts-carol",
      (o) => cond(o, "Approved")?.reason === "InsufficientPermissions",
      "InsufficientPermissions",
    );
    const msg = cond(denied, "Approved")?.message ?? "";
    assert.match(msg, /^carol may not /);
    // the API server's own answer to a dry run as carol
    assert.match(
      msg,
      /carol may not make CustomResourceDefinition "catfacts\.ryanmillerc\.github\.io": [^;]*forbidden/,
    );
    assert.equal(cond(denied, "Installed"), undefined);
  });

  test("a Bundle whose image is missing is Failed with the reason and keeps being retried", async () => {
    const ref = `docker://${registry.host}/nothing-here:1.0.0`;
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "missing-image" },
      spec: { class: "test-allow", refs: [ref] },
    } as unknown as KubeObject);
    const b = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "missing-image",
      (o) => o?.status?.unpacked === "Failed",
      "Failed",
    );
    assert.equal(b?.status?.reason, "PullFailed");
    assert.match(b?.status?.message ?? "", /nothing-here/);
    assert.equal(cond(b, "Unpacked")?.status, "False");
    // retried with backoff: the bundle appears once the image is pushed
    await pushImage(buildBundleImage(join(OPS, "cat-facts-operator", "1.1.0")), `${registry.host}/nothing-here:1.0.0`, {
      useHttp: true,
    });
    const done = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "missing-image",
      (o) => o?.status?.unpacked === "Done",
      "Done after the push",
    );
    assert.equal(cond(done, "Unpacked")?.reason, "UnpackSuccessful");
  });

  test(
    "deleting a Bundle removes its unpacked content from the " +
      "provisioner's store (finalizer), unless another Bundle shares it",
    async () => {
      // shared: missing-image holds the same content as cat-facts-1.1.0
      const shared = await admin.get<Bundle>(API_VERSION, "Bundle", "missing-image");
      assert.ok(shared.metadata.finalizers?.includes("rukpak.io/delete-cached-content"));
      const sharedDir = join(tmp, "state", "bundles", (shared.status?.digest ?? "").replace(":", "-"));
      assert.equal(
        shared.status?.digest,
        (await admin.get<Bundle>(API_VERSION, "Bundle", "cat-facts-1.1.0")).status?.digest,
      );
      await admin.delete(API_VERSION, "Bundle", "missing-image");
      await waitFor<Bundle>(admin, API_VERSION, "Bundle", "missing-image", (o) => o === undefined, "deleted");
      assert.ok(existsSync(sharedDir), "content another Bundle uses is kept");
      // its own content: a plain bundle from a ConfigMap nobody else uses
      await admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "finalizer-test" },
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "only-here", namespace: "finalizer-test" },
        data: { "x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unique-content-9731\n" },
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name: "test-plain" },
        provisioner: "rukpak.io/plain",
        parameters: { approval: "AllowAll" },
      } as unknown as KubeObject);
      await admin.create({
        apiVersion: API_VERSION,
        kind: "Bundle",
        metadata: { name: "only-here" },
        spec: {
          class: "test-plain",
          refs: ["file://c"],
          volumeMounts: [{ mountPath: "/c/manifests", configMap: { name: "only-here", namespace: "finalizer-test" } }],
        },
      } as unknown as KubeObject);
      const b = await waitFor<Bundle>(
        admin,
        API_VERSION,
        "Bundle",
        "only-here",
        (o) => o?.status?.unpacked === "Done",
        "Done",
      );
      const dir = join(tmp, "state", "bundles", (b?.status?.digest ?? "").replace(":", "-"));
      assert.ok(existsSync(dir), `${dir} holds the content`);
      await admin.delete(API_VERSION, "Bundle", "only-here");
      await waitFor<Bundle>(admin, API_VERSION, "Bundle", "only-here", (o) => o === undefined, "deleted");
      assert.ok(!existsSync(dir), "content removed");
    },
  );

  test(
    "plain provisioner: a bundle of manifests from a ConfigMap " +
      "(file:// ref, volumeMounts as in seed 002) is installed",
    async () => {
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name: "test-plain" },
        provisioner: "rukpak.io/plain",
        parameters: { approval: "AllowAll" },
      } as unknown as KubeObject);
      await admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "plumbus" },
      } as unknown as KubeObject);
      const manifest =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plumbus-settings\n  namespace: plumbus\ndata:\n" +
        "  size: large\n---\napiVersion: v1\nkind: ServiceAccount\n" +
        "metadata:\n  name: plumbus\n  namespace: plumbus\n";
      await admin.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "local", namespace: "plumbus" },
        data: { "objects.yaml": manifest },
      } as unknown as KubeObject);
      await admin.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "plumbus" },
        spec: {
          selector: { matchLabels: { subscription: "plumbus" } },
          bundle: {
            name: "plumbus-operator.v0.9.3",
            spec: {
              class: "test-plain",
              refs: ["file://content"],
              volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: "local", namespace: "plumbus" } }],
            },
          },
        },
      } as unknown as KubeObject);
      const inst = await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "plumbus",
        installed("plumbus-operator.v0.9.3"),
        "Installed",
      );
      assert.deepEqual(
        inst?.status?.objects?.map((o) => `${o.kind}/${o.name}`),
        ["ConfigMap/plumbus-settings", "ServiceAccount/plumbus"],
      );
      const cm = await admin.get("v1", "ConfigMap", "plumbus-settings", "plumbus");
      assert.deepEqual(cm.data, { size: "large" });
      const b = await admin.get<Bundle>(API_VERSION, "Bundle", "plumbus-operator.v0.9.3");
      assert.equal(b.status?.format, "plain");
      assert.deepEqual(b.status?.objects, [
        "/objects/ConfigMap/plumbus/plumbus-settings",
        "/objects/ServiceAccount/plumbus/plumbus",
      ]);
    },
  );

  test("docker:// from a registry with authentication: refused without a pull secret, unpacked with one", async () => {
    const ref = `docker://${privateRegistry.host}/private/dell-bundle:1.9.1`;
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "dell-no-secret" },
      spec: { class: "test-allow", refs: [ref] },
    } as unknown as KubeObject);
    const denied = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "dell-no-secret",
      (o) => o?.status?.unpacked === "Failed",
      "Failed",
    );
    assert.equal(denied?.status?.reason, "PullFailed");
    assert.match(denied?.status?.message ?? "", /401|unauthorized|authentication/i);
    await admin.apply({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "pull-secrets" },
    } as unknown as KubeObject);
    const dockerconfig = JSON.stringify({
      auths: { [privateRegistry.host]: { auth: Buffer.from("puller:s3cret").toString("base64") } },
    });
    await admin.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "private-registry", namespace: "pull-secrets" },
      type: "kubernetes.io/dockerconfigjson",
      data: { ".dockerconfigjson": Buffer.from(dockerconfig).toString("base64") },
    } as unknown as KubeObject);
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "dell-with-secret" },
      spec: {
        class: "test-allow",
        refs: [ref],
        pullSecrets: [{ name: "private-registry", namespace: "pull-secrets" }],
      },
    } as unknown as KubeObject);
    const ok = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "dell-with-secret",
      (o) => o?.status?.unpacked === "Done",
      "Done",
    );
    assert.equal(ok?.status?.format, "registry+v1");
  });

  test("https:// tarball refs are checked against spec.digest", async () => {
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "tarball" },
      spec: { class: "test-plain", refs: [images.tarball], digest: images.tarballDigest },
    } as unknown as KubeObject);
    const b = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "tarball",
      (o) => o?.status?.unpacked === "Done",
      "Done",
    );
    assert.deepEqual(b?.status?.objects, ["/objects/ConfigMap/default/from-a-tarball"]);
    const wrong = `sha256:${"0".repeat(64)}`;
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Bundle",
      metadata: { name: "tarball-wrong-digest" },
      spec: { class: "test-plain", refs: [images.tarball], digest: wrong },
    } as unknown as KubeObject);
    const bad = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      "tarball-wrong-digest",
      (o) => o?.status?.unpacked === "Failed",
      "Failed",
    );
    assert.equal(bad?.status?.reason, "DigestMismatch");
    assert.match(
      bad?.status?.message ?? "",
      new RegExp(`content digest ${images.tarballDigest} does not match spec\\.digest ${wrong}`),
    );
  });

  test("malformed objects are refused by the schema with a message naming the field", async () => {
    await assert.rejects(
      admin.create({
        apiVersion: API_VERSION,
        kind: "Bundle",
        metadata: { name: "bad-ref" },
        spec: { class: "test-allow", refs: ["ftp://example/x"] },
      } as unknown as KubeObject),
      (e: unknown) => e instanceof KubeApiError && e.status === 422 && /spec\.refs\[0\]/.test(e.message),
    );
    await assert.rejects(
      admin.create({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "no-bundle" },
        spec: {},
      } as unknown as KubeObject),
      (e: unknown) => e instanceof KubeApiError && e.status === 422 && /spec\.bundle: Required value/.test(e.message),
    );
  });

  test("the prune deletes an object only as the pass read it: one changed since is judged again", async () => {
    // a live owner (the garbage collector leaves its dependents alone) stands in for the Instance
    const owner = await admin.create<KubeObject>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "prune-owner", namespace: "default" },
    });
    const ownerRef = { apiVersion: "v1", kind: "ConfigMap", name: "prune-owner", uid: owner.metadata.uid! };
    const inst = { metadata: { name: "prune-owner", uid: owner.metadata.uid } } as Instance;
    const make = (name: string) =>
      admin.create<KubeObject>({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default", ownerReferences: [ownerRef] },
      });
    const refs = ["prune-kept", "prune-moved", "prune-same"].map((name) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      name,
      namespace: "default",
    }));
    const reads: PassReads = new Map();
    for (const r of refs) reads.set(refKey(r), await make(r.name));
    // after the pass read it, prune-moved lost its owner: deleting it as read would delete what is not ours
    const moved = await admin.get("v1", "ConfigMap", "prune-moved", "default");
    await admin.replace({ ...moved, metadata: { ...moved.metadata, ownerReferences: [] } });
    await prune(admin, inst, refs, [refs[0]], reads);
    assert.ok(await admin.tryGet("v1", "ConfigMap", "prune-kept", "default"), "in the target: kept");
    assert.ok(await admin.tryGet("v1", "ConfigMap", "prune-moved", "default"), "no longer owned: kept");
    const same = await admin.tryGet("v1", "ConfigMap", "prune-same", "default");
    assert.ok(!same || same.metadata.deletionTimestamp, "unchanged since the read: deleted");
    for (const name of ["prune-kept", "prune-moved", "prune-owner"])
      await admin.delete("v1", "ConfigMap", name, "default");
  });
});
