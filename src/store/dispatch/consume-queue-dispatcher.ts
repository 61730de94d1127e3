/**
 * Builds ConsumeQueue entries from dispatched records (RocketMQ `CommitLogDispatcherBuildConsumeQueue`):
 * NOT_TYPE and COMMIT records get an entry (phys offset, size, tags code) at their QUEUEOFFSET;
 * PREPARED and ROLLBACK records are skipped. Each write reports the record's store time (feeds
 * the checkpoint's logicsMsgTimestamp). Required: a failed write (the queue file cannot be
 * created, or its full write buffer cannot be written) throws, which blocks dispatch at this
 * record until a retry succeeds (RocketMQ sets LOGICS_QUEUE_ERROR when `putMessagePositionInfo`
 * keeps failing). A failed background commit or flush of entries already buffered is handled by
 * the ConsumeQueueStore (consume-queue-write-errors.ts) and raises the same flag.
 */
import type { DispatchRequest } from '../../common/message/record-codec.js';
import { MessageSysFlag, getTransactionValue } from '../../common/message/sysflag.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { CommitLogDispatcher } from './commit-log-dispatcher.js';

/** True for records that own a ConsumeQueue entry (transaction type NOT or COMMIT). */
export function isConsumeQueueRecord(sysFlag: number): boolean {
  const t = getTransactionValue(sysFlag);
  return t === MessageSysFlag.TRANSACTION_NOT_TYPE || t === MessageSysFlag.TRANSACTION_COMMIT_TYPE;
}

export class ConsumeQueueDispatcher implements CommitLogDispatcher {
  readonly name = 'consume-queue';
  readonly required = true;

  constructor(
    private readonly cqStore: ConsumeQueueStore,
    private readonly onLogicsWrite: (storeTimestamp: number) => void,
  ) {}

  dispatch(req: DispatchRequest): void {
    if (!isConsumeQueueRecord(req.sysFlag)) return;
    this.cqStore.putMessagePositionInfo(req.topic, req.queueId, req.commitLogOffset, req.msgSize, req.tagsCode, req.consumeQueueOffset);
    this.onLogicsWrite(req.storeTimestamp);
  }

  /**
   * A prepared block: its records grouped by queue (in block order within each queue), each
   * queue's entries written in one go (ConsumeQueueStore.putMessagePositionInfos); the store time
   * reported once per queue (the block's records share one; the last is the newest anyway). The
   * per-queue lists are kept from block to block (emptied after each), so a block of a million
   * timer deliveries allocates nothing per record here.
   */
  dispatchBlock(reqs: readonly DispatchRequest[]): void {
    const touched = this.touched;
    let lastTopic: string | null = null;
    let lastQueueId = -1;
    let lastList: DispatchRequest[] | null = null;
    try {
      for (const r of reqs) {
        if (!isConsumeQueueRecord(r.sysFlag)) continue;
        let list: DispatchRequest[] | null = lastList;
        if (r.topic !== lastTopic || r.queueId !== lastQueueId) {
          list = this.listOf(r.topic, r.queueId);
          lastTopic = r.topic;
          lastQueueId = r.queueId;
          lastList = list;
        }
        if (list!.length === 0) touched.push({ topic: r.topic, queueId: r.queueId, list: list! });
        list!.push(r);
      }
      for (const g of touched) {
        this.cqStore.putMessagePositionInfos(g.topic, g.queueId, g.list);
        this.onLogicsWrite(g.list[g.list.length - 1]!.storeTimestamp);
      }
    } finally {
      for (const g of touched) g.list.length = 0;
      touched.length = 0;
    }
  }

  private listOf(topic: string, queueId: number): DispatchRequest[] {
    let byQueue = this.groups.get(topic);
    if (byQueue === undefined) {
      if (this.groups.size >= 1024) this.groups.clear(); // bounded: lists are empty between blocks
      byQueue = new Map();
      this.groups.set(topic, byQueue);
    }
    let list = byQueue.get(queueId);
    if (list === undefined) {
      list = [];
      byQueue.set(queueId, list);
    }
    return list;
  }

  /** Per-queue lists of dispatchBlock (topic → queue id → list, empty between blocks) and the lists the current block uses. */
  private readonly groups = new Map<string, Map<number, DispatchRequest[]>>();
  private readonly touched: { topic: string; queueId: number; list: DispatchRequest[] }[] = [];
}
