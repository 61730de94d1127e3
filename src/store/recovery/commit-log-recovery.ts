/**
 * CommitLog recovery: ONE scan routine with a mode (spec §3.5 normal, §3.6 abnormal), built on
 * `checkRecord` (expected PHYSICALOFFSET = position, BODYCRC when checkCRCOnRecover).
 *
 * 1. Start file: walk back from the newest segment to the first whose first record is valid,
 *    has a non-zero store time and starts at or below the ConsumeQueues' max physical offset
 *    (5.x HEAD rule); abnormal mode additionally needs its store time ≤ checkpoint
 *    getMinTimestamp(). None ⇒ the first segment.
 * 2. Scan records in order. Valid ⇒ dispatch when it ends beyond the CQ max physical offset
 *    (normal) or always (abnormal; CQ writes are idempotent), and in controller mode not past
 *    the persisted confirm offset (`dispatchUntil`), advance. Blank ⇒ next segment.
 *    Invalid ⇒ stop: this is the end of valid data (the first invalid record ends the log, B10).
 * 3. Truncate ConsumeQueues to the stop offset, then the CommitLog (later segments deleted, the
 *    tail of the stop segment zeroed on disk); flushed/committed := stop offset.
 *    No segments at all ⇒ every ConsumeQueue is destroyed.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import { SegmentScanner } from './segment-scanner.js';
import { RecoveryProgressReporter, type RecoveryProgressListener } from './recovery-progress.js';

export type RecoveryMode = 'normal' | 'abnormal';

export interface CommitLogRecoveryResult {
  mode: RecoveryMode;
  /** Path of the segment the scan started in (null without segments). */
  startFile: string | null;
  startOffset: number;
  recordsScanned: number;
  recordsDispatched: number;
  /** First byte after the last valid record (the recovered CommitLog max offset). */
  stoppedAt: number;
  stopReason: string;
  /** Store time of the last valid record (0 if none scanned). */
  lastStoreTimestamp: number;
  truncatedBytes: number;
  destroyedFiles: number;
  cqEntriesRemoved: number;
}

export interface CommitLogRecoveryContext {
  commitLog: CommitLog;
  cqStore: ConsumeQueueStore;
  /** Feeds a record to every dispatcher (ConsumeQueue, index...). */
  dispatch: (req: DispatchRequest) => void;
  checkCrc: boolean;
  delayLevelTableMs: number[];
  /** Plugins (index) that need records again from this CommitLog offset on; null when none. */
  rebuildFromPhyOffset: number | null;
  /**
   * Controller mode: records ending past this CommitLog offset are not dispatched (the persisted
   * confirm offset; they wait for the confirm offset of the running replica). null: no bound.
   */
  dispatchUntil?: number | null;
  /** checkpoint.getMinTimestamp() (abnormal mode). */
  checkpointMinTimestamp: number;
  logger: Logger;
  /** Hears the scan's progress every few seconds (recovery-progress.ts). */
  onProgress?: RecoveryProgressListener | null;
}

export async function recoverCommitLog(mode: RecoveryMode, ctx: CommitLogRecoveryContext): Promise<CommitLogRecoveryResult> {
  const mfq = ctx.commitLog.mfq;
  const files = mfq.getFiles();
  const result: CommitLogRecoveryResult = {
    mode,
    startFile: null,
    startOffset: 0,
    recordsScanned: 0,
    recordsDispatched: 0,
    stoppedAt: 0,
    stopReason: 'no CommitLog segments',
    lastStoreTimestamp: 0,
    truncatedBytes: 0,
    destroyedFiles: 0,
    cqEntriesRemoved: 0,
  };
  if (files.length === 0) {
    mfq.setFlushedWhere(0);
    mfq.setCommittedWhere(0);
    ctx.cqStore.destroyAll();
    return result;
  }
  const scanOpts = { checkCrc: ctx.checkCrc, delayLevelTableMs: ctx.delayLevelTableMs };
  let dispatchFrom = Math.max(0, ctx.cqStore.getMaxPhyOffsetInConsumeQueue());
  if (ctx.rebuildFromPhyOffset !== null) dispatchFrom = Math.max(0, Math.min(dispatchFrom, ctx.rebuildFromPhyOffset));
  const dispatchUntil = ctx.dispatchUntil ?? null;
  let index = chooseStartFile(files, mode, dispatchFrom, ctx.checkpointMinTimestamp, scanOpts);
  let mf = files[index]!;
  result.startFile = mf.filePath;
  result.startOffset = mf.fileFromOffset;

  let scanner = new SegmentScanner(mf, scanOpts);
  let pos = 0;
  const scanFrom = mf.fileFromOffset;
  const last = files[files.length - 1]!;
  const progress = new RecoveryProgressReporter(`CommitLog ${mode} recovery scan`, last.fileFromOffset + last.fileSize - scanFrom, ctx.logger, ctx.onProgress ?? null);
  for (;;) {
    const r = scanner.check(pos);
    if (r.kind === 'valid') {
      const pause = progress.tick(mf.fileFromOffset + pos - scanFrom);
      if (pause) await pause;
      result.recordsScanned++;
      const d = r.dispatch;
      result.lastStoreTimestamp = d.storeTimestamp;
      const end = d.commitLogOffset + d.msgSize;
      if ((mode === 'abnormal' || end > dispatchFrom) && (dispatchUntil === null || end <= dispatchUntil)) {
        ctx.dispatch(d);
        result.recordsDispatched++;
      }
      pos += r.size;
      continue;
    }
    if (r.kind === 'blank') {
      if (index + 1 >= files.length) {
        pos = mf.fileSize;
        result.stopReason = 'end of data (blank filler in the last segment)';
        break;
      }
      mf = files[++index]!;
      scanner = new SegmentScanner(mf, scanOpts);
      pos = 0;
      continue;
    }
    result.stopReason = r.reason;
    break;
  }
  const processOffset = mf.fileFromOffset + pos;
  result.stoppedAt = processOffset;
  ctx.logger.info({ mode, processOffset, reason: result.stopReason }, 'CommitLog scan finished');

  result.cqEntriesRemoved = ctx.cqStore.truncateDirty(processOffset);
  const t = mfq.truncateDirtyFiles(processOffset);
  result.truncatedBytes = t.truncatedBytes;
  result.destroyedFiles = t.destroyedFiles;
  mfq.setFlushedWhere(processOffset);
  mfq.setCommittedWhere(processOffset);
  const tail = mfq.getLastMappedFile();
  if (tail) await tail.force(); // make the zeroed tail durable
  if (result.lastStoreTimestamp > 0) tail!.storeTimestamp = result.lastStoreTimestamp;
  return result;
}

function chooseStartFile(
  files: readonly MappedFile[],
  mode: RecoveryMode,
  dispatchFrom: number,
  checkpointMinTimestamp: number,
  scanOpts: { checkCrc: boolean; delayLevelTableMs: number[] },
): number {
  for (let i = files.length - 1; i >= 0; i--) {
    const f = files[i]!;
    if (f.fileFromOffset > dispatchFrom) continue;
    const first = new SegmentScanner(f, scanOpts, 64 * 1024).check(0);
    if (first.kind !== 'valid') continue;
    const storeTimestamp = first.dispatch.storeTimestamp;
    if (storeTimestamp === 0) continue;
    if (mode === 'abnormal' && storeTimestamp > checkpointMinTimestamp) continue;
    return i;
  }
  return 0;
}
