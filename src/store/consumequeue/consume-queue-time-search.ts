/**
 * Time → queue offset search of a ConsumeQueue (RocketMQ 5.x `getOffsetInQueueByTime` with
 * `BoundaryType`, spec §8; cases B15, B17).
 *
 * 1. Choose a CQ file by the store times of its first/last entries: LOWER takes the first file
 *    (other than the last) whose last entry is at or after `ts`, else the last file; UPPER takes
 *    the newest file whose first entry is at or before `ts`, else the first file.
 * 2. Binary search inside that file. Entries whose record lies below the commit-log min offset
 *    count as infinitely old.
 *    LOWER = first entry with time ≥ ts (one past the last entry when all are older; the file's
 *    first entry when all are newer). UPPER = last entry with time ≤ ts (0 when all are newer).
 *    Equal timestamps: LOWER gives the first of them, UPPER the last.
 * 3. A failed store-time lookup returns 0. The caller clamps to [min, max].
 */
import type { BoundaryType } from '../message-store.js';
import type { CqEntry } from './consume-queue-entry.js';

/** Narrow view of the commit log needed by time queries. */
export interface StoreTimeLookup {
  /** STORETIMESTAMP of the record at `phyOffset` (size = CQ entry size), or -1 when unreadable. */
  getStoreTimestamp(phyOffset: number, size: number): number;
  getMinPhyOffset(): number;
}

export interface TimeSearchQueue {
  /** First valid queue offset. */
  minQueueOffset: number;
  /** One past the last entry. */
  maxQueueOffset: number;
  /** Entries per CQ file. */
  perFile: number;
  entryAt(queueOffset: number): CqEntry | null;
}

class LookupFailed extends Error {}

export function searchOffsetByTime(q: TimeSearchQueue, ts: number, boundary: BoundaryType, lookup: StoreTimeLookup): number {
  const minPhy = lookup.getMinPhyOffset();
  const timeAt = (queueOffset: number): number => {
    const e = q.entryAt(queueOffset);
    if (!e || e.phyOffset < 0 || e.size <= 0) throw new LookupFailed();
    if (e.phyOffset < minPhy) return Number.NEGATIVE_INFINITY;
    const t = lookup.getStoreTimestamp(e.phyOffset, e.size);
    if (t < 0) throw new LookupFailed();
    return t;
  };
  try {
    const [lo, hi] = chooseFile(q, ts, boundary, timeAt);
    return boundary === 'LOWER' ? lowerBound(lo, hi, ts, timeAt) : upperBound(lo, hi, ts, timeAt);
  } catch (e) {
    if (e instanceof LookupFailed) return 0;
    throw e;
  }
}

/** Inclusive queue-offset range [lo, hi] of the chosen file. */
function chooseFile(q: TimeSearchQueue, ts: number, boundary: BoundaryType, timeAt: (o: number) => number): [number, number] {
  const ranges: Array<[number, number]> = [];
  let start = q.minQueueOffset;
  while (start < q.maxQueueOffset) {
    const fileEnd = start - (start % q.perFile) + q.perFile;
    const end = Math.min(fileEnd, q.maxQueueOffset) - 1;
    ranges.push([start, end]);
    start = end + 1;
  }
  if (boundary === 'LOWER') {
    for (let i = 0; i < ranges.length - 1; i++) {
      if (timeAt(ranges[i]![1]) >= ts) return ranges[i]!;
    }
    return ranges[ranges.length - 1]!;
  }
  for (let i = ranges.length - 1; i >= 0; i--) {
    if (timeAt(ranges[i]![0]) <= ts) return ranges[i]!;
  }
  return ranges[0]!;
}

/** First offset in [lo, hi] with time ≥ ts, or hi + 1. */
function lowerBound(lo: number, hi: number, ts: number, timeAt: (o: number) => number): number {
  let a = lo;
  let b = hi + 1;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    if (timeAt(mid) < ts) a = mid + 1;
    else b = mid;
  }
  return a;
}

/** Last offset in [lo, hi] with time ≤ ts, or 0 when every entry is newer. */
function upperBound(lo: number, hi: number, ts: number, timeAt: (o: number) => number): number {
  let a = lo;
  let b = hi + 1;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    if (timeAt(mid) <= ts) a = mid + 1;
    else b = mid;
  }
  return a === lo ? 0 : a - 1;
}
