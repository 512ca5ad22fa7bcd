/**
 * Templates rendered from bundle images, end to end and without --reuse: opcat builds bundle
 * images (its own builder, no container engine) from fixture bundles — the 11 `testoperator`
 * versions of the semver docs (seed 000) and community bundle directories — pushes them to a real
 * local docker-registry (127.0.0.1), and `opcat template render` pulls them, reaching templates
 * that name quay.io through a registries.conf mirror.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderBundleDirectory } from "../../src/bundle/index.js";
import { loadText } from "../../src/fbc/load.js";
import { normalizeForRender } from "../../src/fbc/render.js";
import type { Bundle, DeclarativeConfig } from "../../src/fbc/types.js";
import { formatCatalog } from "../../src/fbc/write.js";
import { buildBundleImage, buildCatalogImage, pushImage } from "../../src/image/index.js";
import { writeBundleDir } from "../../src/template/testdata/bundledir.js";
import { requireTools, startDockerRegistry, freePort, type RunningRegistry } from "../image/servers.js";
import { COMMUNITY, REPO_ROOT, requireShared } from "../shared.js";

const BIN = join(REPO_ROOT, "bin", "opcat");
const TESTDATA = join(REPO_ROOT, "src", "template", "testdata");
const missing = requireTools("docker-registry");
const shared = requireShared();

const TESTOPERATOR = [
  "0.1.0",
  "0.1.1",
  "0.1.2",
  "0.1.3",
  "0.2.0",
  "0.2.1",
  "0.2.2",
  "0.3.0",
  "1.0.0",
  "1.0.1",
  "1.1.0",
];
/** Community packages whose catalog-templates are rendered, with their bundle versions. */
const COMMUNITY_PACKAGES: Record<string, string[]> = {
  "cat-facts-operator": ["1.0.0", "1.1.0", "1.1.1", "1.1.2"],
  "kairos-operator": ["2.0.1", "2.1.0", "2.1.1", "2.2.0"],
  clusterpulse: ["0.1.1", "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0", "1.0.0", "1.0.1", "1.0.2"],
};

/** An empty registries.conf, so that the host's configuration plays no part. */
let emptyConf = "";

function opcat(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    input,
    cwd: REPO_ROOT,
    env: { ...process.env, OPCAT_DEBUG: "", CONTAINERS_REGISTRIES_CONF: emptyConf },
    maxBuffer: 1 << 28,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The semver template of the docs (seed 000), as printed there (capitalised keys). */
function seedTemplate(major: boolean, minor: boolean): string {
  const img = (v: string): string => `  - Image: quay.io/foo/olm:testoperator.v${v}`;
  return `Schema: olm.semver
GenerateMajorChannels: ${major}
GenerateMinorChannels: ${minor}
Candidate:
  Bundles:
${TESTOPERATOR.map(img).join("\n")}
Fast:
  Bundles:
${["0.2.1", "0.2.2", "0.3.0", "1.0.1", "1.1.0"].map(img).join("\n")}
Stable:
  Bundles:
${img("1.0.1")}
`;
}

const trimmed = (yaml: string): string[] =>
  yaml
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));

const byName = (bundles: Bundle[]): Map<string, string> =>
  new Map(
    bundles.map((b) => [
      b.name,
      formatCatalog({ packages: [], channels: [], bundles: [b], deprecations: [], others: [] }, "json"),
    ]),
  );

