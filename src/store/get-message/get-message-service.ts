/**
 * The pull path (RocketMQ 5.x `DefaultMessageStore.getMessage`, spec §7).
 *
 * | condition                     | status                | nextBeginOffset            |
 * |-------------------------------|-----------------------|----------------------------|
 * | max == 0                      | NO_MESSAGE_IN_QUEUE   | correct(0)                 |
 * | offset < min                  | OFFSET_TOO_SMALL      | correct(min)               |
 * | offset == max                 | OFFSET_OVERFLOW_ONE   | offset                     |
 * | offset > max                  | OFFSET_OVERFLOW_BADLY | correct(max)               |
 * | CQ slice unavailable          | OFFSET_FOUND_NULL     | correct(rollNextFile(off)) |
 * | otherwise scan                | FOUND / NO_MATCHED_MESSAGE / MESSAGE_WAS_REMOVING |  |
 *
 * correct(x) = x on a master (or with offsetCheckInSlave), else the requested offset.
 * The scan covers at most max(maxFilterMessageSize, maxMsgNums × 20) bytes of one CQ file;
 * nextBeginOffset advances past every entry looked at, filtered ones included (B25).
 * Batch limits: maxMsgNums, maxTotalMsgSize, and the in-memory (hot) or on-disk (cold) byte and
 * count limits, "in memory" meaning within accessMessageInMemoryMaxRatio % of RAM of the
 * CommitLog end.
 *
 * Records are read straight into one body buffer (`result.body`; `result.messages` are views
 * into it); a record followed in the ConsumeQueue by records adjacent in the same CommitLog file
 * (a batch, or a single-queue topic) is read together with them in one positional read, and
 * records with a few other queues' records in between are read as one span and copied out
 * (planRead); records of one queue among many others' (too far apart for a span) are copied out
 * of the CommitLog read cache's chunk when the pull's next record is within reach of it. A span
 * that is not readable falls back to reading each record on its own, so the statuses are those of
 * reading record by record.
 *
 * Bodies come from a PullBodyPool: `releaseBody` (or the result's `release()`) hands one back
 * once nothing reads it any more (the broker: from the pull reply's socket write callback);
 * `messages` views are made only when first read.
 *
 * Lend mode (`lend`, zero-copy; Apache returns `SelectMappedBufferResult` views of its mapped
 * CommitLog and releases them after the transfer): a record found in a read-cache chunk is not
 * copied but lent as a view of the chunk, which is leased until the result's `release()` (a
 * leased chunk is never refilled, CommitLogReadCache). Records adjacent in the CommitLog and in
 * one chunk are one view; a run of adjacent records that fits one chunk is lent from it (the
 * chunk read whole on its second miss when all written) instead of read into the body. Records or runs
 * shorter than `minViewBytes` are copied as before; more than `maxParts` parts are copied into
 * one body. The parts in order are described by `partCount` / `partBuffer(i)` / `partStart(i)` /
 * `partEnd(i)` (no object per part) and, made on first read, by `bodyParts` (a Buffer view per
 * part). The bytes of a view are those of the record
 * (CQ entries point only at dispatched records; a chunk holds only bytes below its segment's
 * write position).
 */
import * as os from 'node:os';
import type { CachedChunkRef, CommitLog } from '../commitlog/commit-log.js';
import type { CommitLogReadCache, ReadCacheChunk } from '../commitlog/commit-log-read-cache.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import { CQ_STORE_UNIT_SIZE } from '../consumequeue/consume-queue.js';
import { cqEntriesView, cqViewPhyOffset, cqViewSize, cqViewTagsCode } from '../consumequeue/consume-queue-entry.js';
import type { GetMessageLendOptions, GetMessageResult, GetMessageStatus, MessageFilter } from '../message-store.js';
import type { StoreConfig } from '../store-config.js';
import { PullBodyPool } from './pull-body-pool.js';

/** Largest span of CommitLog bytes read at once for the records of one pull. */
const MAX_SPAN_BYTES = 1024 * 1024;
/** A span read is used while its bytes stay within this many times the bytes of its records. */
const SPAN_WASTE_RATIO = 8;

/** The body of a lend-mode pull before anything was copied. */
const NO_BODY = Buffer.alloc(0);

/** How the records from one entry on are read together (GetMessageService.planRead). */
interface ReadPlan {
  records: number;
  recordBytes: number;
  spanBytes: number;
}

/** Default maxTotalMsgSize of a pull (RocketMQ: 128 MiB). */
export const DEFAULT_MAX_TOTAL_MSG_SIZE = 128 * 1024 * 1024;

