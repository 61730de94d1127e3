/**
 * CommitLog flush policies (spec §4.2, §4.4). Both run fdatasync off the event loop through
 * MappedFileQueue.flush; timers are unref'd so an idle store does not keep the process alive.
 *
 * - FlushRealTimeService (ASYNC_FLUSH): every `intervalMs` flush when ≥ `leastPages` dirty pages;
 *   every `thoroughIntervalMs` flush everything (leastPages = 0). Shutdown: up to 10 flush(0).
 * - GroupCommitService (SYNC_FLUSH): producers waiting for `nextOffset` queue a request; one
 *   flush(0) resolves every request it covers (group commit), and the next flush is issued as
 *   soon as the previous fdatasync returns. A request still pending at its deadline
 *   (`timeoutMs` = syncFlushTimeout) resolves FLUSH_DISK_TIMEOUT; the message stays stored.
 *   Messages with WAIT=false only wake the service.
 *
 * A failed fdatasync (SyncFailedError, fsyncgate) is final: the segment stays failed and its
 * flushed position never moves (mapped-file.ts), the store refuses puts until restart (the
 * SyncFailureReporter logs it and sets the running flag). The group commit then answers every
 * waiter FLUSH_DISK_TIMEOUT at once (not after syncFlushTimeout, and never PUT_OK for bytes
 * behind the failure) and stops flushing; the real-time service stops logging the repeats.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import { findSyncFailure } from '../mapped-file/sync-failed-error.js';

export type FlushStatus = 'PUT_OK' | 'FLUSH_DISK_TIMEOUT';

export interface FlushManager {
  start(): void;
  /** Called after each append; resolves when the producer may be answered. */
  handleDiskFlush(nextOffset: number, waitStoreMsgOK: boolean): Promise<FlushStatus> | FlushStatus;
  shutdown(): Promise<void>;
  /** Crash simulation: stop timers without flushing; pending waiters get FLUSH_DISK_TIMEOUT. */
  stopAbruptly(): void;
}

/** Called after every flush that made progress: new flushedWhere and, for flush(0), the store time it covers. */
export type OnFlushed = (flushedWhere: number, thoroughStoreTimestamp: number | null) => void;

export class FlushRealTimeService implements FlushManager {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: Promise<void> | null = null;
  private lastThoroughMs = Date.now();

  constructor(
    private readonly mfq: MappedFileQueue,
    private readonly opts: { intervalMs: number; leastPages: number; thoroughIntervalMs: number },
    private readonly onFlushed: OnFlushed,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  handleDiskFlush(): FlushStatus {
    return 'PUT_OK';
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.tick().finally(() => {
        this.current = null;
        this.schedule();
      });
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    let leastPages = this.opts.leastPages;
    if (now >= this.lastThoroughMs + this.opts.thoroughIntervalMs) {
      this.lastThoroughMs = now;
      leastPages = 0;
    }
    try {
      const before = this.mfq.getFlushedWhere();
      const after = await this.mfq.flush(leastPages);
      if (after !== before || leastPages === 0) this.onFlushed(after, leastPages === 0 ? this.mfq.getStoreTimestamp() : null);
    } catch (e) {
      if (!findSyncFailure(e)) this.logger.error({ err: e }, 'CommitLog flush failed'); // a failed sync was reported once by the store
    }
  }

  stopAbruptly(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.current) await this.current;
    for (let i = 0; i < 10 && this.mfq.getFlushedWhere() < this.mfq.getMaxOffset(); i++) {
      try {
        await this.mfq.flush(0);
      } catch (e) {
        if (findSyncFailure(e)) break; // final: the next start's abnormal recovery re-checks the data
        this.logger.error({ err: e, attempt: i + 1 }, 'CommitLog flush at shutdown failed');
      }
    }
    this.onFlushed(this.mfq.getFlushedWhere(), this.mfq.getStoreTimestamp());
  }
}

