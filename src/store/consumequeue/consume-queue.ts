/**
 * ConsumeQueue of one (topic, queueId) (RocketMQ `ConsumeQueue`, spec §2.3, §3.4, §3.8, §8).
 *
 * Files `consumequeue/<topic>/<queueId>/<20-digit start byte offset>` of
 * `mappedFileSizeConsumeQueue` bytes (a multiple of 20). Entry for queue offset q at logical
 * byte q × 20, big-endian:
 *
 *   0  commit-log physical offset  long
 *   8  record size (TOTALSIZE)     int
 *   12 tags code                   long  (Java hash of TAGS; deliver time for SCHEDULE_TOPIC_XXXX)
 *
 * An entry is valid when offset ≥ 0 && size > 0; the first invalid entry ends the data.
 * Pre-blank entries `(0, Integer.MAX_VALUE, 0)` fill a queue's first file up to its first real
 * entry when the queue starts at a non-zero offset; they never count as data.
 * maxOffset = written bytes / 20 (next offset to write); minOffset = minLogicOffset / 20.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { readLong, writeLong } from '../../common/message/record-codec.js';
import type { BoundaryType } from '../message-store.js';
import { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import { searchOffsetByTime, type StoreTimeLookup } from './consume-queue-time-search.js';

export const CQ_STORE_UNIT_SIZE = 20;
const PRE_BLANK_SIZE = 0x7fffffff;

export interface CqEntry {
  phyOffset: number;
  size: number;
  tagsCode: number;
}

export interface ConsumeQueueOptions {
  topic: string;
  queueId: number;
  /** `<root>/consumequeue` */
  rootDir: string;
  /** Multiple of 20. */
  fileSize: number;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
}

/** Decodes entry `i` (0-based) of a buffer of packed entries. */
export function readCqEntry(buf: Buffer, i: number): CqEntry {
  const at = i * CQ_STORE_UNIT_SIZE;
  return { phyOffset: readLong(buf, at), size: buf.readInt32BE(at + 8), tagsCode: readLong(buf, at + 12) };
}

function isValid(e: CqEntry): boolean {
  return e.phyOffset >= 0 && e.size > 0;
}
function isZeroSlot(buf: Buffer, at: number): boolean {
  return buf.readUInt32BE(at) === 0 && buf.readUInt32BE(at + 4) === 0 && buf.readUInt32BE(at + 8) === 0 && buf.readUInt32BE(at + 12) === 0 && buf.readUInt32BE(at + 16) === 0;
}
function isPreBlank(e: CqEntry): boolean {
  return e.phyOffset === 0 && e.size === PRE_BLANK_SIZE && e.tagsCode === 0;
}

export class ConsumeQueue {
  readonly topic: string;
  readonly queueId: number;
  readonly fileSize: number;
  private readonly mfq: MappedFileQueue;
  private readonly logger: Logger;
  /** End (offset + size) of the last entry written or recovered; -1 if none. */
  private maxPhysicOffset = -1;
  /** Byte position of the first valid entry. */
  private minLogicOffset = 0;
  private readonly entryBuf = Buffer.alloc(CQ_STORE_UNIT_SIZE);

  constructor(opts: ConsumeQueueOptions) {
    if (opts.fileSize % CQ_STORE_UNIT_SIZE !== 0) throw new RangeError(`CQ file size ${opts.fileSize} is not a multiple of 20`);
    this.topic = opts.topic;
    this.queueId = opts.queueId;
    this.fileSize = opts.fileSize;
    this.logger = opts.logger;
    this.mfq = new MappedFileQueue({
      dir: path.join(opts.rootDir, opts.topic, String(opts.queueId)),
      fileSize: opts.fileSize,
      fs: opts.fs,
      clock: opts.clock,
      logger: opts.logger,
      writeBufferBytes: Math.min(opts.fileSize, 16 * 1024),
      commitThresholdBytes: Math.min(opts.fileSize, 16 * 1024),
    });
  }

  load(): void {
    this.mfq.load();
  }

  getMappedFileQueue(): MappedFileQueue {
    return this.mfq;
  }

