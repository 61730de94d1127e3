/**
 * One fixed-size segment file of a CommitLog or ConsumeQueue (RocketMQ `DefaultMappedFile`),
 * implemented with buffered positional writes instead of mmap (RocketMQ's transient-store-pool
 * mode):
 *
 *   [0, flushedPosition)           forced to the device (fdatasync)
 *   [0, committedPosition)         handed to the OS with pwrite (page cache)
 *   [committedPosition, wrotePosition)  only in this object's write buffer
 *   [wrotePosition, fileSize)      free (zeros on disk: a new file is created at full size)
 *
 * Invariant: flushed ≤ committed ≤ wrote ≤ fileSize, committed + pendingBytes = wrote.
 *
 * Appends copy into the write buffer (or are encoded straight into it: `reserve`/`advance`)
 * and never wait on the disk. The buffer is committed (pwrite) on the next `setImmediate` after
 * an append, whenever it passes `commitThresholdBytes`, and before every flush. `flush()` runs
 * fdatasync off the event loop. Readers see everything below wrotePosition: committed bytes come
 * from the file (pread), the rest from the write buffer. Reads return copies, taken under
 * hold/release within one synchronous call, so a reader never sees a closed descriptor.
 *
 * Reference counting (hold/release/shutdown) follows RocketMQ `ReferenceResource`, §5.1: the fd
 * is closed only once no reader or flush holds the file, and never while an asynchronous
 * operation on it (fdatasync, pre-write) is still queued or running — not even after a forced
 * release — so the descriptor number cannot be reused under it.
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Clock } from '../../common/time/clock.js';
import { systemClock } from '../../common/time/clock.js';
import { TRUNCATION_MARKER_SUFFIX } from './file-names.js';
import { ReferenceResource } from './reference-resource.js';
import { SyncFailedError } from './sync-failed-error.js';

/** OS page size used by the flush/commit page rules (RocketMQ `OS_PAGE_SIZE`). */
export const OS_PAGE_SIZE = 4096;

export interface MappedFileOptions {
  fs: FileSystem;
  clock?: Clock;
  /** Write-buffer capacity; appends larger than this are written straight through. Default 4 MiB (capped at the file size). */
  writeBufferBytes?: number;
  /** Commit synchronously once this many bytes are pending. Default 256 KiB (the buffer prefix in use stays cache-resident; see io-engine.md). */
  commitThresholdBytes?: number;
  /**
   * Told once, synchronously, when an fdatasync/fsync of the file fails (fsyncgate: the file is
   * then sync-failed for good, see `getSyncFailure`).
   */
  onSyncFailed?: (e: SyncFailedError) => void;
}

const DEFAULT_WRITE_BUFFER_BYTES = 4 * 1024 * 1024;
const DEFAULT_COMMIT_THRESHOLD_BYTES = 256 * 1024;

export class MappedFile extends ReferenceResource {
  private readonly fs: FileSystem;
  private fd: number;
  private fdClosed = false;
  private wrotePosition: number;
  private committedPosition: number;
  private flushedPosition: number;
  private writeBuffer: Buffer | null = null;
  private readonly writeBufferBytes: number;
  private readonly commitThresholdBytes: number;
  private commitScheduled = false;
  private flushInFlight: Promise<number> | null = null;
  private contentEpoch = 0;
  /** fdatasync/pre-write operations on `fd` not settled yet: the fd is never closed under them. */
  private asyncOps = 0;
  private closeDeferred = false;
  /** Store time of the last message appended (CommitLog only; feeds checkpoint physicMsgTimestamp). */
  storeTimestamp = 0;
  /** Error of the last failed commit (pwrite) of buffered bytes, null after a successful one (disk full detection). */
  commitError: Error | null = null;
  /** The first failed fdatasync/fsync; sticky (fsyncgate, sync-failed-error.ts). */
  private syncFailure: SyncFailedError | null = null;
  private readonly onSyncFailed: ((e: SyncFailedError) => void) | undefined;

