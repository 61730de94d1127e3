/**
 * Feeds every valid CommitLog record, in CommitLog order, to the registered dispatchers
 * (ConsumeQueue builder first, then e.g. the index builder), then tells the
 * MessageArrivingListener (RocketMQ `ReputMessageService`).
 *
 * `drive(limit)` dispatches everything in [reputFromOffset, limit); `driveToLimit()` drives to
 * the store's dispatch limit (`limit` option: store-components.ts `dispatchLimit`, the written
 * offset under ASYNC_FLUSH, the flushed offset under SYNC_FLUSH, never past the confirm offset in
 * controller mode). The store drives right after each append under ASYNC_FLUSH, after each flush
 * under SYNC_FLUSH (5.x: consumers never see unflushed data with SYNC_FLUSH) and whenever the
 * confirm offset advances.
 *
 * Records appended by this process are queued with their DispatchRequest already built
 * (`enqueue`), so the hot path does not re-parse bytes; anything else (blank fillers, bytes
 * appended by replication) is read back from the CommitLog with `checkRecord`. The records of a
 * prepared block (`enqueuePrepared`) are queued as one PreparedDispatchBlock (columns, no object
 * per record) and dispatched as one (DispatcherChain.runPrepared) when the whole block can be.
 *
 * Failures (dispatcher-chain.ts): when a required dispatcher (the ConsumeQueue builder) throws,
 * dispatch stops AT that record — `reputFromOffset` stays on it, so it is retried, never
 * skipped (a skipped record would be a hole in its ConsumeQueue). Dispatch is then blocked
 * (dispatch-blockage.ts): `onBlockedChange(reason)` is told once (the store sets
 * LOGICS_QUEUE_ERROR and refuses puts), the failure is logged rate-limited, and the record is
 * retried by every later `drive` and, when `limit` is given, by a timer every
 * `retryIntervalMs` up to `limit()` (nothing else drives dispatch while puts are refused).
 * Once the record is dispatched (or `setReputFromOffset` moves away from it),
 * `onBlockedChange(null)` is told. `dispatchOne` (used by recovery) throws DispatchBlockedError
 * instead. Failures of optional dispatchers are counted and logged and never block.
 */

