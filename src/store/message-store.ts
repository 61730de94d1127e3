/**
 * The MessageStore contract: everything the broker may ask of storage.
 *
 * Mirrors RocketMQ's `MessageStore` interface (store/.../MessageStore.java) with RocketMQ's
 * status names, returned as typed results with a remark, never bare booleans.
 * The implementation (`DefaultMessageStore`) does wiring and lifecycle only and delegates
 * every operation to CommitLog, ConsumeQueue, dispatch, flush and recovery components.
 */
import type { MessageExt, MessageInner } from '../common/message/message.js';
import type { EncodedBatch } from '../common/message/encoded-batch.js';

/** RocketMQ `PutMessageStatus` (5.x order). */
export type PutMessageStatus =
  | 'PUT_OK'
  | 'FLUSH_DISK_TIMEOUT'
  | 'FLUSH_SLAVE_TIMEOUT'
  | 'SLAVE_NOT_AVAILABLE'
  | 'SERVICE_NOT_AVAILABLE'
  | 'CREATE_MAPPED_FILE_FAILED'
  | 'MESSAGE_ILLEGAL'
  | 'PROPERTIES_SIZE_EXCEEDED'
  | 'OS_PAGE_CACHE_BUSY'
  | 'UNKNOWN_ERROR'
  /** Timer message refused by per-slot flow control (timerCongestNumEachSlot). */
  | 'WHEEL_TIMER_FLOW_CONTROL'
  /** Timer message with an unparsable time, a delay over timerMaxDelaySec, or a deletion marker for a past time. */
  | 'WHEEL_TIMER_MSG_ILLEGAL'
  /** Timer message while timerWheelEnable=false. */
  | 'WHEEL_TIMER_NOT_ENABLE';

/** Where an appended message landed (RocketMQ `AppendMessageResult`). */
export interface AppendResult {
  /** Physical offset of the record's first byte. */
  wroteOffset: number;
  /** Record size (TOTALSIZE) in bytes. */
  wroteBytes: number;
  /** Offset message id, 32 uppercase hex chars for an IPv4 store host. */
  msgId: string;
  /** Queue offset assigned (0 for PREPARED/ROLLBACK transaction records). */
  queueOffset: number;
  storeTimestamp: number;
}

export interface PutMessageResult {
  status: PutMessageStatus;
  /** Present when the record was appended (PUT_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT...). */
  appendResult?: AppendResult;
  /** Human-readable cause for any non-PUT_OK status, e.g. "message body size 4194305 exceeds maxMessageSize 4194304". */
  remark?: string;
}

/**
 * Result of a batch put (`putMessages`). `appendResult` sums the batch as RocketMQ's batch
 * AppendMessageResult does (first record's offset, the block's size, comma-joined msgIds, first
 * queue offset); `appendResults` has one entry per message, in batch order, whenever the batch
 * was appended.
 */
export interface PutMessagesResult extends PutMessageResult {
  appendResults?: AppendResult[];
}

/**
 * A message validated and encoded ahead of its append (`MessageStore.prepareMessage`), for
 * `putPreparedMessages`. `record` is the whole CommitLog record (TOTALSIZE bytes, BODYCRC
 * computed); QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are 0 and written at append, into
 * `record` itself (the append changes the caller's buffer; records lying back to back in one
 * buffer are written to the CommitLog from there without a copy), every other byte is stored as
 * it is (a caller may patch a fixed-width property value in place before
 * the append, e.g. the timer service's TIMER_DEQUEUE_MS). The other fields are what dispatch
 * (ConsumeQueue, index) and the put's waits need, so no properties map is kept per record (the
 * arriving listener's properties are decoded from the record only when it reads them).
 */
export interface PreparedMessage {
  readonly record: Buffer;
  readonly topic: string;
  readonly queueId: number;
  /** SYSFLAG as stored in `record`. */
  readonly sysFlag: number;
  readonly bornTimestamp: number;
  /** TAGS, KEYS ('' when absent) and UNIQ_KEY properties. */
  readonly tags: string | undefined;
  readonly keys: string;
  readonly uniqKey: string | null;
  /** False when the WAIT property is "false" (the put does not wait for flush / slave). */
  readonly waitStoreMsgOK: boolean;
  /** Properties that decide the tags code at append (DELAY of a schedule-topic record), else absent. */
  readonly properties?: Map<string, string>;
}

/**
 * Prepared records as columns, for `putPreparedMessages` without an object per record (the timer
 * service's PrefetchedItems rows: a million-timer burst made a PreparedMessage per delivery).
 * Record `k` of the `count` appended, in order, is row `rows[k]` of the columns, with the meaning
 * of the PreparedMessage field of the same name (`wait`: 1 unless the WAIT property is "false";
 * `properties`: the DELAY-deciding properties of a schedule-topic record, else absent). The store
 * reads the columns only during the call, synchronously; the records' bytes are handed over
 * as with PreparedMessage (the append writes the position fields into them and may write them to
 * the file from there after the call returned: they must not change again).
 */
