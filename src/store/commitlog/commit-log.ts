/**
 * The CommitLog: one append-only stream of records (spec §1) split into segments of
 * `mappedFileSizeCommitLog` bytes under `<root>/commitlog/` (RocketMQ `CommitLog`).
 *
 * Append (§1.14, §1.11): validate and encode before touching any file; then, synchronously (the
 * JS thread is the put lock): take the store time (monotonic in file order), assign the queue
 * offset (NOT/COMMIT transaction types only; 0 for PREPARED/ROLLBACK), and append. A record of
 * length L that does not fit (L + 8 > bytes left) makes the file end with the 8-byte blank
 * filler `[int bytesLeft][int BLANK_MAGIC_CODE]` and goes to the next segment, its
 * PHYSICALOFFSET patched to the new position. A batch (`appendBatch`) is appended the same way
 * as one block: consecutive records, one store time, rolled whole to the next segment.
 *
 * Reads return copies (records never span segments).
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import type { MessageInner } from '../../common/message/message.js';
import {
  BLANK_MAGIC_CODE,
  END_FILE_MIN_BLANK_LENGTH,
  RecordEncodeError,
  newRecordPlan,
  planRecord,
  type RecordPlan,
  readStoreTimestamp,
  writeBlankRecord,
  writeRecord,
  type DispatchRequest,
  QUEUE_OFFSET_POSITION,
  PHY_POS_POSITION,
  storeTimestampPosition,
} from '../../common/message/record-codec.js';
import { PreparedDispatchBlock } from '../dispatch/prepared-dispatch-block.js';
import { EncodedBatchItemProperties, planEncodedBatch, writeEncodedBatchRecord, type EncodedBatch } from '../../common/message/encoded-batch.js';
import { tagsCode } from '../../common/message/java-hash.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import { createMessageId, createMessageIdList } from '../../common/message/msgid.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, getTransactionValue } from '../../common/message/sysflag.js';
import { validateTopic } from '../../common/message/topic-validator.js';
import type { AppendResult, PreparedColumns, PreparedMessage, PutMessageStatus } from '../message-store.js';
import { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import type { PrewriteOptions } from '../mapped-file/segment-prewriter.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';
import { buildDispatchRequest, dispatchTagsCode } from '../dispatch/build-dispatch-request.js';
import type { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import { CommitLogReadCache, type CommitLogReadCacheOptions, type ReadCacheChunk } from './commit-log-read-cache.js';

/** A read-cache chunk located in the CommitLog: `buf[0, length)` holds CommitLog bytes [phyStart, phyStart + length). */
export interface CachedChunkRef {
  buf: Buffer;
  phyStart: number;
  length: number;
  /** The cache's chunk (for readCache.lease / unlease). */
  chunk: ReadCacheChunk;
}

/** Extra room a record may take beyond maxMessageSize (headers, topic, properties). */
export const RECORD_SIZE_SLACK_BYTES = 64 * 1024;

/**
 * Background pre-writing of the next segment pauses while a CommitLog flush ran within this many
 * ms (under SYNC_FLUSH producers wait on every fdatasync, and the zero writes and their
 * fdatasyncs queue in front of them; measured in docs/internals/io-engine.md).
 */
export const PREWRITE_YIELD_TO_FLUSHES_MS = 50;

export interface CommitLogOptions {
  dir: string;
  fileSize: number;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
  /** Body size limit (maxMessageSize). */
  maxMessageSize: number;
  /** Delay per level in ms (index 0 = level 1), for the schedule topic's tags code. */
  delayLevelTableMs: number[];
  /**
   * Pre-write segments before use (warmMapedFileEnable); null/absent: only pre-create them.
   * Unless `yieldToFlushesWithinMs` is given, background pre-writes yield to CommitLog flushes
   * (PREWRITE_YIELD_TO_FLUSHES_MS).
   */
  prewrite?: PrewriteOptions | null;
  /** Told once per segment whose fdatasync fails (fsyncgate: the store refuses writes until restart). */
  onSyncFailed?: (e: SyncFailedError) => void;
  /** Sizes of the pull path's chunk cache (defaults: CommitLogReadCache). */
  readCache?: CommitLogReadCacheOptions;
  /**
   * Commit the write buffer with asynchronous writes on the libuv pool, so the event loop never
   * waits in the kernel's page-cache write (the role of RocketMQ's CommitRealTimeService thread
   * with transientStorePoolEnable; store config `commitCommitLogAsync`). Default false: a
   * synchronous pwrite on the loop.
   */
  asyncCommit?: boolean;
}

export type AppendOutcome =
  | { status: 'PUT_OK'; appendResult: AppendResult; dispatch: DispatchRequest }
  | {
      status: Exclude<PutMessageStatus, 'PUT_OK'>;
      remark: string;
      /** CREATE_MAPPED_FILE_FAILED because the end-of-file filler of the full segment could not be written (a write failure, not a file-creation one). */
      writeError?: unknown;
    };

