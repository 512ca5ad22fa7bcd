import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { OpcatError } from "../../errors/index.js";
import { RawJson } from "../../fbc/rawjson.js";
import type { Bundle, DeclarativeConfig } from "../../fbc/types.js";
import { buildBundleImage, pushImage } from "../../image/build.js";
import { RegistryClient } from "../../image/registry.js";
import { REPO_ROOT } from "../../../test/shared.js";
import { requireTools, startDockerRegistry, type RunningRegistry } from "../../../test/image/servers.js";
import { catalogTagLister, compileTagRegex, discoverTagImages, registryTagLister, type TagLister } from "./discover.js";

const lister = (tags: string[]): TagLister => ({ listTags: () => Promise.resolve([...tags]) });

test(
  "discoverTagImages: regex and range filter, tags that " + "are not versions left out under a range, version order",
  async () => {
    const tags = [
      "v0.0.3",
      "v0.1.0",
      "v0.10.0",
      "v0.9.1",
      "latest",
      "v1.0.0-rc.1",
      "v1.0.0",
      "1.2",
      "v0.2.0",
      "v0.2.0",
    ];
    const repo = "quay.io/example-inc/example-bundle";
    assert.deepEqual(
      await discoverTagImages({ repo, tagRegex: "^v\\d+\\.\\d+\\.\\d+$", semverRange: ">=0.1.x" }, lister(tags)),
      [`${repo}:v0.1.0`, `${repo}:v0.2.0`, `${repo}:v0.9.1`, `${repo}:v0.10.0`, `${repo}:v1.0.0`],
    );
    // No range: every tag matching the regex, versions first (in version order), then the rest by bytes.
    assert.deepEqual(
      (await discoverTagImages({ repo, tagRegex: "^(v1|l|1)" }, lister(tags))).map((i) => i.slice(repo.length + 1)),
      ["v1.0.0-rc.1", "v1.0.0", "1.2", "latest"],
    );
    // A range alone: tags parsed leniently (1.2 is 1.2.0); pre-releases are below their release.
    assert.deepEqual(
      (await discoverTagImages({ repo, semverRange: ">=1.0.0-0 <2.0.0" }, lister(tags))).map((i) =>
        i.slice(repo.length + 1),
      ),
      ["v1.0.0-rc.1", "v1.0.0", "1.2"],
    );
    assert.deepEqual(await discoverTagImages({}, undefined), []);
  },
);

test("discoverTagImages errors name the field", async () => {
  const cases: [Parameters<typeof discoverTagImages>[0], TagLister | undefined, string, string][] = [
    [
      { repo: "quay.io/x/y", tagRegex: "(" },
      lister([]),
      /^bundles\.tagRegex: invalid regular expression "\(": /.source,
      "invalid",
    ],
    [
      { repo: "quay.io/x/y", semverRange: ">=x.y" },
      lister([]),
      /^bundles\.semverRange: invalid range ">=x\.y": /.source,
      "invalid",
    ],
    [
      { repo: "quay.io/x/y:v1" },
      lister([]),
      /^bundles\.repo: "quay\.io\/x\/y:v1" must name a repository, without tag or digest$/.source,
      "invalid",
    ],
    [{ repo: "Quay.io/X" }, lister([]), /^bundles\.repo: invalid repository "Quay\.io\/X": /.source, "invalid"],
    [
      { repo: "quay.io/x/y" },
      undefined,
      /^bundles\.repo: listing the tags of "quay\.io\/x\/y" needs registry access, /.source +
        /which this bundle source does not provide$/.source,
      "usage",
    ],
  ];
  for (const [b, l, re, exit] of cases) {
    await assert.rejects(
      discoverTagImages(b, l),
      (e: unknown) =>
        e instanceof OpcatError &&
        e.code === "TEMPLATE_GRAPH_TAGS" &&
        new RegExp(re).test(e.message) &&
        e.kind === exit,
    );
  }
  assert.ok(compileTagRegex("^v\\d+$").test("v12"));
});

