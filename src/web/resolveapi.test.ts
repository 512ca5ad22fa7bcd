import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { loadCatalog } from "../fbc/load.js";
import { validateCatalog } from "../fbc/validate.js";
import { CatalogSet, parseInputDocuments, query, resolve } from "../resolve/index.js";
import { QUERY_PATH, RESOLVE_PATH, ResolverApi, type ApiErrorBody } from "./resolveapi.js";
import { CatalogStore } from "../serve/store.js";
import { decodeStream } from "../yaml/index.js";

let root: string;
const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "examples");

/** Writes a one-package catalog: `pkg` with the given versions on channel stable (a replaces chain). */
function writeCatalog(dir: string, pkg: string, versions: string[], extra: object[] = []): void {
  mkdirSync(dir, { recursive: true });
  const name = (v: string): string => `${pkg}.v${v}`;
  const blobs = [
    { schema: "olm.package", name: pkg, defaultChannel: "stable" },
    {
      schema: "olm.channel",
      name: "stable",
      package: pkg,
      entries: versions.map((v, i) =>
        i === 0 ? { name: name(v) } : { name: name(v), replaces: name(versions[i - 1]) },
      ),
    },
    ...versions.map((v) => ({
      schema: "olm.bundle",
      name: name(v),
      package: pkg,
      image: `example.com/${pkg}-bundle:v${v}`,
      properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }],
    })),
    ...extra,
  ];
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
}

const input = (name: string, constraints: object[]): object => ({
  apiVersion: "deppy.io/v1",
  kind: "Input",
  metadata: { name },
  spec: { constraints },
});
const pkgVersion = (pkg: string, version: string): object => ({
  type: "olm.packageVersion",
  value: { package: pkg, version },
});
const errorOf = (body: unknown): ApiErrorBody["error"] => (body as ApiErrorBody).error;

async function newStore(catalogs: Record<string, string>): Promise<CatalogStore> {
  const store = new CatalogStore();
  for (const [name, dir] of Object.entries(catalogs)) await store.add(name, dir);
  return store;
}

before(() => {
  root = mkdtempSync(join(tmpdir(), "opcat-resolveapi-unit-"));
  writeCatalog(join(root, "main"), "foo", ["1.0.0", "1.1.0", "2.0.0"]);
  writeCatalog(join(root, "mirror"), "foo", ["1.0.0", "1.1.0"]);
  writeCatalog(join(root, "bar"), "bar", ["0.1.0"]);
  mkdirSync(join(root, "broken"));
  writeFileSync(join(root, "broken", "catalog.json"), "{not json\n");
});

after(() => rmSync(root, { recursive: true, force: true }));

test("query answers the fields `opcat query -o json` prints, over every catalog or the named ones", async () => {
  const store = await newStore({ main: join(root, "main"), bar: join(root, "bar") });
  const api = new ResolverApi(store);
  const a = api.answer(
    QUERY_PATH,
    JSON.stringify({ query: JSON.stringify({ package: { packageName: "foo", versionRange: ">=1.1.0" } }) }),
  );
  assert.equal(a.status, 200);
  const bundles = (a.body as { bundles: object[] }).bundles;
  assert.deepEqual(
    [...bundles].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    [
      {
        catalog: "main",
        package: "foo",
        name: "foo.v1.1.0",
        version: "1.1.0",
        image: "example.com/foo-bundle:v1.1.0",
        channels: ["stable"],
      },
      {
        catalog: "main",
        package: "foo",
        name: "foo.v2.0.0",
        version: "2.0.0",
        image: "example.com/foo-bundle:v2.0.0",
        channels: ["stable"],
      },
    ],
  );
  const cel = api.answer(QUERY_PATH, JSON.stringify({ query: "true", catalogs: ["bar"] }));
  assert.deepEqual(
    (cel.body as { bundles: { name: string }[] }).bundles.map((b) => b.name),
    ["bar.v0.1.0"],
  );
  const bad = api.answer(QUERY_PATH, JSON.stringify({ query: '{"gvk": 5}' }));
  assert.equal(bad.status, 400);
  assert.equal(errorOf(bad.body).code, "RESOLVE_QUERY_INVALID");
  await store.close();
});

