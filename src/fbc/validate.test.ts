import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadText } from "./load.js";
import { convertToModel, validateCatalog, validateModel, dns1123LabelErrors, parseRelease } from "./validate.js";

/** A tiny catalog builder: blobs as JSON lines in one file. */
function cat(...blobs: object[]): string {
  return blobs.map((b) => JSON.stringify(b)).join("\n");
}
const pkg = (name: string, defaultChannel = "stable", extra: object = {}) => ({
  schema: "olm.package",
  name,
  defaultChannel,
  ...extra,
});
const ch = (pkgName: string, name: string, entries: object[] | null) => ({
  schema: "olm.channel",
  package: pkgName,
  name,
  ...(entries ? { entries } : {}),
});
const bundle = (pkgName: string, name: string, version: string, extra: object = {}) => ({
  schema: "olm.bundle",
  package: pkgName,
  name,
  image: `quay.io/x/${pkgName}:${version}`,
  properties: [{ type: "olm.package", value: { packageName: pkgName, version } }],
  ...extra,
});

function problems(text: string): { code: string; message: string; line?: number }[] {
  const r = loadText(text, "catalog.json");
  assert.deepEqual(r.problems, [], "fixture must load");
  return validateCatalog(r.config).problems.map((p) => ({ code: p.code, message: p.message, line: p.loc?.line }));
}

const valid = cat(
  pkg("foo"),
  ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v2", replaces: "foo.v1" }]),
  bundle("foo", "foo.v1", "1.0.0"),
  bundle("foo", "foo.v2", "2.0.0"),
);

test("a valid catalog has no problems and yields a linked model", () => {
  const r = loadText(valid, "c.json");
  const v = validateCatalog(r.config);
  assert.deepEqual(v.problems, []);
  const foo = v.model.get("foo");
  assert.equal(foo?.defaultChannel?.name, "stable");
  assert.equal(foo?.channels.get("stable")?.bundles.get("foo.v2")?.replaces, "foo.v1");
  assert.equal(foo?.channels.get("stable")?.bundles.get("foo.v2")?.version?.toString(), "2.0.0");
});

type Expected = { code: string; message: string; line?: number };

/**
 * One named case per validation rule: the catalog, and what validating it gives — every problem exactly,
 * only the first, only the codes, one code among others (`has`), or a code that must not appear (`none`).
 * The messages are opm's (the conformance tests compare them with opm's on real catalogs).
 */
interface RuleCase {
  rule: string;
  name: string;
  catalog: string;
  expect: Expected[] | { first: Expected } | { codes: string[] } | { has: string } | { none: string };
}

const base = [pkg("foo"), ch("foo", "stable", [{ name: "foo.v1" }])];
const valid1 = [...base, bundle("foo", "foo.v1", "1.0.0")];
const dep = (entries: object[], pkgName = "foo") => ({ schema: "olm.deprecations", package: pkgName, entries });
const rel = (name: string, version: string, release: string) =>
  bundle("foo", name, version, {
    image: "quay.io/x/foo:v1",
    properties: [{ type: "olm.package", value: { packageName: "foo", version, release } }],
  });

