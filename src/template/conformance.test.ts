/**
 * Conformance on real data: every (template, catalog version) pair of the community operators
 * (operators/<pkg>/ci.yaml `fbc.catalog_mapping`) whose rendered catalog is present is rendered
 * with `--reuse` of that very catalog and compared byte for byte with it. The community pipeline
 * renders catalogs v4.17 and later with `--migrate-level bundle-object-to-csv-metadata`.
 * Templates that are ahead of their catalog (they list an image the catalog does not have) are
 * reported separately; any other difference fails.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../fbc/errors.js";
import { loadText } from "../fbc/load.js";
import { normalizeForRender } from "../fbc/render.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { formatCatalog } from "../fbc/write.js";
import { parseGoYamlDocument } from "../yaml/index.js";
import { renderTemplate, reuseSource } from "./index.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.OPCAT_SHARED ?? resolve(REPO, "..", "shared");
const COMMUNITY = join(SHARED, "data", "community");

function available(): false | string {
  if (existsSync(join(COMMUNITY, "operators")) && existsSync(join(COMMUNITY, "catalogs"))) return false;
  const msg = `real data not found at ${COMMUNITY} (set OPCAT_SHARED to the shared/ directory)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return msg;
}

interface Mapping {
  template_name?: string;
  type?: string;
  catalog_names?: string[];
}

/** Catalog versions the pipeline renders with the csv-metadata migration (v4.17 and later). */
function migrateLevelFor(version: string): string | undefined {
  const m = /^v(\d+)\.(\d+)$/.exec(version);
  if (!m) return undefined;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > 4 || (maj === 4 && min >= 17) ? "bundle-object-to-csv-metadata" : undefined;
}

/**
 * Semver catalogs committed before opm set the package description and icon from the default
 * channel head (operator-registry #1933, March 2026): identical once those two are dropped.
 * Catalogs rendered before opm v1.57 also linked minor versions differently (the replaced entry
 * was listed in `skips` too, operator-registry #1749); those are recognised from the committed
 * entries: every replaced name also skipped.
 */
function olderOpm(cfg: DeclarativeConfig, committed: string): string | undefined {
  const noMeta: DeclarativeConfig = {
    ...cfg,
    packages: cfg.packages.map(({ icon: _icon, ...p }) => ({ ...p, description: "" })),
  };
  if (formatCatalog(noMeta, "yaml") === committed)
    return "no package description/icon (opm before operator-registry #1933)";
  const old = loadText(committed, "committed.yaml").config;
  const legacyLinks = old.channels.every((c) =>
    (c.entries ?? []).every((e) => e.replaces === "" || e.skips.includes(e.replaces)),
  );
  const sameBundles =
    JSON.stringify(old.bundles.map((b) => b.name).sort()) === JSON.stringify(cfg.bundles.map((b) => b.name).sort());
  const sameChannels =
    JSON.stringify(old.channels.map((c) => [c.name, (c.entries ?? []).map((e) => e.name)])) ===
    JSON.stringify(noMeta.channels.map((c) => [c.name, (c.entries ?? []).map((e) => e.name)]));
  if (
    legacyLinks &&
    sameBundles &&
    sameChannels &&
    old.packages[0]?.defaultChannel === cfg.packages[0]?.defaultChannel
  ) {
    const p = old.packages[0];
    const pkgNote = `committed package has ${p?.description ? "a" : "no"} description and ${p?.icon ? "an" : "no"} icon`;
    return `same channels, entries and default channel; edges linked as opm < v1.57 did (replaced entry also skipped, operator-registry #1749); ${pkgNote}`;
  }
  return undefined;
}

const TYPES: Record<string, string> = { "olm.template.basic": "basic", "olm.semver": "semver" };

const skip = available();
test("community templates render byte-identical to their committed catalogs (--reuse)", { skip }, async (t) => {
  let total = 0;
  let identical = 0;
  const ahead: string[] = [];
  const failures: string[] = [];
  const olderOpmPairs: string[] = [];
  for (const pkg of readdirSync(join(COMMUNITY, "operators")).sort()) {
    const ci = join(COMMUNITY, "operators", pkg, "ci.yaml");
    if (!existsSync(ci)) continue;
    const conf = parseGoYamlDocument(readFileSync(ci, "utf8")) as { fbc?: { catalog_mapping?: Mapping[] } } | null;
    for (const m of conf?.fbc?.catalog_mapping ?? []) {
      const tpl = join(COMMUNITY, "operators", pkg, "catalog-templates", m.template_name ?? "");
      if (!m.template_name || !existsSync(tpl)) continue;
      const text = readFileSync(tpl, "utf8");
      for (const version of m.catalog_names ?? []) {
        const catFile = join(COMMUNITY, "catalogs", version, pkg, "catalog.yaml");
        if (!existsSync(catFile)) continue;
        total++;
        const label: string = `${pkg}/${m.template_name} → ${version}`;
        const committed = readFileSync(catFile, "utf8");
        const loaded = loadText(committed, catFile);
        assert.deepEqual(loaded.problems, [], label);
        try {
          const cfg = await renderTemplate(text, reuseSource(loaded.config, { reuseTags: true }), {
            type: m.type ? TYPES[m.type] : undefined,
          });
          normalizeForRender(cfg, { migrateLevel: migrateLevelFor(version) });
          if (formatCatalog(cfg, "yaml") === committed) {
            identical++;
            continue;
          }
          // A basic template whose channels already list bundles the catalog does not have.
          const known = new Set(loaded.config.bundles.map((b) => b.name));
          const missing = [
            ...new Set(cfg.channels.flatMap((c) => (c.entries ?? []).map((e) => e.name)).filter((n) => !known.has(n))),
          ];
          if (missing.length > 0) {
            ahead.push(`${label}: channel entries for bundles the catalog lacks: ${missing.join(", ")}`);
            continue;
          }
          const older = olderOpm(cfg, committed);
          if (older) olderOpmPairs.push(`${label}: ${older}`);
          else failures.push(`${label}: output differs`);
        } catch (e) {
          if (e instanceof OpcatError && e.code === "TEMPLATE_REUSE_NOT_FOUND")
            ahead.push(`${label}: ${e.message.replace(/^rendering template: /, "")}`);
          else failures.push(`${label}: ${(e as Error).message}`);
        }
      }
    }
  }
  t.diagnostic(`${identical}/${total} (template, catalog) pairs byte-identical`);
  for (const a of ahead) t.diagnostic(`template ahead of its catalog: ${a}`);
  for (const o of olderOpmPairs) t.diagnostic(`catalog rendered by an older opm: ${o}`);
  for (const f of failures) t.diagnostic(`MISMATCH ${f}`);
  assert.deepEqual(failures, []);
  assert.equal(identical + ahead.length + olderOpmPairs.length, total);
  assert.ok(total > 0);
});
