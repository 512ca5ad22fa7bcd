import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { EventEmitter } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { readTar, writeTar, type TarInput } from "./tar.js";
import { applyLayer, cleanEntryPath } from "./unpack.js";
import { parseRegistriesConf, parseToml, pullSources, type RegistriesConf } from "./registries.js";
import { lookupCredentials, credentialKeys } from "./auth.js";
import { checkTlsFlags } from "./access.js";
import { parseChallenges, repoTarget, mapPool } from "./registry.js";
import { parseManifest, selectPlatform, MEDIA_DOCKER_LIST, MEDIA_DOCKER_MANIFEST } from "./manifest.js";
import { BlobStore, parseLayoutRef } from "./store.js";
import { generateDockerfile, parseExtraLabels } from "./dockerfile.js";
import { buildBundleImage, buildCatalogImage, writeToLayout } from "./build.js";
import { openLayoutImage, unpackImage } from "./pull.js";
import { parseCatalogBuildConfig } from "../action/buildconfig.js";
import { resolveRenderRef } from "../action/reference.js";
import { classifyImage } from "./classify.js";
import { ImageError, sha256Digest } from "./errors.js";

const here = new URL(".", import.meta.url).pathname;
const tmp = (): string => mkdtempSync(join(tmpdir(), "opcat-image-"));

async function* from(bufs: Buffer[]): AsyncGenerator<Buffer> {
  for (const b of bufs) yield b;
}

async function collectTar(bufs: Buffer[]): Promise<{ name: string; type: string; data: string; linkname: string }[]> {
  const out = [];
  for await (const e of readTar(from(bufs))) {
    const chunks: Buffer[] = [];
    for await (const c of e.body()) chunks.push(c);
    out.push({ name: e.name, type: e.type, data: Buffer.concat(chunks).toString("utf8"), linkname: e.linkname });
  }
  return out;
}

async function apply(
  root: string,
  entries: TarInput[],
  opts: { only?: string[]; maxBytes?: number } = {},
): Promise<void> {
  await applyLayer(root, from([gzipSync(Buffer.concat(writeTar(entries)))]), { bytes: 0, entries: 0 }, opts);
}

async function rejects(p: Promise<unknown>, code: string, re?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ImageError, String(e));
    assert.equal(e.code, code, e.message);
    if (re) assert.match(e.message, re);
    return true;
  });
}

