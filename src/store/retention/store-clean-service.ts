/**
 * Retention and disk-space guard of a store (RocketMQ `CleanCommitLogService` +
 * `CleanConsumeQueueService` + the disk check, spec §6; policy in docs/retention.md).
 *
 * Two timers (unref'd, started by the store):
 * - disk check every min(1000, cleanResourceInterval) ms (`checkDisk`): probes usage of the
 *   CommitLog and store-root partitions; above diskSpaceWarningLevelRatio the store becomes not
 *   writable (puts get SERVICE_NOT_AVAILABLE with "disk full: usage 91% > …"), and writable again
 *   at or below diskSpaceCleanForciblyRatio. It also retries writing bytes a failed write left
 *   buffered and clears the write-error flag when that works.
 * - cleaning pass every cleanResourceInterval ms (`runPass`), never two at once:
 *   1. triggers: time (local hour in deleteWhen), space (usage > diskMaxUsedSpaceRatio, or the
 *      probe failed), manual (`executeDeleteFilesManually` arms 20 passes, like RocketMQ);
 *   2. if triggered: delete expired CommitLog files, oldest first, at most deleteFileBatchMax,
 *      deleteCommitLogFilesInterval ms apart; above diskSpaceCleanForciblyRatio (and
 *      cleanFileForciblyEnable) also unexpired ones until usage is back under it; never the file
 *      being written or a file not dispatched yet (commit-log-cleaner.ts);
 *   3. always: retry a hanged first file (released ⇒ deleted now; still held ⇒ forced after
 *      destroyMapedFileIntervalForcibly, tried every redeleteHangedFileInterval), B31;
 *   4. if the CommitLog min offset moved: correct every ConsumeQueue's min offset, delete CQ
 *      files and index files entirely below it (consume-queue-cleaner.ts).
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { StoreConfig } from '../store-config.js';
import { commitLogDir } from '../store-config.js';
import { deleteCommitLogFiles, retryHangedFirstFile, type CommitLogCleanResult, type HangedRetryResult } from './commit-log-cleaner.js';
import { cleanConsumeQueuesAndIndex, type ConsumeQueueCleanResult, type IndexFileDeleter } from './consume-queue-cleaner.js';
import type { DiskUsageProbe } from './disk-usage-probe.js';
import { evaluateDiskSpace, isTimeToDelete, retentionRatios, type DiskSpaceDecision, type RetentionRatios } from './retention-policy.js';
import type { RunningFlags } from './running-flags.js';

/** Passes a manual trigger keeps armed (RocketMQ `MAX_MANUAL_DELETE_FILE_TIMES`). */
export const MANUAL_DELETE_PASSES = 20;
/** Disk-check cadence cap in ms. */
export const DISK_CHECK_INTERVAL_MS = 1000;

export interface StoreCleanServiceDeps {
  config: StoreConfig;
  commitLog: CommitLog;
  cqStore: ConsumeQueueStore;
  /** The IndexService, when the index is enabled. */
  index: IndexFileDeleter | null;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
  probe: DiskUsageProbe;
  flags: RunningFlags;
  /** CommitLog offset below which every record has been dispatched (files ending above are kept). */
  dispatchedOffset: () => number;
}

export interface DiskCheckReport extends DiskSpaceDecision {
  commitLogRatio: number;
  logicsRatio: number;
}

export interface CleanPassReport {
  trigger: { time: boolean; space: boolean; manual: boolean };
  disk: DiskCheckReport;
  /** Null when no trigger held (nothing was considered for deletion). */
  commitLog: CommitLogCleanResult | null;
  hanged: HangedRetryResult;
  /** Null when the CommitLog min offset had not moved. */
  consumeQueues: ConsumeQueueCleanResult | null;
  minPhyOffset: number;
}

export class StoreCleanService {
  private readonly ratios: RetentionRatios;
  private readonly logger: Logger;
  private diskTimer: NodeJS.Timeout | null = null;
  private passTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<CleanPassReport> | null = null;
  private manualPassesLeft = 0;
  private lastCleanedMinPhy = -1;
  private lastHangedRetryMs = 0;
  private wasAboveWarning = false;
  private wakeSleepers = new Set<() => void>();
  lastPass: CleanPassReport | null = null;

  constructor(private readonly deps: StoreCleanServiceDeps) {
    this.ratios = retentionRatios(deps.config);
    this.logger = deps.logger;
    this.lastHangedRetryMs = deps.clock.nowMs();
  }

  start(): void {
    this.checkDisk();
    this.scheduleDiskCheck();
    this.schedulePass();
  }