  private constructor(
    readonly filePath: string,
    readonly fileFromOffset: number,
    readonly fileSize: number,
    fd: number,
    initialPosition: number,
    opts: MappedFileOptions,
  ) {
    super(opts.clock ?? systemClock);
    this.fs = opts.fs;
    this.fd = fd;
    this.wrotePosition = initialPosition;
    this.committedPosition = initialPosition;
    this.flushedPosition = initialPosition;
    this.writeBufferBytes = Math.min(fileSize, opts.writeBufferBytes ?? DEFAULT_WRITE_BUFFER_BYTES);
    this.commitThresholdBytes = Math.min(this.writeBufferBytes, opts.commitThresholdBytes ?? DEFAULT_COMMIT_THRESHOLD_BYTES);
    this.onSyncFailed = opts.onSyncFailed;
  }

  /** Creates (or re-creates, truncating) a zero-filled file of exactly `fileSize` bytes; positions 0. */
  static create(filePath: string, fileFromOffset: number, fileSize: number, opts: MappedFileOptions): MappedFile {
    assertSize(fileFromOffset, fileSize);
    const fd = opts.fs.open(filePath, 'w+');
    try {
      opts.fs.ftruncate(fd, fileSize);
    } catch (e) {
      opts.fs.close(fd);
      opts.fs.unlink(filePath);
      throw e;
    }
    return new MappedFile(filePath, fileFromOffset, fileSize, fd, 0, opts);
  }

  /**
   * Opens an existing segment. Like RocketMQ's load, all positions start at `fileSize`; recovery
   * then moves them back with `setPositions`/`truncateTo`. @throws if the on-disk size differs.
   */
  static openExisting(filePath: string, fileFromOffset: number, fileSize: number, opts: MappedFileOptions): MappedFile {
    assertSize(fileFromOffset, fileSize);
    const fd = opts.fs.open(filePath, 'r+');
    const actual = opts.fs.fstatSize(fd);
    if (actual !== fileSize) {
      opts.fs.close(fd);
      throw new Error(`segment ${filePath} has length ${actual}, expected ${fileSize}`);
    }
    return new MappedFile(filePath, fileFromOffset, fileSize, fd, fileSize, opts);
  }

  /**
   * Moves on whenever bytes below the write position may change (recovery positions, truncation,
   * an overwrite of committed bytes): a cache of this file's bytes is valid only for one epoch.
   */
  getContentEpoch(): number {
    return this.contentEpoch;
  }

  getWrotePosition(): number {
    return this.wrotePosition;
  }
  getCommittedPosition(): number {
    return this.committedPosition;
  }
  getFlushedPosition(): number {
    return this.flushedPosition;
  }
  /** Bytes still free in this file. */
  remaining(): number {
    return this.fileSize - this.wrotePosition;
  }
  isFull(): boolean {
    return this.wrotePosition === this.fileSize;
  }
  /** Logical offset one past the last written byte. */
  getWroteOffset(): number {
    return this.fileFromOffset + this.wrotePosition;
  }

  /**
   * Appends `len` bytes of `src` at wrotePosition. @throws RangeError if they do not fit or the
   * file is shut down (callers check `remaining()` first).
   */
  append(src: Buffer, srcOffset = 0, len = src.length - srcOffset): void {
    if (!this.available) throw new RangeError(`append to a shut-down segment ${this.filePath}`);
    if (len > this.remaining()) throw new RangeError(`append of ${len} bytes exceeds remaining ${this.remaining()} in ${this.filePath}`);
    if (len === 0) return;
    let pending = this.wrotePosition - this.committedPosition;
    if (pending + len > this.writeBufferBytes) {
      this.commitNow();
      pending = 0;
    }
    if (len > this.writeBufferBytes) {
      this.fs.pwrite(this.fd, src, srcOffset, len, this.wrotePosition);
      this.wrotePosition += len;
      this.committedPosition = this.wrotePosition;
      return;
    }
    this.writeBuffer ??= Buffer.allocUnsafe(this.writeBufferBytes);
    src.copy(this.writeBuffer, pending, srcOffset, srcOffset + len);
    this.wrotePosition += len;
    if (pending + len >= this.commitThresholdBytes) this.tryCommit();
    else this.scheduleCommit();
  }

