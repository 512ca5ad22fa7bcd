import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { limitsOf, parseSize, scanTree, treeDigest, UnpackError } from "./content.js";

test("parseSize: bytes, SI and binary quantities, with b/B and in any case; m is mega; the rest undefined", () => {
  assert.equal(parseSize("10mb"), 10_000_000);
  assert.equal(parseSize("10M"), 10_000_000);
  assert.equal(parseSize("10Mi"), 10 * 1024 ** 2);
  assert.equal(parseSize("64MiB"), 64 * 1024 ** 2);
  assert.equal(parseSize("1.5Gi"), 1.5 * 1024 ** 3);
  assert.equal(parseSize("500k"), 500_000);
  assert.equal(parseSize("1Ki"), 1024);
  assert.equal(parseSize("4096"), 4096);
  assert.equal(parseSize(4096), 4096);
  for (const bad of ["", "ten", "10 Xi", "-1", "10Mx", "1e3", null, {}]) assert.equal(parseSize(bad), undefined);
});

test("limitsOf: class parameters become limits; values that do not parse are reported, not used", () => {
  assert.deepEqual(limitsOf({ maxObjectSize: "10mb", maxBundleSize: "1Gi", maxBundleFiles: 5, pullTimeout: "90s" }), {
    limits: { maxObjectBytes: 10_000_000, maxBytes: 1024 ** 3, maxFiles: 5, pullTimeoutMs: 90_000 },
    problems: [],
  });
  const { limits, problems } = limitsOf({ maxObjectSize: "big", pullTimeout: "soon", maxBundleFiles: -1 });
  assert.deepEqual(limits, {});
  assert.equal(problems.length, 3);
  assert.deepEqual(limitsOf(undefined), { limits: {}, problems: [] });
});

function tree(build: (root: string) => void): string {
  const root = mkdtempSync(join(tmpdir(), "opcat-content-"));
  build(root);
  return root;
}

function refused(root: string, re: RegExp): void {
  try {
    assert.throws(
      () => scanTree(root),
      (e: unknown) => e instanceof UnpackError && e.reason === "InvalidContent" && !e.retryable && re.test(e.message),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("scanTree: a link chain whose text stays inside but whose path leaves the root is refused", () => {
  const outside = mkdtempSync(join(tmpdir(), "opcat-outside-"));
  try {
    refused(
      tree((r) => {
        symlinkSync(".", join(r, "d"));
        symlinkSync(`${"d/".repeat(12)}${"../".repeat(12)}${outside.slice(1)}`, join(r, "manifests"));
      }),
      /symlink "manifests" -> .* leads outside the content/,
    );
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
});

test("scanTree: absolute links, .. escapes, loops, links to nothing and through files are refused", () => {
  refused(
    tree((r) => symlinkSync("/etc", join(r, "abs"))),
    /is absolute/,
  );
  refused(
    tree((r) => {
      mkdirSync(join(r, "a"));
      symlinkSync("../..", join(r, "a", "up"));
    }),
    /leads outside the content/,
  );
  refused(
    tree((r) => {
      symlinkSync("y", join(r, "x"));
      symlinkSync("x", join(r, "y"));
    }),
    /loop/,
  );
  refused(
    tree((r) => symlinkSync("missing", join(r, "dangling"))),
    /leads to nothing/,
  );
  refused(
    tree((r) => {
      writeFileSync(join(r, "f"), "x");
      symlinkSync("f/..", join(r, "through"));
    }),
    /goes through a file/,
  );
});

test("scanTree: links inside the tree pass; treeDigest covers link targets and empty directories", () => {
  const base = (r: string) => {
    mkdirSync(join(r, "manifests"));
    writeFileSync(join(r, "manifests", "a.yaml"), "kind: ConfigMap\n");
  };
  const roots = [
    tree(base),
    tree((r) => {
      base(r);
      symlinkSync("manifests/a.yaml", join(r, "link"));
    }),
    tree((r) => {
      base(r);
      symlinkSync("manifests", join(r, "link"));
    }),
    tree((r) => {
      base(r);
      mkdirSync(join(r, "link"));
    }),
  ];
  try {
    const digests = roots.map((r) => treeDigest(r, scanTree(r)));
    assert.equal(new Set(digests).size, 4);
    assert.equal(treeDigest(roots[1]), digests[1], "the same tree, the same digest");
  } finally {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  }
});

test("scanTree: more bytes or entries than the limits is ContentTooLarge", () => {
  const root = tree((r) => {
    for (let i = 0; i < 5; i++) writeFileSync(join(r, `f${i}`), Buffer.alloc(100));
  });
  try {
    assert.throws(
      () => scanTree(root, { maxBytes: 499 }),
      (e: unknown) => (e as UnpackError).reason === "ContentTooLarge",
    );
    assert.throws(
      () => scanTree(root, { maxFiles: 4 }),
      (e: unknown) => (e as UnpackError).reason === "ContentTooLarge",
    );
    assert.equal(scanTree(root, { maxBytes: 500, maxFiles: 5 }).length, 5);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("scanTree: a name with a control character or a bidirectional override is refused, shown escaped", () => {
  const literal = (t: string) => new RegExp(t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  for (const name of ["evil\u001b[2J", "two\nlines", "cr\rhere", "rtl\u202etxt.yaml"])
    refused(
      tree((root) => {
        mkdirSync(join(root, "manifests"));
        writeFileSync(join(root, "manifests", name), "{}");
      }),
      literal(`the name ${JSON.stringify(`manifests/${name}`)} contains a control character`),
    );
});
