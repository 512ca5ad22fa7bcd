/**
 * opcat deployed by its own manifests on a real node: the image built by opcat (`opcat cluster image`),
 * `opcat cluster manifests --image … --registries-conf …` applied as they are; two replicas become ready
 * and share one webhook CA and serving certificate (from the Secret opcat-webhook-cert), the leader Lease
 * names a Pod, the API server calls the webhooks through their Service, /metrics answers in Prometheus
 * text, and an operator bundle (its operator image built in the test) installs and its operator runs.
 */
import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import { gunzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { clusterManifests, PORTS } from "../../src/cluster/manifests.js";
import { waitForCrds } from "../../src/cluster/run.js";
import { WEBHOOK_CERT_SECRET } from "../../src/cluster/servingcert.js";
import { API_VERSION, type Instance } from "../../src/cluster/rukpak/api.js";
import { buildBundleImage, buildCatalogImage } from "../../src/image/index.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import { OPERATOR_API_VERSION } from "../../src/cluster/operators/api.js";
import { OLM_API_VERSION, type ClusterExtension } from "../../src/cluster/olm/api.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import type { Condition } from "../../src/cluster/kube/conditions.js";
import { clientAs, cond, nodeCluster, waitFor, waitForEvent } from "../cluster/harness.js";
import { busyboxImage, opcatImage, push, refusingWebhookScript } from "./images.js";
import { IMAGE_NODE } from "../../src/image/runtime.js";
import { available, KUBECTL, RESTRICTED } from "./shared.js";
import { REPO_ROOT } from "../shared.js";

const node = nodeCluster();
const NS = "opcat-system";

type Pod = KubeObject & { status?: { podIP?: string; phase?: string } };
type Deployment = KubeObject & { status?: { readyReplicas?: number } };

/** The fingerprint of the certificate served at ip:port (a fresh TLS connection, no verification). */
function servedFingerprint(ip: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: ip, port, rejectUnauthorized: false, servername: "opcat-rukpak-webhook" }, () => {
      resolve(s.getPeerX509Certificate()?.fingerprint256 ?? "");
      s.end();
    });
    s.on("error", reject);
  });
}

function httpText(ip: string, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port, path, agent: false, timeout: 5000 }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * A registry+v1 bundle `pkg` whose one Deployment runs `image` (busybox httpd, ready when it answers on
 * 8080; `extra.container` replaces fields of its container) with `extra.webhookdefinitions` if given.
 */
function tinyBundle(
  dir: string,
  image: string,
  pkg = "tiny-operator",
  version = "1.0.0",
  extra: { container?: Record<string, unknown>; webhookdefinitions?: unknown[] } = {},
): string {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  const container = {
    name: "manager",
    image,
    readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
    securityContext: RESTRICTED,
    ...extra.container,
  };
  const csv = {
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: `${pkg}.v${version}` },
    spec: {
      displayName: "Tiny",
      version,
      installModes: [
        { type: "OwnNamespace", supported: true },
        { type: "SingleNamespace", supported: true },
        { type: "MultiNamespace", supported: false },
        { type: "AllNamespaces", supported: true },
      ],
      install: {
        strategy: "deployment",
        spec: {
          clusterPermissions: [
            {
              serviceAccountName: pkg,
              rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
            },
          ],
          deployments: [
            {
              name: pkg,
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: pkg } },
                template: {
                  metadata: { labels: { app: pkg } },
                  spec: {
                    serviceAccountName: pkg,
                    terminationGracePeriodSeconds: 1,
                    containers: [container],
                  },
                },
              },
            },
          ],
        },
      },
      ...(extra.webhookdefinitions ? { webhookdefinitions: extra.webhookdefinitions } : {}),
    },
  };
  writeFileSync(join(dir, "manifests", `${pkg}.clusterserviceversion.yaml`), JSON.stringify(csv, null, 2));
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    [
      "annotations:",
      "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1",
      "  operators.operatorframework.io.bundle.manifests.v1: manifests/",
      "  operators.operatorframework.io.bundle.metadata.v1: metadata/",
      `  operators.operatorframework.io.bundle.package.v1: ${pkg}`,
      "  operators.operatorframework.io.bundle.channels.v1: stable",
      "",
    ].join("\n"),
  );
  return dir;
}