export type GetMessageLimits = Pick<
  StoreConfig,
  | 'maxTransferBytesOnMessageInMemory'
  | 'maxTransferCountOnMessageInMemory'
  | 'maxTransferBytesOnMessageInDisk'
  | 'maxTransferCountOnMessageInDisk'
  | 'accessMessageInMemoryMaxRatio'
  | 'maxFilterMessageSize'
  | 'brokerRole'
  | 'offsetCheckInSlave'
>;

export class GetMessageService {
  /** Bytes behind the CommitLog end still considered hot. */
  /** Lend mode parts of the pull being scanned (reused by every pull, see PartScratch). */
  private readonly partScratch = new PartScratch();
  private readonly memoryBytes: number;
  /** planRead's answer (one object reused: read at once by the scan, before the next planRead). */
  private readonly plan: ReadPlan = { records: 0, recordBytes: 0, spanBytes: 0 };
  /** Reused buffer for span reads (records are copied out of it before scan returns). */
  private span: Buffer = Buffer.alloc(0);
  /** Most bytes one pull returns (the larger transfer limit): caps the body's first size and read-ahead. */
  private readonly transferCapBytes: number;
  /** Body buffers, recycled through releaseBody once a reply was written. */
  readonly bodies = new PullBodyPool();

  constructor(
    private readonly commitLog: CommitLog,
    private readonly cqStore: ConsumeQueueStore,
    private readonly limits: GetMessageLimits,
    totalMemoryBytes: number = os.totalmem(),
  ) {
    this.memoryBytes = Math.floor((totalMemoryBytes * limits.accessMessageInMemoryMaxRatio) / 100);
    this.transferCapBytes = Math.max(limits.maxTransferBytesOnMessageInMemory, limits.maxTransferBytesOnMessageInDisk);
  }

  getMessage(
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter: MessageFilter | null,
    maxTotalMsgSize = DEFAULT_MAX_TOTAL_MSG_SIZE,
    lend: GetMessageLendOptions | null = null,
  ): GetMessageResult {
    const correctOffsets = this.limits.brokerRole !== 'SLAVE' || this.limits.offsetCheckInSlave;
    // a missing queue behaves like an empty one (RocketMQ creates it on lookup; we do not, so
    // pulls of arbitrary topic names cannot grow the table)
    const cq = this.cqStore.find(topic, queueId);
    const minOffset = cq?.getMinOffsetInQueue() ?? 0;
    const maxOffset = cq?.getMaxOffsetInQueue() ?? 0;
    const result = new PulledMessages(offset, minOffset, maxOffset, this.bodies, this.commitLog.readCache, this.partScratch);
    if (!cq || maxOffset === 0) return result.done('NO_MESSAGE_IN_QUEUE', correctOffsets ? 0 : offset);
    if (offset < minOffset) return result.done('OFFSET_TOO_SMALL', correctOffsets ? minOffset : offset);
    if (offset === maxOffset) return result.done('OFFSET_OVERFLOW_ONE', offset);
    if (offset > maxOffset) return result.done('OFFSET_OVERFLOW_BADLY', correctOffsets ? maxOffset : offset);

    const windowEntries = Math.floor(Math.max(this.limits.maxFilterMessageSize, maxMsgNums * CQ_STORE_UNIT_SIZE) / CQ_STORE_UNIT_SIZE);
    // An unfiltered pull nearly always stops after maxMsgNums entries: read those first (640 bytes
    // for 32, not the 16 KB window) and the whole window only when the scan went through all of
    // them without filling the batch (unreadable entries, a removed file), then scan again: the
    // result is the one a scan of the whole window gives.
    const firstEntries = filter === null ? Math.min(windowEntries, Math.max(1, maxMsgNums)) : windowEntries;
    // (transient: the entries are read only within this call, before the queue is read again)
    const slice = cq.readEntries(offset, Math.max(1, firstEntries), true);
    if (!slice) return result.done('OFFSET_FOUND_NULL', correctOffsets ? cq.rollNextFile(offset) : offset);
    this.scan(result, slice.buf, slice.count, offset, maxMsgNums, filter, maxTotalMsgSize, lend);
    if (firstEntries < windowEntries && slice.count === firstEntries && result.nextBeginOffset === offset + slice.count && result.messageQueueOffsets.length < maxMsgNums) {
      const whole = cq.readEntries(offset, windowEntries);
      if (whole && whole.count > slice.count) {
        result.reset();
        this.scan(result, whole.buf, whole.count, offset, maxMsgNums, filter, maxTotalMsgSize, lend);
      }
    }
    return result;
  }

