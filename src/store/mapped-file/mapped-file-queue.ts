/**
 * An ordered list of equally sized segment files in one directory forming one logical byte
 * stream (RocketMQ `MappedFileQueue`). File k starts at logical offset `first + k × fileSize` and
 * is named after that offset (see file-names.ts).
 *
 * Positions kept at queue level (absolute logical offsets): `flushedWhere`, `committedWhere`.
 * `getMaxOffset()` = end of written data (wrote), `getMinOffset()` = start of the first file.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { systemClock } from '../../common/time/clock.js';
import { AllocateMappedFileService } from './allocate-mapped-file-service.js';
import { fileNameToOffset, isSegmentFileName, offsetToFileName, segmentOfTruncationMarker, TRUNCATION_MARKER_SUFFIX } from './file-names.js';
import { MappedFile, type MappedFileOptions } from './mapped-file.js';
import type { PrewriteOptions } from './segment-prewriter.js';
import type { SyncFailedError } from './sync-failed-error.js';

export interface MappedFileQueueOptions {
  dir: string;
  fileSize: number;
  fs: FileSystem;
  clock?: Clock;
  logger?: Logger;
  writeBufferBytes?: number;
  commitThresholdBytes?: number;
  /** Commit with asynchronous writes on the libuv pool (MappedFileOptions.asyncCommit). Default false. */
  asyncCommit?: boolean;
  /** appendDirect writes on the libuv pool (MappedFileOptions.asyncDirectWrites). Default false. */
  asyncDirectWrites?: boolean;
  /** Commit on the next turn after an append (MappedFileOptions.commitOnNextTurn). Default true. */
  commitOnNextTurn?: boolean;
  /** Pre-create the next segment in the background (CommitLog). */
  preallocate?: boolean;
  /** With `preallocate`: also pre-write it with zeros (warmMapedFileEnable). */
  prewrite?: PrewriteOptions | null;
  /** Told once per file when its fdatasync/fsync fails (MappedFileOptions.onSyncFailed). */
  onSyncFailed?: (e: SyncFailedError) => void;
}

/** Thrown by `load()` when a segment has the wrong length or a file name is malformed. */
export class SegmentLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SegmentLoadError';
  }
}

export class MappedFileQueue {
  readonly dir: string;
  readonly fileSize: number;
  private readonly files: MappedFile[] = [];
  private readonly fileOpts: MappedFileOptions;
  private readonly logger: Logger;
  private readonly allocator: AllocateMappedFileService | null;
  private flushedWhere = 0;
  private committedWhere = 0;
  /** Store time of the last message of the file flushed by the last `flush(0)` (checkpoint physicMsgTimestamp). */
  private storeTimestamp = 0;
  /** Flushes running and when the last one started or ended (epoch ms): the pre-writer yields to them. */
  private readonly flushActivity = { inFlight: 0, lastMs: Number.NEGATIVE_INFINITY };
  private flushObserver: ((bytes: number, latencyMs: number) => void) | null = null;

  constructor(opts: MappedFileQueueOptions) {
    if (!Number.isSafeInteger(opts.fileSize) || opts.fileSize <= 0) throw new RangeError(`bad fileSize ${opts.fileSize}`);
    this.dir = opts.dir;
    this.fileSize = opts.fileSize;
    this.logger = opts.logger ?? silentLogger;
    this.fileOpts = {
      fs: opts.fs,
      clock: opts.clock ?? systemClock,
      ...(opts.writeBufferBytes !== undefined ? { writeBufferBytes: opts.writeBufferBytes } : {}),
      ...(opts.commitThresholdBytes !== undefined ? { commitThresholdBytes: opts.commitThresholdBytes } : {}),
      ...(opts.asyncCommit !== undefined ? { asyncCommit: opts.asyncCommit } : {}),
      ...(opts.asyncDirectWrites !== undefined ? { asyncDirectWrites: opts.asyncDirectWrites } : {}),
      ...(opts.commitOnNextTurn !== undefined ? { commitOnNextTurn: opts.commitOnNextTurn } : {}),
      ...(opts.onSyncFailed ? { onSyncFailed: opts.onSyncFailed } : {}),
    };
    const clock = this.clock;
    const pw = opts.prewrite ?? null;
    const yieldWithinMs = pw?.yieldToFlushesWithinMs ?? 0;
    const activity = this.flushActivity;
    const prewrite: PrewriteOptions | null =
      pw && yieldWithinMs > 0 && !pw.yieldWhile
        ? { ...pw, yieldWhile: () => activity.inFlight > 0 || clock.nowMs() - activity.lastMs < yieldWithinMs }
        : pw;
    this.allocator = opts.preallocate ? new AllocateMappedFileService(opts.fileSize, this.fileOpts, this.logger, prewrite) : null;
  }

