/**
 * Receipt handles held by push consumers (ReceiveMessage with `auto_renew: true`), as the Apache
 * proxy's DefaultReceiptHandleManager (enableProxyAutoRenew):
 *
 * - Renewal: while the consumer that received a message is alive (its session exists and has an
 *   open Telemetry stream or made a call within 30 s), the delivery's invisible time is extended
 *   before it runs out, so a slow listener and local FIFO retries do not cause a redelivery to
 *   another consumer. Every `intervalMs` (Apache renewSchedulePeriodMillis, 5 s) a tracked
 *   delivery whose invisibility ends within `2 × intervalMs` (Apache renewAheadTimeMillis, 10 s) is
 *   renewed by `invisibleMs` (Apache renewSliceTimeMillis, 60 s). The handle keeps its version
 *   (PopService.renew), so the client's ack still matches. Tracking stops when the handle is no
 *   longer current (acked, nacked with ChangeInvisibleDuration, dead-lettered, redelivered).
 * - Longest hold: a delivery due for renewal that was received `maxRenewMs` or more ago (Apache
 *   renewMaxTimeMillis, 3 h) is not renewed but nacked, as Apache's DefaultReceiptHandleManager
 *   STOP_RENEW does: its invisible time becomes the group's retry delay for its reconsume count
 *   (`retryDelayMs(attempt − 1)`: the backoff the consumers are told, settings-reply.ts; Apache
 *   asks the group's retry policy), after which it is delivered again, attempt + 1. The client's
 *   handle is then stale (its ack fails, as with Apache).
 * - Clear: when the client is gone (NotifyClientTermination, session expiry, or found dead by a
 *   renewal pass), every delivery it still holds is made visible again after `invisibleMsWhenClear`
 *   (Apache invisibleTimeMillisWhenClear, 1 s) with PopService.changeInvisibleDuration: a pop
 *   state change, logged, flushed and replicated like any other. Apache's CLIENT_UNREGISTER /
 *   clientIsOffline → clearGroup. Deliveries of simple consumers (`auto_renew: false`) are not
 *   tracked, so they are neither renewed nor cleared (as in Apache): they come back when their
 *   invisible_duration ends.
 */
import type { Logger } from '../common/logging/logger.js';
import type { PopService } from '../broker/pop/pop-service.js';
import type { ClientSessions } from './client-sessions.js';

interface Tracked {
  clientId: string;
  group: string;
  handle: string;
  sinceMs: number;
  /** Deliveries before this one (attempt − 1; Apache's reconsumeTimes). */
  reconsumeTimes: number;
}

export interface ReceiptRenewerOptions {
  pop: PopService;
  sessions: ClientSessions;
  now: () => number;
  intervalMs: number;
  invisibleMs: number;
  maxRenewMs: number;
  /** The group's retry delay (ms) of a message delivered `reconsumeTimes` times before (nack after `maxRenewMs`). */
  retryDelayMs: (group: string, reconsumeTimes: number) => number;
  /** Invisible time given to the deliveries of a departed client (ms). */
  invisibleMsWhenClear: number;
  logger: Logger;
}

/** A live client that made no call for this long and has no open stream is not renewed (ms). */
const SILENT_CLIENT_MS = 30_000;

export class ReceiptRenewer {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly opts: ReceiptRenewerOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.renewDue(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and releases every tracked delivery (Apache clears all handles on shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const all = [...this.tracked.values()];
    this.tracked.clear();
    await this.release(all);
  }

  /** Tracks a push delivery (`attempt`: 1 for a first delivery). */
  track(clientId: string, group: string, handle: string, attempt = 1): void {
    if (clientId === '') return;
    this.tracked.set(handle, { clientId, group, handle, sinceMs: this.opts.now(), reconsumeTimes: Math.max(0, attempt - 1) });
  }

  get size(): number {
    return this.tracked.size;
  }

  /**
   * The client is gone: its tracked deliveries become visible after `invisibleMsWhenClear`.
   * Returns how many were released (handles already acked or redelivered are skipped).
   */
  async clearClient(clientId: string): Promise<number> {
    const mine = [...this.tracked.values()].filter((t) => t.clientId === clientId);
    for (const t of mine) this.tracked.delete(t.handle);
    return this.release(mine);
  }

  private async release(list: Tracked[]): Promise<number> {
    let n = 0;
    for (const t of list) {
      try {
        const r = await this.opts.pop.changeInvisibleDuration(t.group, t.handle, this.opts.invisibleMsWhenClear);
        if (r.ok) n++;
      } catch (e) {
        this.opts.logger.error(`releasing a delivery of ${t.clientId} (group ${t.group}) failed: ${(e as Error).message}`);
      }
    }
    if (n > 0) this.opts.logger.info(`released ${n} push deliveries of departed client(s): visible again in ${this.opts.invisibleMsWhenClear} ms`);
    return n;
  }

  private async nackHeldTooLong(t: Tracked, now: number): Promise<void> {
    const delayMs = this.opts.retryDelayMs(t.group, t.reconsumeTimes);
    const r = await this.opts.pop.changeInvisibleDuration(t.group, t.handle, delayMs);
    if (r.ok) {
      this.opts.logger.warn(`a push delivery of ${t.clientId} (group ${t.group}) was held ${now - t.sinceMs} ms (renewMaxTimeMillis ${this.opts.maxRenewMs}): no longer renewed, delivered again in ${delayMs} ms`);
    }
  }

  /** One renewal pass (also run by the timer). */
  async renewDue(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const now = this.opts.now();
      const departed: Tracked[] = [];
      for (const t of [...this.tracked.values()]) {
        const until = this.opts.pop.invisibleUntilOf(t.group, t.handle);
        if (until === undefined) {
          this.tracked.delete(t.handle);
          continue;
        }
        const session = this.opts.sessions.get(t.clientId);
        const alive = session !== undefined && ([...session.streams].some((w) => !w.closed) || now - session.lastSeenMs < SILENT_CLIENT_MS);
        if (!alive) {
          this.tracked.delete(t.handle);
          departed.push(t);
          continue;
        }
        if (until - now > 2 * this.opts.intervalMs) continue;
        if (now - t.sinceMs >= this.opts.maxRenewMs) {
          this.tracked.delete(t.handle);
          await this.nackHeldTooLong(t, now);
          continue;
        }
        const r = await this.opts.pop.renew(t.group, t.handle, this.opts.invisibleMs);
        if (!r.ok) this.tracked.delete(t.handle);
      }
      await this.release(departed);
    } catch (e) {
      this.opts.logger.error(`receipt renewal failed: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
