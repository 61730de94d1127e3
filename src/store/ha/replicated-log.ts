/**
 * Slave-side CommitLog operations of classic replication (RocketMQ `CommitLog.appendData`,
 * `DefaultMessageStore.appendToCommitLog` / `truncateFiles`):
 *
 * - `appendReplicatedBytes`: copies master bytes verbatim at the slave's CommitLog end (or, on
 *   an empty CommitLog, at the segment start the master sent first), creating segments as
 *   needed. Records are never parsed here; the ReputMessageService dispatches them once whole.
 * - `ReplicatedStoreTimeDispatcher`: replicated records never pass through `CommitLog.append`,
 *   so this dispatcher carries each record's store time into its segment. The next thorough
 *   flush then moves checkpoint physicMsgTimestamp to the newest flushed replicated store time
 *   (case B33; RocketMQ fixed it by setting the checkpoint from dispatch on slaves, which can
 *   claim bytes not flushed yet; tsmq only claims what a flush covered).
 * - `truncateReplicatedLog`: drops everything at or after an offset the master does not have
 *   (a diverged slave, case B35): ConsumeQueues truncated, later segments deleted, the rest of
 *   the cut segment zeroed on disk and forced, dispatch restarted there, queue-offset table
 *   rebuilt, checkpoint timestamps lowered to the last kept record.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { ConsumeQueueStore } from '../consumequeue/consume-queue-store.js';
import type { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import type { CommitLogDispatcher } from '../dispatch/commit-log-dispatcher.js';
import type { ReputMessageService } from '../dispatch/reput-message-service.js';
import type { StoreCheckpoint } from '../recovery/store-checkpoint.js';
import { HAProtocolError } from './ha-protocol.js';

/**
 * Appends `src[start, start+length)` at CommitLog offset `offset`, which must be the current
 * max offset; an empty CommitLog accepts any segment-aligned offset (its leftover empty
 * segments are removed first). @throws HAProtocolError on a misplaced offset; I/O errors as thrown.
 */
export function appendReplicatedBytes(commitLog: CommitLog, offset: number, src: Buffer, start: number, length: number): void {
  const mfq = commitLog.mfq;
  const max = commitLog.getMaxOffset();
  if (max === 0 && offset !== 0) {
    if (offset % mfq.fileSize !== 0) throw new HAProtocolError(`empty slave cannot start at ${offset}: not a segment start (segment size ${mfq.fileSize})`);
    if (mfq.getFiles().length > 0) mfq.truncateDirtyFiles(0);
  } else if (offset !== max) {
    throw new HAProtocolError(`master sent bytes for offset ${offset} but the slave's CommitLog ends at ${max}`);
  }
  let at = start;
  let left = length;
  let off = offset;
  while (left > 0) {
    const mf = mfq.getLastMappedFileOrCreate(off);
    if (mf.getWroteOffset() !== off) throw new HAProtocolError(`segment ${mf.filePath} ends at ${mf.getWroteOffset()}, expected ${off}`);
    const n = Math.min(left, mf.remaining());
    mf.append(src, at, n);
    at += n;
    off += n;
    left -= n;
  }
}

/** Carries replicated records' store times into their segments (feeds checkpoint physicMsgTimestamp on flush). */
export class ReplicatedStoreTimeDispatcher implements CommitLogDispatcher {
  readonly name = 'replicated-store-time';

  constructor(private readonly commitLog: CommitLog) {}

  dispatch(req: DispatchRequest): void {
    const mf = this.commitLog.mfq.findMappedFileByOffset(req.commitLogOffset);
    if (mf && req.storeTimestamp > mf.storeTimestamp) mf.storeTimestamp = req.storeTimestamp;
    this.commitLog.setLastStoreTimestamp(req.storeTimestamp);
  }
}

export interface TruncateContext {
  commitLog: CommitLog;
  cqStore: ConsumeQueueStore;
  checkpoint: StoreCheckpoint;
  reput: ReputMessageService;
  queueOffsets: QueueOffsetTable;
  logger: Logger;
}

export interface TruncateReport {
  fromOffset: number;
  toOffset: number;
  /** Non-zero bytes discarded (as counted by MappedFileQueue.truncateDirtyFiles). */
  truncatedBytes: number;
  destroyedFiles: number;
  cqEntriesRemoved: number;
  /** Store time of the last record kept (0 when none is referenced by a ConsumeQueue). */
  lastKeptStoreTimestamp: number;
}

/** See the file comment. No-op (zero report) when `offset` ≥ the CommitLog max offset. */
export async function truncateReplicatedLog(ctx: TruncateContext, offset: number): Promise<TruncateReport> {
  const { commitLog, cqStore, checkpoint, reput } = ctx;
  const mfq = commitLog.mfq;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`bad truncation offset ${offset}`);
  const before = commitLog.getMaxOffset();
  const report: TruncateReport = { fromOffset: before, toOffset: offset, truncatedBytes: 0, destroyedFiles: 0, cqEntriesRemoved: 0, lastKeptStoreTimestamp: 0 };
  if (offset >= before) return report;
  // flush first: afterwards nothing is dirty, so no fdatasync can be in flight on the cut file
  await mfq.flush(0);
  report.cqEntriesRemoved = cqStore.truncateDirty(offset);
  const t = mfq.truncateDirtyFiles(offset);
  report.truncatedBytes = t.truncatedBytes;
  report.destroyedFiles = t.destroyedFiles;
  const last = mfq.getLastMappedFile();
  if (last) await last.force(); // the zeroed tail is durable
  reput.clearPending();
  reput.setReputFromOffset(Math.min(reput.getReputFromOffset(), commitLog.getMaxOffset()));
  ctx.queueOffsets.clear();
  for (const q of cqStore.all()) ctx.queueOffsets.set(q.topic, q.queueId, q.getMaxOffsetInQueue());

  const lastTs = lastKeptStoreTimestamp(commitLog, cqStore);
  report.lastKeptStoreTimestamp = lastTs;
  if (last) last.storeTimestamp = Math.min(last.storeTimestamp, lastTs);
  checkpoint.physicMsgTimestamp = Math.min(checkpoint.physicMsgTimestamp, lastTs);
  checkpoint.logicsMsgTimestamp = Math.min(checkpoint.logicsMsgTimestamp, lastTs);
  checkpoint.confirmPhyOffset = Math.min(checkpoint.confirmPhyOffset, commitLog.getMaxOffset());
  await checkpoint.flush();
  ctx.logger.warn({ truncation: report }, 'replica diverged from the master: CommitLog truncated to the master offset');
  return report;
}

/** Store time of the highest-offset record any ConsumeQueue still references (0 if none). */
function lastKeptStoreTimestamp(commitLog: CommitLog, cqStore: ConsumeQueueStore): number {
  let best: { phyOffset: number; size: number } | null = null;
  for (const q of cqStore.all()) {
    const max = q.getMaxOffsetInQueue();
    if (max <= q.getMinOffsetInQueue()) continue;
    const e = q.getEntry(max - 1);
    if (e && (!best || e.phyOffset > best.phyOffset)) best = e;
  }
  if (!best) return 0;
  return Math.max(0, commitLog.pickupStoreTimestamp(best.phyOffset, best.size));
}
