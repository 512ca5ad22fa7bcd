/** Why a resolution failed: each root cause once, candidates in semver order, what would fix it (issue 36). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CatalogSet, resolve, resolveSetText, type ResolveSet } from "../../src/resolve/index.js";
import { catalog, chain, sub, type P } from "./helpers.js";

const MISSING = "cert-manager.io/v1/Certificate";
const failure = (rs: ResolveSet, input: string): string =>
  rs.inputs.find((i) => i.name === input)?.conditions.find((c) => c.type === "ResolutionFailed")?.message ?? "";
const count = (text: string, part: string): number => text.split(part).length - 1;

test("every candidate missing the same API: the cause once, candidates in semver order, the fix", () => {
  // preference order is the channel head first (1.10.0, 1.9.0, 1.2.0); text order would be 1.10.0, 1.2.0, 1.9.0
  const app: P = { name: "app", bundles: chain("app", ["1.2.0", "1.9.0", "1.10.0"], () => ({ requires: [MISSING] })) };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [app])]), inputs: [sub("app", "app")] });
  assert.equal(rs.resolved, false);
  const m = failure(rs, "app");
  assert.equal(count(m, "requires an operator providing an API with group: cert-manager.io"), 1, m);
  assert.match(
    m,
    /input app can be satisfied only by app\.v1\.2\.0 \(c\), app\.v1\.9\.0 \(c\) and app\.v1\.10\.0 \(c\);/,
  );
  assert.match(
    m,
    /every candidate of input app requires an operator providing an API with group: cert-manager\.io, version: v1, /,
  );
  assert.match(
    m,
    /but no bundle in the catalogs satisfies it \(to fix: add a catalog with an operator that satisfies it\)$/,
  );
});

test("different causes for different candidates: each cause once, naming its bundles in semver order", () => {
  const app: P = {
    name: "app",
    bundles: chain("app", ["1.2.0", "1.9.0", "1.10.0"], (v) =>
      v === "1.10.0"
        ? { extra: [{ type: "olm.csv.metadata", value: { minKubeVersion: "1.30.0" } }] }
        : { requires: [MISSING] },
    ),
  };
  const rs = resolve({
    catalogs: new CatalogSet([catalog("c", [app])]),
    inputs: [sub("app", "app")],
    cluster: { kubernetesVersion: "1.28.0" },
  });
  const m = failure(rs, "app");
  assert.equal(count(m, "requires an operator providing"), 1, m);
  assert.match(
    m,
    new RegExp(
      /each of app\.v1\.2\.0 \(c\) and app\.v1\.9\.0 \(c\) requires an operator providing an API .*, but no bundle /
        .source +
        /in the catalogs satisfies it \(to fix: add a catalog with an operator that satisfies it, or ask for /.source +
        /another version of app\)/.source,
    ),
  );
  assert.match(
    m,
    /app\.v1\.10\.0 \(c\) requires Kubernetes 1\.30\.0 or newer but the cluster runs 1\.28\.0 \(to fix: upgrade the /,
  );
  // the text form: the failure and one line per sentence
  const text = resolveSetText(rs);
  assert.match(text, /^input app is not resolvable \(ConstraintsNotSatisfiable\):\n {2}- input app is requested\n/);
  assert.equal(count(text, "\n  - "), 4, text);
});

test("the text form: a line per bundle with package, version, channel, catalog and why", () => {
  const dep: P = { name: "dep", bundles: chain("dep", ["0.1.0"], () => ({ provides: ["d.io/v1/D"] })) };
  const app: P = {
    name: "app",
    bundles: chain("app", ["1.0.0"], () => ({ requires: ["d.io/v1/D"], channels: ["fast"] })),
    defaultChannel: "fast",
  };
  const rs = resolve({ catalogs: new CatalogSet([catalog("c", [app, dep])]), inputs: [sub("mine", "app")] });
  assert.equal(
    resolveSetText(rs),
    "PACKAGE  VERSION  CHANNEL  CATALOG  WHY\n" +
      "app      1.0.0    fast     c        input mine\n" +
      "dep      0.1.0    stable   c        needed by app.v1.0.0\n",
  );
});

test("two Inputs wanting two versions of one package, or two providers of one API: who conflicts and the fix", () => {
  const b: P = { name: "b", bundles: chain("b", ["1.9.0", "1.10.0"], () => ({ provides: ["x.io/v1/Thing"] })) };
  const versions = resolve({
    catalogs: new CatalogSet([catalog("c", [b])]),
    inputs: [sub("new", "b", { version: "1.10.0" }), sub("old", "b", { version: "1.9.0" })],
  });
  assert.match(
    failure(versions, "new"),
    new RegExp(
      /; b\.v1\.9\.0 \(c\) and b\.v1\.10\.0 \(c\) originate from package b, and only one of them can be /.source +
        /installed \(to fix: ask for one version of b\)$/.source,
    ),
  );
  const a: P = { name: "a", bundles: chain("a", ["1.0.0"], () => ({ provides: ["x.io/v1/Thing"] })) };
  const apis = resolve({
    catalogs: new CatalogSet([catalog("c", [b, a])]),
    inputs: [sub("b", "b", { version: "1.9.0" }), sub("a", "a")],
  });
  assert.match(
    failure(apis, "a"),
    new RegExp(
      /a\.v1\.0\.0 \(c\) and b\.v1\.9\.0 \(c\) provide Thing \(x\.io\/v1\), and there can be only one provider /
        .source + /of it \(to fix: ask for only one of the packages a and b\)$/.source,
    ),
  );
});
