/**
 * A message's properties kept as their PROPERTIES text (`name\x01value\x02`…, spec §1.8), used
 * as a `Map<string, string>`: `get` and `has` look the key up in the text (lookupProperty, same
 * result as decodeProperties(text).get) without building a Map; `size`, iteration and every
 * write build the Map once (decodeProperties) and work on it from then on.
 *
 * Why: the broker's batch path receives every item's properties as text and stores that text
 * (plus the batch's entries); it only reads a few keys of each item (DELAY, TAGS, KEYS,
 * UNIQ_KEY, WAIT). Decoding a Map per item cost more than those reads. Not a Map subclass:
 * constructing a Map allocates its hash table.
 *
 * `text` is the text the properties were made from; once the Map was built and changed it no
 * longer describes them (`isText()` tells: true while no write happened).
 */
import { decodeProperties, lookupProperty } from './properties.js';

export class TextProperties implements Map<string, string> {
  private map: Map<string, string> | null = null;
  private written = false;

  constructor(readonly text: string) {}

  /** True while the properties are exactly `decodeProperties(text)` (no write happened). */
  isText(): boolean {
    return !this.written;
  }

  private load(): Map<string, string> {
    if (this.map === null) this.map = decodeProperties(this.text);
    return this.map;
  }

  get(key: string): string | undefined {
    return this.map !== null ? this.map.get(key) : lookupProperty(this.text, key);
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
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
  set(key: string, value: string): this {
    this.written = true;
    this.load().set(key, value);
    return this;
  }
  delete(key: string): boolean {
    this.written = true;
    return this.load().delete(key);
  }
  clear(): void {
    this.written = true;
    this.load().clear();
  }
}
