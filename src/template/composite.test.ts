/**
 * The composite template (opm's former alpha/template/composite): a catalogs file with two catalogs,
 * contributions using each builder (basic, semver, raw, custom), per-component validation, and
 * opm's error texts.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import type { Bundle } from "../fbc/types.js";
import { renderCompositeTemplate, type CompositeOptions } from "./composite.js";
import { renderSemverTemplate } from "./semver.js";
import type { BundleSource, RenderedBundle } from "./source/source.js";

const work = mkdtempSync(join(tmpdir(), "opcat-composite-"));
after(() => rmSync(work, { recursive: true, force: true }));

const bundle = (pkg: string, v: string): Bundle => ({
  schema: "olm.bundle",
  name: `${pkg}.v${v}`,
  package: pkg,
  image: `quay.io/x/${pkg}:v${v}`,
  properties: loadText(
    JSON.stringify({
      schema: "olm.bundle",
      name: "n",
      properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }],
    }),
    "-",
  ).config.bundles[0].properties,
  relatedImages: [],
});

/** Answers `quay.io/x/<pkg>:v<version>` with a bundle of that package and version. */
function fakeSource(): BundleSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    render(image: string): Promise<RenderedBundle> {
      calls.push(image);
      const m = /^quay\.io\/x\/([a-z-]+):v(.+)$/.exec(image);
      if (!m)
        return Promise.reject(
          new OpcatError("IMAGE_PULL", `render reference ${JSON.stringify(image)}: failed to pull image`, {
            kind: "io",
          }),
        );
      return Promise.resolve(bundle(m[1], m[2]));
    },
  };
}

const contribDir = join(work, "contrib");
mkdirSync(join(contribDir, "templates"), { recursive: true });
writeFileSync(
  join(contribDir, "templates", "basic.yaml"),
  `schema: olm.template.basic
entries:
- schema: olm.package
  name: alpha
  defaultChannel: stable
- schema: olm.channel
  package: alpha
  name: stable
  entries:
  - name: alpha.v1.0.0
  - name: alpha.v1.1.0
    replaces: alpha.v1.0.0
- schema: olm.bundle
  image: quay.io/x/alpha:v1.0.0
- schema: olm.bundle
  image: quay.io/x/alpha:v1.1.0
`,
);
// The plain FBC stream opm's basic template read when the composite template existed.
writeFileSync(
  join(contribDir, "templates", "legacy-basic.yaml"),
  `---
schema: olm.package
name: gamma
defaultChannel: stable
---
schema: olm.channel
package: gamma
name: stable
entries:
- name: gamma.v0.1.0
---
schema: olm.bundle
image: quay.io/x/gamma:v0.1.0
`,
);
writeFileSync(
  join(contribDir, "templates", "semver.yaml"),
  "schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/x/beta:v2.0.0\n  - image: quay.io/x/beta:v2.1.0\n",
);
writeFileSync(
  join(contribDir, "templates", "raw.json"),
  [
    { schema: "olm.package", name: "delta", defaultChannel: "fast" },
    { schema: "olm.channel", package: "delta", name: "fast", entries: [{ name: "delta.v3.0.0" }] },
    {
      schema: "olm.bundle",
      name: "delta.v3.0.0",
      package: "delta",
      image: "quay.io/x/delta:v3.0.0",
      properties: [{ type: "olm.package", value: { packageName: "delta", version: "3.0.0" } }],
    },
  ]
    .map((b) => JSON.stringify(b))
    .join("\n"),
);
const script = join(contribDir, "gen.mjs");
// the script's one long line
const genBlobs =
  'for (const b of [{ schema: "olm.package", name: pkg, defaultChannel: "stable" }, ' +
  '{ schema: "olm.channel", package: pkg, name: "stable", entries: [{ name: pkg + ".v" + v }] }, ' +
  '{ schema: "olm.bundle", name: pkg + ".v" + v, package: pkg, image: "quay.io/x/" + pkg + ":v" + v, ' +
  'properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }] }]) console.log(JSON.stringify(b));';
writeFileSync(
  script,
  `const [pkg, v] = process.argv.slice(2);
${genBlobs}
if (pkg === "fail") process.exit(3);
`,
);

const catalogs = (wd1: string, wd2: string): string => `schema: olm.composite.catalogs
catalogs:
- name: v4.16
  destination:
    workingDir: ${wd1}
  builders:
  - olm.builder.basic
  - olm.builder.semver
  - olm.builder.raw
  - olm.builder.custom
- name: v4.17
  destination:
    workingDir: ${wd2}
  builders:
  - olm.builder.semver
  - olm.builder.custom
`;