  /**
   * In-place append, step 1: makes room for `len` bytes in the write buffer (committing what is
   * pending when they would not fit) and returns where they go in `writeBufferRef()`; the caller
   * writes them there and calls `advance(len)`. Returns -1 when `len` exceeds the write buffer
   * (use `append`). Nothing is visible to readers before `advance`.
   * @throws RangeError as `append`.
   */
  reserve(len: number): number {
    if (!this.available) throw new RangeError(`append to a shut-down segment ${this.filePath}`);
    if (len > this.remaining()) throw new RangeError(`append of ${len} bytes exceeds remaining ${this.remaining()} in ${this.filePath}`);
    if (len > this.writeBufferBytes) return -1;
    let pending = this.wrotePosition - this.committedPosition;
    if (pending + len > this.writeBufferBytes) {
      this.commitNow();
      pending = 0;
    }
    this.writeBuffer ??= Buffer.allocUnsafe(this.writeBufferBytes);
    return pending;
  }

  /** The write buffer `reserve` pointed into (valid until the next append, commit or close). */
  writeBufferRef(): Buffer {
    return this.writeBuffer!;
  }

  /** In-place append, step 2: the `len` bytes written at the reserved position become part of the file. */
  advance(len: number): void {
    const pending = this.wrotePosition - this.committedPosition + len;
    if (len < 0 || pending > this.writeBufferBytes || len > this.remaining()) throw new RangeError(`advance(${len}) without a matching reserve in ${this.filePath}`);
    this.wrotePosition += len;
    if (pending >= this.commitThresholdBytes) this.tryCommit();
    else this.scheduleCommit();
  }

  /**
   * Appends `head` and declares the rest of the file written (the end-of-file filler): the gap
   * after `head` is already zero on disk, because segments are created zero-filled and
   * truncation zeroes the tail. Flushed position is unchanged.
   * @throws the write error when `head` (with what was buffered before it) cannot be written;
   *   `head` is then taken back, so the segment is as before and takes no append behind a filler.
   */
  appendAndFillToEnd(head: Buffer): void {
    const before = this.wrotePosition;
    this.append(head);
    try {
      this.commitNow();
    } catch (e) {
      // not written: take the filler back, or later appends would land behind it in this segment
      // (readers and recovery skip everything after a filler to the next segment)
      if (this.committedPosition <= before) {
        this.wrotePosition = before;
        if (this.wrotePosition === this.committedPosition) this.commitError = null; // no failed bytes kept
      }
      throw e;
    }
    this.wrotePosition = this.fileSize;
    this.committedPosition = this.fileSize;
    this.writeBuffer = null;
  }

  /** Copies [position, position+len) into `dst` at `dstOffset`; false if not readable (beyond wrote or closed). */
  readInto(position: number, dst: Buffer, dstOffset: number, len: number): boolean {
    if (position < 0 || len < 0 || position + len > this.wrotePosition) return false;
    if (!this.hold()) return false;
    try {
      const fromFile = Math.max(0, Math.min(this.committedPosition, position + len) - position);
      if (fromFile > 0) {
        const n = this.fs.pread(this.fd, dst, dstOffset, fromFile, position);
        if (n !== fromFile) return false;
      }
      if (fromFile < len) {
        const bufStart = position + fromFile - this.committedPosition;
        this.writeBuffer!.copy(dst, dstOffset + fromFile, bufStart, bufStart + len - fromFile);
      }
      return true;
    } finally {
      this.release();
    }
  }

  /**
   * Writes `len` bytes of `src` at `position` inside the committed range (recovery repairing a
   * slot that came back zero, e.g. a ConsumeQueue entry). Returns false when the range is not
   * committed or the file is shut down. @throws the pwrite error.
   */
  overwriteCommitted(position: number, src: Buffer, srcOffset: number, len: number): boolean {
    if (position < 0 || len <= 0 || position + len > this.committedPosition) return false;
    if (!this.hold()) return false;
    try {
      this.contentEpoch++;
      this.fs.pwrite(this.fd, src, srcOffset, len, position);
      return true;
    } finally {
      this.release();
    }
  }

