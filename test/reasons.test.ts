/**
 * The controllers' user contract: every condition type and reason an API group declares in its
 * `reasons.ts` is documented in docs/cluster.md ("Conditions and reasons"), every documented one is
 * declared, and no source file of the group writes a reason it did not declare (the types catch
 * conditions; this catches Events and the few places a reason travels as a plain string).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./shared.js";
import * as catalogd from "../src/cluster/catalogd/reasons.js";
import * as deppy from "../src/cluster/deppy/reasons.js";
import * as olm from "../src/cluster/olm/reasons.js";
import * as operators from "../src/cluster/operators/reasons.js";
import * as rukpak from "../src/cluster/rukpak/reasons.js";

const GROUPS: Record<string, { Type: Record<string, string>; Reason: Record<string, string> }> = {
  catalogd,
  deppy,
  olm,
  operators,
  rukpak,
};

/** The documented types and reasons of each group, from its "### … (`<group>/reasons.ts`)" part. */
function documented(): Map<string, { types: string[]; reasons: string[] }> {
  const doc = readFileSync(join(REPO_ROOT, "docs", "cluster.md"), "utf8");
  const start = doc.indexOf("\n## Conditions and reasons\n");
  assert.ok(start >= 0, 'docs/cluster.md has no "## Conditions and reasons" section');
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const out = new Map<string, { types: string[]; reasons: string[] }>();
  for (const part of section.split("\n### ").slice(1)) {
    const group = /\(`(\w+)\/reasons\.ts`\)/.exec(part.split("\n")[0])?.[1];
    assert.ok(group, `a part of "Conditions and reasons" names no reasons.ts: ${part.split("\n")[0]}`);
    const typesLine = part.split("\n").find((l) => l.startsWith("Condition types: ")) ?? "";
    out.set(group, {
      types: [...typesLine.matchAll(/`(\w+)`/g)].map((m) => m[1]),
      reasons: [...part.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]),
    });
  }
  return out;
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

test("every declared condition type and reason is documented, and every documented one is declared", () => {
  const docs = documented();
  assert.deepEqual(sorted(docs.keys()), sorted(Object.keys(GROUPS)));
  for (const [group, mod] of Object.entries(GROUPS)) {
    const d = docs.get(group)!;
    assert.deepEqual(sorted(d.types), sorted(Object.values(mod.Type)), `condition types of ${group}`);
    assert.deepEqual(sorted(d.reasons), sorted(Object.values(mod.Reason)), `reasons of ${group}`);
  }
});

test("the constants are their own names (what users see is what the code says)", () => {
  for (const [group, mod] of Object.entries(GROUPS))
    for (const table of [mod.Type, mod.Reason])
      for (const [k, v] of Object.entries(table)) assert.equal(k, v, `${group}: ${k}`);
});

/** metav1.StatusReason values an admission answer carries: the API's, not a condition's. */
const STATUS_REASONS = new Set(["Forbidden", "BadRequest", "Invalid", "NotFound", "Conflict"]);

test("no source file writes a reason its group does not declare", () => {
  const problems: string[] = [];
  for (const [group, mod] of Object.entries(GROUPS)) {
    const declared = new Set(Object.values(mod.Reason));
    const dir = join(REPO_ROOT, "src", "cluster", group);
    for (const name of readdirSync(dir, { recursive: true }) as string[]) {
      if (!name.endsWith(".ts") || name.endsWith(".test.ts") || name === "reasons.ts") continue;
      const lines = readFileSync(join(dir, name), "utf8").split("\n");
      lines.forEach((line, i) => {
        const t = line.trim();
        if (t.startsWith("*") || t.startsWith("//") || t.startsWith("/*")) return;
        // a reason: what follows the word `reason` on a line, the reason of an Event, of an UnpackError
        const at = line.search(/\breason\b|"(?:Normal|Warning)",|UnpackError\(/);
        if (at < 0) return;
        for (const m of line.slice(at).matchAll(/"([A-Z][A-Za-z]+)"/g)) {
          const r = m[1];
          if (declared.has(r) || r === "Normal" || r === "Warning" || r === "True" || r === "False") continue;
          if (r === "Unknown" || STATUS_REASONS.has(r)) continue;
          problems.push(`src/cluster/${group}/${name}:${i + 1}: ${r}`);
        }
      });
    }
  }
  assert.deepEqual(problems, [], "declare these in the group's reasons.ts and document them in docs/cluster.md");
});
