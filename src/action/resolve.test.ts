// The resolver actions called directly on the bundled example catalogs: results returned, nothing printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { imagesAction, parseCatalogFlag, queryAction, resolveAction } from "./resolve.js";
import { silent } from "../../test/shared.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CATALOG = join(ROOT, "examples", "catalog");
const INPUT = join(ROOT, "examples", "resolve", "input.yaml");

test("parseCatalogFlag: name=ref, or the last path segment as the name", () => {
  assert.deepEqual(parseCatalogFlag("prod=quay.io/x/cat:v1"), { name: "prod", ref: "quay.io/x/cat:v1" });
  assert.deepEqual(parseCatalogFlag("/a/b/catalog/"), { name: "catalog", ref: "/a/b/catalog/" });
});

test("resolveAction: the example input resolves, with its dependency; nothing is printed", async () => {
  let asked = 0;
  const { value: rs, written } = await silent(() =>
    resolveAction({
      catalogs: [CATALOG],
      inputs: [INPUT],
      pull: async () => {
        asked++;
        return {};
      },
    }),
  );
  assert.equal(written, "");
  assert.equal(asked, 1);
  assert.equal(rs.resolved, true);
  assert.deepEqual(rs.bundles.map((b) => b.package).sort(), ["cache-operator", "etcd-example"]);
});

test("resolveAction: input errors come before catalog and access errors", async () => {
  const { value: err, written } = await silent(() =>
    resolveAction({
      inputs: [join(ROOT, "no-such-input.yaml")],
      priorities: ["bad"],
      pull: () => Promise.reject(new Error("access asked")),
    }).catch((e: unknown) => e),
  );
  assert.equal(written, "");
  assert.ok(err instanceof OpcatError);
  assert.equal(err.code, "IO_ERROR");
  assert.equal(err.kind, "usage");
  await assert.rejects(resolveAction({ inputs: [INPUT] }), { code: "USAGE_CATALOG" });
});

test("queryAction and imagesAction: matches and images of the example catalog; nothing is printed", async () => {
  const { value: matches, written } = await silent(() =>
    queryAction('{"package":{"packageName":"etcd-example","versionRange":">=0.0.0"}}', {
      catalogs: [`ex=${CATALOG}`],
    }),
  );
  assert.equal(written, "");
  assert.ok(matches.length > 0);
  assert.ok(matches.every((m) => m.catalog === "ex" && m.package === "etcd-example"));
  await assert.rejects(queryAction("{bad", { catalogs: [CATALOG] }), { code: "RESOLVE_QUERY_INVALID", kind: "usage" });
  const { value: images, written: w2 } = await silent(() => imagesAction({ catalogs: [CATALOG] }));
  assert.equal(w2, "");
  assert.ok(images.some((i) => i.image.length > 0));
  await assert.rejects(imagesAction({}), { code: "USAGE_INPUT" });
});
