/**
 * The web UI's cluster pages in Chromium against `opcat serve --kubeconfig` and a real API server
 * (etcd + kube-apiserver started by the test runner), with opcat's provisioner and admission
 * webhooks running in this process and a real bundle (cat-facts-operator 1.1.0 from
 * ../shared/data) pushed to a real docker-registry: an Instance of a DenyAll class waits for
 * approval; the page shows the permissions it would grant (what `opcat instance approve --show`
 * prints); approving acts with the token the user gives, never with the server's own (admin)
 * credentials: bob's token is refused until bob has the `approve` verb, then the condition names bob.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { Browser, Page } from "playwright-core";
import { readBundleDirectory } from "../../src/bundle/index.js";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { API_VERSION, OPERATOR_PROVISIONER, type Instance } from "../../src/cluster/rukpak/api.js";
import { OPERATOR_API_VERSION, type Operator } from "../../src/cluster/operators/api.js";
import { convertRegistryV1 } from "../../src/cluster/rukpak/convert.js";
import { formatRule, grantedRules } from "../../src/cluster/rukpak/permissions.js";
import { runControllers, type RunningControllers } from "../../src/cluster/run.js";
import { buildBundleImage, pushImage } from "../../src/image/index.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, requireShared } from "../shared.js";
import { launchBrowser, openPage, requireChromium, startServe, type Served } from "../ui/harness.js";
import { clientAs, clusterKubeconfig, cond, controllerLog, grantClusterRole, waitFor } from "./harness.js";

declare const location: { hash: string };

const cluster = clusterKubeconfig();
const skip = cluster.skip || requireTools("docker-registry") || requireShared().skip || requireChromium().skip;
const BUNDLE = join(COMMUNITY, "operators", "cat-facts-operator", "1.1.0");

describe("web UI cluster pages on a real API server", { skip, concurrency: false }, () => {
  let kubeconfig = "";
  let admin: KubeClient;
  let registry: RunningRegistry;
  let running: RunningControllers;
  let served: Served;
  let browser: Browser;
  let page: Page;
  let tmp = "";
  let bobToken = "";
  const problems: string[] = [];

  // `npm run screenshots` runs this file with OPCAT_SCREENSHOTS_DIR=docs/ui for the cluster pages' pictures
  const shot = async (name: string): Promise<void> => {
    if (process.env.OPCAT_SCREENSHOTS_DIR)
      await page.screenshot({ path: join(process.env.OPCAT_SCREENSHOTS_DIR, `${name}.png`) });
  };

  before(async () => {
    if (cluster.skip !== false) return;
    kubeconfig = cluster.kubeconfig;
    admin = clientAs(kubeconfig, "admin");
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    bobToken = kc.getUser(kc.getContextObject("bob")?.user ?? "")?.token ?? "";
    assert.ok(bobToken, "the test cluster's kubeconfig has a token for bob");
    tmp = mkdtempSync(join(tmpdir(), "opcat-ui-cluster-"));
    registry = await startDockerRegistry(join(tmp, "registry"));
    const ref = `${registry.host}/ui-cat-facts-bundle:1.1.0`;
    await pushImage(buildBundleImage(BUNDLE), ref, { useHttp: true });
    running = await runControllers({
      kubeconfig,
      context: "controller",
      stateDir: join(tmp, "state"),
      pull: { useHttp: true },
      log: controllerLog("ui-controllers"),
    });
    await admin.apply({
      apiVersion: API_VERSION,
      kind: "ProvisionerClass",
      metadata: { name: "test-ui-deny" },
      provisioner: OPERATOR_PROVISIONER,
      parameters: { approval: "DenyAll" },
    } as unknown as KubeObject);
    const inst: Instance = {
      apiVersion: API_VERSION,
      kind: "Instance",
      metadata: { name: "ui-catfacts" },
      spec: {
        selector: { matchLabels: { subscription: "ui-catfacts" } },
        bundle: { name: "ui-cat-facts-1.1.0", spec: { class: "test-ui-deny", refs: [`docker://${ref}`] } },
      },
    };
    await admin.create(inst);
    await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "ui-catfacts",
      (o) => cond(o, "Approved")?.reason === "AwaitingApproval",
      "AwaitingApproval",
    );
    // bob may read Instances and their Bundles (an approval names the Bundle's content) and write
    // Instances' status, but has no `approve` verb yet (rukpak-approver without it)
    await grantClusterRole(admin, "test-ui-bob", { user: "bob" }, [
      { apiGroups: ["rukpak.io"], resources: ["instances"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["rukpak.io"], resources: ["instances/status"], verbs: ["get", "update", "patch"] },
      { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get", "list", "watch"] },
    ]);
    // the server reads the cluster as admin (who could approve): approvals must not use that
    served = await startServe([
      join(COMMUNITY, "catalogs", "v4.20", "infinispan"),
      "--kubeconfig",
      kubeconfig,
      "--context",
      "admin",
      "--use-http",
    ]);
    browser = await launchBrowser();
    // the refused approvals (401 without a token, 403 for bob) are expected and asserted on the page
    page = await openPage(
      await browser.newContext({ viewport: { width: 1280, height: 960 } }),
      problems,
      (text, url) => /status of (401|403)/.test(text) && /\/approve$/.test(url),
    );
    page.setDefaultTimeout(60_000);
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    await admin?.delete(API_VERSION, "Instance", "ui-catfacts").catch(() => undefined);
    await running?.stop();
    await registry?.stop();
    admin?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("Instances awaiting approval are listed first, marked", async () => {
    await page.goto(served.url);
    await page.getByRole("link", { name: "Cluster" }).click();
    const row = page.locator("[data-testid=instances] tbody tr", { hasText: "ui-catfacts" });
    await row.waitFor();
    assert.match(
      (await row.textContent()) ?? "",
      /ui-catfacts\s*awaiting approval\s*ui-cat-facts-1\.1\.0\s*test-ui-deny/,
    );
    assert.match((await row.textContent()) ?? "", /False \(AwaitingApproval\)/);
  });

  test(
    "the review page shows the permissions approving " + "grants, as `instance approve --show` computes them",
    async () => {
      await page.goto(`${served.url}#/cluster/instances/ui-catfacts`);
      const grants = page.locator("[data-testid=grants] li");
      await grants.first().waitFor();
      const want = grantedRules(convertRegistryV1(readBundleDirectory(BUNDLE)).objects).map(formatRule);
      assert.ok(want.length > 0);
      assert.deepEqual(await grants.allTextContents(), want);
    },
  );

  test("approving needs the user's own token; bob's is refused without the approve verb, then accepted", async () => {
    await page.goto(`${served.url}#/cluster/instances/ui-catfacts`);
    await page.locator("[data-testid=grants] li").first().waitFor();
    // no token: refused although the server itself could approve
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("alert").filter({ hasText: "SERVE_UI_NEED_TOKEN" }).waitFor();
    let inst = await admin.get<Instance>(API_VERSION, "Instance", "ui-catfacts");
    assert.equal(cond(inst, "Approved")?.reason, "AwaitingApproval");
    // bob's token: the admission webhook refuses bob
    await page.locator("input[name=token]").fill(bobToken);
    await page.getByRole("button", { name: "Approve" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /403[\s\S]*bob[\s\S]*"approve" verb/ })
      .waitFor();
    inst = await admin.get<Instance>(API_VERSION, "Instance", "ui-catfacts");
    assert.equal(cond(inst, "Approved")?.reason, "AwaitingApproval");
    // bob is given the approve verb: his approval goes through and names him
    await grantClusterRole(admin, "test-ui-bob", { user: "bob" }, [
      { apiGroups: ["rukpak.io"], resources: ["instances"], verbs: ["get", "list", "watch", "approve"] },
      { apiGroups: ["rukpak.io"], resources: ["instances/status"], verbs: ["get", "update", "patch"] },
      { apiGroups: ["rukpak.io"], resources: ["bundles"], verbs: ["get", "list", "watch"] },
    ]);
    await page.reload();
    await page.locator("[data-testid=grants] li").first().waitFor();
    await shot("cluster-instance");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.locator("[data-testid=decision]", { hasText: /^Approved as bob/ }).waitFor();
    // the provisioner goes on to install once approved (whether the install succeeds depends on what
    // else this shared cluster holds: another test's Instance may own cat-facts' objects)
    const done = await waitFor<Instance>(
      admin,
      API_VERSION,
      "Instance",
      "ui-catfacts",
      (o) => cond(o, "Approved")?.reason === "ApprovedByUser" && cond(o, "Installed") !== undefined,
      "approved, then an install attempt",
    );
    assert.equal(cond(done, "Approved")?.status, "True");
    assert.match(cond(done, "Approved")?.message ?? "", /approved by bob/);
    assert.match(await page.evaluate(() => location.hash), /^#\/cluster\/instances\/ui-catfacts/);
  });

  test("Operators with their status and components, as the Operator controller reports them", async () => {
    // an Operator for a package no catalog on this cluster has: the Operator controller (running in
    // this process) reports it through its Input: not installed, constraints not satisfiable
    await admin.delete(OPERATOR_API_VERSION, "Operator", "ui-infinispan").catch(() => undefined);
    await admin.create<Operator>({
      apiVersion: OPERATOR_API_VERSION,
      kind: "Operator",
      metadata: { name: "ui-infinispan" },
      spec: { catalog: { package: "infinispan", channel: "stable" } },
    } as Operator);
    const op = await waitFor<Operator>(
      admin,
      OPERATOR_API_VERSION,
      "Operator",
      "ui-infinispan",
      (o) =>
        cond(o, "Installed")?.reason === "ConstraintsNotSatisfiable" && (o?.status?.components?.refs?.length ?? 0) > 0,
      "Installed=False (ConstraintsNotSatisfiable), with its Input as a component",
    );
    const installed = cond(op, "Installed");
    assert.ok(installed && op?.status?.components?.refs);
    await page.goto(`${served.url}#/cluster`);
    const row = page.locator("[data-testid=operators] tbody tr", { hasText: "ui-infinispan" });
    await row.waitFor();
    const text = (await row.textContent()) ?? "";
    assert.ok(text.startsWith("ui-infinispaninfinispan / stable"), text);
    assert.ok(text.includes(`${installed.status} (${installed.reason})`), text);
    await row.locator("summary").click();
    const refs = op.status.components.refs;
    assert.deepEqual(
      await row.locator("li").allTextContents(),
      refs.map(
        (r) =>
          `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name} ${(() => {
            const c = r.conditions?.find(
              (x) => x.type === "Ready" || x.type === "Available" || x.type === "Established",
            );
            return c ? `${c.type}=${c.status}` : "";
          })()}`,
      ),
    );
    await shot("cluster");
    // the reason is explained on hover with the controller's message
    assert.equal(await row.locator("td").nth(3).locator("span").getAttribute("title"), installed.message);
    await admin.delete(OPERATOR_API_VERSION, "Operator", "ui-infinispan");
  });

  test("no script errors or CSP violations", () => {
    assert.deepEqual(problems, []);
  });
});