/**
 * Outcome of `appendBatch`: on PUT_OK the block (`wroteOffset`, `wroteBytes`: the records are
 * contiguous), the first queue offset, the one store time, the joined msgIds, one DispatchRequest
 * per message in batch order, and `appendResultsSource` for the per-message AppendResults (made
 * only when a caller asks: the broker's remoting path answers from the summary).
 */
export type BatchAppendOutcome =
  | {
      status: 'PUT_OK';
      wroteOffset: number;
      wroteBytes: number;
      /** Queue offset of the first message (the others follow it). */
      firstQueueOffset: number;
      /** The batch's one store time. */
      storeTimestamp: number;
      /** The records' offset msgIds joined with ',' (what a batch send answers). */
      msgIds: string;
      /**
       * What the per-message AppendResults are made of (batchAppendResults; made only when a
       * caller asks). Plain data, not a closure: under tsx (esbuild keepNames) every named
       * closure costs an Object.defineProperty of its name when created.
       */
      appendResultsSource: BatchAppendResultsSource;
      dispatches: DispatchRequest[];
    }
  | {
      status: Exclude<PutMessageStatus, 'PUT_OK'>;
      remark: string;
      /** As in AppendOutcome: the end-of-file filler could not be written (a write failure). */
      writeError?: unknown;
    };

/**
 * Outcome of `appendPrepared`: the first `appended` records were written (from `wroteOffset`,
 * `wroteBytes` in all, end-of-file fillers included), their dispatch in `block` (columns, no
 * object per record); `failure` says why the rest was not (absent when all were).
 */
export interface PreparedAppendOutcome {
  appended: number;
  wroteOffset: number;
  wroteBytes: number;
  storeTimestamp: number;
  block: PreparedDispatchBlock;
  failure?: { status: Exclude<PutMessageStatus, 'PUT_OK'>; remark: string; writeError?: unknown };
}

/** Writes `v` (a non-negative safe integer) as a big-endian 64-bit long at `p` (byte stores: cheaper than two writeUInt32BE on the hot append path). */
function putLong(b: Buffer, p: number, v: number): void {
  const hi = Math.floor(v / 4294967296);
  const lo = v - hi * 4294967296;
  b[p] = hi >>> 24;
  b[p + 1] = (hi >>> 16) & 0xff;
  b[p + 2] = (hi >>> 8) & 0xff;
  b[p + 3] = hi & 0xff;
  b[p + 4] = lo >>> 24;
  b[p + 5] = (lo >>> 16) & 0xff;
  b[p + 6] = (lo >>> 8) & 0xff;
  b[p + 7] = lo & 0xff;
}

/**
 * Prepared records lying back to back in memory are written straight from there (one pwrite, no
 * copy into the write buffer) when they make at least this many bytes (CommitLog.appendPrepared);
 * fewer are copied into the write buffer like any append.
 */
export const DIRECT_RUN_MIN_BYTES = 64 * 1024;

/** Smallest prefix of a record holding SYSFLAG and STORETIMESTAMP for both host widths. */
const STORE_TIMESTAMP_PROBE_BYTES = 76;
/** What a reused batch plan points at between batches (never encoded). */
const NO_MESSAGE = null as unknown as MessageInner;

/** Why no segment could take an append (see CommitLog.segmentWithRoomFor). */
interface SegmentFailure {
  status: 'CREATE_MAPPED_FILE_FAILED';
  remark: string;
  writeError?: unknown;
}

function isSegmentFailure(x: MappedFile | SegmentFailure): x is SegmentFailure {
  return (x as SegmentFailure).status === 'CREATE_MAPPED_FILE_FAILED';
}

/** A batch block's reservation in a segment (CommitLog.reserveBatchBlock). */
interface BatchBlock {
  mf: MappedFile;
  /** The one store time of every record of the block, ms. */
  storeTimestamp: number;
  /** CommitLog offset of the block's first byte. */
  wroteOffset: number;
  /** Reserved position in the write buffer, or < 0 when the block has a Buffer of its own. */
  at: number;
  /** Where the records are written: the segment's write buffer, or the block's own Buffer. */
  target: Buffer;
  /** Offset of the block's first byte in `target`. */
  base: number;
}

export class CommitLog {
  readonly mfq: MappedFileQueue;
  private readonly opts: CommitLogOptions;
  private lastStoreTimestamp = 0;
  private readonly blank = Buffer.alloc(END_FILE_MIN_BLANK_LENGTH);
  /** Layout of the message being appended (reused: append is synchronous). */
  private readonly recordPlan = newRecordPlan();
  /**
   * Record plans of appendBatch, reused instead of one object per message (grown to the largest
   * batch seen, at most maxMessageSize / the smallest record; appendBatch is synchronous).
   */
  private readonly batchPlans: RecordPlan[] = [];
  /** CommitLog offsets of appendBatch's records (reused, as batchPlans). */
  private readonly batchOffsets: number[] = [];
  private readonly validTopics = new Set<string>();
  /** Chunks of recently pulled CommitLog bytes (readInto). */
  readonly readCache: CommitLogReadCache;
  /** The topic of the last put that passed (successive puts mostly share one). */
  private lastValidTopic: string | null = null;

