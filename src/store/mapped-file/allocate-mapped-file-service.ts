/**
 * Background pre-allocation of the next segment (the idea of RocketMQ's
 * `AllocateMappedFileService`, §5.2): when segment N is taken into use, segment N+1 is created
 * (full size) on a later turn of the event loop, so the roll that needs it does not wait for
 * file creation. Only one file is kept ready. Files created but never used are deleted at
 * shutdown; after a crash such a zero-filled file is removed by recovery's truncation.
 *
 * With `prewrite` options (warmMapedFileEnable, §5.3) the ready file is also pre-written with
 * zeros and forced (see segment-prewriter.ts) before it is handed out. If the roll comes first:
 * between two zero writes the partly pre-written file is taken as is (the pre-writer stops);
 * with a zero write in flight on the pool the file is abandoned — unlinked at once (the write
 * lands in the orphaned inode, whose fd closes when it settles) — and a fresh file is created
 * under the same name, so no zero can ever overwrite an appended byte.
 *
 * Pre-writing never fills the disk (issue 19): before each pre-write the `spaceGate` of the
 * prewrite options (free space, usage ratios; retention/prewrite-space-gate.ts) is asked; when it
 * says no, the segment stays sparse (created with ftruncate: blocks are allocated as messages
 * arrive) and one warning says why (again only after a pre-write was allowed in between). A
 * pre-write that fails anyway (ENOSPC because others filled the disk meanwhile) releases the
 * blocks it allocated (truncate to 0 and back) while the segment is still unused.
 */
import { describeWriteError } from '../../common/fs/write-error.js';
import type { Logger } from '../../common/logging/logger.js';
import { MappedFile, type MappedFileOptions } from './mapped-file.js';
import { SegmentPrewriter, type PrewriteOptions } from './segment-prewriter.js';

export class AllocateMappedFileService {
  private ready: MappedFile | null = null;
  private prewriter: SegmentPrewriter | null = null;
  private pendingRequest: { filePath: string; fileFromOffset: number } | null = null;
  private scheduled = false;
  private stopped = false;
  /** Counters for tests and diagnostics. */
  readonly stats = { created: 0, prewritten: 0, takenPartly: 0, abandoned: 0, leftSparse: 0 };
  /** A "not pre-written" warning was logged and no pre-write was allowed since. */
  private sparseWarned = false;

  constructor(
    private readonly fileSize: number,
    private readonly opts: MappedFileOptions,
    private readonly logger: Logger,
    private readonly prewrite: PrewriteOptions | null = null,
  ) {}

  /** Returns the segment for `fileFromOffset`, taking a prepared one when it matches, else creating it now. */
  obtain(filePath: string, fileFromOffset: number): MappedFile {
    const ready = this.ready;
    if (ready && ready.fileFromOffset === fileFromOffset && ready.filePath === filePath) {
      const pw = this.prewriter;
      this.ready = null;
      this.prewriter = null;
      if (pw && pw.file === ready) {
        pw.cancel();
        if (pw.zeroWriteInFlight) {
          this.abandon(ready);
          this.stats.abandoned++;
          return this.create(filePath, fileFromOffset);
        }
        this.stats.takenPartly++;
      }
      return ready;
    }
    this.discardReady();
    return this.create(filePath, fileFromOffset);
  }