  private scan(
    result: PulledMessages,
    entries: Buffer,
    count: number,
    offset: number,
    maxMsgNums: number,
    filter: MessageFilter | null,
    maxTotalMsgSize: number,
    lend: GetMessageLendOptions | null,
  ): void {
    const maxPhy = this.commitLog.getMaxOffset();
    const ev = cqEntriesView(entries);
    let status: GetMessageStatus = 'NO_MATCHED_MESSAGE';
    let nextBeginOffset = offset;
    let nextPhyFileStart = -1;
    let maxPhyPulled = 0;
    // the body under construction; bytes [0, used) are the records copied so far
    // (lend mode: taken from the pool only when a record is copied)
    let body: Buffer = lend === null ? this.bodies.acquire(this.initialBodyBytes(ev, Math.min(count, maxMsgNums))) : NO_BODY;
    let used = 0;
    // bytes [used, used + aheadBytes) of body already hold CommitLog [aheadPhy, aheadPhy + aheadBytes)
    let aheadPhy = -1;
    let aheadBytes = 0;
    // spanBuf[0, spanBytes) holds CommitLog [spanPhy, spanPhy + spanBytes): this.span after a
    // span read, or a read-cache chunk (`spanChunk`; valid until the next CommitLog read unless
    // leased: spanPhy is reset before any)
    let spanBuf: Buffer = this.span;
    let spanChunk: CachedChunkRef | null = null;
    let spanPhy = -1;
    let spanBytes = 0;
    let taken = 0;
    result.expect(Math.max(0, Math.min(count, maxMsgNums)));
    const chunkBytes = this.commitLog.readCache.chunkBytes;
    for (let i = 0; i < count; i++) {
      const phy = cqViewPhyOffset(ev, i);
      const size = cqViewSize(ev, i);
      const isInMem = maxPhy - phy <= this.memoryBytes;
      if (this.isTheBatchFull(size, maxTotalMsgSize, maxMsgNums, result.bufferTotalSizeBytes, taken, isInMem)) break;
      nextBeginOffset = offset + i + 1;
      if (nextPhyFileStart >= 0 && phy < nextPhyFileStart) continue;
      if (filter && !filter.isMatchedByConsumeQueue(cqViewTagsCode(ev, i))) {
        if (taken === 0) status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      // lend mode: the record is lent as a view of this read-cache chunk (not copied into body):
      // when it continues the pull's last view, or starts a run (or is a record) of at least
      // minViewBytes; shorter ones are copied at once, as without lend mode
      let lent: CachedChunkRef | null = null;
      let readable = size > 0 && size < 0x7fffffff;
      if (readable && !(phy === aheadPhy && size <= aheadBytes)) {
        if (spanPhy >= 0 && phy >= spanPhy && phy + size <= spanPhy + spanBytes) {
          // inside the span read (or the cached chunk) of an earlier record of this pull
          if (lend !== null && spanChunk !== null && (size >= lend.minViewBytes || result.continuesView(spanChunk.chunk, phy - spanPhy))) lent = spanChunk;
          else {
            body = this.withRoom(body, used, used + size, ev, count, maxMsgNums);
            spanBuf.copy(body, used, phy - spanPhy, phy - spanPhy + size);
          }
        } else {
          const plan = this.planRead(ev, i, count, phy, size, Math.min(maxMsgNums - taken, 1 << 30), Math.min(maxTotalMsgSize - result.bufferTotalSizeBytes, this.transferCapBytes));
          spanPhy = -1;
          spanChunk = null;
          aheadPhy = -1;
          aheadBytes = 0;
          // lend mode, adjacent records within one chunk: lent from the chunk (read whole on its
          // second miss: a consumer catching up comes back for the rest of it), not read into
          // the body
          const runChunk = lend !== null && plan.spanBytes === plan.recordBytes && plan.records > 1 && plan.spanBytes >= lend.minViewBytes && Math.floor(phy / chunkBytes) === Math.floor((phy + plan.spanBytes - 1) / chunkBytes) ? this.commitLog.cachedChunkAt(phy, false) : null;
          if (runChunk !== null && phy >= runChunk.phyStart && phy + plan.spanBytes <= runChunk.phyStart + runChunk.length) {
            spanBuf = runChunk.buf;
            spanChunk = runChunk;
            spanPhy = runChunk.phyStart;
            spanBytes = runChunk.length;
            lent = runChunk;
          } else if (plan.spanBytes === plan.recordBytes && plan.records > 1) {
            // adjacent records: straight into the body
            body = this.withRoom(body, used, used + plan.spanBytes, ev, count, maxMsgNums);
            if (this.commitLog.readInto(phy, body, used, plan.spanBytes)) {
              aheadPhy = phy;
              aheadBytes = plan.spanBytes;
            } else readable = this.commitLog.readInto(phy, body, used, size);
          } else if (plan.records > 1 || nextInSameRegion(ev, i, count, phy, size, chunkBytes)) {
            // records of this queue with others' in between (a few, or so many that a span read
            // would waste too much: the next record of this pull is still within one chunk):
            // copied out of (or lent from) the read cache's chunk when it holds them (the other
            // queues' pulls read the same region: one chunk read serves them all), else one read
            // of the span, then copies
            const chunk = this.commitLog.cachedChunkAt(phy);
            if (chunk !== null && phy + size <= chunk.phyStart + chunk.length) {
              spanBuf = chunk.buf;
              spanChunk = chunk;
              spanPhy = chunk.phyStart;
              spanBytes = chunk.length;
              if (lend !== null && size >= lend.minViewBytes) lent = chunk;
              else {
                body = this.withRoom(body, used, used + size, ev, count, maxMsgNums);
                spanBuf.copy(body, used, phy - spanPhy, phy - spanPhy + size);
              }
            } else if (plan.records > 1 && (lend === null || chunk === null)) {
              // (lend mode with the chunk cached: only this record crosses its end; the next
              // records are lent from the next chunk, not copied out of a span read)
              body = this.withRoom(body, used, used + size, ev, count, maxMsgNums);
              if (this.span.length < plan.spanBytes) this.span = Buffer.allocUnsafe(Math.max(plan.spanBytes, MAX_SPAN_BYTES));
              if (this.commitLog.readInto(phy, this.span, 0, plan.spanBytes)) {
                spanBuf = this.span;
                spanPhy = phy;
                spanBytes = plan.spanBytes;
                spanBuf.copy(body, used, 0, size);
              } else readable = this.commitLog.readInto(phy, body, used, size);
            } else {
              body = this.withRoom(body, used, used + size, ev, count, maxMsgNums);
              readable = this.commitLog.readInto(phy, body, used, size);
            }
          } else {
            body = this.withRoom(body, used, used + size, ev, count, maxMsgNums);
            readable = this.commitLog.readInto(phy, body, used, size);
          }
        }
      }
      if (!readable) {
        aheadPhy = -1;
        if (taken === 0) status = 'MESSAGE_WAS_REMOVING';
        nextPhyFileStart = this.commitLog.rollNextFile(phy);
        continue;
      }
      if (filter?.isMatchedByCommitLog) {
        const record = lent !== null ? lent.buf.subarray(phy - lent.phyStart, phy - lent.phyStart + size) : body.subarray(used, used + size);
        if (!filter.isMatchedByCommitLog(record)) {
          if (taken === 0) status = 'NO_MATCHED_MESSAGE';
          // the next record is not at `used` any more: what was read ahead no longer lines up
          aheadPhy = -1;
          aheadBytes = 0;
          continue;
        }
      }
      result.take(offset + i, size);
      taken++;
      if (lent !== null) result.addView(lent.chunk, phy - lent.phyStart, size);
      else {
        if (lend !== null) result.addCopied(used, size);
        used += size;
      }
      if (aheadPhy === phy && aheadBytes >= size) {
        aheadPhy += size;
        aheadBytes -= size;
      } else {
        aheadPhy = -1;
        aheadBytes = 0;
      }
      status = 'FOUND';
      maxPhyPulled = phy;
      nextPhyFileStart = -1;
      if (lent !== null && filter === null) {
        // lend mode, no filter: the following records that lie in the same chunk are lent from
        // it at once — what the loop above does for each of them, without its other cases (the
        // first record outside the chunk, too short a view or a full batch goes round again)
        const chunk = lent.chunk;
        const chunkPhy = lent.phyStart;
        const chunkEnd = chunkPhy + lent.length;
        const minView = lend!.minViewBytes;
        while (i + 1 < count) {
          const nPhy = cqViewPhyOffset(ev, i + 1);
          const nSize = cqViewSize(ev, i + 1);
          if (!(nSize > 0 && nSize < 0x7fffffff) || nPhy < chunkPhy || nPhy + nSize > chunkEnd) break;
          if (nSize < minView && !result.continuesView(chunk, nPhy - chunkPhy)) break;
          if (this.isTheBatchFull(nSize, maxTotalMsgSize, maxMsgNums, result.bufferTotalSizeBytes, taken, maxPhy - nPhy <= this.memoryBytes)) break;
          i++;
          nextBeginOffset = offset + i + 1;
          result.take(offset + i, nSize);
          taken++;
          result.addView(chunk, nPhy - chunkPhy, nSize);
          maxPhyPulled = nPhy;
        }
      }
    }
    result.status = status;
    result.nextBeginOffset = nextBeginOffset;
    result.suggestPullingFromSlave = maxPhy - maxPhyPulled > this.memoryBytes;
    result.finish(body, used, lend);
  }

  /**
   * Hands a pull's body (`GetMessageResult.body`) back for reuse by later pulls. Call only when
   * nothing reads it or any of its record views any more (a pull reply: after the socket's write
   * callback). Bodies never handed back are garbage-collected as usual; anything that is not a
   * body lent out by this service is ignored.
   */
  releaseBody(body: Buffer): void {
    this.bodies.release(body);
  }

  /**
   * `buf` when it holds `needBytes`; else a bigger body holding `buf`'s first `used` bytes, and
   * `buf` goes back to the pool (nothing refers to it). The first body of a lend-mode pull
   * (`buf` = NO_BODY) is sized as copy mode's.
   */
  private withRoom(buf: Buffer, used: number, needBytes: number, ev: DataView, count: number, maxMsgNums: number): Buffer {
    if (needBytes <= buf.length) return buf;
    if (buf.length === 0) return this.bodies.acquire(Math.max(needBytes, this.initialBodyBytes(ev, Math.min(count, maxMsgNums))));
    const next = this.bodies.acquire(Math.max(needBytes, buf.length * 2));
    buf.copy(next, 0, 0, used);
    this.bodies.release(buf);
    return next;
  }

  /**
   * How to read the record of entry `i` (at `phy`, `size` bytes) together with the records of the
   * entries after it (at most `maxRecords` in all, `maxRecordBytes` of records): the longest run of
   * following entries in the same CommitLog file, in increasing position, whose span stays within
   * MAX_SPAN_BYTES and at most SPAN_WASTE_RATIO times the bytes of its records. One positional
   * read of 1 KiB costs about as much as one of 16 KiB (syscall and page-cache lookup dominate),
   * so records of one queue interleaved with those of up to ~8 others are cheaper to read as one
   * span and copy out (bench/results/pull-serving-2026-12-01.md).
   */
  private planRead(ev: DataView, i: number, count: number, phy: number, size: number, maxRecords: number, maxRecordBytes: number): ReadPlan {
    const fileEnd = this.commitLog.rollNextFile(phy);
    let records = 1;
    let recordBytes = size;
    let end = phy + size;
    for (let j = i + 1; j < count && records < maxRecords; j++) {
      const nSize = cqViewSize(ev, j);
      const nPhy = cqViewPhyOffset(ev, j);
      if (nSize <= 0 || nSize >= 0x7fffffff || nPhy < end) break;
      const nEnd = nPhy + nSize;
      if (nEnd > fileEnd || nEnd - phy > MAX_SPAN_BYTES || recordBytes + nSize > maxRecordBytes) break;
      if (nEnd - phy > SPAN_WASTE_RATIO * (recordBytes + nSize)) break;
      records++;
      recordBytes += nSize;
      end = nEnd;
    }
    const plan = this.plan;
    plan.records = records;
    plan.recordBytes = recordBytes;
    plan.spanBytes = end - phy;
    return plan;
  }

  /** Sum of the sizes of the first `n` entries (what a pull of n unfiltered records needs), at least 4 KiB. */
  private initialBodyBytes(ev: DataView, n: number): number {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const size = cqViewSize(ev, i);
      if (size > 0 && size < 0x7fffffff) sum += size;
    }
    return Math.max(4096, Math.min(sum, this.transferCapBytes));
  }

