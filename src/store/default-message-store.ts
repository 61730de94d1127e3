/**
 * DefaultMessageStore: wiring and lifecycle of the store; every operation is delegated to
 * CommitLog, ConsumeQueueStore, ReputMessageService, the flush services, GetMessageService and
 * recovery (RocketMQ `DefaultMessageStore`, spec §3.3 start-up order).
 *
 * open(): lock → abort file present? (⇒ abnormal recovery) → load CommitLog and ConsumeQueues →
 * checkpoint → recover (report in `recoveryReport`) → start flush services, checkpoint timer →
 * create the abort file.
 * shutdown(): stop services, final commit + flush of CommitLog and ConsumeQueues, force the
 * checkpoint, remove the abort file when dispatch is caught up, release the lock.
 */
import * as path from 'node:path';
import type { FileSystem } from '../common/fs/file-system.js';
import { nodeFileSystem } from '../common/fs/node-file-system.js';
import type { Logger } from '../common/logging/logger.js';
import { createLogger } from '../common/logging/logger.js';
import type { Clock } from '../common/time/clock.js';
import { systemClock } from '../common/time/clock.js';
import type { MessageExt, MessageInner } from '../common/message/message.js';
import { MessageConst } from '../common/message/message-const.js';
import { decodeRecord } from '../common/message/record-codec.js';
import { TsmqError } from '../common/errors.js';
import { CommitLog } from './commitlog/commit-log.js';
import { FlushRealTimeService, GroupCommitService, type FlushManager } from './commitlog/flush-services.js';
import { ConsumeQueueStore } from './consumequeue/consume-queue-store.js';
import { FlushConsumeQueueService } from './consumequeue/flush-consume-queue-service.js';
import { QueueOffsetTable } from './consumequeue/queue-offset-table.js';
import type { CommitLogDispatcher, StorePlugin, StorePluginFactory } from './dispatch/commit-log-dispatcher.js';
import { ConsumeQueueDispatcher } from './dispatch/consume-queue-dispatcher.js';
import { ReputMessageService } from './dispatch/reput-message-service.js';
import { GetMessageService } from './get-message/get-message-service.js';
import type {
  BoundaryType,
  GetMessageResult,
  MessageArrivingListener,
  MessageFilter,
  MessageStore,
  PutMessageResult,
  QueryMessageResult,
} from './message-store.js';
import { StoreCheckpoint } from './recovery/store-checkpoint.js';
import { IndexPlugin } from './index/index-plugin.js';
import { queryMessage } from './query/query-message-service.js';
import { StoreLock, createAbortFile } from './recovery/store-files.js';
import { recoverStore, type RecoveryReport } from './recovery/store-recovery.js';
import { commitLogDir, completeStoreConfig, parseDelayLevels, type StoreConfig } from './store-config.js';
import { StatfsDiskUsageProbe, type DiskUsageProbe } from './retention/disk-usage-probe.js';
import { RunningFlags, describeWriteError } from './retention/running-flags.js';
import { StoreCleanService, type CleanPassReport } from './retention/store-clean-service.js';
import { appendReplicatedBytes, ReplicatedStoreTimeDispatcher, truncateReplicatedLog, type TruncateReport } from './ha/replicated-log.js';
import { StoreReplication, type StartHAOptions } from './ha/store-replication.js';

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
}

export class DefaultMessageStore implements MessageStore {
  readonly config: StoreConfig;
  readonly commitLog: CommitLog;
  readonly consumeQueueStore: ConsumeQueueStore;
  readonly checkpoint: StoreCheckpoint;
  readonly reput: ReputMessageService;
  /** What start-up recovery found and did. */
  recoveryReport!: RecoveryReport;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  private readonly queueOffsets = new QueueOffsetTable();
  private readonly getMessageService: GetMessageService;
  private readonly lock: StoreLock;
  private flushManager!: FlushManager;
  private cqFlushService!: FlushConsumeQueueService;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private latestLogicsTimestamp = 0;
  private shutdownState: 'running' | 'stopping' | 'stopped' = 'running';
  /** Why puts are refused (e.g. disk full), null when writable (RocketMQ running flags). */
  private notWritableReason: string | null = null;
  private readonly abortPath: string;
  private readonly plugins: StorePlugin[] = [];
  /** The IndexService plugin, present when messageIndexEnable. */
  private indexPlugin: IndexPlugin | null = null;
  /** Classic master/slave replication (src/store/ha), null until startHA(). */
  private replication: StoreReplication | null = null;
  /** Why writes are refused by retention (disk full, failed write); pushes changes to setWritable. */
  readonly runningFlags = new RunningFlags((writable, reason) => this.setWritable(writable, reason));
  /** Retention and disk check (src/store/retention), started with the other services. */
  cleanService: StoreCleanService | null = null;
  private readonly clock: Clock;
  private readonly diskUsageProbe: DiskUsageProbe;