  /** Asks for `fileFromOffset` to be created (and pre-written) in the background. */
  request(filePath: string, fileFromOffset: number): void {
    if (this.stopped) return;
    this.pendingRequest = { filePath, fileFromOffset };
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const req = this.pendingRequest;
      this.pendingRequest = null;
      if (!req || this.stopped) return;
      if (this.ready?.fileFromOffset === req.fileFromOffset) return;
      this.discardReady();
      try {
        this.ready = this.create(req.filePath, req.fileFromOffset);
      } catch (e) {
        this.logger.warn({ err: e, filePath: req.filePath }, 'pre-allocation of the next segment failed; it will be created on demand');
        return;
      }
      if (this.mayPrewrite(this.ready)) this.startPrewrite(this.ready);
    });
  }

  /**
   * Creates `fileFromOffset` now and, with pre-writing allowed by the space gate, fully
   * pre-writes it (a fresh store's first segment, before puts are accepted). Resolves when the
   * file is ready. @throws the creation error (e.g. ENOSPC); no file is left behind then.
   */
  async prepare(filePath: string, fileFromOffset: number): Promise<void> {
    if (this.stopped) return;
    this.discardReady();
    this.ready = this.create(filePath, fileFromOffset);
    if (!this.mayPrewrite(this.ready)) return;
    // full speed: nothing else runs yet (and an unref'd rate-limit timer would not keep the process alive)
    const t0 = Date.now();
    const outcome = await this.startPrewrite(this.ready, { ...this.prewrite!, maxBytesPerSec: 0 }).done;
    this.logger.info({ filePath, outcome, ms: Date.now() - t0 }, 'pre-wrote the first CommitLog segment');
  }

  /** The pre-write running for the ready file, if any (tests). */
  currentPrewrite(): SegmentPrewriter | null {
    return this.prewriter;
  }

  /** Stops the service and deletes an unused prepared file. */
  shutdown(): void {
    this.stopped = true;
    this.pendingRequest = null;
    this.discardReady();
  }

  /** Crash simulation: stop without deleting the prepared file (it stays on disk, zero-filled). */
  shutdownAbruptly(): void {
    this.stopped = true;
    this.pendingRequest = null;
    this.prewriter?.cancel();
    this.prewriter = null;
    this.ready?.closeAbruptly(false);
    this.ready = null;
  }

  private create(filePath: string, fileFromOffset: number): MappedFile {
    const mf = MappedFile.create(filePath, fileFromOffset, this.fileSize, this.opts);
    this.stats.created++;
    return mf;
  }

  /** True when `mf` may be pre-written: pre-writing is on and the space gate agrees (see the file comment). */
  private mayPrewrite(mf: MappedFile): boolean {
    if (!this.prewrite) return false;
    const refusal = this.prewrite.spaceGate?.(mf.filePath, mf.fileSize) ?? null;
    if (refusal === null) {
      this.sparseWarned = false;
      return true;
    }
    this.stats.leftSparse++;
    if (!this.sparseWarned) {
      this.sparseWarned = true;
      this.logger.warn(
        { filePath: mf.filePath, fileSizeBytes: mf.fileSize },
        `segment ${mf.filePath} is not pre-written (warmMapedFileEnable): ${refusal}; it stays a sparse file, its blocks are allocated as messages arrive`,
      );
    }
    return false;
  }

  private startPrewrite(mf: MappedFile, opts: PrewriteOptions = this.prewrite!): SegmentPrewriter {
    const pw = new SegmentPrewriter(mf, this.opts.fs, opts);
    this.prewriter = pw;
    void pw.done.then((outcome) => {
      if (this.prewriter === pw) this.prewriter = null;
      if (outcome === 'done') this.stats.prewritten++;
      else if (outcome === 'failed') {
        const released = this.releaseIfUnused(mf);
        this.logger.warn(
          { err: pw.failure, filePath: mf.filePath },
          `pre-writing segment ${mf.filePath} failed (${describeWriteError(pw.failure)}); ` +
            (released ? 'the blocks it took were released, the segment is used as a sparse file' : 'the segment is used as it is'),
        );
      }
    });
    return pw;
  }

  /** Gives back the blocks of a failed pre-write (truncate to 0, re-extend) while nobody appended to `mf`. */
  private releaseIfUnused(mf: MappedFile): boolean {
    if (this.ready !== mf || mf.getWrotePosition() !== 0 || !mf.isAvailable()) return false;
    try {
      mf.truncateTo(0);
      return true;
    } catch (e) {
      this.logger.warn({ err: e, filePath: mf.filePath }, 'could not release the blocks of a failed pre-write');
      return false;
    }
  }

  /** Deletes a file whose zero write may still be in flight, without touching its path afterwards. */
  private abandon(mf: MappedFile): void {
    this.opts.fs.unlink(mf.filePath);
    mf.shutdown(0); // the pre-writer's reference keeps the fd open until its write settles
  }

  private discardReady(): void {
    const ready = this.ready;
    if (!ready) return;
    const pw = this.prewriter;
    this.ready = null;
    this.prewriter = null;
    if (pw && pw.file === ready) {
      pw.cancel();
      if (pw.zeroWriteInFlight) {
        this.abandon(ready);
        return;
      }
    }
    if (!ready.destroy(0)) this.abandon(ready);
  }
}