  /** Next queue offset to be written. */
  getMaxOffsetInQueue(): number {
    return this.mfq.getMaxOffset() / CQ_STORE_UNIT_SIZE;
  }
  getMinOffsetInQueue(): number {
    return this.minLogicOffset / CQ_STORE_UNIT_SIZE;
  }
  getMessageTotalInQueue(): number {
    return this.getMaxOffsetInQueue() - this.getMinOffsetInQueue();
  }
  /** End of the last entry's record in the commit log (-1 when the queue has no entry). */
  getMaxPhysicOffset(): number {
    return this.maxPhysicOffset;
  }
  /** Start queue offset of the CQ file after the one holding `queueOffset`. */
  rollNextFile(queueOffset: number): number {
    const perFile = this.fileSize / CQ_STORE_UNIT_SIZE;
    return queueOffset + perFile - (queueOffset % perFile);
  }

  /**
   * Writes the entry for `consumeQueueOffset` (RocketMQ `putMessagePositionInfo`). Idempotent:
   * entries whose record ends at or below the recorded max physical offset, and queue offsets
   * already written, are skipped. A queue's first file is pre-blank filled when the first offset
   * is not at the file start. Returns false only when the write failed.
   */
  putMessagePositionInfo(phyOffset: number, size: number, tagsCode: number, consumeQueueOffset: number): boolean {
    if (phyOffset + size <= this.maxPhysicOffset) return true;
    const expected = consumeQueueOffset * CQ_STORE_UNIT_SIZE;
    const firstCreate = this.mfq.getFiles().length === 0;
    const mf = this.mfq.getLastMappedFileOrCreate(expected);
    if (firstCreate && consumeQueueOffset !== 0 && mf.getWrotePosition() === 0) {
      this.minLogicOffset = expected;
      this.fillPreBlank(mf, expected);
      this.mfq.setFlushedWhere(mf.fileFromOffset);
      this.mfq.setCommittedWhere(mf.fileFromOffset);
    }
    const current = mf.fileFromOffset + mf.getWrotePosition();
    if (expected < current) {
      this.logger.warn({ topic: this.topic, queueId: this.queueId, consumeQueueOffset, current: current / 20 }, 'consume queue entry written before; skipped');
      return true;
    }
    if (expected !== current) {
      this.logger.error(
        { topic: this.topic, queueId: this.queueId, expected: consumeQueueOffset, current: current / 20 },
        '[BUG] logic queue order maybe wrong',
      );
    }
    const b = this.entryBuf;
    writeLong(b, 0, phyOffset);
    b.writeInt32BE(size, 8);
    writeLong(b, 12, tagsCode);
    mf.append(b, 0, CQ_STORE_UNIT_SIZE);
    this.maxPhysicOffset = phyOffset + size;
    return true;
  }

  private fillPreBlank(mf: MappedFile, untilLogic: number): void {
    const blank = Buffer.alloc(CQ_STORE_UNIT_SIZE);
    writeLong(blank, 0, 0);
    blank.writeInt32BE(PRE_BLANK_SIZE, 8);
    writeLong(blank, 12, 0);
    const until = untilLogic % this.fileSize;
    for (let pos = mf.getWrotePosition(); pos < until; pos += CQ_STORE_UNIT_SIZE) mf.append(blank);
  }

  /** Raw packed entries from `queueOffset` to the end of its file (at most `maxCount`); null if unavailable. */
  readEntries(queueOffset: number, maxCount: number): { buf: Buffer; count: number } | null {
    const logic = queueOffset * CQ_STORE_UNIT_SIZE;
    if (logic < this.minLogicOffset) return null;
    const mf = this.mfq.findMappedFileByOffset(logic);
    if (!mf) return null;
    const pos = logic - mf.fileFromOffset;
    const count = Math.min(maxCount, Math.floor((mf.getWrotePosition() - pos) / CQ_STORE_UNIT_SIZE));
    if (count <= 0) return null;
    const buf = mf.read(pos, count * CQ_STORE_UNIT_SIZE);
    return buf ? { buf, count } : null;
  }

  /** The entry at `queueOffset`, or null when absent or below min. */
  getEntry(queueOffset: number): CqEntry | null {
    const r = this.readEntries(queueOffset, 1);
    if (!r) return null;
    const e = readCqEntry(r.buf, 0);
    return isValid(e) && !isPreBlank(e) ? e : null;
  }

