/**
 * One fixed-size segment file of a CommitLog or ConsumeQueue (RocketMQ `DefaultMappedFile`),
 * implemented with buffered positional writes instead of mmap (RocketMQ's transient-store-pool
 * mode):
 *
 *   [0, flushedPosition)           forced to the device (fdatasync)
 *   [0, committedPosition)         in the file (page cache): every write below it completed
 *   [committedPosition, gapEnd)    being written by the one asynchronous write in flight, or
 *                                  left by a failed write (retried by the next commit)
 *   [gapEnd, submittedPosition)    written (synchronously, while the async write ran)
 *   [submittedPosition, wrotePosition)  only in this object's write buffers
 *   [wrotePosition, fileSize)      free (zeros on disk: a new file is created at full size)
 *
 * Invariant: flushed ≤ committed ≤ gapEnd ≤ submitted ≤ wrote ≤ fileSize; when there is no gap
 * (gapEnd = committed) then submitted = committed.
 *
 * Appends copy into the active write buffer (or are encoded straight into it: `reserve`/
 * `advance`) and never wait on the disk. The buffers are committed on the next `setImmediate`
 * after an append, whenever `commitThresholdBytes` are pending, and before every flush.
 *
 * With `asyncCommit` (and a FileSystem with `pwriteAsync`) a commit is a positional write on
 * the libuv pool, one at a time; appends go on meanwhile, and when one completes the next write
 * takes everything pending since. Ownership: bytes handed to a write are never changed until it
 * completes (buffers are append-only; a buffer is reused or dropped only once none of its bytes
 * is in flight or unwritten), so a full active buffer during a write makes a new one (a pool of
 * one spare). Readers see everything below wrotePosition: bytes held by a buffer are copied from
 * it, the rest (committed or written) is read from the file (pread). `whenCommitted(p)` tells
 * when the bytes below p reached the page cache (or why not). `flush()` waits for the writes
 * before its fdatasync, so it forces only completed writes; truncation refuses to run with a
 * write in flight (callers flush first), the fd is closed only after the write settles.
 * Without `asyncCommit` every commit is a synchronous pwrite (ConsumeQueues, test file systems
 * without `pwriteAsync`).
 *
 * Reads return copies, taken under hold/release within one synchronous call, so a reader never
 * sees a closed descriptor.
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
  /** Commit once this many bytes are pending. Default 256 KiB (the buffer prefix in use stays cache-resident; see io-engine.md). */
  commitThresholdBytes?: number;
  /**
   * Commit with asynchronous positional writes on the libuv pool (`fs.pwriteAsync`; ignored when
   * the file system has none) instead of a synchronous pwrite on the calling thread. Default false.
   */
  asyncCommit?: boolean;
  /**
   * `appendDirect` hands its bytes to asynchronous positional writes on the libuv pool
   * (`fs.pwriteAsync`; ignored when the file system has none) instead of writing them on the
   * calling thread, whatever `asyncCommit` says (see `appendDirect`). Default false.
   */
  asyncDirectWrites?: boolean;
  /**
   * Commit on the next `setImmediate` after an append (default true). False: an append below
   * `commitThresholdBytes` stays in the write buffer until the owner commits (`commit`, `flush`)
   * or the threshold is reached; readers see it all the same. For files whose owner commits many
   * of them together on its own schedule (ConsumeQueueStore), so that a turn that appends to N
   * files does not schedule N immediates and N pwrites.
   */
  commitOnNextTurn?: boolean;
  /**
   * Told once, synchronously, when an fdatasync/fsync of the file fails (fsyncgate: the file is
   * then sync-failed for good, see `getSyncFailure`).
   */
  onSyncFailed?: (e: SyncFailedError) => void;
}

const DEFAULT_WRITE_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Largest single pwrite of appendDirect / an append larger than the write buffer. Measured on the
 * 2-core machine (1.3 GB written from 4 MiB blocks of records prepared seconds before): 4 MiB
 * pwrites took 2–4× the kernel time of 256 KiB ones (docs/internals/timer-store.md).
 */
export const WRITE_THROUGH_PIECE_BYTES = 256 * 1024;
const DEFAULT_COMMIT_THRESHOLD_BYTES = 256 * 1024;
/**
 * Largest single asynchronous write of bytes handed over by `appendDirect` (asyncDirectWrites):
 * a foreign chunk (up to a 4 MiB block) goes to the libuv pool as pieces of this size, all
 * submitted at once (no event-loop turn between them; one at a time made the writes wait for
 * the event loop, which was busy with the next block).
 */
export const DIRECT_WRITE_PIECE_BYTES = 1024 * 1024;

/**
 * Writes the file range [from, to) held by `group` (consecutive foreign chunks) with writePieces
 * per chunk, all submitted at once; settles once all settled, rejecting with the first error.
 */
