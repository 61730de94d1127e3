/**
 * DefaultMessageStore: the MessageStore facade (RocketMQ `DefaultMessageStore`). It only wires
 * and delegates; the work lives in components that never see the facade:
 *
 *   lifecycle/store-components.ts  parts built before recovery (+ MessageStoreDeps)
 *   lifecycle/store-startup.ts     recovery, services start, abort file (spec §3.3)
 *   lifecycle/store-services.ts    flush, ConsumeQueue flush, checkpoint timer, retention
 *   lifecycle/store-shutdown.ts    clean shutdown and crash simulation
 *   put/put-message-service.ts     put path: refusals, append, flush and HA waits, write errors
 *   query/store-reads.ts           pulls, offsets, times, lookups, queryMessage
 *   ha/replica-store-adapter.ts    what a SLAVE's HA client writes through
 *   store-state.ts                 phase and not-writable reason shared by all of them
 *
 * open(): lock → load CommitLog and ConsumeQueues → checkpoint → recover (report in
 * `recoveryReport`) → start services → create the abort file. A failed open closes everything
 * again (nothing flushed) and rethrows. Methods marked "@throws SERVICE_NOT_AVAILABLE" throw a
 * TsmqError with that code once shutdown has begun; putMessage returns it as a status instead.
 */
import type { EncodedBatch } from '../common/message/encoded-batch.js';
import type { MessageExt, MessageInner } from '../common/message/message.js';
import type { ReputMessageService, DispatchStats } from './dispatch/reput-message-service.js';
import type { CommitLog } from './commitlog/commit-log.js';
import type { ConsumeQueueStore } from './consumequeue/consume-queue-store.js';
import { ReplicaStoreAdapter } from './ha/replica-store-adapter.js';
import type { ConfirmSource } from './ha/confirm-offset.js';
import { ReplicatedStoreTimeDispatcher, type TruncateReport } from './ha/replicated-log.js';
import { StoreReplication, type StartHAOptions } from './ha/store-replication.js';
import { openStoreComponents, type MessageStoreDeps, type StoreComponents } from './lifecycle/store-components.js';
import type { StoreServices } from './lifecycle/store-services.js';
import { closeStoreAbruptly, shutdownStore } from './lifecycle/store-shutdown.js';
import { recoverAndStart } from './lifecycle/store-startup.js';
import type {
  BoundaryType,
  ConsumeQueueEntryView,
  GetMessageLendOptions,
  GetMessageResult,
  MessageArrivingListener,
  MessageFilter,
  MessageStore,
  PreparedColumns,
  PreparedMessage,
  PutMessageResult,
  PutMessageStatus,
  PutPreparedResult,
  PutMessagesResult,
  QueryMessageResult,
} from './message-store.js';
import { PutMessageService, type PutMessageCallback, type PutMessageFailure, type ReplicaAck } from './put/put-message-service.js';
import { StoreReads } from './query/store-reads.js';
import type { StoreCheckpoint } from './recovery/store-checkpoint.js';
import type { RecoveryReport } from './recovery/store-recovery.js';
import type { RunningFlags } from './retention/running-flags.js';
import type { CleanPassReport, StoreCleanService } from './retention/store-clean-service.js';
import { completeStoreConfig, type StoreConfig } from './store-config.js';

export type { MessageStoreDeps } from './lifecycle/store-components.js';
export type { DispatchStats } from './dispatch/reput-message-service.js';
export type { PutMessageCallback, PutMessageFailure } from './put/put-message-service.js';

export class DefaultMessageStore implements MessageStore {
  readonly config: StoreConfig;
  readonly commitLog: CommitLog;
  readonly consumeQueueStore: ConsumeQueueStore;
  readonly checkpoint: StoreCheckpoint;
  readonly reput: ReputMessageService;
  /** Why writes are refused (disk full, failed write, logics queue error); pushes changes to setWritable. */
  readonly runningFlags: RunningFlags;
  /** What start-up recovery found and did. */
  recoveryReport!: RecoveryReport;
  private readonly c: StoreComponents;
  private readonly reads: StoreReads;
  private services: StoreServices | null = null;
  private putPath!: PutMessageService;
  private replicaStore!: ReplicaStoreAdapter;
  /** Classic master/slave replication (src/store/ha), null until startHA(). */
  private replication: StoreReplication | null = null;
  private replicatedTimeDispatcher = false;
  private fence: (() => string | null) | null = null;
  private ackOverride: ReplicaAck | null = null;