describe("opcat deployed by its manifests on a real node", { skip: node.skip || undefined }, () => {
  let admin: KubeClient;
  let registry: string;
  let tmp: string;
  let manifests: KubeObject[] = [];

  before(async () => {
    if (node.skip !== false) return;
    registry = node.registry;
    admin = clientAs(node.kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-deploy-"));
  });

  // a failed test shows what opcat's replicas logged and where its objects stood (the Pods and their
  // logs are gone once the test cluster is)
  afterEach((t) => {
    if (node.skip !== false || (t as { passed?: boolean }).passed !== false) return;
    const kubectl = (...args: string[]) =>
      spawnSync(KUBECTL, ["--kubeconfig", node.kubeconfig, "--context", "admin", ...args], { encoding: "utf8" });
    const logs = kubectl("-n", NS, "logs", "-l", "app.kubernetes.io/name=opcat-rukpak", "--prefix", "--tail=150");
    const state = kubectl("get", "instances.rukpak.io,bundles.rukpak.io", "-o", "wide");
    process.stderr.write(
      `--- opcat's replicas after "${t.name}" failed:\n${logs.stdout}${logs.stderr}` +
        `--- Instances and Bundles:\n${state.stdout}${state.stderr}`,
    );
  });

  after(async () => {
    if (node.skip !== false) return;
    // the Instance first (while the webhooks are served), then opcat itself, its webhooks and its APIs
    for (const name of ["tiny", "missing", "failover"]) {
      await admin.delete(API_VERSION, "Instance", name).catch(() => false);
      await waitFor(admin, API_VERSION, "Instance", name, (o) => o === undefined, "Instance gone", 120_000).catch(
        () => undefined,
      );
    }
    for (const o of [...manifests].reverse()) {
      if (o.kind === "Namespace" || o.kind === "CustomResourceDefinition") continue;
      await admin.delete(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace).catch(() => false);
    }
    await admin.delete("v1", "Namespace", NS);
    await admin.delete("v1", "Namespace", "tiny-system").catch(() => false);
    await admin.delete("v1", "Namespace", "missing-system").catch(() => false);
    await admin.delete("v1", "Namespace", "failover-system").catch(() => false);
    for (const o of manifests)
      if (o.kind === "CustomResourceDefinition") await admin.delete(o.apiVersion, o.kind, o.metadata.name);
    await waitFor(admin, "v1", "Namespace", NS, (o) => o === undefined, "namespace gone", 120_000);
    admin.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test("two replicas become ready, share one webhook certificate and elect a Pod as leader", async () => {
    const { ref } = await opcatImage(registry);
    const registriesConf = `[[registry]]\nlocation = "${registry}"\ninsecure = true\n`;
    manifests = clusterManifests({ image: ref, registriesConf, namespace: NS });
    const t0 = Date.now();
    // as `kubectl apply -f`: the CRDs first, then what needs them
    for (const o of manifests.filter((m) => m.kind === "CustomResourceDefinition")) await admin.apply(o);
    await waitForCrds(
      admin,
      manifests.filter((m) => m.kind === "CustomResourceDefinition").map((m) => m.metadata.name),
    );
    for (const o of manifests.filter((m) => m.kind !== "CustomResourceDefinition")) await admin.apply(o);
    const d = await waitFor<Deployment>(
      admin,
      "apps/v1",
      "Deployment",
      "opcat-rukpak",
      (o) => available(o) && o?.status?.readyReplicas === 2,
      "two ready replicas",
      180_000,
      NS,
    );
    process.stderr.write(`opcat: manifests applied → two ready replicas in ${Date.now() - t0} ms\n`);
    assert.equal(d?.status?.readyReplicas, 2);
    const pods = (
      await admin.list<Pod>("v1", "Pod", { namespace: NS, labelSelector: "app.kubernetes.io/name=opcat-rukpak" })
    ).items.filter((p) => p.status?.phase === "Running");
    assert.equal(pods.length, 2);
    // one CA and certificate for both: the Secret's, served by each Pod, trusted by the configurations
    const secret = await admin.get<KubeObject & { data: Record<string, string> }>(
      "v1",
      "Secret",
      WEBHOOK_CERT_SECRET,
      NS,
    );
    const pem = (k: string) => Buffer.from(secret.data[k], "base64").toString("utf8");
    const expected = new X509Certificate(pem("tls.crt")).fingerprint256;
    for (const p of pods)
      assert.equal(await servedFingerprint(p.status?.podIP ?? "", PORTS.webhook), expected, p.metadata.name);
    const vwc = await admin.get<KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] }>(
      "admissionregistration.k8s.io/v1",
      "ValidatingWebhookConfiguration",
      "opcat-rukpak",
    );
    for (const w of vwc.webhooks)
      assert.equal(Buffer.from(w.clientConfig.caBundle ?? "", "base64").toString("utf8"), pem("ca.crt"));
    // the leader Lease names one of the Pods
    const lease = await waitFor<KubeObject & { spec?: { holderIdentity?: string } }>(
      admin,
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      (l) => pods.some((p) => p.metadata.name === l?.spec?.holderIdentity),
      "a Pod holds the Lease",
      60_000,
      NS,
    );
    assert.ok(lease?.spec?.holderIdentity);
    // metrics in Prometheus text format from each replica
    const text = await httpText(pods[0].status?.podIP ?? "", PORTS.health, "/metrics");
    assert.match(text, /^# TYPE opcat_api_requests_total counter$/m);
    assert.match(text, /^opcat_api_requests_total\{verb="GET"\} \d+$/m);
    assert.match(text, /^# TYPE opcat_reconcile_duration_seconds histogram$/m);
    assert.match(text, /^opcat_reconcile_errors_total\{controller="instance"\} \d+$/m);
    assert.match(text, /^opcat_reconcile_duration_seconds_count\{controller="bundle"\} \d+$/m);
  });

  test("ClusterCatalogs are served over HTTPS behind the catalogd Service, as catalogd serves them", async () => {
    const img = buildCatalogImage(join(REPO_ROOT, "src", "serve", "testdata", "catalog"));
    await push(img, registry, "testcat:1");
    const name = "testcat";
    await admin.apply({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name },
      spec: { source: { type: "Image", image: { ref: `${registry}/testcat:1` } } },
    } as ClusterCatalog);
    try {
      const cc = await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        name,
        (o) => cond(o, "Serving")?.status === "True",
        "Serving",
        180_000,
      );
      const host = `opcat-catalogd.${NS}.svc`;
      assert.equal(cc?.status?.urls?.base, `https://${host}/catalogs/${name}`);
      // from the host through kube-proxy, trusting only opcat's CA and checking the Service's name
      const svc = await admin.get<KubeObject & { spec: { clusterIP: string } }>("v1", "Service", "opcat-catalogd", NS);
      const secret = await admin.get<KubeObject & { data: Record<string, string> }>(
        "v1",
        "Secret",
        WEBHOOK_CERT_SECRET,
        NS,
      );
      const ca = Buffer.from(secret.data["ca.crt"], "base64").toString("utf8");
      const get = (headers: Record<string, string>) =>
        new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
          const req = httpsRequest(
            {
              host: svc.spec.clusterIP,
              port: 443,
              path: `/catalogs/${name}/api/v1/all`,
              ca,
              servername: host,
              headers,
              agent: false,
              timeout: 10_000,
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
              );
            },
          );
          req.on("error", reject);
          req.end();
        });
      // a new leader serves as soon as it leads; its Pod's leader label reaches the Service's endpoints
      // and kube-proxy a moment later (until then the Service refuses connections)
      for (let t = Date.now(); ; ) {
        const ok = await get({}).then(
          () => true,
          (e: NodeJS.ErrnoException) =>
            e.code === "ECONNREFUSED" && Date.now() - t < 60_000 ? false : Promise.reject(e),
        );
        if (ok) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const plain = await get({});
      assert.equal(plain.status, 200);
      assert.match(plain.body.toString("utf8"), /"schema":"olm.package"/);
      const zipped = await get({ "Accept-Encoding": "gzip" });
      assert.equal(zipped.headers["content-encoding"], "gzip");
      assert.deepEqual(gunzipSync(zipped.body), plain.body);
    } finally {
      await admin.delete(CATALOG_API_VERSION, "ClusterCatalog", name).catch(() => false);
      await waitFor(admin, CATALOG_API_VERSION, "ClusterCatalog", name, (o) => o === undefined, "gone", 120_000);
    }
  });

  test("an operator bundle installs through the webhooks in their Service and its operator runs", async () => {
    const op = await push(busyboxImage("tiny operator\n"), registry, "tiny-operator:1");
    const bundle = await push(buildBundleImage(tinyBundle(join(tmp, "bundle"), op)), registry, "tiny-bundle:1.0.0");
    const inst = await admin.create<Instance>({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "tiny" },
      spec: {
        selector: { matchLabels: { subscription: "tiny" } },
        installNamespace: "tiny-system",
        bundle: { name: "tiny-1.0.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } },
      },
    } as unknown as Instance);
    // the webhook (behind its Service, answered by one of the replicas) signed who asked
    assert.ok(inst.metadata.annotations?.["rukpak.io/requester-signature"], "signed by the webhook");
    const done = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "tiny",
      (o) => cond(o, "Installed")?.status === "True",
      "Installed",
      180_000,
    );
    assert.equal(cond(done, "Approved")?.status, "True");
    const dep = await waitFor<Deployment>(
      admin,
      "apps/v1",
      "Deployment",
      "tiny-operator",
      available,
      "the operator's Deployment Available",
      180_000,
      "tiny-system",
    );
    assert.equal(dep?.status?.readyReplicas, 1);
    // and the Instance says so, from the Deployment's real state
    const up = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "tiny",
      (o) => cond(o, "Available")?.status === "True" && cond(o, "Progressing")?.status === "False",
      "Available",
      120_000,
    );
    assert.match(cond(up, "Available")?.message ?? "", /Deployment tiny-system\/tiny-operator/);
  });

  test("an Operator (its bundle named directly) reports Available from its operator's real state", async () => {
    const op = await push(busyboxImage("op operator\n"), registry, "op-operator:1");
    const dir = tinyBundle(join(tmp, "op-bundle"), op, "op-operator");
    const bundle = await push(buildBundleImage(dir), registry, "op-bundle:1.0.0");
    await admin.create({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: "op" },
      spec: {
        installNamespace: "op-system",
        bundle: { name: "op-1.0.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } },
      },
    } as KubeObject);
    try {
      const up = await waitFor<KubeObject & { status?: { conditions?: Condition[] } }>(
        admin,
        OPERATOR_API_VERSION,
        "Operator",
        "op",
        (o) => cond(o, "Installed")?.status === "True" && cond(o, "Available")?.status === "True",
        "Installed and Available",
        180_000,
      );
      assert.equal(cond(up, "Available")?.message, "every workload of Instance op is available");
      const dep = await admin.get<Deployment>("apps/v1", "Deployment", "op-operator", "op-system");
      assert.equal(dep.status?.readyReplicas, 1);
    } finally {
      await admin.delete(OPERATOR_API_VERSION, "Operator", "op").catch(() => false);
      await waitFor(admin, API_VERSION, "Instance", "op", (o) => o === undefined, "Instance gone", 120_000);
      await admin.delete("v1", "Namespace", "op-system").catch(() => false);
    }
  });

  test("a ClusterExtension's deploymentConfig reaches its running operator: env and resources", async () => {
    const pkg = "cfg-operator";
    const ns = "cfg-operator-system";
    const op = await push(busyboxImage("configured operator\n"), registry, "cfg-operator:1");
    const dir = tinyBundle(join(tmp, "cfg-bundle"), op, pkg, "1.0.0", {
      container: { env: [{ name: "GREETING", value: "from the bundle" }] },
    });
    const bundle = await push(buildBundleImage(dir), registry, "cfg-bundle:1.0.0");
    const cat = join(tmp, "cfg-catalog");
    const entries = [{ name: `${pkg}.v1.0.0` }];
    mkdirSync(cat, { recursive: true });
    writeFileSync(
      join(cat, "catalog.json"),
      `${JSON.stringify({ schema: "olm.package", name: pkg, defaultChannel: "stable" })}\n` +
        `${JSON.stringify({ schema: "olm.channel", name: "stable", package: pkg, entries })}\n` +
        formatCatalog(renderBundleDirectory(dir, { image: bundle }), "json"),
    );
    await push(buildCatalogImage(cat), registry, "cfg-catalog:1");
    const resources = { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "100m", memory: "64Mi" } };
    try {
      await admin.apply({
        apiVersion: CATALOG_API_VERSION,
        kind: "ClusterCatalog",
        metadata: { name: "cfg-catalog" },
        spec: { source: { type: "Image", image: { ref: `${registry}/cfg-catalog:1` } } },
      } as ClusterCatalog);
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } as KubeObject);
      await admin.create({
        apiVersion: OLM_API_VERSION,
        kind: "ClusterExtension",
        metadata: { name: pkg },
        spec: {
          namespace: ns,
          source: { sourceType: "Catalog", catalog: { packageName: pkg } },
          config: {
            configType: "Inline",
            inline: {
              deploymentConfig: {
                env: [
                  { name: "GREETING", value: "from the ClusterExtension" },
                  { name: "EXTRA", value: "added" },
                ],
                resources,
              },
            },
          },
        },
      } as KubeObject);
      await waitFor<ClusterExtension>(
        admin,
        OLM_API_VERSION,
        "ClusterExtension",
        pkg,
        (o) => cond(o, "Installed")?.status === "True",
        "Installed",
        240_000,
      );
      await waitFor<Deployment>(admin, "apps/v1", "Deployment", pkg, available, "Available", 180_000, ns);
      type RunningPod = KubeObject & {
        spec: { containers: { env?: { name: string; value?: string }[]; resources?: unknown }[] };
        status?: { phase?: string; qosClass?: string };
      };
      const pods = await admin.list<RunningPod>("v1", "Pod", { namespace: ns, labelSelector: `app=${pkg}` });
      const running = pods.items.filter((p) => p.status?.phase === "Running" && !p.metadata.deletionTimestamp);
      assert.equal(running.length, 1);
      const pod = running[0];
      assert.deepEqual(pod.spec.containers[0].resources, resources);
      assert.equal(pod.status?.qosClass, "Burstable");
      // what the operator's process really has: its environment and its memory limit (cgroup v2 or v1)
      const kubeconfig = node.skip === false ? node.kubeconfig : "";
      const kubectl = ["--kubeconfig", kubeconfig, "--context", "admin", "-n", ns];
      const exec = (...cmd: string[]) =>
        spawnSync(KUBECTL, [...kubectl, "exec", pod.metadata.name, "--", "/bin/busybox", ...cmd], { encoding: "utf8" });
      const env = exec("env");
      assert.equal(env.status, 0, env.stderr);
      assert.match(env.stdout, /^GREETING=from the ClusterExtension$/m);
      assert.match(env.stdout, /^EXTRA=added$/m);
      const limit = exec(
        "sh",
        "-c",
        "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
      );
      assert.equal(limit.stdout.trim(), String(64 * 1024 * 1024), limit.stderr);
    } finally {
      await admin.delete(OLM_API_VERSION, "ClusterExtension", pkg).catch(() => false);
      await waitFor(admin, OLM_API_VERSION, "ClusterExtension", pkg, (o) => o === undefined, "gone", 120_000);
      await waitFor(admin, "apps/v1", "Deployment", pkg, (o) => o === undefined, "gone", 120_000, ns);
      await admin.delete(CATALOG_API_VERSION, "ClusterCatalog", "cfg-catalog").catch(() => false);
      await admin.delete("v1", "Namespace", ns).catch(() => false);
    }
  });

  test("a bundle's admission webhook is served by its operator Pod with the certificate opcat provides", async () => {
    const { ref } = await opcatImage(registry);
    // the operator: a webhook server in Node (opcat's image's runtime) on OLM's certificate path,
    // refusing what its objectSelector picks and naming its Pod
    const dir = tinyBundle(join(tmp, "wh-bundle"), ref, "wh-operator", "1.0.0", {
      container: {
        command: [IMAGE_NODE, "-e", refusingWebhookScript("/tmp/k8s-webhook-server/serving-certs/", 9443)],
        env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
        ports: [{ containerPort: 9443 }],
        readinessProbe: { tcpSocket: { port: 9443 }, periodSeconds: 1 },
      },
      webhookdefinitions: [
        {
          type: "ValidatingAdmissionWebhook",
          generateName: "vrefuse.wh.example.com",
          deploymentName: "wh-operator",
          containerPort: 443,
          targetPort: 9443,
          webhookPath: "/validate",
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: "Fail",
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
          objectSelector: { matchLabels: { "opcat-test/webhook": "refuse" } },
        },
      ],
    });
    const bundle = await push(buildBundleImage(dir), registry, "wh-bundle:1.0.0");
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "wh" },
      spec: {
        selector: { matchLabels: { subscription: "wh" } },
        installNamespace: "wh-system",
        bundle: { name: "wh-1.0.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } },
      },
    } as KubeObject);
    try {
      await waitFor<Instance>(
        admin,
        API_VERSION,
        "Instance",
        "wh",
        (o) => cond(o, "Installed")?.status === "True" && cond(o, "Available")?.status === "True",
        "Installed and Available",
        180_000,
      );
      const cm = (name: string, refuse: boolean) =>
        admin.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace: "wh-system", labels: refuse ? { "opcat-test/webhook": "refuse" } : {} },
          data: { a: "b" },
        } as KubeObject);
      // the API server calls the operator's Pod through the Service opcat made, trusting the CA opcat put
      // in the configuration; the Pod serves the certificate opcat mounted
      await assert.rejects(cm("picked", true), /refused by wh-operator-/);
      await cm("not-picked", false);
    } finally {
      await admin.delete(API_VERSION, "Instance", "wh").catch(() => false);
      await waitFor(admin, API_VERSION, "Instance", "wh", (o) => o === undefined, "Instance gone", 120_000);
      await admin.delete("v1", "Namespace", "wh-system").catch(() => false);
    }
  });

  test("a bundle whose operator image does not exist is Installed but not Available, and says why", async () => {
    const bundle = await push(
      buildBundleImage(tinyBundle(join(tmp, "missing"), `${registry}/does-not-exist:1`, "missing-operator")),
      registry,
      "missing-bundle:1.0.0",
    );
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "missing" },
      spec: {
        selector: { matchLabels: { subscription: "missing" } },
        installNamespace: "missing-system",
        bundle: { name: "missing-1.0.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } },
      },
    } as KubeObject);
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "missing",
      (o) => /ErrImagePull|ImagePullBackOff/.test(cond(o, "Available")?.reason ?? ""),
      "Available=False naming the image pull failure",
      180_000,
    );
    assert.equal(cond(inst, "Installed")?.status, "True");
    assert.equal(cond(inst, "Available")?.status, "False");
    assert.match(
      cond(inst, "Available")?.message ?? "",
      /container manager of Pod missing-system\/missing-operator-[a-z0-9-]+: (ErrImagePull|ImagePullBackOff)/,
    );
    const ev = await waitForEvent(admin, "default", "missing", cond(inst, "Available")?.reason ?? "");
    assert.match(ev.message, /does-not-exist/);
  });
  /** The Pods of opcat's Deployment, and the one holding the Lease. */
  async function replicas(): Promise<{ pods: Pod[]; leader: string }> {
    const pods = (
      await admin.list<Pod>("v1", "Pod", { namespace: NS, labelSelector: "app.kubernetes.io/name=opcat-rukpak" })
    ).items.filter((p) => p.status?.phase === "Running" && !p.metadata.deletionTimestamp);
    const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      NS,
    );
    return { pods, leader: lease.spec?.holderIdentity ?? "" };
  }

  /** Waits until a Pod other than `old` holds the Lease; returns it. */
  async function newLeader(old: string): Promise<string> {
    const l = await waitFor<KubeObject & { spec?: { holderIdentity?: string } }>(
      admin,
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      (o) => !!o?.spec?.holderIdentity && o.spec.holderIdentity !== old,
      "another replica leads",
      120_000,
      NS,
    );
    return l?.spec?.holderIdentity ?? "";
  }

  /** Objects carrying the Instance's label, by kind/namespace/name, and how many owners each names. */
  async function installedBy(name: string): Promise<string[]> {
    const out: string[] = [];
    for (const [v, k] of [
      ["apps/v1", "Deployment"],
      ["v1", "ServiceAccount"],
      ["rbac.authorization.k8s.io/v1", "ClusterRole"],
      ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding"],
    ] as const) {
      const { items } = await admin.list(v, k, { labelSelector: `rukpak.io/instance=${name}` });
      for (const o of items)
        out.push(`${k}/${o.metadata.namespace ?? ""}/${o.metadata.name} owners=${o.metadata.ownerReferences?.length}`);
    }
    return out.sort();
  }

  test("the leader Pod deleted during an install: the other replica finishes it, nothing twice", async () => {
    const op = await push(busyboxImage("failover operator\n"), registry, "failover-operator:1");
    const bundle = await push(
      buildBundleImage(tinyBundle(join(tmp, "failover"), op, "failover-operator")),
      registry,
      "failover-bundle:1.0.0",
    );
    const before = await replicas();
    assert.equal(before.pods.length, 2);
    await admin.create({
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "failover" },
      spec: {
        selector: { matchLabels: { subscription: "failover" } },
        installNamespace: "failover-system",
        bundle: { name: "failover-1.0.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } },
      },
    } as KubeObject);
    const t0 = Date.now();
    await admin.delete("v1", "Pod", before.leader, NS);
    const next = await newLeader(before.leader);
    process.stderr.write(`opcat: leader Pod deleted → ${next} leads after ${Date.now() - t0} ms\n`);
    assert.ok(before.pods.some((p) => p.metadata.name === next) || next.startsWith("opcat-rukpak-"));
    const done = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "failover",
      (o) => cond(o, "Installed")?.status === "True" && cond(o, "Available")?.status === "True",
      "Installed and Available after the failover",
      180_000,
    );
    assert.equal(done?.status?.activeBundle, "failover-1.0.0");
    // one of each object, each with one owner (the Instance): nothing made twice, nothing orphaned
    const objs = await installedBy("failover");
    assert.ok(objs.length >= 3, objs.join("\n"));
    assert.equal(new Set(objs).size, objs.length);
    for (const o of objs) assert.match(o, /owners=1$/);
    // the Deployment is back to two ready replicas
    await waitFor<Deployment>(
      admin,
      "apps/v1",
      "Deployment",
      "opcat-rukpak",
      (o) => o?.status?.readyReplicas === 2,
      "two ready replicas again",
      180_000,
      NS,
    );
  });

  test("kill -9 the leading replica mid-pivot: the pivot completes after failover, old objects pruned", async () => {
    const op = await push(busyboxImage("tiny operator 1.1\n"), registry, "tiny-operator:1.1");
    const bundle = await push(
      buildBundleImage(tinyBundle(join(tmp, "tiny-1.1"), op, "tiny-operator", "1.1.0")),
      registry,
      "tiny-bundle:1.1.0",
    );
    const before = await replicas();
    const leader = before.pods.find((p) => p.metadata.name === before.leader);
    assert.ok(leader, "a running leader");
    await admin.mergePatch(API_VERSION, "Instance", "tiny", {
      spec: { bundle: { name: "tiny-1.1.0", spec: { class: "olm.bundle", refs: [`docker://${bundle}`] } } },
    });
    // SIGKILL the leader's container through the node's containerd (no grace, no Lease release)
    const id = (
      leader as Pod & { status?: { containerStatuses?: { containerID?: string }[] } }
    ).status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
    assert.ok(id, "the container's id");
    const kube = JSON.parse(process.env.OPCAT_TEST_KUBE_ENV ?? "{}") as { KUBE_HOME?: string };
    const sock = join(kube.KUBE_HOME ?? "", "run", "node", "containerd", "containerd.sock");
    const t0 = Date.now();
    const k = spawnSync("ctr", ["--address", sock, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id], {
      encoding: "utf8",
    });
    assert.equal(k.status, 0, k.stderr);
    // the Lease expires, and a replica leads again: the other one, or the killed one restarted in its Pod
    // (same identity: the Pod's name)
    const lease = await waitFor<KubeObject & { spec?: { holderIdentity?: string; renewTime?: string } }>(
      admin,
      "coordination.k8s.io/v1",
      "Lease",
      "opcat-rukpak",
      (o) => Date.parse(o?.spec?.renewTime ?? "") > t0,
      "a replica leads again",
      120_000,
      NS,
    );
    process.stderr.write(
      `opcat: leader killed (SIGKILL) → ${lease?.spec?.holderIdentity} leads after ${Date.now() - t0} ms\n`,
    );
    const done = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "tiny",
      (o) =>
        o?.status?.activeBundle === "tiny-1.1.0" &&
        cond(o, "Installed")?.status === "True" &&
        cond(o, "Available")?.status === "True",
      "pivoted to 1.1.0, Installed and Available",
      180_000,
    );
    assert.equal(done?.status?.activeBundle, "tiny-1.1.0");
    const objs = await installedBy("tiny");
    assert.equal(objs.filter((o) => o.includes("tiny-operator.v1.0.0")).length, 0, `pruned: ${objs.join(", ")}`);
    assert.equal(objs.filter((o) => o.startsWith("Deployment/")).length, 1);
    for (const o of objs) assert.match(o, /owners=1$/);
    const dep = await admin.get<KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }>(
      "apps/v1",
      "Deployment",
      "tiny-operator",
      "tiny-system",
    );
    assert.equal(dep.spec.template.spec.containers[0].image, op);
  });

  test("the kubelet and kube-apiserver restart: opcat keeps working (a leader cut off for 10 s restarts)", async () => {
    const kube = JSON.parse(process.env.OPCAT_TEST_KUBE_ENV ?? "{}") as Record<string, string>;
    const script = join(REPO_ROOT, "scripts", "kube", "cluster.sh");
    const restarts = async () =>
      (await replicas()).pods.map(
        (p) =>
          (p as Pod & { status?: { containerStatuses?: { restartCount: number }[] } }).status?.containerStatuses?.[0]
            ?.restartCount,
      );
    const before = await restarts();
    for (const what of ["restart-kubelet", "restart-apiserver"]) {
      const r = spawnSync("bash", [script, what], { encoding: "utf8", env: { ...process.env, ...kube } });
      assert.equal(r.status, 0, r.stderr);
    }
    await waitFor<Deployment>(
      admin,
      "apps/v1",
      "Deployment",
      "opcat-rukpak",
      (o) => o?.status?.readyReplicas === 2,
      "two ready replicas after the restarts",
      180_000,
      NS,
    );
    // a replica restarts only when it led and could not renew the Lease for 10 s (the API server's
    // restart took longer): it stops leading before another may take over, and its process exits
    const after = await restarts();
    process.stderr.write(
      `opcat: container restarts across the kubelet and kube-apiserver restarts: ${before} → ${after}\n`,
    );
    // and it still acts: the Instance with the missing image goes away with what it installed
    await admin.delete(API_VERSION, "Instance", "missing");
    await waitFor(admin, API_VERSION, "Instance", "missing", (o) => o === undefined, "Instance deleted", 120_000);
    await waitFor(
      admin,
      "apps/v1",
      "Deployment",
      "missing-operator",
      (o) => o === undefined,
      "its Deployment collected",
      120_000,
      "missing-system",
    );
  });
});
