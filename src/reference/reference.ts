/**
 * Container image references: a port of go.podman.io/image/v5 (v5.41.1) `docker/reference`, the
 * package opm's validateImagePullSpec uses (same grammar as github.com/distribution/reference), with
 * digest validation from github.com/opencontainers/go-digest v1.0.0 (sha256, sha384, sha512 linked).
 *
 * Grammar:
 *
 *     reference        := name [ ":" tag ] [ "@" digest ]
 *     name             := [domain '/'] path-component ['/' path-component]*
 *     domain           := domain-component ['.' domain-component]* [':' port-number]
 *     domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
 *     port-number      := /[0-9]+/
 *     path-component   := /[a-z0-9]+/ [separator /[a-z0-9]+/]*
 *     separator        := "." | "_" | "__" | any run of "-" (possibly empty)
 *     tag              := /[\w][\w.-]{0,127}/
 *     digest           := /[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}/
 *
 * Error texts are Go's, character for character. Self-contained: no imports.
 */

/** A reference that does not parse; `message` is the Go error text. */
export class ImageReferenceError extends Error {
  override readonly name = "ImageReferenceError";
}

/** A parsed image reference. */
export interface ImageReference {
  /** Registry host[:port]: "docker.io" after normalisation; "" for a non-normalised short name. */
  readonly domain: string;
  /** Repository path, e.g. "library/busybox". */
  readonly path: string;
  /** Tag, when the reference has one. */
  readonly tag?: string;
  /** Digest "algorithm:hex", when the reference has one. */
  readonly digest?: string;
  /** domain/path (just path when the domain is empty): Go's Name(). */
  readonly name: string;
  /** Full form: name[:tag][@digest] (Go's String()). */
  toString(): string;
  /** Go's FamiliarString: without "docker.io/" and, for official images, "library/". */
  familiar(): string;
}

// Error texts (reference.go, normalize.go, go-digest).
const ERR_INVALID_FORMAT = "invalid reference format";
const ERR_NAME_CONTAINS_UPPERCASE = "repository name must be lowercase";
const ERR_NAME_EMPTY = "repository name must have at least one component";
const NAME_TOTAL_LENGTH_MAX = 255;
const ERR_NAME_TOO_LONG = `repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`;
const ERR_NAME_NOT_CANONICAL = "repository name must be canonical";
const ERR_NORMALIZED_UPPERCASE = "invalid reference format: repository name must be lowercase";
const ERR_DIGEST_INVALID_FORMAT = "invalid checksum digest format";
const ERR_DIGEST_INVALID_LENGTH = "invalid checksum digest length";
const ERR_DIGEST_UNSUPPORTED = "unsupported digest algorithm";

const DEFAULT_DOMAIN = "docker.io";
const LEGACY_DEFAULT_DOMAIN = "index.docker.io";
const OFFICIAL_REPO_NAME = "library";

