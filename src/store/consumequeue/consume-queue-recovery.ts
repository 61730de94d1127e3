/**
 * Recovery and truncation of one ConsumeQueue's files (RocketMQ `ConsumeQueue.recover`, spec
 * §3.4, and `ConsumeQueue.truncateDirtyLogicFiles`, §3.8). Works on the queue's
 * MappedFileQueue of 20-byte units (consume-queue-entry.ts: 8 commit-log offset + 4 size +
 * 8 tags code; files of 300,000 units by default); the ConsumeQueue applies the returned
 * max physical offset and re-clamps its min offset.
 *
 * - `recoverQueueFiles`: scan from the third-from-last file, in chunks, reading only up to the
 *   end of the data (cost proportional to what the queue holds, not to its 6 MB files); a file
 *   wholly made of valid entries continues with the next, the first invalid entry (offset < 0 or
 *   size ≤ 0, e.g. a zero slot) ends the data. When a bounded probe finds bytes after the end
 *   (torn or stale slots) everything after it is truncated (tails zeroed on disk, later files
 *   deleted); a clean tail only moves positions. An empty last file is dropped while an earlier
 *   file exists (B02), flushed/committed := end.
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

/**
 * Units read per chunk during recovery: the first chunk of a file is 1,024 units (20 KiB), each
 * next one twice as large up to 13,107 units (262,140 bytes), so a queue costs what it holds,
 * not its 6 MB file size, and a nearly empty queue (the common case with thousands) costs one
 * small read.
 */
const RECOVERY_FIRST_CHUNK_UNITS = 1_024;
const RECOVERY_MAX_CHUNK_UNITS = 13_107;
/**
 * Bytes after the last valid entry examined for leftovers (torn or stale slots). Our writers
 * only ever append and truncation zeroes tails, so anything non-zero sits right behind the end;
 * a clean tail costs one small read instead of reading the rest of the file (issue: 5,818 queues
 * read 94 GB before this bound).
 */
export const RECOVERY_TAIL_PROBE_BYTES = 16 * 1024;

export function recoverQueueFiles(mfq: MappedFileQueue): QueueRecoveryResult {
  const files = mfq.getFiles();
  if (files.length === 0) return { validEntries: 0, removedEntries: 0, maxPhysicOffset: -1 };
  const fileSize = mfq.fileSize;
  let index = Math.max(0, files.length - 3);
  let processOffset = files[index]!.fileFromOffset;
  let validEntries = 0;
  let maxPhy = -1;
  const chunk = Buffer.allocUnsafe(Math.min(fileSize, RECOVERY_MAX_CHUNK_UNITS * CQ_STORE_UNIT_SIZE));
  for (; index < files.length; index++) {
    const mf = files[index]!;
    let pos = 0;
    let ended = false;
    let chunkUnits = RECOVERY_FIRST_CHUNK_UNITS;
    while (pos < fileSize && !ended) {
      const len = Math.min(chunkUnits * CQ_STORE_UNIT_SIZE, chunk.length, fileSize - pos);
      chunkUnits = Math.min(chunkUnits * 2, RECOVERY_MAX_CHUNK_UNITS);
      if (!mf.readInto(pos, chunk, 0, len)) throw new Error(`cannot read ${mf.filePath} at ${pos}`);
      const units = Math.floor(len / CQ_STORE_UNIT_SIZE);
      let i = 0;
      for (; i < units; i++) {
        const e = readCqEntry(chunk, i);
        if (!isValidEntry(e)) {
          ended = true;
          break;
        }
        if (!isPreBlank(e)) {
          maxPhy = e.phyOffset + e.size;
          validEntries++;
        }
      }
      pos += i * CQ_STORE_UNIT_SIZE;
      if (units === 0) break;
    }
    processOffset = mf.fileFromOffset + pos;
    if (pos < fileSize) break;
  }
  const { removedEntries, dirty } = probeTail(mfq, processOffset);
  // a clean tail with no file after it: only positions move (as RocketMQ's recover does)
  if (dirty || mfq.getFiles().some((f) => f.fileFromOffset > processOffset)) mfq.truncateDirtyFiles(processOffset);
  else setWrotePositions(mfq, processOffset);
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

/**
 * Looks at the first RECOVERY_TAIL_PROBE_BYTES at/after logic offset `from` (within its file and
 * the next one): `dirty` when any byte there is non-zero; `removedEntries` counts the slots with
 * a non-zero byte in that window (a lower bound when the window is full of them).
 */
function probeTail(mfq: MappedFileQueue, from: number): { removedEntries: number; dirty: boolean } {
  let count = 0;
  let dirty = false;
  let budget = RECOVERY_TAIL_PROBE_BYTES;
  for (const mf of mfq.getFiles()) {
    if (budget <= 0) break;
    const end = mf.fileFromOffset + mf.getWrotePosition();
    if (end <= from) continue;
    const start = Math.max(0, from - mf.fileFromOffset);
    const len = Math.min(budget, end - mf.fileFromOffset - start);
    budget -= len;
    const data = mf.read(start, len);
    if (!data) continue;
    for (let pos = 0; pos + CQ_STORE_UNIT_SIZE <= data.length; pos += CQ_STORE_UNIT_SIZE) {
      if (!isZeroSlot(data, pos)) {
        count++;
        dirty = true;
      }
    }
  }
  return { removedEntries: count, dirty };
}

/** Moves the positions of the file holding `offset` (files wholly below it stay full). */
function setWrotePositions(mfq: MappedFileQueue, offset: number): void {
  for (const f of mfq.getFiles()) {
    if (offset >= f.fileFromOffset && offset < f.fileFromOffset + mfq.fileSize) f.setPositions(offset - f.fileFromOffset);
  }
}

/** An empty last file is removed when an earlier file exists (it adds nothing; B02). */
function dropEmptyTrailingFiles(mfq: MappedFileQueue): void {
  const files = mfq.getFiles();
  while (files.length > 1 && files[files.length - 1]!.getWrotePosition() === 0) mfq.deleteLastMappedFile();
}
