/**
 * `opcat serve` on catalog images, against the real local docker-registry (127.0.0.1): catalog
 * images built with opcat's builder and pushed, served through the library API and through the CLI
 * in a child process; a new push under the same tag is picked up by polling and swapped in (content
 * and ETag change), an invalid catalog pushed under the tag is logged and the old content kept.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleImage, buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/build.js";
import { RegistryClient } from "../../src/image/registry.js";
import type { BlobStore } from "../../src/image/store.js";
import type { Descriptor } from "../../src/image/manifest.js";
import type { RepoTarget } from "../../src/image/registry.js";
import {
  addImageCatalog,
  CatalogStore,
  imageCatalogName,
  isImageArgument,
  parseGoDuration,
  parseImageCatalogArg,
  startHttpServer,
  type ImageSourceEvent,
} from "../../src/serve/index.js";
import { freePort, requireTools, startDockerRegistry, type RunningRegistry } from "../image/servers.js";
import { httpGet } from "./helpers.js";

const REPO_ROOT = join(import.meta.dirname, "..", "..");

function catalogDir(root: string, v: string, valid = true): string {
  const dir = join(root, `cat-${v}-${valid ? "ok" : "bad"}`);
  mkdirSync(dir, { recursive: true });
  const blobs = valid
    ? [
        { schema: "olm.package", name: "foo", defaultChannel: "stable" },
        { schema: "olm.channel", name: "stable", package: "foo", entries: [{ name: `foo.v${v}` }] },
        {
          schema: "olm.bundle",
          name: `foo.v${v}`,
          package: "foo",
          image: `quay.io/foo/bundle:v${v}`,
          properties: [{ type: "olm.package", value: { packageName: "foo", version: v } }],
        },
      ]
    : [{ schema: "olm.package", name: "foo", defaultChannel: "missing" }];
  writeFileSync(join(dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
  return dir;
}

function bundleDir(root: string): string {
  const dir = join(root, "bundle");
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  writeFileSync(
    join(dir, "manifests", "foo.clusterserviceversion.yaml"),
    "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n" +
      "metadata:\n  name: foo.v1.0.0\nspec:\n  version: 1.0.0\n",
  );
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n" +
      "  operators.operatorframework.io.bundle.channels.v1: stable\n" +
      "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n" +
      "  operators.operatorframework.io.bundle.manifests.v1: manifests/\n" +
      "  operators.operatorframework.io.bundle.metadata.v1: metadata/\n",
  );
  return dir;
}

/** The bundle version served in /all. */
function servedVersion(body: Buffer): string {
  const lines = body
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { schema: string; name: string });
  const b = lines.find((l) => l.schema === "olm.bundle");
  return b ? b.name : "";
}

/** A registry client counting blob downloads (to prove that an unchanged poll downloads nothing). */
class CountingClient extends RegistryClient {
  blobs = 0;
  override async fetchBlob(
    t: RepoTarget,
    desc: Descriptor,
    store: BlobStore,
    onBytes?: (n: number) => void,
  ): Promise<void> {
    this.blobs++;
    return super.fetchBlob(t, desc, store, onBytes);
  }
}