// The regular expressions of regexp.go, rewritten into equivalent languages that a backtracking
// engine matches in (near) linear time: Go's separator `[-]*` may be empty, which makes
// `[a-z0-9]+(sep[a-z0-9]+)*` ambiguous and exponential for JS; with `-+` the language is the same.
// Submatches are the same too: the only ambiguity left is whether the optional domain is taken, and
// both engines prefer taking it.
const DOMAIN_COMPONENT = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const NAME_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const PATH = `${NAME_COMPONENT}(?:/${NAME_COMPONENT})*`;
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
const REFERENCE_RE = new RegExp(`^((?:${DOMAIN}/)?${PATH})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const ANCHORED_NAME_RE = new RegExp(`^(?:(${DOMAIN})/)?(${PATH})$`);
const ANCHORED_IDENTIFIER_RE = /^[a-f0-9]{64}$/;
// go-digest's DigestRegexpAnchored and per-algorithm encodings.
const GO_DIGEST_RE = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;
const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };
const LOWER_HEX_RE = /^[a-f0-9]*$/;

class Reference implements ImageReference {
  readonly tag?: string;
  readonly digest?: string;

  constructor(
    readonly domain: string,
    readonly path: string,
    tag: string,
    digest: string,
  ) {
    if (tag !== "") this.tag = tag;
    if (digest !== "") this.digest = digest;
  }

  get name(): string {
    return this.domain === "" ? this.path : `${this.domain}/${this.path}`;
  }

  toString(): string {
    return withSuffixes(this.name, this.tag, this.digest);
  }

  familiar(): string {
    let domain = this.domain;
    let path = this.path;
    if (domain === DEFAULT_DOMAIN) {
      domain = "";
      const slash = path.indexOf("/");
      if (slash >= 0 && path.indexOf("/", slash + 1) < 0 && path.slice(0, slash) === OFFICIAL_REPO_NAME) {
        path = path.slice(slash + 1);
      }
    }
    return withSuffixes(domain === "" ? path : `${domain}/${path}`, this.tag, this.digest);
  }
}

function withSuffixes(name: string, tag: string | undefined, digest: string | undefined): string {
  let s = name;
  if (tag !== undefined) s += `:${tag}`;
  if (digest !== undefined) s += `@${digest}`;
  return s;
}

/** go-digest Digest.Validate: undefined when valid, else the error text. */
function validateDigest(s: string): string | undefined {
  const i = s.indexOf(":");
  if (i <= 0 || i + 1 === s.length) return ERR_DIGEST_INVALID_FORMAT;
  const algorithm = s.slice(0, i);
  const encoded = s.slice(i + 1);
  const size = Object.hasOwn(DIGEST_HEX_LENGTH, algorithm) ? DIGEST_HEX_LENGTH[algorithm] : undefined;
  if (size === undefined) return GO_DIGEST_RE.test(s) ? ERR_DIGEST_UNSUPPORTED : ERR_DIGEST_INVALID_FORMAT;
  if (encoded.length !== size) return ERR_DIGEST_INVALID_LENGTH;
  return LOWER_HEX_RE.test(encoded) ? undefined : ERR_DIGEST_INVALID_FORMAT;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Go's strings.ToLower: simple (one-to-one) Unicode case mapping per code point. JS toLowerCase uses
 * full mappings, which differ only for U+0130 (Go: "i"; JS: "i\u0307").
 */
function goToLower(s: string): string {
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  let out = "";
  for (const ch of s) {
    if (ch === "\u0130") {
      out += "i";
      continue;
    }
    const l = ch.toLowerCase();
    // Keep the character if its full mapping is not a single code point.
    out += l.length === ch.length || [...l].length === 1 ? l : ch;
  }
  return out;
}

/** reference.Parse; returns the reference or Go's error text. */
function parse(s: string): Reference | string {
  const m = REFERENCE_RE.exec(s);
  if (m === null) {
    if (s === "") return ERR_NAME_EMPTY;
    if (REFERENCE_RE.test(goToLower(s))) return ERR_NAME_CONTAINS_UPPERCASE;
    return ERR_INVALID_FORMAT;
  }
  const name = m[1];
  if (name.length > NAME_TOTAL_LENGTH_MAX) return ERR_NAME_TOO_LONG;
  let domain = "";
  let path = name;
  const nm = ANCHORED_NAME_RE.exec(name);
  if (nm !== null) {
    domain = nm[1] ?? "";
    path = nm[2];
  }
  const digest = m[3] ?? "";
  if (digest !== "") {
    const err = validateDigest(digest);
    if (err !== undefined) return err;
  }
  // getBestReferenceType: the grammar always yields a non-empty name, so ErrNameEmpty and
  // digest-only references cannot occur here.
  return new Reference(domain, path, m[2] ?? "", digest);
}

/** splitDockerDomain: the domain (defaulted and de-legacied) and the rest. */
function splitDockerDomain(name: string): [domain: string, remainder: string] {
  const i = name.indexOf("/");
  let domain: string;
  let remainder: string;
  if (i === -1) {
    domain = DEFAULT_DOMAIN;
    remainder = name;
  } else {
    const head = name.slice(0, i);
    if (!head.includes(".") && !head.includes(":") && head !== "localhost") {
      domain = DEFAULT_DOMAIN;
      remainder = name;
    } else {
      domain = head;
      remainder = name.slice(i + 1);
    }
  }
  if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !remainder.includes("/")) remainder = `${OFFICIAL_REPO_NAME}/${remainder}`;
  return [domain, remainder];
}

/** reference.ParseNormalizedNamed; returns the reference or Go's error text. */
function parseNormalized(s: string): Reference | string {
  if (ANCHORED_IDENTIFIER_RE.test(s)) {
    return `invalid repository name (${s}), cannot specify 64-byte hexadecimal strings`;
  }
  const [domain, remainder] = splitDockerDomain(s);
  const colon = remainder.indexOf(":");
  const remoteName = colon > -1 ? remainder.slice(0, colon) : remainder;
  if (goToLower(remoteName) !== remoteName) return ERR_NORMALIZED_UPPERCASE;
  // The result always has a name (see parse), so Go's "reference %s has no name" cannot happen.
  return parse(`${domain}/${remainder}`);
}

function unwrap(r: Reference | string): ImageReference {
  if (typeof r === "string") throw new ImageReferenceError(r);
  return r;
}

function orError(r: Reference | string): ImageReference | ImageReferenceError {
  return typeof r === "string" ? new ImageReferenceError(r) : r;
}

/**
 * reference.ParseNormalizedNamed: parses a familiar or full reference and normalises it ("busybox" →
 * "docker.io/library/busybox", "index.docker.io/x/y" → "docker.io/x/y"). No default tag is added.
 * Throws ImageReferenceError with Go's message.
 */
export function parseNormalizedNamed(s: string): ImageReference {
  return unwrap(parseNormalized(s));
}

/** Like {@link parseNormalizedNamed}, but returns the error instead of throwing it. */
export function tryParseNormalizedNamed(s: string): ImageReference | ImageReferenceError {
  return orError(parseNormalized(s));
}

/**
 * reference.Parse: checks the grammar without normalising. The domain is the first component when the
 * name has more than one and that component is a valid domain, else "" ("foo/bar" → domain "foo",
 * path "bar"; "busybox" → domain "", path "busybox"), exactly as Go splits it. `familiar()` still
 * strips a "docker.io" domain, as Go's FamiliarString does. Throws ImageReferenceError.
 */
export function parseReference(s: string): ImageReference {
  return unwrap(parse(s));
}

/** Like {@link parseReference}, but returns the error instead of throwing it. */
export function tryParseReference(s: string): ImageReference | ImageReferenceError {
  return orError(parse(s));
}

/**
 * reference.ParseNamed: {@link parseNormalizedNamed}, then requires the input to be already in
 * normalised form, else "repository name must be canonical". Throws ImageReferenceError.
 */
export function parseNamed(s: string): ImageReference {
  const r = unwrap(parseNormalized(s));
  if (r.toString() !== s) throw new ImageReferenceError(ERR_NAME_NOT_CANONICAL);
  return r;
}

/**
 * opm's validateImagePullSpec check (alpha/declcfg/declcfg_to_model.go): undefined when `s` is empty
 * (not validated) or parses with ParseNormalizedNamed, else the parser's error text. opm reports it as
 * `<what>: invalid image pull spec "<s>": <text>` (Go %q quoting), which is left to the caller.
 */
export function validatePullSpec(s: string): string | undefined {
  if (s === "") return undefined;
  // Catalogs pin thousands of images by digest in a few hundred repositories: the verdict on
  // `<name>@sha256:<64 lower-case hex>` does not depend on the hex (it is after the first colon of the
  // remainder, and any such digest is valid), so valid prefixes are remembered. Errors are always
  // computed from `s` itself.
  const n = s.length;
  const digestAt = n - SHA256_SUFFIX_LENGTH;
  if (
    digestAt > 0 &&
    s.charCodeAt(digestAt) === 0x40 &&
    s.startsWith("sha256:", digestAt + 1) &&
    isLowerHex(s, n - 64, n)
  ) {
    const prefix = s.slice(0, n - 64);
    if (validPinnedPrefixes.has(prefix)) return undefined;
    const r = parseNormalized(s);
    if (typeof r === "string") return r;
    if (validPinnedPrefixes.size >= 4096) validPinnedPrefixes.clear();
    validPinnedPrefixes.add(prefix);
    return undefined;
  }
  const r = parseNormalized(s);
  return typeof r === "string" ? r : undefined;
}

/** "@sha256:" and 64 hex digits. */
const SHA256_SUFFIX_LENGTH = 72;
const validPinnedPrefixes = new Set<string>();

function isLowerHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
