import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import {
  ImageReferenceError,
  type ImageReference,
  parseNamed,
  parseNormalizedNamed,
  parseReference,
  tryParseNormalizedNamed,
  tryParseReference,
  validatePullSpec,
} from "./reference.js";

interface Parsed {
  string: string;
  familiar: string;
  domain: string;
  path: string;
  tag?: string;
  digest?: string;
}

interface Vector {
  in: string;
  normalized?: Parsed;
  normalizedErr?: string;
  parsed?: Parsed;
  parsedErr?: string;
  namedErr?: string;
}

const vectors = (
  JSON.parse(readFileSync(new URL("./testdata/reference-vectors.json", import.meta.url), "utf8")) as {
    vectors: Vector[];
  }
).vectors;

function describe(r: ImageReference): Parsed {
  const p: Parsed = { string: r.toString(), familiar: r.familiar(), domain: r.domain, path: r.path };
  if (r.tag !== undefined) p.tag = r.tag;
  if (r.digest !== undefined) p.digest = r.digest;
  assert.equal(r.name, r.domain === "" ? r.path : `${r.domain}/${r.path}`);
  return p;
}

function errorOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    assert.ok(e instanceof ImageReferenceError, String(e));
    return e.message;
  }
}

test("golden vectors: go.podman.io/image/v5 docker/reference (upstream test literals, hand-picked, random)", () => {
  let ok = 0;
  for (const v of vectors) {
    const where = JSON.stringify(v.in);
    const n = tryParseNormalizedNamed(v.in);
    if (v.normalizedErr !== undefined) {
      assert.ok(n instanceof ImageReferenceError, `${where}: want ${v.normalizedErr}`);
      assert.equal(n.message, v.normalizedErr, where);
      assert.equal(validatePullSpec(v.in), v.in === "" ? undefined : v.normalizedErr, where);
    } else {
      assert.ok(!(n instanceof ImageReferenceError), `${where}: ${String(n)}`);
      assert.deepEqual(describe(n), v.normalized, where);
      assert.equal(validatePullSpec(v.in), undefined, where);
      ok++;
    }
    const p = tryParseReference(v.in);
    if (v.parsedErr !== undefined) {
      assert.ok(p instanceof ImageReferenceError, `${where}: want ${v.parsedErr}`);
      assert.equal(p.message, v.parsedErr, where);
    } else {
      assert.ok(!(p instanceof ImageReferenceError), `${where}: ${String(p)}`);
      assert.deepEqual(describe(p), v.parsed, where);
    }
    assert.equal(
      errorOf(() => parseNamed(v.in)),
      v.namedErr,
      where,
    );
  }
  assert.ok(vectors.length >= 4000 && ok >= 400, `${vectors.length} vectors, ${ok} valid`);
});

test("opm pull-spec cases (declcfg_to_model_test.go)", () => {
  const h = "abcd1234".repeat(8);
  assert.equal(
    validatePullSpec(`quay.io/operator-framework/foo-bundle@ssha256:${h}abcd1234`),
    "unsupported digest algorithm",
  );
  assert.equal(validatePullSpec(`quay.io/operator-framework/my-operator@ssha256:${h}`), "unsupported digest algorithm");
  assert.equal(
    validatePullSpec("quay.io/operator-framework/foo-bundle@md5:abcd1234abcd1234abcd1234abcd1234"),
    "unsupported digest algorithm",
  );
  assert.equal(validatePullSpec(`quay.io/operator-framework/foo-bundle@sha256:${h}`), undefined);
  assert.equal(validatePullSpec("quay.io/operator-framework/foo-bundle:v0.1.0"), undefined);
  assert.equal(validatePullSpec(""), undefined); // empty pull specs are not validated
  assert.equal(validatePullSpec(`foo@sha256:${h.slice(1)}`), "invalid checksum digest length");
  assert.equal(validatePullSpec(`foo@sha256:${h.toUpperCase()}`), "invalid checksum digest format");
  assert.equal(validatePullSpec(`foo:v1@SHA256:${h}`), "invalid checksum digest format");
  // Before the digest is looked at, everything up to the first ':' must be lowercase.
  assert.equal(validatePullSpec(`foo@SHA256:${h}`), "invalid reference format: repository name must be lowercase");
  assert.equal(validatePullSpec("quay.io/Foo/bar"), "invalid reference format: repository name must be lowercase");
  assert.equal(validatePullSpec("quay.io/foo/bar:tag:tag"), "invalid reference format");
  assert.equal(validatePullSpec("a".repeat(238)), "repository name must not be more than 255 characters");
  assert.equal(validatePullSpec("a".repeat(237)), undefined);
  assert.equal(
    validatePullSpec("0123456789abcdef".repeat(4)),
    `invalid repository name (${"0123456789abcdef".repeat(4)}), cannot specify 64-byte hexadecimal strings`,
  );
});

