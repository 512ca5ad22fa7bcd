/**
 * Issue 24 ("Trust on the cluster"), items 8–10 and 12: the attacks on the content path and the work
 * loops, each replayed against a real API server (etcd + kube-apiserver started by the test runner),
 * a real docker-registry and https servers on 127.0.0.1, with opcat's controllers running in this
 * process as cluster-admin. Each test is named after the attack it replays.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { writeTar, type TarInput } from "../../src/image/tar.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, OPERATOR_PROVISIONER, PLAIN_PROVISIONER, type Bundle } from "../../src/cluster/rukpak/api.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "../../src/cluster/catalogd/api.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { makeCerts, makeHtpasswd, requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, REPO_ROOT, requireShared } from "../shared.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, grantClusterRole, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();
const missingTools = requireTools("docker-registry", "htpasswd", "openssl");
const shared = requireShared();
const skip = cluster.skip || missingTools || shared.skip;
const OPS = join(COMMUNITY, "operators");
const MiB = 1024 ** 2;

/** Attempts a per-key backoff (`base` doubling to `max`) allows within `ms` of the first one. */
function attemptsWithin(ms: number, base: number, max: number): number {
  let n = 1;
  let t = 0;
  for (let d = base; ; d *= 2) {
    t += Math.min(d, max);
    if (t > ms) return n;
    n++;
  }
}