  private get fs(): FileSystem {
    return this.fileOpts.fs;
  }

  private get clock(): Clock {
    return this.fileOpts.clock ?? systemClock;
  }

  /**
   * Loads the directory's segments sorted by name. A zero-length LAST file is deleted (crash
   * during creation). A segment with a truncation marker (`<name>.truncating`, see
   * MappedFile.truncateTo) was being shrunk and re-extended when the process died: a short one
   * is extended with zeros to fileSize (the bytes it kept are the ones the truncation meant to
   * keep) and the marker removed. Any other length ≠ fileSize throws SegmentLoadError (e.g. a
   * changed size setting; nothing is modified then). Loaded files start full (positions =
   * fileSize); recovery moves them back.
   */
  load(): void {
    if (this.files.length > 0) throw new Error(`MappedFileQueue ${this.dir} already loaded`);
    const names = this.fs.readdir(this.dir).sort();
    const segments = names.filter((n) => isSegmentFileName(n));
    const interrupted = new Set<string>();
    for (const other of names.filter((n) => !isSegmentFileName(n))) {
      const segment = segmentOfTruncationMarker(other);
      if (segment !== null) interrupted.add(segment);
      else this.logger.warn({ dir: this.dir, file: other }, 'ignoring non-segment file in segment directory');
    }
    for (const segment of interrupted) this.completeTruncation(segment);
    for (let i = 0; i < segments.length; i++) {
      const filePath = path.join(this.dir, segments[i]!);
      const stat = this.fs.stat(filePath);
      if (!stat || !stat.isFile) continue;
      if (stat.sizeBytes === 0 && i === segments.length - 1) {
        this.logger.warn({ filePath }, 'deleting zero-length last segment');
        this.fs.unlink(filePath);
        continue;
      }
      if (stat.sizeBytes !== this.fileSize) {
        this.closeAll();
        throw new SegmentLoadError(
          `segment ${filePath} has length ${stat.sizeBytes} but the configured segment size is ${this.fileSize}; ` +
            'refusing to load (was the mapped file size setting changed? If not, the file is damaged: ' +
            '`tsmq store repair --store <storePathRootDir>` lists the fix, with --apply it makes it and keeps a backup)',
        );
      }
      const fromOffset = fileNameToOffset(segments[i]!);
      if (fromOffset % this.fileSize !== 0) {
        this.closeAll();
        throw new SegmentLoadError(`segment ${filePath}: start offset ${fromOffset} is not a multiple of ${this.fileSize}`);
      }
      this.files.push(MappedFile.openExisting(filePath, fromOffset, this.fileSize, this.fileOpts));
    }
    this.checkSelf();
  }

  /** Finishes a truncateTo the process died in: a short segment is extended with zeros; the marker goes. */
  private completeTruncation(segment: string): void {
    const filePath = path.join(this.dir, segment);
    const stat = this.fs.stat(filePath);
    if (stat?.isFile && stat.sizeBytes < this.fileSize) {
      this.logger.warn({ filePath, sizeBytes: stat.sizeBytes, fileSize: this.fileSize }, 'completing an interrupted truncation: extending the segment with zeros');
      const fd = this.fs.open(filePath, 'r+');
      try {
        this.fs.ftruncate(fd, this.fileSize);
      } finally {
        this.fs.close(fd);
      }
    }
    this.fs.unlink(`${filePath}${TRUNCATION_MARKER_SUFFIX}`);
  }

