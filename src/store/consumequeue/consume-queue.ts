/**
 * ConsumeQueue of one (topic, queueId) (RocketMQ `ConsumeQueue`, spec §2.3, §3.4, §3.8, §8): its
 * state (max physical offset, min logic offset), the write path and the lifecycle. The pieces:
 *
 *   consume-queue-entry.ts     20-byte unit codec and file layout, validity, pre-blanks
 *   consume-queue-recovery.ts  recovery after load (§3.4), truncation to a CommitLog offset (§3.8)
 *   consume-queue-lookup.ts    reads by queue offset, min-offset correction, search by time
 *   consume-queue-write-errors.ts  failed commits/flushes (ConsumeQueueWriteError, LOGICS_QUEUE_ERROR)
 *
 * Files `consumequeue/<topic>/<queueId>/<20-digit start byte offset>` of
 * `mappedFileSizeConsumeQueue` bytes (a multiple of 20; 300,000 units by default). Entry for
 * queue offset q at logical byte q × 20: 8 commit-log offset + 4 size + 8 tags code, big-endian.
 * maxOffset = written bytes / 20 (next offset to write); minOffset = minLogicOffset / 20.
 *
 * Writing (`putMessagePositionInfo`, RocketMQ's method of that name): an entry whose record ends
 * at or below the max physical offset, or whose queue offset was already written, is skipped
 * (idempotent rebuilds). While the queue holds no real entry, the file holding the entry is
 * filled with pre-blank entries up to it and the min starts there (RocketMQ `fillPreBlank`).
 * Entries go into the segment's write buffer; the MappedFile commits (pwrite) them on the next
 * event-loop turn (the ConsumeQueueStore then checks that it worked) and FlushConsumeQueueService
 * flushes them.
 *
 * Errors: `putMessagePositionInfo` throws when the file cannot be created or a full write buffer
 * cannot be committed (the entry is then not written; dispatch retries it). `commit`/`flush`
 * throw ConsumeQueueWriteError (consume-queue-write-errors.ts); the entries stay buffered.
 * RangeError from the constructor when the file size is not a multiple of 20.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import type { BoundaryType } from '../message-store.js';
import { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import { CQ_STORE_UNIT_SIZE, isZeroSlot, preBlankEntry, writeCqEntry, type CqEntry } from './consume-queue-entry.js';
import { earliestMessageTime, EntryReadAhead, findMinLogicOffset, getDataEntry, offsetInQueueByTime, readEntries } from './consume-queue-lookup.js';
import { recoverQueueFiles, truncateQueueFiles } from './consume-queue-recovery.js';
import type { StoreTimeLookup } from './consume-queue-time-search.js';
import { ConsumeQueueWriteError } from './consume-queue-write-errors.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';

export { CQ_STORE_UNIT_SIZE, readCqEntry, type CqEntry } from './consume-queue-entry.js';

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
  /** Told once per segment whose fdatasync fails (fsyncgate). */
  onSyncFailed?: (e: SyncFailedError) => void;
  /**
   * Commit the segments' buffered entries on the next event-loop turn after an append (default
   * true). False: they wait for `commit()` (ConsumeQueueStore's periodic commit), `flush`, or a
   * full 16 KiB write buffer.
   */
  commitOnNextTurn?: boolean;
}

/** Entries as columns (ConsumeQueue.putPositionColumns): CommitLog offset, size, tags code and queue offset of each row. */
export interface PositionColumns {
  readonly commitLogOffset: ArrayLike<number>;
  readonly msgSize: ArrayLike<number>;
  readonly tagsCode: ArrayLike<number>;
  readonly consumeQueueOffset: ArrayLike<number>;
}