  private constructor(c: StoreComponents) {
    this.c = c;
    this.config = c.config;
    this.commitLog = c.commitLog;
    this.consumeQueueStore = c.consumeQueueStore;
    this.checkpoint = c.checkpoint;
    this.reput = c.reput;
    this.runningFlags = c.runningFlags;
    this.reads = new StoreReads({
      commitLog: c.commitLog,
      consumeQueueStore: c.consumeQueueStore,
      getMessageService: c.getMessageService,
      index: c.indexPlugin,
      maxMsgsNumBatch: c.config.maxMsgsNumBatch,
    });
  }

  /**
   * Opens (loading and recovering) or creates a store.
   * @throws SegmentLoadError for segment files of the wrong size, StoreLockedError when already open,
   *   ConfigError for bad config values, DispatchBlockedError when recovery cannot write a ConsumeQueue,
   *   StoreStartError when the disk cannot hold the first CommitLog segment (first-segment.ts).
   */
  static async open(config: Partial<StoreConfig>, deps: MessageStoreDeps = {}): Promise<DefaultMessageStore> {
    const store = new DefaultMessageStore(openStoreComponents(completeStoreConfig(config), deps));
    try {
      await store.start();
    } catch (e) {
      store.closeAbruptly({ commitPending: false });
      throw e;
    }
    return store;
  }

  private async start(): Promise<void> {
    const c = this.c;
    const { recoveryReport, services } = await recoverAndStart(c);
    this.recoveryReport = recoveryReport;
    this.services = services;
    this.putPath = new PutMessageService({
      config: c.config,
      state: c.state,
      commitLog: c.commitLog,
      queueOffsets: c.queueOffsets,
      dispatch: c.reput,
      flushManager: services.flushManager,
      replication: () => this.ackOverride ?? this.replication,
      fence: () => this.fence?.() ?? null,
      flags: c.runningFlags,
      logger: c.logger,
    });
    this.replicaStore = new ReplicaStoreAdapter({ ...c, flushManager: services.flushManager });
  }

  putMessage(msg: MessageInner): Promise<PutMessageResult> {
    return this.putPath.putMessage(msg);
  }

  /**
   * `putMessage` for callers with many puts in flight that do not await each one: the same
   * outcome, told to `done(result, msg)` once, synchronously when known at once, else later; no
   * promise per put; an internal error after the call goes to `fail` (see
   * PutMessageService.putMessageWithCallback). `done` and `fail` must not throw.
   */
  putMessageWithCallback(msg: MessageInner, done: PutMessageCallback, fail?: PutMessageFailure): void {
    this.putPath.putMessageWithCallback(msg, done, fail);
  }

  putMessages(msgs: readonly MessageInner[]): Promise<PutMessagesResult> {
    return this.putPath.putMessages(msgs);
  }

  putEncodedBatch(batch: EncodedBatch): Promise<PutMessagesResult> {
    return this.putPath.putEncodedBatch(batch);
  }

  prepareMessage(msg: MessageInner, alloc?: (sizeBytes: number) => Buffer): PreparedMessage | { status: PutMessageStatus; remark: string } {
    return this.c.commitLog.prepare(msg, alloc);
  }

  putPreparedMessages(records: readonly PreparedMessage[] | PreparedColumns): Promise<PutPreparedResult> {
    return this.putPath.putPrepared(records);
  }

  /** Retention and disk check (src/store/retention), running while the store is open. */
  get cleanService(): StoreCleanService | null {
    return this.services?.cleanService ?? null;
  }

  /**
   * Starts replication for this store's role (RocketMQ starts it in `DefaultMessageStore.start`;
   * tsmq waits for the broker, which knows the ports): masters listen on `opts.listenPort`,
   * a SLAVE connects to `opts.masterAddress` / haMasterAddress.
   * @throws the listen error; Error when already started; SERVICE_NOT_AVAILABLE.
   */
  async startHA(opts: StartHAOptions): Promise<StoreReplication> {
    this.c.state.assertOpen();
    if (this.replication) throw new Error('HA already started');
    if (this.config.brokerRole === 'SLAVE') {
      this.replicatedTimeDispatcher = true;
      this.reput.addDispatcher(new ReplicatedStoreTimeDispatcher(this.commitLog));
    }
    this.replication = await StoreReplication.start(this.config, this.commitLog, this.replicaStore, opts, this.c.logger.child({ component: 'ha' }));
    return this.replication;
  }

