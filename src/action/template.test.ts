// The template actions called directly, offline: bundle images answered by a --reuse-style catalog.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { loadFile } from "../fbc/load.js";
import { normalizeForRender } from "../fbc/render.js";
import type { DeclarativeConfig } from "../fbc/types.js";
import { formatCatalog } from "../fbc/write.js";
import { convertTemplateAction, renderTemplateAction, type TemplateProgress } from "./template.js";
import { silent } from "../../test/shared.js";

const GRAPH = join(dirname(fileURLToPath(import.meta.url)), "..", "template", "testdata", "graph");
const yaml = (cfg: DeclarativeConfig): string => formatCatalog(normalizeForRender(cfg), "yaml");

test("renderTemplateAction: a basic template (type detected) renders back to its catalog, offline", async () => {
  const progress: TemplateProgress[] = [];
  const { value: cfg, written } = await silent(() =>
    renderTemplateAction(
      { file: join(GRAPH, "convert-basic-expected.yaml") },
      { reuse: join(GRAPH, "convert-basic-input.json"), offline: true, onProgress: (p) => progress.push(p) },
    ),
  );
  assert.equal(written, "");
  assert.deepEqual(progress, []);
  assert.equal(yaml(cfg), yaml(loadFile(join(GRAPH, "convert-basic-input.json")).config));
});

test("renderTemplateAction: template text, graph type, tags listed from the reused catalog", async () => {
  const { value: cfg, written } = await silent(() =>
    renderTemplateAction(
      { type: "graph", text: readFileSync(join(GRAPH, "seed-template.yaml"), "utf8") },
      { reuse: join(GRAPH, "seed-bundles.yaml"), offline: true },
    ),
  );
  assert.equal(written, "");
  assert.match(
    yaml(cfg),
    /- name: example\.v1\.0\.1\n  replaces: example\.v0\.3\.2\n  skips:\n  - example\.v1\.0\.0\n/,
  );
});

test("renderTemplateAction: failures are OpcatErrors with a kind, nothing printed", async () => {
  const missing = join(GRAPH, "no-such-template.yaml");
  const { value: e, written } = await silent(() =>
    renderTemplateAction({ file: missing }, { reuse: join(GRAPH, "seed-bundles.yaml"), offline: true }).then(
      () => undefined,
      (err: unknown) => err,
    ),
  );
  assert.equal(written, "");
  assert.ok(e instanceof OpcatError);
  assert.equal(e.kind, "usage");
  assert.equal(e.message, `unable to open "${missing}": open ${missing}: no such file or directory`);
});

test("convertTemplateAction: a catalog as a basic template (opm's converter output)", async () => {
  const { value: text, written } = await silent(() =>
    convertTemplateAction(join(GRAPH, "convert-basic-input.json"), { to: "basic", output: "yaml" }),
  );
  assert.equal(written, "");
  assert.equal(text, readFileSync(join(GRAPH, "convert-basic-expected.yaml"), "utf8"));
});
