/**
 * The ClusterCatalog controller's steps (deleted, unavailable, finalizer, specChanged, newSource, pull,
 * status), each outcome a named case: the real controller on the in-memory API server
 * (runtime/controllerkit.test.ts), its informers watching it, pulling real catalog images from OCI
 * layouts on disk (`oci:<dir>:<tag>`) built from small FBC directories, and serving them over HTTP.
 */
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeKube } from "../kube/fake.js";
import { catalogImage, condition, customResource, eventsOf, fbc, settled } from "../runtime/controllerkit.test.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "./api.js";
import { CatalogController } from "./catalogs.js";

const FINALIZER = "olm.operatorframework.io/delete-server-cache";

/** FBC texts: a valid catalog of versions, one without a default channel (parses, does not validate), junk. */
const CONTENT = {
  valid: (...vs: string[]) => fbc.package("tiny", vs),
  invalid: () => [fbc.pkg("tiny", ""), fbc.channel("tiny", ["1.0.0"]), fbc.bundle("tiny", "1.0.0")].join("\n"),
  junk: () => "{ this is not json",
};

interface World {
  api: FakeKube;
  ctl: CatalogController;
  tmp: string;
  changes: number;
}

describe("ClusterCatalog steps on the fake API server", () => {
  let w: World;
  beforeEach(async () => {
    const api = new FakeKube([customResource(CATALOG_API_VERSION, "ClusterCatalog", "clustercatalogs")]);
    const tmp = mkdtempSync(join(tmpdir(), "opcat-catalogs-"));
    const ctl = new CatalogController({ client: api, stateDir: join(tmp, "state") });
    w = { api, ctl, tmp, changes: 0 };
    ctl.onChange(() => w.changes++);
    await ctl.start();
  });
  afterEach(async () => {
    await w.ctl.stop();
    rmSync(w.tmp, { recursive: true, force: true });
  });

  const image = (content: string, layout?: string) => catalogImage(w.tmp, content, layout);
  const get = async (name: string) => {
    await settled(w.ctl.queue);
    return w.api.tryGet<ClusterCatalog>(CATALOG_API_VERSION, "ClusterCatalog", name);
  };
  const create = async (name: string, ref: string, spec: Partial<ClusterCatalog["spec"]> = {}) => {
    await w.api.create<ClusterCatalog>({
      apiVersion: CATALOG_API_VERSION,
      kind: "ClusterCatalog",
      metadata: { name },
      spec: { source: { type: "Image", image: { ref } }, ...spec },
    });
    return (await get(name))!;
  };
  const patch = async (name: string, spec: unknown) => {
    await w.api.mergePatch(CATALOG_API_VERSION, "ClusterCatalog", name, { spec });
    return (await get(name))!;
  };
  const served = () => w.ctl.servedCatalogs().map((c) => `${c.name} ${c.digest}`);
  const packagesAt = async (base: string) => {
    const res = await fetch(`${base}/api/v1/all`);
    const text = await res.text();
    return text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { schema: string; name: string })
      .map((b) => `${b.schema} ${b.name}`);
  };

  describe("pull and status", () => {
    test("an image that pulls: served, Serving Available, Progressing Succeeded, Validated Valid", async () => {
      const { ref, digest } = await image(CONTENT.valid("1.0.0"));
      const cc = await create("main", ref, { priority: 5 });
      assert.deepEqual(condition(cc, "Serving"), {
        is: "True Available",
        message: "Serving desired content from resolved source",
      });
      assert.equal(condition(cc, "Progressing").is, "True Succeeded");
      assert.equal(condition(cc, "Validated").is, "True Valid");
      assert.deepEqual(cc.status?.resolvedSource, {
        type: "Image",
        image: { ref: `${ref.replace(/:v1$/, "")}@${digest}` },
      });
      assert.equal(cc.status?.urls?.base, `${w.ctl.baseUrl}/catalogs/main`);
      assert.match(cc.status?.lastUnpacked ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(cc.metadata.finalizers, [FINALIZER]);
      assert.deepEqual(served(), [`main ${digest}`]);
      assert.equal(w.ctl.servedCatalogs()[0].priority, 5);
      assert.deepEqual(await packagesAt(cc.status!.urls!.base!), [
        "olm.package tiny",
        "olm.channel stable",
        "olm.bundle tiny.v1.0.0",
      ]);
      assert.ok(w.changes > 0, "the resolver hears of new content");
      assert.ok(w.ctl.settled());
    });

    test("content that parses but does not validate: served all the same, Validated Invalid", async () => {
      const { ref } = await image(CONTENT.invalid());
      const cc = await create("lax", ref);
      assert.equal(condition(cc, "Serving").is, "True Available");
      assert.equal(condition(cc, "Validated").is, "False Invalid");
      assert.match(condition(cc, "Validated").message ?? "", /^opcat validate finds 1 problem in the served content/);
    });

    test("an image that cannot be pulled: nothing served, Retrying and Unavailable, one Warning, retried", async () => {
      const ref = `oci:${join(w.tmp, "nowhere")}:v1`;
      const cc = await create("missing", ref);
      assert.equal(condition(cc, "Progressing").is, "True Retrying");
      assert.equal(condition(cc, "Serving").is, "False Unavailable");
      assert.match(condition(cc, "Serving").message ?? "", /^nothing is served: /);
      assert.deepEqual(served(), []);
      assert.deepEqual(await eventsOf(w.api, "missing"), ["Warning PullFailed"]);
      assert.ok(w.ctl.queue.isBackingOff("missing"), "retried with backoff");
      assert.ok(w.ctl.settled(), "tried once counts as settled for the resolver");
    });

    test("an image whose content does not parse: not served, Unavailable, Warning InvalidCatalog", async () => {
      const { ref } = await image(CONTENT.junk());
      const cc = await create("junk", ref);
      assert.equal(condition(cc, "Serving").is, "False Unavailable");
      assert.match(condition(cc, "Serving").message ?? "", new RegExp(`^${ref} is not a valid catalog: `));
      assert.equal(condition(cc, "Progressing").is, "True Retrying");
      assert.deepEqual(served(), []);
      assert.deepEqual(await eventsOf(w.api, "junk"), ["Warning InvalidCatalog"]);
    });
  });

  describe("availability and deletion", () => {
    test("availabilityMode Unavailable: nothing served, no finalizer, Serving UserSpecifiedUnavailable", async () => {
      const { ref } = await image(CONTENT.valid("1.0.0"));
      await create("off", ref);
      const cc = await patch("off", { availabilityMode: "Unavailable" });
      assert.deepEqual(condition(cc, "Serving"), {
        is: "False UserSpecifiedUnavailable",
        message: "Catalog availability mode is set to Unavailable",
      });
      assert.equal(condition(cc, "Progressing").is, "True Succeeded");
      assert.equal(cc.metadata.finalizers, undefined);
      assert.deepEqual(served(), []);
      const back = await patch("off", { availabilityMode: "Available" });
      assert.equal(condition(back, "Serving").is, "True Available");
      assert.equal(served().length, 1);
    });

    test("a deleted ClusterCatalog: unserved, its finalizer removed, gone", async () => {
      const { ref } = await image(CONTENT.valid("1.0.0"));
      await create("going", ref);
      await w.api.delete(CATALOG_API_VERSION, "ClusterCatalog", "going");
      assert.equal(await get("going"), undefined);
      assert.deepEqual(served(), []);
    });
  });

  describe("specChanged and newSource", () => {
    test("a spec change polls: a new image at the same tag is served with its digest", async () => {
      const first = await image(CONTENT.valid("1.0.0"));
      await create("moving", first.ref);
      const next = await image(CONTENT.valid("1.0.0", "1.1.0"));
      const cc = await patch("moving", { priority: 1 });
      assert.notEqual(next.digest, first.digest);
      assert.equal(cc.status?.resolvedSource?.image?.ref?.split("@")[1], next.digest);
      assert.deepEqual(served(), [`moving ${next.digest}`]);
      assert.ok((await packagesAt(cc.status!.urls!.base!)).includes("olm.bundle tiny.v1.1.0"));
    });

    test("a new image at the tag that does not parse: the previous content stays served, Retrying", async () => {
      const first = await image(CONTENT.valid("1.0.0"));
      await create("kept", first.ref);
      await image(CONTENT.junk());
      const cc = await patch("kept", { priority: 1 });
      assert.equal(condition(cc, "Serving").is, "True Available");
      assert.equal(condition(cc, "Progressing").is, "True Retrying");
      assert.match(
        condition(cc, "Progressing").message ?? "",
        new RegExp(`^the latest image of ${first.ref} is not a valid catalog; the previous content stays served: `),
      );
      assert.deepEqual(served(), [`kept ${first.digest}`]);
      assert.ok((await eventsOf(w.api, "kept")).includes("Warning InvalidCatalog"));
    });

    test("a new ref that pulls: tried on its own, then served instead of the old one", async () => {
      const first = await image(CONTENT.valid("1.0.0"));
      await create("switch", first.ref);
      const second = await image(CONTENT.valid("2.0.0"), "other");
      const cc = await patch("switch", { source: { image: { ref: second.ref } } });
      assert.deepEqual(served(), [`switch ${second.digest}`]);
      assert.equal(condition(cc, "Serving").is, "True Available");
      assert.deepEqual(await packagesAt(cc.status!.urls!.base!), [
        "olm.package tiny",
        "olm.channel stable",
        "olm.bundle tiny.v2.0.0",
      ]);
    });

    test("a new ref that cannot be pulled: the old content stays served, Retrying says so, one Warning", async () => {
      const first = await image(CONTENT.valid("1.0.0"));
      await create("stay", first.ref);
      const bad = `oci:${join(w.tmp, "nowhere")}:v1`;
      const cc = await patch("stay", { source: { image: { ref: bad } } });
      assert.equal(condition(cc, "Progressing").is, "True Retrying");
      assert.match(
        condition(cc, "Progressing").message ?? "",
        new RegExp(`^the new ref ${bad} cannot be served; ${first.ref} \\(${first.digest}\\) stays served: `),
      );
      assert.deepEqual(served(), [`stay ${first.digest}`]);
      assert.deepEqual(await eventsOf(w.api, "stay"), ["Warning PullFailed"]);
      assert.ok(w.ctl.queue.isBackingOff("stay"));
    });
  });
});