async function writeGroup(write: NonNullable<FileSystem['pwriteAsync']>, fd: number, group: readonly WriteChunk[], from: number, to: number): Promise<void> {
  if (group.length === 1) {
    const c = group[0]!;
    await writePieces(write, fd, c.buf, from - c.base, to - from, from);
    return;
  }
  const parts: Promise<void>[] = [];
  for (const c of group) {
    const a = Math.max(from, c.base);
    const b = Math.min(to, c.end);
    if (b > a) parts.push(writePieces(write, fd, c.buf, a - c.base, b - a, a));
  }
  const settled = await Promise.allSettled(parts);
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
}

/**
 * Writes [off, off+len) of `buf` at `pos` as pieces of at most DIRECT_WRITE_PIECE_BYTES submitted
 * together; settles once every piece settled (never while one still runs on the fd), rejecting
 * with the first error.
 */
async function writePieces(write: NonNullable<FileSystem['pwriteAsync']>, fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<void> {
  if (len <= DIRECT_WRITE_PIECE_BYTES) {
    await write(fd, buf, off, len, pos);
    return;
  }
  const pieces: Promise<number>[] = [];
  for (let done = 0; done < len; done += DIRECT_WRITE_PIECE_BYTES) pieces.push(write(fd, buf, off + done, Math.min(DIRECT_WRITE_PIECE_BYTES, len - done), pos + done));
  const settled = await Promise.allSettled(pieces);
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
}

/**
 * One write buffer: holds the file's bytes [base, end) at buf[0, end - base). A `foreign` chunk
 * is the caller's memory handed over by `appendDirect` (asyncDirectWrites): read from and written
 * out, never appended into, reused or recycled; dropped once its bytes are in the file.
 */
interface WriteChunk {
  buf: Buffer;
  base: number;
  end: number;
  foreign?: true;
}

/**
 * Told by `notifyWhenCommitted`: `err` null once the bytes below the position it was registered
 * for are in the file, else the error of the write that failed for them. `arg` is what the caller
 * registered (so callers need no closure per call).
 */
export type CommitListener<T> = (err: Error | null, arg: T) => void;

/**
 * Callers of `notifyWhenCommitted` waiting for bytes no write was started for yet, told together
 * once committed ≥ `position` (the largest of theirs). Per caller: listener, argument and its own
 * position (a failed write tells the callers whose bytes did get in `null`).
 */
interface CommitWaiterGroup {
  position: number;
  /** Callers in the group: entries [0, count) of the three arrays (reused when the group is recycled). */
  count: number;
  listeners: CommitListener<unknown>[];
  args: unknown[];
  positions: number[];
  /** Set when the group is settled: the failed write's error (null: committed) and the committed position then. */
  err: Error | null;
  committedAt: number;
}

function resolveWith(err: Error | null, resolve: (err: Error | null) => void): void {
  resolve(err);
}

export class MappedFile extends ReferenceResource {
  private readonly fs: FileSystem;
  private fd: number;
  private fdClosed = false;
  private wrotePosition: number;
  private committedPosition: number;
  private flushedPosition: number;
  /** End of the range [committed, gapEnd) in flight or left by a failed write (= committed when none). */
  private gapEnd: number;
  /** Bytes below were handed to a write (completed, or the one in flight). */
  private submittedPosition: number;
  /** Write buffers in position order; the last one takes appends when its end is wrotePosition. */
  private chunks: WriteChunk[] = [];
  /** A buffer no chunk uses any more (reused before allocating). */
  private spareBuffer: Buffer | null = null;
  /** The chunk whose bytes the asynchronous write in flight reads (null: none in flight). */
  private flightChunk: WriteChunk | null = null;
  /** Every chunk the write in flight reads, in position order (flightChunk first; several only for consecutive foreign chunks). */
  private flightChunks: WriteChunk[] = [];
  /** In position order; only the last group takes new callers (see notifyWhenCommitted). */
  private commitWaiters: CommitWaiterGroup[] = [];
  /** Settled groups whose listeners are called on the next microtask (never inside a commit: a listener may append). */
  private settledWaiters: CommitWaiterGroup[] = [];
  /** A told group kept for the next turn (its arrays keep their capacity: no regrowth per turn). */
  private spareWaiterGroup: CommitWaiterGroup | null = null;
  private readonly asyncWrite: NonNullable<FileSystem['pwriteAsync']> | null;
  /** The libuv-pool write of foreign chunks (asyncDirectWrites), null: appendDirect writes on this thread. */
  private readonly directWrite: NonNullable<FileSystem['pwriteAsync']> | null;
  private readonly writeBufferBytes: number;
  private readonly commitThresholdBytes: number;
  private commitScheduled = false;
  private flushInFlight: Promise<number> | null = null;
  private contentEpoch = 0;
  /** fdatasync/pre-write/commit operations on `fd` not settled yet: the fd is never closed under them. */
  private asyncOps = 0;
  private closeDeferred = false;
  /** Store time of the last message appended (CommitLog only; feeds checkpoint physicMsgTimestamp). */
  storeTimestamp = 0;
  /** Error of the last failed commit (pwrite) of buffered bytes, null after a successful one (disk full detection). */
  commitError: Error | null = null;
  /** The first failed fdatasync/fsync; sticky (fsyncgate, sync-failed-error.ts). */
  private syncFailure: SyncFailedError | null = null;
  private readonly onSyncFailed: ((e: SyncFailedError) => void) | undefined;
  /** MappedFileOptions.commitOnNextTurn. */
  private readonly commitOnNextTurn: boolean;

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
    this.gapEnd = initialPosition;
    this.submittedPosition = initialPosition;
    this.writeBufferBytes = Math.min(fileSize, opts.writeBufferBytes ?? DEFAULT_WRITE_BUFFER_BYTES);
    this.commitThresholdBytes = Math.min(this.writeBufferBytes, opts.commitThresholdBytes ?? DEFAULT_COMMIT_THRESHOLD_BYTES);
    this.asyncWrite = opts.asyncCommit && opts.fs.pwriteAsync ? opts.fs.pwriteAsync.bind(opts.fs) : null;
    this.directWrite = opts.asyncDirectWrites && opts.fs.pwriteAsync ? opts.fs.pwriteAsync.bind(opts.fs) : null;
    this.onSyncFailed = opts.onSyncFailed;
    this.commitOnNextTurn = opts.commitOnNextTurn !== false;
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
  /** True while an asynchronous commit write of this file is running. */
  isWriteInFlight(): boolean {
    return this.flightChunk !== null;
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
   * file is shut down (callers check `remaining()` first); the write error when a synchronous
   * commit needed to make room fails.
   */
  append(src: Buffer, srcOffset = 0, len = src.length - srcOffset): void {
    if (!this.available) throw new RangeError(`append to a shut-down segment ${this.filePath}`);
    if (len > this.remaining()) throw new RangeError(`append of ${len} bytes exceeds remaining ${this.remaining()} in ${this.filePath}`);
    if (len === 0) return;
    if (len > this.writeBufferBytes) {
      this.writeThrough(src, srcOffset, len);
      return;
    }
    const c = this.roomFor(len);
    src.copy(c.buf, this.wrotePosition - c.base, srcOffset, srcOffset + len);
    this.grow(c, len);
  }

  /**
   * Appends `len` bytes of `src` without copying them into a write buffer. For large blocks
   * already encoded elsewhere (CommitLog.appendPrepared): one copy (the kernel's) instead of two.
   *
   * Without `asyncDirectWrites` (or a `pwriteAsync`): what is buffered is committed first, then
   * `src` is written into the file at once (synchronous pwrite on this thread), so the bytes are
   * committed (page cache) when this returns and `src` may change again. @throws the write
   * error, and then nothing was appended (write position unchanged; bytes the failed write may
   * have left after it are overwritten by the next append).
   *
   * With `asyncDirectWrites`: `src` becomes a foreign chunk of this file and is written on the
   * libuv pool (another thread) in pieces of DIRECT_WRITE_PIECE_BYTES, in file order after
   * everything appended before it; this thread does not wait. The bytes are appended (readers
   * see them, copied from `src`, as they see buffered bytes) when this returns; the committed
   * position passes them only once their write completed (`whenCommitted`), and a flush forces
   * only completed writes. The caller hands `src` over: its bytes must not change again (they
   * are read by the write and by readers until committed, and written again from there after a
   * failed write). A failed write is reported as a failed commit (`commitError`, the
   * `whenCommitted` waiters); the next commit writes the bytes again.
   *
   * @throws RangeError as `append`.
   */
  appendDirect(src: Buffer, srcOffset = 0, len = src.length - srcOffset): void {
    if (!this.available) throw new RangeError(`append to a shut-down segment ${this.filePath}`);
    if (len > this.remaining()) throw new RangeError(`append of ${len} bytes exceeds remaining ${this.remaining()} in ${this.filePath}`);
    if (len === 0) return;
    if (this.directWrite === null) {
      this.writeThrough(src, srcOffset, len);
      return;
    }
    const base = this.wrotePosition;
    this.chunks.push({ buf: srcOffset === 0 && len === src.length ? src : src.subarray(srcOffset, srcOffset + len), base, end: base + len, foreign: true });
    this.wrotePosition = base + len;
    this.startCommit();
  }

  /**
   * append/appendDirect without a buffer: commit what is pending, pwrite `src` in pieces of at
   * most WRITE_THROUGH_PIECE_BYTES, then move the positions (a failed piece leaves them as
   * they were).
   */
  private writeThrough(src: Buffer, srcOffset: number, len: number): void {
    this.commitNow();
    for (let done = 0; done < len; ) {
      const n = Math.min(WRITE_THROUGH_PIECE_BYTES, len - done);
      this.fs.pwrite(this.fd, src, srcOffset + done, n, this.wrotePosition + done);
      done += n;
    }
    this.wrotePosition += len;
    this.submittedPosition = this.wrotePosition;
    this.normalize();
    this.recycleChunks();
    this.resolveWaiters();
  }

  /**
   * In-place append, step 1: makes room for `len` bytes in the active write buffer (a new buffer,
   * or a synchronous commit of what is pending, when they would not fit) and returns where they
   * go in `writeBufferRef()`; the caller writes them there and calls `advance(len)`. Returns -1
   * when `len` exceeds the write buffer (use `append`). Nothing is visible to readers before
   * `advance`. @throws RangeError as `append`.
   */
  reserve(len: number): number {
    if (!this.available) throw new RangeError(`append to a shut-down segment ${this.filePath}`);
    if (len > this.remaining()) throw new RangeError(`append of ${len} bytes exceeds remaining ${this.remaining()} in ${this.filePath}`);
    if (len > this.writeBufferBytes) return -1;
    const c = this.roomFor(len);
    return this.wrotePosition - c.base;
  }

  /** The write buffer `reserve` pointed into (valid until the next append, commit or close). */
  writeBufferRef(): Buffer {
    return this.chunks[this.chunks.length - 1]!.buf;
  }

  /** In-place append, step 2: the `len` bytes written at the reserved position become part of the file. */
  advance(len: number): void {
    const c = this.chunks[this.chunks.length - 1];
    if (c === undefined || c.end !== this.wrotePosition || len < 0 || this.wrotePosition + len - c.base > this.writeBufferBytes || len > this.remaining()) {
      throw new RangeError(`advance(${len}) without a matching reserve in ${this.filePath}`);
    }
    this.grow(c, len);
  }

  /** The active chunk took `len` more bytes: move the positions, commit at the threshold or schedule a commit. */
  private grow(c: WriteChunk, len: number): void {
    this.wrotePosition += len;
    c.end = this.wrotePosition;
    if (this.wrotePosition - this.submittedPosition >= this.commitThresholdBytes) this.tryCommit();
    else if (this.commitOnNextTurn) this.scheduleCommit();
  }

  /**
   * The chunk that takes `len` more bytes at wrotePosition: the active one when they fit;
   * else the active one emptied (after a synchronous commit of its pending bytes) when no write
   * reads it, else a new one (the spare buffer or a new allocation).
   */
  private roomFor(len: number): WriteChunk {
    const cap = this.writeBufferBytes;
    const last = this.chunks[this.chunks.length - 1];
    if (last !== undefined && last.foreign !== true && last.end === this.wrotePosition && this.wrotePosition + len - last.base <= cap) return last;
    if (last !== undefined && last.foreign !== true && last !== this.flightChunk) {
      if (!this.isWritten(last.base, last.end)) this.commitNow();
      if (last !== this.flightChunk && this.isWritten(last.base, last.end)) {
        last.base = last.end = this.wrotePosition;
        this.releaseChunks();
        return last;
      }
    }
    const c: WriteChunk = { buf: this.spareBuffer ?? Buffer.allocUnsafe(cap), base: this.wrotePosition, end: this.wrotePosition };
    this.spareBuffer = null;
    this.chunks.push(c);
    this.releaseChunks();
    return c;
  }

  /** True when the file holds [from, to): below committed, or in the range written ahead of the gap. */
  private isWritten(from: number, to: number): boolean {
    return to <= this.committedPosition || (from >= this.gapEnd && to <= this.submittedPosition);
  }

  /** Drops the buffers (all but the active one) whose bytes are all in the file and not read by a write in flight. */
  private releaseChunks(): void {
    const chunks = this.chunks;
    if (chunks.length < 2) return;
    let kept = 0;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      if ((i < chunks.length - 1 || c.foreign === true) && c !== this.flightChunk && this.isWritten(c.base, c.end)) {
        if (this.spareBuffer === null && c.foreign !== true) this.spareBuffer = c.buf;
        continue;
      }
      chunks[kept++] = c;
    }
    chunks.length = kept;
  }

  /**
   * Drops the buffers whose bytes are all in the file (releaseChunks) and, when the active one's
   * are too, starts it over at its beginning: appends keep reusing the same buffer prefix, which
   * stays in the CPU cache (docs/internals/io-engine.md).
   */
  private recycleChunks(): void {
    if (this.wrotePosition === this.fileSize && this.flightChunk === null && this.committedPosition === this.fileSize) {
      this.chunks = []; // a full file never buffers again
      this.spareBuffer = null;
      return;
    }
    this.releaseChunks();
    const last = this.chunks[this.chunks.length - 1];
    if (last !== undefined && last.foreign !== true && last !== this.flightChunk && last.end > last.base && last.end === this.wrotePosition && this.isWritten(last.base, last.end)) {
      last.base = last.end;
    }
  }

  /** Restores the invariant: without a gap, everything submitted is committed. */
  private normalize(): void {
    if (this.gapEnd <= this.committedPosition) {
      this.committedPosition = this.submittedPosition;
      this.gapEnd = this.submittedPosition;
    }
  }

  /**
   * Appends `head` and declares the rest of the file written (the end-of-file filler): the gap
   * after `head` is already zero on disk, because segments are created zero-filled and
   * truncation zeroes the tail. Flushed position is unchanged. `head` (and everything pending
   * before it) is written synchronously; a write still in flight completes later (the file's
   * committed position reaches the end then).
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
      if (this.submittedPosition <= before) {
        this.wrotePosition = before;
        const last = this.chunks[this.chunks.length - 1];
        if (last !== undefined && last.end > before) last.end = Math.max(last.base, before);
        if (this.wrotePosition === this.submittedPosition && this.gapEnd === this.committedPosition) this.commitError = null; // no failed bytes kept
      }
      throw e;
    }
    this.wrotePosition = this.fileSize;
    this.submittedPosition = this.fileSize;
    this.normalize();
    // a full file never buffers again: only the buffer of a write in flight is kept
    this.chunks = this.flightChunk ? [...this.flightChunks] : [];
    this.spareBuffer = null;
  }

  /** Copies [position, position+len) into `dst` at `dstOffset`; false if not readable (beyond wrote or closed). */
  readInto(position: number, dst: Buffer, dstOffset: number, len: number): boolean {
    if (position < 0 || len < 0 || position + len > this.wrotePosition) return false;
    if (!this.hold()) return false;
    try {
      const end = position + len;
      let p = position;
      const fromFile = Math.max(0, Math.min(this.committedPosition, end) - position);
      if (fromFile > 0) {
        const n = this.fs.pread(this.fd, dst, dstOffset, fromFile, position);
        if (n !== fromFile) return false;
        p += fromFile;
      }
      // above committed: from the buffer holding the bytes, else (written ahead, buffer dropped) the file
      while (p < end) {
        let next = end;
        let held: WriteChunk | null = null;
        for (const c of this.chunks) {
          if (c.base <= p && p < c.end) {
            held = c;
            break;
          }
          if (c.base > p && c.base < next) next = c.base;
        }
        if (held !== null) {
          const n = Math.min(end, held.end) - p;
          held.buf.copy(dst, dstOffset + (p - position), p - held.base, p - held.base + n);
          p += n;
        } else {
          const n = next - p;
          if (this.fs.pread(this.fd, dst, dstOffset + (p - position), n, p) !== n) return false;
          p += n;
        }
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

  /**
   * Commits pending bytes if the page rule allows (synchronously; a write in flight completes
   * later); returns the committed position.
   */
  commit(leastPages: number): number {
    if (MappedFile.isAbleTo(this.wrotePosition, this.committedPosition, this.fileSize, leastPages)) this.commitNow();
    return this.committedPosition;
  }

  /**
   * pwrites every pending byte into the file (page cache) on this thread: a range a failed write
   * left (unless a write is in flight for it), then everything not yet submitted. A write in
   * flight completes later (committed position moves then). @throws the write error (e.g.
   * ENOSPC); the bytes then stay buffered, the error is kept in `commitError` until a commit
   * succeeds, and every `whenCommitted` waiter is told.
   */
  commitNow(): void {
    this.commitPending(false);
  }

  /**
   * commitNow; with `beforeForeign`, bytes from the first foreign chunk not yet handed to a write
   * on are left to the libuv pool (startCommit writes them there).
   */
  private commitPending(beforeForeign: boolean): void {
    if (this.fdClosed) return;
    try {
      if (this.flightChunk === null && this.gapEnd > this.committedPosition) {
        this.writeRange(this.committedPosition, this.gapEnd, (p) => {
          this.committedPosition = p;
        });
        this.normalize();
      }
      const to = beforeForeign ? this.foreignFrom(this.submittedPosition) : this.wrotePosition;
      if (to > this.submittedPosition) {
        this.writeRange(this.submittedPosition, to, (p) => {
          this.submittedPosition = p; // written ahead of a gap, or committed (normalize)
          this.normalize();
        });
      }
    } catch (e) {
      this.commitError = e as Error;
      this.failWaiters(e as Error);
      throw e;
    }
    if (this.flightChunk === null) this.commitError = null;
    this.recycleChunks();
    this.resolveWaiters();
  }

  /**
   * Synchronous pwrite of [from, to) from the chunks holding it, telling `progress` the end of
   * each piece written. Pieces no chunk holds are already in the file (see releaseChunks) and
   * are skipped. @throws the write error.
   */
  private writeRange(from: number, to: number, progress: (p: number) => void): void {
    let p = from;
    while (p < to) {
      const c = this.chunkAt(p);
      if (c === null) {
        let next = to;
        for (const x of this.chunks) if (x.base > p && x.base < next) next = x.base;
        p = next;
        continue;
      }
      const n = Math.min(to, c.end) - p;
      this.fs.pwrite(this.fd, c.buf, p - c.base, n, p);
      p += n;
      progress(p);
    }
  }

  /** Start of the first foreign chunk's bytes at or after `p` (wrotePosition when none). */
  private foreignFrom(p: number): number {
    let to = this.wrotePosition;
    for (const c of this.chunks) if (c.foreign === true && c.end > p && c.base < to) to = Math.max(p, c.base);
    return to;
  }

  private chunkAt(p: number): WriteChunk | null {
    for (const c of this.chunks) if (c.base <= p && p < c.end) return c;
    return null;
  }

  /**
   * Starts an asynchronous write (libuv pool) of the next pending range unless one is in flight
   * (then the completion starts the next). Without `asyncCommit`, commits synchronously. Never
   * throws: a failure is kept in `commitError` and told to the `whenCommitted` waiters.
   */
  startCommit(): void {
    if (this.asyncWrite === null) {
      this.tryCommit(); // on this thread, up to the first foreign chunk
      if (this.directWrite === null) return;
    }
    if (this.flightChunk !== null || this.fdClosed) return;
    let from: number;
    let to: number;
    if (this.gapEnd > this.committedPosition) {
      from = this.committedPosition;
      to = this.gapEnd;
    } else if (this.wrotePosition > this.submittedPosition) {
      from = this.submittedPosition;
      to = this.wrotePosition;
    } else return;
    const c = this.chunkAt(from);
    if (c === null) {
      // cannot happen (pending bytes are always buffered); the synchronous path writes what it can and reports the rest
      try {
        this.commitNow();
      } catch {
        // kept in commitError
      }
      return;
    }
    // foreign chunks (appendDirect) always go to the pool; buffered bytes only with asyncCommit
    const write = c.foreign === true ? (this.directWrite ?? this.asyncWrite) : this.asyncWrite;
    if (write === null) return; // (tryCommit above wrote the buffered bytes before the first foreign chunk)
    const group = [c];
    if (c.foreign === true) {
      // the foreign chunks that follow it back to back go in the same write: the pool goes on
      // from one to the next without waiting for an event-loop turn
      const limit = to;
      to = Math.min(limit, c.end);
      for (let k = this.chunks.indexOf(c) + 1; k < this.chunks.length && to < limit; k++) {
        const n = this.chunks[k]!;
        if (n.foreign !== true || n.base !== to) break;
        group.push(n);
        to = Math.min(limit, n.end);
      }
    } else {
      to = Math.min(to, c.end);
      if (c === this.chunks[this.chunks.length - 1]) {
        // double buffering: appends go on in another buffer, from its start (cache-resident)
        this.chunks.push({ buf: this.spareBuffer ?? Buffer.allocUnsafe(this.writeBufferBytes), base: this.wrotePosition, end: this.wrotePosition });
        this.spareBuffer = null;
      }
    }
    if (from === this.submittedPosition) {
      this.submittedPosition = to;
      this.gapEnd = to;
    }
    this.flightChunk = c;
    this.flightChunks = group;
    const end = to;
    const op =
      c.foreign === true
        ? (fd: number): Promise<unknown> => writeGroup(write, fd, group, from, end)
        : (fd: number): Promise<unknown> => write(fd, c.buf, from - c.base, end - from, from);
    this.onFd<unknown>(op).then(
      () => this.writeDone(end, null),
      (e: unknown) => this.writeDone(end, e instanceof Error ? e : new Error(String(e))),
    );
  }

  /** Completion of the asynchronous write of [committed, to). */
  private writeDone(to: number, err: Error | null): void {
    this.flightChunk = null;
    this.flightChunks = [];
    if (err !== null) {
      this.commitError = err;
      this.failWaiters(err);
      return; // the gap stays; the next commit writes it again
    }
    if (to > this.committedPosition) this.committedPosition = to;
    this.normalize();
    if (this.gapEnd === this.committedPosition) this.commitError = null;
    this.recycleChunks();
    this.resolveWaiters();
    if (this.fdClosed) {
      // closed (crash simulation) while this write ran: the bytes after it are never written
      if (this.committedPosition < this.wrotePosition) this.failWaiters(this.commitError ?? new Error(`segment ${this.filePath} was closed before its bytes were written`));
      return;
    }
    if (this.available && (this.wrotePosition > this.submittedPosition || this.gapEnd > this.committedPosition)) this.startCommit();
  }

  /**
   * Resolves when the bytes below `position` are in the file (page cache): null, or the error of
   * the write that failed for them (also kept in `commitError`). Starts a commit when none runs.
   * Returns null synchronously when they already are.
   */
  whenCommitted(position: number): Promise<Error | null> | null {
    if (this.committedPosition >= position) return null;
    if (this.fdClosed) return Promise.resolve(this.commitError ?? new Error(`segment ${this.filePath} was closed before its bytes were written`));
    return new Promise<Error | null>((resolve) => this.notifyWhenCommitted(position, resolveWith, resolve));
  }

  /**
   * `whenCommitted` without a promise: returns false when the bytes below `position` are in the
   * file already (nothing is called), else true and `listener(err, arg)` is called once later, from
   * the commit that wrote them (err null) or failed for them (err the write's error; at once, on a
   * later turn, when the segment is closed before they were written). Listeners are called on a
   * microtask after the commit (as a promise's reactions would be), never inside an append or a
   * commit. Callers registered before the next write starts share one waiter entry (the puts of
   * one event-loop turn: no object per call). Starts a commit when none runs. A throwing listener
   * is the caller's bug: the others of its microtask are still called, then the first error is
   * thrown (an uncaught exception).
   */
  notifyWhenCommitted<T>(position: number, listener: CommitListener<T>, arg: T): boolean {
    if (this.committedPosition >= position) return false;
    if (this.fdClosed) {
      const err = this.commitError ?? new Error(`segment ${this.filePath} was closed before its bytes were written`);
      setImmediate(listener, err, arg);
      return true;
    }
    const w = this.commitWaiters;
    let g = w.length > 0 ? w[w.length - 1]! : null;
    // a group whose bytes a write already covers in part waits for that write alone
    if (g === null || g.position <= this.submittedPosition || g.position > position) {
      g = this.spareWaiterGroup ?? { position, count: 0, listeners: [], args: [], positions: [], err: null, committedAt: 0 };
      this.spareWaiterGroup = null;
      g.position = position;
      w.push(g);
    } else g.position = position;
    const k = g.count++;
    if (k < g.listeners.length) {
      g.listeners[k] = listener as CommitListener<unknown>;
      g.args[k] = arg;
      g.positions[k] = position;
    } else {
      g.listeners.push(listener as CommitListener<unknown>);
      g.args.push(arg);
      g.positions.push(position);
    }
    this.scheduleCommit();
    return true;
  }

  private resolveWaiters(): void {
    const w = this.commitWaiters;
    if (w.length === 0) return;
    let i = 0;
    while (i < w.length && w[i]!.position <= this.committedPosition) i++;
    if (i === 0) return;
    if (i === w.length) this.commitWaiters = [];
    else this.commitWaiters = w.slice(i);
    for (let j = 0; j < i; j++) this.settle(w[j]!, null);
  }

  private failWaiters(err: Error): void {
    const w = this.commitWaiters;
    if (w.length === 0) return;
    this.commitWaiters = [];
    for (const g of w) this.settle(g, err);
  }

  private settle(g: CommitWaiterGroup, err: Error | null): void {
    g.err = err;
    g.committedAt = this.committedPosition;
    if (this.settledWaiters.length === 0) queueMicrotask(this.tellSettled);
    this.settledWaiters.push(g);
  }

  /** Calls the listeners of the settled groups (a failed write tells those whose bytes got in before it null). */
  private readonly tellSettled = (): void => {
    const q = this.settledWaiters;
    this.settledWaiters = [];
    let thrown: unknown = null;
    for (const g of q) {
      const { listeners, args, positions, err, committedAt, count } = g;
      for (let k = 0; k < count; k++) {
        const listener = listeners[k]!;
        const arg = args[k];
        // the group keeps no caller's argument alive once told
        args[k] = undefined;
        try {
          listener(err !== null && positions[k]! > committedAt ? err : null, arg);
        } catch (e) {
          thrown ??= e;
        }
      }
      g.count = 0;
      g.err = null;
      this.spareWaiterGroup = g;
    }
    if (thrown !== null) throw thrown;
  };

  /**
   * Commits everything written so far; null when that is done synchronously, else a promise of
   * its completion (also of a write in flight). @throws / rejects with the write error.
   */
  private commitAll(): Promise<void> | null {
    const target = this.wrotePosition;
    if (this.asyncWrite === null) {
      if (this.directWrite === null) {
        this.commitNow();
        return null;
      }
      this.commitPending(true); // throws the write error, as commitNow
    }
    this.startCommit();
    if (this.committedPosition >= target) return null;
    const pending = this.whenCommitted(target);
    return pending === null
      ? null
      : pending.then((err) => {
          if (err) throw err;
        });
  }

  /** The first failed sync of this file, or null. Once set it stays set (fsyncgate). */
  getSyncFailure(): SyncFailedError | null {
    return this.syncFailure;
  }

  /**
   * Commits (waiting for the writes), then fdatasyncs (off the loop) if the page rule (on wrote
   * vs flushed) allows: only bytes whose write completed are forced. Returns the flushed
   * position. Concurrent calls share one fdatasync at a time.
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
        const committing = this.commitAll();
        if (committing !== null) await committing; // (no await when synchronous: the fdatasync starts in this turn)
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

  /** @throws when a write is in flight: positions cannot move under it (callers flush first). */
  private assertNoWriteInFlight(what: string): void {
    if (this.flightChunk !== null) throw new Error(`${what} of ${this.filePath} while a write is in flight (flush first)`);
  }

  /** Sets all three positions (recovery of a file whose content is known to be valid up to `position`). */
  setPositions(position: number): void {
    if (position < 0 || position > this.fileSize) throw new RangeError(`position ${position} outside [0, ${this.fileSize}]`);
    this.assertNoWriteInFlight('setPositions');
    this.commitNow();
    this.contentEpoch++;
    this.resetPositions(position);
  }

  private resetPositions(position: number): void {
    this.wrotePosition = position;
    this.committedPosition = position;
    this.flushedPosition = position;
    this.gapEnd = position;
    this.submittedPosition = position;
    this.chunks = [];
  }

  /**
   * Truncates this segment's content to `position`: positions move there and the bytes
   * [position, fileSize) are zeroed on disk (shrink + re-extend), so stale records can never be
   * read again. The file keeps its full size. A `<name>.truncating` marker exists while the file
   * may be short, so a crash in between is completed by the next load (MappedFileQueue.load).
   * @throws when a write is in flight (it could land after the zeroing; callers flush first).
   */
  truncateTo(position: number): void {
    if (position < 0 || position > this.fileSize) throw new RangeError(`position ${position} outside [0, ${this.fileSize}]`);
    this.assertNoWriteInFlight('truncateTo');
    this.contentEpoch++;
    if (position > this.committedPosition) {
      // commit the still-valid buffered prefix, drop the rest
      const keep = Math.min(position, this.wrotePosition);
      if (keep > this.committedPosition) this.writeRange(this.committedPosition, keep, () => undefined);
    }
    if (position < this.fileSize) {
      // the marker says "short = interrupted truncation" to the next load if we crash in between
      const marker = `${this.filePath}${TRUNCATION_MARKER_SUFFIX}`;
      this.fs.writeFile(marker, Buffer.from(`${this.fileSize}\n`));
      this.fs.ftruncate(this.fd, position);
      this.fs.ftruncate(this.fd, this.fileSize);
      this.fs.unlink(marker);
    }
    this.resetPositions(position);
    this.commitError = null;
    this.failWaiters(new Error(`segment ${this.filePath} was truncated to ${position}`));
  }

  /**
   * Forces the file (data + size metadata) regardless of positions, e.g. after `truncateTo`.
   * @throws SyncFailedError as `flush` (a failed fsync makes the file sync-failed for good).
   */
  async force(): Promise<void> {
    if (this.syncFailure) throw this.syncFailure;
    if (!this.hold()) return;
    try {
      const committing = this.commitAll();
      if (committing !== null) await committing;
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
      const committing = this.commitAll();
      if (committing !== null) await committing;
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
    if (this.available) {
      try {
        this.commitNow(); // synchronously; a failed write (disk full) must not keep the fd open
      } catch {
        // kept in commitError
      }
    }
    this.shutdown(0);
  }

  /**
   * Crash simulation: closes the fd at once. With `commitPending` the buffered bytes reach the
   * page cache first (a process crash after the OS got them); without, they are lost. A commit
   * that fails (e.g. ENOSPC) loses them too, as the write would have in that process. Bytes of
   * a write in flight were handed to the OS: they are written again here, synchronously, so the
   * file's content is final when this returns (the late completion writes the same bytes).
   */
  closeAbruptly(commitPending: boolean): void {
    try {
      if (this.flightChunk !== null && !this.fdClosed) {
        for (const f of this.flightChunks) {
          const from = Math.max(this.committedPosition, f.base);
          const to = Math.min(this.gapEnd, f.end);
          if (to > from) this.fs.pwrite(this.fd, f.buf, from - f.base, to - from, from);
        }
      }
      if (commitPending) this.commitNow();
    } catch {
      // the bytes never reached the page cache: lost with the process
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
    this.chunks = this.flightChunk ? [...this.flightChunks] : [];
    this.spareBuffer = null;
    if (this.flightChunk === null) this.failWaiters(this.commitError ?? new Error(`segment ${this.filePath} was closed before its bytes were written`));
    if (this.asyncOps > 0) {
      // a forced release (or a crash simulation) while an fdatasync/pre-write/commit runs on the
      // pool: the descriptor number must not be reused under it, so it is closed when the op settles
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
      if (this.available && !this.fdClosed) this.startCommit();
    });
  }

  /** commitNow for the background and threshold commits: a failure is kept in `commitError`, never thrown (retried later). */
  private tryCommit(): void {
    if (this.asyncWrite !== null && this.available) {
      this.startCommit();
      return;
    }
    try {
      this.commitPending(this.directWrite !== null && this.available);
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