test(
  "property: discovered images are exactly the listed " + "tags the filters keep, each once, in a stable order",
  async () => {
    const tag = fc.oneof(
      fc.tuple(fc.nat(3), fc.nat(12), fc.nat(3)).map(([a, b, c]) => `v${a}.${b}.${c}`),
      fc.constantFrom("latest", "main", "v1", "1.2", "v2.0.0-rc.1"),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(tag, { maxLength: 30 }),
        fc.constantFrom("", "^v", "\\.0$"),
        fc.constantFrom("", ">=0.5.0", "<1.0.0 || >=2.0.0"),
        async (tags, re, range) => {
          const repo = "r.example/op";
          const got = await discoverTagImages(
            { repo, tagRegex: re || undefined, semverRange: range || undefined },
            lister(tags),
          );
          assert.equal(new Set(got).size, got.length);
          const shuffled = await discoverTagImages(
            { repo, tagRegex: re || undefined, semverRange: range || undefined },
            lister([...tags].reverse()),
          );
          assert.deepEqual(shuffled, got);
          for (const img of got) assert.ok(tags.includes(img.slice(repo.length + 1)));
          if (re) for (const img of got) assert.match(img.slice(repo.length + 1), new RegExp(re));
        },
      ),
      { numRuns: 200 },
    );
  },
);

test("catalogTagLister: the tags of the catalog's bundle images in the repository, by normalised name", async () => {
  const b = (image: string): Bundle => ({
    schema: "olm.bundle",
    name: image,
    package: "p",
    image,
    properties: [{ type: "olm.package", value: RawJson.fromValue({ packageName: "p", version: "1.0.0" }) }],
    relatedImages: [],
  });
  const cfg: DeclarativeConfig = {
    packages: [],
    channels: [],
    bundles: [
      b("busybox:v1"),
      b("docker.io/library/busybox:v2"),
      b(`busybox@sha256:${"a".repeat(64)}`),
      b("quay.io/x/busybox:v3"),
      b("busybox:v1"),
    ],
    deprecations: [],
    others: [],
  };
  const l = catalogTagLister(cfg);
  assert.deepEqual(await l.listTags("busybox"), ["v1", "v2"]);
  assert.deepEqual(await l.listTags("docker.io/library/busybox"), ["v1", "v2"]);
  assert.deepEqual(await l.listTags("quay.io/x/busybox"), ["v3"]);
  assert.deepEqual(await l.listTags("quay.io/x/none"), []);
  await assert.rejects(l.listTags("quay.io/x/busybox:v3"), /must name a repository/);
});

const missing = requireTools("docker-registry");