test("normalisation and familiar form", () => {
  const r = parseNormalizedNamed("ubuntu");
  assert.deepEqual(
    [r.domain, r.path, r.name, r.tag, r.digest],
    ["docker.io", "library/ubuntu", "docker.io/library/ubuntu", undefined, undefined],
  );
  assert.equal(r.toString(), "docker.io/library/ubuntu");
  assert.equal(r.familiar(), "ubuntu");
  assert.equal(String(parseNormalizedNamed("index.docker.io/dmcgowan/myapp:v1")), "docker.io/dmcgowan/myapp:v1");
  assert.equal(parseNormalizedNamed("index.docker.io/dmcgowan/myapp:v1").familiar(), "dmcgowan/myapp:v1");
  assert.equal(parseNormalizedNamed("docker.io/library/a/b").familiar(), "library/a/b");
  const d = "sha256:" + "0123456789abcdef".repeat(4);
  const td = parseNormalizedNamed(`localhost:5000/foo/bar:1.0@${d}`);
  assert.deepEqual([td.domain, td.path, td.tag, td.digest], ["localhost:5000", "foo/bar", "1.0", d]);
  assert.equal(td.familiar(), `localhost:5000/foo/bar:1.0@${d}`);
  assert.equal(parseNormalizedNamed("localhost/foo").domain, "localhost");
  assert.equal(parseNormalizedNamed("foo/bar").domain, "docker.io"); // "foo" is not a registry
  // Parse does not normalise; the first component is a domain when it can be one.
  const p = parseReference("foo/bar");
  assert.deepEqual([p.domain, p.path, p.name], ["foo", "bar", "foo/bar"]);
  const s = parseReference("busybox:1");
  assert.deepEqual([s.domain, s.path, s.tag, s.toString()], ["", "busybox", "1", "busybox:1"]);
  assert.equal(parseReference("docker.io/library/busybox").familiar(), "busybox");
  assert.equal(
    errorOf(() => parseReference("")),
    "repository name must have at least one component",
  );
  assert.equal(
    errorOf(() => parseReference("Foo")),
    "repository name must be lowercase",
  );
  assert.equal(
    errorOf(() => parseNamed("busybox")),
    "repository name must be canonical",
  );
  assert.equal(parseNamed("docker.io/library/busybox").toString(), "docker.io/library/busybox");
  // Go's strings.ToLower maps U+0130 to "i" (JS toLowerCase gives "i\u0307").
  assert.equal(
    errorOf(() => parseNormalizedNamed("foo:\u0130")),
    "repository name must be lowercase",
  );
  assert.equal(
    errorOf(() => parseNormalizedNamed("foo:\u212a")),
    "repository name must be lowercase",
  ); // Kelvin sign → k
  assert.equal(
    errorOf(() => parseNormalizedNamed("foo:\u00e9")),
    "invalid reference format",
  );
});