  constructor(opts: CommitLogOptions) {
    this.opts = opts;
    this.readCache = new CommitLogReadCache(opts.readCache ?? {});
    this.mfq = new MappedFileQueue({
      dir: opts.dir,
      fileSize: opts.fileSize,
      fs: opts.fs,
      clock: opts.clock,
      logger: opts.logger,
      preallocate: true,
      asyncCommit: opts.asyncCommit ?? false,
      // prepared blocks (appendPrepared) are written on the libuv pool, off this thread
      asyncDirectWrites: true,
      prewrite: opts.prewrite ? { yieldToFlushesWithinMs: PREWRITE_YIELD_TO_FLUSHES_MS, ...opts.prewrite } : null,
      ...(opts.onSyncFailed ? { onSyncFailed: opts.onSyncFailed } : {}),
    });
  }

  get fileSize(): number {
    return this.opts.fileSize;
  }

  /** Changes the body limit at runtime (values < 10 are ignored, like RocketMQ). */
  setMaxMessageSize(bytes: number): void {
    if (Number.isInteger(bytes) && bytes >= 10) this.opts.maxMessageSize = bytes;
  }

  load(): void {
    this.mfq.load();
  }

  /** Checks a message against the put rules and encodes it; returns the record or a failure. */
  encode(msg: MessageInner): Buffer | { status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED'; remark: string } {
    const problem = this.plan(msg);
    if (problem) return problem;
    const record = Buffer.allocUnsafe(this.recordPlan.size);
    writeRecord(record, 0, this.recordPlan, 0, 0, 0);
    return record;
  }

  /** Checks a message against the put rules and lays it out into `into`; null when it may be stored. */
  private plan(msg: MessageInner, into: RecordPlan = this.recordPlan): { status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED'; remark: string } | null {
    const topicProblem = this.checkTopic(msg.topic);
    if (topicProblem) return { status: 'MESSAGE_ILLEGAL', remark: topicProblem };
    if (!Buffer.isBuffer(msg.body)) return { status: 'MESSAGE_ILLEGAL', remark: 'message body is missing' };
    const max = this.opts.maxMessageSize;
    if (msg.body.length > max) {
      return { status: 'MESSAGE_ILLEGAL', remark: `message body size ${msg.body.length} exceeds maxMessageSize ${max}` };
    }
    try {
      planRecord(msg, undefined, into);
    } catch (e) {
      if (e instanceof RecordEncodeError) return { status: e.status, remark: e.message };
      return { status: 'MESSAGE_ILLEGAL', remark: `message cannot be encoded: ${(e as Error).message}` };
    }
    const size = into.size;
    if (size > max + RECORD_SIZE_SLACK_BYTES) {
      return { status: 'MESSAGE_ILLEGAL', remark: `message record size ${size} exceeds maxMessageSize ${max} + ${RECORD_SIZE_SLACK_BYTES}` };
    }
    if (size + END_FILE_MIN_BLANK_LENGTH > this.opts.fileSize) {
      return { status: 'MESSAGE_ILLEGAL', remark: `message record size ${size} does not fit a CommitLog segment of ${this.opts.fileSize} bytes` };
    }
    return null;
  }

  /** validateTopic, remembering the topics that passed (few, and checked on every put). */
  private checkTopic(topic: string): string | null {
    if (topic === this.lastValidTopic) return null;
    if (typeof topic === 'string' && this.validTopics.has(topic)) {
      this.lastValidTopic = topic;
      return null;
    }
    const problem = validateTopic(topic);
    if (problem === null) {
      if (this.validTopics.size >= 4096) this.validTopics.clear();
      this.validTopics.add(topic);
    }
    return problem;
  }

  /**
   * Validates, encodes and appends one message. Synchronous: nothing else runs between the
   * store-time/queue-offset assignment and the copy into the segment. The record is encoded in
   * place, straight into the segment's write buffer (no intermediate copy).
   */
  append(msg: MessageInner, queueOffsets: QueueOffsetTable): AppendOutcome {
    const problem = this.plan(msg);
    if (problem) return problem;
    const plan = this.recordPlan;
    const size = plan.size;
    const mf = this.segmentWithRoomFor(size);
    if (isSegmentFailure(mf)) return mf;
    const tranType = getTransactionValue(msg.sysFlag);
    const assignsOffset = tranType === MessageSysFlag.TRANSACTION_NOT_TYPE || tranType === MessageSysFlag.TRANSACTION_COMMIT_TYPE;
    const now = this.opts.clock.nowMs();
    const storeTimestamp = now > this.lastStoreTimestamp ? now : this.lastStoreTimestamp;
    const wroteOffset = mf.getWroteOffset();
    const at = mf.reserve(size);
    // nothing below may fail before the queue offset is taken (reserve threw or succeeded)
    const queueOffset = assignsOffset ? queueOffsets.assign(msg.topic, msg.queueId) : 0;
    if (at >= 0) {
      writeRecord(mf.writeBufferRef(), at, plan, queueOffset, wroteOffset, storeTimestamp);
      mf.advance(size);
    } else {
      const record = Buffer.allocUnsafe(size);
      writeRecord(record, 0, plan, queueOffset, wroteOffset, storeTimestamp);
      mf.append(record);
    }
    mf.storeTimestamp = storeTimestamp;
    this.lastStoreTimestamp = storeTimestamp;

    const appendResult: AppendResult = {
      wroteOffset,
      wroteBytes: size,
      msgId: createMessageId(msg.storeHost, wroteOffset),
      queueOffset,
      storeTimestamp,
    };
    const dispatch = buildDispatchRequest(msg, appendResult, plan.sysFlag, this.opts.delayLevelTableMs);
    return { status: 'PUT_OK', appendResult, dispatch };
  }

