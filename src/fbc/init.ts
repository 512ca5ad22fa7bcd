/**
 * `opm init` (operator-registry alpha/action/init.go): a new `olm.package` blob, with the icon's
 * media type sniffed from its bytes as opm does it, through github.com/h2non/filetype v1.1.3 plus the
 * SVG matcher (github.com/h2non/go-is-svg) that opm's alpha/model registers in front of all others.
 */
import { goQuote } from "../gojson/fmt.js";
import { OpcatError } from "../errors/index.js";
import { SCHEMA_PACKAGE, type Package } from "./types.js";

export interface InitOptions {
  /** The package name (may be empty, as with opm's library). */
  name: string;
  defaultChannel?: string;
  /** The description file's contents, used verbatim. */
  description?: string;
  /** The icon file's bytes. */
  icon?: Uint8Array;
}

/**
 * Builds the package blob `opm init` prints. Throws {@link OpcatError}:
 * `INIT_ICON_EMPTY` (`detect icon mediatype: Empty buffer`) for an empty icon and
 * `INIT_ICON_NOT_IMAGE` (`detected invalid type "<mime>": not an image`) when the bytes are not an
 * image; an unrecognised file gives the empty MIME type: `detected invalid type "": not an image`.
 */
export function initPackage(opts: InitOptions): Package {
  const pkg: Package = {
    schema: SCHEMA_PACKAGE,
    name: opts.name,
    defaultChannel: opts.defaultChannel ?? "",
    description: opts.description ?? "",
    properties: [],
  };
  if (opts.icon !== undefined) {
    // the icon file's content is wrong, not the request: kind "invalid" (exit 1, as opm's every error)
    if (opts.icon.length === 0)
      throw new OpcatError("INIT_ICON_EMPTY", "detect icon mediatype: Empty buffer", { kind: "invalid" });
    const mime = detectMimeType(opts.icon);
    if (mime.split("/")[0] !== "image") {
      throw new OpcatError("INIT_ICON_NOT_IMAGE", `detected invalid type ${goQuote(mime)}: not an image`, {
        kind: "invalid",
      });
    }
    pkg.icon = { base64data: opts.icon, mediatype: mime };
  }
  return pkg;
}

type Matcher = (b: Uint8Array) => boolean;

const prefix =
  (...magic: number[]): Matcher =>
  (b) =>
    startsWith(b, magic, 0);

function startsWith(b: Uint8Array, magic: readonly number[], at: number): boolean {
  if (at + magic.length > b.length) return false;
  for (let i = 0; i < magic.length; i++) if (b[at + i] !== magic[i]) return false;
  return true;
}

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

/**
 * The MIME type filetype.Match reports for `buf` (opm's registration order): "" when nothing
 * matches. Matchers are tried group by group — SVG, application, image, video, audio, font,
 * document, archive — as filetype registers them. Within a group Go tries them in random (map)
 * order; here they are tried in source order, which only matters for crafted inputs that match
 * two signatures of the same group.
 */
export function detectMimeType(buf: Uint8Array): string {
  if (buf.length === 0) return "";
  for (const [mime, match] of MATCHERS) if (match(buf)) return mime;
  return "";
}

/** True when filetype (with opm's SVG matcher) would call `buf` an image. */
export function isImage(buf: Uint8Array): boolean {
  return detectMimeType(buf).startsWith("image/");
}

// --- go-is-svg -------------------------------------------------------------------------------

const HTML_COMMENT = /<!--[\s\S]*?-->/giu;

/**
 * `(?i)^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype svg[^>]*>\s*)?<svg[^>]*>[^*]*<\/svg>\s*$` with RE2
 * semantics: `\s` is [\t\n\f\r ], `$` is the end of the text, and case folding is Unicode simple
 * folding (so `ſ` matches `s`), as the `iu` flags give in JavaScript.
 */
const SVG_RE =
  /^[\t\n\f\r ]*(?:<\?xml[^>]*>[\t\n\f\r ]*)?(?:<!doctype svg[^>]*>[\t\n\f\r ]*)?<svg[^>]*>[^*]*<\/svg>[\t\n\f\r ]*$/iu;

