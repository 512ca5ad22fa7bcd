/**
 * docs/cluster.md's walkthrough, step 1, exactly as written: its shell commands are read from the page
 * and run by bash with the real kubectl (the one built with the test cluster) and bin/opcat on PATH,
 * against an API server without opcat's CRDs, as a first-time user would. The CRDs and the objects of
 * their kinds must all be there afterwards, on the first try.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { clusterManifests } from "../../src/cluster/manifests.js";
import { WEBHOOK_CONFIG_NAME } from "../../src/cluster/rukpak/webhook.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { KUBECTL } from "../node/shared.js";
import { REPO_ROOT } from "../shared.js";
import { clientAs, clusterKubeconfig, waitForCrdGone } from "./harness.js";

const cluster = clusterKubeconfig();
const skip = cluster.skip || (!existsSync(KUBECTL) && `no kubectl at ${KUBECTL} (scripts/kube/cluster.sh build)`);
const CRD = "apiextensions.k8s.io/v1";

/**
 * The commands of the walkthrough's step 1: the first `sh` block after its heading, up to the comment
 * that opens step 2; comments and blank lines dropped, `\` continuations joined.
 */
function stepOneCommands(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf("## Walkthrough on your own cluster"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const step = block.split(/^# 2\./m)[0];
  return step
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

/** Takes opcat's own finalizers (rukpak.io/…) off every custom resource of CRD `crd`, and nothing else. */
async function dropOpcatFinalizers(admin: KubeClient, crd: KubeObject): Promise<void> {
  const spec = crd.spec as { group: string; names: { kind: string }; versions: { name: string; served?: boolean }[] };
  const version = spec.versions.find((v) => v.served !== false)?.name;
  if (!version) return;
  const apiVersion = `${spec.group}/${version}`;
  const { items } = await admin.list<KubeObject>(apiVersion, spec.names.kind);
  for (const o of items) {
    const all = o.metadata.finalizers ?? [];
    const kept = all.filter((f) => !f.startsWith("rukpak.io/"));
    if (kept.length === all.length) continue;
    await admin
      .mergePatch(
        apiVersion,
        spec.names.kind,
        o.metadata.name,
        { metadata: { finalizers: kept } },
        {
          namespace: o.metadata.namespace,
        },
      )
      .catch((e: { status?: number }) => (e.status === 404 ? undefined : Promise.reject(e)));
  }
}

describe("docs/cluster.md walkthrough, step 1", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    // a fresh API server as far as opcat is concerned: none of its CRDs (earlier test files install them)
    const admin = clientAs(kubeconfig, "admin");
    const crds = await admin.list<KubeObject>(CRD, "CustomResourceDefinition", {
      labelSelector: "app.kubernetes.io/part-of=opcat",
    });
    // no controller serves opcat's webhooks any more (they fail closed): a fresh API server has none
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
      await admin.delete("admissionregistration.k8s.io/v1", kind, WEBHOOK_CONFIG_NAME);
    // what earlier files left (Bundles with opcat's content finalizer) waits for a controller that no
    // longer runs: only those finalizers are taken off, else the CRDs' deletion could never finish
    for (const c of crds.items) await dropOpcatFinalizers(admin, c);
    for (const c of crds.items) await admin.delete(CRD, "CustomResourceDefinition", c.metadata.name);
    for (const c of crds.items) await waitForCrdGone(admin, c.metadata.name);
  });

  test("its commands, run as written, install every API and object of `cluster manifests --local`", async () => {
    const commands = stepOneCommands(readFileSync(join(REPO_ROOT, "docs", "cluster.md"), "utf8"));
    assert.ok(
      commands.some((c) => c.includes("opcat cluster manifests")),
      `step 1 has no opcat cluster manifests: ${commands}`,
    );
    // opcat and kubectl on PATH; kubectl's discovery cache in a new home, as on a machine that never saw
    // this cluster; the kubeconfig's current context is the cluster admin
    const home = mkdtempSync(join(tmpdir(), "opcat-walkthrough-"));
    const bin = join(home, "bin");
    mkdirSync(bin);
    symlinkSync(join(REPO_ROOT, "bin", "opcat"), join(bin, "opcat"));
    const env = {
      ...process.env,
      HOME: home,
      KUBECONFIG: kubeconfig,
      PATH: [bin, dirname(KUBECTL), dirname(process.execPath), process.env.PATH].join(":"),
    };
    for (const c of commands) {
      const r = spawnSync("bash", ["-e", "-o", "pipefail", "-c", c], { env, encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 0, `${c}\nexit ${r.status}\n${r.stdout}${r.stderr}`);
    }
    const admin = clientAs(kubeconfig, "admin");
    for (const o of clusterManifests({ local: true })) {
      const got = await admin.tryGet<KubeObject>(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace);
      assert.ok(got, `${o.kind} ${o.metadata.name} was not created`);
    }
  });
});
