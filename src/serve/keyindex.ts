/**
 * A compact map from strings to sorted lists of blob numbers (a revision's metas index by schema,
 * package or name): the keys' UTF-8 bytes sorted in one buffer, found by binary search, and every
 * list in one Uint32Array. A few flat arrays instead of a Map of typed arrays: a catalog of 100,000
 * packages holds 300,000 lists, which as separate objects took about 85 MB of heap.
 */

const EMPTY = new Uint32Array(0);

export class KeyIndex {
  /** The keys' bytes, sorted (byte order), one after the other. */
  readonly #keys: Buffer;
  /** Key i is #keys[#keyAt[i], #keyAt[i + 1]). */
  readonly #keyAt: Uint32Array;
  /** Key i's list is #ids[#listAt[i], #listAt[i + 1]). */
  readonly #listAt: Uint32Array;
  readonly #ids: Uint32Array;

  private constructor(keys: Buffer, keyAt: Uint32Array, listAt: Uint32Array, ids: Uint32Array) {
    this.#keys = keys;
    this.#keyAt = keyAt;
    this.#listAt = listAt;
    this.#ids = ids;
  }

  /** The index of a map from keys to lists (each list already sorted). */
  static from(m: ReadonlyMap<string, readonly number[]>): KeyIndex {
    const entries = [...m].map(([k, v]) => ({ key: Buffer.from(k, "utf8"), v }));
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const keyAt = new Uint32Array(entries.length + 1);
    const listAt = new Uint32Array(entries.length + 1);
    for (let i = 0; i < entries.length; i++) {
      keyAt[i + 1] = keyAt[i] + entries[i].key.length;
      listAt[i + 1] = listAt[i] + entries[i].v.length;
    }
    const ids = new Uint32Array(listAt[entries.length]);
    for (let i = 0; i < entries.length; i++) ids.set(entries[i].v, listAt[i]);
    const keys = Buffer.concat(
      entries.map((e) => e.key),
      keyAt[entries.length],
    );
    return new KeyIndex(keys, keyAt, listAt, ids);
  }

  /** The list of `key`, a view (undefined when the key is not there). */
  get(key: string): Uint32Array | undefined {
    const k = Buffer.from(key, "utf8");
    let lo = 0;
    let hi = this.#keyAt.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.#keys.compare(k, 0, k.length, this.#keyAt[mid], this.#keyAt[mid + 1]);
      // c compares the key at mid with the one asked for
      if (c === 0) return this.#ids.subarray(this.#listAt[mid], this.#listAt[mid + 1]);
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The list of `key`, or an empty one. */
  getOrEmpty(key: string): Uint32Array {
    return this.get(key) ?? EMPTY;
  }

  /** Its persisted form: counts, then the offsets, lists and keys (read back by {@link decode}). */
  encode(): Buffer {
    const n = this.#keyAt.length - 1;
    const head = Buffer.alloc(8);
    head.writeUInt32LE(n, 0);
    head.writeUInt32LE(this.#ids.length, 4);
    const bytes = (a: Uint32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    return Buffer.concat([head, bytes(this.#keyAt), bytes(this.#listAt), bytes(this.#ids), this.#keys]);
  }

  /** An index from its persisted form; throws when it is malformed. */
  static decode(buf: Buffer): KeyIndex {
    if (buf.length < 8) throw new Error("metas index truncated");
    const n = buf.readUInt32LE(0);
    const nIds = buf.readUInt32LE(4);
    let off = 8;
    // copied: the section's place in the file need not be 4-byte aligned
    const take = (count: number): Uint32Array => {
      if (off + count * 4 > buf.length) throw new Error("metas index truncated");
      const a = new Uint32Array(count);
      Buffer.from(a.buffer).set(buf.subarray(off, off + count * 4));
      off += count * 4;
      return a;
    };
    const keyAt = take(n + 1);
    const listAt = take(n + 1);
    const ids = take(nIds);
    const keys = Buffer.from(buf.subarray(off));
    if (keyAt[n] !== keys.length || listAt[n] !== nIds) throw new Error("metas index inconsistent");
    return new KeyIndex(keys, keyAt, listAt, ids);
  }
}
