/**
 * The web UI's speed in a real browser (Debian's Chromium through playwright-core) against a real
 * `opcat serve` (bin/opcat, the built dist/ and dist/ui) on 127.0.0.1. Not a test: it prints a
 * Markdown table for docs/benchmarks.md. `BENCH_ONLY=ui npm run bench`, or
 * `node --import tsx bench/ui.ts [runs]`.
 *
 * Each figure is the time from asking for a page (a fresh tab, the app's files in the browser's
 * cache as for a user who has opened the UI before; "first" rows: the first visit after the server
 * started, which also computes the server's per-revision summaries) until what the page is about is
 * on screen and answers input:
 * - the package list of v4.16 and v4.20 merged into one catalog (every package row drawn);
 * - the package page of the community package with the most bundles (channels table drawn) and its
 *   upgrade graph of all channels (laid out and drawn);
 * - a generated 300-bundle package (one channel: replaces chain, a skipped release in every ten,
 *   skipRange over the last five minors; two shorter channels): graph laid out, then the time per
 *   frame while zooming and panning (30 wheel and 30 arrow-key steps, each waited on until the next
 *   animation frame has painted).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, startServe, type Served } from "../test/ui/harness.js";
import { mergeCommunityCatalogs } from "./generate.js";

// Browser globals for the functions that run in the page (bench/ is compiled without the DOM library).
declare const document: { querySelectorAll(s: string): { length: number } };
declare function requestAnimationFrame(cb: () => void): number;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const community = join(process.env.OPCAT_SHARED ?? resolve(root, "..", "shared"), "data", "community");
const runs = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 7);

function generate300(dir: string): void {
  const pkg = "big";
  const n = 300;
  const name = (i: number): string => `big-operator.v1.${i}.0`;
  const blobs: unknown[] = [{ schema: "olm.package", name: pkg, defaultChannel: "stable" }];
  const stable = [];
  for (let i = 0; i < n; i++) {
    const e: Record<string, unknown> = { name: name(i) };
    // every tenth release skips the one before it (a pulled release) and replaces the one before that
    if (i % 10 === 5) {
      e.replaces = name(i - 2);
      e.skips = [name(i - 1)];
    } else if (i > 0) e.replaces = name(i - 1);
    if (i > 5) e.skipRange = `>=1.${i - 5}.0 <1.${i}.0`;
    stable.push(e);
  }
  blobs.push({ schema: "olm.channel", package: pkg, name: "stable", entries: stable });
  blobs.push({
    schema: "olm.channel",
    package: pkg,
    name: "fast",
    entries: stable.slice(200).map((e, i) => (i === 0 ? { name: e.name } : e)),
  });
  blobs.push({
    schema: "olm.channel",
    package: pkg,
    name: "candidate",
    entries: stable.slice(250).map((e, i) => (i === 0 ? { name: e.name } : e)),
  });
  for (let i = 0; i < n; i++) {
    blobs.push({
      schema: "olm.bundle",
      package: pkg,
      name: name(i),
      image: `quay.example.com/big/bundle@sha256:${i.toString(16).padStart(64, "0")}`,
      properties: [
        { type: "olm.package", value: { packageName: pkg, version: `1.${i}.0` } },
        { type: "olm.gvk", value: { group: "big.example.com", kind: "Big", version: "v1" } },
      ],
      relatedImages: [
        { name: "operator", image: `quay.example.com/big/operator@sha256:${i.toString(16).padStart(64, "a")}` },
      ],
    });
  }
  mkdirSync(join(dir, pkg), { recursive: true });
  writeFileSync(join(dir, pkg, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number): string => `${x.toFixed(0)} ms`;

/** Time from opening `url` in a fresh tab until `ready` resolves. */
async function timed(ctx: BrowserContext, url: string, ready: (p: Page) => Promise<unknown>): Promise<number> {
  const page = await ctx.newPage();
  page.setDefaultTimeout(60_000);
  const t0 = performance.now();
  await page.goto(url);
  await ready(page);
  const t = performance.now() - t0;
  await page.close();
  return t;
}

async function frames(page: Page, step: () => Promise<void>, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await step();
    await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
    out.push(performance.now() - t0);
  }
  return out;
}

const work = mkdtempSync(join(tmpdir(), "opcat-bench-ui-"));
let served: Served | undefined;
let browser: Browser | undefined;
try {
  const merged = join(work, "merged");
  await mergeCommunityCatalogs(community, merged, "json");
  const big = join(work, "big");
  generate300(big);
  served = await startServe([`community=${merged}`, `big=${big}`]);
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const base = served.url;

  // the package with the most bundles
  const list = (await (await fetch(`${base}ui/api/catalogs/community/packages`)).json()) as {
    packages: { name: string; bundles: number }[];
  };
  const largest = [...list.packages].sort((a, b) => b.bundles - a.bundles)[0];
  const total = list.packages.length;

  const rows: [string, number, number][] = [];
  async function measure(label: string, url: string, ready: (p: Page) => Promise<unknown>): Promise<void> {
    const first = await timed(ctx, url, ready);
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await timed(ctx, url, ready));
    rows.push([label, first, median(xs)]);
  }

  await measure(`catalog list: v4.16+v4.20 merged, ${total} packages`, `${base}#/c/community`, (p) =>
    p.waitForFunction((n) => document.querySelectorAll("[data-testid=packages] > li").length === n, total),
  );
  await measure(
    `package page: ${largest.name} (${largest.bundles} bundles)`,
    `${base}#/c/community/p/${largest.name}`,
    (p) => p.locator("[data-testid=channels] tbody tr").first().waitFor(),
  );
  await measure(`its upgrade graph, all channels`, `${base}#/c/community/p/${largest.name}?tab=graph&channel=*`, (p) =>
    p.locator("[data-testid=graph-content][data-layout=done]").waitFor(),
  );
  await measure("300-bundle package: upgrade graph of all channels", `${base}#/c/big/p/big?tab=graph&channel=*`, (p) =>
    p.locator("[data-testid=graph-content][data-layout=done]").waitFor(),
  );

  // fluid: frame times while zooming and panning the 300-bundle graph
  const page = await ctx.newPage();
  await page.goto(`${base}#/c/big/p/big?tab=graph&channel=*`);
  await page.locator("[data-testid=graph-content][data-layout=done]").waitFor();
  const svg = page.locator("[data-testid=graph]");
  const box = await svg.boundingBox();
  if (!box) throw new Error("graph not drawn");
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const wheel = await frames(page, () => page.mouse.wheel(0, -120), 30);
  await svg.focus();
  const pan = await frames(page, () => page.keyboard.press("ArrowLeft"), 30);
  const edges = await page.evaluate(() => document.querySelectorAll("[data-testid=graph] path.edge").length);
  const nodes = await page.evaluate(() => document.querySelectorAll("[data-testid=graph] g.node").length);

  console.log(`\n### Web UI in Chromium (\`bench/ui.ts\`, median of ${runs}; first visit after start-up beside it)\n`);
  console.log("| page (until drawn and answering input) | first visit | median |");
  console.log("|---|---:|---:|");
  for (const [label, first, med] of rows) console.log(`| ${label} | ${ms(first)} | ${ms(med)} |`);
  console.log(
    `\n300-bundle graph (${nodes} nodes, ${edges} edges): zoom step median ` +
      `${ms(median(wheel))} (max ${ms(Math.max(...wheel))}), pan step median ` +
      `${ms(median(pan))} (max ${ms(Math.max(...pan))}), each until the next frame has painted.`,
  );
} finally {
  await browser?.close();
  await served?.stop();
  rmSync(work, { recursive: true, force: true });
}