test(
  "resolve: 200 with the resolveset, 409 with the " + "explained failure, installed as one document or a list",
  async () => {
    const store = await newStore({ main: join(root, "main") });
    const api = new ResolverApi(store);
    const ok = api.answer(RESOLVE_PATH, JSON.stringify({ inputs: [input("foo", [pkgVersion("foo", "<2.0.0")])] }));
    assert.equal(ok.status, 200);
    const rs = ok.body as { resolved: boolean; bundles: { name: string; catalog: string }[] };
    assert.equal(rs.resolved, true);
    assert.deepEqual(
      rs.bundles.map((b) => b.name),
      ["foo.v1.1.0"],
    );
    const no = api.answer(
      RESOLVE_PATH,
      JSON.stringify({ inputs: [input("foo", [pkgVersion("foo", ">=3.0.0")])], trace: true }),
    );
    assert.equal(no.status, 409);
    const failed = no.body as {
      resolved: boolean;
      inputs: { name: string; conditions: { type: string; status: string; message: string }[] }[];
    };
    assert.equal(failed.resolved, false);
    const cond = failed.inputs[0].conditions.find((c) => c.type === "ResolutionFailed" && c.status === "True");
    assert.ok(cond && cond.message.length > 0, JSON.stringify(failed.inputs));
    const installed = { kind: "Installed", operators: [{ package: "foo", bundle: "foo.v1.0.0" }] };
    for (const inst of [installed, [installed]]) {
      const up = api.answer(
        RESOLVE_PATH,
        JSON.stringify({
          inputs: [input("foo", [{ type: "olm.catalog", value: { name: "main", package: "foo", channel: "stable" } }])],
          installed: inst,
        }),
      );
      assert.equal(up.status, 200, JSON.stringify(up.body));
      assert.ok((up.body as { bundles: { name: string }[] }).bundles.some((b) => b.name.startsWith("foo.")));
    }
    await store.close();
  },
);

test("answers equal what `opcat query`/`opcat resolve` compute from the catalog files (as JSON)", async () => {
  const dir = join(EXAMPLES, "catalog");
  const store = await newStore({ examples: dir });
  const prio = new Map([["examples", 3]]);
  const api = new ResolverApi(store, { priorities: prio });
  const loaded = await loadCatalog(dir);
  const set = new CatalogSet([
    { name: "examples", priority: 3, model: validateCatalog(loaded.config).model, others: loaded.config.others },
  ]);
  const text = readFileSync(join(EXAMPLES, "resolve", "input.yaml"), "utf8");
  const docs = parseInputDocuments(text, "input.yaml");
  const want = JSON.parse(
    JSON.stringify(
      resolve({
        catalogs: set,
        inputs: docs.inputs,
        classes: docs.classes,
        installed: docs.installed,
        cluster: { ...docs.cluster },
        trace: true,
      }),
    ),
  ) as unknown;
  const got = api.answer(
    RESOLVE_PATH,
    JSON.stringify({ inputs: decodeStream(text).flatMap((i) => (i.kind === "blob" ? [i.value] : [])), trace: true }),
  );
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, want);
  for (const q of [
    'properties.exists(p, p.type == "olm.gvk")',
    JSON.stringify({ package: { packageName: "etcd-example", versionRange: "<1.0.0" } }),
  ]) {
    const a = api.answer(QUERY_PATH, JSON.stringify({ query: q }));
    assert.deepEqual(a.body, { bundles: query(set, q) });
  }
  await store.close();
});

test("priorities choose between catalogs offering the same bundle", async () => {
  const store = await newStore({ main: join(root, "main"), mirror: join(root, "mirror") });
  const req = JSON.stringify({ inputs: [input("foo", [{ type: "olm.name", value: "foo.v1.0.0" }])] });
  for (const [prio, want] of [
    [new Map([["mirror", 5]]), "mirror"],
    [new Map([["main", 5]]), "main"],
  ] as const) {
    const a = new ResolverApi(store, { priorities: prio }).answer(RESOLVE_PATH, req);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual(
      (a.body as { bundles: { catalog: string }[] }).bundles.map((b) => b.catalog),
      [want],
    );
  }
  await store.close();
});

test("the catalog set is built once per combination of revisions; a reload replaces it", async () => {
  const dir = join(root, "reloading");
  writeCatalog(dir, "foo", ["1.0.0"]);
  const store = await newStore({ r: dir, bar: join(root, "bar") });
  const api = new ResolverApi(store);
  const count = (): number =>
    (api.answer(QUERY_PATH, JSON.stringify({ query: "true", catalogs: ["r"] })).body as { bundles: unknown[] }).bundles
      .length;
  assert.equal(count(), 1);
  assert.equal(count(), 1);
  assert.equal(api.catalogSetBuilds, 1);
  // Same combination in another order: same set.
  assert.equal(api.catalogSet(["bar", "r"]), api.catalogSet(["r", "bar"]));
  assert.equal(api.catalogSet(), api.catalogSet(["r", "bar"]));
  assert.equal(api.catalogSetBuilds, 2);
  // An unchanged reload keeps the revision and the set.
  assert.equal((await store.reload("r")).status, "unchanged");
  assert.equal(count(), 1);
  assert.equal(api.catalogSetBuilds, 2);
  writeCatalog(dir, "foo", ["1.0.0", "1.1.0"]);
  assert.equal((await store.reload("r")).status, "loaded");
  assert.equal(count(), 2);
  assert.equal(count(), 2);
  assert.equal(api.catalogSetBuilds, 3);
  await store.close();
});

test("503 while no catalog has content, 404 for unknown catalogs", async () => {
  const store = await newStore({ broken: join(root, "broken") });
  const api = new ResolverApi(store);
  for (const [path, body] of [
    [QUERY_PATH, { query: "true" }],
    [QUERY_PATH, { query: "true", catalogs: ["broken"] }],
    [RESOLVE_PATH, { inputs: [input("foo", [pkgVersion("foo", "1.0.0")])] }],
  ] as const) {
    const a = api.answer(path, JSON.stringify(body));
    assert.equal(a.status, 503);
    assert.equal(errorOf(a.body).code, "SERVE_API_NOT_READY");
  }
  const unknown = api.answer(QUERY_PATH, JSON.stringify({ query: "true", catalogs: ["nope"] }));
  assert.equal(unknown.status, 404);
  assert.equal(errorOf(unknown.body).code, "SERVE_API_UNKNOWN_CATALOG");
  await store.close();
});