  private constructor(config: StoreConfig, deps: MessageStoreDeps) {
    this.config = config;
    this.fs = deps.fs ?? nodeFileSystem;
    this.logger = deps.logger ?? createLogger('store');
    const clock = deps.clock ?? systemClock;
    this.clock = clock;
    this.diskUsageProbe = deps.diskUsageProbe ?? new StatfsDiskUsageProbe();
    const root = config.storePathRootDir;
    this.fs.mkdirp(root);
    this.abortPath = path.join(root, 'abort');
    this.lock = StoreLock.acquire(this.fs, root, path.join(root, 'lock'));
    try {
      const delayLevelTableMs = parseDelayLevels(config.messageDelayLevel);
      this.commitLog = new CommitLog({
        dir: commitLogDir(config),
        fileSize: config.mappedFileSizeCommitLog,
        fs: this.fs,
        clock,
        logger: this.logger.child({ component: 'commitlog' }),
        maxMessageSize: config.maxMessageSize,
        delayLevelTableMs,
        prewrite: config.warmMapedFileEnable ? { syncEveryBytes: config.flushLeastPagesWhenWarmMapedFile * 4096, maxBytesPerSec: WARM_MAX_BYTES_PER_SEC } : null,
      });
      this.consumeQueueStore = new ConsumeQueueStore({
        rootDir: path.join(root, 'consumequeue'),
        fileSize: config.mappedFileSizeConsumeQueue,
        fs: this.fs,
        clock,
        logger: this.logger.child({ component: 'consumequeue' }),
      });
      this.reput = new ReputMessageService(this.commitLog, delayLevelTableMs, this.logger.child({ component: 'dispatch' }));
      this.reput.addDispatcher(
        new ConsumeQueueDispatcher(this.consumeQueueStore, (ts) => {
          if (ts > this.latestLogicsTimestamp) this.latestLogicsTimestamp = ts;
        }),
      );
      for (const d of deps.dispatchers ?? []) this.reput.addDispatcher(d);
      this.getMessageService = new GetMessageService(this.commitLog, this.consumeQueueStore, config, deps.totalMemoryBytes);
      this.commitLog.load();
      this.consumeQueueStore.load();
      this.checkpoint = StoreCheckpoint.open(this.fs, path.join(root, 'checkpoint'));
      const pluginCtx = { config, fs: this.fs, clock, logger: this.logger, checkpoint: this.checkpoint };
      if (config.messageIndexEnable) {
        this.indexPlugin = new IndexPlugin(pluginCtx);
        this.plugins.push(this.indexPlugin);
        this.reput.addDispatcher(this.indexPlugin);
      }
      for (const factory of deps.plugins ?? []) {
        const plugin = factory(pluginCtx);
        this.plugins.push(plugin);
        this.reput.addDispatcher(plugin);
      }
    } catch (e) {
      // close whatever was opened before the failure, then give the root back
      const partial = this as { commitLog?: CommitLog; consumeQueueStore?: ConsumeQueueStore };
      partial.commitLog?.mfq.shutdownAbruptly(false);
      partial.consumeQueueStore?.shutdownAbruptly(false);
      this.lock.release();
      throw e;
    }
  }

  /**
   * Opens (loading and recovering) or creates a store.
   * @throws SegmentLoadError for segment files of the wrong size, StoreLockedError when already open,
   *   ConfigError for bad config values.
   */
  static async open(config: Partial<StoreConfig>, deps: MessageStoreDeps = {}): Promise<DefaultMessageStore> {
    const store = new DefaultMessageStore(completeStoreConfig(config), deps);
    try {
      await store.recoverAndStart();
    } catch (e) {
      store.closeAbruptly({ commitPending: false });
      throw e;
    }
    return store;
  }

