/**
 * Regenerates src/fbc/testdata/list-index/vectors.json and tabwriter.json.
 * - vectors.json: the real opm runs `opm alpha list packages|channels|bundles <dir> [package]` on the
 *   file's own `catalog` (written as <dir>/catalog.json) for each case; `text` is its stdout, `error`
 *   the message of its fatal log line.
 * - tabwriter.json: the inputs (random cells with \t \v \n \f and multi-byte runes, fixed once) are
 *   the file's own; the outputs come from Go's text/tabwriter configured as opm's list actions
 *   configure it (tabwriter/main.go, run with `go run`; stdlib only).
 *
 *   node --import tsx scripts/oracle/list/gen.ts           # rewrites both files
 *   node --import tsx scripts/oracle/list/gen.ts --check   # exits 1 if the committed bytes differ
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkOrWrite, fatalMessage, runOpm } from "../opm/run.js";

interface ListCase {
  name: string;
  kind: "packages" | "channels" | "bundles";
  packageName?: string;
  text?: string;
  error?: string;
}

const VECTORS = new URL("../../../src/fbc/testdata/list-index/vectors.json", import.meta.url);
const TABWRITER = new URL("../../../src/fbc/testdata/list-index/tabwriter.json", import.meta.url);

const committed = JSON.parse(readFileSync(VECTORS, "utf8")) as { catalog: string; cases: ListCase[] };
const tmp = mkdtempSync(join(tmpdir(), "opm-list-"));
try {
  writeFileSync(join(tmp, "catalog.json"), committed.catalog);
  const cases = committed.cases.map(({ name, kind, packageName }) => {
    const r = runOpm(["alpha", "list", kind, tmp, ...(packageName !== undefined ? [packageName] : [])]);
    const c: ListCase = { name, kind };
    if (packageName !== undefined) c.packageName = packageName;
    if (r.status !== 0) c.error = fatalMessage(r.stderr);
    else c.text = r.stdout.toString("utf8");
    return c;
  });
  checkOrWrite(VECTORS, `${JSON.stringify({ catalog: committed.catalog, cases }, null, 1)}\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const tab = JSON.parse(readFileSync(TABWRITER, "utf8")) as { input: string; output: string }[];
const go = spawnSync("go", ["run", fileURLToPath(new URL("tabwriter/main.go", import.meta.url))], {
  input: JSON.stringify(tab.map((v) => v.input)),
  maxBuffer: 1 << 28,
});
if (go.status !== 0) throw new Error(`go run tabwriter/main.go: ${go.stderr}`);
const outputs = JSON.parse(go.stdout.toString("utf8")) as string[];
checkOrWrite(TABWRITER, `${JSON.stringify(tab.map((v, i) => ({ input: v.input, output: outputs[i] })))}\n`);