describe("tar", () => {
  test("round trip of files, directories, symlinks, long and unicode names (property)", async () => {
    const seg = fc.stringMatching(/^[a-zA-Z0-9._é-]{1,40}$/).filter((s) => s !== "." && s !== "..");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(seg, { minLength: 1, maxLength: 6 }), fc.uint8Array({ maxLength: 2000 })), {
          maxLength: 8,
        }),
        async (files) => {
          const entries: TarInput[] = files.map(([p, d]) => ({ path: p.join("/"), type: "file", data: d }));
          entries.push(
            { path: "dir/" + "x".repeat(150), type: "dir" },
            { path: "ln", type: "symlink", linkname: "t/" + "y".repeat(120) },
          );
          const got = await collectTar(writeTar(entries));
          assert.equal(got.length, entries.length);
          got.forEach((g, i) => {
            const e = entries[i];
            assert.equal(g.name, e.type === "dir" ? e.path + "/" : e.path);
            assert.equal(g.type, e.type);
            if (e.type === "file") assert.equal(g.data, Buffer.from(e.data!).toString("utf8"));
            if (e.type === "symlink") assert.equal(g.linkname, e.linkname);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  test("the writer is reproducible and chunk boundaries do not matter to the reader", async () => {
    const entries: TarInput[] = [
      { path: "a", type: "dir" },
      { path: "a/b.json", type: "file", data: Buffer.from("{}\n") },
    ];
    const a = Buffer.concat(writeTar(entries));
    assert.deepEqual(a, Buffer.concat(writeTar(entries)));
    const one = [...a].map((x) => Buffer.from([x]));
    assert.deepEqual(await collectTar(one), await collectTar([a]));
  });

  test("a corrupt header and a truncated archive are errors", async () => {
    const a = Buffer.concat(writeTar([{ path: "f", type: "file", data: Buffer.alloc(3000, 1) }]));
    const bad = Buffer.from(a);
    bad[10] ^= 0xff;
    await rejects(collectTar([bad]), "IMAGE_LAYER_CORRUPT", /checksum/);
    await rejects(collectTar([a.subarray(0, 1500)]), "IMAGE_LAYER_CORRUPT", /truncated/);
  });
});

describe("unpack", () => {
  test("files, directories, symlinks, hard links; modes 0600/0700", async () => {
    const root = tmp();
    await apply(root, [
      { path: "configs", type: "dir" },
      { path: "configs/a.json", type: "file", data: Buffer.from("A"), mode: 0o755 },
      { path: "configs/link", type: "symlink", linkname: "a.json" },
      { path: "configs/abs", type: "symlink", linkname: "/configs/a.json" },
    ]);
    assert.equal(readFileSync(join(root, "configs/a.json"), "utf8"), "A");
    assert.equal(lstatSync(join(root, "configs/a.json")).mode & 0o777, 0o600);
    assert.equal(lstatSync(join(root, "configs")).mode & 0o777, 0o700);
    assert.equal(readlinkSync(join(root, "configs/link")), "a.json");
    assert.equal(readlinkSync(join(root, "configs/abs")), "a.json"); // absolute targets stay inside the root
    assert.equal(readFileSync(join(root, "configs/abs"), "utf8"), "A");
    rmSync(root, { recursive: true });
  });

  test("path traversal, escaping symlinks and writes through symlinks are refused", async () => {
    const root = tmp();
    await rejects(
      apply(root, [{ path: "../evil", type: "file", data: Buffer.from("x") }]),
      "IMAGE_UNSAFE_LAYER",
      /escapes the image root/,
    );
    await rejects(apply(root, [{ path: "a/../../evil", type: "file", data: Buffer.from("x") }]), "IMAGE_UNSAFE_LAYER");
    await rejects(
      apply(root, [{ path: "l", type: "symlink", linkname: "../../etc" }]),
      "IMAGE_UNSAFE_LAYER",
      /points outside/,
    );
    const outside = tmp();
    await rejects(
      apply(root, [
        { path: "d", type: "symlink", linkname: "." },
        { path: "d/x", type: "file", data: Buffer.from("x") },
      ]),
      "IMAGE_UNSAFE_LAYER",
      /through a symlink/,
    );
    symlinkSync(outside, join(root, "planted"));
    await rejects(
      apply(root, [{ path: "planted/x", type: "file", data: Buffer.from("x") }]),
      "IMAGE_UNSAFE_LAYER",
      /through a symlink/,
    );
    assert.deepEqual(readdirSync(outside), []);
    assert.ok(!existsSync(join(root, "..", "evil")));
    rmSync(root, { recursive: true });
    rmSync(outside, { recursive: true });
  });

  test("whiteouts and opaque directories; the filter keeps only the wanted subtree", async () => {
    const root = tmp();
    await apply(
      root,
      [
        { path: "configs/a", type: "file", data: Buffer.from("a") },
        { path: "configs/b", type: "file", data: Buffer.from("b") },
        { path: "configs/sub/c", type: "file", data: Buffer.from("c") },
        { path: "etc/passwd", type: "file", data: Buffer.from("p") },
      ],
      { only: ["configs"] },
    );
    assert.ok(!existsSync(join(root, "etc")));
    await apply(root, [{ path: "configs/.wh.a", type: "file" }], { only: ["configs"] });
    assert.ok(!existsSync(join(root, "configs/a")));
    await apply(root, [
      { path: "configs/sub", type: "dir" },
      { path: "configs/sub/.wh..wh..opq", type: "file" },
      { path: "configs/sub/d", type: "file", data: Buffer.from("d") },
    ]);
    assert.deepEqual(readdirSync(join(root, "configs/sub")), ["d"]);
    rmSync(root, { recursive: true });
  });

  test("byte budget and corrupt gzip are clear errors", async () => {
    const root = tmp();
    await rejects(
      apply(root, [{ path: "big", type: "file", data: Buffer.alloc(5000) }], { maxBytes: 1000 }),
      "IMAGE_UNSAFE_LAYER",
      /exceeds 1000 bytes/,
    );
    const gz = gzipSync(Buffer.concat(writeTar([{ path: "f", type: "file", data: Buffer.alloc(100000, 7) }])));
    await rejects(
      applyLayer(root, from([gz.subarray(0, gz.length - 100)]), { bytes: 0, entries: 0 }, { label: "layer X" }),
      "IMAGE_LAYER_CORRUPT",
      /layer X: truncated or corrupt gzip/,
    );
    rmSync(root, { recursive: true });
  });

  test("cleanEntryPath", () => {
    assert.equal(cleanEntryPath("./a//b/./c/"), "a/b/c");
    assert.equal(cleanEntryPath("/a/../b"), "b");
    assert.throws(() => cleanEntryPath("a/../../b"), ImageError);
  });
});

describe("registries.conf", () => {
  const text = `
unqualified-search-registries = ["docker.io"]
# comment
[[registry]]
prefix = "quay.io/operatorhubio"
location = "mirror.local:5000/ohio"   # trailing comment
insecure = true
[[registry.mirror]]
location = "127.0.0.1:5001/m1"
insecure = true
[[registry.mirror]]
location = "127.0.0.1:5002/m2"
pull-from-mirror = "digest-only"

[[registry]]
location = "blocked.example.com"
blocked = true

[[registry]]
prefix = "*.example.org"
[[registry.mirror]]
location = "127.0.0.1:6000"

[aliases]
"busybox" = 'docker.io/library/busybox'
[registries.insecure]
registries = ["old.local:5000",
  "other.local"]
`;
  const conf: RegistriesConf = { registries: parseRegistriesConf(text, "t.conf"), files: ["t.conf"] };

  test("TOML (smol-toml): what registries.conf files use, and located errors", () => {
    // (tables have no prototype: a key such as __proto__ is only data)
    const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
    const t = plain(parseToml(`a = "x\\u00e9\\n"\nb = [1, 2,]\n[t]\nc = { d = true }\n[[arr]]\ne = 'lit'\n[[arr]]\n`));
    assert.deepEqual(t, { a: "xé\n", b: [1, 2], t: { c: { d: true } }, arr: [{ e: "lit" }, {}] });
    // TOML 1.0 beyond the old hand-written subset: dotted keys, multi-line strings
    assert.deepEqual(plain(parseToml(`x.y = 1\nm = """\nab"""\n`)), { x: { y: 1 }, m: "ab" });
    assert.throws(() => parseToml(`a = "x`), /^Error: line 1: unfinished string/);
    assert.throws(() => parseToml(`[a]\nb = 1\n[a]\n`), /^Error: line 3: /);
    assert.throws(() => parseRegistriesConf(`[[registry]]\nlocation = 3`), /must be a string/);
  });

  test("prefix rewrite, mirrors by tag and digest, wildcard, v1 insecure, blocked", () => {
    const names = (byDigest: boolean, n: string): string[] =>
      pullSources(conf, n, byDigest).map((s) => `${s.name}${s.insecure ? " (insecure)" : ""}`);
    assert.deepEqual(names(false, "quay.io/operatorhubio/catalog"), [
      "127.0.0.1:5001/m1/catalog (insecure)",
      "mirror.local:5000/ohio/catalog (insecure)",
    ]);
    assert.deepEqual(names(true, "quay.io/operatorhubio/catalog"), [
      "127.0.0.1:5001/m1/catalog (insecure)",
      "127.0.0.1:5002/m2/catalog",
      "mirror.local:5000/ohio/catalog (insecure)",
    ]);
    assert.deepEqual(names(false, "quay.io/operatorhubioX/catalog"), ["quay.io/operatorhubioX/catalog"]);
    assert.deepEqual(names(false, "a.example.org/ns/x"), ["127.0.0.1:6000/ns/x", "a.example.org/ns/x"]);
    assert.deepEqual(names(false, "old.local:5000/x"), ["old.local:5000/x (insecure)"]);
    assert.throws(() => pullSources(conf, "blocked.example.com/x", false), /blocked/);
  });
});

describe("credentials", () => {
  test("auth.json and docker config lookup, most specific key first", () => {
    const home = tmp();
    const b64 = (s: string): string => Buffer.from(s).toString("base64");
    mkdirSync(join(home, ".docker"));
    writeFileSync(
      join(home, ".docker/config.json"),
      JSON.stringify({
        auths: { "https://index.docker.io/v1/": { auth: b64("hub:pw") }, "127.0.0.1:5000": { auth: b64("d:dp") } },
      }),
    );
    const rf = join(home, "auth.json");
    writeFileSync(
      rf,
      JSON.stringify({ auths: { "quay.io/org": { auth: b64("org:1") }, "quay.io": { username: "q", password: "2" } } }),
    );
    const env = { HOME: home, REGISTRY_AUTH_FILE: rf };
    assert.deepEqual(lookupCredentials("quay.io/org/repo", { env }), { username: "org", password: "1" });
    assert.deepEqual(lookupCredentials("quay.io/other/repo", { env }), { username: "q", password: "2" });
    assert.deepEqual(lookupCredentials("docker.io/library/busybox", { env }), { username: "hub", password: "pw" });
    assert.deepEqual(lookupCredentials("127.0.0.1:5000/x", { env }), { username: "d", password: "dp" });
    assert.equal(lookupCredentials("ghcr.io/x", { env }), undefined);
    assert.deepEqual(credentialKeys("a/b/c"), ["a/b/c", "a/b", "a"]);
    rmSync(home, { recursive: true });
  });
});

describe("registry client pieces", () => {
  test("opm's TLS flag errors", () => {
    assert.equal(
      checkTlsFlags({ useHttp: true, skipTlsVerify: true }),
      "invalid flag combination: --use-http and --skip-tls-verify cannot both be true",
    );
    assert.equal(
      checkTlsFlags({ skipTls: true, useHttp: true }),
      "invalid flag combination: cannot use --use-http with --skip-tls",
    );
    assert.equal(
      checkTlsFlags({ skipTls: true, skipTlsVerify: true }),
      "invalid flag combination: cannot use --skip-tls-verify with --skip-tls",
    );
    assert.equal(checkTlsFlags({ useHttp: true }), undefined);
  });

  test("WWW-Authenticate challenges", () => {
    assert.deepEqual(
      parseChallenges(
        `Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"`,
      ),
      [
        {
          scheme: "bearer",
          params: { realm: "https://auth.example/token", service: "registry.example", scope: "repository:a/b:pull" },
        },
      ],
    );
    assert.deepEqual(parseChallenges(`Basic realm="Registry Realm"`), [
      { scheme: "basic", params: { realm: "Registry Realm" } },
    ]);
  });

  test("docker.io is served by registry-1.docker.io", () => {
    assert.deepEqual(repoTarget("docker.io/library/busybox"), {
      host: "registry-1.docker.io",
      repo: "library/busybox",
      insecure: false,
    });
  });

  test("mapPool bounds concurrency and keeps order", async () => {
    // Each task waits on a gate the test opens, in an order unlike the input's: no clock involved.
    let running = 0;
    let peak = 0;
    const gates = new Map<number, () => void>();
    const started = new EventEmitter();
    const done = mapPool([1, 2, 3, 4, 5, 6, 7], 3, async (x) => {
      peak = Math.max(peak, ++running);
      await new Promise<void>((r) => {
        gates.set(x, r);
        started.emit("gate");
      });
      running--;
      return x * 2;
    });
    for (let left = 7; left > 0; left--) {
      // The pool is full (or holds all that is left) before one task is let go: the last one started.
      while (gates.size < Math.min(3, left)) await new Promise((r) => started.once("gate", r));
      assert.ok(running <= 3 && gates.size <= 3);
      const last = [...gates.keys()].at(-1)!;
      gates.get(last)!();
      gates.delete(last);
    }
    assert.deepEqual(await done, [2, 4, 6, 8, 10, 12, 14]);
    assert.equal(peak, 3);
  });
});

describe("manifests", () => {
  const d = (n: number): string => "sha256:" + String(n).repeat(64).slice(0, 64);
  test("Docker list and platform choice; schema 1 refused", () => {
    const list = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA_DOCKER_LIST,
        manifests: [
          { mediaType: MEDIA_DOCKER_MANIFEST, digest: d(1), size: 1, platform: { architecture: "arm64", os: "linux" } },
          { mediaType: MEDIA_DOCKER_MANIFEST, digest: d(2), size: 1, platform: { architecture: "amd64", os: "linux" } },
        ],
      }),
    );
    const idx = parseManifest(list, undefined, "x");
    assert.equal(idx.kind, "index");
    if (idx.kind === "index") {
      assert.equal(selectPlatform(idx, { os: "linux", architecture: "amd64" }, "x").digest, d(2));
      assert.throws(
        () => selectPlatform(idx, { os: "linux", architecture: "s390x" }, "x"),
        /no image found in image index for architecture "s390x"/,
      );
    }
    assert.throws(() => parseManifest(Buffer.from(`{"schemaVersion":1}`), undefined, "x"), /schema 1/);
    assert.throws(
      () =>
        parseManifest(
          Buffer.from(
            `{"schemaVersion":2,"mediaType":"${MEDIA_DOCKER_MANIFEST}",` +
              `"config":{"digest":"sha256:zz","size":1},"layers":[]}`,
          ),
          undefined,
          "x",
        ),
      /invalid digest/,
    );
  });

  test("oci: references", () => {
    assert.deepEqual(parseLayoutRef("oci:/tmp/x:v1"), { dir: "/tmp/x", tag: "v1" });
    assert.deepEqual(parseLayoutRef("oci:rel"), { dir: "rel", tag: "" });
    assert.equal(parseLayoutRef("quay.io/x"), undefined);
  });
});

