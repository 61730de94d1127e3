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
 * Bodies come from a PullBodyPool: `releaseBody` hands one back once nothing reads it any more
 * (the broker: from the pull reply's socket write callback); `messages` views are made only when
 * first read.
 */
import * as os from 'node:os';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import { CQ_STORE_UNIT_SIZE } from '../consumequeue/consume-queue.js';
import { cqEntryPhyOffset, cqEntrySize, cqEntryTagsCode } from '../consumequeue/consume-queue-entry.js';
import type { GetMessageResult, GetMessageStatus, MessageFilter } from '../message-store.js';
import type { StoreConfig } from '../store-config.js';
import { PullBodyPool } from './pull-body-pool.js';

/** Largest span of CommitLog bytes read at once for the records of one pull. */
const MAX_SPAN_BYTES = 1024 * 1024;
/** A span read is used while its bytes stay within this many times the bytes of its records. */
const SPAN_WASTE_RATIO = 8;

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
  private readonly memoryBytes: number;
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
  ): GetMessageResult {
    const correctOffsets = this.limits.brokerRole !== 'SLAVE' || this.limits.offsetCheckInSlave;
    // a missing queue behaves like an empty one (RocketMQ creates it on lookup; we do not, so
    // pulls of arbitrary topic names cannot grow the table)
    const cq = this.cqStore.find(topic, queueId);
    const minOffset = cq?.getMinOffsetInQueue() ?? 0;
    const maxOffset = cq?.getMaxOffsetInQueue() ?? 0;
    const result = new PulledMessages(offset, minOffset, maxOffset);
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
    const slice = cq.readEntries(offset, Math.max(1, firstEntries));
    if (!slice) return result.done('OFFSET_FOUND_NULL', correctOffsets ? cq.rollNextFile(offset) : offset);
    this.scan(result, slice.buf, slice.count, offset, maxMsgNums, filter, maxTotalMsgSize);
    if (firstEntries < windowEntries && slice.count === firstEntries && result.nextBeginOffset === offset + slice.count && result.messageQueueOffsets.length < maxMsgNums) {
      const whole = cq.readEntries(offset, windowEntries);
      if (whole && whole.count > slice.count) {
        if (result.body) this.bodies.release(result.body);
        result.reset();
        this.scan(result, whole.buf, whole.count, offset, maxMsgNums, filter, maxTotalMsgSize);
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
  ): void {
    const maxPhy = this.commitLog.getMaxOffset();
    let status: GetMessageStatus = 'NO_MATCHED_MESSAGE';
    let nextBeginOffset = offset;
    let nextPhyFileStart = -1;
    let maxPhyPulled = 0;
    // the body under construction; bytes [0, used) are the records taken so far
    let body: Buffer = this.bodies.acquire(this.initialBodyBytes(entries, Math.min(count, maxMsgNums)));
    let used = 0;
    // bytes [used, used + aheadBytes) of body already hold CommitLog [aheadPhy, aheadPhy + aheadBytes)
    let aheadPhy = -1;
    let aheadBytes = 0;
    // spanBuf[0, spanBytes) holds CommitLog [spanPhy, spanPhy + spanBytes): this.span after a
    // span read, or a read-cache chunk (valid until the next CommitLog read: spanPhy is reset
    // before any)
    let spanBuf: Buffer = this.span;
    let spanPhy = -1;
    let spanBytes = 0;
    let taken = 0;
    const chunkBytes = this.commitLog.readCache.chunkBytes;
    for (let i = 0; i < count; i++) {
      const phy = cqEntryPhyOffset(entries, i);
      const size = cqEntrySize(entries, i);
      const isInMem = maxPhy - phy <= this.memoryBytes;
      if (this.isTheBatchFull(size, maxTotalMsgSize, maxMsgNums, result.bufferTotalSizeBytes, taken, isInMem)) break;
      nextBeginOffset = offset + i + 1;
      if (nextPhyFileStart >= 0 && phy < nextPhyFileStart) continue;
      if (filter && !filter.isMatchedByConsumeQueue(cqEntryTagsCode(entries, i))) {
        if (taken === 0) status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      let readable = size > 0 && size < 0x7fffffff;
      if (readable && !(phy === aheadPhy && size <= aheadBytes)) {
        if (used + size > body.length) body = this.grow(body, used, used + size);
        if (spanPhy >= 0 && phy >= spanPhy && phy + size <= spanPhy + spanBytes) {
          // inside the span read (or the cached chunk) of an earlier record of this pull
          spanBuf.copy(body, used, phy - spanPhy, phy - spanPhy + size);
        } else {
          const plan = this.planRead(entries, i, count, phy, size, Math.min(maxMsgNums - taken, 1 << 30), Math.min(maxTotalMsgSize - used, this.transferCapBytes));
          spanPhy = -1;
          aheadPhy = -1;
          aheadBytes = 0;
          if (plan.spanBytes === plan.recordBytes && plan.records > 1) {
            // adjacent records: straight into the body
            if (used + plan.spanBytes > body.length) body = this.grow(body, used, used + plan.spanBytes);
            if (this.commitLog.readInto(phy, body, used, plan.spanBytes)) {
              aheadPhy = phy;
              aheadBytes = plan.spanBytes;
            } else readable = this.commitLog.readInto(phy, body, used, size);
          } else if (plan.records > 1 || nextInSameRegion(entries, i, count, phy, size, chunkBytes)) {
            // records of this queue with others' in between (a few, or so many that a span read
            // would waste too much: the next record of this pull is still within one chunk):
            // copied out of the read cache's chunk when it holds them (the other queues' pulls
            // read the same region: one chunk read serves them all), else one read of the span,
            // then copies
            const chunk = this.commitLog.cachedChunkAt(phy);
            if (chunk !== null && phy + size <= chunk.phyStart + chunk.length) {
              spanBuf = chunk.buf;
              spanPhy = chunk.phyStart;
              spanBytes = chunk.length;
              spanBuf.copy(body, used, phy - spanPhy, phy - spanPhy + size);
            } else if (plan.records > 1) {
              if (this.span.length < plan.spanBytes) this.span = Buffer.allocUnsafe(Math.max(plan.spanBytes, MAX_SPAN_BYTES));
              if (this.commitLog.readInto(phy, this.span, 0, plan.spanBytes)) {
                spanBuf = this.span;
                spanPhy = phy;
                spanBytes = plan.spanBytes;
                spanBuf.copy(body, used, 0, size);
              } else readable = this.commitLog.readInto(phy, body, used, size);
            } else readable = this.commitLog.readInto(phy, body, used, size);
          } else readable = this.commitLog.readInto(phy, body, used, size);
        }
      }
      if (!readable) {
        aheadPhy = -1;
        if (taken === 0) status = 'MESSAGE_WAS_REMOVING';
        nextPhyFileStart = this.commitLog.rollNextFile(phy);
        continue;
      }
      if (filter?.isMatchedByCommitLog && !filter.isMatchedByCommitLog(body.subarray(used, used + size))) {
        if (taken === 0) status = 'NO_MATCHED_MESSAGE';
        // the next record is not at `used` any more: what was read ahead no longer lines up
        aheadPhy = -1;
        aheadBytes = 0;
        continue;
      }
      result.take(offset + i, size);
      taken++;
      used += size;
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
    }
    result.status = status;
    result.nextBeginOffset = nextBeginOffset;
    result.suggestPullingFromSlave = maxPhy - maxPhyPulled > this.memoryBytes;
    if (used > 0) result.body = body.subarray(0, used);
    else this.bodies.release(body);
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

  /** A bigger body holding `buf`'s first `used` bytes; `buf` goes back to the pool (nothing refers to it). */
  private grow(buf: Buffer, used: number, needBytes: number): Buffer {
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
  private planRead(entries: Buffer, i: number, count: number, phy: number, size: number, maxRecords: number, maxRecordBytes: number): { records: number; recordBytes: number; spanBytes: number } {
    const fileEnd = this.commitLog.rollNextFile(phy);
    let records = 1;
    let recordBytes = size;
    let end = phy + size;
    for (let j = i + 1; j < count && records < maxRecords; j++) {
      const nSize = cqEntrySize(entries, j);
      const nPhy = cqEntryPhyOffset(entries, j);
      if (nSize <= 0 || nSize >= 0x7fffffff || nPhy < end) break;
      const nEnd = nPhy + nSize;
      if (nEnd > fileEnd || nEnd - phy > MAX_SPAN_BYTES || recordBytes + nSize > maxRecordBytes) break;
      if (nEnd - phy > SPAN_WASTE_RATIO * (recordBytes + nSize)) break;
      records++;
      recordBytes += nSize;
      end = nEnd;
    }
    return { records, recordBytes, spanBytes: end - phy };
  }

  /** Sum of the sizes of the first `n` entries (what a pull of n unfiltered records needs), at least 4 KiB. */
  private initialBodyBytes(entries: Buffer, n: number): number {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const size = cqEntrySize(entries, i);
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
function nextInSameRegion(entries: Buffer, i: number, count: number, phy: number, size: number, regionBytes: number): boolean {
  if (i + 1 >= count) return false;
  const nPhy = cqEntryPhyOffset(entries, i + 1);
  const nSize = cqEntrySize(entries, i + 1);
  return nSize > 0 && nSize < 0x7fffffff && nPhy >= phy + size && nPhy + nSize - phy <= regionBytes;
}

/**
 * The GetMessageResult of one pull. `messages` (a view into `body` per record) is made on first
 * use: the pull processor sends `body` and counts `messageQueueOffsets`, so it never pays for the
 * views.
 */
class PulledMessages implements GetMessageResult {
  status: GetMessageStatus = 'NO_MESSAGE_IN_QUEUE';
  messageQueueOffsets: number[] = [];
  bufferTotalSizeBytes = 0;
  body?: Buffer;
  suggestPullingFromSlave = false;
  /** Size of each record taken, in order (views into `body` are made from these). */
  private sizes: number[] = [];
  private views: Buffer[] | null = null;

  constructor(
    public nextBeginOffset: number,
    public minOffset: number,
    public maxOffset: number,
  ) {}

  get messages(): Buffer[] {
    if (this.views === null) {
      const views: Buffer[] = new Array<Buffer>(this.sizes.length);
      const body = this.body;
      let at = 0;
      for (let i = 0; i < this.sizes.length; i++) {
        const size = this.sizes[i]!;
        views[i] = body!.subarray(at, at + size);
        at += size;
      }
      this.views = views;
    }
    return this.views;
  }

  set messages(list: Buffer[]) {
    this.views = list;
  }

  /** Records the record at queue offset `queueOffset` (`size` bytes, appended to the body). */
  take(queueOffset: number, size: number): void {
    this.messageQueueOffsets.push(queueOffset);
    this.sizes.push(size);
    this.bufferTotalSizeBytes += size;
  }

  /** Forgets everything taken (a second scan follows). */
  reset(): void {
    this.messageQueueOffsets = [];
    this.sizes = [];
    this.views = null;
    this.bufferTotalSizeBytes = 0;
    delete this.body;
  }

  done(status: GetMessageStatus, nextBeginOffset: number): this {
    this.status = status;
    this.nextBeginOffset = nextBeginOffset;
    return this;
  }
}