interface GroupCommitRequest {
  nextOffset: number;
  deadlineMs: number;
  resolve: (s: FlushStatus) => void;
}

/** Back-off after a flush that failed or made no progress while waiters remain. */
const NO_PROGRESS_RETRY_MS = 1;
const FAILED_FLUSH_RETRY_MS = 10;

/**
 * SYNC_FLUSH group commit. One flush (commit + fdatasync on the libuv pool) is in flight at a
 * time; when it returns, the next one starts *before* any JavaScript work (resolving waiters,
 * dispatch), so it covers everything appended during the previous fdatasync and the disk is
 * never idle while someone waits. A put arriving when no flush is in flight starts one on the
 * next `setImmediate`, so every append of the current event-loop turn joins the same group.
 *
 * `onFlushed` (which drives dispatch to the ConsumeQueues and index) is not called while the
 * disk is idle: after a flush returns, the waiters are resolved, their producers append on the
 * same turn, and on the next `setImmediate` the next flush is issued first and `onFlushed` runs
 * while that fdatasync is in flight. So a message is dispatched one event-loop turn after its
 * producer was answered (RocketMQ's ReputMessageService also dispatches after the put returns).
 */
export class GroupCommitService implements FlushManager {
  private requests: GroupCommitRequest[] = [];
  private head = 0;
  /** The flush in flight, null when idle. */
  private inFlight: Promise<void> | null = null;
  private kickScheduled = false;
  /** Flush progress not yet reported to `onFlushed` (reported right after the next flush is issued). */
  private unreported: { flushed: number; storeTimestamp: number } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Set by a failed fdatasync (SyncFailedError): nothing will be flushed again until restart. */
  private syncFailed = false;

  constructor(
    private readonly mfq: MappedFileQueue,
    private readonly timeoutMs: number,
    private readonly onFlushed: OnFlushed,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.wakeup();
  }

  handleDiskFlush(nextOffset: number, waitStoreMsgOK: boolean): Promise<FlushStatus> | FlushStatus {
    if (!waitStoreMsgOK || this.stopped) {
      this.wakeup();
      return 'PUT_OK';
    }
    if (this.syncFailed) return 'FLUSH_DISK_TIMEOUT';
    const p = new Promise<FlushStatus>((resolve) => {
      this.requests.push({ nextOffset, deadlineMs: Date.now() + this.timeoutMs, resolve });
    });
    this.armWatchdog();
    this.wakeup();
    return p;
  }

  /** Pending (unresolved) waiters. */
  pendingRequests(): number {
    return this.requests.length - this.head;
  }

  /** Makes sure a flush runs for what is written: on the next setImmediate (so every append of this turn joins it) unless one is in flight. */
  wakeup(): void {
    if (this.inFlight || this.retryTimer || this.stopped || this.syncFailed) return;
    this.scheduleKick();
  }

