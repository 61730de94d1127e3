/**
 * The background services of a running store (RocketMQ `DefaultMessageStore.start`): started
 * after recovery, stopped by shutdown.
 *
 * - CommitLog flush: SYNC_FLUSH → GroupCommitService (each flush drives dispatch up to the
 *   flushed offset, no further than the confirm offset: `dispatchLimit`); ASYNC_FLUSH → FlushRealTimeService. A thorough flush moves the checkpoint's
 *   physicMsgTimestamp to the store time it covers.
 * - ConsumeQueue flush (FlushConsumeQueueService; logicsMsgTimestamp from `logics`).
 * - Checkpoint flush every 1000 ms (unref'd timer; failures logged).
 * - Retention and disk check (StoreCleanService; sets the disk-full / write-error flags).
 *
 * Shutdown is in two steps because the store drains dispatch between them (store-shutdown.ts):
 * `stopBeforeDrain` (checkpoint timer, retention, CommitLog flush), then `stopAfterDrain`
 * (ConsumeQueue flush). `stopAbruptly` stops everything without flushing (crash simulation).
 */
import { FlushRealTimeService, GroupCommitService, type FlushManager } from '../commitlog/flush-services.js';
import { FlushConsumeQueueService } from '../consumequeue/flush-consume-queue-service.js';
import { StoreCleanService } from '../retention/store-clean-service.js';
import { dispatchLimit, type StoreComponents } from './store-components.js';

/** Checkpoint flush period, ms. */
const CHECKPOINT_FLUSH_INTERVAL_MS = 1000;

type ServiceParts = Pick<
  StoreComponents,
  'config' | 'commitLog' | 'consumeQueueStore' | 'checkpoint' | 'reput' | 'confirm' | 'logics' | 'logger' | 'fs' | 'clock' | 'diskUsageProbe' | 'runningFlags' | 'indexPlugin'
>;

export class StoreServices {
  private constructor(
    readonly flushManager: FlushManager,
    readonly cqFlushService: FlushConsumeQueueService,
    readonly cleanService: StoreCleanService,
    private readonly checkpointTimer: NodeJS.Timeout,
  ) {}

  /** Creates and starts every service. */
  static start(c: ServiceParts): StoreServices {
    const cfg = c.config;
    const mfq = c.commitLog.mfq;
    const log = c.logger.child({ component: 'flush' });
    let flushManager: FlushManager;
    if (cfg.flushDiskType === 'SYNC_FLUSH') {
      flushManager = new GroupCommitService(
        mfq,
        cfg.syncFlushTimeout,
        (flushed, ts) => {
          if (ts) c.checkpoint.physicMsgTimestamp = ts;
          c.reput.drive(dispatchLimit(cfg, c.commitLog, c.confirm, flushed));
        },
        log,
      );
    } else {
      flushManager = new FlushRealTimeService(
        mfq,
        { intervalMs: cfg.flushIntervalCommitLog, leastPages: cfg.flushCommitLogLeastPages, thoroughIntervalMs: cfg.flushCommitLogThoroughInterval },
        (_flushed, ts) => {
          if (ts) c.checkpoint.physicMsgTimestamp = ts;
        },
        log,
      );
    }
    flushManager.start();
    const cqFlushService = new FlushConsumeQueueService(
      c.consumeQueueStore,
      c.checkpoint,
      () => c.logics.latestTimestamp,
      { intervalMs: cfg.flushIntervalConsumeQueue, leastPages: cfg.flushConsumeQueueLeastPages, thoroughIntervalMs: cfg.flushConsumeQueueThoroughInterval },
      log,
    );
    cqFlushService.start();
    const checkpointTimer = setInterval(() => {
      c.checkpoint.flush().catch((e) => c.logger.error({ err: e }, 'checkpoint flush failed'));
    }, CHECKPOINT_FLUSH_INTERVAL_MS);
    checkpointTimer.unref();
    const cleanService = new StoreCleanService({
      config: cfg,
      commitLog: c.commitLog,
      cqStore: c.consumeQueueStore,
      index: c.indexPlugin,
      fs: c.fs,
      clock: c.clock,
      logger: c.logger.child({ component: 'retention' }),
      probe: c.diskUsageProbe,
      flags: c.runningFlags,
      dispatchedOffset: () => c.reput.getReputFromOffset(),
    });
    cleanService.start();
    return new StoreServices(flushManager, cqFlushService, cleanService, checkpointTimer);
  }

  /** Stops the periodic checkpoint flush (first thing a shutdown does; idempotent). */
  stopCheckpointTimer(): void {
    clearInterval(this.checkpointTimer);
  }

  /** Clean shutdown, step 1: no more checkpoint timer or retention; final CommitLog flush. */
  async stopBeforeDrain(): Promise<void> {
    this.stopCheckpointTimer();
    await this.cleanService.stop();
    await this.flushManager.shutdown();
  }

  /** Clean shutdown, step 2 (after dispatch drained): final ConsumeQueue flush. */
  async stopAfterDrain(): Promise<void> {
    await this.cqFlushService.shutdown();
  }

  /** Crash simulation: timers stop, nothing is flushed; pending sync-flush waiters get FLUSH_DISK_TIMEOUT. */
  stopAbruptly(): void {
    clearInterval(this.checkpointTimer);
    this.cleanService.stopAbruptly();
    this.flushManager.stopAbruptly();
    this.cqFlushService.stopAbruptly();
  }
}
