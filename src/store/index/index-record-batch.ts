/**
 * The hand-over format of records from the dispatching thread to the index worker: only what
 * IndexService.buildIndex reads of a DispatchRequest (CommitLog offset, store timestamp, sysflag,
 * topic, KEYS, UNIQ_KEY), packed into one transferable ArrayBuffer per batch, in CommitLog order.
 *
 * Layout per record (little-endian): f64 commitLogOffset | f64 storeTimestamp | i32 sysFlag |
 * then topic, keys, uniqKey, each u32 length in UTF-16 code units (0xFFFFFFFF = null uniqKey)
 * followed by the code units. UTF-16 keeps every string exactly as the dispatcher saw it (lone
 * surrogates included), so the Java hash the worker computes is the one the thread would compute.
 * Process-internal only: never written to disk or sent over the network.
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';

/** The fields of a DispatchRequest the index reads. */
export type IndexRecord = Pick<DispatchRequest, 'commitLogOffset' | 'storeTimestamp' | 'sysFlag' | 'topic' | 'keys' | 'uniqKey'>;

const FIXED_BYTES = 8 + 8 + 4;
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
    const need = FIXED_BYTES + 12 + 2 * (r.topic.length + r.keys.length + (uniq ? uniq.length : 0));
    if (this.at + need > this.buf.length) this.grow(need);
    const b = this.buf;
    let at = this.at;
    b.writeDoubleLE(r.commitLogOffset, at);
    b.writeDoubleLE(r.storeTimestamp, at + 8);
    b.writeInt32LE(r.sysFlag, at + 16);
    at += FIXED_BYTES;
    at = writeString(b, at, r.topic);
    at = writeString(b, at, r.keys);
    if (uniq === null) {
      b.writeUInt32LE(NULL_LENGTH, at);
      at += 4;
    } else at = writeString(b, at, uniq);
    this.at = at;
    this.records++;
  }

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

function writeString(b: Buffer, at: number, s: string): number {
  b.writeUInt32LE(s.length, at);
  at += 4;
  if (s.length > 0) b.write(s, at, s.length * 2, 'utf16le');
  return at + s.length * 2;
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
    r.commitLogOffset = b.readDoubleLE(at);
    r.storeTimestamp = b.readDoubleLE(at + 8);
    r.sysFlag = b.readInt32LE(at + 16);
    at += FIXED_BYTES;
    let len = b.readUInt32LE(at);
    r.topic = readString(b, at + 4, len);
    at += 4 + len * 2;
    len = b.readUInt32LE(at);
    r.keys = readString(b, at + 4, len);
    at += 4 + len * 2;
    len = b.readUInt32LE(at);
    if (len === NULL_LENGTH) {
      r.uniqKey = null;
      at += 4;
    } else {
      r.uniqKey = readString(b, at + 4, len);
      at += 4 + len * 2;
    }
    if (at > b.length) throw new RangeError(`index record batch truncated at byte ${at} of ${b.length}`);
    each(r);
    n++;
  }
  return n;
}
