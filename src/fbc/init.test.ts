import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { OpcatError } from "../errors/index.js";
import { detectMimeType, initPackage, isImage } from "./init.js";
import { emptyConfig } from "./types.js";
import { formatCatalog } from "./write.js";

const svgIcon = `<svg viewBox="0 0 100 100"><circle cx="25" cy="25" r="25"/></svg>`;
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

// alpha/action/init_test.go TestInit.
test("TestInit/Success", () => {
  assert.deepEqual(initPackage({ name: "" }), {
    schema: "olm.package",
    name: "",
    defaultChannel: "",
    description: "",
    properties: [],
  });
  assert.equal(initPackage({ name: "foo" }).name, "foo");
  assert.equal(initPackage({ name: "", defaultChannel: "foo" }).defaultChannel, "foo");
  assert.equal(initPackage({ name: "", description: "foo" }).description, "foo");
  const icon = bytes(svgIcon);
  assert.deepEqual(initPackage({ name: "", icon }).icon, { base64data: icon, mediatype: "image/svg+xml" });
  assert.deepEqual(initPackage({ name: "a", defaultChannel: "b", description: "c", icon }), {
    schema: "olm.package",
    name: "a",
    defaultChannel: "b",
    description: "c",
    properties: [],
    icon: { base64data: icon, mediatype: "image/svg+xml" },
  });
});

test("TestInit/Fail/IconNotImage and EmptyIcon", () => {
  assert.throws(
    () => initPackage({ name: "", icon: bytes("foo") }),
    (e: unknown) =>
      e instanceof OpcatError &&
      e.code === "INIT_ICON_NOT_IMAGE" &&
      e.message === 'detected invalid type "": not an image',
  );
  assert.throws(
    () => initPackage({ name: "", icon: new Uint8Array(0) }),
    (e: unknown) =>
      e instanceof OpcatError && e.code === "INIT_ICON_EMPTY" && e.message === "detect icon mediatype: Empty buffer",
  );
  assert.throws(
    () => initPackage({ name: "", icon: bytes("%PDF-1.4\n") }),
    (e: unknown) => e instanceof OpcatError && e.message === 'detected invalid type "application/pdf": not an image',
  );
});

interface InitVector {
  name: string;
  name_?: string;
  defaultChannel?: string;
  description?: string;
  icon?: string;
  mime: string;
  error?: string;
  json?: string;
}

test("golden vectors from opm's init action and h2non/filetype (with opm's SVG matcher)", () => {
  const vectors = JSON.parse(
    readFileSync(new URL("./testdata/init/vectors.json", import.meta.url), "utf8"),
  ) as InitVector[];
  assert.ok(vectors.length > 150);
  for (const v of vectors) {
    const icon = v.icon !== undefined ? new Uint8Array(Buffer.from(v.icon, "base64")) : undefined;
    if (icon !== undefined && !v.mime.startsWith("ERR")) assert.equal(detectMimeType(icon), v.mime, v.name);
    const run = (): string => {
      const pkg = initPackage({
        name: v.name_ ?? "",
        defaultChannel: v.defaultChannel,
        description: v.description,
        icon,
      });
      return formatCatalog({ ...emptyConfig(), packages: [pkg] }, "json");
    };
    if (v.error !== undefined)
      assert.throws(run, (e: unknown) => e instanceof OpcatError && e.message === v.error, v.name);
    else assert.equal(run(), v.json, v.name);
  }
});

test("detectMimeType: an unrecognised buffer is the empty type; never throws", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
      const m = detectMimeType(b);
      assert.equal(typeof m, "string");
      assert.equal(isImage(b), m.startsWith("image/"));
    }),
  );
});

test("image signatures are recognised whatever follows them", () => {
  const sigs: [number[], string][] = [
    [[0x89, 0x50, 0x4e, 0x47], "image/png"],
    [[0xff, 0xd8, 0xff], "image/jpeg"],
    [[0x47, 0x49, 0x46], "image/gif"],
    [[0x42, 0x4d], "image/bmp"],
  ];
  fc.assert(
    fc.property(fc.constantFrom(...sigs), fc.uint8Array({ minLength: 0, maxLength: 100 }), ([sig, mime], tail) => {
      const b = new Uint8Array([...sig, ...tail]);
      // Bytes 8..11 spelling WEBP would make a second image matcher apply (random order in Go).
      fc.pre(!(b.length > 11 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50));
      assert.equal(detectMimeType(b), mime);
    }),
  );
});

test("SVG detection: comments removed, case-insensitive, whole text must be one svg element", () => {
  assert.equal(detectMimeType(bytes(`<!-- x -->\n<?xml version="1.0"?>\n<svg a="b">text</svg>\n`)), "image/svg+xml");
  assert.equal(detectMimeType(bytes(`<svg></svg>trailing`)), "");
  assert.equal(detectMimeType(bytes(`<svg>a*b</svg>`)), "");
  assert.equal(detectMimeType(bytes(`\u0001<svg viewBox="0 0 100 100"></svg>`)), "");
  assert.equal(detectMimeType(bytes(`<svg>日本語 ™ and more text</svg>`)), "image/svg+xml");
});
