/**
 * The node harness itself, on a real node (kubelet, containerd, kube-proxy): a Deployment becomes
 * Available and its ClusterIP Service answers from the host; the API server calls a validating webhook
 * served by a Pod through its Service; opcat's own image (built by opcat in the test) runs `opcat
 * --version` as a non-root Pod with a read-only root file system.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { makeServingCerts } from "../../src/cluster/kube/certs.js";
import { IMAGE_NODE } from "../../src/image/runtime.js";
import { REPO_ROOT } from "../shared.js";
import { clientAs, nodeCluster, waitFor } from "../cluster/harness.js";
import { busyboxImage, opcatImage, push, refusingWebhookScript } from "./images.js";
import { buildCatalogImage, withBaseImage } from "../../src/image/index.js";
import { loadServiceDefinitions } from "../../src/serve/index.js";
import { callRpc, makeClient } from "../serve/helpers.js";
import { available, type Deployment, KUBECTL, RESTRICTED, serviceReady } from "./shared.js";

const node = nodeCluster();
const NS = "opcat-node-test";

type Pod = KubeObject & {
  status?: { phase?: string; podIP?: string; containerStatuses?: { ready: boolean; state?: unknown }[] };
};

/** GET http://<ip>:<port>/ on a fresh connection (no keep-alive: a kept connection can hide a broken route). */
function httpGet(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: "/", agent: false, timeout: 2000 }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