  private async recoverAndStart(): Promise<void> {
    const lastExitOK = !this.fs.exists(this.abortPath);
    let rebuildFromPhyOffset: number | null = null;
    for (const p of this.plugins) {
      const from = p.load?.(lastExitOK).rebuildFromPhyOffset ?? null;
      if (from !== null) rebuildFromPhyOffset = rebuildFromPhyOffset === null ? from : Math.min(rebuildFromPhyOffset, from);
    }
    this.recoveryReport = await recoverStore(lastExitOK ? 'normal' : 'abnormal', {
      commitLog: this.commitLog,
      cqStore: this.consumeQueueStore,
      checkpoint: this.checkpoint,
      queueOffsets: this.queueOffsets,
      dispatch: (req) => this.reput.dispatchOne(req),
      rebuildFromPhyOffset,
      checkCrc: this.config.checkCRCOnRecover,
      delayLevelTableMs: parseDelayLevels(this.config.messageDelayLevel),
      logger: this.logger,
    });
    this.latestLogicsTimestamp = this.checkpoint.logicsMsgTimestamp;
    this.reput.setReputFromOffset(this.commitLog.getMaxOffset());
    // warmMapedFileEnable: a fresh store's first segment is pre-written before puts are accepted
    if (this.config.warmMapedFileEnable && this.config.brokerRole !== 'SLAVE') await this.commitLog.mfq.prepareFirstFile(this.commitLog.getMaxOffset());
    this.startServices();
    createAbortFile(this.fs, this.abortPath);
  }

  private startServices(): void {
    const c = this.config;
    const mfq = this.commitLog.mfq;
    const log = this.logger.child({ component: 'flush' });
    if (c.flushDiskType === 'SYNC_FLUSH') {
      this.flushManager = new GroupCommitService(
        mfq,
        c.syncFlushTimeout,
        (flushed, ts) => {
          if (ts) this.checkpoint.physicMsgTimestamp = ts;
          this.reput.drive(flushed);
        },
        log,
      );
    } else {
      this.flushManager = new FlushRealTimeService(
        mfq,
        { intervalMs: c.flushIntervalCommitLog, leastPages: c.flushCommitLogLeastPages, thoroughIntervalMs: c.flushCommitLogThoroughInterval },
        (_flushed, ts) => {
          if (ts) this.checkpoint.physicMsgTimestamp = ts;
        },
        log,
      );
    }
    this.flushManager.start();
    this.cqFlushService = new FlushConsumeQueueService(
      this.consumeQueueStore,
      this.checkpoint,
      () => this.latestLogicsTimestamp,
      { intervalMs: c.flushIntervalConsumeQueue, leastPages: c.flushConsumeQueueLeastPages, thoroughIntervalMs: c.flushConsumeQueueThoroughInterval },
      log,
    );
    this.cqFlushService.start();
    this.checkpointTimer = setInterval(() => {
      this.checkpoint.flush().catch((e) => this.logger.error({ err: e }, 'checkpoint flush failed'));
    }, 1000);
    this.checkpointTimer.unref();
    this.cleanService = new StoreCleanService({
      config: c,
      commitLog: this.commitLog,
      cqStore: this.consumeQueueStore,
      index: this.indexPlugin?.service ?? null,
      fs: this.fs,
      clock: this.clock,
      logger: this.logger.child({ component: 'retention' }),
      probe: this.diskUsageProbe,
      flags: this.runningFlags,
      dispatchedOffset: () => this.reput.getReputFromOffset(),
    });
    this.cleanService.start();
  }

  /** Under SYNC_FLUSH dispatch stops at the flushed offset, under ASYNC_FLUSH at the written offset. */
  private confirmOffset(): number {
    return this.config.flushDiskType === 'SYNC_FLUSH' ? this.commitLog.mfq.getFlushedWhere() : this.commitLog.getMaxOffset();
  }

