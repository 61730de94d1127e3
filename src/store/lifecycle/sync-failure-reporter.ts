/**
 * What the store does when an fdatasync/fsync of one of its files fails (fsyncgate, see
 * mapped-file/sync-failed-error.ts and docs/internals/io-engine.md): sets the sticky
 * `syncFailed` running flag (puts answer SERVICE_NOT_AVAILABLE with "message store is not
 * writable: <reason>" until restart) and logs one error line. Every segment reports its own
 * first failure once; the lines are rate-limited to one per `logIntervalMs` (the count of
 * suppressed ones goes into the next line), so a failing disk under thousands of ConsumeQueue
 * files does not flood the log.
 *
 * Reason, e.g. "fdatasync of /store/commitlog/00000000000000000000 failed with EIO (injected EIO);
 * data written since the last successful flush may not be on disk, writes are refused: restart
 * the broker: recovery re-checks the data".
 */
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';
import type { RunningFlags } from '../retention/running-flags.js';

/** Default minimum time between two "sync failed" log lines, ms. */
export const SYNC_FAILED_LOG_INTERVAL_MS = 10_000;

/** The running-flag reason (put remark) for a failed sync. */
export function syncFailedReason(e: SyncFailedError): string {
  return `${e.message}; data written since the last successful flush may not be on disk, writes are refused: restart the broker: recovery re-checks the data`;
}

export class SyncFailureReporter {
  private readonly limiter: LogRateLimiter;

  constructor(
    private readonly flags: Pick<RunningFlags, 'setSyncFailed'>,
    private readonly logger: Logger,
    clock: Clock,
    logIntervalMs = SYNC_FAILED_LOG_INTERVAL_MS,
  ) {
    this.limiter = new LogRateLimiter(clock, logIntervalMs);
  }

  /** A segment's sync failed (called once per segment, synchronously from the failing flush). */
  readonly report = (e: SyncFailedError): void => {
    const reason = syncFailedReason(e);
    this.flags.setSyncFailed(reason);
    const suppressed = this.limiter.take('sync-failed');
    if (suppressed === null) return;
    this.logger.error(
      { err: e.cause, file: e.filePath, flushedPosition: e.flushedPosition, unflushedUpTo: e.targetPosition, ...(suppressed > 0 ? { suppressed } : {}) },
      reason,
    );
  };
}