const UTF8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** go-is-svg `Is`: not binary, and (HTML comments removed) one `<svg …>…</svg>` document. */
function isSvg(buf: Uint8Array): boolean {
  if (isBinary(buf)) return false;
  // Go's regexp reads invalid UTF-8 as U+FFFD, which matches [^>] and [^*] like any other
  // character, so decoding with replacement gives the same matches.
  return SVG_RE.test(UTF8.decode(buf).replace(HTML_COMMENT, ""));
}

/**
 * go-is-svg isBinary: any of the first 24 bytes ≤ 8. (It decodes `string(buf[i])`, the UTF-8 encoding
 * of the code point equal to the byte, so bytes ≥ 0x80 never decode to U+FFFD.)
 */
function isBinary(buf: Uint8Array): boolean {
  if (buf.length < 24) return false;
  for (let i = 0; i < 24; i++) if (buf[i] <= 8) return true;
  return false;
}

// --- filetype v1.1.3 matchers ----------------------------------------------------------------

function isoBmff(b: Uint8Array): boolean {
  if (b.length < 16 || !startsWith(b, ascii("ftyp"), 4)) return false;
  return b.length >= u32be(b, 0);
}

function u32be(b: Uint8Array, at: number): number {
  return ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
}

function u32le(b: Uint8Array, at: number): number {
  return ((b[at + 3] << 24) >>> 0) + (b[at + 2] << 16) + (b[at + 1] << 8) + b[at];
}

function heif(b: Uint8Array): boolean {
  if (!isoBmff(b)) return false;
  if (b.length < 17) return false; // GetFtyp returns an empty major brand
  const str = (at: number): string => String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3]);
  const major = str(8);
  if (major === "heic") return true;
  if (major === "mif1" || major === "msf1") {
    const len = u32be(b, 0);
    for (let i = 16; i < len; i += 4) if (b.length >= i + 4 && str(i) === "heic") return true;
  }
  return false;
}

const tiffHeader = (b: Uint8Array): boolean =>
  (b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0x0) ||
  (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0x0 && b[3] === 0x2a);
const cr2 = (b: Uint8Array): boolean =>
  b.length > 10 && tiffHeader(b) && b[8] === 0x43 && b[9] === 0x52 && b[10] === 0x02;

function matroska(b: Uint8Array, sub: string): boolean {
  if (!(b.length > 3 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3)) return false;
  const limit = Math.min(b.length, 4096);
  const idx = indexOf(b.subarray(0, limit), ascii(sub));
  if (idx < 3) return false;
  return b[idx - 3] === 0x42 && b[idx - 2] === 0x82;
}

function indexOf(b: Uint8Array, sig: readonly number[]): number {
  outer: for (let i = 0; i + sig.length <= b.length; i++) {
    for (let k = 0; k < sig.length; k++) if (b[i + k] !== sig[k]) continue outer;
    return i;
  }
  return -1;
}

const MP4_BRANDS = new Set([
  "avc1",
  "dash",
  "iso2",
  "iso3",
  "iso4",
  "iso5",
  "iso6",
  "isom",
  "mmp4",
  "mp41",
  "mp42",
  "mp4v",
  "mp71",
  "MSNV",
  "NDAS",
  "NDSC",
  "NSDC",
  "NDSH",
  "NDSM",
  "NDSP",
  "NDSS",
  "NDXC",
  "NDXH",
  "NDXM",
  "NDXP",
  "NDXS",
  "F4V ",
  "F4P ",
]);

const cfb = (b: Uint8Array, x: number, y: number): boolean =>
  b.length > 513
    ? b[0] === 0xd0 && b[1] === 0xcf && b[2] === 0x11 && b[3] === 0xe0 && b[512] === x && b[513] === y
    : b.length > 3 && b[0] === 0xd0 && b[1] === 0xcf && b[2] === 0x11 && b[3] === 0xe0;

type OoxmlType = "docx" | "pptx" | "xlsx" | "ooxml" | undefined;

