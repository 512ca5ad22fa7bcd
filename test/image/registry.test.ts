/**
 * Image access against real servers: Debian's docker-registry (plain, and TLS + htpasswd), skopeo
 * reading what opcat pushes and pushing what opcat builds, and a misbehaving Node registry for the
 * fault cases. Only 127.0.0.1.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";
import { normalizeForRender } from "../../src/fbc/render.js";
import type { DeclarativeConfig } from "../../src/fbc/types.js";
import {
  assembleImage,
  buildBundleImage,
  buildCatalogImage,
  buildFromConfig,
  ImageError,
  parseRegistriesConf,
  pullImage,
  pushImage,
  renderReference,
  resolveRenderRef,
  writeToLayout,
} from "../../src/image/index.js";
import { REPO_ROOT } from "../shared.js";
import {
  makeCerts,
  makeHtpasswd,
  requireTools,
  skopeo,
  startDockerRegistry,
  startFakeRegistry,
  type FakeMode,
  type RunningRegistry,
} from "./servers.js";
import { isOpcatTemp } from "../../src/fsx/staged.js";

const BUNDLES = join(REPO_ROOT, "src/bundle/testdata/bundles");
const CATALOG = join(REPO_ROOT, "examples/catalog");
const missing = requireTools("docker-registry", "skopeo", "htpasswd", "openssl");
const work = mkdtempSync(join(tmpdir(), "opcat-registry-test-"));
after(() => rmSync(work, { recursive: true, force: true }));

const norm = (c: DeclarativeConfig): string => formatCatalog(normalizeForRender(c, {}), "json");

/** Files left half-written in a cache: temp files, and blobs whose content is not their digest. */
function cacheLeftovers(cacheDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (isOpcatTemp(e.name, e.isDirectory())) out.push(join(d, e.name));
      else if (e.isDirectory() && d.endsWith("unpacked") === false) walk(join(d, e.name));
    }
  };
  walk(cacheDir);
  return out;
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "test/image/cli-harness.ts"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: { ...process.env, ...env, CI: "" },
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function cliAsync(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "test/image/cli-harness.ts"), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, CI: "" },
    });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    c.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    c.on("close", (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

describe("plain docker-registry + skopeo", { skip: missing ?? false }, () => {
  let reg: RunningRegistry;
  const cache = join(work, "cache-plain");
  before(async () => {
    reg = await startDockerRegistry(join(work, "reg-plain"));
  });
  after(async () => reg?.stop());

  test("opcat pushes a catalog and a bundle image; skopeo sees the labels and digests", async () => {
    const cat = buildCatalogImage(CATALOG);
    const pushed = await pushImage(cat, `${reg.host}/test/catalog:v1`, { useHttp: true });
    assert.equal(pushed, `${reg.host}/test/catalog@${cat.manifestDigest}`);
    const info = JSON.parse(skopeo(["inspect", "--tls-verify=false", `docker://${reg.host}/test/catalog:v1`])) as {
      Digest: string;
      Labels: Record<string, string>;
      Layers: string[];
    };
    assert.equal(info.Digest, cat.manifestDigest);
    assert.deepEqual(info.Labels, { "operators.operatorframework.io.index.configs.v1": "/configs" });
    assert.deepEqual(info.Layers, [cat.layerDigest]);
    const b = buildBundleImage(join(BUNDLES, "json"));
    await pushImage(b, `${reg.host}/test/bundle:v1`, { useHttp: true });
    const binfo = JSON.parse(skopeo(["inspect", "--tls-verify=false", `docker://${reg.host}/test/bundle:v1`])) as {
      Labels: Record<string, string>;
    };
    assert.equal(binfo.Labels["operators.operatorframework.io.bundle.package.v1"], "widget");
  });

  test("skopeo copies the pushed catalog to an OCI layout; opcat renders that layout like the directory", async () => {
    skopeo(["copy", "--src-tls-verify=false", `docker://${reg.host}/test/catalog:v1`, `oci:${work}/sk-layout:cat`]);
    const fromLayout = await renderReference(`oci:${work}/sk-layout:cat`, { cacheDir: cache });
    const fromDir = await renderReference(CATALOG);
    assert.equal(norm(fromLayout), norm(fromDir));
  });

  test(
    "skopeo pushes an OCI layout opcat built; opcat pulls " + "and renders the bundle with the reference as image",
    async () => {
      const b = buildBundleImage(join(BUNDLES, "json"));
      writeToLayout(b, `oci:${work}/our-layout:bundle`);
      skopeo([
        "copy",
        "--dest-tls-verify=false",
        `oci:${work}/our-layout:bundle`,
        `docker://${reg.host}/other/bundle:v2`,
      ]);
      const ref = `${reg.host}/other/bundle:v2`;
      const got = await renderReference(ref, { useHttp: true, cacheDir: cache });
      assert.equal(norm(got), norm(renderBundleDirectory(join(BUNDLES, "json"), { image: ref })));
      const r = await resolveRenderRef(ref, { useHttp: true, cacheDir: cache });
      assert.equal(r.kind, "bundle-image");
      assert.equal(r.digest, b.manifestDigest);
    },
  );

  test("opm's rule: an image of the wrong kind for the command is refused", async () => {
    await assert.rejects(
      resolveRenderRef(`${reg.host}/test/bundle:v1`, {
        useHttp: true,
        cacheDir: cache,
        allow: ["catalog-image", "catalog-dir"],
      }),
      { message: "cannot render bundle image: not allowed" },
    );
  });

  test("CLI: catalog build and bundle build --push, exit 0; a registry tag without --push is a usage error", () => {
    const out = cli(["catalog", "build", CATALOG, "--tag", `oci:${work}/cli-layout:c1`, "--base-image", "scratch"]);
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /^oci:.*cli-layout:c1@sha256:[0-9a-f]{64}\n$/);
    const b = cli([
      "bundle",
      "build",
      join(BUNDLES, "json"),
      "--tag",
      `${reg.host}/cli/bundle:v1`,
      "--push",
      "--use-http",
    ]);
    assert.equal(b.status, 0, b.stderr);
    const noPush = cli(["catalog", "build", CATALOG, "--tag", `${reg.host}/cli/catalog:v1`, "--base-image", "scratch"]);
    assert.equal(noPush.status, 2);
    assert.match(noPush.stderr, /add --push/);
    const both = cli(["image", "inspect", `${reg.host}/cli/bundle:v1`, "--use-http", "--skip-tls-verify"]);
    assert.equal(both.status, 2);
    assert.match(both.stderr, /invalid flag combination: --use-http and --skip-tls-verify cannot both be true/);
  });

  test(
    "catalog build on a base image: its layers and config with " +
      "opm's ENTRYPOINT and CMD, and /configs still reads back",
    async () => {
      // a stand-in for opm's image (quay.io is not reachable here): one layer with /bin/opm, a label
      const base = assembleImage(
        [
          { path: "bin", type: "dir" },
          { path: "bin/opm", type: "file", data: Buffer.from('#!/bin/sh\necho opm "$@"\n'), mode: 0o755 },
        ],
        { "org.opencontainers.image.title": "opm stand-in" },
      );
      // pushing reports its progress (blobs and bytes; shown as a line on a terminal)
      const seen: { ref: string; blobsDone: number; blobs: number; bytes: number; total: number }[] = [];
      await pushImage(base, `${reg.host}/base/opm:v1`, { useHttp: true, onProgress: (p) => seen.push({ ...p }) });
      assert.deepEqual(
        seen.map((p) => p.blobsDone),
        [0, 1, 2],
      );
      assert.deepEqual(seen.at(-1), {
        ref: `${reg.host}/base/opm:v1`,
        blobsDone: 2,
        blobs: 2,
        bytes: base.layer.length + base.config.length,
        total: base.layer.length + base.config.length,
      });
      const built = cli([
        "catalog",
        "build",
        CATALOG,
        "--tag",
        `${reg.host}/cli/based:v1`,
        "--push",
        "--use-http",
        "--base-image",
        `${reg.host}/base/opm:v1`,
      ]);
      assert.equal(built.status, 0, built.stderr);
      const cfg = JSON.parse(
        skopeo(["inspect", "--config", "--tls-verify=false", `docker://${reg.host}/cli/based:v1`]),
      ) as {
        config: { Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string> };
        rootfs: { diff_ids: string[] };
        history: unknown[];
      };
      assert.deepEqual(cfg.config.Entrypoint, ["/bin/opm"]);
      assert.deepEqual(cfg.config.Cmd, ["serve", "/configs", "--cache-dir=/tmp/cache"]);
      assert.equal(cfg.config.Labels["operators.operatorframework.io.index.configs.v1"], "/configs");
      assert.equal(cfg.config.Labels["org.opencontainers.image.title"], "opm stand-in", "the base's labels are kept");
      assert.deepEqual(cfg.rootfs.diff_ids, [base.diffId, buildCatalogImage(CATALOG).diffId]);
      assert.equal(cfg.history.length, 2);
      const info = JSON.parse(skopeo(["inspect", "--tls-verify=false", `docker://${reg.host}/cli/based:v1`])) as {
        Layers: string[];
      };
      assert.deepEqual(info.Layers, [base.layerDigest, buildCatalogImage(CATALOG).layerDigest]);
      // the catalog still renders from the image, and into an OCI layout the same image is written
      assert.equal(
        norm(await renderReference(`${reg.host}/cli/based:v1`, { useHttp: true, cacheDir: cache })),
        norm(await renderReference(CATALOG)),
      );
      const layout = cli([
        "catalog",
        "build",
        CATALOG,
        "--tag",
        `oci:${work}/based-layout:v1`,
        "--use-http",
        "--base-image",
        `${reg.host}/base/opm:v1`,
      ]);
      assert.equal(layout.status, 0, layout.stderr);
      assert.equal(
        layout.stdout.trim().split("@")[1],
        built.stdout.trim().split("@")[1],
        "the same digest in a layout as in the registry",
      );
      // a base that cannot be pulled says what to do
      const bad = cli([
        "catalog",
        "build",
        CATALOG,
        "--tag",
        `oci:${work}/x:v1`,
        "--use-http",
        "--base-image",
        `${reg.host}/base/missing:v1`,
      ]);
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /pulling the base image .*base\/missing:v1: .*404 Not Found.*--base-image scratch/s);
    },
  );

  test("build-from-config: render each reference, validate, build, push", async () => {
    const cat = buildCatalogImage(CATALOG);
    await pushImage(cat, `${reg.host}/src/catalog:v1`, { useHttp: true });
    const dir = join(work, "bfc");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "catalog.yaml"),
      `name: my-catalog\nrepo: ${reg.host}/built/catalog\ntag: latest\nreferences:\n` +
        `- name: example\n  image: ${reg.host}/src/catalog@${cat.manifestDigest}\n`,
    );
    const r = await buildFromConfig(join(dir, "catalog.yaml"), { useHttp: true, cacheDir: cache, push: true });
    assert.deepEqual(readdirSync(join(dir, "my-catalog")), ["example"]);
    assert.ok(existsSync(join(dir, "my-catalog/example/index.yaml")));
    assert.match(r.image ?? "", new RegExp(`^${reg.host}/built/catalog@sha256:`));
    const info = JSON.parse(skopeo(["inspect", "--tls-verify=false", `docker://${reg.host}/built/catalog:latest`])) as {
      Labels: Record<string, string>;
    };
    assert.equal(info.Labels["operators.operatorframework.io.index.configs.v1"], "/configs");
    const again = await renderReference(`${reg.host}/built/catalog:latest`, { useHttp: true, cacheDir: cache });
    assert.equal(norm(again), norm(await renderReference(CATALOG)));
  });

  test("a second render of the same digest does not touch the network", async () => {
    const cat = buildCatalogImage(CATALOG);
    const ref = `${reg.host}/test/catalog@${cat.manifestDigest}`;
    const first = await pullImage(ref, { useHttp: true, cacheDir: cache });
    await reg.stop();
    const second = await pullImage(ref, { useHttp: true, cacheDir: cache });
    assert.equal(second.fromCache, true);
    assert.equal(second.digest, first.digest);
    const rendered = await renderReference(ref, { useHttp: true, cacheDir: cache });
    assert.equal(norm(rendered), norm(await renderReference(CATALOG)));
    await assert.rejects(
      pullImage(`${reg.host}/test/catalog:v1`, { useHttp: true, cacheDir: cache, retries: 1, retryBaseMs: 10 }),
      (e: unknown) => e instanceof ImageError && e.code === "IMAGE_NETWORK" && /ECONNREFUSED/.test(e.message),
    );
  });
});

