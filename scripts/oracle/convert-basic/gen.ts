/**
 * Regenerates src/template/testdata/graph/convert-basic-expected.{json,yaml} with the real opm's
 * converter: `opm alpha convert-template basic convert-basic-input.json -o json|yaml`.
 *
 *   node --import tsx scripts/oracle/convert-basic/gen.ts           # rewrites both files
 *   node --import tsx scripts/oracle/convert-basic/gen.ts --check   # exits 1 if a committed file differs
 */
import { fileURLToPath } from "node:url";
import { checkOrWrite, fatalMessage, runOpm } from "../opm/run.js";

const dir = new URL("../../../src/template/testdata/graph/", import.meta.url);
const input = fileURLToPath(new URL("convert-basic-input.json", dir));
for (const format of ["json", "yaml"]) {
  const r = runOpm(["alpha", "convert-template", "basic", input, "-o", format]);
  if (r.status !== 0) throw new Error(`opm alpha convert-template basic: ${fatalMessage(r.stderr)}`);
  checkOrWrite(new URL(`convert-basic-expected.${format}`, dir), r.stdout);
}
