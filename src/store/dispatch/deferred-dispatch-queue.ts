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
 * Memory: chunks of 16,384 rows as a struct of arrays (numbers in typed arrays, the topic, KEYS
 * and UNIQ_KEY strings the records already had): ~90 bytes per record, no object per record,
 * nothing that keeps the record's bytes alive, and no large array grown and copied (a first
 * version doubling one set of columns to 1 M rows doubled the collections in a burst's window).
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';

/** The fields of a queued record a deferrable dispatcher is given (other fields are empty). */
export type DeferredRecordFields = 'topic' | 'queueId' | 'commitLogOffset' | 'msgSize' | 'tagsCode' | 'storeTimestamp' | 'consumeQueueOffset' | 'keys' | 'uniqKey' | 'sysFlag' | 'bornTimestamp';

/** Defaults: quiet time before the queue is worked off, records per turn, records queued at most before it is worked off anyway. */
export const DEFERRED_QUIET_MS = 20;
export const DEFERRED_CHUNK_RECORDS = 16_384;
export const DEFERRED_MAX_RECORDS = 4_000_000;

const EMPTY_PROPERTIES: Map<string, string> = new Map();

/** Rows per chunk: the queue is a list of fixed chunks (reused), never one array grown and copied. */
const CHUNK_ROWS = 16_384;
/** Emptied chunks kept for reuse. */
const SPARE_CHUNKS = 8;

/** CHUNK_ROWS records as columns. */
class Chunk {
  readonly off = new Float64Array(CHUNK_ROWS);
  readonly storeTs = new Float64Array(CHUNK_ROWS);
  readonly bornTs = new Float64Array(CHUNK_ROWS);
  readonly cqOffset = new Float64Array(CHUNK_ROWS);
  readonly tagsCode = new Float64Array(CHUNK_ROWS);
  readonly size = new Int32Array(CHUNK_ROWS);
  readonly queueId = new Int32Array(CHUNK_ROWS);
  readonly sysFlag = new Int32Array(CHUNK_ROWS);
  readonly topic: string[] = new Array<string>(CHUNK_ROWS).fill('');
  readonly keys: string[] = new Array<string>(CHUNK_ROWS).fill('');
  readonly uniqKey: (string | null)[] = new Array<string | null>(CHUNK_ROWS).fill(null);
  /** Rows written / rows fed. */
  tail = 0;
  head = 0;

  reset(): void {
    // drop the string references (the row count bounds the work)
    for (let i = 0; i < this.tail; i++) {
      this.topic[i] = '';
      this.keys[i] = '';
      this.uniqKey[i] = null;
    }
    this.tail = this.head = 0;
  }
}

export class DeferredDispatchQueue {
  private readonly chunks: Chunk[] = [];
  private readonly spare: Chunk[] = [];
  private count = 0;
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
    return this.count;
  }

  push(r: DispatchRequest): void {
    let c = this.chunks[this.chunks.length - 1];
    if (c === undefined || c.tail === CHUNK_ROWS) {
      c = this.spare.pop() ?? new Chunk();
      this.chunks.push(c);
    }
    const i = c.tail++;
    c.off[i] = r.commitLogOffset;
    c.storeTs[i] = r.storeTimestamp;
    c.bornTs[i] = r.bornTimestamp;
    c.cqOffset[i] = r.consumeQueueOffset;
    c.tagsCode[i] = r.tagsCode;
    c.size[i] = r.msgSize;
    c.queueId[i] = r.queueId;
    c.sysFlag[i] = r.sysFlag;
    c.topic[i] = r.topic;
    c.keys[i] = r.keys;
    c.uniqKey[i] = r.uniqKey;
    this.count++;
  }

  /**
   * Hands the oldest `max` queued records (all by default), in order, to `feed` (one scratch
   * object, rewritten per record) and forgets them; returns how many were fed.
   */
  shift(feed: (r: DispatchRequest) => void, max = Infinity): number {
    const s = this.scratch;
    let fed = 0;
    while (fed < max && this.chunks.length > 0) {
      const c = this.chunks[0]!;
      const end = Math.min(c.tail, c.head + (max - fed));
      for (let i = c.head; i < end; i++) {
        s.commitLogOffset = c.off[i]!;
        s.storeTimestamp = c.storeTs[i]!;
        s.bornTimestamp = c.bornTs[i]!;
        s.consumeQueueOffset = c.cqOffset[i]!;
        s.tagsCode = c.tagsCode[i]!;
        s.msgSize = c.size[i]!;
        s.queueId = c.queueId[i]!;
        s.sysFlag = c.sysFlag[i]!;
        s.topic = c.topic[i]!;
        s.keys = c.keys[i]!;
        s.uniqKey = c.uniqKey[i]!;
        c.head = i + 1;
        this.count--;
        fed++;
        feed(s); // does not throw (the chain counts and logs each dispatcher's failure)
      }
      if (c.head < c.tail) break; // `max` reached inside this chunk
      this.release(this.chunks.shift()!);
    }
    return fed;
  }

  /** Forgets every queued record (crash simulation: recovery dispatches them again). */
  clear(): void {
    for (const c of this.chunks) this.release(c);
    this.chunks.length = 0;
    this.count = 0;
  }

  private release(c: Chunk): void {
    c.reset();
    if (this.spare.length < SPARE_CHUNKS) this.spare.push(c);
  }
}
