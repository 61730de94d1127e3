/**
 * Lookups in one ConsumeQueue's files: by queue offset (RocketMQ `ConsumeQueue.getIndexBuffer` /
 * `get`), by commit-log offset (`correctMinOffset`, spec §2.3) and by store time
 * (`getOffsetInQueueByTime`, §8, searched by consume-queue-time-search.ts; `getEarliestUnit`).
 *
 * Layout (consume-queue-entry.ts): 20-byte units = 8 commit-log offset + 4 size + 8 tags code,
 * files of 300,000 units by default; the entry of queue offset q is at logical byte q × 20.
 * Offsets below the queue's min logic offset are not readable; pre-blank entries are never
 * returned as data.
 *
 * - `readEntries(q, n)`: raw packed entries from q to at most the end of q's file (≤ n), null when
 *   q is below the min, beyond the written data or its file is gone / closed.
 * - `findMinLogicOffset(minCommitLogOffset)`: the byte position of the first entry whose record is
 *   at or above the CommitLog min offset (binary search from the current min, which never moves
 *   back); past the last entry when the last entry is older, invalid or a pre-blank (the queue is
 *   then empty but keeps its position, B04). RocketMQ searches only the first file, relying on
 *   retention having deleted older files; this searches [current min, last entry].
 * - `offsetInQueueByTime`: the 5.x boundary-aware search over [min, max), clamped to [min, max]
 *   like RocketMQ's `ConsumeQueueStore.getOffsetInQueueByTime`; max when the queue is empty.
 *
 * Never throws for absent data (null / -1 / 0 results); Buffer RangeErrors only on a bug.
 */