const component = (
  name: string,
  path: string,
  schema: string,
  config: Record<string, unknown>,
): Record<string, unknown> => ({
  name,
  destination: { path },
  strategy: { name: "build", template: { schema, config } },
});
const contributions = (...components: Record<string, unknown>[]): string =>
  JSON.stringify({ schema: "olm.composite", components });

function opts(over: Partial<CompositeOptions>): CompositeOptions {
  return {
    catalogs: catalogs("wd/a", "wd/b"),
    contributions: contributions(),
    contributionDir: contribDir,
    source: fakeSource(),
    cwd: work,
    ...over,
  };
}

test("two catalogs, every builder: files written to <workingDir>/<path>/<output>, validated", async () => {
  const cwd = mkdtempSync(join(work, "run-"));
  const src = fakeSource();
  const r = await renderCompositeTemplate(
    opts({
      cwd,
      source: src,
      output: "yaml",
      contributions: contributions(
        component("v4.16", "alpha", "olm.builder.basic", { input: "templates/basic.yaml", output: "catalog.yaml" }),
        component("v4.16", "gamma", "olm.builder.basic", {
          input: "templates/legacy-basic.yaml",
          output: "catalog.yaml",
        }),
        component("v4.16", "beta", "olm.builder.semver", { input: "templates/semver.yaml", output: "catalog.yaml" }),
        component("v4.16", "delta", "olm.builder.raw", { input: "templates/raw.json", output: "catalog.yaml" }),
        component("v4.17", "epsilon", "olm.builder.custom", {
          command: "node",
          args: [script, "epsilon", "1.2.3"],
          output: "catalog.yaml",
        }),
        component("v4.17", "beta", "olm.builder.semver", {
          Input: join(contribDir, "templates/semver.yaml"),
          Output: "out.yaml",
        }),
      ),
    }),
  );
  assert.deepEqual(
    r.components.map((c) => c.file),
    [
      "wd/a/alpha/catalog.yaml",
      "wd/a/gamma/catalog.yaml",
      "wd/a/beta/catalog.yaml",
      "wd/a/delta/catalog.yaml",
      "wd/b/epsilon/catalog.yaml",
      "wd/b/beta/out.yaml",
    ],
  );
  const read = (f: string): string => readFileSync(join(cwd, f), "utf8");
  assert.match(read("wd/a/alpha/catalog.yaml"), /^---\ndefaultChannel: stable\nname: alpha\nschema: olm.package\n/);
  assert.match(read("wd/a/gamma/catalog.yaml"), /image: quay\.io\/x\/gamma:v0\.1\.0\nname: gamma\.v0\.1\.0/);
  assert.match(read("wd/a/beta/catalog.yaml"), /defaultChannel: stable-v2\.1/);
  assert.match(read("wd/b/epsilon/catalog.yaml"), /name: epsilon\.v1\.2\.3/);
  assert.deepEqual(src.calls, [
    "quay.io/x/alpha:v1.0.0",
    "quay.io/x/alpha:v1.1.0",
    "quay.io/x/gamma:v0.1.0",
    "quay.io/x/beta:v2.0.0",
    "quay.io/x/beta:v2.1.0",
    "quay.io/x/beta:v2.0.0",
    "quay.io/x/beta:v2.1.0",
  ]);
});

test("the semver builder follows semverSkips (default cumulative, as today's opm)", async () => {
  // Three Y-streams of one major: the last head skips the earlier Y-streams only when cumulative.
  writeFileSync(
    join(contribDir, "templates", "semver-y.yaml"),
    "schema: olm.semver\nGenerateMinorChannels: false\nstable:\n  bundles:\n  - image: quay.io/x/zeta:v1.0.0\n" +
      "  - image: quay.io/x/zeta:v1.0.1\n  - image: quay.io/x/zeta:v1.1.0\n  - image: quay.io/x/zeta:v1.2.0\n",
  );
  const text = readFileSync(join(contribDir, "templates", "semver-y.yaml"), "utf8");
  const outputs = new Map<string, string>();
  for (const mode of [undefined, "cumulative", "y-stream"] as const) {
    const cwd = mkdtempSync(join(work, "run-"));
    await renderCompositeTemplate(
      opts({
        cwd,
        output: "yaml",
        semverSkips: mode,
        contributions: contributions(
          component("v4.16", "zeta", "olm.builder.semver", {
            input: "templates/semver-y.yaml",
            output: "catalog.yaml",
          }),
        ),
      }),
    );
    const written = readFileSync(join(cwd, "wd/a/zeta/catalog.yaml"), "utf8");
    outputs.set(String(mode), written);
    // The same channels as the semver template rendered on its own in that mode.
    const direct = await renderSemverTemplate(text, fakeSource(), { skips: mode });
    const got = loadText(written, "catalog.yaml").config.channels;
    assert.deepEqual(
      got.map((c) => [c.name, c.entries]),
      direct.channels.map((c) => [c.name, c.entries]),
    );
  }
  assert.equal(outputs.get("undefined"), outputs.get("cumulative"));
  assert.notEqual(outputs.get("y-stream"), outputs.get("cumulative"));
});