  /** RocketMQ `isTheBatchFull`, only once something was taken. */
  private isTheBatchFull(size: number, maxTotal: number, maxMsgNums: number, bytes: number, count: number, isInMem: boolean): boolean {
    if (bytes === 0 || count === 0) return false;
    if (count + 1 > maxMsgNums) return true;
    if (bytes >= maxTotal || bytes + size > maxTotal) return true;
    const l = this.limits;
    if (isInMem) {
      return bytes + size > l.maxTransferBytesOnMessageInMemory || count > l.maxTransferCountOnMessageInMemory - 1;
    }
    return bytes + size > l.maxTransferBytesOnMessageInDisk || count > l.maxTransferCountOnMessageInDisk - 1;
  }
}

/**
 * True when the entry after `i` lies after record `i` (at `phy`, `size` bytes) and ends within
 * `regionBytes` of its start: two records of this pull in one read-cache chunk's reach, so the
 * chunk is worth reading whole even when a span read would waste too much (many queues
 * interleaved: the other queues' pulls read the same chunk).
 */
function nextInSameRegion(ev: DataView, i: number, count: number, phy: number, size: number, regionBytes: number): boolean {
  if (i + 1 >= count) return false;
  const nPhy = cqViewPhyOffset(ev, i + 1);
  const nSize = cqViewSize(ev, i + 1);
  return nSize > 0 && nSize < 0x7fffffff && nPhy >= phy + size && nPhy + nSize - phy <= regionBytes;
}