import type { Logger } from '../../common/logging/logger.js';
import { systemClock, type Clock } from '../../common/time/clock.js';
import { BLANK_MAGIC_CODE, checkRecord, type DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { MessageArrivingListener } from '../message-store.js';
import type { CommitLogDispatcher } from './commit-log-dispatcher.js';
import { DispatchBlockage, type BlockedDispatch } from './dispatch-blockage.js';
import { isConsumeQueueRecord } from './consume-queue-dispatcher.js';
import { DISPATCH_FAILURE_LOG_INTERVAL_MS, DispatchBlockedError, DispatcherChain } from './dispatcher-chain.js';
import { PreparedDispatchBlock } from './prepared-dispatch-block.js';

/** Default retry period of a blocked dispatch, ms. */
export const DISPATCH_RETRY_INTERVAL_MS = 200;

export interface ReputOptions {
  /** Time source of the failure-log rate limit and of `blocked.sinceMs` (default: system clock). */
  clock?: Clock;
  /** Period of the retry timer while blocked, ms (default DISPATCH_RETRY_INTERVAL_MS). */
  retryIntervalMs?: number;
  /**
   * The store's dispatch limit (store-components.ts `dispatchLimit`), bytes: where `driveToLimit`
   * and the retry timer of a blocked dispatch go; without it `driveToLimit` goes to the CommitLog
   * max offset and no retry timer runs.
   */
  limit?: () => number;
  /** Told the reason when dispatch becomes blocked, and null when it resumes. */
  onBlockedChange?: (reason: string | null) => void;
  /** Minimum time between two failure lines of one kind, ms (default DISPATCH_FAILURE_LOG_INTERVAL_MS). */
  logIntervalMs?: number;
}

/** Dispatch health, for stats and tests. */
export interface DispatchStats {
  /** CommitLog offset below which every record has been dispatched (or skipped as deleted). */
  dispatchedOffset: number;
  /** Failures of optional dispatchers (index, plugins) by dispatcher name; they never block dispatch. */
  pluginFailures: Record<string, number>;
  /** Set while a required dispatcher keeps failing on the record at `offset` (attempts ≥ 1). */
  blocked: BlockedDispatch | null;
}

export class ReputMessageService {
  private reputFromOffset = 0;
  /** Queued dispatches of this process's appends, in CommitLog order (a prepared block as one item). */
  private readonly pending: (DispatchRequest | PreparedDispatchBlock)[] = [];
  /** First request of a block queued by enqueueBlock → the block's record count. */
  private readonly blockLength = new WeakMap<DispatchRequest, number>();
  private pendingHead = 0;
  private readonly chain: DispatcherChain;
  private listener: MessageArrivingListener | null = null;
  private driving = false;
  /** Highest limit asked for while a drive was running (a listener that appended). */
  private requestedLimit = 0;
  /** topic → CommitLog offset below which its undispatched records are dropped. */
  private readonly dropped = new Map<string, number>();
  private readonly blockage: DispatchBlockage;
  private readonly limit: () => number;

  constructor(
    private readonly commitLog: CommitLog,
    private readonly delayLevelTableMs: number[],
    private readonly logger: Logger,
    opts: ReputOptions = {},
  ) {
    const clock = opts.clock ?? systemClock;
    const logIntervalMs = opts.logIntervalMs ?? DISPATCH_FAILURE_LOG_INTERVAL_MS;
    this.chain = new DispatcherChain(logger, clock, logIntervalMs);
    const retryLimit = opts.limit;
    this.limit = opts.limit ?? (() => commitLog.getMaxOffset());
    this.blockage = new DispatchBlockage({
      clock,
      logger,
      logIntervalMs,
      retryIntervalMs: opts.retryIntervalMs ?? DISPATCH_RETRY_INTERVAL_MS,
      retry: retryLimit ? () => this.drive(retryLimit()) : null,
      ...(opts.onBlockedChange ? { onChange: opts.onBlockedChange } : {}),
    });
  }

  addDispatcher(d: CommitLogDispatcher): void {
    this.chain.add(d);
  }
  /** Required dispatchers first, then the others (the order records are fed in). */
  getDispatchers(): readonly CommitLogDispatcher[] {
    return this.chain.list();
  }
  setMessageArrivingListener(l: MessageArrivingListener | null): void {
    this.listener = l;
  }
  getReputFromOffset(): number {
    return this.reputFromOffset;
  }
  /** Repositions dispatch (recovery, truncation, tests); leaving a blocked record ends the blocked state. */
  setReputFromOffset(offset: number): void {
    this.reputFromOffset = offset;
    if (this.blockage.isBlocked() && this.blockage.offset !== offset) this.blockage.resumed();
  }

  /** Queues the DispatchRequest of a record just appended by this process. */
  enqueue(req: DispatchRequest): void {
    this.pending.push(req);
  }

  /**
   * Queues the dispatch of the records of one prepared block (CommitLog.appendPrepared), in
   * CommitLog order. When `drive` reaches it and its limit covers all of it, it is dispatched as
   * one (DispatcherChain.runPrepared); otherwise (a segment roll inside it, a topic being dropped,
   * a limit inside it, a required dispatcher failing on it) its records are queued one by one in
   * its place and dispatched as `enqueue`d ones. Either way each record is dispatched, and the
   * listener told, exactly as for single puts.
   */
  enqueuePrepared(block: PreparedDispatchBlock): void {
    if (block.count > 0) this.pending.push(block);
  }

  /** Dispatches up to the store's dispatch limit (the `limit` option). */
  driveToLimit(): void {
    this.drive(this.limit());
  }

  /**
   * Queues the DispatchRequests of the records of one prepared block (MessageStore.
   * putPreparedMessages), in CommitLog order. When `drive` reaches the block and its limit covers
   * all of it, the block is dispatched as one (DispatcherChain.runBlock: ConsumeQueue entries
   * written per queue in one go); otherwise record by record as `enqueue`d ones. Either way each
   * record is dispatched, and the listener told, exactly as for single puts.
   */
  enqueueBlock(reqs: readonly DispatchRequest[]): void {
    if (reqs.length > 1) this.blockLength.set(reqs[0]!, reqs.length);
    for (const r of reqs) this.pending.push(r);
  }

  /** Dispatches every record in [reputFromOffset, limit). A re-entrant call extends the running drive. */
  drive(limit: number): void {
    if (this.driving) {
      this.requestedLimit = Math.max(this.requestedLimit, limit);
      return;
    }
    this.driving = true;
    let blockedNow = false;
    try {
      // queued records of this process's appends (a batch's): dispatchers may read ahead for them
      if (this.pending.length - this.pendingHead > 1) this.willDispatch();
      while (this.reputFromOffset < Math.max(limit, this.requestedLimit)) {
        const req = this.nextRequest();
        if (req === 'stop') break;
        if (req === 'rolled') continue;
        if (req instanceof PreparedDispatchBlock) {
          if (!this.tryDispatchPrepared(req, Math.max(limit, this.requestedLimit))) this.expand(req);
          continue;
        }
        if (this.blockLength.has(req) && this.tryDispatchBlock(req, Math.max(limit, this.requestedLimit))) continue;
        if (!this.tryDispatch(req)) {
          blockedNow = true;
          this.unread(req);
          break;
        }
        this.reputFromOffset = req.commitLogOffset + req.msgSize;
      }
    } finally {
      if (this.dropped.size > 0) for (const [t, before] of this.dropped) if (this.reputFromOffset >= before) this.dropped.delete(t);
      this.driving = false;
      this.requestedLimit = 0;
      this.compactPending();
    }
    if (this.blockage.isBlocked() && !blockedNow && this.reputFromOffset > this.blockage.offset) this.blockage.resumed();
    this.blockage.scheduleRetry();
  }

  /** Dispatch health: position, optional-dispatcher failure counts, blocked state. */
  stats(): DispatchStats {
    return { dispatchedOffset: this.reputFromOffset, pluginFailures: this.chain.failureCounts(), blocked: this.blockage.state() };
  }

  /** Stops the retry timer for good (shutdown, crash simulation); `drive` still works. */
  stop(): void {
    this.blockage.stop();
  }

  /** The hint of DispatcherChain.willDispatch for the queued requests from the head up to the first prepared block. */
  private willDispatch(): void {
    const p = this.pending;
    let end = this.pendingHead;
    while (end < p.length && !(p[end] instanceof PreparedDispatchBlock)) end++;
    if (end - this.pendingHead > 1) this.chain.willDispatch(p as DispatchRequest[], this.pendingHead, end);
  }

  /**
   * `block` was just taken from the pending queue: when it is contiguous in the CommitLog, below
   * `limit` and no topic is being dropped, it is dispatched as one and true is returned
   * (reputFromOffset after it); otherwise, or when a required dispatcher fails on it, false.
   */
  private tryDispatchPrepared(block: PreparedDispatchBlock, limit: number): boolean {
    if (this.dropped.size > 0 || block.endOffset > limit || !block.contiguous()) return false;
    if (!this.chain.runPrepared(block)) return false;
    const listener = this.listener;
    if (listener) {
      for (let k = 0; k < block.count; k++) {
        if (!isConsumeQueueRecord(block.sysFlag[k]!)) continue;
        try {
          listener(block.topic[k]!, block.queueId[k]!, block.consumeQueueOffset[k]! + 1, block.tagsCode[k]!, block.storeTimestamp, block.properties(k));
        } catch (e) {
          this.logger.error({ err: e }, 'message arriving listener failed');
        }
      }
    }
    this.reputFromOffset = block.endOffset;
    return true;
  }

  /** Replaces `block`, just taken from the pending queue, by its records' DispatchRequests (taken next). */
  private expand(block: PreparedDispatchBlock): void {
    const at = this.pendingHead - 1;
    if (this.pending[at] !== block) return;
    this.pending.splice(at, 1, ...block.requests());
    this.pendingHead = at;
  }

  private tryDispatch(req: DispatchRequest): boolean {
    try {
      this.dispatchOne(req);
      return true;
    } catch (e) {
      if (!(e instanceof DispatchBlockedError)) throw e;
      this.blockage.failed(e);
      return false;
    }
  }

  /**
   * `first` was just taken from the pending queue and starts a block (enqueueBlock): when the
   * whole block is queued behind it, contiguous in the CommitLog, below `limit` and no topic is
   * being dropped, it is dispatched as one and true is returned (reputFromOffset after it).
   * Otherwise, or when a required dispatcher fails on the block, false: the caller goes on record
   * by record from `first` (re-dispatching what the block did is harmless).
   */
  private tryDispatchBlock(first: DispatchRequest, limit: number): boolean {
    const n = this.blockLength.get(first)!;
    this.blockLength.delete(first);
    const from = this.pendingHead - 1;
    if (this.pending[from] !== first || from + n > this.pending.length || this.dropped.size > 0) return false;
    const reqs = this.pending.slice(from, from + n) as DispatchRequest[];
    for (let k = 1; k < n; k++) {
      const prev = reqs[k - 1]!;
      if (reqs[k]!.commitLogOffset !== prev.commitLogOffset + prev.msgSize) return false; // a segment roll in between
    }
    const last = reqs[n - 1]!;
    const end = last.commitLogOffset + last.msgSize;
    if (end > limit) return false;
    if (!this.chain.runBlock(reqs)) return false;
    const listener = this.listener;
    if (listener) {
      for (const req of reqs) {
        if (!isConsumeQueueRecord(req.sysFlag)) continue;
        try {
          listener(req.topic, req.queueId, req.consumeQueueOffset + 1, req.tagsCode, req.storeTimestamp, req.properties);
        } catch (e) {
          this.logger.error({ err: e }, 'message arriving listener failed');
        }
      }
    }
    this.pendingHead = from + n;
    this.reputFromOffset = end;
    return true;
  }

  /** Puts a record taken from the pending queue back, so the retry does not re-parse it. */
  private unread(req: DispatchRequest): void {
    if (this.pendingHead > 0 && this.pending[this.pendingHead - 1] === req) this.pendingHead--;
  }

  /**
   * Records of `topics` below `beforeOffset` that are not dispatched yet are dropped (topic
   * deleted while dispatch lagged, e.g. SYNC_FLUSH before the flush): they must not recreate the
   * deleted queues.
   */
  dropUndispatched(topics: readonly string[], beforeOffset: number): void {
    if (beforeOffset <= this.reputFromOffset) return;
    for (const t of topics) this.dropped.set(t, Math.max(beforeOffset, this.dropped.get(t) ?? 0));
  }

  /**
   * Feeds one record to every dispatcher and the listener (also used by recovery).
   * @throws DispatchBlockedError when a required dispatcher fails (the listener is not told).
   */
  dispatchOne(req: DispatchRequest): void {
    if (this.dropped.size > 0) {
      const before = this.dropped.get(req.topic);
      if (before !== undefined && req.commitLogOffset < before) return;
    }
    this.chain.run(req);
    if (this.listener && isConsumeQueueRecord(req.sysFlag)) {
      try {
        this.listener(req.topic, req.queueId, req.consumeQueueOffset + 1, req.tagsCode, req.storeTimestamp, req.properties);
      } catch (e) {
        this.logger.error({ err: e }, 'message arriving listener failed');
      }
    }
  }

  private nextRequest(): DispatchRequest | PreparedDispatchBlock | 'rolled' | 'stop' {
    const p = this.pending;
    for (;;) {
      const head = p[this.pendingHead];
      if (head === undefined) break;
      if (head instanceof PreparedDispatchBlock) {
        if (head.endOffset <= this.reputFromOffset) {
          this.pendingHead++;
          continue;
        }
        if (head.startOffset < this.reputFromOffset) {
          // partly dispatched already (read back from the CommitLog): its records one by one
          this.pendingHead++;
          this.expand(head);
          continue;
        }
        if (head.startOffset !== this.reputFromOffset) break;
        this.pendingHead++;
        return head;
      }
      if (head.commitLogOffset < this.reputFromOffset) {
        this.pendingHead++;
        continue;
      }
      if (head.commitLogOffset !== this.reputFromOffset) break;
      this.pendingHead++;
      return head;
    }
    return this.readFromCommitLog();
  }

  private readFromCommitLog(): DispatchRequest | 'rolled' | 'stop' {
    const at = this.reputFromOffset;
    const head = this.commitLog.getData(at, 8);
    if (!head) return 'stop';
    if (head.readInt32BE(4) === BLANK_MAGIC_CODE) {
      this.reputFromOffset = this.commitLog.rollNextFile(at);
      return 'rolled';
    }
    const size = head.readInt32BE(0);
    const record = size > 8 ? this.commitLog.getData(at, size) : null;
    if (!record) return 'stop';
    const r = checkRecord(record, 0, record.length, { checkCrc: false, expectedPhysicalOffset: at, delayLevelTableMs: this.delayLevelTableMs });
    if (r.kind === 'valid') return r.dispatch;
    this.logger.error({ offset: at, reason: r.kind === 'invalid' ? r.reason : 'blank' }, 'dispatch stopped at an invalid CommitLog record');
    return 'stop';
  }

  private compactPending(): void {
    if (this.pendingHead === 0) return;
    if (this.pendingHead >= this.pending.length) {
      // emptied by pops, not `length = 0`: V8 gives an array cut to length 0 a new empty backing
      // store, so the next push allocated a fresh one — once per single put (each put drives)
      const p = this.pending;
      for (let i = p.length; i > 0; i--) p.pop();
      this.pendingHead = 0;
    } else if (this.pendingHead > 1024) {
      this.pending.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
  }

  /** Bytes written but not yet dispatched, relative to `limit`. */
  behindBytes(limit: number): number {
    return Math.max(0, limit - this.reputFromOffset);
  }

  /** Forgets queued requests (crash simulation, shutdown). */
  clearPending(): void {
    this.pending.length = 0;
    this.pendingHead = 0;
  }
}
