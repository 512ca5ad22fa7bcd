/** Keeps docs in step with the code: every problem code used in src/ is documented in docs/errors.md. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./shared.js";

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "testdata") sources(p, out);
    } else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

const CODE_PREFIXES =
  "FBC|GRAPH|LIST|INIT|MIGRATE|IO|USAGE|NOT|BUNDLE|IMAGE|BUILD|RENDER|TEMPLATE|SERVE|RESOLVE|CLUSTER";

test("every problem code is documented in docs/errors.md", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs", "errors.md"), "utf8");
  const codes = new Set<string>();
  for (const f of sources(join(REPO_ROOT, "src"))) {
    for (const m of readFileSync(f, "utf8").matchAll(new RegExp(`"((?:${CODE_PREFIXES})_[A-Z_]+)"`, "g")))
      codes.add(m[1]);
  }
  const missing = [...codes].filter((c) => !doc.includes("`" + c + "`")).sort();
  assert.deepEqual(missing, []);
});
