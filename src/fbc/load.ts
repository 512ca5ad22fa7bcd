/**
 * Loading File-Based Catalogs from a directory tree, a single file or standard input, with opm's
 * acceptance rules (alpha/declcfg/load.go): every file that `.indexignore` does not exclude is
 * read, whatever its name; each blob is normalised and routed by `schema`. Unlike opm, loading
 * does not stop at the first bad blob: every problem is reported, with its file and line.
 */
import { goQuote, goT, goV } from "../gojson/fmt.js";
import { closeSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildIgnoreMatcher } from "../ignore/index.js";
import { encodeSortedCompact } from "../gojson/encode.js";
import { hasJsonPrefix } from "../gojson/unicode.js";

import { forEachStreamItem, parseGoYamlDocument } from "../yaml/index.js";
import {
  DecodeError,
  decodeBundle,
  decodeStdBase64Transient,
  decodeBundleObjectData,
  decodeChannel,
  decodeDeprecation,
  decodePackage,
} from "./decode.js";
import { OpcatError, problem, problemsKind, type Problem } from "../errors/index.js";
import { openInputSync, readInputStream, readInputTextSync, refuseSpecial, type ReadOptions } from "../fsx/readfile.js";
import { isOpcatTemp } from "../fsx/staged.js";
import { RawJson } from "./rawjson.js";
import { notAnObjectMessage } from "./stream.js";
import {
  emptyConfig,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  type Bundle,
  type DeclarativeConfig,
  type JsonObject,
  type JsonValue,
  type Location,
} from "./types.js";
import { goErrnoText } from "../gojson/goerrno.js";

export const INDEX_IGNORE = ".indexignore";

export interface LoadResult {
  config: DeclarativeConfig;
  /** Every problem found while reading, in file order. Empty when the catalog loaded cleanly. */
  problems: Problem[];
  /** Files read (after `.indexignore`) and their total size in bytes. */
  files: number;
  bytes: number;
}

export interface LoadOptions {
  /** Called after each file with the running totals (for progress displays). */
  onFile?: (file: string, filesDone: number, bytesDone: number) => void;
}

const IGNORE_HINT = "if this file is not part of the catalog, exclude it with a .indexignore file (gitignore syntax)";

/** Loads every blob of one stream (a file's text). `file` names it in locations. */
/** The meta of a blob: its reserved keys, matched case-insensitively as opm does ("" when absent). */
export interface BlobMeta {
  schema: string;
  package: string;
  name: string;
}

/**
 * Loads one file's text into `into`. `onBlob`, when given, sees every blob whose meta is valid, with
 * its parsed value (for callers that keep the blobs themselves, e.g. `serve`'s index). `from`, for a
 * part of a file loaded by itself (a line of JSON Lines), is where the part starts: the lines and
 * blobs before it, counted into the locations as if the whole file were loaded.
 */
export function loadText(
  text: string,
  file: string,
  into: LoadResult = newResult(),
  byteLength?: number,
  onBlob?: (obj: JsonObject, meta: BlobMeta) => void,
  from?: { line: number; index: number },
): LoadResult {
  // Each blob is decoded as soon as it is parsed: its parsed form dies young.
  let blobs = 0;
  const syntax: Problem[] = [];
  forEachStreamItem(text, (item) => {
    const loc: Location = from
      ? { file, line: item.line + from.line, index: item.index + from.index }
      : { file, line: item.line, index: item.index };
    if (item.kind === "error") {
      const p = problem(item.code, item.message, {
        loc,
        hint:
          item.code === "FBC_YAML_SEPARATOR"
            ? "a line starting with --- may only be followed by spaces or a comment"
            : syntaxHint(item.inDocument),
      });
      if (item.code !== "FBC_YAML_SEPARATOR") syntax.push(p);
      into.problems.push(p);
      return;
    }
    blobs++;
    addBlob(into, item.value, loc, item.yaml, onBlob);
  });
  // A file none of whose blobs parse may not be part of the catalog at all.
  if (blobs === 0) for (const p of syntax) p.hint = p.hint ? `${p.hint}; ${IGNORE_HINT}` : IGNORE_HINT;
  into.files++;
  into.bytes += byteLength ?? Buffer.byteLength(text);
  return into;
}

/**
 * The hint of a syntax error: go-yaml's "line N" counts from the start of the YAML document, not of the
 * file; said so, with the file line it means, when the two differ.
 */
