/**
 * All ConsumeQueues of a store, keyed by topic then queue id (RocketMQ `ConsumeQueueStore` for
 * simple CQs). Owns `<root>/consumequeue/`; creates queues on first use (so
 * NO_MATCHED_LOGIC_QUEUE is practically unreachable, as in RocketMQ).
 *
 * Commits: the entries written through `putMessagePositionInfo(s)` stay in their segments' write
 * buffers (readers see them there) and every queue written meanwhile is committed (one pwrite
 * per queue) `commitIntervalMs` after the first such write — so a busy store makes one pwrite
 * per written queue per interval, not one per queue per event-loop turn. RocketMQ writes its
 * ConsumeQueues into mmap'ed files (no system call per entry); entries lost with the process
 * before their commit are rebuilt from the CommitLog by the abnormal recovery (as for entries
 * written but not flushed). `commitIntervalMs` 0: the old rule, the segment's own commit on the
 * next event-loop turn and this check right after it.
 *
 * Background write failures (consume-queue-write-errors.ts): that commit is also the check: a
 * failing pwrite records the queue as failing (LOGICS_QUEUE_ERROR through `onWriteErrorChange`). `flushAll` reports failed commits and
 * fdatasyncs per queue and goes on with the other queues. Failing queues are retried every
 * `writeRetryIntervalMs` (commit; flush(0) when the flush had failed) and by every later
 * commit/flush; the flag clears once no queue fails. Entries are never dropped meanwhile (they
 * stay in the segments' write buffers). A failed fdatasync is the exception (fsyncgate): that
 * queue is neither flushed nor retried again and stays failing until restart.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { ConsumeQueue, type PositionColumns } from './consume-queue.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';
import { CQ_WRITE_RETRY_INTERVAL_MS, ConsumeQueueWriteError, ConsumeQueueWriteErrors, type FailedQueueWrite } from './consume-queue-write-errors.js';

/**
 * Default time from the first entry written after a commit to the commit of every queue written
 * since, ms (ConsumeQueueStoreOptions.commitIntervalMs).
 */
export const DEFAULT_CQ_COMMIT_INTERVAL_MS = 10;

/** Default minimum time between two "still failing" lines of one queue, ms. */
const WRITE_FAILURE_LOG_INTERVAL_MS = 10_000;

export interface ConsumeQueueStoreOptions {
  /** `<storePathRootDir>/consumequeue` */
  rootDir: string;
  fileSize: number;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
  /** Told the reason when a queue's entries cannot be written (null once every queue is written again). */
  onWriteErrorChange?: (reason: string | null) => void;
  /** Retry period of failed writes, ms (default CQ_WRITE_RETRY_INTERVAL_MS). */
  writeRetryIntervalMs?: number;
  /** Minimum time between two "still failing" lines of one queue, ms (default 10 s). */
  logIntervalMs?: number;
  /** Told once per ConsumeQueue segment whose fdatasync fails (fsyncgate: refuse writes until restart). */
  onSyncFailed?: (e: SyncFailedError) => void;
  /**
   * Time from the first entry written after a commit to the commit of every queue written since,
   * ms (default DEFAULT_CQ_COMMIT_INTERVAL_MS); 0: commit on the next event-loop turn (see the
   * file comment).
   */
  commitIntervalMs?: number;
}

export class ConsumeQueueStore {
  private readonly table = new Map<string, Map<number, ConsumeQueue>>();
  private readonly writeErrors: ConsumeQueueWriteErrors;
  /** Queues written since the last commit check (run commitIntervalMs after the first of them). */
  private readonly toCheck = new Set<ConsumeQueue>();
  private checkScheduled = false;
  private checkTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly commitIntervalMs: number;
  private readonly runCheck = (): void => this.checkCommits();

  constructor(private readonly opts: ConsumeQueueStoreOptions) {
    const interval = opts.commitIntervalMs ?? DEFAULT_CQ_COMMIT_INTERVAL_MS;
    if (!(Number.isFinite(interval) && interval >= 0)) throw new RangeError(`commitIntervalMs must be a number >= 0, got ${interval}`);
    this.commitIntervalMs = interval;
    this.writeErrors = new ConsumeQueueWriteErrors({
      clock: opts.clock,
      logger: opts.logger,
      logIntervalMs: opts.logIntervalMs ?? WRITE_FAILURE_LOG_INTERVAL_MS,
      retryIntervalMs: opts.writeRetryIntervalMs ?? CQ_WRITE_RETRY_INTERVAL_MS,
      retry: () => this.retryFailedWrites(),
      ...(opts.onWriteErrorChange ? { onChange: opts.onWriteErrorChange } : {}),
    });
  }

  /** Loads every `<topic>/<queueId>/` directory. @throws SegmentLoadError on a file of the wrong size. */
  load(): void {
    const { fs, rootDir } = this.opts;
    for (const topic of fs.readdir(rootDir).sort()) {
      const topicDir = path.join(rootDir, topic);
      if (!fs.stat(topicDir)?.isDirectory) continue;
      for (const qid of fs.readdir(topicDir).sort()) {
        if (!/^\d+$/.test(qid)) {
          this.opts.logger.warn({ dir: path.join(topicDir, qid) }, 'ignoring non-numeric queue directory');
          continue;
        }
        const cq = this.create(topic, Number(qid));
        cq.load();
      }
    }
  }