test("400s: JSON, fields, documents and constraints", async () => {
  const store = await newStore({ main: join(root, "main") });
  const api = new ResolverApi(store);
  const cases: [string, string, string][] = [
    [QUERY_PATH, "{", "SERVE_API_BAD_JSON"],
    [QUERY_PATH, "", "SERVE_API_BAD_JSON"],
    [QUERY_PATH, "[]", "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, "null", "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, "{}", "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": 1}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "  "}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "true", "extra": 1}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "true", "catalogs": "main"}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "true", "catalogs": []}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "true", "catalogs": [1]}', "SERVE_API_BAD_REQUEST"],
    [QUERY_PATH, '{"query": "properties.exists("}', "RESOLVE_QUERY_INVALID"],
    [RESOLVE_PATH, "{}", "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": {}}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "query": "x"}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "installed": 3}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "trace": "yes"}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "cluster": []}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "cluster": {"kubernetesVersion": 1}}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": [], "cluster": {"kube": "1.30"}}', "SERVE_API_BAD_REQUEST"],
    [RESOLVE_PATH, '{"inputs": []}', "RESOLVE_INPUT_INVALID"],
    [RESOLVE_PATH, '{"inputs": [null]}', "RESOLVE_INPUT_INVALID"],
    [RESOLVE_PATH, '{"inputs": [{"kind": "Subscription"}]}', "RESOLVE_INPUT_INVALID"],
    [RESOLVE_PATH, '{"inputs": [{"kind": "Input", "spec": {"constraints": []}}]}', "RESOLVE_INPUT_INVALID"],
  ];
  for (const [path, body, code] of cases) {
    const a = api.answer(path, body);
    assert.equal(a.status, 400, `${path} ${body}: ${JSON.stringify(a.body)}`);
    assert.equal(errorOf(a.body).code, code, `${path} ${body}`);
    assert.ok(errorOf(a.body).message.length > 0);
  }
  const doc = api.answer(RESOLVE_PATH, JSON.stringify({ inputs: [{ kind: "Subscription" }, input("", [])] }));
  assert.deepEqual(
    errorOf(doc.body).problems?.map((p) => p.code),
    ["RESOLVE_INPUT_INVALID", "RESOLVE_INPUT_INVALID"],
  );
  assert.match(errorOf(doc.body).problems?.[0].message ?? "", /^inputs\[0\]: unknown kind "Subscription"/);
  // A malformed constraint is the client's error, not an unresolvable request.
  for (const c of [
    pkgVersion("foo", "not a range"),
    { type: "olm.cel", value: { rule: "properties.exists(" } },
    { type: "olm.unknown", value: 1 },
  ]) {
    const a = api.answer(RESOLVE_PATH, JSON.stringify({ inputs: [input("foo", [c])] }));
    assert.equal(a.status, 400, JSON.stringify(a.body));
    assert.equal(errorOf(a.body).code, "RESOLVE_INPUT_INVALID");
    assert.match(errorOf(a.body).problems?.[0].message ?? "", /^input foo: /);
  }
  await store.close();
});

test("property: any JSON body gets a well-formed answer, never an exception or a stack trace", async () => {
  const store = await newStore({ main: join(root, "main") });
  const api = new ResolverApi(store);
  const field = fc.constantFrom("query", "catalogs", "inputs", "installed", "trace", "cluster", "other");
  const body = fc.oneof(
    fc.json(),
    fc.dictionary(field, fc.jsonValue()).map((o) => JSON.stringify(o)),
    fc.string(),
  );
  fc.assert(
    fc.property(fc.constantFrom(QUERY_PATH, RESOLVE_PATH), body, (path, text) => {
      const a = api.answer(path, text);
      assert.ok([200, 400, 404, 409].includes(a.status), `${a.status} ${JSON.stringify(a.body)}`);
      const json = JSON.stringify(a.body);
      assert.doesNotMatch(json, /\n\s+at /);
      if (a.status >= 400 && a.status !== 409) {
        const e = errorOf(a.body);
        assert.equal(typeof e.code, "string");
        assert.equal(typeof e.message, "string");
        assert.notEqual(e.code, "SERVE_INTERNAL");
      }
    }),
    { numRuns: 300 },
  );
  await store.close();
});

test("handle only claims paths under /api/", async () => {
  const store = new CatalogStore();
  const api = new ResolverApi(store);
  const fake = {} as Parameters<ResolverApi["handle"]>[0];
  assert.equal(api.handle(fake, {} as Parameters<ResolverApi["handle"]>[1], "/catalogs/x/api/v1/all"), false);
  assert.equal(api.handle(fake, {} as Parameters<ResolverApi["handle"]>[1], "/healthz"), false);
  await store.close();
});
