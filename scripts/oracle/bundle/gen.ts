/**
 * Regenerates src/bundle/testdata/vectors.json: opcat_oracle_test.go, copied into package action of
 * operator-registry's source at 4f9d6f22 (exported from $OPREG_GIT, default the mirror
 * /work/.mirror/operator-framework+operator-registry/repo, into a temporary directory, with
 * go.podman.io/common pinned to v0.69.0 as scripts/oracle/opm/build-opm.sh does), renders every case's
 * bundle directory of src/bundle/testdata/bundles with opm's own `opm render <bundle-dir>` code path.
 * The cases (dir, image, template) are the vectors' own. Built with the tags build-opm.sh uses for
 * opm (json1,containers_image_openpgp); needs Go and the Go module proxy.
 *
 *   node --import tsx scripts/oracle/bundle/gen.ts           # rewrites vectors.json
 *   node --import tsx scripts/oracle/bundle/gen.ts --check   # exits 1 if the committed bytes differ
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkOrWrite, exportOperatorRegistry, OPM_TAGS, runChecked } from "../opm/run.js";

const OUT = new URL("../../../src/bundle/testdata/vectors.json", import.meta.url);
const BUNDLES = fileURLToPath(new URL("../../../src/bundle/testdata/bundles", import.meta.url));
const committed = JSON.parse(readFileSync(OUT, "utf8")) as { dir: string; image?: string; template?: string }[];
const tmp = mkdtempSync(join(tmpdir(), "opm-bundle-"));
const SRC = join(tmp, "src");
try {
  mkdirSync(SRC);
  exportOperatorRegistry(SRC);
  writeFileSync(
    join(tmp, "cases.json"),
    JSON.stringify(committed.map(({ dir, image, template }) => ({ dir, image, template }))),
  );
  copyFileSync(
    fileURLToPath(new URL("opcat_oracle_test.go", import.meta.url)),
    join(SRC, "alpha", "action", "opcat_oracle_test.go"),
  );
  runChecked(
    "go",
    ["test", "-mod=mod", "-tags", OPM_TAGS, "-count=1", "-run", "^TestOpcatBundleVectors$", "./alpha/action/"],
    {
      cwd: SRC,
      env: {
        ...process.env,
        OPCAT_BUNDLE_CASES: join(tmp, "cases.json"),
        OPCAT_BUNDLE_DIR: BUNDLES,
        OPCAT_BUNDLE_OUT: join(tmp, "out.json"),
      },
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  const results = JSON.parse(readFileSync(join(tmp, "out.json"), "utf8")) as unknown[];
  // The committed file has no final newline.
  checkOrWrite(OUT, JSON.stringify(results, null, 1));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