describe("a real node", { skip: node.skip || undefined }, () => {
  let admin: KubeClient;
  let registry: string;
  let kubeconfig: string;

  before(async () => {
    if (node.skip !== false) return;
    registry = node.registry;
    kubeconfig = node.kubeconfig;
    admin = clientAs(node.kubeconfig, "admin");
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    await waitFor(admin, "v1", "ServiceAccount", "default", (o) => o !== undefined, "default SA", 60_000, NS);
  });

  after(async () => {
    if (node.skip) return;
    await admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "opcat-node-test");
    await admin.delete("v1", "Namespace", NS);
    await waitFor(admin, "v1", "Namespace", NS, (o) => o === undefined, "namespace gone", 120_000);
    admin.close();
  });

  test("a Deployment becomes Available and its Service answers from the host through kube-proxy", async () => {
    const ref = await push(busyboxImage("hello from a pod\n"), registry, "busybox-httpd:1");
    const labels = { app: "httpd" };
    await admin.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "httpd", namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "httpd",
                image: ref,
                ports: [{ containerPort: 8080 }],
                readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
                securityContext: RESTRICTED,
              },
            ],
          },
        },
      },
    } as KubeObject);
    const d = await waitFor<Deployment>(admin, "apps/v1", "Deployment", "httpd", available, "Available", 120_000, NS);
    assert.equal(d?.status?.readyReplicas, 2);
    const svc = await admin.apply<KubeObject & { spec?: { clusterIP?: string } }>({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "httpd", namespace: NS },
      spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
    } as KubeObject);
    const ip = svc.spec?.clusterIP ?? "";
    assert.match(ip, /^10\.0\.0\.\d+$/, "a ClusterIP in the Service CIDR routed to the node's bridge");
    // the EndpointSlice lists both Pods ready, then kube-proxy syncs (bounded tries on fresh connections)
    const ready = async () => {
      const { items } = await admin.list<KubeObject & { endpoints?: { conditions?: { ready?: boolean } }[] }>(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        { namespace: NS, labelSelector: "kubernetes.io/service-name=httpd" },
      );
      return items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length;
    };
    for (let i = 0; i < 300 && (await ready()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await ready(), 2);
    let body = "";
    let last: unknown;
    for (let i = 0; i < 100 && body === ""; i++) {
      try {
        body = await httpGet(ip, 80);
      } catch (e) {
        last = e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.equal(body, "hello from a pod\n", `no answer from ${ip}:80: ${String(last)}`);
  });

  test("the API server calls a validating webhook served by a Pod through its Service", async () => {
    const { ref } = await opcatImage(registry);
    const certs = makeServingCerts([`webhook.${NS}.svc`]);
    await admin.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "webhook-cert", namespace: NS },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": certs.cert, "tls.key": certs.key },
    } as KubeObject);
    // a webhook server in Node (the runtime of opcat's image), refusing every request and naming its Pod
    const server = refusingWebhookScript("/certs/", 8443);
    const labels = { app: "webhook" };
    await admin.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "webhook", namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "webhook",
                image: ref,
                command: [IMAGE_NODE, "-e", server],
                env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
                ports: [{ containerPort: 8443 }],
                readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
                volumeMounts: [{ name: "certs", mountPath: "/certs", readOnly: true }],
                securityContext: RESTRICTED,
              },
            ],
            volumes: [{ name: "certs", secret: { secretName: "webhook-cert" } }],
          },
        },
      },
    } as KubeObject);
    await admin.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "webhook", namespace: NS },
      spec: { selector: labels, ports: [{ port: 443, targetPort: 8443 }] },
    } as KubeObject);
    await waitFor<Deployment>(admin, "apps/v1", "Deployment", "webhook", available, "Available", 120_000, NS);
    const pods = await admin.list<Pod>("v1", "Pod", { namespace: NS, labelSelector: "app=webhook" });
    const running = pods.items.filter((p) => p.status?.phase === "Running");
    assert.equal(running.length, 1);
    await admin.apply({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "opcat-node-test" },
      webhooks: [
        {
          name: "refuse.opcat-node-test.example",
          clientConfig: {
            service: { namespace: NS, name: "webhook", port: 443, path: "/" },
            caBundle: Buffer.from(certs.caCert).toString("base64"),
          },
          rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": NS } },
          objectSelector: { matchLabels: { "opcat-test/webhook": "refuse" } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          timeoutSeconds: 10,
        },
      ],
    } as KubeObject);
    // the API server calls the webhook through the Service's endpoints (aggregator routing): an
    // Available Deployment may not have them yet ("no endpoints available for service")
    await serviceReady(admin, NS, "webhook");
    // the API server picks the configuration (and the endpoints) up from its informers: until then a
    // create passes (and is undone) or fails otherwise; only the webhook's own refusal ends the wait
    const refusal = new RegExp(`refused by ${running[0].metadata.name}`);
    let refused = "";
    const errors: string[] = [];
    for (let i = 0; i < 150 && !refused; i++) {
      try {
        await admin.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "probe", namespace: NS, labels: { "opcat-test/webhook": "refuse" } },
        });
        await admin.delete("v1", "ConfigMap", "probe", NS);
      } catch (e) {
        const message = (e as Error).message;
        if (refusal.test(message)) refused = message;
        else if (errors.at(-1) !== message) errors.push(message);
      }
      if (!refused) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(refused, refusal, `other answers on the way: ${errors.join(" | ") || "none"}`);
  });

  test("opcat's image runs `opcat --version` as a non-root Pod with a read-only root file system", async () => {
    const { ref, image } = await opcatImage(registry);
    const size = image.layer.length + image.config.length + image.manifest.length;
    process.stderr.write(`opcat image: ${(size / 1048576).toFixed(1)} MiB compressed (${image.nodeVersion})\n`);
    await admin.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "opcat-version", namespace: NS },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "opcat", image: ref, args: ["--version"], securityContext: RESTRICTED }],
      },
    } as KubeObject);
    const pod = await waitFor<Pod>(
      admin,
      "v1",
      "Pod",
      "opcat-version",
      (p) => p?.status?.phase === "Succeeded" || p?.status?.phase === "Failed",
      "the Pod ran to completion",
      120_000,
      NS,
    );
    const logs = spawnSync(KUBECTL, ["--kubeconfig", kubeconfig, "logs", "-n", NS, "opcat-version"], {
      encoding: "utf8",
    });
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
    assert.equal(pod?.status?.phase, "Succeeded", `logs: ${logs.stdout}${logs.stderr}`);
    assert.equal(logs.stdout.trim(), version);
  });

  test("a catalog image on opcat's image serves opm's gRPC API in a Pod, probed as OLM v0 probes it", async () => {
    const { ref } = await opcatImage(registry);
    const img = await withBaseImage(buildCatalogImage(join(REPO_ROOT, "src", "serve", "testdata", "catalog")), ref, {
      useHttp: true,
    });
    const cat = await push(img, registry, "catalog:1");
    const labels = { app: "catalog" };
    // OLM v0's CatalogSource Pod: grpc_health_probe -addr=:50051 as readiness and liveness probes
    const probe = { exec: { command: ["grpc_health_probe", "-addr=:50051"] }, periodSeconds: 2, timeoutSeconds: 5 };
    await admin.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "catalog", namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "registry-server",
                image: cat,
                ports: [{ name: "grpc", containerPort: 50051 }],
                readinessProbe: probe,
                livenessProbe: { ...probe, initialDelaySeconds: 10 },
                securityContext: RESTRICTED,
              },
            ],
          },
        },
      },
    } as KubeObject);
    const svc = await admin.apply<KubeObject & { spec?: { clusterIP?: string } }>({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "catalog", namespace: NS },
      spec: { selector: labels, ports: [{ name: "grpc", port: 50051, targetPort: 50051 }] },
    } as KubeObject);
    await waitFor<Deployment>(admin, "apps/v1", "Deployment", "catalog", available, "Available", 180_000, NS);
    const defs = loadServiceDefinitions();
    let names: string[] = [];
    let last = "";
    // through the Service's ClusterIP (kube-proxy syncs within a second or so: bounded tries)
    for (let i = 0; i < 50 && names.length === 0; i++) {
      const client = makeClient(defs, "api.Registry", `${svc.spec?.clusterIP}:50051`);
      const got = await callRpc(client, defs, "api.Registry", "ListPackages", {});
      client.close();
      if (got.error) {
        last = got.error.message;
        await new Promise((r) => setTimeout(r, 200));
      } else names = (got.responses as { name: string }[]).map((p) => p.name).sort();
    }
    assert.deepEqual(names, ["etcd", "prometheus"], last);
  });
});
