/**
 * All ConsumeQueues of a store, keyed by topic then queue id (RocketMQ `ConsumeQueueStore` for
 * simple CQs). Owns `<root>/consumequeue/`; creates queues on first use (so
 * NO_MATCHED_LOGIC_QUEUE is practically unreachable, as in RocketMQ).
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { ConsumeQueue } from './consume-queue.js';

export interface ConsumeQueueStoreOptions {
  /** `<storePathRootDir>/consumequeue` */
  rootDir: string;
  fileSize: number;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
}

export class ConsumeQueueStore {
  private readonly table = new Map<string, Map<number, ConsumeQueue>>();

  constructor(private readonly opts: ConsumeQueueStoreOptions) {}

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
      cq = new ConsumeQueue({ topic, queueId, ...this.opts });
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

  /** Flushes every queue; returns true when no queue has unflushed entries left. */
  async flushAll(leastPages: number): Promise<boolean> {
    let complete = true;
    for (const cq of this.all()) {
      await cq.flush(leastPages);
      const mfq = cq.getMappedFileQueue();
      if (mfq.getFlushedWhere() < mfq.getMaxOffset()) complete = false;
    }
    return complete;
  }

  commitAll(): void {
    for (const cq of this.all()) cq.commit();
  }

  /** Removes one topic's queues and files. */
  deleteTopic(topic: string): void {
    const byId = this.table.get(topic);
    if (!byId) return;
    for (const cq of byId.values()) cq.destroy();
    this.table.delete(topic);
    this.opts.fs.rmrf(path.join(this.opts.rootDir, topic));
  }

  /** Deletes every queue (no commit-log files left after recovery). */
  destroyAll(): void {
    for (const topic of [...this.table.keys()]) this.deleteTopic(topic);
  }

  shutdown(): void {
    for (const cq of this.all()) cq.shutdown();
  }

  shutdownAbruptly(commitPending: boolean): void {
    for (const cq of this.all()) cq.shutdownAbruptly(commitPending);
  }
}
