import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import fc from "fast-check";
import { loadText } from "../../fbc/load.js";
import type { DeclarativeConfig } from "../../fbc/types.js";
import { buildBundleImage, pushImage } from "../../image/index.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../../../test/image/servers.js";
import { addBundleFromReleaseConfig, planAddBundle, type AddBundlePlan, type AddBundleRequest } from "./addbundle.js";
import { discoveredImage, GRAPH_KIND, tagInRepo } from "./graph.js";
import { BUILTIN_KINDS } from "./kinds.js";
import {
  addBundleToGraph,
  catalogTagLister,
  graphTemplateValue,
  parseGraphTemplate,
  renderGraphTemplate,
  type GraphTemplate,
} from "../graph/graph.js";
import { fallbackSource } from "../source/imagesource.js";
import { reuseSource } from "../source/reuse.js";
import type { BundleSource } from "../source/source.js";
import { writeBundleDir } from "../testdata/bundledir.js";

const IMG = (v: string): string => `quay.io/acme/foo-bundle:v${v}`;

function bundleBlob(pkg: string, version: string, image: string, name = `${pkg}.v${version}`): string {
  return JSON.stringify({
    schema: "olm.bundle",
    name,
    package: pkg,
    image,
    properties: [{ type: "olm.package", value: { packageName: pkg, version } }],
  });
}

function catalog(extra: string[] = []): DeclarativeConfig {
  const blobs = ["0.1.0", "0.2.0", "0.3.0", "0.4.0"].map((v) => bundleBlob("foo", v, IMG(v)));
  return loadText([...blobs, ...extra].join("\n"), "src").config;
}

/** foo 0.1.0 … 0.4.0 (and bar 9.9.9 under IMG("bar")), tags answered. */
function source(withTags = false): BundleSource {
  const cfg = catalog([bundleBlob("bar", "9.9.9", IMG("bar"))]);
  const src = reuseSource(cfg, { reuseTags: true });
  return withTags ? Object.assign(src, catalogTagLister(cfg)) : src;
}

const GRAPH = `---
# foo's graph template
schema: olm.template.graph
package:
  name: foo
  defaultChannel: stable   # the default
bundles:
  images:
  - quay.io/acme/foo-bundle:v0.1.0
  # 0.2.0 is the current head
  - quay.io/acme/foo-bundle:v0.2.0
graphs:
- name: stable
  entries:
  - foo.v0.1.0
  - foo.v0.2.0   # head
- name: fast
  entries: [foo.v0.1.0, foo.v0.2.0]
`;

const req = (over: Partial<AddBundleRequest> = {}): AddBundleRequest => ({
  image: IMG("0.3.0"),
  channels: ["stable"],
  ...over,
});

async function plan(text: string, r: AddBundleRequest, src: BundleSource | null = source()): Promise<AddBundlePlan> {
  return planAddBundle(text, "graph.yaml", r, { source: src ?? undefined });
}

function codes(p: AddBundlePlan): string[] {
  return p.problems.map((x) => x.code);
}

test("graph kind: registered with the built-in kinds, for both schemas", () => {
  assert.ok(BUILTIN_KINDS.includes(GRAPH_KIND));
  assert.ok(GRAPH_KIND.matches("olm.template.graph") && GRAPH_KIND.matches("olm.template.goodstuff"));
  assert.ok(!GRAPH_KIND.matches("olm.template.basic"));
});

test(
  "graph: added to the graph's end and to bundles.images, " + "rendered and validated; then already-present",
  async () => {
    const p = await plan(GRAPH, req({ replaces: "foo.v0.2.0" }));
    assert.equal(p.outcome, "added", JSON.stringify(p.problems));
    assert.equal(p.kind, "graph");
    assert.equal(p.validation, "rendered");
    assert.deepEqual(p.problems, []);
    assert.equal(
      p.result,
      GRAPH.replace("  - foo.v0.2.0   # head\n", "  - foo.v0.2.0   # head\n  - foo.v0.3.0\n").replace(
        "  - quay.io/acme/foo-bundle:v0.2.0\n",
        "  - quay.io/acme/foo-bundle:v0.2.0\n  - quay.io/acme/foo-bundle:v0.3.0\n",
      ),
    );
    assert.deepEqual(
      p.changes.map((c) => [c.path, c.value]),
      [
        ["/graphs/0/entries/-", "foo.v0.3.0"],
        ["/bundles/images/-", IMG("0.3.0")],
      ],
    );
    const cfg = await renderGraphTemplate(p.result as string, source());
    assert.deepEqual(cfg.channels.find((c) => c.name === "stable")?.entries?.at(-1), {
      name: "foo.v0.3.0",
      replaces: "foo.v0.2.0",
      skips: [],
      skipRange: "",
    });
    const again = await plan(p.result as string, req({ replaces: "foo.v0.2.0" }));
    assert.equal(again.outcome, "already-present");
    assert.deepEqual(again.changes, []);
    // Without --replaces the new entry replaces the head all the same.
    assert.equal((await plan(GRAPH, req())).result, p.result);
    assert.equal((await plan(p.result as string, req())).outcome, "already-present");
  },
);

test("graph: several channels, flow entries, one image", async () => {
  const p = await plan(GRAPH, req({ channels: ["fast", "stable", "fast"] }));
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.match(p.result as string, /entries: \[foo\.v0\.1\.0, foo\.v0\.2\.0, "foo\.v0\.3\.0"\]\n/);
  assert.equal((p.result as string).split(IMG("0.3.0")).length, 2);
  assert.equal((await plan(p.result as string, req({ channels: ["stable", "fast"] }))).outcome, "already-present");
});

