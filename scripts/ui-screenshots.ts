/**
 * Regenerates the web UI's screenshots in docs/ui/ (shown in the README and docs/ui.md): a real
 * `opcat serve` of the community catalogs in ../shared/data, Debian's Chromium through
 * playwright-core, each page waited on until drawn; what a reload changed (a copy served with
 * --watch); the cluster pages through test/cluster/ui.test.ts on a real API server.
 * `npm run screenshots` (after `npm run build`; the cluster part needs scripts/kube/cluster.sh build).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { COMMUNITY, REPO_ROOT } from "../test/shared.js";
import { CatalogCopy, launchBrowser, startServe } from "../test/ui/harness.js";

const out = join(REPO_ROOT, "docs", "ui");
mkdirSync(out, { recursive: true });
const served = await startServe([
  `v4.16=${join(COMMUNITY, "catalogs", "v4.16")}`,
  `v4.20=${join(COMMUNITY, "catalogs", "v4.20")}`,
]);
const browser = await launchBrowser();
try {
  for (const scheme of ["light", "dark"] as const) {
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 960 },
      colorScheme: scheme,
      deviceScaleFactor: 1,
    });
    const page = await ctx.newPage();
    page.setDefaultTimeout(60_000);
    const shot = async (name: string, hash: string, ready: (p: Page) => Promise<unknown>): Promise<void> => {
      await page.goto(`${served.url}${hash}`);
      await ready(page);
      const file = join(out, `${name}${scheme === "dark" ? "-dark" : ""}.png`);
      await page.screenshot({ path: file });
      console.log(file);
    };
    const graphDrawn = (p: Page): Promise<void> => p.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    if (scheme === "light") {
      await shot("catalogs", "#/catalogs", (p) => p.locator("[data-testid=catalogs] tbody tr").nth(1).waitFor());
      await shot("packages", "#/c/v4.20", (p) => p.locator("[data-testid=packages] > li").nth(10).waitFor());
      await shot("package", "#/c/v4.20/p/project-quay", (p) =>
        p.locator("[data-testid=channels] tbody tr").first().waitFor(),
      );
      await shot("bundle", "#/c/v4.20/p/project-quay?tab=bundles&bundle=quay-operator.v3.17.4", (p) =>
        p.locator("[data-testid=bundle-detail] h2").waitFor(),
      );
      await shot(
        "resolve",
        `#/resolve?package=infinispan&channel=stable&catalog=v4.20&version=${encodeURIComponent("<2.4.0")}`,
        (p) => p.locator("[data-testid=resolved-bundles] tbody tr").first().waitFor(),
      );
      await page.goto(`${served.url}#/template`);
      await page.locator("select[name=catalog] option", { hasText: /^v4\.20$/ }).waitFor({ state: "attached" });
      await page.locator("select[name=catalog]").selectOption("v4.20");
      const head = (await (await fetch(`${served.url}ui/api/catalogs/v4.20/packages/infinispan`)).json()) as {
        bundles: { name: string; image: string }[];
      };
      const image = head.bundles.find((b) => b.name === "infinispan-operator.v2.5.14")?.image ?? "";
      await page
        .locator("textarea[name=template]")
        .fill(
          `schema: olm.semver\ngenerateMajorChannels: true\n` +
            `generateMinorChannels: false\nstable:\n  bundles:\n    - image: ${image}\n`,
        );
      await page.getByRole("button", { name: "Render" }).click();
      await page.locator("[data-testid=render-result] [role=status]").waitFor();
      await page.screenshot({ path: join(out, "template.png"), fullPage: false });
      console.log(join(out, "template.png"));
    }
    await shot("graph", "#/c/v4.20/p/infinispan?tab=graph&channel=stable&from=infinispan-operator.v2.3.0", graphDrawn);
  }
  // what a reload changed: a copy of infinispan served with --watch loses its channel head
  const copy = new CatalogCopy(join(COMMUNITY, "catalogs", "v4.20", "infinispan"));
  const watched = await startServe([`infinispan=${copy.dir}`, "--watch"]);
  try {
    const reloaded = watched.waitForLog((e) => e.msg === "catalog loaded" && e.revision === 2);
    copy.withdraw("infinispan-operator.v2.5.14");
    await reloaded;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 960 }, deviceScaleFactor: 1 });
    const page = await ctx.newPage();
    await page.goto(`${watched.url}#/c/infinispan/changes`);
    await page.locator("[data-testid=changes] tbody tr").first().waitFor();
    await page.screenshot({ path: join(out, "changes.png") });
    await page.goto(`${watched.url}#/c/infinispan/p/infinispan?tab=graph&compare=previous`);
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    await page.screenshot({ path: join(out, "graph-changes.png") });
    console.log(join(out, "changes.png"), join(out, "graph-changes.png"));
  } finally {
    await watched.stop();
    copy.remove();
  }
} finally {
  await browser.close();
  await served.stop();
}

// the cluster pages, from their test on a real API server (scripts/run-tests.mjs starts one)
const r = spawnSync(
  process.execPath,
  [join(REPO_ROOT, "scripts", "run-tests.mjs"), join("test", "cluster", "ui.test.ts")],
  {
    cwd: REPO_ROOT,
    stdio: "inherit",
    env: { ...process.env, OPCAT_SCREENSHOTS_DIR: out },
  },
);
if (r.status !== 0) process.exit(r.status ?? 1);
console.log(join(out, "cluster.png"), join(out, "cluster-instance.png"));