  /** Logs an error when adjacent files are not exactly one file size apart. */
  checkSelf(): boolean {
    for (let i = 1; i < this.files.length; i++) {
      const gap = this.files[i]!.fileFromOffset - this.files[i - 1]!.fileFromOffset;
      if (gap !== this.fileSize) {
        this.logger.error({ dir: this.dir, prev: this.files[i - 1]!.filePath, next: this.files[i]!.filePath }, 'segment files are not contiguous');
        return false;
      }
    }
    return true;
  }

  getFiles(): readonly MappedFile[] {
    return this.files;
  }
  getFirstMappedFile(): MappedFile | null {
    return this.files[0] ?? null;
  }
  /** The last file, without creating one. */
  getLastMappedFile(): MappedFile | null {
    return this.files[this.files.length - 1] ?? null;
  }

  /**
   * The last file, creating a new one when there is none (at `startOffset` rounded down to a file
   * boundary) or the last one is full. @throws if the file cannot be created.
   */
  getLastMappedFileOrCreate(startOffset: number): MappedFile {
    const last = this.getLastMappedFile();
    let createOffset = -1;
    if (!last) createOffset = startOffset - (startOffset % this.fileSize);
    else if (last.isFull()) createOffset = last.fileFromOffset + this.fileSize;
    if (createOffset < 0) return last!;
    return this.createFileAt(createOffset);
  }

  /**
   * When the queue has no file yet, creates (and with pre-writing, fully pre-writes) the one
   * that the first append at `startOffset` will use. Resolves when it is ready; no-op otherwise.
   * @throws the creation error (e.g. ENOSPC), with no file left behind.
   */
  async prepareFirstFile(startOffset: number): Promise<void> {
    if (this.files.length > 0 || !this.allocator) return;
    const fromOffset = startOffset - (startOffset % this.fileSize);
    this.fs.mkdirp(this.dir);
    await this.allocator.prepare(path.join(this.dir, offsetToFileName(fromOffset)), fromOffset);
  }

  /** The background allocator (CommitLog), for tests and diagnostics. */
  getAllocator(): AllocateMappedFileService | null {
    return this.allocator;
  }

  private createFileAt(fromOffset: number): MappedFile {
    this.fs.mkdirp(this.dir);
    const filePath = path.join(this.dir, offsetToFileName(fromOffset));
    const file = this.allocator ? this.allocator.obtain(filePath, fromOffset) : MappedFile.create(filePath, fromOffset, this.fileSize, this.fileOpts);
    this.files.push(file);
    if (this.allocator) {
      const next = fromOffset + this.fileSize;
      this.allocator.request(path.join(this.dir, offsetToFileName(next)), next);
    }
    return file;
  }

  /** The file containing logical `offset`, or null (or the first file when `returnFirstOnNotFound`). */
  findMappedFileByOffset(offset: number, returnFirstOnNotFound = false): MappedFile | null {
    const first = this.files[0];
    if (!first) return null;
    const last = this.files[this.files.length - 1]!;
    if (offset < first.fileFromOffset || offset >= last.fileFromOffset + this.fileSize) {
      return returnFirstOnNotFound ? first : null;
    }
    const index = Math.floor(offset / this.fileSize) - Math.floor(first.fileFromOffset / this.fileSize);
    const candidate = this.files[index];
    if (candidate && offset >= candidate.fileFromOffset && offset < candidate.fileFromOffset + this.fileSize) return candidate;
    for (const f of this.files) {
      if (offset >= f.fileFromOffset && offset < f.fileFromOffset + this.fileSize) return f;
    }
    return returnFirstOnNotFound ? first : null;
  }