/** Shared empty list of a result without leases (never pushed to: replaced first). */
const NO_PARTS: Array<ReadCacheChunk | null> = [];

/**
 * Lend mode's parts under construction (the chunk, null = the body; start and end in it), in
 * order: one set per GetMessageService, reused by every pull (a scan and its finish() run
 * synchronously within getMessage, and finish() turns the parts into the result's part lists), so a pull of
 * 32 interleaved records does not grow three arrays of its own.
 */
class PartScratch {
  chunks: Array<ReadCacheChunk | null> = [];
  starts: number[] = [];
  ends: number[] = [];
  n = 0;
}

/**
 * The GetMessageResult of one pull. `messages` (a view per record) is made on first use: the
 * pull processor sends `body` (or `bodyParts`) and counts `messageQueueOffsets`, so it never pays
 * for the views.
 *
 * While scanning, each record taken is either copied into the pull's body (a PullBodyPool buffer,
 * bytes [0, used)) or, in lend mode, lent as a view of a read-cache chunk (leased at once, so
 * later reads of the same pull cannot refill it). Parts are kept as (chunk or body, start, end),
 * records adjacent in the same buffer merged into one part; finish() turns them into the result's part
 * lists (buffer per part, start/end pairs); `bodyParts` views are made from them on first read.
 */
