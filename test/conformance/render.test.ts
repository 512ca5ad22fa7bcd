/**
 * Conformance on real data: the community catalogs under ../shared were written by `opm render -o yaml`,
 * so rendering each file must give it back byte for byte, JSON output must round-trip to the same
 * YAML, and each catalog version directory must validate.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadCatalog, loadText } from "../../src/fbc/load.js";
import { normalizeForRender } from "../../src/fbc/render.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import { formatCatalog } from "../../src/fbc/write.js";
import { catalogFiles, COMMUNITY, requireShared } from "../shared.js";

/**
 * Files that were evidently not written by opm and so cannot be reproduced. Each needs a reason.
 * (None so far: every file of v4.16 and v4.20 is reproduced.)
 */
const EXCEPTIONS: Record<string, string> = {};

/** Where two outputs first differ, for the failure message (the comparison itself is on bytes). */
function firstDifference(a: Buffer, b: Buffer): string {
  const x = a.toString("utf8").split("\n");
  const y = b.toString("utf8").split("\n");
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return (
    `line ${i + 1}:\n  got:  ${JSON.stringify(x[i]?.slice(0, 160))}\n` +
    `  want: ${JSON.stringify(y[i]?.slice(0, 160))}`
  );
}

for (const version of ["v4.16", "v4.20"]) {
  test(`opcat render -o yaml reproduces every ${version} catalog file byte for byte`, requireShared(), async () => {
    const files = catalogFiles(version);
    assert.ok(files.length > 0, `no catalog files under ${COMMUNITY}/catalogs/${version}`);
    let identical = 0;
    const failures: string[] = [];
    for (const { pkg, file } of files) {
      const key = `${version}/${pkg}`;
      const want = readFileSync(file);
      const res = await loadCatalog(file);
      assert.deepEqual(res.problems, [], `${key} must load`);
      const got = Buffer.from(formatCatalog(normalizeForRender(res.config), "yaml"));
      if (got.equals(want)) {
        identical++;
        if (key in EXCEPTIONS) failures.push(`${key}: identical now, remove it from EXCEPTIONS`);
      } else if (!(key in EXCEPTIONS)) failures.push(`${key}: ${firstDifference(got, want)}`);
    }
    console.log(
      `# ${version}: ${identical}/${files.length} files identical, ${Object.keys(EXCEPTIONS).length} listed exceptions`,
    );
    assert.deepEqual(failures, []);
  });

  test(`-o json round-trips to the same YAML for every ${version} catalog file`, requireShared(), async () => {
    const failures: string[] = [];
    for (const { pkg, file } of catalogFiles(version)) {
      const want = readFileSync(file);
      const first = normalizeForRender((await loadCatalog(file)).config);
      const json = formatCatalog(first, "json");
      const again = loadText(json, `${pkg}.json`);
      assert.deepEqual(again.problems, []);
      const yaml = Buffer.from(formatCatalog(normalizeForRender(again.config), "yaml"));
      if (!yaml.equals(want)) failures.push(`${version}/${pkg}: ${firstDifference(yaml, want)}`);
      // and JSON is stable under a second pass (byte for byte)
      assert.ok(
        Buffer.from(formatCatalog(again.config, "json")).equals(Buffer.from(json)),
        `${version}/${pkg} JSON must be stable`,
      );
    }
    assert.deepEqual(failures, []);
  });

  test(`opcat validate accepts the ${version} directory`, requireShared(), async () => {
    const res = await loadCatalog(join(COMMUNITY, "catalogs", version));
    assert.deepEqual(res.problems, []);
    const v = validateCatalog(res.config);
    assert.deepEqual(v.problems, []);
    console.log(
      `# ${version}: ${res.files} files, ${res.config.packages.length} ` +
        `packages, ${res.config.bundles.length} bundles valid`,
    );
  });
}
