/**
 * The persisted revision index (`serve --cache-dir`): a catalog served from its index answers every
 * API exactly as when built from its files; a changed catalog, a corrupt, truncated or foreign index
 * are never served (rebuilt, with a warning); --watch reloads rewrite it; an unwritable cache still
 * serves; a writer killed mid-write leaves no index visible.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { callRpc, httpGet, makeClient, normalizeResponses, type GenericClient } from "../../test/serve/helpers.js";
import {
  CatalogStore,
  loadServiceDefinitions,
  startGrpcServer,
  startHttpServer,
  type GrpcServerHandle,
  type HttpServerHandle,
  type StoreEvent,
} from "./index.js";
import { CatalogRevision } from "./revision.js";
import { indexPath, treeState } from "./revindex.js";
import { isOpcatTemp } from "../fsx/staged.js";

/** catalogd's HTTP API queries two servers of one catalog must answer alike: /all (identity, gzip, a range), /metas. */
const HTTP_QUERIES = [
  ["/catalogs/test/api/v1/all", {}],
  ["/catalogs/test/api/v1/all", { "Accept-Encoding": "gzip" }],
  ["/catalogs/test/api/v1/all", { Range: "bytes=100-199" }],
  ["/catalogs/test/api/v1/metas?schema=olm.package", {}],
  ["/catalogs/test/api/v1/metas?schema=olm.bundle", { "Accept-Encoding": "gzip" }],
  ["/catalogs/test/api/v1/metas?package=etcd", {}],
  ["/catalogs/test/api/v1/metas?schema=olm.channel&package=etcd&name=stable", {}],
  ["/catalogs/test/api/v1/metas?name=etcd.v0.9.2", {}],
  ["/catalogs/test/api/v1/metas?schema=nope", {}],
] as const;