test("graph: --replaces other than the head is a conflict naming the head", async () => {
  const p = await plan(GRAPH, req({ replaces: "foo.v0.1.0" }));
  assert.equal(p.outcome, "conflict");
  assert.deepEqual(codes(p), ["TEMPLATE_ADD_GRAPH_REPLACES"]);
  assert.match(p.problems[0].message, /replaces the graph's head "foo\.v0\.2\.0"/);
  assert.equal(p.result, undefined);
});

test(
  "graph: --skips naming no entry become tombstones " + "before the new entry; live entries cannot be skipped",
  async () => {
    const p = await plan(GRAPH, req({ skips: ["foo.v0.2.5", "foo.v0.2.6", "foo.v0.2.5"] }));
    assert.equal(p.outcome, "added", JSON.stringify(p.problems));
    assert.equal(p.validation, "rendered");
    assert.match(
      p.result as string,
      new RegExp(
        /  - foo\.v0\.2\.0   # head\n  - foo\.v0\.2\.5\n  - foo\.v0\.2\.6\n  - /.source +
          /foo\.v0\.3\.0\n  tombstones:\n  - foo\.v0\.2\.5\n  - foo\.v0\.2\.6\n- name: fast\n/.source,
      ),
    );
    const cfg = await renderGraphTemplate(p.result as string, source());
    assert.deepEqual(cfg.channels[0].entries?.at(-1), {
      name: "foo.v0.3.0",
      replaces: "foo.v0.2.0",
      skips: ["foo.v0.2.5", "foo.v0.2.6"],
      skipRange: "",
    });
    assert.equal((await plan(p.result as string, req({ skips: ["foo.v0.2.6"] }))).outcome, "already-present");
    // An existing tombstone list is appended to.
    const q = await plan(p.result as string, req({ image: IMG("0.4.0"), skips: ["foo.v0.3.5"] }));
    assert.equal(q.outcome, "added", JSON.stringify(q.problems));
    assert.match(q.result as string, /  tombstones:\n  - foo\.v0\.2\.5\n  - foo\.v0\.2\.6\n  - foo\.v0\.3\.5\n/);

    const live = await plan(GRAPH, req({ skips: ["foo.v0.1.0"] }));
    assert.equal(live.outcome, "conflict");
    assert.deepEqual(codes(live), ["TEMPLATE_ADD_GRAPH_SKIPS"]);
    assert.match(live.problems[0].message, /would break the chain/);
    const self = await plan(GRAPH, req({ skips: ["foo.v0.3.0"] }));
    assert.equal(self.outcome, "invalid-input");
  },
);

test(
  "graph: a skip named by tailEdges, or a tombstone an earlier entry " +
    "skips, is a conflict; trailing tombstones are skipped already",
  async () => {
    const t = GRAPH.replace(
      "  - foo.v0.2.0   # head\n",
      "  - foo.v0.2.0   # head\n  - foo.v0.2.9\n  tombstones: [foo.v0.2.9]\n  tailEdges: {replaces: foo.v0.0.1}\n",
    );
    const trailing = await plan(t, req({ skips: ["foo.v0.2.9"] }));
    assert.equal(trailing.outcome, "added", JSON.stringify(trailing.problems));
    assert.match(trailing.result as string, /  - foo\.v0\.2\.9\n  - foo\.v0\.3\.0\n  tombstones: \[foo\.v0\.2\.9\]\n/);
    const tail = await plan(t, req({ skips: ["foo.v0.0.1"] }));
    assert.equal(tail.outcome, "conflict");
    assert.match(tail.problems[0].message, /named by the graph's tailEdges/);
    const earlier = await plan(trailing.result as string, req({ image: IMG("0.4.0"), skips: ["foo.v0.2.9"] }));
    assert.equal(earlier.outcome, "conflict");
    assert.match(earlier.problems[0].message, /a tombstone an earlier entry skips/);
  },
);

test("graph: --skip-range goes to skipRanges (created, or appended to)", async () => {
  const p = await plan(GRAPH, req({ skipRange: ">=0.1.0 <0.3.0" }));
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.match(
    p.result as string,
    /  - foo\.v0\.3\.0\n  skipRanges:\n    foo\.v0\.3\.0: '>=0\.1\.0 <0\.3\.0'\n- name: fast\n/,
  );
  const cfg = await renderGraphTemplate(p.result as string, source());
  assert.equal(cfg.channels[0].entries?.at(-1)?.skipRange, ">=0.1.0 <0.3.0");
  assert.equal((await plan(p.result as string, req({ skipRange: ">=0.1.0 <0.3.0" }))).outcome, "already-present");
  const other = await plan(p.result as string, req({ skipRange: "<0.3.0" }));
  assert.equal(other.outcome, "conflict");
  assert.deepEqual(codes(other), ["TEMPLATE_ADD_EDGE_CONFLICT"]);
  const q = await plan(p.result as string, req({ image: IMG("0.4.0"), skipRange: "<0.4.0" }));
  assert.equal(q.outcome, "added", JSON.stringify(q.problems));
  assert.match(
    q.result as string,
    /  skipRanges:\n    foo\.v0\.3\.0: '>=0\.1\.0 <0\.3\.0'\n    foo\.v0\.4\.0: '<0\.4\.0'\n/,
  );
  // A bad range is invalid input (the edited template would not parse as a graph template).
  const bad = await plan(GRAPH, req({ skipRange: "not a range" }));
  assert.equal(bad.outcome, "invalid-input");
});

test("graph: a missing graph is created, the edges as its tail edges", async () => {
  const p = await plan(
    GRAPH,
    req({ channels: ["candidate"], replaces: "foo.v0.2.0", skips: ["foo.v0.1.0"], skipRange: "<0.3.0" }),
  );
  assert.equal(p.outcome, "added", JSON.stringify(p.problems));
  assert.ok(
    (p.result as string).endsWith(
      "  entries: [foo.v0.1.0, foo.v0.2.0]\n- name: candidate\n  entries:\n  - foo.v0.3.0\n" +
        "  tailEdges:\n    replaces: foo.v0.2.0\n    skips:\n    - foo.v0.1.0\n    skipRange: '<0.3.0'\n",
    ),
    p.result,
  );
  assert.equal(p.changes[0].path, "/graphs/-");
  const cfg = await renderGraphTemplate(p.result as string, source());
  assert.deepEqual(cfg.channels[2].entries, [
    { name: "foo.v0.3.0", replaces: "foo.v0.2.0", skips: ["foo.v0.1.0"], skipRange: "<0.3.0" },
  ]);
  assert.equal(
    (
      await plan(
        p.result as string,
        req({ channels: ["candidate"], replaces: "foo.v0.2.0", skips: ["foo.v0.1.0"], skipRange: "<0.3.0" }),
      )
    ).outcome,
    "already-present",
  );
  // With an existing graph edited too: the existing graph's lines come before the new graph.
  const both = await plan(GRAPH, req({ channels: ["candidate", "fast"] }));
  assert.equal(both.outcome, "added", JSON.stringify(both.problems));
  assert.match(
    both.result as string,
    /entries: \[foo\.v0\.1\.0, foo\.v0\.2\.0, "foo\.v0\.3\.0"\]\n- name: candidate\n  entries:\n  - foo\.v0\.3\.0\n/,
  );
});

test("graph: present elsewhere than the head, or as a tombstone, is a conflict", async () => {
  const p = await plan(GRAPH, req({ image: IMG("0.1.0") }));
  assert.equal(p.outcome, "conflict");
  assert.deepEqual(codes(p), ["TEMPLATE_ADD_GRAPH_POSITION"]);
  assert.match(p.problems[0].message, /not its head "foo\.v0\.2\.0"/);
  const t = GRAPH.replace(
    "  - foo.v0.2.0   # head\n",
    "  - foo.v0.2.0   # head\n  - foo.v0.3.0\n  - foo.v0.4.0\n  tombstones: [foo.v0.3.0]\n",
  );
  const tomb = await plan(t, req(), null);
  assert.equal(tomb.outcome, "unreachable-image");
  const tomb2 = await plan(t, req({ name: "foo.v0.3.0" }), null);
  assert.equal(tomb2.outcome, "conflict");
  assert.match(tomb2.problems[0].message, /is a tombstone of graph "stable"/);
  // The head with other edges.
  const head = await plan(GRAPH, req({ image: IMG("0.2.0"), replaces: "foo.v0.0.1" }));
  assert.equal(head.outcome, "conflict");
  assert.deepEqual(codes(head), ["TEMPLATE_ADD_EDGE_CONFLICT"]);
  assert.equal((await plan(GRAPH, req({ image: IMG("0.2.0"), replaces: "foo.v0.1.0" }))).outcome, "already-present");
});

test(
  "graph: invalid input — another package, a single " + "graph-description and another channel, an invalid template",
  async () => {
    const bar = await plan(GRAPH, req({ image: IMG("bar") }));
    assert.equal(bar.outcome, "invalid-input");
    assert.deepEqual(codes(bar), ["TEMPLATE_ADD_GRAPH_PACKAGE"]);
    const single = GRAPH.replace(
      /graphs:\n[\s\S]*$/,
      "graph-description:\n  name: stable\n  entries: [foo.v0.1.0, foo.v0.2.0]\n",
    );
    const other = await plan(single, req({ channels: ["fast"] }));
    assert.equal(other.outcome, "invalid-input");
    assert.deepEqual(codes(other), ["TEMPLATE_ADD_STRUCTURE"]);
    const ok = await plan(single, req());
    assert.equal(ok.outcome, "added", JSON.stringify(ok.problems));
    assert.match(
      ok.result as string,
      /graph-description:\n  name: stable\n  entries: \[foo\.v0\.1\.0, foo\.v0\.2\.0, "foo\.v0\.3\.0"\]\n$/,
    );
    assert.equal(ok.changes[0].path, "/graph-description/entries/-");
    const broken = await plan(GRAPH.replace("  - foo.v0.2.0   # head\n", "  - foo.v0.1.0\n"), req());
    assert.equal(broken.outcome, "invalid-input");
    assert.deepEqual(codes(broken), ["TEMPLATE_GRAPH_INVALID"]);
  },
);

test("graph: unreachable image without --name; structural check with --name and no source", async () => {
  const u = await plan(GRAPH, req({ image: IMG("9.9.9") }));
  assert.equal(u.outcome, "unreachable-image");
  const s = await plan(GRAPH, req({ name: "foo.v0.3.0" }), null);
  assert.equal(s.outcome, "added");
  assert.equal(s.validation, "structural");
  assert.deepEqual(codes(s), ["TEMPLATE_ADD_NOT_RENDERED"]);
});

test("graph: the result is validated — a bundle of the same version under another name is a conflict", async () => {
  const src = reuseSource(catalog([bundleBlob("foo", "0.2.0", IMG("dup"), "foo.v0.2.0-dup")]), { reuseTags: true });
  const p = await plan(GRAPH, req({ image: IMG("dup") }), src);
  assert.equal(p.outcome, "conflict");
  assert.deepEqual(codes(p), ["TEMPLATE_GRAPH_RESULT_INVALID"]);
  assert.match(
    p.problems[0].message,
    /^adding the bundle would make the catalog invalid: .*duplicate versions found in bundles/,
  );
});

const REPO = `schema: olm.template.graph
package: {name: foo}
bundles:
  repo: quay.io/acme/foo-bundle
  tagRegex: '^v\\d+\\.\\d+\\.\\d+$'
  semverRange: '<0.4.0'
graphs:
- name: stable
  entries: [foo.v0.1.0, foo.v0.2.0]
`;

test(
  "graph: an image discovered from bundles.repo is " + "not added to bundles.images (and the report says so)",
  async () => {
    assert.ok(
      discoveredImage({ repo: "quay.io/acme/foo-bundle", tagRegex: "^v", semverRange: "<0.4.0" }, IMG("0.3.0")),
    );
    assert.ok(
      !discoveredImage({ repo: "quay.io/acme/foo-bundle", tagRegex: "^v", semverRange: "<0.4.0" }, IMG("0.4.0")),
    );
    assert.ok(!discoveredImage({ repo: "quay.io/acme/foo-bundle", tagRegex: "^x" }, IMG("0.3.0")));
    assert.ok(!discoveredImage({ repo: "quay.io/acme/foo" }, IMG("0.3.0")));
    assert.ok(!discoveredImage({}, IMG("0.3.0")));
    // The reused catalog answers foo 0.1.0–0.4.0; the range keeps
    // 0.1.0–0.3.0, so the graph must name 0.3.0 to render.
    const p = await plan(REPO, req(), source(true));
    assert.equal(p.outcome, "added", JSON.stringify(p.problems));
    assert.equal(p.validation, "rendered");
    assert.deepEqual(codes(p), ["TEMPLATE_ADD_GRAPH_DISCOVERED"]);
    assert.equal(p.result, REPO.replace("foo.v0.2.0]", 'foo.v0.2.0, "foo.v0.3.0"]'));
    // Without a tag lister: checked structurally.
    const s = await plan(REPO, req(), source(false));
    assert.equal(s.outcome, "added");
    assert.equal(s.validation, "structural");
    // Not discovered (out of the range): appended to a new bundles.images.
    const q = await plan(p.result as string, req({ image: IMG("0.4.0") }), source(true));
    assert.equal(q.outcome, "added", JSON.stringify(q.problems));
    assert.match(
      q.result as string,
      /  semverRange: '<0\.4\.0'\n  images:\n  - quay\.io\/acme\/foo-bundle:v0\.4\.0\ngraphs:/,
    );
  },
);

test("graph: JSON templates keep their style", async () => {
  const json = `{
    "schema": "olm.template.graph",
    "package": {"name": "foo"},
    "graphs": [
        {
            "name": "stable",
            "entries": [
                "foo.v0.1.0",
                "foo.v0.2.0"
            ]
        }
    ]
}
`;
  const p = await plan(json, req({ skipRange: "<0.3.0" }), source());
  // bundles.images was missing: foo.v0.1.0 and foo.v0.2.0 are named but not rendered, so the result cannot render.
  assert.equal(p.outcome, "invalid-input");
  const withImages = json.replace(
    `"package": {"name": "foo"},`,
    `"package": {"name": "foo"},\n    "bundles": {"images": ["${IMG("0.1.0")}", "${IMG("0.2.0")}"]},`,
  );
  const q = await plan(withImages, req({ skipRange: "<0.3.0" }), source());
  assert.equal(q.outcome, "added", JSON.stringify(q.problems));
  assert.equal(
    q.result,
    withImages
      .replace(`"${IMG("0.2.0")}"]`, `"${IMG("0.2.0")}", "${IMG("0.3.0")}"]`)
      .replace(
        `"foo.v0.2.0"\n            ]`,
        `"foo.v0.2.0",\n                "foo.v0.3.0"\n            ],\n` +
          `            "skipRanges": {\n                "foo.v0.3.0": "<0.3.0"\n            }`,
      ),
  );
  assert.equal((await plan(q.result as string, req({ skipRange: "<0.3.0" }), source())).outcome, "already-present");
});

test("graph: the bundle's name already in a graph under another image is a conflict, rendered or not", async () => {
  const other = IMG("0.2.0-rebuild");
  const structural = await plan(GRAPH, req({ image: other, name: "foo.v0.2.0" }), null);
  assert.equal(structural.outcome, "conflict");
  assert.deepEqual(codes(structural), ["TEMPLATE_ADD_BUNDLE_CONFLICT"]);
  assert.match(
    structural.problems[0].message,
    new RegExp(
      /already in the template \(an entry of graph "stable"\), but image /.source +
        /".*v0\.2\.0-rebuild" is neither in bundles\.images nor discovered/.source,
    ),
  );
  const src = reuseSource(catalog([bundleBlob("foo", "0.2.0", other)]), { reuseTags: true });
  // In another graph too (the name is one bundle of the package, whatever the graph).
  const rendered = await plan(GRAPH, req({ image: other, channels: ["beta"] }), src);
  assert.equal(rendered.outcome, "conflict");
  assert.deepEqual(codes(rendered), ["TEMPLATE_ADD_BUNDLE_CONFLICT"]);
  // The image the template has: already present.
  assert.equal((await plan(GRAPH, req({ image: IMG("0.2.0") }))).outcome, "already-present");
});

test("graph: tagInRepo is the tag of <repo>:<tag> as written", () => {
  assert.equal(tagInRepo("quay.io/acme/foo-bundle", IMG("0.3.0")), "v0.3.0");
  assert.equal(tagInRepo("quay.io/acme/foo", IMG("0.3.0")), undefined);
  assert.equal(tagInRepo("quay.io/acme/foo-bundle", "quay.io/acme/foo-bundle:v1@sha256:" + "0".repeat(64)), undefined);
  assert.equal(tagInRepo("quay.io/acme/foo-bundle", "quay.io/acme/foo-bundle:"), undefined);
  assert.equal(tagInRepo("quay.io/acme/foo-bundle", "quay.io/acme/foo-bundle:.x"), undefined);
  assert.equal(tagInRepo("", ":v1"), undefined);
});

test(
  "graph: a discovered image the reused catalog does " + "not know yet (pulled) is validated with its tag listed",
  async () => {
    // The reused catalog has 0.1.0 and 0.2.0 (its tags are all the lister knows); 0.3.0 comes from another source.
    const old = loadText(["0.1.0", "0.2.0"].map((v) => bundleBlob("foo", v, IMG(v))).join("\n"), "old").config;
    const pulled = reuseSource(loadText(bundleBlob("foo", "0.3.0", IMG("0.3.0")), "pulled").config, {
      reuseTags: true,
    });
    const src = Object.assign(fallbackSource(reuseSource(old, { reuseTags: true }), pulled), catalogTagLister(old));
    const t = REPO.replace("  semverRange: '<0.4.0'\n", "");
    const p = await plan(t, req(), src);
    assert.equal(p.outcome, "added", JSON.stringify(p.problems));
    assert.equal(p.validation, "rendered");
    assert.deepEqual(codes(p), ["TEMPLATE_ADD_GRAPH_DISCOVERED"]);
    const cfg = await renderGraphTemplate(p.result as string, src, {
      tags: { listTags: () => Promise.resolve(["v0.1.0", "v0.2.0", "v0.3.0"]) },
    });
    assert.deepEqual(
      cfg.bundles.map((b) => b.image),
      [IMG("0.1.0"), IMG("0.2.0"), IMG("0.3.0")],
    );
  },
);

test(
  "graph: a discovered image making the catalog invalid is " + "a conflict, not blamed on the template before the edit",
  async () => {
    // foo.v0.3.0 carries version 0.2.0; the lister knows its tag (as a registry does once it is pushed).
    const all = catalog().bundles.filter((b) => b.name !== "foo.v0.3.0" && b.name !== "foo.v0.4.0");
    const cfg = loadText(
      [...all.map((b) => JSON.stringify(b)), bundleBlob("foo", "0.2.0", IMG("0.3.0"), "foo.v0.3.0")].join("\n"),
      "dup",
    ).config;
    const src = Object.assign(reuseSource(cfg, { reuseTags: true }), catalogTagLister(cfg));
    const p = await plan(REPO, req(), src);
    assert.equal(p.outcome, "conflict");
    assert.deepEqual(codes(p), ["TEMPLATE_ADD_GRAPH_DISCOVERED", "TEMPLATE_GRAPH_RESULT_INVALID"]);
    assert.match(p.problems[1].message, /^adding the bundle would make the catalog invalid: .*duplicate versions/);
  },
);

test(
  "graph: --release-config applies every listed template through the kind " +
    "(one graph template twice, a basic one); a conflict writes nothing",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-ab-graph-rc-"));
    const templates = join(dir, "catalog-templates");
    mkdirSync(templates);
    const basic = `schema: olm.template.basic
entries:
- schema: olm.package
  name: foo
  defaultChannel: stable
- schema: olm.channel
  package: foo
  name: stable
  entries:
  - name: foo.v0.2.0
- schema: olm.bundle
  image: ${IMG("0.2.0")}
`;
    writeFileSync(join(templates, "graph.yaml"), GRAPH);
    writeFileSync(join(templates, "basic.yaml"), basic);
    const rc = join(dir, "release-config.yaml");
    writeFileSync(
      rc,
      `catalog_templates:
  - template_name: graph.yaml
    channels: [stable]
    replaces: foo.v0.2.0
    skipRange: '<0.3.0'
  - template_name: graph.yaml
    channels: [fast, candidate]
  - template_name: basic.yaml
    channels: [stable]
    replaces: foo.v0.2.0
`,
    );
    const r = await addBundleFromReleaseConfig(rc, IMG("0.3.0"), { source: source(), templatesDir: templates });
    assert.equal(r.outcome, "added", JSON.stringify(r.templates.map((t) => t.problems)));
    assert.deepEqual(
      r.templates.map((t) => [t.kind, t.outcome, t.validation]),
      [
        ["graph", "added", "rendered"],
        ["graph", "added", "rendered"],
        ["basic", "added", "rendered"],
      ],
    );
    assert.equal(r.written, true);
    const g = readFileSync(join(templates, "graph.yaml"), "utf8");
    assert.equal(
      g,
      GRAPH.replace(
        "  - foo.v0.2.0   # head\n",
        "  - foo.v0.2.0   # head\n  - foo.v0.3.0\n  skipRanges:\n    foo.v0.3.0: '<0.3.0'\n",
      )
        .replace(
          "  - quay.io/acme/foo-bundle:v0.2.0\n",
          "  - quay.io/acme/foo-bundle:v0.2.0\n  - quay.io/acme/foo-bundle:v0.3.0\n",
        )
        .replace("foo.v0.2.0]\n", 'foo.v0.2.0, "foo.v0.3.0"]\n- name: candidate\n  entries:\n  - foo.v0.3.0\n'),
    );
    const again = await addBundleFromReleaseConfig(rc, IMG("0.3.0"), { source: source(), templatesDir: templates });
    assert.equal(again.outcome, "already-present");
    assert.deepEqual(
      again.templates.map((t) => t.outcome),
      ["already-present", "already-present", "already-present"],
    );
    // 0.4.0 with a replaces that is not the graph's head: the graph
    // template conflicts, the basic one is not written either.
    writeFileSync(
      rc,
      `catalog_templates:\n  - template_name: basic.yaml\n    channels: [stable]\n    replaces: foo.v0.3.0\n` +
        `  - template_name: graph.yaml\n    channels: [stable]\n    replaces: foo.v0.2.0\n`,
    );
    const beforeBasic = readFileSync(join(templates, "basic.yaml"), "utf8");
    const c = await addBundleFromReleaseConfig(rc, IMG("0.4.0"), { source: source(), templatesDir: templates });
    assert.equal(c.outcome, "conflict");
    assert.deepEqual(
      c.templates.map((t) => t.outcome),
      ["added", "conflict"],
    );
    assert.deepEqual(codes(c.templates[1]), ["TEMPLATE_ADD_GRAPH_REPLACES"]);
    assert.equal(c.written, false);
    assert.equal(readFileSync(join(templates, "basic.yaml"), "utf8"), beforeBasic);
    assert.equal(readFileSync(join(templates, "graph.yaml"), "utf8"), g);
    rmSync(dir, { recursive: true, force: true });
  },
);

// ---- properties ----------------------------------------------------------------------------

const NAME = (n: number): string => `foo.v0.${n}.0`;

interface Gen {
  text: string;
  graphs: { name: string; entries: number[]; tombs: number[] }[];
}

/** A graph template text: 1–2 graphs of ascending entries (some tombstoned), block or flow lists, comments. */
const templateArb: fc.Arbitrary<Gen> = fc
  .record({
    stable: fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 6 }),
    fast: fc.option(fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 4 }), {
      nil: undefined,
    }),
    tombMask: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    flow: fc.boolean(),
    indentSeq: fc.boolean(),
    comment: fc.constantFrom("", "  # note", "\n# between"),
    imagesFlow: fc.boolean(),
  })
  .map(({ stable, fast, tombMask, flow, indentSeq, comment, imagesFlow }) => {
    const graphs: Gen["graphs"] = [];
    const st = [...stable].sort((a, b) => a - b);
    let tombs = st.filter((_, i) => tombMask[i] === true);
    if (tombs.length === st.length) tombs = tombs.slice(1);
    graphs.push({ name: "stable", entries: st, tombs });
    if (fast) graphs.push({ name: "fast", entries: [...fast].sort((a, b) => a - b), tombs: [] });
    const ind = indentSeq ? "  " : "";
    const list = (items: string[], col: string): string =>
      flow ? ` [${items.join(", ")}]\n` : `\n${items.map((s) => `${col}${ind}- ${s}`).join("\n")}\n`;
    const live = new Set(graphs.flatMap((g) => g.entries.filter((e) => !g.tombs.includes(e))));
    const images = [...live].sort((a, b) => a - b).map((n) => IMG(`0.${n}.0`));
    let text =
      "---\n# generated\nschema: olm.template.graph\npackage:\n  name: foo\n  defaultChannel: stable" + comment + "\n";
    text +=
      "bundles:\n  images:" +
      (imagesFlow ? ` [${images.join(", ")}]\n` : `\n${images.map((i) => `  ${ind}- ${i}`).join("\n")}\n`);
    text += "graphs:\n";
    for (const g of graphs) {
      text += `${ind}- name: ${g.name}\n${ind}  entries:` + list(g.entries.map(NAME), `${ind}  `);
      if (g.tombs.length > 0) text += `${ind}  tombstones:` + list(g.tombs.map(NAME), `${ind}  `);
    }
    return { text, graphs };
  });

