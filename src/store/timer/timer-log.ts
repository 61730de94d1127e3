/**
 * The timer log `<storePathRootDir>/timerlog/` (Apache `TimerLog`, byte-compatible layout):
 * segment files of `mappedFileSizeTimerLog` bytes (Apache: 100 MiB) named after their first
 * logical offset (20 digits, like CommitLog files), holding 52-byte units (timer-unit.ts)
 * back to back. A unit never straddles two segments: when fewer than 52 + 16 bytes remain, a
 * blank (size = bytes left, magic BLANK_MAGIC_CODE) closes the segment and the unit goes first in
 * the next one.
 *
 * Appends are gathered in a 64 KiB buffer and written to the page cache (pwrite) a buffer at a
 * time; `flush()` writes the buffer and forces them (fdatasync of every segment written since the
 * last flush). A process crash loses the buffered units: they are after the checkpoint, so their
 * messages are read from rmq_sys_wheel_timer again. Reads use a 64 KiB block cache because a slot's units
 * are walked backwards through prevPos and are mostly close together.
 *
 * `recover(fromPos, onUnit)` scans units from `fromPos` to the end of valid data (a size ≠ 52 or
 * a bad magic ends it, a blank moves to the next segment), calls onUnit for each, and truncates
 * everything after (later segments deleted, the next 4 MiB of the last one zeroed).
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import { fileNameToOffset, isSegmentFileName, offsetToFileName } from '../mapped-file/file-names.js';
import {
  TIMER_BLANK_MAGIC_CODE,
  TIMER_MIN_BLANK_BYTES,
  TIMER_UNIT_SIZE_BYTES,
  decodeTimerUnit,
  encodeTimerUnit,
  isMagicOk,
  type TimerUnit,
} from './timer-unit.js';

const READ_BLOCK_BYTES = 64 * 1024;
const WRITE_BUFFER_BYTES = 64 * 1024;
/**
 * Recovery zeroes this much after the end of valid data (not the whole 100 MiB segment, which
 * would cost every start): after a process crash the bytes past the end are zeros or one torn
 * unit, so this is plenty; see docs/internals/timer-store.md for the power-loss caveat.
 */
const ZERO_AFTER_END_BYTES = 4 * 1024 * 1024;

interface Segment {
  fromOffset: number;
  fd: number;
  dirty: boolean;
}

export class TimerLog {
  private readonly segments: Segment[] = [];
  /** Logical end of written data. */
  private wrotePos = 0;
  private flushedPos = 0;
  /** Write buffer: units from `pendingFrom`, `pendingLen` bytes, always within one segment. */
  private readonly pending = Buffer.alloc(Math.floor(WRITE_BUFFER_BYTES / TIMER_UNIT_SIZE_BYTES) * TIMER_UNIT_SIZE_BYTES);
  private pendingFrom = 0;
  private pendingLen = 0;
  private cacheFrom = -1;
  private cacheLen = 0;
  private readonly cache = Buffer.alloc(READ_BLOCK_BYTES);

  private constructor(readonly dir: string, readonly fileSizeBytes: number, private readonly fs: FileSystem) {}

  /** Opens the segment files of `dir` (created when missing). @throws Error for a segment of the wrong size or a gap. */
  static open(dir: string, fileSizeBytes: number, fs: FileSystem): TimerLog {
    if (!Number.isInteger(fileSizeBytes) || fileSizeBytes < TIMER_UNIT_SIZE_BYTES + TIMER_MIN_BLANK_BYTES) {
      throw new RangeError(`mappedFileSizeTimerLog ${fileSizeBytes} is smaller than one unit plus a blank (68 bytes)`);
    }
    fs.mkdirp(dir);
    const log = new TimerLog(dir, fileSizeBytes, fs);
    const names = fs.readdir(dir).filter(isSegmentFileName).sort();
    for (const name of names) {
      const from = fileNameToOffset(name);
      const file = path.join(dir, name);
      const st = fs.stat(file);
      if (!st || st.sizeBytes !== fileSizeBytes) throw new Error(`timerlog segment ${file} is ${st?.sizeBytes ?? 0} bytes, expected ${fileSizeBytes} (mappedFileSizeTimerLog)`);
      const prev = log.segments[log.segments.length - 1];
      if (prev && prev.fromOffset + fileSizeBytes !== from) throw new Error(`timerlog segments are not contiguous: ${offsetToFileName(prev.fromOffset)} then ${name}`);
      log.segments.push({ fromOffset: from, fd: fs.open(file, 'r+'), dirty: false });
    }
    const last = log.segments[log.segments.length - 1];
    log.wrotePos = last ? last.fromOffset + fileSizeBytes : 0;
    log.flushedPos = log.wrotePos;
    return log;
  }

  /** First logical offset held (0 when empty). */
  get minOffset(): number {
    return this.segments[0]?.fromOffset ?? 0;
  }

  /** End of written data. */
  get maxOffset(): number {
    return this.wrotePos;
  }

  get flushedOffset(): number {
    return this.flushedPos;
  }

