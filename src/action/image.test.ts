// The image actions called directly, offline: images built into (and read back from) an OCI layout.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import {
  buildBundleImageAction,
  buildCatalogImageAction,
  generateDockerfileAction,
  inspectImageAction,
} from "./image.js";
import { silent } from "../../test/shared.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUNDLE = join(ROOT, "src", "bundle", "testdata", "bundles", "json");
const CATALOG = join(ROOT, "examples", "catalog");
const work = mkdtempSync(join(tmpdir(), "opcat-action-image-"));
after(() => rmSync(work, { recursive: true, force: true }));

test("buildBundleImageAction: a bundle directory into an OCI layout, read back by inspectImageAction", async () => {
  const layout = `oci:${join(work, "bundle")}:v1`;
  let asked = 0;
  const { value: where, written } = await silent(() =>
    buildBundleImageAction(BUNDLE, {
      tag: layout,
      labels: { extra: "yes" },
      pull: async () => {
        asked++;
        return {};
      },
    }),
  );
  assert.equal(written, "");
  assert.equal(asked, 1);
  assert.match(where, /^oci:.*bundle:v1@sha256:[0-9a-f]{64}$/);
  const { value: summary, written: w2 } = await silent(() => inspectImageAction(layout));
  assert.equal(w2, "");
  assert.equal(`${layout}@${summary.digest}`, where);
  assert.equal(summary.labels.extra, "yes");
  assert.equal(summary.labels["operators.operatorframework.io.bundle.package.v1"], "widget");
  assert.ok(summary.layers.length > 0);
});

test("buildCatalogImageAction: a catalog directory on scratch, validated first", async () => {
  const { value: where, written } = await silent(() =>
    buildCatalogImageAction(CATALOG, { tag: `oci:${join(work, "catalog")}:c1`, baseImage: "scratch" }),
  );
  assert.equal(written, "");
  assert.match(where, /^oci:.*catalog:c1@sha256:[0-9a-f]{64}$/);
});

test("image actions: failures are OpcatErrors with a kind, nothing printed", async () => {
  const { value: e, written } = await silent(() =>
    buildBundleImageAction(BUNDLE, { tag: `oci:${join(work, "never")}:v1`, push: true }).then(
      () => undefined,
      (err: unknown) => err,
    ),
  );
  assert.equal(written, "");
  assert.ok(e instanceof OpcatError);
  assert.equal(e.kind, "usage");
  assert.equal(e.code, "USAGE_PUSH_OCI");
  assert.equal(existsSync(join(work, "never")), false);
});

test("generateDockerfileAction: <dir>.Dockerfile beside the catalog, never over an existing one", async () => {
  const dir = join(work, "configs");
  mkdirSync(dir);
  const { value: out, written } = await silent(async () =>
    generateDockerfileAction(dir, { baseImage: "base:1", builderImage: "builder:1", labels: { a: "b" } }),
  );
  assert.equal(written, "");
  assert.equal(out, join(work, "configs.Dockerfile"));
  const text = readFileSync(out, "utf8");
  assert.match(text, /^FROM builder:1 as builder$/m);
  assert.match(text, /^FROM base:1$/m);
  assert.match(text, /^LABEL "a"="b"$/m);
  assert.throws(() => generateDockerfileAction(dir, { baseImage: "base:1", builderImage: "builder:1" }), {
    message: `path ${JSON.stringify(out)}: file already exists`,
  });
});
