/**
 * Regenerates src/serve/testdata/all.golden.jsonl, the body catalogd's HTTP API serves as
 * /catalogs/<name>/api/v1/all for src/serve/testdata/catalog: jsonl/main.go, built inside
 * operator-registry's source at 4f9d6f22 (exported to a temporary directory), writes every blob in
 * declcfg.WalkMetasFS order as its Meta.Blob, as catalogd's storage does.
 *
 *   node --import tsx scripts/oracle/serve/gen-http.ts           # rewrites all.golden.jsonl
 *   node --import tsx scripts/oracle/serve/gen-http.ts --check   # exits 1 if the committed bytes differ
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkOrWrite, exportOperatorRegistry, OPM_TAGS, runChecked } from "../opm/run.js";

const OUT = new URL("../../../src/serve/testdata/all.golden.jsonl", import.meta.url);
const CATALOG = fileURLToPath(new URL("../../../src/serve/testdata/catalog", import.meta.url));

const tmp = mkdtempSync(join(tmpdir(), "opm-jsonl-"));
try {
  const src = join(tmp, "src");
  mkdirSync(join(src, "cmd", "opcat-oracle-jsonl"), { recursive: true });
  exportOperatorRegistry(src);
  copyFileSync(
    fileURLToPath(new URL("jsonl/main.go", import.meta.url)),
    join(src, "cmd", "opcat-oracle-jsonl", "main.go"),
  );
  const out = runChecked("go", ["run", "-mod=mod", "-tags", OPM_TAGS, "./cmd/opcat-oracle-jsonl", CATALOG], {
    cwd: src,
  });
  checkOrWrite(OUT, out);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