  /**
   * Appends a batch as one block (RocketMQ `CommitLog.asyncPutMessages` with a `MessageExtBatch`):
   * every message is validated and laid out first, and the batch is refused whole when one of
   * them is not storable (remark prefixed `batch message <i>: `). All messages must target the
   * same topic and queue and be non-transactional (Apache refuses a transactional batch:
   * MESSAGE_ILLEGAL). The whole block must fit `maxMessageSize + RECORD_SIZE_SLACK_BYTES` and a
   * segment; when it does not fit the rest of the current segment, the segment gets its
   * end-of-file filler and the whole batch goes to the next one (a batch never spans segments).
   *
   * Synchronous, like `append`: the messages get consecutive queue offsets starting at the
   * queue's next offset, consecutive physical offsets (each record directly follows the previous
   * one) and one store timestamp. Nothing is written and no queue offset is taken when it fails.
   */
  appendBatch(msgs: readonly MessageInner[], queueOffsets: QueueOffsetTable): BatchAppendOutcome {
    const n = msgs.length;
    if (n === 0) return { status: 'MESSAGE_ILLEGAL', remark: 'batch holds no message' };
    const plans = this.batchPlans;
    while (plans.length < n) plans.push(newRecordPlan());
    try {
      return this.appendBatchPlanned(msgs, plans, queueOffsets);
    } finally {
      // the reused plans keep no message (nor the request frame its body views) alive
      for (let i = 0; i < n; i++) plans[i]!.msg = NO_MESSAGE;
    }
  }

