/**
 * Why the store refuses writes, one flag per cause (the idea of RocketMQ `RunningFlags`:
 * DISK_FULL bit, WRITE_LOGICS_QUEUE_ERROR bit, and a WRITE_ERROR for a failed CommitLog write).
 *
 * - syncFailed:        an fdatasync/fsync of a CommitLog or ConsumeQueue file failed (fsyncgate,
 *                      mapped-file/sync-failed-error.ts); set once, NEVER cleared: only a restart
 *                      (abnormal recovery, CRC-checked from the checkpoint) can tell what is on
 *                      disk. PostgreSQL's answer to fsyncgate (PANIC on a failed fsync); RocketMQ
 *                      only logs a failed flush and keeps going.
 * - diskFull:          disk usage above diskSpaceWarningLevelRatio; set and cleared by the disk check.
 * - writeError:        a CommitLog write (pwrite) failed, e.g. ENOSPC or EIO; set by the put path,
 *                      cleared by the disk check once buffered bytes could be written again.
 * - logicsQueueError:  a ConsumeQueue cannot be written (RocketMQ LOGICS_QUEUE_ERROR), from two sources:
 *                      'dispatch' — set by the ReputMessageService when a required dispatcher throws,
 *                      cleared by it once the same record was dispatched (retried, never skipped);
 *                      'consume-queue-write' — set by the ConsumeQueueStore when buffered entries
 *                      cannot be committed or flushed, cleared once they are (retried, kept buffered).
 *                      The flag is set while either source is.
 *
 * `reason()` is the first set of: sync failed, disk full, write error, "logics queue error: <reason>" (the
 * reason of the logics source that was set first).
 * Every change of the combined state is pushed to `sink(writable, reason)` (the store's
 * `setWritable`). Only transitions are pushed, so a reason set on the store by someone else is
 * not overwritten while these flags do not change.
 */
export { describeWriteError } from '../../common/fs/write-error.js';

export type WritableSink = (writable: boolean, reason: string) => void;

/** Who raised LOGICS_QUEUE_ERROR: blocked dispatch, or a failed background ConsumeQueue write. */
export type LogicsQueueErrorSource = 'dispatch' | 'consume-queue-write';

export class RunningFlags {
  private syncFailedReason: string | null = null;
  private diskFullReason: string | null = null;
  private writeErrorReason: string | null = null;
  /** Reasons by source, in the order they were set. */
  private readonly logicsQueueErrors = new Map<LogicsQueueErrorSource, string>();
  private lastPushed: string | null = null;

  constructor(private readonly sink: WritableSink) {}

  /** True once a sync failed (never cleared). */
  isSyncFailed(): boolean {
    return this.syncFailedReason !== null;
  }

  /**
   * Records a failed fdatasync for good; the first reason is kept (later ones are ignored), so
   * the remark keeps naming the first file that failed.
   */
  setSyncFailed(reason: string): void {
    if (this.syncFailedReason !== null) return;
    this.syncFailedReason = reason;
    this.push();
  }

  isDiskFull(): boolean {
    return this.diskFullReason !== null;
  }

  hasWriteError(): boolean {
    return this.writeErrorReason !== null;
  }

  /** True while any source (or `source`, when given) has the logics queue error set. */
  hasLogicsQueueError(source?: LogicsQueueErrorSource): boolean {
    return source === undefined ? this.logicsQueueErrors.size > 0 : this.logicsQueueErrors.has(source);
  }

  /** True when no flag is set. */
  isWritable(): boolean {
    return this.reason() === null;
  }

  /** The reason writes are refused (sync failed first, then disk full, write error, logics queue error), or null. */
  reason(): string | null {
    if (this.syncFailedReason !== null) return this.syncFailedReason;
    if (this.diskFullReason !== null) return this.diskFullReason;
    if (this.writeErrorReason !== null) return this.writeErrorReason;
    const logics = this.logicsQueueErrors.values().next();
    return logics.done ? null : `logics queue error: ${logics.value}`;
  }

  setDiskFull(reason: string | null): void {
    this.diskFullReason = reason;
    this.push();
  }

  setWriteError(reason: string | null): void {
    this.writeErrorReason = reason;
    this.push();
  }

  /**
   * `reason` names the failure (dispatch: dispatcher, offsets, cause; consume-queue-write: queue,
   * operation, first entry not written, cause); null clears `source`'s part of the flag. A new
   * reason of a source already set keeps its place in the order.
   */
  setLogicsQueueError(reason: string | null, source: LogicsQueueErrorSource = 'dispatch'): void {
    if (reason === null) this.logicsQueueErrors.delete(source);
    else this.logicsQueueErrors.set(source, reason);
    this.push();
  }

  private push(): void {
    const now = this.reason();
    if (now === this.lastPushed) return;
    this.lastPushed = now;
    this.sink(now === null, now ?? '');
  }
}