  private scheduleKick(): void {
    if (this.kickScheduled) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      if (!this.retryTimer) this.flushIfNeeded();
      this.reportFlushed();
    });
  }

  private reportFlushed(): void {
    const u = this.unreported;
    if (!u) return;
    this.unreported = null;
    this.onFlushed(u.flushed, u.storeTimestamp);
  }

  private hasWork(): boolean {
    return this.mfq.getFlushedWhere() < this.mfq.getMaxOffset();
  }

  private flushIfNeeded(): void {
    if (this.inFlight || this.stopped || this.syncFailed || !this.hasWork()) return;
    const before = this.mfq.getFlushedWhere();
    // mfq.flush commits and issues the fdatasync synchronously, before its first await
    this.inFlight = this.mfq.flush(0).then(
      () => this.afterFlush(before, false),
      (e: unknown) => {
        if (findSyncFailure(e)) {
          this.failAfterSyncFailure(before);
          return;
        }
        this.logger.error({ err: e }, 'CommitLog group commit flush failed');
        this.afterFlush(before, true);
      },
    );
  }

  private afterFlush(before: number, failed: boolean): void {
    this.inFlight = null;
    const flushed = this.mfq.getFlushedWhere();
    const progressed = flushed !== before;
    if (progressed && !failed) this.flushIfNeeded(); // chain first: the disk works while we resolve and dispatch
    else if (!this.stopped && this.hasWork() && !this.retryTimer) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.flushIfNeeded();
      }, failed ? FAILED_FLUSH_RETRY_MS : NO_PROGRESS_RETRY_MS);
      if (this.pendingRequests() === 0) this.retryTimer.unref(); // a waiting producer keeps the process alive
    }
    this.resolveCovered(flushed);
    if (progressed) {
      this.unreported = { flushed, storeTimestamp: this.mfq.getStoreTimestamp() };
      this.scheduleKick(); // the producers just answered append first; the kick flushes, then reports
    }
  }

  /**
   * fsyncgate: an fdatasync failed. Waiters covered by what was flushed before it get PUT_OK
   * (a multi-file flush may have completed earlier files), every other one FLUSH_DISK_TIMEOUT
   * now; no more flushes (they could only "succeed" without the lost pages).
   */
  private failAfterSyncFailure(before: number): void {
    this.inFlight = null;
    this.syncFailed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const flushed = this.mfq.getFlushedWhere();
    this.resolveCovered(flushed);
    if (flushed !== before) {
      // reported on the next turn, as after a successful flush (never from this rejection handler)
      this.unreported = { flushed, storeTimestamp: this.mfq.getStoreTimestamp() };
      this.scheduleKick();
    }
    this.failPending();
  }

  /** Answers every pending waiter FLUSH_DISK_TIMEOUT. */
  private failPending(): void {
    while (this.head < this.requests.length) this.requests[this.head++]!.resolve('FLUSH_DISK_TIMEOUT');
    this.compact();
  }

  private resolveCovered(flushed: number): void {
    while (this.head < this.requests.length && this.requests[this.head]!.nextOffset <= flushed) {
      this.requests[this.head++]!.resolve('PUT_OK');
    }
    this.compact();
  }

  private armWatchdog(): void {
    if (this.watchdog || this.pendingRequests() === 0) return;
    const wait = Math.max(0, this.requests[this.head]!.deadlineMs - Date.now());
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      const now = Date.now();
      while (this.head < this.requests.length && this.requests[this.head]!.deadlineMs <= now) {
        const r = this.requests[this.head++]!;
        this.logger.warn({ nextOffset: r.nextOffset }, 'sync flush did not complete within syncFlushTimeout');
        r.resolve('FLUSH_DISK_TIMEOUT');
      }
      this.compact();
      this.armWatchdog();
    }, wait);
    this.watchdog.unref();
  }

  private compact(): void {
    if (this.head === this.requests.length) {
      this.requests = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.requests = this.requests.slice(this.head);
      this.head = 0;
    }
  }

  private stopTimers(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  stopAbruptly(): void {
    this.stopped = true;
    this.unreported = null;
    this.stopTimers();
    while (this.head < this.requests.length) this.requests[this.head++]!.resolve('FLUSH_DISK_TIMEOUT');
    this.compact();
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    while (this.inFlight) await this.inFlight;
    for (let i = 0; i < 10 && this.hasWork() && !this.syncFailed; i++) {
      try {
        await this.mfq.flush(0);
      } catch (e) {
        if (findSyncFailure(e)) break; // final: the next start's abnormal recovery re-checks the data
        this.logger.error({ err: e, attempt: i + 1 }, 'CommitLog flush at shutdown failed');
      }
    }
    const flushed = this.mfq.getFlushedWhere();
    this.resolveCovered(flushed);
    this.unreported = null;
    this.onFlushed(flushed, this.mfq.getStoreTimestamp());
    this.stopTimers();
    while (this.head < this.requests.length) this.requests[this.head++]!.resolve('FLUSH_DISK_TIMEOUT');
    this.compact();
  }
}
