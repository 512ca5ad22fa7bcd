/** Seed 002's user stories about resolution, as scenarios on small catalogs. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CatalogSet,
  parseInputDocuments,
  query,
  resolve,
  resolveSetImages,
  type ResolveSet,
} from "../../src/resolve/index.js";
import { catalog, chain, sub, type P } from "./helpers.js";
import type { JsonValue } from "../../src/fbc/types.js";

const GRUMBO = "manufacturing.how.theydoit.com/v1alpha1/Grumbo";
const plumbus: P = {
  name: "plumbus",
  bundles: chain("plumbus", ["1.0.0", "2.0.0", "2.4.5", "3.0.0"], (v) => ({
    requires: [GRUMBO],
    provides: [`how.theydoit.com/${v[0] === "3" ? "v2" : "v1"}/Plumbus`],
  })),
};
const grumbo: P = {
  name: "grumbo",
  bundles: chain("grumbo", ["0.1.0", "0.2.0", "0.3.0"], () => ({ provides: [GRUMBO] })),
};
const set1 = () => new CatalogSet([catalog("community", [plumbus, grumbo])]);

const chosen = (rs: ResolveSet) =>
  rs.bundles.map((b) => `${b.name}:${b.action}${b.pivotFrom ? "<" + b.pivotFrom : ""}`).sort();
const cond = (rs: ResolveSet, input: string, type: string) =>
  rs.inputs.find((i) => i.name === input)?.conditions.find((c) => c.type === type);

test("subscription: head of the channel and the newest dependencies; dependencies get generated Inputs", () => {
  const rs = resolve({
    catalogs: set1(),
    inputs: [sub("plumbus", "plumbus", { catalog: "community", channel: "stable" })],
  });
  assert.equal(rs.resolved, true);
  assert.deepEqual(chosen(rs), ["grumbo.v0.3.0:install", "plumbus.v3.0.0:install"]);
  assert.deepEqual(
    rs.generatedInputs.map((i) => i.name),
    ["grumbo"],
  );
  const inst = rs.inputs[0].instances[0];
  assert.equal(inst.name, "plumbus.v3.0.0");
  assert.deepEqual(inst.dependencies, [
    {
      kind: "Instance",
      name: "grumbo.v0.3.0",
      meets: [{ "olm.gvk.required": { group: "manufacturing.how.theydoit.com", version: "v1alpha1", kind: "Grumbo" } }],
    },
  ]);
  const grumboBundle = rs.bundles.find((b) => b.package === "grumbo");
  assert.deepEqual(grumboBundle?.dependencyOf, ["plumbus.v3.0.0"]);
});

test("force: every matching bundle, no dependency resolution", () => {
  const rs = resolve({ catalogs: set1(), inputs: [sub("plumbus", "plumbus", { cls: "force", version: "2.0.0" })] });
  assert.deepEqual(chosen(rs), ["plumbus.v2.0.0:force"]);
  const all = resolve({ catalogs: set1(), inputs: [sub("plumbus", "plumbus", { cls: "force", version: ">=2.0.0" })] });
  assert.deepEqual(chosen(all), ["plumbus.v2.0.0:force", "plumbus.v2.4.5:force", "plumbus.v3.0.0:force"]);
});

test("force update to a specific version from a catalog carries pivot data, even off the upgrade graph", () => {
  const rs = resolve({
    catalogs: set1(),
    inputs: [sub("plumbus", "plumbus", { cls: "force", version: "1.0.0" })],
    installed: [{ package: "plumbus", bundle: "plumbus.v3.0.0" }],
  });
  assert.deepEqual(chosen(rs), ["plumbus.v1.0.0:force<plumbus.v3.0.0"]);
});

test("minimal-version with a version: the operator at that version and the lowest dependencies", () => {
  const rs = resolve({
    catalogs: set1(),
    inputs: [sub("plumbus", "plumbus", { cls: "minimal-version", version: "2.0.0" })],
  });
  assert.deepEqual(chosen(rs), ["grumbo.v0.1.0:install", "plumbus.v2.0.0:install"]);
  assert.deepEqual(rs.generatedInputs, []);
});

test("minimal-version without a version: the operator follows updates, dependencies stay minimal", () => {
  const rs = resolve({ catalogs: set1(), inputs: [sub("plumbus", "plumbus", { cls: "minimal-version" })] });
  assert.deepEqual(chosen(rs), ["grumbo.v0.1.0:install", "plumbus.v3.0.0:install"]);
});

test("dependencies only update when the operator requires a newer version", () => {
  const p2: P = {
    name: "plumbus",
    bundles: chain("plumbus", ["1.0.0", "2.0.0"], (v) => ({
      requiresPackage: [["grumbo", v === "2.0.0" ? ">=0.2.0" : ">=0.1.0"]],
    })),
  };
  const cats = new CatalogSet([catalog("community", [p2, grumbo])]);
  const installed = [
    { package: "plumbus", bundle: "plumbus.v1.0.0" },
    { package: "grumbo", bundle: "grumbo.v0.1.0" },
  ];
  const stay = resolve({
    catalogs: cats,
    inputs: [sub("plumbus", "plumbus", { cls: "minimal-version", version: "1.0.0" })],
    installed,
  });
  assert.deepEqual(chosen(stay), ["grumbo.v0.1.0:unchanged", "plumbus.v1.0.0:unchanged"]);
  const up = resolve({ catalogs: cats, inputs: [sub("plumbus", "plumbus", { cls: "minimal-version" })], installed });
  assert.deepEqual(chosen(up), ["grumbo.v0.2.0:upgrade<grumbo.v0.1.0", "plumbus.v2.0.0:upgrade<plumbus.v1.0.0"]);
});

test("install at a version, then walk updates up to a bound, along upgrade edges only", () => {
  const installed = [{ package: "plumbus", bundle: "plumbus.v2.0.0" }];
  const rs = resolve({
    catalogs: set1(),
    inputs: [sub("plumbus", "plumbus", { cls: "minimal-version", version: "<=2.4.5" })],
    installed,
  });
  assert.deepEqual(
    chosen(rs).filter((s) => s.startsWith("plumbus")),
    ["plumbus.v2.4.5:upgrade<plumbus.v2.0.0"],
  );
  // Pinning a version that is not a successor fails with a sentence, and force leaves the graph.
  const pin = resolve({ catalogs: set1(), inputs: [sub("plumbus", "plumbus", { version: "3.0.0" })], installed });
  assert.equal(pin.resolved, false);
  assert.match(
    cond(pin, "plumbus", "ResolutionFailed")?.message ?? "",
    /none of which is installed or upgrades from the installed plumbus\.v2\.0\.0/,
  );
  const forced = resolve({
    catalogs: set1(),
    inputs: [sub("plumbus", "plumbus", { version: "3.0.0", cls: "force" })],
    installed,
  });
  assert.deepEqual(chosen(forced), ["plumbus.v3.0.0:force<plumbus.v2.0.0"]);
});

test("installed operators move one edge closest to the head: replaces, skips and skipRange", () => {
  const p: P = {
    name: "etcd",
    bundles: [
      { name: "etcd.v1", version: "1.0.0" },
      { name: "etcd.v2", version: "2.0.0", replaces: "etcd.v1" },
      { name: "etcd.v3", version: "3.0.0", replaces: "etcd.v2", skipRange: ">=1.0.0 <2.0.0" },
      { name: "etcd.v4", version: "4.0.0", replaces: "etcd.v3" },
    ],
  };
  const cats = new CatalogSet([catalog("c", [p])]);
  const rs = resolve({
    catalogs: cats,
    inputs: [sub("etcd", "etcd")],
    installed: [{ package: "etcd", bundle: "etcd.v1" }],
  });
  assert.deepEqual(chosen(rs), ["etcd.v3:upgrade<etcd.v1"]);
  assert.deepEqual(rs.installed[0].updates[0].options, ["etcd.v3", "etcd.v2"]);
});

test("unsatisfied dependencies are reported per instance and explained in sentences", () => {
  const p: P = { name: "lonely", bundles: [{ name: "lonely.v1", version: "1.0.0", requires: ["a.io/v1/A", GRUMBO] }] };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [p, grumbo])]), inputs: [sub("lonely", "lonely")] });
  assert.equal(rs.resolved, false);
  const failed = cond(rs, "lonely", "ResolutionFailed");
  assert.equal(failed?.reason, "ConstraintsNotSatisfiable");
  assert.match(
    failed?.message ?? "",
    new RegExp(
      /lonely\.v1 \(c\) requires an operator providing an API with group: /.source +
        /a\.io, version: v1, kind: A, but no bundle in the catalogs satisfies it/.source,
    ),
  );
  assert.doesNotMatch(failed?.message ?? "", /is mandatory|permits at most/);
  const dm = rs.inputs[0].instances[0].conditions[0];
  assert.equal(dm.type, "DependenciesMissing");
  assert.equal(dm.reason, "Only 1/2 dependency constraints are met.");
  assert.match(
    dm.message,
    new RegExp(
      /can be satisfied by grumbo\.v0\.3\.0, grumbo\.v0\.2\.0 and /.source +
        /grumbo\.v0\.1\.0, but no bundle satisfies providing an API with group: a\.io/.source,
    ),
  );
});

test("a blocked operator does not block an unrelated one", () => {
  const broken: P = {
    name: "broken",
    bundles: [{ name: "broken.v1", version: "1.0.0", requires: ["nobody/v1/Home"] }],
  };
  const rs = resolve({
    catalogs: new CatalogSet([catalog("c", [plumbus, grumbo, broken])]),
    inputs: [sub("broken", "broken"), sub("plumbus", "plumbus")],
  });
  assert.equal(rs.resolved, false);
  assert.ok(cond(rs, "broken", "ResolutionFailed"));
  assert.equal(cond(rs, "plumbus", "ResolutionFailed"), undefined);
  assert.deepEqual(chosen(rs), ["grumbo.v0.3.0:install", "plumbus.v3.0.0:install"]);
});

test("two operators that own the same API cannot both be installed", () => {
  const a: P = { name: "a", bundles: [{ name: "a.v1", version: "1.0.0", provides: ["x.io/v1/Thing"] }] };
  const b: P = { name: "b", bundles: [{ name: "b.v1", version: "1.0.0", provides: ["x.io/v1/Thing"] }] };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [a, b])]), inputs: [sub("a", "a"), sub("b", "b")] });
  assert.equal(rs.resolved, false);
  const m = cond(rs, "a", "ResolutionFailed")?.message ?? "";
  assert.match(m, /a\.v1 \(c\) and b\.v1 \(c\) provide Thing \(x\.io\/v1\), and there can be only one provider of it/);
  assert.equal(cond(rs, "b", "ResolutionFailed")?.message, m);
});

test("dry-run and dry-run-next: resolve without applying, against the next cluster release", () => {
  const ocp: P = {
    name: "ocp",
    bundles: chain("ocp", ["1.0.0", "2.0.0"], (v) => ({
      extra: [{ type: "olm.maxOpenShiftVersion", value: v === "2.0.0" ? "4.15" : "4.16" }],
    })),
  };
  const cats = new CatalogSet([catalog("c", [ocp])]);
  const now = resolve({
    catalogs: cats,
    inputs: [sub("ocp", "ocp", { cls: "dry-run" })],
    cluster: { openshiftVersion: "4.15.3" },
  });
  assert.equal(now.dryRun, true);
  assert.deepEqual(chosen(now), ["ocp.v2.0.0:install"]);
  assert.equal(now.bundles[0].dryRun, true);
  const next = resolve({
    catalogs: cats,
    inputs: [sub("ocp", "ocp", { cls: "dry-run-next" })],
    cluster: { openshiftVersion: "4.15.3" },
  });
  assert.deepEqual(chosen(next), ["ocp.v1.0.0:install"]);
});

test("minKubeVersion from olm.csv.metadata is checked against the described cluster", () => {
  const k: P = {
    name: "k",
    bundles: chain("k", ["1.0.0", "2.0.0"], (v) => ({
      extra: [{ type: "olm.csv.metadata", value: { minKubeVersion: v === "2.0.0" ? "1.30.0" : "1.20.0" } }],
    })),
  };
  const cats = new CatalogSet([catalog("c", [k])]);
  assert.deepEqual(
    chosen(resolve({ catalogs: cats, inputs: [sub("k", "k")], cluster: { kubernetesVersion: "v1.28.2" } })),
    ["k.v1.0.0:install"],
  );
  assert.deepEqual(chosen(resolve({ catalogs: cats, inputs: [sub("k", "k")] })), ["k.v2.0.0:install"]);
  const pinned = resolve({
    catalogs: cats,
    inputs: [sub("k", "k", { version: "2.0.0" })],
    cluster: { kubernetesVersion: "1.28.2" },
  });
  assert.match(
    cond(pinned, "k", "ResolutionFailed")?.message ?? "",
    /k\.v2\.0\.0 \(c\) requires Kubernetes 1\.30\.0 or newer but the cluster runs 1\.28\.2/,
  );
});

test("catalog priority, default channel and same-catalog dependencies", () => {
  const mk = (cat: string, prio: number, v: string) =>
    catalog(
      cat,
      [
        { name: "app", bundles: [{ name: `app.v${v}`, version: v, requires: [GRUMBO] }] },
        { name: "grumbo", bundles: [{ name: `grumbo.${cat}`, version: "0.1.0", provides: [GRUMBO] }] },
      ],
      prio,
    );
  const cats = new CatalogSet([mk("low", 0, "9.0.0"), mk("high", 10, "1.0.0")]);
  const rs = resolve({ catalogs: cats, inputs: [sub("app", "app")] });
  assert.deepEqual(chosen(rs), ["app.v1.0.0:install", "grumbo.high:install"]);
  const fromLow = resolve({ catalogs: cats, inputs: [sub("app", "app", { catalog: "low" })] });
  assert.deepEqual(chosen(fromLow), ["app.v9.0.0:install", "grumbo.low:install"]);
  const ch: P = {
    name: "multi",
    defaultChannel: "fast",
    bundles: [
      { name: "multi.v1", version: "1.0.0", channels: ["stable"] },
      { name: "multi.v2", version: "2.0.0", channels: ["fast"] },
    ],
  };
  const cs = new CatalogSet([catalog("c", [ch])]);
  assert.deepEqual(chosen(resolve({ catalogs: cs, inputs: [sub("m", "multi")] })), ["multi.v2:install"]);
  assert.deepEqual(chosen(resolve({ catalogs: cs, inputs: [sub("m", "multi", { channel: "stable" })] })), [
    "multi.v1:install",
  ]);
  const none = resolve({ catalogs: cs, inputs: [sub("m", "multi", { channel: "beta" })] });
  assert.match(
    cond(none, "m", "ResolutionFailed")?.message ?? "",
    /no operators found in channel beta of package multi referenced by input m/,
  );
});

test("olm.constraint dependencies: cel with semver_compare, package, all/any/not, failureMessage", () => {
  const dep: P = {
    name: "dep",
    bundles: chain("dep", ["1.0.0", "1.5.0", "2.0.0"], () => ({ provides: ["d.io/v1/D"] })),
  };
  const celRule =
    'properties.exists(p, p.type == "olm.package" && p.value.packageName ' +
    '== "dep" && semver_compare(p.value.version, "1.5.0") <= 0)';
  const app: P = {
    name: "app",
    bundles: [
      {
        name: "app.v1",
        version: "1.0.0",
        constraints: [
          { failureMessage: "needs an old dep", cel: { rule: celRule } },
          {
            all: {
              constraints: [
                { gvk: { group: "d.io", version: "v1", kind: "D" } },
                { not: { constraints: [{ package: { packageName: "dep", versionRange: "<1.5.0" } }] } },
              ],
            },
          },
        ],
      },
    ],
  };
  const cats = new CatalogSet([catalog("c", [app, dep])]);
  const rs = resolve({ catalogs: cats, inputs: [sub("app", "app")] });
  assert.deepEqual(chosen(rs), ["app.v1:install", "dep.v1.5.0:install"]);
  const bad: P = {
    name: "bad",
    bundles: [
      {
        name: "bad.v1",
        version: "1.0.0",
        constraints: [
          {
            failureMessage: "requires dep 9",
            cel: {
              rule: 'properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "9.0.0") >= 0)',
            },
          },
        ],
      },
    ],
  };
  const fail = resolve({ catalogs: new CatalogSet([catalog("c", [bad, dep])]), inputs: [sub("bad", "bad")] });
  assert.match(
    cond(fail, "bad", "ResolutionFailed")?.message ?? "",
    /but no bundle in the catalogs satisfies it: requires dep 9/,
  );
});

test("Inputs by name, by CEL and with olm.rego (reported as not supported)", () => {
  const docs = parseInputDocuments(`
apiVersion: deppy.io/v1
kind: Input
metadata: {name: byname}
spec:
  constraints:
  - type: olm.name
    value: plumbus.v2.0.0
---
kind: Input
metadata: {name: bycel}
spec:
  inputClass: dry-run
  constraints:
  - type: olm.catalog
    value: {package: grumbo}
  - type: olm.cel
    value: 'properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "0.2.0") == 0)'
---
kind: Input
metadata: {name: rego}
spec:
  constraints:
  - type: olm.rego
    value: "semver.Compare(minOCPVersion, 4.8.0) == 1"
`);
  assert.deepEqual(docs.errors, []);
  const rs = resolve({ catalogs: set1(), inputs: docs.inputs });
  assert.equal(rs.inputs[0].instances[0].name, "plumbus.v2.0.0");
  assert.equal(rs.inputs[1].instances[0].name, "grumbo.v0.2.0");
  const rego = cond(rs, "rego", "ResolutionFailed");
  assert.equal(rego?.reason, "UnsupportedConstraint");
  assert.match(rego?.message ?? "", /olm\.rego constraints are not supported/);
});

test("user-defined InputClass with class-level constraints and trace; Operator porcelain", () => {
  const docs = parseInputDocuments(`
kind: InputClass
metadata: {name: pinned-kube}
parameters:
  force: false
  generateInputsForDependencies: false
  dryRun: false
  trace: true
  constraints:
  - type: minKubeVersion
    value: ">= 1.29"
---
apiVersion: operators.coreos.com/v1
kind: Operator
metadata: {name: plumbus}
spec:
  inputClass: pinned-kube
  catalog: {name: community, namespace: my-ns, package: plumbus, channel: stable}
  version: ">2.0.0 <3.0.0"
`);
  assert.deepEqual(docs.errors, []);
  const rs = resolve({ catalogs: set1(), inputs: docs.inputs, classes: docs.classes });
  assert.deepEqual(chosen(rs), ["grumbo.v0.3.0:install", "plumbus.v2.4.5:install"]);
  assert.ok(Array.isArray(rs.trace));
  assert.deepEqual(rs.generatedInputs, []);
  const unknown = resolve({ catalogs: set1(), inputs: [{ name: "x", inputClass: "nope", constraints: [] }] });
  assert.equal(cond(unknown, "x", "ResolutionFailed")?.reason, "UnknownInputClass");
});

test("update options for installed operators: same channel and cross-channel", () => {
  const p: P = {
    name: "op",
    bundles: [
      { name: "op.v1", version: "1.0.0", channels: ["stable", "beta"] },
      { name: "op.v2", version: "2.0.0", replaces: "op.v1", channels: ["beta"] },
    ],
  };
  const cats = new CatalogSet([catalog("c", [p])]);
  const rs = resolve({ catalogs: cats, inputs: [], installed: [{ package: "op", bundle: "op.v1" }] });
  const st = rs.installed[0];
  assert.equal(st.conditions[0].reason, "CrossChannelUpdateFound");
  assert.deepEqual(st.updates, [{ catalog: "c", package: "op", channel: "beta", options: ["op.v2"] }]);
  assert.deepEqual(chosen(rs), ["op.v1:unchanged"]);
  const same = resolve({
    catalogs: cats,
    inputs: [],
    installed: [{ package: "op", bundle: "op.v1", channel: "beta" }],
  });
  assert.equal(same.installed[0].conditions[0].reason, "UpdateFound");
});

test("query by constraint or CEL, and the images a resolveset needs", () => {
  const cats = new CatalogSet([
    catalog("c", [
      plumbus,
      {
        name: "img",
        bundles: [{ name: "img.v1", version: "1.0.0", related: ["quay.io/x/operand:1", "quay.io/x/operand:1"] }],
      },
      grumbo,
    ]),
  ]);
  assert.deepEqual(
    query(
      cats,
      JSON.stringify({ gvk: { group: "manufacturing.how.theydoit.com", version: "v1alpha1", kind: "Grumbo" } }),
    ).map((m) => m.name),
    ["grumbo.v0.3.0", "grumbo.v0.2.0", "grumbo.v0.1.0"],
  );
  assert.deepEqual(
    query(cats, 'properties.exists(p, p.type == "olm.package" && p.value.version == "2.4.5")').map((m) => m.name),
    ["plumbus.v2.4.5"],
  );
  assert.throws(() => query(cats, "1 + 1"), /must have type Bool/);
  const rs = resolve({ catalogs: cats, inputs: [sub("img", "img")] });
  assert.deepEqual(
    resolveSetImages(rs).map((i) => i.image),
    ["quay.io/test/img.v1:bundle", "quay.io/x/operand:1"],
  );
});

test("same input, same output", () => {
  const inputs = [sub("plumbus", "plumbus"), sub("g", "grumbo")];
  assert.deepEqual(
    JSON.stringify(resolve({ catalogs: set1(), inputs })),
    JSON.stringify(resolve({ catalogs: set1(), inputs })),
  );
});

test(
  "installed bundle's recorded properties (an edited olm.properties " +
    "annotation) replace the catalog's: what it requires and provides",
  () => {
    const installed = [{ package: "grumbo", bundle: "grumbo.v0.3.0" }];
    const base = resolve({ catalogs: set1(), inputs: [sub("grumbo", "grumbo")], installed });
    assert.equal(base.resolved, true);
    // the user adds a requirement nothing provides: the installed bundle can no longer stay
    const props: { type: string; value: JsonValue }[] = [
      { type: "olm.package", value: { packageName: "grumbo", version: "0.3.0" } },
      { type: "olm.gvk", value: { group: "manufacturing.how.theydoit.com", version: "v1alpha1", kind: "Grumbo" } },
      { type: "olm.gvk.required", value: { group: "example.com", version: "v1", kind: "Missing" } },
    ];
    const edited = resolve({
      catalogs: set1(),
      inputs: [sub("grumbo", "grumbo")],
      installed: [{ ...installed[0], properties: props }],
    });
    assert.equal(edited.resolved, false);
    assert.match(cond(edited, "grumbo", "ResolutionFailed")?.message ?? "", /Missing/);
    // the user removes the GVK the installed bundle provides: plumbus's dependency is met by an upgrade path only
    const noGvk = resolve({
      catalogs: set1(),
      inputs: [sub("plumbus", "plumbus", { cls: "minimal-version", version: "2.0.0" })],
      installed: [{ ...installed[0], properties: [props[0]] }],
    });
    assert.ok(
      !noGvk.bundles.some((b) => b.name === "grumbo.v0.3.0" && b.action === "unchanged" && b.dependencyOf.length > 0),
      JSON.stringify(noGvk.bundles),
    );
    // undecodable recorded properties: a warning, the catalog's view is used
    const bad = resolve({
      catalogs: set1(),
      inputs: [sub("grumbo", "grumbo")],
      installed: [{ ...installed[0], properties: [{ type: "olm.package", value: "not an object" }] }],
    });
    assert.equal(bad.resolved, true);
    assert.match(bad.warnings.join("\n"), /recorded properties do not decode/);
  },
);
