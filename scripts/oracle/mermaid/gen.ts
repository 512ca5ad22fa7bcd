/**
 * Regenerates src/fbc/testdata/mermaid/vectors.json by running the real opm on every case of
 * src/fbc/testdata/mermaid/cases.ts: `opm alpha render-graph <dir> [--minimum-edge E]
 * [--package-name P] [--draw-v0-semantics]`, with the case's catalog as <dir>/catalog.json.
 * A vector records opm's stdout (`text`, or `sha256` + `length` when longer than 4000 bytes), the
 * `warning: ` lines of its stderr (`warnings`), or, when opm exits non-zero, the message of its
 * log.Fatal line (`error`, without the date and time).
 *
 *   node --import tsx scripts/oracle/mermaid/gen.ts           # writes vectors.json
 *   node --import tsx scripts/oracle/mermaid/gen.ts --check   # exits 1 if the committed bytes differ
 *
 * OPM names the opm binary (default ~/.cache/opcat/opm/opm, built by scripts/oracle/opm/build-opm.sh).
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateMermaidCases } from "../../../src/fbc/testdata/mermaid/cases.js";
import { checkOrWrite, fatalMessage, runOpm } from "../opm/run.js";

const OUT = new URL("../../../src/fbc/testdata/mermaid/vectors.json", import.meta.url);
const TEXT_LIMIT = 4000;

const tmp = mkdtempSync(join(tmpdir(), "opm-mermaid-"));
const vectors: Record<string, unknown>[] = [];
try {
  for (const [i, c] of generateMermaidCases().entries()) {
    const dir = join(tmp, String(i));
    mkdirSync(dir);
    writeFileSync(join(dir, "catalog.json"), c.catalog);
    const args = ["alpha", "render-graph", dir];
    if (c.minEdge !== undefined) args.push("--minimum-edge", c.minEdge);
    if (c.packageName !== undefined) args.push("--package-name", c.packageName);
    if (c.drawV0Semantics) args.push("--draw-v0-semantics");
    const r = runOpm(args);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    if (r.status !== 0) {
      vectors.push({ name: c.name, error: fatalMessage(r.stderr) });
      continue;
    }
    const warnings = lines.filter((l) => l.startsWith("warning: "));
    if (warnings.length !== lines.length) throw new Error(`${c.name}: unexpected stderr ${JSON.stringify(r.stderr)}`);
    const v: Record<string, unknown> = { name: c.name };
    if (r.stdout.length <= TEXT_LIMIT) v.text = r.stdout.toString("utf8");
    else {
      v.sha256 = createHash("sha256").update(r.stdout).digest("hex");
      v.length = r.stdout.length;
    }
    if (warnings.length > 0) v.warnings = warnings;
    vectors.push(v);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
checkOrWrite(OUT, `${JSON.stringify(vectors, null, 1)}\n`);
