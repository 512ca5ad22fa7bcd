import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Constraints, fromBlang, MastermindsError, mastermindsRange } from "./masterminds.js";
import { parseVersion } from "./version.js";

const golden = JSON.parse(readFileSync(new URL("./testdata/masterminds.json", import.meta.url), "utf8")) as {
  probes: string[];
  constraints: { constraint: string; error?: string; results?: string }[];
};

test("Masterminds NewConstraint/Check: every golden vector of the Go library (v3.5.0)", () => {
  const probes = golden.probes.map((p) => fromBlang(parseVersion(p)));
  const wrong: string[] = [];
  for (const g of golden.constraints) {
    const cs = Constraints.parse(g.constraint);
    if (g.error !== undefined) {
      if (!(cs instanceof MastermindsError) || cs.message !== g.error)
        wrong.push(`${JSON.stringify(g.constraint)}: want error ${g.error}, got ${String(cs)}`);
      continue;
    }
    if (cs instanceof MastermindsError) {
      wrong.push(`${JSON.stringify(g.constraint)}: unexpected error ${cs.message}`);
      continue;
    }
    const got = probes.map((p) => (cs.check(p) ? "1" : "0")).join("");
    if (got !== g.results) {
      const diff = golden.probes.filter((_, i) => got[i] !== g.results![i]);
      wrong.push(`${JSON.stringify(g.constraint)}: differs on ${diff.join(", ")}`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.ok(golden.constraints.length > 700);
});

test("the documented examples of ClusterExtension's version field", () => {
  const inRange = (r: string, v: string) => {
    const f = mastermindsRange(r);
    if (f instanceof MastermindsError) throw f;
    return f(parseVersion(v));
  };
  assert.equal(inRange(">=3.0, <3.6", "3.5.9"), true);
  assert.equal(inRange(">=3.0, <3.6", "3.6.0"), false);
  assert.equal(inRange("0.6.0", "0.6.0"), true);
  assert.equal(inRange("0.6.0", "0.6.1"), false);
  assert.equal(inRange("^0.2.3", "0.2.9"), true);
  assert.equal(inRange("^0.2.3", "0.3.0"), false);
  assert.equal(inRange("^0 || ^3 || ^5", "3.1.0"), true);
  assert.equal(inRange("^0 || ^3 || ^5", "4.0.0"), false);
  assert.equal(inRange("1.2 - 1.4.5", "1.4.5"), true);
  assert.equal(inRange("1.2 - 1.4.5", "1.4.6"), false);
  // prereleases only when the group names one
  assert.equal(inRange(">=1.0.0", "2.0.0-alpha"), false);
  assert.equal(inRange(">=1.0.0-0", "2.0.0-alpha"), true);
  const bad = mastermindsRange("latest");
  assert.ok(bad instanceof MastermindsError);
  assert.equal(bad.message, 'improper constraint: "latest"');
});