import type { BoundaryType } from '../message-store.js';
import type { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import { CQ_STORE_UNIT_SIZE, isPreBlank, isValidEntry, readCqEntry, type CqEntry } from './consume-queue-entry.js';
import { searchOffsetByTime, type StoreTimeLookup } from './consume-queue-time-search.js';

/** Entries one read-ahead of `EntryReadAhead` covers by default (4000 bytes). */
export const ENTRY_READ_AHEAD_ENTRIES = 200;

/**
 * The last entries read ahead for one queue: pulls walk a queue forward maxMsgNums entries at a
 * time, so one positional read of 200 entries serves the next several pulls instead of one read
 * each. Holds only written entries (below the file's write position), tied to the MappedFile
 * object and its content epoch (truncation, recovery and slot repair move it on).
 */
export class EntryReadAhead {
  private mf: MappedFile | null = null;
  private epoch = -1;
  /** File position of buf[0], and the valid bytes from there. */
  private pos = 0;
  private len = 0;
  private buf: Buffer | null = null;

  constructor(readonly entries = ENTRY_READ_AHEAD_ENTRIES) {}

  /**
   * A copy of `mf`'s bytes [pos, pos + bytes) when held, else null; with `transient`, a view of
   * the read-ahead buffer instead (valid until this read-ahead is filled again).
   */
  take(mf: MappedFile, pos: number, bytes: number, transient = false): Buffer | null {
    if (this.mf !== mf || this.epoch !== mf.getContentEpoch() || !mf.isAvailable() || pos < this.pos || pos + bytes > this.pos + this.len) return null;
    if (transient) return this.buf!.subarray(pos - this.pos, pos - this.pos + bytes);
    const out = Buffer.allocUnsafe(bytes);
    this.buf!.copy(out, 0, pos - this.pos, pos - this.pos + bytes);
    return out;
  }

  /** Reads the written entries of `mf` from `pos` (at most `entries`); false when unreadable. */
  fill(mf: MappedFile, pos: number): boolean {
    const len = Math.min(this.entries, Math.floor((mf.getWrotePosition() - pos) / CQ_STORE_UNIT_SIZE)) * CQ_STORE_UNIT_SIZE;
    this.mf = null;
    if (len <= 0) return false;
    this.buf ??= Buffer.allocUnsafe(this.entries * CQ_STORE_UNIT_SIZE);
    if (!mf.readInto(pos, this.buf, 0, len)) return false;
    this.mf = mf;
    this.epoch = mf.getContentEpoch();
    this.pos = pos;
    this.len = len;
    return true;
  }
}

/**
 * Raw packed entries from `queueOffset` to the end of its file (at most `maxCount`); null if
 * unavailable. With `ahead`, short reads are served from (and refill) the queue's read-ahead;
 * with `transient` too, such a read is a view of the read-ahead's buffer (valid until the next
 * read of this queue) instead of a copy.
 */
export function readEntries(mfq: MappedFileQueue, minLogicOffset: number, queueOffset: number, maxCount: number, ahead?: EntryReadAhead, transient = false): { buf: Buffer; count: number } | null {
  const logic = queueOffset * CQ_STORE_UNIT_SIZE;
  if (logic < minLogicOffset) return null;
  const mf = mfq.findMappedFileByOffset(logic);
  if (!mf) return null;
  const pos = logic - mf.fileFromOffset;
  const count = Math.min(maxCount, Math.floor((mf.getWrotePosition() - pos) / CQ_STORE_UNIT_SIZE));
  if (count <= 0) return null;
  const bytes = count * CQ_STORE_UNIT_SIZE;
  if (ahead && count <= ahead.entries) {
    const held = ahead.take(mf, pos, bytes, transient) ?? (ahead.fill(mf, pos) ? ahead.take(mf, pos, bytes, transient) : null);
    if (held) return { buf: held, count };
  }
  const buf = mf.read(pos, bytes);
  return buf ? { buf, count } : null;
}

/** The entry stored at `queueOffset` whatever it holds (pre-blank, invalid), ignoring the min; null when not written. */
export function readEntryAt(mfq: MappedFileQueue, queueOffset: number): CqEntry | null {
  const mf = mfq.findMappedFileByOffset(queueOffset * CQ_STORE_UNIT_SIZE);
  if (!mf) return null;
  const b = mf.read(queueOffset * CQ_STORE_UNIT_SIZE - mf.fileFromOffset, CQ_STORE_UNIT_SIZE);
  return b ? readCqEntry(b, 0) : null;
}

/** The data entry at `queueOffset`: null when absent, below the min, invalid or a pre-blank. */
export function getDataEntry(mfq: MappedFileQueue, minLogicOffset: number, queueOffset: number): CqEntry | null {
  const r = readEntries(mfq, minLogicOffset, queueOffset, 1);
  if (!r) return null;
  const e = readCqEntry(r.buf, 0);
  return isValidEntry(e) && !isPreBlank(e) ? e : null;
}

/** The new min logic offset (bytes) for CommitLog min offset `minCommitLogOffset`; see the file comment. */
export function findMinLogicOffset(mfq: MappedFileQueue, currentMinLogicOffset: number, minCommitLogOffset: number): number {
  const max = mfq.getMaxOffset();
  const first = mfq.getFirstMappedFile();
  if (max === 0 || !first) return max;
  const lastQ = max / CQ_STORE_UNIT_SIZE - 1;
  const tooOld = (e: CqEntry | null): boolean => !e || !isValidEntry(e) || isPreBlank(e) || e.phyOffset < minCommitLogOffset;
  if (tooOld(readEntryAt(mfq, lastQ))) return max;
  // binary search for the first entry with phyOffset >= min, from the current min
  let lo = Math.max(currentMinLogicOffset, first.fileFromOffset) / CQ_STORE_UNIT_SIZE;
  let hi = lastQ;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (tooOld(readEntryAt(mfq, mid))) lo = mid + 1;
    else hi = mid;
  }
  return lo * CQ_STORE_UNIT_SIZE;
}

/** 5.x `getOffsetInQueueByTime` over queue offsets [minQ, maxQ), result clamped to [minQ, maxQ]. */
export function offsetInQueueByTime(
  mfq: MappedFileQueue,
  minQ: number,
  maxQ: number,
  timestampMs: number,
  boundary: BoundaryType,
  lookup: StoreTimeLookup,
): number {
  if (maxQ <= minQ) return maxQ;
  const r = searchOffsetByTime(
    { minQueueOffset: minQ, maxQueueOffset: maxQ, perFile: mfq.fileSize / CQ_STORE_UNIT_SIZE, entryAt: (q) => readEntryAt(mfq, q) },
    timestampMs,
    boundary,
    lookup,
  );
  return Math.min(maxQ, Math.max(minQ, r));
}

/** Store time of the first data entry in [minQ, maxQ) (pre-blanks skipped), -1 if none or unreadable. */
export function earliestMessageTime(mfq: MappedFileQueue, minQ: number, maxQ: number, lookup: StoreTimeLookup): number {
  for (let q = minQ; q < maxQ; q++) {
    const e = readEntryAt(mfq, q);
    if (!e || !isValidEntry(e)) return -1;
    if (isPreBlank(e)) continue;
    return lookup.getStoreTimestamp(e.phyOffset, e.size);
  }
  return -1;
}