describe("blob store", () => {
  test("a blob whose bytes do not match its digest is never stored", async () => {
    const root = tmp();
    const s = new BlobStore(root);
    const good = Buffer.from("hello");
    const dg = sha256Digest(good);
    await rejects(s.putStream(dg, from([Buffer.from("jello")]), { size: 5 }), "IMAGE_DIGEST_MISMATCH");
    await rejects(s.putStream(dg, from([Buffer.from("hel")]), { size: 5 }), "IMAGE_BLOB_TRUNCATED");
    await rejects(s.putStream(dg, from([Buffer.from("hello!")]), { size: 5 }), "IMAGE_BLOB_TOO_LARGE");
    assert.deepEqual(readdirSync(join(root, "blobs/sha256")), []);
    await s.putStream(dg, from([good]), { size: 5 });
    assert.deepEqual(readdirSync(join(root, "blobs/sha256")), [dg.slice(7)]);
    writeFileSync(s.path(dg), "jello");
    assert.throws(() => s.readVerified(dg), /digest mismatch/);
    rmSync(root, { recursive: true });
  });
});

describe("dockerfile", () => {
  const vectors = JSON.parse(readFileSync(join(here, "testdata/dockerfile-vectors.json"), "utf8")) as {
    name: string;
    builderImage: string;
    baseImage: string;
    indexDir: string;
    extraLabels: Record<string, string>;
    expected?: string;
    error?: string;
  }[];
  for (const v of vectors) {
    test(`opm vector ${v.name}`, () => {
      const run = (): string =>
        generateDockerfile({
          baseImage: v.baseImage,
          builderImage: v.builderImage,
          indexDir: v.indexDir,
          extraLabels: v.extraLabels,
        });
      if (v.error) assert.throws(run, { message: v.error });
      else assert.equal(run(), v.expected);
    });
  }
  test("extra labels: comma separated, last key wins, malformed refused", () => {
    assert.deepEqual(parseExtraLabels(["a=1,b=2", "a=3", `"c=x,y"`]), { a: "3", b: "2", c: "x,y" });
    assert.deepEqual(parseExtraLabels(["nope"]), { error: `invalid label "nope"` });
  });
});

