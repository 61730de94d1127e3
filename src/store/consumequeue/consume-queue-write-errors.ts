/**
 * Failed background writes of ConsumeQueues (RocketMQ WRITE_LOGICS_QUEUE_ERROR, tsmq flavour).
 *
 * A ConsumeQueue entry is appended to its segment's write buffer at dispatch and reaches the file
 * later: committed (pwrite) on the next event-loop turn, flushed (fdatasync) by
 * FlushConsumeQueueService. When one of those fails (EIO, ENOSPC) the entries stay buffered (the
 * MappedFile keeps every byte it could not write), the queue is recorded here and:
 *
 * - `onChange(reason)` is told the reason of the first failing queue, e.g.
 *   "ConsumeQueue commit failed (topic T, queue 0, entries from queue offset 3 not written):
 *   write failed: EIO injected EIO" — the store sets LOGICS_QUEUE_ERROR, puts answer
 *   SERVICE_NOT_AVAILABLE with "message store is not writable: logics queue error: <reason>";
 * - one error line per failing queue, repeats at most every `logIntervalMs` (with the attempts
 *   and the suppressed count);
 * - `scheduleRetry()` runs `retry` every `retryIntervalMs` (unref'd timer) while a queue fails;
 * - `succeeded(queue)` (its commit / flush worked again) forgets it, logs one info line and, once
 *   no queue fails, tells `onChange(null)`.
 *
 * RocketMQ retries a failed ConsumeQueue write 30 times, 1 s apart, inside the dispatch thread,
 * then sets the flag for good (until restart), and only logs failed flushes; here dispatch never
 * waits, failures of the background commit and flush raise the flag too, and a failed commit
 * (pwrite: the bytes are still buffered) is cleared when the write works again.
 *
 * A failed fdatasync is different (fsyncgate, mapped-file/sync-failed-error.ts): the kernel may
 * have dropped the pages, so a later successful flush proves nothing. Such a queue is recorded
 * `untilRestart`: never retried, never cleared (`succeeded` ignores it); the next start's
 * abnormal recovery rebuilds the queue from the CommitLog.
 */
import type { Logger } from '../../common/logging/logger.js';
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';
import { describeWriteError } from '../../common/fs/write-error.js';
import type { Clock } from '../../common/time/clock.js';
import { findSyncFailure } from '../mapped-file/sync-failed-error.js';

/** `commit`: pwrite of buffered entries; `flush`: fdatasync of written ones. */
export type ConsumeQueueWriteOp = 'commit' | 'flush';

/** Default period of the retry of failed ConsumeQueue writes, ms. */
export const CQ_WRITE_RETRY_INTERVAL_MS = 200;

export interface QueueId {
  readonly topic: string;
  readonly queueId: number;
}

/** A ConsumeQueue commit or flush failed; `queueOffset` = first entry not written (commit) / not flushed (flush). */
export class ConsumeQueueWriteError extends Error {
  /** "ConsumeQueue <op> failed (topic <t>, queue <q>, entries from queue offset <o> not written|flushed): <describeWriteError(cause)>". */
  readonly reason: string;

  constructor(
    readonly queue: QueueId,
    readonly op: ConsumeQueueWriteOp,
    readonly queueOffset: number,
    cause: unknown,
  ) {
    const reason =
      `ConsumeQueue ${op} failed (topic ${queue.topic}, queue ${queue.queueId}, entries from queue offset ${queueOffset} ` +
      `not ${op === 'commit' ? 'written' : 'flushed'}): ${describeWriteError(cause)}`;
    super(reason, { cause });
    this.name = 'ConsumeQueueWriteError';
    this.reason = reason;
  }
}

/** A queue whose writes keep failing since `sinceMs` (epoch ms of the clock). */
export interface FailedQueueWrite {
  topic: string;
  queueId: number;
  op: ConsumeQueueWriteOp;
  /** Reason of the latest failure. */
  reason: string;
  attempts: number;
  sinceMs: number;
  /** An fdatasync of the queue failed: the failure stays until restart (fsyncgate). */
  untilRestart: boolean;
}

export interface ConsumeQueueWriteErrorsOptions {
  clock: Clock;
  logger: Logger;
  logIntervalMs: number;
  retryIntervalMs: number;
  /** Retries every failing queue; null: no timer (later commits and flushes retry). */
  retry: (() => Promise<void>) | null;
  /** Told the reason when the first queue fails (or the reported queue changes), null when none fails. */
  onChange?: (reason: string | null) => void;
}