/** A request; "head" stands for the stable graph's head (to reach already-present and valid replaces often). */
const requestArb = fc.record({
  v: fc.oneof(fc.integer({ min: 1, max: 24 }), fc.constant("head" as const)),
  channels: fc.oneof(
    { weight: 1, arbitrary: fc.constant(["stable"]).map((c) => [...c]) },
    { weight: 2, arbitrary: fc.subarray(["stable", "fast", "beta"], { minLength: 1 }) },
  ),
  replaces: fc.option(fc.oneof(fc.constantFrom("head" as const, "prev" as const), fc.integer({ min: 1, max: 24 })), {
    nil: undefined,
  }),
  skips: fc.oneof(
    fc.constant([] as number[]).map((c) => [...c]),
    fc.uniqueArray(
      fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 21, max: 26 }) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 }) },
      ),
      { maxLength: 3 },
    ),
  ),
  skipRange: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom("<0.9.0", ">=0.1.0 <0.30.0") },
  ),
});

type Req = {
  v: number | "head";
  channels: string[];
  replaces?: number | "head" | "prev";
  skips: number[];
  skipRange?: string;
};

function toRequest(r: Req, gen: Gen): AddBundleRequest {
  const st = gen.graphs[0];
  const live = st.entries.filter((e) => !st.tombs.includes(e));
  const head = live[live.length - 1];
  const prev = live.length > 1 ? live[live.length - 2] : 99;
  const v = r.v === "head" ? head : r.v;
  const out: AddBundleRequest = {
    image: IMG(`0.${v}.0`),
    channels: r.channels,
    name: NAME(v),
    skips: r.skips.map(NAME),
  };
  if (r.replaces !== undefined)
    out.replaces = NAME(r.replaces === "head" ? head : r.replaces === "prev" ? prev : r.replaces);
  if (r.skipRange !== undefined) out.skipRange = r.skipRange;
  return out;
}