  /** appendBatch with `plans` (at least msgs.length of them) to lay the records out in. */
  private appendBatchPlanned(msgs: readonly MessageInner[], plans: RecordPlan[], queueOffsets: QueueOffsetTable): BatchAppendOutcome {
    const n = msgs.length;
    const { topic, queueId } = msgs[0]!;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const msg = msgs[i]!;
      if (msg.topic !== topic || msg.queueId !== queueId) {
        return { status: 'MESSAGE_ILLEGAL', remark: `batch message ${i}: topic/queue ${msg.topic}-${msg.queueId} differs from the batch's ${topic}-${queueId}` };
      }
      if (getTransactionValue(msg.sysFlag) !== MessageSysFlag.TRANSACTION_NOT_TYPE) {
        return { status: 'MESSAGE_ILLEGAL', remark: `batch message ${i}: transactional messages cannot be sent in a batch` };
      }
      const plan = plans[i]!;
      const problem = this.plan(msg, plan);
      if (problem) return { status: problem.status, remark: `batch message ${i}: ${problem.remark}` };
      total += plan.size;
    }
    const block = this.reserveBatchBlock(n, total);
    if ('status' in block) return block;
    const { storeTimestamp, wroteOffset, target, base } = block;
    const firstQueueOffset = queueOffsets.get(topic, queueId);
    const offsets = this.batchOffsets;
    let pos = 0;
    for (let i = 0; i < n; i++) {
      const plan = plans[i]!;
      const offset = wroteOffset + pos;
      writeRecord(target, base + pos, plan, firstQueueOffset + i, offset, storeTimestamp);
      offsets[i] = offset;
      pos += plan.size;
    }
    const msgIds = batchMessageIds(msgs, offsets);
    const recordOffsets = offsets.slice(0, n);
    const end = wroteOffset + total;
    const appendResultsSource: BatchAppendResultsSource = { recordOffsets, end, msgIds, firstQueueOffset, storeTimestamp };
    this.commitBatchBlock(block, total);
    // written: only now are the queue offsets taken (a throw above leaves the table untouched)
    queueOffsets.set(topic, queueId, firstQueueOffset + n);
    const dispatches: DispatchRequest[] = new Array<DispatchRequest>(n);
    const r: AppendResult = { wroteOffset: 0, wroteBytes: 0, msgId: '', queueOffset: 0, storeTimestamp };
    for (let i = 0; i < n; i++) {
      // buildDispatchRequest copies what it reads of `r` (the msgId is not read)
      r.wroteOffset = offsets[i]!;
      r.wroteBytes = plans[i]!.size;
      r.queueOffset = firstQueueOffset + i;
      dispatches[i] = buildDispatchRequest(msgs[i]!, r, plans[i]!.sysFlag, this.opts.delayLevelTableMs);
    }
    return { status: 'PUT_OK', wroteOffset, wroteBytes: total, firstQueueOffset, storeTimestamp, msgIds, appendResultsSource, dispatches };
  }

  /**
   * appendBatch for a batch on the byte path (encoded-batch.ts): the same rules, refusals and
   * guarantees (one block of consecutive records and queue offsets, one store time, all or
   * nothing, rolled whole to the next segment), each record written straight from the request
   * frame (writeEncodedBatchRecord) with the bytes appendBatch would write for the same items.
   * Every record is non-transactional (the broker sends a transactional batch elsewhere).
   */
  appendEncodedBatch(batch: EncodedBatch, queueOffsets: QueueOffsetTable): BatchAppendOutcome {
    const n = batch.count;
    if (n === 0) return { status: 'MESSAGE_ILLEGAL', remark: 'batch holds no message' };
    const { topic, queueId } = batch;
    const topicProblem = this.checkTopic(topic);
    if (topicProblem) return { status: 'MESSAGE_ILLEGAL', remark: `batch message 0: ${topicProblem}` };
    if (getTransactionValue(batch.sysFlag) !== MessageSysFlag.TRANSACTION_NOT_TYPE) {
      return { status: 'MESSAGE_ILLEGAL', remark: 'batch message 0: transactional messages cannot be sent in a batch' };
    }
    const max = this.opts.maxMessageSize;
    const plan = planEncodedBatch(batch, max, Math.min(max + RECORD_SIZE_SLACK_BYTES, this.opts.fileSize - END_FILE_MIN_BLANK_LENGTH));
    if ('status' in plan) return plan;
    const total = plan.total;
    const block = this.reserveBatchBlock(n, total);
    if ('status' in block) return block;
    const { storeTimestamp, wroteOffset, target, base } = block;
    const firstQueueOffset = queueOffsets.get(topic, queueId);
    const targetView = new DataView(target.buffer, target.byteOffset, target.length);
    const recordOffsets = new Array<number>(n);
    const sizes = plan.sizes;
    let pos = 0;
    for (let k = 0; k < n; k++) {
      const offset = wroteOffset + pos;
      writeEncodedBatchRecord(target, targetView, base + pos, batch, plan, k, firstQueueOffset + k, offset, storeTimestamp);
      recordOffsets[k] = offset;
      pos += sizes[k]!;
    }
    const msgIds = createMessageIdList(batch.storeHost, recordOffsets, n);
    const end = wroteOffset + total;
    this.commitBatchBlock(block, total);
    // written: only now are the queue offsets taken (a throw above leaves the table untouched)
    queueOffsets.set(topic, queueId, firstQueueOffset + n);
    const dispatches: DispatchRequest[] = new Array<DispatchRequest>(n);
    const sysFlag = plan.sysFlag;
    const bornTimestamp = batch.bornTimestamp;
    // the byte path never takes SCHEDULE_TOPIC_XXXX with a DELAY (the broker refuses DELAY in a batch): the tags code is the TAGS hash
    let lastTags: string | undefined;
    let lastTagsCode = tagsCode(undefined);
    for (let k = 0; k < n; k++) {
      const tags = batch.tags[k];
      // items mostly share one TAGS string (the scan hands out the same string for the same bytes)
      if (tags !== lastTags) {
        lastTags = tags;
        lastTagsCode = tagsCode(tags);
      }
      dispatches[k] = {
        topic,
        queueId,
        commitLogOffset: recordOffsets[k]!,
        msgSize: sizes[k]!,
        tagsCode: lastTagsCode,
        storeTimestamp,
        consumeQueueOffset: firstQueueOffset + k,
        keys: batch.keys[k]!,
        uniqKey: batch.uniqKey[k]!,
        sysFlag,
        preparedTransactionOffset: 0,
        properties: new EncodedBatchItemProperties(batch, k),
        bornTimestamp,
      };
    }
    const appendResultsSource: BatchAppendResultsSource = { recordOffsets, end, msgIds, firstQueueOffset, storeTimestamp };
    return { status: 'PUT_OK', wroteOffset, wroteBytes: total, firstQueueOffset, storeTimestamp, msgIds, appendResultsSource, dispatches };
  }

  /**
   * Where a batch block of `totalBytes` (n records) goes, for appendBatch and appendEncodedBatch:
   * refuses a block over maxMessageSize + RECORD_SIZE_SLACK_BYTES or larger than a segment
   * (MESSAGE_ILLEGAL), rolls to a segment with room (a SegmentFailure when none), picks the
   * block's one store time and reserves its bytes in the segment's write buffer (`target` at
   * `base`; a block larger than the buffer gets a Buffer of its own, base 0). Writes nothing and
   * takes no queue offset: commitBatchBlock does the first once the records are written.
   */
  private reserveBatchBlock(n: number, totalBytes: number): BatchBlock | { status: 'MESSAGE_ILLEGAL'; remark: string } | SegmentFailure {
    const max = this.opts.maxMessageSize;
    if (totalBytes > max + RECORD_SIZE_SLACK_BYTES) {
      return { status: 'MESSAGE_ILLEGAL', remark: `batch of ${n} records totals ${totalBytes} bytes, exceeding maxMessageSize ${max} + ${RECORD_SIZE_SLACK_BYTES}` };
    }
    if (totalBytes + END_FILE_MIN_BLANK_LENGTH > this.opts.fileSize) {
      return { status: 'MESSAGE_ILLEGAL', remark: `batch of ${n} records totals ${totalBytes} bytes and does not fit a CommitLog segment of ${this.opts.fileSize} bytes` };
    }
    const mf = this.segmentWithRoomFor(totalBytes);
    if (isSegmentFailure(mf)) return mf;
    const now = this.opts.clock.nowMs();
    const storeTimestamp = now > this.lastStoreTimestamp ? now : this.lastStoreTimestamp;
    const wroteOffset = mf.getWroteOffset();
    const at = mf.reserve(totalBytes);
    const target = at >= 0 ? mf.writeBufferRef() : Buffer.allocUnsafe(totalBytes);
    return { mf, storeTimestamp, wroteOffset, at, target, base: at >= 0 ? at : 0 };
  }

  /** Makes a block written into its reservation part of the segment (advance, or append of its own Buffer) and stamps its store time. */
  private commitBatchBlock(block: BatchBlock, totalBytes: number): void {
    const mf = block.mf;
    if (block.at >= 0) mf.advance(totalBytes);
    else mf.append(block.target);
    mf.storeTimestamp = block.storeTimestamp;
    this.lastStoreTimestamp = block.storeTimestamp;
  }

  /**
   * Validates and encodes a message for `appendPrepared` (the rules of `append`; transactional
   * PREPARED/ROLLBACK messages are refused: their records take no queue offset). Writes nothing.
   * `alloc(size)` gives the buffer the record is encoded into (exactly `size` bytes, e.g. a slice
   * of a larger block: many small Buffers cost the GC far more than a few large ones).
   */
  prepare(msg: MessageInner, alloc?: (sizeBytes: number) => Buffer): PreparedMessage | { status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED'; remark: string } {
    const tranType = getTransactionValue(msg.sysFlag);
    if (tranType !== MessageSysFlag.TRANSACTION_NOT_TYPE && tranType !== MessageSysFlag.TRANSACTION_COMMIT_TYPE) {
      return { status: 'MESSAGE_ILLEGAL', remark: 'a prepared message cannot be a PREPARED/ROLLBACK transaction record' };
    }
    const problem = this.plan(msg);
    if (problem) return problem;
    const plan = this.recordPlan;
    const record = alloc ? alloc(plan.size) : Buffer.allocUnsafe(plan.size);
    writeRecord(record, 0, plan, 0, 0, 0);
    const props = msg.properties;
    return {
      record,
      topic: msg.topic,
      queueId: msg.queueId,
      sysFlag: plan.sysFlag,
      bornTimestamp: msg.bornTimestamp,
      tags: props.get(MessageConst.TAGS),
      keys: props.get(MessageConst.KEYS) ?? '',
      uniqKey: props.get(MessageConst.UNIQ_KEY) ?? null,
      waitStoreMsgOK: props.get(MessageConst.WAIT) !== 'false',
      ...(msg.topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC ? { properties: props } : {}),
    };
  }

  /**
   * Appends records made by `prepare`, in order, each exactly as `append` would have written its
   * message: a record that does not fit the rest of the segment makes it end with the filler and
   * goes to the next one; each takes its own queue's next offset; all share one store timestamp.
   * Synchronous. QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are written into each record's
   * own buffer (the caller's `record` is changed), and records that lie back to back in memory
   * (carved from one block, as the timer service's are) are written from there as one run: a
   * run of at least DIRECT_RUN_MIN_BYTES goes to the file in one pwrite without passing through
   * the write buffer (MappedFile.appendDirect), a shorter one is copied into it. A failing roll
   * (filler or new segment) or write stops the batch there: the records before it stay
   * appended and are reported (`appended`), the rest is not written and takes no queue offset.
   */
  appendPrepared(records: PreparedColumns, queueOffsets: QueueOffsetTable): PreparedAppendOutcome {
    const now = this.opts.clock.nowMs();
    const storeTimestamp = now > this.lastStoreTimestamp ? now : this.lastStoreTimestamp;
    const block = new PreparedDispatchBlock(records.count, storeTimestamp);
    const delayLevelTableMs = this.opts.delayLevelTableMs;
    let wroteOffset = -1;
    let mf: MappedFile | null = null;
    // the run being gathered: records [runFirst, i) lie in runBuf at [runFrom, runFrom + runBytes) and go to mf at runOffset
    let runBuf: ArrayBufferLike | null = null;
    let runFrom = 0;
    let runBytes = 0;
    let runFirst = 0;
    let runOffset = 0;
    let failure: PreparedAppendOutcome['failure'];
    const writeRun = (): boolean => {
      if (runBytes === 0) return true;
      const view = Buffer.from(runBuf!, runFrom, runBytes);
      try {
        if (runBytes >= DIRECT_RUN_MIN_BYTES) mf!.appendDirect(view);
        else mf!.append(view);
      } catch (e) {
        this.opts.logger.error({ err: e }, 'could not write prepared records to the CommitLog');
        failure = { status: 'UNKNOWN_ERROR', remark: `CommitLog write failed: ${(e as Error).message}`, writeError: e };
        // give the run's queue offsets back (newest first, so each queue ends at its first record's)
        for (let k = block.count - 1; k >= runFirst; k--) queueOffsets.set(block.topic[k]!, block.queueId[k]!, block.consumeQueueOffset[k]!);
        block.truncate(runFirst);
        return false;
      }
      mf!.storeTimestamp = storeTimestamp;
      runBytes = 0;
      return true;
    };
    const { count, rows, view, topic, queueId, sysFlag, tags, properties } = records;
    let k = 0;
    for (; k < count; k++) {
      const i = rows[k]!;
      const rec = view[i]!;
      const size = rec.length;
      let offset: number;
      // same segment and right after the run in memory: extend the run; else write it first
      if (mf !== null && size + END_FILE_MIN_BLANK_LENGTH <= mf.remaining() - runBytes) {
        offset = runOffset + runBytes;
        if (runBytes > 0 && (rec.buffer !== runBuf || rec.byteOffset !== runFrom + runBytes)) {
          if (!writeRun()) break;
        }
      } else {
        if (!writeRun()) break;
        const next: MappedFile | SegmentFailure = this.segmentWithRoomFor(size);
        if (isSegmentFailure(next)) {
          failure = next;
          break;
        }
        mf = next;
        offset = mf.getWroteOffset();
      }
      if (runBytes === 0) {
        runBuf = rec.buffer;
        runFrom = rec.byteOffset;
        runFirst = k;
        runOffset = offset;
      }
      if (wroteOffset < 0) wroteOffset = offset;
      const t = topic[i]!;
      const flag = sysFlag[i]!;
      const queueOffset = queueOffsets.assign(t, queueId[i]!);
      putLong(rec, QUEUE_OFFSET_POSITION, queueOffset);
      putLong(rec, PHY_POS_POSITION, offset);
      putLong(rec, storeTimestampPosition(flag), storeTimestamp);
      runBytes += size;
      // tags code from TAGS, or, for a schedule-topic record, from its properties as for any put
      const props = properties?.[i];
      const code = props ? dispatchTagsCode(t, props, storeTimestamp, delayLevelTableMs) : tagsCode(tags[i]);
      block.add(rec, t, queueId[i]!, flag, records.bornTimestamp[i]!, records.keys[i]!, records.uniqKey[i]!, props, offset, queueOffset, code);
    }
    if (k === count) writeRun();
    const appended = block.count;
    if (appended > 0) this.lastStoreTimestamp = storeTimestamp;
    return {
      appended,
      wroteOffset: Math.max(0, wroteOffset),
      wroteBytes: appended === 0 ? 0 : block.endOffset - wroteOffset,
      storeTimestamp,
      block,
      ...(failure ? { failure } : {}),
    };
  }

  /**
   * The last segment if `bytes` plus a filler fit in it, else the next one after the 8-byte
   * end-of-file filler was written to the full one (a failed filler write leaves that segment as
   * it was: MappedFile.appendAndFillToEnd). CREATE_MAPPED_FILE_FAILED when no segment can be had,
   * with `writeError` when it was the filler's write that failed (a write failure, not a
   * file-creation one).
   */
  private segmentWithRoomFor(bytes: number): MappedFile | SegmentFailure {
    let fillerFailed = false;
    try {
      let mf = this.mfq.getLastMappedFileOrCreate(0);
      if (bytes + END_FILE_MIN_BLANK_LENGTH > mf.remaining()) {
        fillerFailed = true;
        this.appendBlank(mf);
        fillerFailed = false;
        mf = this.mfq.getLastMappedFileOrCreate(0);
      }
      return mf;
    } catch (e) {
      this.opts.logger.error({ err: e }, 'could not create a CommitLog segment');
      return { status: 'CREATE_MAPPED_FILE_FAILED', remark: `could not create a CommitLog segment: ${(e as Error).message}`, ...(fillerFailed ? { writeError: e } : {}) };
    }
  }

  /** Writes the 8-byte end-of-file filler and marks the segment full. */
  private appendBlank(mf: MappedFile): void {
    const maxBlank = mf.remaining();
    writeBlankRecord(this.blank, 0, maxBlank);
    mf.appendAndFillToEnd(this.blank);
  }

  /** Bytes [offset, offset+size) if they lie in one segment below the write position. */
  getData(offset: number, size: number): Buffer | null {
    const mf = this.mfq.findMappedFileByOffset(offset);
    if (!mf) return null;
    return mf.read(offset - mf.fileFromOffset, size);
  }

  /**
   * Copies [offset, offset+size) into dst; false when not readable. The pull path's read: small
   * reads are served from recently read chunks when they can (CommitLogReadCache).
   */
  readInto(offset: number, dst: Buffer, dstOffset: number, size: number): boolean {
    const mf = this.mfq.findMappedFileByOffset(offset);
    if (!mf) return false;
    return this.readCache.readInto(mf, offset - mf.fileFromOffset, dst, dstOffset, size);
  }

  /**
   * The read cache's chunk holding CommitLog byte `offset` (CommitLogReadCache.chunkAt; a
   * missing chunk is read at once, or with `admitNow` false on its second miss), with
   * `phyStart` = the CommitLog offset of `buf[0]`; null when not cached (nor admitted now) or
   * not readable. Valid until the next read of this CommitLog (copy out at once), unless
   * `readCache.lease(chunk)` lends it (then until the matching unlease).
   */
  cachedChunkAt(offset: number, admitNow = true): CachedChunkRef | null {
    const mf = this.mfq.findMappedFileByOffset(offset);
    if (!mf) return null;
    const c = this.readCache.chunkAt(mf, offset - mf.fileFromOffset, admitNow);
    return c === null ? null : { buf: c.buf, phyStart: mf.fileFromOffset + c.start, length: c.length, chunk: c };
  }

  /**
   * The raw record at `offset` (TOTALSIZE read first when `size` is absent). Null below min,
   * at/after max, for a blank filler or a size that does not fit.
   */
  selectOneMessageByOffset(offset: number, size?: number): Buffer | null {
    if (!Number.isSafeInteger(offset) || offset < this.getMinOffset() || offset >= this.getMaxOffset()) return null;
    let total = size;
    if (total === undefined) {
      const head = this.getData(offset, 8);
      if (!head || head.readInt32BE(4) === BLANK_MAGIC_CODE) return null;
      total = head.readInt32BE(0);
    }
    if (!Number.isInteger(total) || total <= 8) return null;
    return this.getData(offset, total);
  }

  /** STORETIMESTAMP of the record at `offset` (-1 when unreadable). Honours IPv6 born hosts (B19). */
  pickupStoreTimestamp(offset: number, size: number): number {
    if (offset < this.getMinOffset() || size < STORE_TIMESTAMP_PROBE_BYTES) return -1;
    const head = this.getData(offset, STORE_TIMESTAMP_PROBE_BYTES);
    return head ? readStoreTimestamp(head, 0) : -1;
  }

  /** Start of the first segment (0 when there is none). */
  getMinOffset(): number {
    const first = this.mfq.getFirstMappedFile();
    if (!first) return 0;
    return first.isAvailable() ? first.fileFromOffset : this.rollNextFile(first.fileFromOffset);
  }

  /** End of written data. */
  getMaxOffset(): number {
    return this.mfq.getMaxOffset();
  }

  /** Start of the segment after the one holding `offset`. */
  rollNextFile(offset: number): number {
    const s = this.opts.fileSize;
    return offset + s - (offset % s);
  }

  /** Re-seeds the monotonic store-time floor after recovery. */
  setLastStoreTimestamp(ms: number): void {
    this.lastStoreTimestamp = Math.max(this.lastStoreTimestamp, ms);
  }

  getLastStoreTimestamp(): number {
    return this.lastStoreTimestamp;
  }
}

