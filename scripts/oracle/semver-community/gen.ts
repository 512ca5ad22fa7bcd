/**
 * What the real opm (4f9d6f22) renders from the community semver templates whose committed catalogs
 * an older opm wrote (src/template/conformance.test.ts, EXCEPTIONS): the package and channel blobs of
 * `opm alpha render-template semver <template> -o yaml --migrate-level bundle-object-to-csv-metadata`,
 * written to src/template/testdata/community-semver/<package>.yaml (the bundles are compared with the
 * committed catalogs already).
 *
 * opm pulls the bundle images: each `quay.io/community-operator-pipeline-prod/<package>:<version>` the
 * template lists is built from ../shared/data/community/operators/<package>/<version> (opcat's
 * reproducible bundle image build: the bundle directory as one layer, its annotations as labels),
 * pushed to a local docker-registry, and the template's references are pointed at it (opm runs
 * with --use-http); the registry's host is replaced back by quay.io in opm's output.
 *
 *   node --import tsx scripts/oracle/semver-community/gen.ts           # writes the files
 *   node --import tsx scripts/oracle/semver-community/gen.ts --check   # exits 1 if a committed file differs
 *
 * Needs docker-registry (Debian package) and ../shared/data (or OPCAT_SHARED).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBundleImage, pushImage } from "../../../src/image/index.js";
import { startDockerRegistry } from "../../../test/image/servers.js";
import { checkOrWrite, fatalMessage, runOpm } from "../opm/run.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const SHARED = process.env.OPCAT_SHARED ?? resolve(REPO, "..", "shared");
const OPERATORS = join(SHARED, "data", "community", "operators");
const OUT = new URL("../../../src/template/testdata/community-semver/", import.meta.url);
const PACKAGES = ["clusterpulse", "kubevirt-wol", "openshift-integration-operator"];
const PREFIX = "quay.io/community-operator-pipeline-prod/";

const work = mkdtempSync(join(tmpdir(), "opm-semver-community-"));
const reg = await startDockerRegistry(join(work, "registry"));
try {
  for (const pkg of PACKAGES) {
    const template = readFileSync(join(OPERATORS, pkg, "catalog-templates", "semver.yaml"), "utf8");
    const versions = new Set([...template.matchAll(new RegExp(`${PREFIX}${pkg}:([^\\s]+)`, "g"))].map((m) => m[1]!));
    for (const v of versions)
      await pushImage(
        buildBundleImage(join(OPERATORS, pkg, v)),
        `${reg.host}/community-operator-pipeline-prod/${pkg}:${v}`,
        {
          useHttp: true,
        },
      );
    const local = join(work, `${pkg}.semver.yaml`);
    writeFileSync(local, template.replaceAll(PREFIX, `${reg.host}/community-operator-pipeline-prod/`));
    const r = runOpm([
      "alpha",
      "render-template",
      "semver",
      local,
      "-o",
      "yaml",
      "--migrate-level",
      "bundle-object-to-csv-metadata",
      "--use-http",
    ]);
    if (r.status !== 0) throw new Error(`${pkg}: ${fatalMessage(r.stderr)}`);
    const docs = r.stdout
      .toString("utf8")
      .replaceAll(`${reg.host}/community-operator-pipeline-prod/`, PREFIX)
      .split(/^---\n/m)
      .filter((d) => d !== "" && !/^schema: olm\.bundle$/m.test(d));
    checkOrWrite(new URL(`${pkg}.yaml`, OUT), docs.map((d) => `---\n${d}`).join(""));
  }
} finally {
  await reg.stop();
  rmSync(work, { recursive: true, force: true });
}
