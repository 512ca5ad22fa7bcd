/**
 * Benchmark inputs: a synthetic JSON catalog of N bundles, and the two community catalog versions
 * merged into one valid catalog (v4.20's packages renamed with a `-v420` suffix so that both fit).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadCatalog } from "../src/fbc/load.js";
import { RawJson } from "../src/fbc/rawjson.js";
import { writeCatalogDirectory } from "../src/fbc/write.js";
import type { DeclarativeConfig, JsonObject } from "../src/fbc/types.js";

/** Writes `<dir>/pkg-NNN/catalog.json` files holding `bundles` bundles in total (100 per package). */
export function generateJsonCatalog(dir: string, bundles: number): void {
  const perPkg = 100;
  const csv = Buffer.from(
    JSON.stringify({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: "x", annotations: { description: "d".repeat(1500) } },
      spec: { displayName: "Example", installModes: [{ type: "AllNamespaces", supported: true }] },
    }),
  ).toString("base64");
  for (let p = 0; p * perPkg < bundles; p++) {
    const pkg = `pkg-${String(p).padStart(4, "0")}`;
    const n = Math.min(perPkg, bundles - p * perPkg);
    const out: string[] = [];
    out.push(
      JSON.stringify(
        { schema: "olm.package", name: pkg, defaultChannel: "stable", description: `Package ${pkg}` },
        null,
        4,
      ),
    );
    const entries = [];
    for (let i = 0; i < n; i++) {
      const e: JsonObject = { name: `${pkg}.v1.${i}.0` };
      if (i > 0) e.replaces = `${pkg}.v1.${i - 1}.0`;
      if (i > 1) e.skipRange = `>=1.0.0 <1.${i}.0`;
      entries.push(e);
    }
    out.push(JSON.stringify({ schema: "olm.channel", package: pkg, name: "stable", entries }, null, 4));
    for (let i = 0; i < n; i++) {
      out.push(
        JSON.stringify(
          {
            schema: "olm.bundle",
            package: pkg,
            name: `${pkg}.v1.${i}.0`,
            image: `quay.io/example/${pkg}-bundle@sha256:${(p * perPkg + i).toString(16).padStart(64, "0")}`,
            properties: [
              { type: "olm.package", value: { packageName: pkg, version: `1.${i}.0` } },
              { type: "olm.gvk", value: { group: `${pkg}.example.com`, kind: "Thing", version: "v1" } },
              { type: "olm.bundle.object", value: { data: csv } },
            ],
            relatedImages: [{ name: "operator", image: `quay.io/example/${pkg}@sha256:${"a".repeat(64)}` }],
          },
          null,
          4,
        ),
      );
    }
    mkdirSync(join(dir, pkg), { recursive: true });
    writeFileSync(join(dir, pkg, "catalog.json"), out.join("\n") + "\n");
  }
}

/** Renames every package of a catalog (`<name><suffix>`): its blobs and its bundles' olm.package. */
export function renamePackages(c: DeclarativeConfig, suffix: string): void {
  const rename = (s: string): string => (s ? `${s}${suffix}` : s);
  for (const p of c.packages) p.name = rename(p.name);
  for (const ch of c.channels) ch.package = rename(ch.package);
  for (const d of c.deprecations) d.package = rename(d.package);
  for (const bu of c.bundles) {
    bu.package = rename(bu.package);
    bu.properties = bu.properties.map((prop) => {
      if (prop.type !== "olm.package") return prop;
      const v = { ...(prop.value.value as JsonObject) };
      v.packageName = rename(String(v.packageName));
      return { type: prop.type, value: RawJson.fromValue(v) };
    });
  }
}

/** Copies v4.16 and a renamed v4.20 into `dir` as one valid catalog (YAML, as opm writes it). */
export async function mergeCommunityCatalogs(
  community: string,
  dir: string,
  format: "yaml" | "json" = "yaml",
): Promise<void> {
  const a = await loadCatalog(join(community, "catalogs", "v4.16"));
  const b = await loadCatalog(join(community, "catalogs", "v4.20"));
  if (a.problems.length || b.problems.length) throw new Error("community catalogs do not load");
  renamePackages(b.config, "-v420");
  // one write (the directory is written whole into a temporary sibling and renamed into place)
  const merged = { ...a.config };
  for (const k of ["packages", "channels", "bundles", "deprecations", "others"] as const)
    (merged[k] as unknown[]) = [...a.config[k], ...b.config[k]];
  writeCatalogDirectory(merged, dir, format);
}
