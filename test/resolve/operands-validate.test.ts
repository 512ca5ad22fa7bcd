/**
 * Validation of seed 004 content (an opcat extension): olm.operand / olm.relatedimages blobs and
 * the olm.operand.* / olm.relatedImageBundle bundle properties, with codes and file:line; render
 * output (opm-compatible) is unchanged by them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { formatProblem } from "../../src/errors/index.js";
import { loadText } from "../../src/fbc/load.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import { formatCatalog } from "../../src/fbc/write.js";
import { decodeOperandBlob } from "../../src/resolve/index.js";
import { fbc, opProp, operand, relatedImages } from "./helpers.js";

const pkg = {
  name: "etcd",
  bundles: [{ name: "etcd.v1.0.0", version: "1.0.0", extra: [opProp("olm.operand.supported", "etcd", ">=3.0.0")] }],
};

function problemsOf(blobs: unknown[], extra: { type: string; value: unknown }[] = []): string[] {
  const p = { ...pkg, bundles: [{ ...pkg.bundles[0], extra: [...pkg.bundles[0].extra, ...extra] }] };
  const loaded = loadText(fbc([p], blobs), "catalog.json");
  assert.deepEqual(loaded.problems, []);
  return validateCatalog(loaded.config).problems.map(formatProblem);
}

test("valid seed 004 content validates, and the seed's own examples are valid", () => {
  assert.deepEqual(
    problemsOf([
      operand("etcd", "3.1.1"),
      relatedImages("etcdoperator-related", "0.9.0"),
      operand("etcd", "3.1.1", { package: "etcd" }),
    ]),
    [],
  );
  const seedRelated = {
    schema: "olm.relatedimages",
    name: "etcdoperator-related",
    version: "0.9.0",
    relatedImages: [
      {
        name: "etcd-stable",
        image: "quay.io/coreos/etcd-operator@sha256:db563baa8194fcfe39d1df744ed70024b0f1f9e9b55b5923c2f3a413c44dc6b8",
      },
    ],
  };
  const seedOperand = {
    schema: "olm.operand",
    name: "etcd",
    version: "3.1.1",
    images: [
      {
        name: "etcd",
        image: "quay.io/coreos/etcd@sha256:db563baa8194fcfe39d1df744ed70024b0f1f9e9b55b5923c2f3a413c44dc6b8",
      },
    ],
  };
  assert.deepEqual(
    problemsOf(
      [seedRelated, seedOperand],
      [
        opProp("olm.operand.required", "prometheus", ">= 2.1.0 < 3.0.0"),
        opProp("olm.relatedImageBundle", "etcdoperator-related", ">= 0.9.0 < 1.0.0"),
      ],
    ),
    [],
  );
});

test("invalid blobs are reported with precise codes at file:line", () => {
  // Lines: 1 package, 2 channel, 3 bundle, then the blobs.
  const got = problemsOf([
    { schema: "olm.operand", name: "Etcd", version: "v3", images: [] },
    {
      schema: "olm.relatedimages",
      name: "rel",
      version: "1.0.0",
      relatedImages: [
        { name: "a", image: "quay.io/x:1" },
        { name: "a", image: "quay.io/x:2" },
      ],
      extra: 1,
    },
    { schema: "olm.operand", name: "etcd", version: "3.1.1", images: [{ name: "etcd", image: "not a ref" }] },
    operand("redis", "1.0.0"),
    operand("redis", "1.0.0"),
  ]);
  // Sorted by line, then code.
  assert.deepEqual(got, [
    'catalog.json:4: error[FBC_OPERAND_IMAGE_INVALID]: olm.operand "Etcd": images must be a ' +
      "non-empty list, got an empty list\n  hint: list the entry's images as images: [{name, image}]",
    'catalog.json:4: error[FBC_OPERAND_NAME_INVALID]: olm.operand "Etcd": ' +
      "invalid name: must be a lowercase RFC 1123 subdomain (lower case alphanumeric " +
      "characters, '-' or '.', starting and ending with an alphanumeric character)",
    'catalog.json:4: error[FBC_OPERAND_VERSION_INVALID]: olm.operand "Etcd": ' +
      'error parsing version "v3": No Major.Minor.Patch elements found\n' +
      "  hint: versions must be strict semver: MAJOR.MINOR.PATCH[-pre][+build], no leading v",
    'catalog.json:5: error[FBC_OPERAND_FIELD_INVALID]: olm.relatedimages "rel": unknown field "extra"\n' +
      "  hint: olm.relatedimages blobs have the fields schema, name, version, relatedImages",
    'catalog.json:5: error[FBC_OPERAND_IMAGE_DUPLICATE]: olm.relatedimages "rel": ' +
      'relatedImages[1]: duplicate image name "a"\n  hint: image names must be unique within an entry',
    'catalog.json:6: error[FBC_OPERAND_IMAGE_INVALID]: olm.operand "etcd": ' +
      'images[0].image: invalid image pull spec "not a ref": invalid reference format',
    'catalog.json:8: error[FBC_OPERAND_DUPLICATE]: duplicate olm.operand "redis" version "1.0.0"\n' +
      "  hint: the entry is already defined at catalog.json:7; " +
      "give each version one blob (another catalog may redefine it)",
  ]);
});

test("invalid seed 004 bundle properties are reported at the bundle", () => {
  const got = problemsOf(
    [],
    [
      { type: "olm.operand.required", value: { name: "prometheus", version: ">=>2" } },
      { type: "olm.relatedImageBundle", value: "etcdoperator-related" },
      { type: "olm.operand.supported", value: { name: "", version: "1.0.0" } },
      { type: "olm.operand.supported", value: { name: "x", version: "1.0.0", extra: true } },
    ],
  );
  assert.equal(got.length, 4);
  for (const g of got)
    assert.match(
      g,
      new RegExp(
        /^catalog\.json:3: error\[FBC_OPERAND_PROPERTY_INVALID\]: package "etcd" bundle /.source +
          /"etcd\.v1\.0\.0" property\[\d\] olm\.(operand\.(required|supported)|relatedImageBundle): /.source,
      ),
    );
  assert.match(got[0], /property\[2\] olm\.operand\.required: invalid version range ">=>2"/);
  assert.match(
    got[1],
    /property\[3\] olm\.relatedImageBundle: value must be an object with name and version, got a string/,
  );
  assert.match(got[2], /property\[4\] olm\.operand\.supported: name must be a non-empty string/);
  assert.match(got[3], /property\[5\] olm\.operand\.supported: unknown field "extra"/);
});

test("blobs of other custom schemas are still not looked into", () => {
  assert.deepEqual(
    problemsOf([
      { schema: "example.custom", anything: [1, 2] },
      { schema: "olm.operands", whatever: true },
    ]),
    [],
  );
});

test("render output is unchanged by seed 004 content (the blobs stay opm's 'other' blobs)", () => {
  const blobs = [
    operand("etcd", "3.1.1"),
    relatedImages("rel", "1.0.0"),
    { schema: "olm.operand", name: "BAD", version: "x" },
  ];
  const loaded = loadText(fbc([pkg], blobs), "catalog.json");
  const out = formatCatalog(loaded.config, "json");
  const rendered = out
    .split(/\n(?=\{)/)
    .filter((t) => t.trim() !== "")
    .map((t) => JSON.parse(t) as { schema: string });
  assert.deepEqual(
    rendered.filter((b) => b.schema.startsWith("olm.operand") || b.schema === "olm.relatedimages"),
    blobs,
  );
});

test("decodeOperandBlob: any valid entry decodes to its fields; any unknown top-level field is refused", () => {
  const nameArb = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
  const verArb = fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map(([a, b, c]) => `${a}.${b}.${c}`);
  fc.assert(
    fc.property(
      nameArb,
      verArb,
      fc.uniqueArray(nameArb, { minLength: 1, maxLength: 4 }),
      fc.option(fc.stringMatching(/^[a-z]{1,8}$/), { nil: undefined }),
      (name, version, imgs, extra) => {
        const images = imgs.map((n) => ({ name: n, image: `quay.io/o/${n}:v1` }));
        const value: Record<string, unknown> = { schema: "olm.operand", name, version, images };
        if (extra && !["schema", "name", "version", "package", "images"].includes(extra)) value[extra] = 1;
        const r = decodeOperandBlob("olm.operand", value as never);
        if (extra && !["schema", "name", "version", "package", "images"].includes(extra)) {
          assert.equal(r.blob, undefined);
          assert.ok(r.findings.some((f) => f.code === "FBC_OPERAND_FIELD_INVALID"));
        } else assert.deepEqual(r.blob, { schema: "olm.operand", name, version, package: "", images });
      },
    ),
  );
});