test("JSON output by default", async () => {
  const cwd = mkdtempSync(join(work, "run-"));
  await renderCompositeTemplate(
    opts({
      cwd,
      contributions: contributions(
        component("v4.16", "delta", "olm.builder.raw", { input: "templates/raw.json", output: "catalog.json" }),
      ),
    }),
  );
  assert.match(readFileSync(join(cwd, "wd/a/delta/catalog.json"), "utf8"), /^\{\n {4}"schema": "olm.package",/);
});

async function error(o: Partial<CompositeOptions>): Promise<string> {
  try {
    await renderCompositeTemplate(opts({ cwd: mkdtempSync(join(work, "err-")), ...o }));
  } catch (e) {
    if (e instanceof OpcatError) return e.message;
    throw e;
  }
  return "no error";
}

test("opm's errors: schemas, catalog fields, builders, components", async () => {
  assert.equal(
    await error({ catalogs: "schema: olm.composite\n" }),
    `catalog configuration file has unknown schema, should be "olm.composite.catalogs"`,
  );
  assert.equal(
    await error({ contributions: "schema: olm.composite.catalogs\n" }),
    `composite configuration file has unknown schema, should be "olm.composite"`,
  );
  assert.equal(await error({ catalogs: "" }), "decoding catalog config: EOF");
  assert.equal(
    await error({ contributions: "schema: [\n" }).then((m) => m.startsWith("decoding composite config: ")),
    true,
  );
  assert.equal(
    await error({ catalogs: "schema: olm.composite.catalogs\ncatalogs: 3\n" }),
    "unmarshalling catalog config: json: cannot unmarshal number into " +
      "Go struct field CatalogConfig.Catalogs of type []composite.Catalog",
  );
  assert.equal(
    await error({
      catalogs:
        "schema: olm.composite.catalogs\ncatalogs:\n- name: a\n" +
        "  builders: [olm.builder.raw]\n- name: b\n  destination: {workingDir: ''}\n",
    }),
    "catalog configuration file field validation failed: \nCatalog a:\n" +
      "  - destination.workingDir must not be an empty string\n\n" +
      "Catalog b:\n  - destination.workingDir must not be an empty string\n",
  );
  assert.equal(
    await error({
      catalogs:
        "schema: olm.composite.catalogs\ncatalogs:\n- name: a\n" +
        "  destination: {workingDir: x}\n  builders: [olm.builder.nope]\n",
    }),
    `getting builder "olm.builder.nope" for catalog "a": unknown schema "olm.builder.nope"`,
  );
  assert.equal(
    await error({ contributions: contributions(component("v9", "p", "olm.builder.raw", {})) }),
    `building component "v9": component does not exist in the ` +
      `catalog configuration. Available components are: [v4.16 v4.17]`,
  );
  assert.equal(
    await error({ contributions: contributions(component("v4.17", "p", "olm.builder.raw", {})) }),
    `building component "v4.17": no builder found for template schema "olm.builder.raw"`,
  );
});

test("opm's errors: builder configurations, inputs, commands, validation", async () => {
  const one = (schema: string, config: Record<string, unknown>, name = "v4.16"): Promise<string> =>
    error({ contributions: contributions(component(name, "p", schema, config)) });
  assert.equal(
    await one("olm.builder.basic", {}),
    `building component "v4.16": basic template configuration is invalid: basic template ` +
      `config must have a non-empty input (templateDefinition.config.input),basic ` +
      `template config must have a non-empty output (templateDefinition.config.output)`,
  );
  assert.equal(
    await one("olm.builder.raw", { input: "x" }),
    `building component "v4.16": raw template configuration is invalid: raw ` +
      `template config must have a non-empty output (templateDefinition.config.output)`,
  );
  assert.equal(
    await one("olm.builder.custom", { output: "o" }),
    `building component "v4.16": custom template configuration is invalid: custom ` +
      `template config must have a non-empty command (templateDefinition.config.command)`,
  );
  assert.equal(
    await one("olm.builder.semver", { input: "a", output: "b", extra: 1 }),
    `building component "v4.16": unmarshalling semver template config: error ` +
      `unmarshaling JSON: while decoding JSON: json: unknown field "extra"`,
  );
  assert.equal(
    await one("olm.builder.raw", { input: "missing.json", output: "o" }),
    `building component "v4.16": error reading raw input file: open ${contribDir}/missing.json: ` +
      `no such file or directory (tried contribution-local path: "${contribDir}")`,
  );
  assert.equal(
    await error({
      contributionDir: "",
      contributions: contributions(component("v4.16", "p", "olm.builder.raw", { input: "missing.json", output: "o" })),
    }),
    `building component "v4.16": error reading raw input file: open missing.json: no such file or directory`,
  );
  assert.equal(
    await one("olm.builder.custom", { command: "node", args: [script, "fail", "1.0.0"], output: "o" }).then((m) =>
      m.replace(/"[^"]*node /, '"node '),
    ),
    `building component "v4.16": running command "node ${script} fail 1.0.0": exit status 3: [${[
      ...Buffer.from(
        [
          { schema: "olm.package", name: "fail", defaultChannel: "stable" },
          { schema: "olm.channel", package: "fail", name: "stable", entries: [{ name: "fail.v1.0.0" }] },
          {
            schema: "olm.bundle",
            name: "fail.v1.0.0",
            package: "fail",
            image: "quay.io/x/fail:v1.0.0",
            properties: [{ type: "olm.package", value: { packageName: "fail", version: "1.0.0" } }],
          },
        ]
          .map((b) => JSON.stringify(b) + "\n")
          .join(""),
      ),
    ].join(" ")}]`,
  );
  assert.equal(
    await one("olm.builder.custom", { command: "no-such-command-opcat", output: "o" }),
    `building component "v4.16": running command "no-such-command-opcat": ` +
      `exec: "no-such-command-opcat": executable file not found in $PATH: []`,
  );
  assert.equal(
    await one("olm.builder.custom", { command: "node", args: ["-e", "console.log('{')"], output: "o" }).then((m) =>
      m.startsWith(`building component "v4.16": error parsing custom command output: node'-e'console.log('{'), `),
    ),
    true,
  );
  assert.equal(
    await one("olm.builder.basic", { input: "templates/basic.yaml", output: "o.yaml" }).then((m) => m),
    "no error",
  );
  // A rendered catalog that is not valid fails validation (the default channel has no channel).
  writeFileSync(
    join(contribDir, "templates", "invalid.json"),
    JSON.stringify({ schema: "olm.package", name: "bad", defaultChannel: "nope" }),
  );
  const v = await one("olm.builder.raw", { input: "templates/invalid.json", output: "o.json" });
  assert.match(v, /^validating component "v4\.16": validation failure in path "wd\/a\/p": /);
  const skipped = await error({
    validate: false,
    contributions: contributions(
      component("v4.16", "p", "olm.builder.raw", { input: "templates/invalid.json", output: "o.json" }),
    ),
  });
  assert.equal(skipped, "no error");
  assert.equal(
    await one("olm.builder.basic", { input: "templates/raw.json", output: "o" }),
    `building component "v4.16": error rendering basic template: unexpected fields present in basic template bundle`,
  );
});

test("property: every component lands in <workingDir>/<path>/<output> of its own catalog", async () => {
  const seg = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom("v4.16", "v4.17"), seg, seg), { minLength: 1, maxLength: 5 }),
      async (comps) => {
        const cwd = mkdtempSync(join(work, "prop-"));
        const r = await renderCompositeTemplate(
          opts({
            cwd,
            validate: false,
            contributions: contributions(
              ...comps.map(([cat, path, out]) =>
                component(cat, path, "olm.builder.custom", {
                  command: "node",
                  args: [script, "pkg", "1.0.0"],
                  output: `${out}.json`,
                }),
              ),
            ),
          }),
        );
        comps.forEach(([cat, path, out], i) => {
          const file = `${cat === "v4.16" ? "wd/a" : "wd/b"}/${path}/${out}.json`;
          assert.equal(r.components[i].file, file);
          assert.ok(existsSync(join(cwd, file)));
        });
      },
    ),
    { numRuns: 10 },
  );
});