describe("serve helpers for image references", () => {
  test("default name: the repository's base name", () => {
    assert.equal(imageCatalogName("quay.io/org/my-index:v1"), "my-index");
    assert.equal(imageCatalogName("quay.io/org/my-index@sha256:" + "a".repeat(64)), "my-index");
    assert.equal(imageCatalogName("localhost:5000/idx"), "idx");
    assert.equal(imageCatalogName("oci:/tmp/layouts/cat:v1"), "cat");
    assert.deepEqual(parseImageCatalogArg("ops=quay.io/org/my-index:v1"), {
      name: "ops",
      ref: "quay.io/org/my-index:v1",
    });
    assert.deepEqual(parseImageCatalogArg("docker://quay.io/org/idx:v2"), { name: "idx", ref: "quay.io/org/idx:v2" });
    assert.deepEqual(parseImageCatalogArg("127.0.0.1:5000/a/b:v1"), { name: "b", ref: "127.0.0.1:5000/a/b:v1" });
  });

  test("image arguments are told from paths", () => {
    const none = (): boolean => false;
    assert.equal(isImageArgument("quay.io/org/idx:v1", none), true);
    assert.equal(isImageArgument("quay.io/org/idx", none), true);
    assert.equal(isImageArgument("localhost/idx", none), true);
    assert.equal(isImageArgument("127.0.0.1:5000/idx@sha256:" + "0".repeat(64), none), true);
    assert.equal(isImageArgument("oci:./layout:v1", none), true);
    assert.equal(isImageArgument("catalogs/v4.16", none), false);
    assert.equal(isImageArgument("./quay.io/x", none), false);
    assert.equal(
      isImageArgument("quay.io/org/idx", () => true),
      false,
      "an existing path wins",
    );
  });

  test("--poll-interval takes Go durations", () => {
    assert.equal(parseGoDuration("30s"), 30_000);
    assert.equal(parseGoDuration("5m"), 300_000);
    assert.equal(parseGoDuration("1h30m"), 5_400_000);
    assert.equal(parseGoDuration("1.5s"), 1500);
    assert.equal(parseGoDuration("250ms"), 250);
    assert.equal(parseGoDuration("0"), 0);
    assert.equal(parseGoDuration("10"), 'time: missing unit in duration "10"');
    assert.equal(parseGoDuration("3d"), 'time: unknown unit "d" in duration "3d"');
    assert.equal(parseGoDuration(""), 'time: invalid duration ""');
    assert.equal(parseGoDuration("s"), 'time: invalid duration "s"');
  });
});

const missing = requireTools("docker-registry");