describe("tags/list against docker-registry", { skip: missing ?? false }, () => {
  let reg: RunningRegistry;
  const work = mkdtempSync(join(tmpdir(), "opcat-graph-tags-"));
  const tags = ["v0.1.0", "v0.2.0", "v0.10.0", "latest", "v1.0.0", "v1.0.0-rc.1", "v0.0.9"];
  before(async () => {
    reg = await startDockerRegistry(join(work, "reg"));
    const img = buildBundleImage(join(REPO_ROOT, "src/bundle/testdata/bundles/json"));
    const client = new RegistryClient({ useHttp: true, retries: 0 });
    try {
      for (const t of tags) await pushImage(img, `${reg.host}/ops/widget-bundle:${t}`, { useHttp: true, client });
    } finally {
      client.close();
    }
  });
  after(async () => {
    await reg?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test(
    "listTags of a real registry (Debian's docker-registry answers in " +
      "one page whatever n is); registryTagLister and discovery on top",
    async () => {
      const client = new RegistryClient({ useHttp: true, retries: 0 });
      try {
        const target = client.sourcesFor(`${reg.host}/ops/widget-bundle`, false)[0];
        const all = await client.listTags(target);
        assert.deepEqual([...all].sort(), [...tags].sort());
        for (const n of [1, 2, 3, 100]) assert.deepEqual(await client.listTags(target, n), all, `page size ${n}`);
        const l = registryTagLister(client, 2);
        assert.deepEqual(await l.listTags(`${reg.host}/ops/widget-bundle`), all);
        assert.deepEqual(
          await discoverTagImages(
            { repo: `${reg.host}/ops/widget-bundle`, tagRegex: "^v", semverRange: ">=0.1.0 <1.0.0" },
            l,
          ),
          [
            `${reg.host}/ops/widget-bundle:v0.1.0`,
            `${reg.host}/ops/widget-bundle:v0.2.0`,
            `${reg.host}/ops/widget-bundle:v0.10.0`,
            `${reg.host}/ops/widget-bundle:v1.0.0-rc.1`,
          ],
        );
        await assert.rejects(
          l.listTags(`${reg.host}/ops/absent`),
          (e: unknown) => e instanceof OpcatError && /listing tags of .*ops\/absent: 404/.test(e.message),
        );
      } finally {
        client.close();
      }
    },
  );
});

test(
  "listTags: pages linked by Link headers (relative " + "and absolute), empty and null tag lists, bad bodies",
  async () => {
    const pages: Record<string, { tags: string[] | null; next?: string }> = {
      "/v2/o/r/tags/list?n=2": { tags: ["a", "b"], next: '</v2/o/r/tags/list?n=2&last=b>; rel="next"' },
      "/v2/o/r/tags/list?n=2&last=b": { tags: ["c", "d"], next: "ABS" },
      "/v2/o/r/tags/list?n=2&last=d": { tags: [], next: "<v2/o/r/tags/list?last=e>; rel=next" },
      "/v2/o/r/tags/list?last=e": { tags: null },
      "/v2/o/bad/tags/list": { tags: [1 as unknown as string] },
    };
    const seen: string[] = [];
    let port = 0;
    const server: Server = createServer((req, res) => {
      seen.push(req.url ?? "");
      if (req.url === "/v2/o/junk/tags/list") {
        res.writeHead(200, { "Content-Type": "application/json" }).end("{not json");
        return;
      }
      const page = pages[req.url ?? ""];
      if (!page) {
        res
          .writeHead(404, { "Content-Type": "application/json" })
          .end(
            JSON.stringify({ errors: [{ code: "NAME_UNKNOWN", message: "repository name not known to registry" }] }),
          );
        return;
      }
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (page.next)
        headers.Link =
          page.next === "ABS" ? `<http://127.0.0.1:${port}/v2/o/r/tags/list?n=2&last=d>; rel="next"` : page.next;
      res.writeHead(200, headers).end(JSON.stringify({ name: "o/r", tags: page.tags }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
    const client = new RegistryClient({ useHttp: true, retries: 0 });
    try {
      const t = { host: `127.0.0.1:${port}`, repo: "o/r", insecure: false };
      assert.deepEqual(await client.listTags(t, 2), ["a", "b", "c", "d"]);
      assert.deepEqual(seen, [
        "/v2/o/r/tags/list?n=2",
        "/v2/o/r/tags/list?n=2&last=b",
        "/v2/o/r/tags/list?n=2&last=d",
        "/v2/o/r/tags/list?last=e",
      ]);
      await assert.rejects(
        client.listTags({ ...t, repo: "o/bad" }),
        /invalid tag list: "tags" is not a list of strings/,
      );
      await assert.rejects(
        client.listTags({ ...t, repo: "o/junk" }),
        /listing tags of 127\.0\.0\.1:\d+\/o\/junk: invalid tag list/,
      );
      await assert.rejects(
        client.listTags({ ...t, repo: "o/none" }),
        (e: unknown) => e instanceof OpcatError && e.code !== "" && /404/.test(e.message),
      );
    } finally {
      client.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  },
);