describe("build and classify", () => {
  const bundleDir = join(here, "../bundle/testdata/bundles/json");
  test("catalog images are reproducible, labelled, and render from an OCI layout through the cache", async () => {
    const dir = tmp();
    mkdirSync(join(dir, "cat/pkg"), { recursive: true });
    writeFileSync(join(dir, "cat/pkg/index.json"), JSON.stringify({ schema: "olm.package", name: "pkg" }));
    const a = buildCatalogImage(join(dir, "cat"));
    const b = buildCatalogImage(join(dir, "cat"));
    assert.equal(a.manifestDigest, b.manifestDigest);
    assert.deepEqual(a.labels, { "operators.operatorframework.io.index.configs.v1": "/configs" });
    writeToLayout(a, `oci:${dir}/layout:v1`);
    const img = openLayoutImage(`oci:${dir}/layout:v1`);
    assert.equal(img.digest, a.manifestDigest);
    assert.deepEqual(classifyImage(img), { kind: "catalog-image", configsDir: "/configs" });
    const r = await resolveRenderRef(`oci:${dir}/layout:v1`, { cacheDir: join(dir, "cache") });
    assert.equal(r.kind, "catalog-image");
    assert.equal(
      readFileSync(join(r.path, "pkg/index.json"), "utf8"),
      JSON.stringify({ schema: "olm.package", name: "pkg" }),
    );
    // cached: the same tree is returned
    assert.equal(await unpackImage(img, { cacheDir: join(dir, "cache"), only: ["configs"] }), join(r.path, ".."));
    assert.throws(() => buildCatalogImage(join(dir, "missing")), /is not a directory/);
    rmSync(dir, { recursive: true });
  });

  test("bundle images carry the annotations as labels and classify as bundles", async () => {
    const img = buildBundleImage(bundleDir);
    assert.deepEqual(img.labels, {
      "operators.operatorframework.io.bundle.channels.v1": "stable",
      "operators.operatorframework.io.bundle.package.v1": "widget",
    });
    assert.equal(buildBundleImage(bundleDir).manifestDigest, img.manifestDigest);
    assert.deepEqual(classifyImage({ ref: "x", labels: img.labels }), { kind: "bundle-image" });
  });

  test("opm's errors for images of unknown type", () => {
    assert.throws(() => classifyImage({ ref: "r", labels: {} }), {
      message: `render "r": image type could not be determined: image has no labels`,
    });
    assert.throws(() => classifyImage({ ref: "r", labels: { b: "2", a: "1" } }), {
      message: `render "r": image type could not be determined, found labels\n  a=1\n  b=2`,
    });
    assert.throws(
      () => classifyImage({ ref: "r", labels: { "operators.operatorframework.io.index.database.v1": "/db" } }),
      {
        message:
          `render "r": sqlite-based index images are no longer ` +
          `supported, migrate to a file-based catalog: not allowed`,
      },
    );
  });

  test("render references that are not canonical fail like opm", async () => {
    await assert.rejects(resolveRenderRef("unknown-index-xyz", { cacheDir: tmp() }), {
      message: `failed to pull image "unknown-index-xyz": repository name must be canonical`,
    });
  });
});

