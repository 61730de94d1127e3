/**
 * Properties as a Map that decodes them only when first read (the message-arriving listener reads
 * a dispatched record's properties only for filtered long polls, so decoding them for every record
 * would cost more than storing it). Not a Map subclass: constructing a Map allocates its hash
 * table; this is a small object implementing Map's interface that builds the real map on the
 * first read (`decode`). Every read method decodes first; writes are refused (the properties of
 * a stored message are fixed).
 */
export abstract class LazyProperties implements Map<string, string> {
  private map: Map<string, string> | null = null;

  /** The properties, decoded (called once, on the first read). */
  protected abstract decode(): Map<string, string>;

  private load(): Map<string, string> {
    if (this.map !== null) return this.map;
    this.map = this.decode();
    return this.map;
  }

  get(key: string): string | undefined {
    return this.load().get(key);
  }
  has(key: string): boolean {
    return this.load().has(key);
  }
  get size(): number {
    return this.load().size;
  }
  forEach(fn: (value: string, key: string, map: Map<string, string>) => void, thisArg?: unknown): void {
    this.load().forEach((v, k) => fn.call(thisArg, v, k, this));
  }
  entries(): MapIterator<[string, string]> {
    return this.load().entries();
  }
  keys(): MapIterator<string> {
    return this.load().keys();
  }
  values(): MapIterator<string> {
    return this.load().values();
  }
  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.load()[Symbol.iterator]();
  }
  get [Symbol.toStringTag](): string {
    return 'Map';
  }
  set(): this {
    throw new TypeError('the properties of a stored message cannot be changed');
  }
  delete(): boolean {
    throw new TypeError('the properties of a stored message cannot be changed');
  }
  clear(): void {
    throw new TypeError('the properties of a stored message cannot be changed');
  }
}
