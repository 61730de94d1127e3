/**
 * The hand-over format of records from the dispatching thread to the index worker: only what
 * IndexService.buildIndex reads of a DispatchRequest (CommitLog offset, store timestamp, sysflag,
 * topic, KEYS, UNIQ_KEY), packed into one transferable ArrayBuffer per batch, in CommitLog order.
 *
 * Layout per record (the doubles in host byte order, the ints little-endian): f64
 * commitLogOffset | f64 storeTimestamp | i32 sysFlag | u32 lengths of topic, keys, uniqKey in
 * UTF-16 code units (0xFFFFFFFF = null uniqKey) | the code units of topic, keys, uniqKey. UTF-16 keeps every string exactly as the dispatcher saw it (lone
 * surrogates included), so the Java hash the worker computes is the one the thread would compute.
 * Process-internal only: never written to disk or sent over the network.
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';

/** The fields of a DispatchRequest the index reads. */
export type IndexRecord = Pick<DispatchRequest, 'commitLogOffset' | 'storeTimestamp' | 'sysFlag' | 'topic' | 'keys' | 'uniqKey'>;

const FIXED_BYTES = 8 + 8 + 4;
const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;
const NULL_LENGTH = 0xffffffff;

/** Appends records to a growing buffer; `take()` hands the filled part over and starts a new one. */
export class IndexRecordBatchWriter {
  private buf: Buffer;
  private at = 0;
  private records = 0;

  constructor(private readonly initialBytes = 64 * 1024) {
    this.buf = Buffer.from(new ArrayBuffer(initialBytes));
  }

  /** Records appended since the last take(). */
  get count(): number {
    return this.records;
  }

  /** Bytes appended since the last take(). */
  get sizeBytes(): number {
    return this.at;
  }

  append(r: IndexRecord): void {
    const uniq = r.uniqKey;
    const chars = r.topic.length + r.keys.length + (uniq ? uniq.length : 0);
    const need = FIXED_BYTES + 12 + 2 * chars;
    if (this.at + need > this.buf.length) this.grow(need);
    const b = this.buf;
    const at = this.at;
    this.f64[0] = r.commitLogOffset;
    this.f64[1] = r.storeTimestamp;
    b.set(this.fixed, at);
    b.writeInt32LE(r.sysFlag, at + 16);
    b.writeUInt32LE(r.topic.length, at + 20);
    b.writeUInt32LE(r.keys.length, at + 24);
    b.writeUInt32LE(uniq === null ? NULL_LENGTH : uniq.length, at + 28);
    // one native write of the three strings (their lengths are in the header)
    if (chars > 0) b.write(uniq ? r.topic + r.keys + uniq : r.topic + r.keys, at + 32, chars * 2, 'utf16le');
    this.at = at + 32 + chars * 2;
    this.records++;
  }

  /** Scratch for the two doubles (Float64Array stores are cheaper than writeDoubleLE). */
  private readonly f64 = new Float64Array(2);
  private readonly fixed = new Uint8Array(this.f64.buffer);

  /** The appended bytes as an ArrayBuffer of their own (transferable), or null when empty. */
  take(): ArrayBuffer | null {
    if (this.records === 0) return null;
    const out = (this.buf.buffer as ArrayBuffer).slice(0, this.at);
    this.at = 0;
    this.records = 0;
    return out;
  }

  private grow(need: number): void {
    const next = Buffer.from(new ArrayBuffer(Math.max(this.buf.length * 2, this.at + need, this.initialBytes)));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
}

function readString(b: Buffer, at: number, length: number): string {
  return length === 0 ? '' : b.toString('utf16le', at, at + length * 2);
}

/**
 * Calls `each` for every record of a batch, in order. The record object is reused between
 * calls (copy what must outlive the call). @throws RangeError on a truncated batch.
 */
export function forEachIndexRecord(batch: ArrayBuffer, each: (r: IndexRecord) => void): number {
  const b = Buffer.from(batch);
  const r: IndexRecord = { commitLogOffset: 0, storeTimestamp: 0, sysFlag: 0, topic: '', keys: '', uniqKey: null };
  let at = 0;
  let n = 0;
  while (at < b.length) {
    r.commitLogOffset = LITTLE_ENDIAN ? b.readDoubleLE(at) : b.readDoubleBE(at);
    r.storeTimestamp = LITTLE_ENDIAN ? b.readDoubleLE(at + 8) : b.readDoubleBE(at + 8);
    r.sysFlag = b.readInt32LE(at + 16);
    const topicLength = b.readUInt32LE(at + 20);
    const keysLength = b.readUInt32LE(at + 24);
    const uniqLength = b.readUInt32LE(at + 28);
    at += 32;
    r.topic = readString(b, at, topicLength);
    at += topicLength * 2;
    r.keys = readString(b, at, keysLength);
    at += keysLength * 2;
    if (uniqLength === NULL_LENGTH) r.uniqKey = null;
    else {
      r.uniqKey = readString(b, at, uniqLength);
      at += uniqLength * 2;
    }
    if (at > b.length) throw new RangeError(`index record batch truncated at byte ${at} of ${b.length}`);
    each(r);
    n++;
  }
  return n;
}