  /**
   * Recovery after load (§3.4): scan from the third-from-last file, stop at the first invalid
   * entry, truncate there (zeroing the tail), drop empty trailing files while an earlier file
   * exists (B02), and recompute maxPhysicOffset.
   *
   * `removedEntries` counts only the slots cut off that held something (a torn or stale entry):
   * the zero-filled, never-written rest of a pre-allocated file is not an entry.
   */
  recover(): { validEntries: number; removedEntries: number } {
    const files = this.mfq.getFiles();
    if (files.length === 0) return { validEntries: 0, removedEntries: 0 };
    let index = Math.max(0, files.length - 3);
    let processOffset = files[index]!.fileFromOffset;
    let validEntries = 0;
    let maxPhy = -1;
    for (; index < files.length; index++) {
      const mf = files[index]!;
      const data = mf.read(0, this.fileSize)!;
      let pos = 0;
      for (; pos < this.fileSize; pos += CQ_STORE_UNIT_SIZE) {
        const e = readCqEntry(data, pos / CQ_STORE_UNIT_SIZE);
        if (!isValid(e)) break;
        if (!isPreBlank(e)) {
          maxPhy = e.phyOffset + e.size;
          validEntries++;
        }
      }
      processOffset = mf.fileFromOffset + pos;
      if (pos < this.fileSize) break;
    }
    const removedEntries = this.countWrittenSlotsFrom(processOffset);
    this.mfq.truncateDirtyFiles(processOffset);
    this.dropEmptyTrailingFiles();
    this.mfq.setFlushedWhere(this.mfq.getMaxOffset());
    this.mfq.setCommittedWhere(this.mfq.getMaxOffset());
    this.maxPhysicOffset = maxPhy;
    this.clampMin();
    return { validEntries, removedEntries };
  }

