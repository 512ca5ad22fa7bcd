/**
 * HTTP conditional requests and byte ranges for the catalog server, a port of Go's net/http
 * (src/net/http/fs.go: checkPreconditions, checkIfMatch, checkIfNoneMatch, checkIfUnmodifiedSince,
 * checkIfModifiedSince, checkIfRange, scanETag, etagStrongMatch, etagWeakMatch, writeNotModified and
 * parseRange; src/net/http/header.go: ParseTime): If-Match, If-None-Match, If-Modified-Since,
 * If-Unmodified-Since, If-Range and Range answered as catalogd's Go server answers them (the status,
 * the headers dropped from a 304, the texts of 416 answers). One range at most; several are served whole.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Answers a failed precondition (304 or 412) with an empty body: Go's writeNotModified for 304. */
export function finishPrecondition(res: ServerResponse, status: number): void {
  // RFC 7232 4.1 (Go's writeNotModified): no representation metadata; Last-Modified dropped when there is an ETag.
  if (status === 304)
    for (const h of ["Content-Type", "Content-Length", "Content-Encoding", "Last-Modified", "Accept-Ranges"])
      res.removeHeader(h);
  res.writeHead(status);
  res.end();
}

/** 0 = go on, else the status to answer with (304 or 412). */
export function checkPreconditions(req: IncomingMessage, etag: string, modtime: Date): number {
  const method = req.method ?? "GET";
  let ch = checkIfMatch(header(req, "if-match"), etag);
  if (ch === Cond.None) ch = checkIfUnmodifiedSince(header(req, "if-unmodified-since"), modtime);
  if (ch === Cond.False) return 412;
  switch (checkIfNoneMatch(header(req, "if-none-match"), etag)) {
    case Cond.False:
      return method === "GET" || method === "HEAD" ? 304 : 412;
    case Cond.None:
      if (
        (method === "GET" || method === "HEAD") &&
        checkIfModifiedSince(header(req, "if-modified-since"), modtime) === Cond.False
      )
        return 304;
  }
  return 0;
}

const enum Cond {
  None,
  True,
  False,
}

function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : (v ?? "");
}

function checkIfMatch(im: string, etag: string): Cond {
  if (im === "") return Cond.None;
  let buf = im;
  for (;;) {
    buf = buf.trim();
    if (buf === "") break;
    if (buf[0] === ",") {
      buf = buf.slice(1);
      continue;
    }
    if (buf[0] === "*") return Cond.True;
    const [tag, rest] = scanETag(buf);
    if (tag === "") break;
    if (etagStrongMatch(tag, etag)) return Cond.True;
    buf = rest;
  }
  return Cond.False;
}

function checkIfNoneMatch(inm: string, etag: string): Cond {
  if (inm === "") return Cond.None;
  let buf = inm;
  for (;;) {
    buf = buf.trim();
    if (buf === "") break;
    if (buf[0] === ",") {
      buf = buf.slice(1);
      continue;
    }
    if (buf[0] === "*") return Cond.False;
    const [tag, rest] = scanETag(buf);
    if (tag === "") break;
    if (etagWeakMatch(tag, etag)) return Cond.False;
    buf = rest;
  }
  return Cond.True;
}

function checkIfUnmodifiedSince(ius: string, modtime: Date): Cond {
  if (ius === "") return Cond.None;
  const t = parseHttpDate(ius);
  if (t === undefined) return Cond.None;
  return Math.floor(modtime.getTime() / 1000) <= t / 1000 ? Cond.True : Cond.False;
}

function checkIfModifiedSince(ims: string, modtime: Date): Cond {
  if (ims === "") return Cond.None;
  const t = parseHttpDate(ims);
  if (t === undefined) return Cond.None;
  return Math.floor(modtime.getTime() / 1000) <= t / 1000 ? Cond.False : Cond.True;
}

