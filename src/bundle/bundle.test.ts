/**
 * Bundle rendering against golden vectors produced by opm's own bundle parser and renderer
 * (operator-registry pkg/registry + alpha/action/render.go, run as a Go oracle) on the fixture
 * bundles in testdata/bundles: every property with its raw JSON text, related images, image
 * templates, and the exact error text for each broken bundle.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { compileImageRefTemplate, readBundleDirectory, renderBundle, renderBundleDirectory } from "./index.js";
import { formatCatalog } from "../fbc/write.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const BUNDLES = join(HERE, "testdata", "bundles");

interface Vector {
  dir: string;
  image?: string;
  template?: string;
  error?: string;
  name?: string;
  package?: string;
  bundleImage: string;
  /** Raw value texts as Go holds them. */
  properties?: { type: string; value: string }[];
  relatedImages?: { name: string; image: string }[];
}

const vectors = JSON.parse(readFileSync(join(HERE, "testdata", "vectors.json"), "utf8")) as Vector[];

/** The raw JSON text as Go's encoder writes a json.RawMessage (whitespace outside strings removed). */
function compact(raw: string): string {
  return raw === ""
    ? "null"
    : raw.replace(/("(?:[^"\\]|\\.)*")|[ \t\r\n]+/g, (_m, str: string | undefined) => str ?? "");
}

function run(v: Vector): { ok: true; bundle: ReturnType<typeof renderBundle> } | { ok: false; error: OpcatError } {
  try {
    const tmpl = v.template ? compileImageRefTemplate(v.template) : undefined;
    const rb = readBundleDirectory(join(BUNDLES, v.dir));
    // opm names the directory as given on the command line; the oracle was given the bare name.
    return { ok: true, bundle: renderBundle({ ...rb, dir: v.dir }, { image: v.image, imageRefTemplate: tmpl }) };
  } catch (e) {
    if (e instanceof OpcatError) return { ok: false, error: e };
    throw e;
  }
}

for (const v of vectors) {
  const label =
    `${v.dir}${v.image ? ` image=${v.image}` : ""}` + `${v.template ? ` template=${JSON.stringify(v.template)}` : ""}`;
  test(`opm oracle: ${label}${v.error ? " fails" : ""}`, () => {
    const r = run(v);
    if (v.error !== undefined) {
      assert.equal(r.ok, false, "expected an error");
      if (r.ok) return;
      assert.equal(r.error.message, v.error);
      const usage = v.error.startsWith("invalid image reference template");
      assert.equal(r.error.kind, usage ? "usage" : "invalid");
      assert.match(r.error.code, /^BUNDLE_/);
      if (!usage) assert.ok(r.error.problems[0].loc?.file, "the problem names a file or directory");
      return;
    }
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    if (!r.ok) return;
    const b = r.bundle;
    assert.equal(b.name, v.name ?? "");
    assert.equal(b.package, v.package ?? "");
    assert.equal(b.image, v.bundleImage);
    assert.deepEqual(
      b.properties.map((p) => ({ type: p.type, value: p.value.isMissing ? "null" : p.value.text })),
      (v.properties ?? []).map((p) => ({ type: p.type, value: compact(p.value) })),
    );
    assert.deepEqual(b.relatedImages, v.relatedImages ?? []);
  });
}

test("broken bundles: warnings name the skipped files", () => {
  const rb = readBundleDirectory(join(BUNDLES, "valid"));
  const files = rb.warnings.map((w) => w.loc?.file.slice(BUNDLES.length + 1));
  assert.deepEqual(files, [
    "valid/manifests/broken.yaml",
    "valid/manifests/comment-only.yaml",
    "valid/manifests/empty.yaml",
    "valid/manifests/no-kind.yaml",
  ]);
  assert.ok(rb.warnings.every((w) => w.severity === "warning"));
  assert.deepEqual(
    rb.objects.map((o) => o.file),
    [
      "manifests/gadgets.crd.yaml",
      "manifests/leading-separator.yaml",
      "manifests/service.yaml",
      "manifests/sprockets.crd.yaml",
      "manifests/widget.clusterserviceversion.yaml",
    ],
  );
  assert.equal(rb.csv.file, "manifests/widget.clusterserviceversion.yaml");
  assert.deepEqual(rb.channels, ["stable", "fast"]);
  assert.equal(rb.annotationsFile, "metadata/annotations.yaml");
});

test("errors carry a code, exit code 1 and the file concerned", () => {
  const cases: [string, string, string][] = [
    ["err-no-csv", "BUNDLE_NO_CSV", "manifests"],
    ["err-no-objects", "BUNDLE_NO_OBJECTS", "manifests"],
    ["err-missing-crd", "BUNDLE_MISSING_CRD", "manifests/widget.clusterserviceversion.yaml"],
    ["err-broken-csv-yaml", "BUNDLE_NO_CSV", "manifests"],
    ["err-wrong-folder", "BUNDLE_DIR_UNREADABLE", "manifests"],
    ["err-csv-version-number", "BUNDLE_CSV_VERSION", "manifests/widget.clusterserviceversion.yaml"],
    ["err-no-annotations", "BUNDLE_NO_ANNOTATIONS", "metadata"],
  ];
  for (const [dir, code, file] of cases) {
    assert.throws(
      () => renderBundleDirectory(join(BUNDLES, dir)),
      (e: unknown) =>
        e instanceof OpcatError &&
        e.code === code &&
        e.kind === "invalid" &&
        e.problems[0].loc?.file === join(BUNDLES, dir, file),
      dir,
    );
  }
  // The broken CSV file is reported as a warning next to the error.
  try {
    readBundleDirectory(join(BUNDLES, "err-broken-csv-yaml"));
  } catch (e) {
    const w = (e as OpcatError).problems.find((p) => p.severity === "warning");
    assert.equal(w?.loc?.file, join(BUNDLES, "err-broken-csv-yaml", "manifests", "widget.clusterserviceversion.yaml"));
    assert.match(w?.message ?? "", /^failed to decode: error converting YAML to JSON: yaml: line \d+:/);
  }
  assert.throws(
    () => readBundleDirectory(join(BUNDLES, "does-not-exist")),
    (e: unknown) => e instanceof OpcatError && e.kind === "invalid",
  );
});

test("renderBundleDirectory: image empty without template; migration applies only with an image", () => {
  const plain = renderBundleDirectory(join(BUNDLES, "valid"), { migrateLevel: "bundle-object-to-csv-metadata" });
  assert.equal(plain.bundles.length, 1);
  assert.equal(plain.bundles[0].image, "");
  assert.ok(plain.bundles[0].properties.some((p) => p.type === "olm.bundle.object"));
  const migrated = renderBundleDirectory(join(BUNDLES, "valid"), {
    image: "quay.io/example/widget-bundle:1.2.0",
    migrateLevel: "bundle-object-to-csv-metadata",
  });
  const types = migrated.bundles[0].properties.map((p) => p.type);
  assert.ok(!types.includes("olm.bundle.object"));
  assert.equal(types[types.length - 1], "olm.csv.metadata");
  const yaml = formatCatalog(migrated, "yaml");
  assert.match(yaml, /displayName: Widget & Co <Operator>/);
  const templated = renderBundleDirectory(join(BUNDLES, "valid"), {
    imageRefTemplate: "quay.io/x/{{.Package}}:v{{.Version}}",
  });
  assert.equal(templated.bundles[0].image, "quay.io/x/widget:v1.2.0");
  assert.ok(templated.bundles[0].relatedImages.some((r) => r.image === "quay.io/x/widget:v1.2.0" && r.name === ""));
});