describe("catalog build configuration", () => {
  test("parses the documented shape and rejects bad ones", () => {
    const c = parseCatalogBuildConfig(
      `name: community-operators\nrepo: quay.io/community-operators/catalog\ntag: latest\n` +
        `references:\n- name: etcd-operator\n` +
        `  image: quay.io/etcd-operator/index@sha256:` +
        `5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\n`,
    );
    assert.equal(c.references[0].name, "etcd-operator");
    assert.throws(
      () => parseCatalogBuildConfig(`name: ../x\nrepo: r\nreferences: [{name: a, image: b}]`),
      /plain directory name/,
    );
    assert.throws(
      () => parseCatalogBuildConfig(`name: x\nrepo: r\nreferences: [{name: a, image: b}, {name: a, image: c}]`),
      /used twice/,
    );
    assert.throws(() => parseCatalogBuildConfig(`name: x\nrepo: r\nreferences: []`), /non-empty list/);
  });
});

test(
  "leftover .tmp blobs of killed pulls are removed at the " +
    "next pull into the same store; a running pull's are kept",
  async () => {
    const { BlobStore } = await import("./store.js");
    const { sweepStagedIn } = await import("../fsx/staged.js");
    const { spawnSync } = await import("node:child_process");
    const { mkdtempSync, readdirSync, writeFileSync, mkdirSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const root = mkdtempSync(join(tmpdir(), "opcat-sweep-"));
    const store = new BlobStore(root);
    const dir = join(root, "blobs", "sha256");
    mkdirSync(dir, { recursive: true });
    // a pid that surely ended: a child that has exited
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    writeFileSync(join(dir, `.${"a".repeat(64)}.${dead}.01234567.tmp`), "partial");
    writeFileSync(join(dir, `.${"b".repeat(64)}.${process.ppid}.01234567.tmp`), "another pull still running");
    const data = Buffer.from("hello");
    const digest = `sha256:${(await import("node:crypto")).createHash("sha256").update(data).digest("hex")}`;
    await store.putStream(
      digest,
      (async function* () {
        yield data;
      })(),
    );
    const left = readdirSync(dir).sort();
    assert.deepEqual(left, [`.${"b".repeat(64)}.${process.ppid}.01234567.tmp`, digest.slice(7)].sort());
    assert.equal(sweepStagedIn(join(root, "nothing-here")), 0);
  },
);
