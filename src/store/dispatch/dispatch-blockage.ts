/**
 * The "blocked" state of dispatch (RocketMQ LOGICS_QUEUE_ERROR, tsmq flavour): a required
 * dispatcher (the ConsumeQueue builder) failed on the record at a CommitLog offset, dispatch
 * stays on that record, and it is retried until it succeeds.
 *
 * - `failed(err)`: first failure at an offset ⇒ state set, one error line, `onChange(reason)`;
 *   a repeat at the same offset ⇒ attempts + 1, an error line at most every `logIntervalMs`
 *   (with how many were suppressed). Failing at another offset replaces the state.
 * - `resumed()`: state cleared, retry timer cancelled, one info line, `onChange(null)`.
 * - `scheduleRetry()`: while blocked, runs `retry` once after `retryIntervalMs` (unref'd timer);
 *   no-op without a `retry` function, when a retry is already scheduled, or after `stop()`.
 * Times are epoch ms of the given clock (ManualClock in tests: exact log line counts).
 */
import type { Logger } from '../../common/logging/logger.js';
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';
import type { Clock } from '../../common/time/clock.js';
import type { DispatchBlockedError } from './dispatcher-chain.js';

/** A required dispatcher keeps failing on the record at CommitLog `offset` since `sinceMs` (epoch ms). */
export interface BlockedDispatch {
  offset: number;
  /** DispatchBlockedError.reason of the latest attempt. */
  reason: string;
  attempts: number;
  sinceMs: number;
}

export interface DispatchBlockageOptions {
  clock: Clock;
  logger: Logger;
  logIntervalMs: number;
  retryIntervalMs: number;
  /** Dispatches again (up to the store's confirm offset); null: no timer, only later drives retry. */
  retry: (() => void) | null;
  /** Told the reason when dispatch becomes blocked, and null when it resumes. */
  onChange?: (reason: string | null) => void;
}

export class DispatchBlockage {
  private blocked: BlockedDispatch | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly limiter: LogRateLimiter;

  constructor(private readonly o: DispatchBlockageOptions) {
    this.limiter = new LogRateLimiter(o.clock, o.logIntervalMs);
  }

  /** The current state (a copy), null when dispatch is not blocked. */
  state(): BlockedDispatch | null {
    return this.blocked ? { ...this.blocked } : null;
  }

  /** CommitLog offset of the blocked record, or -1. */
  get offset(): number {
    return this.blocked?.offset ?? -1;
  }

  isBlocked(): boolean {
    return this.blocked !== null;
  }

  failed(e: DispatchBlockedError): void {
    const offset = e.request.commitLogOffset;
    const b = this.blocked;
    if (b && b.offset === offset) {
      b.attempts++;
      b.reason = e.reason;
      const suppressed = this.limiter.take('blocked');
      if (suppressed !== null) this.o.logger.error({ err: e.cause, offset, attempts: b.attempts, suppressed }, `dispatch still blocked: ${e.reason}`);
      return;
    }
    this.blocked = { offset, reason: e.reason, attempts: 1, sinceMs: this.o.clock.nowMs() };
    this.limiter.reset('blocked');
    this.limiter.take('blocked');
    this.o.logger.error({ err: e.cause, offset, dispatcher: e.dispatcher }, `dispatch blocked: ${e.reason}; retried until it succeeds, puts are refused meanwhile`);
    this.o.onChange?.(e.reason);
  }

  resumed(): void {
    const b = this.blocked;
    if (!b) return;
    this.blocked = null;
    this.cancelTimer();
    this.o.logger.info({ offset: b.offset, attempts: b.attempts, blockedMs: this.o.clock.nowMs() - b.sinceMs }, 'dispatch resumed');
    this.o.onChange?.(null);
  }

  scheduleRetry(): void {
    const retry = this.o.retry;
    if (!this.blocked || !retry || this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) retry();
    }, this.o.retryIntervalMs);
    this.retryTimer.unref();
  }

  /** No more retry timers (shutdown, crash simulation); the state is kept. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}