  /** A copy of [position, position+len), or null if not readable. */
  read(position: number, len: number): Buffer | null {
    const out = Buffer.allocUnsafe(len);
    return this.readInto(position, out, 0, len) ? out : null;
  }

  /** RocketMQ page rule for commit/flush: full, or ≥ leastPages whole pages, or anything when leastPages = 0. */
  static isAbleTo(target: number, done: number, fileSize: number, leastPages: number): boolean {
    if (target === fileSize && done < fileSize) return true;
    if (leastPages > 0) return Math.floor(target / OS_PAGE_SIZE) - Math.floor(done / OS_PAGE_SIZE) >= leastPages;
    return target > done;
  }

  /** Commits pending bytes if the page rule allows; returns the committed position. */
  commit(leastPages: number): number {
    if (MappedFile.isAbleTo(this.wrotePosition, this.committedPosition, this.fileSize, leastPages)) this.commitNow();
    return this.committedPosition;
  }

  /**
   * pwrites every pending byte into the file (page cache). @throws the write error (e.g.
   * ENOSPC); the bytes then stay buffered, the error is kept in `commitError` until a commit
   * succeeds.
   */
  commitNow(): void {
    const pending = this.wrotePosition - this.committedPosition;
    if (pending === 0 || this.fdClosed) return;
    try {
      this.fs.pwrite(this.fd, this.writeBuffer!, 0, pending, this.committedPosition);
    } catch (e) {
      this.commitError = e as Error;
      throw e;
    }
    this.commitError = null;
    this.committedPosition = this.wrotePosition;
    if (this.isFull()) this.writeBuffer = null; // a full file never buffers again
  }

  /** The first failed sync of this file, or null. Once set it stays set (fsyncgate). */
  getSyncFailure(): SyncFailedError | null {
    return this.syncFailure;
  }

  /**
   * Commits, then fdatasyncs (off the loop) if the page rule (on wrote vs flushed) allows.
   * Returns the flushed position. Concurrent calls share one fdatasync at a time.
   * @throws SyncFailedError when this fdatasync, or any earlier one of the file, failed: the
   *   kernel may have dropped the unwritten pages, so a later "successful" fdatasync proves
   *   nothing and flushedPosition stays where it was (fsyncgate, sync-failed-error.ts). A failed
   *   commit (pwrite) throws its own error.
   */
  async flush(leastPages: number): Promise<number> {
    while (this.flushInFlight) await this.flushInFlight.catch(() => undefined);
    if (this.syncFailure) throw this.syncFailure;
    if (!MappedFile.isAbleTo(this.wrotePosition, this.flushedPosition, this.fileSize, leastPages)) return this.flushedPosition;
    if (!this.hold()) return this.flushedPosition;
    const run = async (): Promise<number> => {
      try {
        this.commitNow();
        const target = this.committedPosition;
        await this.syncFd(target, false);
        if (target > this.flushedPosition) this.flushedPosition = target;
        return this.flushedPosition;
      } finally {
        this.release();
      }
    };
    const p = run();
    this.flushInFlight = p;
    try {
      return await p;
    } finally {
      if (this.flushInFlight === p) this.flushInFlight = null;
    }
  }

  /** Sets all three positions (recovery of a file whose content is known to be valid up to `position`). */
  setPositions(position: number): void {
    if (position < 0 || position > this.fileSize) throw new RangeError(`position ${position} outside [0, ${this.fileSize}]`);
    this.commitNow();
    this.contentEpoch++;
    this.wrotePosition = position;
    this.committedPosition = position;
    this.flushedPosition = position;
  }

