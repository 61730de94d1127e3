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
import type { PreparedDispatchBlock } from './prepared-dispatch-block.js';

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
   * reported once per queue (the block's records share one; the last is the newest anyway).
   */
  dispatchBlock(reqs: readonly DispatchRequest[]): void {
    if (sameQueue(reqs)) {
      const last = reqs[reqs.length - 1]!;
      this.cqStore.putMessagePositionInfos(last.topic, last.queueId, reqs);
      this.onLogicsWrite(last.storeTimestamp);
      return;
    }
    const byTopic = this.groups;
    byTopic.clear();
    for (const r of reqs) if (isConsumeQueueRecord(r.sysFlag)) pushGrouped(byTopic, r.topic, r.queueId, r);
    for (const [topic, byQueue] of byTopic) {
      for (const [queueId, list] of byQueue) {
        this.cqStore.putMessagePositionInfos(topic, queueId, list);
        this.onLogicsWrite(list[list.length - 1]!.storeTimestamp);
      }
    }
    byTopic.clear();
  }

  /**
   * `dispatchBlock` for the columns of a prepared block (no DispatchRequest per record): the
   * block's rows grouped by queue, each queue's entries written in one go
   * (ConsumeQueueStore.putPositionColumns). Throws on the first failure (required dispatcher).
   */
  dispatchPrepared(block: PreparedDispatchBlock): void {
    const byTopic = this.rowGroups;
    byTopic.clear();
    const { topic, queueId, sysFlag } = block;
    for (let k = 0; k < block.count; k++) if (isConsumeQueueRecord(sysFlag[k]!)) pushGrouped(byTopic, topic[k]!, queueId[k]!, k);
    for (const [t, byQueue] of byTopic) {
      for (const [q, rows] of byQueue) {
        this.cqStore.putPositionColumns(t, q, block, rows, rows.length);
        this.onLogicsWrite(block.storeTimestamp);
      }
    }
    byTopic.clear();
  }

  /** Scratch of dispatchPrepared: topic → queue id → the block's rows of that queue. */
  private readonly rowGroups = new Map<string, Map<number, number[]>>();

  /** Scratch of dispatchBlock: topic → queue id → the block's records of that queue. */
  private readonly groups = new Map<string, Map<number, DispatchRequest[]>>();
}

/** Appends `item` to the list of `topic`/`queueId` in `groups` (made when missing). */
function pushGrouped<T>(groups: Map<string, Map<number, T[]>>, topic: string, queueId: number, item: T): void {
  let byQueue = groups.get(topic);
  if (byQueue === undefined) {
    byQueue = new Map();
    groups.set(topic, byQueue);
  }
  const list = byQueue.get(queueId);
  if (list === undefined) byQueue.set(queueId, [item]);
  else list.push(item);
}

/** True when every request of `reqs` owns a ConsumeQueue entry of one queue (a batch). */
function sameQueue(reqs: readonly DispatchRequest[]): boolean {
  const first = reqs[0];
  if (first === undefined) return false;
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i]!;
    if (r.queueId !== first.queueId || r.topic !== first.topic || !isConsumeQueueRecord(r.sysFlag)) return false;
  }
  return true;
}
