/**
 * The substitutes template against vectors produced by operator-registry's own
 * alpha/template/substitutes (scripts/oracle/substitutes), plus properties of the graph rewrite.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import { validateCatalog } from "../fbc/validate.js";
import { formatCatalog } from "../fbc/write.js";
import type { JsonValue } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import { renderTemplate } from "./index.js";
import { renderSubstitutesTemplate } from "./substitutes.js";
import type { BundleSource, RenderedBundle } from "./source/source.js";

const DIR = join(import.meta.dirname, "testdata", "substitutes");
const input = JSON.parse(readFileSync(join(DIR, "cases.json"), "utf8")) as {
  bundles: Record<string, JsonValue>;
  cases: { name: string; template: string }[];
};
const expected = JSON.parse(readFileSync(join(DIR, "expected.json"), "utf8")) as {
  name: string;
  output?: string;
  error?: string;
}[];

/** Answers images from a map of bundle blobs, as the oracle's mock renderer does. */
function mapSource(bundles: Record<string, JsonValue>): BundleSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    render(image: string): Promise<RenderedBundle> {
      calls.push(image);
      const b = bundles[image];
      if (b === undefined)
        return Promise.reject(
          new OpcatError("IMAGE_NOT_FOUND", `render reference ${goQuote(image)}: image not found`, { kind: "io" }),
        );
      const res = loadText(JSON.stringify(b), "-");
      const out = res.config.bundles[0];
      delete out.loc;
      return Promise.resolve(out);
    },
  };
}

/** opm prints model validation errors as a tree; opcat reports the first problem, the tree's leaf. */
function treeLeaf(msg: string): string {
  const lines = msg.split("\n");
  if (lines.length === 1) return msg;
  const head = lines[0].slice(
    0,
    lines[0].indexOf("resulting config is not valid FBC: ") + "resulting config is not valid FBC: ".length,
  );
  return head + lines[lines.length - 1].replace(/^[\s│└├─]+/, "");
}

for (const [i, c] of input.cases.entries()) {
  test(`substitutes oracle vector: ${c.name}`, async () => {
    const want = expected[i];
    assert.equal(want.name, c.name);
    let got: { output?: string; error?: string };
    try {
      const cfg = await renderSubstitutesTemplate(c.template, mapSource(input.bundles));
      got = { output: formatCatalog(cfg, "json") };
    } catch (e) {
      if (!(e instanceof OpcatError)) throw e;
      got = { error: e.message };
    }
    if (want.error !== undefined) {
      assert.equal(got.error, want.error.includes("└──") ? treeLeaf(want.error) : want.error);
    } else {
      assert.equal(got.error, undefined);
      assert.equal(got.output, want.output ?? "");
    }
  });
}

test("renderTemplate routes olm.template.substitutes (type detected or given) and prefixes errors", async () => {
  const src = mapSource(input.bundles);
  const ok = input.cases.find((c) => c.name === "single substitution with replaces");
  assert.ok(ok);
  const cfg = await renderTemplate(ok.template, src);
  assert.equal(cfg.bundles.at(-1)?.name, "a.v1.1.1");
  const typed = await renderTemplate(ok.template, src, { type: "substitutes" });
  assert.equal(typed.bundles.length, cfg.bundles.length);
  await assert.rejects(
    renderTemplate(JSON.stringify({ schema: "olm.template.basic" }), src, { type: "substitutes" }),
    (e: OpcatError) =>
      e.message ===
      `rendering template: render: unable to parse template: template has ` +
        `unknown schema ("olm.template.basic"), should be "olm.template.substitutes"`,
  );
});

test("a render failure keeps the source's exit code; the substitute is rendered through the source", async () => {
  const src = mapSource(input.bundles);
  const c = input.cases.find((x) => x.name === "error: render failure");
  assert.ok(c);
  await assert.rejects(
    renderSubstitutesTemplate(c.template, src),
    (e: OpcatError) => e.kind === "io" && e.code === "IMAGE_NOT_FOUND",
  );
});

/** A linear channel a.v1.0.0 … a.v1.(n-1).0, each replacing the previous one, with optional skips. */
function linear(n: number, skipsOf: (i: number) => number[]): string {
  const entries = [];
  const blobs: JsonValue[] = [{ schema: "olm.package", name: "a", defaultChannel: "stable" }];
  for (let i = 0; i < n; i++) {
    const e: Record<string, JsonValue> = { name: `a.v1.${i}.0` };
    if (i > 0) e.replaces = `a.v1.${i - 1}.0`;
    const skips = skipsOf(i).filter((k) => k < i - 1);
    if (skips.length > 0) e.skips = skips.map((k) => `a.v1.${k}.0`);
    entries.push(e);
    blobs.push({
      schema: "olm.bundle",
      name: `a.v1.${i}.0`,
      package: "a",
      image: `quay.io/a/a:1.${i}.0`,
      properties: [{ type: "olm.package", value: { packageName: "a", version: `1.${i}.0` } }],
    });
  }
  blobs.splice(1, 0, { schema: "olm.channel", name: "stable", package: "a", entries });
  return JSON.stringify(blobs);
}

test(
  "property: substituting any bundle of a valid linear graph keeps it valid, drops the base " +
    "from every edge but the substitute's, and keeps the head unless the head is substituted",
  async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 8 })
          .chain((n) =>
            fc.tuple(
              fc.constant(n),
              fc.integer({ min: 0, max: n - 1 }),
              fc.array(fc.array(fc.nat({ max: n }), { maxLength: 3 }), { minLength: n, maxLength: n }),
            ),
          ),
        async ([n, k, skips]) => {
          const entries = JSON.parse(linear(n, (i) => skips[i])) as JsonValue[];
          // Skips can strand bundles: only valid graphs are of interest.
          fc.pre(
            validateCatalog(loadText(entries.map((e) => JSON.stringify(e)).join("\n"), "-").config).problems.length ===
              0,
          );
          const template = JSON.stringify({
            schema: "olm.template.substitutes",
            entries,
            substitutions: [{ name: "quay.io/a/a:sub", base: `a.v1.${k}.0` }],
          });
          const sub = {
            schema: "olm.bundle",
            name: `a.v1.${k}.1`,
            package: "a",
            image: "quay.io/a/a:sub",
            properties: [{ type: "olm.package", value: { packageName: "a", version: `1.${k}.1` } }],
          };
          const cfg = await renderSubstitutesTemplate(template, mapSource({ "quay.io/a/a:sub": sub }));
          assert.equal(validateCatalog(cfg).problems.length, 0);
          const ch = cfg.channels[0];
          const entriesOut = ch.entries ?? [];
          assert.equal(entriesOut.length, n + 1);
          const base = `a.v1.${k}.0`;
          for (const e of entriesOut.slice(0, n)) {
            assert.notEqual(e.replaces, base);
            if (e.name === base) assert.deepEqual([e.replaces, e.skips.length, e.skipRange], ["", 0, ""]);
          }
          const last = entriesOut[n];
          assert.equal(last.name, `a.v1.${k}.1`);
          assert.ok(last.skips.includes(base));
          assert.equal(last.replaces, k > 0 ? `a.v1.${k - 1}.0` : "");
        },
      ),
      { numRuns: 60 },
    );
  },
);
