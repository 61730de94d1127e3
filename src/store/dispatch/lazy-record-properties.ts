/**
 * The properties of a stored record as a Map that decodes them only when first read. Dispatch
 * hands every record's properties to the message-arriving listener, which reads them only for
 * filtered long polls; for records appended without a properties map (prepared records,
 * CommitLog.appendPrepared) decoding them for every record would cost more than the append.
 *
 * Not a Map subclass: constructing a Map allocates its hash table, and one is built per
 * dispatched prepared record (a million in a timer burst), so this is a small object holding the
 * record that implements Map's interface and builds the real map on the first read. Every read
 * method decodes first; writes are refused (the record's properties are fixed).
 */
import { decodeRecord } from '../../common/message/record-codec.js';

export class LazyRecordProperties implements Map<string, string> {
  private record: Buffer | null;
  private map: Map<string, string> | null = null;

  /** `record`: the whole record (any QUEUEOFFSET/PHYSICALOFFSET/STORETIMESTAMP). */
  constructor(record: Buffer) {
    this.record = record;
  }

  private load(): Map<string, string> {
    if (this.map !== null) return this.map;
    const record = this.record!;
    this.record = null;
    this.map = decodeRecord(record, 0, { readBody: false }).properties;
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
    throw new TypeError('the properties of a stored record cannot be changed');
  }
  delete(): boolean {
    throw new TypeError('the properties of a stored record cannot be changed');
  }
  clear(): void {
    throw new TypeError('the properties of a stored record cannot be changed');
  }
}