  private scheduleDiskCheck(): void {
    if (this.stopped) return;
    this.diskTimer = setTimeout(() => {
      try {
        this.checkDisk();
      } catch (e) {
        this.logger.error({ err: e }, 'disk check failed');
      }
      this.scheduleDiskCheck();
    }, Math.min(DISK_CHECK_INTERVAL_MS, this.deps.config.cleanResourceInterval));
    this.diskTimer.unref();
  }

  private schedulePass(): void {
    if (this.stopped) return;
    this.passTimer = setTimeout(() => {
      this.runPass()
        .catch((e) => this.logger.error({ err: e }, 'cleaning pass failed'))
        .finally(() => this.schedulePass());
    }, this.deps.config.cleanResourceInterval);
    this.passTimer.unref();
  }

  /**
   * Probes disk usage and updates the disk-full flag; retries a failed write (see the module
   * comment). Returns what it saw.
   */
  checkDisk(): DiskCheckReport {
    const { probe, config, flags } = this.deps;
    const commitLogRatio = probe.usedRatio(commitLogDir(config));
    const logicsRatio = probe.usedRatio(config.storePathRootDir);
    const d = evaluateDiskSpace({ commitLogRatio, logicsRatio, wasDiskFull: flags.isDiskFull() }, this.ratios);
    if (d.diskFullReason !== null && !flags.isDiskFull()) this.logger.error({ commitLogRatio, logicsRatio }, `${d.diskFullReason}; puts are refused`);
    if (d.diskFullReason === null && flags.isDiskFull()) this.logger.info({ commitLogRatio, logicsRatio }, 'disk usage back to normal; puts are accepted again');
    if (d.aboveWarning && !this.wasAboveWarning) this.logger.warn({ commitLogRatio, logicsRatio }, 'disk usage above diskSpaceWarningLevelRatio');
    this.wasAboveWarning = d.aboveWarning;
    flags.setDiskFull(d.diskFullReason);
    if (flags.hasWriteError()) this.retryFailedWrites(d);
    return { ...d, commitLogRatio, logicsRatio };
  }

  /** Writes bytes a failed write left buffered; clears the write-error flag once that works. */
  private retryFailedWrites(d: DiskSpaceDecision): void {
    const { commitLog, cqStore, flags } = this.deps;
    try {
      commitLog.mfq.commit(0);
      cqStore.commitAll();
    } catch (e) {
      this.logger.debug({ err: e }, 'buffered bytes still cannot be written');
      return;
    }
    if (d.aboveWarning) return;
    this.logger.info('buffered bytes written again; puts are accepted again');
    flags.setWriteError(null);
  }

  /**
   * Arms MANUAL_DELETE_PASSES passes that delete expired files at any hour (RocketMQ
   * `executeDeleteFilesManually`, admin request DELETE_EXPIRED_COMMITLOG) and runs one now.
   */
  executeDeleteFilesManually(): Promise<CleanPassReport> {
    this.manualPassesLeft = MANUAL_DELETE_PASSES;
    this.logger.info('manual deletion of expired CommitLog files requested');
    return this.runPass();
  }

  /** Runs one cleaning pass (waits for a pass already running, then runs another). */
  runPass(): Promise<CleanPassReport> {
    const previous = this.running ?? Promise.resolve(null);
    const run = previous.catch(() => null).then(() => this.pass());
    this.running = run;
    return run.finally(() => {
      if (this.running === run) this.running = null;
    });
  }

  /**
   * A component that still needs CommitLog records (the timer wheel) names the offset from which
   * it needs them: files ending above it are kept by time-based, manual and "space to delete"
   * passes. Under disk pressure that must free space now (cleanImmediately) the hold is ignored
   * with a warning, as availability comes first there (Apache keeps nothing for timers at all).
   * Null removes the hold.
   */
  setRetentionHold(hold: (() => number) | null): void {
    this.retentionHold = hold;
  }

  private retentionHold: (() => number) | null = null;

  private keepFromOffset(disk: DiskCheckReport): number {
    const dispatched = this.deps.dispatchedOffset();
    if (!this.retentionHold) return dispatched;
    let held: number;
    try {
      held = this.retentionHold();
    } catch (e) {
      this.logger.error(`retention hold failed (${(e as Error).message}); ignored`);
      return dispatched;
    }
    if (!(held < dispatched)) return dispatched;
    if (disk.cleanImmediately) {
      this.logger.warn(`disk usage forces deletion: the retention hold at CommitLog offset ${held} (pending timer messages) is ignored`);
      return dispatched;
    }
    return held;
  }