  private create(topic: string, queueId: number): ConsumeQueue {
    let byId = this.table.get(topic);
    if (!byId) {
      byId = new Map();
      this.table.set(topic, byId);
    }
    let cq = byId.get(queueId);
    if (!cq) {
      const { rootDir, fileSize, fs, clock, logger, onSyncFailed } = this.opts;
      cq = new ConsumeQueue({
        topic, queueId, rootDir, fileSize, fs, clock, logger,
        ...(onSyncFailed ? { onSyncFailed } : {}),
        ...(this.commitIntervalMs > 0 ? { commitOnNextTurn: false } : {}),
      });
      byId.set(queueId, cq);
    }
    return cq;
  }

  /** The queue, created (empty, no files yet) if missing. */
  findOrCreate(topic: string, queueId: number): ConsumeQueue {
    return this.table.get(topic)?.get(queueId) ?? this.create(topic, queueId);
  }

  /** The queue if it exists. */
  find(topic: string, queueId: number): ConsumeQueue | null {
    return this.table.get(topic)?.get(queueId) ?? null;
  }

  *all(): IterableIterator<ConsumeQueue> {
    for (const byId of this.table.values()) yield* byId.values();
  }

  /** Topic → queue id → max offset. */
  getTopicQueueTable(): Map<string, Map<number, number>> {
    const out = new Map<string, Map<number, number>>();
    for (const [topic, byId] of this.table) {
      const m = new Map<number, number>();
      for (const [qid, cq] of byId) m.set(qid, cq.getMaxOffsetInQueue());
      out.set(topic, m);
    }
    return out;
  }

  /** Largest end-of-record offset referenced by any queue (-1 if none): where dispatch must resume. */
  getMaxPhyOffsetInConsumeQueue(): number {
    let max = -1;
    for (const cq of this.all()) max = Math.max(max, cq.getMaxPhysicOffset());
    return max;
  }

  /** Recovers every queue (§3.4); returns totals. */
  recoverAll(): { queues: number; entriesRemoved: number } {
    let queues = 0;
    let entriesRemoved = 0;
    for (const cq of this.all()) {
      entriesRemoved += cq.recover().removedEntries;
      queues++;
    }
    return { queues, entriesRemoved };
  }

  /** Truncates every queue to commit-log offset `phy` (only queues referencing ≥ phy change). Returns entries removed. */
  truncateDirty(phy: number): number {
    let removed = 0;
    for (const cq of this.all()) {
      if (cq.getMaxPhysicOffset() >= phy || cq.getMaxPhysicOffset() < 0) removed += cq.truncateDirtyLogicFiles(phy);
    }
    return removed;
  }

  correctMinOffsets(minCommitLogOffset: number): void {
    for (const cq of this.all()) cq.correctMinOffset(minCommitLogOffset);
  }

  /**
   * Writes the entry of a dispatched record (ConsumeQueue.putMessagePositionInfo, creating the
   * queue if needed) and has its queue committed with the next periodic commit (file comment).
   * @throws what putMessagePositionInfo throws (file creation, a full write buffer not written).
   */
  putMessagePositionInfo(topic: string, queueId: number, phyOffset: number, size: number, tagsCode: number, queueOffset: number): void {
    const cq = this.findOrCreate(topic, queueId);
    cq.putMessagePositionInfo(phyOffset, size, tagsCode, queueOffset);
    this.toCheck.add(cq);
    if (!this.checkScheduled) this.scheduleCheck();
  }

  /**
   * Writes the entries of records of one queue (ConsumeQueue.putMessagePositionInfos: consecutive
   * queue offsets, one append when it can), as putMessagePositionInfo for each would.
   * @throws what putMessagePositionInfo throws; entries written before stay written.
   */
  putMessagePositionInfos(topic: string, queueId: number, records: readonly { commitLogOffset: number; msgSize: number; tagsCode: number; consumeQueueOffset: number }[]): void {
    this.putInto(topic, queueId, (cq) => cq.putMessagePositionInfos(records));
  }

  /** putMessagePositionInfos for entries as columns (ConsumeQueue.putPositionColumns: rows `rows[0, n)` of `c`). */
  putPositionColumns(topic: string, queueId: number, c: PositionColumns, rows: ArrayLike<number>, n: number): void {
    this.putInto(topic, queueId, (cq) => cq.putPositionColumns(c, rows, n));
  }

  /** Runs `put` on the queue (created when missing) and schedules the commit check of its buffered entries. */
  private putInto(topic: string, queueId: number, put: (cq: ConsumeQueue) => void): void {
    const cq = this.findOrCreate(topic, queueId);
    try {
      put(cq);
    } finally {
      this.toCheck.add(cq);
      if (!this.checkScheduled) this.scheduleCheck();
    }
  }