export interface PreparedColumns {
  readonly count: number;
  readonly rows: ArrayLike<number>;
  readonly view: ArrayLike<Buffer | null>;
  readonly topic: ArrayLike<string>;
  readonly queueId: ArrayLike<number>;
  readonly sysFlag: ArrayLike<number>;
  readonly bornTimestamp: ArrayLike<number>;
  readonly tags: ArrayLike<string | undefined>;
  readonly keys: ArrayLike<string>;
  readonly uniqKey: ArrayLike<string | null>;
  readonly wait: ArrayLike<number>;
  readonly properties?: ArrayLike<Map<string, string> | undefined>;
}

/** The columns of PreparedMessages (one row each, in order). */
export function preparedColumnsOf(records: readonly PreparedMessage[]): PreparedColumns {
  const n = records.length;
  const rows = new Int32Array(n);
  for (let k = 0; k < n; k++) rows[k] = k;
  return {
    count: n,
    rows,
    view: records.map((r) => r.record),
    topic: records.map((r) => r.topic),
    queueId: records.map((r) => r.queueId),
    sysFlag: records.map((r) => r.sysFlag),
    bornTimestamp: records.map((r) => r.bornTimestamp),
    tags: records.map((r) => r.tags),
    keys: records.map((r) => r.keys),
    uniqKey: records.map((r) => r.uniqKey),
    wait: records.map((r) => (r.waitStoreMsgOK ? 1 : 0)),
    properties: records.map((r) => r.properties),
  };
}

/**
 * Result of `putPreparedMessages`: the first `appended` records were stored (consecutive from
 * `wroteOffset`, `wroteBytes` in all, end-of-file fillers included, all with `storeTimestamp`).
 * `status` is PUT_OK (or a flush/slave wait status such as FLUSH_DISK_TIMEOUT) when every record
 * was appended; otherwise it says why the rest was not (`appended` may then be > 0).
 */
export interface PutPreparedResult {
  status: PutMessageStatus;
  appended: number;
  wroteOffset: number;
  wroteBytes: number;
  storeTimestamp: number;
  remark?: string;
}

/** RocketMQ `GetMessageStatus`. */
export type GetMessageStatus =
  | 'FOUND'
  | 'NO_MATCHED_MESSAGE'
  | 'MESSAGE_WAS_REMOVING'
  | 'OFFSET_FOUND_NULL'
  | 'OFFSET_OVERFLOW_BADLY'
  | 'OFFSET_OVERFLOW_ONE'
  | 'OFFSET_TOO_SMALL'
  | 'NO_MATCHED_LOGIC_QUEUE'
  | 'NO_MESSAGE_IN_QUEUE';

export interface GetMessageResult {
  status: GetMessageStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  /** Raw CommitLog records, each exactly TOTALSIZE bytes, in queue order. */
  messages: Buffer[];
  /** Queue offset of each entry in `messages`. */
  messageQueueOffsets: number[];
  /** Sum of the sizes of `messages` in bytes. */
  bufferTotalSizeBytes: number;
  /**
   * `messages` concatenated (bufferTotalSizeBytes long), when the store assembled them in one
   * buffer (then each entry of `messages` is a view into it); absent otherwise.
   */
  body?: Buffer;
  /**
   * Lend mode (getMessage's `lend`): the records in order as a few buffers — views of the
   * CommitLog read cache's chunks (runs of records adjacent in the CommitLog are one view) and of
   * a pooled body for the records copied — concatenated = `messages` concatenated. Valid until
   * `release()`. Absent without lend mode.
   */
  bodyParts?: Buffer[];
  /**
   * Lend mode, without a Buffer object per part (`bodyParts` makes one view per part when read; a
   * pull of records interleaved with other queues' is one part per record): the number of parts;
   * part i is `partBuffer(i)` bytes [`partStart(i)`, `partEnd(i)`) — a read-cache chunk's buffer
   * or the pooled body, shared by other parts and other results. Same bytes, same order and same
   * validity (until `release()`) as `bodyParts`. 0 / absent without lend mode.
   */
  readonly partCount?: number;
  partBuffer?(i: number): Buffer;
  partStart?(i: number): number;
  partEnd?(i: number): number;
  /**
   * Ends the loan of `body`, `bodyParts` and `messages`: the body goes back to the store's pool,
   * leased read-cache chunks may be reused. Call once nothing reads them any more (a pull reply:
   * from the socket's write callback). Idempotent; never calling it only costs memory (the GC
   * takes the buffers, the read cache allocates fresh chunks). Absent on results that hold
   * nothing to give back (other stores).
   */
  release?(): void;
  /** RocketMQ `suggestPullingFromSlave`: the consumer lags more than accessMessageInMemoryMaxRatio of RAM. */
  suggestPullingFromSlave: boolean;
}