export class ConsumeQueue {
  readonly topic: string;
  readonly queueId: number;
  readonly fileSize: number;
  private readonly mfq: MappedFileQueue;
  private readonly logger: Logger;
  /** Entries read ahead for pulls (created on the first read). */
  private readAhead: EntryReadAhead | null = null;
  /** End (offset + size) of the last entry written or recovered; -1 if none. */
  private maxPhysicOffset = -1;
  /** Byte position of the first valid entry. */
  private minLogicOffset = 0;
  /** Logic offset (bytes) from which the last recovery checked the entries; a re-dispatch below it verifies its slot (repairHole). */
  private checkedFromLogic = 0;
  private readonly entryBuf = Buffer.alloc(CQ_STORE_UNIT_SIZE);
  /** Entries of putMessagePositionInfos, before their one append. */
  private batchBuf = Buffer.alloc(0);

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
      ...(opts.commitOnNextTurn === false ? { commitOnNextTurn: false } : {}),
      ...(opts.onSyncFailed ? { onSyncFailed: opts.onSyncFailed } : {}),
    });
  }

  load(): void {
    this.mfq.load();
  }

  /** The first failed fdatasync of one of this queue's files (sticky, fsyncgate), or null. */
  getSyncFailure(): SyncFailedError | null {
    for (const f of this.mfq.getFiles()) {
      const e = f.getSyncFailure();
      if (e) return e;
    }
    return null;
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
   * already written, are skipped. Returns true (written or skipped).
   *
   * Pre-blanks: while the queue holds no real entry and the entry lies in its only file beyond
   * what is written, the file is filled with pre-blank entries up to it and the min starts there
   * (RocketMQ fills only a file it has just created; here a fill that a failed write interrupted,
   * in this process or before a restart, resumes where it stopped, so a retry writes exactly the
   * bytes of a run without the fault).
   * @throws the error of a file creation or of a commit the full write buffer needed; the entry
   *   (and the pre-blanks not yet appended) are then not written, a retry continues.
   */
  putMessagePositionInfo(phyOffset: number, size: number, tagsCode: number, consumeQueueOffset: number): boolean {
    if (phyOffset + size <= this.maxPhysicOffset) {
      if (consumeQueueOffset * CQ_STORE_UNIT_SIZE < this.checkedFromLogic) this.repairHole(phyOffset, size, tagsCode, consumeQueueOffset);
      return true;
    }
    const expected = consumeQueueOffset * CQ_STORE_UNIT_SIZE;
    const mf = this.mfq.getLastMappedFileOrCreate(expected);
    if (this.needsPreBlank(mf, expected)) {
      if (mf.getWrotePosition() === 0) {
        this.mfq.setFlushedWhere(mf.fileFromOffset);
        this.mfq.setCommittedWhere(mf.fileFromOffset);
      }
      this.minLogicOffset = expected;
      this.fillPreBlank(mf, expected);
    }
    const current = mf.getWroteOffset();
    if (expected < current) {
      if (expected < this.checkedFromLogic) this.repairHole(phyOffset, size, tagsCode, consumeQueueOffset);
      else this.logger.warn({ topic: this.topic, queueId: this.queueId, consumeQueueOffset, current: current / 20 }, 'consume queue entry written before; skipped');
      return true;
    }
    let target = mf;
    if (expected !== current) {
      // Entries are missing before this one (RocketMQ logs this line and appends at the wrong
      // position). Their records are not in the CommitLog any more: the abnormal recovery
      // re-dispatches from the oldest file left, and retention deleted the (expired) file that
      // held records whose entries never reached the device. The gap gets pre-blanks so this
      // entry lands at its own queue offset; the min offset correction moves past them.
      this.logger.error(
        { topic: this.topic, queueId: this.queueId, expected: consumeQueueOffset, current: current / 20 },
        '[BUG] logic queue order maybe wrong; the missing entries are filled with pre-blanks',
      );
      target = this.fillGap(expected);
    }
    writeCqEntry(this.entryBuf, 0, phyOffset, size, tagsCode);
    target.append(this.entryBuf, 0, CQ_STORE_UNIT_SIZE);
    this.maxPhysicOffset = phyOffset + size;
    return true;
  }

  /**
   * Writes the entries of `records` (consecutive queue offsets of this queue, ascending CommitLog
   * positions: the records of one prepared block), exactly as `putMessagePositionInfo` for each
   * in order would. When the next entry goes at the end of the last file, no pre-blank is due and
   * they all fit in that file, they are written with one append; otherwise one by one.
   * @throws as putMessagePositionInfo; entries written before the failure stay written (a retry
   *   skips them).
   */
  putMessagePositionInfos(records: readonly { commitLogOffset: number; msgSize: number; tagsCode: number; consumeQueueOffset: number }[]): void {
    const n = records.length;
    if (n === 0) return;
    const c = this.entryColumns(n);
    for (let k = 0; k < n; k++) {
      const r = records[k]!;
      c.commitLogOffset[k] = r.commitLogOffset;
      c.msgSize[k] = r.msgSize;
      c.tagsCode[k] = r.tagsCode;
      c.consumeQueueOffset[k] = r.consumeQueueOffset;
    }
    this.putPositionColumns(c, null, n);
  }

  /**
   * `putMessagePositionInfos` for entries held as columns: entry j is row `rows[j]` of `c`
   * (row j when `rows` is null), j < n (a prepared block's records of this queue,
   * PreparedDispatchBlock). Same rules and errors.
   */
  putPositionColumns(c: PositionColumns, rows: ArrayLike<number> | null, n: number): void {
    if (n === 0) return;
    const f = rows === null ? 0 : rows[0]!;
    const l = rows === null ? n - 1 : rows[n - 1]!;
    const expected = c.consumeQueueOffset[f]! * CQ_STORE_UNIT_SIZE;
    const mf = this.mfq.getLastMappedFile();
    const fast =
      n > 1 &&
      mf !== null &&
      c.commitLogOffset[f]! + c.msgSize[f]! > this.maxPhysicOffset &&
      mf.getWroteOffset() === expected &&
      mf.getWrotePosition() > 0 &&
      !this.needsPreBlank(mf, expected) &&
      n * CQ_STORE_UNIT_SIZE <= mf.remaining() &&
      c.consumeQueueOffset[l] === c.consumeQueueOffset[f]! + n - 1;
    if (!fast) {
      for (let j = 0; j < n; j++) {
        const i = rows === null ? j : rows[j]!;
        this.putMessagePositionInfo(c.commitLogOffset[i]!, c.msgSize[i]!, c.tagsCode[i]!, c.consumeQueueOffset[i]!);
      }
      return;
    }
    const bytes = n * CQ_STORE_UNIT_SIZE;
    if (this.batchBuf.length < bytes) this.batchBuf = Buffer.allocUnsafe(Math.max(bytes, this.batchBuf.length * 2));
    const buf = this.batchBuf;
    for (let j = 0; j < n; j++) {
      const i = rows === null ? j : rows[j]!;
      writeCqEntry(buf, j * CQ_STORE_UNIT_SIZE, c.commitLogOffset[i]!, c.msgSize[i]!, c.tagsCode[i]!);
    }
    mf!.append(buf, 0, bytes);
    this.maxPhysicOffset = c.commitLogOffset[l]! + c.msgSize[l]!;
  }

  /** Scratch columns of putMessagePositionInfos (grown, reused). */
  private entryColumns(n: number): { commitLogOffset: Float64Array; msgSize: Int32Array; tagsCode: Float64Array; consumeQueueOffset: Float64Array } {
    let c = this.scratch;
    if (c === null || c.msgSize.length < n) {
      const cap = Math.max(n, 2 * (c?.msgSize.length ?? 0), 64);
      c = this.scratch = { commitLogOffset: new Float64Array(cap), msgSize: new Int32Array(cap), tagsCode: new Float64Array(cap), consumeQueueOffset: new Float64Array(cap) };
    }
    return c;
  }

  private scratch: { commitLogOffset: Float64Array; msgSize: Int32Array; tagsCode: Float64Array; consumeQueueOffset: Float64Array } | null = null;

  /**
   * A re-dispatched record whose entry lies below the files recovery checked: when its slot came
   * back zero (a power loss kept newer files of the queue but lost a page of this older one), the
   * entry is written in place; the abnormal recovery's force then makes it durable. A slot holding
   * anything else is left alone.
   */
  private repairHole(phyOffset: number, size: number, tagsCode: number, consumeQueueOffset: number): void {
    const at = consumeQueueOffset * CQ_STORE_UNIT_SIZE;
    const mf = this.mfq.findMappedFileByOffset(at);
    if (!mf) return;
    const slot = mf.read(at - mf.fileFromOffset, CQ_STORE_UNIT_SIZE);
    if (!slot || !isZeroSlot(slot, 0)) return;
    writeCqEntry(this.entryBuf, 0, phyOffset, size, tagsCode);
    if (mf.overwriteCommitted(at - mf.fileFromOffset, this.entryBuf, 0, CQ_STORE_UNIT_SIZE)) {
      this.logger.warn({ topic: this.topic, queueId: this.queueId, consumeQueueOffset, phyOffset }, 'consume queue entry below the recovered files was zero (lost page); written again from its record');
    }
  }

  /** No real entry yet, `mf` is the queue's only file, and `expected` lies in it beyond what is written. */
  private needsPreBlank(mf: MappedFile, expected: number): boolean {
    return (
      this.maxPhysicOffset < 0 &&
      this.mfq.getFiles().length === 1 &&
      expected > mf.getWroteOffset() &&
      expected < mf.fileFromOffset + this.fileSize
    );
  }

  /**
   * Appends pre-blank entries from the queue's end up to logic offset `untilLogic` (bytes),
   * across file boundaries; returns the file the entry at `untilLogic` goes into.
   * @throws the error of a file creation or of a commit a full write buffer needed (a retry
   *   continues from what was appended).
   */
  private fillGap(untilLogic: number): MappedFile {
    const blank = preBlankEntry();
    for (;;) {
      const mf = this.mfq.getLastMappedFileOrCreate(untilLogic);
      if (mf.getWroteOffset() >= untilLogic) return mf;
      mf.append(blank);
    }
  }

  /** Appends pre-blank entries from the file's written position up to logic offset `untilLogic`. */
  private fillPreBlank(mf: MappedFile, untilLogic: number): void {
    const blank = preBlankEntry();
    const until = untilLogic - mf.fileFromOffset;
    for (let pos = mf.getWrotePosition(); pos < until; pos += CQ_STORE_UNIT_SIZE) mf.append(blank);
  }

  /**
   * Raw packed entries from `queueOffset` to the end of its file (at most `maxCount`); null if
   * unavailable. Pull-sized reads go through the queue's read-ahead (EntryReadAhead); with
   * `transient` they are a view of its buffer, valid only until this queue is read again (the
   * pull path's scan, which reads them at once), instead of a copy.
   */
  readEntries(queueOffset: number, maxCount: number, transient = false): { buf: Buffer; count: number } | null {
    this.readAhead ??= new EntryReadAhead();
    return readEntries(this.mfq, this.minLogicOffset, queueOffset, maxCount, this.readAhead, transient);
  }

  /** The entry at `queueOffset`, or null when absent or below min. */
  getEntry(queueOffset: number): CqEntry | null {
    return getDataEntry(this.mfq, this.minLogicOffset, queueOffset);
  }

  /**
   * Recovery after load (§3.4, consume-queue-recovery.ts): scan from the third-from-last file,
   * stop at the first invalid entry, truncate there (zeroing the tail), drop empty trailing files
   * while an earlier file exists (B02), and recompute maxPhysicOffset. `removedEntries` counts
   * only the slots cut off that held something.
   */
  recover(): { validEntries: number; removedEntries: number } {
    if (this.mfq.getFiles().length === 0) return { validEntries: 0, removedEntries: 0 };
    // recoverQueueFiles checks the last three files (as they are before it truncates anything);
    // a re-dispatched entry below them verifies its slot (repairHole)
    const files = this.mfq.getFiles();
    this.checkedFromLogic = files[Math.max(0, files.length - 3)]!.fileFromOffset;
    const r = recoverQueueFiles(this.mfq);
    this.maxPhysicOffset = r.maxPhysicOffset;
    this.clampMin();
    return { validEntries: r.validEntries, removedEntries: r.removedEntries };
  }

  private clampMin(): void {
    const max = this.mfq.getMaxOffset();
    if (this.minLogicOffset > max) this.minLogicOffset = max;
    const first = this.mfq.getFirstMappedFile();
    if (first && this.minLogicOffset < first.fileFromOffset) this.minLogicOffset = first.fileFromOffset;
    if (!first) this.minLogicOffset = 0;
  }

  /**
   * Removes every entry whose record starts at or beyond commit-log offset `phy` (§3.8,
   * consume-queue-recovery.ts). Returns the number of entries removed.
   */
  truncateDirtyLogicFiles(phy: number): number {
    const r = truncateQueueFiles(this.mfq, phy);
    this.maxPhysicOffset = r.maxPhysicOffset;
    this.clampMin();
    return r.removedEntries;
  }

  /**
   * Moves minLogicOffset to the first entry whose record is at or above the commit-log min
   * offset (RocketMQ `correctMinOffset`); past the last entry when every entry is older (the
   * queue is then empty but keeps its position, B04).
   */
  correctMinOffset(minCommitLogOffset: number): void {
    this.minLogicOffset = findMinLogicOffset(this.mfq, this.minLogicOffset, minCommitLogOffset);
  }

  /** Sets the min offset explicitly (retention, tests). */
  setMinLogicOffset(bytes: number): void {
    this.minLogicOffset = bytes;
  }

  /** 5.x `getOffsetInQueueByTime` (§8), result clamped to [min, max]. */
  getOffsetInQueueByTime(timestampMs: number, boundary: BoundaryType, lookup: StoreTimeLookup): number {
    return offsetInQueueByTime(this.mfq, this.getMinOffsetInQueue(), this.getMaxOffsetInQueue(), timestampMs, boundary, lookup);
  }

  /** Store time of the earliest valid entry's record, -1 if none. */
  getEarliestMessageTime(lookup: StoreTimeLookup): number {
    return earliestMessageTime(this.mfq, this.getMinOffsetInQueue(), this.getMaxOffsetInQueue(), lookup);
  }

  /**
   * Writes (pwrite) every buffered entry. @throws ConsumeQueueWriteError (op "commit") naming the
   * first entry not written; the entries stay buffered for a later commit.
   */
  commit(): void {
    this.skipDeletedFiles();
    try {
      this.mfq.commit(0);
    } catch (e) {
      throw new ConsumeQueueWriteError(this, 'commit', this.firstUnwritten((f) => f.getCommittedPosition()), e);
    }
  }

  /**
   * Commits, then flushes (fdatasync) with the page rule of `leastPages`; returns the flushed
   * position. @throws ConsumeQueueWriteError: op "commit" when the pwrite failed, "flush" (naming
   * the first entry not flushed) when the fdatasync did.
   */
  async flush(leastPages: number): Promise<number> {
    this.commit();
    try {
      return await this.mfq.flush(leastPages);
    } catch (e) {
      throw new ConsumeQueueWriteError(this, 'flush', this.firstUnwritten((f) => f.getFlushedPosition()), e);
    }
  }

  /**
   * Retention may delete a queue's first files before they were flushed (while flushes fail):
   * committed/flushed positions below the first file move to its start, otherwise the
   * MappedFileQueue would not find the file to continue from and never flush again.
   */
  private skipDeletedFiles(): void {
    const first = this.mfq.getFirstMappedFile();
    if (!first) return;
    if (this.mfq.getCommittedWhere() < first.fileFromOffset) this.mfq.setCommittedWhere(first.fileFromOffset);
    if (this.mfq.getFlushedWhere() < first.fileFromOffset) this.mfq.setFlushedWhere(first.fileFromOffset);
  }

  /** Queue offset of the first entry at or beyond `done(file)` of the first file not done up to its written position. */
  private firstUnwritten(done: (f: MappedFile) => number): number {
    for (const f of this.mfq.getFiles()) {
      const d = done(f);
      if (d < f.getWrotePosition()) return (f.fileFromOffset + d) / CQ_STORE_UNIT_SIZE;
    }
    return this.getMaxOffsetInQueue();
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
