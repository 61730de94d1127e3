/**
 * The properties of a stored record as a Map that decodes them only when first read. Dispatch
 * hands every record's properties to the message-arriving listener, which reads them only for
 * filtered long polls; for records appended without a properties map (prepared records,
 * CommitLog.appendPrepared) decoding them for every record would cost more than the append.
 * Every read method decodes first; writes are refused (the record's properties are fixed).
 */
import { decodeRecord } from '../../common/message/record-codec.js';

export class LazyRecordProperties extends Map<string, string> {
  private record: Buffer | null;

  /** `record`: the whole record (any QUEUEOFFSET/PHYSICALOFFSET/STORETIMESTAMP). */
  constructor(record: Buffer) {
    super();
    this.record = record;
  }

  private load(): void {
    const record = this.record;
    if (record === null) return;
    this.record = null;
    for (const [k, v] of decodeRecord(record, 0, { readBody: false }).properties) super.set(k, v);
  }

  override get(key: string): string | undefined {
    this.load();
    return super.get(key);
  }
  override has(key: string): boolean {
    this.load();
    return super.has(key);
  }
  override get size(): number {
    this.load();
    return super.size;
  }
  override forEach(fn: (value: string, key: string, map: Map<string, string>) => void, thisArg?: unknown): void {
    this.load();
    super.forEach(fn, thisArg);
  }
  override entries(): MapIterator<[string, string]> {
    this.load();
    return super.entries();
  }
  override keys(): MapIterator<string> {
    this.load();
    return super.keys();
  }
  override values(): MapIterator<string> {
    this.load();
    return super.values();
  }
  override [Symbol.iterator](): MapIterator<[string, string]> {
    this.load();
    return super[Symbol.iterator]();
  }
  override set(): this {
    throw new TypeError('the properties of a stored record cannot be changed');
  }
  override delete(): boolean {
    throw new TypeError('the properties of a stored record cannot be changed');
  }
  override clear(): void {
    throw new TypeError('the properties of a stored record cannot be changed');
  }
}
