/**
 * The store checkpoint file `<root>/checkpoint` (RocketMQ `StoreCheckpoint`, spec §3.1):
 * 4096 bytes, big-endian longs:
 *
 *   0  physicMsgTimestamp   store time covered by the last complete CommitLog flush
 *   8  logicsMsgTimestamp   store time covered by the last complete ConsumeQueue flush
 *   16 indexMsgTimestamp    end time of the last full, flushed index file
 *   24 masterFlushedOffset  HA/controller mode
 *   32 confirmPhyOffset     CommitLog confirm offset: controller mode the confirm offset
 *                           (Apache 5 `CommitLog.setConfirmOffset` writes it here), taken from
 *                           `setConfirmPhyOffsetSource` at every write; classic mode the
 *                           recovered / flushed CommitLog end
 *   40..4095 zero
 *
 * `getMinTimestamp()` = max(0, min(physic, logics) − 3000) bounds where abnormal recovery must
 * start. `flush()` writes the page and fdatasyncs it off the event loop.
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import { readLong, writeLong } from '../../common/message/record-codec.js';

export const CHECKPOINT_FILE_SIZE = 4096;

export class StoreCheckpoint {
  physicMsgTimestamp = 0;
  logicsMsgTimestamp = 0;
  indexMsgTimestamp = 0;
  masterFlushedOffset = 0;
  confirmPhyOffset = 0;
  private fd: number;
  private readonly page = Buffer.alloc(CHECKPOINT_FILE_SIZE);
  private flushing: Promise<void> | null = null;
  private confirmSource: (() => number) | null = null;

  private constructor(
    private readonly fs: FileSystem,
    readonly filePath: string,
  ) {
    const exists = fs.exists(filePath);
    this.fd = fs.open(filePath, exists ? 'r+' : 'w+');
    if (!exists || fs.fstatSize(this.fd) < CHECKPOINT_FILE_SIZE) fs.ftruncate(this.fd, CHECKPOINT_FILE_SIZE);
    const n = fs.pread(this.fd, this.page, 0, CHECKPOINT_FILE_SIZE, 0);
    if (n >= 40) {
      this.physicMsgTimestamp = readLong(this.page, 0);
      this.logicsMsgTimestamp = readLong(this.page, 8);
      this.indexMsgTimestamp = readLong(this.page, 16);
      this.masterFlushedOffset = readLong(this.page, 24);
      this.confirmPhyOffset = readLong(this.page, 32);
    }
  }

  /** Opens (creating a zeroed file when missing). */
  static open(fs: FileSystem, filePath: string): StoreCheckpoint {
    return new StoreCheckpoint(fs, filePath);
  }

  /** Index service hook (RocketMQ `setIndexMsgTimestamp`). */
  setIndexMsgTimestamp(ms: number): void {
    this.indexMsgTimestamp = ms;
  }

  /** max(0, min(physic, logics) − 3000). */
  getMinTimestamp(): number {
    return Math.max(0, Math.min(this.physicMsgTimestamp, this.logicsMsgTimestamp) - 3000);
  }

  /** min(getMinTimestamp(), indexMsgTimestamp). */
  getMinTimestampIndex(): number {
    return Math.min(this.getMinTimestamp(), this.indexMsgTimestamp);
  }

  /**
   * Controller mode: every write takes confirmPhyOffset from `source` (the live confirm offset,
   * CommitLog bytes); null: the field keeps what callers assign.
   */
  setConfirmPhyOffsetSource(source: (() => number) | null): void {
    this.confirmSource = source;
  }

  /** Writes the current values to the page cache (no fdatasync). */
  write(): void {
    if (this.fd < 0) return;
    if (this.confirmSource) this.confirmPhyOffset = this.confirmSource();
    writeLong(this.page, 0, this.physicMsgTimestamp);
    writeLong(this.page, 8, this.logicsMsgTimestamp);
    writeLong(this.page, 16, this.indexMsgTimestamp);
    writeLong(this.page, 24, this.masterFlushedOffset);
    writeLong(this.page, 32, this.confirmPhyOffset);
    this.fs.pwrite(this.fd, this.page, 0, CHECKPOINT_FILE_SIZE, 0);
  }

  /** Writes and forces the checkpoint (off the event loop). Concurrent calls share one write. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.fd < 0) return;
    this.write();
    this.flushing = this.fs.fdatasync(this.fd).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  /** Closes the file (after a final flush by the caller). */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.fd < 0) return;
    this.fs.close(this.fd);
    this.fd = -1;
  }

  /** Crash simulation: close without writing. */
  closeAbruptly(): void {
    if (this.fd < 0) return;
    this.fs.close(this.fd);
    this.fd = -1;
  }
}
