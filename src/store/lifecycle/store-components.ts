/**
 * Builds the parts of a store, before recovery (RocketMQ `DefaultMessageStore` constructor +
 * `load()`, spec §3.3 steps 1–3): the root directory and its lock, the CommitLog and
 * ConsumeQueues (segment files opened, not yet recovered), the ReputMessageService with its
 * dispatchers (ConsumeQueue builder first and required, then `deps.dispatchers`, the index
 * plugin and `deps.plugins`), the pull service, the checkpoint, the run state and the running
 * flags. Nothing is started and no file is written except the lock.
 *
 * Wiring done here, so no component needs the facade:
 *   running flags → StoreState.setWritable (puts refused with the flags' reason);
 *   dispatch blocked/resumed → runningFlags.setLogicsQueueError (LOGICS_QUEUE_ERROR);
 *   ConsumeQueue commit/flush failing/written again → the same flag, source 'consume-queue-write';
 *   a failed fdatasync of any CommitLog or ConsumeQueue segment → runningFlags.setSyncFailed
 *   (sticky until restart; sync-failure-reporter.ts);
 *   every drive of dispatch goes up to `dispatchLimit` (flushed offset under SYNC_FLUSH, written
 *   under ASYNC, and never past the confirm offset in controller mode; readUnCommitted lifts both).
 *
 * @throws SegmentLoadError for segment files of the wrong size, StoreLockedError when the root
 *   is already open, StoreStartError when the lock cannot be written on a full disk, ConfigError
 *   for bad values; whatever was opened is closed again and the lock released before the error
 *   propagates.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import { nodeFileSystem } from '../../common/fs/node-file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import { createLogger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { systemClock } from '../../common/time/clock.js';
import { CommitLog } from '../commitlog/commit-log.js';
import { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import type { CommitLogDispatcher, StorePlugin, StorePluginFactory } from '../dispatch/commit-log-dispatcher.js';
import { ConsumeQueueDispatcher } from '../dispatch/consume-queue-dispatcher.js';
import { ReputMessageService } from '../dispatch/reput-message-service.js';
import { ConfirmOffset } from '../ha/confirm-offset.js';
import { GetMessageService } from '../get-message/get-message-service.js';
import { IndexPlugin } from '../index/index-plugin.js';
import { StoreCheckpoint } from '../recovery/store-checkpoint.js';
import { StoreLock } from '../recovery/store-files.js';
import { StatfsDiskUsageProbe, type DiskUsageProbe } from '../retention/disk-usage-probe.js';
import { RunningFlags } from '../retention/running-flags.js';
import { prewriteSpaceGate } from '../retention/prewrite-space-gate.js';
import { retentionRatios } from '../retention/retention-policy.js';
import { commitLogDir, parseDelayLevels, type StoreConfig } from '../store-config.js';
import { StoreState } from '../store-state.js';
import { SyncFailureReporter } from './sync-failure-reporter.js';
import { isDiskFullError, storeStartError } from './store-start-error.js';
import type { RecoveryProgressListener } from '../recovery/recovery-progress.js';

/** Rate limit of background segment pre-writing, bytes/s (measured choice: docs/internals/io-engine.md, "Pre-writing"). */
const WARM_MAX_BYTES_PER_SEC = 32_000_000;

export interface MessageStoreDeps {
  clock?: Clock;
  fs?: FileSystem;
  logger?: Logger;
  /** Extra stateless dispatchers, fed after the ConsumeQueue builder (also during recovery). */
  dispatchers?: CommitLogDispatcher[];
  /** Dispatchers with files and a lifecycle (e.g. the IndexService), built once the checkpoint is open. */
  plugins?: StorePluginFactory[];
  /** Physical memory used by the "in memory" pull rule (default os.totalmem()). */
  totalMemoryBytes?: number;
  /** Disk usage source of retention and the disk-full check (default: statfs). */
  diskUsageProbe?: DiskUsageProbe;
  /** Hears start-up recovery progress every few seconds (logged too; recovery-progress.ts). */
  onRecoveryProgress?: RecoveryProgressListener;
}

export interface StoreComponents {
  readonly config: StoreConfig;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly diskUsageProbe: DiskUsageProbe;
  readonly onRecoveryProgress: RecoveryProgressListener | null;
  readonly state: StoreState;
  readonly runningFlags: RunningFlags;
  readonly lock: StoreLock;
  /** `<root>/abort` */
  readonly abortPath: string;
  /** Delay level → delay in ms (messageDelayLevel). */
  readonly delayLevelTableMs: number[];
  readonly commitLog: CommitLog;
  readonly consumeQueueStore: ConsumeQueueStore;
  /** Next queue offset per topic/queue, assigned at append time. */
  readonly queueOffsets: QueueOffsetTable;
  readonly reput: ReputMessageService;
  /** Controller mode's confirm offset, bounding dispatch (ha/confirm-offset.ts); off in classic mode. */
  readonly confirm: ConfirmOffset;
  readonly getMessageService: GetMessageService;
  readonly checkpoint: StoreCheckpoint;
  /** Plugins in dispatch order (the index plugin first when enabled). */
  readonly plugins: StorePlugin[];
  /** The IndexService plugin, present when messageIndexEnable. */
  readonly indexPlugin: IndexPlugin | null;
  /** Store time (epoch ms) of the latest ConsumeQueue write, in memory; feeds checkpoint logicsMsgTimestamp. */
  readonly logics: { latestTimestamp: number };
}

