/**
 * Conformance on real data: every bundle directory of the community snapshot whose bundle appears
 * in an opm-rendered catalog is rendered with the image the catalog records and compared, as YAML
 * text, with the catalog's blob — `catalogs/v4.16` (olm.bundle.object flavour) as rendered, and
 * `catalogs/v4.20` (olm.csv.metadata flavour) after the bundle-object-to-csv-metadata migration.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadFile } from "../fbc/load.js";
import { normalizeForRender } from "../fbc/render.js";
import { emptyConfig, type Bundle } from "../fbc/types.js";
import { formatCatalog } from "../fbc/write.js";
import { readBundleDirectory, renderBundle, type RegistryBundle } from "./index.js";
import { OpcatError } from "../errors/index.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.OPCAT_SHARED ?? resolve(REPO, "..", "shared");
const COMMUNITY = join(SHARED, "data", "community");

function requireData(): false | string {
  if (existsSync(join(COMMUNITY, "operators"))) return false;
  const msg = `real data not found at ${COMMUNITY} (set OPCAT_SHARED to the shared/ directory)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return msg;
}

/**
 * Bundle directories that opm cannot read and that are not in any catalog (never published), with
 * the error opm gives. The layout has the bundle one level down, in `<version>/bundle/`.
 */
const UNPUBLISHED_BROKEN: Record<string, string> = {
  "rabbitmq-messaging-topology-operator/1.18.3": "open .: no such file or directory",
  "rabbitmq-messaging-topology-operator/1.19.0": "open .: no such file or directory",
  "rabbitmq-messaging-topology-operator/1.19.1": "open .: no such file or directory",
};

/**
 * Catalog entries that legitimately differ from what opm renders today from the directory, with
 * the proof. (None: every published bundle renders identically.)
 */
const EXCUSED: Record<string, string> = {};

function oneBundle(b: Bundle): string {
  return formatCatalog({ ...emptyConfig(), bundles: [b] }, "yaml");
}

interface FlavourResult {
  identical: number;
  total: number;
  mismatches: string[];
}

function runFlavour(version: "v4.16" | "v4.20"): FlavourResult {
  const res: FlavourResult = { identical: 0, total: 0, mismatches: [] };
  for (const pkg of readdirSync(join(COMMUNITY, "operators")).sort()) {
    const cat = join(COMMUNITY, "catalogs", version, pkg, "catalog.yaml");
    if (!existsSync(cat)) continue;
    const loaded = loadFile(cat);
    assert.deepEqual(loaded.problems, [], `${cat} loads`);
    const bundles = loaded.config.bundles;
    const pkgDir = join(COMMUNITY, "operators", pkg);
    const versions = readdirSync(pkgDir).filter(
      (v) => v !== "catalog-templates" && statSync(join(pkgDir, v)).isDirectory(),
    );
    const versionSet = new Set(versions);
    for (const ver of versions.sort()) {
      const dir = join(pkgDir, ver);
      const byImage = bundles.find((b) => b.image.endsWith(`/${pkg}:${ver}`));
      let rb: RegistryBundle;
      try {
        rb = readBundleDirectory(dir);
      } catch (e) {
        const key = `${pkg}/${ver}`;
        assert.ok(e instanceof OpcatError, `${key}: ${String(e)}`);
        assert.equal(byImage, undefined, `${key} is in the catalog but cannot be read: ${e.message}`);
        assert.equal(e.message, UNPUBLISHED_BROKEN[key], `${key}: unexpected read failure`);
        assert.equal(e.kind, "invalid");
        continue;
      }
      // Match by image tag, else by bundle (CSV) name when the entry's image is not another directory's.
      const match =
        byImage ??
        bundles.find((b) => {
          if (b.name !== rb.name) return false;
          const tag = b.image.slice(b.image.lastIndexOf(":") + 1);
          return !(versionSet.has(tag) && tag !== ver);
        });
      if (!match) continue;
      res.total++;
      const key = `${version} ${pkg}/${ver} (${match.name})`;
      let got = renderBundle(rb, { image: match.image });
      if (version === "v4.20")
        got = normalizeForRender(
          { ...emptyConfig(), bundles: [got] },
          { migrateLevel: "bundle-object-to-csv-metadata" },
        ).bundles[0];
      const a = oneBundle(got);
      const b = oneBundle(match);
      if (a === b) res.identical++;
      else if (!EXCUSED[key]) {
        const al = a.split("\n");
        const bl = b.split("\n");
        let i = 0;
        while (i < al.length && al[i] === bl[i]) i++;
        res.mismatches.push(
          `${key}: line ${i + 1}: got ${JSON.stringify(al[i])}, catalog has ${JSON.stringify(bl[i])}`,
        );
      }
    }
  }
  return res;
}

for (const version of ["v4.16", "v4.20"] as const) {
  const flavour = version === "v4.16" ? "bundle-object" : "csv-metadata";
  test(`conformance: community bundle directories render exactly as catalogs/${version} (${flavour})`, {
    skip: requireData(),
  }, (t) => {
    const r = runFlavour(version);
    t.diagnostic(
      `${version} ${flavour}: ${r.identical} identical / ${r.total} total (${Object.keys(EXCUSED).length} excused)`,
    );
    assert.deepEqual(r.mismatches, []);
    assert.ok(r.total > (version === "v4.16" ? 200 : 300), `expected the snapshot's bundles, found ${r.total}`);
    assert.equal(r.identical + Object.keys(EXCUSED).filter((k) => k.startsWith(version)).length, r.total);
  });
}
