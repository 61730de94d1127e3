/**
 * Sequential record reader over one CommitLog segment for recovery: reads the file through a
 * window (default 4 MiB, grown for larger records) and classifies the record at a position with
 * the codec's `checkRecord` (expected PHYSICALOFFSET = the position; BODYCRC when asked).
 *
 * A blank filler is recognised from its 8-byte header alone (its TOTALSIZE covers the rest of
 * the file, which need not be read).
 */
import { BLANK_MAGIC_CODE, checkRecord, type RecordCheck } from '../../common/message/record-codec.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';

const DEFAULT_WINDOW_BYTES = 4 * 1024 * 1024;
/** A TOTALSIZE above this is treated as corruption rather than read. */
export const MAX_SCANNED_RECORD_BYTES = 128 * 1024 * 1024;

export interface ScanOptions {
  checkCrc: boolean;
  delayLevelTableMs: number[];
}

export class SegmentScanner {
  private buf: Buffer;
  private winStart = 0;
  private winLen = 0;

  constructor(
    private readonly mf: MappedFile,
    private readonly opts: ScanOptions,
    windowBytes = DEFAULT_WINDOW_BYTES,
  ) {
    this.buf = Buffer.allocUnsafe(Math.min(windowBytes, mf.fileSize));
  }

  /** Makes [pos, pos+len) (clamped to the readable file) present in the window; returns its buffer offset and length. */
  private ensure(pos: number, len: number): { at: number; available: number } {
    const readable = this.mf.getWrotePosition();
    const want = Math.max(0, Math.min(len, readable - pos));
    if (pos >= this.winStart && pos + want <= this.winStart + this.winLen) {
      return { at: pos - this.winStart, available: this.winStart + this.winLen - pos };
    }
    if (want > this.buf.length) this.buf = Buffer.allocUnsafe(want);
    const n = Math.min(this.buf.length, readable - pos);
    if (n <= 0 || !this.mf.readInto(pos, this.buf, 0, n)) {
      this.winStart = pos;
      this.winLen = 0;
      return { at: 0, available: 0 };
    }
    this.winStart = pos;
    this.winLen = n;
    return { at: 0, available: n };
  }

  /** Classifies the record at in-file position `pos`. */
  check(pos: number): RecordCheck {
    const left = this.mf.fileSize - pos;
    if (left < 8) return { kind: 'invalid', reason: `only ${left} bytes left in the segment` };
    const head = this.ensure(pos, 8);
    if (head.available < 8) return { kind: 'invalid', reason: 'end of readable data' };
    const total = this.buf.readInt32BE(head.at);
    const magic = this.buf.readInt32BE(head.at + 4);
    if (magic === BLANK_MAGIC_CODE) {
      if (total !== left) return { kind: 'invalid', reason: `blank filler says ${total} bytes but ${left} are left in the segment` };
      return { kind: 'blank', size: total };
    }
    if (total > left) return { kind: 'invalid', reason: `torn record: TOTALSIZE ${total} but only ${left} bytes left in the segment` };
    if (total > MAX_SCANNED_RECORD_BYTES) return { kind: 'invalid', reason: `TOTALSIZE ${total} is implausibly large` };
    const w = total > 8 ? this.ensure(pos, total) : head;
    return checkRecord(this.buf, w.at, w.available, {
      checkCrc: this.opts.checkCrc,
      expectedPhysicalOffset: this.mf.fileFromOffset + pos,
      delayLevelTableMs: this.opts.delayLevelTableMs,
    });
  }
}
