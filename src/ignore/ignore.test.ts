import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { ERR_TOKEN_TOO_LONG, buildIgnoreMatcher, loadIgnoreMatcher } from "./index.js";
import { BAD_PATTERN, MATCH, fnmatch } from "./fnmatch.js";
import { toByteString, trimSpaceBytes } from "./bytes.js";
import { compareNames } from "./matcher.js";

interface Vectors {
  cases: { files: { dir: string; content: string }[]; paths: string[]; ignored: boolean[] }[];
  fnmatch: { pattern: string; name: string; result: "match" | "nomatch" | "bad" }[];
  tooLong: { n: number; tail: string; error: string }[];
}

const vectors = JSON.parse(readFileSync(new URL("./testdata/vectors.json", import.meta.url), "utf8")) as Vectors;

/** Checks a matcher against a table of [path, ignored] rows, reporting every mismatch at once. */
function check(files: { dir: string; content: string }[] | string, rows: [string, boolean][]): void {
  const m = buildIgnoreMatcher(typeof files === "string" ? [{ dir: "", content: files }] : files);
  const bad = rows.filter(([p, want]) => m.ignores(p) !== want).map(([p, want]) => `${p}: want ${want}`);
  assert.deepEqual(bad, [], JSON.stringify(files));
}

test("golden vectors: joelanford/ignore v0.1.2 + go-git gitignore (random trees)", () => {
  let n = 0;
  let ignored = 0;
  for (const c of vectors.cases) {
    const m = buildIgnoreMatcher(c.files);
    c.paths.forEach((p, i) => {
      assert.equal(m.ignores(p), c.ignored[i], `${JSON.stringify(c.files)} ${JSON.stringify(p)}`);
      n++;
      if (c.ignored[i]) ignored++;
    });
  }
  assert.ok(n > 7000 && ignored > 800, `${n} vectors, ${ignored} ignored`);
});

test("golden vectors: Go filepath.Match on byte strings", () => {
  for (const v of vectors.fnmatch) {
    const r = fnmatch(toByteString(v.pattern), toByteString(v.name));
    const got = r === MATCH ? "match" : r === BAD_PATTERN ? "bad" : "nomatch";
    assert.equal(got, v.result, `${JSON.stringify(v.pattern)} ~ ${JSON.stringify(v.name)}`);
  }
  assert.ok(vectors.fnmatch.length >= 5000);
});

test("bufio.Scanner 64 KiB line limit (golden)", () => {
  for (const v of vectors.tooLong) {
    const content = "a\n" + "b".repeat(v.n) + v.tail;
    const where = `${v.n} + ${JSON.stringify(v.tail)}`;
    if (v.error === "") {
      assert.doesNotThrow(() => buildIgnoreMatcher([{ dir: "", content }]), where);
    } else {
      assert.equal(v.error, ERR_TOKEN_TOO_LONG);
      assert.throws(() => buildIgnoreMatcher([{ dir: "", content }]), { message: v.error }, where);
    }
  }
  // Bytes, not UTF-16 units, count: 21846 × "é" (2 bytes) + 21844 "b" = 65536 bytes.
  assert.throws(() => buildIgnoreMatcher([{ dir: "", content: "é".repeat(21846) + "b".repeat(21844) }]), {
    message: ERR_TOKEN_TOO_LONG,
  });
});

