/**
 * Image-backed bundle sources, with bundle images built by opcat into OCI layouts (no registry):
 * rendering as `opm render` does, one render per distinct reference, bounded parallelism, opm's
 * refusals, the reuse-then-pull chain and the per-reference normalisation and migrations.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { renderBundleDirectory } from "../../bundle/index.js";
import { OpcatError } from "../../errors/index.js";
import { normalizeForRender } from "../../fbc/render.js";
import type { DeclarativeConfig } from "../../fbc/types.js";
import { formatCatalog } from "../../fbc/write.js";
import { buildBundleImage, buildCatalogImage, writeToLayout } from "../../image/index.js";
import { fallbackSource, imageSource, renderedSource } from "./imagesource.js";
import { writeBundleDir } from "../testdata/bundledir.js";
import { renderTemplate, reuseSource } from "../index.js";
import type { BundleSource, RenderedBundle } from "./source.js";

const work = mkdtempSync(join(tmpdir(), "opcat-imagesource-"));
after(() => rmSync(work, { recursive: true, force: true }));
const cacheDir = join(work, "cache");

const layout = join(work, "layout");
const versions = ["1.0.0", "1.0.1", "1.1.0", "2.0.0"];
const dirs = new Map<string, string>();
for (const v of versions) {
  const d = writeBundleDir(join(work, "bundles", v), "demo", v, { description: `demo ${v}` });
  dirs.set(v, d);
  writeToLayout(buildBundleImage(d), `oci:${layout}:v${v}`);
}
const catDir = join(work, "catalog");
mkdirSync(catDir);
writeFileSync(join(catDir, "index.json"), JSON.stringify({ schema: "olm.package", name: "x" }) + "\n");
writeToLayout(buildCatalogImage(catDir), `oci:${layout}:catalog`);
const ref = (v: string): string => `oci:${layout}:v${v}`;

const expected = (v: string, image = ref(v)): string =>
  formatCatalog(normalizeForRender(renderBundleDirectory(dirs.get(v) ?? "", { image })), "json");
const asCatalog = (b: RenderedBundle): DeclarativeConfig => ({
  packages: [],
  channels: [],
  bundles: [b],
  deprecations: [],
  others: [],
});

test("imageSource renders a bundle image as opm render does; the image is the reference as given", async () => {
  const src = renderedSource(imageSource({ cacheDir }));
  const b = await src.render(ref("1.0.0"));
  assert.equal(b.image, ref("1.0.0"));
  assert.equal(formatCatalog(asCatalog(b), "json"), expected("1.0.0"));
  assert.match(b.csvJson ?? "", /"kind":"ClusterServiceVersion"/);
});

test("each distinct reference is rendered once; callers get independent copies; parallelism is bounded", async () => {
  const events: { ref: string; state: string }[] = [];
  let active = 0;
  let peak = 0;
  const src = imageSource({
    cacheDir,
    parallel: 2,
    onImage: (e) => {
      events.push(e);
      if (e.state === "start") peak = Math.max(peak, ++active);
      else active--;
    },
  });
  src.prefetch?.(versions.map(ref));
  const all = await Promise.all([...versions, ...versions].map((v) => src.render(ref(v))));
  assert.equal(events.filter((e) => e.state === "start").length, versions.length);
  assert.ok(peak <= 2, `peak ${peak}`);
  all[0].properties.length = 0;
  assert.notEqual(all[4].properties.length, 0);
  assert.deepEqual(
    all.map((b) => b.name),
    [...versions, ...versions].map((v) => `demo.v${v}`),
  );
});

test("opm's refusals: bundle directories, catalog images; errors are prefixed and cached", async () => {
  const src = imageSource({ cacheDir });
  await assert.rejects(
    src.render(dirs.get("1.0.0") ?? ""),
    (e: OpcatError) =>
      e.message ===
      `render reference ${JSON.stringify(dirs.get("1.0.0"))}: cannot render ` +
        `bundle directory ${JSON.stringify(dirs.get("1.0.0"))}: not allowed`,
  );
  await assert.rejects(
    src.render(catDir),
    (e: OpcatError) =>
      e.message ===
      `render reference ${JSON.stringify(catDir)}: cannot render declarative config directory: not allowed`,
  );
  await assert.rejects(
    src.render(`oci:${layout}:catalog`),
    (e: OpcatError) =>
      e.message === `render reference "oci:${layout}:catalog": cannot render declarative config image: not allowed`,
  );
  await assert.rejects(
    src.render(`oci:${layout}:nope`),
    (e: OpcatError) =>
      e.message.startsWith(`render reference "oci:${layout}:nope": failed to pull image`) && e.kind === "io",
  );
});

test("renderedSource runs the migrations per reference and keeps the CSV for the semver template", async () => {
  const src = renderedSource(imageSource({ cacheDir }), { migrateLevel: "bundle-object-to-csv-metadata" });
  const cfg = await renderTemplate(
    `schema: olm.semver\nstable:\n  bundles:\n${versions.map((v) => `  - image: ${ref(v)}`).join("\n")}\n`,
    src,
  );
  for (const b of cfg.bundles) {
    assert.ok(b.properties.some((p) => p.type === "olm.csv.metadata"));
    assert.ok(!b.properties.some((p) => p.type === "olm.bundle.object"));
  }
  assert.equal(cfg.packages[0].defaultChannel, "stable-v2.0");
  assert.equal(cfg.packages[0].description, "demo 2.0.0");
});

test(
  "fallbackSource: --reuse answers what it can " + "(digest-pinned, or tags with reuseTags); the rest is pulled",
  async () => {
    const pulled: string[] = [];
    const pull: BundleSource = {
      render: (image) => {
        pulled.push(image);
        return Promise.resolve({
          schema: "olm.bundle",
          name: `pulled:${image}`,
          package: "p",
          image,
          properties: [],
          relatedImages: [],
        });
      },
    };
    const digest = "quay.io/a/a@sha256:" + "a".repeat(64);
    const reused = {
      packages: [],
      channels: [],
      deprecations: [],
      others: [],
      bundles: [digest, "quay.io/a/a:tag"].map((image) => ({
        schema: "olm.bundle",
        name: `reused:${image}`,
        package: "p",
        image,
        properties: [],
        relatedImages: [],
      })),
    };
    const chain = fallbackSource(reuseSource(reused), pull);
    assert.equal((await chain.render(digest)).name, `reused:${digest}`);
    assert.equal((await chain.render("quay.io/a/a:tag")).name, "pulled:quay.io/a/a:tag");
    assert.equal((await chain.render("quay.io/b/b@sha256:" + "b".repeat(64))).name.startsWith("pulled:"), true);
    const withTags = fallbackSource(reuseSource(reused, { reuseTags: true }), pull);
    assert.equal((await withTags.render("quay.io/a/a:tag")).name, "reused:quay.io/a/a:tag");
    // Other errors of the primary are final.
    const broken: BundleSource = {
      render: () => Promise.reject(new OpcatError("MIGRATE", "migrate: bad", { kind: "invalid" })),
    };
    await assert.rejects(fallbackSource(broken, pull).render(digest), /migrate: bad/);
  },
);

test(
  "property: whatever the order and repetition of requests, the " +
    "source renders each reference once and answers in request order",
  async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...versions), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        async (req, parallel) => {
          let starts = 0;
          const src = imageSource({ cacheDir, parallel, onImage: (e) => void (e.state === "start" && starts++) });
          const got = await Promise.all(req.map((v) => src.render(ref(v))));
          assert.deepEqual(
            got.map((b) => b.name),
            req.map((v) => `demo.v${v}`),
          );
          assert.equal(starts, new Set(req).size);
        },
      ),
      { numRuns: 15 },
    );
  },
);