describe("TLS + htpasswd docker-registry", { skip: missing ?? false }, () => {
  let reg: RunningRegistry;
  let certs: ReturnType<typeof makeCerts>;
  const authFile = join(work, "auth.json");
  before(async () => {
    certs = makeCerts(join(work, "tls"));
    makeHtpasswd(join(work, "htpasswd"), "opcat", "s3cret");
    reg = await startDockerRegistry(join(work, "reg-tls"), {
      tls: { cert: certs.cert, key: certs.key },
      htpasswd: join(work, "htpasswd"),
    });
    writeFileSync(
      authFile,
      JSON.stringify({ auths: { [reg.host]: { auth: Buffer.from("opcat:s3cret").toString("base64") } } }),
    );
  });
  after(async () => reg?.stop());

  test(
    "push with credentials from REGISTRY_AUTH_FILE and the " +
      "CA; skopeo reads it back with the same CA and credentials",
    async () => {
      const cat = buildCatalogImage(CATALOG);
      await pushImage(cat, `${reg.host}/secure/catalog:v1`, {
        caFile: certs.ca,
        env: { HOME: work, REGISTRY_AUTH_FILE: authFile },
      });
      const info = JSON.parse(
        skopeo([
          "inspect",
          "--cert-dir",
          certs.certDir,
          "--creds",
          "opcat:s3cret",
          `docker://${reg.host}/secure/catalog:v1`,
        ]),
      ) as { Digest: string };
      assert.equal(info.Digest, cat.manifestDigest);
      skopeo([
        "copy",
        "--src-cert-dir",
        certs.certDir,
        "--src-creds",
        "opcat:s3cret",
        `docker://${reg.host}/secure/catalog:v1`,
        `oci:${work}/tls-layout:x`,
      ]);
      const r = await renderReference(`${reg.host}/secure/catalog:v1`, {
        caFile: certs.ca,
        env: { HOME: work, REGISTRY_AUTH_FILE: authFile },
        cacheDir: join(work, "cache-tls"),
      });
      assert.equal(
        norm(r),
        norm(await renderReference(`oci:${work}/tls-layout:x`, { cacheDir: join(work, "cache-tls") })),
      );
    },
  );

  test("401 without credentials is a clear error and leaves nothing in the cache", async () => {
    const cache = join(work, "cache-401");
    await assert.rejects(
      renderReference(`${reg.host}/secure/catalog:v1`, {
        caFile: certs.ca,
        env: { HOME: join(work, "nohome") },
        cacheDir: cache,
      }),
      (e: unknown) =>
        e instanceof ImageError &&
        e.code === "IMAGE_UNAUTHORIZED" &&
        /failed to pull image .*401 Unauthorized.*no credentials found/.test(e.message),
    );
    assert.deepEqual(cacheLeftovers(cache), []);
    assert.ok(!existsSync(join(cache, "unpacked")));
  });

  test("an unknown CA fails; --skip-tls-verify gets through", async () => {
    const env = { HOME: work, REGISTRY_AUTH_FILE: authFile };
    await assert.rejects(
      pullImage(`${reg.host}/secure/catalog:v1`, { env, cacheDir: join(work, "cache-ca"), retries: 0 }),
      (e: unknown) => e instanceof ImageError && e.code === "IMAGE_NETWORK" && /certificate/.test(e.message),
    );
    const img = await pullImage(`${reg.host}/secure/catalog:v1`, {
      env,
      skipTlsVerify: true,
      cacheDir: join(work, "cache-ca"),
    });
    assert.equal(img.labels["operators.operatorframework.io.index.configs.v1"], "/configs");
  });
});