/** Whether a range request may be answered as one: no If-Range, or one naming the current ETag or date. */
export function checkIfRange(req: IncomingMessage, etag: string, modtime: Date): boolean {
  const ir = header(req, "if-range");
  if (ir === "") return true;
  const [tag] = scanETag(ir);
  if (tag !== "") return etagStrongMatch(tag, etag);
  const t = parseHttpDate(ir);
  return t !== undefined && t / 1000 === Math.floor(modtime.getTime() / 1000);
}

/** Go's scanETag: a (possibly weak) entity tag at the start of `s`, and the rest. */
function scanETag(s: string): [string, string] {
  s = s.trim();
  let start = 0;
  if (s.startsWith("W/")) start = 2;
  if (s.length - start < 2 || s[start] !== '"') return ["", ""];
  for (let i = start + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80) continue;
    if (c === 0x22) return [s.slice(0, i + 1), s.slice(i + 1)];
    return ["", ""];
  }
  return ["", ""];
}

function etagStrongMatch(a: string, b: string): boolean {
  return a === b && a !== "" && a[0] === '"';
}

function etagWeakMatch(a: string, b: string): boolean {
  return a.replace(/^W\//, "") === b.replace(/^W\//, "");
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const IMF = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850 = new RegExp(
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), /.source +
    /(\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) [A-Z]{3}$/.source,
);
const ANSIC = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** Go's http.ParseTime (RFC 1123 with GMT, RFC 850, ANSI C), in ms since the epoch; undefined if invalid. */
export function parseHttpDate(s: string): number | undefined {
  let y: number, mon: string, d: number, h: number, mi: number, se: number;
  let m = IMF.exec(s);
  if (m) [d, mon, y, h, mi, se] = [+m[1], m[2], +m[3], +m[4], +m[5], +m[6]];
  else if ((m = RFC850.exec(s))) {
    // Go's two-digit years: 69-99 → 19xx, 00-68 → 20xx.
    const yy = +m[3];
    [d, mon, y, h, mi, se] = [+m[1], m[2], yy >= 69 ? 1900 + yy : 2000 + yy, +m[4], +m[5], +m[6]];
  } else if ((m = ANSIC.exec(s))) [mon, d, h, mi, se, y] = [m[1], +m[2].trim(), +m[3], +m[4], +m[5], +m[6]];
  else return undefined;
  const mo = MONTHS.indexOf(mon);
  if (mo < 0 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return undefined;
  const t = Date.UTC(y, mo, d, h, mi, se);
  if (new Date(t).getUTCDate() !== d) return undefined;
  return t;
}

/** Go's parseRange for one range; a string is the 416 message; undefined = serve everything. */
export function parseRange(s: string, size: number): { start: number; length: number } | string | undefined {
  const b = "bytes=";
  if (!s.startsWith(b)) return "invalid range";
  const ranges: { start: number; length: number }[] = [];
  let noOverlap = false;
  const num = (x: string): number => (/^\d+$/.test(x) ? Number(x) : NaN);
  for (let ra of s.slice(b.length).split(",")) {
    ra = ra.trim();
    if (ra === "") continue;
    const i = ra.indexOf("-");
    if (i < 0) return "invalid range";
    const start = ra.slice(0, i).trim();
    const end = ra.slice(i + 1).trim();
    if (start === "") {
      if (end === "" || end[0] === "-") return "invalid range";
      let n = num(end);
      if (Number.isNaN(n)) return "invalid range";
      if (n > size) n = size;
      ranges.push({ start: size - n, length: n });
      continue;
    }
    const st = num(start);
    if (Number.isNaN(st)) return "invalid range";
    if (st >= size) {
      noOverlap = true;
      continue;
    }
    if (end === "") {
      ranges.push({ start: st, length: size - st });
      continue;
    }
    let en = num(end);
    if (Number.isNaN(en) || st > en) return "invalid range";
    if (en >= size) en = size - 1;
    ranges.push({ start: st, length: en - st + 1 });
  }
  if (noOverlap && ranges.length === 0) return "invalid range: failed to overlap";
  // Several ranges (multipart answers) are not supported: the whole body is sent, which RFC 9110 allows.
  if (ranges.length !== 1) return undefined;
  return ranges[0];
}