export class ConsumeQueueWriteErrors {
  private readonly failing = new Map<QueueId, FailedQueueWrite>();
  private readonly limiter: LogRateLimiter;
  private reported: string | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retrying = false;
  private stopped = false;

  constructor(private readonly o: ConsumeQueueWriteErrorsOptions) {
    this.limiter = new LogRateLimiter(o.clock, o.logIntervalMs);
  }

  /** True while writes of `queue` fail. */
  has(queue: QueueId): boolean {
    return this.failing.has(queue);
  }

  /** The operation that failed for `queue`, or null. */
  failedOp(queue: QueueId): ConsumeQueueWriteOp | null {
    return this.failing.get(queue)?.op ?? null;
  }

  /** Failing queues in the order they failed (copies). */
  state(): FailedQueueWrite[] {
    return [...this.failing.values()].map((f) => ({ ...f }));
  }

  /** Queues currently failing, in the order they failed. */
  queues(): QueueId[] {
    return [...this.failing.keys()];
  }

  /** The reason puts are refused for (first failing queue), or null. */
  reason(): string | null {
    const first = this.failing.values().next();
    return first.done ? null : first.value.reason;
  }

  failed(e: ConsumeQueueWriteError): void {
    const q = e.queue;
    const key = `${q.topic}\u0000${q.queueId}`;
    const f = this.failing.get(q);
    if (f) {
      f.attempts++;
      if (!f.untilRestart) f.reason = e.reason; // once an fdatasync failed, that stays the reason
      // a failed flush does not hide a failed commit: the commit must work first
      if (e.op === 'commit') f.op = 'commit';
      if (findSyncFailure(e) && !f.untilRestart) {
        f.untilRestart = true;
        f.reason = e.reason;
      }
      const suppressed = this.limiter.take(key);
      if (suppressed !== null) this.o.logger.error({ err: e.cause, topic: q.topic, queueId: q.queueId, attempts: f.attempts, suppressed }, `ConsumeQueue write still failing: ${e.reason}`);
    } else {
      const untilRestart = findSyncFailure(e) !== null;
      this.failing.set(q, { topic: q.topic, queueId: q.queueId, op: e.op, reason: e.reason, attempts: 1, sinceMs: this.o.clock.nowMs(), untilRestart });
      this.limiter.reset(key);
      this.limiter.take(key);
      this.o.logger.error(
        { err: e.cause, topic: q.topic, queueId: q.queueId },
        untilRestart
          ? `${e.reason}; the kernel may have dropped the unwritten entries, so they are not retried: puts are refused until restart (recovery rebuilds the queue from the CommitLog)`
          : `${e.reason}; the entries stay buffered and are retried, puts are refused until they are written`,
      );
    }
    this.push();
    this.scheduleRetry();
  }

  /** True when `queue` failed an fdatasync: it stays failing until restart. */
  isUntilRestart(queue: QueueId): boolean {
    return this.failing.get(queue)?.untilRestart ?? false;
  }

  /** `queue`'s write worked again: forgotten, unless it failed an fdatasync (kept until restart). */
  succeeded(queue: QueueId): void {
    const f = this.failing.get(queue);
    if (!f || f.untilRestart) return;
    this.failing.delete(queue);
    this.o.logger.info({ topic: f.topic, queueId: f.queueId, attempts: f.attempts, failedMs: this.o.clock.nowMs() - f.sinceMs }, 'ConsumeQueue written again');
    this.push();
    if (this.failing.size === 0) this.cancelTimer();
  }

  /** Drops `queue` without a write (the queue was deleted). */
  forget(queue: QueueId): void {
    if (!this.failing.delete(queue)) return;
    this.push();
    if (this.failing.size === 0) this.cancelTimer();
  }

  /** While a queue fails, runs `retry` once after `retryIntervalMs` (then again while failures remain). */
  scheduleRetry(): void {
    const retry = this.o.retry;
    if (!retry || this.retryTimer || this.retrying || this.stopped) return;
    if (![...this.failing.values()].some((f) => !f.untilRestart)) return; // nothing a retry could fix
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.stopped) return;
      this.retrying = true;
      retry()
        .catch((err) => this.o.logger.error({ err }, 'ConsumeQueue write retry failed'))
        .finally(() => {
          this.retrying = false;
          this.scheduleRetry();
        });
    }, this.o.retryIntervalMs);
    this.retryTimer.unref();
  }

  /** No more retry timers (shutdown, crash simulation); the state is kept. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  private push(): void {
    const now = this.reason();
    if (now === this.reported) return;
    this.reported = now;
    this.o.onChange?.(now);
  }

  private cancelTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}