/** addBundleToGraph over the request's channels, normalised; or the error. */
function expected(t: GraphTemplate, r: AddBundleRequest): unknown {
  let cur = t;
  for (const ch of [...new Set(r.channels)]) {
    cur = addBundleToGraph(cur, {
      bundleName: r.name as string,
      image: r.image,
      channel: ch,
      replaces: r.replaces,
      skips: r.skips,
      skipRange: r.skipRange,
    });
  }
  return graphTemplateValue(cur);
}

/** Whether `small` is a subsequence of `big` (characters). */
function subsequence(small: string, big: string): boolean {
  let j = 0;
  for (let i = 0; i < big.length && j < small.length; i++) if (big[i] === small[j]) j++;
  return j === small.length;
}

test(
  "property: the text edit, parsed, equals addBundleToGraph " + "on the parsed original; adding twice is adding once",
  async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(templateArb, requestArb, async (gen, r) => {
        const request = toRequest(r, gen);
        const p = await planAddBundle(gen.text, "g.yaml", request);
        outcomes.set(p.outcome, (outcomes.get(p.outcome) ?? 0) + 1);
        const original = parseGraphTemplate(gen.text);
        let want: unknown;
        let error: unknown;
        try {
          want = expected(original, request);
        } catch (e) {
          error = e;
        }
        if (p.outcome === "added") {
          assert.equal(error, undefined, `addBundleToGraph refused what add-bundle added: ${String(error)}`);
          assert.deepEqual(graphTemplateValue(parseGraphTemplate(p.result as string)), want);
          // Only insertions: the original text survives in order (comments and formatting included).
          assert.ok(subsequence(gen.text, p.result as string));
          if (!gen.text.includes("[")) {
            const lines = (p.result as string).split("\n");
            let k = 0;
            for (const l of gen.text.split("\n")) {
              while (k < lines.length && lines[k] !== l) k++;
              assert.ok(k < lines.length, `line lost: ${l}`);
              k++;
            }
          }
          const again = await planAddBundle(p.result as string, "g.yaml", request);
          assert.equal(again.outcome, "already-present", JSON.stringify(again.problems));
        } else if (p.outcome === "already-present") {
          assert.deepEqual(want, graphTemplateValue(original));
        } else if (p.outcome === "conflict") {
          // Stricter than addBundleToGraph only where the chain is positional: an earlier live entry.
          if (error === undefined) {
            const name = request.name as string;
            const earlier = original.graphs.some(
              (g) =>
                request.channels.includes(g.name) &&
                g.entries.includes(name) &&
                g.entries.filter((e) => !(g.tombstones ?? []).includes(e)).at(-1) !== name,
            );
            assert.ok(earlier, `conflict that addBundleToGraph accepts: ${JSON.stringify(p.problems)}`);
          }
        } else {
          assert.equal(p.outcome, "invalid-input");
          const name = request.name as string;
          assert.ok(request.replaces === name || (request.skips ?? []).includes(name), JSON.stringify(p.problems));
        }
      }),
      { numRuns: 300 },
    );
    assert.ok((outcomes.get("added") ?? 0) > 30, JSON.stringify([...outcomes]));
    assert.ok((outcomes.get("conflict") ?? 0) > 10, JSON.stringify([...outcomes]));
    assert.ok((outcomes.get("already-present") ?? 0) > 0, JSON.stringify([...outcomes]));
  },
);