  /**
   * Controller mode (docs/failover.md): stops the current replication and starts it again as
   * `role`, setting the store's brokerRole (SLAVE, or SYNC_MASTER so puts wait for the
   * replica ack of `setControllerHooks`). Puts are refused by a SLAVE store at once.
   * From the first call on, dispatch is bounded by the confirm offset (ha/confirm-offset.ts):
   * a SLAVE's comes from its master, a master's from `setControllerHooks({ confirm })` (until
   * then its max offset: a new master's sync state set is itself alone).
   * @throws the master's listen error; SERVICE_NOT_AVAILABLE after shutdown.
   */
  async switchReplication(role: 'SLAVE' | 'MASTER', opts: StartHAOptions): Promise<StoreReplication> {
    this.c.state.assertOpen();
    const old = this.replication;
    this.replication = null;
    (this.config as { brokerRole: string }).brokerRole = role === 'SLAVE' ? 'SLAVE' : 'SYNC_MASTER';
    if (role === 'SLAVE') this.c.confirm.actAsSlave(this.reput.getReputFromOffset());
    else this.c.confirm.actAsMaster(null);
    await old?.shutdown();
    if (role === 'SLAVE' && !this.replicatedTimeDispatcher) {
      this.replicatedTimeDispatcher = true;
      this.reput.addDispatcher(new ReplicatedStoreTimeDispatcher(this.commitLog));
    }
    const confirm = this.c.confirm;
    this.replication = await StoreReplication.start(this.config, this.commitLog, this.replicaStore, { ...opts, role, confirmOffset: () => confirm.value() }, this.c.logger.child({ component: 'ha' }));
    return this.replication;
  }

  /**
   * Controller mode hooks: `fence()` returns why puts are refused now (a master whose lease may
   * have expired) or null; `ack` replaces the replication's SYNC_MASTER wait (all sync-state-set
   * members); `confirm` (master) gives the confirm offset bounding dispatch (the sync state set;
   * absent: unchanged). Pass nulls to remove them.
   */
  setControllerHooks(hooks: { fence: (() => string | null) | null; ack: ReplicaAck | null; confirm?: ConfirmSource | null }): void {
    this.fence = hooks.fence;
    this.ackOverride = hooks.ack;
    if (hooks.confirm !== undefined) {
      this.c.confirm.setSource(hooks.confirm);
      this.confirmOffsetChanged();
    }
  }

  /**
   * Controller mode: the confirm offset may have moved (a sync-state-set ack or membership
   * change): dispatch goes up to it (consumers and long polls see the messages) and the HA
   * transfer loops send it to the slaves. Apache's ReputMessageService polls; tsmq drives.
   */
  confirmOffsetChanged(): void {
    if (!this.c.state.isRunning()) return;
    this.reput.driveToLimit();
    this.replication?.notifyAppended();
  }

  /** Where consumers may read up to, CommitLog bytes (Apache `getConfirmOffset`): the max offset outside controller mode. */
  getConfirmOffset(): number {
    return this.c.confirm.value();
  }

