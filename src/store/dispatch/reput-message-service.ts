/**
 * Feeds every valid CommitLog record, in CommitLog order, to the registered dispatchers
 * (ConsumeQueue builder first, then e.g. the index builder), then tells the
 * MessageArrivingListener (RocketMQ `ReputMessageService`).
 *
 * `drive(limit)` dispatches everything in [reputFromOffset, limit). The store calls it with the
 * written offset right after each append under ASYNC_FLUSH, and with the flushed offset after
 * each flush under SYNC_FLUSH (5.x: consumers never see unflushed data with SYNC_FLUSH).
 *
 * Records appended by this process are queued with their DispatchRequest already built
 * (`enqueue`), so the hot path does not re-parse bytes; anything else (blank fillers, bytes
 * appended by replication) is read back from the CommitLog with `checkRecord`.
 */
import type { Logger } from '../../common/logging/logger.js';
import { BLANK_MAGIC_CODE, checkRecord, type DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { MessageArrivingListener } from '../message-store.js';
import type { CommitLogDispatcher } from './commit-log-dispatcher.js';
import { isConsumeQueueRecord } from './consume-queue-dispatcher.js';

export class ReputMessageService {
  private reputFromOffset = 0;
  private readonly pending: DispatchRequest[] = [];
  private pendingHead = 0;
  private readonly dispatchers: CommitLogDispatcher[] = [];
  private listener: MessageArrivingListener | null = null;
  private driving = false;
  /** Highest limit asked for while a drive was running (a listener that appended). */
  private requestedLimit = 0;
  /** topic → CommitLog offset below which its undispatched records are dropped. */
  private readonly dropped = new Map<string, number>();

  constructor(
    private readonly commitLog: CommitLog,
    private readonly delayLevelTableMs: number[],
    private readonly logger: Logger,
  ) {}

  addDispatcher(d: CommitLogDispatcher): void {
    this.dispatchers.push(d);
  }
  getDispatchers(): readonly CommitLogDispatcher[] {
    return this.dispatchers;
  }
  setMessageArrivingListener(l: MessageArrivingListener | null): void {
    this.listener = l;
  }
  getReputFromOffset(): number {
    return this.reputFromOffset;
  }
  setReputFromOffset(offset: number): void {
    this.reputFromOffset = offset;
  }

  /** Queues the DispatchRequest of a record just appended by this process. */
  enqueue(req: DispatchRequest): void {
    this.pending.push(req);
  }

  /** Dispatches every record in [reputFromOffset, limit). A re-entrant call extends the running drive. */
  drive(limit: number): void {
    if (this.driving) {
      this.requestedLimit = Math.max(this.requestedLimit, limit);
      return;
    }
    this.driving = true;
    try {
      while (this.reputFromOffset < Math.max(limit, this.requestedLimit)) {
        const req = this.nextRequest();
        if (req === 'stop') break;
        if (req === 'rolled') continue;
        this.dispatchOne(req);
        this.reputFromOffset = req.commitLogOffset + req.msgSize;
      }
    } finally {
      for (const [t, before] of this.dropped) if (this.reputFromOffset >= before) this.dropped.delete(t);
      this.driving = false;
      this.requestedLimit = 0;
      this.compactPending();
    }
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

  /** Feeds one record to every dispatcher and the listener (also used by recovery). */
  dispatchOne(req: DispatchRequest): void {
    if (this.dropped.size > 0) {
      const before = this.dropped.get(req.topic);
      if (before !== undefined && req.commitLogOffset < before) return;
    }
    for (const d of this.dispatchers) {
      try {
        d.dispatch(req);
      } catch (e) {
        this.logger.error({ err: e, dispatcher: d.name, offset: req.commitLogOffset }, 'dispatcher failed');
      }
    }
    if (this.listener && isConsumeQueueRecord(req.sysFlag)) {
      try {
        this.listener(req.topic, req.queueId, req.consumeQueueOffset + 1, req.tagsCode, req.storeTimestamp, req.properties);
      } catch (e) {
        this.logger.error({ err: e }, 'message arriving listener failed');
      }
    }
  }

  private nextRequest(): DispatchRequest | 'rolled' | 'stop' {
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead]!.commitLogOffset < this.reputFromOffset) {
      this.pendingHead++;
    }
    const head = this.pending[this.pendingHead];
    if (head && head.commitLogOffset === this.reputFromOffset) {
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
      this.pending.length = 0;
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
