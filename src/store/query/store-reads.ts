/**
 * Read-only queries of a store (RocketMQ `DefaultMessageStore` getMessage, getMaxOffsetInQueue,
 * getOffsetInQueueByTime, getEarliestMessageTime, getMessageStoreTimeStamp, lookMessageByOffset,
 * selectOneMessageByOffset, queryMessage). Units: queue offsets count ConsumeQueue entries;
 * physical offsets are CommitLog bytes; times are epoch ms.
 *
 * "Absent" answers follow RocketMQ: a queue that does not exist has min = max = 0 and its
 * physical offset lookup gives 0; store-time lookups give -1; record lookups give null (also for
 * a record that does not decode). None of these throw; checking that the store is open is the
 * caller's job.
 */
import type { MessageExt } from '../../common/message/message.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { StoreTimeLookup } from '../consumequeue/consume-queue-time-search.js';
import type { GetMessageService } from '../get-message/get-message-service.js';
import type { IndexLookup } from '../index/index-plugin.js';
import type { BoundaryType, ConsumeQueueEntryView, GetMessageLendOptions, GetMessageResult, MessageFilter, QueryMessageResult } from '../message-store.js';
import { queryMessage } from './query-message-service.js';

export interface StoreReadParts {
  commitLog: CommitLog;
  consumeQueueStore: ConsumeQueueStore;
  getMessageService: GetMessageService;
  /** The IndexService (null when messageIndexEnable is false: queryMessage finds nothing). */
  index: IndexLookup | null;
  /** Cap of queryMessage results (maxMsgsNumBatch). */
  maxMsgsNumBatch: number;
}

export class StoreReads {
  private readonly timeLookup: StoreTimeLookup;

  constructor(private readonly p: StoreReadParts) {
    this.timeLookup = {
      getStoreTimestamp: (o, s) => p.commitLog.pickupStoreTimestamp(o, s),
      getMinPhyOffset: () => p.commitLog.getMinOffset(),
    };
  }

  /** Pull path (get-message-service.ts); `maxTotalMsgSize` in bytes (default 128 MiB). */
  getMessage(topic: string, queueId: number, offset: number, maxMsgNums: number, filter: MessageFilter | null, maxTotalMsgSize?: number, lend: GetMessageLendOptions | null = null): GetMessageResult {
    return this.p.getMessageService.getMessage(topic, queueId, offset, maxMsgNums, filter, maxTotalMsgSize, lend);
  }

  /** A pull's body back for reuse (GetMessageService.releaseBody). */
  releaseMessageBody(body: Buffer): void {
    this.p.getMessageService.releaseBody(body);
  }

  messageBodyPoolStats(): { allocated: number; reused: number; released: number } {
    const b = this.p.getMessageService.bodies;
    return { allocated: b.allocated, reused: b.reused, released: b.released };
  }

  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.p.consumeQueueStore.find(topic, queueId)?.getMaxOffsetInQueue() ?? 0;
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.p.consumeQueueStore.find(topic, queueId)?.getMinOffsetInQueue() ?? 0;
  }

  getCommitLogOffsetInQueue(topic: string, queueId: number, consumeQueueOffset: number): number {
    return this.p.consumeQueueStore.find(topic, queueId)?.getEntry(consumeQueueOffset)?.phyOffset ?? 0;
  }

  getConsumeQueueEntries(topic: string, queueId: number, fromOffset: number, maxCount: number): ConsumeQueueEntryView[] | null {
    const cq = this.p.consumeQueueStore.find(topic, queueId);
    if (!cq) return null;
    const out: ConsumeQueueEntryView[] = [];
    const end = Math.min(cq.getMaxOffsetInQueue(), Math.max(fromOffset, cq.getMinOffsetInQueue()) + Math.max(0, maxCount));
    for (let offset = Math.max(fromOffset, cq.getMinOffsetInQueue()); offset < end; offset++) {
      const e = cq.getEntry(offset);
      if (!e) break;
      out.push({ queueOffset: offset, phyOffset: e.phyOffset, sizeBytes: e.size, tagsCode: e.tagsCode });
    }
    return out;
  }

  getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number, boundary: BoundaryType): number {
    const cq = this.p.consumeQueueStore.find(topic, queueId);
    return cq ? cq.getOffsetInQueueByTime(timestampMs, boundary, this.timeLookup) : 0;
  }

  getEarliestMessageTime(topic: string, queueId: number): number {
    const cq = this.p.consumeQueueStore.find(topic, queueId);
    return cq ? cq.getEarliestMessageTime(this.timeLookup) : -1;
  }

  /** Store time of the record at the CommitLog min offset (-1 if none). */
  getEarliestMessageTimeOfStore(): number {
    const { commitLog } = this.p;
    const min = commitLog.getMinOffset();
    const head = commitLog.getData(min, 8);
    if (!head) return -1;
    return commitLog.pickupStoreTimestamp(min, head.readInt32BE(0));
  }

  getMessageStoreTimeStamp(topic: string, queueId: number, consumeQueueOffset: number): number {
    const e = this.p.consumeQueueStore.find(topic, queueId)?.getEntry(consumeQueueOffset);
    return e ? this.p.commitLog.pickupStoreTimestamp(e.phyOffset, e.size) : -1;
  }

  lookMessageByOffset(commitLogOffset: number): MessageExt | null {
    const record = this.p.commitLog.selectOneMessageByOffset(commitLogOffset);
    if (!record) return null;
    try {
      return decodeRecord(record, 0, { readBody: true, checkCrc: false });
    } catch {
      return null;
    }
  }

  selectOneMessageByOffset(commitLogOffset: number, size?: number): Buffer | null {
    return this.p.commitLog.selectOneMessageByOffset(commitLogOffset, size);
  }

  queryMessage(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<QueryMessageResult> {
    return queryMessage(this.p.index, this.p.commitLog, this.p.maxMsgsNumBatch, topic, key, maxNum, beginMs, endMs);
  }
}