  /**
   * Controller mode, a replica becoming master (Apache truncates invalid tail data the same
   * way): dispatches every whole replicated record (waits up to `timeoutMs`), drops a torn
   * record at the CommitLog end (replication stopped mid-record), then rebuilds the queue-offset
   * table from the ConsumeQueues so new messages continue each queue. Returns the CommitLog
   * offset where writes continue.
   */
  async prepareReplicaForWrites(timeoutMs = 10_000): Promise<number> {
    this.c.state.assertOpen();
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    let stillSince = Date.now();
    for (;;) {
      this.reput.drive(this.commitLog.getMaxOffset());
      const at = this.reput.getReputFromOffset();
      if (at >= this.commitLog.getMaxOffset()) break;
      if (at !== last) {
        last = at;
        stillSince = Date.now();
      } else if (Date.now() - stillSince > 200) break; // a torn record: no progress
      if (Date.now() > deadline) throw new Error(`dispatch did not catch up within ${timeoutMs} ms (at ${at} of ${this.commitLog.getMaxOffset()})`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const end = this.reput.getReputFromOffset();
    if (end < this.commitLog.getMaxOffset()) {
      this.c.logger.warn({ from: this.commitLog.getMaxOffset(), to: end }, 'dropping a torn record at the CommitLog end before taking writes');
      await this.replicaStore.truncateFiles(end);
    }
    this.c.queueOffsets.clear();
    for (const q of this.consumeQueueStore.all()) this.c.queueOffsets.set(q.topic, q.queueId, q.getMaxOffsetInQueue());
    return this.commitLog.getMaxOffset();
  }

  /** Drops CommitLog data at and after `offset` with ConsumeQueues and index (replica-store-adapter.ts). */
  truncateReplica(offset: number): Promise<TruncateReport> {
    return this.replicaStore.truncateFiles(offset);
  }

  /** The replication role started by startHA (null before). */
  getReplication(): StoreReplication | null {
    return this.replication;
  }

  /** CommitLog segment size in bytes. */
  get commitLogFileSize(): number {
    return this.config.mappedFileSizeCommitLog;
  }

  /** SLAVE: appends replicated CommitLog bytes verbatim (replica-store-adapter.ts). */
  appendToCommitLog(offset: number, src: Buffer, start: number, length: number): void {
    this.replicaStore.appendToCommitLog(offset, src, start, length);
  }

  /** SLAVE: dispatches replicated records up to the confirm offset (flushed under SYNC_FLUSH). */
  dispatchReplicated(): void {
    this.replicaStore.dispatchReplicated();
  }

  /** SLAVE: drops CommitLog data at and after `offset` (replicated-log.ts); no-op when offset ≥ max. */
  truncateFiles(offset: number): Promise<TruncateReport> {
    return this.replicaStore.truncateFiles(offset);
  }

  /**
   * Deletes expired CommitLog files now, at any hour, and keeps doing so for the next 20
   * cleaning passes (RocketMQ `executeDeleteFilesManually`, admin DELETE_EXPIRED_COMMITLOG).
   * @throws SERVICE_NOT_AVAILABLE
   */
  executeDeleteFilesManually(): Promise<CleanPassReport> {
    this.c.state.assertOpen();
    return this.cleanService!.executeDeleteFilesManually();
  }

  /** @throws SERVICE_NOT_AVAILABLE */
  async getMessage(_group: string, topic: string, queueId: number, offset: number, maxMsgNums: number, filter?: MessageFilter | null, lend?: GetMessageLendOptions | null): Promise<GetMessageResult> {
    this.c.state.assertOpen();
    return this.reads.getMessage(topic, queueId, offset, maxMsgNums, filter ?? null, undefined, lend ?? null);
  }

  /**
   * Hands `GetMessageResult.body` of a getMessage back for reuse by later pulls (the broker does
   * so once the pull reply was written to the socket). Nothing may read the body or its record
   * views afterwards. Anything else is ignored; a body never handed back is simply collected.
   */
  releaseMessageBody(body: Buffer): void {
    this.reads.releaseMessageBody(body);
  }

  /** Pull body pool counters (diagnostics, tests): bodies allocated, reused, handed back. */
  getMessageBodyPoolStats(): { allocated: number; reused: number; released: number } {
    return this.reads.messageBodyPoolStats();
  }

  /** getMessage with an explicit total size limit in bytes (RocketMQ 5.x `maxTotalMsgSize`). @throws SERVICE_NOT_AVAILABLE */
  getMessageWithSizeLimit(topic: string, queueId: number, offset: number, maxMsgNums: number, maxTotalMsgSize: number, filter?: MessageFilter | null): GetMessageResult {
    this.c.state.assertOpen();
    return this.reads.getMessage(topic, queueId, offset, maxMsgNums, filter ?? null, maxTotalMsgSize);
  }

  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.reads.getMaxOffsetInQueue(topic, queueId);
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.reads.getMinOffsetInQueue(topic, queueId);
  }

  getCommitLogOffsetInQueue(topic: string, queueId: number, consumeQueueOffset: number): number {
    return this.reads.getCommitLogOffsetInQueue(topic, queueId, consumeQueueOffset);
  }

  getConsumeQueueEntries(topic: string, queueId: number, fromOffset: number, maxCount: number): ConsumeQueueEntryView[] | null {
    return this.reads.getConsumeQueueEntries(topic, queueId, fromOffset, maxCount);
  }

  async getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number, boundary: BoundaryType = 'LOWER'): Promise<number> {
    return this.reads.getOffsetInQueueByTime(topic, queueId, timestampMs, boundary);
  }