  private scheduleCheck(): void {
    this.checkScheduled = true;
    if (this.commitIntervalMs === 0) {
      setImmediate(this.runCheck);
      return;
    }
    this.checkTimer = setTimeout(this.runCheck, this.commitIntervalMs);
    this.checkTimer.unref();
  }

  private checkCommits(): void {
    this.checkScheduled = false;
    this.checkTimer = null;
    if (this.stopped) {
      this.toCheck.clear();
      return;
    }
    try {
      for (const cq of this.toCheck) this.commitQueue(cq);
    } catch (e) {
      this.opts.logger.error({ err: e }, 'ConsumeQueue commit check failed');
    } finally {
      this.toCheck.clear();
    }
  }

  /** Commits one queue, recording a failure or a recovery; true when its buffered entries are written. */
  private commitQueue(cq: ConsumeQueue): boolean {
    try {
      cq.commit();
    } catch (e) {
      if (!(e instanceof ConsumeQueueWriteError)) throw e;
      this.writeErrors.failed(e);
      return false;
    }
    if (this.writeErrors.failedOp(cq) === 'commit') this.writeErrors.succeeded(cq);
    return true;
  }

  /**
   * Flushes one queue (leastPages 0 while its writes fail), recording a failure or a recovery.
   * A queue whose fdatasync failed is not flushed again (fsyncgate: it stays failed until restart).
   */
  private async flushQueue(cq: ConsumeQueue, leastPages: number): Promise<boolean> {
    if (this.writeErrors.isUntilRestart(cq)) return false;
    try {
      await cq.flush(this.writeErrors.has(cq) ? 0 : leastPages);
    } catch (e) {
      if (!(e instanceof ConsumeQueueWriteError)) throw e;
      this.writeErrors.failed(e);
      return false;
    }
    this.writeErrors.succeeded(cq);
    return true;
  }

  /** Retries every failing queue once: commit, then flush(0) for a failed flush. */
  async retryFailedWrites(): Promise<void> {
    for (const q of this.writeErrors.queues()) {
      if (this.stopped) return;
      const cq = this.find(q.topic, q.queueId);
      if (cq !== q) {
        this.writeErrors.forget(q); // deleted meanwhile
        continue;
      }
      if (this.writeErrors.isUntilRestart(cq)) continue; // a failed fdatasync is not retried (fsyncgate)
      if (this.writeErrors.failedOp(cq) === 'flush') await this.flushQueue(cq, 0);
      else this.commitQueue(cq);
    }
  }

  /** Queues whose entries cannot be written (commit) or flushed, in the order they failed. */
  failedWrites(): FailedQueueWrite[] {
    return this.writeErrors.state();
  }

  /**
   * Flushes every queue (a failing one with leastPages 0); a failed commit or fdatasync is
   * recorded (see the file comment) and the other queues are still flushed. Returns true when no
   * queue has unflushed entries left.
   */
  async flushAll(leastPages: number): Promise<boolean> {
    let complete = true;
    for (const cq of [...this.all()]) {
      if (!(await this.flushQueue(cq, leastPages))) complete = false;
      const mfq = cq.getMappedFileQueue();
      if (mfq.getFlushedWhere() < mfq.getMaxOffset()) complete = false;
    }
    return complete;
  }

  /**
   * Forces every file of every queue (MappedFileQueue.forceFrom(0)), also those counted as
   * flushed: after an abnormal exit their entries may exist only in the page cache.
   * Rejects with the first fdatasync error.
   */
  async forceAll(): Promise<void> {
    for (const cq of [...this.all()]) await cq.getMappedFileQueue().forceFrom(0);
  }

  /** forceAll with every file's entries written again first (MappedFileQueue.rewriteFrom). */
  async rewriteAll(): Promise<void> {
    for (const cq of [...this.all()]) await cq.getMappedFileQueue().rewriteFrom(0);
  }

  /** Commits every queue's buffered entries; failures are recorded, not thrown. Returns true when all were written. */
  commitAll(): boolean {
    let ok = true;
    for (const cq of this.all()) if (!this.commitQueue(cq)) ok = false;
    return ok;
  }

  /** Removes one topic's queues and files. */
  deleteTopic(topic: string): void {
    const byId = this.table.get(topic);
    if (!byId) return;
    for (const cq of byId.values()) {
      this.writeErrors.forget(cq);
      this.toCheck.delete(cq);
      cq.destroy();
    }
    this.table.delete(topic);
    this.opts.fs.rmrf(path.join(this.opts.rootDir, topic));
  }

  /** Deletes every queue (no commit-log files left after recovery). */
  destroyAll(): void {
    for (const topic of [...this.table.keys()]) this.deleteTopic(topic);
  }

  /** Closes every queue (buffered entries are committed if the disk allows); no more retries. */
  shutdown(): void {
    this.stop();
    for (const cq of this.all()) cq.shutdown();
  }

  shutdownAbruptly(commitPending: boolean): void {
    this.stop();
    for (const cq of this.all()) cq.shutdownAbruptly(commitPending);
  }

  private stop(): void {
    this.stopped = true;
    if (this.checkTimer !== null) clearTimeout(this.checkTimer);
    this.checkTimer = null;
    this.writeErrors.stop();
  }
}
