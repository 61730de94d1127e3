/**
 * The broker's periodic housekeeping (Apache `BrokerController` scheduled tasks), started by
 * BrokerController.start() after the master services and stopped first in shutdown():
 *
 * - every flushConsumerOffsetInterval ms: persist consumer offsets (consumerOffset.json), then
 *   write again a topic or subscription-group file whose last write failed (ENOSPC, EIO) with
 *   the latest state;
 * - every 10 s (CLIENT_SCAN_INTERVAL_MS, Apache's fixed period): drop consumer and producer
 *   channels not heard from within channelExpiredTimeout.
 *
 * Failures are logged, never thrown. Timers are unref'd (they never keep the process alive).
 */
import type { Logger } from '../common/logging/logger.js';
import type { BrokerContext } from './broker-context.js';

/** Apache scans client channels every 10 s. */
export const CLIENT_SCAN_INTERVAL_MS = 10_000;

export class BrokerPeriodicTasks {
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly ctx: BrokerContext,
    private readonly logger: Logger,
  ) {}

  /** Starts both tasks; `flushConsumerOffsetIntervalMs` is broker.conf flushConsumerOffsetInterval. */
  start(flushConsumerOffsetIntervalMs: number): void {
    this.every(flushConsumerOffsetIntervalMs, () => {
      this.persistOffsets();
      this.retryFailedConfigWrites();
    });
    this.every(CLIENT_SCAN_INTERVAL_MS, () => {
      this.ctx.consumerManager.scanNotActiveChannel();
      this.ctx.producerManager.scanNotActiveChannel();
    });
  }

  /** Idempotent. */
  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  private persistOffsets(): void {
    this.ctx.consumerOffsetManager.persist().catch((e: Error) => this.logger.error(`persist consumer offsets failed: ${e.message}`));
  }

  /** A topic or group write that failed (ENOSPC, EIO) is written again with the latest state. */
  private retryFailedConfigWrites(): void {
    for (const m of [this.ctx.topicConfigManager, this.ctx.subscriptionGroupManager]) {
      m.retryFailedPersist()?.then(
        () => this.logger.info(`${m.filePath} written after an earlier failure`),
        (e: Error) => this.logger.error(`persist ${m.filePath} failed again: ${e.message}`),
      );
    }
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }
}