  /**
   * Truncates this segment's content to `position`: positions move there and the bytes
   * [position, fileSize) are zeroed on disk (shrink + re-extend), so stale records can never be
   * read again. The file keeps its full size. A `<name>.truncating` marker exists while the file
   * may be short, so a crash in between is completed by the next load (MappedFileQueue.load).
   */
  truncateTo(position: number): void {
    if (position < 0 || position > this.fileSize) throw new RangeError(`position ${position} outside [0, ${this.fileSize}]`);
    this.contentEpoch++;
    if (position > this.committedPosition) {
      // commit the still-valid buffered prefix, drop the rest
      const keep = Math.min(position, this.wrotePosition) - this.committedPosition;
      if (keep > 0) this.fs.pwrite(this.fd, this.writeBuffer!, 0, keep, this.committedPosition);
    }
    if (position < this.fileSize) {
      // the marker says "short = interrupted truncation" to the next load if we crash in between
      const marker = `${this.filePath}${TRUNCATION_MARKER_SUFFIX}`;
      this.fs.writeFile(marker, Buffer.from(`${this.fileSize}\n`));
      this.fs.ftruncate(this.fd, position);
      this.fs.ftruncate(this.fd, this.fileSize);
      this.fs.unlink(marker);
    }
    this.wrotePosition = position;
    this.committedPosition = position;
    this.flushedPosition = position;
  }

  /**
   * Forces the file (data + size metadata) regardless of positions, e.g. after `truncateTo`.
   * @throws SyncFailedError as `flush` (a failed fsync makes the file sync-failed for good).
   */
  async force(): Promise<void> {
    if (this.syncFailure) throw this.syncFailure;
    if (!this.hold()) return;
    try {
      this.commitNow();
      await this.syncFd(this.committedPosition, true);
    } finally {
      this.release();
    }
  }

