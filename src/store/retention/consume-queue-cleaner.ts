/**
 * ConsumeQueue and index cleaning after the CommitLog minimum moved (spec §6.2, RocketMQ
 * `CleanConsumeQueueService` + `ConsumeQueue.deleteExpiredFile` + `IndexService.deleteExpiredFile`).
 *
 * For every queue, first `correctMinOffset(minPhy)` (so a pull below the new minimum answers
 * OFFSET_TOO_SMALL with nextBeginOffset = new min, never a read of a deleted file; a queue whose
 * every entry is older stays positioned: min = max, B04), then delete its files, oldest first,
 * EXCEPT THE LAST, whose last entry (at fileSize − 20) points below `minPhy`. A file a reader
 * holds stops that queue's deletion (it is retried on the next pass). Then index files whose last
 * message is below `minPhy` (never the newest).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { ConsumeQueue } from '../consumequeue/consume-queue.js';
import { CQ_STORE_UNIT_SIZE, readCqEntry } from '../consumequeue/consume-queue.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import { destroyFile } from './commit-log-cleaner.js';

/** RocketMQ destroys ConsumeQueue files with a 60 s forced-release interval (§5.1). */
export const CQ_DESTROY_INTERVAL_FORCIBLY_MS = 60_000;

export interface IndexFileDeleter {
  /** Deletes index files (never the newest) whose last message is below `minPhyOffset`; returns how many. */
  deleteExpiredFiles(minPhyOffset: number): number | Promise<number>;
}

export interface ConsumeQueueCleanResult {
  queuesCorrected: number;
  cqFilesDeleted: number;
  indexFilesDeleted: number;
}

/**
 * Deletes the files of `cq` entirely below CommitLog offset `minPhy` (never the last one).
 * Returns how many were deleted.
 */
export function deleteConsumeQueueFilesBelow(cq: ConsumeQueue, minPhy: number, logger: Logger): number {
  const mfq = cq.getMappedFileQueue();
  const removed: MappedFile[] = [];
  const files = mfq.getFiles();
  for (let i = 0; i < files.length - 1; i++) {
    const mf = files[i]!;
    let expired: boolean;
    if (!mf.isAvailable()) {
      expired = true; // shut down by an earlier pass while a reader held it ("hanged")
    } else {
      if (mf.getWrotePosition() < mf.fileSize) break; // only full files are ever behind the last one
      const tail = mf.read(mf.fileSize - CQ_STORE_UNIT_SIZE, CQ_STORE_UNIT_SIZE);
      if (!tail) break;
      expired = readCqEntry(tail, 0).phyOffset < minPhy;
    }
    if (!expired) break;
    if (destroyFile(mf, CQ_DESTROY_INTERVAL_FORCIBLY_MS, logger) !== 'deleted') break;
    removed.push(mf);
  }
  if (removed.length > 0) {
    mfq.removeFiles(removed);
    logger.info({ topic: cq.topic, queueId: cq.queueId, files: removed.length, minPhy }, 'ConsumeQueue files deleted');
  }
  return removed.length;
}

/**
 * Corrects every queue's min offset to `minPhy` and deletes what lies entirely below it, then the
 * index files. `sleep(deleteConsumeQueueFilesIntervalMs)` runs after each queue that deleted
 * something; when it resolves false (shutdown) the pass stops.
 */
export async function cleanConsumeQueuesAndIndex(
  cqStore: ConsumeQueueStore,
  index: IndexFileDeleter | null,
  minPhy: number,
  opts: { deleteIntervalMs: number; sleep: (ms: number) => Promise<boolean> },
  logger: Logger,
): Promise<ConsumeQueueCleanResult> {
  const result: ConsumeQueueCleanResult = { queuesCorrected: 0, cqFilesDeleted: 0, indexFilesDeleted: 0 };
  for (const cq of [...cqStore.all()]) {
    cq.correctMinOffset(minPhy);
    result.queuesCorrected++;
    const n = deleteConsumeQueueFilesBelow(cq, minPhy, logger);
    result.cqFilesDeleted += n;
    if (n > 0 && opts.deleteIntervalMs > 0 && !(await opts.sleep(opts.deleteIntervalMs))) return result;
  }
  if (index) {
    try {
      result.indexFilesDeleted = await index.deleteExpiredFiles(minPhy);
    } catch (e) {
      logger.error({ err: e, minPhy }, 'deleting expired index files failed');
    }
  }
  return result;
}