test("property: add-bundle is idempotent through rendering (a source for every image)", async () => {
  const cfg = loadText(
    Array.from({ length: 22 }, (_, i) => bundleBlob("foo", `0.${i + 1}.0`, IMG(`0.${i + 1}.0`))).join("\n"),
    "src",
  ).config;
  const src = reuseSource(cfg, { reuseTags: true });
  await fc.assert(
    fc.asyncProperty(templateArb, requestArb, async (gen, r) => {
      const request = { ...toRequest(r, gen), name: undefined };
      const p = await planAddBundle(gen.text, "g.yaml", request, { source: src });
      if (p.outcome !== "added") return;
      assert.equal(p.validation, "rendered");
      const again = await planAddBundle(p.result as string, "g.yaml", request, { source: src });
      assert.equal(again.outcome, "already-present", JSON.stringify(again.problems));
    }),
    { numRuns: 100 },
  );
});

// ---- CLI -----------------------------------------------------------------------------------

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const RUNNER =
  `import { run } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src", "cli", "main.ts")).href)};\n` +
  `process.exitCode = await run(process.argv.slice(1));`;

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", RUNNER, ...args], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    env: { ...process.env, OPCAT_DEBUG: "" },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test(
  "CLI: template add-bundle edits a graph template (tags from " +
    "the reused catalog), then already-present, then a conflict (5)",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-ab-graph-"));
    const tmpl = join(dir, "graph.yaml");
    const cat = join(dir, "catalog.json");
    writeFileSync(tmpl, REPO);
    writeFileSync(cat, ["0.1.0", "0.2.0", "0.3.0"].map((v) => bundleBlob("foo", v, IMG(v))).join("\n") + "\n");
    const args = [
      "template",
      "add-bundle",
      tmpl,
      "--image",
      IMG("0.3.0"),
      "--channel",
      "stable",
      "--replaces",
      "foo.v0.2.0",
      "--reuse",
      cat,
      "--reuse-tags",
      "-o",
      "json",
    ];
    const r = opcat(args);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      outcome: string;
      kind: string;
      validation: string;
      written: boolean;
      problems: { code: string }[];
      changes: { path: string }[];
    };
    assert.equal(report.outcome, "added");
    assert.equal(report.kind, "graph");
    assert.equal(report.validation, "rendered");
    assert.equal(report.written, true);
    assert.deepEqual(
      report.problems.map((p) => p.code),
      ["TEMPLATE_ADD_GRAPH_DISCOVERED"],
    );
    assert.deepEqual(
      report.changes.map((c) => c.path),
      ["/graphs/0/entries/-"],
    );
    assert.equal(readFileSync(tmpl, "utf8"), REPO.replace("foo.v0.2.0]", 'foo.v0.2.0, "foo.v0.3.0"]'));
    const again = opcat(args);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, "already-present");
    const conflict = opcat([
      "template",
      "add-bundle",
      tmpl,
      "--image",
      IMG("0.2.0"),
      "--channel",
      "stable",
      "--reuse",
      cat,
      "--reuse-tags",
    ]);
    assert.equal(conflict.code, 5, conflict.stderr);
    assert.match(conflict.stderr, /TEMPLATE_ADD_GRAPH_POSITION/);
  },
);

