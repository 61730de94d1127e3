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
}