describe("serving catalog images from a registry", { skip: missing ?? false }, () => {
  let work: string;
  let reg: RunningRegistry;
  let ref: string;

  const push = async (dir: string, tag = ref): Promise<string> => {
    const img = buildCatalogImage(dir);
    await pushImage(img, tag, { useHttp: true });
    return img.manifestDigest;
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "opcat-serve-image-"));
    reg = await startDockerRegistry(join(work, "reg"));
    ref = `${reg.host}/test/my-index:v1`;
  });
  after(async () => {
    await reg?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test("library API: serve, poll, swap to a new push, keep the old content when the new one is invalid", async () => {
    const d1 = await push(catalogDir(work, "1.0.0"));
    const cache = join(work, "cache-lib");
    const client = new CountingClient({ useHttp: true });
    const events: ImageSourceEvent[] = [];
    const store = new CatalogStore({ checkMetaKeys: false });
    const { catalog, outcome } = await addImageCatalog(store, imageCatalogName(ref), ref, {
      useHttp: true,
      cacheDir: cache,
      client,
      onEvent: (e) => events.push(e),
    });
    const srv = await startHttpServer(store, { port: 0 });
    const url = `http://127.0.0.1:${srv.address.port}/catalogs/my-index/api/v1/all`;
    try {
      assert.equal(outcome.status, "loaded");
      assert.equal(catalog.name, "my-index");
      assert.equal(catalog.digest, d1);
      assert.equal(catalog.pinned, false);
      assert.deepEqual(
        events.map((e) => e.outcome),
        ["loaded"],
      );
      const a1 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(a1.status, 200);
      assert.equal(servedVersion(a1.body), "foo.v1.0.0");
      const dir1 = catalog.directory;
      assert.ok(dir1 && existsSync(dir1));

      // Unchanged: one manifest HEAD, no blob downloaded.
      const blobsBefore = client.blobs;
      const same = await catalog.poll();
      assert.equal(same.outcome, "unchanged");
      assert.equal(same.newDigest, d1);
      assert.equal(client.blobs, blobsBefore);

      // v2 under the same tag: swapped in; content and ETag change; the old tree is removed.
      const d2 = await push(catalogDir(work, "2.0.0"));
      const upd = await catalog.poll();
      assert.equal(upd.outcome, "updated", JSON.stringify(upd));
      assert.equal(upd.oldDigest, d1);
      assert.equal(upd.newDigest, d2);
      assert.deepEqual(
        events.slice(-2).map((e) => e.outcome),
        ["updating", "updated"],
      );
      const a2 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(servedVersion(a2.body), "foo.v2.0.0");
      assert.notEqual(a2.headers.etag, a1.headers.etag);
      assert.equal(existsSync(dir1), false, "the replaced revision's tree is cleaned up");
      assert.ok(catalog.directory && existsSync(catalog.directory));

      // An invalid catalog under the tag: logged with the reason; v2 is still served; not retried.
      const d3 = await push(catalogDir(work, "3.0.0", false));
      const bad = await catalog.poll();
      assert.equal(bad.outcome, "update-failed");
      assert.equal(bad.oldDigest, d2);
      assert.equal(bad.newDigest, d3);
      assert.match(bad.reason ?? "", /invalid package "foo"/);
      assert.ok((bad.problems ?? []).length > 0);
      const a3 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(servedVersion(a3.body), "foo.v2.0.0");
      assert.equal(a3.headers.etag, a2.headers.etag);
      assert.equal(catalog.digest, d2);
      const blobs3 = client.blobs;
      const again = await catalog.poll();
      assert.equal(again.outcome, "skipped");
      assert.equal(client.blobs, blobs3);

      // A non-catalog image under the tag is refused with opm's error; v2 stays.
      await pushImage(assembleImage([], { "some.label": "x" }), ref, { useHttp: true });
      const odd = await catalog.poll();
      assert.equal(odd.outcome, "update-failed");
      assert.match(odd.reason ?? "", /image type could not be determined, found labels\n {2}some\.label=x/);
      assert.equal(servedVersion((await httpGet(url, { "accept-encoding": "identity" })).body), "foo.v2.0.0");

      // A valid catalog again: swapped in.
      await push(catalogDir(work, "4.0.0"));
      assert.equal((await catalog.poll()).outcome, "updated");
      assert.equal(servedVersion((await httpGet(url, { "accept-encoding": "identity" })).body), "foo.v4.0.0");
    } finally {
      await srv.close();
      await catalog.close();
      await store.close();
      client.close();
    }
    assert.equal(
      existsSync(join(cache, "serve")) ? (await import("node:fs")).readdirSync(join(cache, "serve")).length : 0,
      0,
      "close removes the unpacked trees",
    );
  });

  test("the poll timer picks up a push; a digest-pinned reference is not polled", async () => {
    const tagRef = `${reg.host}/test/timed:v1`;
    await push(catalogDir(work, "1.0.0"), tagRef);
    const store = new CatalogStore({ checkMetaKeys: false });
    let swapped: (e: ImageSourceEvent) => void = () => undefined;
    const done = new Promise<ImageSourceEvent>((r) => (swapped = r));
    const events: ImageSourceEvent[] = [];
    const { catalog } = await addImageCatalog(store, "timed", tagRef, {
      useHttp: true,
      cacheDir: join(work, "cache-timer"),
      pollIntervalMs: 50,
      onEvent: (e) => {
        events.push(e);
        if (e.outcome === "updated") swapped(e);
      },
    });
    const d1 = catalog.digest;
    try {
      catalog.startPolling();
      assert.equal(events.at(-1)?.outcome, "polling");
      const d2 = await push(catalogDir(work, "2.0.0"), tagRef);
      const e = await done;
      assert.equal(e.oldDigest, d1);
      assert.equal(e.newDigest, d2);
      assert.equal(store.get("timed")?.registry?.bundleCount, 1);
    } finally {
      await catalog.close();
    }

    const pinnedRef = `${reg.host}/test/timed@${d1}`;
    const pinnedEvents: ImageSourceEvent[] = [];
    const pinned = await addImageCatalog(store, "pinned", pinnedRef, {
      useHttp: true,
      cacheDir: join(work, "cache-timer"),
      pollIntervalMs: 10,
      onEvent: (ev) => pinnedEvents.push(ev),
    });
    try {
      assert.equal(pinned.catalog.pinned, true);
      assert.equal(pinned.catalog.digest, d1);
      pinned.catalog.startPolling();
      assert.equal(pinnedEvents.at(-1)?.outcome, "not-polled");
      assert.match(pinnedEvents.at(-1)?.reason ?? "", /pinned by digest/);
    } finally {
      await pinned.catalog.close();
      await store.close();
    }
  });

  test("refusals: not a catalog image, bad name, unreachable", async () => {
    const store = new CatalogStore({ checkMetaKeys: false });
    const cacheDir = join(work, "cache-refuse");
    const bundleRef = `${reg.host}/test/bundle:v1`;
    await pushImage(buildBundleImage(bundleDir(work)), bundleRef, { useHttp: true });
    await assert.rejects(addImageCatalog(store, "bundle", bundleRef, { useHttp: true, cacheDir }), {
      message: "cannot render bundle image: not allowed",
    });
    const noLabels = `${reg.host}/test/nolabels:v1`;
    await pushImage(assembleImage([], {}), noLabels, { useHttp: true });
    await assert.rejects(addImageCatalog(store, "nolabels", noLabels, { useHttp: true, cacheDir }), {
      message: `render "${noLabels}": image type could not be determined: image has no labels`,
    });
    await assert.rejects(
      addImageCatalog(store, "my_index", ref, { useHttp: true, cacheDir }),
      /invalid catalog name "my_index"/,
    );
    await assert.rejects(
      addImageCatalog(store, "gone", `${reg.host}/test/absent:v1`, { useHttp: true, cacheDir, retries: 0 }),
      /failed to pull image/,
    );
    assert.deepEqual(store.names(), []);
    await store.close();
  });

  test("CLI: opcat serve <image> --poll-interval in a child process", { timeout: 120_000 }, async () => {
    const cliRef = `${reg.host}/test/cli-index:v1`;
    await push(catalogDir(work, "1.0.0"), cliRef);
    const port = await freePort();
    const child: ChildProcess = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(REPO_ROOT, "test/image/cli-harness.ts"),
        "serve",
        cliRef,
        "--use-http",
        "--cache-dir",
        join(work, "cache-cli"),
        "--poll-interval",
        "100ms",
        "--http",
        `127.0.0.1:${port}`,
        "--no-grpc",
      ],
      { cwd: REPO_ROOT, env: { ...process.env, CI: "" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    const logs: Record<string, unknown>[] = [];
    let buf = "";
    const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
      [];
    child.stderr?.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let obj: Record<string, unknown>;
        try {
          obj = JSON.parse(line) as Record<string, unknown>;
        } catch {
          obj = { text: line };
        }
        logs.push(obj);
        for (const w of [...waiters]) if (w.pred(obj)) waiters.splice(waiters.indexOf(w), 1), w.resolve(obj);
      }
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const waitLog = (pred: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
      const hit = logs.find(pred);
      if (hit) return Promise.resolve(hit);
      return Promise.race([
        new Promise<Record<string, unknown>>((resolve) => waiters.push({ pred, resolve })),
        exited.then((code) => {
          throw new Error(`opcat serve exited (${code}): ${JSON.stringify(logs)}`);
        }),
      ]);
    };
    const url = `http://127.0.0.1:${port}/catalogs/cli-index/api/v1/all`;
    try {
      await waitLog((l) => l.msg === "serving");
      const a1 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(servedVersion(a1.body), "foo.v1.0.0");

      const d2 = await push(catalogDir(work, "2.0.0"), cliRef);
      const upd = await waitLog((l) => l.msg === "catalog image updated");
      assert.equal(upd.catalog, "cli-index");
      assert.equal(upd.new_digest, d2);
      assert.equal(typeof upd.old_digest, "string");
      const a2 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(servedVersion(a2.body), "foo.v2.0.0");
      assert.notEqual(a2.headers.etag, a1.headers.etag);

      const d3 = await push(catalogDir(work, "3.0.0", false), cliRef);
      const bad = await waitLog((l) => l.msg === "catalog image update-failed");
      assert.equal(bad.level, "error");
      assert.equal(bad.new_digest, d3);
      assert.equal(bad.old_digest, d2);
      assert.match(String(bad.reason), /invalid package "foo"/);
      const a3 = await httpGet(url, { "accept-encoding": "identity" });
      assert.equal(servedVersion(a3.body), "foo.v2.0.0");
      assert.equal(a3.headers.etag, a2.headers.etag);
    } finally {
      child.kill("SIGTERM");
    }
    assert.equal(await exited, 0);
    assert.ok(logs.some((l) => l.msg === "stopped"));
  });
});
