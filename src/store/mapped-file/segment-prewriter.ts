/**
 * Pre-writing a segment with zeros before it is used (tsmq's reading of RocketMQ's
 * `warmMapedFileEnable`, spec §5.3; measured in docs/internals/io-engine.md): every page of the
 * file gets a page-cache page and an allocated, initialised disk block, so later appends do not
 * pay the first touch of new memory (slow on the VM this was measured on) and group-commit
 * fdatasyncs have no block allocation to journal.
 *
 * Zeros are written in chunks of `chunkBytes` from `from` to the end of the file, with an
 * fdatasync every `syncEveryBytes` (RocketMQ: every `flushLeastPagesWhenWarmMapedFile` pages)
 * and one at the end. With `fs.pwriteAsync` the writes run on the libuv pool (another core);
 * without it, one synchronous chunk per event-loop turn. `maxBytesPerSec` (> 0) spreads the
 * writes out so they disturb concurrent group commits less. `yieldWhile` (when given) is asked
 * before every chunk and every fdatasync: while it answers true the pre-writer waits
 * (`yieldPollMs` at a time) instead of writing, so it never competes with producers for the disk
 * (the CommitLog answers "a flush of this queue ran within the last `yieldToFlushesWithinMs`").
 * The rate budget restarts after a pause, so a pause is not followed by a burst.
 *
 * Safety: zeros must never land on appended data. The caller (AllocateMappedFileService) only
 * pre-writes a file nobody appends to, and when the file is wanted before the pre-write is
 * done it either takes it between two chunks (`zeroWriteInFlight` false: stop, then append) or
 * abandons it while a chunk is in flight.
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import type { MappedFile } from './mapped-file.js';

export interface PrewriteOptions {
  /** Bytes per write. Default 1 MiB (64 KiB without pwriteAsync, to keep event-loop turns short). */
  chunkBytes?: number;
  /** fdatasync after this many bytes (0: only at the end). */
  syncEveryBytes: number;
  /** Upper bound on the write rate in bytes/s (0: as fast as the disk takes them). */
  maxBytesPerSec: number;
  /** Asked before each chunk and fdatasync; true = wait (the disk is wanted by producers). */
  yieldWhile?: () => boolean;
  /** Wait between two `yieldWhile` checks, ms. Default 20. */
  yieldPollMs?: number;
  /**
   * For the MappedFileQueue: yield while one of its flushes started or ended within this many ms
   * (it builds `yieldWhile` from it). 0 or absent: never yield.
   */
  yieldToFlushesWithinMs?: number;
  /**
   * For the AllocateMappedFileService: asked before a segment is pre-written; null = go ahead,
   * otherwise why not (the segment then stays sparse). The store checks free disk space with it
   * (retention/prewrite-space-gate.ts). Absent: always pre-write.
   */
  spaceGate?: PrewriteSpaceGate;
}

/** See PrewriteOptions.spaceGate. `fileSizeBytes`: bytes the pre-write would allocate. */
export type PrewriteSpaceGate = (filePath: string, fileSizeBytes: number) => string | null;

export type PrewriteOutcome = 'done' | 'cancelled' | 'failed';

const ZEROS = Buffer.alloc(1024 * 1024);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

export class SegmentPrewriter {
  private cancelled = false;
  /** True while a zero write is queued or running on the pool. */
  zeroWriteInFlight = false;
  /** Bytes of zeros written so far. */
  bytesWritten = 0;
  /** Number of waits because `yieldWhile` answered true. */
  yields = 0;
  /** What made the pre-write fail (outcome 'failed'), e.g. an ENOSPC error. */
  failure: unknown = null;
  readonly done: Promise<PrewriteOutcome>;

  constructor(
    readonly file: MappedFile,
    private readonly fs: FileSystem,
    private readonly opts: PrewriteOptions,
    from = 0,
  ) {
    this.done = this.run(from);
  }

  /** Stops before the next chunk; `done` resolves 'cancelled' once nothing is in flight. */
  cancel(): void {
    this.cancelled = true;
  }

  private async run(from: number): Promise<PrewriteOutcome> {
    const mf = this.file;
    if (!mf.hold()) return 'cancelled';
    try {
      const asyncWrite = this.fs.pwriteAsync?.bind(this.fs);
      const chunk = Math.min(ZEROS.length, this.opts.chunkBytes ?? (asyncWrite ? ZEROS.length : 64 * 1024));
      let t0 = Date.now();
      let budgetBase = 0; // bytesWritten when t0 was taken
      let sinceSync = 0;
      /** Waits while the disk is wanted; false when cancelled meanwhile. */
      const yieldIfBusy = async (): Promise<boolean> => {
        let paused = false;
        while (this.opts.yieldWhile?.()) {
          if (this.cancelled || !mf.isAvailable()) return false;
          paused = true;
          this.yields++;
          await sleep(this.opts.yieldPollMs ?? 20);
        }
        if (paused) {
          t0 = Date.now();
          budgetBase = this.bytesWritten;
        }
        return !this.cancelled && mf.isAvailable();
      };
      for (let pos = from; pos < mf.fileSize; pos += chunk) {
        if (!(await yieldIfBusy())) return 'cancelled';
        const len = Math.min(chunk, mf.fileSize - pos);
        if (asyncWrite) {
          this.zeroWriteInFlight = true;
          try {
            await mf.onFd((fd) => asyncWrite(fd, ZEROS, 0, len, pos));
          } finally {
            this.zeroWriteInFlight = false;
          }
        } else {
          await nextTurn();
          if (this.cancelled || !mf.isAvailable()) return 'cancelled';
          await mf.onFd(async (fd) => this.fs.pwrite(fd, ZEROS, 0, len, pos));
        }
        this.bytesWritten += len;
        sinceSync += len;
        if (this.opts.syncEveryBytes > 0 && sinceSync >= this.opts.syncEveryBytes) {
          if (!(await yieldIfBusy())) return 'cancelled';
          sinceSync = 0;
          await mf.syncPrewritten();
        }
        if (this.opts.maxBytesPerSec > 0) {
          const dueMs = ((this.bytesWritten - budgetBase) / this.opts.maxBytesPerSec) * 1000 - (Date.now() - t0);
          if (dueMs >= 1) await sleep(dueMs);
        }
      }
      if (!(await yieldIfBusy())) return 'cancelled';
      await mf.syncPrewritten();
      return 'done';
    } catch (e) {
      if (this.cancelled) return 'cancelled';
      this.failure = e;
      return 'failed';
    } finally {
      mf.release();
    }
  }
}