function syntaxHint(inDocument: { start: number; line: number } | undefined): string | undefined {
  if (!inDocument || inDocument.start === 1) return undefined;
  const { start, line } = inDocument;
  return (
    `go-yaml's "line ${line}" counts from the start of the YAML document, which begins at ` +
    `line ${start} of the file: it is line ${start + line - 1} of the file`
  );
}

function newResult(): LoadResult {
  return { config: emptyConfig(), problems: [], files: 0, bytes: 0 };
}

const NEEDS_FOLD = /[^a-z0-9_.-]/;

/**
 * Keys of the olm.* schemas that need folding but cannot collide with one another or with the
 * reserved keys (their folded forms are distinct and none is schema/package/name).
 */
const KNOWN_MIXED_CASE_KEYS = new Set(["defaultChannel", "relatedImages", "skipRange"]);
/** Their folded forms: a key spelled like this could collide with the known key. */
const KNOWN_FOLDED_KEYS = new Set(["defaultchannel", "relatedimages", "skiprange"]);

/** Case folding used by opm for the reserved top-level keys (golang.org/x/text/cases.Fold). */
function fold(key: string): string {
  return key.toUpperCase().toLowerCase();
}

function addBlob(
  res: LoadResult,
  value: JsonValue,
  loc: Location,
  fromYaml: boolean,
  onBlob?: (obj: JsonObject, meta: BlobMeta) => void,
): void {
  const metaErr = (code: string, msg: string, hint?: string): void => {
    res.problems.push(
      problem(code, fromYaml ? `error unmarshaling JSON: while decoding JSON: ${msg}` : msg, { loc, hint }),
    );
  };
  if (value === null) {
    res.problems.push(
      problem("FBC_MISSING_SCHEMA", "object '' is missing root schema field", {
        loc,
        hint:
          "this YAML document is empty (only comments or blank lines): remove it or its --- " +
          "separator; if the file is not part of the catalog, exclude it with a .indexignore file",
      }),
    );
    return;
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    res.problems.push(
      problem("FBC_NOT_AN_OBJECT", notAnObjectMessage(value, undefined, fromYaml), { loc, hint: IGNORE_HINT }),
    );
    return;
  }
  const obj = value as JsonObject;
  // Reserved keys are matched case-insensitively; keys differing only by case are an error.
  let schemaKey: string | undefined;
  let packageKey: string | undefined;
  let nameKey: string | undefined;
  const keys = Object.keys(obj);
  // Keys without upper-case or non-ASCII letters fold to themselves and cannot collide with each other.
  let folded: Map<string, string[]> | undefined;
  let needFold = false;
  for (const k of keys) {
    if (k === "schema") schemaKey = k;
    else if (k === "package") packageKey = k;
    else if (k === "name") nameKey = k;
    else if (!needFold && (KNOWN_MIXED_CASE_KEYS.has(k) ? false : KNOWN_FOLDED_KEYS.has(k) || NEEDS_FOLD.test(k)))
      needFold = true;
  }
  if (needFold) {
    folded = new Map();
    for (const k of keys) {
      const f = fold(k);
      if (f === "schema") schemaKey = k;
      else if (f === "package") packageKey = k;
      else if (f === "name") nameKey = k;
      const list = folded.get(f);
      if (list) list.push(k);
      else folded.set(f, [k]);
    }
  }
  if (folded && folded.size !== keys.length) {
    const errs: string[] = [];
    for (const [f, ks] of [...folded.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      if (ks.length > 1) errs.push(`duplicate keys for key ${goQuote(f)}: [${[...ks].sort().join(" ")}]`);
    }
    metaErr(
      "FBC_DUPLICATE_KEYS",
      errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`,
      "keep one spelling of each key (keys are case-insensitive)",
    );
    return;
  }
  const reserved = (key: string | undefined): string | undefined => {
    if (key === undefined) return "";
    const v = obj[key];
    if (typeof v === "string") return v;
    metaErr("FBC_RESERVED_KEY_TYPE", `expected value for key ${goQuote(key)} to be a string, got ${goT(v)}: ${goV(v)}`);
    return undefined;
  };
  const schema = reserved(schemaKey);
  if (schema === undefined) return;
  const pkg = reserved(packageKey);
  if (pkg === undefined) return;
  const name = reserved(nameKey);
  if (name === undefined) return;
  onBlob?.(obj, { schema, package: pkg, name });

  const blobRef = { schema, package: pkg || undefined, name: name || undefined };
  try {
    switch (schema) {
      case SCHEMA_PACKAGE: {
        const p = decodeWith("parse package", () => decodePackage(obj, loc));
        res.config.packages.push(p);
        return;
      }
      case SCHEMA_CHANNEL: {
        const c = decodeWith("parse channel", () => decodeChannel(obj, loc));
        res.config.channels.push(c);
        return;
      }
      case SCHEMA_BUNDLE: {
        const b = decodeWith("parse bundle", () => decodeBundle(obj, loc));
        checkBundleObjects(b);
        res.config.bundles.push(b);
        return;
      }
      case SCHEMA_DEPRECATIONS: {
        const d = decodeWith("parse deprecation", () => decodeDeprecation(obj, loc));
        res.config.deprecations.push(d);
        return;
      }
      case "":
        res.problems.push(
          problem("FBC_MISSING_SCHEMA", `object '${encodeSortedCompact(obj)}\n' is missing root schema field`, {
            loc,
            hint: 'every blob needs a "schema" key, e.g. olm.package, olm.channel, olm.bundle or olm.deprecations',
          }),
        );
        return;
      default:
        res.config.others.push({ schema, package: pkg ?? "", name: name ?? "", blob: RawJson.fromValue(obj), loc });
        return;
    }
  } catch (e) {
    if (e instanceof BlobError) {
      res.problems.push(problem(e.code, e.message, { loc, blob: blobRef, hint: e.hint }));
      return;
    }
    throw e;
  }
}

class BlobError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

function decodeWith<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof DecodeError)
      throw new BlobError("FBC_DECODE", `${prefix}: ${e.message}`, "fix the type of the field named in the message");
    throw e;
  }
}

/** The first non-space byte of `b` is `{` (Go's hasJSONPrefix over the decoded manifest). */
function bytesHaveJsonPrefix(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x7b;
  }
  return false;
}

/**
 * opm decodes every `olm.bundle.object` while loading (readBundleObjects) and fails on bad base64 or
 * on data that is neither JSON nor YAML. The same checks, without keeping the decoded manifests.
 */
function checkBundleObjects(b: Bundle): void {
  const props = b.properties;
  for (let i = 0; i < props.length; i++) {
    if (props[i].type !== "olm.bundle.object") continue;
    const where = (): string => `read bundle objects: package ${goQuote(b.package)}, bundle ${goQuote(b.name)}`;
    const raw = props[i].value;
    if (raw.isMissing) {
      throw new BlobError(
        "FBC_BUNDLE_OBJECT",
        `${where()}: parse property at index ${i} as bundle object: unexpected end of JSON input`,
      );
    }
    const v = raw.value;
    const data = v !== null && typeof v === "object" && !Array.isArray(v) ? v.data : undefined;
    if (typeof data === "string" && Object.keys(v as object).length === 1) {
      const fast = decodeStdBase64Transient(data);
      if (fast !== undefined && bytesHaveJsonPrefix(fast)) continue;
    }
    let bytes: Uint8Array | null | undefined;
    try {
      bytes = decodeBundleObjectData(v);
    } catch (e) {
      if (e instanceof DecodeError) {
        throw new BlobError(
          "FBC_BUNDLE_OBJECT",
          `${where()}: parse property at index ${i} as bundle object: ${e.message}`,
          "olm.bundle.object data must be standard base64 (with padding) of one manifest",
        );
      }
      throw e;
    }
    if (!bytes) continue;
    const text = Buffer.from(bytes).toString("utf8");
    if (hasJsonPrefix(text)) continue;
    try {
      parseGoYamlDocument(text);
    } catch (e) {
      throw new BlobError(
        "FBC_BUNDLE_OBJECT",
        `${where()}: convert bundle object property at index ${i} to JSON: ${(e as Error).message}`,
      );
    }
  }
}

/** The size budget of one catalog file: JavaScript strings end near 512 Mi characters. */
export { MAX_FILE_BYTES } from "../fsx/readfile.js";

/** Loads one file. */
export function loadFile(path: string, displayName = path, into?: LoadResult): LoadResult {
  // readFileSync(…, "utf8") decodes in native code without a Buffer. Reading a Buffer and copying it
  // as Latin-1 when it is ASCII is a third faster, but the Buffer and the text then live together
  // until the next GC: peak RSS rose by up to 0.6× the input (measured 2026-11-22), so not that.
  let text: string;
  try {
    const { fd } = openInputSync(path, CATALOG_FILE);
    try {
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    throw ioError(path, e);
  }
  return loadText(text, displayName, into);
}

/** How a catalog file is read: a FIFO would block forever (opm hangs there), a device never ends. */
export const CATALOG_FILE: ReadOptions = {
  what: "catalog file",
  regularOnly: "catalogs are read from regular files and directories only",
  tooLargeHint: "split it into one file per package (opcat migrate does)",
};

function ioError(path: string, e: unknown): OpcatError {
  const err = e as NodeJS.ErrnoException;
  const why = goErrnoText(err);
  return new OpcatError("IO_ERROR", `open ${path}: ${why}`, { kind: "io", cause: e });
}

/** The files opm would read under `root`, in its walk order (slash-separated relative paths). */
export function listCatalogFiles(root: string): string[] {
  const files: string[] = [];
  const ignoreFiles: { dir: string; content: string }[] = [];
  const walk = (rel: string): void => {
    const abs = rel ? join(root, rel) : root;
    const names = readdirSync(abs).sort(compareBytes);
    for (const name of names) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(abs, name));
      // opcat's own temporary files (a write killed before its rename) are never content
      if (isOpcatTemp(name, st.isDirectory())) continue;
      if (st.isDirectory()) walk(r);
      else if (name === INDEX_IGNORE) {
        ignoreFiles.push({ dir: rel, content: readInputTextSync(join(abs, name), { what: ".indexignore file" }) });
      } else files.push(r);
    }
  };
  walk("");
  const matcher = buildIgnoreMatcher(ignoreFiles);
  return files.filter((f) => !matcher.ignores(f));
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Loads a catalog directory: every non-ignored file, in opm's walk order. */
export function loadDirectory(root: string, opts: LoadOptions = {}): LoadResult {
  let files: string[];
  try {
    const st = statSync(root);
    if (!st.isDirectory())
      throw new OpcatError("NOT_A_DIRECTORY", `${goQuote(root)} is not a directory`, { kind: "io" });
    files = listCatalogFiles(root);
  } catch (e) {
    if (e instanceof OpcatError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw new OpcatError("IO_ERROR", `lstat ${err.path ?? root}: ${goErrnoText(err)}`, { kind: "io", cause: e });
  }
  const res = newResult();
  for (const f of files) {
    try {
      loadFile(join(root, f), f, res);
    } catch (e) {
      if (!(e instanceof OpcatError)) throw e;
      res.problems.push(
        problem(
          e.code === "IO_NOT_REGULAR" || e.code === "IO_FILE_TOO_LARGE" ? e.code : "IO_ERROR",
          e.message.replace(join(root, f), f),
          { loc: { file: f, line: 0, index: 0 } },
        ),
      );
    }
    opts.onFile?.(f, res.files, res.bytes);
  }
  return res;
}

/** Reads all of standard input (or another stream) and loads it as one catalog stream. */
export async function loadStream(stream: NodeJS.ReadableStream, name = "-"): Promise<LoadResult> {
  const text = (await readInputStream(stream, name === "-" ? "standard input" : name, CATALOG_FILE)).toString("utf8");
  return loadText(text, name);
}

/**
 * Loads a catalog from a directory, a file, or `-` (standard input). Throws OpcatError (exit code
 * 2) when the path cannot be read; problems inside the catalog are returned, not thrown.
 */
export async function loadCatalog(ref: string, opts: LoadOptions = {}): Promise<LoadResult> {
  if (ref === "-") return loadStream(process.stdin);
  let st;
  try {
    st = statSync(ref);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new OpcatError("IO_ERROR", `stat ${ref}: ${goErrnoText(err)}`, {
      kind: "io",
      cause: e,
    });
  }
  if (st.isDirectory()) return loadDirectory(ref, opts);
  refuseSpecial(ref, st, CATALOG_FILE);
  const res = loadFile(ref, ref);
  opts.onFile?.(ref, res.files, res.bytes);
  return res;
}

/** Loads and throws an OpcatError (exit code 1) listing every problem, if there is any. */
export async function loadCatalogOrThrow(ref: string, opts: LoadOptions = {}): Promise<DeclarativeConfig> {
  const res = await loadCatalog(ref, opts);
  if (res.problems.length > 0) {
    throw new OpcatError(res.problems[0].code, res.problems[0].message, {
      problems: res.problems,
      kind: problemsKind(res.problems),
    });
  }
  return res.config;
}
