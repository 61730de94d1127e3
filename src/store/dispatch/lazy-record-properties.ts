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
import { LazyProperties } from '../../common/message/lazy-properties.js';

export class LazyRecordProperties extends LazyProperties {
  private record: Buffer | null;

  /** `record`: the whole record (any QUEUEOFFSET/PHYSICALOFFSET/STORETIMESTAMP). */
  constructor(record: Buffer) {
    super();
    this.record = record;
  }

  protected decode(): Map<string, string> {
    const record = this.record!;
    this.record = null;
    return decodeRecord(record, 0, { readBody: false }).properties;
  }
}