  async putMessage(msg: MessageInner): Promise<PutMessageResult> {
    if (this.shutdownState !== 'running') return { status: 'SERVICE_NOT_AVAILABLE', remark: 'message store has been shut down' };
    if (this.config.brokerRole === 'SLAVE') return { status: 'SERVICE_NOT_AVAILABLE', remark: 'message store is a slave; puts are refused' };
    if (this.notWritableReason !== null) return { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: ${this.notWritableReason}` };
    const failedCommit = this.commitLog.mfq.getLastMappedFile()?.commitError;
    if (failedCommit) return this.refuseAfterWriteError(failedCommit);
    let out: ReturnType<CommitLog['append']>;
    try {
      out = this.commitLog.append(msg, this.queueOffsets);
    } catch (e) {
      return this.refuseAfterWriteError(e);
    }
    if (out.status !== 'PUT_OK') {
      // the end-of-file filler of a roll could not be written: a write failure, not a file-creation one
      const failedWrite = out.status === 'CREATE_MAPPED_FILE_FAILED' ? this.commitLog.mfq.getLastMappedFile()?.commitError : null;
      return failedWrite ? this.refuseAfterWriteError(failedWrite) : { status: out.status, remark: out.remark };
    }
    const r = out.appendResult;
    this.reput.enqueue(out.dispatch);
    if (this.config.flushDiskType === 'ASYNC_FLUSH') this.reput.drive(this.commitLog.getMaxOffset());
    const nextOffset = r.wroteOffset + r.wroteBytes;
    this.replication?.notifyAppended();
    const wait = msg.properties.get(MessageConst.WAIT) !== 'false';
    const flush = this.flushManager.handleDiskFlush(nextOffset, wait);
    // SYNC_MASTER (4.x semantics, docs/ha.md): wait for a slave ack in parallel with the flush
    const replica = wait && this.config.brokerRole === 'SYNC_MASTER' ? (this.replication?.handleHA(nextOffset) ?? { status: 'SLAVE_NOT_AVAILABLE' as const, remark: 'HA service not started' }) : null;
    const status = typeof flush === 'string' ? flush : await flush;
    if (status !== 'PUT_OK') return { status, appendResult: r, remark: 'sync flush did not complete within syncFlushTimeout' };
    const rs = replica === null ? null : replica instanceof Promise ? await replica : replica;
    return rs === null || rs.status === 'PUT_OK' ? { status, appendResult: r } : { status: rs.status, appendResult: r, remark: rs.remark ?? rs.status };
  }

  /**
   * Starts replication for this store's role (RocketMQ starts it in `DefaultMessageStore.start`;
   * tsmq waits for the broker, which knows the ports): masters listen on `opts.listenPort`,
   * a SLAVE connects to `opts.masterAddress` / haMasterAddress. @throws the listen error.
   */
  async startHA(opts: StartHAOptions): Promise<StoreReplication> {
    this.assertOpen();
    if (this.replication) throw new Error('HA already started');
    if (this.config.brokerRole === 'SLAVE') this.reput.addDispatcher(new ReplicatedStoreTimeDispatcher(this.commitLog));
    this.replication = await StoreReplication.start(this.config, this.commitLog, this, opts, this.logger.child({ component: 'ha' }));
    return this.replication;
  }

  /** The replication role started by startHA (null before). */
  getReplication(): StoreReplication | null {
    return this.replication;
  }

  /** CommitLog segment size in bytes. */
  get commitLogFileSize(): number {
    return this.config.mappedFileSizeCommitLog;
  }

  /**
   * SLAVE: appends replicated CommitLog bytes verbatim at `offset` (= the CommitLog max offset,
   * or a segment start when empty); `dispatchReplicated()` then builds ConsumeQueues and index.
   * @throws HAProtocolError on a misplaced offset, or the write error.
   */
  appendToCommitLog(offset: number, src: Buffer, start: number, length: number): void {
    this.assertOpen();
    appendReplicatedBytes(this.commitLog, offset, src, start, length);
  }

  /** SLAVE: dispatches replicated records up to the confirm offset (flushed under SYNC_FLUSH). */
  dispatchReplicated(): void {
    if (this.shutdownState !== 'running') return;
    const min = this.commitLog.getMinOffset();
    if (this.reput.getReputFromOffset() < min) this.reput.setReputFromOffset(min); // empty slave started mid-stream
    if (this.config.flushDiskType === 'ASYNC_FLUSH') this.reput.drive(this.commitLog.getMaxOffset());
    else void this.flushManager.handleDiskFlush(this.commitLog.getMaxOffset(), false); // the group commit drives dispatch
  }

  /**
   * SLAVE: drops CommitLog data at and after `offset` (the master does not have it): see
   * src/store/ha/replicated-log.ts. No-op when offset ≥ max offset.
   */
  truncateFiles(offset: number): Promise<TruncateReport> {
    this.assertOpen();
    return truncateReplicatedLog(
      { commitLog: this.commitLog, cqStore: this.consumeQueueStore, checkpoint: this.checkpoint, reput: this.reput, queueOffsets: this.queueOffsets, logger: this.logger },
      offset,
    );
  }

  /** A CommitLog write failed (e.g. ENOSPC): refuse puts until retention sees writes work again. */
  private refuseAfterWriteError(err: unknown): PutMessageResult {
    const reason = describeWriteError(err);
    if (!this.runningFlags.hasWriteError()) this.logger.error({ err }, `CommitLog write failed; puts are refused until it works again: ${reason}`);
    this.runningFlags.setWriteError(reason);
    return { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: ${reason}` };
  }

