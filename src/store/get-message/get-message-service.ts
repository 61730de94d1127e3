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
 */
import * as os from 'node:os';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import { CQ_STORE_UNIT_SIZE, readCqEntry } from '../consumequeue/consume-queue.js';
import type { GetMessageResult, GetMessageStatus, MessageFilter } from '../message-store.js';
import type { StoreConfig } from '../store-config.js';

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

  constructor(
    private readonly commitLog: CommitLog,
    private readonly cqStore: ConsumeQueueStore,
    private readonly limits: GetMessageLimits,
    totalMemoryBytes: number = os.totalmem(),
  ) {
    this.memoryBytes = Math.floor((totalMemoryBytes * limits.accessMessageInMemoryMaxRatio) / 100);
  }

  getMessage(
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter: MessageFilter | null,
    maxTotalMsgSize = DEFAULT_MAX_TOTAL_MSG_SIZE,
  ): GetMessageResult {
    const correct = (x: number): number => (this.limits.brokerRole !== 'SLAVE' || this.limits.offsetCheckInSlave ? x : offset);
    // a missing queue behaves like an empty one (RocketMQ creates it on lookup; we do not, so
    // pulls of arbitrary topic names cannot grow the table)
    const cq = this.cqStore.find(topic, queueId);
    const minOffset = cq?.getMinOffsetInQueue() ?? 0;
    const maxOffset = cq?.getMaxOffsetInQueue() ?? 0;
    const result: GetMessageResult = {
      status: 'NO_MESSAGE_IN_QUEUE',
      nextBeginOffset: offset,
      minOffset,
      maxOffset,
      messages: [],
      messageQueueOffsets: [],
      bufferTotalSizeBytes: 0,
      suggestPullingFromSlave: false,
    };
    const done = (status: GetMessageStatus, next: number): GetMessageResult => {
      result.status = status;
      result.nextBeginOffset = next;
      return result;
    };
    if (!cq || maxOffset === 0) return done('NO_MESSAGE_IN_QUEUE', correct(0));
    if (offset < minOffset) return done('OFFSET_TOO_SMALL', correct(minOffset));
    if (offset === maxOffset) return done('OFFSET_OVERFLOW_ONE', offset);
    if (offset > maxOffset) return done('OFFSET_OVERFLOW_BADLY', correct(maxOffset));

    const windowEntries = Math.floor(Math.max(this.limits.maxFilterMessageSize, maxMsgNums * CQ_STORE_UNIT_SIZE) / CQ_STORE_UNIT_SIZE);
    const slice = cq.readEntries(offset, Math.max(1, windowEntries));
    if (!slice) return done('OFFSET_FOUND_NULL', correct(cq.rollNextFile(offset)));
    this.scan(result, slice.buf, slice.count, offset, maxMsgNums, filter, maxTotalMsgSize);
    return result;
  }

  private scan(
    result: GetMessageResult,
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
    for (let i = 0; i < count; i++) {
      const e = readCqEntry(entries, i);
      const isInMem = maxPhy - e.phyOffset <= this.memoryBytes;
      if (this.isTheBatchFull(e.size, maxTotalMsgSize, maxMsgNums, result.bufferTotalSizeBytes, result.messages.length, isInMem)) break;
      nextBeginOffset = offset + i + 1;
      if (nextPhyFileStart >= 0 && e.phyOffset < nextPhyFileStart) continue;
      if (filter && !filter.isMatchedByConsumeQueue(e.tagsCode)) {
        if (result.messages.length === 0) status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      const record = e.size > 0 && e.size < 0x7fffffff ? this.commitLog.getData(e.phyOffset, e.size) : null;
      if (!record) {
        if (result.messages.length === 0) status = 'MESSAGE_WAS_REMOVING';
        nextPhyFileStart = this.commitLog.rollNextFile(e.phyOffset);
        continue;
      }
      if (filter?.isMatchedByCommitLog && !filter.isMatchedByCommitLog(record)) {
        if (result.messages.length === 0) status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      result.messages.push(record);
      result.messageQueueOffsets.push(offset + i);
      result.bufferTotalSizeBytes += record.length;
      status = 'FOUND';
      maxPhyPulled = e.phyOffset;
      nextPhyFileStart = -1;
    }
    result.status = status;
    result.nextBeginOffset = nextBeginOffset;
    result.suggestPullingFromSlave = maxPhy - maxPhyPulled > this.memoryBytes;
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