  private async pass(): Promise<CleanPassReport> {
    const { config, commitLog, clock, fs } = this.deps;
    const now = clock.nowMs();
    const disk = this.checkDisk();
    const trigger = { time: isTimeToDelete(config.deleteWhen, now), space: disk.spaceToDelete, manual: this.manualPassesLeft > 0 };
    if (trigger.manual) this.manualPassesLeft--;
    let clResult: CommitLogCleanResult | null = null;
    if (!this.stopped && (trigger.time || trigger.space || trigger.manual)) {
      let first = true;
      clResult = await deleteCommitLogFiles(
        commitLog.mfq,
        fs,
        {
          nowMs: now,
          fileReservedMs: config.fileReservedTime * 3_600_000,
          forced: () => {
            if (!config.cleanFileForciblyEnable) return false;
            const d = first ? disk : this.checkDisk(); // re-probe after each deletion
            first = false;
            return d.cleanImmediately;
          },
          deleteIntervalMs: config.deleteCommitLogFilesInterval,
          destroyIntervalForciblyMs: config.destroyMapedFileIntervalForcibly,
          batchMax: config.deleteFileBatchMax,
          keepFromOffset: this.keepFromOffset(disk),
          sleep: (ms) => this.sleep(ms),
          onMinMoved: () => this.deps.cqStore.correctMinOffsets(commitLog.getMinOffset()),
        },
        this.logger,
      );
      if (clResult.hanged) this.logger.warn({ filePath: clResult.hanged }, 'CommitLog file still held by a reader; marked unavailable, a later pass deletes it');
    }
    const hanged = this.stopped ? { deleted: null, stillHeld: null } : this.retryHanged(now);
    const minPhy = commitLog.getMinOffset();
    let cqResult: ConsumeQueueCleanResult | null = null;
    if (!this.stopped && minPhy > this.lastCleanedMinPhy && commitLog.mfq.getFiles().length > 0) {
      cqResult = await cleanConsumeQueuesAndIndex(
        this.deps.cqStore,
        this.deps.index,
        minPhy,
        { deleteIntervalMs: config.deleteConsumeQueueFilesInterval, sleep: (ms) => this.sleep(ms) },
        this.logger,
      );
      this.lastCleanedMinPhy = minPhy;
    }
    const report: CleanPassReport = { trigger, disk, commitLog: clResult, hanged, consumeQueues: cqResult, minPhyOffset: minPhy };
    if ((clResult?.deleted.length ?? 0) > 0 || hanged.deleted || (cqResult?.cqFilesDeleted ?? 0) > 0 || (cqResult?.indexFilesDeleted ?? 0) > 0) {
      this.logger.info(
        {
          commitLogFiles: clResult?.deleted.length ?? 0,
          forced: clResult?.forcedCount ?? 0,
          hangedDeleted: hanged.deleted !== null,
          cqFiles: cqResult?.cqFilesDeleted ?? 0,
          indexFiles: cqResult?.indexFilesDeleted ?? 0,
          minPhyOffset: minPhy,
          trigger,
        },
        'cleaning pass deleted files',
      );
    }
    this.lastPass = report;
    return report;
  }

  private retryHanged(now: number): HangedRetryResult {
    const mayForce = now - this.lastHangedRetryMs >= this.deps.config.redeleteHangedFileInterval;
    const r = retryHangedFirstFile(this.deps.commitLog.mfq, this.deps.config.destroyMapedFileIntervalForcibly, mayForce, this.logger);
    if (mayForce) this.lastHangedRetryMs = now;
    return r;
  }

  /** Resolves true after `ms`, or false at once when the service stops. */
  private sleep(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(t);
        this.wakeSleepers.delete(wake);
        resolve(!this.stopped);
      };
      const t = setTimeout(wake, ms);
      this.wakeSleepers.add(wake);
    });
  }

  /** Stops the timers and waits for a running pass to finish (it stops at its next wait). */
  async stop(): Promise<void> {
    this.stopAbruptly();
    if (this.running) await this.running.catch(() => undefined);
  }

  /** Stops the timers at once; a running pass gives up at its next wait. */
  stopAbruptly(): void {
    this.stopped = true;
    if (this.diskTimer) clearTimeout(this.diskTimer);
    if (this.passTimer) clearTimeout(this.passTimer);
    this.diskTimer = null;
    this.passTimer = null;
    for (const wake of [...this.wakeSleepers]) wake();
  }
}
