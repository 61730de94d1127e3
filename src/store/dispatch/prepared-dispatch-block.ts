/**
 * The dispatch of one prepared block (CommitLog.appendPrepared, MessageStore.putPreparedMessages)
 * as columns instead of one DispatchRequest per record: a timer burst of a million deliveries made
 * a million DispatchRequests (with their boxed numbers and a LazyRecordProperties each, ~210 bytes
 * of garbage per delivery) that lived only until the block was dispatched a moment later.
 *
 * Record `k` (0 ≤ k < count, in CommitLog order) is the k-th appended record. What the append
 * decided (position, queue offset, tags code) is held in typed arrays; what the caller's columns
 * hold (topic, queue, sysflag, KEYS, UNIQ_KEY, the record's view) is copied by reference when the
 * record is added: the caller's columns may change once its put answered (the timer releases its
 * rows), and dispatch can come later (SYNC_FLUSH dispatches after the flush, a blocked
 * ConsumeQueue retries). No object is made per record unless asked for (`request(k)`: the
 * record-by-record fallback of ReputMessageService, and the arriving listener's properties, which
 * are decoded from the record only when read: LazyRecordProperties).
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';
import { LazyRecordProperties } from './lazy-record-properties.js';

export class PreparedDispatchBlock {
  /** Records added so far. */
  count = 0;
  /** PHYSICALOFFSET of record k. */
  readonly commitLogOffset: Float64Array;
  /** QUEUEOFFSET of record k. */
  readonly consumeQueueOffset: Float64Array;
  /** ConsumeQueue tags code of record k (a schedule-topic record's deliver time: not an int32). */
  readonly tagsCode: Float64Array;
  /** TOTALSIZE of record k, bytes. */
  readonly msgSize: Int32Array;
  readonly queueId: Int32Array;
  readonly sysFlag: Int32Array;
  readonly bornTimestamp: Float64Array;
  readonly topic: string[];
  readonly keys: string[];
  readonly uniqKey: (string | null)[];
  /** The record bytes (for the lazily decoded properties), or the properties map when the caller had one. */
  private readonly source: (Buffer | Map<string, string>)[];

  /** `capacity`: the most records that will be added; `storeTimestamp`: the block's one store time. */
  constructor(
    capacity: number,
    readonly storeTimestamp: number,
  ) {
    this.commitLogOffset = new Float64Array(capacity);
    this.consumeQueueOffset = new Float64Array(capacity);
    this.tagsCode = new Float64Array(capacity);
    this.msgSize = new Int32Array(capacity);
    this.queueId = new Int32Array(capacity);
    this.sysFlag = new Int32Array(capacity);
    this.bornTimestamp = new Float64Array(capacity);
    this.topic = [];
    this.keys = [];
    this.uniqKey = [];
    this.source = [];
  }

  /** Adds the next record (CommitLog order). */
  add(record: Buffer, topic: string, queueId: number, sysFlag: number, bornTimestamp: number, keys: string, uniqKey: string | null, properties: Map<string, string> | undefined, commitLogOffset: number, consumeQueueOffset: number, tagsCode: number): void {
    const k = this.count++;
    this.commitLogOffset[k] = commitLogOffset;
    this.consumeQueueOffset[k] = consumeQueueOffset;
    this.tagsCode[k] = tagsCode;
    this.msgSize[k] = record.length;
    this.queueId[k] = queueId;
    this.sysFlag[k] = sysFlag;
    this.bornTimestamp[k] = bornTimestamp;
    this.topic.push(topic);
    this.keys.push(keys);
    this.uniqKey.push(uniqKey);
    this.source.push(properties ?? record);
  }

  /** Forgets the records from `count` on (an append failure gave their queue offsets back). */
  truncate(count: number): void {
    if (count >= this.count) return;
    this.count = count;
    this.topic.length = count;
    this.keys.length = count;
    this.uniqKey.length = count;
    this.source.length = count;
  }

  /** CommitLog offset of the first record (the block must not be empty). */
  get startOffset(): number {
    return this.commitLogOffset[0]!;
  }

  /** CommitLog offset right after the last record (the block must not be empty). */
  get endOffset(): number {
    const k = this.count - 1;
    return this.commitLogOffset[k]! + this.msgSize[k]!;
  }

  /** True when every record starts where the one before ends (no segment roll in between). */
  contiguous(): boolean {
    for (let k = 1; k < this.count; k++) if (this.commitLogOffset[k] !== this.commitLogOffset[k - 1]! + this.msgSize[k - 1]!) return false;
    return true;
  }

  /** The properties of record k (decoded from the record only when read). */
  properties(k: number): Map<string, string> {
    const s = this.source[k]!;
    return s instanceof Map ? s : new LazyRecordProperties(s);
  }

  /** Record k as a DispatchRequest (what dispatch would have parsed from the CommitLog). */
  request(k: number): DispatchRequest {
    return {
      topic: this.topic[k]!,
      queueId: this.queueId[k]!,
      commitLogOffset: this.commitLogOffset[k]!,
      msgSize: this.msgSize[k]!,
      tagsCode: this.tagsCode[k]!,
      storeTimestamp: this.storeTimestamp,
      consumeQueueOffset: this.consumeQueueOffset[k]!,
      keys: this.keys[k]!,
      uniqKey: this.uniqKey[k]!,
      sysFlag: this.sysFlag[k]!,
      preparedTransactionOffset: 0,
      properties: this.properties(k),
      bornTimestamp: this.bornTimestamp[k]!,
    };
  }

  /** Every record as a DispatchRequest, in order. */
  requests(): DispatchRequest[] {
    const out: DispatchRequest[] = [];
    for (let k = 0; k < this.count; k++) out.push(this.request(k));
    return out;
  }
}