function checkOoxml(b: Uint8Array, at: number): OoxmlType {
  if (startsWith(b, ascii("word/"), at)) return "docx";
  if (startsWith(b, ascii("ppt/"), at)) return "pptx";
  if (startsWith(b, ascii("xl/"), at)) return "xlsx";
  return undefined;
}

const PK34 = [0x50, 0x4b, 0x03, 0x04];

function zipSearch(b: Uint8Array, start: number, range: number): number {
  const end = Math.min(start + range, b.length);
  if (start >= end) return -1;
  return indexOf(b.subarray(start, end), PK34);
}

/** filetype's msooxml: which Office Open XML document a ZIP holds, from its first local headers. */
function msooxml(b: Uint8Array): OoxmlType {
  if (!startsWith(b, PK34, 0)) return undefined;
  const first = checkOoxml(b, 0x1e);
  if (first) return first;
  if (
    !startsWith(b, ascii("[Content_Types].xml"), 0x1e) &&
    !startsWith(b, ascii("_rels/.rels"), 0x1e) &&
    !startsWith(b, ascii("docProps"), 0x1e)
  ) {
    return undefined;
  }
  let start = (u32le(b, 18) + 49) >>> 0; // uint32 arithmetic
  let idx = zipSearch(b, start, 6000);
  if (idx === -1) return undefined;
  start += idx + 4 + 26;
  idx = zipSearch(b, start, 6000);
  if (idx === -1) return undefined;
  start += idx + 4 + 26;
  const third = checkOoxml(b, start);
  if (third) return third;
  start += 26;
  idx = zipSearch(b, start, 6000);
  if (idx === -1) return "ooxml";
  start += idx + 4 + 26;
  return checkOoxml(b, start) ?? "ooxml";
}

function zst(b: Uint8Array): boolean {
  for (;;) {
    if (startsWith(b, [0x28, 0xb5, 0x2f, 0xfd], 0)) return true;
    if (b.length < 8) return false;
    if ((u32le(b, 0) & 0xfffffff0) >>> 0 !== 0x184d2a50) return false;
    const skip = u32le(b, 4);
    if (b.length < 8 + skip) return false;
    b = b.subarray(8 + skip);
  }
}

