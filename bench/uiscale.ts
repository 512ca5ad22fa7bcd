/**
 * The web UI at scale, in a real browser (Debian's Chromium through playwright-core, as the UI tests
 * launch it) against a real `opcat serve` (bin/opcat, the built dist/ and dist/ui) on 127.0.0.1. Not a
 * test: it prints a Markdown table for docs/benchmarks.md. `BENCH_ONLY=uiscale npm run bench`, or
 * `node --import tsx bench/uiscale.ts [runs]`.
 *
 * Two generated catalogs:
 * - `scale`: 100,000 packages of one bundle each (keywords, provider, provided APIs, a summary);
 * - `desc`: one package whose description is 10 MB of Markdown (headings, paragraphs, lists, code).
 *
 * Figures (each the median of `runs` fresh tabs, the first visit after start-up beside it, which
 * also computes the server's per-revision summaries):
 * - package list shown: from asking for `#/c/scale` until the counts and the first rows are drawn,
 *   and the part of it after the list's data arrived (the first answer's last byte); then, in that
 *   tab, the page's JavaScript heap (used) and its DOM node count (Chrome's metrics);
 * - search: from typing a name (then a provided API) into the search box until the counts say how
 *   many of the 100,000 match and the first matching row is drawn;
 * - 10 MB description: from asking for the package page until the description's first heading is
 *   drawn and the page answers input (the next animation frame has painted).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, startServe, type Served } from "../test/ui/harness.js";
import { median } from "./shared.js";

// Browser globals for the functions that run in the page (bench/ is compiled without the DOM library).
declare function requestAnimationFrame(cb: () => void): number;

const runs = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
export const SCALE_PACKAGES = 100_000;

const pad = (i: number): string => String(i).padStart(6, "0");

/** `<dir>/catalog.json`: `n` packages `pkg-000000`…, one channel and one bundle each. */
export async function generateManyPackages(dir: string, n: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const out = createWriteStream(join(dir, "catalog.json"));
  for (let i = 0; i < n; i++) {
    const name = `pkg-${pad(i)}`;
    const bundle = `${name}.v1.0.${i % 7}`;
    const kind = `Thing${pad(i)}`;
    const blobs = [
      { schema: "olm.package", name, defaultChannel: "stable" },
      { schema: "olm.channel", package: name, name: "stable", entries: [{ name: bundle }] },
      {
        schema: "olm.bundle",
        package: name,
        name: bundle,
        image: `quay.example.com/scale/${name}-bundle@sha256:${i.toString(16).padStart(64, "0")}`,
        properties: [
          { type: "olm.package", value: { packageName: name, version: `1.0.${i % 7}` } },
          { type: "olm.gvk", value: { group: `${name}.example.com`, kind, version: "v1" } },
          {
            type: "olm.csv.metadata",
            value: {
              displayName: `Package ${pad(i)}`,
              provider: { name: `Provider ${i % 250}` },
              keywords: [`topic-${i % 100}`, i % 3 === 0 ? "database" : "network"],
              annotations: { description: `Operator number ${i}, generated for the UI at scale benchmark.` },
            },
          },
        ],
      },
    ];
    if (!out.write(blobs.map((b) => JSON.stringify(b)).join("\n") + "\n")) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
}

const LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ";

/** About `bytes` of Markdown: numbered sections of headings, paragraphs, a list and a code block. */
export function bigMarkdown(bytes: number): string {
  const parts: string[] = ["# Huge operator\n\nA description of ten megabytes.\n"];
  let size = parts[0].length;
  for (let i = 1; size < bytes; i++) {
    const s =
      `\n## Section ${i}\n\n` +
      `Paragraph ${i}: the operator manages **resources** of kind \`Thing${i}\`; ` +
      `see [the docs](https://example.com/${i}). ` +
      LOREM.repeat(8) +
      `\n\n- item ${i}.1\n- item ${i}.2 with *emphasis*\n- item ${i}.3\n\n` +
      "```yaml\napiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: thing-" +
      `${i}\nspec:\n  replicas: 3\n` +
      "```\n";
    parts.push(s);
    size += s.length;
  }
  return parts.join("");
}

/** `<dir>/catalog.json`: one package `huge` whose description is about 10 MB of Markdown. */
export function generateHugeDescription(dir: string, bytes = 10_000_000): void {
  mkdirSync(dir, { recursive: true });
  const blobs = [
    { schema: "olm.package", name: "huge", defaultChannel: "stable", description: bigMarkdown(bytes) },
    { schema: "olm.channel", package: "huge", name: "stable", entries: [{ name: "huge.v1.0.0" }] },
    {
      schema: "olm.bundle",
      package: "huge",
      name: "huge.v1.0.0",
      image: "quay.example.com/huge/bundle:v1.0.0",
      properties: [{ type: "olm.package", value: { packageName: "huge", version: "1.0.0" } }],
    },
  ];
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

const ms = (x: number): string => `${x.toFixed(0)} ms`;
const nextFrame = (p: Page): Promise<void> =>
  p.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

/** The page's used JS heap and DOM node count, from Chrome's performance metrics. */
async function metrics(ctx: BrowserContext, page: Page): Promise<{ heapMb: number; nodes: number }> {
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("Performance.enable");
  const { metrics: m } = await cdp.send("Performance.getMetrics");
  const get = (n: string): number => m.find((x) => x.name === n)?.value ?? NaN;
  await cdp.detach();
  return { heapMb: get("JSHeapUsedSize") / 1e6, nodes: get("Nodes") };
}

/** Waits until the list is drawn; the time since the first package list answer's last byte arrived. */
async function listShown(page: Page, timeout: number): Promise<number> {
  await page.locator("[data-testid=counts]", { hasText: `of ${SCALE_PACKAGES} packages` }).waitFor({ timeout });
  await page.locator("[data-testid=packages] .pkg-name").first().waitFor({ timeout });
  await nextFrame(page);
  return page.evaluate(() => {
    const answers = performance
      .getEntriesByType("resource")
      .filter((e) => e.name.includes("/ui/api/catalogs/scale/packages")) as unknown as { responseEnd: number }[];
    return performance.now() - Math.min(...answers.map((e) => e.responseEnd));
  });
}

async function searchTime(page: Page, text: string, expect: number, timeout: number): Promise<number> {
  const box = page.getByRole("searchbox", { name: "search packages" });
  const t0 = performance.now();
  await box.fill(text);
  await page
    .locator("[data-testid=counts]", { hasText: `${expect} of ${SCALE_PACKAGES} packages` })
    .waitFor({ timeout });
  await page.locator("[data-testid=packages] .pkg-name").first().waitFor({ timeout });
  await nextFrame(page);
  return performance.now() - t0;
}

interface Row {
  label: string;
  first: number;
  med: number;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "opcat-bench-uiscale-"));
  let served: Served | undefined;
  let browser: Browser | undefined;
  const timeout = Number(process.env.BENCH_UI_TIMEOUT ?? 180_000);
  try {
    await generateManyPackages(join(work, "scale"), SCALE_PACKAGES);
    generateHugeDescription(join(work, "desc"));
    const t0 = performance.now();
    served = await startServe([`scale=${join(work, "scale")}`, `desc=${join(work, "desc")}`]);
    const loadMs = performance.now() - t0;
    browser = await launchBrowser();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const base = served.url;
    const rows: Row[] = [];
    let heap: { heapMb: number; nodes: number }[] = [];
    const searches: Record<string, number[]> = { name: [], api: [] };
    const afterData: number[] = [];
    const one = async (first: boolean): Promise<number> => {
      const page = await ctx.newPage();
      page.setDefaultTimeout(timeout);
      const t = performance.now();
      await page.goto(`${base}#/c/scale`);
      afterData.push(await listShown(page, timeout));
      const shown = performance.now() - t;
      heap.push(await metrics(ctx, page));
      if (!first) {
        searches.name.push(await searchTime(page, "pkg-04242", 10, timeout));
        searches.api.push(await searchTime(page, "Thing012345.v1", 1, timeout));
      }
      await page.close();
      return shown;
    };
    const firstList = await one(true);
    const firstAfterData = afterData[0];
    heap = [];
    afterData.length = 0;
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await one(false));
    rows.push({ label: `package list shown: ${SCALE_PACKAGES} packages`, first: firstList, med: median(xs) });
    rows.push({
      label: "package list shown: of which after its data arrived",
      first: firstAfterData,
      med: median(afterData),
    });

    const desc = async (): Promise<number> => {
      const page = await ctx.newPage();
      page.setDefaultTimeout(timeout);
      const t = performance.now();
      await page.goto(`${base}#/c/desc/p/huge`);
      await page.locator(".markdown h1", { hasText: "Huge operator" }).waitFor({ timeout });
      await nextFrame(page);
      const d = performance.now() - t;
      await page.close();
      return d;
    };
    const firstDesc = await desc();
    const ds: number[] = [];
    for (let i = 0; i < runs; i++) ds.push(await desc());
    rows.push({ label: "package page with a 10 MB description: description drawn", first: firstDesc, med: median(ds) });

    console.log(`\n### Web UI at scale in Chromium (\`bench/uiscale.ts\`, median of ${runs}; first visit beside it)\n`);
    console.log(`Server start with both catalogs loaded: ${ms(loadMs)}.\n`);
    console.log("| what (until drawn and answering input) | first visit | median |");
    console.log("|---|---:|---:|");
    for (const r of rows) console.log(`| ${r.label} | ${ms(r.first)} | ${ms(r.med)} |`);
    console.log(`| search by name ("pkg-04242", 10 of ${SCALE_PACKAGES}) | — | ${ms(median(searches.name))} |`);
    console.log(
      `| search by provided API ("Thing012345.v1", 1 of ${SCALE_PACKAGES}) | — | ${ms(median(searches.api))} |`,
    );
    const h = median(heap.map((x) => x.heapMb));
    const nodes = median(heap.map((x) => x.nodes));
    console.log(`\nPackage list page: JS heap used ${h.toFixed(1)} MB, ${nodes} DOM nodes (medians, after a GC).`);
  } finally {
    await browser?.close();
    await served?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

// run when started (the generators above can be imported without running the benchmark)
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
