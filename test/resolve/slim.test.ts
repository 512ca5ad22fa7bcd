/**
 * A catalog slimmed for resolution (src/resolve/slim.ts) answers every resolution as the whole catalog
 * does: the community v4.16 (every bundle carries its manifests) and v4.20 catalogs, as the cluster's
 * resolver worker receives them (a served revision's JSON Lines).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadText, type LoadResult } from "../../src/fbc/load.js";
import { emptyConfig } from "../../src/fbc/types.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import {
  CatalogSet,
  forEachSlimLineForResolution,
  resolve,
  slimCatalogChunksForResolution,
  slimCatalogForResolution,
} from "../../src/resolve/index.js";
import { minKubeVersionOf } from "../../src/resolve/catalog.js";
import { slimLineForResolution } from "../../src/resolve/slim.js";
import { CatalogRevision } from "../../src/serve/index.js";
import { COMMUNITY, requireShared } from "../shared.js";

const opts = requireShared(join(COMMUNITY, "catalogs", "v4.16"));

/** `buf` in pieces of `size` bytes, each copied into one reused buffer (as a file is read). */
function* piecesOf(buf: Buffer, size: number): Generator<Uint8Array> {
  const reused = Buffer.alloc(size);
  for (let i = 0; i < buf.length; i += size) {
    const n = buf.copy(reused, 0, i, i + size);
    yield reused.subarray(0, n);
  }
}

function setOf(texts: { name: string; text: string }[]): CatalogSet {
  return new CatalogSet(
    texts.map(({ name, text }, i) => {
      const loaded = loadText(text, `${name}.jsonl`);
      const v = validateCatalog(loaded.config);
      assert.deepEqual([...loaded.problems, ...v.problems], []);
      return { name, priority: i, model: v.model, others: loaded.config.others };
    }),
  );
}

test(
  "the slimmed community catalogs resolve every package as the whole ones, with the same minimum Kubernetes versions",
  opts,
  async () => {
    const full: { name: string; text: string }[] = [];
    for (const v of ["v4.16", "v4.20"]) {
      const r = await CatalogRevision.load(join(COMMUNITY, "catalogs", v), { catalog: v, serial: 1, grpc: false });
      assert.ok(r.ok);
      full.push({ name: v, text: r.revision.jsonl.toString("utf8") });
    }
    const slim = full.map((c) => ({ name: c.name, text: slimCatalogForResolution(c.text) }));
    // read a piece at a time (as the resolver worker reads a revision's file), the same text
    for (const [i, c] of full.entries()) {
      assert.equal(slimCatalogChunksForResolution(piecesOf(Buffer.from(c.text), 65_536)), slim[i].text);
      // and loaded a line at a time into one result (as the worker does), the same catalog
      const byLine: LoadResult = { config: emptyConfig(), problems: [], files: 0, bytes: 0 };
      const at = { line: 0, index: 0 };
      forEachSlimLineForResolution(piecesOf(Buffer.from(c.text), 65_536), (l) => {
        loadText(l, "c.jsonl", byLine, undefined, undefined, at);
        at.line++;
        if (l.trim() !== "") at.index++;
      });
      assert.deepEqual(byLine.problems, []);
      assert.deepEqual(byLine.config, loadText(slim[i].text, "c.jsonl").config);
    }
    // v4.16's bundles carry their manifests: most of its bytes go
    assert.ok(slim[0].text.length < full[0].text.length / 10, `${slim[0].text.length} of ${full[0].text.length}`);
    assert.equal(slim[1].text, full[1].text);
    const a = setOf(full);
    const b = setOf(slim);
    assert.equal(b.entities.length, a.entities.length);
    let withVersion = 0;
    for (let i = 0; i < a.entities.length; i++) {
      assert.equal(b.entities[i].name, a.entities[i].name);
      assert.equal(minKubeVersionOf(b.entities[i]), minKubeVersionOf(a.entities[i]), a.entities[i].name);
      if (minKubeVersionOf(a.entities[i])) withVersion++;
    }
    assert.ok(withVersion > 100, `${withVersion} bundles name a minimum Kubernetes version`);
    const pkgs = [...new Set(a.entities.map((e) => e.package))].sort();
    const inputs = pkgs.map((p) => ({
      name: p,
      inputClass: "subscription",
      constraints: [{ type: "olm.catalog", value: { package: p } }],
    }));
    for (const cluster of [undefined, { kubernetesVersion: "1.19.0" }, { kubernetesVersion: "1.25.0" }]) {
      const ra = resolve({ catalogs: a, inputs, ...(cluster ? { cluster } : {}) });
      const rb = resolve({ catalogs: b, inputs, ...(cluster ? { cluster } : {}) });
      assert.deepEqual(rb, ra);
    }
  },
);

test("a line that JavaScript would not write back as it is stays as it is", () => {
  const big =
    '{"name":"b","package":"p","properties":[{"type":"olm.bundle.object","value":{"data":"e30="}},' +
    '{"type":"x","value":12345678901234567890}],"schema":"olm.bundle"}';
  assert.equal(slimLineForResolution(big), big);
  const csv = Buffer.from('{"kind":"ClusterServiceVersion","spec":{"minKubeVersion":"1.21.0","x":"y"}}').toString(
    "base64",
  );
  const crd = Buffer.from('{"kind":"CustomResourceDefinition"}').toString("base64");
  const line =
    `{"name":"b","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},` +
    `{"type":"olm.bundle.object","value":{"data":"${crd}"}},{"type":"olm.bundle.object","value":{"data":"${csv}"}}],` +
    `"schema":"olm.bundle"}`;
  const out = JSON.parse(slimLineForResolution(line)) as { properties: { type: string; value: { data?: string } }[] };
  assert.deepEqual(
    out.properties.map((p) => p.type),
    ["olm.package", "olm.bundle.object"],
  );
  assert.deepEqual(JSON.parse(Buffer.from(out.properties[1].value.data!, "base64").toString()), {
    kind: "ClusterServiceVersion",
    spec: { minKubeVersion: "1.21.0" },
  });
});

test("a catalog slimmed a piece at a time is the text slimmed whole, wherever the pieces are cut", () => {
  const csv = Buffer.from('{"kind":"ClusterServiceVersion","spec":{"minKubeVersion":"1.21.0","x":"é"}}').toString(
    "base64",
  );
  const lines = [
    '{"defaultChannel":"stable","name":"p","schema":"olm.package","description":"Überwachung ✓ 📦"}',
    `{"name":"p.v1","package":"p","properties":[{"type":"olm.bundle.object","value":{"data":"${csv}"}}],` +
      '"schema":"olm.bundle"}',
    "",
    '{"name":"stable","package":"p","schema":"olm.channel","entries":[{"name":"p.v1"}]}',
  ];
  for (const text of [lines.join("\n"), `${lines.join("\n")}\n`, "", "\n", lines[0]]) {
    const whole = slimCatalogForResolution(text);
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 5, 64, bytes.length || 1])
      assert.equal(slimCatalogChunksForResolution(piecesOf(bytes, size)), whole, `pieces of ${size}`);
  }
  assert.notEqual(slimCatalogForResolution(lines.join("\n")), lines.join("\n"));
});
