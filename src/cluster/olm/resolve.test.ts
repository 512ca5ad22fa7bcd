import { test } from "node:test";
import assert from "node:assert/strict";
import { resolveBundle, ResolutionError, type CatalogPackage, type FbcBundle } from "./resolve.js";

const bundle = (v: string): FbcBundle => ({
  name: `pkg.v${v}`,
  package: "pkg",
  image: `example.com/pkg-bundle:v${v}`,
  properties: [{ type: "olm.package", value: { packageName: "pkg", version: v } }],
});

/** stable: 1.0.0 → 1.1.0 → 1.2.0 (replaces), fast: 1.2.0 → 2.0.0 (skipRange <2.0.0), 3.0.0 in no edge to 1.x */
function catalog(name: string, priority = 0, versions = ["1.0.0", "1.1.0", "1.2.0", "2.0.0", "3.0.0"]): CatalogPackage {
  const has = (v: string) => versions.includes(v);
  return {
    catalog: name,
    priority,
    bundles: versions.map(bundle),
    channels: [
      {
        name: "stable",
        package: "pkg",
        entries: [
          { name: "pkg.v1.0.0" },
          { name: "pkg.v1.1.0", replaces: "pkg.v1.0.0" },
          { name: "pkg.v1.2.0", replaces: "pkg.v1.1.0" },
        ].filter((e) => has(e.name.slice(5))),
      },
      {
        name: "fast",
        package: "pkg",
        entries: [
          { name: "pkg.v1.2.0" },
          { name: "pkg.v2.0.0", replaces: "pkg.v1.2.0", skipRange: "<2.0.0" },
          { name: "pkg.v3.0.0" },
        ].filter((e) => has(e.name.slice(5))),
      },
    ],
    deprecations: [],
  };
}

const fails = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => e instanceof ResolutionError && e.message === message);

test("latest, pinned, range and channels", () => {
  const cats = [catalog("a")];
  assert.equal(resolveBundle({ packageName: "pkg" }, cats).bundle.name, "pkg.v3.0.0");
  assert.equal(resolveBundle({ packageName: "pkg", version: "1.1.0" }, cats).bundle.name, "pkg.v1.1.0");
  assert.equal(resolveBundle({ packageName: "pkg", version: ">=1.0.0, <2.0.0" }, cats).bundle.name, "pkg.v1.2.0");
  assert.equal(resolveBundle({ packageName: "pkg", version: "~1.0" }, cats).version, "1.0.0");
  assert.equal(resolveBundle({ packageName: "pkg", channels: ["stable"] }, cats).bundle.name, "pkg.v1.2.0");
  fails(
    () => resolveBundle({ packageName: "pkg", version: "9.x", channels: ["stable"] }, cats),
    'no bundles found for package "pkg" matching version "9.x" in channels [stable]',
  );
  fails(() => resolveBundle({ packageName: "nope" }, []), 'no bundles found for package "nope"');
  fails(
    () => resolveBundle({ packageName: "pkg", version: "latest" }, cats),
    'desired version range "latest" is invalid: improper constraint: "latest"',
  );
});

test("CatalogProvided: only successors of the installed bundle (or itself); SelfCertified: any version", () => {
  const cats = [catalog("a")];
  const installed = { name: "pkg.v1.0.0", version: "1.0.0" };
  // 1.1.0 replaces 1.0.0; 2.0.0 skips every <2.0.0 in channel fast
  assert.equal(resolveBundle({ packageName: "pkg", installed }, cats).bundle.name, "pkg.v2.0.0");
  assert.equal(resolveBundle({ packageName: "pkg", installed, channels: ["stable"] }, cats).bundle.name, "pkg.v1.1.0");
  fails(
    () => resolveBundle({ packageName: "pkg", installed, version: "3.0.0" }, cats),
    'error upgrading from currently installed version "1.0.0": no bundles found for package "pkg" ' +
      'matching version "3.0.0"',
  );
  assert.equal(
    resolveBundle({ packageName: "pkg", installed, version: "3.0.0", upgradeConstraintPolicy: "SelfCertified" }, cats)
      .bundle.name,
    "pkg.v3.0.0",
  );
  // a pin on the installed version stays
  assert.equal(resolveBundle({ packageName: "pkg", installed, version: "1.0.0" }, cats).bundle.name, "pkg.v1.0.0");
});

test("catalog priority breaks ties; the same priority is upstream's error", () => {
  const low = catalog("low", 0, ["1.0.0", "1.1.0"]);
  const high = catalog("high", 5, ["1.0.0"]);
  const r = resolveBundle({ packageName: "pkg", channels: ["stable"] }, [low, high]);
  assert.deepEqual([r.catalog, r.bundle.name], ["high", "pkg.v1.0.0"]);
  fails(
    () => resolveBundle({ packageName: "pkg", channels: ["stable"] }, [catalog("b", 1), catalog("a", 1)]),
    'found bundles for package "pkg" in channels [stable] in multiple catalogs with the same priority [a b]',
  );
});

test("deprecated bundles sort last, within a catalog and across catalogs", () => {
  const a = catalog("a", 10);
  a.deprecations = [
    { package: "pkg", entries: [{ reference: { schema: "olm.bundle", name: "pkg.v3.0.0" }, message: "old" }] },
  ];
  assert.equal(resolveBundle({ packageName: "pkg" }, [a]).bundle.name, "pkg.v2.0.0");
  const onlyDeprecated = catalog("a", 10, ["3.0.0"]);
  onlyDeprecated.deprecations = a.deprecations;
  const other = catalog("b", 0, ["1.0.0"]);
  // a non-deprecated bundle of a lower-priority catalog wins over a deprecated one
  const r = resolveBundle({ packageName: "pkg" }, [onlyDeprecated, other]);
  assert.deepEqual([r.catalog, r.bundle.name], ["b", "pkg.v1.0.0"]);
});

test("a bundle with dependencies is refused with upstream's message", () => {
  const c = catalog("a", 0, ["1.0.0"]);
  c.bundles[0].properties!.push({ type: "olm.gvk.required", value: { group: "x", kind: "Y", version: "v1" } });
  fails(
    () => resolveBundle({ packageName: "pkg" }, [c]),
    'validating bundle "pkg.v1.0.0": bundle "pkg.v1.0.0" has a dependency declared via property ' +
      '"olm.gvk.required" which is currently not supported',
  );
});
