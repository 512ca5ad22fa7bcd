/**
 * The web UI in a real browser (Debian's Chromium through playwright-core) against a real
 * `opcat serve` of the community catalogs in ../shared/data: navigation, search, package pages,
 * the upgrade graph with upgrade paths and exports, resolution, template rendering, themes,
 * keyboard use, and that a malicious catalog cannot run script. No sleeps: every step waits for
 * what it needs to see.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { COMMUNITY, REPO_ROOT, requireShared } from "../shared.js";
import { CatalogCopy, launchBrowser, openPage, requireChromium, startServe, type Served } from "./harness.js";

// Browser globals, for the functions that run in the page (this file is compiled without the DOM library).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const location: any;
declare const navigator: any;
declare const window: any;
declare function getComputedStyle(e: unknown): any;
type HTMLImageElement = { complete: boolean; naturalWidth: number };

const V416 = join(COMMUNITY, "catalogs", "v4.16");
const V420 = join(COMMUNITY, "catalogs", "v4.20");
const skip = requireShared().skip || requireChromium().skip;

// the non-2xx answers the tests provoke and assert on the page: the resolver's 409 (no resolution)
// and the template renderer's 422 (a reference the catalog lacks)
const provoked = (text: string, url: string): boolean =>
  (/status of 409/.test(text) && /\/api\/v1\/resolve$/.test(url)) ||
  (/status of 422/.test(text) && /\/ui\/api\/render-template$/.test(url));

describe("web UI in Chromium on the community catalogs", { skip }, () => {
  let served: Served;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    served = await startServe([`v4.16=${V416}`, `v4.20=${V420}`]);
    browser = await launchBrowser();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: served.url.replace(/\/$/, "") });
    page = await openPage(ctx, problems, provoked);
  });
  after(async () => {
    await browser?.close();
    await served?.stop();
  });

  test("the page is served with a strict CSP and no script or style from elsewhere", async () => {
    const res = await page.goto(served.url);
    assert.ok(res);
    const csp = res.headers()["content-security-policy"] ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const external = await page.evaluate(() =>
      [...document.querySelectorAll("script[src], link[href]")]
        .map((e) => e.getAttribute("src") ?? e.getAttribute("href") ?? "")
        .filter((u) => /^(https?:)?\/\//.test(u)),
    );
    assert.deepEqual(external, []);
  });

  test("two catalogs: / lists them with counts; a catalog opens on its packages", async () => {
    await page.goto(served.url);
    const table = page.locator("[data-testid=catalogs]");
    await table.waitFor();
    assert.equal(await page.evaluate(() => location.hash), "#/catalogs");
    const rows = await table.locator("tbody tr").allTextContents();
    assert.equal(rows.length, 2);
    assert.match(rows[0], /^v4\.16\s*18\s*27\s*221/);
    assert.match(rows[1], /^v4\.20\s*37\s*85\s*803/);
    await page.getByRole("link", { name: "v4.20" }).click();
    await page.locator("[data-testid=counts]", { hasText: "37 of 37 packages · 803 bundles" }).waitFor();
    assert.equal(await page.locator("[data-testid=packages] > li").count(), 37);
  });

  test("package cards are as tall as their content; the status line shows the server's memory", async () => {
    await page.goto(`${served.url}#/c/v4.20`);
    await page.locator("[data-testid=counts]", { hasText: "37 of 37 packages" }).waitFor();
    // no card is stretched to its row's tallest: none has more than a line of empty space at its bottom
    const slack = await page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=packages] > li")].map((li) => {
        const inner = li.lastElementChild.getBoundingClientRect();
        const box = li.getBoundingClientRect();
        return Math.round(box.bottom - inner.bottom);
      }),
    );
    assert.ok(Math.max(...slack) <= 24, `empty space at the bottom of cards: ${slack.join(", ")}`);
    // the status line: the server's memory
    const status = page.locator("[data-testid=status-line]");
    await status.filter({ hasText: /server memory: \d+ MiB resident, heap \d+ MiB of \d+ MiB/ }).waitFor();
  });

  test("search by name, keyword and provided API, with counts", async () => {
    await page.goto(`${served.url}#/c/v4.20`);
    const search = page.getByRole("searchbox", { name: "search packages" });
    await search.fill("QuayRegistry");
    await page.locator("[data-testid=counts]", { hasText: "1 of 37 packages" }).waitFor();
    assert.deepEqual(await page.locator("[data-testid=packages] .pkg-name").allTextContents(), ["Quay"]);
    await page.locator("select[name=in]").selectOption("keyword");
    await search.fill("database");
    await page.locator("[data-testid=counts]", { hasText: "3 of 37 packages" }).waitFor();
    await page.locator("select[name=in]").selectOption("name");
    await page.locator("[data-testid=counts]", { hasText: "0 of 37 packages" }).waitFor();
    // the search is part of the link
    assert.match(await page.evaluate(() => location.hash), /q=database&in=name/);
  });

  test(
    "package page: channels, default channel, description, " + "bundles with properties and blob viewer with copy",
    async () => {
      await page.goto(`${served.url}#/c/v4.20/p/project-quay`);
      await page.locator("[data-testid=default-channel]", { hasText: "stable-3.17" }).waitFor();
      const channels = page.locator("[data-testid=channels] tbody tr");
      assert.equal(await channels.count(), 12);
      assert.match(
        (await channels.first().textContent()) ?? "",
        /stable-3\.17\s*default\s*quay-operator\.v3\.17\.4\s*5/,
      );
      await page.getByRole("tab", { name: "Bundles (152)" }).click();
      await page.locator("[data-testid=bundles] tbody tr").nth(151).waitFor();
      await page.getByRole("button", { name: "quay-operator.v3.17.4", exact: true }).click();
      const detail = page.locator("[data-testid=bundle-detail]");
      await detail.locator("h2", { hasText: "quay-operator.v3.17.4" }).waitFor();
      assert.ok((await detail.locator("td.mono", { hasText: "olm.package" }).count()) >= 1);
      await detail.getByRole("button", { name: "JSON" }).click();
      await detail.locator(".blob-text", { hasText: '"schema": "olm.bundle"' }).waitFor();
      const shown = (await detail.locator(".blob-text").textContent()) ?? "";
      assert.equal((JSON.parse(shown) as { name: string }).name, "quay-operator.v3.17.4");
      await detail.locator(".blob-bar").getByRole("button", { name: "Copy" }).click();
      await detail.getByRole("status").filter({ hasText: "Copied" }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);
    },
  );

  test("upgrade graph: laid out, edges of every kind, heads, click for details, keyboard", async () => {
    await page.goto(`${served.url}#/c/v4.20/p/infinispan?tab=graph&channel=stable`);
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    assert.equal(await page.locator("[data-testid=graph] g.node").count(), 44);
    assert.equal(await page.locator("[data-testid=graph] path.edge.replaces").count(), 34);
    assert.equal(await page.locator("[data-testid=graph] path.edge.skips").count(), 9);
    assert.equal(await page.locator("[data-testid=graph] path.edge.skipRange").count(), 92);
    assert.deepEqual(
      await page
        .locator("[data-testid=graph] g.node.head")
        .evaluateAll((ns) => ns.map((n) => n.getAttribute("data-node"))),
      ["infinispan-operator.v2.5.14"],
    );
    // fitted, the labels are readable: a version label is drawn at least 9 px high (44 bundles fitted whole
    // into the viewport drew them at about 6 px)
    const labelHeight = await page
      .locator('[data-node="infinispan-operator.v2.3.0"] text.ver')
      .evaluate((t) => t.getBoundingClientRect().height);
    assert.ok(labelHeight >= 9, `version label ${labelHeight.toFixed(1)} px high`);
    await page.locator('[data-node="infinispan-operator.v2.4.1"]').click();
    await page.locator("[data-testid=node-detail] h3", { hasText: "infinispan-operator.v2.4.1" }).waitFor();
    // keyboard: focus another bundle and press Enter
    await page.locator('[data-node="infinispan-operator.v2.5.14"]').focus();
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=node-detail] h3", { hasText: "infinispan-operator.v2.5.14" }).waitFor();
    assert.match((await page.locator("[data-testid=node-detail]").textContent()) ?? "", /Head ofstable/);
    // hiding skipRange edges lays the graph out again without them
    await page.locator("input[name=show-skipRange]").uncheck();
    await page.locator("[data-testid=graph]", { has: page.locator("path.edge.skips") }).waitFor();
    await page.waitForFunction(
      () =>
        document.querySelectorAll("[data-testid=graph] path.edge.skipRange").length === 0 &&
        document.querySelectorAll("[data-testid=graph] path.edge.replaces").length === 34,
    );
  });

  test("from version X: every upgrade path to the head is highlighted, with the fewest hops", async () => {
    await page.goto(`${served.url}#/c/v4.20/p/infinispan?tab=graph&channel=stable`);
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    await page.locator("select[name=from]").selectOption("infinispan-operator.v2.3.0");
    const paths = page.locator("[data-testid=paths]");
    await paths.waitFor();
    // 21: the fewest hops from 2.3.0 to 2.5.14 over replaces, skips and skipRange edges (checked
    // independently with a breadth-first search over the catalog's channel)
    assert.equal(await paths.locator("[data-testid=hops]").textContent(), "21");
    const text = (await paths.textContent()) ?? "";
    assert.match(
      text,
      new RegExp(
        /^From infinispan-operator\.v2\.3\.0 to head /.source +
          /infinispan-operator\.v2\.5\.14: 21 hops \(infinispan-operator\.v2\.3\.0 → /.source,
      ),
    );
    assert.equal((text.match(/→/g) ?? []).length, 21);
    // the graph marks the path in the render after the paths panel: wait for it, then count
    await page.waitForFunction(
      () =>
        document.querySelectorAll("[data-testid=graph] g.node.on-path").length >= 22 &&
        document.querySelectorAll("[data-testid=graph] path.edge.on-path").length >= 21,
    );
    assert.equal(await page.locator('[data-node="infinispan-operator.v2.3.0"].from').count(), 1);
    assert.match(await page.evaluate(() => location.hash), /from=infinispan-operator\.v2\.3\.0/);
  });

  test("exports: SVG download and the Mermaid text of `opcat render-graph`", async () => {
    await page.goto(`${served.url}#/c/v4.20/p/infinispan?tab=graph&channel=*`);
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export SVG" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), "infinispan.svg");
    const svg = readFileSync(await download.path(), "utf8");
    assert.match(svg, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg /);
    assert.match(svg, /infinispan-operator\.v2\.5\.14/);
    assert.match(svg, /<style>/);
    await page.getByRole("button", { name: "Mermaid" }).click();
    const pre = page.locator("[data-testid=mermaid] pre");
    await pre.waitFor();
    const cli = execFileSync(
      process.execPath,
      [join(REPO_ROOT, "bin", "opcat"), "render-graph", V420, "--package-name", "infinispan"],
      { encoding: "utf8", maxBuffer: 64 << 20 },
    );
    assert.equal(await pre.evaluate((e) => e.textContent), cli);
  });

  test("resolution: the resolver API's answer, linkable, and the explanation when it fails", async () => {
    await page.goto(`${served.url}#/resolve`);
    await page.locator("input[name=package]").fill("infinispan");
    await page.locator("input[name=channel]").fill("stable");
    await page.locator("select[name=catalog]").selectOption("v4.20");
    await page.getByRole("button", { name: "Resolve", exact: true }).click();
    const table = page.locator("[data-testid=resolved-bundles]");
    await table.waitFor();
    assert.match(
      (await table.locator("tbody tr").first().textContent()) ?? "",
      /^infinispan-operator\.v2\.5\.14\s*2\.5\.14\s*install\s*v4\.20 \/ stable/,
    );
    const link = await page.evaluate(() => location.hash);
    assert.match(link, /^#\/resolve\?package=infinispan&channel=stable&catalog=v4\.20/);
    // the same link, with a version range, resolves on opening
    await page.goto(
      `${served.url}#/resolve?package=infinispan&channel=stable&catalog=v4.20&version=${encodeURIComponent("<2.4.0")}`,
    );
    await page.locator("[data-testid=resolved-bundles] tbody tr", { hasText: "infinispan-operator.v2.3." }).waitFor();
    await page.goto(
      `${served.url}#/resolve?package=infinispan&catalog=v4.20&version=${encodeURIComponent(">=99.0.0")}`,
    );
    const res = page.locator("[data-testid=resolution].unresolved");
    await res.waitFor();
    assert.match((await res.getByRole("alert").first().textContent()) ?? "", /infinispan/);
    // the failed constraint drawn on the graph: no bundle of the package is in the range
    await res.locator("[data-testid=constraint-graph]").click();
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    assert.equal(
      await page.locator("[data-testid=range]").textContent(),
      "Version range >=99.0.0: no bundle of this graph is in it. Clear",
    );
    assert.equal(await page.locator("[data-testid=graph] g.node.in-range").count(), 0);
    // and a range that admits some: exactly the bundles whose version is in it are outlined
    await page.goto(
      `${served.url}#/c/v4.20/p/infinispan?tab=graph&channel=stable&range=${encodeURIComponent("<2.4.0")}`,
    );
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    // the hash changes within the page: the previous graph's "done" can still be seen; wait for this one's range
    await page.locator("[data-testid=graph] g.node.in-range").first().waitFor();
    const g = (await (
      await fetch(`${served.url}ui/api/catalogs/v4.20/packages/infinispan/graph?channel=stable`)
    ).json()) as { nodes: { name: string; version: string }[] };
    const want = g.nodes
      .filter((n) => /^(0|1|2\.[0-3])\./.test(n.version))
      .map((n) => n.name)
      .sort();
    assert.ok(want.length > 0);
    assert.deepEqual(
      (
        await page
          .locator("[data-testid=graph] g.node.in-range")
          .evaluateAll((ns) => ns.map((n) => n.getAttribute("data-node")))
      ).sort(),
      want,
    );
    // a range that does not parse is said so on the page, with the parser's reason
    await page.goto(`${served.url}#/c/v4.20/p/infinispan?tab=graph&channel=stable&range=${encodeURIComponent(">=x")}`);
    await page.locator("[data-testid=range][role=alert]", { hasText: 'Version range ">=x": ' }).waitFor();
  });

  test("template: rendered with the catalog as reuse source, with its graph and the diff", async () => {
    const detail = (await (await fetch(`${served.url}ui/api/catalogs/v4.20/packages/infinispan`)).json()) as {
      bundles: { name: string; image: string }[];
    };
    const head = detail.bundles.find((b) => b.name === "infinispan-operator.v2.5.14");
    assert.ok(head);
    const template = [
      "schema: olm.template.basic",
      "entries:",
      "  - schema: olm.package",
      "    name: infinispan",
      "    defaultChannel: stable",
      "  - schema: olm.channel",
      "    package: infinispan",
      "    name: stable",
      "    entries:",
      "      - name: infinispan-operator.v2.5.14",
      "  - schema: olm.bundle",
      `    image: ${head.image}`,
      "",
    ].join("\n");
    await page.goto(`${served.url}#/template`);
    await page.locator("select[name=catalog] option", { hasText: /^v4\.20$/ }).waitFor({ state: "attached" });
    await page.locator("select[name=catalog]").selectOption("v4.20");
    await page.locator("textarea[name=template]").fill(template);
    await page.getByRole("button", { name: "Render" }).click();
    const result = page.locator("[data-testid=render-result]");
    await result.locator("[role=status]").waitFor();
    assert.equal(
      await result.locator("[role=status]").textContent(),
      "1 × olm.package, 1 × olm.channel, 1 × olm.bundle",
    );
    assert.match(
      (await page.locator("[data-testid=render-mermaid]").textContent()) ?? "",
      /^graph LR\n[\s\S]*infinispan-operator\.v2\.5\.14/,
    );
    const diff = (await page.locator("[data-testid=render-diff]").textContent()) ?? "";
    assert.match(diff, /compared with the served catalog/);
    assert.match(diff, /− bundle infinispan-operator\.v2\.3\.0/);
    assert.doesNotMatch(diff, /\+ bundle/);
    // a reference the catalog does not have is an error with its code, not a crash
    await page.locator("textarea[name=template]").fill(template.replace(head.image, "example.com/nowhere/bundle:v1"));
    await page.getByRole("button", { name: "Render" }).click();
    await result.getByRole("alert").filter({ hasText: "example.com/nowhere/bundle:v1" }).waitFor();
  });

  test("themes: light and dark, remembered", async () => {
    await page.goto(`${served.url}#/catalogs`);
    await page.locator("[data-testid=catalogs]").waitFor();
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const before = await page.evaluate(() => document.documentElement.dataset.theme);
    const bgBefore = await bg();
    await page.locator("button.theme").click();
    await page.waitForFunction((b) => document.documentElement.dataset.theme !== b, before);
    assert.notEqual(await bg(), bgBefore);
    await page.reload();
    await page.locator("[data-testid=catalogs]").waitFor();
    assert.notEqual(await page.evaluate(() => document.documentElement.dataset.theme), before);
  });

  test("no script errors or CSP violations on any page", () => {
    assert.deepEqual(problems, []);
  });
});

describe("web UI with a malicious catalog", { skip: requireChromium().skip }, () => {
  let served: Served;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "opcat-ui-xss-"));

  before(async () => {
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" ` +
      `onload="window.__xss='icon-onload'"><script>window.__xss='icon-script'</script><rect ` +
      `width="10" height="10"/></svg>`;
    const evil = `<img src=x onerror="window.__xss='img'">`;
    const blobs = [
      {
        schema: "olm.package",
        name: "evil",
        defaultChannel: "stable",
        description:
          `# Evil\n\n<script>window.__xss='desc-script'</script>\n\n${evil}\n\n` +
          `[click me](javascript:window.__xss='link')\n\n<a href="javascript:window.__xss='a'">raw link</a>`,
        icon: { base64data: Buffer.from(svg).toString("base64"), mediatype: "image/svg+xml" },
      },
      { schema: "olm.channel", package: "evil", name: "stable", entries: [{ name: "evil.v1.0.0" }] },
      {
        schema: "olm.bundle",
        name: "evil.v1.0.0",
        package: "evil",
        image: "example.com/evil/bundle:v1.0.0",
        properties: [
          { type: "olm.package", value: { packageName: "evil", version: "1.0.0" } },
          {
            type: "olm.csv.metadata",
            value: {
              displayName: `${evil}Evil Operator`,
              description: `<script>window.__xss='csv'</script>${evil}`,
              keywords: [evil],
              provider: { name: `<svg onload="window.__xss='prov'">` },
              annotations: {
                description: `**Bold** claim with \`code\`, [a link](https://example.com/docs) and ${evil}`,
              },
            },
          },
        ],
        relatedImages: [{ name: evil, image: "example.com/evil/operand:v1" }],
      },
    ];
    mkdirSync(join(dir, "evil"));
    writeFileSync(join(dir, "evil", "catalog.json"), blobs.map((b) => JSON.stringify(b, null, 2)).join("\n"));
    served = await startServe([`evil=${dir}`]);
    browser = await launchBrowser();
    page = await openPage(await browser.newContext(), problems, provoked);
  });
  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const injected = (): Promise<{ xss: unknown; scripts: number; handlers: number; jsLinks: number }> =>
    page.evaluate(() => ({
      xss: (window as unknown as { __xss?: unknown }).__xss,
      scripts: document.querySelectorAll("#app script, #app iframe, #app object, #app embed").length,
      handlers: [...document.querySelectorAll("#app *")].filter((e) =>
        [...e.attributes].some((a) => a.name.startsWith("on")),
      ).length,
      jsLinks: [...document.querySelectorAll("#app a[href]")].filter(
        (a) => !/^(#|https?:|mailto:)/.test(a.getAttribute("href") ?? ""),
      ).length,
    }));

  test("one catalog: / opens its package list; catalog text is shown as text", async () => {
    await page.goto(served.url);
    await page.locator("[data-testid=counts]", { hasText: "1 of 1 packages" }).waitFor();
    assert.equal(await page.evaluate(() => location.hash), "#/c/evil");
    assert.match((await page.locator(".pkg-name").textContent()) ?? "", /^<img src=x onerror=.*Evil Operator$/);
    assert.deepEqual(await injected(), { xss: undefined, scripts: 0, handlers: 0, jsLinks: 0 });
    // the summary's Markdown is rendered inline; its raw HTML stays text
    const summary = page.locator("[data-testid=packages] .summary");
    assert.equal(await summary.locator("strong").textContent(), "Bold");
    assert.equal(await summary.locator("code").textContent(), "code");
    assert.equal(await summary.locator("a").getAttribute("href"), "https://example.com/docs");
    assert.equal(await summary.locator("a").getAttribute("rel"), "noopener noreferrer nofollow");
    assert.match((await summary.textContent()) ?? "", /^Bold claim with code, a link and <img src=x onerror=/);
  });

  test("package page: the Markdown description, icon and bundle cannot run script", async () => {
    await page.goto(`${served.url}#/c/evil/p/evil`);
    await page.locator(".markdown h1", { hasText: "Evil" }).waitFor();
    const md = (await page.locator(".markdown").textContent()) ?? "";
    assert.match(md, /<script>window\.__xss='desc-script'<\/script>/, "raw HTML is shown escaped");
    assert.match(md, /\[click me\]\(javascript:/, "a javascript: link is not made a link");
    // the icon loads as an image (where SVG scripts never run)
    await page.waitForFunction(() => {
      const img = document.querySelector("img.icon") as HTMLImageElement | null;
      return img?.complete && img.naturalWidth > 0;
    });
    await page.getByRole("tab", { name: "Bundles (1)" }).click();
    await page.getByRole("button", { name: "evil.v1.0.0", exact: true }).click();
    await page.locator("[data-testid=bundle-detail] h2").waitFor();
    // opening the icon URL directly is sandboxed too
    const icon = await page.request.get(`${served.url}ui/api/catalogs/evil/packages/evil/icon`);
    assert.match(icon.headers()["content-security-policy"] ?? "", /sandbox/);
    assert.deepEqual(await injected(), { xss: undefined, scripts: 0, handlers: 0, jsLinks: 0 });
  });

  test("no dialogs, script errors or CSP violations", () => {
    assert.deepEqual(problems, []);
  });
});

describe("web UI: the last reload's changes, drawn on the graph", { skip }, () => {
  let served: Served;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  // infinispan of v4.20, as JSON blobs, served with --watch
  const copy = new CatalogCopy(join(V420, "infinispan"));
  const HEAD = "infinispan-operator.v2.5.14";

  before(async () => {
    served = await startServe([`inf=${copy.dir}`, "--watch"]);
    browser = await launchBrowser();
    page = await openPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), problems, provoked);
  });
  after(async () => {
    await browser?.close();
    await served?.stop();
    copy.remove();
  });

  test("a reload that withdraws the channel head: the changes page and the graph of both revisions", async () => {
    await page.goto(`${served.url}#/catalogs`);
    await page.locator("[data-testid=catalogs] tbody tr").first().waitFor();
    assert.equal(await page.getByRole("link", { name: /changes since/ }).count(), 0);
    // the head is withdrawn: its bundle and its channel entries go
    const reloaded = served.waitForLog((e) => e.msg === "catalog loaded" && e.revision === 2);
    copy.withdraw(HEAD);
    await reloaded;
    await page.reload();
    await page.getByRole("link", { name: "changes since 1" }).click();
    const row = page.locator("[data-testid=changes] tbody tr");
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    assert.match(
      (await row.first().textContent()) ?? "",
      /^infinispan\s*changed\s*none\s*1: infinispan-operator\.v2\.5\.14/,
    );
    await row.first().getByRole("link", { name: "infinispan" }).click();
    await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
    assert.match(await page.evaluate(() => location.hash), /compare=previous/);
    assert.equal(await page.locator(`[data-testid=graph] g.node.change-removed[data-node="${HEAD}"]`).count(), 1);
    assert.equal(await page.locator("[data-testid=graph] g.node.change-added").count(), 0);
    assert.ok((await page.locator("[data-testid=graph] path.edge.change-removed").count()) > 0);
    assert.match(
      (await page.locator("[data-testid=compared]").textContent()) ?? "",
      /^Changes from revision 1 to 2: \+0 bundles, −1 bundles, \+0 edges, −\d+ edges/,
    );
  });

  test("no script errors or CSP violations", () => {
    assert.deepEqual(problems, []);
  });
});
