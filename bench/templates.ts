/**
 * Template rendering benchmark (not a test):
 * 1. every community template (operators/<pkg>/ci.yaml fbc.catalog_mapping) rendered with --reuse
 *    of its committed catalog, as templates/s and MB/s of output, cold (first pass in the process)
 *    and warm (second pass);
 * 2. a semver template of N (default 500) bundles built by opcat and pushed to a local Debian
 *    docker-registry on 127.0.0.1: cold (empty image cache), warm (tags re-resolved, layers from
 *    the cache) and with --reuse of the previous output (digest-pinned references, nothing pulled).
 * Run: node --import tsx bench/templates.ts [N]
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadText } from "../src/fbc/load.js";
import { normalizeForRender } from "../src/fbc/render.js";
import { formatCatalog } from "../src/fbc/write.js";
import { buildBundleImage, mapPool, pushImage, RegistryClient } from "../src/image/index.js";
import { fallbackSource, imageSource, renderedSource, renderTemplate, reuseSource } from "../src/template/index.js";
import { writeBundleDir } from "../src/template/testdata/bundledir.js";
import { requireTools, startDockerRegistry } from "../test/image/servers.js";
import { parseGoYamlDocument } from "../src/yaml/index.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const community = join(process.env.OPCAT_SHARED ?? resolve(root, "..", "shared"), "data", "community");

interface Pair {
  label: string;
  template: string;
  catalog: string;
  migrateLevel?: string;
}

function pairs(): Pair[] {
  const out: Pair[] = [];
  for (const pkg of readdirSync(join(community, "operators")).sort()) {
    const ci = join(community, "operators", pkg, "ci.yaml");
    if (!existsSync(ci)) continue;
    const conf = parseGoYamlDocument(readFileSync(ci, "utf8")) as {
      fbc?: { catalog_mapping?: { template_name?: string; catalog_names?: string[] }[] };
    } | null;
    for (const m of conf?.fbc?.catalog_mapping ?? []) {
      const tpl = join(community, "operators", pkg, "catalog-templates", m.template_name ?? "");
      if (!m.template_name || !existsSync(tpl)) continue;
      for (const version of m.catalog_names ?? []) {
        const cat = join(community, "catalogs", version, pkg, "catalog.yaml");
        if (!existsSync(cat)) continue;
        const minor = Number(/^v4\.(\d+)$/.exec(version)?.[1] ?? 0);
        out.push({
          label: `${pkg}/${m.template_name} → ${version}`,
          template: readFileSync(tpl, "utf8"),
          catalog: readFileSync(cat, "utf8"),
          migrateLevel: minor >= 17 ? "bundle-object-to-csv-metadata" : undefined,
        });
      }
    }
  }
  return out;
}

async function pass(list: Pair[]): Promise<{ ms: number; ok: number; bytes: number }> {
  const t0 = performance.now();
  let ok = 0;
  let bytes = 0;
  for (const p of list) {
    const reuse = loadText(p.catalog, p.label).config;
    try {
      const cfg = await renderTemplate(p.template, reuseSource(reuse, { reuseTags: true }));
      normalizeForRender(cfg, { migrateLevel: p.migrateLevel });
      bytes += formatCatalog(cfg, "yaml").length;
      ok++;
    } catch {
      // templates ahead of their catalog (see src/template/conformance.test.ts) still count as work done
    }
  }
  return { ms: performance.now() - t0, ok, bytes };
}

if (!existsSync(join(community, "operators"))) {
  console.log(`community data not found at ${community}: nothing to measure`);
} else {
  const list = pairs();
  console.log(
    `${list.length} (template, catalog) pairs; each pass loads the committed ` +
      `catalog as the --reuse source, renders, migrates and writes YAML`,
  );
  for (const name of ["cold", "warm"]) {
    const r = await pass(list);
    console.log(
      `${name.padEnd(5)} ${r.ms.toFixed(0).padStart(6)} ms  ` +
        `${((list.length / r.ms) * 1000).toFixed(1).padStart(6)} templates/s  ` +
        `${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(1)} MB/s of output  (${r.ok} rendered)`,
    );
  }
}

const N = Number(process.argv[2] ?? 500);
const missing = requireTools("docker-registry");
if (missing) {
  console.log(`\nsemver template of ${N} pulled bundles skipped: ${missing}`);
} else {
  const work = mkdtempSync(join(tmpdir(), "opcat-bench-templates-"));
  const reg = await startDockerRegistry(join(work, "reg"));
  try {
    const versions = Array.from(
      { length: N },
      (_, i) => `${1 + Math.floor(i / 100)}.${Math.floor(i / 10) % 10}.${i % 10}`,
    );
    const client = new RegistryClient({ useHttp: true });
    let t0 = performance.now();
    const digests = await mapPool(versions, 4, async (v) => {
      const img = buildBundleImage(writeBundleDir(join(work, "bundles", v), "benchop", v));
      return pushImage(img, `${reg.host}/bench/benchop-bundle:v${v}`, { client });
    });
    client.close();
    console.log(`\n${N} bundle images built and pushed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const template = (refs: string[]): string =>
      `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n` +
      `stable:\n  bundles:\n${refs.map((r) => `  - image: ${r}\n`).join("")}`;
    const byTag = template(versions.map((v) => `${reg.host}/bench/benchop-bundle:v${v}`));
    const byDigest = template(digests); // pushImage returns the digest-pinned reference
    const cache = join(work, "cache");
    const run = async (name: string, text: string, reuse?: string): Promise<string> => {
      const pull = renderedSource(imageSource({ useHttp: true, cacheDir: cache, parallel: 4 }));
      const src = reuse ? fallbackSource(reuseSource(loadText(reuse, "previous.yaml").config), pull) : pull;
      t0 = performance.now();
      const cfg = await renderTemplate(text, src);
      normalizeForRender(cfg);
      const out = formatCatalog(cfg, "yaml");
      const ms = performance.now() - t0;
      console.log(
        `${name.padEnd(50)} ${ms.toFixed(0).padStart(6)} ms  ${((N / ms) * 1000).toFixed(0).padStart(5)} ` +
          `bundles/s  (${cfg.bundles.length} bundles, ${cfg.channels.length} channels)`,
      );
      return out;
    };
    await run("semver by tag, cold (empty cache)", byTag);
    await run("semver by tag, warm (tags re-resolved)", byTag);
    const previous = await run("semver by digest, warm cache", byDigest);
    await run("semver by digest, --reuse of the previous output", byDigest, previous);
  } finally {
    await reg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