  /** Start offset of the first file, or -1 when there are no files (RocketMQ `getMinOffset`). */
  getMinOffset(): number {
    return this.files[0]?.fileFromOffset ?? -1;
  }
  /** End of written data (0 when there are no files). */
  getMaxOffset(): number {
    const last = this.getLastMappedFile();
    return last ? last.fileFromOffset + last.getWrotePosition() : 0;
  }
  getFlushedWhere(): number {
    return this.flushedWhere;
  }
  setFlushedWhere(offset: number): void {
    this.flushedWhere = offset;
  }
  getCommittedWhere(): number {
    return this.committedWhere;
  }
  setCommittedWhere(offset: number): void {
    this.committedWhere = offset;
  }
  getStoreTimestamp(): number {
    return this.storeTimestamp;
  }
  /** Bytes written but not yet flushed. */
  howMuchFallBehind(): number {
    return Math.max(0, this.getMaxOffset() - this.flushedWhere);
  }

  /** Commits buffered bytes of every file with the page rule; returns the new committedWhere. */
  commit(leastPages: number): number {
    let f = this.findMappedFileByOffset(this.committedWhere, this.committedWhere === 0);
    while (f) {
      const pos = f.commit(leastPages);
      this.committedWhere = Math.max(this.committedWhere, f.fileFromOffset + pos);
      if (pos !== this.fileSize) break;
      f = this.findMappedFileByOffset(f.fileFromOffset + this.fileSize);
    }
    return this.committedWhere;
  }

  /**
   * Flushes (commit + fdatasync off the loop) starting with the file holding `flushedWhere` and
   * moving on while files are completely flushed, following RocketMQ's page rules (§4.1).
   * Only `leastPages = 0` updates the store timestamp. Returns the new flushedWhere.
   */
  async flush(leastPages: number): Promise<number> {
    this.flushActivity.inFlight++;
    this.flushActivity.lastMs = this.clock.nowMs();
    const observer = this.flushObserver;
    const before = this.flushedWhere;
    const t0 = observer ? performance.now() : 0;
    try {
      const flushed = await this.flushFiles(leastPages);
      if (observer && flushed > before) observer(flushed - before, performance.now() - t0);
      return flushed;
    } finally {
      this.flushActivity.inFlight--;
      this.flushActivity.lastMs = this.clock.nowMs();
    }
  }

  /**
   * Called after each flush that wrote bytes: `bytes` made durable by it (one fdatasync per
   * segment touched) and its duration in ms (fractional), for metrics; null = none.
   */
  setFlushObserver(observer: ((bytes: number, latencyMs: number) => void) | null): void {
    this.flushObserver = observer;
  }

  private async flushFiles(leastPages: number): Promise<number> {
    let f = this.findMappedFileByOffset(this.flushedWhere, this.flushedWhere === 0);
    while (f) {
      const timestamp = f.storeTimestamp;
      const pos = await f.flush(leastPages);
      const where = f.fileFromOffset + pos;
      if (where > this.flushedWhere) this.flushedWhere = where;
      if (where > this.committedWhere) this.committedWhere = where;
      if (leastPages === 0 && timestamp > 0) this.storeTimestamp = timestamp;
      if (pos !== this.fileSize) break;
      f = this.findMappedFileByOffset(f.fileFromOffset + this.fileSize);
    }
    return this.flushedWhere;
  }

  /**
   * Forces (MappedFile.force) every file holding bytes at or after `fromOffset`, in order, even
   * those the positions call flushed. Rejects with the first fdatasync error.
   */
  async forceFrom(fromOffset: number): Promise<void> {
    for (const f of [...this.files]) {
      if (f.fileFromOffset + this.fileSize > fromOffset) await f.force();
    }
  }

  /**
   * Like `forceFrom`, but every file's committed bytes are written again before the force
   * (MappedFile.rewriteAndForce): for data the page cache may hold without the device having it.
   */
  async rewriteFrom(fromOffset: number): Promise<void> {
    for (const f of [...this.files]) {
      if (f.fileFromOffset + this.fileSize > fromOffset) await f.rewriteAndForce();
    }
  }