  /**
   * Appends one unit; returns its position. Units are gathered in a 64 KiB write buffer (one
   * pwrite per buffer, not per unit); `read` sees them at once, `flush` and `close` write them.
   */
  append(u: Omit<TimerUnit, 'pos'>): number {
    let seg = this.segmentFor(this.wrotePos);
    let inFile = seg ? this.wrotePos - seg.fromOffset : this.fileSizeBytes;
    if (!seg || inFile + TIMER_UNIT_SIZE_BYTES + TIMER_MIN_BLANK_BYTES > this.fileSizeBytes) {
      this.writePending();
      if (seg && inFile < this.fileSizeBytes) {
        const blank = Buffer.alloc(TIMER_MIN_BLANK_BYTES);
        blank.writeInt32BE(this.fileSizeBytes - inFile, 0);
        blank.writeInt32BE(TIMER_BLANK_MAGIC_CODE, 12);
        this.fs.pwrite(seg.fd, blank, 0, blank.length, inFile);
        seg.dirty = true;
      }
      const from = seg ? seg.fromOffset + this.fileSizeBytes : this.wrotePos;
      seg = this.createSegment(from);
      this.wrotePos = from;
      inFile = 0;
    }
    if (this.pendingLen + TIMER_UNIT_SIZE_BYTES > this.pending.length) this.writePending();
    const pos = this.wrotePos;
    if (this.pendingLen === 0) this.pendingFrom = pos;
    encodeTimerUnit(this.pending, this.pendingLen, u);
    this.pendingLen += TIMER_UNIT_SIZE_BYTES;
    this.wrotePos += TIMER_UNIT_SIZE_BYTES;
    return pos;
  }

  /** The unit at `pos`, or null when `pos` is outside the log or not a unit. */
  read(pos: number): TimerUnit | null {
    if (pos < this.minOffset || pos + TIMER_UNIT_SIZE_BYTES > this.wrotePos) return null;
    if (this.pendingLen > 0 && pos >= this.pendingFrom) {
      const at = pos - this.pendingFrom;
      if (this.pending.readInt32BE(at) !== TIMER_UNIT_SIZE_BYTES) return null;
      return decodeTimerUnit(this.pending, at, pos);
    }
    const seg = this.segmentFor(pos);
    if (!seg) return null;
    const inFile = pos - seg.fromOffset;
    if (!(this.cacheFrom >= 0 && pos >= this.cacheFrom && pos + TIMER_UNIT_SIZE_BYTES <= this.cacheFrom + this.cacheLen)) {
      const blockStart = Math.max(0, inFile + TIMER_UNIT_SIZE_BYTES - READ_BLOCK_BYTES);
      const len = Math.min(READ_BLOCK_BYTES, this.fileSizeBytes - blockStart);
      this.cacheLen = this.fs.pread(seg.fd, this.cache, 0, len, blockStart);
      this.cacheFrom = seg.fromOffset + blockStart;
      if (pos + TIMER_UNIT_SIZE_BYTES > this.cacheFrom + this.cacheLen) return null;
    }
    const at = pos - this.cacheFrom;
    if (this.cache.readInt32BE(at) !== TIMER_UNIT_SIZE_BYTES) return null;
    return decodeTimerUnit(this.cache, at, pos);
  }

  /** Calls `onUnit` for every unit in [from, to) (read only; a segment's blank moves to the next segment). */
  scan(from: number, to: number, onUnit: (u: TimerUnit) => void): void {
    let pos = Math.max(from, this.minOffset);
    while (pos + TIMER_UNIT_SIZE_BYTES <= Math.min(to, this.wrotePos)) {
      const u = this.read(pos);
      if (u) {
        onUnit(u);
        pos += TIMER_UNIT_SIZE_BYTES;
      } else {
        pos = this.minOffset + (Math.floor((pos - this.minOffset) / this.fileSizeBytes) + 1) * this.fileSizeBytes;
      }
    }
  }

  /** Writes the buffered units to their segment (page cache). */
  private writePending(): void {
    if (this.pendingLen === 0) return;
    const seg = this.segmentFor(this.pendingFrom)!;
    this.fs.pwrite(seg.fd, this.pending, 0, this.pendingLen, this.pendingFrom - seg.fromOffset);
    seg.dirty = true;
    const from = this.pendingFrom;
    const to = from + this.pendingLen;
    if (this.cacheFrom >= 0 && from < this.cacheFrom + this.cacheLen + READ_BLOCK_BYTES && to > this.cacheFrom) this.cacheFrom = -1;
    this.pendingLen = 0;
  }

