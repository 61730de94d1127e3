/**
 * Auto-renewal of push-consumer deliveries (ReceiveMessage with `auto_renew: true`), as the
 * Apache proxy does: while the consumer that received a message is alive (an open Telemetry
 * stream, or a call within the session expiry), its invisible time is extended before it runs
 * out, so slow handlers and local FIFO retries do not cause duplicate deliveries. The handle
 * keeps its version (PopService.renew), so the client's ack still matches.
 *
 * Every `intervalMs`, a tracked delivery whose invisibility ends within `2 × intervalMs` is renewed
 * by `invisibleMs`. Tracking stops when the handle is no longer current (acked, nacked with
 * ChangeInvisibleDuration, dead-lettered, redelivered), when the client is gone, or after
 * `maxRenewMs` in total (then the message becomes visible again as usual).
 */
import type { Logger } from '../common/logging/logger.js';
import type { PopService } from '../broker/pop/pop-service.js';
import type { ClientSessions } from './client-sessions.js';

interface Tracked {
  clientId: string;
  group: string;
  handle: string;
  sinceMs: number;
}

export interface ReceiptRenewerOptions {
  pop: PopService;
  sessions: ClientSessions;
  now: () => number;
  intervalMs: number;
  invisibleMs: number;
  maxRenewMs: number;
  logger: Logger;
}

export class ReceiptRenewer {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly opts: ReceiptRenewerOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.renewDue(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.tracked.clear();
  }

  track(clientId: string, group: string, handle: string): void {
    if (clientId === '') return;
    this.tracked.set(handle, { clientId, group, handle, sinceMs: this.opts.now() });
  }

  get size(): number {
    return this.tracked.size;
  }

  /** One renewal pass (also run by the timer). */
  async renewDue(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const now = this.opts.now();
      for (const t of [...this.tracked.values()]) {
        const until = this.opts.pop.invisibleUntilOf(t.group, t.handle);
        const session = this.opts.sessions.get(t.clientId);
        const alive = session !== undefined && ([...session.streams].some((w) => !w.closed) || now - session.lastSeenMs < 30_000);
        if (until === undefined || !alive || now - t.sinceMs > this.opts.maxRenewMs) {
          this.tracked.delete(t.handle);
          continue;
        }
        if (until - now > 2 * this.opts.intervalMs) continue;
        const r = await this.opts.pop.renew(t.group, t.handle, this.opts.invisibleMs);
        if (!r.ok) this.tracked.delete(t.handle);
      }
    } catch (e) {
      this.opts.logger.error(`receipt renewal failed: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