const here = dirname(fileURLToPath(import.meta.url));
const catalogDir = join(here, "testdata", "catalog");
const tmp = mkdtempSync(join(tmpdir(), "opcat-revindex-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A private copy of the test catalog. */
function copyCatalog(name: string): string {
  const dir = join(tmp, name);
  cpSync(catalogDir, dir, { recursive: true });
  return dir;
}

/** Loads `dir` with a cache in `cacheDir`; returns the revision and the warnings. */
async function loadCached(
  dir: string,
  cacheDir: string,
  enforceIntegrity = false,
): Promise<{ rev?: CatalogRevision; warnings: string[]; problems?: string[] }> {
  const warnings: string[] = [];
  const r = await CatalogRevision.load(dir, {
    catalog: "test",
    serial: 1,
    cache: { dir: cacheDir, enforceIntegrity, onWarning: (m) => warnings.push(m) },
  });
  return r.ok ? { rev: r.revision, warnings } : { warnings, problems: r.problems.map((p) => p.message) };
}

function theIndex(dir: string, cacheDir: string): string {
  return indexPath(cacheDir, treeState(dir, false).real, true);
}

/** Each path asked of both servers (built from the files, read from the index): the same answer. */
async function sameHttpAnswers(
  servers: readonly { http: HttpServerHandle }[],
  paths: readonly (readonly [string, Record<string, string>])[],
): Promise<void> {
  for (const [path, headers] of paths) {
    const [a, b] = await Promise.all(
      servers.map((s) => httpGet(`http://127.0.0.1:${s.http.address.port}${path}`, { ...headers })),
    );
    assert.equal(b.status, a.status, path);
    assert.ok(b.body.equals(a.body), `${path}: bodies differ`);
    for (const h of ["content-type", "content-encoding", "content-length", "etag", "content-range"])
      assert.equal(b.headers[h], a.headers[h], `${path}: ${h}`);
  }
}

describe("an HTTP-only revision kept in a file answers as one kept in memory", () => {
  const filesDir = join(tmp, "served");
  const warnings: string[] = [];
  const opts = { grpc: false, validation: "report" } as const;
  const inMemory = new CatalogStore(opts);
  const inFile = new CatalogStore({ ...opts, files: { dir: filesDir, onWarning: (m) => warnings.push(m) } });
  const servers: { http: HttpServerHandle }[] = [];

  before(async () => {
    for (const store of [inMemory, inFile]) {
      assert.equal((await store.add("test", catalogDir, { index: false })).status, "loaded");
      servers.push({ http: await startHttpServer(store, { port: 0, resolver: false }) });
    }
  });
  after(async () => {
    for (const s of servers) await s.http.close();
    await Promise.all([inMemory.close(), inFile.close()]);
  });

  test("its bytes are read from a file already unlinked; content, digest and tags are the same", () => {
    const a = inMemory.get("test");
    const b = inFile.get("test");
    assert.ok(a && b);
    assert.deepEqual(warnings, []);
    assert.ok(a.jsonlBytes.inMemory && a.gzipBytes.inMemory);
    assert.ok(!b.jsonlBytes.inMemory && !b.gzipBytes.inMemory);
    assert.deepEqual(readdirSync(filesDir), []);
    assert.ok(a.jsonl.equals(b.jsonl));
    assert.ok(a.gzip.equals(b.gzip));
    assert.equal(b.digest, a.digest);
    assert.equal(b.etag, a.etag);
    assert.equal(b.blobCount, a.blobCount);
    assert.deepEqual(b.validationProblems, a.validationProblems);
  });

  test("HTTP: /all (identity, gzip, a range) and /metas queries answer the same bytes and headers", async () => {
    const paths = HTTP_QUERIES;
    await sameHttpAnswers(servers, paths);
  });

  test("where no file can be written, the bytes stay in memory and a warning says why", async () => {
    const notADir = join(tmp, "served-not-a-dir");
    writeFileSync(notADir, "");
    const told: string[] = [];
    const r = await CatalogRevision.load(catalogDir, {
      catalog: "test",
      serial: 1,
      ...opts,
      files: { dir: notADir, onWarning: (m) => told.push(m) },
    });
    assert.ok(r.ok);
    assert.ok(r.revision.jsonlBytes.inMemory);
    assert.equal(told.length, 1);
    assert.match(told[0], /^the served bytes of test stay in memory: /);
    assert.ok(r.revision.jsonl.equals(inMemory.get("test")!.jsonl));
  });
});

describe("answers from a persisted index are those of a build from the files", () => {
  const cacheDir = join(tmp, "cache-same");
  const built = new CatalogStore();
  const indexed = new CatalogStore({ cache: { dir: cacheDir } });
  const servers: { http: HttpServerHandle; grpc: GrpcServerHandle }[] = [];
  const defs = loadServiceDefinitions();
  const clients: GenericClient[] = [];

  before(async () => {
    // the first load builds and writes the index, the second store starts from it
    const writer = await CatalogRevision.load(catalogDir, { catalog: "test", serial: 1, cache: { dir: cacheDir } });
    assert.ok(writer.ok && writer.revision.indexWritten && writer.revision.origin === "catalog");
    assert.equal((await built.add("test", catalogDir)).status, "loaded");
    const out = await indexed.add("test", catalogDir);
    assert.equal(out.status, "loaded");
    assert.equal(indexed.get("test")?.origin, "index");
    for (const store of [built, indexed])
      servers.push({
        http: await startHttpServer(store, { port: 0, resolver: false }),
        grpc: await startGrpcServer(store, { port: 0 }),
      });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await Promise.all([s.http.close(), s.grpc.close()]);
    await Promise.all([built.close(), indexed.close()]);
  });

  test("the revision's content, digest and entity tags are the same", () => {
    const a = built.get("test");
    const b = indexed.get("test");
    assert.ok(a && b);
    assert.ok(a.jsonl.equals(b.jsonl));
    assert.ok(a.gzip.equals(b.gzip));
    assert.equal(a.digest, b.digest);
    assert.equal(a.etag, b.etag);
    assert.equal(a.blobCount, b.blobCount);
    assert.equal(a.registry?.bundleCount, b.registry?.bundleCount);
  });

  test("HTTP: /all (identity, gzip, a range) and /metas queries answer the same bytes and headers", async () => {
    const paths = [...HTTP_QUERIES, ["/catalogs/test/api/v1/metas?bogus=1", {}]] as const;
    await sameHttpAnswers(servers, paths);
  });

  test(
    "gRPC: every request of the golden set answers the same " + "(ListBundles included, with and without bundle paths)",
    async () => {
      const requests = JSON.parse(readFileSync(join(here, "testdata", "grpc-golden.json"), "utf8")) as {
        rpc: string;
        req: object;
        md?: Record<string, string>;
      }[];
      const registry = servers.map((s) => makeClient(defs, "api.Registry", `127.0.0.1:${s.grpc.port}`));
      const experimental = servers.map((s) => makeClient(defs, "api.ExperimentalRegistry", `127.0.0.1:${s.grpc.port}`));
      clients.push(...registry, ...experimental);
      const rpcs = new Set<string>();
      for (const g of requests) {
        const service = g.rpc.startsWith("Experimental") ? "api.ExperimentalRegistry" : "api.Registry";
        const [a, b] = await Promise.all(
          [0, 1].map((i) =>
            callRpc(service === "api.Registry" ? registry[i] : experimental[i], defs, service, g.rpc, g.req, g.md),
          ),
        );
        assert.deepEqual(b.error, a.error, `${g.rpc} ${JSON.stringify(g.req)}`);
        assert.deepEqual(
          normalizeResponses(g.rpc, b.responses, true),
          normalizeResponses(g.rpc, a.responses, true),
          `${g.rpc} ${JSON.stringify(g.req)}`,
        );
        rpcs.add(g.rpc);
      }
      for (const m of Object.keys(defs["api.Registry"] as object)) assert.ok(rpcs.has(m), `golden set lacks ${m}`);
    },
  );
});

/** `<dir>/catalog.json`: `n` packages of one channel and one bundle each, about 1.5 KB per bundle line. */
function writeManyPackages(dir: string, n: number): void {
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  const words = "an operator generated so that its catalog is several megabytes; ".repeat(16);
  for (let i = 0; i < n; i++) {
    const name = `pkg-${String(i).padStart(5, "0")}`;
    const bundle = `${name}.v1.0.${i % 5}`;
    // every ninth bundle has no image: its CSV is a bundle object (ListBundles sends it, read per bundle)
    const csv = {
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name: bundle },
    };
    const object = { type: "olm.bundle.object", value: { data: Buffer.from(JSON.stringify(csv)).toString("base64") } };
    lines.push(
      JSON.stringify({ schema: "olm.package", name, defaultChannel: "stable" }),
      JSON.stringify({ schema: "olm.channel", package: name, name: "stable", entries: [{ name: bundle }] }),
      JSON.stringify({
        schema: "olm.bundle",
        package: name,
        name: bundle,
        image: i % 9 === 0 ? "" : `quay.example.com/many/${name}-bundle:v1.0.${i % 5}`,
        properties: [
          { type: "olm.package", value: { packageName: name, version: `1.0.${i % 5}` } },
          { type: "olm.gvk", value: { group: `${name}.example.com`, kind: "Thing", version: "v1" } },
          ...(i % 9 === 0 ? [object] : []),
          {
            type: "olm.csv.metadata",
            value: { displayName: `Package ${i}`, annotations: { description: `${i}: ${words}` } },
          },
        ],
      }),
    );
  }
  writeFileSync(join(dir, "catalog.json"), lines.join("\n") + "\n");
}

describe("a catalog of several megabytes answers the same from its index (pieces, streams, runs)", () => {
  const dir = join(tmp, "many");
  const cacheDir = join(tmp, "cache-many");
  const stores: CatalogStore[] = [];
  const servers: { http: HttpServerHandle; grpc: GrpcServerHandle }[] = [];
  const clients: GenericClient[] = [];

  before(async () => {
    writeManyPackages(dir, 4000);
    stores.push(new CatalogStore(), new CatalogStore({ cache: { dir: cacheDir } }));
    const built = await stores[0].add("many", dir);
    assert.equal(built.status, "loaded", JSON.stringify(built.status === "failed" && built.problems.slice(0, 2)));
    await loadCached(dir, cacheDir);
    assert.equal((await stores[1].add("many", dir)).status, "loaded");
    assert.equal(stores[1].get("many")?.origin, "index");
    assert.equal(stores[1].get("many")?.jsonlBytes.inMemory, false);
    for (const store of stores)
      servers.push({
        http: await startHttpServer(store, { port: 0, resolver: false }),
        grpc: await startGrpcServer(store, { port: 0 }),
      });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await Promise.all([s.http.close(), s.grpc.close()]);
    await Promise.all(stores.map((s) => s.close()));
  });

  test("HTTP: /all in pieces, a range across pieces, metas streamed (over 4 MiB) and cached", async () => {
    const size = stores[0].get("many")?.size ?? 0;
    assert.ok(size > 5 * 1024 * 1024, `catalog of ${size} bytes`);
    const paths = [
      ["/catalogs/many/api/v1/all", {}],
      ["/catalogs/many/api/v1/all", { "Accept-Encoding": "gzip" }],
      ["/catalogs/many/api/v1/all", { Range: "bytes=1000000-3100000" }],
      ["/catalogs/many/api/v1/metas?schema=olm.bundle", {}],
      ["/catalogs/many/api/v1/metas?schema=olm.bundle", { "Accept-Encoding": "gzip" }],
      ["/catalogs/many/api/v1/metas?schema=olm.package", {}],
      ["/catalogs/many/api/v1/metas?package=pkg-03999", {}],
    ] as const;
    await sameHttpAnswers(servers, paths);
  });

  test("gRPC: ListBundles (bundles with and without paths) and GetBundle answer the same, in order", async () => {
    const defs = loadServiceDefinitions();
    const registry = servers.map((s) => makeClient(defs, "api.Registry", `127.0.0.1:${s.grpc.port}`));
    clients.push(...registry);
    for (const [rpc, req] of [
      ["ListBundles", {}],
      ["GetBundle", { pkgName: "pkg-00009", channelName: "stable", csvName: "pkg-00009.v1.0.4" }],
      ["GetBundleForChannel", { pkgName: "pkg-03998", channelName: "stable" }],
      ["GetChannelEntriesThatReplace", { csvName: "" }],
    ] as const) {
      const [a, b] = await Promise.all(registry.map((c) => callRpc(c, defs, "api.Registry", rpc, req)));
      assert.deepEqual(b.error, a.error, rpc);
      assert.equal(b.responses.length, a.responses.length, rpc);
      assert.deepEqual(b.responses, a.responses, rpc);
    }
  });
});

describe("an index that does not match is never served", () => {
  test(
    "a changed file: rebuilt (the change served) and " + "rewritten; touched but equal files: the index is used",
    async () => {
      const dir = copyCatalog("changed");
      const cacheDir = join(tmp, "cache-changed");
      const first = await loadCached(dir, cacheDir);
      assert.equal(first.rev?.origin, "catalog");
      assert.equal(first.rev?.indexWritten, true);
      // same bytes, new mtime: the stat signature differs, the content digest decides
      const file = join(dir, readdirSync(dir).find((f) => statSync(join(dir, f)).isFile()) ?? "");
      const t = new Date(Date.now() + 5000);
      utimesSync(file, t, t);
      const touched = await loadCached(dir, cacheDir);
      assert.equal(touched.rev?.origin, "index");
      assert.equal(touched.rev?.digest, first.rev?.digest);
      // different content
      appendFileSync(join(dir, "extra.json"), JSON.stringify({ schema: "example.extra", name: "added-later" }) + "\n");
      const changed = await loadCached(dir, cacheDir);
      assert.equal(changed.rev?.origin, "catalog");
      assert.equal(changed.rev?.indexWritten, true);
      assert.notEqual(changed.rev?.digest, first.rev?.digest);
      assert.match(changed.rev?.jsonl.toString() ?? "", /added-later/);
      assert.deepEqual(changed.warnings, []); // a stale index is routine, not a warning
      const again = await loadCached(dir, cacheDir);
      assert.equal(again.rev?.origin, "index");
      assert.equal(again.rev?.digest, changed.rev?.digest);
    },
  );

  test(
    "corrupt (a flipped byte in any section), truncated, extended " +
      "or foreign indexes are rejected with a warning and rebuilt",
    async () => {
      const dir = copyCatalog("corrupt");
      const other = copyCatalog("other");
      appendFileSync(join(other, "extra.json"), JSON.stringify({ schema: "example.extra", name: "x" }) + "\n");
      const cacheDir = join(tmp, "cache-corrupt");
      const good = await loadCached(dir, cacheDir);
      assert.ok(good.rev?.indexWritten);
      const path = theIndex(dir, cacheDir);
      const pristine = readFileSync(path);
      const otherCache = join(tmp, "cache-other");
      await loadCached(other, otherCache);
      const foreign = readFileSync(theIndex(other, otherCache));
      const flip = (at: number): Buffer => {
        const b = Buffer.from(pristine);
        b[at] ^= 0x20;
        return b;
      };
      // the format number follows the 8-byte magic
      const withFormat = (n: number): Buffer => {
        const b = Buffer.from(pristine);
        b.writeUInt32LE(n, 8);
        return b;
      };
      const variants: [string, Buffer][] = [
        ["magic", flip(0)],
        ["header", flip(30)],
        ["first body byte", flip(pristine.length - Math.floor(pristine.length / 2))],
        ["last byte (bundle manifests)", flip(pristine.length - 1)],
        ["truncated", pristine.subarray(0, pristine.length - 7)],
        ["truncated to the header", pristine.subarray(0, 20)],
        ["extended", Buffer.concat([pristine, Buffer.from("x")])],
        ["empty", Buffer.alloc(0)],
        ["another catalog's index", foreign],
        ["not an index", Buffer.from("hello\n")],
        ["an earlier format (1)", withFormat(1)],
      ];
      for (const [what, bytes] of variants) {
        writeFileSync(path, bytes);
        const r = await loadCached(dir, cacheDir);
        assert.equal(r.rev?.origin, "catalog", what);
        assert.equal(r.rev?.digest, good.rev?.digest, what);
        assert.equal(r.warnings.length, 1, `${what}: ${JSON.stringify(r.warnings)}`);
        assert.match(r.warnings[0], /serve index not used: .*; rebuilding it/, what);
        if (what.startsWith("an earlier format"))
          assert.match(r.warnings[0], /index format 1, this opcat writes 2/, "the format is named");
        assert.ok(
          readFileSync(path).equals(pristine) || (await loadCached(dir, cacheDir)).rev?.origin === "index",
          what,
        );
      }
    },
  );

  test(
    "--cache-enforce-integrity: a matching index is served, " + "a missing or stale one is a failure (no rebuild)",
    async () => {
      const dir = copyCatalog("enforce");
      const cacheDir = join(tmp, "cache-enforce");
      const missing = await loadCached(dir, cacheDir, true);
      assert.match(missing.problems?.[0] ?? "", /integrity check failed: no index yet/);
      await loadCached(dir, cacheDir);
      assert.equal((await loadCached(dir, cacheDir, true)).rev?.origin, "index");
      appendFileSync(join(dir, "extra.json"), JSON.stringify({ schema: "example.extra", name: "y" }) + "\n");
      const stale = await loadCached(dir, cacheDir, true);
      assert.match(stale.problems?.[0] ?? "", /integrity check failed: the catalog's files changed/);
    },
  );
});

describe("the index in a running server", () => {
  test("--watch: a change is reloaded from the files and the index rewritten; the next start reads it", async () => {
    const dir = copyCatalog("watched");
    const cacheDir = join(tmp, "cache-watch");
    const events: StoreEvent[] = [];
    let onEvent: (() => void) | undefined;
    const store = new CatalogStore({
      cache: { dir: cacheDir },
      watchDebounceMs: 20,
      onEvent: (e) => {
        events.push(e);
        onEvent?.();
      },
    });
    try {
      assert.equal((await store.add("w", dir)).status, "loaded");
      store.watch();
      const reloaded = new Promise<void>((resolve) => {
        onEvent = () => {
          if (events.some((e) => e.status === "loaded" && e.revision.serial === 2)) resolve();
        };
      });
      appendFileSync(join(dir, "extra.json"), JSON.stringify({ schema: "example.extra", name: "watched-in" }) + "\n");
      await reloaded;
      const rev = store.get("w");
      assert.equal(rev?.origin, "catalog");
      assert.equal(rev?.indexWritten, true);
      assert.match(rev?.jsonl.toString() ?? "", /watched-in/);
      const next = await loadCached(dir, cacheDir);
      assert.equal(next.rev?.origin, "index");
      assert.equal(next.rev?.digest, rev?.digest);
    } finally {
      await store.close();
    }
  });

  test("a cache that cannot be written (its directory is a file) still serves, with a warning", async () => {
    const blocker = join(tmp, "not-a-dir");
    writeFileSync(blocker, "");
    const r = await loadCached(catalogDir, blocker);
    assert.equal(r.rev?.origin, "catalog");
    assert.equal(r.rev?.indexWritten, false);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0], /serve index not written to .*not-a-dir/);
  });

  test(
    "a writer killed while writing the index leaves no index visible, " +
      "only a temporary file that is ignored and removed by the next write",
    async () => {
      const dir = copyCatalog("killed");
      const cacheDir = join(tmp, "cache-killed");
      // the child writes the index but never finishes it: fsync (before the rename) hangs, then it is killed
      const load =
        `await CatalogRevision.load(${JSON.stringify(dir)}, ` +
        `{ catalog: "k", serial: 1, cache: { dir: ${JSON.stringify(cacheDir)} } });`;
      const code = `
      import { open } from "node:fs/promises";
      import { CatalogRevision } from ${JSON.stringify(join(here, "revision.ts"))};
      const fh = await open(${JSON.stringify(join(tmp, "probe"))}, "w");
      Object.getPrototypeOf(fh).sync = () => { process.stdout.write("writing\\n"); return new Promise(() => {}); };
      await fh.close();
      ${load}
    `;
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("writing")) resolve();
        });
        child.on("exit", (c) => reject(new Error(`the writer exited (${c}) before writing: ${err}`)));
      });
      child.kill("SIGKILL");
      await once(child, "exit");
      const files = readdirSync(join(cacheDir, "serve-index"));
      assert.ok(
        files.every((f) => !f.endsWith(".idx")),
        JSON.stringify(files),
      );
      assert.ok(
        files.some((f) => f.endsWith(".tmp") && isOpcatTemp(f, false)),
        JSON.stringify(files),
      );
      const next = await loadCached(dir, cacheDir);
      assert.equal(next.rev?.origin, "catalog");
      assert.equal(next.rev?.indexWritten, true);
      assert.deepEqual(next.warnings, []);
      assert.equal((await loadCached(dir, cacheDir)).rev?.origin, "index");
      // the dead writer's temporary file went with the next successful write
      assert.deepEqual(
        readdirSync(join(cacheDir, "serve-index")).filter((f) => isOpcatTemp(f, false)),
        [],
      );
    },
  );
});
