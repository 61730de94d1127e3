/**
 * CommitLog flush policies (spec §4.2, §4.4). Both run fdatasync off the event loop through
 * MappedFileQueue.flush; timers are unref'd so an idle store does not keep the process alive.
 *
 * - FlushRealTimeService (ASYNC_FLUSH): every `intervalMs` flush when ≥ `leastPages` dirty pages;
 *   every `thoroughIntervalMs` flush everything (leastPages = 0). Shutdown: up to 10 flush(0).
 * - GroupCommitService (SYNC_FLUSH): producers waiting for `nextOffset` queue a request; one
 *   flush(0) resolves every request it covers (group commit). A request still pending at its
 *   deadline (`timeoutMs` = syncFlushTimeout) resolves FLUSH_DISK_TIMEOUT; the message stays
 *   stored. Messages with WAIT=false only wake the service.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';

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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

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
      this.logger.error({ err: e }, 'CommitLog flush failed');
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

export class GroupCommitService implements FlushManager {
  private requests: GroupCommitRequest[] = [];
  private head = 0;
  private running: Promise<void> | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private stopped = false;

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

  wakeup(): void {
    if (this.running) return;
    this.running = this.run().finally(() => {
      this.running = null;
      // appends that arrived after the last check
      if (!this.stopped && (this.pendingRequests() > 0 || this.mfq.getFlushedWhere() < this.mfq.getMaxOffset())) this.wakeup();
    });
  }

  private async run(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r)); // let the current batch of appends join this group
    while (this.pendingRequests() > 0 || this.mfq.getFlushedWhere() < this.mfq.getMaxOffset()) {
      const before = this.mfq.getFlushedWhere();
      let failed = false;
      try {
        await this.mfq.flush(0);
      } catch (e) {
        failed = true;
        this.logger.error({ err: e }, 'CommitLog group commit flush failed');
      }
      const flushed = this.mfq.getFlushedWhere();
      this.resolveCovered(flushed);
      if (flushed !== before) this.onFlushed(flushed, this.mfq.getStoreTimestamp());
      else await sleep(failed ? 10 : 1);
      if (this.stopped) break;
    }
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

  stopAbruptly(): void {
    this.stopped = true;
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    while (this.head < this.requests.length) this.requests[this.head++]!.resolve('FLUSH_DISK_TIMEOUT');
    this.compact();
  }

  async shutdown(): Promise<void> {
    if (this.running) await this.running;
    this.stopped = true;
    for (let i = 0; i < 10 && this.mfq.getFlushedWhere() < this.mfq.getMaxOffset(); i++) {
      try {
        await this.mfq.flush(0);
      } catch (e) {
        this.logger.error({ err: e, attempt: i + 1 }, 'CommitLog flush at shutdown failed');
      }
    }
    const flushed = this.mfq.getFlushedWhere();
    this.resolveCovered(flushed);
    this.onFlushed(flushed, this.mfq.getStoreTimestamp());
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    while (this.head < this.requests.length) this.requests[this.head++]!.resolve('FLUSH_DISK_TIMEOUT');
    this.compact();
  }
}