/**
 * getMessage's lend mode (zero-copy pulls, the analogue of Apache's `SelectMappedBufferResult`
 * views of the mapped CommitLog, released after the transfer): records found in the CommitLog
 * read cache are lent as views of its chunks instead of copied (GetMessageResult.bodyParts).
 */
export interface GetMessageLendOptions {
  /** Views shorter than this many bytes are copied into the body instead (0 = lend every view). */
  minViewBytes: number;
  /** When more parts than this would remain, everything is copied into one body (≥ 1). */
  maxParts: number;
}

/** Server-side filter (RocketMQ `MessageFilter`). */
/** One ConsumeQueue entry as getConsumeQueueEntries returns it. */
export interface ConsumeQueueEntryView {
  queueOffset: number;
  /** CommitLog offset of the record. */
  phyOffset: number;
  sizeBytes: number;
  tagsCode: number;
}

export interface MessageFilter {
  /** `tagsCode` is the ConsumeQueue entry's tags code. */
  isMatchedByConsumeQueue(tagsCode: number): boolean;
  /** Optional second stage on the full record (SQL92 etc.). */
  isMatchedByCommitLog?(record: Buffer): boolean;
}

/** `getOffsetInQueueByTime` boundary (RocketMQ `BoundaryType`). */
export type BoundaryType = 'LOWER' | 'UPPER';

/** Called after a message has been dispatched to its ConsumeQueue (wakes long-polling pulls). */
export type MessageArrivingListener = (
  topic: string,
  queueId: number,
  logicOffset: number,
  tagsCode: number,
  storeTimestamp: number,
  properties: Map<string, string>,
) => void;

/** Result of a lookup by key (RocketMQ `QueryMessageResult`). */
export interface QueryMessageResult {
  /** Raw CommitLog records, ascending by physical offset, each matching the topic and key. */
  messages: Buffer[];
  /** End timestamp of the newest index file (ms), 0 without index files. */
  indexLastUpdateTimestamp: number;
  /** Physical offset of the newest indexed message. */
  indexLastUpdatePhyOffset: number;
}

/**
 * Told the outcome of `MessageStore.putMessageWithCallback`: the result and the message that was
 * put (so a caller needs no closure per message).
 */
export type PutMessageCallback = (result: PutMessageResult, msg: MessageInner) => void;

/**
 * Told an internal error (a bug, never a refusal: those are results) of a
 * `putMessageWithCallback` put that surfaced after the call returned, with the message put.
 */
export type PutMessageFailure = (err: unknown, msg: MessageInner) => void;

