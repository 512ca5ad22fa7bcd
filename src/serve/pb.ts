/**
 * `api.Bundle` (operator-registry's registry.proto) in protobuf wire format, written as Go's
 * protobuf encoder writes it: fields in number order, proto3 scalars left out when empty (repeated
 * elements always written), a present message always written. The registry keeps every bundle in
 * this form, cut into the parts its answers combine (see registry.ts), so that answers are bytes
 * that can be kept in a file and sent as they are.
 */
import type { ApiBundle, ApiDeprecation, ApiGroupVersionKind, ApiKeyValue } from "./apitypes.js";

/** Collects protobuf fields; `finish` writes them into one buffer. */
class Writer {
  /** Key and length bytes, strings (UTF-8 encoded when written) and encoded messages, in order. */
  readonly #items: (number[] | string | Buffer)[] = [];
  #size = 0;

  #head(field: number, len: number): void {
    const out: number[] = [];
    for (let n = (field << 3) | 2; ; n = Math.floor(n / 128)) {
      if (n <= 0x7f) {
        out.push(n);
        break;
      }
      out.push((n & 0x7f) | 0x80);
    }
    for (let n = len; ; n = Math.floor(n / 128)) {
      if (n <= 0x7f) {
        out.push(n);
        break;
      }
      out.push((n & 0x7f) | 0x80);
    }
    this.#items.push(out);
    this.#size += out.length + len;
  }

  /** A string field; an empty one is left out unless `always` (repeated elements). */
  string(field: number, s: string, always = false): this {
    if (s === "" && !always) return this;
    this.#head(field, Buffer.byteLength(s, "utf8"));
    this.#items.push(s);
    return this;
  }

  strings(field: number, list: readonly string[]): this {
    for (const s of list) this.string(field, s, true);
    return this;
  }

  message(field: number, m: Writer): this {
    const b = m.finish();
    this.#head(field, b.length);
    this.#items.push(b);
    return this;
  }

  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.#size);
    let at = 0;
    for (const it of this.#items) {
      if (typeof it === "string") at += out.write(it, at, "utf8");
      else if (Buffer.isBuffer(it)) at += it.copy(out, at);
      else for (const byte of it) out[at++] = byte;
    }
    return out;
  }
}

const gvk = (g: ApiGroupVersionKind): Writer =>
  new Writer().string(1, g.group).string(2, g.version).string(3, g.kind).string(4, g.plural);
const kv = (p: ApiKeyValue): Writer => new Writer().string(1, p.type).string(2, p.value);
const deprecation = (d: ApiDeprecation): Writer => new Writer().string(1, d.message);

/**
 * The parts of an encoded bundle, each a run of consecutive fields: `a` csvName…channelName (1–3),
 * `heavy` csvJson and object (4–5), `b` bundlePath…properties (6–12), `r` replaces and skips
 * (13–14), `d` deprecation (15). Their concatenation in this order is the whole bundle.
 */
export interface BundleParts {
  a: Buffer;
  heavy: Buffer;
  b: Buffer;
  r: Buffer;
  d: Buffer;
}

/** The parts of a bundle; with `heavy` false, `heavy` is left empty (encoded elsewhere). */
export function encodeBundleParts(x: ApiBundle, heavy = true): BundleParts {
  const b = new Writer().string(6, x.bundlePath);
  for (const g of x.providedApis) b.message(7, gvk(g));
  for (const g of x.requiredApis) b.message(8, gvk(g));
  b.string(9, x.version).string(10, x.skipRange);
  for (const d of x.dependencies) b.message(11, kv(d));
  for (const p of x.properties) b.message(12, kv(p));
  const d = new Writer();
  if (x.deprecation) d.message(15, deprecation(x.deprecation));
  return {
    a: new Writer().string(1, x.csvName).string(2, x.packageName).string(3, x.channelName).finish(),
    heavy: heavy ? new Writer().string(4, x.csvJson).strings(5, x.object).finish() : Buffer.alloc(0),
    b: b.finish(),
    r: new Writer().string(13, x.replaces).strings(14, x.skips).finish(),
    d: d.finish(),
  };
}

/** Reads the fields of a message: [field number, wire type, payload (length-delimited) or value]. */
function* fields(buf: Buffer): Generator<[number, Buffer]> {
  let i = 0;
  const varint = (): number => {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (i >= buf.length) throw new Error("protobuf: truncated varint");
      const byte = buf[i++];
      n += (byte & 0x7f) * mul;
      if (byte < 0x80) return n;
      mul *= 128;
    }
  };
  while (i < buf.length) {
    const key = varint();
    if ((key & 7) !== 2) throw new Error(`protobuf: unexpected wire type ${key & 7}`);
    const len = varint();
    if (i + len > buf.length) throw new Error("protobuf: truncated field");
    yield [Math.floor(key / 8), buf.subarray(i, i + len)];
    i += len;
  }
}

const str = (b: Buffer): string => b.toString("utf8");

function decodeKv(b: Buffer): ApiKeyValue {
  const o = { type: "", value: "" };
  for (const [f, v] of fields(b)) {
    if (f === 1) o.type = str(v);
    else if (f === 2) o.value = str(v);
  }
  return o;
}

function decodeGvk(b: Buffer): ApiGroupVersionKind {
  const o = { group: "", version: "", kind: "", plural: "" };
  for (const [f, v] of fields(b)) {
    if (f === 1) o.group = str(v);
    else if (f === 2) o.version = str(v);
    else if (f === 3) o.kind = str(v);
    else if (f === 4) o.plural = str(v);
  }
  return o;
}

/** An encoded `api.Bundle` as plain data (every field present, as ApiBundle). */
export function decodeApiBundle(buf: Buffer): ApiBundle {
  const o: ApiBundle = {
    csvName: "",
    packageName: "",
    channelName: "",
    csvJson: "",
    object: [],
    bundlePath: "",
    providedApis: [],
    requiredApis: [],
    version: "",
    skipRange: "",
    dependencies: [],
    properties: [],
    replaces: "",
    skips: [],
    deprecation: null,
  };
  for (const [f, v] of fields(buf)) {
    switch (f) {
      case 1:
        o.csvName = str(v);
        break;
      case 2:
        o.packageName = str(v);
        break;
      case 3:
        o.channelName = str(v);
        break;
      case 4:
        o.csvJson = str(v);
        break;
      case 5:
        o.object.push(str(v));
        break;
      case 6:
        o.bundlePath = str(v);
        break;
      case 7:
        o.providedApis.push(decodeGvk(v));
        break;
      case 8:
        o.requiredApis.push(decodeGvk(v));
        break;
      case 9:
        o.version = str(v);
        break;
      case 10:
        o.skipRange = str(v);
        break;
      case 11:
        o.dependencies.push(decodeKv(v));
        break;
      case 12:
        o.properties.push(decodeKv(v));
        break;
      case 13:
        o.replaces = str(v);
        break;
      case 14:
        o.skips.push(str(v));
        break;
      case 15:
        o.deprecation = { message: decodeKv(v).type };
        break;
    }
  }
  return o;
}
