/**
 * CEL's `matches` has cel-go's semantics: Go's regexp (RE2), linear in the input, so that a hostile
 * pattern cannot hold a resolver or `opcat serve` for hours (issue 25, item 1).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CatalogSet, query } from "../../src/resolve/index.js";
import { catalog, chain, type P } from "./helpers.js";

const pkg: P = { name: "etcd", bundles: chain("etcd", ["1.0.0", "2.0.0"]) };
const set = new CatalogSet([catalog("c", [pkg])]);
const names = (rule: string): string[] =>
  query(set, rule)
    .map((m) => m.name)
    .sort();
const onEtcd = (re: string): string =>
  `properties.exists(p, p.type == "olm.package" && p.value.packageName.matches(${JSON.stringify(re)}))`;

test("matches: a pattern with nested repetition takes linear time (RE2), not exponential", () => {
  // a backtracking engine needs about 2^64 steps to fail this match
  const hostile = `"${"a".repeat(64)}!".matches("^(a+)+$")`;
  assert.deepEqual(names(hostile), []);
  assert.deepEqual(names(`"${"a".repeat(64)}".matches("^(a+)+$")`), ["etcd.v1.0.0", "etcd.v2.0.0"]);
  assert.deepEqual(names(`properties.exists(p, p.type.matches("^(o+|l+|m+|\\\\.+|[a-z]+)+$")) && ${hostile}`), []);
});

test("matches: RE2 syntax as cel-go's (\\z, search anywhere, no lookarounds or backreferences)", () => {
  // \z (end of text) is RE2; JavaScript reads it as a plain "z"
  assert.deepEqual(names(onEtcd("cd\\z")), ["etcd.v1.0.0", "etcd.v2.0.0"]);
  assert.deepEqual(names(onEtcd("tc")), ["etcd.v1.0.0", "etcd.v2.0.0"]);
  assert.deepEqual(names(onEtcd("^tc")), []);
  assert.deepEqual(names(onEtcd("(?i)^ETCD$")), ["etcd.v1.0.0", "etcd.v2.0.0"]);
  // not RE2: a runtime error in cel-go, so the rule holds for no bundle
  assert.deepEqual(names(onEtcd("e(?=tcd)")), []);
  assert.deepEqual(names(onEtcd("(e)tcd\\1?")), []);
  assert.deepEqual(names(onEtcd("etcd\\Z")), []);
  // inside macros and with a dyn receiver too
  assert.deepEqual(names('properties.all(p, !p.type.matches("^olm\\\\.gvk\\\\z"))'), ["etcd.v1.0.0", "etcd.v2.0.0"]);
});

test("matches: a type error still names matches", () => {
  assert.throws(() => query(set, '1.matches("a")'), /matches/);
});