  /**
   * Scans units from `fromPos` (clamped into the log) to the end of valid data, calling
   * `onUnit` for each valid one, then truncates what follows. Returns the end of valid data.
   */
  recover(fromPos: number, onUnit: (u: TimerUnit) => void): number {
    if (this.segments.length === 0) return (this.wrotePos = this.flushedPos = 0);
    let idx = this.segments.findIndex((s) => fromPos < s.fromOffset + this.fileSizeBytes);
    if (idx < 0) idx = this.segments.length - 1;
    if (fromPos < this.segments[0]!.fromOffset) idx = 0;
    const block = Buffer.alloc(1 << 20);
    let end = this.segments[idx]!.fromOffset;
    let position = idx === 0 && fromPos < this.segments[0]!.fromOffset ? 0 : Math.max(0, fromPos - this.segments[idx]!.fromOffset);
    position -= position % TIMER_UNIT_SIZE_BYTES;
    outer: for (; idx < this.segments.length; idx++) {
      const seg = this.segments[idx]!;
      let blockFrom = -1;
      let blockLen = 0;
      for (;;) {
        end = seg.fromOffset + position;
        if (position + TIMER_MIN_BLANK_BYTES > this.fileSizeBytes) break;
        if (blockFrom < 0 || position + TIMER_UNIT_SIZE_BYTES > blockFrom + blockLen) {
          blockFrom = position;
          blockLen = this.fs.pread(seg.fd, block, 0, Math.min(block.length, this.fileSizeBytes - position), position);
        }
        const at = position - blockFrom;
        if (at + TIMER_MIN_BLANK_BYTES > blockLen) break outer;
        const size = block.readInt32BE(at);
        const magic = block.readInt32BE(at + 12);
        if (magic === TIMER_BLANK_MAGIC_CODE) break;
        if (size !== TIMER_UNIT_SIZE_BYTES || !isMagicOk(magic) || at + TIMER_UNIT_SIZE_BYTES > blockLen) break outer;
        onUnit(decodeTimerUnit(block, at, seg.fromOffset + position));
        position += TIMER_UNIT_SIZE_BYTES;
      }
      // segment closed by a blank (or too full for another unit): continue in the next one
      position = 0;
      end = seg.fromOffset + this.fileSizeBytes;
    }
    this.truncateAfter(end);
    return end;
  }

  /** Writes buffered units and forces every segment written since the last flush. Returns the flushed position. */
  async flush(): Promise<number> {
    const upTo = this.writeBuffered();
    await this.sync(upTo);
    return upTo;
  }

  /** Writes the buffered units to the page cache (synchronously); returns the end of written data. */
  writeBuffered(): number {
    this.writePending();
    return this.wrotePos;
  }

  /** Forces every segment written since the last sync; `upTo` (from writeBuffered) becomes the flushed position. */
  async sync(upTo: number): Promise<void> {
    for (const seg of this.segments) {
      if (!seg.dirty) continue;
      seg.dirty = false;
      await this.fs.fdatasync(seg.fd);
    }
    this.flushedPos = Math.max(this.flushedPos, upTo);
  }

  /** Deletes whole segments that end at or before `offset` (retention of delivered units). Returns how many. */
  deleteSegmentsBefore(offset: number): number {
    let n = 0;
    while (this.segments.length > 1 && this.segments[0]!.fromOffset + this.fileSizeBytes <= offset) {
      const seg = this.segments.shift()!;
      this.fs.close(seg.fd);
      this.fs.unlink(path.join(this.dir, offsetToFileName(seg.fromOffset)));
      n++;
    }
    this.cacheFrom = -1;
    return n;
  }

  close(): void {
    this.writePending();
    for (const s of this.segments) this.fs.close(s.fd);
    this.segments.length = 0;
  }

  private truncateAfter(end: number): void {
    while (this.segments.length > 0 && this.segments[this.segments.length - 1]!.fromOffset >= end && this.segments.length > 1) {
      const seg = this.segments.pop()!;
      this.fs.close(seg.fd);
      this.fs.unlink(path.join(this.dir, offsetToFileName(seg.fromOffset)));
    }
    const last = this.segments[this.segments.length - 1];
    if (last) {
      const inFile = Math.max(0, Math.min(this.fileSizeBytes, end - last.fromOffset));
      const zeroTo = Math.min(this.fileSizeBytes, inFile + ZERO_AFTER_END_BYTES);
      if (inFile < zeroTo) {
        const zeros = Buffer.alloc(Math.min(1 << 20, zeroTo - inFile));
        for (let at = inFile; at < zeroTo; at += zeros.length) this.fs.pwrite(last.fd, zeros, 0, Math.min(zeros.length, zeroTo - at), at);
        last.dirty = true;
      }
      this.wrotePos = last.fromOffset + inFile;
    } else {
      this.wrotePos = 0;
    }
    this.flushedPos = Math.min(this.flushedPos, this.wrotePos);
    this.cacheFrom = -1;
  }

  private segmentFor(pos: number): Segment | undefined {
    const first = this.segments[0];
    if (!first) return undefined;
    return this.segments[Math.floor((pos - first.fromOffset) / this.fileSizeBytes)];
  }

  private createSegment(from: number): Segment {
    const file = path.join(this.dir, offsetToFileName(from));
    const fd = this.fs.open(file, 'w+');
    this.fs.ftruncate(fd, this.fileSizeBytes);
    const seg = { fromOffset: from, fd, dirty: true };
    this.segments.push(seg);
    return seg;
  }
}