  async getEarliestMessageTime(topic: string, queueId: number): Promise<number> {
    return this.reads.getEarliestMessageTime(topic, queueId);
  }

  /** Store time of the record at the CommitLog min offset (-1 if none). */
  async getEarliestMessageTimeOfStore(): Promise<number> {
    return this.reads.getEarliestMessageTimeOfStore();
  }

  async getMessageStoreTimeStamp(topic: string, queueId: number, consumeQueueOffset: number): Promise<number> {
    return this.reads.getMessageStoreTimeStamp(topic, queueId, consumeQueueOffset);
  }

  async lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null> {
    return this.reads.lookMessageByOffset(commitLogOffset);
  }

  async selectOneMessageByOffset(commitLogOffset: number, size?: number): Promise<Buffer | null> {
    return this.reads.selectOneMessageByOffset(commitLogOffset, size);
  }

  /** @throws SERVICE_NOT_AVAILABLE */
  async queryMessage(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<QueryMessageResult> {
    this.c.state.assertOpen();
    return this.reads.queryMessage(topic, key, maxNum, beginMs, endMs);
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

  /** Hears every CommitLog flush that wrote bytes: bytes made durable and the flush's duration in ms (metrics); null = none. */
  setFlushObserver(observer: ((bytes: number, latencyMs: number) => void) | null): void {
    this.commitLog.mfq.setFlushObserver(observer);
  }

  setRetentionHold(hold: (() => number) | null): void {
    this.cleanService?.setRetentionHold(hold);
  }

  setMessageArrivingListener(listener: MessageArrivingListener | null): void {
    this.reput.setMessageArrivingListener(listener);
  }

  async deleteTopics(topics: string[]): Promise<void> {
    this.reput.dropUndispatched(topics, this.commitLog.getMaxOffset());
    for (const t of topics) {
      this.consumeQueueStore.deleteTopic(t);
      this.c.queueOffsets.remove(t);
    }
  }

  /**
   * Marks the store writable or not (retention sets it when the disk is full, RocketMQ's
   * DISK_FULL running flag). Not writable ⇒ puts return SERVICE_NOT_AVAILABLE with the reason.
   * A failed fdatasync cannot be cleared this way (fsyncgate: only a restart clears it).
   */
  setWritable(writable: boolean, reason = 'disk full'): void {
    if (writable && this.c.runningFlags.isSyncFailed()) return;
    this.c.state.setWritable(writable, reason);
  }

  isWritable(): boolean {
    return this.c.state.notWritableReason === null && this.c.state.isRunning() && this.config.brokerRole !== 'SLAVE';
  }

  /** Bytes confirmed (written, in controller mode held by the sync state set) but not yet dispatched to ConsumeQueues (Apache: confirm offset − reput offset). */
  dispatchBehindBytes(): number {
    return this.reput.behindBytes(this.c.confirm.value());
  }

  /** Dispatch health: dispatched offset, plugin (index) failure counts, blocked ConsumeQueue dispatch. */
  getDispatchStats(): DispatchStats {
    return this.reput.stats();
  }

  /** Clean shutdown (lifecycle/store-shutdown.ts): the next open takes the normal recovery path. */
  async shutdown(): Promise<void> {
    if (!this.services) return;
    await shutdownStore(this.c, this.services, this.replication);
  }

  /**
   * Crash simulation for tests: timers stop, every fd is closed, nothing is flushed, the
   * checkpoint is not written and the abort file stays. `commitPending` (default true) hands
   * buffered bytes to the OS first (a process crash after the page cache got them); false loses them.
   */
  closeAbruptly(opts: { commitPending?: boolean } = {}): void {
    closeStoreAbruptly(this.c, this.services, this.replication, opts.commitPending ?? true);
  }
}