/**
 * Where dispatch may go (Apache `ReputMessageService.getReputEndOffset`), CommitLog bytes:
 * readUnCommitted=true → the written (max) offset; otherwise the flushed offset under SYNC_FLUSH
 * (consumers never see unflushed data), the written offset under ASYNC_FLUSH, in both cases no
 * further than the confirm offset when it bounds (controller mode). `written` overrides the
 * flushed/written offset (the group commit passes the offset its flush reported).
 */
export function dispatchLimit(config: Pick<StoreConfig, 'flushDiskType' | 'readUnCommitted'>, commitLog: CommitLog, confirm: ConfirmOffset, written?: number): number {
  if (config.readUnCommitted) return commitLog.getMaxOffset();
  return confirm.bound(written ?? (config.flushDiskType === 'SYNC_FLUSH' ? commitLog.mfq.getFlushedWhere() : commitLog.getMaxOffset()));
}

/** See the file comment. `config` must be complete (completeStoreConfig). */
export function openStoreComponents(config: StoreConfig, deps: MessageStoreDeps): StoreComponents {
  const fs = deps.fs ?? nodeFileSystem;
  const logger = deps.logger ?? createLogger('store');
  const clock = deps.clock ?? systemClock;
  const root = config.storePathRootDir;
  fs.mkdirp(root);
  const diskUsageProbe = deps.diskUsageProbe ?? new StatfsDiskUsageProbe();
  let lock: StoreLock;
  try {
    lock = StoreLock.acquire(fs, root, path.join(root, 'lock'));
  } catch (e) {
    if (!isDiskFullError(e)) throw e;
    throw storeStartError(`cannot write the store lock ${path.join(root, 'lock')}`, root, diskUsageProbe, e, 'Free disk space and start again.');
  }
  if (lock.tookOverStale) logger.info(`store lock taken over: ${lock.tookOverStale}`);
  let commitLog: CommitLog | undefined;
  let consumeQueueStore: ConsumeQueueStore | undefined;
  try {
    const state = new StoreState();
    const runningFlags = new RunningFlags((writable, reason) => state.setWritable(writable, reason));
    const syncFailures = new SyncFailureReporter(runningFlags, logger.child({ component: 'store' }), clock);
    const delayLevelTableMs = parseDelayLevels(config.messageDelayLevel);
    const cl = new CommitLog({
      dir: commitLogDir(config),
      fileSize: config.mappedFileSizeCommitLog,
      fs,
      clock,
      logger: logger.child({ component: 'commitlog' }),
      maxMessageSize: config.maxMessageSize,
      delayLevelTableMs,
      prewrite: config.warmMapedFileEnable
        ? {
            syncEveryBytes: config.flushLeastPagesWhenWarmMapedFile * 4096,
            maxBytesPerSec: WARM_MAX_BYTES_PER_SEC,
            spaceGate: prewriteSpaceGate(diskUsageProbe, retentionRatios(config)),
          }
        : null,
      onSyncFailed: syncFailures.report,
      asyncCommit: config.commitCommitLogAsync,
    });
    commitLog = cl;
    const cqStore = new ConsumeQueueStore({
      rootDir: path.join(root, 'consumequeue'),
      fileSize: config.mappedFileSizeConsumeQueue,
      fs,
      clock,
      logger: logger.child({ component: 'consumequeue' }),
      onWriteErrorChange: (reason) => runningFlags.setLogicsQueueError(reason, 'consume-queue-write'),
      onSyncFailed: syncFailures.report,
    });
    consumeQueueStore = cqStore;
    const logics = { latestTimestamp: 0 };
    const confirm = new ConfirmOffset(() => cl.getMaxOffset());
    const reput = new ReputMessageService(cl, delayLevelTableMs, logger.child({ component: 'dispatch' }), {
      clock,
      limit: () => dispatchLimit(config, cl, confirm),
      onBlockedChange: (reason) => runningFlags.setLogicsQueueError(reason, 'dispatch'),
    });
    reput.addDispatcher(
      new ConsumeQueueDispatcher(cqStore, (ts) => {
        if (ts > logics.latestTimestamp) logics.latestTimestamp = ts;
      }),
    );
    for (const d of deps.dispatchers ?? []) reput.addDispatcher(d);
    const getMessageService = new GetMessageService(cl, cqStore, config, deps.totalMemoryBytes);
    cl.load();
    cqStore.load();
    const checkpoint = StoreCheckpoint.open(fs, path.join(root, 'checkpoint'));
    const plugins: StorePlugin[] = [];
    const pluginCtx = { config, fs, clock, logger, checkpoint, onSyncFailed: syncFailures.report };
    let indexPlugin: IndexPlugin | null = null;
    if (config.messageIndexEnable) {
      indexPlugin = new IndexPlugin(pluginCtx);
      plugins.push(indexPlugin);
      reput.addDispatcher(indexPlugin);
    }
    for (const factory of deps.plugins ?? []) {
      const plugin = factory(pluginCtx);
      plugins.push(plugin);
      reput.addDispatcher(plugin);
    }
    return {
      config,
      fs,
      clock,
      logger,
      diskUsageProbe,
      onRecoveryProgress: deps.onRecoveryProgress ?? null,
      state,
      runningFlags,
      lock,
      abortPath: path.join(root, 'abort'),
      delayLevelTableMs,
      commitLog: cl,
      consumeQueueStore: cqStore,
      queueOffsets: new QueueOffsetTable(),
      reput,
      confirm,
      getMessageService,
      checkpoint,
      plugins,
      indexPlugin,
      logics,
    };
  } catch (e) {
    // close whatever was opened before the failure, then give the root back
    commitLog?.mfq.shutdownAbruptly(false);
    consumeQueueStore?.shutdownAbruptly(false);
    lock.release();
    throw e;
  }
}