  /**
   * Truncates the stream to `offset`: files starting at or after it are destroyed, the file
   * containing it keeps [0, offset) and has its tail zeroed on disk. flushed/committed are
   * clamped to `offset`. `truncatedBytes` counts the non-zero bytes discarded (each file is
   * examined over at most 4 MiB after the cut).
   */
  truncateDirtyFiles(offset: number): { destroyedFiles: number; truncatedBytes: number } {
    let destroyedFiles = 0;
    let truncatedBytes = 0;
    const willRemove: MappedFile[] = [];
    let cut: MappedFile | null = null;
    for (const f of this.files) {
      const tail = f.fileFromOffset + this.fileSize;
      if (tail <= offset) continue;
      if (offset >= f.fileFromOffset) cut = f;
      else {
        truncatedBytes += nonZeroEnd(f, 0);
        willRemove.push(f);
      }
    }
    // later files go first: a crash inside truncateTo (shrink, then re-extend) then leaves a
    // short LAST file, which load() completes, never a short file in the middle
    for (const f of willRemove) {
      if (!f.destroy(1000)) this.logger.warn({ filePath: f.filePath }, 'truncated segment still held; it will be removed once released');
      destroyedFiles++;
    }
    this.removeFiles(willRemove);
    if (cut) {
      const pos = offset - cut.fileFromOffset;
      truncatedBytes += nonZeroEnd(cut, pos) - pos;
      cut.truncateTo(pos);
    }
    this.flushedWhere = Math.min(this.flushedWhere, offset);
    this.committedWhere = Math.min(this.committedWhere, offset);
    return { destroyedFiles, truncatedBytes };
  }

  /** Destroys the last file (ConsumeQueue truncation). */
  deleteLastMappedFile(): void {
    const last = this.getLastMappedFile();
    if (!last) return;
    last.destroy(1000);
    this.files.pop();
  }

  /** Removes `toRemove` from the list (they must already be destroyed). */
  removeFiles(toRemove: readonly MappedFile[]): void {
    for (const f of toRemove) {
      const i = this.files.indexOf(f);
      if (i >= 0) this.files.splice(i, 1);
    }
  }

  /** Closes every file in order (clean shutdown). Pending bytes are committed first. */
  shutdown(): void {
    this.allocator?.shutdown();
    this.closeAll();
  }

  /** Crash simulation: fds closed at once; `commitPending` decides whether buffered bytes reach the page cache. */
  shutdownAbruptly(commitPending: boolean): void {
    this.allocator?.shutdownAbruptly();
    for (const f of this.files) f.closeAbruptly(commitPending);
    this.files.length = 0;
  }

  /** Deletes every file and the directory (topic deletion, `destroy()`). */
  destroy(): void {
    this.allocator?.shutdown();
    for (const f of this.files) f.destroy(3000);
    this.files.length = 0;
    this.flushedWhere = 0;
    this.committedWhere = 0;
    this.fs.rmrf(this.dir);
  }

  private closeAll(): void {
    for (const f of this.files) f.close();
    this.files.length = 0;
  }
}

/**
 * End of the last non-zero byte of `mf` in [from, min(wrote, from + limitBytes)), or `from` when
 * that range is all zeros. Used to report how much real data a truncation discards.
 */
function nonZeroEnd(mf: MappedFile, from: number, limitBytes = 4 * 1024 * 1024): number {
  const end = Math.min(mf.getWrotePosition(), from + limitBytes);
  const chunk = Buffer.allocUnsafe(64 * 1024);
  let last = from;
  for (let pos = from; pos < end; pos += chunk.length) {
    const n = Math.min(chunk.length, end - pos);
    if (!mf.readInto(pos, chunk, 0, n)) break;
    for (let i = n - 1; i >= 0; i--) {
      if (chunk[i] !== 0) {
        last = pos + i + 1;
        break;
      }
    }
  }
  return last;
}