const MATCHERS: readonly (readonly [string, Matcher])[] = [
  // Registered by opm's alpha/model, in front of everything.
  ["image/svg+xml", isSvg],
  // Application.
  ["application/wasm", (b) => b.length >= 8 && startsWith(b, [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], 0)],
  ["application/vnd.android.dex", (b) => dex(b)],
  [
    "application/vnd.android.dey",
    (b) => b.length > 100 && startsWith(b, [0x64, 0x65, 0x79, 0x0a], 0) && dex(b.subarray(40, 100)),
  ],
  // Image.
  ["image/jpeg", prefix(0xff, 0xd8, 0xff)],
  [
    "image/jp2",
    (b) => b.length > 12 && startsWith(b, [0x0, 0x0, 0x0, 0xc, 0x6a, 0x50, 0x20, 0x20, 0xd, 0xa, 0x87, 0xa, 0x0], 0),
  ],
  ["image/png", prefix(0x89, 0x50, 0x4e, 0x47)],
  ["image/gif", prefix(0x47, 0x49, 0x46)],
  ["image/webp", (b) => b.length > 11 && startsWith(b, ascii("WEBP"), 8)],
  ["image/x-canon-cr2", cr2],
  ["image/tiff", (b) => b.length > 10 && tiffHeader(b) && !cr2(b)],
  ["image/bmp", prefix(0x42, 0x4d)],
  ["image/vnd.ms-photo", prefix(0x49, 0x49, 0xbc)],
  ["image/vnd.adobe.photoshop", prefix(0x38, 0x42, 0x50, 0x53)],
  ["image/vnd.microsoft.icon", prefix(0x00, 0x00, 0x01, 0x00)],
  ["image/heif", heif],
  ["image/vnd.dwg", prefix(0x41, 0x43, 0x31, 0x30)],
  // Video.
  [
    "video/mp4",
    (b) =>
      b.length > 11 && startsWith(b, ascii("ftyp"), 4) && MP4_BRANDS.has(String.fromCharCode(b[8], b[9], b[10], b[11])),
  ],
  ["video/x-m4v", (b) => b.length > 10 && startsWith(b, ascii("ftypM4V"), 4)],
  ["video/x-matroska", (b) => matroska(b, "matroska")],
  ["video/webm", (b) => matroska(b, "webm")],
  [
    "video/quicktime",
    (b) =>
      b.length > 15 &&
      (startsWith(b, [0x0, 0x0, 0x0, 0x14, 0x66, 0x74, 0x79, 0x70], 0) ||
        startsWith(b, ascii("moov"), 4) ||
        startsWith(b, ascii("mdat"), 4) ||
        startsWith(b, ascii("mdat"), 12)),
  ],
  ["video/x-msvideo", (b) => b.length > 10 && startsWith(b, ascii("RIFF"), 0) && startsWith(b, ascii("AVI"), 8)],
  ["video/x-ms-wmv", prefix(0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9)],
  ["video/mpeg", (b) => b.length > 3 && b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] >= 0xb0 && b[3] <= 0xbf],
  ["video/x-flv", prefix(0x46, 0x4c, 0x56, 0x01)],
  ["video/3gpp", (b) => b.length > 10 && startsWith(b, ascii("ftyp3gp"), 4)],
  // Audio.
  ["audio/midi", prefix(0x4d, 0x54, 0x68, 0x64)],
  ["audio/mpeg", (b) => b.length > 2 && (startsWith(b, [0x49, 0x44, 0x33], 0) || (b[0] === 0xff && b[1] === 0xfb))],
  ["audio/m4a", (b) => b.length > 10 && (startsWith(b, ascii("ftypM4A"), 4) || startsWith(b, ascii("M4A "), 0))],
  ["audio/ogg", prefix(0x4f, 0x67, 0x67, 0x53)],
  ["audio/x-flac", prefix(0x66, 0x4c, 0x61, 0x43)],
  ["audio/x-wav", (b) => b.length > 11 && startsWith(b, ascii("RIFF"), 0) && startsWith(b, ascii("WAVE"), 8)],
  ["audio/amr", (b) => b.length > 11 && startsWith(b, [0x23, 0x21, 0x41, 0x4d, 0x52, 0x0a], 0)],
  ["audio/aac", (b) => b.length > 1 && b[0] === 0xff && (b[1] === 0xf1 || b[1] === 0xf9)],
  ["audio/x-aiff", (b) => b.length > 11 && startsWith(b, ascii("FORM"), 0) && startsWith(b, ascii("AIFF"), 8)],
  // Font.
  ["application/font-woff", (b) => b.length > 7 && startsWith(b, [0x77, 0x4f, 0x46, 0x46, 0x00, 0x01, 0x00, 0x00], 0)],
  ["application/font-woff", (b) => b.length > 7 && startsWith(b, [0x77, 0x4f, 0x46, 0x32, 0x00, 0x01, 0x00, 0x00], 0)],
  ["application/font-sfnt", (b) => b.length > 4 && startsWith(b, [0x00, 0x01, 0x00, 0x00, 0x00], 0)],
  ["application/font-sfnt", (b) => b.length > 4 && startsWith(b, [0x4f, 0x54, 0x54, 0x4f, 0x00], 0)],
  // Document.
  ["application/msword", (b) => cfb(b, 0xec, 0xa5)],
  ["application/vnd.openxmlformats-officedocument.wordprocessingml.document", (b) => msooxml(b) === "docx"],
  ["application/vnd.ms-excel", (b) => cfb(b, 0x09, 0x08)],
  ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", (b) => msooxml(b) === "xlsx"],
  ["application/vnd.ms-powerpoint", (b) => cfb(b, 0xa0, 0x46)],
  ["application/vnd.openxmlformats-officedocument.presentationml.presentation", (b) => msooxml(b) === "pptx"],
  // Archive.
  ["application/epub+zip", (b) => startsWith(b, [...PK34, ...ascii("mimetypeapplication/epub+zip")], 0)],
  [
    "application/zip",
    (b) => b.length > 3 && b[0] === 0x50 && b[1] === 0x4b && [3, 5, 7].includes(b[2]) && [4, 6, 8].includes(b[3]),
  ],
  ["application/x-tar", (b) => b.length > 261 && startsWith(b, ascii("ustar"), 257)],
  [
    "application/vnd.rar",
    (b) => b.length > 6 && startsWith(b, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], 0) && (b[6] === 0 || b[6] === 1),
  ],
  ["application/gzip", prefix(0x1f, 0x8b, 0x08)],
  ["application/x-bzip2", prefix(0x42, 0x5a, 0x68)],
  ["application/x-7z-compressed", prefix(0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c)],
  ["application/x-xz", prefix(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)],
  ["application/zstd", zst],
  ["application/pdf", prefix(0x25, 0x50, 0x44, 0x46)],
  ["application/vnd.microsoft.portable-executable", prefix(0x4d, 0x5a)],
  [
    "application/x-shockwave-flash",
    (b) => b.length > 2 && (b[0] === 0x43 || b[0] === 0x46) && b[1] === 0x57 && b[2] === 0x53,
  ],
  ["application/rtf", prefix(0x7b, 0x5c, 0x72, 0x74, 0x66)],
  [
    "application/octet-stream",
    (b) =>
      b.length > 35 &&
      b[34] === 0x4c &&
      b[35] === 0x50 &&
      ((b[8] === 0x02 && b[9] === 0x00 && b[10] === 0x01) ||
        (b[8] === 0x01 && b[9] === 0x00 && b[10] === 0x00) ||
        (b[8] === 0x02 && b[9] === 0x00 && b[10] === 0x02)),
  ],
  ["application/postscript", prefix(0x25, 0x21)],
  ["application/vnd.sqlite3", prefix(0x53, 0x51, 0x4c, 0x69)],
  ["application/x-nintendo-nes-rom", prefix(0x4e, 0x45, 0x53, 0x1a)],
  ["application/x-google-chrome-extension", prefix(0x43, 0x72, 0x32, 0x34)],
  [
    "application/vnd.ms-cab-compressed",
    (b) => startsWith(b, ascii("MSCF"), 0) || startsWith(b, [0x49, 0x53, 0x63, 0x28], 0),
  ],
  ["application/vnd.debian.binary-package", (b) => startsWith(b, ascii("!<arch>\ndebian-binary"), 0)],
  ["application/x-unix-archive", (b) => startsWith(b, ascii("!<arch>"), 0)],
  ["application/x-compress", (b) => b.length > 1 && b[0] === 0x1f && (b[1] === 0xa0 || b[1] === 0x9d)],
  ["application/x-lzip", prefix(0x4c, 0x5a, 0x49, 0x50)],
  ["application/x-rpm", (b) => b.length > 96 && startsWith(b, [0xed, 0xab, 0xee, 0xdb], 0)],
  ["application/x-executable", (b) => b.length > 52 && startsWith(b, [0x7f, 0x45, 0x4c, 0x46], 0)],
  ["application/dicom", (b) => b.length > 131 && startsWith(b, ascii("DICM"), 128)],
  ["application/x-iso9660-image", (b) => b.length > 32773 && startsWith(b, ascii("CD001"), 32769)],
  [
    "application/x-mach-binary",
    (b) =>
      b.length > 3 &&
      [
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xfe, 0xed, 0xfa, 0xce],
        [0xbe, 0xba, 0xfe, 0xca],
        [0xcf, 0xfa, 0xed, 0xfe],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xca, 0xfe, 0xba, 0xbe],
      ].some((m) => startsWith(b, m, 0)),
  ],
];

function dex(b: Uint8Array): boolean {
  return b.length > 36 && startsWith(b, [0x64, 0x65, 0x78, 0x0a], 0) && b[36] === 0x70;
}
