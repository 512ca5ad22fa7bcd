import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadDirectory } from "../fbc/load.js";
import { renderMermaid } from "../fbc/mermaid.js";
import { CatalogStore, startHttpServer, type HttpServerHandle } from "../serve/index.js";
import {
  packageDetail,
  UI_CSP,
  webMounts,
  type UiCatalogChanges,
  type UiGraph,
  type UiPackageDetail,
  type UiPackageList,
  type UiRenderAnswer,
} from "./index.js";

const here = dirname(fileURLToPath(import.meta.url));
const catalogDir = join(here, "..", "serve", "testdata", "catalog");

describe("web UI routes of opcat serve", () => {
  const store = new CatalogStore();
  let srv: HttpServerHandle;
  let base: string;
  const assets = mkdtempSync(join(tmpdir(), "opcat-ui-assets-"));
  before(async () => {
    mkdirSync(join(assets, "assets"));
    writeFileSync(
      join(assets, "index.html"),
      "<!doctype html><title>t</title><script type=module src=/assets/app.js></script>",
    );
    writeFileSync(join(assets, "assets", "app.js"), "console.log(1)\n".repeat(200));
    assert.equal((await store.add("test", catalogDir)).status, "loaded");
    srv = await startHttpServer(store, { port: 0, mounts: webMounts(store, { ui: { assetsDir: assets } }) });
    base = `http://127.0.0.1:${srv.address.port}`;
  });
  after(async () => {
    await srv.close();
    await store.close();
    rmSync(assets, { recursive: true, force: true });
  });

  test("the page and its assets carry a strict Content-Security-Policy and nosniff", async () => {
    for (const path of ["/", "/assets/app.js"]) {
      const r = await fetch(base + path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get("content-security-policy"), UI_CSP);
      assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    }
    assert.match(UI_CSP, /script-src 'self'/);
    assert.doesNotMatch(UI_CSP, /unsafe-inline|unsafe-eval|\*/);
    assert.equal((await fetch(base + "/")).headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal((await fetch(base + "/assets/../index.html")).status, 200); // normalised by the URL parser
    assert.equal((await fetch(base + "/assets/%2e%2e/%2e%2e/package.json")).status, 404);
    assert.equal((await fetch(base + "/assets/missing.js")).status, 404);
    assert.equal((await fetch(base + "/", { method: "POST" })).status, 405);
  });

  test("catalog and package summaries", async () => {
    const cs = (await (await fetch(`${base}/ui/api/catalogs`)).json()) as {
      name: string;
      packages: number;
      bundles: number;
      ready: boolean;
    }[];
    assert.deepEqual(
      cs.map((c) => [c.name, c.packages, c.ready]),
      [["test", 2, true]],
    );
    const list = (await (await fetch(`${base}/ui/api/catalogs/test/packages`)).json()) as UiPackageList;
    const etcd = list.packages.find((p) => p.name === "etcd");
    assert.ok(etcd);
    assert.equal(etcd.defaultChannel, "stable");
    assert.deepEqual(etcd.channels, ["alpha", "stable"]);
    assert.equal(etcd.headVersion, "0.9.4");
    assert.equal(etcd.hasIcon, true);
    assert.ok(etcd.bundles >= 3);
  });

  test("package detail: the JSON lines as served, the same value as packageDetail", async () => {
    const rev = store.get("test");
    assert.ok(rev);
    for (const name of ["etcd", "prometheus"]) {
      const r = await fetch(`${base}/ui/api/catalogs/test/packages/${name}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("content-type"), "application/json");
      const text = await r.text();
      assert.equal(r.headers.get("content-length"), String(Buffer.byteLength(text)));
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(packageDetail(rev, name))), name);
    }
  });

  test("package detail, graph edges of every kind, heads", async () => {
    const d = (await (await fetch(`${base}/ui/api/catalogs/test/packages/etcd`)).json()) as UiPackageDetail;
    assert.equal(d.package.name, "etcd");
    assert.deepEqual(d.channels.map((c) => c.name).sort(), ["alpha", "stable"]);
    const g = (await (
      await fetch(`${base}/ui/api/catalogs/test/packages/etcd/graph?channel=stable`)
    ).json()) as UiGraph;
    const edges = g.edges.map((e) => `${e.from}>${e.to}:${e.kind}`).sort();
    assert.deepEqual(edges, [
      "etcd.v0.9.0>etcd.v0.9.2:replaces",
      "etcd.v0.9.0>etcd.v0.9.4:skipRange",
      "etcd.v0.9.0>etcd.v0.9.4:skips",
      "etcd.v0.9.2>etcd.v0.9.4:replaces",
      "etcd.v0.9.2>etcd.v0.9.4:skipRange",
      "etcd.v0.9.2>etcd.v0.9.4:skips",
      "etcd.v0.9.3>etcd.v0.9.4:skips",
    ]);
    const heads = g.nodes.filter((n) => n.heads.includes("stable")).map((n) => n.name);
    assert.deepEqual(heads, ["etcd.v0.9.4"]);
    assert.equal(g.nodes.find((n) => n.name === "etcd.v0.9.3")?.inCatalog, false);
    const all = (await (await fetch(`${base}/ui/api/catalogs/test/packages/etcd/graph?channel=*`)).json()) as UiGraph;
    assert.equal(all.channel, "");
    assert.deepEqual(all.channels, ["alpha", "stable"]);
    const byDefault = (await (await fetch(`${base}/ui/api/catalogs/test/packages/etcd/graph`)).json()) as UiGraph;
    assert.equal(byDefault.channel, byDefault.defaultChannel, "no channel asked: the default channel");
    assert.ok(
      all.edges.some((e) => e.channels.length === 2),
      "an edge in both channels is one edge listing both",
    );
  });

  test("graph layout: every bundle placed, the drawn edges are the kinds not hidden, computed once", async () => {
    const url = `${base}/ui/api/catalogs/test/packages/etcd/graph?channel=stable&layout=1`;
    const g = (await (await fetch(url)).json()) as UiGraph;
    assert.ok(g.layout);
    assert.deepEqual(Object.keys(g.layout.nodes).sort(), g.nodes.map((n) => n.name).sort());
    for (const n of Object.values(g.layout.nodes))
      assert.ok(
        n.w > 0 && n.h > 0 && n.x >= 0 && n.y >= 0 && n.x + n.w <= g.layout.width && n.y + n.h <= g.layout.height,
      );
    assert.deepEqual(
      g.layout.edges.map((e) => e.index),
      g.edges.map((_, i) => i),
    );
    for (const e of g.layout.edges) assert.match(e.d, /^M[\d.]+,[\d.]+ [LC]/);
    // two boxes never overlap
    const boxes = Object.values(g.layout.nodes);
    for (const a of boxes)
      for (const b of boxes)
        if (a !== b) assert.ok(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y);
    const hidden = (await (await fetch(`${url}&hide=skipRange,skips`)).json()) as UiGraph;
    assert.ok(hidden.layout);
    assert.deepEqual(hidden.edges, g.edges, "the edges are listed whole; only the drawn ones are filtered");
    assert.deepEqual(
      hidden.layout.edges.map((e) => hidden.edges[e.index].kind),
      ["replaces", "replaces"],
    );
    // the same question is answered from the revision's cache (the same bytes)
    assert.equal(await (await fetch(url)).text(), JSON.stringify(g));
    const bad = await fetch(`${url}&hide=nope`);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, "SERVE_UI_BAD_REQUEST");
  });

  test("without --kubeconfig there are no cluster pages, and the config says so", async () => {
    assert.deepEqual(await (await fetch(`${base}/ui/api/config`)).json(), { cluster: false });
    const r = await fetch(`${base}/ui/api/cluster/instances`);
    assert.equal(r.status, 404);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, "SERVE_UI_NO_CLUSTER");
  });

  test("the status line's numbers: the server's memory now", async () => {
    const r = await fetch(`${base}/ui/api/status`);
    assert.equal(r.status, 200);
    const { memory } = (await r.json()) as { memory: Record<string, number> };
    assert.deepEqual(Object.keys(memory).sort(), ["external", "heapTotal", "heapUsed", "rss"]);
    assert.ok(memory.rss > 1 << 20 && memory.heapUsed > 0 && memory.heapTotal >= memory.heapUsed);
  });

  test("Mermaid text is opm's render-graph output (src/fbc/mermaid.ts)", async () => {
    const r = await fetch(`${base}/ui/api/catalogs/test/packages/etcd/mermaid`);
    assert.equal(r.status, 200);
    const want = renderMermaid(loadDirectory(catalogDir).config, { packageName: "etcd", drawV0Semantics: false }).text;
    assert.equal(await r.text(), want);
    const one = await (await fetch(`${base}/ui/api/catalogs/test/packages/etcd/mermaid?channel=alpha`)).text();
    assert.match(one, /channel "alpha"/);
    assert.doesNotMatch(one, /channel "stable"/);
    const bad = await fetch(`${base}/ui/api/catalogs/test/packages/etcd/mermaid?minimumEdge=nope`);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, "GRAPH_UNKNOWN_MINIMUM_EDGE");
  });

  test("icons: image types only, sandboxed", async () => {
    const r = await fetch(`${base}/ui/api/catalogs/test/packages/etcd/icon`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "image/svg+xml");
    assert.match(r.headers.get("content-security-policy") ?? "", /sandbox/);
    assert.equal(await r.text(), "<svg/>");
  });

  test("errors are JSON with stable codes", async () => {
    const cases: [string, number, string][] = [
      ["/ui/api/catalogs/nope/packages", 404, "SERVE_UI_NOT_FOUND"],
      ["/ui/api/catalogs/test/packages/nope", 404, "SERVE_UI_NOT_FOUND"],
      ["/ui/api/catalogs/test/packages/etcd/graph?channel=nope", 404, "SERVE_UI_NOT_FOUND"],
      ["/ui/api/other", 404, "SERVE_UI_NOT_FOUND"],
      ["/ui/api/catalogs/%zz", 400, "SERVE_UI_BAD_REQUEST"],
    ];
    for (const [path, status, code] of cases) {
      const r = await fetch(base + path);
      assert.equal(r.status, status, path);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, code, path);
    }
    const m = await fetch(`${base}/ui/api/catalogs`, { method: "DELETE" });
    assert.equal(m.status, 405);
  });

  test("render-template renders with the catalog as reuse source and diffs against it", async () => {
    const template = JSON.stringify({
      schema: "olm.template.basic",
      entries: [
        { schema: "olm.package", name: "etcd", defaultChannel: "stable" },
        { schema: "olm.channel", package: "etcd", name: "stable", entries: [{ name: "etcd.v0.9.0" }] },
        { schema: "olm.bundle", image: "quay.io/operatorhubio/etcd:v0.9.0" },
      ],
    });
    const post = (body: unknown, type = "application/json") =>
      fetch(`${base}/ui/api/render-template`, {
        method: "POST",
        headers: { "Content-Type": type },
        body: JSON.stringify(body),
      });
    const r = await post({ template });
    assert.equal(r.status, 200);
    const a = (await r.json()) as UiRenderAnswer;
    assert.deepEqual(
      a.blobs.map((b) => `${b.schema} ${b.name}`),
      ["olm.package etcd", "olm.channel stable", "olm.bundle etcd.v0.9.0"],
    );
    assert.match(a.mermaid, /^graph LR\n/);
    const d = a.diff.find((x) => x.package === "etcd");
    assert.ok(d?.existing);
    assert.deepEqual(d.addedBundles, []);
    assert.ok(d.removedBundles.includes("etcd.v0.9.4"));
    assert.ok(d.removedEdges.includes("etcd.v0.9.2 → etcd.v0.9.4 (replaces)"));
    const bad = await post({
      template: "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/not/in:catalog\n",
    });
    assert.equal(bad.status, 422);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /example\.com\/not\/in:catalog/);
    assert.equal((await post({ nope: 1 })).status, 400);
    assert.equal((await post({ template }, "text/plain")).status, 415);
  });

  test("without ui the paths are not served; a missing build says how to make it", async () => {
    const off = await startHttpServer(store, { port: 0, mounts: webMounts(store) });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${off.address.port}/`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${off.address.port}/ui/api/catalogs`)).status, 404);
    } finally {
      await off.close();
    }
    const empty = mkdtempSync(join(tmpdir(), "opcat-ui-none-"));
    const nobuild = await startHttpServer(store, { port: 0, mounts: webMounts(store, { ui: { assetsDir: empty } }) });
    try {
      const r = await fetch(`http://127.0.0.1:${nobuild.address.port}/`);
      assert.equal(r.status, 404);
      assert.match(await r.text(), /npm run build/);
    } finally {
      await nobuild.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("web UI: what the last reload changed", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-ui-changes-"));
  const store = new CatalogStore({ keepPrevious: true });
  let srv: HttpServerHandle;
  let base: string;
  const bundle = (pkg: string, v: string): object => ({
    schema: "olm.bundle",
    name: `${pkg}.v${v}`,
    package: pkg,
    image: `example.com/${pkg}:v${v}`,
    properties: [{ type: "olm.package", value: { packageName: pkg, version: `${v}.0.0` } }],
  });
  const write = (blobs: object[]): void => {
    rmSync(join(dir, "catalog.json"), { force: true });
    writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
  };
  const pkg = (name: string): object => ({ schema: "olm.package", name, defaultChannel: "stable" });
  const channel = (p: string, entries: object[]): object => ({
    schema: "olm.channel",
    package: p,
    name: "stable",
    entries,
  });
  before(async () => {
    write([
      pkg("a"),
      channel("a", [{ name: "a.v1" }, { name: "a.v2", replaces: "a.v1" }]),
      bundle("a", "1"),
      bundle("a", "2"),
      pkg("gone"),
      channel("gone", [{ name: "gone.v1" }]),
      bundle("gone", "1"),
    ]);
    assert.equal((await store.add("c", dir)).status, "loaded");
    srv = await startHttpServer(store, { port: 0, mounts: webMounts(store, { ui: { assetsDir: dir } }) });
    base = `http://127.0.0.1:${srv.address.port}/ui/api/catalogs`;
  });
  after(async () => {
    await srv.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("before a reload there is nothing to compare with", async () => {
    const cs = (await (await fetch(base)).json()) as { previousRevision: number }[];
    assert.equal(cs[0].previousRevision, 0);
    const r = await fetch(`${base}/c/changes`);
    assert.equal(r.status, 404);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, "SERVE_UI_NO_PREVIOUS");
    assert.equal((await fetch(`${base}/c/packages/a/graph?compare=previous`)).status, 404);
  });

  test("after a reload: packages added, removed and changed, and the graph of both revisions", async () => {
    write([
      pkg("a"),
      channel("a", [
        { name: "a.v1" },
        { name: "a.v2", replaces: "a.v1" },
        { name: "a.v3", replaces: "a.v2", skips: ["a.v1"] },
      ]),
      bundle("a", "1"),
      bundle("a", "2"),
      bundle("a", "3"),
      pkg("new"),
      channel("new", [{ name: "new.v1" }]),
      bundle("new", "1"),
    ]);
    assert.equal((await store.reload("c")).status, "loaded");
    const cs = (await (await fetch(base)).json()) as { revision: number; previousRevision: number }[];
    assert.deepEqual([cs[0].previousRevision, cs[0].revision], [1, 2]);
    const ch = (await (await fetch(`${base}/c/changes`)).json()) as UiCatalogChanges;
    assert.deepEqual([ch.from.revision, ch.to.revision], [1, 2]);
    assert.deepEqual(
      ch.packages.map((p) => [p.package, p.status, p.addedBundles, p.removedBundles, p.addedEdges, p.removedEdges]),
      [
        ["a", "changed", ["a.v3"], [], ["a.v1 → a.v3 (skips)", "a.v2 → a.v3 (replaces)"], []],
        ["gone", "removed", [], ["gone.v1"], [], []],
        ["new", "added", ["new.v1"], [], [], []],
      ],
    );
    const g = (await (await fetch(`${base}/c/packages/a/graph?channel=*&layout=1&compare=previous`)).json()) as UiGraph;
    assert.deepEqual(g.compared, { from: 1, to: 2 });
    assert.deepEqual(g.nodes.map((n) => `${n.name}:${n.change ?? ""}`).sort(), ["a.v1:", "a.v2:", "a.v3:added"]);
    assert.deepEqual(g.edges.map((e) => `${e.from}>${e.to}:${e.change ?? ""}`).sort(), [
      "a.v1>a.v2:",
      "a.v1>a.v3:added",
      "a.v2>a.v3:added",
    ]);
    assert.equal(g.layout?.edges.length, 3);
    // a removed package: its graph is all removed (it has no default channel any more: ask for all)
    const gone = (await (await fetch(`${base}/c/packages/gone/graph?channel=*&compare=previous`)).json()) as UiGraph;
    assert.deepEqual(
      gone.nodes.map((n) => `${n.name}:${n.change ?? ""}`),
      ["gone.v1:removed"],
    );
    // an unchanged reload keeps the revision and what it is compared with
    assert.equal((await store.reload("c")).status, "unchanged");
    assert.equal(((await (await fetch(`${base}/c/changes`)).json()) as UiCatalogChanges).to.revision, 2);
  });
});

describe("web UI cluster pages: an API server that is not there", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-ui-nocluster-"));
  const store = new CatalogStore();
  let srv: HttpServerHandle;
  let base: string;
  before(async () => {
    // a kubeconfig naming a port where nothing listens (the API server vanished)
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: gone, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: c, context: {cluster: gone, user: u}}]",
        "current-context: c",
        "",
      ].join("\n"),
    );
    assert.equal((await store.add("test", catalogDir)).status, "loaded");
    srv = await startHttpServer(store, {
      port: 0,
      mounts: webMounts(store, { ui: { assetsDir: dir, cluster: { kubeconfig } } }),
    });
    base = `http://127.0.0.1:${srv.address.port}/ui/api`;
  });
  after(async () => {
    await srv.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    "listing answers 502 SERVE_UI_CLUSTER naming the API " + "server; approving without a token is still refused first",
    async () => {
      assert.deepEqual(await (await fetch(`${base}/config`)).json(), { cluster: true });
      const r = await fetch(`${base}/cluster/instances`);
      assert.equal(r.status, 502);
      const body = (await r.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, "SERVE_UI_CLUSTER");
      assert.match(body.error.message, /cannot reach the API server: .*127\.0\.0\.1:1/);
      const a = await fetch(`${base}/cluster/instances/x/approve`, { method: "POST" });
      assert.equal(a.status, 401);
      assert.equal(((await a.json()) as { error: { code: string } }).error.code, "SERVE_UI_NEED_TOKEN");
    },
  );
});

describe("web UI package list: searched and paged on the server", () => {
  const store = new CatalogStore();
  const dir = mkdtempSync(join(tmpdir(), "opcat-ui-many-"));
  const N = 1000;
  let srv: HttpServerHandle;
  let base: string;
  const page = async (qs: string): Promise<UiPackageList> => {
    const r = await fetch(`${base}/ui/api/catalogs/many/packages${qs}`);
    assert.equal(r.status, 200, qs);
    return (await r.json()) as UiPackageList;
  };
  before(async () => {
    const lines: string[] = [];
    for (let i = 0; i < N; i++) {
      const name = `pkg-${String(i).padStart(4, "0")}`;
      const bundles = 1 + (i % 3);
      lines.push(JSON.stringify({ schema: "olm.package", name, defaultChannel: "stable" }));
      const entries = Array.from({ length: bundles }, (_, b) =>
        b === 0 ? { name: `${name}.v1.0.0` } : { name: `${name}.v1.0.${b}`, replaces: `${name}.v1.0.${b - 1}` },
      );
      lines.push(JSON.stringify({ schema: "olm.channel", package: name, name: "stable", entries }));
      for (let b = 0; b < bundles; b++) {
        const properties: unknown[] = [
          { type: "olm.package", value: { packageName: name, version: `1.0.${b}` } },
          { type: "olm.gvk", value: { group: "example.com", kind: `Kind${i}`, version: "v1" } },
        ];
        if (i % 10 === 0)
          properties.push({
            type: "olm.csv.metadata",
            value: { displayName: `Database ${i}`, keywords: ["Storage"], provider: { name: "Acme" } },
          });
        const image = `quay.example.com/many/${name}:v1.0.${b}`;
        lines.push(
          JSON.stringify({ schema: "olm.bundle", package: name, name: `${name}.v1.0.${b}`, image, properties }),
        );
      }
    }
    writeFileSync(join(dir, "catalog.json"), lines.join("\n") + "\n");
    const added = await store.add("many", dir);
    assert.equal(added.status, "loaded", JSON.stringify(added).slice(0, 500));
    srv = await startHttpServer(store, { port: 0, mounts: webMounts(store, { ui: {} }) });
    base = `http://127.0.0.1:${srv.address.port}`;
  });
  after(async () => {
    await srv.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("without parameters: every package, with the counts", async () => {
    const all = await page("");
    assert.equal(all.packages.length, N);
    assert.deepEqual([all.total, all.matched, all.offset, all.bundles], [N, N, 0, 2000 - 1]);
  });

  test("pages: offset and limit cut the list in name order; past the end is empty", async () => {
    const all = (await page("")).packages.map((p) => p.name);
    const got: string[] = [];
    for (let offset = 0; offset < N; offset += 120) {
      const p = await page(`?offset=${offset}&limit=120`);
      assert.deepEqual([p.total, p.matched, p.offset], [N, N, offset]);
      got.push(...p.packages.map((x) => x.name));
    }
    assert.deepEqual(got, all);
    assert.deepEqual((await page(`?offset=${N + 5}&limit=10`)).packages, []);
    assert.equal((await page("?limit=0")).packages.length, 0);
  });

  test("search by name, keyword, provided API and everywhere, with counts of packages and bundles", async () => {
    const byName = await page("?q=PKG-012&in=name&limit=5");
    assert.deepEqual([byName.matched, byName.total, byName.bundles], [10, N, 19]);
    assert.deepEqual(
      byName.packages.map((p) => p.name),
      ["pkg-0120", "pkg-0121", "pkg-0122", "pkg-0123", "pkg-0124"],
    );
    const rest = await page("?q=PKG-012&in=name&offset=5&limit=100");
    assert.deepEqual(
      rest.packages.map((p) => p.name),
      ["pkg-0125", "pkg-0126", "pkg-0127", "pkg-0128", "pkg-0129"],
    );
    // the display name is searched as a name
    assert.equal((await page("?q=database&in=name")).matched, 100);
    assert.equal((await page("?q=storage&in=keyword")).matched, 100);
    assert.equal((await page("?q=storage&in=name")).matched, 0);
    const api = await page("?q=Kind999.v1&in=api");
    assert.deepEqual(
      api.packages.map((p) => p.name),
      ["pkg-0999"],
    );
    // everywhere: the provider too
    assert.equal((await page("?q=acme")).matched, 100);
    assert.equal((await page("?q=acme&in=api")).matched, 0);
    // no match across two values of a field
    assert.equal((await page("?q=com%00&in=api")).matched, 0);
  });

  test("bad parameters are 400 SERVE_UI_BAD_REQUEST", async () => {
    for (const qs of ["?in=title", "?limit=-1", "?offset=x", "?limit=1.5"]) {
      const r = await fetch(`${base}/ui/api/catalogs/many/packages${qs}`);
      assert.equal(r.status, 400, qs);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, "SERVE_UI_BAD_REQUEST", qs);
    }
  });
});
