/**
 * The store as a SLAVE's HAClient sees it (`ReplicaStore`; RocketMQ
 * `DefaultMessageStore.appendToCommitLog` / `truncateFiles` and the reput wake-up after an
 * append), built from the store's parts so the HA code never holds the store facade:
 *
 * - `appendToCommitLog(offset, src, start, length)`: replicated bytes appended verbatim at the
 *   CommitLog max offset (replicated-log.ts). @throws HAProtocolError on a misplaced offset,
 *   TsmqError SERVICE_NOT_AVAILABLE after shutdown, or the write error.
 * - `dispatchReplicated()`: dispatches whole replicated records up to the dispatch limit (in
 *   controller mode the master's confirm offset): at once under ASYNC_FLUSH; under SYNC_FLUSH
 *   through the group commit, whose flush drives dispatch (consumers never see unflushed data). An empty slave started mid-stream first
 *   moves dispatch to the CommitLog min offset. No-op once shutdown began.
 * - `confirmOffsetFromMaster(offset)`: controller mode, the master's confirm offset arrived (or
 *   null: the master sends none); dispatch goes up to it (ha/confirm-offset.ts).
 * - `masterConnected()`: a new master connection; the confirm offset is capped at the CommitLog
 *   end until the master says more.
 * - `truncateFiles(offset)`: drops data at and after `offset` (replicated-log.ts); the confirm
 *   offset is capped at the new end.
 * Offsets and sizes are CommitLog byte offsets.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { FlushManager } from '../commitlog/flush-services.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import type { ReputMessageService } from '../dispatch/reput-message-service.js';
import type { ConfirmOffset } from './confirm-offset.js';
import type { StoreState } from '../store-state.js';
import type { StoreCheckpoint } from '../recovery/store-checkpoint.js';
import type { StoreConfig } from '../store-config.js';
import type { ReplicaStore } from './ha-client.js';
import { appendReplicatedBytes, truncateReplicatedLog, type TruncateReport } from './replicated-log.js';

export interface ReplicaStoreParts {
  config: Pick<StoreConfig, 'flushDiskType' | 'mappedFileSizeCommitLog'>;
  state: StoreState;
  commitLog: CommitLog;
  consumeQueueStore: ConsumeQueueStore;
  checkpoint: StoreCheckpoint;
  reput: ReputMessageService;
  confirm: ConfirmOffset;
  queueOffsets: QueueOffsetTable;
  flushManager: FlushManager;
  logger: Logger;
}

export class ReplicaStoreAdapter implements ReplicaStore {
  constructor(private readonly p: ReplicaStoreParts) {}

  getMaxPhyOffset(): number {
    return this.p.commitLog.getMaxOffset();
  }

  /** CommitLog segment size in bytes. */
  get commitLogFileSize(): number {
    return this.p.config.mappedFileSizeCommitLog;
  }

  appendToCommitLog(offset: number, src: Buffer, start: number, length: number): void {
    this.p.state.assertOpen();
    appendReplicatedBytes(this.p.commitLog, offset, src, start, length);
  }

  dispatchReplicated(): void {
    const { state, commitLog, reput, config, flushManager } = this.p;
    if (!state.isRunning()) return;
    const min = commitLog.getMinOffset();
    if (reput.getReputFromOffset() < min) reput.setReputFromOffset(min); // empty slave started mid-stream
    if (config.flushDiskType === 'ASYNC_FLUSH') reput.driveToLimit();
    else void flushManager.handleDiskFlush(commitLog.getMaxOffset(), false); // the group commit drives dispatch
  }

  confirmOffsetFromMaster(offset: number | null): void {
    this.p.confirm.fromMaster(offset);
    if (this.p.state.isRunning()) this.p.reput.driveToLimit();
  }

  masterConnected(): void {
    this.p.confirm.clamp();
  }

  async truncateFiles(offset: number): Promise<TruncateReport> {
    const { state, commitLog, consumeQueueStore, checkpoint, reput, queueOffsets, logger, confirm } = this.p;
    state.assertOpen();
    const report = await truncateReplicatedLog({ commitLog, cqStore: consumeQueueStore, checkpoint, reput, queueOffsets, logger }, offset);
    confirm.clamp();
    return report;
  }
}