class PulledMessages implements GetMessageResult {
  status: GetMessageStatus = 'NO_MESSAGE_IN_QUEUE';
  messageQueueOffsets: number[] = [];
  bufferTotalSizeBytes = 0;
  body?: Buffer;
  suggestPullingFromSlave = false;
  /** Lend mode: the buffer of each part (a chunk's or the body), in order; views made only for `bodyParts`. */
  private partBufs: Buffer[] | null = null;
  /** Lend mode: part i is partBufs[i] bytes [partRanges[2i], partRanges[2i + 1]). */
  private partRanges: number[] | null = null;
  /** `bodyParts` once made (or assigned). */
  private partViews: Buffer[] | undefined = undefined;
  /** Size of each record taken, in order (views are made from these). */
  private sizes: number[] = [];
  /** Records taken so far (the lists' filled length while scanning). */
  private takenCount = 0;
  private views: Buffer[] | null = null;
  /** Lend mode: parts under construction (the service's scratch; emptied here). Without lend mode the body is the one part. */
  private readonly parts: PartScratch;
  /** Chunks leased by this result (each once). */
  private leased: ReadCacheChunk[] = NO_PARTS as ReadCacheChunk[];
  /** The chunk addView last made sure of in `leased` (most records of a pull come from the chunk of the one before). */
  private lastLeased: ReadCacheChunk | null = null;
  /** The pooled body this result owns (handed back by release()), and the pool's lend id of it. */
  private ownedBody: Buffer | null = null;
  private ownedBodyLendId = 0;
  private released = false;

  constructor(
    public nextBeginOffset: number,
    public minOffset: number,
    public maxOffset: number,
    private readonly pool: PullBodyPool,
    private readonly cache: CommitLogReadCache,
    parts: PartScratch,
  ) {
    parts.n = 0;
    this.parts = parts;
  }

  get bodyParts(): Buffer[] | undefined {
    if (this.partViews === undefined && this.partBufs !== null) {
      const bufs = this.partBufs;
      const ranges = this.partRanges!;
      const views = new Array<Buffer>(bufs.length);
      for (let i = 0; i < bufs.length; i++) {
        const b = bufs[i]!;
        views[i] = b.subarray(ranges[2 * i]!, ranges[2 * i + 1]!);
        if (b === this.ownedBody) this.pool.tieView(views[i]!);
      }
      this.partViews = views;
    }
    return this.partViews;
  }

  set bodyParts(parts: Buffer[] | undefined) {
    this.partViews = parts;
  }

  get partCount(): number {
    return this.partBufs?.length ?? 0;
  }

  partBuffer(i: number): Buffer {
    return this.partBufs![i]!;
  }

