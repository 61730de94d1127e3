/**
 * Start-up recovery of the whole store (spec §3.3 step 4), returning a report of what was kept,
 * dropped and rebuilt:
 *
 * 1. Recover every ConsumeQueue (§3.4).
 * 2. Recover the CommitLog in `normal` or `abnormal` mode (commit-log-recovery.ts), which
 *    re-dispatches records and truncates CQs and the CommitLog to the verified end.
 * 3. Abnormal: flush all ConsumeQueues, then force (fdatasync regardless of flushed positions)
 *    the CommitLog from the scan's start segment and every ConsumeQueue file: data recovered
 *    from the page cache after a process crash has never been forced to the device. After a
 *    crash on this boot (`pageCacheIntact`) the data is written again before the force: a
 *    failed fdatasync may have left pages clean in the cache but not on the device (fsyncgate).
 * 4. Rebuild the queue-offset table from each CQ's max offset; correct CQ min offsets against
 *    the CommitLog min offset (an emptied queue stays positioned, B04).
 * 5. Clamp the checkpoint to verified data (B05): confirmPhyOffset := recovered end (controller
 *    mode: the persisted confirm offset within [CommitLog min, recovered end], Apache's
 *    correction), timestamps no later than the last valid record; force it.
 *
 * Controller mode (`controllerMode`): the checkpoint's confirmPhyOffset is the confirm offset of
 * the last run (Apache 5.3.3 StoreCheckpoint offset 32); records past it are not dispatched, so a
 * replica's unconfirmed tail does not become consumable by a restart. `confirmOffset` in the
 * report is where dispatch may go (the running replica's confirm offset takes over from there).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import type { RecoveryProgressListener } from './recovery-progress.js';
import { recoverCommitLog, type CommitLogRecoveryResult, type RecoveryMode } from './commit-log-recovery.js';
import type { StoreCheckpoint } from './store-checkpoint.js';

export interface RecoveryReport extends CommitLogRecoveryResult {
  consumeQueues: number;
  /** Entries dropped by ConsumeQueue recovery (invalid tails) plus truncation to the CommitLog end. */
  cqEntriesRemovedTotal: number;
  /** ConsumeQueue entries written from CommitLog records during recovery. */
  cqEntriesRebuilt: number;
  commitLogMinOffset: number;
  commitLogMaxOffset: number;
  /**
   * Controller mode: the recovered confirm offset (CommitLog bytes; nothing past it was
   * dispatched here); null in classic mode.
   */
  confirmOffset: number | null;
  durationMs: number;
}

export interface StoreRecoveryContext {
  commitLog: CommitLog;
  cqStore: ConsumeQueueStore;
  checkpoint: StoreCheckpoint;
  queueOffsets: QueueOffsetTable;
  dispatch: (req: DispatchRequest) => void;
  /** Lowest CommitLog offset a plugin asked to see again (null: none). */
  rebuildFromPhyOffset: number | null;
  checkCrc: boolean;
  delayLevelTableMs: number[];
  /**
   * The page cache of the last process may have survived (it exited abnormally and the lock
   * does not prove a reboot since): what recovery reads may be in the page cache only, also
   * pages a failed fdatasync left clean but unwritten, so the abnormal recovery writes the data
   * again before forcing it.
   */
  pageCacheIntact?: boolean;
  logger: Logger;
  /** Hears the CommitLog scan's progress every few seconds. */
  onProgress?: RecoveryProgressListener | null;
  /** Controller mode: the checkpoint's confirmPhyOffset bounds dispatch (see the file comment). */
  controllerMode?: boolean;
}