const tgz = (entries: TarInput[]) => gzipSync(Buffer.concat(writeTar(entries)));
const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("issue 24 attacks on the content path and the work loops", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let alice: KubeClient;
  let carol: KubeClient;
  let registry: RunningRegistry;
  let privateRegistry: RunningRegistry;
  let https: HttpsServer;
  let httpsBase = "";
  /** Registries that accept connections and never answer, each with its count of sockets. */
  const stalls: { server: TcpServer; host: string; open: number; closed: number }[] = [];
  let running: RunningControllers;
  let tmp = "";
  let hostDir = "";
  let goodImage = "";
  let privateImage = "";
  let catalogImage = "";
  /** https routes: path → handler. */
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const bundles: string[] = [];

  /** A Bundle as `who` (its requester is recorded by the admission webhook). */
  async function bundle(who: KubeClient, name: string, spec: Record<string, unknown>): Promise<void> {
    bundles.push(name);
    await who.create({ apiVersion: API_VERSION, kind: "Bundle", metadata: { name }, spec } as unknown as KubeObject);
  }

  const settled = (o: Bundle | undefined) => o?.status?.unpacked === "Done" || o?.status?.unpacked === "Failed";
  const outcome = (name: string) => waitFor<Bundle>(admin, API_VERSION, "Bundle", name, settled, "Done or Failed");

  /** Requests the controllers send about object `name` (its path, an Event about it, or a body naming it). */
  function countRequests(name: string): { readonly n: number; stop(): void } {
    const counter = {
      n: 0,
      stop: () => running.client.requestListeners.delete(listen),
    };
    const listen = (_m: string, path: string, body: string | undefined) => {
      if (path.includes(`/${name}`) || path.includes(`/${name}.`) || body?.includes(`"${name}"`)) counter.n++;
    };
    running.client.requestListeners.add(listen);
    return counter;
  }

  function stagingLeftovers(): string[] {
    const d = join(tmp, "state", "bundles");
    return existsSync(d) ? readdirSync(d).filter((f) => f.startsWith(".staging-") || f.startsWith(".download-")) : [];
  }

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    alice = clientAs(kubeconfig, "alice");
    carol = clientAs(kubeconfig, "carol");
    tmp = mkdtempSync(join(tmpdir(), "opcat-attacks-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    goodImage = `${registry.host}/cat-facts-bundle:1.1.0`;
    await pushImage(buildBundleImage(join(OPS, "cat-facts-operator", "1.1.0")), goodImage, { useHttp: true });
    catalogImage = `${registry.host}/catalogs/example:v1`;
    await pushImage(buildCatalogImage(join(REPO_ROOT, "examples", "catalog")), catalogImage, { useHttp: true });
    makeHtpasswd(join(tmp, "htpasswd"), "puller", "s3cret");
    privateRegistry = await startDockerRegistry(join(tmp, "private"), { htpasswd: join(tmp, "htpasswd") });
    const auth = join(tmp, "auth.json");
    writeFileSync(
      auth,
      JSON.stringify({ auths: { [privateRegistry.host]: { auth: Buffer.from("puller:s3cret").toString("base64") } } }),
    );
    privateImage = `${privateRegistry.host}/private/cat-facts:1.1.0`;
    await pushImage(buildBundleImage(join(OPS, "cat-facts-operator", "1.1.0")), privateImage, {
      useHttp: true,
      authFile: auth,
    });
    // a directory of the controller's host holding a Secret manifest: what a symlink must not reach
    hostDir = join(tmp, "host-secrets");
    mkdirSync(hostDir);
    writeFileSync(
      join(hostDir, "secret.yaml"),
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen-from-the-host\n  namespace: default\n" +
        "stringData:\n  token: host-only\n",
    );
    const certs = makeCerts(join(tmp, "certs"));
    https = createHttpsServer({ cert: readFileSync(certs.cert), key: readFileSync(certs.key) }, (req, res) => {
      const h = routes.get(req.url ?? "");
      if (h) h(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => https.listen(0, "127.0.0.1", () => r()));
    httpsBase = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
    for (let i = 0; i < 3; i++) {
      const sockets = new Set<Socket>();
      const server = createTcpServer((sock) => {
        sockets.add(sock);
        st.open++;
        sock.on("close", () => {
          st.open--;
          st.closed++;
          sockets.delete(sock);
        });
        sock.on("error", () => undefined);
      });
      server.on("close", () => {
        for (const sock of sockets) sock.destroy();
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
      const st = { server, host: `127.0.0.1:${(server.address() as AddressInfo).port}`, open: 0, closed: 0 };
      stalls.push(st);
    }
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true, caFile: certs.ca },
      log: controllerLog("attacks-content-controllers"),
    });
    for (const [name, provisioner, parameters] of [
      ["attack-plain", PLAIN_PROVISIONER, { approval: "AllowAll" }],
      ["attack-olm", OPERATOR_PROVISIONER, { approval: "AllowAll" }],
      ["attack-small-objects", PLAIN_PROVISIONER, { approval: "AllowAll", maxObjectSize: "1Ki" }],
      ["attack-quick", OPERATOR_PROVISIONER, { approval: "AllowAll", pullTimeout: "2s" }],
    ] as const)
      await admin.apply({
        apiVersion: API_VERSION,
        kind: "ProvisionerClass",
        metadata: { name },
        provisioner,
        parameters,
      } as unknown as KubeObject);
    // alice and carol may make Bundles of every class; alice may read ConfigMaps in her own namespace
    const bundleRules = [
      { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get", "list", "watch", "create", "delete"] },
      { apiGroups: ["rukpak.io"], resources: ["provisionerclasses"], verbs: ["get", "list", "use"] },
    ];
    await grantClusterRole(admin, "test-attacks-alice", { user: "alice" }, bundleRules);
    await grantClusterRole(admin, "test-attacks-carol", { user: "carol" }, bundleRules);
    for (const ns of ["attack-alice", "attack-victim"])
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "read-configmaps", namespace: "attack-alice" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "alice-reads-configmaps", namespace: "attack-alice" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-configmaps" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" }],
    } as unknown as KubeObject);
    const manifest = (name: string, ns: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  a: b\n`;
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "victim-content", namespace: "attack-victim" },
      data: { "objects.yaml": manifest("victim-object", "attack-victim") },
    } as unknown as KubeObject);
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "own-content", namespace: "attack-alice" },
      data: { "objects.yaml": manifest("alice-object", "attack-alice") },
    } as unknown as KubeObject);
    const dockerconfig = JSON.stringify({
      auths: { [privateRegistry.host]: { auth: Buffer.from("puller:s3cret").toString("base64") } },
    });
    await admin.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "victim-pull-secret", namespace: "attack-victim" },
      type: "kubernetes.io/dockerconfigjson",
      data: { ".dockerconfigjson": Buffer.from(dockerconfig).toString("base64") },
    } as unknown as KubeObject);
  });

  after(async () => {
    try {
      for (const b of bundles) await admin?.delete(API_VERSION, "Bundle", b).catch(() => false);
      for (const b of bundles)
        await waitFor<Bundle>(admin, API_VERSION, "Bundle", b, (o) => o === undefined, "deleted").catch(() => false);
      await admin?.delete(CATALOG_API_VERSION, "ClusterCatalog", "attack-catalog").catch(() => false);
      await waitFor(admin, CATALOG_API_VERSION, "ClusterCatalog", "attack-catalog", (o) => !o, "deleted").catch(
        () => false,
      );
      for (const c of ["attack-plain", "attack-olm", "attack-small-objects", "attack-quick"])
        await admin?.delete(API_VERSION, "ProvisionerClass", c).catch(() => false);
      for (const ns of ["attack-alice", "attack-victim"]) await admin?.delete("v1", "Namespace", ns).catch(() => false);
      for (const k of ["ClusterRole", "ClusterRoleBinding"])
        for (const n of ["test-attacks-alice", "test-attacks-carol"])
          await admin?.delete("rbac.authorization.k8s.io/v1", k, n).catch(() => false);
    } finally {
      await running?.stop();
      await registry?.stop();
      await privateRegistry?.stop();
      https?.closeAllConnections();
      https?.close();
      for (const st of stalls) st.server.close();
      carol?.close();
      admin?.close();
      alice?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  // ------------------------------------------------------------------ 8. content read with the controller's rights

  test("8: volumeMounts read any namespace's ConfigMap — refused as the requester, existing or not alike", async () => {
    const mount = (ns: string, name: string) => ({
      class: "attack-plain",
      refs: ["file://content"],
      volumeMounts: [{ mountPath: "/content/manifests", configMap: { name, namespace: ns } }],
    });
    await bundle(alice, "attack-cm-victim", mount("attack-victim", "victim-content"));
    await bundle(alice, "attack-cm-missing", mount("attack-victim", "no-such-configmap"));
    await bundle(alice, "attack-cm-own", mount("attack-alice", "own-content"));
    const victim = await outcome("attack-cm-victim");
    const missing = await outcome("attack-cm-missing");
    const own = await outcome("attack-cm-own");
    assert.equal(victim?.status?.unpacked, "Failed");
    assert.equal(victim?.status?.reason, "ConfigMapNotReadable");
    assert.equal(
      victim?.status?.message,
      "ConfigMap attack-victim/victim-content cannot be read by alice (it does not exist or alice may not get it)",
    );
    assert.equal(missing?.status?.reason, victim?.status?.reason);
    assert.equal(
      missing?.status?.message?.replace("no-such-configmap", "X"),
      victim?.status?.message?.replace("victim-content", "X"),
      "a missing ConfigMap and a forbidden one read the same",
    );
    assert.equal(own?.status?.unpacked, "Done", own?.status?.message);
    assert.deepEqual(own?.status?.objects, ["/objects/ConfigMap/attack-alice/alice-object"]);
  });

  test(
    "8: pullSecrets use any namespace's Secret — " + "refused as the requester; errors do not tell which exist",
    async () => {
      const spec = (name: string) => ({
        class: "attack-olm",
        refs: [`docker://${privateImage}`],
        pullSecrets: [{ name, namespace: "attack-victim" }],
      });
      await bundle(alice, "attack-secret-victim", spec("victim-pull-secret"));
      await bundle(alice, "attack-secret-missing", spec("no-such-secret"));
      const victim = await outcome("attack-secret-victim");
      const missing = await outcome("attack-secret-missing");
      assert.equal(victim?.status?.unpacked, "Failed");
      assert.equal(victim?.status?.reason, "PullSecretNotReadable");
      assert.equal(
        victim?.status?.message,
        "Secret attack-victim/victim-pull-secret cannot be read by alice (it does not exist or alice may not get it)",
      );
      assert.equal(missing?.status?.reason, victim?.status?.reason);
      assert.equal(
        missing?.status?.message?.replace("no-such-secret", "X"),
        victim?.status?.message?.replace("victim-pull-secret", "X"),
      );
      // the admin, who may read it, gets the image
      await bundle(admin, "attack-secret-admin", spec("victim-pull-secret"));
      const ok = await outcome("attack-secret-admin");
      assert.equal(ok?.status?.unpacked, "Done", ok?.status?.message);
    },
  );

  test("8: a tar symlink chain (d -> ., manifests -> d/d/…/../../…) reads a host directory — refused", async () => {
    // d/d/…/d resolves to the content root itself, so the ..s after it climb out of it, while the text
    // of the target, normalised, stays inside
    const n = 16;
    const target = `${"d/".repeat(n)}${"../".repeat(n)}${hostDir.slice(1)}`;
    const body = tgz([
      { path: "d", type: "symlink", linkname: "." },
      { path: "manifests", type: "symlink", linkname: target },
    ]);
    routes.set("/symlink-chain.tgz", (_q, r) => r.writeHead(200).end(body));
    await bundle(admin, "attack-symlink-chain", {
      class: "attack-plain",
      refs: [`${httpsBase}/symlink-chain.tgz`],
      digest: sha(body),
    });
    const b = await outcome("attack-symlink-chain");
    assert.equal(b?.status?.unpacked, "Failed", JSON.stringify(b?.status));
    assert.equal(b?.status?.reason, "InvalidContent");
    assert.match(b?.status?.message ?? "", /symlink "manifests" -> .* leads outside the content/);
    assert.ok(!b?.status?.objects?.some((o) => o.includes("stolen-from-the-host")));
    assert.deepEqual(stagingLeftovers(), []);
  });

  test("8: the tree digest skips symlinks (and empty directories) — they are part of it", async () => {
    const obj = Buffer.from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: digest-probe\n  namespace: default\n");
    const variants: Record<string, TarInput[]> = {
      plain: [{ path: "manifests/obj.yaml", type: "file", data: obj }],
      link: [
        { path: "manifests/obj.yaml", type: "file", data: obj },
        { path: "docs", type: "symlink", linkname: "manifests/obj.yaml" },
      ],
      otherLink: [
        { path: "manifests/obj.yaml", type: "file", data: obj },
        { path: "docs", type: "symlink", linkname: "manifests" },
      ],
      emptyDir: [
        { path: "manifests/obj.yaml", type: "file", data: obj },
        { path: "docs", type: "dir" },
      ],
    };
    const digests: Record<string, string | undefined> = {};
    for (const [k, entries] of Object.entries(variants)) {
      const body = tgz(entries);
      routes.set(`/digest-${k}.tgz`, (_q, r) => r.writeHead(200).end(body));
      const name = `attack-digest-${k.toLowerCase()}`;
      await bundle(admin, name, { class: "attack-plain", refs: [`${httpsBase}/digest-${k}.tgz`], digest: sha(body) });
      const b = await outcome(name);
      assert.equal(b?.status?.unpacked, "Done", b?.status?.message);
      digests[k] = b?.status?.digest;
    }
    assert.equal(new Set(Object.values(digests)).size, 4, JSON.stringify(digests));
  });

  test("8: tar refusals appear only in the log, status stays InProgress — they end Failed with a reason", async () => {
    const body = tgz([
      { path: "manifests/obj.yaml", type: "file", data: Buffer.from("kind: ConfigMap\n") },
      { path: "../escape.yaml", type: "file", data: Buffer.from("x") },
    ]);
    routes.set("/escape.tgz", (_q, r) => r.writeHead(200).end(body));
    await bundle(admin, "attack-tar-escape", {
      class: "attack-plain",
      refs: [`${httpsBase}/escape.tgz`],
      digest: sha(body),
    });
    const b = await outcome("attack-tar-escape");
    assert.equal(b?.status?.unpacked, "Failed");
    assert.equal(b?.status?.reason, "InvalidContent");
    assert.match(b?.status?.message ?? "", /escapes the image root/);
    assert.equal(cond(b, "Unpacked")?.reason, "InvalidContent");
  });

  test(
    "8: a file:// ref that matches no mount stays InProgress forever — " + "it ends Failed (InvalidRef) and stays",
    async () => {
      const counter = countRequests("attack-no-mount");
      await bundle(admin, "attack-no-mount", {
        class: "attack-plain",
        refs: ["file://content"],
        volumeMounts: [{ mountPath: "/elsewhere/manifests", configMap: { name: "x", namespace: "default" } }],
      });
      const b = await waitFor<Bundle>(
        admin,
        API_VERSION,
        "Bundle",
        "attack-no-mount",
        (o) => o?.status?.unpacked === "Failed",
        "Failed",
      );
      assert.equal(b?.status?.reason, "InvalidRef");
      const atFailure = counter.n;
      const rv = b!.metadata.resourceVersion;
      await sleep(3_000); // a window to see whether anything else happens: nothing should
      counter.stop();
      const now = await admin.get<Bundle>(API_VERSION, "Bundle", "attack-no-mount");
      assert.equal(now.status?.unpacked, "Failed");
      assert.equal(now.metadata.resourceVersion, rv, "no status write after Failed");
      // the Event about the failure may still be written (a read and a create)
      assert.ok(counter.n - atFailure <= 2, `${counter.n - atFailure} requests after the failure`);
    },
  );

  // ------------------------------------------------------------------ 9. no bounds

  test("9: a 1 GB https body is buffered in memory — a 200 MiB stream stops at the 64 MiB cap", async () => {
    let sent = 0;
    let closedEarly: Promise<void> = Promise.resolve();
    routes.set("/huge.tgz", (_q, res) => {
      closedEarly = new Promise((resolve) => res.on("close", () => resolve()));
      res.writeHead(200, { "Content-Type": "application/gzip" }); // no Content-Length: streamed
      const chunk = Buffer.alloc(MiB, 7);
      const pump = () => {
        while (sent < 200 * MiB && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    await bundle(admin, "attack-huge-body", {
      class: "attack-plain",
      refs: [`${httpsBase}/huge.tgz`],
      digest: `sha256:${"0".repeat(64)}`,
    });
    const b = await outcome("attack-huge-body");
    await closedEarly;
    assert.equal(b?.status?.unpacked, "Failed");
    assert.equal(b?.status?.reason, "ContentTooLarge", b?.status?.message);
    assert.ok(sent < 200 * MiB, `the server sent ${sent / MiB} MiB before the controller hung up`);
    assert.deepEqual(stagingLeftovers(), []);
  });

  test("9: a small tar.gz expanding to gigabytes fills the state dir — expansion stops at the cap", async () => {
    let zeros: Buffer | undefined = Buffer.alloc(100 * MiB);
    const body = tgz([{ path: "manifests/zeros.yaml", type: "file", data: zeros }]);
    zeros = undefined;
    routes.set("/bomb.tgz", (_q, r) => r.writeHead(200).end(body));
    await bundle(admin, "attack-bomb", { class: "attack-plain", refs: [`${httpsBase}/bomb.tgz`], digest: sha(body) });
    const b = await outcome("attack-bomb");
    assert.equal(b?.status?.unpacked, "Failed");
    assert.equal(b?.status?.reason, "ContentTooLarge", b?.status?.message);
    assert.deepEqual(stagingLeftovers(), []);
  });

  test("9: maxObjectSize is enforced nowhere — a manifest over the class's maxObjectSize is refused", async () => {
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big-manifest", namespace: "default" },
      data: {
        "big.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-object\n  namespace: default\ndata:\n" +
          `  filler: ${"x".repeat(4096)}\n`,
      },
    } as unknown as KubeObject);
    const spec = (cls: string) => ({
      class: cls,
      refs: ["file://content"],
      volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: "big-manifest", namespace: "default" } }],
    });
    await bundle(admin, "attack-big-object", spec("attack-small-objects"));
    await bundle(admin, "attack-big-object-allowed", spec("attack-plain"));
    const b = await outcome("attack-big-object");
    assert.equal(b?.status?.unpacked, "Failed");
    assert.equal(b?.status?.reason, "ObjectTooLarge");
    assert.match(
      b?.status?.message ?? "",
      /manifests\/big\.yaml has \d+ bytes, more than the class's maxObjectSize of 1024/,
    );
    assert.equal((await outcome("attack-big-object-allowed"))?.status?.unpacked, "Done");
    await admin.delete("v1", "ConfigMap", "big-manifest", "default");
  });

  test(
    "9: a Bundle deleted during its download is still fetched and retried — " + "the fetch stops, nothing is left",
    async () => {
      let requests = 0;
      let closed!: () => void;
      const connectionClosed = new Promise<void>((r) => (closed = r));
      let started!: () => void;
      const downloading = new Promise<void>((r) => (started = r));
      routes.set("/endless.tgz", (_q, res) => {
        requests++;
        res.writeHead(200);
        const t = setInterval(() => res.write(Buffer.alloc(64 * 1024, 1)), 100);
        res.on("close", () => {
          clearInterval(t);
          closed();
        });
        started();
      });
      await bundle(admin, "attack-deleted", {
        class: "attack-plain",
        refs: [`${httpsBase}/endless.tgz`],
        digest: `sha256:${"1".repeat(64)}`,
      });
      await downloading;
      await admin.delete(API_VERSION, "Bundle", "attack-deleted");
      await waitFor<Bundle>(admin, API_VERSION, "Bundle", "attack-deleted", (o) => o === undefined, "deleted");
      await connectionClosed;
      assert.equal(requests, 1);
      assert.ok(!running.controller.bundleQueue.isBackingOff("attack-deleted"), "no retry pending");
      assert.equal(running.controller.bundleQueue.failuresOf("attack-deleted"), 0);
      assert.deepEqual(stagingLeftovers(), []);
    },
  );

  /**
   * Four Bundles of `users` (in turn) from the stalling `hosts` (in turn), then an admin's Bundle from
   * the working registry: it is unpacked while every stalled pull still waits.
   */
  async function stalledThenOther(prefix: string, users: KubeClient[], hosts: (typeof stalls)[number][]) {
    // every outcome the stalled Bundles reach while the test runs (a worker frees only when one ends)
    const ended = new Set<string>();
    const ac = new AbortController();
    const watching = admin
      .watch(
        await admin.path(API_VERSION, "Bundle"),
        { timeoutSeconds: 600 },
        (ev) => {
          const o = ev.object as Bundle;
          if (o?.metadata?.name?.startsWith(`${prefix}-`) && settled(o)) ended.add(o.metadata.name);
        },
        ac.signal,
      )
      .catch(() => undefined);
    const closedBefore = hosts.map((h) => h.closed);
    for (let i = 1; i <= 4; i++)
      await bundle(users[i % users.length], `${prefix}-${i}`, {
        class: "attack-olm",
        refs: [`docker://${hosts[i % hosts.length].host}/stall/b:${i}`],
      });
    for (let i = 1; i <= 4; i++)
      await waitFor<Bundle>(
        admin,
        API_VERSION,
        "Bundle",
        `${prefix}-${i}`,
        (o) => o?.status?.unpacked === "InProgress",
        "InProgress",
      );
    await bundle(admin, `${prefix}-other`, { class: "attack-olm", refs: [`docker://${goodImage}`] });
    const b = await outcome(`${prefix}-other`);
    ac.abort();
    await watching;
    assert.equal(b?.status?.unpacked, "Done", b?.status?.message);
    assert.deepEqual(
      [...ended].filter((n) => n !== `${prefix}-other`),
      [],
      "no stalled pull had to end first",
    );
    assert.ok(
      hosts.every((h) => h.open >= 1),
      "the stalled pulls still wait",
    );
    assert.deepEqual(
      hosts.map((h) => h.closed),
      closedBefore,
      "no stalled connection was given up first",
    );
    for (let i = 1; i <= 4; i++) await admin.delete(API_VERSION, "Bundle", `${prefix}-${i}`);
  }

  test(
    "9: refs to a stalling registry block every unpack worker — " + "another registry's Bundle is unpacked meanwhile",
    async () => {
      // two users, one registry: the registry's limit
      await stalledThenOther("attack-stalled", [alice, carol], [stalls[0]]);
    },
  );

  test(
    "9: one user's refs to stalling registries block every unpack worker — " +
      "another user's Bundle is unpacked meanwhile",
    async () => {
      // one user, two registries: the user's limit
      await stalledThenOther("attack-stalled-user", [alice], [stalls[1], stalls[2]]);
    },
  );

  test("9: no time limit per pull — a class's pullTimeout ends a stalled pull as Failed (PullTimeout)", async () => {
    await bundle(admin, "attack-pull-timeout", {
      class: "attack-quick",
      refs: [`docker://${stalls[0].host}/stall/t:1`],
    });
    const b = await outcome("attack-pull-timeout");
    assert.equal(b?.status?.unpacked, "Failed");
    assert.equal(b?.status?.reason, "PullTimeout", b?.status?.message);
    assert.match(b?.status?.message ?? "", /not done within 2 s/);
    await admin.delete(API_VERSION, "Bundle", "attack-pull-timeout");
  });

  // ------------------------------------------------------------------ 10. hot loops

  test("10: one broken Bundle costs ~170 API requests/s — its requests follow the backoff schedule", async (t) => {
    const name = "attack-hot-loop";
    const counter = countRequests(name);
    const start = Date.now();
    await bundle(admin, name, { class: "attack-olm", refs: [`docker://${registry.host}/missing/bundle:v1`] });
    const b = await waitFor<Bundle>(
      admin,
      API_VERSION,
      "Bundle",
      name,
      (o) => o?.status?.unpacked === "Failed",
      "Failed",
    );
    assert.equal(b?.status?.reason, "PullFailed");
    await sleep(10_000); // the window observed
    const elapsed = Date.now() - start;
    counter.stop();
    const q = running.controller.bundleQueue;
    const attempts = attemptsWithin(elapsed, q.baseDelay, q.maxDelay);
    // the first pass: finalizer, InProgress, Failed (read and write), its Event (read and create) and
    // slack for conflicts; each retry that fails the same way writes nothing (allow 2 for a changed message)
    const bound = 10 + 2 * (attempts - 1);
    t.diagnostic(`${counter.n} requests about ${name} in ${elapsed} ms (bound ${bound})`);
    assert.ok(
      counter.n <= bound,
      `${counter.n} requests about ${name} in ${elapsed} ms; the backoff allows ${attempts} attempts, bound ${bound}`,
    );
    assert.ok(q.failuresOf(name) >= 2, "it was retried");
    assert.ok(q.failuresOf(name) <= attempts);
    await admin.delete(API_VERSION, "Bundle", name);
  });

  // ------------------------------------------------------------------ 12. ClusterCatalogs

  test(
    "12: a ClusterCatalog whose ref is changed to garbage drops the served content — " + "kept, Progressing says why",
    async (t) => {
      await admin.apply({
        apiVersion: CATALOG_API_VERSION,
        kind: "ClusterCatalog",
        metadata: { name: "attack-catalog" },
        spec: { source: { type: "Image", image: { ref: catalogImage } } },
      } as ClusterCatalog);
      const serving = await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        "attack-catalog",
        (o) => cond(o, "Serving")?.status === "True",
        "Serving",
      );
      const url = `${serving!.status!.urls!.base}/api/v1/all`;
      const before = await (await fetch(url)).text();
      assert.match(before, /etcd-example/);
      const counter = countRequests("attack-catalog");
      const start = Date.now();
      await admin.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", "attack-catalog", {
        spec: { source: { image: { ref: `${registry.host}/nope/garbage:v1` } } },
      });
      const cc = await waitFor<ClusterCatalog>(
        admin,
        CATALOG_API_VERSION,
        "ClusterCatalog",
        "attack-catalog",
        (o) => /stays served/.test(cond(o, "Progressing")?.message ?? ""),
        "Progressing says the old content stays",
      );
      assert.equal(cond(cc, "Progressing")?.status, "True");
      assert.match(cond(cc, "Progressing")?.message ?? "", /nope\/garbage:v1 cannot be served/);
      assert.equal(cond(cc, "Serving")?.status, "True");
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), before);
      // and it is retried by the backoff, not in a loop
      await sleep(8_000);
      const elapsed = Date.now() - start;
      counter.stop();
      const q = running.controllers.catalogs!.queue;
      const attempts = attemptsWithin(elapsed, q.baseDelay, q.maxDelay);
      const bound = 10 + 3 * (attempts - 1);
      t.diagnostic(`${counter.n} requests about attack-catalog in ${elapsed} ms (bound ${bound})`);
      assert.ok(counter.n <= bound, `${counter.n} requests in ${elapsed} ms; ${attempts} attempts, bound ${bound}`);
    },
  );
});