describe("faults and auth flows (a misbehaving registry on 127.0.0.1)", () => {
  const layout = join(work, "fake-layout");
  const big = join(work, "fake-catalog");
  let digest = "";
  before(() => {
    // a catalog with enough content that a layer spans several reads
    mkdirSync(join(big, "pkg"), { recursive: true });
    const lines = [
      JSON.stringify({ schema: "olm.package", name: "pkg", defaultChannel: "stable" }),
      JSON.stringify({ schema: "olm.channel", package: "pkg", name: "stable", entries: [{ name: "pkg.v1" }] }),
    ];
    lines.push(
      JSON.stringify({
        schema: "olm.bundle",
        package: "pkg",
        name: "pkg.v1",
        image: "example.com/pkg:v1",
        properties: [
          { type: "olm.package", value: { packageName: "pkg", version: "1.0.0" } },
          { type: "olm.bundle.object", value: { data: Buffer.from("x".repeat(300000)).toString("base64") } },
        ],
      }),
    );
    writeFileSync(join(big, "pkg/catalog.json"), lines.join("\n") + "\n");
    const img = buildCatalogImage(big);
    writeToLayout(img, `oci:${layout}:v1`);
    digest = img.manifestDigest;
  });

  const attempt = async (
    mode: FakeMode,
    ref: (host: string) => string = (h) => `${h}/fake/catalog:v1`,
    extra: Record<string, unknown> = {},
  ): Promise<{ err: unknown; cache: string; log: string[] }> => {
    const fake = await startFakeRegistry(layout, "fake/catalog", "v1", digest, mode);
    const cache = mkdtempSync(join(work, `cache-${mode}-`));
    let err: unknown;
    try {
      await renderReference(ref(fake.host), {
        useHttp: true,
        cacheDir: cache,
        retryBaseMs: 5,
        env: { HOME: join(work, "nohome") },
        ...extra,
      });
    } catch (e) {
      err = e;
    } finally {
      await fake.close();
    }
    return { err, cache, log: fake.log };
  };

  const isClean = (cache: string): void => {
    assert.deepEqual(cacheLeftovers(cache), []);
    assert.ok(
      !existsSync(join(cache, "unpacked")) || readdirSync(join(cache, "unpacked")).length === 0,
      "no unpacked tree",
    );
  };

  test("a blob whose bytes do not match its digest", async () => {
    const { err, cache } = await attempt("corrupt-blob");
    assert.ok(err instanceof ImageError && err.code === "IMAGE_DIGEST_MISMATCH", String(err));
    assert.match(
      err.message,
      new RegExp(
        /^render reference ".*": failed to pull image ".*": pulling blob sha256:[0-9a-f]+ /.source +
          /from .*: digest mismatch: expected sha256:[0-9a-f]+, got sha256:[0-9a-f]+$/.source,
      ),
    );
    isClean(cache);
    const img = buildCatalogImage(big);
    assert.ok(!existsSync(join(cache, "blobs/sha256", img.layerDigest.slice(7))));
  });

  test("the registry stops mid-pull", async () => {
    const { err, cache } = await attempt("drop-mid-blob");
    assert.ok(
      err instanceof ImageError && (err.code === "IMAGE_NETWORK" || err.code === "IMAGE_BLOB_TRUNCATED"),
      String(err),
    );
    assert.match(err.message, /pulling blob sha256:/);
    isClean(cache);
  });

  test("a 404 manifest", async () => {
    const { err, cache } = await attempt("404");
    assert.ok(err instanceof ImageError && err.code === "IMAGE_NOT_FOUND", String(err));
    assert.match(
      err.message,
      /reading manifest v1 in 127\.0\.0\.1:\d+\/fake\/catalog: 404 Not Found: manifest unknown: manifest unknown/,
    );
    isClean(cache);
  });

  test("a huge manifest is refused at the size limit", async () => {
    const { err, cache } = await attempt("huge-manifest");
    assert.ok(err instanceof ImageError && err.code === "IMAGE_TOO_LARGE", String(err));
    assert.match(err.message, /limit of 4194304 bytes/);
    isClean(cache);
  });

  test("401 with Basic challenge and no credentials", async () => {
    const { err } = await attempt("basic-401");
    assert.ok(err instanceof ImageError && err.code === "IMAGE_UNAUTHORIZED", String(err));
    assert.match(err.message, /401 Unauthorized: unauthorized: authentication required \(no credentials found/);
  });

  test("bearer token flow: challenge, token, retry", async () => {
    const { err, log } = await attempt("bearer");
    assert.equal(err, undefined, String(err));
    assert.ok(log.includes("GET /token"));
  });

  test("429 then success is retried with backoff; persistent 5xx gives up with a clear error", async () => {
    const ok = await attempt("429-once");
    assert.equal(ok.err, undefined, String(ok.err));
    const bad = await attempt("500-always", undefined, { retries: 2 });
    assert.ok(bad.err instanceof ImageError && bad.err.code === "IMAGE_REGISTRY_ERROR", String(bad.err));
    assert.match(bad.err.message, /503 Service Unavailable: unavailable/);
    assert.equal(bad.log.length, 3);
  });

  test("a digest reference whose manifest bytes do not match is refused", async () => {
    const wrong = "sha256:" + "0".repeat(64);
    const { err } = await attempt("ok", (h) => `${h}/fake/catalog@${wrong}`);
    assert.ok(err instanceof ImageError, String(err));
  });

  test("a registries.conf mirror serves quay.io/... (insecure: HTTPS falls back to HTTP)", async () => {
    const fake = await startFakeRegistry(layout, "fake/catalog", "v1", digest, "ok");
    try {
      const conf = parseRegistriesConf(
        `[[registry]]\nprefix = "quay.io/operatorhubio"\n[[registry.mirror]]\n` +
          `location = "${fake.host}/fake"\ninsecure = true\n`,
      );
      const r = await renderReference(`quay.io/operatorhubio/catalog@${digest}`, {
        registriesConf: { registries: conf, files: [] },
        cacheDir: mkdtempSync(join(work, "cache-mirror-")),
      });
      assert.equal(r.packages[0].name, "pkg");
      assert.ok(fake.log.some((l) => l.startsWith("GET /v2/fake/catalog/manifests/")));
    } finally {
      await fake.close();
    }
  });

  test("CLI: a failed pull exits non-zero with the error on stderr and no half-written cache entry", async () => {
    const fake = await startFakeRegistry(layout, "fake/catalog", "v1", digest, "corrupt-blob");
    try {
      const cache = join(work, "cache-cli");
      const r = await cliAsync([
        "image",
        "inspect",
        `${fake.host}/fake/catalog:v1`,
        "--use-http",
        "--cache-dir",
        cache,
      ]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /digest mismatch: expected sha256:/);
      isClean(cache);
    } finally {
      await fake.close();
    }
  });
});
