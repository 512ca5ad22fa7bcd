/**
 * The semver template's worked example from opm's docs (alpha/template/semver/README.md; the
 * 11-version testoperator): major-only and minor-only output must be exactly what the docs print,
 * `olm.bundle` blobs aside. The docs' copy lost its indentation, so lines are compared trimmed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadText } from "../fbc/load.js";
import { formatCatalog } from "../fbc/write.js";
import { validateCatalog } from "../fbc/validate.js";
import { renderSemverTemplate, reuseSource } from "./index.js";

const dir = new URL("./testdata/", import.meta.url);
const read = (f: string): string => readFileSync(new URL(f, dir), "utf8");
const fixture = loadText(read("testoperator.catalog.yaml"), "testoperator.catalog.yaml");

const img = (v: string): string => `  - Image: quay.io/foo/olm:testoperator.v${v}`;
const CANDIDATE = ["0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.2.0", "0.2.1", "0.2.2", "0.3.0", "1.0.0", "1.0.1", "1.1.0"];
const template = (major: boolean, minor: boolean): string => `Schema: olm.semver
GenerateMajorChannels: ${major}
GenerateMinorChannels: ${minor}
Candidate:
  Bundles:
${CANDIDATE.map(img).join("\n")}
Fast:
  Bundles:
${["0.2.1", "0.2.2", "0.3.0", "1.0.1", "1.1.0"].map(img).join("\n")}
Stable:
  Bundles:
${img("1.0.1")}
`;

function withoutBundles(yaml: string): string[] {
  return yaml
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

for (const [name, major, minor, file] of [
  ["major channels only", true, false, "readme-major.yaml"],
  ["minor channels only", false, true, "readme-minor.yaml"],
] as const) {
  test(`semver README example: ${name}`, async () => {
    assert.deepEqual(fixture.problems, []);
    const cfg = await renderSemverTemplate(template(major, minor), reuseSource(fixture.config, { reuseTags: true }));
    assert.equal(cfg.bundles.length, 11);
    const yaml = formatCatalog({ ...cfg, bundles: [] }, "yaml");
    assert.deepEqual(withoutBundles(yaml), withoutBundles(read(file)));
  });
}

/**
 * The semver examples (docs/templates.md#semver) print the output of opm v1.26.x and earlier
 * (before operator-registry #1065): with `edges: "legacy"` it is reproduced exactly, bundles aside;
 * today's linking differs from it only in skips lists.
 */
for (const [name, major, minor, file] of [
  ["major channels only", true, false, "seed-major.yaml"],
  ["minor channels only", false, true, "seed-minor.yaml"],
] as const) {
  test(`semver example, y-stream skips: ${name}`, async () => {
    const cfg = await renderSemverTemplate(template(major, minor), reuseSource(fixture.config, { reuseTags: true }), {
      skips: "y-stream",
    });
    assert.equal(cfg.bundles.length, 11);
    assert.deepEqual(withoutBundles(formatCatalog({ ...cfg, bundles: [] }, "yaml")), withoutBundles(read(file)));
    assert.deepEqual(validateCatalog(cfg).problems, []);
  });

  test(`semver example (${name}): today's linking differs from it only in skips lists`, async () => {
    const cfg = await renderSemverTemplate(template(major, minor), reuseSource(fixture.config, { reuseTags: true }));
    const noSkips = (lines: string[]): string[] => lines.filter((l) => l !== "skips:" && !/^- testoperator\./.test(l));
    const ours = withoutBundles(formatCatalog({ ...cfg, bundles: [] }, "yaml"));
    const seed = withoutBundles(read(file));
    assert.notDeepEqual(ours, seed);
    assert.deepEqual(noSkips(ours), noSkips(seed));
  });
}