// ---- against a registry ---------------------------------------------------------------------

const missing = requireTools("docker-registry");

describe("CLI: add-bundle --pull lists bundles.repo tags from the registry (docker-registry)", {
  skip: missing ?? false,
}, () => {
  let reg: RunningRegistry;
  const work = mkdtempSync(join(tmpdir(), "opcat-ab-graph-reg-"));
  before(async () => {
    reg = await startDockerRegistry(join(work, "reg"));
    for (const v of ["0.1.0", "0.2.0", "0.3.0"]) {
      const dir = writeBundleDir(join(work, "bundles", v), "foo", v);
      await pushImage(buildBundleImage(dir), `${reg.host}/acme/foo-bundle:v${v}`, { useHttp: true });
    }
    writeFileSync(join(work, "registries.conf"), "");
  });
  after(async () => {
    await reg?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test(
    "the pulled bundle is added to its graph, discovered from " +
      "the repo, and the result rendered; then already-present",
    () => {
      const repo = `${reg.host}/acme/foo-bundle`;
      const tmpl = join(work, "graph.yaml");
      const text = `# pulled from ${repo}
schema: olm.template.graph
package: {name: foo, defaultChannel: stable}
bundles:
  repo: ${repo}   # every v* tag
  tagRegex: '^v'
graphs:
- name: stable
  entries:
  - foo.v0.1.0
  - foo.v0.2.0
`;
      writeFileSync(tmpl, text);
      const args = [
        "template",
        "add-bundle",
        tmpl,
        "--image",
        `${repo}:v0.3.0`,
        "--channel",
        "stable",
        "--pull",
        "--use-http",
        "--cache-dir",
        join(work, "cache"),
        "--registries-conf",
        join(work, "registries.conf"),
        "-o",
        "json",
      ];
      const r = opcat(args);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as {
        outcome: string;
        validation: string;
        bundle: { name: string };
        problems: { code: string }[];
      };
      assert.equal(report.outcome, "added", r.stdout);
      assert.equal(report.validation, "rendered");
      assert.equal(report.bundle.name, "foo.v0.3.0");
      assert.deepEqual(
        report.problems.map((p) => p.code),
        ["TEMPLATE_ADD_GRAPH_DISCOVERED"],
      );
      assert.equal(readFileSync(tmpl, "utf8"), text + "  - foo.v0.3.0\n");
      const again = opcat(args);
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, "already-present");
      // A bundle the registry has, under another image spelling, carrying a name the graph has: a conflict.
      writeFileSync(
        tmpl,
        text.replace(
          `  repo: ${repo}   # every v* tag\n  tagRegex: '^v'\n`,
          `  images: [${repo}:v0.1.0, ${repo}:v0.2.0]\n`,
        ),
      );
      const c = opcat([
        "template",
        "add-bundle",
        tmpl,
        "--image",
        `${repo}:v0.2.0-x`,
        "--name",
        "foo.v0.2.0",
        "--channel",
        "stable",
        "-o",
        "json",
      ]);
      assert.equal(c.code, 5, c.stdout);
    },
  );
});
