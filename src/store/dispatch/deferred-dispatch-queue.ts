/**
 * DeferredDispatchQueue: the records whose `deferrable` dispatchers (the index) are fed after
 * their ConsumeQueue entries, in CommitLog order (tsmq addition; RocketMQ's reput thread builds
 * the ConsumeQueue entry and the index entry of a record in one step).
 *
 * Why: a prepared block (MessageStore.putPreparedMessages, a timer burst) is consumable once its
 * ConsumeQueue entries are written; its index entries are needed only by QUERY_MESSAGE. Building
 * them while the burst is still being appended delays the rest of the burst (~250 ns per record
 * on the store thread, 1 M timers due in one second), so the dispatcher chain writes the block's
 * ConsumeQueue entries at once and queues the index work here; it is done when no block was
 * dispatched for `quietMs` (or the queue holds `maxRecords`), a chunk per event-loop turn.
 *
 * Order: once anything is queued, every later record goes through the queue too (the index skips
 * a record below its end offset, so none may overtake another). `drainAll` (a query, shutdown,
 * truncation) empties it synchronously first. Crash: what is queued is lost with the process;
 * the index's own end offset is behind it, so recovery dispatches those records again
 * (IndexPlugin.load → rebuildFromPhyOffset), exactly as for index entries not yet flushed.
 *
 * Memory: a struct of arrays (numbers in typed arrays, the topic, KEYS and UNIQ_KEY strings the
 * records already had): ~90 bytes per record, no object per record and nothing that keeps the
 * record's bytes alive.
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';

/** The fields of a queued record a deferrable dispatcher is given (other fields are empty). */
export type DeferredRecordFields = 'topic' | 'queueId' | 'commitLogOffset' | 'msgSize' | 'tagsCode' | 'storeTimestamp' | 'consumeQueueOffset' | 'keys' | 'uniqKey' | 'sysFlag' | 'bornTimestamp';

/** Defaults: quiet time before the queue is worked off, records per turn, records queued at most before it is worked off anyway. */
export const DEFERRED_QUIET_MS = 20;
export const DEFERRED_CHUNK_RECORDS = 16_384;
export const DEFERRED_MAX_RECORDS = 4_000_000;

const EMPTY_PROPERTIES: Map<string, string> = new Map();

export class DeferredDispatchQueue {
  private head = 0;
  private tail = 0;
  private off: Float64Array = new Float64Array(0);
  private storeTs: Float64Array = new Float64Array(0);
  private bornTs: Float64Array = new Float64Array(0);
  private cqOffset: Float64Array = new Float64Array(0);
  private tagsCode: Float64Array = new Float64Array(0);
  private size: Int32Array = new Int32Array(0);
  private queueId: Int32Array = new Int32Array(0);
  private sysFlag: Int32Array = new Int32Array(0);
  private topic: string[] = [];
  private keys: string[] = [];
  private uniqKey: (string | null)[] = [];
  /** The one object handed to the dispatchers (rewritten per record; they must not keep it). */
  private readonly scratch: DispatchRequest = {
    topic: '',
    queueId: 0,
    commitLogOffset: 0,
    msgSize: 0,
    tagsCode: 0,
    storeTimestamp: 0,
    consumeQueueOffset: 0,
    keys: '',
    uniqKey: null,
    sysFlag: 0,
    preparedTransactionOffset: 0,
    properties: EMPTY_PROPERTIES,
    bornTimestamp: 0,
  };

  /** Records queued and not fed yet. */
  get length(): number {
    return this.tail - this.head;
  }

  push(r: DispatchRequest): void {
    if (this.tail === this.off.length) this.grow();
    const i = this.tail++;
    this.off[i] = r.commitLogOffset;
    this.storeTs[i] = r.storeTimestamp;
    this.bornTs[i] = r.bornTimestamp;
    this.cqOffset[i] = r.consumeQueueOffset;
    this.tagsCode[i] = r.tagsCode;
    this.size[i] = r.msgSize;
    this.queueId[i] = r.queueId;
    this.sysFlag[i] = r.sysFlag;
    this.topic[i] = r.topic;
    this.keys[i] = r.keys;
    this.uniqKey[i] = r.uniqKey;
  }

  /**
   * Hands the oldest `max` queued records (all by default), in order, to `feed` (one scratch
   * object, rewritten per record) and forgets them; returns how many were fed.
   */
  shift(feed: (r: DispatchRequest) => void, max = Infinity): number {
    const end = Math.min(this.tail, this.head + max);
    const s = this.scratch;
    const start = this.head;
    let i = start;
    for (; i < end; i++) {
      s.commitLogOffset = this.off[i]!;
      s.storeTimestamp = this.storeTs[i]!;
      s.bornTimestamp = this.bornTs[i]!;
      s.consumeQueueOffset = this.cqOffset[i]!;
      s.tagsCode = this.tagsCode[i]!;
      s.msgSize = this.size[i]!;
      s.queueId = this.queueId[i]!;
      s.sysFlag = this.sysFlag[i]!;
      s.topic = this.topic[i]!;
      s.keys = this.keys[i]!;
      s.uniqKey = this.uniqKey[i]!;
      this.head = i + 1; // `feed` does not throw (the chain counts and logs each dispatcher's failure)
      feed(s);
    }
    if (this.head === this.tail) this.clear();
    return i - start;
  }

  /** Forgets every queued record (crash simulation: recovery dispatches them again). */
  clear(): void {
    this.head = this.tail = 0;
    this.topic.length = 0;
    this.keys.length = 0;
    this.uniqKey.length = 0;
  }

  private grow(): void {
    const live = this.tail - this.head;
    const cap = Math.max(1024, live * 2);
    const f64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a.subarray(this.head, this.tail));
      return b;
    };
    const i32 = (a: Int32Array): Int32Array => {
      const b = new Int32Array(cap);
      b.set(a.subarray(this.head, this.tail));
      return b;
    };
    this.off = f64(this.off);
    this.storeTs = f64(this.storeTs);
    this.bornTs = f64(this.bornTs);
    this.cqOffset = f64(this.cqOffset);
    this.tagsCode = f64(this.tagsCode);
    this.size = i32(this.size);
    this.queueId = i32(this.queueId);
    this.sysFlag = i32(this.sysFlag);
    this.topic = this.topic.slice(this.head, this.tail);
    this.keys = this.keys.slice(this.head, this.tail);
    this.uniqKey = this.uniqKey.slice(this.head, this.tail);
    this.head = 0;
    this.tail = live;
  }
}
