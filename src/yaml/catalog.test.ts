// Real-data check: every catalog.yaml under shared/data/community/catalogs/{v4.16,v4.20} was written by
// `opm render -o yaml`, so loading each `---` document and emitting it again must reproduce the file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseGoYamlDocument, toGoYaml } from "./index.js";

const shared = process.env.OPCAT_SHARED ?? fileURLToPath(new URL("../../../shared", import.meta.url));
const catalogs = join(shared, "data/community/catalogs");

function splitDocuments(text: string): string[] {
  const docs: string[] = [];
  let start = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    else end++;
    if (text.slice(pos, end) === "---\n") {
      if (pos > start) docs.push(text.slice(start, pos));
      start = end;
    }
    pos = end;
  }
  if (pos > start) docs.push(text.slice(start, pos));
  return docs;
}

test("opm-written catalogs round-trip byte for byte", (t) => {
  if (!existsSync(catalogs)) {
    if (process.env.CI === "true") assert.fail(`real catalogs not found at ${catalogs} (set OPCAT_SHARED)`);
    t.skip(`real catalogs not found at ${catalogs}; set OPCAT_SHARED to run this test`);
    return;
  }
  let files = 0;
  const different: string[] = [];
  for (const ver of ["v4.16", "v4.20"]) {
    const dir = join(catalogs, ver);
    if (!existsSync(dir)) continue;
    for (const pkg of readdirSync(dir).sort()) {
      const file = join(dir, pkg, "catalog.yaml");
      if (!existsSync(file)) continue;
      files++;
      const bytes = readFileSync(file);
      let out = "";
      for (const doc of splitDocuments(bytes.toString("utf8"))) out += "---\n" + toGoYaml(parseGoYamlDocument(doc));
      // Bytes, not decoded strings: a file that is not valid UTF-8 cannot round-trip.
      if (!Buffer.from(out).equals(bytes)) different.push(`${ver}/${pkg}`);
    }
  }
  assert.ok(files > 0, "no catalog.yaml files found");
  assert.deepEqual(different, [], `${different.length} of ${files} files differ`);
});
