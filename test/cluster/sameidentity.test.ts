/**
 * The controllers under a person's own credentials (`opcat cluster run --kubeconfig ~/.kube/config`,
 * docs/cluster.md's walkthrough), on a real API server: what that person makes installs as them, and
 * what the controllers make for their own purposes (an object of a bundle) is still judged as nobody,
 * although the controllers and the person are one user (docs/security.md, "trust decisions").
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, type Instance } from "../../src/cluster/rukpak/api.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();
const NS = "same-identity";

describe("the controllers running as the user who creates the objects", { skip: cluster.skip }, () => {
  let admin: KubeClient;
  let running: RunningControllers | undefined;
  let tmp = "";

  const plainSpec = (cm: string) => ({
    class: "same-user",
    refs: ["file://content"],
    volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: cm, namespace: NS } }],
  });
  const content = (name: string, manifests: string) =>
    admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: NS },
      data: { "objects.yaml": manifests },
    } as unknown as KubeObject);
  const instance = (name: string, cm: string): Instance => ({
    apiVersion: API_VERSION,
    kind: "Instance",
    metadata: { name },
    spec: { selector: { matchLabels: { same: name } }, bundle: { name, spec: plainSpec(cm) } },
  });

  before(async () => {
    if (cluster.skip !== false) return;
    admin = clientAs(cluster.kubeconfig, "admin");
    tmp = mkdtempSync(join(tmpdir(), "opcat-same-"));
    // the walkthrough: the controllers with the person's own kubeconfig context
    running = await runControllers({
      kubeconfig: cluster.kubeconfig,
      context: "admin",
      stateDir: join(tmp, "state"),
      deppy: false,
      log: controllerLog("same-identity-controllers"),
    });
    await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as KubeObject);
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "same-user" },
      provisioner: "rukpak.io/plain",
      parameters: { approval: "UserPermission" },
    } as unknown as KubeObject);
  });

  after(async () => {
    await running?.stop();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("the person's Instance installs as them, although they are the controllers' user", async () => {
    assert.equal((await running!.client.whoami()).username, (await admin.whoami()).username);
    await content(
      "same-direct",
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same-direct-made\n  namespace: same-identity\n",
    );
    await admin.create(instance("same-direct", "same-direct"));
    const inst = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "same-direct",
      (o) => cond(o, "Installed")?.status === "True",
      "Installed",
    );
    assert.equal(cond(inst, "Approved")?.reason, "UserPermission");
    assert.match(cond(inst, "Approved")?.message ?? "", new RegExp((await admin.whoami()).username));
    assert.ok(await admin.tryGet("v1", "ConfigMap", "same-direct-made", NS), "what the bundle holds is installed");
    await admin.delete(API_VERSION, "Instance", "same-direct");
  });

  test("an Instance the controllers made from a bundle is judged as nobody, not as their user", async () => {
    await content(
      "same-inner",
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same-inner-made\n  namespace: same-identity\n",
    );
    await content(
      "same-outer",
      toYaml({
        apiVersion: API_VERSION,
        kind: "Instance",
        metadata: { name: "same-inner" },
        spec: {
          selector: { matchLabels: { same: "same-inner" } },
          bundle: { name: "same-inner", spec: plainSpec("same-inner") },
        },
      }),
    );
    await admin.create(instance("same-outer", "same-outer"));
    await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "same-outer",
      (o) => cond(o, "Installed")?.status === "True",
      "the outer Instance installed (it made the inner one)",
    );
    const nobody = /made by opcat's controllers for no user/;
    const inner = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "same-inner",
      (o) => nobody.test(cond(o, "Unpacked")?.message ?? "") || nobody.test(cond(o, "Approved")?.message ?? ""),
      "the nested Instance waits: nobody's rights read or approve it",
    );
    assert.notEqual(cond(inner, "Installed")?.status, "True");
    assert.equal(await admin.tryGet("v1", "ConfigMap", "same-inner-made", NS), undefined, "nothing of it installed");
    await admin.delete(API_VERSION, "Instance", "same-outer");
    await admin.delete(API_VERSION, "Instance", "same-inner");
  });
});