  /** Slots at or after logic offset `from` (up to each file's loaded length) with any non-zero byte. */
  private countWrittenSlotsFrom(from: number): number {
    let count = 0;
    for (const mf of this.mfq.getFiles()) {
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
  private dropEmptyTrailingFiles(): void {
    const files = this.mfq.getFiles();
    while (files.length > 1 && files[files.length - 1]!.getWrotePosition() === 0) this.mfq.deleteLastMappedFile();
  }

  private clampMin(): void {
    const max = this.mfq.getMaxOffset();
    if (this.minLogicOffset > max) this.minLogicOffset = max;
    const first = this.mfq.getFirstMappedFile();
    if (first && this.minLogicOffset < first.fileFromOffset) this.minLogicOffset = first.fileFromOffset;
    if (!first) this.minLogicOffset = 0;
  }

  /**
   * Removes every entry whose record starts at or beyond commit-log offset `phy` (§3.8). A last
   * file whose first entry is beyond `phy` or invalid is deleted; otherwise the file keeps the
   * entries below `phy` and its tail is zeroed. Returns the number of entries removed.
   */
  truncateDirtyLogicFiles(phy: number): number {
    const before = this.mfq.getMaxOffset();
    this.maxPhysicOffset = phy;
    for (;;) {
      const mf = this.mfq.getLastMappedFile();
      if (!mf) break;
      const data = mf.read(0, mf.getWrotePosition()) ?? Buffer.alloc(0);
      const n = data.length / CQ_STORE_UNIT_SIZE;
      let keep = 0;
      let lastEnd = -1;
      for (let i = 0; i < n; i++) {
        const e = readCqEntry(data, i);
        if (!isValid(e)) break;
        if (!isPreBlank(e)) {
          if (e.phyOffset >= phy) break;
          lastEnd = e.phyOffset + e.size;
        }
        keep = i + 1;
      }
      const hasRealEntry = lastEnd >= 0;
      if (keep === 0 || (!hasRealEntry && this.mfq.getFiles().length > 1)) {
        this.mfq.deleteLastMappedFile();
        continue;
      }
      mf.truncateTo(keep * CQ_STORE_UNIT_SIZE);
      this.maxPhysicOffset = hasRealEntry ? lastEnd : -1;
      break;
    }
    if (this.mfq.getFiles().length === 0) this.maxPhysicOffset = -1;
    const max = this.mfq.getMaxOffset();
    this.mfq.setFlushedWhere(Math.min(this.mfq.getFlushedWhere(), max));
    this.mfq.setCommittedWhere(Math.min(this.mfq.getCommittedWhere(), max));
    this.clampMin();
    return (before - max) / CQ_STORE_UNIT_SIZE;
  }

  /**
   * Moves minLogicOffset to the first entry whose record is at or above the commit-log min
   * offset (RocketMQ `correctMinOffset`); past the last entry when every entry is older (the
   * queue is then empty but keeps its position, B04).
   */
  correctMinOffset(minCommitLogOffset: number): void {
    const max = this.mfq.getMaxOffset();
    if (max === 0 || this.mfq.getFiles().length === 0) {
      this.minLogicOffset = max;
      return;
    }
    const lastQ = max / CQ_STORE_UNIT_SIZE - 1;
    const last = this.readEntryRaw(lastQ);
    if (!last || !isValid(last) || isPreBlank(last) || last.phyOffset < minCommitLogOffset) {
      this.minLogicOffset = max;
      return;
    }
    // binary search for the first entry with phyOffset >= min, from the current min
    let lo = Math.max(this.minLogicOffset, this.mfq.getFirstMappedFile()!.fileFromOffset) / CQ_STORE_UNIT_SIZE;
    let hi = lastQ;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const e = this.readEntryRaw(mid);
      const tooOld = !e || !isValid(e) || isPreBlank(e) || e.phyOffset < minCommitLogOffset;
      if (tooOld) lo = mid + 1;
      else hi = mid;
    }
    this.minLogicOffset = lo * CQ_STORE_UNIT_SIZE;
  }

  /** Sets the min offset explicitly (retention, tests). */
  setMinLogicOffset(bytes: number): void {
    this.minLogicOffset = bytes;
  }

  private readEntryRaw(queueOffset: number): CqEntry | null {
    const mf = this.mfq.findMappedFileByOffset(queueOffset * CQ_STORE_UNIT_SIZE);
    if (!mf) return null;
    const b = mf.read(queueOffset * CQ_STORE_UNIT_SIZE - mf.fileFromOffset, CQ_STORE_UNIT_SIZE);
    return b ? readCqEntry(b, 0) : null;
  }

  /** 5.x `getOffsetInQueueByTime` (§8), result clamped to [min, max]. */
  getOffsetInQueueByTime(timestampMs: number, boundary: BoundaryType, lookup: StoreTimeLookup): number {
    const min = this.getMinOffsetInQueue();
    const max = this.getMaxOffsetInQueue();
    if (max <= min) return max;
    const r = searchOffsetByTime(
      { minQueueOffset: min, maxQueueOffset: max, perFile: this.fileSize / CQ_STORE_UNIT_SIZE, entryAt: (q) => this.readEntryRaw(q) },
      timestampMs,
      boundary,
      lookup,
    );
    return Math.min(max, Math.max(min, r));
  }

  /** Store time of the earliest valid entry's record, -1 if none. */
  getEarliestMessageTime(lookup: StoreTimeLookup): number {
    const min = this.getMinOffsetInQueue();
    const max = this.getMaxOffsetInQueue();
    for (let q = min; q < max; q++) {
      const e = this.readEntryRaw(q);
      if (!e || !isValid(e)) return -1;
      if (isPreBlank(e)) continue;
      return lookup.getStoreTimestamp(e.phyOffset, e.size);
    }
    return -1;
  }

  commit(): void {
    this.mfq.commit(0);
  }
  flush(leastPages: number): Promise<number> {
    return this.mfq.flush(leastPages);
  }
  shutdown(): void {
    this.mfq.shutdown();
  }
  shutdownAbruptly(commitPending: boolean): void {
    this.mfq.shutdownAbruptly(commitPending);
  }
  /** Deletes all files and the queue directory. */
  destroy(): void {
    this.mfq.destroy();
    this.maxPhysicOffset = -1;
    this.minLogicOffset = 0;
  }
}
