/**
 * The web UI at scale in a real browser (Debian's Chromium through playwright-core) against a real
 * `opcat serve` of generated catalogs: a list of 2,000 packages drawn virtualised (only the cards near
 * the viewport are in the page, every one reachable by scrolling), searched by the server with counts,
 * used with the keyboard; a long Markdown description drawn a part at a time (fenced code kept whole),
 * and a long blob cut with a button for the rest. Behaviour only: the timings are bench/uiscale.ts's.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openPage, requireChromium, startServe, type Served } from "./harness.js";

// Browser globals, for the functions that run in the page (this file is compiled without the DOM library).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;

const skip = requireChromium().skip;
const N = 2000;
const pad = (i: number): string => String(i).padStart(4, "0");

function writeCatalog(dir: string, blobs: unknown[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

function manyPackages(dir: string): void {
  const blobs: unknown[] = [];
  for (let i = 0; i < N; i++) {
    const name = `pkg-${pad(i)}`;
    blobs.push(
      { schema: "olm.package", name, defaultChannel: "stable" },
      { schema: "olm.channel", package: name, name: "stable", entries: [{ name: `${name}.v1.0.0` }] },
      {
        schema: "olm.bundle",
        package: name,
        name: `${name}.v1.0.0`,
        image: `quay.example.com/many/${name}:v1.0.0`,
        properties: [
          { type: "olm.package", value: { packageName: name, version: "1.0.0" } },
          { type: "olm.gvk", value: { group: "example.com", kind: `Kind${pad(i)}`, version: "v1" } },
          { type: "olm.csv.metadata", value: { keywords: [`topic-${i % 7}`] } },
        ],
      },
    );
  }
  writeCatalog(dir, blobs);
}

const LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ";

/** About 300 KB of Markdown with a fenced block (holding blank lines) where the first part would end. */
function longDescription(): string {
  const paragraphs = (n: number, tag: string): string =>
    Array.from({ length: n }, (_, i) => `Paragraph ${tag}-${i}. ${LOREM.repeat(6)}\n\n`).join("");
  const fence =
    "```\nfence-start\n" + Array.from({ length: 400 }, (_, i) => `line ${i}\n\n`).join("") + "fence-end\n```\n\n";
  let text = "# Long operator\n\n" + paragraphs(28, "a"); // ~14 KB
  text += fence; // crosses 16 KB, the size of a part
  text += "part-two-marker\n\n" + paragraphs(500, "b") + "the-end-marker\n";
  return text;
}

function longPackage(dir: string): void {
  writeCatalog(dir, [
    { schema: "olm.package", name: "long", defaultChannel: "stable", description: longDescription() },
    { schema: "olm.channel", package: "long", name: "stable", entries: [{ name: "long.v1.0.0" }] },
    {
      schema: "olm.bundle",
      package: "long",
      name: "long.v1.0.0",
      image: "quay.example.com/long/bundle:v1.0.0",
      properties: [{ type: "olm.package", value: { packageName: "long", version: "1.0.0" } }],
    },
  ]);
}