export interface MessageStore {
  /** Appends one message. Never throws for bad input: returns MESSAGE_ILLEGAL etc. with a remark. */
  putMessage(msg: MessageInner): Promise<PutMessageResult>;
  /**
   * `putMessage` without a promise per put, for callers with many puts in flight (the broker's
   * single sends): the same outcome, told to `done(result, msg)` exactly once, synchronously when
   * known at once (a refusal), else later. An internal error (a bug) is thrown when it happens
   * during the call, else told to `fail(err, msg)` (without `fail`: an uncaught exception).
   * `done` and `fail` must not throw. Optional: a caller without it uses `putMessage`.
   */
  putMessageWithCallback?(msg: MessageInner, done: PutMessageCallback, fail?: PutMessageFailure): void;
  /**
   * Appends a batch atomically (RocketMQ `putMessages` with a MessageExtBatch): all messages of
   * one topic and queue, non-transactional, with consecutive queue offsets and CommitLog
   * positions and one store timestamp, or none of them (MESSAGE_ILLEGAL etc. with a remark).
   */
  putMessages(msgs: readonly MessageInner[]): Promise<PutMessagesResult>;
  /**
   * `putMessages` for a batch on the byte path (common/message/encoded-batch.ts: each record
   * written straight from the request frame): the same atomicity, refusals and result, the same
   * stored bytes. Optional: a broker without it sends every batch through `putMessages`.
   */
  putEncodedBatch?(batch: EncodedBatch): Promise<PutMessagesResult>;
  /**
   * Validates and encodes a message for a later `putPreparedMessages` (same rules and refusals as
   * `putMessage`: MESSAGE_ILLEGAL, PROPERTIES_SIZE_EXCEEDED with a remark; transactional
   * PREPARED/ROLLBACK messages are refused). Nothing is stored. `alloc(size)`, when given,
   * supplies the record's buffer (exactly `size` bytes). Optional.
   */
  prepareMessage?(msg: MessageInner, alloc?: (sizeBytes: number) => Buffer): PreparedMessage | { status: PutMessageStatus; remark: string };
  /**
   * Appends prepared messages of any topics and queues, in order, as single puts would (each
   * record at its queue's next offset, consecutive CommitLog positions, a segment's end-of-file
   * filler where a record does not fit, records byte-equal to what putMessage writes) with one
   * store timestamp, one dispatch (ConsumeQueue, index, arriving listener) and one flush / slave
   * wait (skipped when every record's WAIT is "false") for the block. Optional.
   */
  putPreparedMessages?(records: readonly PreparedMessage[] | PreparedColumns): Promise<PutPreparedResult>;
  /**
   * Pull path, see store-format.md §7 for statuses and nextBeginOffset rules. With `lend`
   * (stores that support it; others ignore it) records may come as views (GetMessageResult
   * bodyParts) that stay valid until the result's `release()`.
   */
  getMessage(
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter?: MessageFilter | null,
    lend?: GetMessageLendOptions | null,
  ): Promise<GetMessageResult>;
  /**
   * Hands `GetMessageResult.body` back for reuse by later getMessage calls, once nothing reads it
   * or its record views any more (a pull reply: after the socket's write callback). Anything
   * that is not such a body is ignored. Optional: a store without it lets bodies be collected.
   * A result with `release()` is better handed back with that (it also ends chunk leases); use
   * either for a result (both is harmless: the pool tells lendings apart).
   */
  releaseMessageBody?(body: Buffer): void;
  /** Next queue offset to be written (0 if the queue does not exist). */
  getMaxOffsetInQueue(topic: string, queueId: number): number;
  getMinOffsetInQueue(topic: string, queueId: number): number;
  /** Physical offset stored in the ConsumeQueue entry (0 if absent). */
  getCommitLogOffsetInQueue(topic: string, queueId: number, consumeQueueOffset: number): number;
  /**
   * Up to `maxCount` ConsumeQueue entries from `fromOffset` on (below the queue's min offset:
   * from the min), each with its queue offset; null when the queue does not exist. For
   * inspection (QUERY_CONSUME_QUEUE, mqadmin queryCq). Optional.
   */
  getConsumeQueueEntries?(topic: string, queueId: number, fromOffset: number, maxCount: number): ConsumeQueueEntryView[] | null;
  getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number, boundary?: BoundaryType): Promise<number>;
  /** Store time of the queue's earliest valid entry, -1 if none. */
  getEarliestMessageTime(topic: string, queueId: number): Promise<number>;
  getMessageStoreTimeStamp(topic: string, queueId: number, consumeQueueOffset: number): Promise<number>;
  /** Decodes the record at a physical offset; null if none (below min, above max, blank). */
  lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null>;
  /** Raw record bytes at a physical offset; null if none. */
  selectOneMessageByOffset(commitLogOffset: number, size?: number): Promise<Buffer | null>;
  /**
   * Messages of `topic` whose KEYS contain `key` or whose UNIQ_KEY equals it, stored within
   * [beginMs, endMs], at most maxNum (capped by maxMsgsNumBatch), without duplicates.
   */
  queryMessage(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<QueryMessageResult>;
  getMinPhyOffset(): number;
  getMaxPhyOffset(): number;
  /** Topic -> queue ids -> max offset, for all ConsumeQueues present. */
  getTopicQueueTable(): Map<string, Map<number, number>>;
  setMessageArrivingListener(listener: MessageArrivingListener | null): void;
  /** Removes the topics' ConsumeQueues (files and in-memory state). */
  deleteTopics(topics: string[]): Promise<void>;
  /**
   * Deletes expired CommitLog files now, at any hour (RocketMQ `executeDeleteFilesManually`,
   * admin request DELETE_EXPIRED_COMMITLOG); resolves with the cleaning pass report. Optional:
   * stores without retention omit it.
   */
  executeDeleteFilesManually?(): Promise<unknown>;
  /** CommitLog position forced to disk (runtime info `remainHowManyDataToFlush`). Optional. */
  getFlushedPhyOffset?(): number;
  /** Bytes written to the CommitLog but not yet dispatched to ConsumeQueues. Optional. */
  dispatchBehindBytes?(): number;
  /**
   * Where consumers may read up to, CommitLog bytes (Apache `MessageStore.getConfirmOffset`):
   * in controller mode what the sync state set confirmed, else the max offset. Optional.
   */
  getConfirmOffset?(): number;
  /** Store time of the oldest record in the CommitLog, -1 when empty. Optional. */
  getEarliestMessageTimeOfStore?(): Promise<number>;
  /**
   * Registers the CommitLog offset from which a component still needs records (pending timer
   * messages): retention keeps files ending above it unless the disk must be freed at once.
   * Optional: stores without retention omit it.
   */
  setRetentionHold?(hold: (() => number) | null): void;
  /** Clean shutdown: flush everything, write the checkpoint, remove the abort file. */
  shutdown(): Promise<void>;
}