describe("templates rendered from bundle images in a local registry", { skip: missing || shared.skip }, () => {
  let reg: RunningRegistry;
  let work: string;
  let conf: string;
  let cache: string;
  const bundleDirs = new Map<string, string>();

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "opcat-template-e2e-"));
    cache = join(work, "cache");
    emptyConf = join(work, "empty-registries.conf");
    writeFileSync(emptyConf, "");
    reg = await startDockerRegistry(join(work, "registry"));
    const pushes: Promise<string>[] = [];
    for (const v of TESTOPERATOR) {
      const dir = writeBundleDir(join(work, "bundles", `testoperator.v${v}`), "testoperator", v);
      bundleDirs.set(`quay.io/foo/olm:testoperator.v${v}`, dir);
      pushes.push(pushImage(buildBundleImage(dir), `${reg.host}/foo/olm:testoperator.v${v}`, { useHttp: true }));
    }
    for (const [pkg, versions] of Object.entries(COMMUNITY_PACKAGES)) {
      for (const v of versions) {
        const dir = join(COMMUNITY, "operators", pkg, v);
        bundleDirs.set(`quay.io/community-operator-pipeline-prod/${pkg}:${v}`, dir);
        pushes.push(
          pushImage(buildBundleImage(dir), `${reg.host}/community-operator-pipeline-prod/${pkg}:${v}`, {
            useHttp: true,
          }),
        );
      }
    }
    // A catalog image, which templates must refuse.
    const catDir = join(work, "catalog");
    mkdirSync(catDir);
    writeFileSync(join(catDir, "index.json"), JSON.stringify({ schema: "olm.package", name: "x" }));
    pushes.push(pushImage(buildCatalogImage(catDir), `${reg.host}/foo/catalog:latest`, { useHttp: true }));
    await Promise.all(pushes);
    // quay.io is reached only through the mirror: its own location is a closed local port.
    const closed = await freePort();
    conf = join(work, "registries.conf");
    writeFileSync(
      conf,
      ["foo", "community-operator-pipeline-prod"]
        .map(
          (ns) =>
            `[[registry]]\nprefix = "quay.io/${ns}"\nlocation = "127.0.0.1:${closed}/${ns}"\n` +
            `insecure = true\n[[registry.mirror]]\nlocation = "${reg.host}/${ns}"\ninsecure = true\n`,
        )
        .join("\n"),
    );
  });
  after(async () => {
    await reg?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const render = (args: string[], input?: string): { code: number; stdout: string; stderr: string } =>
    opcat(["template", "render", ...args, "--registries-conf", conf, "--cache-dir", cache], input);

  /** What `opm render <image>` gives for the bundle behind `image` (rendered from its directory). */
  const rendered = (image: string, migrateLevel?: string): string => {
    const cfg = renderBundleDirectory(bundleDirs.get(image) ?? "", { image });
    return formatCatalog(normalizeForRender(cfg, { migrateLevel }), "json");
  };

  for (const [name, major, minor, file, seedFile] of [
    ["major", true, false, "readme-major.yaml", "seed-major.yaml"],
    ["minor", false, true, "readme-minor.yaml", "seed-minor.yaml"],
  ] as const) {
    test(`seed 000 semver example (${name} channels) from quay.io/foo/olm images through the mirror`, () => {
      const r = render(["-", "-o", "yaml"], seedTemplate(major, minor));
      assert.equal(r.code, 0, r.stderr);
      const cfg = loadText(r.stdout, "out.yaml").config;
      const channelsAndPackage = formatCatalog({ ...cfg, bundles: [] }, "yaml");
      // Today's opm output (the README); the seed's page predates opm linking skips across Y-streams.
      assert.deepEqual(trimmed(channelsAndPackage), trimmed(readFileSync(join(TESTDATA, file), "utf8")));
      const noSkips = (lines: string[]): string[] =>
        lines.filter((l) => l !== "skips:" && !/^- testoperator\./.test(l));
      assert.deepEqual(
        noSkips(trimmed(channelsAndPackage)),
        noSkips(trimmed(readFileSync(join(TESTDATA, seedFile), "utf8"))),
      );
      // Bundles: exactly what rendering each image gives, in template order, image as written.
      assert.deepEqual(
        cfg.bundles.map((b) => b.image),
        TESTOPERATOR.map((v) => `quay.io/foo/olm:testoperator.v${v}`),
      );
      for (const b of cfg.bundles) {
        delete b.loc;
        assert.equal(
          formatCatalog({ packages: [], channels: [], bundles: [b], deprecations: [], others: [] }, "json"),
          rendered(b.image),
        );
      }
    });
  }

  const communityCase = (pkg: string, template: string, catalogVersion: string, migrate: boolean): void => {
    test(
      `community ${pkg}: catalog-templates/${template} renders the ` +
        `bundles of catalogs/${catalogVersion}${migrate ? " (migrated)" : ""}`,
      () => {
        const r = render([
          join(COMMUNITY, "operators", pkg, "catalog-templates", template),
          ...(migrate ? ["--migrate-level", "bundle-object-to-csv-metadata"] : []),
        ]);
        assert.equal(r.code, 0, r.stderr);
        const ours = loadText(r.stdout, "out.json").config;
        const theirs = loadText(
          readFileSync(join(COMMUNITY, "catalogs", catalogVersion, pkg, "catalog.yaml"), "utf8"),
          "catalog.yaml",
        ).config;
        const a = byName(ours.bundles);
        const b = byName(theirs.bundles);
        assert.ok(a.size > 0);
        for (const [n, text] of a) assert.equal(text, b.get(n), `bundle ${n}`);
        // Package (description and icon from the head's CSV) and channels as the real opm renders them
        // from the same images, where scripts/oracle/semver-community recorded that.
        const opm = join(TESTDATA, "community-semver", `${pkg}.yaml`);
        if (template === "semver.yaml" && existsSync(opm)) {
          const none = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
          const got = formatCatalog({ ...none, packages: ours.packages, channels: ours.channels }, "yaml");
          assert.deepEqual(Buffer.from(got), readFileSync(opm), `${pkg}: package and channels as opm renders them`);
        }
      },
    );
  };
  communityCase("cat-facts-operator", "basic.yaml", "v4.20", true);
  communityCase("kairos-operator", "semver.yaml", "v4.16", false);
  communityCase("kairos-operator", "semver.yaml", "v4.20", true);
  communityCase("clusterpulse", "semver.yaml", "v4.20", true);

  test("a basic template naming the local registry directly (--use-http); a repeated image is pulled once", () => {
    const img = `${reg.host}/foo/olm:testoperator.v1.0.0`;
    const r = opcat(
      ["render-template", "basic", "-", "--use-http", "--cache-dir", join(work, "cache-direct")],
      `schema: olm.template.basic\nentries:\n- schema: olm.bundle\n` +
        `  image: ${img}\n- schema: olm.bundle\n  image: ${img}\n`,
    );
    assert.equal(r.code, 0, r.stderr);
    const blobs = r.stdout
      .trim()
      .split(/\n(?=\{)/)
      .map((t) => JSON.parse(t) as { image: string; name: string });
    assert.deepEqual(
      blobs.map((b) => [b.name, b.image]),
      [
        ["testoperator.v1.0.0", img],
        ["testoperator.v1.0.0", img],
      ],
    );
    const cfg: DeclarativeConfig = loadText(r.stdout, "-").config;
    delete cfg.bundles[0].loc;
    const dir = bundleDirs.get("quay.io/foo/olm:testoperator.v1.0.0") ?? "";
    assert.equal(
      formatCatalog({ ...cfg, bundles: [cfg.bundles[0]] }, "json"),
      formatCatalog(normalizeForRender(renderBundleDirectory(dir, { image: img })), "json"),
    );
  });

  test("substitutes template: the substitute image is pulled", () => {
    const entries = [
      { schema: "olm.package", name: "testoperator", defaultChannel: "stable" },
      {
        schema: "olm.channel",
        package: "testoperator",
        name: "stable",
        entries: [{ name: "testoperator.v0.1.0" }, { name: "testoperator.v0.1.1", replaces: "testoperator.v0.1.0" }],
      },
      ...["0.1.0", "0.1.1"].map((v) => ({
        schema: "olm.bundle",
        name: `testoperator.v${v}`,
        package: "testoperator",
        image: `quay.io/foo/olm:testoperator.v${v}`,
        properties: [{ type: "olm.package", value: { packageName: "testoperator", version: v } }],
      })),
    ];
    const t = JSON.stringify({
      schema: "olm.template.substitutes",
      entries,
      substitutions: [{ name: "quay.io/foo/olm:testoperator.v0.1.2", base: "testoperator.v0.1.1" }],
    });
    const r = render(["substitutes", "-"], t);
    assert.equal(r.code, 0, r.stderr);
    const cfg = loadText(r.stdout, "-").config;
    assert.deepEqual(
      cfg.channels[0].entries?.map((e) => [e.name, e.replaces, e.skips]),
      [
        ["testoperator.v0.1.0", "", []],
        ["testoperator.v0.1.1", "", []],
        ["testoperator.v0.1.2", "testoperator.v0.1.0", ["testoperator.v0.1.1"]],
      ],
    );
    assert.equal(cfg.bundles[2].image, "quay.io/foo/olm:testoperator.v0.1.2");
    assert.ok(cfg.bundles[2].properties.some((p) => p.type === "olm.bundle.object"));
  });

  test("composite template: two catalogs, basic and semver contributions pulled, a raw one, a custom command", () => {
    const dir = mkdtempSync(join(work, "composite-"));
    writeFileSync(
      join(dir, "catalogs.yaml"),
      `schema: olm.composite.catalogs\ncatalogs:\n- name: v4.16\n  destination:\n` +
        `    workingDir: ${dir}/out/v4.16\n  builders: [olm.builder.basic, olm.builder.semver]\n- name: v4.17\n` +
        `  destination:\n    workingDir: ${dir}/out/v4.17\n  builders: [olm.builder.raw, olm.builder.custom]\n`,
    );
    mkdirSync(join(dir, "contrib"));
    writeFileSync(join(dir, "contrib", "semver.yaml"), seedTemplate(false, true));
    const catFacts = join(COMMUNITY, "operators", "cat-facts-operator", "catalog-templates", "basic.yaml");
    const catFactsCatalog = join(COMMUNITY, "catalogs", "v4.20", "cat-facts-operator", "catalog.yaml");
    // the custom builder's script (node -e), in the YAML as one double-quoted string
    const echoScript =
      "for (const b of [{schema:'olm.package',name:'echo',defaultChannel:'a'}," +
      "{schema:'olm.channel',package:'echo',name:'a',entries:[{name:'echo.v1.0.0'}]}," +
      "{schema:'olm.bundle',name:'echo.v1.0.0',package:'echo',image:'quay.io/x/echo:1'," +
      "properties:[{type:'olm.package',value:{packageName:'echo',version:'1.0.0'}}]}]) console.log(JSON.stringify(b))";
    writeFileSync(
      join(dir, "contrib", "composite.yaml"),
      `schema: olm.composite
components:
- name: v4.16
  destination: {path: testoperator}
  strategy: {name: semver, template: {schema: olm.builder.semver, config: {input: semver.yaml, output: catalog.yaml}}}
- name: v4.16
  destination: {path: cat-facts-operator}
  strategy: {name: basic, template: {schema: olm.builder.basic, config: {input: ${catFacts}, output: catalog.yaml}}}
- name: v4.17
  destination: {path: cat-facts-operator}
  strategy: {name: raw, template: {schema: olm.builder.raw, config: {input: ${catFactsCatalog}, output: catalog.json}}}
- name: v4.17
  destination: {path: echo}
  strategy:
    name: custom
    template:
      schema: olm.builder.custom
      config:
        command: node
        args: ["-e", "${echoScript}"]
        output: catalog.json
`,
    );
    const r = render([
      "composite",
      "-f",
      join(dir, "catalogs.yaml"),
      "-c",
      join(dir, "contrib", "composite.yaml"),
      "-o",
      "yaml",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    for (const f of [
      "out/v4.16/testoperator/catalog.yaml",
      "out/v4.16/cat-facts-operator/catalog.yaml",
      "out/v4.17/cat-facts-operator/catalog.json",
      "out/v4.17/echo/catalog.json",
    ])
      assert.ok(existsSync(join(dir, f)), f);
    const semver = readFileSync(join(dir, "out/v4.16/testoperator/catalog.yaml"), "utf8");
    assert.match(semver, /^---\ndefaultChannel: stable-v1\.0\n/);
    // Validation failure of a component (no --validate=false): the raw FBC is fine, a broken one is not.
    writeFileSync(
      join(dir, "contrib", "bad.json"),
      JSON.stringify({ schema: "olm.package", name: "bad", defaultChannel: "nope" }),
    );
    writeFileSync(
      join(dir, "contrib", "bad.yaml"),
      `schema: olm.composite\ncomponents:\n- name: v4.17\n  destination: {path: bad}\n` +
        `  strategy: {name: raw, template: {schema: olm.builder.raw, ` +
        `config: {input: bad.json, output: catalog.json}}}\n`,
    );
    const bad = render(["composite", "-f", join(dir, "catalogs.yaml"), "-c", join(dir, "contrib", "bad.yaml")]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      new RegExp(
        /rendering the composite template: validating component /.source +
          /"v4\.17": validation failure in path ".*\/out\/v4\.17\/bad": /.source,
      ),
    );
    const skip = render([
      "composite",
      "-f",
      join(dir, "catalogs.yaml"),
      "-c",
      join(dir, "contrib", "bad.yaml"),
      "--validate=false",
    ]);
    assert.equal(skip.code, 0, skip.stderr);
  });

  test("opm's refusals and pull errors", () => {
    const dirRef = bundleDirs.get("quay.io/foo/olm:testoperator.v0.1.0") ?? "";
    const d = render(
      ["basic", "-"],
      `schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: ${dirRef}\n`,
    );
    assert.equal(d.code, 2);
    assert.match(
      d.stderr,
      new RegExp(
        `rendering template: render reference "${dirRef}": cannot render bundle directory "${dirRef}": not allowed`,
      ),
    );
    const c = opcat(
      ["template", "render", "basic", "-", "--use-http", "--cache-dir", cache],
      `schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: ${reg.host}/foo/catalog:latest\n`,
    );
    assert.equal(c.code, 2, c.stderr);
    assert.match(c.stderr, /cannot render declarative config image: not allowed/);
    const m = render(["semver", "-"], "schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/foo/olm:nope\n");
    assert.equal(m.code, 2);
    assert.match(
      m.stderr,
      /rendering template: render reference "quay\.io\/foo\/olm:nope": failed to pull image "quay\.io\/foo\/olm:nope"/,
    );
  });

  test("--reuse answers digest-pinned references; tags are pulled unless --reuse-tags", () => {
    const reused = join(work, "reused.json");
    writeFileSync(
      reused,
      JSON.stringify({
        schema: "olm.bundle",
        name: "from-reuse",
        package: "testoperator",
        image: "quay.io/foo/olm:testoperator.v1.1.0",
        properties: [{ type: "olm.package", value: { packageName: "testoperator", version: "1.1.0" } }],
      }),
    );
    const t =
      "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: quay.io/foo/olm:testoperator.v1.1.0\n";
    const pulled = render(["-", "--reuse", reused], t);
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stdout, /"name": "testoperator\.v1\.1\.0"/);
    const reusedTags = render(["-", "--reuse", reused, "--reuse-tags"], t);
    assert.equal(reusedTags.code, 0, reusedTags.stderr);
    assert.match(reusedTags.stdout, /"name": "from-reuse"/);
  });
});
