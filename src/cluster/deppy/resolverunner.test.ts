import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadText } from "../../fbc/load.js";
import { validateCatalog } from "../../fbc/validate.js";
import { CatalogSet, resolve, type Input } from "../../resolve/index.js";
import { ResolverRunner } from "./resolverunner.js";

const bundle = (pkg: string, version: string) => ({
  schema: "olm.bundle",
  name: `${pkg}.v${version}`,
  package: pkg,
  image: `example.com/${pkg}:v${version}`,
  properties: [{ type: "olm.package", value: { packageName: pkg, version } }],
});

/**
 * A catalog catalogd serves as it is: `good` passes opcat validate; `headless` has no defaultChannel and
 * a channel with two heads (1.0.0 → 1.0.1 → 1.2.0 and a lone 1.0.4), which opm refuses.
 */
const FBC = [
  { schema: "olm.package", name: "good", defaultChannel: "stable" },
  {
    schema: "olm.channel",
    name: "stable",
    package: "good",
    entries: [{ name: "good.v1.0.0" }, { name: "good.v1.1.0", replaces: "good.v1.0.0" }],
  },
  bundle("good", "1.0.0"),
  bundle("good", "1.1.0"),
  { schema: "olm.package", name: "headless" },
  {
    schema: "olm.channel",
    name: "stable",
    package: "headless",
    entries: [
      { name: "headless.v1.0.0" },
      { name: "headless.v1.0.1", replaces: "headless.v1.0.0" },
      { name: "headless.v1.2.0", replaces: "headless.v1.0.1" },
      { name: "headless.v1.0.4" },
    ],
  },
  ...["1.0.0", "1.0.1", "1.2.0", "1.0.4"].map((v) => bundle("headless", v)),
]
  .map((b) => JSON.stringify(b))
  .join("\n");

const input = (pkg: string): Input => ({
  name: pkg,
  inputClass: "subscription",
  constraints: [{ type: "olm.catalog", value: { name: "", package: pkg, channel: "stable" } }],
});

test("Deppy leaves out the packages opcat validate finds problems in; the others resolve", async () => {
  // the catalog as a whole is what catalogd serves: problems only in `headless`
  const v = validateCatalog(loadText(FBC, "c.jsonl").config);
  assert.ok(v.problems.length > 0);
  assert.ok(v.problems.every((p) => (p.blob?.schema === "olm.package" ? p.blob.name : p.blob?.package) === "headless"));
  // without leaving it out, the resolver would pick a head of the two-headed channel
  const unfiltered = new CatalogSet([{ name: "c", priority: 0, model: v.model, others: [] }]);
  assert.equal(resolve({ catalogs: unfiltered, inputs: [input("headless")] }).resolved, true);

  const runner = new ResolverRunner();
  try {
    const catalogs = [{ name: "c", priority: 0, digest: "sha256:test", jsonl: Buffer.from(FBC) }];
    const good = await runner.resolve(catalogs, { inputs: [input("good")] });
    assert.equal(good.resolved, true);
    assert.deepEqual(
      good.bundles.map((b) => b.name),
      ["good.v1.1.0"],
    );
    const headless = await runner.resolve(catalogs, { inputs: [input("headless")] });
    assert.equal(headless.resolved, false);
    assert.deepEqual(headless.bundles, []);
    const failed = headless.inputs[0].conditions.find((c) => c.type === "ResolutionFailed");
    assert.equal(failed?.status, "True");
    assert.match(failed?.message ?? "", /no operators found in package headless/);
  } finally {
    await runner.close();
  }
});

test("a catalog's content is read only when the worker lacks it; a released worker is sent it again", async () => {
  const runner = new ResolverRunner();
  let reads = 0;
  const catalogs = [
    {
      name: "c",
      priority: 0,
      digest: "sha256:test",
      jsonl: () => {
        reads++;
        return Buffer.from(FBC);
      },
    },
  ];
  try {
    const first = await runner.resolve(catalogs, { inputs: [input("good")] });
    assert.deepEqual(
      first.bundles.map((b) => b.name),
      ["good.v1.1.0"],
    );
    await runner.resolve(catalogs, { inputs: [input("good")] });
    assert.equal(reads, 1);
    await runner.release();
    const again = await runner.resolve(catalogs, { inputs: [input("good")] });
    assert.deepEqual(again.bundles, first.bundles);
    assert.equal(reads, 2);
  } finally {
    await runner.close();
  }
});

test("a catalog whose content cannot be read fails that resolution only", async () => {
  const runner = new ResolverRunner();
  try {
    const unreadable = [
      {
        name: "c",
        priority: 0,
        digest: "sha256:gone",
        jsonl: (): Uint8Array => {
          throw new Error("short read from the index file");
        },
      },
    ];
    await assert.rejects(runner.resolve(unreadable, { inputs: [input("good")] }), /short read from the index file/);
    const catalogs = [{ name: "c", priority: 0, digest: "sha256:test", jsonl: Buffer.from(FBC) }];
    assert.equal((await runner.resolve(catalogs, { inputs: [input("good")] })).resolved, true);
  } finally {
    await runner.close();
  }
});

test("a catalog given as a range of an open, unlinked file is read by the worker itself, same answers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-runner-"));
  const path = join(dir, "c.idx");
  const before = Buffer.from("not the catalog\n{}");
  const content = Buffer.from(FBC);
  writeFileSync(path, Buffer.concat([before, content, Buffer.from("\n{after}")]));
  const fd = openSync(path, "r");
  rmSync(dir, { recursive: true });
  const runner = new ResolverRunner();
  try {
    const inBytes = [{ name: "c", priority: 0, digest: "sha256:bytes", jsonl: content }];
    const file = { fd, start: before.length, length: content.length };
    const inFile = [{ name: "c", priority: 0, digest: "sha256:file", jsonl: () => ({ file, holder: {} }) }];
    for (const pkg of ["good", "headless"]) {
      const want = await runner.resolve(inBytes, { inputs: [input(pkg)] });
      assert.deepEqual(await runner.resolve(inFile, { inputs: [input(pkg)] }), want);
    }
    // a range the file does not hold fails that resolution only
    const past = { fd, start: before.length, length: content.length + 1000 };
    const beyond = [{ name: "c", priority: 0, digest: "sha256:past", jsonl: () => ({ file: past, holder: {} }) }];
    await assert.rejects(runner.resolve(beyond, { inputs: [input("good")] }), /short read/);
    assert.equal((await runner.resolve(inFile, { inputs: [input("good")] })).resolved, true);
  } finally {
    await runner.close();
    closeSync(fd);
  }
});
