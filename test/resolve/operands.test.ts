/**
 * Seed 004 (operand versioning / image selection) as scenarios on small catalogs: the related
 * image catalog entry, the operand catalog entry with olm.operand.supported / olm.operand.required,
 * operand versions asked for by Inputs, updates shipped out of band (another catalog), package
 * scoping, conflicts in plain words, and the image list for disconnected mirroring.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  catalogImages,
  CatalogSet,
  resolve,
  resolveSetImages,
  type Input,
  type ResolveSet,
} from "../../src/resolve/index.js";
import { catalog, opProp, operand, relatedImages, sub, type P } from "./helpers.js";

// The seed's example: etcdoperator-community.v0.6.1 supports etcd 3.1.1 and >= 2.1.0 < 3.0.0,
// requires the prometheus operand >= 2.1.0 < 3.0.0 and the related images >= 0.9.0 < 1.0.0.
const etcd: P = {
  name: "etcd",
  bundles: [
    {
      name: "etcdoperator-community.v0.6.0",
      version: "0.6.0",
      extra: [
        opProp("olm.operand.supported", "etcd", ">=2.0.0 <3.0.0"),
        opProp("olm.relatedImageBundle", "etcdoperator-related", ">= 0.9.0 < 1.0.0"),
      ],
    },
    {
      name: "etcdoperator-community.v0.6.1",
      version: "0.6.1",
      replaces: "etcdoperator-community.v0.6.0",
      extra: [
        opProp("olm.operand.supported", "etcd", "3.1.1"),
        opProp("olm.operand.supported", "etcd", ">= 2.1.0 < 3.0.0"),
        opProp("olm.operand.required", "prometheus", ">= 2.1.0 < 3.0.0"),
        opProp("olm.relatedImageBundle", "etcdoperator-related", ">= 0.9.0 < 1.0.0"),
      ],
    },
  ],
};
const prometheus: P = {
  name: "prometheus",
  bundles: [
    {
      name: "prometheus-operator.v1.0.0",
      version: "1.0.0",
      extra: [opProp("olm.operand.supported", "prometheus", ">=2.0.0 <3.0.0")],
    },
  ],
};
const ENTRIES = [
  operand("etcd", "2.0.5"),
  operand("etcd", "2.1.5"),
  operand("etcd", "3.1.1"),
  operand("etcd", "3.2.0"),
  operand("prometheus", "2.5.0"),
  operand("prometheus", "2.9.0"),
  operand("prometheus", "3.0.0"),
  relatedImages("etcdoperator-related", "0.9.0", ["etcd-stable"]),
  relatedImages("etcdoperator-related", "0.9.1", ["etcd-stable"]),
  relatedImages("etcdoperator-related", "1.0.0", ["etcd-stable"]),
];
const community = (extra: unknown[] = ENTRIES) => catalog("community", [etcd, prometheus], 0, extra);
const set1 = () => new CatalogSet([community()]);

const withOperands = (
  name: string,
  pkg: string,
  ops: { name: string; version?: string }[],
  more: Parameters<typeof sub>[2] = {},
): Input => {
  const i = sub(name, pkg, more);
  for (const o of ops)
    i.constraints.push({
      type: "olm.operand",
      value: o.version ? { name: o.name, version: o.version } : { name: o.name },
    });
  return i;
};
const ops = (rs: ResolveSet) => rs.operands.map((o) => `${o.schema} ${o.name} ${o.version} (${o.catalog})`);
const failure = (rs: ResolveSet, input: string) =>
  rs.inputs.find((i) => i.name === input)?.conditions.find((c) => c.type === "ResolutionFailed")?.message ?? "";

test(
  "related image catalog entry: the newest olm.relatedimages " +
    "in the bundle's range is installed with it, images named",
  () => {
    const rs = resolve({ catalogs: set1(), inputs: [sub("etcd", "etcd")] });
    assert.equal(rs.resolved, true, JSON.stringify(rs.inputs));
    const rel = rs.operands.find((o) => o.schema === "olm.relatedimages");
    assert.deepEqual(rel, {
      schema: "olm.relatedimages",
      name: "etcdoperator-related",
      version: "0.9.1",
      package: "",
      catalog: "community",
      images: [{ name: "etcd-stable", image: "quay.io/related/etcdoperator-related:0.9.1-etcd-stable" }],
      requestedBy: [],
      requiredBy: ["etcdoperator-community.v0.6.1"],
      managedBy: [],
      dryRun: false,
    });
  },
);

test("operand required: the newest operand in range, and an operator that supports it, are pulled in", () => {
  const rs = resolve({ catalogs: set1(), inputs: [sub("etcd", "etcd")] });
  assert.deepEqual(rs.bundles.map((b) => b.name).sort(), [
    "etcdoperator-community.v0.6.1",
    "prometheus-operator.v1.0.0",
  ]);
  assert.deepEqual(ops(rs), [
    "olm.operand prometheus 2.9.0 (community)",
    "olm.relatedimages etcdoperator-related 0.9.1 (community)",
  ]);
  const prom = rs.operands.find((o) => o.name === "prometheus");
  assert.deepEqual(prom?.requiredBy, ["etcdoperator-community.v0.6.1"]);
  assert.deepEqual(prom?.managedBy, ["prometheus-operator.v1.0.0"]);
  const inst = rs.inputs[0].instances[0];
  assert.deepEqual(inst.dependencies, [
    {
      kind: "Instance",
      name: "prometheus-operator.v1.0.0",
      meets: [{ "olm.operand.required": { name: "prometheus", version: ">= 2.1.0 < 3.0.0" } }],
    },
  ]);
  assert.deepEqual(
    inst.operands?.map((o) => `${o.schema} ${o.name} ${o.version}`),
    ["olm.operand prometheus 2.9.0", "olm.relatedimages etcdoperator-related 0.9.1"],
  );
  assert.deepEqual(rs.bundles.find((b) => b.package === "prometheus")?.dependencyOf, ["etcdoperator-community.v0.6.1"]);
});

test("an Input asks for an operand version: the operator must support it (olm.operand.supported)", () => {
  const exact = resolve({
    catalogs: set1(),
    inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: "3.1.1" }])],
  });
  assert.equal(exact.resolved, true);
  const e = exact.operands.find((o) => o.name === "etcd");
  assert.equal(e?.version, "3.1.1");
  assert.deepEqual(e?.requestedBy, ["etcd"]);
  assert.deepEqual(e?.managedBy, ["etcdoperator-community.v0.6.1"]);
  assert.deepEqual(e?.images, [{ name: "etcd", image: "quay.io/operands/etcd:3.1.1-etcd" }]);
  assert.deepEqual(exact.inputs[0].instances[0].operands?.[0], {
    schema: "olm.operand",
    name: "etcd",
    version: "3.1.1",
    catalog: "community",
    meets: [{ "olm.operand": { name: "etcd", version: "3.1.1" } }],
  });
  // A range: newest entry the operator supports (3.2.0 exists but is not supported).
  const range = resolve({
    catalogs: set1(),
    inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: ">=2.0.0" }])],
  });
  assert.deepEqual(
    range.operands.filter((o) => o.name === "etcd").map((o) => o.version),
    ["3.1.1"],
  );
  // No version: any supported version, newest first.
  const any = resolve({ catalogs: set1(), inputs: [withOperands("etcd", "etcd", [{ name: "etcd" }])] });
  assert.deepEqual(
    any.operands.filter((o) => o.name === "etcd").map((o) => o.version),
    ["3.1.1"],
  );
  // An unsupported version fails with a sentence naming what each candidate supports.
  const bad = resolve({
    catalogs: set1(),
    inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: "3.2.0" }])],
  });
  assert.equal(bad.resolved, false);
  assert.match(
    failure(bad, "etcd"),
    new RegExp(
      /input etcd asks for operand etcd in version range 3\.2\.0, but none of its 2 /.source +
        /candidate bundles supports it at a version the catalogs offer \(olm\.operand\.supported\): /.source +
        /etcdoperator-community\.v0\.6\.1 supports etcd 3\.1\.1 and etcd >= 2\.1\.0 /.source +
        /< 3\.0\.0; etcdoperator-community\.v0\.6\.0 supports etcd >=2\.0\.0 <3\.0\.0/.source,
    ),
  );
  // A version no entry has.
  const none = resolve({
    catalogs: set1(),
    inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: "4.0.0" }])],
  });
  assert.match(
    failure(none, "etcd"),
    new RegExp(
      /the catalogs have no olm\.operand entry etcd in version range /.source +
        /4\.0\.0 \(they have 3\.2\.0, 3\.1\.1, 2\.1\.5 and 2\.0\.5\)/.source,
    ),
  );
});

test("the newest operator that can manage the operand version asked for is chosen, older if need be", () => {
  // 2.0.5 is supported by v0.6.0 only (v0.6.1 supports >= 2.1.0).
  const rs = resolve({
    catalogs: set1(),
    inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: "2.0.5" }])],
  });
  assert.equal(rs.resolved, true, failure(rs, "etcd"));
  assert.deepEqual(
    rs.bundles.map((b) => b.name),
    ["etcdoperator-community.v0.6.0"],
  );
  assert.deepEqual(ops(rs), [
    "olm.operand etcd 2.0.5 (community)",
    "olm.relatedimages etcdoperator-related 0.9.1 (community)",
  ]);
});

test("one operator, several operand versions at once (an operator manages N versions)", () => {
  const rs = resolve({
    catalogs: set1(),
    inputs: [
      withOperands("etcd", "etcd", [
        { name: "etcd", version: "<3.0.0" },
        { name: "etcd", version: ">=3.0.0" },
      ]),
    ],
  });
  assert.equal(rs.resolved, true, failure(rs, "etcd"));
  assert.deepEqual(
    rs.operands.filter((o) => o.name === "etcd").map((o) => o.version),
    ["2.1.5", "3.1.1"],
  );
});

test("updates shipped out of band: a newer entry, or the same version re-pinned, in another catalog wins", () => {
  const fixes = catalog("operand-updates", [], 1, [
    relatedImages("etcdoperator-related", "0.9.2", ["etcd-stable"]),
    operand("prometheus", "2.9.0", { digest: "cve-fix" }),
  ]);
  const rs = resolve({ catalogs: new CatalogSet([community(), fixes]), inputs: [sub("etcd", "etcd")] });
  assert.equal(rs.resolved, true);
  assert.deepEqual(ops(rs), [
    "olm.operand prometheus 2.9.0 (operand-updates)",
    "olm.relatedimages etcdoperator-related 0.9.2 (operand-updates)",
  ]);
  assert.equal(rs.operands[0].images[0].image, "quay.io/operands/prometheus:2.9.0-prometheus-cve-fix");
  // The operator bundle itself did not change.
  assert.deepEqual(rs.bundles.map((b) => `${b.name} (${b.catalog})`).sort(), [
    "etcdoperator-community.v0.6.1 (community)",
    "prometheus-operator.v1.0.0 (community)",
  ]);
});

test("an entry scoped to a package is only used by that package's bundles", () => {
  const scoped = [operand("prometheus", "2.9.0", { package: "other" }), relatedImages("etcdoperator-related", "0.9.0")];
  // v0.6.1 cannot get its prometheus operand (the only entry belongs to package "other"), so the
  // resolver falls back to v0.6.0, which does not need it.
  const fallback = resolve({ catalogs: new CatalogSet([community(scoped)]), inputs: [sub("etcd", "etcd")] });
  assert.deepEqual(
    fallback.bundles.map((b) => b.name),
    ["etcdoperator-community.v0.6.0"],
  );
  const rs = resolve({
    catalogs: new CatalogSet([community(scoped)]),
    inputs: [sub("etcd", "etcd", { version: "0.6.1" })],
  });
  assert.equal(rs.resolved, false);
  assert.match(
    failure(rs, "etcd"),
    new RegExp(
      /etcdoperator-community\.v0\.6\.1 \(community\) requires operand prometheus in version range >= /.source +
        /2\.1\.0 < 3\.0\.0 \(olm\.operand\.required\), but no olm\.operand entry in the catalogs matches it/.source,
    ),
  );
  assert.doesNotMatch(failure(rs, "etcd"), /is mandatory|permits at most/);
});

test("conflicts in plain words: two operators need different versions of one related-image entry", () => {
  const a: P = {
    name: "a",
    bundles: [
      { name: "a.v1.0.0", version: "1.0.0", extra: [opProp("olm.relatedImageBundle", "shared", ">=1.0.0 <2.0.0")] },
    ],
  };
  const b: P = {
    name: "b",
    bundles: [{ name: "b.v1.0.0", version: "1.0.0", extra: [opProp("olm.relatedImageBundle", "shared", ">=2.0.0")] }],
  };
  const cat = catalog("c", [a, b], 0, [relatedImages("shared", "1.5.0"), relatedImages("shared", "2.0.0")]);
  const alone = resolve({ catalogs: new CatalogSet([cat]), inputs: [sub("a", "a")] });
  assert.deepEqual(ops(alone), ["olm.relatedimages shared 1.5.0 (c)"]);
  const both = resolve({ catalogs: new CatalogSet([cat]), inputs: [sub("a", "a"), sub("b", "b")] });
  assert.equal(both.resolved, false);
  const msg = failure(both, "a");
  assert.match(
    msg,
    new RegExp(
      /olm\.relatedimages shared 1\.5\.0 \(c\) and olm\.relatedimages shared 2\.0\.0 \(c\) /.source +
        /are versions of the related images shared, and only one of them can be installed/.source,
    ),
  );
  assert.match(
    msg,
    new RegExp(
      /a\.v1\.0\.0 \(c\) requires the related images shared in version range >=1\.0\.0 <2\.0\.0 /.source +
        /\(olm\.relatedImageBundle\), satisfied only by olm\.relatedimages shared 1\.5\.0 \(c\)/.source,
    ),
  );
});

test("a required operand no operator supports is explained", () => {
  const app: P = {
    name: "app",
    bundles: [{ name: "app.v1.0.0", version: "1.0.0", extra: [opProp("olm.operand.required", "redis", ">=7.0.0")] }],
  };
  const rs = resolve({
    catalogs: new CatalogSet([catalog("c", [app], 0, [operand("redis", "7.2.0")])]),
    inputs: [sub("app", "app")],
  });
  assert.equal(rs.resolved, false);
  assert.match(
    failure(rs, "app"),
    new RegExp(
      /olm\.operand redis 7\.2\.0 \(c\) needs an operator that manages it, but no /.source +
        /bundle in the catalogs supports redis 7\.2\.0 \(olm\.operand\.supported\)/.source,
    ),
  );
});

test(
  "minimal-version takes the lowest entry in range; force installs " +
    "the asked operand without dependencies; dry runs are marked",
  () => {
    const min = resolve({ catalogs: set1(), inputs: [sub("etcd", "etcd", { cls: "minimal-version" })] });
    assert.deepEqual(ops(min), [
      "olm.operand prometheus 2.5.0 (community)",
      "olm.relatedimages etcdoperator-related 0.9.0 (community)",
    ]);
    const force = resolve({
      catalogs: set1(),
      inputs: [
        withOperands("etcd", "etcd", [{ name: "etcd", version: ">=2.0.0" }], { cls: "force", version: "0.6.1" }),
      ],
    });
    assert.deepEqual(
      force.bundles.map((b) => `${b.name}:${b.action}`),
      ["etcdoperator-community.v0.6.1:force"],
    );
    assert.deepEqual(ops(force), ["olm.operand etcd 3.1.1 (community)"]);
    assert.deepEqual(force.operands[0].requestedBy, ["etcd"]);
    const dry = resolve({ catalogs: set1(), inputs: [sub("etcd", "etcd", { cls: "dry-run" })] });
    assert.ok(dry.operands.length === 2 && dry.operands.every((o) => o.dryRun));
  },
);

test("an invalid olm.operand input constraint is an InvalidConstraint", () => {
  const rs = resolve({ catalogs: set1(), inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: ">=>1" }])] });
  const c = rs.inputs[0].conditions[0];
  assert.equal(c.reason, "InvalidConstraint");
  assert.match(c.message, /input etcd: olm\.operand etcd: invalid version range ">=>1"/);
});

test(
  "disconnected mirroring: a resolveset needs only the chosen " +
    "entries' images; the catalog lists all, or those a package can use",
  () => {
    const rs = resolve({
      catalogs: set1(),
      inputs: [withOperands("etcd", "etcd", [{ name: "etcd", version: "3.1.1" }])],
    });
    const imgs = resolveSetImages(rs).map((i) => i.image);
    assert.deepEqual(imgs, [
      "quay.io/operands/etcd:3.1.1-etcd",
      "quay.io/operands/prometheus:2.9.0-prometheus",
      "quay.io/related/etcdoperator-related:0.9.1-etcd-stable",
      "quay.io/test/etcdoperator-community.v0.6.1:bundle",
      "quay.io/test/prometheus-operator.v1.0.0:bundle",
    ]);
    const use = resolveSetImages(rs).find((i) => i.image.includes("etcd:3.1.1"))?.uses;
    assert.deepEqual(use, [{ bundle: "", package: "", name: "etcd", schema: "olm.operand", entry: "etcd 3.1.1" }]);
    const all = catalogImages(set1()).map((i) => i.image);
    assert.equal(all.length, 2 + 1 + 10);
    // Only the prometheus package: its bundle and the prometheus operands it supports (not 3.0.0).
    assert.deepEqual(
      catalogImages(set1(), { packages: ["prometheus"] }).map((i) => i.image),
      [
        "quay.io/operands/prometheus:2.5.0-prometheus",
        "quay.io/operands/prometheus:2.9.0-prometheus",
        "quay.io/test/prometheus-operator.v1.0.0:bundle",
      ],
    );
  },
);

test("resolvesets without seed 004 content are unchanged apart from an empty operands list", () => {
  const plain: P = { name: "plain", bundles: [{ name: "plain.v1.0.0", version: "1.0.0" }] };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [plain])]), inputs: [sub("plain", "plain")] });
  assert.deepEqual(rs.operands, []);
  assert.equal(rs.inputs[0].instances[0].operands, undefined);
});

test("today's way (the seed's 'Today'): a bundle's relatedImages are listed for mirroring beside entry images", () => {
  const p: P = {
    name: "etcd2",
    bundles: [
      {
        name: "etcd2.v1.0.0",
        version: "1.0.0",
        related: ["quay.io/coreos/etcd:stable", "quay.io/coreos/etcd@sha256:" + "1".repeat(64)],
      },
    ],
  };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [p])]), inputs: [sub("etcd2", "etcd2")] });
  assert.deepEqual(
    resolveSetImages(rs).map((i) => i.image),
    ["quay.io/coreos/etcd:stable", "quay.io/coreos/etcd@sha256:" + "1".repeat(64), "quay.io/test/etcd2.v1.0.0:bundle"],
  );
});