/**
 * The comma-joined offset msgIds of a batch written at `offsets` (the first msgs.length entries).
 * When every message has the first one's store host (a broker's batch) the list is built at once
 * (createMessageIdList), otherwise id by id.
 */
function batchMessageIds(msgs: readonly MessageInner[], offsets: readonly number[]): string {
  const n = msgs.length;
  const host = msgs[0]!.storeHost;
  let oneHost = true;
  for (let i = 1; i < n && oneHost; i++) oneHost = sameSocketAddress(msgs[i]!.storeHost, host);
  if (oneHost) return createMessageIdList(host, offsets, n);
  let msgIds = '';
  for (let i = 0; i < n; i++) msgIds = i === 0 ? createMessageId(msgs[i]!.storeHost, offsets[i]!) : msgIds + ',' + createMessageId(msgs[i]!.storeHost, offsets[i]!);
  return msgIds;
}

/**
 * The records of an appended batch (CommitLog.appendBatch): contiguous, starting at
 * `recordOffsets`, the last one ending at `end`; their ids `msgIds` (comma-joined); queue offsets
 * from `firstQueueOffset`; one store time.
 */
export interface BatchAppendResultsSource {
  recordOffsets: readonly number[];
  end: number;
  msgIds: string;
  firstQueueOffset: number;
  storeTimestamp: number;
}

/** One AppendResult per record of `src`, in order (a new array on each call). */
export function batchAppendResults(src: BatchAppendResultsSource): AppendResult[] {
  const { recordOffsets: offsets, end, msgIds, firstQueueOffset, storeTimestamp } = src;
  const ids = msgIds.split(',');
  const n = offsets.length;
  const out: AppendResult[] = new Array<AppendResult>(n);
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n ? offsets[i + 1]! : end;
    out[i] = { wroteOffset: offsets[i]!, wroteBytes: next - offsets[i]!, msgId: ids[i]!, queueOffset: firstQueueOffset + i, storeTimestamp };
  }
  return out;
}

/** Same IP bytes and port (the same object, mostly). */
function sameSocketAddress(a: MessageInner['storeHost'], b: MessageInner['storeHost']): boolean {
  if (a === b) return true;
  if (a.port !== b.port || a.ip.length !== b.ip.length) return false;
  for (let i = 0; i < a.ip.length; i++) if (a.ip[i] !== b.ip[i]) return false;
  return true;
}