  /**
   * Deletes expired CommitLog files now, at any hour, and keeps doing so for the next 20
   * cleaning passes (RocketMQ `executeDeleteFilesManually`, admin DELETE_EXPIRED_COMMITLOG).
   */
  executeDeleteFilesManually(): Promise<CleanPassReport> {
    this.assertOpen();
    return this.cleanService!.executeDeleteFilesManually();
  }

  async getMessage(
    _group: string,
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter?: MessageFilter | null,
  ): Promise<GetMessageResult> {
    this.assertOpen();
    return this.getMessageService.getMessage(topic, queueId, offset, maxMsgNums, filter ?? null);
  }

  /** getMessage with an explicit total size limit (RocketMQ 5.x `maxTotalMsgSize`). */
  getMessageWithSizeLimit(topic: string, queueId: number, offset: number, maxMsgNums: number, maxTotalMsgSize: number, filter?: MessageFilter | null): GetMessageResult {
    this.assertOpen();
    return this.getMessageService.getMessage(topic, queueId, offset, maxMsgNums, filter ?? null, maxTotalMsgSize);
  }

  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.consumeQueueStore.find(topic, queueId)?.getMaxOffsetInQueue() ?? 0;
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.consumeQueueStore.find(topic, queueId)?.getMinOffsetInQueue() ?? 0;
  }

  getCommitLogOffsetInQueue(topic: string, queueId: number, consumeQueueOffset: number): number {
    return this.consumeQueueStore.find(topic, queueId)?.getEntry(consumeQueueOffset)?.phyOffset ?? 0;
  }

  async getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number, boundary: BoundaryType = 'LOWER'): Promise<number> {
    const cq = this.consumeQueueStore.find(topic, queueId);
    return cq ? cq.getOffsetInQueueByTime(timestampMs, boundary, this.timeLookup()) : 0;
  }

  async getEarliestMessageTime(topic: string, queueId: number): Promise<number> {
    const cq = this.consumeQueueStore.find(topic, queueId);
    return cq ? cq.getEarliestMessageTime(this.timeLookup()) : -1;
  }

  /** Store time of the record at the CommitLog min offset (-1 if none). */
  async getEarliestMessageTimeOfStore(): Promise<number> {
    const min = this.commitLog.getMinOffset();
    const head = this.commitLog.getData(min, 8);
    if (!head) return -1;
    return this.commitLog.pickupStoreTimestamp(min, head.readInt32BE(0));
  }

  async getMessageStoreTimeStamp(topic: string, queueId: number, consumeQueueOffset: number): Promise<number> {
    const e = this.consumeQueueStore.find(topic, queueId)?.getEntry(consumeQueueOffset);
    return e ? this.commitLog.pickupStoreTimestamp(e.phyOffset, e.size) : -1;
  }

  private timeLookup(): { getStoreTimestamp(o: number, s: number): number; getMinPhyOffset(): number } {
    return {
      getStoreTimestamp: (o, s) => this.commitLog.pickupStoreTimestamp(o, s),
      getMinPhyOffset: () => this.commitLog.getMinOffset(),
    };
  }

  async lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null> {
    const record = this.commitLog.selectOneMessageByOffset(commitLogOffset);
    if (!record) return null;
    try {
      return decodeRecord(record, 0, { readBody: true, checkCrc: false });
    } catch {
      return null;
    }
  }

  async selectOneMessageByOffset(commitLogOffset: number, size?: number): Promise<Buffer | null> {
    return this.commitLog.selectOneMessageByOffset(commitLogOffset, size);
  }

  async queryMessage(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<QueryMessageResult> {
    this.assertOpen();
    return queryMessage(this.indexPlugin?.service ?? null, this.commitLog, this.config.maxMsgsNumBatch, topic, key, maxNum, beginMs, endMs);
  }

  getMinPhyOffset(): number {
    return this.commitLog.getMinOffset();
  }

  getMaxPhyOffset(): number {
    return this.commitLog.getMaxOffset();
  }

  /** CommitLog flushed position (data forced to disk). */
  getFlushedPhyOffset(): number {
    return this.commitLog.mfq.getFlushedWhere();
  }

  getTopicQueueTable(): Map<string, Map<number, number>> {
    return this.consumeQueueStore.getTopicQueueTable();
  }

  setMessageArrivingListener(listener: MessageArrivingListener | null): void {
    this.reput.setMessageArrivingListener(listener);
  }

  async deleteTopics(topics: string[]): Promise<void> {
    this.reput.dropUndispatched(topics, this.commitLog.getMaxOffset());
    for (const t of topics) {
      this.consumeQueueStore.deleteTopic(t);
      this.queueOffsets.remove(t);
    }
  }

  /**
   * Marks the store writable or not (retention sets it when the disk is full, RocketMQ's
   * DISK_FULL running flag). Not writable ⇒ puts return SERVICE_NOT_AVAILABLE with the reason.
   */
  setWritable(writable: boolean, reason = 'disk full'): void {
    this.notWritableReason = writable ? null : reason;
  }

  isWritable(): boolean {
    return this.notWritableReason === null && this.shutdownState === 'running' && this.config.brokerRole !== 'SLAVE';
  }

  /** Bytes written but not yet dispatched to ConsumeQueues. */
  dispatchBehindBytes(): number {
    return this.reput.behindBytes(this.commitLog.getMaxOffset());
  }

  private assertOpen(): void {
    if (this.shutdownState !== 'running') throw new TsmqError('SERVICE_NOT_AVAILABLE', 'message store has been shut down');
  }

  async shutdown(): Promise<void> {
    if (this.shutdownState !== 'running') return;
    this.shutdownState = 'stopping';
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    await this.replication?.shutdown().catch((e) => this.logger.error({ err: e }, 'HA shutdown failed'));
    await this.cleanService?.stop();
    await this.flushManager.shutdown();
    this.reput.drive(this.confirmOffset());
    await this.cqFlushService.shutdown();
    for (const p of this.plugins) {
      try {
        await p.flush?.();
        await p.shutdown?.();
      } catch (e) {
        this.logger.error({ err: e, plugin: p.name }, 'store plugin shutdown failed');
      }
    }
    this.checkpoint.confirmPhyOffset = this.commitLog.mfq.getFlushedWhere();
    await this.checkpoint.flush();
    const caughtUp = this.dispatchBehindBytes() === 0 && this.notWritableReason === null;
    this.commitLog.mfq.shutdown();
    this.consumeQueueStore.shutdown();
    await this.checkpoint.close();
    if (caughtUp) this.fs.unlink(this.abortPath);
    else this.logger.warn({ behindBytes: this.dispatchBehindBytes() }, 'dispatch not caught up or store not writable at shutdown; keeping the abort file');
    this.lock.release();
    this.shutdownState = 'stopped';
  }

  /**
   * Crash simulation for tests: timers stop, every fd is closed, nothing is flushed, the
   * checkpoint is not written and the abort file stays. `commitPending` (default true) hands
   * buffered bytes to the OS first (a process crash after the page cache got them); false loses them.
   */
  closeAbruptly(opts: { commitPending?: boolean } = {}): void {
    const commitPending = opts.commitPending ?? true;
    this.shutdownState = 'stopped';
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    void this.replication?.shutdown().catch(() => undefined); // sockets are destroyed synchronously
    this.cleanService?.stopAbruptly();
    this.flushManager?.stopAbruptly();
    this.cqFlushService?.stopAbruptly();
    this.reput.clearPending();
    this.commitLog.mfq.shutdownAbruptly(commitPending);
    this.consumeQueueStore.shutdownAbruptly(commitPending);
    for (const p of this.plugins) p.closeAbruptly?.();
    this.checkpoint?.closeAbruptly();
    this.lock.release();
  }
}