export async function recoverStore(mode: RecoveryMode, ctx: StoreRecoveryContext): Promise<RecoveryReport> {
  const started = Date.now();
  const cq = ctx.cqStore.recoverAll();
  let rebuilt = 0;
  const countingDispatch = (req: DispatchRequest): void => {
    const q = ctx.cqStore.find(req.topic, req.queueId);
    const before = q ? q.getMaxOffsetInQueue() : 0;
    ctx.dispatch(req);
    const after = ctx.cqStore.find(req.topic, req.queueId)?.getMaxOffsetInQueue() ?? 0;
    if (after > before) rebuilt += after - before;
  };
  const persistedConfirm = ctx.checkpoint.confirmPhyOffset;
  const cl = await recoverCommitLog(mode, {
    dispatchUntil: ctx.controllerMode ? Math.max(persistedConfirm, ctx.commitLog.getMinOffset()) : null,
    commitLog: ctx.commitLog,
    cqStore: ctx.cqStore,
    dispatch: countingDispatch,
    rebuildFromPhyOffset: ctx.rebuildFromPhyOffset,
    checkCrc: ctx.checkCrc,
    delayLevelTableMs: ctx.delayLevelTableMs,
    checkpointMinTimestamp: ctx.checkpoint.getMinTimestamp(),
    logger: ctx.logger,
    onProgress: ctx.onProgress ?? null,
  });
  if (mode === 'abnormal') {
    await ctx.cqStore.flushAll(0);
    // What recovery read back may have come from the page cache of a crashed process (kill -9
    // on this boot): it counts as flushed but nothing forced it to the device, and a later power
    // loss would punch holes into the middle of the logs. Force it now, before any put is
    // acknowledged: the CommitLog from the segment the scan started in (earlier ones were
    // flushed before the checkpoint moved past them) and every ConsumeQueue file.
    // After the crash of a process on this boot the page cache may also hold pages a failed
    // fdatasync left clean but unwritten (Linux, fsyncgate): they are written again first.
    if (ctx.pageCacheIntact) {
      await ctx.commitLog.mfq.rewriteFrom(cl.startOffset);
      await ctx.cqStore.rewriteAll();
    } else {
      await ctx.commitLog.mfq.forceFrom(cl.startOffset);
      await ctx.cqStore.forceAll();
    }
  }

  ctx.queueOffsets.clear();
  for (const q of ctx.cqStore.all()) ctx.queueOffsets.set(q.topic, q.queueId, q.getMaxOffsetInQueue());
  ctx.cqStore.correctMinOffsets(ctx.commitLog.getMinOffset());
  ctx.commitLog.setLastStoreTimestamp(cl.lastStoreTimestamp);

  const cp = ctx.checkpoint;
  const confirmOffset = ctx.controllerMode ? Math.min(Math.max(persistedConfirm, ctx.commitLog.getMinOffset()), cl.stoppedAt) : null;
  if (confirmOffset !== null && confirmOffset !== persistedConfirm) {
    ctx.logger.warn({ persistedConfirm, confirmOffset, recoveredEnd: cl.stoppedAt }, 'confirm offset corrected to the CommitLog data');
  }
  cp.confirmPhyOffset = confirmOffset ?? cl.stoppedAt;
  if (cl.lastStoreTimestamp > 0) {
    cp.physicMsgTimestamp = Math.min(cp.physicMsgTimestamp, cl.lastStoreTimestamp);
    cp.logicsMsgTimestamp = Math.min(cp.logicsMsgTimestamp, cl.lastStoreTimestamp);
  } else if (cl.stoppedAt === 0) {
    cp.physicMsgTimestamp = 0;
    cp.logicsMsgTimestamp = 0;
  }
  await cp.flush();

  const report: RecoveryReport = {
    ...cl,
    consumeQueues: cq.queues,
    cqEntriesRemovedTotal: cq.entriesRemoved + cl.cqEntriesRemoved,
    cqEntriesRebuilt: rebuilt,
    commitLogMinOffset: ctx.commitLog.getMinOffset(),
    commitLogMaxOffset: ctx.commitLog.getMaxOffset(),
    confirmOffset,
    durationMs: Date.now() - started,
  };
  ctx.logger.info({ recovery: report }, `store recovered (${mode})`);
  return report;
}
