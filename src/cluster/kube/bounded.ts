/**
 * A Map of at most `max` entries: setting a key makes it the newest, and the oldest goes when there
 * are too many (the controllers' memories of what they wrote or were told: Event counts, allowed
 * access checks, install records, the packages of resolvesets).
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value as K);
    return this;
  }
}