test("adversarial inputs run in linear time", () => {
  const inputs = [
    "a".repeat(100_000) + "!",
    "a-".repeat(50_000) + "!",
    "a.".repeat(50_000) + "!",
    "a/".repeat(50_000) + "!",
    "a__".repeat(30_000) + "!",
    ("a" + "-".repeat(10)).repeat(9_000) + "!",
    "a:" + "0".repeat(100_000) + "!",
  ];
  // catastrophic backtracking on these 100 KB inputs would not finish (the runner's timeout catches it); no clock here
  for (const s of inputs) assert.equal(validatePullSpec(s), "invalid reference format");
});

const refChars = fc.constantFrom(..."abcAB09-_.:/@+ é\u0130\u212a", "sha256:", "0123456789abcdef".repeat(4));

test("fast-check: parsing throws nothing but ImageReferenceError", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: refChars, maxLength: 12 })),
      (s) => {
        for (const f of [parseNormalizedNamed, parseReference, parseNamed]) {
          try {
            f(s);
          } catch (e) {
            assert.ok(e instanceof ImageReferenceError, String(e));
          }
        }
        const v = validatePullSpec(s);
        assert.ok(v === undefined || typeof v === "string");
      },
    ),
    { numRuns: 3000 },
  );
});

test("fast-check: the normalised form is canonical and round-trips", () => {
  const component = fc.stringMatching(/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/).filter((s) => s.length <= 20);
  const ref = fc
    .record({
      domain: fc.constantFrom("", "quay.io", "localhost:5000", "docker.io", "index.docker.io", "registry.example.com"),
      path: fc.array(component, { minLength: 1, maxLength: 3 }),
      tag: fc.option(fc.stringMatching(/^\w[\w.-]{0,20}$/), { nil: undefined }),
      digest: fc.option(fc.stringMatching(/^[a-f0-9]{64}$/), { nil: undefined }),
    })
    .map(({ domain, path, tag, digest }) => {
      let s = (domain === "" ? "" : domain + "/") + path.join("/");
      if (tag !== undefined) s += ":" + tag;
      if (digest !== undefined) s += "@sha256:" + digest;
      return s;
    })
    .filter((s) => !/^[a-f0-9]{64}(?:[:@]|$)/.test(s));
  fc.assert(
    fc.property(ref, (s) => {
      const r = tryParseNormalizedNamed(s);
      if (r instanceof ImageReferenceError) {
        assert.match(r.message, /too long|64-byte/);
        return;
      }
      assert.equal(parseNamed(r.toString()).toString(), r.toString());
      // The familiar form re-normalises to the same reference unless, with docker.io dropped, its
      // first component looks like a registry (Go's familiar form is ambiguous there too).
      const first = r.familiar().split("/")[0];
      if (r.domain !== "docker.io" || !/[.:]|^localhost$/.test(first)) {
        assert.equal(parseNormalizedNamed(r.familiar()).toString(), r.toString());
      }
      assert.equal(validatePullSpec(s), undefined);
    }),
  );
});

test("validatePullSpec: remembering valid digest-pinned repositories never changes a verdict", () => {
  const segment = fc.stringMatching(/^[a-zA-Z0-9._:-]{0,12}$/);
  const prefix = fc.array(segment, { minLength: 1, maxLength: 4 }).map((a) => a.join("/"));
  const hex = fc.stringMatching(/^[0-9a-fA-F]{62,66}$/);
  fc.assert(
    fc.property(prefix, hex, hex, (p, h1, h2) => {
      for (const s of [`${p}@sha256:${h1}`, `${p}@sha256:${h2}`, `${p}@sha256:${h1}`]) {
        const exact = tryParseNormalizedNamed(s);
        assert.equal(validatePullSpec(s), exact instanceof Error ? exact.message : undefined, s);
      }
    }),
    { numRuns: 2000 },
  );
  assert.equal(validatePullSpec(`quay.io/a/b@sha256:${"0".repeat(64)}`), undefined);
  assert.equal(validatePullSpec(`quay.io/a/b@sha256:${"A".repeat(64)}`), "invalid checksum digest format");
});
