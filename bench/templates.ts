/**
 * Template rendering benchmark (not a test): every community template (operators/<pkg>/ci.yaml
 * fbc.catalog_mapping) rendered with --reuse of its committed catalog, as templates/s and MB/s of
 * output, cold (first pass in the process) and warm (second pass).
 * Run: node --import tsx bench/templates.ts
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadText } from "../src/fbc/load.js";
import { normalizeForRender } from "../src/fbc/render.js";
import { formatCatalog } from "../src/fbc/write.js";
import { renderTemplate, reuseSource } from "../src/template/index.js";
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
    const conf = parseGoYamlDocument(readFileSync(ci, "utf8")) as { fbc?: { catalog_mapping?: { template_name?: string; catalog_names?: string[] }[] } } | null;
    for (const m of conf?.fbc?.catalog_mapping ?? []) {
      const tpl = join(community, "operators", pkg, "catalog-templates", m.template_name ?? "");
      if (!m.template_name || !existsSync(tpl)) continue;
      for (const version of m.catalog_names ?? []) {
        const cat = join(community, "catalogs", version, pkg, "catalog.yaml");
        if (!existsSync(cat)) continue;
        const minor = Number(/^v4\.(\d+)$/.exec(version)?.[1] ?? 0);
        out.push({ label: `${pkg}/${m.template_name} → ${version}`, template: readFileSync(tpl, "utf8"), catalog: readFileSync(cat, "utf8"), migrateLevel: minor >= 17 ? "bundle-object-to-csv-metadata" : undefined });
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
  console.log(`${list.length} (template, catalog) pairs; each pass loads the committed catalog as the --reuse source, renders, migrates and writes YAML`);
  for (const name of ["cold", "warm"]) {
    const r = await pass(list);
    console.log(`${name.padEnd(5)} ${r.ms.toFixed(0).padStart(6)} ms  ${((list.length / r.ms) * 1000).toFixed(1).padStart(6)} templates/s  ${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(1)} MB/s of output  (${r.ok} rendered)`);
  }
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}