  /**
   * Writes the committed bytes [0, committedPosition) again, unchanged (in `chunkBytes` pieces),
   * then forces the file like `force`. For data read back after the crash of a process on this
   * boot: if one of its fdatasyncs failed, Linux may have marked the dirty pages clean without
   * writing them (fsyncgate); they are still in the page cache, so reads see them, but not on the
   * device, and a plain fdatasync would not write them. A write makes them dirty again.
   * All-zero 4 KiB pages are not written: they may be unallocated (a sparse tail after the
   * end-of-file filler) and writing them would take disk space; the files are append-only, so
   * such a page never holds anything else on the device.
   * @throws SyncFailedError as `force`; the error of a failed pread/pwrite.
   */
  async rewriteAndForce(chunkBytes = 1 << 20): Promise<void> {
    if (this.syncFailure) throw this.syncFailure;
    if (!this.hold()) return;
    try {
      this.commitNow();
      const end = this.committedPosition;
      const buf = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(end, 1)));
      for (let pos = 0; pos < end; pos += buf.length) {
        const len = Math.min(buf.length, end - pos);
        const n = this.fs.pread(this.fd, buf, 0, len, pos);
        if (n !== len) throw new Error(`short read of ${this.filePath} at ${pos}: ${n} of ${len} bytes`);
        // runs of pages holding a non-zero byte
        for (let p = 0; p < len; ) {
          const pageEnd = (q: number): number => Math.min(len, q + OS_PAGE_SIZE);
          if (isZero(buf, p, pageEnd(p))) {
            p = pageEnd(p);
            continue;
          }
          let q = pageEnd(p);
          while (q < len && !isZero(buf, q, pageEnd(q))) q = pageEnd(q);
          this.fs.pwrite(this.fd, buf, p, q - p, pos + p);
          p = q;
        }
      }
      await this.syncFd(end, true);
    } finally {
      this.release();
    }
  }

  /**
   * fdatasync for the segment pre-writer (its zeros). A failure makes the file sync-failed only
   * when appends already went into it (it was taken while the pre-write ran: the kernel may have
   * dropped their pages too); a failure on a file nobody uses yet only costs zeros.
   */
  async syncPrewritten(): Promise<void> {
    try {
      await this.onFd((fd) => this.fs.fdatasync(fd));
    } catch (e) {
      if (this.wrotePosition > 0 && !this.fdClosed && !this.syncFailure) {
        this.syncFailure = new SyncFailedError(this.filePath, this.flushedPosition, this.committedPosition, e);
        this.onSyncFailed?.(this.syncFailure);
      }
      throw e;
    }
  }

  /** fdatasync (or fsync with `full`); a failure becomes the file's sticky SyncFailedError. */
  private async syncFd(target: number, full: boolean): Promise<void> {
    try {
      await this.onFd((fd) => (full ? this.fs.fsync(fd) : this.fs.fdatasync(fd)));
    } catch (e) {
      if ((e as { code?: unknown }).code === 'EBADF' && this.fdClosed) throw e; // closed under us: not a device failure
      if (!this.syncFailure) {
        this.syncFailure = new SyncFailedError(this.filePath, this.flushedPosition, target, e);
        this.onSyncFailed?.(this.syncFailure);
      }
      throw this.syncFailure;
    }
  }

  /** Shuts the file down and deletes it once no holder is left. Returns true when deleted. */
  destroy(intervalForciblyMs: number): boolean {
    this.shutdown(intervalForciblyMs);
    if (!this.isCleanupOver()) return false;
    this.fs.unlink(this.filePath);
    return true;
  }

  /** Orderly close (no delete): commits pending bytes, then releases the owner's reference. */
  close(): void {
    if (this.available) this.tryCommit(); // a failed write (disk full) must not keep the fd open
    this.shutdown(0);
  }

  /**
   * Crash simulation: closes the fd at once. With `commitPending` the buffered bytes reach the
   * page cache first (a process crash after the OS got them); without, they are lost. A commit
   * that fails (e.g. ENOSPC) loses them too, as the write would have in that process.
   */
  closeAbruptly(commitPending: boolean): void {
    if (commitPending) {
      try {
        this.commitNow();
      } catch {
        // the bytes never reached the page cache: lost with the process
      }
    }
    this.available = false;
    this.closeFd();
  }

  protected cleanup(_currentRef: number): boolean {
    if (this.available) return false;
    this.closeFd();
    return true;
  }

  private closeFd(): void {
    if (this.fdClosed) return;
    this.fdClosed = true;
    this.writeBuffer = null;
    if (this.asyncOps > 0) {
      // a forced release (or a crash simulation) while an fdatasync/pre-write runs on the pool:
      // the descriptor number must not be reused under it, so it is closed when the op settles
      this.closeDeferred = true;
      return;
    }
    this.fs.close(this.fd);
    this.fd = -1;
  }

  /**
   * Runs an asynchronous operation on the file descriptor (callers hold the file). The fd stays
   * open until the operation settles, even if the file is released forcibly meanwhile.
   * @throws EBADF-style Error when the file is already closed.
   */
  async onFd<T>(op: (fd: number) => Promise<T>): Promise<T> {
    if (this.fdClosed) throw Object.assign(new Error(`segment ${this.filePath} is closed`), { code: 'EBADF' });
    this.asyncOps++;
    try {
      return await op(this.fd);
    } finally {
      if (--this.asyncOps === 0 && this.closeDeferred) {
        this.closeDeferred = false;
        this.fs.close(this.fd);
        this.fd = -1;
      }
    }
  }

  private scheduleCommit(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      if (this.available && !this.fdClosed) this.tryCommit();
    });
  }

  /** commitNow for the background and threshold commits: a failure is kept in `commitError`, never thrown (retried later). */
  private tryCommit(): void {
    try {
      this.commitNow();
    } catch {
      // recorded in commitError; the store refuses puts until a later commit succeeds
    }
  }
}

function assertSize(fileFromOffset: number, fileSize: number): void {
  if (!Number.isSafeInteger(fileSize) || fileSize <= 0) throw new RangeError(`bad segment size ${fileSize}`);
  if (!Number.isSafeInteger(fileFromOffset) || fileFromOffset < 0 || fileFromOffset % fileSize !== 0) {
    throw new RangeError(`segment start ${fileFromOffset} is not a multiple of its size ${fileSize}`);
  }
}

/** True when buf[from, to) holds only zero bytes. */
function isZero(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== 0) return false;
  return true;
}
