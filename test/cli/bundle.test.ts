/** `opcat render` on registry+v1 bundle directories, as a user runs it (bin/opcat in a child process). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { formatCatalog } from "../../src/fbc/write.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const BUNDLES = join(REPO_ROOT, "src", "bundle", "testdata", "bundles");
const EXAMPLE = join(REPO_ROOT, "examples", "catalog");

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, OPCAT_DEBUG: "" } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test("render: a bundle directory renders as one olm.bundle blob, byte-identical to the library", () => {
  const dir = join(BUNDLES, "valid");
  for (const format of ["json", "yaml"] as const) {
    const r = opcat(["render", dir, "-o", format]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, formatCatalog(renderBundleDirectory(dir), format));
  }
  const y = opcat(["render", dir, "-o", "yaml"]).stdout;
  assert.match(y, /^image: ""$/m);
  assert.match(y, /^schema: olm\.bundle$/m);
  assert.doesNotMatch(y, /schema: olm\.(package|channel)$/m);
});

test("render: --image-ref-template (and opm's --alpha-image-ref-template) sets the image and a related image", () => {
  const dir = join(BUNDLES, "valid");
  for (const flag of ["--image-ref-template", "--alpha-image-ref-template"]) {
    const r = opcat(["render", dir, "-o", "yaml", flag, "quay.io/acme/{{.Package}}-bundle:v{{.Version}}"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^image: quay\.io\/acme\/widget-bundle:v1\.2\.0$/m);
    assert.match(r.stdout, /- image: quay\.io\/acme\/widget-bundle:v1\.2\.0\n {2}name: ""/);
  }
  const m = opcat([
    "render",
    dir,
    "-o",
    "yaml",
    "--image-ref-template",
    "x/{{.Name}}",
    "--migrate-level",
    "bundle-object-to-csv-metadata",
  ]);
  assert.equal(m.code, 0, m.stderr);
  assert.match(m.stdout, /type: olm\.csv\.metadata/);
  assert.doesNotMatch(m.stdout, /olm\.bundle\.object/);
});

test("render: bundle directories and catalogs mix in one invocation", () => {
  const r = opcat(["render", EXAMPLE, join(BUNDLES, "json"), "-o", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const catalogOnly = opcat(["render", EXAMPLE, "-o", "json"]).stdout;
  const bundleOnly = opcat(["render", join(BUNDLES, "json"), "-o", "json"]).stdout;
  // Different packages: the writer keeps each package's blobs together, in package-name order.
  assert.equal(r.stdout.length, catalogOnly.length + bundleOnly.length);
  assert.ok(r.stdout.includes(bundleOnly));
});

test("render: a broken bundle fails with opm's message, the file named, exit 1", () => {
  const cases: [string, RegExp][] = [
    ["err-no-csv", /render reference ".*err-no-csv": no csv in bundle/],
    [
      "err-csv-version-number",
      new RegExp(
        /err-csv-version-number\/manifests\/widget\.clusterserviceversion\.yaml: /.source +
          /error\[BUNDLE_CSV_VERSION\]: render reference ".*": failed to derive /.source +
          /properties: json: cannot unmarshal number into Go value of type string/.source,
      ),
    ],
    ["err-missing-crd", /couldn't find example\.com\/v1beta2\/Sprocket \(sprockets\) in bundle\. found: map\[/],
    [
      "err-no-annotations",
      new RegExp(
        /err-no-annotations\/metadata: error\[BUNDLE_NO_ANNOTATIONS\]: /.source +
          /render reference ".*": Could not find annotations file/.source,
      ),
    ],
    ["err-broken-csv-yaml", /warning\[BUNDLE_FILE_SKIPPED\]: failed to decode: error converting YAML to JSON/],
    [
      "err-wrong-folder",
      new RegExp(
        /err-wrong-folder\/manifests: error\[BUNDLE_DIR_UNREADABLE\]: /.source +
          /render reference ".*": open \.: no such file or directory/.source,
      ),
    ],
  ];
  for (const [name, re] of cases) {
    const r = opcat(["render", join(BUNDLES, name)]);
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, re, name);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});

test("render: an invalid template is a usage error (exit 2) before anything is read", () => {
  const r = opcat(["render", join(BUNDLES, "err-no-csv"), "--image-ref-template", "{{.Name"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /invalid image reference template: template: image-ref-template:1: unclosed action/);
  const e = opcat(["render", join(BUNDLES, "valid"), "--image-ref-template", "{{.Foo}}"]);
  assert.equal(e.code, 1);
  assert.match(
    e.stderr,
    new RegExp(
      /failed templating image reference from bundle for ".*valid": template: /.source +
        /image-ref-template:1:2: executing "image-ref-template" at <\.Foo>: /.source +
        /can't evaluate field Foo in type action\.imageReferenceTemplateData/.source,
    ),
  );
});
