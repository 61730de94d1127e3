/**
 * Periodic ConsumeQueue flush (RocketMQ `FlushConsumeQueueService`, spec §4.5): every
 * `intervalMs` flush each queue with `leastPages`; every `thoroughIntervalMs` flush everything
 * (leastPages = 0) and force the checkpoint. After any round that left no unflushed entry, the
 * checkpoint's logicsMsgTimestamp becomes the store time captured BEFORE that round, so the
 * checkpoint never claims more than what is on disk (RocketMQ updates it on every CQ write,
 * which can claim entries a power loss then takes away).
 * A queue whose commit or fdatasync fails is recorded by the ConsumeQueueStore (LOGICS_QUEUE_ERROR,
 * consume-queue-write-errors.ts; RocketMQ only logs it) and the round goes on with the other
 * queues; such a round is not complete, so the logics timestamp stays behind it.
 * Shutdown: up to 3 rounds of flush(0), until one leaves nothing unflushed.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { StoreCheckpoint } from '../recovery/store-checkpoint.js';
import type { ConsumeQueueStore } from './consume-queue-store.js';

export class FlushConsumeQueueService {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: Promise<void> | null = null;
  private lastThoroughMs = Date.now();

  constructor(
    private readonly cqStore: ConsumeQueueStore,
    private readonly checkpoint: StoreCheckpoint,
    /** Store time of the latest ConsumeQueue write (in memory). */
    private readonly latestLogicsTimestamp: () => number,
    private readonly opts: { intervalMs: number; leastPages: number; thoroughIntervalMs: number },
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.tick(false).then(() => undefined).finally(() => {
        this.current = null;
        this.schedule();
      });
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  private async tick(forceThorough: boolean): Promise<boolean> {
    const now = Date.now();
    const thorough = forceThorough || now >= this.lastThoroughMs + this.opts.thoroughIntervalMs;
    if (thorough) this.lastThoroughMs = now;
    const captured = this.latestLogicsTimestamp();
    try {
      const complete = await this.cqStore.flushAll(thorough ? 0 : this.opts.leastPages);
      // everything written up to `captured` is now on disk
      if (complete && captured > this.checkpoint.logicsMsgTimestamp) this.checkpoint.logicsMsgTimestamp = captured;
      if (thorough) await this.checkpoint.flush();
      return complete;
    } catch (e) {
      this.logger.error({ err: e }, 'ConsumeQueue flush failed');
      return false;
    }
  }

  /** Flushes everything now and records the logics time in the checkpoint (no force of other fields). */
  async flushThorough(): Promise<void> {
    await this.tick(true);
  }

  /** Crash simulation: stop the timer, flush nothing. */
  stopAbruptly(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.current) await this.current;
    for (let i = 0; i < 3; i++) if (await this.tick(true)) break;
  }
}
