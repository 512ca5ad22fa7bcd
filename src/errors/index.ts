/**
 * Errors as values: every problem opcat reports about a catalog carries a stable machine code, the
 * message (opm's wording at its core), where it was found and, where we can say it, what to do.
 */
/** Where a blob came from (src/fbc/types.ts re-exports it). */
export interface Location {
  /** Path of the file relative to the catalog root (slash-separated), or `-` for standard input. */
  readonly file: string;
  /** 1-based line of the first line of the blob (the start of its YAML document or JSON object). */
  readonly line: number;
  /** 0-based position of the blob in its file's stream of blobs. */
  readonly index: number;
}

export type Severity = "error" | "warning";

export interface Problem {
  /** Stable machine-readable code, e.g. `FBC_CHANNEL_MULTIPLE_HEADS`. */
  code: string;
  /** What is wrong, in opm's words where opm reports the same problem. */
  message: string;
  severity: Severity;
  /** The file (relative to the catalog root), line and stream index of the blob concerned. */
  loc?: Location;
  /** The blob concerned, when there is one. */
  blob?: { schema: string; package?: string; name?: string };
  /** What the user can do about it. */
  hint?: string;
}

/** Longest message a problem carries; longer ones (a blob of one huge line quoted whole) are cut in the middle. */
export const MAX_MESSAGE = 8192;

/**
 * `text` when it is at most {@link MAX_MESSAGE} characters, else its start and end around a note of
 * how much was left out: opm quotes a 200 MB one-line blob whole in its error; opcat does not.
 */
export function excerpt(text: string, max = MAX_MESSAGE): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - 1024);
  const tail = text.slice(text.length - 512);
  return `${head} … [${text.length - head.length - tail.length} characters left out] … ${tail}`;
}

export function problem(
  code: string,
  message: string,
  extra: { loc?: Location; blob?: Problem["blob"]; hint?: string; severity?: Severity } = {},
): Problem {
  const p: Problem = { code, message: excerpt(message), severity: extra.severity ?? "error" };
  if (extra.loc) p.loc = extra.loc;
  if (extra.blob) p.blob = extra.blob;
  if (extra.hint) p.hint = extra.hint;
  return p;
}

/** `file:line` of a location, or `file` alone, or "" when unknown. */
export function formatLocation(loc: Location | undefined): string {
  if (!loc) return "";
  return loc.line > 0 ? `${loc.file}:${loc.line}` : loc.file;
}

/** One line per problem: `file:line: error[CODE]: message (hint)`. */
export function formatProblem(p: Problem): string {
  const where = formatLocation(p.loc);
  let s = `${where ? where + ": " : ""}${p.severity}[${p.code}]: ${p.message}`;
  if (p.hint) s += `\n  hint: ${p.hint}`;
  return s;
}

/** A problem as `-o json` reports it: code, severity, message, then location, blob and hint when set. */
export function problemToJson(p: Problem): Record<string, unknown> {
  const o: Record<string, unknown> = { code: p.code, severity: p.severity, message: p.message };
  if (p.loc) o.location = { file: p.loc.file, line: p.loc.line, index: p.loc.index };
  if (p.blob) o.blob = p.blob;
  if (p.hint) o.hint = p.hint;
  return o;
}

/** Deterministic order: by file, line, stream index, then code and message. */
export function compareProblems(a: Problem, b: Problem): number {
  const fa = a.loc?.file ?? "\uffff";
  const fb = b.loc?.file ?? "\uffff";
  if (fa !== fb) return fa < fb ? -1 : 1;
  const la = a.loc?.line ?? 0;
  const lb = b.loc?.line ?? 0;
  if (la !== lb) return la - lb;
  const ia = a.loc?.index ?? 0;
  const ib = b.loc?.index ?? 0;
  if (ia !== ib) return ia - ib;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/**
 * What kind of failure an error is. Library code says what happened; the CLI alone turns a kind into
 * an exit code (src/cli/output.ts: invalid 1, usage and io 2, internal 3).
 * - `invalid`: the content read (a catalog, template, bundle, configuration) is not valid.
 * - `usage`: the request itself is wrong (flags, arguments, a reference of the wrong kind).
 * - `io`: reading or writing failed (files, registries, the network).
 * - `internal`: a bug in opcat.
 */
export type ErrorKind = "invalid" | "usage" | "io" | "internal";

/**
 * The kind of a failure made of `problems` found while reading and checking content: `io` when the
 * system refused to read a file (`IO_ERROR`: permission denied, a symlink loop, a dangling link), even
 * inside a catalog directory; else `invalid`. (A FIFO, a device or an oversized file inside a directory,
 * `IO_NOT_REGULAR` / `IO_FILE_TOO_LARGE`, is content opcat refuses: invalid.)
 */
export function problemsKind(problems: readonly Problem[]): "invalid" | "io" {
  return problems.some((p) => p.code === "IO_ERROR" && p.severity === "error") ? "io" : "invalid";
}

/** Thrown by library functions for bad input or I/O: carries problems and a kind. */
export class OpcatError extends Error {
  readonly code: string;
  readonly problems: Problem[];
  readonly kind: ErrorKind;

  constructor(code: string, message: string, opts: { problems?: Problem[]; kind?: ErrorKind; cause?: unknown } = {}) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = "OpcatError";
    this.code = code;
    this.problems = opts.problems ?? [problem(code, message)];
    this.kind = opts.kind ?? "usage";
  }
}
