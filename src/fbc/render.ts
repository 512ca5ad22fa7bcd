/**
 * What `opm render` does to a catalog besides reading and writing it (alpha/action/render.go):
 * `olm.bundle.object` and `olm.csv.metadata` properties move to the end of each bundle's
 * properties, related images are sorted by image (Go's unstable sort.Slice, ported), then the requested migrations run.
 */
import { goSortSlice } from "../gojson/sort.js";
import { compareUtf8 } from "../gojson/encode.js";
import { migrate, type MigrationLevel } from "./migrate.js";
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from "./properties.js";
import type { DeclarativeConfig } from "./types.js";

export interface RenderOptions {
  /** Run every migration up to and including this level (opm's --migrate-level). */
  migrateLevel?: MigrationLevel;
}

/** Normalises a loaded catalog in place as `opm render` does and returns it. */
export function normalizeForRender(cfg: DeclarativeConfig, opts: RenderOptions = {}): DeclarativeConfig {
  for (const b of cfg.bundles) {
    const others = [];
    const objs = [];
    for (const p of b.properties) {
      if (p.type === PROPERTY_BUNDLE_OBJECT || p.type === PROPERTY_CSV_METADATA) objs.push(p);
      else others.push(p);
    }
    if (objs.length > 0) b.properties = others.concat(objs);
    // opm's Render.Run: sort.Slice by image for every bundle (not stable: equal images in pdqsort's order)
    if (b.relatedImages.length > 1) goSortSlice(b.relatedImages, (x, y) => compareUtf8(x.image, y.image) < 0);
  }
  if (opts.migrateLevel) migrate(cfg, opts.migrateLevel);
  return cfg;
}