describe("web UI at scale in Chromium", { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), "opcat-ui-scale-"));
  let served: Served;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const counts = (text: string) => page.locator("[data-testid=counts]", { hasText: text }).waitFor();
  const cards = () => page.locator("[data-testid=packages] > li").count();

  before(async () => {
    manyPackages(join(work, "many"));
    longPackage(join(work, "long"));
    served = await startServe([`many=${join(work, "many")}`, `long=${join(work, "long")}`]);
    browser = await launchBrowser();
    page = await openPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), problems);
  });
  after(async () => {
    await browser?.close();
    await served?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test("2,000 packages: counts, the cards near the viewport drawn, every card reachable by scrolling", async () => {
    await page.goto(`${served.url}#/c/many`);
    await counts(`${N} of ${N} packages · ${N} bundles`);
    await page.locator(".pkg-name", { hasText: "pkg-0000" }).waitFor();
    const drawn = await cards();
    assert.ok(drawn > 0 && drawn < 200, `${drawn} cards drawn`);
    // the list is as tall as all of its cards
    const height = await page.evaluate(() => document.querySelector("[data-testid=packages]").offsetHeight);
    assert.ok(height > (N / 3) * 100, `list height ${height}`);
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.locator(".pkg-name", { hasText: `pkg-${pad(N - 1)}` }).waitFor();
    assert.equal(await page.locator(".pkg-name", { hasText: "pkg-0000" }).count(), 0);
    assert.ok((await cards()) < 200);
    // the middle, fetched as it scrolls into view
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
    await page
      .locator(".pkg-name", { hasText: /^pkg-09\d\d$/ })
      .first()
      .waitFor();
    assert.equal(await page.locator("[data-testid=packages] > li[aria-busy=true]").count(), 0);
  });

  test("search by name, keyword and provided API, answered by the server with counts", async () => {
    await page.goto(`${served.url}#/c/many`);
    const search = page.getByRole("searchbox", { name: "search packages" });
    await search.fill("pkg-01");
    await counts(`100 of ${N} packages · 100 bundles`);
    assert.equal(await cards(), 100);
    await page.locator("select[name=in]").selectOption("keyword");
    await search.fill("topic-3");
    await counts(`286 of ${N} packages`);
    assert.equal(await cards(), 286);
    await page.locator("select[name=in]").selectOption("api");
    await search.fill("Kind1234.v1");
    await counts(`1 of ${N} packages`);
    assert.deepEqual(await page.locator("[data-testid=packages] .pkg-name").allTextContents(), ["pkg-1234"]);
    await page.locator("select[name=in]").selectOption("name");
    await counts(`0 of ${N} packages`);
    // cleared: the whole list again, virtualised
    await search.fill("");
    await counts(`${N} of ${N} packages`);
    assert.ok((await cards()) < 200);
  });

  test("keyboard: from the search box to the first card, on through the cards, into a package", async () => {
    await page.goto(`${served.url}#/c/many`);
    await counts(`${N} of ${N} packages`);
    // the list settled (its first page drawn, nothing more loading): a card drawn again while focused
    // would hand the focus back to the page
    await page.getByRole("link", { name: "pkg-0000", exact: true }).waitFor();
    await page.waitForLoadState("networkidle");
    await page.getByRole("searchbox", { name: "search packages" }).focus();
    await page.keyboard.press("Tab"); // the field selector
    await page.keyboard.press("Tab"); // the first card's link
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "pkg-0000");
    // Tab goes on from card to card past the cards first drawn (the list scrolls, more are drawn); at
    // a person's pace: each key after the page has drawn the frame the last one scrolled to (a key
    // pressed before the next cards are drawn leaves the list, as in any virtualised list)
    const frame = () =>
      page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab");
      await frame();
    }
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "pkg-0060");
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Shift+Tab");
      await frame();
    }
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "pkg-0000");
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=default-channel]", { hasText: "stable" }).waitFor();
    assert.match(await page.evaluate(() => window.location.hash), /#\/c\/many\/p\/pkg-0000/);
  });

  test("a long description: drawn a part at a time, fenced code kept whole, the rest on demand", async () => {
    await page.goto(`${served.url}#/c/long/p/long`);
    await page.locator(".markdown h1", { hasText: "Long operator" }).waitFor();
    const more = page.locator(".markdown button.more");
    assert.match((await more.textContent()) ?? "", /^Show more \(\d+ KB of \d+ KB left\)$/);
    const text = (): Promise<string> => page.locator(".markdown").evaluate((e) => e.textContent ?? "");
    assert.doesNotMatch(await text(), /the-end-marker/);
    // the fenced block that crosses the first part's size is one block
    const pre = (await page.locator(".markdown pre", { hasText: "fence-start" }).textContent()) ?? "";
    assert.match(pre, /fence-end/);
    assert.equal(await page.locator(".markdown-part").count(), 1);
    await more.click();
    await page.locator(".markdown-part").nth(1).waitFor();
    // every part, by the button (scrolling near the end draws the next one too: the button may go
    // while it is being clicked, so a click that finds it gone is tried again only if it is there)
    for (let i = 0; i < 60 && (await more.count()) > 0; i++) await more.click({ timeout: 3000 }).catch(() => {});
    assert.equal(await more.count(), 0);
    assert.match(await text(), /part-two-marker[\s\S]*the-end-marker/);
  });

  test("a long blob: made when opened, cut with a button for the rest", async () => {
    await page.goto(`${served.url}#/c/long/p/long`);
    await page.locator(".markdown h1").waitFor();
    assert.equal(await page.locator(".blob .blob-text").count(), 0);
    await page.locator("summary", { hasText: "Package blob" }).click();
    const blob = page.locator(".blob .blob-text");
    await blob.waitFor();
    assert.doesNotMatch((await blob.textContent()) ?? "", /the-end-marker/);
    await page.getByRole("button", { name: /^Show all \(/ }).click();
    await page.locator(".blob .blob-text", { hasText: "the-end-marker" }).waitFor();
  });

  test("no dialogs, script errors or CSP violations", () => {
    assert.deepEqual(problems, []);
  });
});
