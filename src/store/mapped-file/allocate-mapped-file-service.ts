/**
 * Background pre-allocation of the next segment (the idea of RocketMQ's
 * `AllocateMappedFileService`, §5.2): when segment N is taken into use, segment N+1 is created
 * (full-size, zero-filled) on a later turn of the event loop, so the roll that needs it does not
 * wait for file creation. Only one file is kept ready. Files created but never used are deleted
 * at shutdown; after a crash such a zero-filled file is removed by recovery's truncation.
 */
import type { Logger } from '../../common/logging/logger.js';
import { MappedFile, type MappedFileOptions } from './mapped-file.js';

export class AllocateMappedFileService {
  private ready: MappedFile | null = null;
  private pendingRequest: { filePath: string; fileFromOffset: number } | null = null;
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly fileSize: number,
    private readonly opts: MappedFileOptions,
    private readonly logger: Logger,
  ) {}

  /** Returns the segment for `fileFromOffset`, taking a pre-allocated one when it matches, else creating it now. */
  obtain(filePath: string, fileFromOffset: number): MappedFile {
    const ready = this.ready;
    if (ready && ready.fileFromOffset === fileFromOffset && ready.filePath === filePath) {
      this.ready = null;
      return ready;
    }
    this.discardReady();
    return MappedFile.create(filePath, fileFromOffset, this.fileSize, this.opts);
  }

  /** Asks for `fileFromOffset` to be created in the background. */
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
        this.ready = MappedFile.create(req.filePath, req.fileFromOffset, this.fileSize, this.opts);
      } catch (e) {
        this.logger.warn({ err: e, filePath: req.filePath }, 'pre-allocation of the next segment failed; it will be created on demand');
      }
    });
  }

  /** Stops the service and deletes an unused pre-allocated file. */
  shutdown(): void {
    this.stopped = true;
    this.pendingRequest = null;
    this.discardReady();
  }

  /** Crash simulation: stop without deleting the pre-allocated file (it stays on disk, zero-filled). */
  shutdownAbruptly(): void {
    this.stopped = true;
    this.pendingRequest = null;
    this.ready?.closeAbruptly(false);
    this.ready = null;
  }

  private discardReady(): void {
    if (!this.ready) return;
    this.ready.destroy(0);
    this.ready = null;
  }
}
