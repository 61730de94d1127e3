/**
 * Recovery and truncation of one ConsumeQueue's files (RocketMQ `ConsumeQueue.recover`, spec
 * §3.4, and `ConsumeQueue.truncateDirtyLogicFiles`, §3.8). Works on the queue's
 * MappedFileQueue of 20-byte units (consume-queue-entry.ts: 8 commit-log offset + 4 size +
 * 8 tags code; files of 300,000 units by default); the ConsumeQueue applies the returned
 * max physical offset and re-clamps its min offset.
 *
 * - `recoverQueueFiles`: scan from the third-from-last file; a file wholly made of valid entries
 *   continues with the next, the first invalid entry (offset < 0 or size ≤ 0, e.g. a zero slot)
 *   ends the data. Everything after it is truncated (tails zeroed on disk, later files deleted),
 *   an empty last file is dropped while an earlier file exists (B02), flushed/committed := end.
 * - `truncateQueueFiles(phy)`: drop every entry whose record starts at or beyond CommitLog
 *   offset `phy`: the last file is rescanned from its start; a file whose first entry is at/after
 *   `phy` (or invalid), or that holds only pre-blanks while an earlier file exists, is deleted and
 *   the previous one examined; otherwise it keeps the entries below `phy` and its tail is zeroed.
 *
 * Differences from RocketMQ, on purpose: pre-blank entries never count towards the max physical
 * offset (RocketMQ's scan counts them as records of Integer.MAX_VALUE bytes at offset 0), tails
 * are zeroed instead of only moving positions, and with no file left the max physical offset is
 * -1 (RocketMQ keeps `phy`).
 *
 * Errors: I/O errors of the fs port (ftruncate, pwrite of a buffered prefix) propagate.
 */
import type { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import { CQ_STORE_UNIT_SIZE, isPreBlank, isValidEntry, isZeroSlot, readCqEntry } from './consume-queue-entry.js';

export interface QueueRecoveryResult {
  /** Real (non pre-blank) entries found valid in the scanned files. */
  validEntries: number;
  /** Slots cut off that held something (a torn or stale entry); never-written zero slots are not entries. */
  removedEntries: number;
  /** End (offset + size) of the last real entry, -1 when none was scanned. */
  maxPhysicOffset: number;
}

export function recoverQueueFiles(mfq: MappedFileQueue): QueueRecoveryResult {
  const files = mfq.getFiles();
  if (files.length === 0) return { validEntries: 0, removedEntries: 0, maxPhysicOffset: -1 };
  const fileSize = mfq.fileSize;
  let index = Math.max(0, files.length - 3);
  let processOffset = files[index]!.fileFromOffset;
  let validEntries = 0;
  let maxPhy = -1;
  for (; index < files.length; index++) {
    const mf = files[index]!;
    const data = mf.read(0, fileSize)!;
    let pos = 0;
    for (; pos < fileSize; pos += CQ_STORE_UNIT_SIZE) {
      const e = readCqEntry(data, pos / CQ_STORE_UNIT_SIZE);
      if (!isValidEntry(e)) break;
      if (!isPreBlank(e)) {
        maxPhy = e.phyOffset + e.size;
        validEntries++;
      }
    }
    processOffset = mf.fileFromOffset + pos;
    if (pos < fileSize) break;
  }
  const removedEntries = countWrittenSlotsFrom(mfq, processOffset);
  mfq.truncateDirtyFiles(processOffset);
  dropEmptyTrailingFiles(mfq);
  mfq.setFlushedWhere(mfq.getMaxOffset());
  mfq.setCommittedWhere(mfq.getMaxOffset());
  return { validEntries, removedEntries, maxPhysicOffset: maxPhy };
}

/** Returns the entries removed and the new max physical offset (-1 when no real entry is left). */
export function truncateQueueFiles(mfq: MappedFileQueue, phy: number): { removedEntries: number; maxPhysicOffset: number } {
  const before = mfq.getMaxOffset();
  let maxPhysicOffset = -1;
  for (;;) {
    const mf = mfq.getLastMappedFile();
    if (!mf) break;
    const data = mf.read(0, mf.getWrotePosition()) ?? Buffer.alloc(0);
    const n = data.length / CQ_STORE_UNIT_SIZE;
    let keep = 0;
    let lastEnd = -1;
    for (let i = 0; i < n; i++) {
      const e = readCqEntry(data, i);
      if (!isValidEntry(e)) break;
      if (!isPreBlank(e)) {
        if (e.phyOffset >= phy) break;
        lastEnd = e.phyOffset + e.size;
      }
      keep = i + 1;
    }
    const hasRealEntry = lastEnd >= 0;
    if (keep === 0 || (!hasRealEntry && mfq.getFiles().length > 1)) {
      mfq.deleteLastMappedFile();
      continue;
    }
    mf.truncateTo(keep * CQ_STORE_UNIT_SIZE);
    maxPhysicOffset = lastEnd;
    break;
  }
  const max = mfq.getMaxOffset();
  mfq.setFlushedWhere(Math.min(mfq.getFlushedWhere(), max));
  mfq.setCommittedWhere(Math.min(mfq.getCommittedWhere(), max));
  return { removedEntries: (before - max) / CQ_STORE_UNIT_SIZE, maxPhysicOffset };
}

/** Slots at or after logic offset `from` (up to each file's loaded length) with any non-zero byte. */
function countWrittenSlotsFrom(mfq: MappedFileQueue, from: number): number {
  let count = 0;
  for (const mf of mfq.getFiles()) {
    const end = mf.fileFromOffset + mf.getWrotePosition();
    if (end <= from) continue;
    const start = Math.max(0, from - mf.fileFromOffset);
    const data = mf.read(start, end - mf.fileFromOffset - start);
    if (!data) continue;
    for (let pos = 0; pos + CQ_STORE_UNIT_SIZE <= data.length; pos += CQ_STORE_UNIT_SIZE) {
      if (!isZeroSlot(data, pos)) count++;
    }
  }
  return count;
}

/** An empty last file is removed when an earlier file exists (it adds nothing; B02). */
function dropEmptyTrailingFiles(mfq: MappedFileQueue): void {
  const files = mfq.getFiles();
  while (files.length > 1 && files[files.length - 1]!.getWrotePosition() === 0) mfq.deleteLastMappedFile();
}