test("loadIgnoreMatcher walks a real directory in Go's order (golden multi-file cases)", async () => {
  const multi = vectors.cases.filter((c) => c.files.length > 1).slice(0, 80);
  assert.ok(multi.length >= 40);
  const base = mkdtempSync(join(tmpdir(), "opcat-ignore-"));
  try {
    let k = 0;
    for (const c of multi) {
      const root = join(base, String(k++));
      // Write in reverse so creation order cannot stand in for the sorted walk.
      for (const f of [...c.files].reverse()) {
        const dir = join(root, ...f.dir.split("/").filter((s) => s !== ""));
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, ".indexignore"), f.content);
      }
      const m = await loadIgnoreMatcher(root);
      assert.equal(m.patternCount, buildIgnoreMatcher(c.files).patternCount);
      c.paths.forEach((p, i) => assert.equal(m.ignores(p), c.ignored[i], `${JSON.stringify(c.files)} ${p}`));
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("loadIgnoreMatcher: custom file name, directories named like the file, missing root", async () => {
  const root = mkdtempSync(join(tmpdir(), "opcat-ignore-"));
  try {
    writeFileSync(join(root, ".myignore"), "# comment\n\n*.md\n");
    mkdirSync(join(root, ".indexignore"));
    writeFileSync(join(root, ".indexignore", ".indexignore"), "x\n");
    const m = await loadIgnoreMatcher(root, ".myignore");
    assert.equal(m.patternCount, 1);
    assert.equal(m.ignores("README.md"), true);
    const d = await loadIgnoreMatcher(root);
    assert.equal(d.patternCount, 1);
    assert.equal(d.ignores(".indexignore/x"), true);
    assert.equal(d.ignores("x"), false);
    // Invalid UTF-8 in the file is kept byte for byte: "\xff" only matches a "?"-like wildcard.
    writeFileSync(join(root, ".myignore"), Buffer.from([0x61, 0xff, 0x0a, 0x62, 0x3f, 0x0a]));
    const u = await loadIgnoreMatcher(root, ".myignore");
    assert.equal(u.patternCount, 2);
    assert.equal(u.ignores("a\uFFFD"), false); // U+FFFD is EF BF BD, not FF
    assert.equal(u.ignores("b\uFFFD"), true);
    await assert.rejects(loadIgnoreMatcher(join(root, "missing")), { code: "ENOENT" });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("opm-spec §1.3: load_test.go example", () => {
  check("*\n!*.json\n!*.yaml\n*.clusterserviceversion.yaml\n", [
    ["cockroachdb.json", false],
    ["etcd.yaml", false],
    ["etcdoperator.v0.6.1.clusterserviceversion.yaml", true],
    ["README.md", true],
    ["unrecognized-schema.json", false],
    ["deprecations.yaml", false],
    ["sub/dir/x.json", false],
  ]);
});

test("ts-stack §4 probe table: where opm differs from git", () => {
  // A negation re-includes a file below an excluded directory (git would not).
  check("dir/\n!dir/keep.json", [
    ["dir/keep.json", false],
    ["dir/other.json", true],
    ["dir", false], // directory-only pattern never matches a file
    ["a/dir/x", true], // no '/' inside: matches the component at any depth
    ["a/dir/keep.json", true], // "!dir/keep.json" is anchored to the domain
  ]);
  // Leading white space is trimmed (git would keep it).
  check("  *.json\n\t*.yaml\u00a0\n", [
    ["a.json", true],
    ["x/a.yaml", true],
    ["a.yml", false],
  ]);
  check("*.json", [
    ["a.json", true],
    ["a/b/c.json", true],
    ["json", false],
  ]);
  check("/a.json", [
    ["a.json", true],
    ["x/a.json", false],
  ]);
  check("docs", [
    ["docs", true],
    ["docs/x.yaml", true],
    ["x/docs/y", true],
  ]);
  check("docs/", [
    ["docs", false],
    ["docs/x.yaml", true],
  ]);
  check("./x", [["x", false]]); // a "." component never matches a clean path
  check("/", [["x", false]]);
  check("!", [["x", false]]);
  check("#x\n\\#x", [
    ["#x", true],
    ["x", false],
  ]);
  check("\\!x\n", [
    ["!x", true],
    ["x", false],
  ]);
  check("x\\ ", [
    ["x ", false],
    ["x", false],
  ]); // TrimSpace removes the escaped space; "x\" is malformed
});

test("** forms", () => {
  check("a/**/b", [
    ["a/b", true],
    ["a/x/b", true],
    ["a/x/y/b", true],
    ["x/a/b", false],
    ["a/b/c", true], // matched, path left over: still a match (no end anchoring)
  ]);
  check("**/c", [
    ["c", true],
    ["x/c", true],
    ["x/y/c", true],
  ]);
  check("d/**", [
    ["d", true],
    ["d/x", true],
    ["d/x/y", true],
    ["x/d/y", false],
  ]);
  check("**/g/", [
    ["g", false],
    ["g/x", true],
    ["x/g/y", true],
  ]);
  check("a/**x", [
    ["a/x", false],
    ["a/bx", false],
  ]); // "**" inside a component never matches
  check("a/**", [["a", true]]); // trailing "**": any path whose first component matches
  check("**", [["x", true]]); // no '/': "**" is filepath.Match "*", which matches any component
  check("**/", [
    ["x", false],
    ["x/y", true],
  ]);
});

test("character classes and escapes (filepath.Match, not git wildmatch)", () => {
  check("[a-c].json", [
    ["a.json", true],
    ["c.json", true],
    ["d.json", false],
  ]);
  check("[^a].json", [
    ["a.json", false],
    ["b.json", true],
  ]);
  check("[!a].json", [
    ["!.json", true],
    ["a.json", true],
    ["b.json", false],
  ]);
  check("\\*.json", [
    ["*.json", true],
    ["a.json", false],
  ]);
  check("[", [["[", false]]); // malformed: matches nothing
  check("a?c", [
    ["abc", true],
    ["aéc", true],
    ["ac", false],
  ]);
  check("*[^é]", [["é", true]]); // '*' resumes inside the UTF-8 bytes of é, as in Go
});

test("negation order and nested domains", () => {
  check("*.json\n!keep.json", [
    ["a.json", true],
    ["keep.json", false],
  ]);
  check("!keep.json\n*.json", [["keep.json", true]]); // the later pattern wins
  const nested = [
    { dir: "", content: "*.yaml\n" },
    { dir: "pkg", content: "!keep.yaml\nlocal.json\n" },
  ];
  check(nested, [
    ["keep.yaml", true], // pkg's negation only applies under pkg/
    ["pkg/keep.yaml", false],
    ["pkg/sub/keep.yaml", false],
    ["pkg/x.yaml", true],
    ["local.json", false],
    ["pkg/local.json", true],
    ["pkgx/local.json", false],
    ["pkg", false], // a path must be strictly below the domain
  ]);
  // An anchored pattern in a nested file is relative to its directory.
  check(
    [{ dir: "a/b", content: "/c\n" }],
    [
      ["a/b/c", true],
      ["a/b/x/c", false],
      ["c", false],
    ],
  );
});

test("trimSpaceBytes is Go's strings.TrimSpace", () => {
  const t = (s: string) => Buffer.from(trimSpaceBytes(toByteString(s)), "latin1").toString("utf8");
  assert.equal(t(" \t\v\f\r\n x \u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"), "x");
  assert.equal(t("\ufeffx\ufeff"), "\ufeffx\ufeff"); // BOM is not white space in Go
  assert.equal(t("\u200bx"), "\u200bx");
  assert.equal(trimSpaceBytes("\xc2 x \xc2"), "\xc2 x \xc2"); // invalid bytes are not space
});

test("compareNames is Go byte order", () => {
  const names = ["b", ".indexignore", "-x", "A", "a", "\u{1F600}", "\uffff", "é", "+"];
  names.sort(compareNames);
  const bytes = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual(names, bytes);
});

test("fast-check: arbitrary pattern text and paths never throw", () => {
  const text = fc.string({
    unit: fc.constantFrom(
      "a",
      "b",
      "*",
      "?",
      "[",
      "]",
      "^",
      "-",
      "\\",
      "/",
      "!",
      "#",
      " ",
      "\n",
      "\r",
      "é",
      "\u00a0",
      "\ud800",
    ),
    maxLength: 40,
  });
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          dir: fc.constantFrom("", "a", "a/b", "é"),
          content: fc.oneof(text, fc.string({ unit: "binary" })),
        }),
        { maxLength: 3 },
      ),
      fc.array(
        fc.oneof(
          fc.string({ unit: fc.constantFrom("a", "b", "/", "é", "*", "\\", "\udc00") }),
          fc.string({ unit: "binary" }),
        ),
      ),
      (files, paths) => {
        const m = buildIgnoreMatcher(files);
        for (const p of paths) assert.equal(typeof m.ignores(p), "boolean");
      },
    ),
    { numRuns: 2000 },
  );
});

test("fast-check: a literal name pattern excludes it, and a later negation re-includes it", () => {
  const name = fc.stringMatching(/^[a-z0-9._-]{1,12}$/).filter((s) => s !== "." && s !== "..");
  fc.assert(
    fc.property(fc.array(name, { minLength: 0, maxLength: 3 }), name, (dirs, file) => {
      const p = [...dirs, file].join("/");
      assert.equal(buildIgnoreMatcher([{ dir: "", content: file }]).ignores(p), true);
      assert.equal(buildIgnoreMatcher([{ dir: "", content: `${file}\n!${file}` }]).ignores(p), false);
      assert.equal(buildIgnoreMatcher([{ dir: "", content: `!${file}\n${file}` }]).ignores(p), true);
    }),
  );
});