const RULES: RuleCase[] = [
  // packages
  {
    rule: "FBC_PACKAGE_NO_NAME",
    name: "a package without a name",
    catalog: cat(pkg("")),
    expect: [{ code: "FBC_PACKAGE_NO_NAME", message: "config contains package with no name", line: 1 }],
  },
  {
    rule: "FBC_PACKAGE_DUPLICATE",
    name: "the same package twice",
    catalog: cat(...valid1, pkg("foo")),
    expect: [{ code: "FBC_PACKAGE_DUPLICATE", message: 'duplicate package "foo"', line: 4 }],
  },
  {
    rule: "FBC_PACKAGE_INVALID_NAME",
    name: "a package name that is not a lowercase RFC 1123 label",
    catalog: cat(pkg("Foo")),
    expect: [
      {
        code: "FBC_PACKAGE_INVALID_NAME",
        message:
          'invalid package name "Foo": [a lowercase RFC 1123 label must consist of lower case ' +
          "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. " +
          "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]",
        line: 1,
      },
    ],
  },
  {
    rule: "FBC_PACKAGE_NO_CHANNELS",
    name: "a package with no channel and no default channel",
    catalog: cat(pkg("foo", "")),
    expect: { codes: ["FBC_PACKAGE_NO_CHANNELS", "FBC_PACKAGE_NO_DEFAULT_CHANNEL"] },
  },
  {
    rule: "FBC_PACKAGE_NO_DEFAULT_CHANNEL",
    name: "a package whose defaultChannel is empty",
    catalog: cat(pkg("foo", ""), ch("foo", "stable", [{ name: "foo.v1" }]), bundle("foo", "foo.v1", "1.0.0")),
    expect: { has: "FBC_PACKAGE_NO_DEFAULT_CHANNEL" },
  },
  {
    rule: "FBC_DEFAULT_CHANNEL_UNDEFINED",
    name: "a default channel that no olm.channel defines",
    catalog: cat(pkg("foo", "missing"), ch("foo", "stable", [{ name: "foo.v1" }]), bundle("foo", "foo.v1", "1.0.0")),
    expect: [
      {
        code: "FBC_DEFAULT_CHANNEL_UNDEFINED",
        message: 'invalid package "foo": invalid channel "missing": channel must contain at least one bundle',
        line: 1,
      },
    ],
  },
  {
    rule: "FBC_PACKAGE_DUPLICATE_VERSIONS",
    name: "two bundles of one version",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v1b", replaces: "foo.v1" }]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v1b", "1.0.0"),
    ),
    expect: [
      {
        code: "FBC_PACKAGE_DUPLICATE_VERSIONS",
        message: 'invalid package "foo": duplicate versions found in bundles: [{1.0.0: [foo.v1, foo.v1b]}]',
        line: 1,
      },
    ],
  },
  {
    rule: "FBC_PACKAGE_DUPLICATE_VERSIONS",
    name: "versions differing only in build metadata are not duplicates",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v1b", replaces: "foo.v1" }]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v1b", "1.0.0+b"),
      bundle("foo", "foo.v1c", "1.0.0"),
    ),
    expect: { none: "FBC_PACKAGE_DUPLICATE_VERSIONS" },
  },
  // channels
  {
    rule: "FBC_CHANNEL_UNKNOWN_PACKAGE",
    name: "a channel of a package that is not declared",
    catalog: cat(ch("nope", "stable", [])),
    expect: [{ code: "FBC_CHANNEL_UNKNOWN_PACKAGE", message: 'unknown package "nope" for channel "stable"', line: 1 }],
  },
  {
    rule: "FBC_CHANNEL_NO_NAME",
    name: "a channel without a name",
    catalog: cat(pkg("foo"), ch("foo", "", [])),
    expect: { has: "FBC_CHANNEL_NO_NAME" },
  },
  {
    rule: "FBC_CHANNEL_DUPLICATE",
    name: "the same channel twice",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }]),
      ch("foo", "stable", []),
      bundle("foo", "foo.v1", "1.0.0"),
    ),
    expect: [{ code: "FBC_CHANNEL_DUPLICATE", message: 'package "foo" has duplicate channel "stable"', line: 3 }],
  },
  {
    rule: "FBC_CHANNEL_DUPLICATE_ENTRY",
    name: "the same entry twice in a channel",
    catalog: cat(pkg("foo"), ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v1" }])),
    expect: {
      first: {
        code: "FBC_CHANNEL_DUPLICATE_ENTRY",
        message: 'invalid package "foo", channel "stable": duplicate entry "foo.v1"',
        line: 2,
      },
    },
  },
  {
    rule: "FBC_CHANNEL_EMPTY",
    name: "a channel with no entries",
    catalog: cat(pkg("foo"), ch("foo", "stable", [])),
    expect: [
      {
        code: "FBC_CHANNEL_EMPTY",
        message: 'invalid package "foo": invalid channel "stable": channel must contain at least one bundle',
        line: 2,
      },
    ],
  },
  {
    rule: "FBC_CHANNEL_ENTRY_NO_BUNDLE",
    name: "a channel entry with no olm.bundle",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v2", replaces: "foo.v1" }]),
      bundle("foo", "foo.v1", "1.0.0"),
    ),
    expect: [
      {
        code: "FBC_CHANNEL_ENTRY_NO_BUNDLE",
        message: 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v2]',
        line: 2,
      },
    ],
  },
  {
    rule: "FBC_CHANNEL_MULTIPLE_HEADS",
    name: "two entries nothing replaces",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v2" }]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v2", "2.0.0"),
    ),
    expect: [
      {
        code: "FBC_CHANNEL_MULTIPLE_HEADS",
        message:
          'invalid package "foo": invalid channel "stable": multiple channel heads found in graph: foo.v1, foo.v2',
        line: 2,
      },
    ],
  },
  {
    rule: "FBC_CHANNEL_NO_HEAD",
    name: "two entries replacing each other",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [
        { name: "foo.v1", replaces: "foo.v2" },
        { name: "foo.v2", replaces: "foo.v1" },
      ]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v2", "2.0.0"),
    ),
    expect: { codes: ["FBC_CHANNEL_NO_HEAD"] },
  },
  {
    rule: "FBC_CHANNEL_NO_HEAD",
    name: "an entry replacing itself",
    catalog: cat(
      pkg("a"),
      ch("a", "stable", [{ name: "a.v4", replaces: "a.v4", skips: ["x"] }]),
      bundle("a", "a.v4", "4.0.0"),
    ),
    expect: { codes: ["FBC_CHANNEL_NO_HEAD"] },
  },
  {
    rule: "FBC_CHANNEL_CYCLE",
    name: "a replaces chain that comes back to itself below the head",
    catalog: cat(
      pkg("a"),
      ch("a", "stable", [
        { name: "a.v1", replaces: "a.v3" },
        { name: "a.v2", replaces: "a.v1" },
        { name: "a.v3", replaces: "a.v2" },
        { name: "a.v4", replaces: "a.v3" },
      ]),
      bundle("a", "a.v1", "1.0.0"),
      bundle("a", "a.v2", "2.0.0"),
      bundle("a", "a.v3", "3.0.0"),
      bundle("a", "a.v4", "4.0.0"),
    ),
    expect: [
      {
        code: "FBC_CHANNEL_CYCLE",
        message:
          'invalid package "a": invalid channel "stable": detected cycle ' +
          "in replaces chain of upgrade graph: a.v3 -> a.v2 -> a.v1 -> a.v3",
        line: 2,
      },
    ],
  },
  {
    rule: "FBC_CHANNEL_STRANDED",
    name: "a bundle no upgrade reaches",
    catalog: cat(
      pkg("a"),
      ch("a", "stable", [
        { name: "a.v1" },
        { name: "a.v2", replaces: "a.v1" },
        { name: "a.v3", replaces: "a.v2", skips: ["a.v2"] },
      ]),
      bundle("a", "a.v1", "1.0.0"),
      bundle("a", "a.v2", "2.0.0"),
      bundle("a", "a.v3", "3.0.0"),
    ),
    expect: [
      {
        code: "FBC_CHANNEL_STRANDED",
        message: 'invalid package "a": invalid channel "stable": channel contains one or more stranded bundles: a.v1',
        line: 2,
      },
    ],
  },
  // bundles
  {
    rule: "FBC_BUNDLE_NO_NAME",
    name: "a bundle without a name",
    catalog: cat(pkg("foo"), ch("foo", "stable", [{ name: "" }]), bundle("foo", "", "1.0.0")),
    expect: { has: "FBC_BUNDLE_NO_NAME" },
  },
  {
    rule: "FBC_BUNDLE_NO_PACKAGE",
    name: "a bundle without a package",
    catalog: cat(...base, { ...bundle("foo", "foo.v1", "1.0.0"), package: "" }),
    expect: { has: "FBC_BUNDLE_NO_PACKAGE" },
  },
  {
    rule: "FBC_BUNDLE_UNKNOWN_PACKAGE",
    name: "a bundle of a package that is not declared",
    catalog: cat(...valid1, bundle("bar", "bar.v1", "1.0.0")),
    expect: [{ code: "FBC_BUNDLE_UNKNOWN_PACKAGE", message: 'unknown package "bar" for bundle "bar.v1"', line: 4 }],
  },
  {
    rule: "FBC_BUNDLE_DUPLICATE",
    name: "the same bundle twice",
    catalog: cat(...valid1, bundle("foo", "foo.v1", "1.0.0")),
    expect: [{ code: "FBC_BUNDLE_DUPLICATE", message: 'package "foo" has duplicate bundle "foo.v1"', line: 4 }],
  },
  {
    rule: "FBC_BUNDLE_PROPERTY_INVALID",
    name: "an olm.package property of the wrong type",
    catalog: cat(
      ...base,
      bundle("foo", "foo.v1", "1.0.0", { properties: [{ type: "olm.package", value: { packageName: 5 } }] }),
    ),
    expect: {
      first: {
        code: "FBC_BUNDLE_PROPERTY_INVALID",
        message:
          'parse properties for bundle "foo.v1": parse property[0] of type "olm.package": ' +
          "json: cannot unmarshal number into Go struct field Package.packageName of type string",
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_PROPERTY_INVALID",
    name: "a property without a value",
    catalog: cat(...base, bundle("foo", "foo.v1", "1.0.0", { properties: [{ type: "olm.gvk" }] })),
    expect: {
      first: {
        code: "FBC_BUNDLE_PROPERTY_INVALID",
        message:
          'parse properties for bundle "foo.v1": parse property[0] of type "olm.gvk": unexpected end of JSON input',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_PACKAGE_PROPERTY_COUNT",
    name: "a bundle with no olm.package property",
    catalog: cat(...base, bundle("foo", "foo.v1", "1.0.0", { properties: [] })),
    expect: {
      first: {
        code: "FBC_BUNDLE_PACKAGE_PROPERTY_COUNT",
        message: 'package "foo" bundle "foo.v1" must have exactly 1 "olm.package" property, found 0',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_PACKAGE_MISMATCH",
    name: "an olm.package property naming another package",
    catalog: cat(
      ...base,
      bundle("foo", "foo.v1", "1.0.0", {
        properties: [{ type: "olm.package", value: { packageName: "bar", version: "1.0.0" } }],
      }),
    ),
    expect: {
      first: {
        code: "FBC_BUNDLE_PACKAGE_MISMATCH",
        message: 'package "foo" does not match "olm.package" property "bar"',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_IMAGE_INVALID",
    name: "an image reference with an uppercase repository",
    catalog: cat(...base, bundle("foo", "foo.v1", "1.0.0", { image: "quay.io/Foo/bar:1" })),
    expect: {
      first: {
        code: "FBC_BUNDLE_IMAGE_INVALID",
        message:
          'package "foo" bundle "foo.v1" image: invalid image pull spec ' +
          '"quay.io/Foo/bar:1": invalid reference format: repository name must be lowercase',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_RELATED_IMAGE_INVALID",
    name: "a related image with a malformed digest",
    catalog: cat(...base, bundle("foo", "foo.v1", "1.0.0", { relatedImages: [{ name: "", image: "x@ssha256:abc" }] })),
    expect: {
      first: {
        code: "FBC_BUNDLE_RELATED_IMAGE_INVALID",
        message:
          'package "foo" bundle "foo.v1" relatedImages[0].image: invalid ' +
          'image pull spec "x@ssha256:abc": invalid reference format',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_VERSION_INVALID",
    name: "a version with four parts",
    catalog: cat(...base, bundle("foo", "foo.v1", "0.1.0.1")),
    expect: {
      first: {
        code: "FBC_BUNDLE_VERSION_INVALID",
        message: 'error parsing bundle "foo.v1" version "0.1.0.1": Invalid character(s) found in patch number "0.1"',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_NOT_IN_CHANNEL",
    name: "a bundle no channel lists",
    catalog: cat(...valid1, bundle("foo", "foo.v2", "2.0.0")),
    expect: [
      {
        code: "FBC_BUNDLE_NOT_IN_CHANNEL",
        message: 'package "foo", bundle "foo.v2" not found in any channel entries',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_BUNDLE_RELEASE_INVALID",
    name: "a release with an empty segment",
    catalog: cat(pkg("foo"), ch("foo", "stable", [{ name: "foo.v1" }]), rel("foo.v1", "1.0.0", "bad..x")),
    expect: {
      first: {
        code: "FBC_BUNDLE_RELEASE_INVALID",
        message:
          'error parsing bundle "foo.v1" release version "bad..x": ' +
          'invalid release "bad..x": segment 1: Prerelease is empty',
        line: 3,
      },
    },
  },
  {
    rule: "FBC_BUNDLE_BUILD_WITH_RELEASE",
    name: "build metadata in the version of a bundle with a release (and its name not normalized)",
    catalog: cat(
      pkg("foo", "alpha"),
      ch("foo", "alpha", [{ name: "foo.v0.1.0+alpha.1.0.0-0.0.1" }]),
      rel("foo.v0.1.0+alpha.1.0.0-0.0.1", "0.1.0+alpha.1.0.0", "0.0.1"),
    ),
    expect: [
      {
        code: "FBC_BUNDLE_BUILD_WITH_RELEASE",
        message:
          'invalid package "foo": invalid channel "alpha": invalid bundle ' +
          '"foo.v0.1.0+alpha.1.0.0-0.0.1": cannot use build metadata in version with a release version',
        line: 3,
      },
      {
        code: "FBC_BUNDLE_NAME_NOT_NORMALIZED",
        message:
          'invalid package "foo": invalid channel "alpha": invalid bundle "foo.v0.1.0+alpha.1.0.0-0.0.1": ' +
          'name "foo.v0.1.0+alpha.1.0.0-0.0.1" does not match normalized name "foo-v0.1.0+alpha.1.0.0-0.0.1"',
        line: 3,
      },
    ],
  },
  {
    rule: "FBC_BUNDLE_NAME_NOT_NORMALIZED",
    name: "a bundle with a release whose name is not <package>-v<version>-<release>",
    catalog: cat(pkg("foo"), ch("foo", "stable", [{ name: "foo.v1" }]), rel("foo.v1", "1.0.0", "2")),
    expect: { has: "FBC_BUNDLE_NAME_NOT_NORMALIZED" },
  },
  {
    rule: "FBC_BUNDLE_SKIPRANGE_INVALID",
    name: "a skipRange blang cannot parse",
    catalog: cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1", skipRange: ">v0.1.0" }]),
      bundle("foo", "foo.v1", "1.0.0"),
    ),
    expect: [
      {
        code: "FBC_BUNDLE_SKIPRANGE_INVALID",
        message:
          'invalid package "foo": invalid channel "stable": invalid bundle "foo.v1": invalid skipRange ' +
          '">v0.1.0": Could not parse Range ">v0.1.0": Could not parse comparator ">v" in ">v0.1.0"',
        line: 2,
      },
    ],
  },
  {
    rule: "FBC_BUNDLE_EMPTY_SKIP",
    name: "an empty name among skips",
    catalog: cat(pkg("foo"), ch("foo", "stable", [{ name: "foo.v1", skips: [""] }]), bundle("foo", "foo.v1", "1.0.0")),
    expect: { has: "FBC_BUNDLE_EMPTY_SKIP" },
  },
  {
    rule: "FBC_BUNDLE_NO_IMAGE",
    name: "a bundle without an image",
    catalog: cat(...base, bundle("foo", "foo.v1", "1.0.0", { image: "" })),
    expect: { codes: ["FBC_BUNDLE_NO_IMAGE"] },
  },
  // deprecations
  {
    rule: "FBC_DEPRECATION_NO_PACKAGE",
    name: "deprecations without a package",
    catalog: cat(...valid1, dep([], "")),
    expect: [
      { code: "FBC_DEPRECATION_NO_PACKAGE", message: "package name must be set for deprecation item 0", line: 4 },
    ],
  },
  {
    rule: "FBC_DEPRECATION_UNKNOWN_PACKAGE",
    name: "deprecations of a package that is not declared",
    catalog: cat(...valid1, dep([], "bar")),
    expect: [
      {
        code: "FBC_DEPRECATION_UNKNOWN_PACKAGE",
        message: 'cannot apply deprecations to an unknown package "bar"',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_DUPLICATE",
    name: "two olm.deprecations of one package",
    catalog: cat(...valid1, dep([]), dep([])),
    expect: [
      {
        code: "FBC_DEPRECATION_DUPLICATE",
        message: 'expected a maximum of one deprecation per package: "foo"',
        line: 5,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_NO_SCHEMA",
    name: "an entry whose reference has no schema",
    catalog: cat(...valid1, dep([{ reference: { schema: "" }, message: "m" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_NO_SCHEMA",
        message: 'schema must be set for deprecation entry [0] for package "foo"',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_DUPLICATE_ENTRY",
    name: "the package deprecated twice",
    catalog: cat(
      ...valid1,
      dep([
        { reference: { schema: "olm.package" }, message: "m" },
        { reference: { schema: "olm.package" }, message: "n" },
      ]),
    ),
    expect: [
      {
        code: "FBC_DEPRECATION_DUPLICATE_ENTRY",
        message:
          'duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.package", Name:""} for package "foo"',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_UNKNOWN_BUNDLE",
    name: "a deprecated bundle that does not exist",
    catalog: cat(...valid1, dep([{ reference: { schema: "olm.bundle", name: "foo.v9" }, message: "m" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_UNKNOWN_BUNDLE",
        message: 'cannot deprecate bundle "foo.v9" for package "foo": bundle not found',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_UNKNOWN_CHANNEL",
    name: "a deprecated channel that does not exist",
    catalog: cat(...valid1, dep([{ reference: { schema: "olm.channel", name: "beta" }, message: "m" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_UNKNOWN_CHANNEL",
        message: 'cannot deprecate channel "beta" for package "foo": channel not found',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_PACKAGE_NAME_SET",
    name: "a package deprecation that names the package",
    catalog: cat(...valid1, dep([{ reference: { schema: "olm.package", name: "foo" }, message: "m" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_PACKAGE_NAME_SET",
        message: 'package name must be empty for deprecated package "foo" (specified "foo")',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_UNKNOWN_SCHEMA",
    name: "a deprecated object of an unknown schema",
    catalog: cat(...valid1, dep([{ reference: { schema: "olm.what", name: "x" }, message: "m" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_UNKNOWN_SCHEMA",
        message:
          'cannot deprecate object declcfg.PackageScopedReference{Schema:"olm.what", ' +
          'Name:"x"} referenced by entry 0 for package "foo": object schema unknown',
        line: 4,
      },
    ],
  },
  {
    rule: "FBC_DEPRECATION_NO_MESSAGE",
    name: "a deprecation entry without a message",
    catalog: cat(...valid1, dep([{ reference: { schema: "olm.package" }, message: "" }])),
    expect: [
      {
        code: "FBC_DEPRECATION_NO_MESSAGE",
        message: 'invalid package "foo": invalid deprecation: message must be set',
        line: 1,
      },
    ],
  },
];

for (const c of RULES)
  test(`${c.rule}: ${c.name}`, () => {
    const got = problems(c.catalog);
    const e = c.expect;
    if (Array.isArray(e)) assert.deepEqual(got, e);
    else if ("first" in e) assert.deepEqual(got[0], e.first);
    else if ("codes" in e)
      assert.deepEqual(
        got.map((p) => p.code),
        e.codes,
      );
    else if ("has" in e)
      assert.ok(
        got.some((p) => p.code === e.has),
        JSON.stringify(got),
      );
    else assert.ok(!got.some((p) => p.code === e.none), JSON.stringify(got));
    // every case shows its rule, unless it shows that the rule does not apply
    if (!("none" in e))
      assert.ok(
        got.some((p) => p.code === c.rule),
        `${c.rule} among ${JSON.stringify(got)}`,
      );
  });

test("every problem code validate.ts can report has a named case above", () => {
  const source = readFileSync(join(import.meta.dirname, "validate.ts"), "utf8");
  const emitted = new Set(source.match(/"FBC_[A-Z0-9_]+"/g)?.map((s) => s.slice(1, -1)));
  const covered = new Set(RULES.filter((c) => !("none" in c.expect)).map((c) => c.rule));
  assert.deepEqual([...emitted].filter((code) => !covered.has(code)).sort(), []);
  assert.ok(emitted.size >= 44);
});

test("release versions", () => {
  assert.deepEqual(parseRelease(""), []);
  assert.equal(
    parseRelease("a".repeat(21)),
    `invalid release "${"a".repeat(21)}": exceeds maximum length of 20 characters`,
  );
  assert.equal(
    parseRelease("01.x"),
    'invalid release "01.x": segment 0: Numeric PreRelease version must not contain leading zeroes "01"',
  );
  assert.deepEqual(dns1123LabelErrors("a.b"), ["must not contain dots"]);
  assert.deepEqual(dns1123LabelErrors("a".repeat(64)), ["must be no more than 63 characters"]);
});

test("problems from several packages come out all at once, sorted by location", () => {
  const text = cat(
    pkg("a"),
    ch("a", "stable", [{ name: "a.v1" }, { name: "a.v2" }]),
    bundle("a", "a.v1", "1.0.0"),
    bundle("a", "a.v2", "2.0.0"),
    pkg("b"),
    ch("b", "stable", []),
    pkg("B"),
  );
  const ps = problems(text);
  assert.deepEqual(
    ps.map((p) => [p.code, p.line]),
    [
      ["FBC_CHANNEL_MULTIPLE_HEADS", 2],
      ["FBC_CHANNEL_EMPTY", 6],
      ["FBC_PACKAGE_INVALID_NAME", 7],
    ],
  );
  // same input, same output
  assert.deepEqual(problems(text), ps);
});

test("validateCatalog is convertToModel then validateModel: same problems, same order", () => {
  const text = cat(
    pkg("a"),
    ch("a", "stable", [{ name: "a.v1" }, { name: "a.v2" }]),
    bundle("a", "a.v1", "1.0.0"),
    bundle("a", "a.v2", "2.0.0"),
    bundle("a", "a.v3", "x"),
    pkg("b"),
    ch("b", "stable", [{ name: "b.v1" }, { name: "b.v1" }]),
    pkg("c"),
    ch("c", "stable", []),
    pkg("B"),
  );
  const r = loadText(text, "catalog.json");
  const conversion = convertToModel(r.config);
  assert.deepEqual(
    conversion.problems.map((p) => [p.code, p.loc?.line]),
    [
      ["FBC_BUNDLE_VERSION_INVALID", 5],
      ["FBC_CHANNEL_DUPLICATE_ENTRY", 7],
      ["FBC_PACKAGE_INVALID_NAME", 10],
    ],
  );
  assert.deepEqual([...conversion.rejectedChannelPackages], ["b"]);
  const modelProblems = validateModel(conversion.model, conversion);
  assert.deepEqual(
    modelProblems.map((p) => [p.code, p.loc?.line]),
    [
      ["FBC_CHANNEL_MULTIPLE_HEADS", 2],
      ["FBC_CHANNEL_EMPTY", 9],
    ],
  );
  assert.deepEqual([...conversion.rejectedDefaultChannels], ["b"]);
  // without what the conversion set aside, the package of the rejected channel is reported again
  assert.deepEqual(
    validateModel(conversion.model)
      .filter((p) => p.blob?.name === "b")
      .map((p) => p.code),
    ["FBC_PACKAGE_NO_CHANNELS", "FBC_PACKAGE_NO_DEFAULT_CHANNEL"],
  );
  const all = validateCatalog(loadText(text, "catalog.json").config).problems;
  const together = [...conversion.problems, ...modelProblems].sort((x, y) => (x.loc?.line ?? 0) - (y.loc?.line ?? 0));
  assert.deepEqual(
    all.map((p) => [p.code, p.message, p.loc?.line]),
    together.map((p) => [p.code, p.message, p.loc?.line]),
  );
});

test("a duplicate channel entry is the only problem: the bundles the channel lists are not 'in no channel'", () => {
  const ps = problems(
    cat(
      pkg("foo"),
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v2", replaces: "foo.v1" }, { name: "foo.v2" }]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v2", "2.0.0"),
      // still reported: no channel lists this one
      bundle("foo", "foo.v3", "3.0.0"),
    ),
  );
  assert.deepEqual(
    ps.map((p) => [p.code, p.line]),
    [
      ["FBC_CHANNEL_DUPLICATE_ENTRY", 2],
      ["FBC_BUNDLE_NOT_IN_CHANNEL", 5],
    ],
  );
  assert.equal(ps[0].message, 'invalid package "foo", channel "stable": duplicate entry "foo.v2"');
  // the same for the entries of a channel defined twice
  assert.deepEqual(
    problems(
      cat(
        pkg("foo"),
        ch("foo", "stable", [{ name: "foo.v1" }]),
        ch("foo", "stable", [{ name: "foo.v2" }]),
        bundle("foo", "foo.v1", "1.0.0"),
        bundle("foo", "foo.v2", "2.0.0"),
      ),
    ).map((p) => p.code),
    ["FBC_CHANNEL_DUPLICATE"],
  );
});

test("a missing olm.package is reported once, with the root cause; independent problems of its blobs remain", () => {
  // channel c<i> lists bundles k.v<i> to k.v10
  const channels = Array.from({ length: 7 }, (_, i) =>
    ch(
      "kueue-operator",
      `c${i}`,
      Array.from({ length: 11 - i }, (_, j) => ({ name: `k.v${i + j}` })),
    ),
  );
  const bundles = Array.from({ length: 11 }, (_, i) => bundle("kueue-operator", `k.v${i}`, `1.${i}.0`));
  const r = loadText(cat(...channels, ...bundles), "catalog.json");
  const ps = validateCatalog(r.config).problems;
  assert.deepEqual(
    ps.map((p) => [p.code, p.loc?.line]),
    [["FBC_CHANNEL_UNKNOWN_PACKAGE", 1]],
  );
  // opm's message (opm stops at the first channel naming the package), the cause as the hint
  assert.equal(ps[0].message, 'unknown package "kueue-operator" for channel "c0"');
  assert.equal(
    ps[0].hint,
    'package "kueue-operator" has no olm.package blob; 7 channels and 11 bundles name it (this is the first): ' +
      'add an olm.package blob named "kueue-operator", or fix their "package"',
  );

  // a duplicate bundle and a dangling entry of that package are problems of their own: still reported
  const more = problems(
    cat(
      ch("foo", "stable", [{ name: "foo.v1" }, { name: "foo.v3" }]),
      bundle("foo", "foo.v1", "1.0.0"),
      bundle("foo", "foo.v1", "1.0.0"),
      { schema: "olm.deprecations", package: "foo", entries: [] },
    ),
  );
  assert.deepEqual(
    more.map((p) => [p.code, p.line]),
    [
      ["FBC_CHANNEL_ENTRY_NO_BUNDLE", 1],
      ["FBC_CHANNEL_UNKNOWN_PACKAGE", 1],
      ["FBC_BUNDLE_DUPLICATE", 3],
    ],
  );
  assert.match(more[2].message, /^package "foo" has duplicate bundle "foo\.v1"$/);
  assert.match(more[0].message, /\[foo\.v3\]/);
  // with nothing but bundles, opm's first message is the first bundle's; no channel to be missing from
  assert.deepEqual(
    problems(cat(bundle("bar", "bar.v1", "1.0.0"), bundle("bar", "bar.v2", "2.0.0"))).map((p) => [p.code, p.message]),
    [["FBC_BUNDLE_UNKNOWN_PACKAGE", 'unknown package "bar" for bundle "bar.v1"']],
  );
});