  partStart(i: number): number {
    return this.partRanges![2 * i]!;
  }

  partEnd(i: number): number {
    return this.partRanges![2 * i + 1]!;
  }

  get messages(): Buffer[] {
    if (this.views === null) {
      const views: Buffer[] = new Array<Buffer>(this.sizes.length);
      const parts = this.bodyParts ?? (this.body ? [this.body] : []);
      let p = 0;
      let at = 0;
      for (let i = 0; i < this.sizes.length; i++) {
        const size = this.sizes[i]!;
        while (at >= parts[p]!.length) {
          p++;
          at = 0;
        }
        views[i] = parts[p]!.subarray(at, at + size);
        at += size;
      }
      this.views = views;
    }
    return this.views;
  }

  set messages(list: Buffer[]) {
    this.views = list;
  }

  /**
   * Sizes the offset and size lists for at most `n` records (a scan takes at most min(entries,
   * maxMsgNums)): filled by index, cut to the records taken by finish(), so a pull of 32 does
   * not grow two arrays step by step.
   */
  expect(n: number): void {
    this.messageQueueOffsets = new Array<number>(n);
    this.sizes = new Array<number>(n);
    this.takenCount = 0;
  }

  /** Records the record at queue offset `queueOffset` (`size` bytes; its bytes follow through addCopied / addView). */
  take(queueOffset: number, size: number): void {
    const k = this.takenCount++;
    if (k < this.sizes.length) {
      this.messageQueueOffsets[k] = queueOffset;
      this.sizes[k] = size;
    } else {
      this.messageQueueOffsets.push(queueOffset);
      this.sizes.push(size);
    }
    this.bufferTotalSizeBytes += size;
  }

  /** True when chunk bytes starting at `start` would extend the last part (a view of `chunk`). */
  continuesView(chunk: ReadCacheChunk, start: number): boolean {
    const ps = this.parts;
    const n = ps.n;
    return n > 0 && ps.chunks[n - 1] === chunk && ps.ends[n - 1] === start;
  }

  /** Lend mode: the record just taken was copied into the body at [start, start + size). */
  addCopied(start: number, size: number): void {
    const ps = this.parts;
    const n = ps.n;
    if (n > 0 && ps.chunks[n - 1] === null && ps.ends[n - 1] === start) ps.ends[n - 1] = start + size;
    else this.pushPart(null, start, start + size);
  }

  /** The record just taken is lent as chunk bytes [start, start + size); leases the chunk on its first use here. */
  addView(chunk: ReadCacheChunk, start: number, size: number): void {
    const ps = this.parts;
    const n = ps.n;
    if (n > 0 && ps.chunks[n - 1] === chunk && ps.ends[n - 1] === start) {
      ps.ends[n - 1] = start + size;
      return;
    }
    if (chunk !== this.lastLeased) {
      if (this.leased === NO_PARTS) this.leased = [];
      if (!this.leased.includes(chunk)) {
        this.cache.lease(chunk);
        this.leased.push(chunk);
      }
      this.lastLeased = chunk;
    }
    this.pushPart(chunk, start, start + size);
  }

  private pushPart(chunk: ReadCacheChunk | null, start: number, end: number): void {
    const ps = this.parts;
    const n = ps.n++;
    if (n < ps.chunks.length) {
      ps.chunks[n] = chunk;
      ps.starts[n] = start;
      ps.ends[n] = end;
    } else {
      ps.chunks.push(chunk);
      ps.starts.push(start);
      ps.ends.push(end);
    }
  }

