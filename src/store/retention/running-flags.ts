/**
 * Why the store refuses writes, one flag per cause (the idea of RocketMQ `RunningFlags`:
 * DISK_FULL bit, WRITE_LOGICS_QUEUE_ERROR bit, and a WRITE_ERROR for a failed CommitLog write).
 *
 * - diskFull:          disk usage above diskSpaceWarningLevelRatio; set and cleared by the disk check.
 * - writeError:        a CommitLog write (pwrite) failed, e.g. ENOSPC or EIO; set by the put path,
 *                      cleared by the disk check once buffered bytes could be written again.
 * - logicsQueueError:  dispatch to the ConsumeQueue failed (RocketMQ LOGICS_QUEUE_ERROR); set by the
 *                      ReputMessageService when a required dispatcher throws, cleared by it once the
 *                      same record was dispatched (dispatch is retried, never skipped).
 *
 * `reason()` is the first set of: disk full, write error, "logics queue error: <reason>".
 * Every change of the combined state is pushed to `sink(writable, reason)` (the store's
 * `setWritable`). Only transitions are pushed, so a reason set on the store by someone else is
 * not overwritten while these flags do not change.
 */
export { describeWriteError } from '../../common/fs/write-error.js';

export type WritableSink = (writable: boolean, reason: string) => void;

export class RunningFlags {
  private diskFullReason: string | null = null;
  private writeErrorReason: string | null = null;
  private logicsQueueErrorReason: string | null = null;
  private lastPushed: string | null = null;

  constructor(private readonly sink: WritableSink) {}

  isDiskFull(): boolean {
    return this.diskFullReason !== null;
  }

  hasWriteError(): boolean {
    return this.writeErrorReason !== null;
  }

  hasLogicsQueueError(): boolean {
    return this.logicsQueueErrorReason !== null;
  }

  /** True when no flag is set. */
  isWritable(): boolean {
    return this.reason() === null;
  }

  /** The reason writes are refused (disk full first, then write error, then logics queue error), or null. */
  reason(): string | null {
    if (this.diskFullReason !== null) return this.diskFullReason;
    if (this.writeErrorReason !== null) return this.writeErrorReason;
    return this.logicsQueueErrorReason === null ? null : `logics queue error: ${this.logicsQueueErrorReason}`;
  }

  setDiskFull(reason: string | null): void {
    this.diskFullReason = reason;
    this.push();
  }

  setWriteError(reason: string | null): void {
    this.writeErrorReason = reason;
    this.push();
  }

  /** `reason` names the failed dispatch (dispatcher, offsets, cause); null clears the flag. */
  setLogicsQueueError(reason: string | null): void {
    this.logicsQueueErrorReason = reason;
    this.push();
  }

  private push(): void {
    const now = this.reason();
    if (now === this.lastPushed) return;
    this.lastPushed = now;
    this.sink(now === null, now ?? '');
  }
}