  /**
   * Ends the scan: `body[0, used)` holds the copied records. Without `lend`, `body` is the
   * records. In lend mode, views shorter than `lend.minViewBytes` are copied into the body (in
   * order, merged with neighbouring copies), then, when more than `lend.maxParts` parts remain,
   * every part is copied into one fresh body; the part lists (and `bodyParts`) are the parts in order and `body` the
   * only part when there is one.
   */
  finish(body: Buffer, used: number, lend: GetMessageLendOptions | null): void {
    if (this.sizes.length !== this.takenCount) {
      this.messageQueueOffsets.length = this.takenCount;
      this.sizes.length = this.takenCount;
    }
    if (lend === null) {
      // copy mode: the body is the records
      if (used > 0) {
        this.ownedBody = body;
        this.body = body.subarray(0, used);
        this.ownedBodyLendId = this.pool.tieView(this.body);
      } else this.pool.release(body);
      return;
    }
    const ps = this.parts;
    const n = ps.n;
    ps.n = 0;
    if (n === 0) {
      if (body.length > 0) this.pool.release(body);
      return;
    }
    // the parts in order, in the scratch or (after the copies below) in arrays of their own
    let partChunks = ps.chunks;
    let partStarts = ps.starts;
    let partEnds = ps.ends;
    let partCount = n;
    if (this.leased.length > 0 && (lend.minViewBytes > 0 || n > Math.max(1, lend.maxParts))) {
      const chunks: Array<ReadCacheChunk | null> = [];
      const starts: number[] = [];
      const ends: number[] = [];
      for (let i = 0; i < n; i++) {
        let chunk: ReadCacheChunk | null = ps.chunks[i]!;
        let start = ps.starts[i]!;
        let end = ps.ends[i]!;
        if (chunk !== null && end - start < lend.minViewBytes) {
          const len = end - start;
          if (used + len > body.length) {
            const bigger = this.pool.acquire(Math.max(used + len, body.length * 2));
            body.copy(bigger, 0, 0, used);
            this.pool.release(body);
            body = bigger;
          }
          chunk.buf.copy(body, used, start, end);
          chunk = null;
          start = used;
          end = used + len;
          used += len;
        }
        const m = chunks.length;
        if (chunk === null && m > 0 && chunks[m - 1] === null && ends[m - 1] === start) ends[m - 1] = end;
        else {
          chunks.push(chunk);
          starts.push(start);
          ends.push(end);
        }
      }
      if (chunks.length > Math.max(1, lend.maxParts)) {
        // too many parts: one body of everything, in order
        const total = this.bufferTotalSizeBytes;
        const flat = this.pool.acquire(total);
        let at = 0;
        for (let i = 0; i < chunks.length; i++) {
          const c = chunks[i]!;
          at += (c === null ? body : c.buf).copy(flat, at, starts[i]!, ends[i]!);
        }
        this.pool.release(body);
        body = flat;
        used = total;
        chunks.length = 1;
        chunks[0] = null;
        starts.length = 1;
        starts[0] = 0;
        ends.length = 1;
        ends[0] = total;
      }
      // chunks no part refers to any more
      for (let i = this.leased.length - 1; i >= 0; i--) {
        if (!chunks.includes(this.leased[i]!)) {
          this.cache.unlease(this.leased[i]!);
          this.leased.splice(i, 1);
        }
      }
      this.lastLeased = null;
      partChunks = chunks;
      partStarts = starts;
      partEnds = ends;
      partCount = chunks.length;
    }
    if (used > 0) {
      this.ownedBody = body;
      this.ownedBodyLendId = this.pool.lendIdOf(body);
    } else if (body.length > 0) this.pool.release(body);
    // the parts as (buffer, start, end); Buffer views only when `bodyParts` is read
    const bufs = new Array<Buffer>(partCount);
    const ranges = new Array<number>(2 * partCount);
    for (let i = 0; i < partCount; i++) {
      const c = partChunks[i]!;
      bufs[i] = c === null ? body : c.buf;
      ranges[2 * i] = partStarts[i]!;
      ranges[2 * i + 1] = partEnds[i]!;
    }
    // the scratch keeps no chunk alive for longer than the cache does (cleared up to this pull's count)
    for (let i = 0; i < n; i++) ps.chunks[i] = null;
    this.partBufs = bufs;
    this.partRanges = ranges;
    if (partCount === 1) this.body = this.bodyParts![0]!;
  }

  /**
   * Ends the loan of this result's bytes: the body goes back to the pool, chunk leases end.
   * Idempotent; nothing may read `body`, `bodyParts` or `messages` afterwards.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.dropHoldings();
  }

  private dropHoldings(): void {
    if (this.ownedBody !== null) this.pool.release(this.ownedBody, this.ownedBodyLendId);
    this.ownedBody = null;
    this.lastLeased = null;
    if (this.leased.length > 0) {
      for (const c of this.leased) this.cache.unlease(c);
      this.leased = NO_PARTS as ReadCacheChunk[];
    }
  }

  /** Forgets everything taken, handing back what it held (a second scan follows). */
  reset(): void {
    this.dropHoldings();
    this.messageQueueOffsets = [];
    this.sizes = [];
    this.takenCount = 0;
    this.views = null;
    this.bufferTotalSizeBytes = 0;
    this.parts.n = 0;
    // assigned, not deleted: the result object keeps its shape (no dictionary mode)
    this.body = undefined;
    this.partViews = undefined;
    this.partBufs = null;
    this.partRanges = null;
  }

  done(status: GetMessageStatus, nextBeginOffset: number): this {
    this.status = status;
    this.nextBeginOffset = nextBeginOffset;
    return this;
  }
}
